"""TSG plugin end to end: CLI train/parse/grammar on the demo treebank, the Goodman transform against the TSG's
own probabilities, and resume after a killed CLI run."""

from __future__ import annotations

import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import parse_demo_sentences

from treegram.cli.app import main
from treegram.formalism import load_model
from treegram.corpora.demo import demo_trees
from treegram.trees import parse_brackets

from treegram.elementary.data import TSGSettings, prepare
from treegram.plugins.tsg.model import goodman_cfg
from treegram.elementary.gibbs import GibbsTSG


@pytest.fixture(scope="module")
def trained(demo_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("tsgm") / "demo.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(demo_file), "--iterations", "4", "--seed", "5",
                 "--out", str(out)]) == 0
    return out


def test_cli_train_parse_grammar(trained, tmp_path, capsys):
    capsys.readouterr()
    model = load_model(trained)
    assert model.formalism == "tsg"
    assert model.info["iterations"] == 4 and len(model.trace) == 4
    assert parse_demo_sentences(trained, tmp_path).label == "S"
    assert main(["grammar", str(trained), "--top", "3", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["formalism"] == "tsg" and len(info["top_rules"]) == 3
    counts = [r["count"] for r in info["top_rules"]]
    assert counts == sorted(counts, reverse=True)
    assert info["elementary_trees"] >= info["elementary_trees_count_gt1"] > 0
    assert main(["tsg-trees", str(trained), "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "count" in out and "│" in out  # a table and drawn trees


def test_cli_same_seed_same_model(trained, demo_file, tmp_path):
    again = tmp_path / "again.tsg"
    assert main(["-q", "train", "tsg", "--treebank", str(demo_file), "--iterations", "4", "--seed", "5",
                 "--out", str(again)]) == 0
    assert load_model(again).fragments == load_model(trained).fragments


def test_cli_errors_are_one_line(tmp_path, demo_file, capsys):
    assert main(["train", "tsg", "--treebank", str(tmp_path / "missing"), "--out", str(tmp_path / "m")]) == 2
    assert main(["train", "tsg", "--treebank", str(demo_file), "--out", str(tmp_path / "m"), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err


def test_goodman_transform_equals_tsg_probabilities():
    """Sum over all derivations of a training tree: the TSG's product of DP predictives (enumerated) == the
    transformed CFG's inside score restricted to that tree."""
    from treegram.charts import inside, tree_pruning

    text = """
    (S (NP (DT the) (NN dog)) (VP (VB runs)))
    (S (NP (DT the) (NN cat)) (VP (VB sleeps) (NP (DT a) (NN dog))))
    (S (NP (NN cat)) (VP (VB runs)))
    """
    settings = TSGSettings(horizontal=None, vertical=1, rare_threshold=1, resample_alpha=False,
                           resample_beta=False)
    data, _ = prepare(parse_brackets(text), settings)
    state = GibbsTSG(data, settings, 1)
    state.alpha[:] = 0.5 + 0.25 * np.arange(data.num_labels)
    state.beta[:] = 0.3 + 0.1 * (np.arange(data.num_labels) % 4)
    state.rebuild()
    cfg, types = goodman_cfg(state)
    slots = state.live_slots()
    count_of = {int(state.keys[s]): int(state.cnt[s]) for s in slots}
    total = state.total
    for item in range(data.num_trees):
        lo, hi = data.tree_rows(item)
        sites = [i - lo for i in data.sites.tolist() if lo <= i < hi]
        probs = []
        for combo in itertools.product((0, 1), repeat=len(sites)):
            f = state.flags[lo:hi].copy()
            f[sites] = combo
            ks, lps, cs, _ = state.tree_fragments(item, f)
            lp = 0.0
            for k, l0, c in zip(ks.tolist(), lps.tolist(), cs.tolist()):
                a = state.alpha[c]
                lp += math.log(count_of.get(k, 0) + a * math.exp(l0)) - math.log(total[c] + a)
            probs.append(lp)
        expected = float(np.logaddexp.reduce(probs))
        tree = data.arrays.to_tree(item, data.labels, data.words)
        words = tree.leaves()
        chart = inside(cfg, cfg.lexical_input(words), prune=tree_pruning(tree.children[0], cfg.categories,
                                                                          extra_root_labels=["TOP"]))
        assert chart.log_z == pytest.approx(expected, abs=1e-9)
    assert len(types) == len(slots)


def test_killed_cli_run_resumes_to_the_uninterrupted_result(tmp_path):
    """`kill` (SIGTERM) a training run mid-way; `--resume` finishes it with the same model as a run that was
    never interrupted."""
    # A treebank big enough that the run is still going when the signal lands (the demo alone finishes in ms).
    treebank = tmp_path / "demo-x12.mrg"
    treebank.write_text("".join(t.to_bracket() + "\n" for t in demo_trees()) * 12, encoding="utf-8")
    iterations = "60"
    base = ["train", "tsg", "--treebank", str(treebank), "--iterations", iterations, "--seed", "2",
            "--sampler", "gibbs"]
    full = tmp_path / "full.tsg"
    assert main(["-q", *base, "--out", str(full)]) == 0

    killed = tmp_path / "killed.tsg"
    ck = Path(str(killed) + ".ckpt")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "treegram.cli.app", "-q", *base, "--out", str(killed)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    deadline = time.time() + 120
    while not ck.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ck.exists(), proc.communicate()[1].decode()
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=60)
    if proc.returncode == 0:
        pytest.skip("the run finished before the signal arrived")
    assert proc.returncode == 130, err.decode()
    assert not killed.exists()
    from treegram.io import load_bundle

    meta, _ = load_bundle(ck)
    if meta["sweeps_done"] == int(iterations):
        pytest.skip("the signal arrived after the last sweep")
    assert 0 < meta["sweeps_done"] < int(iterations)
    assert main(["-q", *base, "--out", str(killed), "--resume"]) == 0
    a, b = load_model(full), load_model(killed)
    assert a.fragments == b.fragments
    assert [r["log_likelihood"] for r in a.trace] == [r["log_likelihood"] for r in b.trace]
