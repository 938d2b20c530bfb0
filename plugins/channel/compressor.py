"""The trained channel model (`treegram compress`) and training from (long, short) pairs."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from treegram.compression.align import Pair
from treegram.compression.compressor import PolicyCompressor, TreeChartDecoder, embed_parser, embedded_parser
from treegram.compression.policy import DeletionPolicy, apply_options
from treegram.compression.treeprep import parse_sentences, wrap_root
from treegram.errors import InputError, ModelFileError
from treegram.formalism import save_model

from treegram.plugins.channel import DEFAULT_LEVELS
from treegram.plugins.channel.model import ChannelGrammar, analyse, project, training_summary

__all__ = ["ChannelModel", "train_channel"]

FORMAT = "channel-2"  # version of the model's JSON tables


class ChannelModel(PolicyCompressor):
    """The noisy-channel grammar plus the parser that turns raw sentences into long trees."""

    what = "channel"
    formalism = "channel"

    CHART_CACHE = 512  # sentence decoders (charts) kept for re-decoding the same tree at other rewards / rates

    def __init__(self, grammar: ChannelGrammar, parser=None, info: dict[str, Any] | None = None,
                 policy: DeletionPolicy | None = None):
        super().__init__(grammar, parser, info, policy)
        self._charts: OrderedDict = OrderedDict()

    @property
    def levels(self) -> int:
        return self.grammar.levels

    def decoder(self, tree, tokens: list[str], policy=None) -> TreeChartDecoder:
        """The compressor contract (`treegram.compression.compressor`): the sentence's channel chart (cached for
        re-decoding the same tree) under the model's deletion policy (`treegram.compression.policy`), Viterbi at any
        reward (added to the policy's default) and exact lengths for rate control; `policy`: another deletion policy
        (not cached)."""
        tree = wrap_root(tree)
        t = analyse(tree)
        if len(t.words) != len(tokens):
            raise InputError(f"the tree has {len(t.words)} words but the sentence {len(tokens)}")
        key = (tree.to_bracket(), tuple(tokens))
        dec = self._charts.pop(key, None) if policy is None else None
        if dec is None:
            pol = self.policy if policy is None else policy
            chart = self.grammar.chart(t, pol if pol.active else None)

            def output(apps, chart=chart):
                keep = chart.keep_of(apps)
                return project(tree, keep), keep

            # the policy's word significance rides on the kept words' applications
            dec = TreeChartDecoder(chart.chart, chart.word_mask, tokens, output, [(0, 0)],
                                   chart.word_extra(pol.word_scores(t)), pol)
            if policy is not None:
                return dec
        self._charts[key] = dec
        while len(self._charts) > self.CHART_CACHE:
            self._charts.popitem(last=False)
        return dec

    # -- persistence --------------------------------------------------------------------------------------------
    def save(self, path) -> None:
        parser_meta, arrays = embed_parser(self.parser)
        save_model(path, self, {"format": FORMAT, "grammar": self.grammar.to_json(), "info": self.info,
                                "parser": parser_meta, "policy": self.policy.to_json()}, arrays)

    @classmethod
    def from_bundle(cls, meta: dict, arrays: dict) -> "ChannelModel":
        if meta.get("format") != FORMAT:
            raise ModelFileError(f"channel model of format {meta.get('format')!r}, but this treegram reads {FORMAT!r}",
                                 hint="retrain it with `treegram train channel`")
        if not isinstance(meta.get("grammar"), dict):
            raise ModelFileError("corrupt channel model: no grammar tables",
                                 hint="re-create it with `treegram train channel`")
        info = meta.get("info") if isinstance(meta.get("info"), dict) else {}
        return cls(ChannelGrammar.from_json(meta["grammar"]), embedded_parser(meta, arrays), info,
                   cls.read_policy(meta))

    @staticmethod
    def schema():
        """What a channel model file holds (checked by the core before loading and before writing): the source,
        added-subtree and channel models' Witten-Bell tables (finite counts >= 0), real booleans, the deletion
        policy and the embedded parser."""
        from treegram.compression.compressor import embedded_parser_schema
        from treegram.compression.policy import policy_schema
        from treegram.compression.syntax import syntax_model_schema, witten_bell_schema
        from treegram.schema import COMMON_OPTIONAL, AllOf, AnyOf, Bundle, Dict, Int, List, Str, Where

        levels = AnyOf((Int(min=4, max=4), Int(min=6, max=6)))
        channel = Dict({"levels": levels,
                        "tables": Dict({str(k): witten_bell_schema() for k in range(1, 7)}, extra=False),
                        "categories": List(Str()), "vocab": List(Str())}, extra=False)
        grammar = AllOf((Dict({"levels": levels, "source": syntax_model_schema(), "added": syntax_model_schema(),
                               "channel": channel}, extra=False),
                         Where(lambda g: None if g["levels"] == g["channel"]["levels"]
                               and g["source"]["lexicalized"] == g["added"]["lexicalized"]
                               else "its levels or lexicalization disagree between the source and channel models")))
        return Bundle(meta=Dict({"format": Str(choices=(FORMAT,)), "grammar": grammar},
                                optional={**COMMON_OPTIONAL, "parser": embedded_parser_schema(),
                                          "policy": policy_schema()}))

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        out: dict[str, Any] = {"formalism": "channel", "levels": self.levels,
                               "source_lexicalized": self.grammar.source.lexicalized,
                               **{f"policy_{k}": v for k, v in self.policy.describe().items()},
                               **{k: v for k, v in self.info.items() if not isinstance(v, (list, dict))},
                               "parser": getattr(self.parser, "formalism", None)}
        ch = self.grammar.channel
        for k in (1, 2, 3, 4, 5, 6):
            out[f"level{k}_contexts"] = len(ch.tables[k].table)
        if top:
            rows = []
            for ctx, row in ch.tables[4].table.items():  # the most frequent expansions that add something
                for o, n in row.items():
                    if "+" in o:
                        rows.append({"short": ctx.replace("\t", " "), "long": o, "count": n,
                                     "prob": round(n / ch.tables[4].stats(ctx)[0], 4)})
            rows.sort(key=lambda r: (-r["count"], r["short"], r["long"]))
            out["top_expansions"] = rows[:top]
        return out


# -- training ------------------------------------------------------------------------------------------------------

def train_channel(pairs: list[Pair], parser, *, levels: int = DEFAULT_LEVELS, source_lexicalized: bool | None = None,
                  trees=None, parser_path=None, parser_id: str = "", cache_dir=None, workers: int = 1, ui=None,
                  options=None) -> ChannelModel:
    """Count the source model, the channel and the added-subtree model over the pairs' long trees (parsed with
    `parser`, or given as `trees`) and their deletion alignments.  `options` (`PolicyOptions`): the deletion
    policy (its --valency-text sentences are parsed with the same parser and counted into the valency model) and
    the calibration of the default length (--target-rate)."""
    if not pairs:
        raise InputError("no training pairs", hint="check the --pairs files (one tokenized sentence per line)")
    start = time.perf_counter()
    parse_counts: dict = {}
    if trees is None:
        track = (lambda xs: ui.track(xs, description="parsing long sentences")) if ui else None
        trees, parse_counts = parse_sentences([p.source for p in pairs], parser, parser_id=parser_id,
                                              cache_dir=cache_dir, progress=track, workers=workers,
                                              parser_path=parser_path)
    if len(trees) != len(pairs):
        raise InputError(f"{len(trees)} trees for {len(pairs)} pairs")
    g = ChannelGrammar(levels, source_lexicalized)
    skipped = 0
    for p, tree in zip(pairs, trees):
        t = analyse(wrap_root(tree))
        if len(t.words) != len(p.keep):
            raise InputError(f"pair on line {p.line}: the tree has {len(t.words)} words but the sentence "
                             f"{len(p.keep)}")
        if not p.keep.any():
            skipped += 1  # an empty compression has no short tree
            continue
        g.observe(t, p.keep)
    info = {"levels": levels, "source_lexicalized": g.source.lexicalized, "training_pairs": len(pairs),
            "non_deletion_pairs": sum(not p.pure_deletion for p in pairs),
            "parse_failures": parse_counts.get("failed", 0) + parse_counts.get("too_long", 0),
            **training_summary(len(pairs) - skipped, skipped, g)}

    model = apply_options(ChannelModel(g, parser, info), options, parser=parser, parser_id=parser_id,
                          cache_dir=cache_dir, default_text=[p.source for p in pairs], ui=ui)
    model.info["training_seconds"] = round(time.perf_counter() - start, 2)
    return model
