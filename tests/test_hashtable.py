"""The core numba hash table (treegram.bayes.hashtable) against a dict: counts, category totals, live keys,
removal errors, rehash; and the key set."""

from __future__ import annotations

import numpy as np

from treegram.bayes import hashtable as ht


def test_table_matches_a_dict_under_random_adds_and_removes():
    rng = np.random.default_rng(0)
    keys = rng.integers(1, 2**63, size=40, dtype=np.uint64)
    keys[0] = 0  # the zero key is stored as 1
    table = ht.new_table(128)
    total = np.zeros(3, np.int64)
    ref: dict[int, int] = {}
    for _ in range(2000):
        j = int(rng.integers(len(keys)))
        k = ht.fix_key(keys[j])
        by = 1 if rng.random() < 0.6 else -1
        s = ht.table_add(*table, total, k, float(j), j % 3, j, by)
        if by < 0 and ref.get(int(k), 0) == 0:
            assert s == -1  # removing an absent key changes nothing
            continue
        ref[int(k)] = ref.get(int(k), 0) + by
        if int(table[5][0]) > 48:  # keep the load low, as the samplers do between sweeps
            table = ht.rehash(*table, 128)
    tkeys, cnt, logb, cat = table[:4]
    want = np.zeros(3, np.int64)
    for j, key in enumerate(keys):
        n = ref.get(int(ht.fix_key(key)), 0)
        s = ht.table_find(tkeys, cnt, key)
        assert (s >= 0) == (n > 0)
        if n > 0:  # count, log P0 and category as registered
            assert cnt[s] == n and logb[s] == float(j) and cat[s] == j % 3
        want[j % 3] += n
    assert int(table[5][1]) == sum(1 for n in ref.values() if n > 0)  # live keys
    assert np.array_equal(total, want)


def test_rehash_keeps_live_entries_and_examples():
    table = ht.new_table(64)
    total = np.zeros(2, np.int64)
    for k in range(1, 20):
        ht.table_add(*table, total, np.uint64(k * 7919), -float(k), k % 2, 100 + k, 1)
    for k in range(1, 20, 2):
        ht.table_add(*table, total, np.uint64(k * 7919), -float(k), k % 2, 100 + k, -1)
    new = ht.rehash(*table, 128)
    assert len(new[0]) == 128 and int(new[5][0]) == int(new[5][1]) == 9
    for k in range(2, 20, 2):
        s = ht.table_find(new[0], new[1], np.uint64(k * 7919))
        assert s >= 0 and new[1][s] == 1 and new[2][s] == -float(k) and new[4][s] == 100 + k
    no_examples = ht.new_table(16, examples=False)
    assert ht.table_add(*no_examples, total, np.uint64(5), 0.0, 0, 3, 1) >= 0 and len(no_examples[4]) == 0


def test_key_set():
    pk = np.zeros(64, np.uint64)
    assert ht.set_insert(pk, np.uint64(0)) == 1 and ht.set_insert(pk, np.uint64(1)) == 0  # 0 is stored as 1
    assert ht.set_insert(pk, np.uint64(77)) == 1
    assert ht.set_contains(pk, np.uint64(77)) and not ht.set_contains(pk, np.uint64(78))
    assert ht.capacity_for(10) == 64 and ht.capacity_for(100) == 256
