"""Fault cases of the ostag plugin's commands (`treegram convert`, `train ostag-bayes`, the `--bayesian` alias),
tallied like tests/test_fault_suite.py: every case ends in exit 0 or one clean error line, never a traceback, and
no input file changes.  `test_summary` prints the counts."""

from __future__ import annotations


import pytest

from faults import run_cli

from treegram.cli.app import main

TALLY = {"cases": 0, "ok": 0, "clean_errors": 0, "tracebacks": 0, "inputs_destroyed": 0}
SMALL = """(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))
(S (NP (DT a) (NN dog)) (VP (VBD chased) (NP (DT the) (NN cat))) (. .))
(S (NP (PRP she)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))
"""


def run_case(argv, inputs, capsys):
    code, _out, err = run_cli(TALLY, argv, inputs, capsys)
    return code, err


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    d = tmp_path_factory.mktemp("ostag_faults")
    tb = d / "tb.mrg"
    tb.write_text(SMALL)
    pcfg = d / "pcfg.model"
    assert main(["-q", "train", "pcfg", "--treebank", str(tb), "--out", str(pcfg), "--rare-threshold", "1"]) == 0
    em = d / "em.model"
    assert main(["-q", "train", "ostag", "--treebank", str(tb), "--out", str(em), "--min-count", "1"]) == 0
    bayes = d / "bayes.model"
    assert main(["-q", "train", "ostag-bayes", "--treebank", str(tb), "--out", str(bayes), "--iterations", "1",
                 "--tsg-init", "1", "--average", "1"]) == 0
    return {"d": d, "tb": tb, "pcfg": pcfg, "em": em, "bayes": bayes}


CASES = [  # (argv with {placeholders}, expected exit code 0 / nonzero, a word the error names)
    (["convert", "{d}/missing.model", "--out", "{d}/x.tsg"], 1, "not found"),
    (["convert", "{pcfg}", "--out", "{d}/x.tsg"], 1, "OSTAG"),
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
    inputs = [world["tb"], world["pcfg"], world["em"], world["bayes"]]
    code, err = run_case(["-q", *argv], inputs, capsys)
    assert (code == 0) == (ok == 0), (argv, err)
    if code:
        assert err.count("\n") <= 2 and word.lower() in err.lower(), err  # one line (plus argparse's usage)
        assert not (world["d"] / "y.model").exists()


def test_summary(capsys):
    with capsys.disabled():
        print(f"\nostag fault cases: {TALLY['cases']} CLI cases, {TALLY['ok']} ok, {TALLY['clean_errors']} clean "
              f"errors, {TALLY['tracebacks']} tracebacks, {TALLY['inputs_destroyed']} inputs destroyed")
    assert TALLY["tracebacks"] == 0 and TALLY["inputs_destroyed"] == 0
