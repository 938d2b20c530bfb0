"""A trained TIG (parsing grammar + inventory), and training end to end: prepare trees, optionally start from a TSG
Gibbs sample, run blocked MH (checkpointed, exact resume), extract the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import attrs
import numpy as np

from treegram.elementary.data import START, prepare
from treegram.elementary.gibbs import gibbs_cuts
from treegram.elementary.run import RunOptions as ElementaryRunOptions
from treegram.elementary.tables import key_size, key_to_tree
from treegram.errors import InputError, ParseFailure
from treegram.formalism import save_model
from treegram.grammar.cfg import LexicalInput, WeightedCFG
from treegram.grammar.pcfg import PCFGModel, PCFGSettings
from treegram.trees import Tree, unbinarize

from treegram.plugins.tig.grammar import Builder, derived_tree
from treegram.plugins.tig.model import DP_INIT, DP_LEFT, DP_RIGHT, LEFT, RIGHT, TIGSettings

MODEL_VERSION = 1
META_KEYS = ("kind", "label", "side", "foot")


@attrs.frozen
class RunOptions(ElementaryRunOptions):
    """How to run the TIG sampler: the shared elementary-tree run options plus the stored inventory size."""

    keep_fragments: int = 500  # elementary trees of each kind stored in the model for `treegram grammar`


class TIGModel:
    """A trained TIG: the parsing CFG with per-symbol metadata (derivation -> derived tree), the coarse PCFG
    (pruning, unknown words) and the elementary-tree inventory."""

    formalism = "tig"

    def __init__(self, cfg: WeightedCFG, meta: dict[str, np.ndarray], pcfg, settings: TIGSettings,
                 fragments: dict[str, list[dict[str, Any]]], info: dict[str, Any] | None = None,
                 trace: list[dict[str, Any]] | None = None, *, prune_threshold: float = 1e-5):
        self.cfg = cfg
        self.meta = meta
        self.pcfg = pcfg
        self.settings = settings
        self.fragments = fragments  # initial / left / right: [{"tree", "count", "root"}] most frequent first
        self.info = dict(info or {})
        self.trace = list(trace or [])
        self.prune_threshold = prune_threshold
        self.labels = [self.cfg.categories.symbol(i) for i in range(len(self.cfg.categories) - 1)]
        self._unk = None
        self.last_insertions = (0, 0)

    # -- parsing ---------------------------------------------------------------------------------------------
    def _unknown_entries(self):
        if self._unk is None:
            from treegram.plugins.tig.grammar import S_BODY

            kind, lab = self.meta["kind"], self.meta["label"]
            base = {}
            for s in np.flatnonzero(kind == S_BODY).tolist():
                if self.cfg.nonterminals.symbol(s).split("#")[0].endswith("~base"):
                    base[int(lab[s])] = s
            coarse = self.pcfg.cfg.nonterminals
            ids, logp = [], []
            index = {name: i for i, name in enumerate(self.labels)}
            for t, lpv in zip(self.pcfg.unk_tags.tolist(), self.pcfg.unk_logp.tolist()):
                L = index.get(coarse.symbol(t))
                if L is not None and L in base:
                    ids.append(base[L])
                    logp.append(lpv)
            self._unk = (np.array(ids, np.int32), np.array(logp, np.float64))
        return self._unk

    def lexical_input(self, tokens: list[str]) -> LexicalInput:
        lex = self.cfg.lexical_input(self.pcfg.mapper.map_sentence(tokens))
        return lex.with_fallback(*self._unknown_entries())

    def _pruning(self, tokens):
        from treegram.charts import Pruning, coarse_to_fine_mask

        if not self.prune_threshold:
            return None
        try:
            mask = coarse_to_fine_mask(self.pcfg.cfg, self.pcfg.lexical_input(tokens), threshold=self.prune_threshold,
                                       projection=self.cfg)
        except ParseFailure:
            return None
        return Pruning(mask=mask)

    def parse_derivation(self, tokens: list[str]) -> tuple[Tree, tuple[int, int], float]:
        """(derived binarized tree, (left, right) insertions, log-probability) of the most probable derivation."""
        from treegram.charts import viterbi

        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        lex = self.lexical_input(tokens)
        prune = self._pruning(tokens)
        result = viterbi(self.cfg, lex, list(tokens), prune=prune)
        if result is None and prune is not None:
            result = viterbi(self.cfg, lex, list(tokens))
        if result is None:
            raise ParseFailure(f"no parse for a sentence of {len(tokens)} words")
        tree, ins = derived_tree(self.labels, self.meta, result.derivation.steps, list(tokens))
        return tree, (ins[LEFT], ins[RIGHT]), result.logp

    def parse(self, tokens: list[str]) -> Tree:
        """The derived tree of the most probable TIG derivation (unbinarized); ParseFailure if none."""
        tree, ins, _ = self.parse_derivation(tokens)
        self.last_insertions = ins
        if tree.label == START and len(tree.children) == 1 and isinstance(tree.children[0], Tree):
            tree = tree.children[0]
        return unbinarize(tree)

    # `treegram.charts.decoders.ChartModel`: every core decoder (MPD, MPP, max-rule, ...) works on this model
    def chart_input(self, tokens: list[str]):
        from treegram.charts.decoders import ChartInput

        if not tokens:
            raise InputError("empty sentence", hint="give at least one token")
        return ChartInput(self.cfg, self.lexical_input(tokens), list(tokens), self._pruning(tokens))

    def derivation_tree(self, derivation, inp) -> Tree:
        tree, _ins = derived_tree(self.labels, self.meta, derivation.steps, inp.words)
        return self.category_tree(tree)

    def category_tree(self, tree: Tree, inp=None) -> Tree:
        """A tree over the CFG's categories -> output tree: insertion symbols (`~flat`) spliced, START dropped,
        unbinarized."""
        from treegram.charts.decoders import splice
        from treegram.plugins.tig.grammar import FLAT

        tree = splice(tree, {FLAT})
        if tree.label == START and len(tree.children) == 1 and isinstance(tree.children[0], Tree):
            tree = tree.children[0]
        return unbinarize(tree)

    def generation_view(self):
        """(GenerationModel, system): this model's parsing grammar as a Context/Outcome/Imply generation system
        (`treegram.generation.cfg_view`), for `treegram generate --model`; words only (signatures left out)."""
        if getattr(self, "_generation_view", None) is None:
            from treegram.generation.cfg_view import cfg_generation_view

            self._generation_view = cfg_generation_view(self.cfg, keep_word=self.pcfg.mapper.is_known,
                                                         formalism=self.formalism)
        return self._generation_view

    # -- persistence ---------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        cmeta, carrays = self.cfg.to_bundle()
        pmeta, parrays = self.pcfg.cfg.to_bundle()
        meta = {
            "tig_version": MODEL_VERSION, "settings": self.settings.to_dict(), "info": self.info, "cfg": cmeta,
            "pcfg": {"settings": self.pcfg.settings.to_dict(), "mapper": self.pcfg.mapper.to_dict(), "cfg": pmeta,
                     "info": self.pcfg.info},
            "fragments": self.fragments, "trace": self.trace, "prune_threshold": self.prune_threshold,
        }
        arrays = {**{f"cfg.{k}": v for k, v in carrays.items()}, **{f"pcfg.cfg.{k}": v for k, v in parrays.items()},
                  **{f"sym.{k}": self.meta[k] for k in META_KEYS},
                  "pcfg.unk_tags": self.pcfg.unk_tags, "pcfg.unk_logp": self.pcfg.unk_logp}
        save_model(path, self, meta, arrays)

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> TIGModel:
        from treegram.errors import ModelFileError

        if meta.get("tig_version", 0) > MODEL_VERSION:
            raise ModelFileError(f"TIG model version {meta.get('tig_version')} is newer than this plugin",
                                 hint="upgrade treegram's tig plugin")
        missing = [k for k in META_KEYS if f"sym.{k}" not in arrays]
        if missing or "cfg" not in meta:
            raise ModelFileError("the TIG model file is incomplete (missing " + ", ".join(missing or ["cfg"]) + ")",
                                 hint="retrain with `treegram train tig`")
        from treegram.schema import COMMON_OPTIONAL, SETTINGS, Arr, Dict, List, validate

        validate(meta, Dict({"cfg": Dict(), "pcfg": Dict(), "settings": SETTINGS,
                             "fragments": Dict(values=List(Dict()))},
                            optional=COMMON_OPTIONAL), "meta")
        validate({k: arrays[f"sym.{k}"] for k in META_KEYS}, Dict(values=Arr("iub", shape=("symbols",))), "sym")
        cfg = WeightedCFG.from_bundle(meta["cfg"], {k[4:]: v for k, v in arrays.items() if k.startswith("cfg.")})
        pcfg = PCFGModel.from_bundle(meta["pcfg"], {k[5:]: v for k, v in arrays.items() if k.startswith("pcfg.")})
        sym = {k: arrays[f"sym.{k}"] for k in META_KEYS}
        return cls(cfg, sym, pcfg, TIGSettings.from_dict(meta["settings"]), meta["fragments"], meta.get("info"),
                   meta.get("trace"), prune_threshold=meta.get("prune_threshold", 1e-5))

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        out: dict[str, Any] = {"formalism": "tig", **{f"setting_{k}": v for k, v in self.settings.to_dict().items()},
                               **self.info, "cfg_symbols": self.cfg.num_symbols, "cfg_rules": self.cfg.num_rules}
        if top:
            for kind in ("initial", "left", "right"):
                out[f"top_{kind}"] = [{"count": f["count"], "root": f["root"], "elementary tree": f["tree"]}
                                      for f in self.fragments.get(kind, [])[:top]]
        return out

    def grammar_json(self, args) -> dict[str, Any]:
        """`treegram grammar MODEL --json [--top K] [--aux]`: the summary plus the listed initial (or left and
        right auxiliary) trees."""
        top = getattr(args, "top", 10)
        kinds = ("left", "right") if getattr(args, "aux", False) else ("initial",)
        return {**self.describe(top=0), "trees": {kind: self.fragments.get(kind, [])[:top] for kind in kinds}}

    def render_grammar(self, ui, args) -> None:
        """`treegram grammar MODEL [--top K] [--aux]`: draw the most frequent initial (or, with --aux, left and
        right auxiliary) trees; the foot node of an auxiliary tree is drawn as `X*`."""
        from treegram.trees import ascii_tree, parse_brackets

        top = getattr(args, "top", 10)
        kinds = ("left", "right") if getattr(args, "aux", False) else ("initial",)
        for kind in kinds:
            frags = self.fragments.get(kind, [])[:top]
            n = self.info.get(f"{kind}_trees", len(self.fragments.get(kind, [])))
            ui.table(f"top {len(frags)} of {n} {kind} trees", ["count", "root", "elementary tree"],
                     [(f["count"], f["root"], f["tree"]) for f in frags])
            for f in frags:
                ui.print(f"[bold]{kind} count {f['count']}[/]  root {f['root']}", highlight=False)
                ui.print(ascii_tree(parse_brackets(f["tree"], source="elementary tree")[0]), highlight=False,
                         markup=False)


# -- training ----------------------------------------------------------------------------------------------------
def extract_model(state, pcfg, settings: TIGSettings, run: RunOptions, trace: list[dict], info: dict) -> TIGModel:
    cfg, meta = Builder(state, run.min_count).build()
    labels, words = state.data.labels, state.data.words
    fragments: dict[str, list[dict[str, Any]]] = {}
    sizes = {}
    for name, dp in (("initial", DP_INIT), ("left", DP_LEFT), ("right", DP_RIGHT)):
        items = [(n, key) for (d, key), n in state.counts.count.items() if d == dp]
        items.sort(key=lambda t: (-t[0], key_size(t[1]), repr(t[1])))
        sizes[f"{name}_trees"] = len(items)
        sizes[f"{name}_trees_count_gt1"] = sum(1 for n, _ in items if n > 1)
        fragments[name] = [{"tree": key_to_tree(key, labels, words).to_bracket(), "count": int(n),
                            "root": labels[key[0]]} for n, key in items[: run.keep_fragments]]
    il, ir = state.insertions()
    info = {**info, **sizes, "training_insertions_left": il, "training_insertions_right": ir,
            "log_likelihood": round(state.log_likelihood(), 3), "iterations": len(trace), "seed": run.seed}
    return TIGModel(cfg, meta, pcfg, settings, fragments, info, trace, prune_threshold=run.prune_threshold)


#: Training trees with more nodes are left out (with a note): the per-tree proposal chart is cubic in its length.
MAX_TRAIN_NODES = 2000


def train_tig(trees, settings: TIGSettings = TIGSettings(), run: RunOptions = RunOptions(), *,
              callback: Callable[[dict], Any] | None = None, init_callback: Callable[[dict], Any] | None = None,
              note=None, init_sub: np.ndarray | None = None, task=None) -> TIGModel:
    """Train a TIG / TIG0 on treebank trees by blocked MH (see `treegram train tig -h`).  `init_sub` (cut flags over
    the prepared rows, e.g. a TSG sample's) overrides `run.tsg_init`.  `task(description, total)` (e.g. `UI.task`)
    wraps each phase in a progress context whose `advance` the callbacks then receive as second argument (without
    `task` they get the sweep record only)."""
    from contextlib import nullcontext
    from treegram.bayes import BlockedMH
    from treegram.plugins.tig.sampler import BlockedTIG

    from treegram.trees.tree import drop_oversized

    trees = drop_oversized(trees, MAX_TRAIN_NODES, what="TIG", note=note)
    if not trees:
        raise InputError("no training trees", hint="check the --treebank paths")
    pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                               rare_threshold=settings.rare_threshold))
    data, _ = prepare(trees, settings.tsg_settings(), pcfg.mapper)
    if run.resume:
        state = BlockedTIG(data, settings, run.seed)
        driver = run.make_driver(BlockedMH, state, callback)
        if note is not None:
            note(f"resumed from {run.checkpoint} after {driver.sweeps_done} iterations")
    else:
        if init_sub is None and run.tsg_init:
            with (task("TSG Gibbs initialisation", run.tsg_init) if task else nullcontext()) as adv:
                cb = init_callback if (init_callback is None or task is None) else (lambda r: init_callback(r, adv))
                init_sub = gibbs_cuts(data, settings.tsg_settings(), run.tsg_init, run.seed, cb)
        state = BlockedTIG(data, settings, run.seed, init_sub=init_sub)
        driver = run.make_driver(BlockedMH, state, callback)
    if task is not None and callback is not None:
        with task(f"{settings.variant.upper()} blocked MH", run.iterations) as adv:
            driver.callback = lambda r: callback(r, adv)
            trace = driver.run(run.iterations)
    else:
        trace = driver.run(run.iterations)
    info = {"variant": settings.variant, "training_trees": len(trees), "labels": data.num_labels,
            "tsg_init_iterations": run.tsg_init}
    return extract_model(state, pcfg, settings, run, trace, info)
