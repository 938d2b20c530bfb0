"""The trained channel model (`treegram compress`) and training from (long, short) pairs."""

from __future__ import annotations

import time
from collections import OrderedDict
from typing import Any

from treegram.compression.align import Pair
from treegram.compression.compressor import (Compression, ParsedCompressor, embed_parser, embedded_parser,
                                             rate_search)
from treegram.compression.treeprep import parse_sentences, wrap_root
from treegram.errors import InputError, ModelFileError
from treegram.formalism import save_model

from treegram.plugins.channel import DEFAULT_LEVELS
from treegram.plugins.channel.model import ChannelGrammar, analyse, project, training_summary

__all__ = ["ChannelModel", "train_channel"]

FORMAT = "channel-2"  # version of the model's JSON tables


class ChannelModel(ParsedCompressor):
    """The noisy-channel grammar plus the parser that turns raw sentences into long trees."""

    what = "channel"
    formalism = "channel"

    CHART_CACHE = 512  # charts kept for re-decoding the same tree with other rewards (rate searches)

    def __init__(self, grammar: ChannelGrammar, parser=None, info: dict[str, Any] | None = None):
        self.grammar = grammar
        self.parser = parser
        self.info = dict(info or {})
        self._charts: OrderedDict = OrderedDict()

    @property
    def levels(self) -> int:
        return self.grammar.levels

    def compress_tree(self, tree, tokens: list[str], *, rate: float | None = None, reward: float = 0.0
                      ) -> Compression:
        tree = wrap_root(tree)
        t = analyse(tree)
        if len(t.words) != len(tokens):
            raise InputError(f"the tree has {len(t.words)} words but the sentence {len(tokens)}")
        key = tree.to_bracket()
        chart = self._charts.pop(key, None)
        if chart is None:
            chart = self.grammar.chart(t)
        self._charts[key] = chart
        while len(self._charts) > self.CHART_CACHE:
            self._charts.popitem(last=False)
        keep, score = chart.decode(reward) if rate is None else rate_search(chart.decode, rate)
        return Compression(list(tokens), keep, project(tree, keep), score)

    # -- persistence --------------------------------------------------------------------------------------------
    def save(self, path) -> None:
        parser_meta, arrays = embed_parser(self.parser)
        save_model(path, self, {"format": FORMAT, "grammar": self.grammar.to_json(), "info": self.info,
                                "parser": parser_meta}, arrays)

    @classmethod
    def from_bundle(cls, meta: dict, arrays: dict) -> "ChannelModel":
        if meta.get("format") != FORMAT:
            raise ModelFileError(f"channel model of format {meta.get('format')!r}, but this treegram reads {FORMAT!r}",
                                 hint="retrain it with `treegram train channel`")
        if not isinstance(meta.get("grammar"), dict):
            raise ModelFileError("corrupt channel model: no grammar tables",
                                 hint="re-create it with `treegram train channel`")
        info = meta.get("info") if isinstance(meta.get("info"), dict) else {}
        return cls(ChannelGrammar.from_json(meta["grammar"]), embedded_parser(meta, arrays), info)

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        out: dict[str, Any] = {"formalism": "channel", "levels": self.levels,
                               "source_lexicalized": self.grammar.source.lexicalized,
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
                  trees=None, parser_path=None, parser_id: str = "", cache_dir=None, workers: int = 1,
                  ui=None) -> ChannelModel:
    """Count the source model, the channel and the added-subtree model over the pairs' long trees (parsed with
    `parser`, or given as `trees`) and their deletion alignments."""
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
            **training_summary(len(pairs) - skipped, skipped, g),
            "training_seconds": round(time.perf_counter() - start, 2)}
    return ChannelModel(g, parser, info)
