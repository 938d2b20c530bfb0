"""No recursion on user data: 100k-deep and 100k-wide trees through the core tree code and the commands, and every
formalism's training on trees far past Python's recursion limit (the audit's RecursionErrors: TIG and Bayesian
OSTAG on >= 150 children or ~1000 levels).  Sizes are chosen so that the whole file stays fast; benchmarks/bench_io.py
runs every formalism on the full 100k trees."""

from __future__ import annotations

import json
import sys

import pytest

from treegram.cli.app import main
from treegram.trees import (NormalizeOptions, ascii_tree, binarize, format_tree, normalize_tree,
                            parse_brackets, unbinarize)

N = 100_000
SMALL = """(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))
(S (NP (DT a) (NN dog)) (VP (VBD chased) (NP (DT the) (NN cat))) (. .))
(S (NP (PRP she)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))
"""


def deep_text(n: int) -> str:
    return "(S " + "(NP " * n + "(NN w)" + ")" * n + ")"


def wide_text(n: int) -> str:
    return "(S " + " ".join(f"(NN w{i % 7})" for i in range(n)) + ")"


@pytest.fixture(scope="module")
def big_trees():
    return parse_brackets(deep_text(N))[0], parse_brackets(wide_text(N))[0]


def test_core_tree_operations_are_iterative(big_trees):
    assert sys.getrecursionlimit() < N
    deep, wide = big_trees
    assert deep.height() == N + 3 and len(wide.children) == N
    for t in (deep, wide):
        back = parse_brackets(format_tree(t))[0]
        assert back == t and hash(back) == hash(t)
        assert normalize_tree(t, NormalizeOptions()) == t
        assert unbinarize(binarize(t, horizontal=1, vertical=2)) == t  # wide: used to take quadratic memory
        assert len(list(t.spans())) == t.num_nodes()
    assert len(ascii_tree(parse_brackets(deep_text(2000))[0]).splitlines()) > 2000


def test_show_and_evalb_read_huge_trees(tmp_path, capsys):
    f = tmp_path / "big.mrg"
    f.write_text(deep_text(N) + "\n" + wide_text(N) + "\n")
    assert main(["-q", "show", str(f), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert [len(t["words"]) for t in shown] == [1, N]
    assert main(["-q", "evalb", str(f), str(f), "--json"]) == 0
    scores = json.loads(capsys.readouterr().out)
    assert scores["f1"] == 100.0 and scores["sentences"] == 2


@pytest.fixture
def treebank(tmp_path):
    """Small trees plus a 20k-deep and a 20k-wide tree (20 times Python's recursion limit)."""
    tb = tmp_path / "tb.mrg"
    tb.write_text(SMALL + deep_text(20_000) + "\n" + wide_text(20_000) + "\n")
    return tb


@pytest.mark.parametrize("formalism", [
    ["pcfg"],
    ["tsg", "--iterations", "1"],
])
def test_training_on_deep_and_wide_trees(formalism, treebank, tmp_path, capsys):
    out = tmp_path / "m.model"
    code = main(["-q", "train", *formalism, "--treebank", str(treebank), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    # parsing: a 1-word sentence from the deep tree, a 20k-word one refused by --max-length (flat, not a crash)
    sents = tmp_path / "s.txt"
    sents.write_text("w\n" + " ".join(f"w{i % 7}" for i in range(20_000)) + "\n")
    parsed = tmp_path / "p.txt"
    assert main(["-q", "parse", "--model", str(out), "--input", str(sents), "--out", str(parsed)]) == 0
    lines = parsed.read_text().split("\n")[:-1]
    assert len(lines) == 2 and len(parse_brackets(lines[1])[0].leaves()) == 20_000


@pytest.mark.parametrize("formalism", [
    ["ostag", "--em-iterations", "1"],
    ["tig", "--iterations", "1"],
    ["ostag", "--bayesian", "--iterations", "1", "--tsg-init", "0"],
])
def test_superlinear_trainers_handle_deep_trees_and_leave_out_huge_ones(formalism, tmp_path, capsys):
    """TIG and Bayesian OSTAG used to hit RecursionError at ~150 children or ~300 levels; now a 1,200-deep and a
    160-wide tree train, and 100k-node trees are left out with a note instead of crashing (OSTAG EM: instead of
    a quadratic span chart taking tens of GB)."""
    tb = tmp_path / "tb.mrg"
    tb.write_text(SMALL + deep_text(1200) + "\n" + wide_text(160) + "\n" + deep_text(N) + "\n")
    out = tmp_path / "m.model"
    code = main(["train", *formalism, "--treebank", str(tb), "--out", str(out)])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "left out 1 training tree" in captured.err + captured.out
    assert out.is_file()
