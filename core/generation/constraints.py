"""Vocabulary and word-inclusion constraints on any GenerationModel (Swanson et al. 2014, sections 4-5).

General machinery over the integer-coded arrays of `GenerationModel` (nothing system-specific; the vocabgen plugin
builds SPINEDEP on it):

* `prune_to_vocabulary` -- V(o), Algorithm 1 (remove out-of-vocabulary outcomes, then repeat "drop transitions
  implying an invalid context" + FIXUP "contexts left without transitions become invalid" until nothing
  changes), followed by the productivity fixpoint of `GenerationModel.restrict` (which also removes cycles that
  can never terminate, something Algorithm 1 alone does not).  The pruned model keeps the *unconstrained*
  probabilities P(o|c) (not renormalized): what eqs. 2-3 need.
* `goodness` -- G(c), the probability that an unconstrained subtree from c obeys the vocabulary (eq. 3).
  `method="acyclic"` is the paper's approximation: edges c -> c' of the reachability graph sorted by decreasing
  weight, the longest acyclic prefix found by binary search, then every further edge added unless it closes a
  cycle (dynamic topological order, Pearce & Kelly); G is computed bottom-up on that DAG, an implied context
  whose edge was left out counting as 1.  `method="fixpoint"` iterates eq. 3 from G = 0 (the exact least
  solution, to a tolerance); `method="one"` is the G = 1 baseline.
* `constrain` -- P_V(o|c) proportional to P(o|c) prod G(c') (eq. 2), a consistent GenerationModel.
* `expected_counts` -- E(c) = sum_i z0 M^i with the sparse mean matrix, truncated (eq. 4).
* `GenerateUp` -- the three-phase sampler: c0 ~ E over C_w (eq. 5), a spine up to the root (eq. 6), fill-in.
* `rejection_sample_entries` -- the true rejection sampler the others emulate.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import numba
import numpy as np

from treegram.errors import InputError
from treegram.generation._kernels import (SAMPLE_NEED_UNIFORMS, SAMPLE_OK, SAMPLE_SPINE_TOO_LONG, SAMPLE_TOO_LARGE,
                                          first_above)
from treegram.generation.model import GenerationModel
from treegram.generation.sampling import SampleFailure, as_generator, sample_entries
from treegram.jit import sort_by_key

__all__ = [
    "GenerateUp", "NoSentenceError", "PruneReport", "acyclic_edges", "algorithm1_keep", "constrain", "entry_keys",
    "expected_counts", "goodness", "log_likelihood_ratio", "mask_contexts", "oov_outcomes", "prune_to_vocabulary",
    "rejection_sample_entries",
]



class NoSentenceError(InputError):
    """The constraint admits no sentence at all (the message says why)."""


# -- pruning (Algorithm 1 + FIXUP) -------------------------------------------------------------------------
@attrs.frozen
class PruneReport:
    oov_entries: int       # entries removed because V(o) is true
    fixup_rounds: int      # Algorithm 1 iterations until the valid set stopped changing
    fixup_entries: int     # entries removed by the invalid-context / FIXUP loop
    unproductive_entries: int  # further entries removed by the productivity fixpoint (non-terminating cycles)
    contexts: int          # contexts of the pruned model
    entries: int


def algorithm1_keep(model: GenerationModel, keep: np.ndarray) -> tuple[np.ndarray, int]:
    """Algorithm 1 at the level of (context, outcome) entries: repeat {drop kept entries implying an invalid
    context; FIXUP: a context with no kept entry is invalid} until the set of valid contexts is stable.

    Returns (keep mask, rounds).  The result is the greatest fixpoint: every kept entry implies only valid
    contexts, and every valid context has a kept entry.
    """
    keep = np.asarray(keep, dtype=np.bool_).copy()
    rounds = 0
    while True:
        rounds += 1
        valid = np.bincount(model.ctx_of_entry[keep], minlength=model.n_contexts) > 0
        bad = np.bincount(model.entry_of_implied, weights=(~valid[model.imp_ctx]).astype(np.float64),
                          minlength=model.n_entries) > 0
        new_keep = keep & ~bad
        if np.array_equal(new_keep, keep):
            return keep, rounds
        keep = new_keep


def prune_to_vocabulary(model: GenerationModel, oov_outcome: np.ndarray) -> tuple[GenerationModel, PruneReport]:
    """The consistent vocabulary-pruned model (unnormalized P(o|c) kept) and what pruning removed.

    Raises NoSentenceError when no in-vocabulary derivation exists at all.
    """
    oov_outcome = np.asarray(oov_outcome, dtype=np.bool_)
    keep0 = ~oov_outcome[model.out_id]
    keep1, rounds = algorithm1_keep(model, keep0)
    if not keep1[model.ctx_ptr[model.root]:model.ctx_ptr[model.root + 1]].any():
        raise NoSentenceError("no sentence of the model uses only words of this vocabulary",
                              hint="enlarge the vocabulary or train on more (simpler) sentences")
    good = model.productive(keep1)
    if not good[model.root]:
        raise NoSentenceError("no finite in-vocabulary derivation exists",
                              hint="enlarge the vocabulary or train on more (simpler) sentences")
    pruned = model.restrict(keep1, renormalize=False, note="vocabulary")
    report = PruneReport(oov_entries=int((~keep0).sum()), fixup_rounds=rounds,
                         fixup_entries=int((keep0 & ~keep1).sum()),
                         unproductive_entries=int(keep1.sum()) - pruned.n_entries,
                         contexts=pruned.n_contexts, entries=pruned.n_entries)
    return pruned, report


def oov_outcomes(model: GenerationModel, allowed) -> np.ndarray:
    """V(o) per outcome, with `allowed(word) -> bool` (e.g. a Vocabulary) deciding each distinct word once."""
    known = np.fromiter((bool(allowed(w)) for w in model.words), dtype=np.bool_, count=len(model.words))
    bad_word = (~known[model.word_id]).astype(np.int64)
    owner = np.repeat(np.arange(model.n_outcomes, dtype=np.int64), np.diff(model.word_ptr))
    return np.bincount(owner, weights=bad_word, minlength=model.n_outcomes) > 0


# -- goodness G(c) --------------------------------------------------------------------------------------------
@numba.njit(cache=True)
def _edges_by_node(n, node, use):
    """CSR index of the used edges by one end: edges of node v are eids[ptr[v]:ptr[v + 1]], in edge order."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    for i in range(node.size):
        if use[i]:
            ptr[node[i] + 1] += 1
    for i in range(n):
        ptr[i + 1] += ptr[i]
    fill = ptr[:-1].copy()
    eids = np.empty(ptr[n], dtype=np.int64)
    for i in range(node.size):
        if use[i]:
            eids[fill[node[i]]] = i
            fill[node[i]] += 1
    return ptr, eids


@numba.njit(cache=True)
def _topo_order(n, src, dst, accepted):
    """Kahn's algorithm on the accepted edges: (ord, seen) with ord[v] the position of v in a topological order
    and seen the number of nodes ordered -- n exactly when the accepted edges are acyclic."""
    indeg = np.zeros(n, dtype=np.int64)
    for i in range(src.size):
        if accepted[i]:
            indeg[dst[i]] += 1
    ptr, eids = _edges_by_node(n, src, accepted)
    work = np.empty(n, dtype=np.int64)
    top = 0
    for i in range(n - 1, -1, -1):
        if indeg[i] == 0:
            work[top] = i
            top += 1
    order = np.empty(n, dtype=np.int64)
    pos = 0
    while top > 0:
        top -= 1
        u = work[top]
        order[u] = pos
        pos += 1
        for j in range(ptr[u], ptr[u + 1]):
            v = dst[eids[j]]
            indeg[v] -= 1
            if indeg[v] == 0:
                work[top] = v
                top += 1
    return order, pos


def _is_acyclic(n: int, src: np.ndarray, dst: np.ndarray, k: int) -> bool:
    """Whether the first k edges are acyclic."""
    return _topo_order(n, src, dst, np.arange(src.size) < k)[1] == n


@numba.njit(cache=True)
def _affected(start, ptr, eids, far, accepted, ordv, bound, direction, target, mark, stamp, stack, out):
    """Pearce-Kelly's search of the affected region: depth-first from `start` along the accepted edges of the CSR
    index (ptr, eids), `far[e]` the node edge e leads to, through nodes with ord < bound (direction 1, the forward
    search) or ord > bound (direction -1, the backward one); visited nodes go to `out` (stamped in `mark`).
    Returns (number visited, whether `target` was reached -- the new edge would close a cycle)."""
    n = 0
    stack[0] = start
    top = 1
    mark[start] = stamp
    while top > 0:
        top -= 1
        w = stack[top]
        out[n] = w
        n += 1
        for j in range(ptr[w], ptr[w + 1]):
            e = eids[j]
            if not accepted[e]:
                continue
            x = far[e]
            if x == target:
                return n, True
            if mark[x] != stamp and direction * ordv[x] < direction * bound:
                mark[x] = stamp
                stack[top] = x
                top += 1
    return n, False


@numba.njit(cache=True)
def _greedy_dag(n, src, dst, prefix):
    """Accept the first `prefix` edges (acyclic), then each later edge unless it closes a cycle.

    Pearce-Kelly dynamic topological order: an edge u->v with ord[u] < ord[v] is always safe; otherwise search
    forward from v among nodes with ord <= ord[u] (reaching u = cycle, rejected), backward from u among nodes with
    ord >= ord[v], and reassign the affected slots so that the backward set precedes the forward set.
    """
    m = src.size
    accepted = np.zeros(m, dtype=np.bool_)
    for i in range(prefix):
        accepted[i] = True
    ordv, _ = _topo_order(n, src, dst, accepted)
    # adjacency over all candidate edges (out and in), filtered by `accepted` during searches
    every = np.ones(m, dtype=np.bool_)
    optr, oe = _edges_by_node(n, src, every)
    iptr, ie = _edges_by_node(n, dst, every)
    mark = np.zeros(n, dtype=np.int64)  # visit stamps
    stamp = 0
    stack = np.empty(n, dtype=np.int64)
    fwd = np.empty(n, dtype=np.int64)
    bwd = np.empty(n, dtype=np.int64)
    bkeys = np.empty(n, dtype=np.int64)
    fkeys = np.empty(n, dtype=np.int64)
    slots = np.empty(n, dtype=np.int64)
    for i in range(prefix, m):
        u = src[i]
        v = dst[i]
        if u == v:
            continue
        if ordv[u] < ordv[v]:
            accepted[i] = True
            continue
        ub = ordv[u]
        lb = ordv[v]
        stamp += 1
        nf, cycle = _affected(v, optr, oe, dst, accepted, ordv, ub, 1, u, mark, stamp, stack, fwd)
        if cycle:
            continue
        stamp += 1
        nb, _ = _affected(u, iptr, ie, src, accepted, ordv, lb, -1, -1, mark, stamp, stack, bwd)
        # reorder: slots of both sets, sorted; backward set (by old order) first, then forward set.  The keys
        # (old positions) are distinct, so the sorts have one result; `sort_by_key` compiles far faster than
        # np.argsort.
        for j in range(nb):
            bkeys[j] = ordv[bwd[j]]
        for j in range(nf):
            fkeys[j] = ordv[fwd[j]]
        sort_by_key(bkeys, bwd, nb)
        sort_by_key(fkeys, fwd, nf)
        p = 0
        q = 0
        for j in range(nb + nf):  # merge the two sorted key runs into the sorted slots
            if q >= nf or (p < nb and bkeys[p] < fkeys[q]):
                slots[j] = bkeys[p]
                p += 1
            else:
                slots[j] = fkeys[q]
                q += 1
        for j in range(nb):
            ordv[bwd[j]] = slots[j]
        for j in range(nf):
            ordv[fwd[j]] = slots[nb + j]
        accepted[i] = True
    return accepted, ordv


def acyclic_edges(model: GenerationModel) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The reachability graph c -> c' (weight M[c, c'] = sum_o P(o|c) #(c', I(c, o))) reduced to a DAG.

    Returns (src, dst, accepted mask, prefix length found by binary search), edges sorted by decreasing weight.
    """
    M = model.mean_matrix()
    src, dst, w = M.row_ids(), M.indices, M.data
    order = np.lexsort((dst, src, -w))  # decreasing weight, ties broken by ids (deterministic)
    src, dst = np.ascontiguousarray(src[order]), np.ascontiguousarray(dst[order])
    n = model.n_contexts
    lo, hi = 0, src.size  # invariant: prefix lo is acyclic
    if _is_acyclic(n, src, dst, hi):
        lo = hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if _is_acyclic(n, src, dst, mid):
            lo = mid
        else:
            hi = mid - 1
    accepted, _ = _greedy_dag(n, src, dst, lo)
    return src, dst, accepted, lo


def goodness(model: GenerationModel, *, method: str = "acyclic", tol: float = 1e-12,
             max_iter: int = 10_000) -> np.ndarray:
    """G(c) for every context of a vocabulary-pruned model (its prob = unconstrained P(o|c), eq. 3)."""
    n = model.n_contexts
    if method == "one":
        return np.ones(n)
    if method == "fixpoint":
        g = np.zeros(n)
        for _ in range(max_iter):
            new = np.bincount(model.ctx_of_entry, weights=model.prob * model.product_over_implied(g), minlength=n)
            if np.max(np.abs(new - g), initial=0.0) <= tol:
                return new
            g = new
        return g
    if method != "acyclic":
        raise InputError(f"unknown goodness method {method!r}", hint="use acyclic, fixpoint or one")
    src, dst, accepted, _ = acyclic_edges(model)
    order, _ = _topo_order(n, src, dst, accepted)
    keep_edge = set(zip(src[accepted].tolist(), dst[accepted].tolist()))
    # per implied position: does its edge belong to the DAG?
    pos_src = model.ctx_of_entry[model.entry_of_implied]
    in_dag = np.fromiter(((int(a), int(b)) in keep_edge for a, b in zip(pos_src, model.imp_ctx)),
                         dtype=np.bool_, count=model.imp_ctx.size)
    return _goodness_dag(model.ctx_ptr, model.prob, model.imp_ptr, model.imp_ctx_i64, in_dag,
                         np.argsort(order)[::-1].copy())


@numba.njit(cache=True)
def _goodness_dag(ctx_ptr, prob, imp_ptr, imp_ctx, in_dag, rev_topo):
    n = ctx_ptr.size - 1
    g = np.ones(n)
    for c in rev_topo:  # children (later in the topological order) first
        total = 0.0
        for e in range(ctx_ptr[c], ctx_ptr[c + 1]):
            p = prob[e]
            for k in range(imp_ptr[e], imp_ptr[e + 1]):
                if in_dag[k]:
                    p *= g[imp_ctx[k]]
            total += p
        g[c] = total
    return g


def constrain(pruned: GenerationModel, g: np.ndarray, *, uniform: bool = False) -> GenerationModel:
    """P_V(o|c) proportional to P(o|c) prod_{c' in I(c,o)} G(c') (eq. 2); `uniform` = the weak baseline."""
    weights = np.ones(pruned.n_entries) if uniform else pruned.prob * pruned.product_over_implied(g)
    keep = weights > 0
    model = attrs.evolve(pruned, prob=np.where(keep, weights, 0.0))
    return model.restrict(keep, renormalize=True, note="P_V")


# -- expected counts and generating up -------------------------------------------------------------------
def expected_counts(model: GenerationModel, *, max_depth: int = 200, tol: float = 1e-9) -> tuple[np.ndarray, float]:
    """E(c) = sum_{i < max_depth} z0 M^i (eq. 4), stopping once the mass at depth i falls below tol.

    Returns (E, leftover mass at the truncation depth) -- a leftover above tol means the sum was cut short.
    """
    M = model.mean_matrix()
    z = np.zeros(model.n_contexts)
    z[model.root] = 1.0
    total = z.copy()
    for _ in range(max_depth):
        z = M.vecmat(z)
        mass = float(z.sum())
        total += z
        if mass < tol:
            return total, mass
    return total, float(z.sum())


@numba.njit(cache=True)
def _generate_up(ctx_ptr, cum, imp_ptr, imp_ctx, ctx_of_entry, root, cw_ids, cw_cum, rev_ptr, rev_entry,
                 rev_pos, rev_cum, root_stop, uniforms, max_nodes, max_spine, out_entries):
    """One generating-up sample; returns (status, n_nodes).  out_entries gets the entries in pre-order."""
    nu = 0
    # phase 1: c0 ~ E(c) over C_w
    if nu >= uniforms.size:
        return SAMPLE_NEED_UNIFORMS, 0
    c0 = cw_ids[first_above(cw_cum, 0, cw_cum.size, uniforms[nu] * cw_cum[cw_cum.size - 1])]
    nu += 1
    # phase 2: spine up to the root.  From context c: stop (if c is the root) with weight root_stop, else pick a
    # (parent entry, position) with weight E(parent) P_V(o|parent)
    spine_e = np.empty(max_spine, dtype=np.int64)
    spine_k = np.empty(max_spine, dtype=np.int64)
    ns = 0
    c = c0
    while True:
        lo = rev_ptr[c]
        hi = rev_ptr[c + 1]
        stop = root_stop if c == root else 0.0
        up = rev_cum[hi - 1] if hi > lo else 0.0
        if nu >= uniforms.size:
            return SAMPLE_NEED_UNIFORMS, 0
        t = uniforms[nu] * (stop + up)
        nu += 1
        if t < stop or up <= 0.0:
            break
        a = first_above(rev_cum, lo, hi, t - stop)
        if ns >= max_spine:
            return SAMPLE_SPINE_TOO_LONG, 0
        spine_e[ns] = rev_entry[a]
        spine_k[ns] = rev_pos[a]
        ns += 1
        c = ctx_of_entry[rev_entry[a]]
    # phase 3: fill in top-down in pre-order.  Stack items: (context, spine level) with level -1 = free
    st_c = np.empty(max_nodes + 1, dtype=np.int64)
    st_l = np.empty(max_nodes + 1, dtype=np.int64)
    top = 0
    if ns == 0:
        st_c[0] = c0
        st_l[0] = -1
    else:
        st_c[0] = ctx_of_entry[spine_e[ns - 1]]
        st_l[0] = ns - 1
    top = 1
    n = 0
    while top > 0:
        top -= 1
        cc = st_c[top]
        lvl = st_l[top]
        if lvl >= 0:
            e = spine_e[lvl]
        else:
            if nu >= uniforms.size:
                return SAMPLE_NEED_UNIFORMS, 0
            e = first_above(cum, ctx_ptr[cc], ctx_ptr[cc + 1], uniforms[nu] * cum[ctx_ptr[cc + 1] - 1])
            nu += 1
        out_entries[n] = e
        n += 1
        k0 = imp_ptr[e]
        k1 = imp_ptr[e + 1]
        if n + top + (k1 - k0) > max_nodes:
            return SAMPLE_TOO_LARGE, n
        for k in range(k1 - 1, k0 - 1, -1):
            st_c[top] = imp_ctx[k]
            if lvl >= 0 and k - k0 == spine_k[lvl]:
                st_l[top] = lvl - 1  # the spine continues here (level -1 = c0, sampled freely)
            else:
                st_l[top] = -1
            top += 1
    return SAMPLE_OK, n


class GenerateUp:
    """Sampler for sentences containing a required word under the vocabulary constraint (section 5).

    `model` is a consistent P_V model, `expected` its E(c), `cw` a bool mask of C_w over its contexts.
    """

    def __init__(self, model: GenerationModel, expected: np.ndarray, cw: np.ndarray, *, max_nodes: int = 500,
                 max_spine: int = 200):
        cw = np.asarray(cw, dtype=np.bool_)
        self.model = model
        self.cw_ids = np.flatnonzero(cw & (expected > 0)).astype(np.int64)
        if self.cw_ids.size == 0:
            raise NoSentenceError("no in-vocabulary sentence of the model contains the required word",
                                  hint="the word never occurs in a sentence whose other words are all in the "
                                       "vocabulary; enlarge the vocabulary or the training data")
        self.cw_cum = np.cumsum(expected[self.cw_ids])
        pos = np.arange(model.imp_ctx.size, dtype=np.int64)
        order = np.argsort(model.imp_ctx, kind="stable")
        self.rev_ptr = np.zeros(model.n_contexts + 1, dtype=np.int64)
        np.cumsum(np.bincount(model.imp_ctx, minlength=model.n_contexts), out=self.rev_ptr[1:])
        ent = model.entry_of_implied[order]
        self.rev_entry = ent.astype(np.int64)
        self.rev_pos = (pos[order] - model.imp_ptr[ent]).astype(np.int64)
        w = expected[model.ctx_of_entry[ent]] * model.prob[ent]
        cs = np.cumsum(w)
        starts = self.rev_ptr[:-1]
        before = np.where(starts > 0, cs[np.maximum(starts - 1, 0)], 0.0) if cs.size else np.zeros(0)
        self.rev_cum = cs - np.repeat(before, np.diff(self.rev_ptr)) if cs.size else cs
        self.root_stop = 1.0
        self.max_nodes = max_nodes
        self.max_spine = max_spine
        self.out = np.empty(max_nodes, dtype=np.int64)

    def sample_entries(self, rng) -> np.ndarray | SampleFailure:
        rng = as_generator(rng)
        m = self.model
        uniforms = rng.random(64)
        while True:
            status, n = _generate_up(m.ctx_ptr, m.cum, m.imp_ptr, m.imp_ctx_i64, m.ctx_of_entry, m.root,
                                     self.cw_ids, self.cw_cum, self.rev_ptr, self.rev_entry, self.rev_pos,
                                     self.rev_cum, self.root_stop, uniforms, self.max_nodes, self.max_spine,
                                     self.out)
            if status == SAMPLE_NEED_UNIFORMS:
                uniforms = np.concatenate([uniforms, rng.random(uniforms.size)])
                continue
            if status == SAMPLE_OK:
                return self.out[:n].copy()
            if status == SAMPLE_TOO_LARGE:
                return SampleFailure("too_large", f"derivation exceeded max_nodes={self.max_nodes}")
            return SampleFailure("spine_too_long", f"spine exceeded {self.max_spine} steps")


# -- rejection sampling (the reference) --------------------------------------------------------------------
def rejection_sample_entries(model: GenerationModel, oov_outcome: np.ndarray, rng, *, cw: np.ndarray | None = None,
                             max_nodes: int = 500, max_tries: int = 1_000_000) -> tuple[np.ndarray | None, int]:
    """Draw unconstrained samples until one is in vocabulary (and uses a C_w context when `cw` is given).

    Returns (entries or None if max_tries ran out, number of draws).
    """
    rng = as_generator(rng)
    bad_entry = np.asarray(oov_outcome, dtype=np.bool_)[model.out_id]
    cw_entry = None if cw is None else np.asarray(cw, dtype=np.bool_)[model.ctx_of_entry]
    for tries in range(1, max_tries + 1):
        ent = sample_entries(model, rng, max_nodes=max_nodes)
        if isinstance(ent, SampleFailure):
            continue
        if bad_entry[ent].any():
            continue
        if cw_entry is not None and not cw_entry[ent].any():
            continue
        return ent, tries
    return None, max_tries


def entry_keys(model: GenerationModel, entries: np.ndarray) -> tuple:
    """A hashable, model-independent key of a derivation: its (context, outcome) pairs in pre-order."""
    return tuple((model.contexts[c], model.outcomes[o])
                 for c, o in zip(model.ctx_of_entry[entries].tolist(), model.out_id[entries].tolist()))


def mask_contexts(model: GenerationModel, predicate) -> np.ndarray:
    return np.fromiter((bool(predicate(c)) for c in model.contexts), dtype=np.bool_, count=model.n_contexts)


def log_likelihood_ratio(a: Iterable, b: Iterable) -> float:
    """-log LR statistic (G-test / 2) of "samples a and b come from one distribution" over their categories."""
    from collections import Counter

    ca, cb = Counter(a), Counter(b)
    na, nb = sum(ca.values()), sum(cb.values())
    stat = 0.0
    for key in set(ca) | set(cb):
        x, y = ca.get(key, 0), cb.get(key, 0)
        pooled = (x + y) / (na + nb)
        if x:
            stat += x * np.log(x / na / pooled)
        if y:
            stat += y * np.log(y / nb / pooled)
    return float(stat)
