"""Posterior averaging (`treegram.bayes.averaging`) and the TSG's averaged grammar / default decoder, on the demo
treebank: the schedule, determinism per seed, K = 1 is the final-sample grammar, snapshots do not change the
chain, checkpoint/resume collects exactly what the uninterrupted run does, and the model's default decoder."""

from __future__ import annotations

import json

import attrs
import numpy as np
import pytest

from treegram.bayes.averaging import AveragingOptions, SampleCollector, average_counts
from treegram.corpora.demo import demo_trees
from treegram.cli.app import main
from treegram.errors import InputError
from treegram.formalism import load_model

from treegram.formalism import RunOptions
from treegram.training import get_move
from treegram.plugins.tsg.formalism import TSGFormalism, TSGOptions
from treegram.plugins.tsg.model import averaged_goodman_cfg, goodman_cfg
from treegram.plugins.tsg.formalism import train_tsg

TSG = TSGFormalism()
FINAL = TSGOptions(average=1)  # the final sample's grammar


@attrs.frozen
class BurnIn0(TSGOptions):
    """The TSG's options with averaging from sweep 1 on (no burn-in): a schedule the command line does not offer."""

    def averaging(self):
        return AveragingOptions(self.average, self.thin or None, burn_in=0)

WORDS = "The hungry dog slept in the garden .".split()


def _cfg_arrays(cfg):
    meta, arrays = cfg.to_bundle()
    return json.dumps(meta, sort_keys=True), {k: np.asarray(v) for k, v in arrays.items()}


def assert_same_cfg(a, b):
    ma, aa = _cfg_arrays(a)
    mb, ab = _cfg_arrays(b)
    assert ma == mb and aa.keys() == ab.keys()
    for k in aa:
        np.testing.assert_array_equal(aa[k], ab[k], err_msg=k)


def same_model(a, b) -> bool:
    return (a.fragments == b.fragments and a.info == b.info and _cfg_arrays(a.cfg)[0] == _cfg_arrays(b.cfg)[0]
            and all(np.array_equal(x, y) for x, y in zip(_cfg_arrays(a.cfg)[1].values(),
                                                          _cfg_arrays(b.cfg)[1].values())))


def test_schedule():
    assert AveragingOptions(5).sweeps(100) == [60, 70, 80, 90, 100]  # evenly over the second half
    assert AveragingOptions(10).sweeps(100) == list(range(55, 101, 5))
    assert AveragingOptions(3, thin=2, burn_in=0).sweeps(10) == [6, 8, 10]
    assert AveragingOptions(1).sweeps(7) == [7] and AveragingOptions(4).sweeps(0) == []
    assert AveragingOptions(5).sweeps(3) == [2, 3]  # a short run averages what its second half has
    assert AveragingOptions(5, thin=50).sweeps(100) == [100]
    with pytest.raises(InputError):
        AveragingOptions(0)
    with pytest.raises(InputError):
        AveragingOptions(2, thin=0)


def test_average_counts():
    a = {"keys": np.array([7, 3], np.uint64), "counts": np.array([4, 2])}
    b = {"keys": np.array([3, 9], np.uint64), "counts": np.array([4, 1])}
    keys, summed, mean, which, pos = average_counts([a, b])
    assert keys.tolist() == [3, 7, 9] and summed.tolist() == [6, 4, 1]
    assert mean.tolist() == [3.0, 2.0, 0.5]
    assert which.tolist() == [0, 0, 1] and pos.tolist() == [1, 0, 1]  # first occurrence, samples in given order


@pytest.fixture(scope="module")
def prepared():
    return TSG.prepare(demo_trees(), FINAL)


def _chain(prepared, seed, iterations, collector_options=None, sampler="gibbs"):
    run = RunOptions(move=sampler, iterations=iterations, seed=seed)
    move = get_move(TSG, sampler)
    state = TSG.make_state(prepared, FINAL, move.state_kind, run)
    driver = run.start(move, state)
    collector = None
    if collector_options is not None:
        collector = SampleCollector(collector_options, iterations, state.snapshot).attach(driver)
    driver.run(iterations)
    return state, collector


def test_one_sample_is_the_final_sample_grammar(prepared):
    state, _ = _chain(prepared, 2, 3)
    cfg, _types = goodman_cfg(state)
    avg, avg_types = averaged_goodman_cfg(state.data, [state.snapshot()])
    assert_same_cfg(cfg, avg)
    assert [t[0] for t in _types] == [t[0] for t in avg_types]
    # and through train_tsg: average=1 keeps the final-sample model exactly
    a = train_tsg(demo_trees(), FINAL, RunOptions(iterations=3, seed=2))
    b = train_tsg(demo_trees(), FINAL, RunOptions(iterations=3, seed=2))
    assert same_model(a, b) and a.info["averaged_samples"] == 1


@pytest.mark.parametrize("sampler,sweeps", [("gibbs", 5), ("blocked", 2)])
def test_snapshots_do_not_change_the_chain(prepared, sampler, sweeps):
    plain, _ = _chain(prepared, 4, sweeps, sampler=sampler)
    watched, collector = _chain(prepared, 4, sweeps, AveragingOptions(5, thin=1, burn_in=0), sampler=sampler)
    np.testing.assert_array_equal(plain.flags, watched.flags)
    np.testing.assert_array_equal(plain.alpha, watched.alpha)
    assert sorted(collector.taken) == list(range(1, sweeps + 1))


def test_averaged_grammar_is_the_mean_count_grammar(prepared):
    state, collector = _chain(prepared, 4, 6, AveragingOptions(3, thin=1, burn_in=0))
    samples = collector.samples()
    assert [s["sweep"] for s in samples] == [6, 5, 4]
    cfg, types = averaged_goodman_cfg(state.data, samples)
    # every key of every sample is in the grammar, with its mean count
    per_key: dict[int, int] = {}
    for s in samples:
        for k, c in zip(s["keys"].tolist(), s["counts"].tolist()):
            per_key[k] = per_key.get(k, 0) + c
    assert len(types) == len(per_key)
    assert sorted(n for n, *_ in types) == sorted(per_key.values())
    assert all(abs(m - n / 3) < 1e-12 for n, m, *_ in types)
    assert cfg.num_rules > goodman_cfg(state)[0].num_rules  # the union of the samples' elementary trees


def test_averaging_is_deterministic_per_seed():
    run, options = RunOptions(iterations=6, seed=3), TSGOptions(average=3)
    a = train_tsg(demo_trees(), options, run)
    b = train_tsg(demo_trees(), options, run)
    assert same_model(a, b)
    assert a.info["averaged_samples"] == 3 and a.info["averaged_sweeps"] == [4, 5, 6]
    assert any("mean_count" in f for f in a.fragments)
    c = train_tsg(demo_trees(), options, RunOptions(iterations=6, seed=4))
    assert not same_model(a, c)


def test_resume_collects_what_the_uninterrupted_run_does(tmp_path):
    ck = tmp_path / "ck.npz"
    options = TSGOptions(average=3, thin=1)
    run = RunOptions(iterations=6, seed=5, checkpoint=ck, checkpoint_every=1)
    full = train_tsg(demo_trees(), options, RunOptions(iterations=6, seed=5))

    def stop_at_5(record):
        if record["sweep"] == 5:
            raise KeyboardInterrupt  # after sweep 5's snapshot: the interrupt checkpoint must hold 4 and 5

    with pytest.raises(KeyboardInterrupt):
        train_tsg(demo_trees(), options, run, callback=stop_at_5)
    resumed = train_tsg(demo_trees(), options, RunOptions(iterations=6, seed=5, checkpoint=ck, resume=True))
    assert same_model(full, resumed)
    # a schedule whose earlier sweeps were never collected is refused, not silently averaged over fewer samples
    with pytest.raises(InputError, match="holds no sample"):
        train_tsg(demo_trees(), BurnIn0(average=3, thin=3),
                  RunOptions(iterations=8, seed=5, checkpoint=ck, resume=True))  # needs sweep 2
    # extending the run with the same spacing reuses the snapshots it has (sweeps 5, 6) and adds sweep 7
    longer = train_tsg(demo_trees(), options, RunOptions(iterations=7, seed=5, checkpoint=ck, resume=True))
    assert longer.info["averaged_sweeps"] == [5, 6, 7]


def test_model_default_decoder_round_trip_and_parse(demo_file, tmp_path):
    from treegram.charts.decoders import decode, model_decoder, parse_default
    from treegram.formalism import PLUGIN_META
    from treegram.io import load_bundle, save_bundle

    tb = demo_file
    out = tmp_path / "demo.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--iterations", "6", "--seed", "1",
                 "--out", str(out)]) == 0
    model = load_model(out)
    assert model.default_decoder == "maxrule" and model_decoder(model) == "maxrule"  # the shipped defaults
    assert model.info["averaged_samples"] == 3 and model.info["averaged_sweeps"] == [4, 5, 6]
    described = model.describe(top=0)
    assert described["default_decoder"] == "maxrule" and described["averaged_sweeps"] == "4, 5, 6"
    maxrule = decode(model, WORDS, "maxrule").to_bracket()
    assert parse_default(model)(WORDS).to_bracket() == maxrule == model.parse(WORDS).to_bracket()
    # a model file from before the field: loads, and parses with Viterbi MPD as before
    meta, arrays = load_bundle(out)
    inner = meta[PLUGIN_META] if isinstance(meta.get(PLUGIN_META), dict) else meta
    assert inner.pop("default_decoder") == "maxrule"
    old = tmp_path / "old.tsg"
    save_bundle(old, meta, arrays)
    legacy = load_model(old)
    assert legacy.default_decoder is None and model_decoder(legacy) is None
    assert parse_default(legacy)(WORDS).to_bracket() == decode(legacy, WORDS, "mpd").to_bracket()
    # --average 1 --decoder mpd: the previous defaults
    out1 = tmp_path / "final.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(tb), "--iterations", "6", "--seed", "1", "--average", "1",
                 "--decoder", "mpd", "--out", str(out1)]) == 0
    final = load_model(out1)
    assert final.info["averaged_samples"] == 1 and final.default_decoder == "mpd"
    assert len(final.fragments) < len(model.fragments)
