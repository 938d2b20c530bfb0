"""Paired significance tests: exact enumeration as a reference, limiting cases, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from treegram.errors import InputError
from treegram.evaluation import (
    approximate_randomization,
    paired_bootstrap,
    paired_parseval_counts,
    parseval_f1,
    score_corpus,
)
from treegram.evaluation import parseval as pv


def _counts(rng: np.random.Generator, n: int, skill: float) -> np.ndarray:
    gold = rng.integers(5, 20, size=n)
    test = gold + rng.integers(-2, 3, size=n)
    matched = np.minimum(rng.binomial(gold, skill), test)
    return np.stack([matched, gold, test], axis=1)


def test_parseval_f1_by_hand():
    # matched 6, gold 10, test 10: P = R = 60 -> F1 = 60; matched 3, gold 4, test 6: 2*3/(4+6) = 60 as well
    assert parseval_f1(np.array([6, 10, 10])) == pytest.approx(60.0)
    assert np.allclose(parseval_f1(np.array([[6, 10, 10], [3, 4, 6], [0, 0, 0]])), [60.0, 60.0, 0.0])


def test_identical_systems_give_p_one():
    counts = _counts(np.random.default_rng(0), 40, 0.8)
    ar = approximate_randomization(counts, counts, metric=parseval_f1, trials=500, rng=1)
    bs = paired_bootstrap(counts, counts, metric=parseval_f1, samples=500, rng=1)
    assert ar.p_value == 1.0 and ar.difference == 0.0
    assert bs.p_value == 1.0 and bs.difference == 0.0
    p, diff = ar  # unpacks as (p_value, difference)
    assert (p, diff) == (1.0, 0.0)


def test_very_different_systems_give_small_p():
    rng = np.random.default_rng(5)
    good, bad = _counts(rng, 60, 0.95), _counts(rng, 60, 0.4)
    trials = 2000
    ar = approximate_randomization(good, bad, metric=parseval_f1, trials=trials, rng=2)
    assert ar.difference > 30
    assert ar.p_value == pytest.approx(1 / (trials + 1))  # no shuffle comes close; +1 correction keeps p > 0
    bs = paired_bootstrap(good, bad, metric=parseval_f1, samples=trials, rng=2)
    assert bs.p_value < 0.01
    low, high = bs.confidence_interval
    assert 0 < low < bs.difference < high


def test_seed_determinism():
    rng = np.random.default_rng(9)
    a, b = _counts(rng, 30, 0.8), _counts(rng, 30, 0.75)  # a borderline pair, so p is not pinned to 1/(T+1)
    runs = [approximate_randomization(a, b, metric=parseval_f1, trials=3000, rng=seed) for seed in (4, 4, 5)]
    assert runs[0] == runs[1]
    assert 0.001 < runs[0].p_value < 1.0
    boots = [paired_bootstrap(a, b, metric=parseval_f1, samples=3000, rng=np.random.default_rng(s)) for s in (4, 4)]
    assert boots[0] == boots[1]


def test_approximate_randomization_matches_exact_permutation_test():
    rng = np.random.default_rng(11)
    n = 10
    a, b = _counts(rng, n, 0.85), _counts(rng, n, 0.7)
    observed = parseval_f1(a.sum(0)) - parseval_f1(b.sum(0))
    hits = 0
    for mask in itertools.product((0, 1), repeat=n):  # all 1024 swap patterns
        m = np.array(mask, dtype=bool)[:, None]
        sa, sb = np.where(m, b, a).sum(0), np.where(m, a, b).sum(0)
        hits += abs(parseval_f1(sa) - parseval_f1(sb)) >= abs(observed) - 1e-9
    exact_p = hits / 2**n
    ar = approximate_randomization(a, b, metric=parseval_f1, trials=20000, rng=0)
    assert ar.difference == pytest.approx(observed)
    assert 0.02 < exact_p < 0.98  # the case is informative
    assert ar.p_value == pytest.approx(exact_p, abs=0.02)  # 20k trials: standard error < 0.004


def test_scalar_items_use_the_mean():
    a = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    b = np.array([0.0, 0.0, 1.0, 0.0, 0.0, 1.0])
    ar = approximate_randomization(a, b, trials=200, rng=3)
    assert ar.difference == pytest.approx(4 / 6 - 2 / 6)
    # exact: only items 0 and 3 differ; |diff| stays 2/6 unless exactly one of them is swapped (then 0) -> p = 1/2
    assert ar.p_value == pytest.approx(0.5, abs=0.1)


def test_bad_input_is_rejected():
    with pytest.raises(InputError):
        approximate_randomization([1, 2, 3], [1, 2], rng=0)
    with pytest.raises(InputError):
        approximate_randomization(np.ones((4, 3)), np.ones((4, 3)), rng=0)  # counts but no metric
    with pytest.raises(InputError):
        paired_bootstrap([1.0], [2.0], rng="seed")
    with pytest.raises(InputError):
        paired_bootstrap([1.0], [2.0], samples=0, rng=0)
    with pytest.raises(InputError):
        approximate_randomization([], [], rng=0)


def test_paired_parseval_counts_keeps_sentences_scored_in_both():
    T = lambda s: pv._parse_line(s, "t")  # noqa: E731
    golds = [T("(S (NP (PRP I)) (VP (VBD ran)))"), T("(S (NP (DT a) (NN b)) (VP (VBZ c)))"), T("(S (NN x))")]
    sys_a = [golds[0], T("(S (X (DT a)) (Y (NN b) (VBZ c)))"), golds[2]]
    sys_b = [T("(S (NP (PRP I) (VBD ran)))"), golds[1], T("(S (NN y))")]  # last: word mismatch -> error
    ra, rb = score_corpus(golds, sys_a), score_corpus(golds, sys_b)
    ca, cb = paired_parseval_counts(ra, rb)
    assert ca.tolist() == [[3, 3, 3], [1, 3, 3]]
    assert cb.tolist() == [[1, 3, 2], [3, 3, 3]]
    res = approximate_randomization(ca, cb, metric=parseval_f1, trials=100, rng=0)
    # a: 4/6 matched vs 6 gold, 6 test -> 66.67; b: 4 matched, 6 gold, 5 test -> 2*4/11 = 72.73
    assert res.difference == pytest.approx(200 / 3 - 800 / 11)
