"""DPCounts: predictive formula, sequence predictive, exact collapsed joint, persistence, numba access."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest

from treegram.bayes.dp import (CountError, DPCounts, KeyTable, decode_key, encode_key, nb_decrement, nb_increment,
                               nb_log_predictive)
from treegram.errors import ModelFileError, TreegramError
from treegram.io import load_bundle, save_bundle


def _random_dp(rng, n_keys=30, alphas=(0.7, 3.0, 12.0)):
    dp = DPCounts(alphas, capacity=4)  # tiny capacity: exercises growth
    for k in range(n_keys):
        dp.intern(("t", k, ("x", k % 3)), k % len(alphas), float(np.log(rng.uniform(1e-4, 0.5))))
    return dp


def test_predictive_matches_hand_computation():
    dp = DPCounts([2.0])
    e = dp.intern(("NP", "DT", "NN"), 0, math.log(0.25))
    f = dp.intern(("NP", "NNP"), 0, math.log(0.1))
    for _ in range(3):
        dp.increment(e)
    dp.increment(f)
    dp.increment(f)
    # (n_e + alpha P0) / (n_c + alpha) = (3 + 0.5) / (5 + 2)
    assert dp.log_predictive(e) == pytest.approx(math.log(3.5 / 7.0), abs=1e-12)
    assert dp.log_predictive(f) == pytest.approx(math.log(2.2 / 7.0), abs=1e-12)
    assert dp.total.tolist() == [5]
    np.testing.assert_allclose(dp.log_predictive_many([e, f, e]), [math.log(0.5), math.log(2.2 / 7), math.log(0.5)])


def test_log_joint_equals_product_of_sequential_predictives_in_any_order():
    rng = np.random.default_rng(0)
    dp = _random_dp(rng)
    seq = rng.integers(0, dp.num_keys, size=200)
    seq = np.concatenate([seq, np.repeat(seq[:5], 6)])  # heavy reuse of a few keys
    expected = 0.0
    for kid in seq:
        expected += dp.log_predictive(int(kid))
        dp.increment(int(kid))
    assert dp.log_joint() == pytest.approx(expected, rel=1e-11, abs=1e-9)
    # exchangeability: another order gives the same joint
    dp2 = DPCounts(dp.alpha)
    for k in range(dp.num_keys):
        dp2.intern(dp.key(k), int(dp.category_of[k]), float(dp.log_base[k]))
    total = 0.0
    for kid in rng.permutation(seq):
        total += dp2.log_predictive(int(kid))
        dp2.increment(int(kid))
    assert total == pytest.approx(expected, rel=1e-11, abs=1e-9)
    assert sum(dp.category_log_joint(c) for c in range(dp.num_categories)) == pytest.approx(dp.log_joint())


@pytest.mark.parametrize("length", [2, 5, 40])  # short (python) and long (vectorised) paths
def test_sequence_predictive_equals_adding_one_by_one(length):
    rng = np.random.default_rng(length)
    dp = _random_dp(rng, n_keys=8)
    for kid in rng.integers(0, 8, size=25):
        dp.increment(int(kid))
    before = dp.count.copy(), dp.total.copy()
    ids = rng.integers(0, 8, size=length)
    ids[1] = ids[0]  # a repeated key within the sequence
    got = dp.log_predictive_sequence(ids)
    np.testing.assert_array_equal(dp.count, before[0])  # counts untouched
    np.testing.assert_array_equal(dp.total, before[1])
    expected = 0.0
    for kid in ids:
        expected += dp.log_predictive(int(kid))
        dp.increment(int(kid))
    assert got == pytest.approx(expected, rel=1e-12, abs=1e-10)
    # and differs from the independent predictives (the sequence effect is real)
    dp.decrement_many(ids)
    assert abs(dp.log_predictive_many(ids).sum() - got) > 1e-6


def test_tiny_base_probabilities_do_not_underflow():
    dp = DPCounts([1.5])
    big = dp.intern("huge-tree", 0, -2000.0)  # P0 = e^-2000, far below float64's range
    small = dp.intern("rule", 0, math.log(0.5))
    assert dp.log_predictive(big) == pytest.approx(math.log(1.5) - 2000.0 - math.log(1.5))
    seq = [small, big, big, small, big]
    expected = 0.0
    for kid in seq:
        expected += dp.log_predictive(kid)
        dp.increment(kid)
    assert math.isfinite(expected)
    assert dp.log_joint() == pytest.approx(expected, rel=1e-12)
    # second use of the huge tree: (1 + tiny) / (n + alpha), essentially log(1 / 2.5)
    dp.decrement(big)
    assert dp.log_predictive(big) == pytest.approx(math.log(2 / 5.5), rel=1e-12)


def test_decrement_below_zero_raises_and_leaves_counts():
    dp = DPCounts([1.0])
    e = dp.intern("e", 0, -1.0)
    dp.increment(e)
    dp.decrement(e)
    with pytest.raises(CountError):
        dp.decrement(e)
    with pytest.raises(CountError):
        dp.decrement_many([e])
    assert dp.count.tolist() == [0] and dp.total.tolist() == [0]
    dp.increment_many([e, e, e])
    dp.decrement_many([e, e])
    assert dp.count.tolist() == [1] and dp.total.tolist() == [1]
    dp.check()


def test_intern_calls_base_once_and_checks_category():
    dp = DPCounts([1.0, 1.0])
    calls = []

    def base():
        calls.append(1)
        return -3.0

    a = dp.intern(("A", 1), 1, base)
    assert dp.intern(("A", 1), 1, base) == a
    assert len(calls) == 1
    with pytest.raises(TreegramError):
        dp.intern(("A", 1), 0, base)
    with pytest.raises(TreegramError):
        dp.intern("B", 5, -1.0)
    with pytest.raises(TreegramError):
        dp.intern("C", 0, 0.5)  # not a log-probability
    c = dp.add_category(4.0)
    assert dp.intern("D", c, -1.0) == 1 and dp.alpha.tolist() == [1.0, 1.0, 4.0]
    assert dp.key_id("nope") == -1


def test_state_dict_round_trip_through_bundle(tmp_path):
    rng = np.random.default_rng(3)
    dp = _random_dp(rng)
    dp.intern(b"\x00raw", 1, -2.0)
    dp.intern(("S", ("NP", ("DT", "the")), 7, None), 2, -9.5)
    for kid in rng.integers(0, dp.num_keys, size=100):
        dp.increment(int(kid))
    state = dp.state_dict()
    arrays = {k: v for k, v in state.items() if isinstance(v, np.ndarray)}
    meta = {k: v for k, v in state.items() if not isinstance(v, np.ndarray)}
    save_bundle(tmp_path / "dp.bundle", meta, arrays)
    meta2, arrays2 = load_bundle(tmp_path / "dp.bundle")
    back = DPCounts.from_state_dict({**meta2, **arrays2})
    assert back.keys.keys() == dp.keys.keys()
    assert back.key_id(("S", ("NP", ("DT", "the")), 7, None)) == dp.num_keys - 1
    assert back.key_id(b"\x00raw") == dp.num_keys - 2
    assert back.log_joint() == dp.log_joint()
    np.testing.assert_array_equal(back.count, dp.count)
    np.testing.assert_array_equal(back.total, dp.total)
    back.increment(0)  # still growable / usable
    bad = dict(state, total=state["total"] + 1)
    with pytest.raises(ModelFileError):
        DPCounts.from_state_dict(bad)


def test_key_encoding():
    key = ("VP", ("VBD", "saw"), 3, -1, b"ab", 2.5, True)
    assert decode_key(encode_key(key)) == key
    with pytest.raises(TypeError):
        encode_key(("x", {1, 2}))
    table = KeyTable([("a",), ("b", 1)])
    assert KeyTable.from_json(table.to_json()).keys() == [("a",), ("b", 1)]


@numba.njit(cache=True)
def _kernel_add_and_score(count, total, category_of, log_base, alpha, ids):
    out = 0.0
    for k in ids:
        out += nb_log_predictive(count, total, category_of, log_base, alpha, k)
        nb_increment(count, total, category_of, k)
    nb_decrement(count, total, category_of, ids[0])
    return out


def test_numba_kernel_updates_counts_in_place():
    rng = np.random.default_rng(5)
    dp = _random_dp(rng, n_keys=10)
    ids = rng.integers(0, 10, size=30).astype(np.int64)
    expected = dp.log_predictive_sequence(ids)
    a = dp.arrays()
    got = _kernel_add_and_score(a.count, a.total, a.category_of, a.log_base, a.alpha, ids)
    assert got == pytest.approx(expected, rel=1e-12)
    counts = np.bincount(ids, minlength=10)
    counts[ids[0]] -= 1
    np.testing.assert_array_equal(dp.count, counts)
    dp.check()  # totals were kept consistent by the kernel
    empty = dp.arrays()
    dp.decrement_many(np.repeat(np.arange(10), dp.count))
    with pytest.raises(ValueError):
        nb_decrement(empty.count, empty.total, empty.category_of, 0)


def test_one_predictive_formula_in_log_space():
    """`log_predictive` is the formula every sampler calls: exact against the closed form, and finite when
    alpha P0 underflows float64 (a new elementary tree with log P0 = -900: log alpha + log P0, not log 0)."""
    from treegram.bayes.dp import log_normaliser, log_predictive, log_rising

    assert log_predictive(3, 10, 2.0, math.log(0.25)) == pytest.approx(math.log((3 + 2.0 * 0.25) / (10 + 2.0)))
    assert log_predictive(0, 10, 2.0, -900.0) == pytest.approx(math.log(2.0) - 900.0 - math.log(12.0))
    assert log_predictive(4, 10, 2.0, -900.0) == pytest.approx(math.log(4 / 12.0))
    a = 0.7
    assert log_rising(math.log(a), 5) == pytest.approx(math.lgamma(5 + a) - math.lgamma(a))
    assert log_rising(math.log(a), 40) == pytest.approx(math.lgamma(40 + a) - math.lgamma(a))
    assert log_rising(-900.0, 3) == pytest.approx(-900.0 + math.log(2.0))  # a -> 0: log a + log (n-1)!
    assert log_normaliser(a, 7) == pytest.approx(math.lgamma(a) - math.lgamma(a + 7))
