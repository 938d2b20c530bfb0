"""The blocked sampler's proposal for Bayesian OSTAG: a hypergraph over one training tree's rows with per-node and
per-(node, foot) items (Yamangil & Shieber 2013, Table 1), inside probabilities by a numba pass and exact top-down
sampling.

Why not a CFG: a wrapping auxiliary tree covers the subtree of its root *minus* the subtree of its foot, which is
not a contiguous span.  The tree is fixed, though, so the items need no string positions: every item is anchored at
rows, its inside probability is a sum over hyperedges of products of tail insides, and the tails of an edge cover
disjoint parts of the tree.  Items (c = label of the row; counts n exclude the tree being resampled):

    SUB(x)            an initial tree whose root has top x   <- STK(base, x)            alpha_I[c] / (n_I[c] + alpha_I[c])
                                                             <- STK(cached e, x)        n_e / (n_I[c] + alpha_I[c])
    STK(owner, p)     an adjoinable elementary node with top p (owner: the base, or a node of a cached type)
                      <- BODY(owner, p)                                     1 - mu[c]
                      <- AUX(p, z) STK(owner, z)   z a possible foot of p     mu[c]   (stacked adjunction)
    AUX(p, z)         one auxiliary tree with root p and foot z             <- AB(p, z)   alpha_A / (n_A + alpha_A)
                                                                            <- CAB(a, p, z)   n_a / (n_A + alpha_A)
    AB(s, z)          a base spine node s (no adjunction): P_pcfg(rule at s) / #spine options x foot[c] (child z)
                      or (1 - foot[c]) (another child labelled c) x the off-spine child X(o) x AB(spine child, z)
    BB(f)             a base body: P_pcfg(rule at f) x prod over children X(y)
    X(y)              frontier SUB(y) with beta[label y], or expanded STK(base, y) with 1 - beta[label y]
    CB / CAB          the same for the nodes of cached elementary trees (weight 1 below the root)

The hyperpaths of one derivation (encoding) sum to prod_e (n_e + alpha P0(e)) / (n + alpha) x prod mu^k (1 - mu):
the independent-predictive proposal q, normalised by the root's inside.  Tests check both by enumeration.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from treegram.elementary.data import KIND_BINARY, KIND_LEX, KIND_UNARY
from treegram.elementary.tables import (NEG, TreeProposalBuilder, TypeCounts, build_root, key_sig, log0 as _log,
                                        log1m as _log1m, row_sig)

from treegram.plugins.ostag.bayes_model import DP_AUX, DP_INIT, Hyper, TreeTables, spine_length

ROLE_OTHER, ROLE_SUB, ROLE_AUX = 0, 1, 2


def type_sig(dp: int, key) -> tuple:
    """OSTAG's match signature of a type: (root label,) + root rule shape [+ spine length for auxiliary trees]."""
    s = (key[0],) + key_sig(key)
    return s + (spine_length(key),) if dp == DP_AUX else s


def ostag_counts(num_labels: int) -> TypeCounts:
    """Type counts of the two OSTAG DP families (initial / auxiliary) with their match index."""
    return TypeCounts(2, num_labels, type_sig, "OSTAG")


@numba.njit(cache=True)
def _inside(num_items, head, t0, t1, w):  # pragma: no cover - numba
    ins = np.full(num_items, -np.inf)
    for e in range(head.shape[0]):
        v = w[e]
        if t0[e] >= 0:
            v += ins[t0[e]]
        if t1[e] >= 0:
            v += ins[t1[e]]
        h = head[e]
        a = ins[h]
        if v > a:
            ins[h] = v + math.log1p(math.exp(a - v)) if a > -np.inf else v
        elif v > -np.inf:
            ins[h] = a + math.log1p(math.exp(v - a))
    return ins


class Hypergraph:
    """Items (role, row, foot) and hyperedges (head, tail0, tail1, log weight), edges grouped by ascending head and
    every tail created before its head."""

    def __init__(self, role, row, foot, head, t0, t1, w, root):
        self.role = np.asarray(role, np.int64)
        self.row = np.asarray(row, np.int64)
        self.foot = np.asarray(foot, np.int64)
        self.head = np.asarray(head, np.int64)
        self.t0 = np.asarray(t0, np.int64)
        self.t1 = np.asarray(t1, np.int64)
        self.w = np.asarray(w, np.float64)
        self.root = int(root)
        n = self.role.shape[0]
        self.ptr = np.zeros(n + 1, np.int64)
        np.add.at(self.ptr, self.head + 1, 1)
        self.ptr = np.cumsum(self.ptr)
        self._ins: np.ndarray | None = None

    @property
    def num_items(self) -> int:
        return int(self.role.shape[0])

    def inside(self) -> np.ndarray:
        if self._ins is None:
            self._ins = _inside(self.num_items, self.head, self.t0, self.t1, self.w)
        return self._ins

    @property
    def log_z(self) -> float:
        return float(self.inside()[self.root])

    def sample(self, rng: np.random.Generator) -> list[int]:
        """Items of one hyperpath drawn top-down with probability (product of edge weights) / Z."""
        ins = self.inside()
        used = []
        stack = [self.root]
        while stack:
            i = stack.pop()
            used.append(i)
            a, b = self.ptr[i], self.ptr[i + 1]
            v = self.w[a:b].copy()
            t0, t1 = self.t0[a:b], self.t1[a:b]
            v += np.where(t0 >= 0, ins[np.maximum(t0, 0)], 0.0)
            v += np.where(t1 >= 0, ins[np.maximum(t1, 0)], 0.0)
            p = np.exp(v - ins[i])
            c = np.cumsum(p)
            e = int(np.searchsorted(c, rng.random() * c[-1], side="right"))
            e = min(e, b - a - 1)
            for t in (t1[e], t0[e]):
                if t >= 0:
                    stack.append(int(t))
        return used

    def hyperpaths(self, limit: int = 100000):
        """Every hyperpath from the root as (sorted item list, log weight) - for tests on small trees."""
        def expand(i):
            out = []
            for e in range(self.ptr[i], self.ptr[i + 1]):
                parts = [([i], float(self.w[e]))]
                for t in (self.t0[e], self.t1[e]):
                    if t < 0:
                        continue
                    sub = expand(int(t))
                    parts = [(a + b, x + y) for a, x in parts for b, y in sub]
                    if len(parts) > limit:
                        raise RuntimeError("too many hyperpaths")
                out.extend(parts)
            return out

        return [(sorted(items), lw) for items, lw in expand(self.root)]


class TreeProposal(TreeProposalBuilder):
    """Builds the proposal hypergraph of one tree (rows lo..hi-1) from the counts and hyperparameters."""

    def __init__(self, T: TreeTables, counts: TypeCounts, hyper: Hyper, lo: int, hi: int):
        super().__init__(T, counts, hyper, lo, hi)
        self.role: list[int] = []
        self.row: list[int] = []
        self.foot: list[int] = []
        self.eh: list[int] = []
        self.e0: list[int] = []
        self.e1: list[int] = []
        self.ew: list[float] = []
        self._feet: dict[int, list[int]] = {}

    # -- plumbing ---------------------------------------------------------------------------------------------
    def _finish(self, key, edges, role=ROLE_OTHER, row=-1, foot=-1):
        edges = [e for e in edges if e[2] > NEG]
        if not edges:
            self.memo[key] = None
            return None
        iid = len(self.role)
        self.role.append(role)
        self.row.append(row)
        self.foot.append(foot)
        for t0, t1, w in edges:
            self.eh.append(iid)
            self.e0.append(t0)
            self.e1.append(t1)
            self.ew.append(w)
        self.memo[key] = iid
        return iid

    def feet(self, p: int) -> list[int]:
        hit = self._feet.get(p)
        if hit is None:
            hit = self._feet[p] = self.T.feet(p)
        return hit

    # -- initial trees ----------------------------------------------------------------------------------------
    def sub(self, x: int):
        key = ("SUB", x)
        if key in self.memo:
            return self.memo[key]
        L = int(self._lab[x])
        edges = []
        s = self.stk(("b",), x, self.bb)
        if s is not None:
            edges.append((s, -1, self.log_new(DP_INIT, L)))
        bodies = {x}
        todo = [x]
        while todo:  # rows a stack of adjunctions at x can end at (the body of the root)
            for z in self.feet(todo.pop()):
                if z not in bodies:
                    bodies.add(z)
                    todo.append(z)
        for e in self.candidates_at(DP_INIT, L, bodies):
            s = self.stk(("c", id(e)), x, lambda f, e=e: self.cb(e, f))
            if s is not None:
                edges.append((s, -1, self.log_cached(DP_INIT, e, L)))
        return self._finish(key, edges, ROLE_SUB, x)

    def expanded(self, y: int):
        return self.stk(("b",), y, self.bb)

    def bb(self, f: int):
        key = ("BB", f)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        w = T.row_rule_logp(f)
        edges = []
        k = T.kind[f]
        if w > NEG:
            if k == KIND_LEX:
                edges.append((-1, -1, w))
            elif k == KIND_UNARY:
                for s, ws in self.x_options(int(T.child1[f])):
                    edges.append((s, -1, w + ws))
            else:
                o2 = self.x_options(int(T.child2[f]))
                for s1, w1 in self.x_options(int(T.child1[f])):
                    for s2, w2 in o2:
                        edges.append((s1, s2, w + w1 + w2))
        return self._finish(key, edges)

    # -- adjunction stacks --------------------------------------------------------------------------------------
    def stk(self, owner: tuple, p: int, body):
        key = ("STK", owner, p)
        if key in self.memo:
            return self.memo[key]
        L = int(self._lab[p])
        mu = self.h.mu[L]
        edges = []
        b = body(p)
        if b is not None:
            edges.append((b, -1, _log1m(mu)))
        lmu = _log(mu)
        for z in self.feet(p):
            a = self.aux(p, z)
            if a is None:
                continue
            s = self.stk(owner, z, body)
            if s is not None:
                edges.append((a, s, lmu))
        return self._finish(key, edges)

    # -- auxiliary trees ----------------------------------------------------------------------------------------
    def aux(self, p: int, z: int):
        key = ("AUX", p, z)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        L = int(self._lab[p])
        edges = []
        s = self.ab(p, z)
        if s is not None:
            edges.append((s, -1, self.log_new(DP_AUX, L)))
        sig = (L,) + row_sig(T, p) + (int(T.depth[z] - T.depth[p]),)
        for a in self.candidates(DP_AUX, sig):
            s = self.cab(a, p, z)
            if s is not None:
                edges.append((s, -1, self.log_cached(DP_AUX, a, L)))
        return self._finish(key, edges, ROLE_AUX, p, z)

    def ab(self, s: int, z: int):
        """Base spine node at row s of an auxiliary tree with foot z (root label = label of z)."""
        key = ("AB", s, z)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        c = int(self._lab[z])
        edges = []
        j, y = T.spine_child(s, z)
        m = T.num_spine_options(s, c)
        w = T.row_rule_logp(s)
        if m and w > NEG and T.cat[self._lab[y]] == T.cat[c]:
            w -= math.log(m)
            f = self.h.foot[c]
            if y == z:
                w += _log(f)
                sp = -1
            else:
                if self._lab[y] == c:
                    w += _log1m(f)
                sp = self.ab(y, z)
            if y == z or sp is not None:
                if T.kind[s] == KIND_UNARY:
                    edges.append((sp, -1, w))
                else:
                    o = int(T.child2[s]) if j == 0 else int(T.child1[s])
                    for so, wo in self.x_options(o):
                        edges.append((so, sp, w + wo))
        return self._finish(key, edges)

    # -- cached elementary trees --------------------------------------------------------------------------------
    def _child(self, ek, y: int):
        if ek[0] == "s":
            return self.sub(y) if self._lab[y] == ek[1] else None
        if self._lab[y] != ek[0]:
            return None
        return self.stk(("c", id(ek)), y, lambda f: self.cb(ek, f))

    def cb(self, enode, f: int):
        key = ("CB", id(enode), f)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        kids = enode[1:]
        k = T.kind[f]
        edges = []
        if kids[0][0] == "w":
            if k == KIND_LEX and T.pword[f] == kids[0][1]:
                edges.append((-1, -1, 0.0))
        elif len(kids) == 1:
            if k == KIND_UNARY:
                s = self._child(kids[0], int(T.child1[f]))
                if s is not None:
                    edges.append((s, -1, 0.0))
        elif k == KIND_BINARY:
            s1 = self._child(kids[0], int(T.child1[f]))
            s2 = self._child(kids[1], int(T.child2[f])) if s1 is not None else None
            if s2 is not None:
                edges.append((s1, s2, 0.0))
        return self._finish(key, edges)

    def cab(self, enode, s: int, z: int):
        """Spine node `enode` of a cached auxiliary tree at row s, its foot at row z."""
        key = ("CAB", id(enode), s, z)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        edges = []
        k = T.kind[s]
        kids = enode[1:]
        if self._lab[s] == enode[0] and k != KIND_LEX and len(kids) == (2 if k == KIND_BINARY else 1):
            j, y = T.spine_child(s, z)
            ks = kids[j]
            sp = None
            ok = False
            if ks[0] == "*":
                ok = y == z and self._lab[z] == ks[1]
            elif not isinstance(ks[0], str) and y != z and self._lab[y] == ks[0]:
                sp = self.cab(ks, y, z)
                ok = sp is not None
            if ok:
                if len(kids) == 1:
                    edges.append((-1 if sp is None else sp, -1, 0.0))
                else:
                    o = int(T.child2[s]) if j == 0 else int(T.child1[s])
                    so = self._child(kids[1 - j], o)
                    if so is not None:
                        edges.append((so, -1 if sp is None else sp, 0.0))
        return self._finish(key, edges)

    # -- output -------------------------------------------------------------------------------------------------
    def build(self) -> Hypergraph | None:
        root = build_root(self.sub, self.T.data.is_word, self.lo, self.hi)
        if root is None:
            return None
        return Hypergraph(self.role, self.row, self.foot, self.eh, self.e0, self.e1, self.ew, root)

    def encoding(self, hg: Hypergraph, used: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """(sub, afoot) of the derivation whose hyperpath uses these items."""
        lo, hi = self.lo, self.hi
        sub = np.zeros(hi - lo, np.int8)
        afoot = np.full(hi - lo, -1, np.int32)
        used = np.asarray(used, np.int64)
        role, row, foot = hg.role[used], hg.row[used], hg.foot[used]
        sub[row[role == ROLE_SUB] - lo] = 1
        m = role == ROLE_AUX
        afoot[row[m] - lo] = foot[m]
        return sub, afoot
