"""Which dependents a head selects: a valency model read off dependency parses, so that deletion keeps "working
[on a new model]" and "get [back] to us" whole while an adjunct of the same shape ("[on Monday]") may go.

For a head h (lower-cased word and coarse class V/N/J/O of its tag) and a dependent type d (its relation, with the
word for prepositions, particles and adverbial modifiers: ``prep:on``, ``prt:up``, ``advmod:back``; the bare
relation otherwise), counted over parsed sentences,

    P(d | h)      = (C(h, d) + m P(d | class(h))) / (C(h) + m)          (m = `prior`, a Dirichlet smoothing mass)
    select(h, d)  = max(0, logit P(d | h) - logit P(d | class(h)))

is how much more often h has such a dependent than heads of its class do.  `drop_costs(t)` charges
``weight * select`` for deleting a dependent while its head survives (`treegram.compression.constraints` holds the
hard constraints; this is the soft, lexical part).  The counts are data: `to_json` / `from_json`.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Iterable

import numpy as np

from treegram.compression.syntax import AnalysedTree, dependency_relation

__all__ = ["Valency", "head_key", "dependent_key"]

_WORDED = frozenset({"prep", "prt", "advmod", "npadvmod", "agent", "dative"})


def _coarse(tag: str) -> str:
    tag = tag.split("-")[0] if not tag.startswith("-") else tag
    if tag.startswith("VB") or tag == "MD":
        return "V"
    if tag.startswith("NN") or tag in ("PRP", "CD"):
        return "N"
    if tag.startswith("JJ"):
        return "J"
    return "O"


def head_key(word: str, tag: str) -> str:
    return f"{word.lower()}/{_coarse(tag)}"


def dependent_key(relation: str, word: str) -> str:
    return f"{relation}:{word.lower()}" if relation in _WORDED else relation


class Valency:
    def __init__(self, pairs: dict[str, Counter] | None = None, heads: Counter | None = None, *,
                 prior: float = 5.0, weight: float = 1.0):
        self.pairs: dict[str, Counter] = pairs if pairs is not None else defaultdict(Counter)  # head -> deps
        self.heads: Counter = heads if heads is not None else Counter()  # head -> occurrences
        self.prior = float(prior)
        self.weight = float(weight)
        self._class: dict[str, tuple[Counter, float]] | None = None

    # -- counting ---------------------------------------------------------------------------------------------
    def count(self, sentences: Iterable) -> "Valency":
        """Count `DepSentence`s (1-based heads, relations)."""
        for s in sentences:
            for i, (w, tag) in enumerate(zip(s.words, s.tags)):
                self.heads[head_key(w, tag)] += 1
            for i, (h, rel) in enumerate(zip(s.heads, s.relations or ())):
                if h == 0 or rel == "punct":
                    continue
                hk = head_key(s.words[h - 1], s.tags[h - 1])
                self.pairs[hk][dependent_key(rel, s.words[i])] += 1
        self._class = None
        return self

    def count_trees(self, trees: Iterable[AnalysedTree]) -> "Valency":
        """Count dependency-projected trees (`treegram.trees.depproject`), analysed."""
        for t in trees:
            for w, tag in zip(t.words, t.tags):
                self.heads[head_key(w, tag)] += 1
            for c in range(1, len(t)):
                rel = dependency_relation(t.labels[c])
                if rel is None or rel == "punct":
                    continue
                h, d = t.head[t.parent[c]], t.head[c]
                self.pairs[head_key(t.words[h], t.tags[h])][dependent_key(rel, t.words[d])] += 1
        self._class = None
        return self

    def _class_stats(self) -> dict[str, tuple[Counter, float]]:
        if self._class is None:
            deps: dict[str, Counter] = defaultdict(Counter)
            total: Counter = Counter()
            for hk, n in self.heads.items():
                total[hk.rsplit("/", 1)[1]] += n
            for hk, row in self.pairs.items():
                deps[hk.rsplit("/", 1)[1]].update(row)
            self._class = {c: (deps[c], float(total[c])) for c in total}
        return self._class

    # -- scores -----------------------------------------------------------------------------------------------
    def select(self, head: str, dep: str) -> float:
        """max(0, logit P(d | h) - logit P(d | class(h))) (see the module docstring)."""
        cls = head.rsplit("/", 1)[1]
        cdeps, ctotal = self._class_stats().get(cls, (Counter(), 0.0))
        if ctotal <= 0:
            return 0.0
        p0 = min(max(cdeps.get(dep, 0) / ctotal, 1e-6), 1 - 1e-6)
        n = self.heads.get(head, 0)
        p = (self.pairs.get(head, {}).get(dep, 0) + self.prior * p0) / (n + self.prior)
        p = min(max(p, 1e-6), 1 - 1e-6)
        return max(0.0, math.log(p / (1 - p)) - math.log(p0 / (1 - p0)))

    def drop_costs(self, t: AnalysedTree) -> np.ndarray:
        """Per node: `weight` x select(parent's head, the node as a dependent); 0 where there is no relation."""
        out = np.zeros(len(t))
        for c in range(1, len(t)):
            rel = dependency_relation(t.labels[c])
            u = t.parent[c]
            if rel is None or rel == "punct" or u < 0:
                continue
            h, d = t.head[u], t.head[c]
            out[c] = self.weight * self.select(head_key(t.words[h], t.tags[h]), dependent_key(rel, t.words[d]))
        return out

    # -- data -------------------------------------------------------------------------------------------------
    def prune(self, min_count: int = 2) -> "Valency":
        """Drop (head, dependent) pairs seen fewer than `min_count` times and heads left without any (smaller
        files; the class statistics are kept from before pruning)."""
        stats = self._class_stats()
        self.pairs = defaultdict(Counter, {h: Counter({d: n for d, n in row.items() if n >= min_count})
                                           for h, row in self.pairs.items()})
        self.pairs = defaultdict(Counter, {h: row for h, row in self.pairs.items() if row})
        self._class = stats
        return self

    def to_json(self) -> dict:
        stats = self._class_stats()
        return {"prior": self.prior, "weight": self.weight,
                "heads": {h: n for h, n in sorted(self.heads.items()) if h in self.pairs},
                "pairs": {h: dict(sorted(row.items())) for h, row in sorted(self.pairs.items())},
                "classes": {c: {"total": tot, "deps": dict(sorted(d.items()))} for c, (d, tot) in sorted(stats.items())}}

    @classmethod
    def from_json(cls, d: dict) -> "Valency":
        v = cls(defaultdict(Counter, {h: Counter(row) for h, row in d["pairs"].items()}), Counter(d["heads"]),
                prior=d.get("prior", 5.0), weight=d.get("weight", 1.0))
        v._class = {c: (Counter(x["deps"]), float(x["total"])) for c, x in d["classes"].items()}
        return v
