"""Prediction (section 3.3): a finite STSG and Viterbi decoding over a source tree (Cohn & Lapata 2007, Figure 1) on
the core tree chart (`treegram.charts.treechart`; `SentenceChart` enumerates the rule applications).

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

from treegram.charts.treechart import TreeChartBuilder
from treegram.errors import InputError
from treegram.trees import Tree

from treegram.plugins.stsg.model import Fragment, frontier_index, rule_string, _frontier_label

__all__ = ["Rule", "FiniteSTSG", "SentenceChart", "Compression", "fragment_to_json", "fragment_from_json"]

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
        self._cand_cache: dict[tuple, list[Rule]] = {}  # candidate rules per source production (see _candidates)
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
        """The rules whose source side starts with the node's production, then its copy/delete rules if the
        grammar lacks them (memoised per production: they depend on nothing else)."""
        prod = (node.label, tuple(_child_key(c) for c in node.children))
        cached = self._cand_cache.get(prod)
        if cached is not None:
            return cached
        out = list(self.by_prod.get(prod, ()))
        for f in copy_delete_rules(node):
            if str(f) not in self.texts:
                out.append(Rule(f, self._unseen(f.category)))
        self._cand_cache[prod] = out
        return out

    def chart(self, source: Tree) -> "SentenceChart":
        """The tree chart of a (ROOT-wrapped) source tree: every rule application at every node, built once and
        decoded for any per-word reward."""
        return SentenceChart(self, source)

    def decode(self, source: Tree, reward: float = 0.0) -> tuple[Tree | None, np.ndarray, float]:
        """Best derivation of a (ROOT-wrapped) source tree: (target tree, keep mask over the words, score)."""
        return self.chart(source).decode(reward)

    def compress(self, source: Tree, tokens: list[str], *, reward: float = 0.0, rate: float | None = None,
                 iterations: int = 14) -> Compression:
        chart = self.chart(source)
        if rate is None:
            tree, keep, score = chart.decode(reward)
            return Compression(tokens, keep, tree, score)
        if not 0.0 <= rate <= 1.0:
            raise InputError(f"--rate must be between 0 and 1, got {rate}")
        lo, hi = -30.0, 30.0
        best = None
        for _ in range(iterations):  # smallest reward whose output keeps at least `rate` of the words
            mid = (lo + hi) / 2
            tree, keep, score = chart.decode(mid)
            if keep.mean() >= rate - 1e-9:
                best = (tree, keep, score)
                hi = mid
            else:
                lo = mid
        if best is None:
            best = chart.decode(hi)
        return Compression(tokens, best[1], best[0], best[2])


class SentenceChart:
    """Figure 1 of Cohn & Lapata (2007) for one source tree, on the core tree chart (`treegram.charts.treechart`).

    Source nodes are numbered in pre-order; the target categories are the rules' target root labels (0 = epsilon,
    a deleted node).  Every rule of the grammar whose source side matches at a node, followed by the node's
    copy/delete rules when the grammar lacks them, is one application scored log P(rule); the per-word reward of
    `decode` enters through the chart's extra-score hook (reward x target words of the rule)."""

    def __init__(self, grammar: FiniteSTSG, source: Tree):
        nodes: list[Tree] = []
        kids: list[list] = []  # per node: child node numbers, or the word itself for word children
        stack: list[tuple[Tree, int]] = [(source, -1)]
        while stack:
            node, parent = stack.pop()
            i = len(nodes)
            nodes.append(node)
            kids.append([])
            if parent >= 0:
                kids[parent].append(i)
            for c in reversed(node.children):
                if isinstance(c, Tree):
                    stack.append((c, i))
        for i, node in enumerate(nodes):  # words in place, children in order
            it = iter(kids[i])
            kids[i] = [c if isinstance(c, str) else next(it) for c in node.children]
        word_pos: dict[int, int] = {}
        for i, node in enumerate(nodes):
            if node.is_preterminal:
                word_pos[i] = len(word_pos)
        self.source, self.nodes, self.n_words = source, nodes, len(word_pos)
        self.cats: dict[str | None, int] = {None: 0}
        self.apps: list[tuple[Rule, list, list]] = []
        builder = TreeChartBuilder(len(nodes), roots=[0])
        n_target_words: list[float] = []
        cat_id = self._cat
        for i, node in enumerate(nodes):
            if not node.children:
                continue
            for r in grammar._candidates(node):
                binding: list = []
                words: list = []
                if not _match(r.source, i, nodes, kids, binding, words, word_pos):
                    continue
                builder.add(i, cat_id(r.ct), len(self.apps), r.logp,
                            [(u, cat_id(r.frontier_ct.get(k) if k else None)) for u, k in binding])
                self.apps.append((r, binding, words))
                n_target_words.append(r.n_words)
        self.chart = builder.build(len(self.apps))
        self.n_target_words = np.asarray(n_target_words, dtype=np.float64)

    def _cat(self, label) -> int:
        c = self.cats.get(label)
        if c is None:
            c = self.cats[label] = len(self.cats)
        return c

    def decode(self, reward: float = 0.0) -> tuple[Tree | None, np.ndarray, float]:
        """The best compression for a per-word reward: (target tree, keep mask, score)."""
        vit = self.chart.viterbi(reward * self.n_target_words)
        root_cats = vit.cats(0)
        if not root_cats:
            raise InputError("no derivation for the source tree (internal error: copy rules should always apply)")
        label = self.source.label
        if label in self.cats and self.cats[label] in root_cats:
            ct = self.cats[label]
        else:
            ct = max(root_cats, key=lambda c: vit.score(0, c))
        tree, keep = self.output(vit.derivation(0, ct))
        return tree, keep, vit.score(0, ct)

    def kept_positions(self, e: int) -> list[int]:
        """Source word positions application e keeps: its target words are a subsequence of its source words."""
        rule, _binding, words = self.apps[e]
        if rule.target is None or not rule.target.children:
            return []
        tgt_words = rule.target.leaves()
        out, j = [], 0
        for k, w in enumerate(rule.source.leaves()):
            if j < len(tgt_words) and tgt_words[j] == w:
                out.append(words[k])
                j += 1
        return out

    def word_increments(self, gold_keep) -> np.ndarray:
        """Per application, (kept words the gold compression keeps, kept words it deletes): the (true positive,
        false positive) increments of a loss-augmented chart (`TreeChart.stratified_viterbi`, bounds = the number
        of words)."""
        gold = np.asarray(gold_keep, dtype=bool)
        out = np.zeros((len(self.apps), 2), dtype=np.int64)
        for e in range(len(self.apps)):
            for k in self.kept_positions(e):
                out[e, 0 if gold[k] else 1] += 1
        return out

    def output(self, derivation: list[int]) -> tuple[Tree | None, np.ndarray]:
        """(target tree, keep mask) of a derivation given as applications top-down, tails left to right (as the
        chart's `derivation` methods return them)."""
        keep = np.zeros(self.n_words, dtype=bool)
        it = iter(derivation)

        def build() -> Tree | None:
            e = next(it)
            rule, binding, _words = self.apps[e]
            subs = {k: build() for _u, k in binding}  # every tail, deleted ones included, in frontier order
            if rule.target is None:
                return None
            keep[self.kept_positions(e)] = True

            def inst(t):
                if isinstance(t, str):
                    return t
                if not t.children:
                    return subs[frontier_index(t.label)]
                return Tree(t.label, tuple(inst(c) for c in t.children))

            return inst(rule.target)

        return build(), keep


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


def _match(frag: Tree, i: int, nodes: list, kids: list, binding: list, words: list, word_pos: dict) -> bool:
    """Match a rule's source side at source node i: frontier nodes go to `binding` as (node number, variable
    index; 0 = deleted) in frontier order, matched words to `words` as word positions."""
    node = nodes[i]
    if frag.label != node.label or len(frag.children) != len(node.children):
        return False
    for fc, nc in zip(frag.children, kids[i]):
        if isinstance(fc, str):
            if not isinstance(nc, str) or nc != fc:
                return False
            words.append(word_pos[i])
        elif not fc.children:  # frontier
            if isinstance(nc, str) or _frontier_label(fc.label) != nodes[nc].label:
                return False
            binding.append((nc, frontier_index(fc.label) or 0))
        else:
            if isinstance(nc, str) or not _match(fc, nc, nodes, kids, binding, words, word_pos):
                return False
    return True


__all__ += ["copy_delete_rules", "rule_string"]
