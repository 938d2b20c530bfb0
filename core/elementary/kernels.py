"""numba kernels of the TSG sampler: elementary-tree hashing, a count table keyed by those hashes, the Gibbs sweep,
the collapsed joint, and the per-tree pieces of the blocked sampler.

Trees are `TreebankArrays` rows (pre-order, words are leaf rows with label -1).  The derivation state is one
int8 flag per row: 1 = the node is the root of an elementary tree (a substitution site, or a tree root), 0 = it
is internal to the elementary tree above it.  Word rows always hold 0.

Elementary-tree keys.  An elementary tree is walked in pre-order from its root; every node it contains emits a
token: an *internal* nonterminal (label + arity), a *frontier* nonterminal (label) or a word.  Tokens are fixed
random 64-bit values (`token_tables`); the running state is ``h <- mix64(h + token)`` starting from `SEED`, and
the key is ``mix64(h ^ FINAL)`` (never 0).  Because pre-order plus arities determines a tree, equal trees get equal
keys; the running states are the *prefix hashes* the blocked sampler uses to enumerate the cached elementary trees
that match a training tree without trying every cut.

Collision policy: two different elementary trees sharing a 64-bit key would be counted as one type.  With the
murmur3 finaliser as the mixing step the probability is about m^2 / 2^65 for m distinct trees (m = 10^6 gives
3e-8); `TSGState.check_collisions()` verifies a state exhaustively (it rebuilds every type's bracket string), the
tests run it, and grammar extraction refuses a state with a collision.

The count table is the core's (`treegram.bayes.hashtable`: open addressing with linear probing over power-of-two
arrays, key 0 = empty slot).  Entries whose count drops to 0 stay; the table is rebuilt from the flags at the start
of every sweep with room for every insertion the sweep can make, so it never fills up inside a kernel.
"""

from __future__ import annotations

import math

import numba
import numpy as np

from treegram.bayes.dp import log_normaliser, log_predictive, log_rising
# the count table and the prefix-key set: the core hash table (treegram.bayes.hashtable)
from treegram.bayes.hashtable import set_contains, set_insert, slot_of, table_add  # noqa: F401

SEED = np.uint64(0x9E3779B97F4A7C15)
FINAL = np.uint64(0xD6E8FEB86659FD93)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)


@numba.njit(cache=True)
def mix64(x):
    x ^= x >> _S33
    x *= _C1
    x ^= x >> _S33
    x *= _C2
    x ^= x >> _S33
    return x


def token_tables(num_labels: int, num_words: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Random-looking 64-bit tokens: internal label (by label id and arity 1/2), frontier label, word."""

    def salted(ids, salt):
        x = (np.asarray(ids, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)) ^ np.uint64(salt)
        with np.errstate(over="ignore"):
            x ^= x >> np.uint64(30)
            x *= np.uint64(0xBF58476D1CE4E5B9)
            x ^= x >> np.uint64(27)
            x *= np.uint64(0x94D049BB133111EB)
            x ^= x >> np.uint64(31)
        return x

    lab = np.arange(num_labels)
    internal = np.stack([salted(lab, 0x1111), salted(lab, 0x2222), salted(lab, 0x3333)], axis=1)  # arity 0..2
    frontier = salted(lab, 0x4444)
    words = salted(np.arange(num_words), 0x5555)
    return internal, frontier, words


# ----------------------------------------------------------------------------------------------------------------
# elementary trees


_WORD, _FRONTIER, _INTERNAL = 0, 1, 2


@numba.njit(cache=True)
def frag_step(i, h, flags, is_word, subtree_end, tok_int, tok_front):
    """Row i in the pre-order walk of an elementary tree: (running hash with its token, next row, kind).

    kind: _WORD, _FRONTIER (a substitution site: its subtree belongs to other elementary trees and is skipped) or
    _INTERNAL.  The one definition of the token sequence behind both the keys (`frag`) and the prefix hashes
    (`frag_prefixes`), which must agree."""
    if is_word[i]:
        return mix64(h + tok_int[i]), i + 1, _WORD
    if flags[i]:
        return mix64(h + tok_front[i]), subtree_end[i], _FRONTIER
    return mix64(h + tok_int[i]), i + 1, _INTERNAL


@numba.njit(cache=True)
def frag(r, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule, log_stop, log_expand):
    """(key, log P0, size) of the elementary tree rooted at row r under `flags` (r itself is always the root)."""
    h = mix64(SEED + tok_int[r])
    lp = node_logrule[r]
    end = subtree_end[r]
    i = r + 1
    size = 1
    while i < end:
        h, nxt, kind = frag_step(i, h, flags, is_word, subtree_end, tok_int, tok_front)
        if kind == _FRONTIER:
            lp += log_stop[label[i]]
        elif kind == _INTERNAL:
            lp += node_logrule[i] + log_expand[label[i]]
        i = nxt
        size += 1
    key = mix64(h ^ FINAL)
    if key == _ZERO:
        key = _ONE
    return key, lp, size


@numba.njit(cache=True)
def frag_prefixes(r, flags, is_word, subtree_end, tok_int, tok_front, pkeys):
    """Insert every prefix state of the elementary tree at r into the hash set `pkeys`; returns #new entries."""
    h = mix64(SEED + tok_int[r])
    added = set_insert(pkeys, h)
    end = subtree_end[r]
    i = r + 1
    while i < end:
        h, i, _ = frag_step(i, h, flags, is_word, subtree_end, tok_int, tok_front)
        added += set_insert(pkeys, h)
    return added


@numba.njit(cache=True)
def log_pred(keys, cnt, total, alpha, k, lp, c, extra, extra_c):
    """The DP predictive (`treegram.bayes.dp.log_predictive`) of key k with `extra` / `extra_c` occurrences of
    the key / its category added to the table's counts."""
    s = slot_of(keys, k)
    n = extra
    if keys[s] != _ZERO:
        n += cnt[s]
    return log_predictive(n, total[c] + extra_c, alpha[c], lp)


@numba.njit(cache=True)
def log_joint(keys, cnt, logb, cat, total, alpha):
    """The exact collapsed joint of the table (`treegram.bayes.dp`'s terms)."""
    out = 0.0
    for c in range(alpha.shape[0]):
        if total[c] > 0:
            out += log_normaliser(alpha[c], total[c])
    for s in range(keys.shape[0]):
        if keys[s] != _ZERO and cnt[s] > 0:
            out += log_rising(math.log(alpha[cat[s]]) + logb[s], cnt[s])
    return out


@numba.njit(cache=True)
def rebuild(flags, is_word, parent, subtree_end, label, tok_int, tok_front, node_logrule, log_stop, log_expand,
            keys, cnt, logb, cat, rep, size, total, pkeys, with_prefixes):
    """Count every elementary tree of the current state into an empty table (and prefix set)."""
    n = flags.shape[0]
    for i in range(n):
        if is_word[i] or not flags[i]:
            continue
        k, lp, _ = frag(i, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule, log_stop,
                        log_expand)
        table_add(keys, cnt, logb, cat, rep, size, total, k, lp, label[i], i, 1)
        if with_prefixes:
            frag_prefixes(i, flags, is_word, subtree_end, tok_int, tok_front, pkeys)


# ----------------------------------------------------------------------------------------------------------------
# Gibbs


@numba.njit(cache=True)
def gibbs_sweep(sites, u, temperature, flags, is_word, parent, subtree_end, label, tok_int, tok_front,
                node_logrule, log_stop, log_expand, keys, cnt, logb, cat, rep, size, total, alpha):
    """Resample the flag of every row in `sites` (in that order) from its exact collapsed conditional.

    u: one uniform per site.  Returns the number of changed flags, or -1 on a count error."""
    changed = 0
    for t in range(sites.shape[0]):
        s = sites[t]
        r = parent[s]
        while not flags[r]:
            r = parent[r]
        old = flags[s]
        flags[s] = 1
        k_top, lp_top, _ = frag(r, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule,
                                log_stop, log_expand)
        k_bot, lp_bot, _ = frag(s, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule,
                                log_stop, log_expand)
        flags[s] = 0
        k_join, lp_join, _ = frag(r, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule,
                                  log_stop, log_expand)
        c_r = label[r]
        c_s = label[s]
        if old:
            if table_add(keys, cnt, logb, cat, rep, size, total, k_top, lp_top, c_r, r, -1) < 0:
                return -1
            if table_add(keys, cnt, logb, cat, rep, size, total, k_bot, lp_bot, c_s, s, -1) < 0:
                return -1
        else:
            if table_add(keys, cnt, logb, cat, rep, size, total, k_join, lp_join, c_r, r, -1) < 0:
                return -1
        w_join = log_pred(keys, cnt, total, alpha, k_join, lp_join, c_r, 0, 0)
        same = 1 if k_bot == k_top else 0
        same_c = 1 if c_s == c_r else 0
        w_split = (log_pred(keys, cnt, total, alpha, k_top, lp_top, c_r, 0, 0)
                   + log_pred(keys, cnt, total, alpha, k_bot, lp_bot, c_s, same, same_c))
        if temperature == 0.0:
            if w_split == w_join:
                new = 1 if u[t] < 0.5 else 0
            else:
                new = 1 if w_split > w_join else 0
        else:
            d = (w_join - w_split) / temperature
            p1 = 1.0 / (1.0 + math.exp(d)) if d < 700.0 else 0.0
            new = 1 if u[t] < p1 else 0
        if new:
            table_add(keys, cnt, logb, cat, rep, size, total, k_top, lp_top, c_r, r, 1)
            table_add(keys, cnt, logb, cat, rep, size, total, k_bot, lp_bot, c_s, s, 1)
        else:
            table_add(keys, cnt, logb, cat, rep, size, total, k_join, lp_join, c_r, r, 1)
        flags[s] = new
        if new != old:
            changed += 1
    return changed


# ----------------------------------------------------------------------------------------------------------------
# per-tree helpers (blocked sampler, log-likelihood checks)


@numba.njit(cache=True)
def tree_frags(lo, hi, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule, log_stop,
               log_expand):
    """Keys, log P0, categories and root rows of the elementary trees of rows lo..hi-1, in pre-order."""
    m = 0
    for i in range(lo, hi):
        if flags[i] and not is_word[i]:
            m += 1
    ks = np.empty(m, np.uint64)
    lps = np.empty(m, np.float64)
    cs = np.empty(m, np.int64)
    roots = np.empty(m, np.int64)
    j = 0
    for i in range(lo, hi):
        if flags[i] and not is_word[i]:
            k, lp, _ = frag(i, flags, is_word, subtree_end, label, tok_int, tok_front, node_logrule, log_stop,
                            log_expand)
            ks[j] = k
            lps[j] = lp
            cs[j] = label[i]
            roots[j] = i
            j += 1
    return ks, lps, cs, roots


@numba.njit(cache=True)
def add_frags(ks, lps, cs, roots, by, keys, cnt, logb, cat, rep, size, total):
    for j in range(ks.shape[0]):
        if table_add(keys, cnt, logb, cat, rep, size, total, ks[j], lps[j], cs[j], roots[j], by) < 0:
            return -1
    return 0


@numba.njit(cache=True)
def seq_log_pred(ks, lps, cs, keys, cnt, total, alpha):
    """log P(e_1, ..., e_m | counts): each predictive sees the earlier ones added (exchangeable sequence)."""
    out = 0.0
    m = ks.shape[0]
    for j in range(m):
        extra = 0
        extra_c = 0
        for i in range(j):
            if ks[i] == ks[j]:
                extra += 1
            if cs[i] == cs[j]:
                extra_c += 1
        out += log_pred(keys, cnt, total, alpha, ks[j], lps[j], cs[j], extra, extra_c)
    return out


@numba.njit(cache=True)
def indep_log_pred(ks, lps, cs, keys, cnt, total, alpha):
    """sum_j log P(e_j | counts) with no sequence effect (the CFG-transform proposal's weight)."""
    out = 0.0
    for j in range(ks.shape[0]):
        out += log_pred(keys, cnt, total, alpha, ks[j], lps[j], cs[j], 0, 0)
    return out


@numba.njit(cache=True)
def match_cached(x, is_word, subtree_end, tok_int, tok_front, pkeys, keys, cnt, out_key, out_slot, out_trail_ptr,
                 out_trail, n_out, n_trail):
    """Enumerate the cached elementary trees (count > 0) that match the tree below row x with root x.

    Depth-first over the cut choices of the subtree in pre-order, pruned by the prefix set.  Appends to the out
    arrays (key, table slot, CSR of internal rows in pre-order: root first) and returns the new (n_out, n_trail),
    or (-1, -1) when an out array is full (the caller grows it and retries)."""
    end = subtree_end[x]
    cap = subtree_end[x] - x + 1
    st_pos = np.empty(2 * cap + 2, np.int64)
    st_h = np.empty(2 * cap + 2, np.uint64)
    st_tl = np.empty(2 * cap + 2, np.int64)
    trail = np.empty(cap, np.int64)
    h0 = mix64(SEED + tok_int[x])
    if not set_contains(pkeys, h0):
        return n_out, n_trail
    trail[0] = x
    sp = 0
    st_pos[0] = x + 1
    st_h[0] = h0
    st_tl[0] = 1
    sp = 1
    while sp > 0:
        sp -= 1
        pos = st_pos[sp]
        h = st_h[sp]
        tl = st_tl[sp]
        dead = False
        while pos < end and is_word[pos]:
            h = mix64(h + tok_int[pos])
            pos += 1
            if not set_contains(pkeys, h):
                dead = True
                break
        if dead:
            continue
        if pos >= end:
            k = mix64(h ^ FINAL)
            if k == _ZERO:
                k = _ONE
            s = slot_of(keys, k)
            if keys[s] != _ZERO and cnt[s] > 0:
                if n_out >= out_key.shape[0] or n_trail + tl > out_trail.shape[0]:
                    return -1, -1
                out_key[n_out] = k
                out_slot[n_out] = s
                for q in range(tl):
                    out_trail[n_trail + q] = trail[q]
                n_trail += tl
                n_out += 1
                out_trail_ptr[n_out] = n_trail
            continue
        hf = mix64(h + tok_front[pos])
        if set_contains(pkeys, hf):
            st_pos[sp] = subtree_end[pos]
            st_h[sp] = hf
            st_tl[sp] = tl
            sp += 1
        hi_ = mix64(h + tok_int[pos])
        if set_contains(pkeys, hi_):
            trail[tl] = pos
            st_pos[sp] = pos + 1
            st_h[sp] = hi_
            st_tl[sp] = tl + 1
            sp += 1
    return n_out, n_trail


@numba.njit(cache=True)
def fragment_nodes(r, flags, is_word, subtree_end):
    """The nonterminal rows below the root row r of the elementary tree at r, in pre-order, and whether each is a
    frontier node (a substitution site, `flags` set: its subtree belongs to other elementary trees); words are
    left out."""
    end = subtree_end[r]
    rows = np.empty(end - r, np.int64)
    front = np.empty(end - r, np.int64)
    m = 0
    i = r + 1
    while i < end:
        if is_word[i]:
            i += 1
            continue
        rows[m] = i
        if flags[i]:
            front[m] = 1
            i = subtree_end[i]
        else:
            front[m] = 0
            i += 1
        m += 1
    return rows[:m], front[:m]


@numba.njit(cache=True)
def type_label_counts(slots, rep, flags, is_word, subtree_end, label):
    """COO (type index, label, frontier?) for every nonterminal of each type's example elementary tree
    (root excluded: it takes no stop/expand decision)."""
    m = 0
    for j in range(slots.shape[0]):
        m += fragment_nodes(rep[slots[j]], flags, is_word, subtree_end)[0].shape[0]
    t_idx = np.empty(m, np.int64)
    t_lab = np.empty(m, np.int64)
    t_front = np.empty(m, np.int64)
    q = 0
    for j in range(slots.shape[0]):
        rows, front = fragment_nodes(rep[slots[j]], flags, is_word, subtree_end)
        for k in range(rows.shape[0]):
            t_idx[q] = j
            t_lab[q] = label[rows[k]]
            t_front[q] = front[k]
            q += 1
    return t_idx, t_lab, t_front


@numba.njit(cache=True)
def beta_group_loglik(log_a, logb, n, k_front, m_int, d_stop, d_expand):
    """Alpha/beta-dependent joint terms of a group of types after shifting log P0 by k d_stop + m d_expand."""
    out = 0.0
    for j in range(n.shape[0]):
        out += log_rising(log_a[j] + logb[j] + k_front[j] * d_stop + m_int[j] * d_expand, n[j])
    return out


@numba.njit(cache=True)
def match_tree(lo, hi, kind, is_word, subtree_end, tok_int, tok_front, pkeys, keys, cnt, out_key, out_slot,
               out_trail_ptr, out_trail):
    """`match_cached` for every nonterminal row of rows lo..hi-1; (n_out, n_trail) or (-1, -1) when full."""
    n_out = 0
    n_trail = 0
    for x in range(lo, hi):
        if kind[x] < 0:
            continue
        n_out, n_trail = match_cached(x, is_word, subtree_end, tok_int, tok_front, pkeys, keys, cnt, out_key,
                                      out_slot, out_trail_ptr, out_trail, n_out, n_trail)
        if n_out < 0:
            return -1, -1
    return n_out, n_trail
