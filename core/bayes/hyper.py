"""Hyperparameter resampling: univariate slice sampling (Neal 2003, stepping out + shrinkage) and its uses.

DP concentrations alpha_c get a vague Gamma prior and are slice-sampled on the log scale from the exact collapsed
joint of their category; Bernoulli parameters such as the TSG stop probabilities beta_c get a Beta prior and are
either drawn conjugately (when they appear only through success/failure counts) or slice-sampled on the logit
scale from an arbitrary log-likelihood (when they also appear inside the base distribution P0).
"""

from __future__ import annotations

import math
from typing import Callable, Iterable

import attrs
import numpy as np

from treegram.bayes.dp import DPCounts, _category_log_joint
from treegram.errors import TreegramError

__all__ = [
    "Beta",
    "Gamma",
    "resample_beta",
    "resample_beta_slice",
    "resample_concentrations",
    "slice_sample",
    "slice_sample_log",
    "slice_sample_logit",
]


@attrs.frozen
class Gamma:
    """Gamma(shape k, scale theta) prior; the default is vague (mean 1, variance 1e4)."""

    shape: float = 1e-4
    scale: float = 1e4

    def logpdf(self, x: float) -> float:
        if x <= 0:
            return -math.inf
        k, t = self.shape, self.scale
        return (k - 1.0) * math.log(x) - x / t - math.lgamma(k) - k * math.log(t)


@attrs.frozen
class Beta:
    """Beta(a, b) prior; Beta(1, 1) is uniform."""

    a: float = 1.0
    b: float = 1.0

    def logpdf(self, x: float) -> float:
        if not 0.0 < x < 1.0:
            return -math.inf
        a, b = self.a, self.b
        return ((a - 1.0) * math.log(x) + (b - 1.0) * math.log1p(-x)
                + math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b))


def slice_sample(logpdf: Callable[[float], float], x0: float, rng: np.random.Generator, *, width: float = 1.0,
                 max_steps: int = 32, lower: float = -math.inf, upper: float = math.inf,
                 max_shrink: int = 200) -> float:
    """One univariate slice-sampling update of x0 for the (unnormalised) log density `logpdf`.

    Draws a level under the density at x0, steps an interval of `width` out (at most `max_steps` steps in total,
    randomly split left/right, never beyond [lower, upper]) until both ends are outside the slice, then samples
    uniformly from the interval, shrinking it towards x0 on every rejection.  Leaves the target invariant.
    """
    if not lower < upper or not lower <= x0 <= upper:
        raise TreegramError(f"slice sampler start {x0} outside [{lower}, {upper}]")
    f0 = logpdf(x0)
    if not math.isfinite(f0):
        raise TreegramError(f"slice sampler start {x0} has log density {f0}",
                            hint="start from a point of positive density")
    level = f0 - rng.standard_exponential()  # log(u * p(x0)), u ~ U(0, 1)
    left = x0 - width * rng.random()
    right = left + width
    steps_left = int(max_steps * rng.random())
    steps_right = max_steps - 1 - steps_left
    while steps_left > 0 and left > lower and logpdf(left) > level:
        left -= width
        steps_left -= 1
    while steps_right > 0 and right < upper and logpdf(right) > level:
        right += width
        steps_right -= 1
    left = max(left, lower)
    right = min(right, upper)
    for _ in range(max_shrink):
        x1 = left + (right - left) * rng.random()
        if logpdf(x1) > level:
            return float(x1)
        if x1 < x0:
            left = x1
        else:
            right = x1
    return float(x0)  # interval collapsed onto x0 (numerically flat or degenerate density): keep the state


def slice_sample_log(logpdf: Callable[[float], float], x0: float, rng: np.random.Generator, *, width: float = 1.0,
                     max_steps: int = 32, lower: float = 0.0, upper: float = math.inf) -> float:
    """Slice-sample a positive parameter x on y = log x (scale-free steps; includes the Jacobian e^y)."""
    if not x0 > 0:
        raise TreegramError(f"positive parameter must start > 0, got {x0}")

    def on_log_scale(y: float) -> float:
        x = math.exp(y)
        if x <= 0 or math.isinf(x):
            return -math.inf
        return logpdf(x) + y

    lo = math.log(lower) if lower > 0 else -math.inf
    hi = math.log(upper) if math.isfinite(upper) else math.inf
    return math.exp(slice_sample(on_log_scale, math.log(x0), rng, width=width, max_steps=max_steps,
                                 lower=lo, upper=hi))


def _logit(p: float) -> float:
    return math.log(p) - math.log1p(-p)


def _sigmoid(y: float) -> float:
    return 1.0 / (1.0 + math.exp(-y)) if y >= 0 else math.exp(y) / (1.0 + math.exp(y))


def slice_sample_logit(logpdf: Callable[[float], float], x0: float, rng: np.random.Generator, *,
                       width: float = 1.0, max_steps: int = 32) -> float:
    """Slice-sample a parameter in (0, 1) on y = logit x (includes the Jacobian x (1 - x))."""
    if not 0.0 < x0 < 1.0:
        raise TreegramError(f"probability parameter must start inside (0, 1), got {x0}")

    def on_logit_scale(y: float) -> float:
        x = _sigmoid(y)
        if not 0.0 < x < 1.0:
            return -math.inf
        return logpdf(x) + math.log(x) + math.log1p(-x)

    return _sigmoid(slice_sample(on_logit_scale, _logit(x0), rng, width=width, max_steps=max_steps))


def resample_concentrations(dp: DPCounts, rng: np.random.Generator, *, prior: Gamma = Gamma(),
                            iterations: int = 10, categories: Iterable[int] | None = None,
                            min_alpha: float = 1e-6, max_alpha: float = 1e8) -> np.ndarray:
    """Slice-sample each alpha_c from prior(alpha_c) x (alpha-dependent collapsed joint of category c), updating
    `dp.alpha` in place; returns the new concentrations.  Categories without observations keep their value (their
    posterior is the vague prior, whose draws would be meaningless)."""
    cats = range(dp.num_categories) if categories is None else categories
    terms = dp.grouped_terms()
    for c in cats:
        n_c, counts, log_base = terms[int(c)]
        if n_c == 0:
            continue
        n_c_f = float(n_c)
        # a type seen once contributes log(alpha) + log P0: only its number matters (most types are singletons)
        multi = counts > 1
        singletons = float(len(counts) - np.count_nonzero(multi))
        counts, log_base = counts[multi], log_base[multi]

        def logpdf(a: float) -> float:
            return (prior.logpdf(a) + singletons * math.log(a)
                    + _category_log_joint(a, n_c_f, counts, log_base))

        alpha = float(min(max(dp.alpha[c], min_alpha), max_alpha))
        for _ in range(iterations):
            alpha = slice_sample_log(logpdf, alpha, rng, lower=min_alpha, upper=max_alpha)
        dp.alpha[c] = alpha
    return dp.alpha.copy()


def resample_beta(successes, failures, rng: np.random.Generator, a: float = 1.0, b: float = 1.0):
    """Conjugate draw of Bernoulli parameters: Beta(a + successes, b + failures) (scalars or arrays)."""
    s = np.asarray(successes, dtype=np.float64)
    f = np.asarray(failures, dtype=np.float64)
    if np.any(s < 0) or np.any(f < 0):
        raise TreegramError("success/failure counts must be >= 0")
    draw = rng.beta(a + s, b + f)
    return float(draw) if np.ndim(draw) == 0 else draw


def resample_beta_slice(loglik: Callable[[float], float], x0: float, rng: np.random.Generator, *,
                        a: float = 1.0, b: float = 1.0, iterations: int = 1, width: float = 1.0) -> float:
    """Slice-sample a (0, 1) parameter under a Beta(a, b) prior and an arbitrary log-likelihood, e.g. a TSG stop
    probability beta_c that also enters the base distribution P0 of every elementary tree."""
    prior = Beta(a, b)

    def logpdf(x: float) -> float:
        return prior.logpdf(x) + loglik(x)

    x = float(x0)
    for _ in range(iterations):
        x = slice_sample_logit(logpdf, x, rng, width=width)
    return x
