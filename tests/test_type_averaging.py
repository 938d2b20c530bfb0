"""Posterior averaging for the blocked elementary-tree samplers (`TypeTableState.snapshot` / `averaged_types`,
core) through the TIG plugin, on the demo treebank: the averaged type view is the mean of the samples' own counts,
taking it leaves the state as it was, the averaged grammar holds every type of every sample at its mean count,
`--average 1` is the final sample's grammar, and a resumed run averages exactly what the uninterrupted one does;
the same for the Bayesian OSTAG (`train ostag --bayesian --average K`)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.corpora.demo import demo_trees
from treegram.cli.app import main
from treegram.elementary.data import prepare
from treegram.formalism import load_model
from treegram.grammar.pcfg import PCFGModel, PCFGSettings

from treegram.plugins.tig.derivation import DP_INIT, TIGSettings
from treegram.plugins.tig.grammar import Builder
from treegram.plugins.tig.sampler import BlockedTIG


@pytest.fixture(scope="module")
def chain():
    """A TIG state after a few blocked MH sweeps, with its snapshots after sweeps 2..5 (newest first) and each
    snapshot's own counts / totals taken while it was the live state."""
    from treegram.bayes.blocked import BlockedMH

    settings = TIGSettings(phi=0.3)
    trees = demo_trees()
    pcfg = PCFGModel.train(trees, PCFGSettings(horizontal=settings.horizontal, vertical=settings.vertical,
                                               rare_threshold=settings.rare_threshold))
    data, _ = prepare(trees, settings.tsg_settings(), pcfg.mapper)
    state = BlockedTIG(data, settings, seed=3)
    mh = BlockedMH(state, seed=3, handle_sigint=False)
    snaps, own = [], []
    for sweep in range(1, 6):
        mh.run(sweep)
        if sweep >= 2:
            snaps.append(state.snapshot())
            own.append((dict(state.counts.count), state.counts.total.copy(), state.hyper.to_dict()))
    return state, snaps[::-1], own[::-1]


def test_averaged_types_are_the_mean_of_the_samples(chain):
    state, snaps, own = chain
    before = (dict(state.counts.count), state.counts.total.copy(), state.snapshot())
    view = state.averaged_types(snaps)
    K = len(snaps)
    assert view.samples == K
    keys = set().union(*(c for c, _, _ in own))
    assert set(view.count) == keys == set(view.types) == set(view.summed)
    for k in keys:
        summed = sum(c.get(k, 0) for c, _, _ in own)
        assert view.summed[k] == summed and view.count[k] == pytest.approx(summed / K)
    np.testing.assert_allclose(view.total, sum(t for _, t, _ in own) / K)
    for name in state.hyper.NAMES:
        np.testing.assert_allclose(getattr(view.hyper, name), sum(h[name] for _, _, h in own) / K)
    # the state is put back exactly as it was
    assert dict(state.counts.count) == before[0]
    np.testing.assert_array_equal(state.counts.total, before[1])
    after = state.snapshot()
    for k in after:
        np.testing.assert_array_equal(after[k], before[2][k], err_msg=k)


def test_averaged_grammar_weights_are_the_mean_counts(chain):
    state, snaps, own = chain
    view = state.averaged_types(snaps)
    counts_per_sample = [c for c, _, _ in own]
    # a type some samples lack keeps a fractional weight in the averaged grammar (min_count on the summed count)
    partial = [k for k in view.count if sum(1 for c in counts_per_sample if k in c) < len(snaps)]
    assert partial, "the chain should move between samples"
    b = Builder(state, 1, view)
    cached = {(dp, key): n for dp in range(3) for key, _lab, n in b.cached[dp]}
    assert cached == view.count
    assert any(0 < n < 1 for n in cached.values())
    # the initial tree's SITE -> root rule carries log(n̄_e) - log(n̄_c + ᾱ_c)
    (dp, key), n = next(((k, n) for k, n in view.count.items() if k[0] == DP_INIT))
    L = key[0]
    expect = math.log(n) - math.log(view.total[DP_INIT, L] + view.hyper.alpha[DP_INIT, L])
    cfg, _meta = b.build()
    site_rules = cfg.un_logp[cfg.un_parent == L]
    assert np.isclose(site_rules, expect).any()
    # the state's own view is the final sample's grammar
    own_view = state.current_types()
    assert own_view.samples == 1 and own_view.count == dict(state.counts.count)


def _train(demo_file, out, *extra):
    assert main(["-q", "train", "tig", "--treebank", str(demo_file), "--tsg-init", "1", "--phi", "0.3",
                 "--seed", "5", "--out", str(out), *extra]) == 0
    return load_model(out)


def test_cli_average_and_resume(demo_file, tmp_path):
    avg = _train(demo_file, tmp_path / "avg.tig", "--iterations", "6", "--average", "3")
    assert avg.info["averaged_samples"] == 3 and avg.info["averaged_sweeps"] == [4, 5, 6]
    assert avg.describe(top=0)["averaged_sweeps"] == "4, 5, 6"
    final = _train(demo_file, tmp_path / "final.tig", "--iterations", "6", "--average", "1")
    assert final.info["averaged_samples"] == 1
    assert all("mean_count" not in f for f in final.fragments["initial"])
    assert any("mean_count" in f for f in avg.fragments["initial"])
    # the averaged grammar holds at least the final sample's types
    assert avg.info["initial_trees"] >= final.info["initial_trees"]
    assert avg.parse("The hungry dog slept in the garden .".split()).leaves() == \
        "The hungry dog slept in the garden .".split()
    # interrupted after 4 sweeps (snapshot 4 taken), resumed to 6: the same averaged model
    ck = tmp_path / "run.ckpt"
    _train(demo_file, tmp_path / "part.tig", "--iterations", "4", "--average", "3", "--checkpoint", str(ck))
    resumed = _train(demo_file, tmp_path / "resumed.tig", "--iterations", "6", "--average", "3",
                     "--checkpoint", str(ck), "--resume")
    assert resumed.fragments == avg.fragments
    np.testing.assert_array_equal(resumed.cfg.bin_logp, avg.cfg.bin_logp)
    np.testing.assert_array_equal(resumed.cfg.un_logp, avg.cfg.un_logp)


def _train_bayes(demo_file, out, *extra):
    assert main(["-q", "train", "ostag", "--bayesian", "--treebank", str(demo_file), "--tsg-init", "1",
                 "--mu", "0.2", "--seed", "6", "--out", str(out), *extra]) == 0
    return load_model(out)


def test_bayesian_ostag_average_and_resume(demo_file, tmp_path):
    ck = tmp_path / "full.ckpt"
    avg = _train_bayes(demo_file, tmp_path / "avg.ostag", "--iterations", "6", "--average", "3",
                       "--checkpoint", str(ck))
    assert avg.info["averaged_samples"] == 3 and avg.info["averaged_sweeps"] == [4, 5, 6]
    # the same chain's final sample: its checkpoint resumed with nothing left to run
    final = _train_bayes(demo_file, tmp_path / "final.ostag", "--iterations", "6", "--average", "1",
                         "--checkpoint", str(ck), "--resume")
    assert final.info["averaged_samples"] == 1
    assert avg.info["sampled_initial_trees"] >= final.info["sampled_initial_trees"]
    words = "The hungry dog slept in the garden .".split()
    assert avg.parse(words).leaves() == words
    # interrupted after 4 sweeps, resumed to 6: the same averaged model
    ck2 = tmp_path / "part.ckpt"
    _train_bayes(demo_file, tmp_path / "part.ostag", "--iterations", "4", "--average", "3", "--checkpoint", str(ck2))
    resumed = _train_bayes(demo_file, tmp_path / "resumed.ostag", "--iterations", "6", "--average", "3",
                           "--checkpoint", str(ck2), "--resume")
    for k in ("sampled_initial_trees", "sampled_auxiliary_trees", "averaged_sweeps"):
        assert resumed.info[k] == avg.info[k]
    assert resumed.parse(words) == avg.parse(words)
    ga, gr = avg.grammar, resumed.grammar
    np.testing.assert_array_equal(np.asarray(ga.initial_count), np.asarray(gr.initial_count))
    np.testing.assert_array_equal(np.asarray(ga.aux_count), np.asarray(gr.aux_count))
