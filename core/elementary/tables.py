"""Elementary-tree types over prepared trees: per-row lookups (`Tables`), type keys and their rule shapes, and the
type count table with its match index (`TypeCounts`) -- what the TIG and Bayesian OSTAG blocked samplers share.

Type keys.  An elementary tree is a nested tuple: an internal node is ``(label, child, ...)`` with children that
are nodes, ``("s", label)`` (a frontier nonterminal: substitution site), ``("*", label)`` (an auxiliary tree's
foot) or ``("w", word)`` (the word under a preterminal); labels and words are ids of the prepared data.  Keys are
hashable and canonical, so equal trees are equal keys.

Rule shapes (`key_sig` of a key node, `row_sig` of a prepared row) are ``(0, word)``, ``(1, child label)`` or
``(2, left label, right label)``: a cached type can only match inside a tree whose rows have all its shapes
(`node_sigs`), which is how the blocked proposals skip most cached types without trying them.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from treegram.elementary.data import KIND_BINARY, KIND_LEX, KIND_UNARY, TSGData
from treegram.trees.labels import base_label

NEG = -math.inf


class Tables:
    """Label categories and base-PCFG rule lookups of a `TSGData` (row columns shared by the type decoders)."""

    def __init__(self, data: TSGData):
        self.data = data
        labels = data.labels
        cats = [base_label(s) for s in labels]
        cat_ids = {c: i for i, c in enumerate(dict.fromkeys(cats))}
        self.cat = np.array([cat_ids[c] for c in cats], np.int64)  # category of each label (NP^S and @NP|<JJ: NP)
        self.label = data.label
        self.kind = data.kind
        self.child1 = data.child1
        self.child2 = data.child2
        self.start = data.start
        # word id under each preterminal row
        self.pword = np.where(data.kind == KIND_LEX, data.word[np.maximum(data.child1, 0)], -1)
        self.rule: dict[tuple[int, int, int, int], float] = {
            (int(p), int(k), int(a), int(b)): float(w)
            for (p, k, a, b), w in zip(data.rules.tolist(), data.rule_logp.tolist())}

    def rule_logp(self, L: int, kind: int, a: int, b: int) -> float:
        """log P_pcfg(L -> a [b]) of the base PCFG (-inf for an unseen rule)."""
        return self.rule.get((L, kind, a, b), NEG)

    def row_rule_logp(self, f: int, parent_label: int | None = None) -> float:
        """log P_pcfg of the rule at row f (parent label = the row's own unless given)."""
        L = int(self.label[f]) if parent_label is None else parent_label
        k = self.kind[f]
        if k == KIND_LEX:
            return self.rule_logp(L, KIND_LEX, int(self.pword[f]), -1)
        if k == KIND_UNARY:
            return self.rule_logp(L, KIND_UNARY, int(self.label[self.child1[f]]), -1)
        return self.rule_logp(L, KIND_BINARY, int(self.label[self.child1[f]]), int(self.label[self.child2[f]]))


#: Trees with more rows than this build their per-tree proposal bottom-up (see `build_root`).
PREWARM_ROWS = 400


def build_root(sub: Callable[[int], object], is_word: np.ndarray, lo: int, hi: int):
    """`sub(lo)`: the proposal symbol of a tree's root row (rows `lo..hi-1`), from a per-tree proposal builder
    whose `sub(row)` memoizes the symbol of the substitution site at a row (TIG's proposal CFG, OSTAG's
    hypergraph).  A big tree (more than `PREWARM_ROWS` rows) first memoizes every non-word row bottom-up (rows
    are in pre-order: children after their parent), so that building a node finds its children's symbols ready
    and recursion stays shallow however deep the tree is; small trees keep the top-down order (same symbols as
    always).  Chains along same-category spines still recurse once per row of the (size-limited) tree, hence the
    recursion headroom."""
    from treegram.trees.tree import recursion_headroom

    with recursion_headroom():
        if hi - lo > PREWARM_ROWS:
            for f in range(hi - 1, lo, -1):
                if not is_word[f]:
                    sub(f)
        return sub(lo)


def log0(x: float) -> float:
    """log x, -inf at 0 (probabilities that may be exactly 0 in a proposal grammar)."""
    return math.log(x) if x > 0 else NEG


def log1m(x: float) -> float:
    """log(1 - x), -inf at 1."""
    return math.log1p(-x) if x < 1 else NEG


def key_sig(node) -> tuple:
    """Rule shape of an internal type-key node: (0, word) / (1, child label) / (2, left label, right label)."""
    kids = node[1:]
    if kids[0][0] == "w":
        return (0, kids[0][1])
    labs = tuple(k[1] if isinstance(k[0], str) else k[0] for k in kids)
    return (len(labs),) + labs


def row_sig(T: Tables, f: int) -> tuple:
    """Rule shape of the prepared row f (the same tuples as `key_sig`)."""
    k = T.kind[f]
    if k == KIND_LEX:
        return (0, int(T.pword[f]))
    if k == KIND_UNARY:
        return (1, int(T.label[T.child1[f]]))
    return (2, int(T.label[T.child1[f]]), int(T.label[T.child2[f]]))


def node_sigs(key) -> frozenset:
    """The rule shapes (`key_sig`) of all internal nodes of a type key."""
    out = set()
    todo = [key]
    while todo:
        node = todo.pop()
        out.add(key_sig(node))
        todo.extend(k for k in node[1:] if not isinstance(k[0], str))
    return frozenset(out)


def key_to_tree(node, labels: list[str], words: list[str]):
    """A type key as a `Tree`: frontier nonterminals are childless nodes, the foot is labelled `X*`."""
    from treegram.trees import Tree

    def build(n):
        if n[0] == "s":
            return Tree(labels[n[1]], ())
        if n[0] == "*":
            return Tree(labels[n[1]] + "*", ())
        kids = n[1:]
        if kids[0][0] == "w":
            return Tree(labels[n[0]], (words[kids[0][1]],))
        return Tree(labels[n[0]], tuple(build(k) for k in kids))

    return build(node)


class TypeCounts:
    """Type counts of several DP families (dp = 0, 1, ...; one DP per family and root label) over all derivations
    but the one being resampled, with an index of the live types by a match signature for the blocked proposals.

    `sig(dp, key)` gives a type's index signature: (root label,) + `key_sig(key)`, plus whatever else a family
    needs to find its candidates (TIG: the foot label; OSTAG: the spine length)."""

    def __init__(self, num_families: int, num_labels: int, sig: Callable[[int, tuple], tuple], name: str = ""):
        self.count: dict[tuple, int] = {}
        self.total = np.zeros((num_families, num_labels), np.int64)
        self.index: list[dict[tuple, dict]] = [{} for _ in range(num_families)]  # dp -> sig -> {key: node_sigs}
        self.sig = sig
        self.name = name

    def add(self, dp: int, label: int, key, by: int) -> int:
        """Add `by` occurrences of type (dp, key) with root `label`; returns its new count."""
        k = (dp, key)
        n = self.count.get(k, 0) + by
        if n < 0:
            raise RuntimeError(f"{self.name} count table inconsistent (an elementary tree was removed twice)".strip())
        self.total[dp, label] += by
        if n == 0:
            del self.count[k]
            self.index[dp][self.sig(dp, key)].pop(key, None)
        else:
            if n == by:  # new type
                self.index[dp].setdefault(self.sig(dp, key), {})[key] = node_sigs(key)
            self.count[k] = n
        return n

    def candidates(self, dp: int, sig: tuple):
        """The live types of family dp with index signature `sig` (insertion order)."""
        d = self.index[dp].get(sig)
        return list(d) if d else ()

    def candidates_within(self, dp: int, sig: tuple, sigs: frozenset):
        """The live types of `candidates(dp, sig)` (same order) whose every internal node's rule shape occurs among
        `sigs` (a tree's row shapes): the others cannot match anywhere in that tree."""
        d = self.index[dp].get(sig)
        return [e for e, es in d.items() if es <= sigs] if d else ()


def key_size(node) -> int:
    """Nodes of a type key, words included (the tie-break when listing types by count)."""
    if isinstance(node[0], str):
        return 1
    return 1 + sum(key_size(k) for k in node[1:] if k[0] != "w") + (1 if node[1][0] == "w" else 0)


class TreeProposalBuilder:
    """What the per-tree blocked proposals of the TIG and Bayesian OSTAG (`TreeGrammar`, `TreeProposal` of those
    plugins) start from: the tree's rows lo..hi-1, the counts and hyperparameters in log form (log alpha[dp, c],
    log(n[dp, c] + alpha[dp, c]), log beta[c], log(1 - beta[c])), the memo of the symbols built so far (key ->
    symbol, None: derives nothing) and the cached types that can match here (`candidates`)."""

    def __init__(self, T: Tables, counts: TypeCounts, hyper, lo: int, hi: int):
        self.T = T
        self.counts = counts
        self.h = hyper
        self.lo, self.hi = lo, hi
        self.memo: dict[tuple, int | None] = {}
        self._lab = T.label
        nl = len(T.data.labels)
        tot = counts.total.astype(np.float64)
        a = hyper.alpha
        self.la = np.log(a)  # log alpha[dp, label]
        self.lnz = np.log(tot[:, :nl] + a)  # log(n + alpha)
        self.lbeta = np.log(hyper.beta)
        self.l1beta = np.log1p(-hyper.beta)
        # rule shapes of the tree's rows: a cached type with a node shape outside this set matches nowhere here, so
        # its (always dead) part of the proposal is never built
        self.sigs = frozenset(row_sig(T, f) for f in range(lo, hi) if not T.data.is_word[f])
        self._cands: dict[tuple, list] = {}

    def log_new(self, dp: int, label: int) -> float:
        """log alpha / (n + alpha): the DP's predictive weight of a newly generated elementary tree (times its
        P0, which the proposal spells out rule by rule)."""
        return self.la[dp, label] - self.lnz[dp, label]

    def log_cached(self, dp: int, key, label: int) -> float:
        """log n_e / (n + alpha): the DP's predictive weight of the cached type `key`."""
        return math.log(self.counts.count[(dp, key)]) - self.lnz[dp, label]

    def x_options(self, y: int) -> list:
        """A non-spine child y of a base-generated node: a frontier (substitution site, log beta) or expanded
        (log(1 - beta)): [(symbol, log weight)] of the ones that derive something (`sub(y)` and `expanded(y)` of
        the formalism's proposal)."""
        lab = int(self._lab[y])
        out = []
        s = self.sub(y)
        if s is not None:
            out.append((s, self.lbeta[lab]))
        s = self.expanded(y)
        if s is not None:
            out.append((s, self.l1beta[lab]))
        return out

    def candidates_at(self, dp: int, label: int, rows) -> list:
        """The cached types of family `dp` with root `label` that can match at any of `rows` (rows with the same
        rule shape share candidates: each type once, in order of its first row)."""
        out: dict = {}
        for f in sorted(rows):
            out.update(dict.fromkeys(self.candidates(dp, (label,) + row_sig(self.T, f))))
        return list(out)

    def candidates(self, dp: int, sig: tuple):
        """`TypeCounts.candidates_within` this tree's row shapes, cached per tree."""
        hit = self._cands.get((dp, sig))
        if hit is None:
            hit = self._cands[(dp, sig)] = self.counts.candidates_within(dp, sig, self.sigs)
        return hit
