"""The learning-curve helpers of benchmarks/bench_channel.py: the slices that are parsed and cached one by one, the
size list option, and the nested Google samples that make the curve paired."""

import argparse

import numpy as np
import pytest

import bench_channel as bc


def test_curve_chunks_cover_the_sample_and_end_at_every_size():
    chunks = bc.curve_chunks([10000, 1000, 3000])
    assert chunks[0][0] == 0 and chunks[-1][1] == 10000
    assert all(a[1] == b[0] for a, b in zip(chunks, chunks[1:]))  # contiguous, no overlap
    ends = {b for _, b in chunks}
    assert {1000, 3000, 10000} <= ends and all(b - a <= 1000 for a, b in chunks)
    # a smaller curve uses exactly the leading slices of a bigger one, so their parse caches are shared
    assert bc.curve_chunks([1000, 3000]) == chunks[:3]
    assert bc.curve_chunks([1500]) == [(0, 1000), (1000, 1500)]


def test_sizes_option():
    assert bc._sizes("1000,3000, 10000") == [1000, 3000, 10000]
    for bad in ("", "1k", "0,10", "-5"):
        with pytest.raises(argparse.ArgumentTypeError):
            bc._sizes(bad)


def test_google_samples_are_nested(shared_data):
    small = bc.google_train_pairs(shared_data, 50, 50)
    big = bc.google_train_pairs(shared_data, 200, 50)
    assert len(small) == 50 and len(big) == 200
    assert [p.source for p in big[:50]] == [p.source for p in small]
    assert all(len(p.source) <= 50 and len(p.keep) == len(p.source) for p in big)


def _demo_grammar(levels):
    from treegram.corpora.demo import demo_trees
    from treegram.compression.treeprep import wrap_root
    from treegram.plugins.channel.model import ChannelGrammar, analyse

    rng = np.random.default_rng(0)
    trees = [wrap_root(t) for t in demo_trees()]
    keeps = [rng.random(len(t.leaves())) < 0.7 for t in trees]
    keeps = [k if k.any() else np.ones_like(k) for k in keeps]
    g = ChannelGrammar(levels)
    for t, k in zip(trees[:-3], keeps[:-3]):  # the last three trees are held out
        g.observe(analyse(t), k)
    return g, trees, keeps


@pytest.mark.parametrize("levels", [6, 4])
def test_score_parts_add_up_to_the_model_score(levels):
    from treegram.plugins.channel.model import analyse

    g, trees, keeps = _demo_grammar(levels)
    for tree, k in zip(trees, keeps):
        t = analyse(tree)
        src, ch = bc.score_parts(g, t, k)
        assert src < 0 and ch <= 0
        assert src + ch == pytest.approx(g.score(t, k))


def test_backoff_diagnostics_on_seen_and_held_out_trees():
    g, trees, keeps = _demo_grammar(6)
    seen = bc.backoff_diagnostics(g, trees[:-3], keeps[:-3], keeps[:-3])
    # every context of a training compression was counted; scoring the gold against itself differs by nothing
    assert seen["oov"] == 0.0 and seen["d_source"] == 0.0 and seen["d_channel"] == 0.0
    for name in ("channel level 1", "channel level 4", "source rule | (cat, head word)"):
        assert seen["levels"][name][0] == 100.0 and 0.0 < seen["levels"][name][1] < 1.0
    held = bc.backoff_diagnostics(g, trees[-3:], keeps[-3:], [np.ones_like(k) for k in keeps[-3:]])
    assert held["levels"]["channel level 1"][0] < 100.0
    assert held["levels"]["channel level 1"][0] <= held["levels"]["channel level 4"][0]
    km = bc.backoff_diagnostics(_demo_grammar(4)[0], trees[-3:], keeps[-3:], keeps[-3:])
    assert set(km["levels"]) == {"channel level 4"}  # KM: no lexicalized levels, PCFG source


def test_backoff_diagnostics_split_the_source_score():
    g, trees, keeps = _demo_grammar(6)
    full = [np.ones_like(k) for k in keeps]
    d = bc.backoff_diagnostics(g, trees, keeps, full)
    assert d["d_source"] != 0.0 and d["d_source_rules"] != 0.0 and d["d_source"] != d["d_source_rules"]
