"""The table of benchmarks/bench_discodop.py (issue 26 item 3), built from made-up figures: ratios against the
disco-dop counterpart, rows of another run marked, the goal line.  Needs neither disco-dop nor the corpora."""

from __future__ import annotations

import pytest

import bench_discodop


def _row(rate: float, f1: float, stamp: str, **extra) -> dict:
    return {"sent_per_cpu_s": rate, "f1": f1, "exact": 10.0, "scored": 260, "sentences": 260, "no_parse": 0,
            "startup_1": 1.0, "rss_mb": 100.0, "train_cpu": 5.0, "command": "`cmd`", "measured": stamp, "repeats": 3,
            "planned": 3, "run": "nice -n 10 python benchmarks/bench_discodop.py", "max_length": 40,
            "train_trees": 3396, **extra}


@pytest.fixture()
def work(tmp_path, monkeypatch):
    for part in ("dd-pcfg", "dd-dop"):
        (tmp_path / f"{part}.prm").write_text(f"stages=[dict(name='{part}')],\n", encoding="utf-8")
    monkeypatch.setattr(bench_discodop, "WORK", tmp_path)
    return tmp_path


def test_same_run_ratios_and_goal(work):
    now = "2026-11-28 07:00 UTC, commit abc"
    figures = {"dd-pcfg": _row(4.0, 75.0, now), "dd-dop": _row(1.0, 80.0, now), "pcfg": _row(50.0, 76.0, now),
               "tsg-maxrule": _row(8.0, 85.0, now), "tsg-mpd": _row(12.0, 79.0, now, train_cpu=None)}
    body = bench_discodop.report(figures, now)
    rows = {line.split(" | ")[0].lstrip("| "): line.split(" | ") for line in body.splitlines() if line.startswith("| ")}
    assert rows[bench_discodop.ROWS["pcfg"][0]][2] == "12.5x"
    assert rows[bench_discodop.ROWS["tsg-maxrule"][0]][2] == "8.0x"
    assert "pcfg 12.5x, F1 +1.00 (met)" in body
    assert "tsg-maxrule 8.0x, F1 +5.00 (not met)" in body
    assert "tsg-mpd 12.0x, F1 -1.00 (not met)" in body  # fast enough, but F1 lost
    assert "(recorded " not in body and "across runs" not in body and "repeats done so far" not in body
    assert "stages=[dict(name='dd-dop')]" in body  # the parameter files shown are the ones in the work folder


def test_rows_of_another_run_are_marked(work):
    old, now = "2026-11-28 06:00 UTC, commit abc", "2026-11-28 07:00 UTC, commit def"
    figures = {"dd-pcfg": _row(4.0, 75.0, old), "pcfg": _row(40.0, 76.0, now, repeats=1)}
    body = bench_discodop.report(figures, now)
    assert f"(recorded {old})" in body
    assert "10.0x (across runs)" in body
    assert "1 of 3 repeats done so far" in body
