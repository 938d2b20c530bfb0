"""Closure of the unary rules of a weighted CFG, computed once per grammar.

A chart cell applies all unary chains in one step through the closure: for every pair (A, B) with A =>* B by
unary rules (A == B included) it stores
  * the inside weight: the sum over all unary chains from A to B of their probabilities,
    i.e. the entry of (I - U)^-1 where U[A, B] = P(A -> B);
  * the Viterbi weight: the best chain's log probability, plus the chain's first hop (next symbol and rule)
    so a backtrace can expand the chain one rule at a time.

Cycles are handled exactly: the unary graph is split into strongly connected components (iterative Tarjan);
inside a component the geometric series is summed by a dense inverse, and weights are propagated between
components in topological order.  A cycle whose probability mass is >= 1 makes the series diverge and raises.
The closure has one entry per reachable (A, B) pair, so its size is the sum of the unary reach sets; grammar
transforms should keep unary chains short (a symbol that reaches a hub with 10^5 unary children makes every
symbol below the hub reach all of them).
"""

from __future__ import annotations

import attrs
import numba
import numpy as np

from treegram.errors import InputError
from treegram.jit import sort_prefix


@attrs.frozen(eq=False)
class UnaryClosure:
    """COO-by-child closure entries plus CSR indexes by child and by parent.

    Entries are sorted by (child, parent): `child_ptr[B]:child_ptr[B+1]` are the entries whose bottom is B,
    sorted by parent id (so an entry (A, B) is found by binary search).  `by_parent` is a permutation of the
    entries sorted by (parent, child), with `parent_ptr` its CSR offsets.
    """

    parent: np.ndarray  # int32 [m]  top of the chain
    child: np.ndarray  # int32 [m]   bottom of the chain
    inside_logw: np.ndarray  # float64 [m]  log sum over chains
    viterbi_logw: np.ndarray  # float64 [m]  best chain log prob (0 for the empty chain)
    viterbi_next: np.ndarray  # int32 [m]  first hop below the parent on the best chain (-1 for A == B)
    viterbi_rule: np.ndarray  # int32 [m]  unary rule index of that first hop (-1 for A == B)
    child_ptr: np.ndarray  # int64 [nsym+1]
    by_parent: np.ndarray  # int64 [m]
    parent_ptr: np.ndarray  # int64 [nsym+1]

    @property
    def size(self) -> int:
        return int(self.parent.shape[0])


@numba.njit(cache=True)
def _tarjan(nsym, ptr, adj):
    """Strongly connected components; component ids come out in reverse topological order."""
    index = np.full(nsym, -1, np.int64)
    low = np.zeros(nsym, np.int64)
    onstack = np.zeros(nsym, np.bool_)
    comp = np.full(nsym, -1, np.int64)
    stack = np.empty(nsym, np.int64)
    call_node = np.empty(nsym, np.int64)
    call_edge = np.empty(nsym, np.int64)
    sp = 0
    counter = 0
    ncomp = 0
    for root in range(nsym):
        if index[root] != -1:
            continue
        call_node[0] = root
        csp = 1
        while csp > 0:
            v = call_node[csp - 1]
            if index[v] == -1:  # first visit (a root, or a child just called): number it, push it
                index[v] = counter
                low[v] = counter
                counter += 1
                stack[sp] = v
                sp += 1
                onstack[v] = True
                call_edge[csp - 1] = ptr[v]
            e = call_edge[csp - 1]
            if e < ptr[v + 1]:
                call_edge[csp - 1] = e + 1
                w = adj[e]
                if index[w] == -1:
                    call_node[csp] = w
                    csp += 1
                elif onstack[w]:
                    if index[w] < low[v]:
                        low[v] = index[w]
            else:
                if low[v] == index[v]:
                    while True:
                        sp -= 1
                        w = stack[sp]
                        onstack[w] = False
                        comp[w] = ncomp
                        if w == v:
                            break
                    ncomp += 1
                csp -= 1
                if csp > 0:
                    u = call_node[csp - 1]
                    if low[v] < low[u]:
                        low[u] = low[v]
    return comp, ncomp


@numba.njit(cache=True)
def _grow(a, need):
    """`a` with room for at least `need` entries (doubling, same dtype; the first entries kept)."""
    if need <= a.shape[0]:
        return a
    b = np.empty(max(need, 2 * a.shape[0]), a.dtype)
    for i in range(a.shape[0]):  # a loop, not a slice assignment: much cheaper to compile
        b[i] = a[i]
    return b


@numba.njit(cache=True)
def _closure_entries(nsym, ptr, adj, adj_p, adj_vlogp, adj_vrule, comp, comp_ptr, comp_members, loc, moff, mflat):
    """For every source (bottom) symbol B, the inside and Viterbi weights of every A with A =>* B.

    Returns the entries and a status: 0 ok, 1 a positive-gain cycle for Viterbi (impossible for probabilities).
    """
    cap = nsym + 16
    out_parent = np.empty(cap, np.int32)
    out_child = np.empty(cap, np.int32)
    out_in = np.empty(cap, np.float64)
    out_vit = np.empty(cap, np.float64)
    out_next = np.empty(cap, np.int32)
    out_rule = np.empty(cap, np.int32)
    m = 0

    stamp = np.full(nsym, -1, np.int64)
    reach = np.empty(nsym, np.int64)
    inflow = np.zeros(nsym, np.float64)
    total = np.zeros(nsym, np.float64)
    dist = np.full(nsym, -np.inf)
    nxt = np.full(nsym, -1, np.int64)
    rul = np.full(nsym, -1, np.int64)
    relax = np.zeros(nsym, np.int64)
    inq = np.zeros(nsym, np.bool_)
    queue = np.empty(nsym, np.int64)
    comp_seen = np.full(comp_ptr.shape[0], -1, np.int64)
    comps = np.empty(nsym, np.int64)
    tmp_in = np.empty(nsym, np.float64)

    for b in range(nsym):
        # reach set of b through child -> parent edges
        nr = 0
        reach[nr] = b
        nr += 1
        stamp[b] = b
        h = 0
        while h < nr:
            x = reach[h]
            h += 1
            for e in range(ptr[x], ptr[x + 1]):
                a = adj[e]
                if stamp[a] != b:
                    stamp[a] = b
                    reach[nr] = a
                    nr += 1
        # parents in increasing id order, so the entries come out sorted by (child, parent) with no global sort
        # (nothing below depends on the order of `reach`: components are visited in topological order)
        sort_prefix(reach, nr)

        # inside: propagate unit inflow at b through components in topological order (descending comp id)
        nc = 0
        for r in range(nr):
            c = comp[reach[r]]
            if comp_seen[c] != b:
                comp_seen[c] = b
                comps[nc] = c
                nc += 1
        sort_prefix(comps, nc)
        for r in range(nr):
            inflow[reach[r]] = 0.0
        inflow[b] = 1.0
        for ci in range(nc - 1, -1, -1):
            c = comps[ci]
            lo = comp_ptr[c]
            hi = comp_ptr[c + 1]
            size = hi - lo
            for u in range(size):
                tmp_in[u] = inflow[comp_members[lo + u]]
            base = moff[c]
            for u in range(size):
                acc = 0.0
                for v in range(size):
                    acc += mflat[base + u * size + v] * tmp_in[v]
                total[comp_members[lo + u]] = acc
            for u in range(size):
                x = comp_members[lo + u]
                tx = total[x]
                if tx == 0.0:
                    continue
                for e in range(ptr[x], ptr[x + 1]):
                    a = adj[e]
                    if comp[a] != c:
                        inflow[a] += tx * adj_p[e]

        # Viterbi: label-correcting best chain from every A down to b
        for r in range(nr):
            x = reach[r]
            dist[x] = -np.inf
            nxt[x] = -1
            rul[x] = -1
            relax[x] = 0
        dist[b] = 0.0
        qh = 0
        qn = 1
        queue[0] = b
        inq[b] = True
        status = 0
        while qn > 0:
            y = queue[qh]
            qh += 1
            if qh == nsym:  # circular buffer (a compare instead of a modulo per pop)
                qh = 0
            qn -= 1
            inq[y] = False
            dy = dist[y]
            for e in range(ptr[y], ptr[y + 1]):
                a = adj[e]
                if a == y:
                    continue
                cand = dy + adj_vlogp[e]
                if cand > dist[a]:
                    dist[a] = cand
                    nxt[a] = y
                    rul[a] = adj_vrule[e]
                    relax[a] += 1
                    if relax[a] > nr + 1 or a == b:
                        status = 1
                        qn = 0
                        break
                    if not inq[a]:
                        slot = qh + qn
                        if slot >= nsym:
                            slot -= nsym
                        queue[slot] = a
                        qn += 1
                        inq[a] = True
        if status != 0:
            return out_parent[:0], out_child[:0], out_in[:0], out_vit[:0], out_next[:0], out_rule[:0], b
        for r in range(nr):
            inq[reach[r]] = False

        need = m + nr
        if need > out_parent.shape[0]:
            out_parent = _grow(out_parent, need)
            out_child = _grow(out_child, need)
            out_in = _grow(out_in, need)
            out_vit = _grow(out_vit, need)
            out_next = _grow(out_next, need)
            out_rule = _grow(out_rule, need)
        for r in range(nr):
            a = reach[r]
            out_parent[m] = a
            out_child[m] = b
            t = total[a]
            out_in[m] = np.log(t) if t > 0.0 else -np.inf
            out_vit[m] = dist[a]
            out_next[m] = nxt[a]
            out_rule[m] = rul[a]
            m += 1
    return out_parent[:m], out_child[:m], out_in[:m], out_vit[:m], out_next[:m], out_rule[:m], -1


@numba.njit(cache=True)
def _component_series(comp, comp_ptr, comp_members, loc, moff, mflat, e_parent, e_child, e_p):
    """Fill mflat[moff[c]:moff[c+1]] with (I - U_c)^-1 for every component c with internal edges.

    U_c[A, B] = summed P(A -> B) over the edges inside c.  The inverse is taken by Gauss-Jordan elimination
    with partial pivoting.  Returns -1, or the first component whose series diverges (a singular or
    non-finite inverse, a negative entry below -1e-9 or a diagonal entry below 1 - 1e-9, i.e. mass >= 1).
    """
    ncomp = comp_ptr.shape[0] - 1
    ne = e_parent.shape[0]
    # group the within-component edges by component (counting sort)
    cnt = np.zeros(ncomp + 1, np.int64)
    for e in range(ne):
        c = comp[e_child[e]]
        if comp[e_parent[e]] == c:
            cnt[c + 1] += 1
    for c in range(ncomp):
        cnt[c + 1] += cnt[c]
    fill = cnt[:-1].copy()
    edges = np.empty(cnt[ncomp], np.int64)
    for e in range(ne):
        c = comp[e_child[e]]
        if comp[e_parent[e]] == c:
            edges[fill[c]] = e
            fill[c] += 1
    maxk = 1
    for c in range(ncomp):
        k = comp_ptr[c + 1] - comp_ptr[c]
        if k > maxk:
            maxk = k
    a = np.empty((maxk, 2 * maxk))
    for c in range(ncomp):
        if cnt[c + 1] == cnt[c]:
            continue  # no internal edge: a singleton without a self loop, M = [1] already
        k = comp_ptr[c + 1] - comp_ptr[c]
        base = moff[c]
        if k == 1:
            p = 0.0
            for t in range(cnt[c], cnt[c + 1]):
                p += e_p[edges[t]]
            x = 1.0 / (1.0 - p) if p < 1.0 else np.inf
            if not np.isfinite(x):
                return c
            mflat[base] = x
            continue
        # augmented [I - U | I]
        for u in range(k):
            for v in range(2 * k):
                a[u, v] = 0.0
            a[u, u] = 1.0
            a[u, k + u] = 1.0
        for t in range(cnt[c], cnt[c + 1]):
            e = edges[t]
            a[loc[e_parent[e]], loc[e_child[e]]] -= e_p[e]
        for col in range(k):
            piv = col
            best = abs(a[col, col])
            for r in range(col + 1, k):
                if abs(a[r, col]) > best:
                    best = abs(a[r, col])
                    piv = r
            if not best > 1e-300:
                return c
            if piv != col:
                for v in range(2 * k):
                    tmp = a[col, v]
                    a[col, v] = a[piv, v]
                    a[piv, v] = tmp
            inv = 1.0 / a[col, col]
            for v in range(2 * k):
                a[col, v] *= inv
            for r in range(k):
                if r != col:
                    f = a[r, col]
                    if f != 0.0:
                        for v in range(2 * k):
                            a[r, v] -= f * a[col, v]
        for u in range(k):
            for v in range(k):
                x = a[u, k + v]
                if not np.isfinite(x) or x < -1e-9:
                    return c
                if u == v and x < 1.0 - 1e-9:
                    return c
                mflat[base + u * k + v] = x if x > 0.0 else 0.0
    return -1


@numba.njit(cache=True)
def _counting_order(key, ptr):
    """The stable sort permutation of `key` (ints in [0, len(ptr) - 1)), given its CSR offsets `ptr`."""
    fill = ptr[:-1].copy()
    out = np.empty(key.shape[0], np.int64)
    for e in range(key.shape[0]):
        k = key[e]
        out[fill[k]] = e
        fill[k] += 1
    return out


def compute_unary_closure(nsym: int, un_parent: np.ndarray, un_child: np.ndarray, un_logp: np.ndarray,
                          symbol_name=lambda i: str(i)) -> UnaryClosure:
    """Closure of the unary rules A -> B given as parallel arrays (see the module docstring)."""
    un_parent = np.asarray(un_parent, np.int64)
    un_child = np.asarray(un_child, np.int64)
    un_logp = np.asarray(un_logp, np.float64)
    n_rules = un_parent.shape[0]

    # merge duplicate (A, B) pairs: probabilities add for inside, the best rule wins for Viterbi
    key = un_child * nsym + un_parent
    uniq, inverse = np.unique(key, return_inverse=True) if n_rules else (np.zeros(0, np.int64), np.zeros(0, np.int64))
    e_child = (uniq // nsym).astype(np.int64)
    e_parent = (uniq % nsym).astype(np.int64)
    e_p = np.zeros(uniq.shape[0])
    np.add.at(e_p, inverse, np.exp(un_logp))
    order = np.lexsort((-un_logp, inverse))  # per merged edge, the best rule first
    first = np.ones(n_rules, bool)
    first[1:] = inverse[order][1:] != inverse[order][:-1]
    best_rule = np.empty(uniq.shape[0], np.int64)
    best_rule[inverse[order][first]] = order[first]
    e_vlogp = un_logp[best_rule] if n_rules else np.zeros(0)

    ptr = np.zeros(nsym + 1, np.int64)
    np.add.at(ptr, e_child + 1, 1)
    ptr = np.cumsum(ptr)  # edges are already sorted by child (key sorted)

    comp, ncomp = _tarjan(nsym, ptr, e_parent)
    comp_order = np.argsort(comp, kind="stable")
    comp_ptr = np.searchsorted(comp[comp_order], np.arange(ncomp + 1)).astype(np.int64)
    comp_members = comp_order.astype(np.int64)
    loc = np.empty(nsym, np.int64)
    loc[comp_members] = np.arange(nsym) - np.repeat(comp_ptr[:-1], np.diff(comp_ptr))
    sizes = np.diff(comp_ptr)
    moff = np.zeros(ncomp + 1, np.int64)
    moff[1:] = np.cumsum(sizes * sizes)
    mflat = np.ones(int(moff[-1]))

    # self loops and within-component edges: dense geometric series per component (one numba pass)
    bad_comp = _component_series(comp, comp_ptr, comp_members, loc, moff, mflat, e_parent, e_child, e_p)
    if bad_comp >= 0:
        members = comp_members[comp_ptr[bad_comp]:comp_ptr[bad_comp + 1]]
        names = ", ".join(symbol_name(int(s)) for s in members[:6])
        raise InputError(f"unary rules form a cycle with probability mass >= 1 through {names}",
                         hint="unary cycles must lose probability; renormalize or remove the cycle")

    parent, child, in_w, vit_w, vit_next, vit_rule, bad_sym = _closure_entries(
        nsym, ptr, e_parent, e_p, e_vlogp, best_rule, comp, comp_ptr, comp_members, loc, moff, mflat)
    if bad_sym >= 0:
        raise InputError(f"unary rules through {symbol_name(int(bad_sym))} form a cycle with positive log weight",
                         hint="unary rule weights must be log probabilities (<= 0)")
    # entries come sorted by (child, parent) (`_closure_entries`); a stable counting sort by parent then gives the
    # (parent, child) order in linear time
    child_ptr = np.zeros(nsym + 1, np.int64)
    child_ptr[1:] = np.cumsum(np.bincount(child, minlength=nsym))
    parent_ptr = np.zeros(nsym + 1, np.int64)
    parent_ptr[1:] = np.cumsum(np.bincount(parent, minlength=nsym))
    by_parent = _counting_order(parent, parent_ptr)
    return UnaryClosure(parent=parent.astype(np.int32), child=child.astype(np.int32), inside_logw=in_w,
                        viterbi_logw=vit_w, viterbi_next=vit_next.astype(np.int32),
                        viterbi_rule=vit_rule.astype(np.int32), child_ptr=child_ptr, by_parent=by_parent,
                        parent_ptr=parent_ptr)
