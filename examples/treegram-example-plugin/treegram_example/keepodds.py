"""A tiny sentence compressor, written as a third-party treegram formalism against the compressor contract
(`treegram.compression.compressor`).

The model: every word w has a log-odds of being kept in a compression, estimated from (long, short) pairs with
add-alpha smoothing,

    s(w) = log((kept(w) + alpha * p) / (dropped(w) + alpha * (1 - p)))       p = the corpus's share of kept words

and a compression's score is the sum of s(w) over the kept words, so at a per-word reward r the best compression
keeps exactly the words with s(w) + r > 0.  It needs no parser (its "tree" is flat).

What this file implements is the contract and nothing else: ``source_tree`` and ``decoder`` (whose ``decode(reward)``
is the rule above).  `treegram compress` (raw text or tokens, --json, notes), ``--rate`` (the core's search over
rewards), `treegram eval-compression --model`, and `treegram compress --workers N` on Dask all come from treegram.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from treegram.argtypes import positive_float
from treegram.compression.compressor import Compression
from treegram.formalism import Formalism, flat_fallback, option, save_model


@attrs.frozen
class KeepOddsSettings:
    pairs: list = option(required=True, nargs=2, metavar=("LONG", "SHORT"), type=Path,
                         help="line-parallel files: sentences and their compressions, one tokenized sentence per line")
    alpha: float = option(1.0, help="add-alpha smoothing of the keep counts (default 1)", type=positive_float)


class KeepOddsDecoder:
    """One sentence: decode(reward) keeps the words whose log-odds plus the reward is positive."""

    def __init__(self, scores: np.ndarray, tokens: list[str]):
        self.scores, self.tokens = scores, tokens

    def decode(self, reward: float) -> Compression:
        keep = self.scores + reward > 0
        if not keep.any():  # keep at least the most likely word
            keep[int(np.argmax(self.scores))] = True
        return Compression(self.tokens, keep, None, float(np.sum((self.scores + reward)[keep])), reward)


class KeepOddsModel:
    formalism = "keepodds"

    def __init__(self, odds: dict[str, float], default: float):
        self.odds, self.default = odds, default

    # -- the compressor contract -----------------------------------------------------------------------------
    def source_tree(self, tokens: list[str]):
        return flat_fallback(tokens), "ok"

    def decoder(self, tree, tokens: list[str]) -> KeepOddsDecoder:
        return KeepOddsDecoder(np.array([self.odds.get(w.lower(), self.default) for w in tokens]), list(tokens))

    # -- a model like any other ------------------------------------------------------------------------------
    def save(self, path) -> None:
        save_model(path, self, {"odds": self.odds, "default": self.default}, {})

    def describe(self, *, top: int = 20) -> dict[str, Any]:
        ranked = sorted(self.odds.items(), key=lambda kv: kv[1])
        return {"formalism": self.formalism, "words": len(self.odds), "default_log_odds": round(self.default, 4),
                "most_often_dropped": [w for w, _ in ranked[:top]]}


class KeepOdds(Formalism):
    name = "keepodds"
    description = "example compressor: per-word keep log-odds (treegram-example-plugin)"
    trains_on = "pairs"
    Settings = KeepOddsSettings

    def train(self, corpus, settings: KeepOddsSettings, ctx) -> KeepOddsModel:
        from treegram.compression.align import read_pairs

        pairs = read_pairs(*settings.pairs, text_alignment=True)
        kept, dropped = Counter(), Counter()
        for p in pairs:
            for w, k in zip(p.source, p.keep):
                (kept if k else dropped)[w.lower()] += 1
        total_kept, total = sum(kept.values()), sum(kept.values()) + sum(dropped.values())
        prior = (total_kept + 1) / (total + 2)
        a = settings.alpha
        odds = {w: math.log((kept[w] + a * prior) / (dropped[w] + a * (1 - prior))) for w in kept.keys() | dropped}
        return KeepOddsModel(odds, math.log(prior / (1 - prior)))

    def load_model(self, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> KeepOddsModel:
        return KeepOddsModel({str(k): float(v) for k, v in meta["odds"].items()}, float(meta["default"]))
