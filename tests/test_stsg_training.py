"""`treegram train stsg` (Gibbs) through the core sampling loop (`treegram.training`): the same seed gives the same
model, a run killed with SIGKILL and resumed from its last periodic checkpoint gives the model of the uninterrupted
run, the annealing/averaging options reach the sampler, and the other methods still find their run options."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import write_demo_pairs

from treegram.cli.app import main
from treegram.io import load_bundle


@pytest.fixture(scope="module")
def d(tmp_path_factory):
    d = tmp_path_factory.mktemp("stsg-train")
    write_demo_pairs(d)
    return d


def _args(d, out, *extra):
    return ["-q", "train", "stsg", "--pairs", str(d / "src.txt"), str(d / "tgt.txt"), "--parser",
            str(d / "parser.model"), "--parse-cache", str(d / "cache"), "--out", str(out), *extra]


def _meta(path):
    return load_bundle(path)[0]["plugin_meta"]


def test_same_seed_same_model_other_seed_other_model(d):
    for name, seed in (("a", "4"), ("b", "4"), ("c", "5")):
        assert main(_args(d, d / f"{name}.model", "--iterations", "12", "--seed", seed)) == 0
    a, b, c = (_meta(d / f"{n}.model") for n in "abc")
    assert a["grammar"] == b["grammar"] and a["info"]["trace"][-1] == {**b["info"]["trace"][-1],
                                                                      "seconds": a["info"]["trace"][-1]["seconds"]}
    assert a["grammar"] != c["grammar"]
    assert a["info"]["iterations"] == 12 and a["info"]["sweeps_run"] == 12
    temps = [r["temperature"] for r in a["info"]["trace"]]
    assert temps[0] == 5.0 and temps[-1] == 0.0  # the STSG default schedule, through the core options


def test_annealing_and_averaging_options_reach_the_sampler(d):
    out = d / "avg.model"
    assert main(_args(d, out, "--iterations", "10", "--anneal-start", "1", "--anneal-end", "1", "--average", "3")) == 0
    info = _meta(out)["info"]
    assert {r["temperature"] for r in info["trace"]} == {1.0}
    assert info["averaged_sweeps"] == [8, 9, 10]
    counts = [r[3] for r in _meta(out)["grammar"]["rules"]]
    assert any(c != int(c) for c in counts)  # rules in only some of the averaged states keep fractional counts


def test_resume_after_sigkill_gives_the_uninterrupted_model(d):
    total = "400"
    full = d / "full.model"
    assert main(_args(d, full, "--iterations", total, "--seed", "2", "--checkpoint", str(d / "full.ckpt"))) == 0
    killed, ck = d / "killed.model", d / "killed.ckpt"
    cmd = [sys.executable, "-c", "import sys; from treegram.cli.app import main; sys.exit(main(sys.argv[1:]))",
           *_args(d, killed, "--iterations", total, "--seed", "2", "--checkpoint", str(ck), "--checkpoint-every",
                  "7")]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while not ck.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(proc.pid, signal.SIGKILL)  # no handler runs: only the periodic checkpoints survive
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and not killed.exists()
    done = load_bundle(ck)[0]["sweeps_done"]
    assert 0 < done < int(total) and done % 7 == 0
    assert main(_args(d, killed, "--iterations", total, "--seed", "2", "--checkpoint", str(ck), "--resume")) == 0
    a, b = _meta(full), _meta(killed)
    assert a["grammar"] == b["grammar"]
    assert [r["log_likelihood"] for r in a["info"]["trace"]] == pytest.approx(
        [r["log_likelihood"] for r in b["info"]["trace"]], abs=1e-6)
    assert a["info"]["map_rules"] == b["info"]["map_rules"]


def test_resume_refuses_other_settings_and_missing_checkpoints(d, capsys):
    ck = d / "x.ckpt"
    assert main(_args(d, d / "x.model", "--iterations", "5", "--checkpoint", str(ck))) == 0
    capsys.readouterr()
    assert main(_args(d, d / "y.model", "--iterations", "8", "--alpha", "3", "--checkpoint", str(ck),
                      "--resume")) != 0
    assert "other settings" in capsys.readouterr().err
    assert main(_args(d, d / "z.model", "--iterations", "8", "--checkpoint", str(d / "none.ckpt"), "--resume")) != 0
    assert "no checkpoint" in capsys.readouterr().err


def test_other_methods_take_their_own_iteration_defaults(d):
    out = d / "em.model"
    assert main(_args(d, out, "--method", "em")) == 0
    assert _meta(out)["info"]["iterations"] == 30
