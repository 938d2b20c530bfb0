"""Treebank PCFG estimation: markovized, parent-annotated binarization, relative-frequency rules and unknown-word
signatures (`PCFGModel.train`), with Viterbi parsing and model I/O.

This is a core library: the PCFG formalism (`treegram.plugins.pcfg`) trains and loads it, and the Bayesian
formalisms use it as their base distribution and coarse (pruning) pass.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from treegram.errors import InputError, ParseFailure
from treegram.options import SettingsRecord
from treegram.schema import Arr, Bool, Dict, Int, Opt, Str, validate

START = "TOP"


#: What a saved PCFG's metadata must look like (TSG, TIG and OSTAG models embed one under "pcfg").
PCFG_SETTINGS = Dict({"horizontal": Opt(Int(min=0)), "vertical": Int(min=1), "rare_threshold": Int(min=0)},
                     optional={"mark_unary": Bool()}, extra=False)
PCFG_META = Dict({"settings": PCFG_SETTINGS, "cfg": Dict(),
                  "mapper": Dict({"kind": Str(), "min_count": Int(min=0), "counts": Dict(values=Int(min=0))})},
                 optional={"info": Opt(Dict())})
PCFG_ARRAYS = Dict({"unk_tags": Arr("iu", ndim=1, shape=("unk",), min=0), "unk_logp": Arr("f", shape=("unk",), max=1e-6)})


def _unk_tags_known(bundle: dict[str, Any]) -> str | None:
    tags = bundle["arrays"]["unk_tags"]
    n = len(bundle["meta"]["cfg"]["nonterminals"])
    if len(tags) and int(tags.max()) >= n:
        return f"unknown-word tag {int(tags.max())} is not one of the grammar's {n} symbols"
    return None


def pcfg_schema():
    """A saved PCFG (`treegram.schema.Bundle`): settings, rare-word mapper, the weighted CFG and the unknown-word
    distribution; TSG, TIG, OSTAG models and compressors embed it (`treegram.schema.Embedded`)."""
    from treegram.grammar.cfg import cfg_schema
    from treegram.schema import Bundle, Embedded, Where

    return Bundle(meta=PCFG_META, arrays=PCFG_ARRAYS,
                  parts=(Embedded(("cfg",), "cfg", cfg_schema()), Where(_unk_tags_known)))


@attrs.frozen
class PCFGSettings(SettingsRecord):
    horizontal: int | None = 2  # horizontal markovization (None = infinite)
    vertical: int = 2  # 1 = none, 2 = parent annotation, 3 = grandparent
    rare_threshold: int = 2  # words seen fewer times become signature classes
    mark_unary: bool = False


class PCFGModel:
    """A trained PCFG: the weighted CFG over annotated binarized symbols plus the unknown-word lexicon."""

    formalism = "pcfg"
    cell_beam = None  # its chart's cell beam: None = `treegram.option_groups.CELL_BEAM` (`parse --cell-beam`)

    def __init__(self, cfg, mapper, settings: PCFGSettings, unk_tags: np.ndarray, unk_logp: np.ndarray,
                 info: dict[str, Any] | None = None):
        self.cfg = cfg
        self.mapper = mapper
        self.settings = settings
        # open-class fallback for words whose signature was never seen: tag ids and log P(unseen word | tag)
        self.unk_tags = np.asarray(unk_tags, dtype=np.int32)
        self.unk_logp = np.asarray(unk_logp, dtype=np.float64)
        self.info = dict(info or {})

    # -- training ------------------------------------------------------------------------------
    @classmethod
    def train(cls, trees, settings: PCFGSettings = PCFGSettings(), *, progress=None) -> PCFGModel:
        from treegram.grammar.estimate import estimate_pcfg
        from treegram.trees.binarize import binarize
        from treegram.trees.signatures import RareWordMapper

        trees = list(trees)
        if not trees:
            raise InputError("no training trees", hint="check the --treebank paths")
        mapper = RareWordMapper()
        mapper.fit(trees, min_count=settings.rare_threshold)
        prepared = []
        iterator = progress(trees) if progress else trees
        for t in iterator:
            b = binarize(t, horizontal=settings.horizontal, vertical=settings.vertical,
                         mark_unary=settings.mark_unary)
            prepared.append(mapper.map_training_tree(b))
        cfg = estimate_pcfg(prepared, start_label=START)
        unk_tags, unk_logp = _unknown_tag_distribution(prepared, mapper, cfg)
        info = {"training_trees": len(trees)}
        return cls(cfg, mapper, settings, unk_tags, unk_logp, info)

    # -- parsing -------------------------------------------------------------------------------
    def lexical_input(self, tokens: list[str]):
        """Lexical rules for known words and signatures; open-class tags for words whose class was never seen."""
        lex = self.cfg.lexical_input(self.mapper.map_sentence(tokens))
        return lex.with_fallback(self.unk_tags, self.unk_logp)

    def parse(self, tokens: list[str]):
        """The default decoder's tree (`charts.decoders.resolve_decoder`: mpd, the Viterbi parse) as a plain
        treebank tree; raises ParseFailure if none exists."""
        from treegram.charts.decoders import default_parse

        return default_parse(self, tokens)

    # `treegram.charts.decoders.ChartModel`: every core decoder works on this model
    def chart_input(self, tokens: list[str]):
        """The chart is built with the cell beam (`treegram.charts.pruning.cell_beam`); a sentence the beam
        leaves without a parse is parsed again without it (`ChartInput.retry`)."""
        from treegram.charts.decoders import ChartInput
        from treegram.charts.pruning import cell_beam

        return ChartInput(self.cfg, self.lexical_input(tokens), list(tokens), cell_beam(self.cell_beam))

    def derivation_tree(self, derivation, inp):
        return self.category_tree(derivation.to_tree(self.cfg, inp.words), inp)

    def category_tree(self, tree, inp=None):
        from treegram.trees.binarize import unbinarize

        if tree.label == START and len(tree.children) == 1:
            tree = tree.children[0]
        return unbinarize(tree)

    def generation_view(self):
        """(GenerationModel, system): this model's parsing grammar as a Context/Outcome/Imply generation system
        (`treegram.generation.cfg_view`), for `treegram generate --model`; words only (signatures left out)."""
        if getattr(self, "_generation_view", None) is None:
            from treegram.generation.cfg_view import cfg_generation_view

            self._generation_view = cfg_generation_view(self.cfg, keep_word=self.mapper.is_known,
                                                         formalism=self.formalism)
        return self._generation_view

    # -- persistence ---------------------------------------------------------------------------
    def bundle(self, prefix: str = "") -> tuple[dict[str, Any], dict[str, np.ndarray]]:
        """(metadata, arrays) of this PCFG; with a prefix (a model that embeds its coarse PCFG, e.g. "pcfg") the
        metadata sits under that key and the array names start with "prefix." (`from_prefixed` reads it back)."""
        cmeta, carrays = self.cfg.to_bundle()
        meta = {"settings": self.settings.to_dict(), "mapper": self.mapper.to_dict(), "cfg": cmeta, "info": self.info}
        arrays = {**{f"cfg.{k}": v for k, v in carrays.items()}, "unk_tags": self.unk_tags, "unk_logp": self.unk_logp}
        if not prefix:
            return meta, arrays
        return {prefix: meta}, {f"{prefix}.{k}": v for k, v in arrays.items()}

    @classmethod
    def from_prefixed(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray], prefix: str = "pcfg") -> PCFGModel:
        """The PCFG a model embedded with `bundle(prefix)`."""
        n = len(prefix) + 1
        return cls.from_bundle(meta[prefix], {k[n:]: v for k, v in arrays.items() if k.startswith(prefix + ".")})

    def save(self, path: str | Path) -> None:
        from treegram.formalism import save_model

        save_model(path, self, *self.bundle())

    @classmethod
    def from_bundle(cls, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> PCFGModel:
        from treegram.grammar.cfg import WeightedCFG
        from treegram.trees.signatures import RareWordMapper

        validate({"meta": meta, "arrays": arrays}, pcfg_schema(), "model")  # also when embedded in another model
        cfg = WeightedCFG.from_bundle(meta["cfg"], {k[4:]: v for k, v in arrays.items() if k.startswith("cfg.")})
        return cls(cfg, RareWordMapper.from_dict(meta["mapper"]), PCFGSettings(**meta["settings"]),
                   arrays["unk_tags"], arrays["unk_logp"], meta.get("info"))

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        from treegram.charts.decoders import decoder_label
        from treegram.charts.pruning import beam_label

        cfg = self.cfg
        out: dict[str, Any] = {
            "formalism": "pcfg",
            **{f"setting_{k}": v for k, v in self.settings.to_dict().items()},
            **self.info,
            "nonterminals": len(cfg.nonterminals),
            "words": len(cfg.words),
            "binary_rules": int(len(cfg.bin_logp)),
            "unary_rules": int(len(cfg.un_logp)),
            "lexical_rules": int(len(cfg.lex_logp)),
            "default_decoder": decoder_label(self),
            "pruning": beam_label(self.cell_beam),
        }
        if top:
            nt = cfg.nonterminals.symbol
            rules = [(float(p), f"{nt(a)} -> {nt(b)} {nt(c)}")
                     for a, b, c, p in zip(cfg.bin_parent, cfg.bin_left, cfg.bin_right, cfg.bin_logp)]
            rules += [(float(p), f"{nt(a)} -> {nt(b)}") for a, b, p in zip(cfg.un_parent, cfg.un_child, cfg.un_logp)]
            rules.sort(key=lambda r: -r[0])
            out["top_rules"] = [{"rule": r, "prob": round(float(np.exp(p)), 4)} for p, r in rules[:top]]
        return out


def _unknown_tag_distribution(trees, mapper, cfg) -> tuple[np.ndarray, np.ndarray]:
    """P(unseen word | tag) for open-class tags, estimated from how often each tag carried a rare word.

    Used only when even an unknown word's signature class never occurred in training.
    """
    tag_total: Counter[str] = Counter()
    tag_rare: Counter[str] = Counter()
    for t in trees:
        for word, tag in t.pos():
            tag_total[tag] += 1
            if not mapper.is_known(word):  # mapped training trees hold known words or signatures
                tag_rare[tag] += 1
    tags = [t for t in tag_rare if t in cfg.nonterminals]
    if not tags:  # tiny treebanks: every tag may take an unknown word
        tags = [t for t in tag_total if t in cfg.nonterminals]
        tag_rare = Counter({t: 1 for t in tags})
    ids = np.array([cfg.nonterminals[t] for t in tags], dtype=np.int32)
    logp = np.array([np.log(tag_rare[t] / tag_total[t]) for t in tags], dtype=np.float64)
    return ids, logp
