"""Learner corrections (Swanson & Yamangil 2012): labels, edit path and isolation heuristics, FCE instances,
Figure-2 features, the log-linear model (save/load as data), the rule typer, and the `corrections`,
`train corrections` and `eval-corrections` commands on small essays written for these tests."""

from __future__ import annotations

import json

import numpy as np
import pytest

from treegram.cli.app import main
from treegram.plugins.corrections.editpath import HEURISTICS, Span, edit_path, isolate, revert
from treegram.plugins.corrections.fce import essay_pairs
from treegram.plugins.corrections.labels import LABELS15, collapse, describe

# -- labels ----------------------------------------------------------------------------------------------------


def test_collapse_removes_the_part_of_speech():
    assert collapse("RT") == "R" and collapse("AGN") == "AG" and collapse("MD") == "M"
    assert collapse("SX") == "S" and collapse("CN") == "C" and collapse("TV") == "TV" and collapse("ID") == "ID"
    assert collapse("AS") == "AS" and collapse("X") == "X" and len(LABELS15) == 15
    assert describe("RT") == "Replace preposition" and describe("MD") == "Missing determiner"


# -- edit path and isolation -----------------------------------------------------------------------------------
X = "With this letter I would ask you if you wuld change it".split()
Y = "With this letter I would like to ask you if you would change it".split()


def test_edit_path_is_minimal_and_isolation_heuristics_group_as_in_section_4():
    path = edit_path(X, Y)
    assert [(o.op, Y[o.j]) for o in path if o.op != "E"] == [("I", "like"), ("I", "to"), ("S", "would")]
    assert isolate(path, HEURISTICS["h0"]) == [Span(5, 5, 5, 7), Span(9, 10, 11, 12)]
    assert isolate(path, HEURISTICS["hinf"]) == [Span(5, 5, 5, 6), Span(5, 5, 6, 7), Span(9, 10, 11, 12)]
    assert isolate(path, HEURISTICS["h4"]) == [Span(5, 10, 5, 12)]      # 4 Equal ops between: merged
    assert isolate(path, HEURISTICS["h3"]) == isolate(path, 0)
    assert revert(X, Y, Span(9, 10, 11, 12)) == "With this letter I would like to ask you if you wuld change it".split()
    # edit distance agrees with a brute-force count on random sequences
    rng = np.random.default_rng(0)
    for _ in range(30):
        a = list(rng.choice(list("abc"), rng.integers(0, 7)))
        b = list(rng.choice(list("abc"), rng.integers(0, 7)))
        ops = edit_path(a, b)
        assert [a[o.i] for o in ops if o.op in "ES" or o.op == "D"] == a
        assert [b[o.j] for o in ops if o.op in "ESI"] == b
        dist = sum(o.op != "E" for o in ops)
        d = np.arange(len(b) + 1)
        for i, ca in enumerate(a, 1):
            nd = np.empty_like(d); nd[0] = i
            for j, cb in enumerate(b, 1):
                nd[j] = min(d[j] + 1, nd[j - 1] + 1, d[j - 1] + (ca != cb))
            d = nd
        assert dist == d[-1]


# -- FCE instances ---------------------------------------------------------------------------------------------
ESSAY = "Dear Sam,\n\nI goed to the park yesterday. It were very nice and I like it. We see a dogs there."


def _edit(text, word, fix, code, nth=0):
    start = -1
    for _ in range(nth + 1):
        start = text.index(word, start + 1)
    return [start, start + len(word), fix, code]


def _essay(eid="t1"):
    edits = [_edit(ESSAY, "goed", "went", "IV"), _edit(ESSAY, "the ", "", "UD"),
             _edit(ESSAY, "were", "was", "AGV"), _edit(ESSAY, "like", "liked", "TV"),
             _edit(ESSAY, "see", "saw", "TV"), _edit(ESSAY, "dogs", "dog", "AGN"),
             _edit(ESSAY, "a dogs", None, "R")]   # detection only: dropped (and its inner edit is kept)
    return {"id": eid, "text": ESSAY, "edits": [[0, edits]]}


def test_essay_pairs_make_one_instance_per_correction_with_the_others_applied():
    pairs, inst = essay_pairs(_essay())
    assert [p.corrected for p in pairs] == ["I went to park yesterday.", "It was very nice and I liked it.",
                                            "We saw a dog there."]
    assert len(inst) == 6
    first = [i for i in inst if i.code == "IV"][0]
    assert " ".join(first.x) == "I goed to park yesterday ." and " ".join(first.y) == "I went to park yesterday ."
    ud = [i for i in inst if i.code == "UD"][0]
    assert " ".join(ud.x) == "I went to the park yesterday ."
    assert [(g.code, g.span) for g in pairs[1].gold] == [("AGV", Span(1, 2, 1, 2)), ("TV", Span(6, 7, 6, 7))]
    assert [g.span for g in pairs[0].gold] == [Span(1, 2, 1, 2), Span(3, 4, 3, 3)]


# -- features, model, rules ------------------------------------------------------------------------------------


def test_features_follow_figure_2():
    from treegram.plugins.corrections.features import features

    x, y = "The arrive of every student".split(), "The arrival of every student".split()
    f = features(x, y, ["DT", "NN", "IN", "DT", "NN"])
    assert {"S", "S:w=arrive>arrival", "S:samestem", "S:suf=e_al", "S:dict=11", "S:pos=NN", "S:prev=the",
            "G:edits=1"} <= set(f)
    g = features(x, y, ["DT", "NN", "IN", "DT", "NN"], lexical=False)
    assert "S:w=arrive>arrival" not in g and "S:prev=the" not in g and "S:samestem" in g
    x, y = "what should I bring".split(), "what I should bring".split()
    assert "G:reorder" in features(x, y, ["WP", "PRP", "MD", "VB"])
    f = features("I speccial".split(), "I special".split(), ["PRP", "JJ"])
    assert "S:dict=01" in f and "S:ced=1" in f
    f = features("go home".split(), "go to home".split(), ["VB", "TO", "NN"])
    assert {"I", "I:w=to", "I:ctx=VB_NN", "I:pos=TO"} <= set(f)


def test_model_trains_saves_as_data_and_reloads_with_identical_predictions(tmp_path):
    from treegram.formalism import load_model
    from treegram.plugins.corrections.model import CorrectionsModel

    rng = np.random.default_rng(1)
    feats, codes = [], []
    for _ in range(200):
        code = rng.choice(["RT", "MD", "S", "TV"])
        f = {f"cue={code}": 1.0, f"noise={rng.integers(5)}": 1.0}
        if rng.random() < 0.1:
            f = {f"noise={rng.integers(5)}": 1.0}
        feats.append(f); codes.append(str(code))
    m = CorrectionsModel.train(feats, codes, max_iter=200)
    p75, p15 = m.predict(feats)
    assert np.mean([a == b for a, b in zip(p75, codes)]) > 0.85
    assert set(p15) <= {"R", "M", "S", "TV"}
    m.save(tmp_path / "c.model")
    raw = (tmp_path / "c.model").read_bytes()
    assert raw[:2] == b"PK" and b"pickle" not in raw
    m2 = load_model(tmp_path / "c.model")
    assert m2.predict(feats) == (p75, p15) and m2.vocab == m.vocab


def test_rule_typer_codes_common_corrections():
    from treegram.plugins.corrections.rules import rule_code

    assert rule_code(["at"], ["in"], ["IN"], ["IN"]) == "RT"
    assert rule_code([], ["the"], [], ["DT"]) == "MD"
    assert rule_code(["the"], [], ["DT"], []) == "UD"
    assert rule_code(["recieved"], ["received"], ["VBD"], ["VBD"]) == "S"
    assert rule_code(["go"], ["went"], ["VBP"], ["VBD"]) == "TV"
    assert rule_code(["going"], ["go"], ["VBG"], ["VB"]) == "FV"
    assert rule_code(["arrive"], ["arrival"], ["VB"], ["NN"]) == "DN"
    assert rule_code(["picture"], ["pictures"], ["NN"], ["NNS"]) == "AGN"
    assert rule_code(["should", "I"], ["I", "should"], ["MD", "PRP"], ["PRP", "MD"]) == "W"
    assert rule_code([], [","], [], [","]) == "MP"
    assert rule_code(["house"], ["home"], ["NN"], ["NN"]) == "RN"
    assert rule_code(["go"], ["goes"], ["VBP"], ["VBZ"]) == "AGV" and rule_code(["is"], ["are"], ["VBZ"], ["VBP"]) == "AGV"
    assert rule_code(["is"], ["was"], ["VBZ"], ["VBD"]) == "TV"
    assert rule_code(["practicing"], ["practising"], ["VBG"], ["VBG"]) == "S"
    assert rule_code(["not"], [], ["RB"], []) == "UY"
    assert rule_code(["not", "to"], ["don't"], ["RB", "TO"], ["VBP"]) == "X"


# -- command line ----------------------------------------------------------------------------------------------
ORIG = """## anna
I have just recieved the letter. I would like to stay at log cabins.
She gave me autographs and talk really nicely.
## ben
Yesterday I go to the school. The idea about going to Maine is common.
"""
CORR = """## anna
I have just received the letter. I would like to stay in log cabins.
She gave me autographs and talked really nicely.
## ben
Yesterday I went to school. The idea of going to Maine is common.
"""


@pytest.fixture(scope="module")
def essays(tmp_path_factory):
    d = tmp_path_factory.mktemp("corr")
    (d / "orig.txt").write_text(ORIG, encoding="utf-8")
    (d / "corr.txt").write_text(CORR, encoding="utf-8")
    return d


def test_corrections_report_json_html_and_schema(essays, capsys):
    d = essays
    assert main(["-q", "corrections", str(d / "orig.txt"), str(d / "corr.txt"), "--json", "--html",
                 str(d / "r.html"), "--out", str(d / "r.json")]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep == json.loads((d / "r.json").read_text(encoding="utf-8"))
    assert rep["format"] == "treegram-corrections-report" and rep["version"] == 1
    found = {(c["student"], c["wrong"], c["right"], c["code"]) for c in rep["corrections"]}
    assert ("anna", "recieved", "received", "S") in found and ("anna", "at", "in", "RT") in found
    assert ("ben", "go", "went", "TV") in found and ("ben", "the", "", "UD") in found
    assert ("anna", "talk", "talked", "TV") in found
    counts = [c["count"] for c in rep["class_summary"]]
    assert counts == sorted(counts, reverse=True) and sum(counts) == len(rep["corrections"]) == 6
    rt = [c for c in rep["class_summary"] if c["code"] == "RT"][0]
    assert rt["count"] == 2 and rt["label15"] == "R" and rt["description"] == "Replace preposition"
    assert {"wrong", "right", "original", "corrected", "student"} <= set(rt["examples"][0])
    assert [(s["student"], s["corrections"]) for s in rep["students"]] == [("anna", 3), ("ben", 3)]
    assert rep["students"][1]["by_code"]["TV"] == 1
    page = (d / "r.html").read_text(encoding="utf-8")
    assert "<del>recieved</del>" in page and "<ins>received</ins>" in page and "Replace preposition" in page


def test_corrections_whole_text_alignment_and_terminal_output(tmp_path, capsys):
    (tmp_path / "a.txt").write_text("I go home. He are nice and she is too. Bye.", encoding="utf-8")
    (tmp_path / "b.txt").write_text("I went home.\nHe is nice.\nShe is too.\nBye.\n", encoding="utf-8")
    assert main(["corrections", str(tmp_path / "a.txt"), str(tmp_path / "b.txt"), "--by-student"]) == 0
    out = capsys.readouterr().out
    assert "went" in out and "corrections in the class" in out and "a:" in out


def test_corrections_directories_one_file_per_student(tmp_path, capsys):
    (tmp_path / "o").mkdir(); (tmp_path / "c").mkdir()
    (tmp_path / "o" / "kim.txt").write_text("He go to school every day.\n", encoding="utf-8")
    (tmp_path / "c" / "kim.txt").write_text("He goes to school every day.\n", encoding="utf-8")
    (tmp_path / "o" / "lee.txt").write_text("It is fine.\n", encoding="utf-8")
    (tmp_path / "c" / "lee.txt").write_text("It is fine.\n", encoding="utf-8")
    assert main(["-q", "corrections", str(tmp_path / "o"), str(tmp_path / "c"), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert [(s["student"], s["corrections"], s["by_code"]) for s in rep["students"]] == [
        ("kim", 1, {"AGV": 1}), ("lee", 0, {})]
    (tmp_path / "c" / "lee.txt").rename(tmp_path / "c" / "lea.txt")
    assert main(["corrections", str(tmp_path / "o"), str(tmp_path / "c")]) == 2
    assert "lea.txt" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["missing", "empty", "lines", "latin1", "students", "unrelated"])
def test_corrections_bad_input_is_one_clear_error(tmp_path, capsys, case):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("I go home.\nIt is nice.\n", encoding="utf-8")
    b.write_text("I went home.\nIt is nice.\n", encoding="utf-8")
    extra = []
    if case == "missing":
        b.unlink()
    elif case == "empty":
        b.write_text("  \n", encoding="utf-8")
    elif case == "lines":
        b.write_text("I went home. It is nice.\n", encoding="utf-8")
        extra = ["--align", "lines"]
    elif case == "latin1":
        a.write_bytes("Je suis allé.\n".encode("latin-1"))
    elif case == "students":
        a.write_text("## anna\nI go home.\n", encoding="utf-8")
        b.write_text("## bob\nI went home.\n", encoding="utf-8")
    elif case == "unrelated":
        b.write_text("Completely different words here.\nNothing shared at all.\n", encoding="utf-8")
    assert main(["corrections", str(a), str(b), *extra]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "Traceback" not in err and len(err.strip().splitlines()) <= 3
    if case == "lines":
        assert "2 sentences" in err and "1" in err


def _fce_file(path, n=12):
    rows = []
    for k in range(n):
        e = _essay(f"e{k}")
        rows.append(json.dumps(e))
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


def test_train_and_eval_corrections_commands(tmp_path, capsys):
    _fce_file(tmp_path / "fce.json")
    assert main(["-q", "train", "corrections", "--fce", str(tmp_path / "fce.json"), "--out",
                 str(tmp_path / "c.model"), "--max-iter", "100"]) == 0
    capsys.readouterr()
    assert main(["-q", "eval-corrections", "--model", str(tmp_path / "c.model"), "--fce", str(tmp_path / "fce.json"),
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["instances"] == 72 and res["accuracy_15"] >= 0.9 and res["accuracy_75"] >= 0.8
    assert set(res["isolation"]) == set(HEURISTICS)
    assert res["isolation"]["h0"]["unlabelled"]["f1"] == 1.0       # single-word edits, no Equal between them
    assert 0 < res["isolation"]["h0"]["labelled_75"]["f1"] <= 1.0
    (tmp_path / "bad.json").write_text("{not json\n", encoding="utf-8")
    assert main(["eval-corrections", "--fce", str(tmp_path / "bad.json")]) == 2
    assert "bad.json:1" in capsys.readouterr().err
    assert main(["corrections", str(tmp_path / "fce.json"), str(tmp_path / "fce.json"), "--model",
                 str(tmp_path / "none.model")]) == 2


@pytest.mark.shared
def test_fce_essays_train_and_type(shared_data, tmp_path):
    """A few real FCE essays: the instance count matches the edits and a small model beats the majority class."""
    from treegram.plugins.corrections.analysis import ModelTyper
    from treegram.plugins.corrections.cli import evaluate_files
    from treegram.plugins.corrections.fce import read_fce_lines
    from treegram.plugins.corrections.model import CorrectionsModel
    from treegram.plugins.corrections.pipeline import instance_features

    fce = shared_data / "learner-errors" / "fce"
    if not (fce / "fce-train.json").is_file():
        pytest.skip("FCE corpus absent")
    train = read_fce_lines(fce / "fce-train.json")[:40]
    inst = [i for e in train for i in essay_pairs(e)[1]]
    n_edits = sum(1 for e in train for ed in e["edits"][0][1] if ed[2] is not None)
    assert 0.9 * n_edits <= len(inst) <= n_edits
    model = CorrectionsModel.train(instance_features(inst), [i.code for i in inst], max_iter=100)
    res = evaluate_files([fce / "fce-dev.json"], ModelTyper(model), heuristics=["h0"], limit=8)
    assert res["accuracy_15"] > res["majority_15"]["accuracy"] + 0.2
    assert res["isolation"]["h0"]["unlabelled"]["f1"] > 0.5


def test_isolation_scores_pool_over_folds():
    from treegram.plugins.corrections.analysis import RuleTyper
    from treegram.plugins.corrections.evaluate import isolation, pool_isolation

    pairs, _ = essay_pairs(_essay())
    whole = isolation(pairs, RuleTyper(), heuristics=["h0", "hinf"])
    pooled = pool_isolation([isolation(pairs[:1], RuleTyper(), heuristics=["h0", "hinf"]),
                             isolation(pairs[1:], RuleTyper(), heuristics=["h0", "hinf"])])
    assert pooled == whole
    assert whole["h0"]["gold"] == 6 and whole["h0"]["unlabelled"]["f1"] == 1.0
    assert whole["h0"]["matched"]["labelled_15"] >= 3
