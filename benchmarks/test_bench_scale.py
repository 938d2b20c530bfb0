"""The scaling model of benchmarks/bench_scale.py (issue 26 item 5): a pure fit, checked on made-up runs whose
parameters are known."""

from __future__ import annotations

import math

import pytest

import bench_scale


@pytest.fixture(scope="module")
def bench():
    return bench_scale


def _runs(d0, d1, s, w, u, batches=30):
    return [{"n": n, "driver_cpu": d0 + d1 * n, "startup_cpu": s, "work_cpu": w + u * n, "batches": batches}
            for n in (1, 2, 4, 1, 2, 4)]


def test_fit_recovers_the_parameters(bench):
    m = bench.fit_model(_runs(2.0, 0.25, 1.5, 60.0, 0.8))
    assert m["d0"] == pytest.approx(2.0) and m["d1"] == pytest.approx(0.25)
    assert m["s"] == pytest.approx(1.5) and m["u"] == pytest.approx(0.8)
    assert m["W"] == pytest.approx(60.0) and m["B"] == 30


def test_negative_worker_slope_is_noise(bench):
    m = bench.fit_model(_runs(1.0, 0.0, 1.0, 60.0, -0.5))
    assert m["u"] == 0.0
    assert m["W"] == pytest.approx(60.0 - 0.5 * (1 + 2 + 4) / 3)


def test_predict_is_amdahl_with_whole_batches(bench):
    m = bench.fit_model(_runs(2.0, 0.25, 1.5, 60.0, 0.8))
    for n in (1, 2, 4, 8, 64):
        t = bench.predict(m, n)
        assert t["total"] == pytest.approx(2.0 + 0.25 * n + 1.5 + 0.8 + math.ceil(30 / n) * 2.0)
    # no more than B workers help: 32 and 64 workers leave the same one batch each
    assert bench.predict(m, 32)["parse"] == bench.predict(m, 64)["parse"] == pytest.approx(2.0)
    # another job: the work and batches scale, the serial part stays
    big = bench.predict(m, 8, work=8000.0, batches=800)
    assert big["parse"] == pytest.approx(1000.0) and big["driver"] == pytest.approx(4.0)
