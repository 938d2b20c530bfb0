"""The one open-addressing hash table of the numba samplers: 64-bit keys of elementary structures -> DP counts.

The samplers (TSG, STSG) identify an elementary tree (pair) by a 64-bit hash of its canonical token sequence and
keep its count, log base probability P0, category and an example root in parallel numpy arrays indexed by a slot:

    keys[s]   uint64   0 = empty slot (a key is never 0: `fix_key` maps 0 to 1)
    cnt[s]    int64    the count n_e (may drop to 0: the entry stays, with its P0, until the table is rebuilt)
    logb[s]   float64  log P0(e)
    cat[s]    int      the category c of e (one DP per category)
    rep[s]    int64    a node rooting an occurrence of e (the latest one added); a table without examples passes an
                       empty `rep` array
    size      int64[1 or 2]  size[0] = occupied slots; size[1] (if present) = live keys, i.e. with count > 0
    total[c]  int64    n_c, the count of category c

Linear probing over a power-of-two array; nothing is ever deleted inside a kernel (slots stay valid, so callers may
hold slot numbers during a sweep).  The owner keeps the load below 1/2 by rebuilding between sweeps: `rehash`
copies the live entries (count > 0) into fresh arrays (`capacity_for` gives a size with room for the insertions a
sweep can make).  A set of keys (prefix hashes of the TSG blocked sampler) uses the same probing: `set_insert`,
`set_contains`.

Collision policy: two different structures with one 64-bit key are counted as one type; with m distinct keys the
probability is about m^2 / 2^65 (the samplers' hashing docs say how they check).
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["EMPTY", "fix_key", "slot_of", "set_insert", "set_contains", "table_add", "table_find", "rehash",
           "capacity_for", "new_table"]

EMPTY = np.uint64(0)
_ONE = np.uint64(1)


@numba.njit(cache=True, inline="always")
def fix_key(k):
    """Keys are never 0 (0 marks an empty slot)."""
    return _ONE if k == EMPTY else k


@numba.njit(cache=True, inline="always")
def slot_of(keys, k):
    """The slot holding key k, or the empty slot where it would go (k != 0; the table must not be full)."""
    mask = np.uint64(keys.shape[0] - 1)
    i = np.int64(k & mask)
    m = keys.shape[0] - 1
    while True:
        kk = keys[i]
        if kk == k or kk == EMPTY:
            return i
        i = (i + 1) & m


@numba.njit(cache=True, inline="always")
def table_find(keys, cnt, k):
    """Slot of key k if it is present with a count > 0, else -1."""
    s = slot_of(keys, fix_key(k))
    if keys[s] == EMPTY or cnt[s] <= 0:
        return -1
    return s


@numba.njit(cache=True)
def set_insert(pkeys, h):
    """Add h to a key set; 1 if it was new."""
    h = fix_key(h)
    s = slot_of(pkeys, h)
    if pkeys[s] == EMPTY:
        pkeys[s] = h
        return 1
    return 0


@numba.njit(cache=True)
def set_contains(pkeys, h):
    return pkeys[slot_of(pkeys, fix_key(h))] != EMPTY


@numba.njit(cache=True, inline="always")
def table_add(keys, cnt, logb, cat, rep, size, total, k, lp, c, r, by):
    """Add `by` to the count of key k (k != 0), registering a new key with log P0 lp, category c and example root r.
    The category is a function of the key (the caller always passes the same c for a key).

    Returns the slot, or -1 (nothing changed) when the count would become negative (removing an absent key)."""
    s = slot_of(keys, k)
    has_rep = rep.shape[0] > 0
    if keys[s] == EMPTY:
        if by < 0:
            return -1
        keys[s] = k
        cnt[s] = 0
        logb[s] = lp
        cat[s] = c
        if has_rep:
            rep[s] = r
        size[0] += 1
    old = cnt[s]
    if old + by < 0:
        return -1
    cnt[s] = old + by
    total[c] += by
    if by > 0 and has_rep:
        rep[s] = r
    if size.shape[0] > 1:
        if old == 0 and by > 0:
            size[1] += 1
        elif old > 0 and old + by == 0:
            size[1] -= 1
    return s


@numba.njit(cache=True)
def _rehash(keys, cnt, logb, cat, rep, nkeys, ncnt, nlogb, ncat, nrep):
    live = 0
    for s in range(keys.shape[0]):
        if keys[s] != EMPTY and cnt[s] > 0:
            q = slot_of(nkeys, keys[s])
            nkeys[q] = keys[s]
            ncnt[q] = cnt[s]
            nlogb[q] = logb[s]
            ncat[q] = cat[s]
            if nrep.shape[0] > 0:
                nrep[q] = rep[s]
            live += 1
    return live


def capacity_for(entries: int) -> int:
    """A power of two >= 2 * entries + 16 (load factor below 1/2)."""
    n = 2 * int(entries) + 16
    return 1 << (n - 1).bit_length()


def new_table(capacity: int, cat_dtype=np.int64, live_count: bool = True, examples: bool = True):
    """Empty arrays (keys, cnt, logb, cat, rep, size) of a table with `capacity` slots (a power of two); without
    `examples`, `rep` is empty."""
    if capacity & (capacity - 1):
        raise ValueError("hash table capacity must be a power of two")
    return (np.zeros(capacity, np.uint64), np.zeros(capacity, np.int64), np.zeros(capacity, np.float64),
            np.zeros(capacity, cat_dtype), np.zeros(capacity if examples else 0, np.int64),
            np.zeros(2 if live_count else 1, np.int64))


def rehash(keys, cnt, logb, cat, rep, size, capacity: int):
    """The live entries (count > 0) copied into a fresh table of `capacity` slots; returns its six arrays (the
    category totals are unchanged: zero-count entries contribute nothing)."""
    nk, nc, nl, nt, nr, ns = new_table(capacity, cat.dtype, size.shape[0] > 1, rep.shape[0] > 0)
    live = _rehash(keys, cnt, logb, cat, rep, nk, nc, nl, nt, nr)
    ns[0] = live
    if ns.shape[0] > 1:
        ns[1] = live
    return nk, nc, nl, nt, nr, ns
