"""Numba kernels of the STSG Gibbs sampler: elementary-tree-pair hashing, base probabilities, DP counts in the core
hash table (`treegram.bayes.hashtable`), and whole sweeps over source-node alignments.

State: one int per source node, `a[n]` = UNAL (-2: internal node of an elementary tree), EPS (-1: root of a deletion
rule, aligned with epsilon) or the global id of the target node it is aligned with.  The elementary tree pair rooted
at an aligned source node r is read off the state: its source side runs from r down to the next aligned nodes
(frontier, numbered left to right when aligned with target nodes, [] when aligned with epsilon); its target side
runs from a[r] down to the target nodes of those frontier nodes (or is the bare frontier node when the only frontier
node shares r's target node).  A pair is identified by a 64-bit hash of its canonical token sequence.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from treegram.bayes.dp import log_normaliser, log_predictive, log_rising
from treegram.bayes.hashtable import fix_key, table_add, table_find

UNAL = -2
EPS = -1

_PRIME = np.uint64(0x100000001B3)
_OFFSET = np.uint64(0xCBF29CE484222325)
K_OPEN = np.uint64(1 << 56)
K_CLOSE = np.uint64(2 << 56)
K_WORD = np.uint64(3 << 56)
K_FRONT = np.uint64(4 << 56)
K_SEP = np.uint64(5 << 56)
K_EPS = np.uint64(6 << 56)
K_BARE = np.uint64(7 << 56)


@numba.njit(cache=True, inline="always")
def _mix(h, x):
    h = (h ^ x) * _PRIME
    return h ^ (h >> np.uint64(29))


@numba.njit(cache=True)
def frag(r, a, s_label, s_word, s_cstart, s_children, s_lp, t_label, t_word, t_cstart, t_children, t_lp,
         log_beta, log_stop, n_labels, stack, ftgt):
    """(hash, log P0, category, number of target words) of the elementary tree pair rooted at source node r."""
    h = _OFFSET
    lp = 0.0
    nfront = 0
    nt = 0
    stack[0] = r
    sp = 1
    while sp > 0:
        sp -= 1
        v = stack[sp]
        if v < 0:
            h = _mix(h, K_CLOSE)
            continue
        if v != r and a[v] != UNAL:
            idx = 0
            if a[v] >= 0:
                ftgt[nt] = a[v]
                nt += 1
                idx = nt
            nfront += 1
            h = _mix(h, K_FRONT | np.uint64(s_label[v] * 65536 + idx))
            lp += log_stop
            continue
        h = _mix(h, K_OPEN | np.uint64(s_label[v]))
        lp += s_lp[v]
        if v != r:
            lp += log_beta
        if s_word[v] >= 0:
            h = _mix(h, K_WORD | np.uint64(s_word[v]))
        stack[sp] = -1
        sp += 1
        for k in range(s_cstart[v + 1] - 1, s_cstart[v] - 1, -1):
            stack[sp] = s_children[k]
            sp += 1
    ar = a[r]
    h = _mix(h, K_SEP)
    nwords = 0
    if ar < 0:
        h = _mix(h, K_EPS)
        cat = s_label[r] * (n_labels + 1) + n_labels
        return fix_key(h), lp, cat, 0
    cat = s_label[r] * (n_labels + 1) + t_label[ar]
    # uniform alignment of the k target frontier nodes among the m source frontier nodes: m! / (m - k)! choices
    lp -= math.lgamma(nfront + 1.0) - math.lgamma(nfront - nt + 1.0)
    if nt == 1 and ftgt[0] == ar:
        h = _mix(h, K_BARE | np.uint64(t_label[ar]))
        return fix_key(h), lp, cat, 0
    stack[0] = ar
    sp = 1
    while sp > 0:
        sp -= 1
        v = stack[sp]
        if v < 0:
            h = _mix(h, K_CLOSE)
            continue
        idx = 0
        for q in range(nt):
            if ftgt[q] == v:
                idx = q + 1
                break
        if idx > 0:
            h = _mix(h, K_FRONT | np.uint64(t_label[v] * 65536 + idx))
            lp += log_stop
            continue
        h = _mix(h, K_OPEN | np.uint64(t_label[v]))
        lp += t_lp[v]
        if v != ar:
            lp += log_beta
        if t_word[v] >= 0:
            h = _mix(h, K_WORD | np.uint64(t_word[v]))
            nwords += 1
        stack[sp] = -1
        sp += 1
        for k in range(t_cstart[v + 1] - 1, t_cstart[v] - 1, -1):
            stack[sp] = t_children[k]
            sp += 1
    return fix_key(h), lp, cat, nwords


# -- DP counts ---------------------------------------------------------------------------------------------------
# The table (keys, counts, log P0, category, example root, size) is the core's; `T` below is that tuple of arrays
# and `ncat` the per-category totals.

@numba.njit(cache=True)
def log_joint(T, ncat, alpha):
    """The collapsed joint of the counts: `treegram.bayes.dp`'s category and rule terms (eq 4, one formula)."""
    tkey, tcount, tlp, tcat, trep, tsize = T
    out = 0.0
    log_alpha = math.log(alpha)
    for c in range(len(ncat)):
        if ncat[c] > 0:
            out += log_normaliser(alpha, ncat[c])
    for s in range(len(tcount)):
        if tcount[s] > 0:
            out += log_rising(log_alpha + tlp[s], tcount[s])
    return out


@numba.njit(cache=True, inline="always")
def count_rule(tkey, tcount, tlp, tcat, trep, tsize, ncat, h, lp, cat, r, by):
    """Add `by` (+1 / -1) to the count of rule h rooted at source node r; False when removing an absent rule."""
    return table_add(tkey, tcount, tlp, tcat, trep, tsize, ncat, h, lp, cat, r, by) >= 0


# -- the Gibbs site update ---------------------------------------------------------------------------------------

@numba.njit(cache=True)
def site_options(i, a, s_parent, s_kept_lo, s_kept_hi, cand_start, cands, t_depth, s_cstart, s_children, stack,
                 opts):
    """Fill opts with the admissible values of a[i] (UNAL first); return their number and i's closest aligned
    ancestor i0.  Extractive constraints: epsilon only for fully deleted nodes, a target node only when its span
    equals the kept span of i, and target nodes nested like their source nodes."""
    p = s_parent[i]
    while a[p] == UNAL:
        p = s_parent[p]
    i0 = p
    opts[0] = UNAL
    n = 1
    if s_kept_lo[i] == s_kept_hi[i]:
        opts[1] = EPS
        return 2, i0
    top = a[i0]
    if top < 0:  # cannot happen for a node with kept words, kept for safety
        return 1, i0
    # deepest target node reached by i's closest aligned descendants with the same kept span
    lim = 1 << 30
    sp = 0
    for k in range(s_cstart[i + 1] - 1, s_cstart[i] - 1, -1):
        stack[sp] = s_children[k]
        sp += 1
    while sp > 0:
        sp -= 1
        v = stack[sp]
        if a[v] != UNAL:
            if a[v] >= 0 and t_depth[a[v]] < lim:
                lim = t_depth[a[v]]
            continue
        for k in range(s_cstart[v + 1] - 1, s_cstart[v] - 1, -1):
            stack[sp] = s_children[k]
            sp += 1
    for k in range(cand_start[i], cand_start[i + 1]):
        j = cands[k]
        if t_depth[j] >= t_depth[top] and t_depth[j] <= lim:
            opts[n] = j
            n += 1
    return n, i0


@numba.njit(cache=True)
def _choose(logw, n, u, temperature):
    if temperature == 0.0:
        best = -np.inf
        nbest = 0
        for k in range(n):
            if logw[k] > best:
                best = logw[k]
                nbest = 1
            elif logw[k] == best:
                nbest += 1
        pick = min(int(u * nbest), nbest - 1)
        for k in range(n):
            if logw[k] == best:
                if pick == 0:
                    return k
                pick -= 1
        return n - 1
    m = -np.inf
    for k in range(n):
        if logw[k] / temperature > m:
            m = logw[k] / temperature
    acc = 0.0
    for k in range(n):
        acc += math.exp(logw[k] / temperature - m)
    target = u * acc
    acc = 0.0
    for k in range(n):
        acc += math.exp(logw[k] / temperature - m)
        if target < acc:
            return k
    return n - 1


@numba.njit(cache=True)
def option_weights(i, a, G, tkey, tcount, ncat, alpha, stack, ftgt, opts, logw, hA, lA, cA, hB, lB, cB):
    """With site i's current rules already removed from the counts: log weight of every admissible value
    (eqs 5-7).  Leaves a[i] as it found it.  Returns the number of options and i0."""
    (s_parent, s_label, s_word, s_cstart, s_children, s_lp, s_kept_lo, s_kept_hi, cand_start, cands,
     t_label, t_word, t_cstart, t_children, t_lp, t_depth, log_beta, log_stop, n_labels) = G
    cur = a[i]
    n, i0 = site_options(i, a, s_parent, s_kept_lo, s_kept_hi, cand_start, cands, t_depth, s_cstart, s_children,
                         stack, opts)
    for k in range(n):
        a[i] = opts[k]
        h1, l1, c1, _w = frag(i0, a, s_label, s_word, s_cstart, s_children, s_lp, t_label, t_word, t_cstart,
                              t_children, t_lp, log_beta, log_stop, n_labels, stack, ftgt)
        hA[k] = h1
        lA[k] = l1
        cA[k] = c1
        s1 = table_find(tkey, tcount, h1)
        w = log_predictive(tcount[s1] if s1 >= 0 else 0, ncat[c1], alpha, l1)
        if opts[k] != UNAL:
            h2, l2, c2, _w = frag(i, a, s_label, s_word, s_cstart, s_children, s_lp, t_label, t_word, t_cstart,
                                  t_children, t_lp, log_beta, log_stop, n_labels, stack, ftgt)
            hB[k] = h2
            lB[k] = l2
            cB[k] = c2
            s2 = table_find(tkey, tcount, h2)
            extra = 1 if h2 == h1 else 0
            extra_c = 1 if c2 == c1 else 0
            w += log_predictive((tcount[s2] if s2 >= 0 else 0) + extra, ncat[c2] + extra_c, alpha, l2)
        logw[k] = w
    a[i] = cur
    return n, i0


@numba.njit(cache=True)
def remove_site(i, a, G, tkey, tcount, tlp, tcat, trep, tsize, ncat, stack, ftgt):
    """Remove the rules that depend on a[i] (e_M, or e_A and e_B) from the counts; returns i0, or -1 when a rule
    was not in the table (inconsistent counts)."""
    (s_parent, s_label, s_word, s_cstart, s_children, s_lp, s_kept_lo, s_kept_hi, cand_start, cands,
     t_label, t_word, t_cstart, t_children, t_lp, t_depth, log_beta, log_stop, n_labels) = G
    p = s_parent[i]
    while a[p] == UNAL:
        p = s_parent[p]
    h, l, c, _w = frag(p, a, s_label, s_word, s_cstart, s_children, s_lp, t_label, t_word, t_cstart, t_children,
                       t_lp, log_beta, log_stop, n_labels, stack, ftgt)
    if not count_rule(tkey, tcount, tlp, tcat, trep, tsize, ncat, h, l, c, p, -1):
        return -1
    if a[i] != UNAL:
        h, l, c, _w = frag(i, a, s_label, s_word, s_cstart, s_children, s_lp, t_label, t_word, t_cstart,
                           t_children, t_lp, log_beta, log_stop, n_labels, stack, ftgt)
        if not count_rule(tkey, tcount, tlp, tcat, trep, tsize, ncat, h, l, c, i, -1):
            return -1
    return p


@numba.njit(cache=True)
def sweep_kernel(order, uniforms, temperature, a, G, T, ncat, alpha, stack, ftgt):
    """Resample a[i] for every i in `order`; returns the number of changed values, or -1 on a count error.
    T: the table's arrays (keys, counts, log P0, category, example root, size)."""
    tkey, tcount, tlp, tcat, trep, tsize = T
    n_opt_max = 64
    opts = np.empty(n_opt_max, dtype=np.int64)
    logw = np.empty(n_opt_max)
    hA = np.empty(n_opt_max, dtype=np.uint64)
    hB = np.empty(n_opt_max, dtype=np.uint64)
    lA = np.empty(n_opt_max)
    lB = np.empty(n_opt_max)
    cA = np.empty(n_opt_max, dtype=np.int64)
    cB = np.empty(n_opt_max, dtype=np.int64)
    changed = 0
    for pos in range(len(order)):
        i = order[pos]
        cur = a[i]
        if remove_site(i, a, G, tkey, tcount, tlp, tcat, trep, tsize, ncat, stack, ftgt) < 0:
            return -1
        n, i0 = option_weights(i, a, G, tkey, tcount, ncat, alpha, stack, ftgt, opts, logw, hA, lA, cA, hB, lB,
                               cB)
        k = _choose(logw, n, uniforms[pos], temperature)
        a[i] = opts[k]
        count_rule(tkey, tcount, tlp, tcat, trep, tsize, ncat, hA[k], lA[k], cA[k], i0, 1)
        if opts[k] != UNAL:
            count_rule(tkey, tcount, tlp, tcat, trep, tsize, ncat, hB[k], lB[k], cB[k], i, 1)
        if opts[k] != cur:
            changed += 1
    return changed


@numba.njit(cache=True)
def add_all(a, G, aligned_nodes, T, ncat, stack, ftgt, by):
    """Add (by=+1) or remove (-1) the rules rooted at every aligned node in `aligned_nodes`; False on a count
    error."""
    tkey, tcount, tlp, tcat, trep, tsize = T
    (s_parent, s_label, s_word, s_cstart, s_children, s_lp, s_kept_lo, s_kept_hi, cand_start, cands,
     t_label, t_word, t_cstart, t_children, t_lp, t_depth, log_beta, log_stop, n_labels) = G
    for r in aligned_nodes:
        if a[r] == UNAL:
            continue
        h, l, c, _w = frag(r, a, s_label, s_word, s_cstart, s_children, s_lp, t_label, t_word, t_cstart,
                           t_children, t_lp, log_beta, log_stop, n_labels, stack, ftgt)
        if not count_rule(tkey, tcount, tlp, tcat, trep, tsize, ncat, h, l, c, r, by):
            return False
    return True
