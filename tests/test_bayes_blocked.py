"""BlockedMH: the acceptance ratio is right (exact posterior by enumeration, crude proposals), resume is exact."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from treegram.bayes.blocked import BlockedMH, BlockedModel, Proposal
from treegram.bayes.driver import tempered_accept
from treegram.bayes.gibbs import AnnealingSchedule, CheckpointConfig
from toy_segmentation import ToySegmentation
from treegram.io import load_bundle

STRINGS = ["abab", "ab", "ba"]  # 3 items, 5 boundary flags: 32 joint states


def _tv(counts: Counter, exact: dict, n: int) -> float:
    return 0.5 * sum(abs(counts[s] / n - p) for s, p in exact.items())


def _strip_seconds(trace):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in trace]


class IgnoresProposalRatio(ToySegmentation):
    """A deliberately broken model: claims a uniform proposal, so MH forgets the q(old)/q(new) correction."""

    def propose(self, item, rng):
        return Proposal(super().propose(item, rng).derivation, 0.0)

    def log_q(self, item, derivation):
        return 0.0


def _empirical(model, sweeps, seed, temperature=1.0):
    seen = Counter()
    trace = BlockedMH(model, seed=seed, schedule=AnnealingSchedule(temperature),
                      callback=lambda rec: seen.update([model.state()])).run(sweeps)
    return seen, trace


def test_blocked_mh_matches_exact_posterior_with_wrong_proposals():
    # q over-proposes boundaries (0.7 each, independently): far from the posterior, but it mixes
    model = ToySegmentation(STRINGS, alphas=(3.0, 2.0), proposal_boundary=0.7)
    assert isinstance(model, BlockedModel)
    exact = model.exact_posterior()
    sweeps = 6000
    seen, trace = _empirical(model, sweeps, seed=21)
    model.dp.check()
    rate = np.mean([r["acceptance_rate"] for r in trace])
    assert 0.05 < rate < 0.95  # rejections happen, so the ratio matters
    assert _tv(seen, exact, sweeps) < 0.05
    assert trace[-1]["items"] == 3 and trace[-1]["log_likelihood"] == pytest.approx(model.dp.log_joint())


def test_broken_ratio_is_detected():
    """Power check: the same test statistic flags a sampler that drops the proposal correction."""
    model = IgnoresProposalRatio(STRINGS, alphas=(3.0, 2.0), proposal_boundary=0.7)
    exact = model.exact_posterior()
    seen, _ = _empirical(model, 1000, seed=21)
    assert _tv(seen, exact, 1000) > 0.15


def test_tempered_blocked_mh_targets_powered_posterior():
    model = ToySegmentation(STRINGS, proposal_boundary=0.6)
    exact = model.exact_posterior(0.5)
    seen, _ = _empirical(model, 3000, seed=3, temperature=0.5)
    assert _tv(seen, exact, 3000) < 0.05


def test_zero_temperature_is_greedy():
    model = ToySegmentation(["abababab", "abab", "ba", "bbab"], init="joined")
    trace = BlockedMH(model, seed=2, schedule=AnnealingSchedule(0.0)).run(30)
    ll = [r["log_likelihood"] for r in trace]
    assert all(b >= a - 1e-9 for a, b in zip(ll, ll[1:]))
    assert ll[-1] > ll[0]


def test_tempered_accept_rules():
    rng = np.random.default_rng(0)
    assert tempered_accept(0.5, -0.1, rng, 1.0)  # ratio > 1
    assert not tempered_accept(-math.inf, 0.0, rng, 1.0)
    assert not tempered_accept(-0.1, 0.0, rng, 0.0)  # T = 0: never worse
    assert tempered_accept(0.1, -50.0, rng, 0.0)  # T = 0: better always, whatever q says
    assert not tempered_accept(float("nan"), 0.0, rng, 1.0)
    n = 20000
    rate = np.mean([tempered_accept(math.log(0.5), math.log(0.8), rng, 2.0) for _ in range(n)])
    assert rate == pytest.approx(math.sqrt(0.5) * 0.8, abs=0.015)


class _Killed(Exception):
    pass


def test_blocked_resume_after_kill_is_exact(tmp_path):
    schedule = AnnealingSchedule(3.0, 1.0, 8, "linear")
    full_model = ToySegmentation(STRINGS * 3)
    full_trace = BlockedMH(full_model, seed=17, schedule=schedule).run(10)

    def kill(record):
        if record["sweep"] == 6:
            raise _Killed

    path = tmp_path / "mh.ckpt"
    with pytest.raises(_Killed):
        BlockedMH(ToySegmentation(STRINGS * 3), seed=17, schedule=schedule, callback=kill,
                  checkpoint=CheckpointConfig(path, every=4)).run(10)
    assert load_bundle(path)[0]["sweeps_done"] == 4
    model = ToySegmentation(STRINGS * 3)
    trace = BlockedMH.resume(path, model).run(10)
    assert _strip_seconds(trace) == _strip_seconds(full_trace)
    assert model.state() == full_model.state()
    assert all("acceptance_rate" in r and "accepted" in r for r in trace)
    meta, _ = load_bundle(path)
    assert meta["sweeps_done"] == 10  # final checkpoint on finish


def test_unit_progress_moves_inside_sweeps_and_changes_nothing():
    """The progress hook (a bar's ETA inside minute-long sweeps) sees fractions of sweeps, never the state."""
    schedule = AnnealingSchedule(2.0, 1.0, 5, "linear")
    plain = ToySegmentation(STRINGS * 3)
    plain_trace = BlockedMH(plain, seed=5, schedule=schedule).run(5)
    seen: list[float] = []
    watched = ToySegmentation(STRINGS * 3)
    driver = BlockedMH(watched, seed=5, schedule=schedule)
    driver.unit_progress = seen.append
    trace = driver.run(5)
    assert _strip_seconds(trace) == _strip_seconds(plain_trace) and watched.state() == plain.state()
    assert len(seen) == 5 * 9 and math.isclose(sum(seen), 5.0)  # 9 items: one report per item and sweep
