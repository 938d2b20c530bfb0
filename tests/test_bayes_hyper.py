"""Slice sampling and hyperparameter resampling reproduce known targets."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.bayes.dp import DPCounts
from treegram.bayes.hyper import (Beta, Gamma, resample_beta, resample_beta_slice, resample_concentrations,
                                  slice_sample, slice_sample_log, slice_sample_logit)
from treegram.errors import TreegramError


def _chain(update, x0, n):
    out = np.empty(n)
    x = x0
    for i in range(n):
        x = update(x)
        out[i] = x
    return out


def test_slice_sampler_reproduces_gamma_moments():
    target = Gamma(shape=3.0, scale=2.0)  # mean 6, variance 12
    rng = np.random.default_rng(0)
    plain = _chain(lambda x: slice_sample(target.logpdf, x, rng, width=2.0, lower=0.0), 1.0, 20000)
    on_log = _chain(lambda x: slice_sample_log(target.logpdf, x, rng), 1.0, 20000)
    for draws in (plain, on_log):
        assert draws.min() > 0
        assert draws.mean() == pytest.approx(6.0, rel=0.04)
        assert draws.var() == pytest.approx(12.0, rel=0.1)


def test_slice_sampler_reproduces_beta_moments_and_respects_bounds():
    a, b = 2.0, 5.0
    mean, var = a / (a + b), a * b / ((a + b) ** 2 * (a + b + 1))
    rng = np.random.default_rng(1)
    target = Beta(a, b)
    logit = _chain(lambda x: slice_sample_logit(target.logpdf, x, rng), 0.5, 20000)
    bounded = _chain(lambda x: slice_sample(target.logpdf, x, rng, width=0.3, lower=0.0, upper=1.0), 0.5, 20000)
    for draws in (logit, bounded):
        assert 0 < draws.min() and draws.max() < 1
        assert draws.mean() == pytest.approx(mean, rel=0.03)
        assert draws.var() == pytest.approx(var, rel=0.1)


def test_slice_sampler_is_deterministic_by_seed():
    def draws(seed):
        rng = np.random.default_rng(seed)
        return _chain(lambda x: slice_sample(lambda v: -0.5 * v * v, x, rng), 0.0, 50)

    np.testing.assert_array_equal(draws(4), draws(4))
    assert not np.array_equal(draws(4), draws(5))
    with pytest.raises(TreegramError):
        slice_sample(lambda v: -math.inf, 0.0, np.random.default_rng(0))
    with pytest.raises(TreegramError):
        slice_sample_log(lambda v: 0.0, -1.0, np.random.default_rng(0))


def _crp_dp(alpha, n, seed, p0):
    """A DP table filled by a Chinese restaurant process with a finite base distribution p0."""
    rng = np.random.default_rng(seed)
    dp = DPCounts([alpha])
    ids = [dp.intern(("e", k), 0, math.log(p)) for k, p in enumerate(p0)]
    for _ in range(n):
        probs = np.array([math.exp(dp.log_predictive(k)) for k in ids])
        dp.increment(ids[rng.choice(len(ids), p=probs / probs.sum())])
    return dp


def _alpha_posterior_on_grid(dp, prior):
    """Posterior of alpha written out independently: prior x Gamma-function ratios of the CRP joint."""
    counts = dp.count.astype(float)
    base = np.exp(dp.log_base)
    n = counts.sum()
    grid = np.exp(np.linspace(math.log(0.05), math.log(500.0), 20001))
    logpost = np.array([
        prior.logpdf(a) + math.lgamma(a) - math.lgamma(a + n)
        + sum(math.lgamma(c + a * p) - math.lgamma(a * p) for c, p in zip(counts, base) if c > 0)
        for a in grid])
    w = np.exp(logpost - logpost.max()) * grid  # d(alpha) = alpha d(log alpha) on the log-spaced grid
    w /= w.sum()
    mean = float((w * grid).sum())
    return mean, float((w * (grid - mean) ** 2).sum())


def test_concentration_resampling_matches_exact_posterior():
    p0 = np.full(40, 1 / 40)
    dp = _crp_dp(alpha=4.0, n=150, seed=2, p0=p0)
    prior = Gamma(shape=1.0, scale=10.0)
    mean, var = _alpha_posterior_on_grid(dp, prior)
    rng = np.random.default_rng(7)
    draws = np.array([resample_concentrations(dp, rng, prior=prior, iterations=1)[0] for _ in range(4000)])
    assert draws.mean() == pytest.approx(mean, abs=4 * math.sqrt(var / 4000))  # 4 standard errors
    assert draws.var() == pytest.approx(var, rel=0.15)
    # only the alpha-dependent part changed the joint: the DP's exact joint agrees with the category terms
    assert dp.category_log_joint(0) == pytest.approx(dp.log_joint())


def test_concentration_resampling_leaves_empty_categories_and_is_seeded():
    dp = _crp_dp(alpha=1.0, n=60, seed=3, p0=np.full(10, 0.1))
    empty = dp.add_category(2.5)
    a = resample_concentrations(dp, np.random.default_rng(1), iterations=3)
    b = dp.alpha.copy()
    assert a[empty] == 2.5 and a[0] != 1.0
    dp.alpha[0] = 1.0
    c = resample_concentrations(dp, np.random.default_rng(1), iterations=3)
    np.testing.assert_array_equal(b, c)


def test_beta_resampling_conjugate_and_slice_agree():
    rng = np.random.default_rng(11)
    s, f, a, b = 30, 12, 1.0, 1.0
    post_mean = (a + s) / (a + b + s + f)
    post_var = post_mean * (1 - post_mean) / (a + b + s + f + 1)
    direct = resample_beta(np.full(20000, s), np.full(20000, f), rng, a, b)
    assert direct.mean() == pytest.approx(post_mean, rel=0.01)
    assert direct.var() == pytest.approx(post_var, rel=0.06)
    assert isinstance(resample_beta(3, 4, rng), float)

    def loglik(x):  # Bernoulli successes/failures written as an arbitrary likelihood
        return s * math.log(x) + f * math.log1p(-x)

    sliced = _chain(lambda x: resample_beta_slice(loglik, x, rng, a=a, b=b), 0.5, 20000)
    assert sliced.mean() == pytest.approx(post_mean, rel=0.01)
    assert sliced.var() == pytest.approx(post_var, rel=0.1)
    with pytest.raises(TreegramError):
        resample_beta(-1, 2, rng)
