"""The trained TSG: a finite set of elementary trees with counts, smoothed by the base distribution, Goodman-
transformed into a `WeightedCFG` for the core chart decoders.

Goodman transform over shared (label) symbols.  For every label c: the site symbol `c` and the base symbol
`c~base`; for every elementary tree type e with count n_e (from the final sampler state, or its mean n̄_e over
the posterior samples of `treegram.bayes.averaging`, with alpha_c, beta_c their means too): one fresh symbol per
non-root internal node.  Rules:

    c        -> c~base                            alpha_c / (n_c + alpha_c)
    c~base   -> X1 X2 (X1, word)                  P_pcfg(c -> Y1 Y2) * prod_i (beta_Yi if Xi = Yi else 1 - beta_Yi
                                                  for Xi = Yi~base)
    c        -> children of e's root              n_e / (n_c + alpha_c)
    e-node   -> its children in e                 1
    (a child is its e-node symbol if internal, the frontier label's site symbol, or the word)

So the grammar's probability of an elementary tree e is (n_e + alpha_c P0(e)) / (n_c + alpha_c), the DP posterior
predictive, and every tree the base PCFG derives stays derivable (unseen structure is smoothed by the base).
Every symbol's category is its label, so a coarse PCFG over the same labels prunes the chart (coarse-to-fine).
Parsing goes through the core decoders (`treegram.charts.decoders`): the model's `default_decoder` (recorded
by `treegram train tsg --decoder`, default max-rule-product; models written before the field: the most
probable derivation, Viterbi over the transform), or, with `mpp_samples`, the most frequent tree among
derivations sampled from the chart (`mpp`); `treegram parse --decoder` picks any registered decoder.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numba
import numpy as np

from treegram.elementary.base_route import BASE_SUFFIX
from treegram.elementary.data import START, TSGSettings
from treegram.elementary.kernels import fragment_nodes
from treegram.elementary.parsing import CoarseToFineModel
from treegram.formalism import save_model
from treegram.grammar.cfg import WeightedCFG
from treegram.grammar.symbols import SymbolTable
from treegram.trees import Tree

MODEL_VERSION = 1


@numba.njit(cache=True)
def _goodman(nl, reps, counts, flag_stack, frag_sample, label, word, kind, child1, child2, subtree_end, is_word, total, alpha,
             rules, rule_logp, log_stop, log_expand):
    """Rule arrays of the transform (see the module docstring).  Symbols: 0..nl-1 sites, nl..2nl-1 bases,
    then one per non-root internal node of each type.  Type j is the elementary tree at row reps[j] under the flags
    flag_stack[frag_sample[j]] (one row of flags per posterior sample), with (possibly fractional) count
    counts[j]."""
    # sizes
    n_int = 0
    for j in range(reps.shape[0]):
        n_int += np.count_nonzero(fragment_nodes(reps[j], flag_stack[frag_sample[j]], is_word, subtree_end)[1] == 0)
    nr = rules.shape[0]
    cap = 4 * nr + nl + n_int + reps.shape[0] + 8
    bp = np.empty(cap, np.int32)
    bl = np.empty(cap, np.int32)
    br = np.empty(cap, np.int32)
    bw = np.empty(cap, np.float64)
    up = np.empty(cap, np.int32)
    uc = np.empty(cap, np.int32)
    uw = np.empty(cap, np.float64)
    lp = np.empty(cap, np.int32)
    lword = np.empty(cap, np.int32)
    lw = np.empty(cap, np.float64)
    nsym = 2 * nl + n_int
    sym_label = np.empty(nsym, np.int32)
    for c in range(nl):
        sym_label[c] = c
        sym_label[nl + c] = c
    nb = 0
    nu = 0
    nlx = 0
    for c in range(nl):
        up[nu] = c
        uc[nu] = nl + c
        uw[nu] = np.log(alpha[c]) - np.log(total[c] + alpha[c])
        nu += 1
    for q in range(nr):
        p = rules[q, 0]
        k = rules[q, 1]
        a = rules[q, 2]
        b = rules[q, 3]
        w = rule_logp[q]
        if k == 0:
            lp[nlx] = nl + p
            lword[nlx] = a
            lw[nlx] = w
            nlx += 1
        elif k == 1:
            up[nu] = nl + p
            uc[nu] = a
            uw[nu] = w + log_stop[a]
            nu += 1
            up[nu] = nl + p
            uc[nu] = nl + a
            uw[nu] = w + log_expand[a]
            nu += 1
        else:
            for x in range(2):
                for y in range(2):
                    bp[nb] = nl + p
                    bl[nb] = a + x * nl
                    br[nb] = b + y * nl
                    bw[nb] = (w + (log_stop[a] if x == 0 else log_expand[a])
                              + (log_stop[b] if y == 0 else log_expand[b]))
                    nb += 1
    node_sym = np.full(flag_stack.shape[1], -1, np.int64)
    nxt = 2 * nl
    for j in range(reps.shape[0]):
        r = reps[j]
        c = label[r]
        wroot = np.log(counts[j]) - np.log(total[c] + alpha[c])
        rows, front = fragment_nodes(r, flag_stack[frag_sample[j]], is_word, subtree_end)
        # pass 1: symbols of internal nodes
        node_sym[r] = c
        for m in range(rows.shape[0]):
            i = rows[m]
            if front[m]:
                node_sym[i] = label[i]
            else:
                node_sym[i] = nxt
                sym_label[nxt] = label[i]
                nxt += 1
        # pass 2: rules of the root and the internal nodes
        for m in range(-1, rows.shape[0]):
            if m >= 0 and front[m]:
                continue
            i = r if m < 0 else rows[m]
            w = wroot if m < 0 else 0.0
            s = node_sym[i]
            k = kind[i]
            if k == 0:
                lp[nlx] = s
                lword[nlx] = word[child1[i]]
                lw[nlx] = w
                nlx += 1
            elif k == 1:
                up[nu] = s
                uc[nu] = node_sym[child1[i]]
                uw[nu] = w
                nu += 1
            else:
                bp[nb] = s
                bl[nb] = node_sym[child1[i]]
                br[nb] = node_sym[child2[i]]
                bw[nb] = w
                nb += 1
    return (nsym, sym_label, bp[:nb], bl[:nb], br[:nb], bw[:nb], up[:nu], uc[:nu], uw[:nu], lp[:nlx],
            lword[:nlx], lw[:nlx])


def goodman_cfg(state, min_count: int = 1) -> tuple[WeightedCFG, list[tuple[int, int, float, int]]]:
    """The parsing grammar of a sampler state (types with count >= min_count) and the types used."""
    d = state.data
    types = [t for t in state.types() if t[0] >= min_count]
    reps = np.array([t[1] for t in types], dtype=np.int64)
    counts = np.array([t[0] for t in types], dtype=np.float64)
    cfg = _build_cfg(d, reps, counts, state.flags[None, :], np.zeros(len(reps), np.int64), state.alpha,
                     state.log_stop, state.log_expand)
    return cfg, types


def averaged_goodman_cfg(data, samples: list[dict[str, Any]], min_count: int = 1):
    """The parsing grammar of posterior samples (`TSGState.snapshot()` dicts, newest first): every elementary
    tree seen in any sample with its mean count n̄_e, alpha_c and beta_c averaged over the samples
    (`treegram.bayes.averaging`).  Keeps the types whose count summed over the samples is >= min_count (with one
    sample: exactly `goodman_cfg`).  Returns (cfg, [(summed count, mean count, root row, sample index)])."""
    from treegram.bayes.averaging import average_counts

    _keys, summed, mean, which, pos = average_counts(samples)
    keep = summed >= min_count
    summed, mean, which, pos = summed[keep], mean[keep], which[keep], pos[keep]
    reps = np.array([int(samples[s]["reps"][p]) for s, p in zip(which.tolist(), pos.tolist())], dtype=np.int64)
    flag_stack = np.stack([np.asarray(s["flags"], dtype=np.int8) for s in samples])
    alpha = np.mean([np.asarray(s["alpha"], dtype=np.float64) for s in samples], axis=0)
    beta = np.mean([np.asarray(s["beta"], dtype=np.float64) for s in samples], axis=0)
    cfg = _build_cfg(data, reps, mean.astype(np.float64), flag_stack, which.astype(np.int64), alpha, np.log(beta),
                     np.log1p(-beta))
    types = [(int(n), float(m), int(r), int(s)) for n, m, r, s in zip(summed.tolist(), mean.tolist(), reps.tolist(),
                                                                      which.tolist())]
    return cfg, types


def _build_cfg(d, reps, counts, flag_stack, frag_sample, alpha, log_stop, log_expand) -> WeightedCFG:
    total = np.bincount(d.label[reps], weights=counts, minlength=d.num_labels) if len(reps) \
        else np.zeros(d.num_labels, np.float64)
    nl = d.num_labels
    (nsym, sym_label, bp, bl, br, bw, up, uc, uw, lp, lword, lw) = _goodman(
        nl, reps, counts, flag_stack, frag_sample, d.label, d.word, d.kind, d.child1, d.child2, d.subtree_end,
        d.is_word, total.astype(np.float64), alpha, d.rules, d.rule_logp, log_stop, log_expand)
    names = list(d.labels) + [c + BASE_SUFFIX for c in d.labels]
    names += [f"{d.labels[c]}~{i}" for i, c in enumerate(sym_label[2 * nl:].tolist(), start=2 * nl)]
    words = d.words if d.words else ["<none>"]
    cfg = WeightedCFG.from_arrays(SymbolTable(names), SymbolTable(words), START, binary=(bp, bl, br, bw),
                                  unary=(up, uc, uw), lexical=(lp, lword, lw), categories=SymbolTable(d.labels),
                                  category=sym_label)
    return cfg


class TSGModel(CoarseToFineModel):
    """A trained TSG: the Goodman-transformed grammar, the coarse PCFG (pruning, unknown words) and the
    elementary-tree inventory for `treegram grammar`."""

    formalism = "tsg"

    def __init__(self, cfg: WeightedCFG, pcfg, settings: TSGSettings, fragments: list[dict[str, Any]],
                 info: dict[str, Any] | None = None, trace: list[dict[str, Any]] | None = None, *,
                 prune_threshold: float = 1e-5, mpp_samples: int = 0, default_decoder: str | None = None):
        self.cfg = cfg
        self.pcfg = pcfg
        self.settings = settings
        self.fragments = fragments  # [{"tree": bracket, "count": n, "root": label}] most frequent first
        self.info = dict(info or {})
        self.trace = list(trace or [])
        self.prune_threshold = prune_threshold
        self.mpp_samples = mpp_samples
        # the decoder every parse with this model uses when none is named (`treegram.charts.decoders.
        # resolve_decoder`); `mpp_samples` (train --mpp-samples N) makes it the sampled MPP over N derivations;
        # None (model files from before it was recorded): mpd
        self.default_decoder = "mpp" if mpp_samples else default_decoder
        self.default_samples = mpp_samples or None

    # -- parsing (lexical input, unknown words, pruning, chart input: `CoarseToFineModel`) -------------------
    def _base_symbol(self, label: str) -> int | None:
        i = self.cfg.nonterminals.get(label + BASE_SUFFIX)
        return i if i >= 0 else None

    def _to_tree(self, deriv, tokens) -> Tree:
        from treegram.charts import Derivation

        labels = self.cfg.categories
        cat = self.cfg.category
        view = SimpleNamespace(nonterminals=SimpleNamespace(symbol=lambda i: labels.symbol(int(cat[i]))))
        steps = deriv.steps
        nl = len(labels)
        # a site -> base hop is one tree node, not a unary branch
        hop = (steps[:, 0] == 1) & (steps[:, 2] < nl) & (steps[:, 5] == steps[:, 2] + nl)
        tree = Derivation(steps[~hop]).to_tree(view, list(tokens))
        return self.category_tree(tree)

    def derivation_tree(self, derivation, inp) -> Tree:
        return self._to_tree(derivation, inp.words)

    def category_tree(self, tree: Tree, inp=None) -> Tree:
        return self.finish_tree(tree)

    def parse(self, tokens: list[str]) -> Tree:
        """The tree of the model's default decoder (`charts.decoders.resolve_decoder`); ParseFailure if none."""
        from treegram.charts.decoders import default_parse

        return default_parse(self, tokens)

    # -- persistence ---------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        cmeta, carrays = self.cfg.to_bundle()
        pmeta, parrays = self.pcfg.bundle("pcfg")
        meta = {
            "tsg_version": MODEL_VERSION, "settings": self.settings.to_dict(), "info": self.info, "cfg": cmeta,
            **pmeta, "fragments": self.fragments, "trace": self.trace, "prune_threshold": self.prune_threshold,
            "mpp_samples": self.mpp_samples,
        }
        if self.default_decoder:
            meta["default_decoder"] = self.default_decoder
        save_model(path, self, meta, {**{f"cfg.{k}": v for k, v in carrays.items()}, **parrays})

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> TSGModel:
        from treegram.grammar.pcfg import PCFGModel

        cfg = WeightedCFG.from_bundle(meta["cfg"], {k[4:]: v for k, v in arrays.items() if k.startswith("cfg.")})
        pcfg = PCFGModel.from_prefixed(meta, arrays)
        return cls(cfg, pcfg, TSGSettings.from_dict(meta["settings"]), meta["fragments"], meta.get("info"),
                   meta.get("trace"), prune_threshold=meta.get("prune_threshold", 1e-5),
                   mpp_samples=meta.get("mpp_samples", 0), default_decoder=meta.get("default_decoder"))

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        from treegram.charts.decoders import decoder_label

        decoder = decoder_label(self) + (" (model predates the field)" if self.default_decoder is None else "")
        out: dict[str, Any] = {"formalism": "tsg", **{f"setting_{k}": v for k, v in self.settings.to_dict().items()},
                               **self.info, "cfg_symbols": self.cfg.num_symbols, "cfg_rules": self.cfg.num_rules,
                               "default_decoder": decoder, "pruning": self.pruning_label()}
        if "averaged_samples" not in out:
            out["averaged_samples"] = 1  # the final sample's grammar
        if isinstance(out.get("averaged_sweeps"), list):
            out["averaged_sweeps"] = ", ".join(str(s) for s in out["averaged_sweeps"])
        if top:
            out["top_rules"] = [{"count": f["count"], "root": f["root"], "elementary tree": f["tree"]}
                                for f in self.fragments[:top]]
        return out

    def render_grammar(self, ui, args) -> None:
        """`treegram grammar MODEL --top K`: the most frequent elementary trees as a table, then drawn."""
        from treegram.cli.ui import styled
        from treegram.trees import ascii_tree, parse_brackets

        top = args.top
        ui.table(f"top {top} elementary trees", ["count", "root", "elementary tree"],
                 [(f["count"], f["root"], f["tree"]) for f in self.fragments[:top]])
        for f in self.fragments[:top]:
            ui.print(styled((f"count {f['count']}", "bold"), f"  root {f['root']}"))
            tree = parse_brackets(f["tree"], source="fragment")[0]
            ui.print(ascii_tree(tree), highlight=False, markup=False)


def grammar_stats(fragments: list[dict[str, Any]], depths: list[int], lexicalized: list[bool]) -> dict[str, Any]:
    counts = np.array([f["count"] for f in fragments], dtype=np.int64)
    multi = counts > 1
    dep = np.array(depths)
    lexd = np.array(lexicalized, dtype=bool)
    m = int(multi.sum())
    return {
        "elementary_trees": len(fragments),
        "elementary_trees_count_gt1": m,
        "frac_lexicalized_count_gt1": round(float(lexd[multi].mean()) if m else 0.0, 4),
        "frac_deeper_than_1_count_gt1": round(float((dep[multi] > 1).mean()) if m else 0.0, 4),
    }


def tsg_schema(meta: dict[str, Any]):
    """What a TSG model file holds (checked by the core before loading and before writing): the settings, the
    elementary trees with their counts, the parsing CFG transform and the coarse PCFG."""
    from treegram.elementary.data import TSGSettings
    from treegram.errors import ModelFileError
    from treegram.grammar.cfg import cfg_schema
    from treegram.grammar.pcfg import pcfg_schema
    from treegram.schema import (COMMON_OPTIONAL, Bundle, Dict, Embedded, Float, Int, List, Opt, Str,
                                 settings_schema)

    version = meta.get("tsg_version", 0)
    if isinstance(version, int) and version > MODEL_VERSION:
        raise ModelFileError(f"TSG model version {version} is newer than this plugin", hint="upgrade treegram")
    settings = settings_schema(TSGSettings, horizontal=Opt(Int(min=0)), vertical=Int(min=1),
                               rare_threshold=Int(min=0), alpha=Float(gt=0), beta=Float(gt=0, lt=1),
                               hyper_iterations=Int(min=0), init=Str(choices=("random", "minimal", "maximal")),
                               init_site_prob=Float(min=0, max=1))
    return Bundle(meta=Dict({"cfg": Dict(), "pcfg": Dict(), "settings": settings,
                             "fragments": List(Dict({"tree": Str(nonempty=True), "count": Int(min=0)},
                                                    optional={"root": Str()}))},
                            optional={**COMMON_OPTIONAL, "tsg_version": Int(min=0),
                                      "default_decoder": Str(nonempty=True)}),
                  parts=(Embedded(("cfg",), "cfg", cfg_schema()), Embedded(("pcfg",), "pcfg", pcfg_schema())))
