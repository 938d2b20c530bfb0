"""Probabilistic OSTAG (section 4.3): EM on the CFG form over the training trees, Viterbi MPD parsing.

Parameters: P_sub(initial tree | root label), P_aux(auxiliary tree | root label) and an adjunction Bernoulli
pooled per context - the node's label (ostag1), label + leftmost child (ostag2) or Goodman index (ostag3).
`kind="tsg"` trains the same machinery with no auxiliary trees (the TSG / TSG' baselines).

EM: for each training tree the reduction is restricted to the grammar nodes that match the tree
(`OSTAG.nodes_matching`) and the chart to the tree (`treegram.charts.tree_pruning`: every span pinned to the
top and bottom labels of its unary chain); expected rule counts from `treegram.charts.outside` are mapped back
to the parameters (`OSTAGCFG.param_counts`).  A mask cannot count repetitions of one label in a unary chain, so
trees with such a chain (NP-U over NP-U over CD) also admit the derivations with the chain shortened or
lengthened (measured on 300 ptb-sample training trees: 1.9% of sampled derivations, all of this kind; the looser
`mask_from_tree` admitted 2.3%).

EM's starting estimate (`em_initial`): the relative frequencies of the elementary trees' counts, or uniform per
root label.  With elementary trees from a TSG model the counts are (`tsg_weights`, `--tsg-weights`) either the
sample's fragment counts (the treebank's depth-1 rules at their treebank counts) or the TSG's posterior
pseudo-counts n_e + alpha_c P0(e) (depth-1 rules at alpha_c P0; `extract.TSGPosterior`): with 0 EM iterations the
latter gives each root label's trees the TSG grammar's relative probabilities (DP posterior predictive).  With
`tsg_weights="base"` the fragments keep their counts and the TSG's base route itself (c -> c~base, then base PCFG
rules stopping or expanding at each child, with the TSG's weights; grammar.py rules 7 and 8) is part of the
parsing CFG instead of depth-1 rules: without auxiliary trees the grammar is the TSG's, so adjunction is measured
against exactly the TSG it starts from (`benchmarks/bench_ostag_base.py`).  `treegram train ostag --from-tsg`
ships the base weights with 0 EM iterations, P_adj = 0.01 and the TSG's own pruning threshold (section
`parsing-defaults-ostag-full` of benchmarks/RESULTS.md); without --from-tsg 1 EM iteration from the counts; both
with the max-rule decoder (saved as the model's `default_decoder`; issue 16).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from treegram.elementary.base_route import BaseRoute
from treegram.errors import InputError
from treegram.formalism import save_model
from treegram.options import SettingsRecord
from treegram.trees import Tree, parse_brackets, unbinarize

from treegram.plugins.ostag.derivation import adjunction_stats, derived_tree, used_aux
from treegram.plugins.ostag.extract import START, depth_fragments, ostag_from_tsg, prepare_tree, tsg_prime
from treegram.plugins.ostag.grammar import MODELS, OSTAG

MODEL_VERSION = 1
#: the arrays of a Bayesian model's adjunction statistics (`OSTAGModel.adjunction_pairs`)
PAIR_ARRAYS = ("adj_pairs.aux", "adj_pairs.node", "adj_pairs.count")
KINDS = MODELS + ("tsg",)
EM_INITIAL = ("counts", "uniform")
TSG_WEIGHTS = ("counts", "posterior", "posterior-rules", "base")


@attrs.frozen
class OSTAGSettings(SettingsRecord):
    kind: str = "ostag3"  # ostag1 | ostag2 | ostag3 | tsg (no auxiliary trees: TSG / TSG')
    expand: bool = True  # add the rules left behind by the aux extraction (TSG' when kind == "tsg")
    spine_levels: int = 0  # k-level on-spine adjunction (section 4.2)
    horizontal: int | None = 0  # tree preparation (must match the TSG the elementary trees come from)
    vertical: int = 1
    mark_unary: bool = True
    rare_threshold: int = 2
    max_depth: int = 2  # own elementary-tree source: complete fragments up to this depth ...
    min_count: int = 2  # ... seen at least this often (depth >= 2)
    em_iterations: int = 5
    # EM's starting estimate: "counts" = relative frequencies of the elementary trees' counts (the TSG sample's),
    # "uniform" = every initial / auxiliary tree of a root label equally likely (the counts then only pick the trees)
    em_initial: str = "counts"
    adj_init: float = 0.1
    smoothing: float = 0.0  # added to expected counts in the M-step
    add_cfg_rules: bool = True  # given elementary trees: also add every depth-1 rule of the treebank (coverage)
    cfg_rule_weight: float = 1.0  # ... with its treebank count times this as its count (EM's counts start)
    # what the given elementary trees' counts are (recorded only; `train_ostag`'s caller supplies them):
    # "counts" = the TSG sample's fragment counts, depth-1 rules at their treebank counts; "posterior" = the TSG
    # model's posterior pseudo-counts n_e + alpha_c P0(e), depth-1 rules at alpha_c P0 (`extract.TSGPosterior`);
    # "posterior-rules" = the same, depth-1 rules at alpha_c P_pcfg(rule) (`TSGPosterior.rule_weight`); "base" =
    # the fragment counts and the TSG's own base route (`treegram.elementary.base_route`) in the parsing CFG, no
    # depth-1 rules (with kind "tsg" and no expansion: exactly the TSG's grammar)
    tsg_weights: str = "counts"
    prune_threshold: float = 1e-4  # coarse-to-fine posterior cutoff at parse time (0 = off)
    trim: bool = True  # parse time: drop symbols no allowed parse can use before the chart (exact, `restrict`)
    coarse_pass: bool = True  # parse time: site-agnostic coarse chart first, exact pairs only where it allows
    # (exact: `restrict.coarse_filter`; used with spine_levels == 0)

    def __attrs_post_init__(self):
        if self.kind not in KINDS:
            raise InputError(f"unknown OSTAG model {self.kind!r}", hint=f"use one of {', '.join(KINDS)}")
        if self.em_iterations < 0 or self.spine_levels < 0 or self.max_depth < 1:
            raise InputError("em_iterations and spine_levels must be >= 0, max_depth >= 1")
        if not 0 < self.adj_init < 1:
            raise InputError("adj_init must lie in (0, 1)")
        if self.tsg_weights not in TSG_WEIGHTS:
            raise InputError(f"unknown TSG weights {self.tsg_weights!r}", hint=f"use one of {', '.join(TSG_WEIGHTS)}")
        if self.em_initial not in EM_INITIAL:
            raise InputError(f"unknown EM initial estimate {self.em_initial!r}",
                             hint=f"use one of {', '.join(EM_INITIAL)}")


class OSTAGModel:
    formalism = "ostag"
    cell_beam = None  # the coarse pass's cell beam: None = `treegram.option_groups.CELL_BEAM` (`parse --cell-beam`)

    def __init__(self, grammar: OSTAG, pcfg, settings: OSTAGSettings, info: dict[str, Any] | None = None,
                 trace: list[dict[str, Any]] | None = None, *, default_decoder: str | None = None,
                 adjunction_pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None):
        self.grammar = grammar
        # Bayesian models: the sample's adjunction statistics (auxiliary tree ids, Goodman node ids, mean counts),
        # what `treegram convert` keeps when it turns the model into a TSG (`tag2tsg`); None for EM models
        self.adjunction_pairs = adjunction_pairs
        # every parse with this model decodes with this when no decoder is named (`charts.decoders.resolve_decoder`);
        # None (model files written before issue 16): mpd
        self.default_decoder = default_decoder
        self.pcfg = pcfg
        self.settings = settings
        self.info = dict(info or {})
        self.trace = list(trace or [])
        self._unk: tuple[np.ndarray, np.ndarray] | None = None

    # -- parsing -------------------------------------------------------------------------------------------------
    def _unknown(self):
        if self._unk is None:
            names = self.pcfg.cfg.nonterminals
            g = self.grammar
            # with the TSG's base route an unknown word's tag enters at base[X] (as in the TSG), else at site[X]
            base_of = {} if g.base is None else {int(x): len(g.labels) + i for i, x in enumerate(g.base_label)}
            ids, lps = [], []
            for t, lp in zip(self.pcfg.unk_tags.tolist(), self.pcfg.unk_logp.tolist()):
                lab = g.labels.get(names.symbol(t))
                if lab >= 0 and (g.base is None or lab in base_of):  # site symbol ids are label ids
                    ids.append(lab if g.base is None else base_of[lab])
                    lps.append(lp)
            self._unk = (np.array(ids, np.int64), np.array(lps, np.float64))
        return self._unk

    def lexical_input(self, red, mapped: list[str], uncovered: list[int] | None = None):
        """The sentence's lexical entries; positions in `uncovered` (default: those with none) get the unknown-word
        tags of the coarse PCFG."""
        lex = red.cfg.lexical_input(mapped)
        if uncovered is not None and not uncovered:
            return lex
        return lex.with_fallback(*self._unknown(), positions=uncovered)

    def _pruning(self, tokens, red):
        """The coarse-to-fine stage (`treegram.charts.pruning.coarse_stage`; None: off, or no coarse parse)."""
        from treegram.charts.pruning import coarse_stage

        return coarse_stage(self.pcfg.cfg, self.pcfg.lexical_input(tokens), red.cfg,
                            threshold=self.settings.prune_threshold, beam=self.cell_beam)

    def parse_derivation(self, tokens: list[str]):
        """(derived tree with grammar labels, reduction, Viterbi parse) of the most probable derivation (the core's
        `mpd_derivation` over `chart_input`), for the adjunction statistics."""
        from treegram.charts.decoders import mpd_derivation

        result, inp = mpd_derivation(self, tokens)
        return derived_tree(inp.context, result.derivation.steps, list(tokens)), inp.context, result

    def _two_pass_input(self, tokens: list[str], mapped: list[str]):
        """(reduction, lexical input, pruning) of the two-pass scheme, or None if the coarse chart has no parse."""
        from treegram.plugins.ostag.restrict import coarse_filter, coarse_grammar

        g = self.grammar
        usable = g.usable_nodes(mapped)
        probe = coarse_grammar(g, usable)  # categories for the mask and the lexical coverage
        prune = self._pruning(tokens, probe)
        uncovered = self._uncovered(probe, mapped)
        found = coarse_filter(g, usable, mapped, self._unknown(), uncovered, None if prune is None else prune.mask,
                              coarse=probe)
        if found is None:
            return None
        keep, site_ok = found
        red = g.build_cfg(usable=keep, site_ok=site_ok)
        if self.settings.trim:
            red = self._trimmed(red, mapped, prune)
        return red, self.lexical_input(red, mapped, uncovered), prune

    # `treegram.charts.decoders.ChartModel`: every core decoder (MPD, MPP, max-rule, ...) on the per-sentence
    # reduction: with the two-pass scheme (spine_levels 0) the coarse-filtered, trimmed reduction; else the full
    # one, trimmed to what the pruning mask allows (`settings.trim`).  A pruned input that has no parse falls back
    # to the full reduction without pruning (`ChartInput.fallback`; a trimmed reduction cannot just drop its mask).
    def chart_input(self, tokens: list[str]):
        from treegram.charts.decoders import ChartInput

        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        mapped = self.pcfg.mapper.map_sentence(tokens)
        g = self.grammar
        found = None
        if self.settings.coarse_pass and g.spine_levels == 0:
            found = self._two_pass_input(tokens, mapped)
            # None: the coarse chart has no parse under the mask, so neither has the exact reduction
            two_pass_failed = found is None
        else:
            two_pass_failed = False
        if found is None:
            full = g.build_cfg(words=mapped)
            prune = self._pruning(tokens, full)
            red = self._trimmed(full, mapped, prune) if self.settings.trim else full
            lex = self.lexical_input(red, mapped, self._uncovered(full, mapped) if red is not full else None)
            found = (red, lex, prune)
        red, lex, prune = found

        def unpruned():
            full = g.build_cfg(words=mapped)
            return ChartInput(full.cfg, self.lexical_input(full, mapped), list(tokens), None, context=full)

        if two_pass_failed and self.settings.prune_threshold:
            return unpruned()
        return ChartInput(red.cfg, lex, list(tokens), prune, context=red,
                          fallback=unpruned if self.settings.prune_threshold else None)

    def derivation_tree(self, derivation, inp) -> Tree:
        return _finish(derived_tree(inp.context, derivation.steps, inp.words))

    def category_tree(self, tree: Tree, inp=None) -> Tree:
        from treegram.charts.decoders import splice
        from treegram.plugins.ostag.grammar import VIRTUAL_PREFIX

        return _finish(splice(tree, lambda label: label.startswith(VIRTUAL_PREFIX)))

    @staticmethod
    def _uncovered(red, mapped: list[str]) -> list[int]:
        """Positions whose word has no lexical rule in the reduction (no decoder index needed)."""
        wid = np.array(red.cfg.words.ids(mapped), np.int64)
        have = np.zeros(len(red.cfg.words) + 1, bool)
        have[red.cfg.lex_word] = True
        return np.flatnonzero(~have[wid]).tolist()

    def _trimmed(self, red, mapped: list[str], prune):
        """`red` without the symbols no parse allowed by `prune` can use (exact: `restrict.keep_symbols`)."""
        from treegram.plugins.ostag.restrict import keep_symbols

        wid = np.array(red.cfg.words.ids(mapped), np.int64)
        wid = np.unique(wid[wid >= 0])
        base = np.concatenate([red.cfg.lex_parent[np.isin(red.cfg.lex_word, wid)], self._unknown()[0]])
        keep = keep_symbols(red.cfg, base, len(mapped), None if prune is None else prune.mask)
        return red.without_symbols(keep, wid)

    def parse(self, tokens: list[str]) -> Tree:
        """The derived tree of the model's default decoder (`charts.decoders.resolve_decoder`), unbinarized;
        ParseFailure if none."""
        from treegram.charts.decoders import default_parse

        return default_parse(self, tokens)

    def parse_with_stats(self, tokens: list[str]) -> tuple[Tree, Counter, list[int]]:
        tree, red, res = self.parse_derivation(tokens)
        steps = res.derivation.steps
        return _finish(tree), adjunction_stats(red, steps), used_aux(red, steps)

    # -- persistence ---------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        g = self.grammar
        pmeta, parrays = self.pcfg.bundle("pcfg")
        meta = {
            "ostag_version": MODEL_VERSION, "settings": self.settings.to_dict(), "info": self.info,
            "trace": self.trace, "start": g.start,
            "initial": [t.to_bracket() for t in g.initial], "initial_count": g.initial_count,
            "auxiliary": [t.to_bracket() for t in g.auxiliary], "aux_count": g.aux_count, **pmeta,
        }
        if self.default_decoder is not None:
            meta["default_decoder"] = self.default_decoder
        arrays = {"sub_logp": g.sub_logp, "aux_logp": g.aux_logp, "adj_logp": g.adj_logp,
                  "noadj_logp": g.noadj_logp, **parrays}
        if g.base is not None:
            bmeta, barrays = g.base.bundle("base")
            meta.update(bmeta)
            arrays.update(barrays)
        if self.adjunction_pairs is not None:
            arrays.update(zip(PAIR_ARRAYS, self.adjunction_pairs))
        save_model(path, self, meta, arrays)

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> OSTAGModel:
        from treegram.grammar.pcfg import PCFGModel

        settings = OSTAGSettings(**meta["settings"])  # files before issue 16 lack em_initial: "counts", as trained
        parse = lambda s: parse_brackets(s, source="model")[0]  # noqa: E731
        g = OSTAG(zip(map(parse, meta["initial"]), meta["initial_count"]),
                  zip(map(parse, meta["auxiliary"]), meta["aux_count"]), start=meta["start"],
                  model=_grammar_model(settings), spine_levels=settings.spine_levels,
                  base=BaseRoute.from_bundle(meta, arrays, "base") if "base" in meta else None)
        for name in ("sub_logp", "aux_logp", "adj_logp", "noadj_logp"):
            a = np.asarray(arrays[name], np.float64)
            if a.shape != getattr(g, name).shape:
                raise ValueError(f"{name} has shape {a.shape}, the grammar needs {getattr(g, name).shape}")
            setattr(g, name, a)
        pcfg = PCFGModel.from_prefixed(meta, arrays)
        pairs = None
        if PAIR_ARRAYS[0] in arrays:
            aux, node, count = (np.asarray(arrays[k]).reshape(-1) for k in PAIR_ARRAYS)
            if not (aux.shape == node.shape == count.shape and np.all((aux >= 0) & (aux < len(g.auxiliary)))
                    and np.all((node >= 0) & (node < len(g.nodes))) and np.all(count > 0)):
                raise ValueError("the adjunction statistics do not fit the grammar")
            pairs = (aux.astype(np.int64), node.astype(np.int64), count.astype(np.float64))
        return cls(g, pcfg, settings, meta.get("info"), meta.get("trace"),
                   default_decoder=meta.get("default_decoder"), adjunction_pairs=pairs)

    # -- summaries -----------------------------------------------------------------------------------------------
    def aux_table(self, *, wrapping_only: bool = False, top: int = 20) -> list[dict[str, Any]]:
        g = self.grammar
        idx = [a for a in range(len(g.auxiliary)) if not wrapping_only or g.aux_dir[a] == "wrap"]
        idx.sort(key=lambda a: (-g.aux_count[a], -g.aux_logp[a], a))  # most used first
        return [{"prob": round(float(np.exp(g.aux_logp[a])), 4), "count": g.aux_count[a], "type": g.aux_dir[a],
                 "auxiliary tree": unbinarized_elementary(g.auxiliary[a]).to_bracket()} for a in idx[:top]]

    def initial_table(self, *, top: int = 20) -> list[dict[str, Any]]:
        g = self.grammar
        order = np.argsort(-np.asarray(g.initial_count), kind="stable")[:top]
        return [{"prob": round(float(np.exp(g.sub_logp[e])), 4), "count": g.initial_count[e],
                 "initial tree": unbinarized_elementary(g.initial[e]).to_bracket()} for e in order.tolist()]

    def grammar_listing(self, *, aux: bool = False, wrapping: bool = False, top: int = 20) -> list[dict[str, Any]]:
        """The rows `treegram grammar` lists: initial trees by count, or auxiliary trees by probability (only
        wrapping ones with `wrapping`)."""
        if aux or wrapping:
            return self.aux_table(wrapping_only=wrapping, top=top)
        return self.initial_table(top=top)

    def grammar_json(self, args) -> dict[str, Any]:
        """`treegram grammar MODEL --json [--top K] [--aux] [--wrapping]`: the summary plus the listed trees."""
        wrapping = bool(getattr(args, "wrapping", False))
        aux = bool(getattr(args, "aux", False)) or wrapping
        return {**self.describe(top=0),
                "trees": self.grammar_listing(aux=aux, wrapping=wrapping, top=getattr(args, "top", 15))}

    def render_grammar(self, ui, args) -> None:
        """`treegram grammar MODEL [--top K] [--aux] [--wrapping]`: a table of the most frequent initial trees (or
        the most probable auxiliary / wrapping auxiliary trees), then each one drawn, the foot shown as `X*`."""
        from treegram.cli.ui import styled
        from treegram.trees import ascii_tree, parse_brackets

        top = getattr(args, "top", 15)
        wrapping = bool(getattr(args, "wrapping", False))
        aux = bool(getattr(args, "aux", False)) or wrapping
        rows = self.grammar_listing(aux=aux, wrapping=wrapping, top=top)
        what = "wrapping auxiliary" if wrapping else "auxiliary" if aux else "initial"
        key = "auxiliary tree" if aux else "initial tree"
        if not rows:
            ui.note(f"no {what} trees in this model")
            return
        ui.table(f"top {len(rows)} {what} trees", list(rows[0].keys()), [list(r.values()) for r in rows])
        for r in rows:
            ui.print(styled((f"p={r['prob']}", "bold"), f" count {r['count']}" + (f" {r['type']}" if aux else "")))
            ui.print(ascii_tree(parse_brackets(r[key], source="model")[0]), highlight=False, markup=False)

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        from treegram.charts.decoders import decoder_label
        from treegram.charts.pruning import stage_label

        g = self.grammar
        dirs = Counter(g.aux_dir)
        out: dict[str, Any] = {
            "formalism": "ostag", **{f"setting_{k}": v for k, v in self.settings.to_dict().items()}, **self.info,
            "initial_trees": len(g.initial), "auxiliary_trees": len(g.auxiliary),
            "wrapping_auxiliary_trees": dirs["wrap"], "left_auxiliary_trees": dirs["left"],
            "right_auxiliary_trees": dirs["right"], "goodman_nodes": len(g.nodes),
            "adjunction_contexts": g.num_ctx, "default_decoder": decoder_label(self),
            "pruning": stage_label(self.settings.prune_threshold, self.cell_beam),
        }
        if self.trace:
            out["em_log_likelihood"] = self.trace[-1]["log_likelihood"]
        if top:
            order = np.argsort(-np.asarray(g.initial_count), kind="stable")[:top]
            out["top_rules"] = [{"count": g.initial_count[e], "prob": round(float(np.exp(g.sub_logp[e])), 4),
                                 "initial tree": g.initial[e].to_bracket()} for e in order.tolist()]
            out["top_aux"] = self.aux_table(top=top)
            out["top_wrapping"] = self.aux_table(wrapping_only=True, top=top)
        return out


def unbinarized_elementary(t: Tree) -> Tree:
    """An elementary tree shown without binarization nodes/annotations (feet and frontier nodes kept)."""
    from treegram.trees.labels import is_binarized_node, strip_annotations

    def rec(node):
        if isinstance(node, str):
            return [node]
        if not node.children:
            foot = node.label.endswith("*")
            lab = strip_annotations(node.label[:-1] if foot else node.label)
            return [Tree(lab + ("*" if foot else ""), ())]
        kids = [x for c in node.children for x in rec(c)]
        if is_binarized_node(node.label):
            return kids
        return [Tree(strip_annotations(node.label), tuple(kids))]

    (out,) = rec(t) if not is_binarized_node(t.label) else [Tree(t.label, tuple(x for c in t.children
                                                                                for x in rec(c)))]
    return out


def _finish(tree: Tree) -> Tree:
    if tree.label == START and len(tree.children) == 1 and isinstance(tree.children[0], Tree):
        tree = tree.children[0]
    return unbinarize(tree)


def _grammar_model(settings: OSTAGSettings) -> str:
    return settings.kind if settings.kind in MODELS else "ostag1"


# -- training --------------------------------------------------------------------------------------------------------

def build_grammar(elementary: list[tuple[Tree, float]], settings: OSTAGSettings, base: BaseRoute | None = None,
                  progress=None) -> OSTAG:
    """Initial/auxiliary trees from TSG elementary trees by the paper's heuristic (or TSG / TSG'); `base`: the
    TSG's base route, added to the parsing CFG with its own weights (`OSTAG(base=...)`); `progress(items,
    description)` (e.g. `UI.track`) shows the extraction's progress."""
    if settings.kind == "tsg":
        init = tsg_prime(elementary) if settings.expand else list(elementary)
        aux: list = []
    else:
        init, aux = ostag_from_tsg(progress(elementary, "extracting auxiliary trees") if progress else
                                   elementary)
        if not settings.expand:
            originals = {t for t, _c in elementary}
            init = [(t, c) for t, c in init if t in originals]
    return OSTAG(init, aux, start=START, model=_grammar_model(settings), spine_levels=settings.spine_levels,
                 base=base)


def tree_chart_pruning(tree: Tree, red):
    """The chart restriction EM uses for a training tree: `tree_pruning` over the reduction's categories."""
    from treegram.charts import tree_pruning

    return tree_pruning(tree, red.cfg.categories)


def em(grammar: OSTAG, trees: list[Tree], iterations: int, *, smoothing: float = 0.0,
       callback: Callable[[dict[str, Any]], None] | None = None, progress=None) -> list[dict[str, Any]]:
    """EM over tree-restricted charts; returns one record per iteration (log-likelihood before the M-step)."""
    from treegram.charts import inside, outside

    if iterations == 0:
        return []

    def reduction(t: Tree):
        red = grammar.build_cfg_for_tree(t)
        if grammar.base is not None:  # the base route's lexicon covers every word: keep the tree's words' rules
            wid = np.array(grammar.words.ids(t.leaves()), np.int64)
            red = red.without_symbols(np.ones(red.cfg.num_symbols, bool), wid[wid >= 0])
        return red, tree_chart_pruning(t, red), red.cfg.lexical_input(t.leaves())

    reds: list = []
    skipped = 0
    if grammar.base is None:  # cache the reductions (a base route's rules would repeat in every one: rebuild)
        for t in (progress(trees, "reductions") if progress else trees):
            try:
                reds.append(reduction(t))
            except InputError:
                skipped += 1
    else:
        reds = trees
    trace = []
    for it in range(iterations):
        t0 = time.perf_counter()
        sub = np.zeros(len(grammar.initial))
        aux = np.zeros(len(grammar.auxiliary))
        adj = np.zeros(grammar.num_ctx)
        noadj = np.zeros(grammar.num_ctx)
        ll, failed = 0.0, 0
        for item in (progress(reds, f"EM {it + 1}/{iterations}") if progress else reds):
            if grammar.base is not None:
                try:
                    item = reduction(item)
                except InputError:
                    skipped += it == 0
                    continue
            red, prune, lex = item
            red = red.reweighted()
            chart = inside(red.cfg, lex, prune=prune)
            if chart.log_z == -np.inf:
                failed += 1
                continue
            ll += chart.log_z
            out = outside(chart)
            s, a, j, n = red.param_counts(out.bin_counts, out.un_counts, out.lex_counts)
            sub += s
            aux += a
            adj += j
            noadj += n
        grammar.set_params(sub, aux, adj, noadj, smoothing=smoothing)
        rec = {"iteration": it + 1, "log_likelihood": round(float(ll), 3), "underivable_trees": failed + skipped,
               "expected_adjunctions": round(float(adj.sum()), 1), "seconds": round(time.perf_counter() - t0, 2)}
        trace.append(rec)
        if callback:
            callback(rec)
    return trace


def train_ostag(trees: list[Tree], settings: OSTAGSettings = OSTAGSettings(), *,
                elementary: list[tuple[Tree, float]] | None = None, pcfg=None, prepared: list[Tree] | None = None,
                callback: Callable[[dict[str, Any]], None] | None = None, progress=None,
                extra_weight: Callable[[Tree], float] | None = None, base: BaseRoute | None = None) -> OSTAGModel:
    """Train an OSTAG (or TSG / TSG' with kind="tsg") on treebank trees.

    `elementary`: TSG elementary trees with counts over trees prepared like `prepare_tree` with the settings'
    h/v/mark_unary and `pcfg.mapper` (pass the TSG model's PCFG as `pcfg`); None = the built-in depth-fragment
    source (`extract.depth_fragments`).  `extra_weight`: the count given to each added depth-1 treebank rule
    (default: its treebank count times `cfg_rule_weight`; `TSGPosterior.weight` for the posterior weights).
    `base`: the source TSG's base route (`read_base_route(tsg.cfg)`), parsed alongside the elementary trees with
    its own weights (then no depth-1 rules are needed for coverage: pass add_cfg_rules=False)."""
    from treegram.grammar.pcfg import PCFGModel, PCFGSettings

    trees = list(trees)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    t0 = time.perf_counter()
    if pcfg is None:
        pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                                   rare_threshold=settings.rare_threshold,
                                                   mark_unary=settings.mark_unary))
    prep = prepared if prepared is not None else [
        prepare_tree(t, pcfg.mapper, horizontal=settings.horizontal, vertical=settings.vertical,
                     mark_unary=settings.mark_unary) for t in (progress(trees, "preparing") if progress else trees)]
    source = "given"
    if elementary is not None and settings.add_cfg_rules:
        have = {t for t, _c in elementary}
        extra = [(t, c * settings.cfg_rule_weight if extra_weight is None else extra_weight(t))
                 for t, c in depth_fragments(prep, 1, 1) if t not in have]
        elementary = list(elementary) + extra
        source = f"given + {len(extra)} depth-1 rules"
    if elementary is None:
        elementary = depth_fragments(prep, settings.max_depth, settings.min_count)
        source = f"depth<={settings.max_depth} fragments (count>={settings.min_count})"
    grammar = build_grammar(elementary, settings, base, progress)
    grammar.init_params(settings.adj_init, uniform=settings.em_initial == "uniform")
    trace = em(grammar, prep, settings.em_iterations, smoothing=settings.smoothing, callback=callback,
               progress=progress)
    info = {"training_trees": len(trees), "tsg_elementary_trees": len(elementary), "elementary_source": source,
            "train_seconds": round(time.perf_counter() - t0, 1)}
    return OSTAGModel(grammar, pcfg, settings, info, trace)


def _root_label(bracket: str) -> str:
    """The root label of a bracketed elementary tree, read without parsing it (``(TOP (S))`` -> ``TOP``)."""
    head = bracket.lstrip()[1:].lstrip()
    end = next((i for i, ch in enumerate(head) if ch.isspace() or ch in "()"), len(head))
    return head[:end]


def _start_is_a_root(meta: dict[str, Any]) -> str | None:
    roots = {_root_label(t) for t in meta["initial"]}
    if meta["start"] not in roots:
        return (f"the start label {meta['start']!r} is the root of no initial tree (every parse would fall back to "
                "a flat tree)")
    return None


def ostag_schema(meta: dict[str, Any]):
    """What an OSTAG model file holds (checked by the core before loading and before writing): settings, the
    initial and auxiliary trees with their counts and log-probabilities, a start label some initial tree has as
    its root, the coarse PCFG and (with TSG weights "base") the TSG's base route."""
    from treegram.errors import ModelFileError
    from treegram.grammar.pcfg import pcfg_schema
    from treegram.schema import (COMMON_OPTIONAL, LOGP, AllOf, Arr, Bool, Bundle, Dict, Embedded, Float, Int, List,
                                 Opt, Prefixed, Str, Where, settings_schema)

    version = meta.get("ostag_version", 0)
    if isinstance(version, int) and not isinstance(version, bool) and version > MODEL_VERSION:
        raise ModelFileError(f"OSTAG model version {version} is newer than this plugin", hint="upgrade treegram")
    settings = settings_schema(OSTAGSettings, kind=Str(choices=KINDS), expand=Bool(), spine_levels=Int(min=0),
                               horizontal=Opt(Int(min=0)), vertical=Int(min=1), rare_threshold=Int(min=0),
                               max_depth=Int(min=1), min_count=Int(min=0), em_iterations=Int(min=0),
                               em_initial=Str(choices=EM_INITIAL), adj_init=Float(gt=0, lt=1),
                               smoothing=Float(min=0), cfg_rule_weight=Float(min=0),
                               tsg_weights=Str(choices=TSG_WEIGHTS), prune_threshold=Float(min=0, max=1))
    meta_spec = AllOf((Dict({"settings": settings, "pcfg": Dict(), "start": Str(nonempty=True),
                             "initial": List(Str(nonempty=True), length="initial"),
                             "initial_count": List(Float(min=0), length="initial"),
                             "auxiliary": List(Str(nonempty=True), length="auxiliary"),
                             "aux_count": List(Float(min=0), length="auxiliary")},
                            optional={**COMMON_OPTIONAL, "ostag_version": Int(min=0),
                                      "default_decoder": Str(nonempty=True),
                                      "base": Dict({"labels": List(Str()), "words": List(Str())})}),
                       Where(_start_is_a_root)))
    logp = Arr("f", ndim=1, max=1e-6)
    arrays = AllOf((Dict({"sub_logp": Arr("f", shape=("initial",), max=1e-6),
                          "aux_logp": Arr("f", shape=("auxiliary",), max=1e-6),
                          "adj_logp": logp, "noadj_logp": logp}),
                    Prefixed("base", Dict(values=Arr("iuf")))))
    return Bundle(meta=meta_spec, arrays=arrays, parts=(Embedded(("pcfg",), "pcfg", pcfg_schema()),))
