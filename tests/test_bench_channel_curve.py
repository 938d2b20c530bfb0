"""The learning-curve helpers of benchmarks/bench_channel.py: the slices that are parsed and cached one by one, the
size list option, and the nested Google samples that make the curve paired."""

import argparse
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import bench_channel as bc  # noqa: E402


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
