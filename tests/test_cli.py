"""The CLI as a user meets it: commands, --json output, batch safety, and one-line errors instead of tracebacks."""

from __future__ import annotations

import io
import json
import sys

import pytest

from treegram.cli.app import main

DEMO_TREES = """(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) (NN mat)))) (. .))
(S (NP (DT a) (NN dog)) (VP (VBD chased) (NP (DT the) (NN cat))) (. .))
(S (NP (PRP she)) (VP (VBD saw) (NP (DT a) (NN dog))) (. .))
"""


@pytest.fixture
def model_path(tmp_path, capsys):
    tb = tmp_path / "train.mrg"
    tb.write_text(DEMO_TREES)
    path = tmp_path / "pcfg.model"
    assert main(["-q", "train", "pcfg", "--treebank", str(tb), "--out", str(path), "--rare-threshold", "1",
                 "--horizontal", "1", "--vertical", "1"]) == 0
    capsys.readouterr()
    return path


def run(capsys, argv):
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_parse_keeps_every_line_and_flags_fallbacks(tmp_path, model_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("the dog sat on the mat .\n\nthe cat chased a dog on the mat .\nsat\n")
    out = tmp_path / "out.mrg"
    code, _, err = run(capsys, ["parse", "--model", str(model_path), "--input", str(src), "--out", str(out),
                                "--max-length", "8"])
    assert code == 0
    lines = out.read_text().split("\n")[:-1]
    assert len(lines) == 4
    assert lines[0].startswith("(S (NP (DT the) (NN dog))")
    assert lines[1] == ""  # empty input line -> empty output line
    assert lines[2].startswith("(S (XX the)")  # 9 words > --max-length 8 -> flat fallback
    assert "1 longer than 8" in err and "1 empty" in err


def test_parse_json_reports_status_per_sentence(tmp_path, model_path, capsys):
    src = tmp_path / "in.txt"
    src.write_text("the dog sat on the mat .\n\n")
    code, out, _ = run(capsys, ["-q", "parse", "--model", str(model_path), "--input", str(src), "--json"])
    assert code == 0
    data = json.loads(out)
    assert [s["status"] for s in data["sentences"]] == ["ok", "empty"]
    assert data["counts"]["ok"] == 1


def test_parse_reads_stdin(monkeypatch, model_path, capsys):
    monkeypatch.setattr(sys, "stdin", io.StringIO("the cat sat on the mat .\n"))
    code, out, _ = run(capsys, ["-q", "parse", "--model", str(model_path)])
    assert code == 0 and out.startswith("(S (NP (DT the) (NN cat)) (VP (VBD sat) (PP")


def gold_and_test(d, line: int, tree: str):
    """`d/gold.mrg` (DEMO_TREES) and `d/test.mrg`, the same trees but line `line` replaced by `tree`."""
    gold = d / "gold.mrg"
    gold.write_text(DEMO_TREES)
    test = d / "test.mrg"
    lines = DEMO_TREES.splitlines()
    lines[line] = tree
    test.write_text("\n".join(lines) + "\n")
    return gold, test


def test_evalb_json_keys_and_values(tmp_path, capsys):
    # VP bracket missing
    gold, test = gold_and_test(tmp_path, 1, "(S (NP (DT a) (NN dog)) (VBD chased) (NP (DT the) (NN cat)) (. .))")
    code, out, _ = run(capsys, ["evalb", str(gold), str(test), "--json"])
    assert code == 0
    data = json.loads(out)
    assert {"precision", "recall", "f1", "exact", "sentences"} <= set(data)
    # gold brackets: 5 + 4 + 4 = 13; test misses one VP: matched 12 of 12 test, 12 of 13 gold
    assert data["sentences"] == 3
    assert data["precision"] == pytest.approx(100.0)
    assert data["recall"] == pytest.approx(100 * 12 / 13)
    assert data["exact"] == pytest.approx(100 * 2 / 3)


def test_evalb_metric_uses_the_registered_metrics(tmp_path, capsys):
    """`register_metrics` is consumed: `evalb --metric NAME` scores with a plugin's metric (failed parses reach it
    as None); `--metric parseval` is the default report; an unknown name is one red line."""
    import treegram
    from treegram.plugin_manager import get_plugin_manager

    gold, test = gold_and_test(tmp_path, 2, "(())")  # a failed parse

    class SameLabels:
        @treegram.hookimpl
        def register_metrics(self, register):
            register("root-accuracy", lambda golds, tests: {
                "root_accuracy": sum(t is not None and t.label == g.label for g, t in zip(golds, tests)) / len(golds),
                "failed": float(sum(t is None for t in tests))})

    default = run(capsys, ["evalb", str(gold), str(test), "--json"])
    assert default[0] == 0 and json.loads(default[1])["sentences"] == 3
    assert run(capsys, ["evalb", str(gold), str(test), "--json", "--metric", "parseval"]) == default
    pm = get_plugin_manager()
    plugin = SameLabels()
    pm.register(plugin, name="root-accuracy-metric")
    try:
        code, out, err = run(capsys, ["evalb", str(gold), str(test), "--json", "--metric", "root-accuracy"])
        assert code == 0, err
        assert json.loads(out) == {"metric": "root-accuracy", "root_accuracy": 2 / 3, "failed": 1.0}
        code, _, err = run(capsys, ["evalb", str(gold), str(test), "--metric", "root-accuracy", "--per-sentence"])
        assert code != 0 and "parseval" in err and "Traceback" not in err
    finally:
        pm.unregister(plugin)
    code, _, err = run(capsys, ["evalb", str(gold), str(test), "--metric", "root-accuracy"])
    assert code != 0 and "unknown metric 'root-accuracy'" in err and "Traceback" not in err


def test_show_draws_trees(tmp_path, capsys):
    f = tmp_path / "t.mrg"
    f.write_text("( (S (NP-SBJ (DT the) (NN cat)) (VP (VBD sat)) (-NONE- *T*-1)) )\n")
    code, out, _ = run(capsys, ["show", str(f)])
    assert code == 0
    assert "cat" in out and "NP" in out and "NP-SBJ" not in out and "-NONE-" not in out
    code, out, _ = run(capsys, ["show", str(f), "--raw", "--json"])
    assert "NP-SBJ" in json.loads(out)[0]["tree"]


def test_grammar_lists_top_rules(model_path, capsys):
    code, out, _ = run(capsys, ["grammar", str(model_path), "--top", "3", "--json"])
    assert code == 0
    info = json.loads(out)
    assert info["formalism"] == "pcfg" and len(info["top_rules"]) == 3


@pytest.mark.parametrize("argv_maker, expected", [
    (lambda p: ["parse", "--model", str(p / "missing.model")], "not found"),
    (lambda p: ["evalb", str(p / "nope.mrg"), str(p / "nope2.mrg")], "nope.mrg"),
    (lambda p: ["train", "pcfg", "--treebank", str(p / "bad.mrg"), "--out", str(p / "m")], "bad.mrg"),
    (lambda p: ["parse", "--model", str(p / "bad.mrg")], "not a treegram model"),
])
def test_errors_are_one_red_line_not_a_traceback(tmp_path, capsys, argv_maker, expected):
    (tmp_path / "bad.mrg").write_text("(S (NP (DT the) (NN cat)) (VP (VBD sat)))\n(S (X y)\n")
    code, out, err = run(capsys, argv_maker(tmp_path))
    assert code == 2
    assert "Traceback" not in err and "error:" in err and expected in err
    assert len(err.strip().splitlines()) <= 2


def test_train_skip_bad_trees_keeps_the_rest(tmp_path, capsys):
    tb = tmp_path / "mixed.mrg"
    tb.write_text(DEMO_TREES + "(S (NP (DT oops)\n" + DEMO_TREES)
    path = tmp_path / "m.model"
    code, out, err = run(capsys, ["train", "pcfg", "--treebank", str(tb), "--out", str(path), "--skip-bad-trees",
                                  "--json"])
    assert code == 0 and path.exists()
    assert json.loads(out)["training_trees"] >= 5
    assert "skipped" in err


def test_demo_runs_without_shared_data(capsys):
    code, out, _ = run(capsys, ["-q", "demo", "--json", "The old dog walked to the park ."])
    assert code == 0
    data = json.loads(out)
    assert data["parses"][0]["status"] == "ok"
    assert data["parses"][0]["tree"].startswith("(S ")
