"""Paired significance tests for corpus-level metrics (approximate randomization and paired bootstrap).

Corpus metrics such as PARSEVAL F1 are not means of per-sentence scores, so both tests work on per-item *count
tuples* (e.g. (matched, gold, test) brackets per sentence): a resampled or shuffled corpus is scored by summing the
counts and applying `metric` to the sums, exactly like the real corpus score.  Everything is vectorised: a batch of
trials is a 0/1 (or count) matrix multiplied into the per-item count matrix.

`metric` maps an array of summed counts of shape (..., k) to an array of shape (...); it must be vectorised over
leading axes.  With `metric=None` the items are scalars and the statistic is their mean.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs
import numpy as np

from treegram.errors import InputError

Metric = Callable[[np.ndarray], np.ndarray]

_BATCH = 1000  # trials per matrix product; fixed so that a seed always gives the same draws


@attrs.frozen(slots=True)
class SignificanceResult:
    """p-value (two-sided, with the +1 correction) and the observed metric difference a - b.

    Unpacks as `p_value, difference = result`.
    """

    p_value: float
    difference: float
    trials: int
    method: str
    confidence_interval: tuple[float, float] | None = None  # bootstrap only: 95% interval of a - b

    def __iter__(self):
        return iter((self.p_value, self.difference))

    def to_dict(self) -> dict:
        return attrs.asdict(self)


def _mean_metric(n: int) -> Metric:
    return lambda totals: totals[..., 0] / n


def parseval_f1(totals: np.ndarray) -> np.ndarray:
    """F1 in percent from summed (matched, gold, test) bracket counts; 0 where undefined."""
    totals = np.asarray(totals, dtype=np.float64)
    matched, gold, test = totals[..., 0], totals[..., 1], totals[..., 2]
    denom = gold + test
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, 200.0 * matched / np.where(denom > 0, denom, 1.0), 0.0)


def paired_parseval_counts(result_a, result_b) -> tuple[np.ndarray, np.ndarray]:
    """Per-sentence (matched, gold, test) counts of two ParsevalResults over the same gold corpus.

    Only sentences that enter the totals of *both* results are kept, so the pairing stays item by item.
    """
    sa, sb = result_a.sentences, result_b.sentences
    if len(sa) != len(sb):
        raise InputError(
            f"the two evaluations cover {len(sa)} and {len(sb)} sentences",
            hint="score both systems against the same gold trees",
        )
    rows_a, rows_b = [], []
    for x, y in zip(sa, sb):
        if x.counted and y.counted:
            rows_a.append((x.matched, x.gold_brackets, x.test_brackets))
            rows_b.append((y.matched, y.gold_brackets, y.test_brackets))
    return np.asarray(rows_a, dtype=np.float64).reshape(-1, 3), np.asarray(rows_b, dtype=np.float64).reshape(-1, 3)


def _prepare(scores_a, scores_b, metric: Metric | None) -> tuple[np.ndarray, np.ndarray, Metric]:
    a = np.asarray(scores_a, dtype=np.float64)
    b = np.asarray(scores_b, dtype=np.float64)
    if a.ndim == 1:
        a = a[:, None]
    if b.ndim == 1:
        b = b[:, None]
    if a.ndim != 2 or a.shape != b.shape:
        raise InputError(
            f"paired scores must have the same shape (items, counts); got {np.shape(scores_a)} and "
            f"{np.shape(scores_b)}",
            hint="give one score or count tuple per item, for the same items in the same order",
        )
    if a.shape[0] == 0:
        raise InputError("no items to compare", hint="pass at least one paired item")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise InputError("paired scores contain NaN or infinity")
    if metric is None:
        if a.shape[1] != 1:
            raise InputError(
                f"items have {a.shape[1]} counts each but no metric was given",
                hint="pass metric=... (e.g. parseval_f1) to turn summed counts into a score",
            )
        metric = _mean_metric(a.shape[0])
    return a, b, metric


def _rng(rng: np.random.Generator | int) -> np.random.Generator:
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(int(rng))
    raise InputError(f"rng must be a numpy Generator or an integer seed, got {type(rng).__name__}")


def _check_trials(trials: int, name: str) -> None:
    if not isinstance(trials, (int, np.integer)) or trials < 1:
        raise InputError(f"{name} must be a positive integer, got {trials!r}")


def _observed(a: np.ndarray, b: np.ndarray, metric: Metric) -> float:
    return float(np.asarray(metric(a.sum(axis=0))) - np.asarray(metric(b.sum(axis=0))))


def _at_least(values: np.ndarray, threshold: float) -> int:
    """How many |values| reach the threshold, with a relative tolerance for floating-point ties."""
    tol = 1e-9 * max(1.0, abs(threshold))
    return int(np.count_nonzero(np.abs(values) >= abs(threshold) - tol))


def approximate_randomization(
    scores_a: Sequence, scores_b: Sequence, *, metric: Metric | None = None, trials: int = 10000,
    rng: np.random.Generator | int,
) -> SignificanceResult:
    """Two-sided approximate randomization test (Noreen 1989; Yeh 2000) for a paired corpus metric.

    Each trial swaps every item's outputs between the systems with probability 1/2 and rescores both shuffled
    corpora; p = (1 + #{|shuffled difference| >= |observed difference|}) / (trials + 1).
    """
    _check_trials(trials, "trials")
    a, b, metric = _prepare(scores_a, scores_b, metric)
    gen = _rng(rng)
    observed = _observed(a, b, metric)
    total_a, total_b = a.sum(axis=0), b.sum(axis=0)
    delta = b - a  # what system a gains on an item when that item is swapped
    hits = 0
    done = 0
    while done < trials:
        batch = min(_BATCH, trials - done)
        swaps = gen.integers(0, 2, size=(batch, a.shape[0])).astype(np.float64)
        moved = swaps @ delta
        diffs = np.asarray(metric(total_a + moved)) - np.asarray(metric(total_b - moved))
        hits += _at_least(diffs, observed)
        done += batch
    return SignificanceResult((hits + 1) / (trials + 1), observed, int(trials), "approximate_randomization")


def paired_bootstrap(
    scores_a: Sequence, scores_b: Sequence, *, metric: Metric | None = None, samples: int = 10000,
    rng: np.random.Generator | int,
) -> SignificanceResult:
    """Two-sided paired bootstrap test (Efron & Tibshirani 1993, ch. 16; cf. Koehn 2004).

    Resamples items with replacement (the same items for both systems).  Under the null the resampled difference is
    re-centred on zero: p = (1 + #{|d* - d| >= |d|}) / (samples + 1).  Also returns the 95% percentile interval of
    the difference a - b.
    """
    _check_trials(samples, "samples")
    a, b, metric = _prepare(scores_a, scores_b, metric)
    gen = _rng(rng)
    n = a.shape[0]
    observed = _observed(a, b, metric)
    hits = 0
    done = 0
    all_diffs = np.empty(samples)
    while done < samples:
        batch = min(_BATCH, samples - done)
        picks = gen.integers(0, n, size=(batch, n)) + (np.arange(batch) * n)[:, None]
        weights = np.bincount(picks.ravel(), minlength=batch * n).reshape(batch, n).astype(np.float64)
        diffs = np.asarray(metric(weights @ a)) - np.asarray(metric(weights @ b))
        hits += _at_least(diffs - observed, observed)
        all_diffs[done : done + batch] = diffs
        done += batch
    low, high = np.percentile(all_diffs, [2.5, 97.5])
    return SignificanceResult(
        (hits + 1) / (samples + 1), observed, int(samples), "paired_bootstrap", (float(low), float(high))
    )


__all__ = [
    "SignificanceResult",
    "approximate_randomization",
    "paired_bootstrap",
    "paired_parseval_counts",
    "parseval_f1",
]
