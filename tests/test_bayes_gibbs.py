"""GibbsSampler: correctness against an enumerated posterior, annealing, determinism, exact checkpoint/resume."""

from __future__ import annotations

import math
import signal
from collections import Counter

import numpy as np
import pytest

from treegram.bayes.driver import rng_from_json, rng_to_json, tempered_binary, tempered_choice
from treegram.bayes.gibbs import AnnealingSchedule, CheckpointConfig, GibbsModel, GibbsSampler
from toy_segmentation import ToySegmentation
from treegram.errors import ModelFileError, TreegramError
from treegram.io import load_bundle

STRINGS = ["abab", "ab", "ba"]  # 5 binary sites: 32 states, enumerable


def _tv(counts: Counter, exact: dict, n: int) -> float:
    return 0.5 * sum(abs(counts[s] / n - p) for s, p in exact.items())


def _strip_seconds(trace):
    return [{k: v for k, v in r.items() if k != "seconds"} for r in trace]


def test_annealing_schedules():
    lin = AnnealingSchedule(5.0, 0.0, 6, "linear")
    np.testing.assert_allclose(lin.temperatures(8), [5, 4, 3, 2, 1, 0, 0, 0])
    geo = AnnealingSchedule(8.0, 1.0, 4, "geometric")
    np.testing.assert_allclose(geo.temperatures(), [8, 4, 2, 1])
    assert AnnealingSchedule(2.0, kind="constant").temperature(99) == 2.0
    assert AnnealingSchedule().temperature(0) == 1.0
    with pytest.raises(TreegramError):
        AnnealingSchedule(5.0, 0.0, 10, "geometric")
    with pytest.raises(TreegramError):
        AnnealingSchedule(1.0, 1.0, 3, "cosine")
    with pytest.raises(TreegramError):
        AnnealingSchedule(-1.0, 1.0, 3, "linear")


def test_tempered_choice_frequencies():
    rng = np.random.default_rng(0)
    logw = np.log([0.1, 0.2, 0.7])
    n = 20000
    many = np.log(np.arange(1, 21) / 210.0)  # 20 outcomes: the vectorised path
    for weights in (logw, many):
        for temperature in (1.0, 0.5, 2.0):
            draws = [tempered_choice(weights, rng, temperature) for _ in range(n if len(weights) < 5 else 4000)]
            freq = np.bincount(draws, minlength=len(weights)) / len(draws)
            target = np.exp(weights / temperature)
            np.testing.assert_allclose(freq, target / target.sum(), atol=0.015 if len(weights) < 5 else 0.02)
    binary = np.mean([tempered_binary(math.log(0.25), math.log(0.75), rng, 0.5) for _ in range(n)])
    assert binary == pytest.approx(0.75**2 / (0.75**2 + 0.25**2), abs=0.015)
    assert tempered_choice(logw, rng, 0.0) == 2
    assert tempered_binary(-1.0, -2.0, rng, 0.0) == 0
    ties = [tempered_choice([0.0, -1.0, 0.0], rng, 0.0) for _ in range(400)]
    assert set(ties) == {0, 2}


def test_gibbs_matches_exact_posterior():
    model = ToySegmentation(STRINGS)
    assert isinstance(model, GibbsModel)
    exact = model.exact_posterior()
    seen = Counter()
    sweeps = 6000
    sampler = GibbsSampler(model, seed=11, callback=lambda rec: seen.update([model.state()]))
    trace = sampler.run(sweeps)
    model.dp.check()
    assert len(trace) == sweeps and trace[-1]["sweep"] == sweeps and trace[0]["sites"] == 5
    assert _tv(seen, exact, sweeps) < 0.05
    # the test has power: the prior-free "uniform over states" answer is far from the posterior
    assert _tv(Counter({s: 1 for s in exact}), exact, len(exact)) > 0.2
    assert trace[-1]["log_likelihood"] == pytest.approx(model.dp.log_joint())


def test_tempered_gibbs_targets_powered_posterior():
    model = ToySegmentation(STRINGS)
    temperature = 0.5
    exact = model.exact_posterior(temperature)
    seen = Counter()
    sweeps = 4000
    GibbsSampler(model, seed=5, schedule=AnnealingSchedule(temperature),
                 callback=lambda rec: seen.update([model.state()])).run(sweeps)
    assert _tv(seen, exact, sweeps) < 0.05
    assert _tv(seen, model.exact_posterior(1.0), sweeps) > 0.08  # distinguishable from T = 1


def test_zero_temperature_never_decreases_joint():
    model = ToySegmentation(["abababab", "abab", "ba", "bbab"], init="joined")
    trace = GibbsSampler(model, seed=2, schedule=AnnealingSchedule(0.0)).run(15)
    ll = [r["log_likelihood"] for r in trace]
    assert all(b >= a - 1e-9 for a, b in zip(ll, ll[1:]))
    assert all(r["temperature"] == 0.0 for r in trace)


def test_same_seed_same_run_and_different_seed_differs():
    def run(seed, order="random"):
        model = ToySegmentation(STRINGS * 3)
        trace = GibbsSampler(model, seed=seed, site_order=order,
                             schedule=AnnealingSchedule(3.0, 1.0, 10, "linear")).run(10)
        return _strip_seconds(trace), model.state()

    assert run(7) == run(7)
    assert run(7) != run(8)
    assert run(7, "fixed") == run(7, "fixed")


class _OrderRecorder:
    def __init__(self, n):
        self.n = n
        self.visits = []

    def num_sites(self):
        return self.n

    def resample_site(self, site, rng, temperature):
        self.visits.append(site)
        return site % 2 == 0

    def log_likelihood(self):
        return 0.0

    def state_dict(self):
        return {}

    def load_state_dict(self, state):
        pass


def test_site_orders_and_changed_counts():
    rec = _OrderRecorder(7)
    trace = GibbsSampler(rec, seed=0, site_order="fixed").run(2)
    assert rec.visits == list(range(7)) * 2
    assert trace[0]["changed"] == 4 and trace[0]["changed_rate"] == pytest.approx(4 / 7)
    rec = _OrderRecorder(50)
    GibbsSampler(rec, seed=0).run(2)
    first, second = rec.visits[:50], rec.visits[50:]
    assert sorted(first) == list(range(50)) and sorted(second) == list(range(50))
    assert first != list(range(50)) and first != second
    with pytest.raises(TreegramError):
        GibbsSampler(rec, seed=0, site_order="backwards")
    with pytest.raises(TreegramError):
        GibbsSampler(rec, seed=None)


class _Killed(Exception):
    pass


def _killer(at):
    def callback(record):
        if record["sweep"] == at:
            raise _Killed

    return callback


@pytest.mark.parametrize("kill_at", [3, 7, 8])
def test_resume_after_kill_reproduces_uninterrupted_run(tmp_path, kill_at):
    schedule = AnnealingSchedule(4.0, 0.5, 10, "linear")
    full_model = ToySegmentation(STRINGS * 2)
    full = GibbsSampler(full_model, seed=42, schedule=schedule,
                        checkpoint=CheckpointConfig(tmp_path / "full.ckpt", every=3))
    full_trace = full.run(12)

    path = tmp_path / "run.ckpt"
    victim = GibbsSampler(ToySegmentation(STRINGS * 2), seed=42, schedule=schedule,
                          checkpoint=CheckpointConfig(path, every=3), callback=_killer(kill_at))
    with pytest.raises(_Killed):
        victim.run(12)
    meta, _ = load_bundle(path)
    assert meta["sweeps_done"] == (kill_at // 3) * 3  # only periodic checkpoints survived the "kill"

    model = ToySegmentation(STRINGS * 2)
    resumed = GibbsSampler.resume(path, model)
    assert resumed.sweeps_done == meta["sweeps_done"]
    trace = resumed.run(12)
    assert _strip_seconds(trace) == _strip_seconds(full_trace)
    assert model.state() == full_model.state()
    np.testing.assert_array_equal(model.dp.count, full_model.dp.count)
    assert model.log_likelihood() == full_model.log_likelihood()
    assert rng_to_json(resumed.rng) == rng_to_json(full.rng)


@pytest.fixture
def default_sigint():
    """CI and nohup start processes with SIGINT ignored; these tests need Python's default Ctrl-C handler."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_mid_sweep_checkpoints_and_resumes_exactly(tmp_path, default_sigint):
    class Interruptible(ToySegmentation):
        interrupt_at = None
        calls = 0

        def resample_site(self, site, rng, temperature):
            changed = super().resample_site(site, rng, temperature)
            self.calls += 1
            if self.calls == self.interrupt_at:
                signal.raise_signal(signal.SIGINT)  # as if the user pressed Ctrl-C right now
            return changed

    strings = STRINGS * 2  # 10 sites per sweep
    reference = ToySegmentation(strings)
    ref_trace = GibbsSampler(reference, seed=9).run(6)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # a normal run restores the handler

    path = tmp_path / "ctrl-c.ckpt"
    model = Interruptible(strings)
    model.interrupt_at = 34  # in the middle of sweep 4
    sampler = GibbsSampler(model, seed=9, checkpoint=CheckpointConfig(path, every=0))
    with pytest.raises(KeyboardInterrupt):
        sampler.run(6)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # handler restored
    meta, arrays = load_bundle(path)
    assert meta["sweeps_done"] == 3 and meta["partial"]["position"] == 4
    assert len(arrays["partial/order"]) == 10

    fresh = ToySegmentation(strings)
    resumed = GibbsSampler.resume(path, fresh)
    trace = resumed.run(6)
    assert _strip_seconds(trace) == _strip_seconds(ref_trace)
    assert fresh.state() == reference.state()


@pytest.fixture
def ignored_sigint_default_sigterm():
    """The situation of a background job (nohup, CI): SIGINT ignored, SIGTERM with its default action."""
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN), signal.signal(signal.SIGTERM, signal.SIG_DFL)
    yield
    signal.signal(signal.SIGINT, previous[0])
    signal.signal(signal.SIGTERM, previous[1])


def test_kill_mid_sweep_checkpoints_and_resumes_exactly_when_sigint_is_ignored(tmp_path,
                                                                              ignored_sigint_default_sigterm):
    class Killable(ToySegmentation):
        calls = 0

        def resample_site(self, site, rng, temperature):
            changed = super().resample_site(site, rng, temperature)
            self.calls += 1
            if self.calls == 27:  # in the middle of sweep 3
                signal.raise_signal(signal.SIGTERM)  # `kill <pid>`; without the deferral the process would die
            return changed

    strings = STRINGS * 2  # 10 sites per sweep
    reference = ToySegmentation(strings)
    ref_trace = GibbsSampler(reference, seed=5).run(5)

    path = tmp_path / "kill.ckpt"
    sampler = GibbsSampler(Killable(strings), seed=5, checkpoint=CheckpointConfig(path, every=0))
    with pytest.raises(KeyboardInterrupt):
        sampler.run(5)
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # restored
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # left alone
    meta, _arrays = load_bundle(path)
    assert meta["sweeps_done"] == 2 and meta["partial"]["position"] == 7

    fresh = ToySegmentation(strings)
    trace = GibbsSampler.resume(path, fresh).run(5)
    assert _strip_seconds(trace) == _strip_seconds(ref_trace)
    assert fresh.state() == reference.state()


def test_keyboard_interrupt_from_callback_writes_checkpoint(tmp_path):
    path = tmp_path / "cb.ckpt"

    def callback(record):
        if record["sweep"] == 2:
            raise KeyboardInterrupt

    model = ToySegmentation(STRINGS)
    with pytest.raises(KeyboardInterrupt):
        GibbsSampler(model, seed=1, callback=callback, checkpoint=CheckpointConfig(path, every=100)).run(5)
    meta, _ = load_bundle(path)
    assert meta["sweeps_done"] == 2 and meta["partial"] is None
    assert [r["sweep"] for r in meta["trace"]] == [1, 2]


def test_sweep_escape_hatch_is_used_and_equivalent():
    class Vectorised(ToySegmentation):
        sweeps_called = 0

        def sweep(self, order, rng, temperature):
            self.sweeps_called += 1
            changed = sum(self.resample_site(int(s), rng, temperature) for s in order)
            return {"changed": changed, "types": int((self.dp.count > 0).sum())}

    plain = ToySegmentation(STRINGS * 2)
    plain_trace = GibbsSampler(plain, seed=4).run(5)
    fast = Vectorised(STRINGS * 2)
    fast_trace = GibbsSampler(fast, seed=4).run(5)
    assert fast.sweeps_called == 5
    assert [r["changed"] for r in fast_trace] == [r["changed"] for r in plain_trace]
    assert fast.state() == plain.state()
    assert all("types" in r for r in fast_trace)


def test_resume_rejects_wrong_files(tmp_path):
    from treegram.bayes.blocked import BlockedMH

    path = tmp_path / "g.ckpt"
    GibbsSampler(ToySegmentation(STRINGS), seed=0, checkpoint=CheckpointConfig(path)).run(2)
    with pytest.raises(ModelFileError):
        BlockedMH.resume(path, ToySegmentation(STRINGS))
    with pytest.raises(ModelFileError):
        GibbsSampler.resume(tmp_path / "missing.ckpt", ToySegmentation(STRINGS))


def test_rng_state_json_round_trip():
    for bitgen in (np.random.PCG64(5), np.random.MT19937(5), np.random.Philox(5), np.random.SFC64(5)):
        rng = np.random.Generator(bitgen)
        rng.random(3)
        import json

        back = rng_from_json(json.loads(json.dumps(rng_to_json(rng))))
        assert back.random() == rng.random()


def test_callback_stop_and_sweep_stats(tmp_path):
    class WithStats(ToySegmentation):
        def sweep_stats(self):
            return {"types": int((self.dp.count > 0).sum()), "alpha0": self.dp.alpha[0]}

    model = WithStats(STRINGS)
    path = tmp_path / "stop.ckpt"
    sampler = GibbsSampler(model, seed=3, callback=lambda rec: rec["sweep"] == 3,
                           checkpoint=CheckpointConfig(path, every=0))
    trace = sampler.run(10)
    assert [r["sweep"] for r in trace] == [1, 2, 3]
    assert trace[-1]["types"] == int((model.dp.count > 0).sum()) and isinstance(trace[-1]["alpha0"], float)
    meta, _ = load_bundle(path)  # on_finish checkpoint written when the callback stops the run
    assert meta["sweeps_done"] == 3
    resumed = GibbsSampler.resume(path, WithStats(STRINGS))
    assert len(resumed.run(5)) == 5


def test_split_and_join_nested_state():
    from treegram.bayes.driver import join_state, split_state

    state = {"flags": np.arange(4, dtype=np.int8), "dp": {"count": np.ones(3), "keys": [("a", 1), "b"]},
             "n": np.int64(7), "name": "tsg", "nothing": None}
    tree, arrays = split_state(state)
    assert set(arrays) == {"model/flags", "model/dp/count"}
    import json

    back = join_state(json.loads(json.dumps(tree)), arrays)
    np.testing.assert_array_equal(back["flags"], state["flags"])
    assert back["dp"]["keys"] == [["a", 1], "b"] and back["n"] == 7 and back["nothing"] is None
    with pytest.raises(TypeError):
        split_state({"bad": {1, 2}})
