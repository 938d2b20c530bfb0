"""TIG plugin end to end: `treegram train tig` (both variants) / parse / grammar --aux on the demo treebank, model
save/load, and checkpoint resume giving the uninterrupted run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import parse_demo_sentences

from treegram.cli.app import main
from treegram.formalism import RunOptions, load_model
from treegram.corpora.demo import demo_trees

from treegram.plugins.tig.formalism import TIGOptions, train_tig


@pytest.mark.parametrize("variant", ["tig", "tig0"])
def test_cli_train_parse_grammar(variant, demo_file, tmp_path, capsys):
    out = tmp_path / f"demo.{variant}"
    assert main(["-q", "train", "tig", "--variant", variant, "--treebank", str(demo_file), "--iterations", "3",
                 "--tsg-init", "2", "--phi", "0.3", "--seed", "4", "--out", str(out)]) == 0
    model = load_model(out)
    assert model.formalism == "tig" and model.settings.variant == variant
    assert model.info["iterations"] == 3 and len(model.trace) == 3
    assert model.info["initial_trees"] > 0
    parse_demo_sentences(out, tmp_path)
    # training sentences parse back to trees with the same yield, and mostly the gold tree
    trees = demo_trees()
    from treegram.evaluation.parseval import ParsevalParams, score_corpus

    f1 = score_corpus(trees, [model.parse(t.leaves()) for t in trees], ParsevalParams()).f1
    assert f1 > 90
    capsys.readouterr()
    assert main(["grammar", str(out), "--top", "3", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["formalism"] == "tig" and len(info["trees"]["initial"]) == 3
    assert info["left_trees"] + info["right_trees"] == len(model.fragments["left"]) + len(model.fragments["right"])
    assert main(["grammar", str(out), "--top", "2", "--aux", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)["trees"]
    assert set(listed) == {"left", "right"} and all(len(v) <= 2 for v in listed.values())
    assert listed["left"] == model.fragments["left"][:2]
    assert main(["grammar", str(out), "--top", "2", "--aux"]) == 0
    drawn = capsys.readouterr().out
    if model.fragments["left"] or model.fragments["right"]:
        assert "*" in drawn  # feet are drawn as X*


def test_resume_is_the_uninterrupted_run(tmp_path):
    trees = demo_trees()
    options = TIGOptions(variant="tig", phi=0.2, tsg_init=1, average=1)
    full = train_tig(trees, options, RunOptions(iterations=4, seed=2))
    ck = tmp_path / "run.ckpt"
    train_tig(trees, options, RunOptions(iterations=2, seed=2, checkpoint=ck))
    resumed = train_tig(trees, options, RunOptions(iterations=4, seed=2, checkpoint=ck, resume=True))
    assert [r["log_likelihood"] for r in resumed.trace] == [r["log_likelihood"] for r in full.trace]
    assert resumed.fragments == full.fragments
    assert np.array_equal(resumed.cfg.bin_logp, full.cfg.bin_logp)
