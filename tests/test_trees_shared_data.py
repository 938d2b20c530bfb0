"""The readers and transformations on the real treebanks in ../shared/data (skipped when absent)."""

from __future__ import annotations

import re
import time

import pytest

from treegram.trees import (
    NO_NORMALIZATION,
    NormalizeOptions,
    binarize,
    normalize_tree,
    parse_brackets,
    read_treebank,
    unbinarize,
)


@pytest.fixture(scope="module")
def ptb_train(shared_data):
    return read_treebank(shared_data / "ptb-sample" / "train")


def test_ptb_sample_counts_and_speed(shared_data, ptb_train):
    t0 = time.perf_counter()
    again = read_treebank(shared_data / "ptb-sample" / "train")
    elapsed = time.perf_counter() - t0
    assert len(ptb_train) == len(again) == 3396
    assert elapsed < 10, f"reading ptb-sample train took {elapsed:.1f}s"
    assert len(read_treebank(shared_data / "ptb-sample" / "dev")) == 273
    # Normalized trees: no traces, no function tags or indices, no empty top.
    labels = {n.label for t in ptb_train for n in t.subtrees()}
    assert "-NONE-" not in labels and "" not in labels
    assert not [l for l in labels if not l.startswith("-") and re.search(r"[-=]", l)]
    assert {"-LRB-", "-RRB-", "NP", "S", "PRP$"} <= labels


def test_fused_normalization_matches_two_pass_on_ptb(shared_data):
    raw = read_treebank(shared_data / "ptb-sample" / "dev", normalize=None)
    assert raw[0].label == ""
    assert read_treebank(shared_data / "ptb-sample" / "dev", normalize=NO_NORMALIZATION) == raw
    for opts in (NormalizeOptions(), NormalizeOptions(remove_traces=False, strip_indices=False)):
        fused = read_treebank(shared_data / "ptb-sample" / "dev", normalize=opts)
        assert fused == [n for n in (normalize_tree(t, opts) for t in raw) if n is not None]


def test_lark_engine_agrees_on_a_real_file(shared_data):
    text = (shared_data / "ptb-sample" / "train" / "wsj_0001.mrg").read_text()
    assert parse_brackets(text, engine="lark") == parse_brackets(text)


def test_gum_const_reads_completely(shared_data):
    directory = shared_data / "gum-const" / "const"
    expected = sum(len(re.findall(r"^\(", f.read_text(encoding="utf-8"), re.M)) for f in sorted(directory.glob("*.ptb")))
    t0 = time.perf_counter()
    trees = read_treebank(directory)
    elapsed = time.perf_counter() - t0
    assert len(trees) == expected and not trees.problems
    assert elapsed < 20, f"reading gum-const took {elapsed:.1f}s"
    assert all(t.label != "ROOT" for t in trees)


@pytest.mark.parametrize("horizontal", [1, 2, None])
def test_binarize_round_trip_on_all_ptb_train(ptb_train, horizontal):
    for vertical in (1, 2):
        for t in ptb_train:
            b = binarize(t, horizontal=horizontal, vertical=vertical)
            assert unbinarize(b) == t
