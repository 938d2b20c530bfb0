"""Fault cases of the ostag plugin's commands (`treegram convert`, `train ostag-bayes`, the `--bayesian` alias),
tallied like tests/test_fault_suite.py: every case ends in exit 0 or one clean error line, never a traceback, and
no input file changes.  `test_summary` prints the counts."""

from __future__ import annotations


import pytest

from faults import new_tally, run_cli, small_world, summary

from treegram.cli.app import main

TALLY = new_tally()


def run_case(argv, inputs, capsys):
    code, _out, err = run_cli(TALLY, argv, inputs, capsys)
    return code, err


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = small_world(tmp_path_factory.mktemp("ostag_faults"))
    d, tb = w["d"], w["tb"]
    em = d / "em.model"
    assert main(["-q", "train", "ostag", "--treebank", str(tb), "--out", str(em), "--min-count", "1"]) == 0
    bayes = d / "bayes.model"
    assert main(["-q", "train", "ostag-bayes", "--treebank", str(tb), "--out", str(bayes), "--iterations", "1",
                 "--tsg-init", "1", "--average", "1"]) == 0
    return {**w, "em": em, "bayes": bayes}


CASES = [  # (argv with {placeholders}, expected exit code 0 / nonzero, a word the error names)
    (["convert", "{d}/missing.model", "--out", "{d}/x.tsg"], 1, "not found"),
    (["convert", "{model}", "--out", "{d}/x.tsg"], 1, "OSTAG"),
    (["convert", "{em}", "--out", "{d}/x.tsg"], 1, "adjunction statistics"),
    (["convert", "{bayes}", "--out", "{bayes}"], 1, "destroy"),
    (["convert", "{bayes}", "--out", "{d}/x.tsg", "--min-count", "-1"], 1, "min-count"),
    (["convert", "{bayes}", "--out", "{d}/x.tsg", "--to", "pcfg"], 1, "to"),
    (["convert", "{tb}", "--out", "{d}/x.tsg"], 1, ""),
    (["convert", "{bayes}", "--out", "{d}/x.tsg", "--min-count", "1e9"], 0, ""),
    (["convert", "{em}", "--out", "{d}/x.tsg", "--min-prob", "0.01"], 0, ""),
    (["convert", "{bayes}", "--out", "{d}/x.tsg", "--min-prob", "0"], 1, "min-prob"),
    (["train", "ostag", "--treebank", "{tb}", "--out", "{d}/y.model", "--mu", "0.2"], 1, "--bayesian"),
    (["train", "ostag", "--bayesian", "--treebank", "{tb}", "--out", "{d}/y.model", "--no-expand"], 1,
     "not an option"),
    (["train", "ostag-bayes", "--treebank", "{tb}", "--out", "{d}/y.model", "--mu", "1.5"], 1, "mu"),
    (["train", "ostag-bayes", "--treebank", "{tb}", "--out", "{d}/y.model", "--decoder", "nope"], 1, "decoder"),
    (["train", "ostag-bayes", "--treebank", "{d}/missing.mrg", "--out", "{d}/y.model"], 1, ""),
]


@pytest.mark.parametrize("argv,ok,word", CASES)
def test_case(world, capsys, argv, ok, word):
    argv = [a.format(**world) for a in argv]
    inputs = [world["tb"], world["model"], world["em"], world["bayes"]]
    code, err = run_case(["-q", *argv], inputs, capsys)
    assert (code == 0) == (ok == 0), (argv, err)
    if code:
        assert err.count("\n") <= 2 and word.lower() in err.lower(), err  # one line (plus argparse's usage)
        assert not (world["d"] / "y.model").exists()


def test_summary(capsys):
    summary(TALLY, "ostag fault cases", capsys)
