"""Tree-constrained decoding: the chart over a given source tree's nodes (Cohn & Lapata 2007, Figure 1).

A synchronous grammar (STSG and relatives) pairs a *source* elementary tree with a *target* side whose variables are
aligned with the source frontier.  Given the source tree, a derivation covers it top-down with source elementary
trees; the target side of each rule says which target category every aligned frontier node must be derived as (a
deleted frontier node is derived as the "epsilon" category).  The chart item is (source node v, target category c)
and Figure 1's recurrence is

    C[v, c] = max over rule applications e at v with target root c of   score(e) + sum_{(u, c') in tails(e)} C[u, c']

computed bottom-up over the source nodes.  The formalism does the matching: it enumerates the *rule applications*
(hyperedges) -- head item (v, c), rule id, local score, tail items (frontier node, required target category) --
with `TreeChartBuilder`; this module owns every algorithm over them, integer-coded and in numba:

- `TreeChart.viterbi(extra)`       best derivation per item (max; ties: the earlier application wins)
- `TreeChart.inside(extra)`        log-sum per item; `outside` / `expected_counts` (expected rule counts, EM)
- `TreeChart.sample(rng, extra)`   an exact sample of a derivation from the inside chart
- `TreeChart.stratified_viterbi`   the max chart with items split by an additive integer state (below)
- `TreeChart.kbest(node, cat, k)`  the k best derivations (lazy k-best, Huang & Chiang 2005), for reranking

Loss-augmented scores.  `extra` is the hook: an array with one additive score per rule application (or a callable
`extra(chart) -> array`), added to the application's own score in every algorithm -- e.g. a per-kept-word reward
(`treegram compress --reward`), a Hamming loss, or feature weights times a feature vector.  A loss that does not
decompose over rules but depends on totals, like Cohn & Lapata's 1 - Prec x BP over (true positive, false positive)
word counts, is made exact by *stratifying* the chart: each application carries a small non-negative integer
increment vector (its own true and false positives), the state of a derivation is the sum of its increments, and
`stratified_viterbi(increments, bounds)` keeps the best score per (node, category, state).  Its `root_scores`
gives, for every final state s, the best model score F(s) of a derivation ending in s, from which any function of the
state -- margin rescaling max_s F(s) + loss(s), slack rescaling max_s loss(s) (1 + F(s) - score(gold)) -- is
maximised exactly, and `derivation(node, cat, state)` recovers the derivation.  The cost grows with the number of
states (prod(bounds + 1)) squared per binary application; keep the bounds tight (e.g. the sentence length).

A chart may hold a forest of several source trees (a whole training corpus for EM): nodes are numbered in pre-order
within each tree (a frontier node always has a larger number than the node whose rule it belongs to), trees are
consecutive ranges of node numbers, and `roots` lists the first node of each tree.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numba
import numpy as np

__all__ = ["TreeChartBuilder", "TreeChart", "TreeViterbi", "TreeInside", "StratifiedViterbi"]

NEG_INF = -np.inf
_LOGE2 = 0.693147180559945309417232121458176568


@numba.njit(cache=True, inline="always")
def _logaddexp(x, y):
    """numpy's logaddexp, operation for operation (results identical to np.logaddexp)."""
    if x == y:
        return x + _LOGE2
    tmp = x - y
    if tmp > 0:
        return x + math.log1p(math.exp(-tmp))
    elif tmp <= 0:
        return y + math.log1p(math.exp(tmp))
    return tmp


@numba.njit(cache=True)
def _viterbi(group_ptr, head, base, tail_ptr, tail, n_items):
    best = np.full(n_items, -np.inf)
    back = np.full(n_items, -1, np.int64)
    for g in range(group_ptr.shape[0] - 2, -1, -1):  # bottom-up: deeper nodes have larger numbers
        for e in range(group_ptr[g], group_ptr[g + 1]):
            sc = base[e]
            ok = True
            for t in range(tail_ptr[e], tail_ptr[e + 1]):
                it = tail[t]
                if back[it] < 0:
                    ok = False
                    break
                sc += best[it]
            if not ok:
                continue
            h = head[e]
            if back[h] < 0 or sc > best[h]:
                best[h] = sc
                back[h] = e
    return best, back


@numba.njit(cache=True)
def _inside(group_ptr, head, base, tail_ptr, tail, n_items):
    """Inside log scores per item and per application (log-sum-exp with the maximum factored out)."""
    inside = np.full(n_items, -np.inf)
    app = np.full(head.shape[0], -np.inf)
    mx = np.full(n_items, -np.inf)
    acc = np.zeros(n_items)
    seen = np.zeros(n_items, np.bool_)
    for g in range(group_ptr.shape[0] - 2, -1, -1):
        lo, hi = group_ptr[g], group_ptr[g + 1]
        for e in range(lo, hi):
            s = base[e]
            for t in range(tail_ptr[e], tail_ptr[e + 1]):
                s += inside[tail[t]]
            app[e] = s
            h = head[e]
            if not seen[h] or s > mx[h]:
                mx[h] = s
            seen[h] = True
        for e in range(lo, hi):
            h = head[e]
            if mx[h] != -np.inf:
                acc[h] += math.exp(app[e] - mx[h])
        for e in range(lo, hi):
            h = head[e]
            if seen[h]:
                inside[h] = mx[h] + math.log(acc[h]) if mx[h] != -np.inf else -np.inf
                seen[h] = False
    return inside, app


@numba.njit(cache=True)
def _outside(head, tail_ptr, tail, app, inside, outside, head_z, rule, n_rules):
    """Outside scores (in place, goals preset) and expected counts per application and per rule."""
    n = head.shape[0]
    counts = np.zeros(n)
    rule_counts = np.zeros(n_rules)
    for e in range(n):
        h = head[e]
        out_h = outside[h]
        if out_h == -np.inf:
            continue
        s = app[e]
        c = math.exp(out_h + s - head_z[e])
        counts[e] = c
        rule_counts[rule[e]] += c
        for t in range(tail_ptr[e], tail_ptr[e + 1]):
            v = tail[t]
            contrib = out_h + s - inside[v]
            prev = outside[v]
            outside[v] = contrib if prev == -np.inf else _logaddexp(prev, contrib)
    return counts, rule_counts


@numba.njit(cache=True)
def _state_add(a, b, radix, n_states):
    """Mixed-radix sum of two state indices, or -1 when a component exceeds its bound."""
    out = 0
    mul = 1
    for j in range(radix.shape[0] - 1, -1, -1):
        x = (a // mul) % radix[j] + (b // mul) % radix[j]
        if x >= radix[j]:
            return -1
        out += x * mul
        mul *= radix[j]
    return out


@numba.njit(cache=True)
def _stratified(group_ptr, head, base, tail_ptr, tail, inc_state, item_index, n_compact, radix, n_states):
    """Max chart over (item, state): best[compact item, state] and the winning application per cell.  Only the
    states a cell actually reaches are combined (a node covering w words reaches O(w^2) (tp, fp) states)."""
    best = np.full((n_compact, n_states), -np.inf)
    back = np.full((n_compact, n_states), -1, np.int64)
    cur = np.empty(n_states)
    nxt = np.empty(n_states)
    alive1 = np.empty(n_states, np.int64)
    alive2 = np.empty(n_states, np.int64)
    for g in range(group_ptr.shape[0] - 2, -1, -1):
        for e in range(group_ptr[g], group_ptr[g + 1]):
            if inc_state[e] < 0:
                continue
            cur[:] = -np.inf
            cur[inc_state[e]] = base[e]
            n1 = 1
            alive1[0] = inc_state[e]
            ok = True
            for t in range(tail_ptr[e], tail_ptr[e + 1]):
                ti = item_index[tail[t]]
                if ti < 0:
                    ok = False
                    break
                n2 = 0
                for s2 in range(n_states):
                    if back[ti, s2] >= 0:
                        alive2[n2] = s2
                        n2 += 1
                nxt[:] = -np.inf
                for a in range(n1):  # ascending states of cur, then of the tail: ties keep the first
                    s1 = alive1[a]
                    for b in range(n2):
                        s2 = alive2[b]
                        s = _state_add(s1, s2, radix, n_states)
                        if s < 0:
                            continue
                        v = cur[s1] + best[ti, s2]
                        if v > nxt[s] or nxt[s] == -np.inf:
                            nxt[s] = v
                n1 = 0
                for s in range(n_states):
                    cur[s] = nxt[s]
                    if nxt[s] != -np.inf:
                        alive1[n1] = s
                        n1 += 1
                if n1 == 0:
                    ok = False
                    break
            if not ok:
                continue
            hi = item_index[head[e]]
            for a in range(n1):
                s = alive1[a]
                if back[hi, s] < 0 or cur[s] > best[hi, s]:
                    best[hi, s] = cur[s]
                    back[hi, s] = e
    return best, back


class TreeChartBuilder:
    """Collects rule applications over the nodes of one or more source trees (nodes in pre-order per tree).

    `add(node, cat, rule, score, tails)`: an application of rule `rule` at source node `node` deriving target
    category `cat` with local score `score`; `tails` = [(frontier node, required target category), ...] in the
    rule's frontier order.  Applications at one node keep the order they were added in (it breaks Viterbi ties).
    """

    def __init__(self, n_nodes: int, n_cats: int | None = None, roots: Sequence[int] = (0,)):
        self.n_nodes = int(n_nodes)
        self.n_cats = None if n_cats is None else int(n_cats)
        self.roots = np.asarray(roots, dtype=np.int64)
        self._node: list[int] = []
        self._cat: list[int] = []
        self._rule: list[int] = []
        self._score: list[float] = []
        self._tail_ptr: list[int] = [0]
        self._tails: list[int] = []

    def add(self, node: int, cat: int, rule: int, score: float, tails: Sequence[tuple[int, int]] = ()) -> int:
        """Add one application; returns its index (applications are numbered in the order they are added)."""
        for u, c in tails:
            if not node < u < self.n_nodes:
                raise ValueError(f"frontier node {u} is not below node {node}")
            self._tails.append((u, c))
        self._node.append(node)
        self._cat.append(cat)
        self._rule.append(rule)
        self._score.append(score)
        self._tail_ptr.append(len(self._tails))
        return len(self._node) - 1

    def __len__(self) -> int:
        return len(self._node)

    def build(self, n_rules: int | None = None) -> "TreeChart":
        """The chart (`n_rules`: number of rule ids for per-rule counts; default max id + 1)."""
        node = np.asarray(self._node, dtype=np.int64)
        cat = np.asarray(self._cat, dtype=np.int64)
        pairs = np.asarray(self._tails, dtype=np.int64).reshape(-1, 2)
        n_cats = self.n_cats
        if n_cats is None:
            n_cats = int(max(cat.max(initial=-1), pairs[:, 1].max(initial=-1))) + 1
        return TreeChart.from_arrays(node, cat, self._rule, self._score, self._tail_ptr, pairs[:, 0], pairs[:, 1],
                                     n_nodes=self.n_nodes, n_cats=max(n_cats, 1), roots=self.roots, n_rules=n_rules,
                                     check=False)


class TreeViterbi:
    """Best score and winning application per item (node, cat); `derivation` walks the back-pointers."""

    def __init__(self, chart: "TreeChart", best: np.ndarray, back: np.ndarray):
        self.chart, self._best, self._back = chart, best, back

    def score(self, node: int, cat: int) -> float:
        return float(self._best[node * self.chart.n_cats + cat])

    def has(self, node: int, cat: int) -> bool:
        return bool(self._back[node * self.chart.n_cats + cat] >= 0)

    def cats(self, node: int) -> list[int]:
        """Derivable target categories of a node, in the order their first derivable application was added."""
        ch = self.chart
        out: list[int] = []
        for e in ch.applications_at(node):
            c = int(ch.cat[e])
            if c in out:
                continue
            if all(self._back[t] >= 0 for t in ch.tail[ch.tail_ptr[e]:ch.tail_ptr[e + 1]]):
                out.append(c)
        return out

    def derivation(self, node: int, cat: int) -> list[int]:
        """Applications of the best derivation of (node, cat), top-down, tails left to right."""
        ch = self.chart
        item = node * ch.n_cats + cat
        if self._back[item] < 0:
            raise KeyError(f"no derivation of node {node} as category {cat}")
        out, todo = [], [item]
        while todo:
            e = int(self._back[todo.pop()])
            out.append(e)
            todo.extend(reversed(ch.tail[ch.tail_ptr[e]:ch.tail_ptr[e + 1]].tolist()))
        return out


class TreeInside:
    """Inside log scores per item and per application; `log_z` of each tree's goal item."""

    def __init__(self, chart: "TreeChart", inside: np.ndarray, app: np.ndarray, base: np.ndarray,
                 goals: np.ndarray):
        self.chart, self.inside, self.app, self.base, self.goals = chart, inside, app, base, goals

    def score(self, node: int, cat: int) -> float:
        return float(self.inside[node * self.chart.n_cats + cat])

    @property
    def log_z(self) -> np.ndarray:
        return self.inside[self.goals]

    def total(self) -> float:
        """Sum of the trees' log partition functions (the corpus log likelihood), in tree order."""
        out = 0.0
        for z in self.log_z.tolist():
            out += z
        return out


class StratifiedViterbi:
    """Max chart over (node, cat, state); states are tuples bounded by `bounds` (inclusive)."""

    def __init__(self, chart: "TreeChart", best, back, item_index, bounds, base, inc_state):
        self.chart, self._best, self._back, self._index = chart, best, back, item_index
        self.bounds = tuple(int(b) for b in bounds)
        self.radix = np.asarray([b + 1 for b in self.bounds], dtype=np.int64)
        self._base, self._inc = base, inc_state

    def state_index(self, state: Sequence[int]) -> int:
        return int(np.ravel_multi_index(tuple(int(x) for x in state), tuple(self.radix)))

    def root_scores(self, node: int, cat: int) -> np.ndarray:
        """Best score per final state (array of shape bounds + 1; -inf where no derivation ends in the state)."""
        ci = self._index[node * self.chart.n_cats + cat]
        if ci < 0:
            return np.full(tuple(self.radix), -np.inf)
        return self._best[ci].reshape(tuple(self.radix)).copy()

    def derivation(self, node: int, cat: int, state: Sequence[int]) -> list[int]:
        """Applications of the best derivation of (node, cat) ending in `state`, top-down."""
        ch = self.chart
        s = self.state_index(state)
        ci = self._index[node * ch.n_cats + cat]
        if ci < 0 or self._back[ci, s] < 0:
            raise KeyError(f"no derivation of node {node} as category {cat} in state {tuple(state)}")
        out: list[int] = []
        todo = [(ci, s)]
        while todo:
            ci, s = todo.pop()
            e = int(self._back[ci, s])
            out.append(e)
            tails = ch.tail[ch.tail_ptr[e]:ch.tail_ptr[e + 1]].tolist()
            split = self._split(e, tails, s, float(self._best[ci, s]))
            todo.extend(reversed([(self._index[t], st) for t, st in zip(tails, split)]))
        return out

    def _split(self, e: int, tails: list[int], s: int, target: float) -> list[int]:
        """Tail states of application e that give state s with the cell's score: the chart's combination replayed
        (same additions, same order, same tie rule), so the score matches exactly."""
        if not tails:
            return []
        radix = [int(r) for r in self.radix]

        def add(a: int, b: int) -> int:  # `_state_add` in Python (no dispatch cost per pair)
            out, mul = 0, 1
            for r in reversed(radix):
                x = (a // mul) % r + (b // mul) % r
                if x >= r:
                    return -1
                out += x * mul
                mul *= r
            return out

        cur: dict[int, tuple[float, list[int]]] = {int(self._inc[e]): (float(self._base[e]), [])}
        for t in tails:
            ti = self._index[t]
            alive = np.flatnonzero(self._back[ti] >= 0).tolist()
            row = self._best[ti]
            nxt: dict[int, tuple[float, list[int]]] = {}
            for s1 in sorted(cur):
                v1, path = cur[s1]
                for s2 in alive:
                    ns = add(s1, s2)
                    if ns < 0:
                        continue
                    v = v1 + float(row[s2])
                    if ns not in nxt or v > nxt[ns][0]:
                        nxt[ns] = (v, path + [s2])
            cur = nxt
        got = cur.get(s)
        if got is None or got[0] != target:
            raise RuntimeError("stratified back-trace failed (internal error)")
        return got[1]


class TreeChart:
    """The rule applications of a source tree (or forest) and the algorithms over them.

    Public arrays are in the order the applications were added (`TreeChartBuilder.add` returned those indices):
    `node`, `cat`, `rule`, `score`; tails in CSR form (`tail_ptr`, `tail` = frontier node * n_cats + category).
    Everything passed in (extra scores, increments) and returned (derivations, counts) uses these indices.
    """

    def __init__(self, node, cat, rule, score, tail_ptr, tail, n_nodes, n_cats, roots, n_rules):
        self.node, self.cat, self.rule, self.score = node, cat, rule, score
        self.tail_ptr, self.tail = tail_ptr, tail
        self.n_nodes, self.n_cats, self.roots, self.n_rules = n_nodes, n_cats, roots, n_rules
        self.head = node * n_cats + cat
        # the kernels' order: by head node (bottom-up = descending), insertion order within a node
        perm = np.argsort(node, kind="stable")
        self._perm = perm
        self._head = self.head[perm]
        self._rule = rule[perm]
        if len(node) < 2 or bool(np.all(node[1:] >= node[:-1])):  # added in node order already
            self._perm = np.arange(len(node), dtype=np.int64)
            self._tail_ptr, self._tail = tail_ptr, tail
        else:
            lens = (tail_ptr[1:] - tail_ptr[:-1])[perm]
            self._tail_ptr = np.zeros(len(perm) + 1, dtype=np.int64)
            np.cumsum(lens, out=self._tail_ptr[1:])
            idx = np.repeat(tail_ptr[:-1][perm] - self._tail_ptr[:-1], lens) + np.arange(int(self._tail_ptr[-1]))
            self._tail = tail[idx]
        sn = node[perm]
        if len(sn):
            starts = np.flatnonzero(np.r_[True, sn[1:] != sn[:-1]])
            self._group_ptr = np.r_[starts, len(sn)].astype(np.int64)
        else:
            self._group_ptr = np.zeros(1, np.int64)
        self._tree_of = np.searchsorted(roots, sn, side="right") - 1

    @classmethod
    def from_arrays(cls, node, cat, rule, score, tail_ptr, tail_node, tail_cat, *, n_nodes: int, n_cats: int,
                    roots: Sequence[int] = (0,), n_rules: int | None = None, check: bool = True) -> "TreeChart":
        """A chart from flat arrays (what `TreeChartBuilder` collects): application e is at `node[e]`, derives
        `cat[e]` with rule `rule[e]` and local score `score[e]`; its tails are `tail_node` / `tail_cat` from
        `tail_ptr[e]` to `tail_ptr[e + 1]`."""
        i64 = lambda x: np.asarray(x, dtype=np.int64)  # noqa: E731
        node, cat, rule, tail_ptr, tail_node, tail_cat = map(i64, (node, cat, rule, tail_ptr, tail_node, tail_cat))
        score = np.asarray(score, dtype=np.float64)
        if check:
            heads = np.repeat(node, tail_ptr[1:] - tail_ptr[:-1])
            bad = np.flatnonzero((tail_node <= heads) | (tail_node >= n_nodes))
            if len(bad):
                raise ValueError(f"frontier node {tail_node[bad[0]]} is not below node {heads[bad[0]]}")
            if len(cat) and (cat.max() >= n_cats or (len(tail_cat) and tail_cat.max() >= n_cats)):
                raise ValueError(f"a category id is >= n_cats = {n_cats}")
        if n_rules is None:
            n_rules = int(rule.max()) + 1 if len(rule) else 0
        return cls(node, cat, rule, score, tail_ptr, tail_node * n_cats + tail_cat, int(n_nodes), int(n_cats),
                   i64(roots), int(n_rules))

    def __len__(self) -> int:
        return int(self.node.shape[0])

    @property
    def n_items(self) -> int:
        return self.n_nodes * self.n_cats

    def applications_at(self, node: int) -> list[int]:
        """The applications at a source node, in the order they were added."""
        sn = self.node[self._perm]
        lo = int(np.searchsorted(sn, node, side="left"))
        hi = int(np.searchsorted(sn, node, side="right"))
        return self._perm[lo:hi].tolist()

    def tails(self, e: int) -> list[tuple[int, int]]:
        return [(int(t) // self.n_cats, int(t) % self.n_cats) for t in self.tail[self.tail_ptr[e]:self.tail_ptr[e + 1]]]

    def _base(self, extra, rule_scores) -> np.ndarray:
        """Score of every application (added order): its own score (or its rule's) plus the extra score."""
        if callable(extra):
            extra = extra(self)
        extra = np.zeros(len(self)) if extra is None else np.asarray(extra, dtype=np.float64)
        if extra.shape != (len(self),):
            raise ValueError(f"extra scores: expected {len(self)} values (one per application), got {extra.shape}")
        if rule_scores is None:
            return self.score + extra
        return np.asarray(rule_scores, dtype=np.float64)[self.rule] + extra

    def _to_added(self, back: np.ndarray) -> np.ndarray:
        return np.where(back >= 0, self._perm[np.maximum(back, 0)], -1)

    # -- max ----------------------------------------------------------------------------------------------------
    def viterbi(self, extra: np.ndarray | Callable | None = None, *, rule_scores=None) -> TreeViterbi:
        """Figure 1: the best derivation of every item.  `extra`: additive score per application (the
        loss-augmentation hook); `rule_scores`: score the applications by rule (e.g. log theta) instead of their own
        score."""
        base = self._base(extra, rule_scores)[self._perm]
        best, back = _viterbi(self._group_ptr, self._head, base, self._tail_ptr, self._tail, self.n_items)
        return TreeViterbi(self, best, self._to_added(back))

    def kbest(self, node: int, cat: int, k: int, extra: np.ndarray | Callable | None = None, *,
              rule_scores=None) -> list[tuple[float, list[int]]]:
        """The `k` best derivations of item (node, cat), best first, as (score, applications top-down with tails
        left to right): Huang & Chiang's (2005) lazy Algorithm 3 over the Viterbi chart -- each item's derivations
        are found on demand, from a candidate heap seeded with its applications over their tails' best derivations
        and grown, as a candidate is taken, by its neighbours (one tail moved to its next derivation).  Ties keep
        the chart's order (the earlier application first), so the first derivation is `viterbi`'s."""
        import heapq

        base = self._base(extra, rule_scores)
        vit = self.viterbi(extra, rule_scores=rule_scores)
        best = vit._best
        nc = self.n_cats
        tail_ptr, tail = self.tail_ptr, self.tail
        incoming: dict[int, np.ndarray] = {}
        order = np.argsort(self.head, kind="stable")
        heads_sorted = self.head[order]
        found: dict[int, list[tuple[float, int, tuple[int, ...], int]]] = {}  # item -> (score, e, ranks, pos)
        cand: dict[int, list] = {}
        seen: dict[int, set] = {}

        def apps(item: int) -> np.ndarray:
            got = incoming.get(item)
            if got is None:
                lo = int(np.searchsorted(heads_sorted, item, side="left"))
                hi = int(np.searchsorted(heads_sorted, item, side="right"))
                got = incoming[item] = order[lo:hi]
            return got

        def score_of(e: int, ranks: tuple[int, ...]) -> float | None:
            sc = float(base[e])
            for t, j in zip(tail[tail_ptr[e]:tail_ptr[e + 1]].tolist(), ranks):
                if not kth(t, j + 1):
                    return None
                sc += found[t][j][0]
            return sc

        def kth(item: int, n: int) -> bool:
            """Make sure the n best derivations of item are found (False if it has fewer)."""
            ds = found.get(item)
            if ds is None:
                ds = found[item] = []
                heap = cand[item] = []
                seen[item] = set()
                for pos, e in enumerate(apps(item).tolist()):
                    ts = tail[tail_ptr[e]:tail_ptr[e + 1]]
                    if any(vit._back[t] < 0 for t in ts.tolist()):
                        continue
                    r0 = (0,) * len(ts)
                    sc = float(base[e]) + float(best[ts].sum()) if len(ts) else float(base[e])
                    if sc == -np.inf:
                        continue
                    heapq.heappush(heap, (-sc, pos, e, r0))
                    seen[item].add((e, r0))
            heap = cand[item]
            while len(ds) < n:
                if ds:  # the neighbours of the last derivation taken
                    _sc, e, ranks, pos = ds[-1]
                    for i in range(len(ranks)):
                        nr = ranks[:i] + (ranks[i] + 1,) + ranks[i + 1:]
                        if (e, nr) in seen[item]:
                            continue
                        seen[item].add((e, nr))
                        sc = score_of(e, nr)
                        if sc is not None and sc > -np.inf:
                            heapq.heappush(heap, (-sc, pos, e, nr))
                if not heap:
                    return False
                negsc, pos, e, ranks = heapq.heappop(heap)
                ds.append((-negsc, e, ranks, pos))
            return True

        item = node * nc + cat
        out: list[tuple[float, list[int]]] = []
        if vit._back[item] < 0:
            return out
        for n in range(1, k + 1):
            if not kth(item, n):
                break
            sc, e, ranks, _pos = found[item][n - 1]
            deriv: list[int] = []
            todo = [(e, ranks)]
            while todo:
                e2, r2 = todo.pop()
                deriv.append(int(e2))
                ts = tail[tail_ptr[e2]:tail_ptr[e2 + 1]].tolist()
                for t, j in reversed(list(zip(ts, r2))):
                    kth(t, j + 1)
                    d = found[t][j]
                    todo.append((d[1], d[2]))
            out.append((sc, deriv))
        return out

    def stratified_viterbi(self, increments, bounds: Sequence[int], extra=None, *, rule_scores=None
                           ) -> StratifiedViterbi:
        """Max chart split by an additive state: `increments` (applications x k non-negative ints) and `bounds`
        (k inclusive maxima; a derivation whose state would exceed them is dropped)."""
        inc = np.asarray(increments, dtype=np.int64).reshape(len(self), -1)
        radix = np.asarray([int(b) + 1 for b in bounds], dtype=np.int64)
        if inc.shape[1] != len(radix):
            raise ValueError(f"increments have {inc.shape[1]} components but bounds {len(radix)}")
        if (inc < 0).any():
            raise ValueError("state increments must be non-negative")
        n_states = int(np.prod(radix))
        ok = (inc < radix).all(axis=1)
        inc_state = np.where(ok, np.ravel_multi_index(tuple(np.minimum(inc, radix - 1).T), tuple(radix)),
                             -1).astype(np.int64)
        heads = np.unique(self.head)
        item_index = np.full(self.n_items, -1, np.int64)
        item_index[heads] = np.arange(len(heads))
        base = self._base(extra, rule_scores)
        best, back = _stratified(self._group_ptr, self._head, base[self._perm], self._tail_ptr, self._tail,
                                 inc_state[self._perm], item_index, len(heads), radix, n_states)
        return StratifiedViterbi(self, best, self._to_added(back), item_index, bounds, base, inc_state)

    # -- sum ----------------------------------------------------------------------------------------------------
    def inside(self, goal_cats=0, extra=None, *, rule_scores=None) -> TreeInside:
        """Inside (log-sum) chart; `goal_cats`: the target category of each tree's root (one int for all)."""
        base = self._base(extra, rule_scores)
        ins, app_sorted = _inside(self._group_ptr, self._head, base[self._perm], self._tail_ptr, self._tail,
                                  self.n_items)
        app = np.empty(len(self))
        app[self._perm] = app_sorted
        gc = np.broadcast_to(np.asarray(goal_cats, dtype=np.int64), self.roots.shape)
        return TreeInside(self, ins, app, base, self.roots * self.n_cats + gc)

    def expected_counts(self, inside: TreeInside) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Outside pass: (expected count of every application, expected count of every rule, outside scores).

        Each application's count is its posterior probability in its tree, exp(outside + inside - log Z); the
        per-rule counts are accumulated top-down (trees in order, nodes in pre-order)."""
        outside = np.full(self.n_items, -np.inf)
        outside[inside.goals] = 0.0
        head_z = inside.inside[inside.goals][self._tree_of]
        counts_sorted, rule_counts = _outside(self._head, self._tail_ptr, self._tail, inside.app[self._perm],
                                              inside.inside, outside, head_z, self._rule, max(self.n_rules, 1))
        counts = np.empty(len(self))
        counts[self._perm] = counts_sorted
        return counts, rule_counts[:self.n_rules], outside

    def sample(self, rng: np.random.Generator, inside: TreeInside, node: int | None = None, cat: int | None = None
               ) -> list[int]:
        """An exact sample from the distribution over derivations of (node, cat) (default: tree 0's goal)
        proportional to exp(total score): applications, top-down."""
        item = int(inside.goals[0]) if node is None else int(node) * self.n_cats + int(cat)
        if inside.inside[item] == -np.inf:
            raise KeyError("no derivation to sample")
        by_head: dict[int, list[int]] = {}
        for e in self._perm.tolist():
            by_head.setdefault(int(self.head[e]), []).append(e)
        out, todo = [], [item]
        while todo:
            it = todo.pop()
            es = by_head[it]
            w = np.exp(inside.app[es] - inside.inside[it])
            u = rng.random() * w.sum()
            k = min(int(np.searchsorted(np.cumsum(w), u, side="right")), len(es) - 1)
            e = es[k]
            out.append(e)
            todo.extend(reversed(self.tail[self.tail_ptr[e]:self.tail_ptr[e + 1]].tolist()))
        return out

    def derivation_score(self, apps: Sequence[int], extra=None, *, rule_scores=None) -> float:
        base = self._base(extra, rule_scores)
        return float(sum(base[e] for e in apps))
