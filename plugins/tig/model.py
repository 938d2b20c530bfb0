"""A trained TIG: the parsing grammar (the TIG -> TSG -> CFG transform of `grammar.Builder`, with per-symbol
metadata for the back-transform), the coarse PCFG (pruning, unknown words) and the elementary-tree inventory;
parsing, model I/O and the `treegram grammar` views."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from treegram.elementary.base_route import BASE_SUFFIX
from treegram.elementary.parsing import CoarseToFineModel
from treegram.formalism import save_model
from treegram.grammar.cfg import WeightedCFG
from treegram.grammar.pcfg import PCFGModel
from treegram.trees import Tree

from treegram.plugins.tig.derivation import LEFT, RIGHT, TIGSettings
from treegram.plugins.tig.grammar import derived_tree

MODEL_VERSION = 1
META_KEYS = ("kind", "label", "side", "foot")


class TIGModel(CoarseToFineModel):
    """A trained TIG: the parsing CFG with per-symbol metadata (derivation -> derived tree), the coarse PCFG
    (pruning, unknown words) and the elementary-tree inventory."""

    formalism = "tig"

    def __init__(self, cfg: WeightedCFG, meta: dict[str, np.ndarray], pcfg, settings: TIGSettings,
                 fragments: dict[str, list[dict[str, Any]]], info: dict[str, Any] | None = None,
                 trace: list[dict[str, Any]] | None = None, *, prune_threshold: float = 1e-5,
                 default_decoder: str | None = None):
        self.cfg = cfg
        self.meta = meta
        self.pcfg = pcfg
        self.settings = settings
        self.fragments = fragments  # initial / left / right: [{"tree", "count", "root"}] most frequent first
        self.info = dict(info or {})
        self.trace = list(trace or [])
        self.prune_threshold = prune_threshold
        # every parse with this model decodes with this when no decoder is named (`charts.decoders.resolve_decoder`);
        # None (model files written before issue 16): mpd
        self.default_decoder = default_decoder
        self.labels = [self.cfg.categories.symbol(i) for i in range(len(self.cfg.categories) - 1)]
        self._base = None
        self.last_insertions = (0, 0)

    # -- parsing (lexical input, unknown words, pruning, chart input: `CoarseToFineModel`) -------------------
    def _base_symbol(self, label: str) -> int | None:
        if self._base is None:
            from treegram.plugins.tig.grammar import S_BODY

            kind, lab = self.meta["kind"], self.meta["label"]
            base = {}
            for s in np.flatnonzero(kind == S_BODY).tolist():
                if self.cfg.nonterminals.symbol(s).split("#")[0].endswith(BASE_SUFFIX):
                    base[int(lab[s])] = s
            self._base = (base, {name: i for i, name in enumerate(self.labels)})
        base, index = self._base
        L = index.get(label)
        return base.get(L) if L is not None else None

    def parse(self, tokens: list[str]) -> Tree:
        """The derived tree of the model's default decoder (`charts.decoders.resolve_decoder`), unbinarized;
        ParseFailure if none."""
        from treegram.charts.decoders import default_parse

        return default_parse(self, tokens)

    def derivation_tree(self, derivation, inp) -> Tree:
        """A TIG derivation -> its derived tree; `last_insertions` keeps its (left, right) insertion counts (for
        the benchmarks' statistics)."""
        tree, ins = derived_tree(self.labels, self.meta, derivation.steps, inp.words)
        self.last_insertions = (ins[LEFT], ins[RIGHT])
        return self.category_tree(tree)

    def category_tree(self, tree: Tree, inp=None) -> Tree:
        """A tree over the CFG's categories -> output tree: insertion symbols (`~flat`) spliced, START dropped,
        unbinarized."""
        from treegram.charts.decoders import splice
        from treegram.plugins.tig.grammar import FLAT

        return self.finish_tree(splice(tree, {FLAT}))

    # -- persistence ---------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> None:
        cmeta, carrays = self.cfg.to_bundle()
        pmeta, parrays = self.pcfg.bundle("pcfg")
        meta = {
            "tig_version": MODEL_VERSION, "settings": self.settings.to_dict(), "info": self.info, "cfg": cmeta,
            **pmeta, "fragments": self.fragments, "trace": self.trace, "prune_threshold": self.prune_threshold,
        }
        if self.default_decoder is not None:
            meta["default_decoder"] = self.default_decoder
        arrays = {**{f"cfg.{k}": v for k, v in carrays.items()}, **parrays,
                  **{f"sym.{k}": self.meta[k] for k in META_KEYS}}
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
        cfg = WeightedCFG.from_bundle(meta["cfg"], {k[4:]: v for k, v in arrays.items() if k.startswith("cfg.")})
        pcfg = PCFGModel.from_prefixed(meta, arrays)
        sym = {k: arrays[f"sym.{k}"] for k in META_KEYS}
        return cls(cfg, sym, pcfg, TIGSettings.from_dict(meta["settings"]), meta["fragments"], meta.get("info"),
                   meta.get("trace"), prune_threshold=meta.get("prune_threshold", 1e-5),
                   default_decoder=meta.get("default_decoder"))

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        from treegram.charts.decoders import decoder_label

        out: dict[str, Any] = {"formalism": "tig", **{f"setting_{k}": v for k, v in self.settings.to_dict().items()},
                               **self.info, "cfg_symbols": self.cfg.num_symbols, "cfg_rules": self.cfg.num_rules,
                               "default_decoder": decoder_label(self), "pruning": self.pruning_label()}
        out.setdefault("averaged_samples", 1)  # model files from before averaging: the final sample's grammar
        if isinstance(out.get("averaged_sweeps"), list):
            out["averaged_sweeps"] = ", ".join(str(s) for s in out["averaged_sweeps"])
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
        from treegram.cli.ui import styled
        from treegram.trees import ascii_tree, parse_brackets

        top = getattr(args, "top", 10)
        kinds = ("left", "right") if getattr(args, "aux", False) else ("initial",)
        for kind in kinds:
            frags = self.fragments.get(kind, [])[:top]
            n = self.info.get(f"{kind}_trees", len(self.fragments.get(kind, [])))
            ui.table(f"top {len(frags)} of {n} {kind} trees", ["count", "root", "elementary tree"],
                     [(f["count"], f["root"], f["tree"]) for f in frags])
            for f in frags:
                ui.print(styled((f"{kind} count {f['count']}", "bold"), f"  root {f['root']}"))
                ui.print(ascii_tree(parse_brackets(f["tree"], source="elementary tree")[0]), highlight=False,
                         markup=False)


def _symbols_match(bundle: dict[str, Any]) -> str | None:
    n, m = len(bundle["meta"]["cfg"]["nonterminals"]), len(bundle["arrays"]["sym.kind"])
    return None if n == m else f"{m} symbol annotations for a parsing grammar of {n} symbols"


def tig_schema(meta: dict[str, Any]):
    """What a TIG model file holds (checked by the core before loading and before writing): settings, the
    elementary trees with their counts, the parsing CFG transform with one annotation per symbol, the coarse
    PCFG."""
    from treegram.errors import ModelFileError
    from treegram.grammar.cfg import cfg_schema
    from treegram.grammar.pcfg import pcfg_schema
    from treegram.schema import (COMMON_OPTIONAL, Arr, Bundle, Dict, Embedded, Float, Int, List, Opt, Str, Where,
                                 settings_schema)

    version = meta.get("tig_version", 0)
    if isinstance(version, int) and not isinstance(version, bool) and version > MODEL_VERSION:
        raise ModelFileError(f"TIG model version {version} is newer than this plugin",
                             hint="upgrade treegram's tig plugin")
    settings = settings_schema(TIGSettings, variant=Str(choices=("tig", "tig0")), horizontal=Opt(Int(min=0)),
                               vertical=Int(min=1), rare_threshold=Int(min=0), alpha=Float(gt=0),
                               beta=Float(gt=0, lt=1), foot=Float(gt=0, lt=1), phi=Float(gt=0, lt=1),
                               hyper_iterations=Int(min=0))
    fragment = Dict({"tree": Str(nonempty=True), "count": Int(min=0)}, optional={"root": Str()})
    sym = Arr("iub", shape=("symbols",))
    return Bundle(meta=Dict({"cfg": Dict(), "pcfg": Dict(), "settings": settings,
                             "fragments": Dict(values=List(fragment))},
                            optional={**COMMON_OPTIONAL, "tig_version": Int(min=0),
                                      "default_decoder": Str(nonempty=True)}),
                  arrays=Dict({f"sym.{k}": sym for k in META_KEYS}),
                  parts=(Embedded(("cfg",), "cfg", cfg_schema()), Embedded(("pcfg",), "pcfg", pcfg_schema()),
                         Where(_symbols_match)))
