"""Prediction (section 3.3): a finite STSG and Viterbi decoding over a source tree (Cohn & Lapata 2007, Figure 1).

The grammar holds elementary tree pairs with log probabilities P(e | c_s/c_t).  Every source tree is parseable: for
each node, the zero-count copy rule  X/X -> (X Y1[1] .. Yn[n]) / (X Y1[1] .. Yn[n])  and deletion rule
X/eps -> (X Y1[] .. Yn[]) / eps  of its CFG production (and the copy/delete rules of its word) are always available
with the smoothed probability of an unseen rule of that root pair.  A per-word reward lambda (log scale) added for
every kept word trades grammar probability against length; `compress(..., rate=r)` searches lambda per sentence for
the requested share of kept words.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from typing import Any, Iterable

import numpy as np

from treegram.errors import InputError
from treegram.trees import Tree

from treegram.plugins.stsg.model import Fragment, frontier_index, rule_string, _frontier_label

__all__ = ["Rule", "FiniteSTSG", "Compression", "fragment_to_json", "fragment_from_json"]

_WORD = "\x00"


def _child_key(c) -> str:
    if isinstance(c, str):
        return _WORD + c
    return _frontier_label(c.label) if not c.children else c.label


class Rule:
    __slots__ = ("source", "target", "cs", "ct", "logp", "count", "prod", "text", "frontier_ct", "target_words",
                 "n_words")

    def __init__(self, frag: Fragment, logp: float, count: float = 0.0):
        self.source, self.target = frag.source, frag.target
        self.cs, self.ct = frag.cs, frag.ct
        self.logp = float(logp)
        self.count = float(count)
        self.prod = (self.cs, tuple(_child_key(c) for c in self.source.children))
        self.text = str(frag)
        # target category of each frontier index (index 0 = epsilon -> None)
        self.frontier_ct: dict[int, str] = {}
        words = 0
        if self.target is not None:
            for node in self.target.subtrees():
                k = frontier_index(node.label) if not node.children else None
                if k:
                    self.frontier_ct[k] = _frontier_label(node.label)
            words = len(self.target.leaves())
        self.n_words = words

    @property
    def category(self) -> str:
        return f"{self.cs} / {self.ct if self.ct is not None else 'ε'}"


def fragment_to_json(t) -> Any:
    if isinstance(t, str):
        return t
    if not t.children:
        return [t.label]
    return [t.label, [fragment_to_json(c) for c in t.children]]


def fragment_from_json(obj) -> Tree | str:
    if isinstance(obj, str):
        return obj
    if len(obj) == 1:
        return Tree(obj[0], ())
    return Tree(obj[0], tuple(fragment_from_json(c) for c in obj[1]))


class Compression:
    __slots__ = ("tokens", "keep", "tree", "score")

    def __init__(self, tokens, keep, tree, score):
        self.tokens, self.keep, self.tree, self.score = tokens, keep, tree, score

    @property
    def compressed(self) -> list[str]:
        return [w for w, k in zip(self.tokens, self.keep) if k]

    @property
    def rate(self) -> float:
        return float(np.mean(self.keep)) if len(self.keep) else 1.0


class FiniteSTSG:
    """Rules indexed by their source root production, plus the smoothed log probability of an unseen rule per root
    pair (used for the always-available copy/delete rules)."""

    def __init__(self, rules: Iterable[Rule], unseen_logp: dict[str, float], default_unseen: float):
        self.rules: list[Rule] = list(rules)
        self.unseen_logp = dict(unseen_logp)
        self.default_unseen = float(default_unseen)
        self.by_prod: dict[tuple, list[Rule]] = defaultdict(list)
        self.texts: set[str] = set()
        for r in self.rules:
            self.by_prod[r.prod].append(r)
            self.texts.add(r.text)

    # -- construction -------------------------------------------------------------------------------------------
    @classmethod
    def from_counts(cls, counts: Iterable[tuple[Fragment, float]], cfg_trees: Iterable[Tree], *,
                    pseudo: float = 1.0) -> "FiniteSTSG":
        """Normalised counts with add-`pseudo` smoothing (Laplace: 1) over the rules seen in `counts` plus the copy
        and delete rules of every CFG production of `cfg_trees` (the training sources)."""
        counts = list(counts)
        seen = {str(f) for f, _ in counts}
        extra: list[Fragment] = []
        for t in cfg_trees:
            for node in t.subtrees():
                if not node.children:
                    continue
                for f in copy_delete_rules(node):
                    s = str(f)
                    if s not in seen:
                        seen.add(s)
                        extra.append(f)
        total: Counter = Counter()
        size: Counter = Counter()
        for f, n in counts:
            total[f.category] += n
            size[f.category] += 1
        for f in extra:
            size[f.category] += 1
        denom = {c: total[c] + pseudo * size[c] for c in size}
        rules = [Rule(f, math.log((n + pseudo) / denom[f.category]), n) for f, n in counts]
        rules += [Rule(f, math.log(pseudo / denom[f.category]), 0.0) for f in extra]
        unseen = {c: math.log(pseudo / (d + pseudo)) for c, d in denom.items()}
        return cls(rules, unseen, math.log(0.5))

    @classmethod
    def from_logprobs(cls, items: Iterable[tuple[Fragment, float, float]], *, unseen: dict[str, float],
                      default_unseen: float) -> "FiniteSTSG":
        return cls([Rule(f, lp, n) for f, lp, n in items], unseen, default_unseen)

    # -- persistence --------------------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"rules": [[fragment_to_json(r.source), None if r.target is None else fragment_to_json(r.target),
                           r.logp, r.count] for r in self.rules],
                "unseen": self.unseen_logp, "default_unseen": self.default_unseen}

    @classmethod
    def from_json(cls, d: dict) -> "FiniteSTSG":
        rules = [Rule(Fragment(fragment_from_json(s), None if t is None else fragment_from_json(t)), lp, n)
                 for s, t, lp, n in d["rules"]]
        return cls(rules, d["unseen"], d["default_unseen"])

    def num_rules(self, *, seen_only: bool = True) -> int:
        return sum(1 for r in self.rules if r.count > 0) if seen_only else len(self.rules)

    # -- decoding -----------------------------------------------------------------------------------------------
    def _unseen(self, category: str) -> float:
        return self.unseen_logp.get(category, self.default_unseen)

    def _candidates(self, node: Tree) -> list[Rule]:
        prod = (node.label, tuple(_child_key(c) for c in node.children))
        out = list(self.by_prod.get(prod, ()))
        for f in copy_delete_rules(node):
            if str(f) not in self.texts:
                out.append(Rule(f, self._unseen(f.category)))
        return out

    def decode(self, source: Tree, reward: float = 0.0) -> tuple[Tree | None, np.ndarray, float]:
        """Best derivation of a (ROOT-wrapped) source tree: (target tree, keep mask over the words, score)."""
        positions: dict[int, int] = {}
        for k, node in enumerate(n for n in _preorder(source) if n.is_preterminal):
            positions[id(node)] = k
        n_words = len(positions)
        best: dict[int, dict] = {}
        for node in source.postorder():
            if not node.children:
                best[id(node)] = {}
                continue
            cell: dict = {}
            rules = self._candidates(node)
            for r in rules:
                binding: list = []
                words: list = []
                if not _match(r.source, node, binding, words, positions, top=True):
                    continue
                score = r.logp + reward * r.n_words
                ok = True
                for sub, k in binding:
                    ct = r.frontier_ct.get(k) if k else None
                    entry = best[id(sub)].get(ct)
                    if entry is None:
                        ok = False
                        break
                    score += entry[0]
                if not ok:
                    continue
                ct = r.ct
                if ct not in cell or score > cell[ct][0]:
                    cell[ct] = (score, r, binding, words)
            best[id(node)] = cell
        root_cell = best[id(source)]
        if not root_cell:
            raise InputError("no derivation for the source tree (internal error: copy rules should always apply)")
        ct = source.label if source.label in root_cell else max(root_cell, key=lambda c: root_cell[c][0])
        keep = np.zeros(n_words, dtype=bool)
        tree = _build(best, source, ct, keep)
        return tree, keep, root_cell[ct][0]

    def compress(self, source: Tree, tokens: list[str], *, reward: float = 0.0, rate: float | None = None,
                 iterations: int = 14) -> Compression:
        if rate is None:
            tree, keep, score = self.decode(source, reward)
            return Compression(tokens, keep, tree, score)
        if not 0.0 <= rate <= 1.0:
            raise InputError(f"--rate must be between 0 and 1, got {rate}")
        lo, hi = -30.0, 30.0
        best = None
        for _ in range(iterations):  # smallest reward whose output keeps at least `rate` of the words
            mid = (lo + hi) / 2
            tree, keep, score = self.decode(source, mid)
            if keep.mean() >= rate - 1e-9:
                best = (tree, keep, score)
                hi = mid
            else:
                lo = mid
        if best is None:
            best = self.decode(source, hi)
        return Compression(tokens, best[1], best[0], best[2])


def _preorder(t: Tree):
    return t.subtrees()


def copy_delete_rules(node: Tree) -> list[Fragment]:
    """The copy and the deletion rule of one CFG production (a node and its children)."""
    if node.is_preterminal:
        return [Fragment(node, node), Fragment(node, None)]
    kids = [c for c in node.children if isinstance(c, Tree)]
    src_copy = Tree(node.label, tuple(Tree(f"{c.label}[{k + 1}]", ()) for k, c in enumerate(kids)))
    src_del = Tree(node.label, tuple(Tree(f"{c.label}[]", ()) for c in kids))
    return [Fragment(src_copy, src_copy), Fragment(src_del, None)]


def _match(frag: Tree, node: Tree, binding: list, words: list, positions: dict, top: bool = False) -> bool:
    if frag.label != node.label or len(frag.children) != len(node.children):
        return False
    for fc, nc in zip(frag.children, node.children):
        if isinstance(fc, str):
            if not isinstance(nc, str) or nc != fc:
                return False
            words.append(positions[id(node)])
        elif not fc.children:  # frontier
            if isinstance(nc, str) or _frontier_label(fc.label) != nc.label:
                return False
            binding.append((nc, frontier_index(fc.label) or 0))
        else:
            if isinstance(nc, str) or not _match(fc, nc, binding, words, positions):
                return False
    return True


def _build(best: dict, node: Tree, ct, keep: np.ndarray) -> Tree | None:
    score, rule, binding, words = best[id(node)][ct]
    if rule.target is None:
        return None
    subs = {}
    for sub, k in binding:
        if k:
            subs[k] = _build(best, sub, rule.frontier_ct[k], keep)
    # kept words of this rule: its target words are a subsequence of its source words (same order)
    src_words = [w for w in _frag_words(rule.source)]
    tgt_words = rule.target.leaves() if rule.target.children else []
    j = 0
    for k, w in enumerate(src_words):
        if j < len(tgt_words) and tgt_words[j] == w:
            keep[words[k]] = True
            j += 1

    def inst(t):
        if isinstance(t, str):
            return t
        if not t.children:
            return subs[frontier_index(t.label)]
        return Tree(t.label, tuple(inst(c) for c in t.children))

    return inst(rule.target)


def _frag_words(t: Tree) -> list[str]:
    return [c for c in t.leaves()]


__all__ += ["copy_delete_rules", "rule_string"]
