"""PARSEVAL scorer: hand-computed cases, and an independent evalb.c-style oracle on random and real trees."""

from __future__ import annotations

import re

import numpy as np
import pytest

from treegram.errors import InputError, TreeSyntaxError
from treegram.evaluation import (
    ParsevalParams,
    evalb_files,
    score_corpus,
    score_sentence,
    strip_function_tags,
)
from treegram.evaluation import parseval as pv
from treegram.trees.bracket import parse_brackets
from treegram.trees.tree import Tree


def T(text: str) -> Tree:
    return pv._parse_line(text, "test")


# -- hand-computed sentences ---------------------------------------------------------------------------------------


def test_identical_trees_score_100():
    tree = T("(S (NP-SBJ (DT the) (NN dog)) (VP (VBD saw) (NP (DT a) (NN cat))) (. .))")
    s = score_sentence(tree, tree)
    # brackets: S(0,5) NP(0,2) VP(2,5) NP(3,5) -> 4; words without '.' -> 5 tags, all correct
    assert (s.matched, s.gold_brackets, s.test_brackets) == (4, 4, 4)
    assert (s.precision, s.recall, s.f1) == (100.0, 100.0, 100.0)
    assert s.exact and s.tag_accuracy == 100.0
    assert s.words == 5 and s.length == 6  # '.' is not scored but counts for the length cut-off
    assert s.status == "ok" and s.error is None


def test_single_mislabeled_bracket():
    gold = T("(S (NP (PRP I)) (VP (VBD saw) (NP (PRP her))))")
    test = T("(S (NP (PRP I)) (VP (VBD saw) (S (PRP her))))")
    s = score_sentence(gold, test)
    # gold S(0,3) NP(0,1) VP(1,3) NP(2,3); test has S(2,3) instead of NP(2,3): 3 of 4 on each side
    assert (s.matched, s.gold_brackets, s.test_brackets) == (3, 4, 4)
    assert s.precision == pytest.approx(75.0) and s.recall == pytest.approx(75.0) and s.f1 == pytest.approx(75.0)
    assert not s.exact


def test_missing_unary():
    gold = T("(S (NP (NNP John)) (VP (VBD left)))")
    test = T("(S (NNP John) (VP (VBD left)))")
    s = score_sentence(gold, test)
    # gold S, NP(0,1), VP(1,2) = 3; test S, VP = 2; matched 2 -> P 100, R 66.67, F1 = 2*100*66.67/166.67 = 80
    assert (s.matched, s.gold_brackets, s.test_brackets) == (2, 3, 2)
    assert s.precision == 100.0
    assert s.recall == pytest.approx(200 / 3)
    assert s.f1 == pytest.approx(80.0)


def test_repeated_unary_is_a_multiset():
    gold = T("(S (NP (NP (DT the) (NN dog))) (VP (VBZ barks)))")
    test = T("(S (NP (DT the) (NN dog)) (VP (VBZ barks)))")
    s = score_sentence(gold, test)
    # gold S(0,3), NP(0,2) twice, VP(2,3) = 4; test 3; a set-based scorer would report 100/100
    assert (s.matched, s.gold_brackets, s.test_brackets) == (3, 4, 3)
    assert s.precision == 100.0 and s.recall == pytest.approx(75.0)
    assert not s.exact

    # EVALB README [7].5: test has m=3 copies, gold n=2 -> precision drops (5 test brackets, 4 matched), recall 100
    gold2 = gold
    test2 = T("(S (NP (NP (NP (DT the) (NN dog)))) (VP (VBZ barks)))")
    s2 = score_sentence(gold2, test2)
    assert (s2.matched, s2.gold_brackets, s2.test_brackets) == (4, 4, 5)
    assert s2.precision == pytest.approx(80.0) and s2.recall == 100.0


def test_punctuation_height_has_no_effect():
    gold = T("(S (NP (NNP John)) (, ,) (VP (VBD left) (NP (NN town))) (. .))")
    test = T("(S (NP (NNP John) (, ,)) (VP (VBD left) (NP (NN town) (. .))))")
    s = score_sentence(gold, test)
    # without punctuation both are S(0,3) NP(0,1) VP(1,3) NP(2,3)
    assert (s.matched, s.gold_brackets, s.test_brackets) == (4, 4, 4)
    # a bracket over punctuation only spans no scored word and is not counted
    test_extra = T("(S (NP (NNP John)) (X (, ,)) (VP (VBD left) (NP (NN town))) (. .))")
    assert score_sentence(gold, test_extra).test_brackets == 4


def test_advp_prt_equivalence_and_its_switch():
    gold = T("(S (NP (PRP he)) (VP (VBD gave) (PRT (RP up))))")
    test = T("(S (NP (PRP he)) (VP (VBD gave) (ADVP (RP up))))")
    assert score_sentence(gold, test).matched == 4
    plain = ParsevalParams(equivalent_labels=())
    assert score_sentence(gold, test, plain).matched == 3  # S, NP, VP only


def test_function_tags_and_indices_are_stripped():
    gold = T("(S-TPC-1 (NP-SBJ-2 (PRP it)) (VP=3 (VBZ works)))")
    test = T("(S (NP (PRP it)) (VP (VBZ works)))")
    assert score_sentence(gold, test).matched == 3
    assert score_sentence(gold, test, ParsevalParams(strip_function_tags=False)).matched == 0
    assert strip_function_tags("NP-SBJ-1") == "NP"
    assert strip_function_tags("NP=2") == "NP"
    assert strip_function_tags("-NONE-") == "-NONE-"
    assert strip_function_tags("-LRB-") == "-LRB-"
    assert strip_function_tags("PRP$") == "PRP$"


def test_traces_and_constituents_over_traces_are_removed():
    gold = T("(S (NP-SBJ (-NONE- *)) (VP (VBD reported) (SBAR (-NONE- 0) (S (-NONE- *T*-1)))) (. .))")
    test = T("(S (VP (VBD reported)))")
    s = score_sentence(gold, test)
    # gold keeps S(0,1) and VP(0,1); NP-SBJ, SBAR and inner S span no word.  Length: 'reported' + '.' = 2
    assert (s.matched, s.gold_brackets, s.test_brackets) == (2, 2, 2)
    assert s.length == 2 and s.words == 1


@pytest.mark.parametrize("wrapper", ["( {} )", "(TOP {})", "(ROOT {})"])
def test_root_wrappers_are_not_brackets(wrapper):
    inner = "(S (NP (PRP we)) (VP (VBD won)))"
    gold = T(wrapper.format(inner))
    s = score_sentence(gold, T(inner))
    assert (s.matched, s.gold_brackets, s.test_brackets) == (3, 3, 3)


def test_unlabeled_scoring():
    gold = T("(S (NP (PRP I)) (VP (VBD saw) (NP (PRP her))))")
    test = T("(S (X (PRP I)) (Y (VBD saw) (Z (PRP her))))")
    assert score_sentence(gold, test).matched == 1
    assert score_sentence(gold, test, ParsevalParams(labeled=False)).matched == 4


def test_tag_accuracy_and_crossing():
    gold = T("(S (NP (DT the) (NN dog)) (VP (VBZ barks) (ADVP (RB loudly))))")
    test = T("(S (X (DT the) (NN dog) (VBZ barks)) (Y (JJ loudly)))")
    s = score_sentence(gold, test)
    # tags: 3 of 4 right.  Test X(0,3) crosses gold VP(2,4); Y(3,4) crosses nothing -> crossing 1
    assert s.tag_accuracy == pytest.approx(75.0)
    assert s.crossing == 1


def test_word_mismatch_is_an_error_sentence():
    gold = T("(S (NP (PRP I)) (VP (VBD ran)))")
    test = T("(S (NP (PRP I)) (VP (VBD walked)))")
    s = score_sentence(gold, test)
    assert s.status == "error" and "walked" in s.error
    short = score_sentence(gold, T("(S (NP (PRP I)))"))
    assert short.status == "error" and "length" in short.error
    # a punctuation word tagged as a normal word changes the scored length: an error, as in EVALB
    assert score_sentence(T("(S (NN a) (. .))"), T("(S (NN a) (NN .))")).status == "error"

    good = T("(S (NP (DT a) (NN b)) (VP (VBZ c)))")
    result = score_corpus([gold, good], [test, good])
    # only the second sentence (3 brackets, all matched) is in the totals
    assert result.errors == 1 and result.scored == 1
    assert (result.matched, result.gold_brackets, result.test_brackets) == (3, 3, 3)
    assert result.to_dict()["sentences"] == 1


def test_malformed_tree_is_an_error_not_a_crash():
    gold = T("(S (NP (PRP I)) (VP (VBD ran)))")
    bad = Tree("S", (Tree("NP", ("I",)), "ran"))
    assert score_sentence(gold, bad).status == "error"
    result = score_corpus([bad, gold], [gold, gold])
    assert result.errors == 1 and result.scored == 1 and result.f1 == 100.0


def test_failed_parse_counts_gold_brackets():
    g1 = T("(S (NP (PRP I)) (VP (VBD ran)))")  # 3 brackets
    g2 = T("(S (NP (DT a) (NN b)) (VP (VBZ c) (NP (NN d))))")  # 4 brackets
    result = score_corpus([g1, g2], [g1, None])
    # matched 3, gold 3 + 4 = 7, test 3: P 100, R 3/7, F1 = 2*100*42.857/142.857 = 60
    assert result.failed == 1 and result.scored == 2
    assert (result.matched, result.gold_brackets, result.test_brackets) == (3, 7, 3)
    assert result.precision == 100.0
    assert result.recall == pytest.approx(300 / 7)
    assert result.f1 == pytest.approx(60.0)
    assert result.exact == pytest.approx(50.0)
    # tags: g1's 2 words right, the failed sentence's 4 words count as wrong -> 2 of 6
    assert result.tag_accuracy == pytest.approx(100 / 3)


def test_corpus_is_micro_averaged():
    g1 = T("(S (NN a) (NN b))")  # S only: 1 of 1 matched
    g2 = T("(S (NP (DT a) (NN b)) (VP (VBZ c)))")
    t2 = T("(S (X (DT a)) (Y (NN b) (VBZ c)))")  # only S matches: 1 of 3
    result = score_corpus([g1, g2], [g1, t2])
    # micro: 2 matched / 4 gold, 2 / 4 test -> 50; the mean of sentence F1s would be (100 + 33.3) / 2 = 66.7
    assert result.precision == pytest.approx(50.0)
    assert result.recall == pytest.approx(50.0)
    assert result.f1 == pytest.approx(50.0)
    mean_f1 = np.mean([s.f1 for s in result.sentences])
    assert mean_f1 == pytest.approx(200 / 3)
    d = result.to_dict()
    assert {"precision", "recall", "f1", "exact", "sentences"} <= d.keys()
    assert d["exact"] == pytest.approx(50.0) and d["sentences"] == 2


def test_length_cutoff_counts_punctuation_but_not_traces():
    short = T("(S (NP (-NONE- *)) (NP (PRP we)) (VP (VBD did) (NP (PRP it)) (ADVP (RB again) (-NONE- *T*))))")
    long_ = T("(S (NP (PRP we)) (VP (VBD did) (NP (PRP it)) (ADVP (RB again))) (. .))")
    # short: 4 words + 2 traces -> length 4; long_: 4 words + '.' -> length 5
    assert score_sentence(short, short).length == 4
    assert score_sentence(long_, long_).length == 5
    bad = T("(S (NP (PRP we)) (VP (VBD did) (NP (PRP it)) (RB again)) (. .))")  # misses ADVP: 4 of 5
    params = ParsevalParams(max_length=4)
    result = score_corpus([short, long_], [short, bad], params)
    assert result.skipped == 1 and result.scored == 1 and result.f1 == 100.0
    full = score_corpus([short, long_], [short, bad])
    # short: S NP VP NP ADVP = 5 of 5; long_: 4 of 5 test, 4 of 5 gold -> 9 / 10
    assert full.recall == pytest.approx(90.0) and full.precision == 100.0
    with pytest.raises(InputError):
        ParsevalParams(max_length=0)


def test_mismatched_corpus_sizes_raise():
    g = T("(S (NN a))")
    with pytest.raises(InputError):
        score_corpus([g, g], [g])


def test_deep_tree_is_fine():
    node: Tree = Tree("NN", ("x",))
    for _ in range(5000):
        node = Tree("NP", (node,))
    s = score_sentence(node, node)
    assert s.gold_brackets == 5000 and s.matched == 5000


# -- files and parameter files --------------------------------------------------------------------------------------


def test_evalb_files(tmp_path):
    gold_lines = [
        "( (S (NP (PRP I)) (VP (VBD ran)) (. .)) )",
        "(TOP (S (NP (DT a) (NN b)) (VP (VBZ c) (NP (NN d)))))",
        "(S (NP (NNP X)) (VP (VBD went)))",
        "(S (NP (NNP Y)) (VP (VBD came)))",
    ]
    test_lines = [
        "(S (NP (PRP I)) (VP (VBD ran) (. .)))",
        "",  # failed parse
        "(S (NP (NNP X)) (VP (VBD went))",  # unbalanced: an error sentence, not a crash
        "(S (NP (NNP Y) (VBD came)))",  # NP(0,2) wrong; S right; gold VP missing
    ]
    gp, tp = tmp_path / "gold.txt", tmp_path / "test.txt"
    gp.write_text("\n".join(gold_lines) + "\n\n")
    tp.write_text("\n".join(test_lines) + "\n")
    result = evalb_files(gp, tp)
    statuses = [s.status for s in result.sentences]
    assert statuses == ["ok", "failed", "error", "ok"]
    # matched 3 + 0 + 1 = 4; gold 3 + 4 + 3 = 10; test 3 + 0 + 2 = 5
    assert (result.matched, result.gold_brackets, result.test_brackets) == (4, 10, 5)
    assert result.precision == pytest.approx(80.0) and result.recall == pytest.approx(40.0)

    tp.write_text("\n".join(test_lines[:2]) + "\n")
    with pytest.raises(InputError):
        evalb_files(gp, tp)
    gp.write_text("(S (NN a)\n")
    tp.write_text("(S (NN a))\n")
    with pytest.raises(TreeSyntaxError):
        evalb_files(gp, tp)


def test_params_from_prm(tmp_path):
    prm = tmp_path / "COLLINS.prm"
    prm.write_text(
        "##------------------------------------------##\n"
        "DEBUG 0\nMAX_ERROR 10\nCUTOFF_LEN 40\nLABELED 1\n"
        "DELETE_LABEL TOP\nDELETE_LABEL -NONE-\nDELETE_LABEL ,\nDELETE_LABEL :\nDELETE_LABEL ``\n"
        "DELETE_LABEL ''\nDELETE_LABEL .\nDELETE_LABEL_FOR_LENGTH -NONE-\nEQ_LABEL ADVP PRT\n"
    )
    params = ParsevalParams.from_prm(prm)
    default = ParsevalParams()
    assert params.delete_labels == default.delete_labels - {"ROOT"}
    assert params.delete_labels_for_length == default.delete_labels_for_length
    assert params.equivalent_labels == default.equivalent_labels
    assert ParsevalParams.from_prm(prm, max_length=40).max_length == 40
    prm.write_text("BOGUS 1\n")
    with pytest.raises(InputError):
        ParsevalParams.from_prm(prm)


# -- an independent oracle: evalb.c's algorithm on the bracket string ----------------------------------------------


def _evalb_oracle(gold: str, test: str, delete, eq_pairs) -> tuple[int, int, int]:
    """Character-level scan + greedy bracket matching, as in evalb.c (no multisets, no tree objects)."""

    def read(line):
        tokens = re.findall(r"\(|\)|[^\s()]+", line)
        words, brackets, stack, i = [], [], [], 0
        while i < len(tokens):
            if tokens[i] == "(":
                label = tokens[i + 1]
                if tokens[i + 2] not in "()" and tokens[i + 3] == ")":
                    if label not in delete:
                        words.append(tokens[i + 2])
                    i += 4
                    continue
                stack.append([label, len(words), None])
                brackets.append(stack[-1])
                i += 2
            else:
                stack.pop()[2] = len(words)
                i += 1
        kept = []
        for label, start, end in brackets:
            label = re.split(r"[-=]", label)[0] if not label.startswith("-") else label
            if start != end and label not in delete:
                kept.append((label, start, end))
        return words, kept

    def same(a, b):
        return a == b or (a, b) in eq_pairs or (b, a) in eq_pairs

    gw, gb = read(gold)
    tw, tb = read(test)
    assert gw == tw
    used = [False] * len(tb)
    matched = 0
    for label, s, e in gb:
        for j, (tl, ts, te) in enumerate(tb):
            if not used[j] and (ts, te) == (s, e) and same(label, tl):
                used[j] = True
                matched += 1
                break
    return matched, len(gb), len(tb)


LABELS = ["S", "NP", "VP", "PP", "ADVP", "PRT", "NP-SBJ", "SBAR", "TOP"]
TAGS = ["DT", "NN", "VBZ", "IN", ",", ".", "-NONE-", "``", "RB"]


def _random_tree(rng: np.random.Generator, n_words: int) -> Tree:
    pre = [Tree(str(rng.choice(TAGS)), (f"w{i}",)) for i in range(n_words)]
    nodes: list[Tree] = list(pre)
    while len(nodes) > 1:
        i = int(rng.integers(0, len(nodes)))
        k = int(rng.integers(1, min(3, len(nodes) - i) + 1))
        node = Tree(str(rng.choice(LABELS)), tuple(nodes[i : i + k]))
        if rng.random() < 0.2:
            node = Tree(node.label, (node,))  # repeated unary
        nodes[i : i + k] = [node]
    return Tree("S", (nodes[0],)) if nodes[0].is_preterminal else nodes[0]


def _perturb(rng: np.random.Generator, tree: Tree) -> Tree:
    """Relabel, flatten or duplicate some brackets (same words and tags)."""

    def walk(node: Tree) -> list:
        if node.is_preterminal:
            return [node]
        kids = [k for c in node.children for k in walk(c)]
        r = rng.random()
        if r < 0.15:
            return kids  # flatten this bracket away
        label = str(rng.choice(LABELS)) if r < 0.3 else node.label
        out = Tree(label, tuple(kids))
        if rng.random() < 0.1:
            out = Tree(label, (out,))
        return [out]

    kids = walk(tree)
    return kids[0] if len(kids) == 1 and not kids[0].is_preterminal else Tree("S", tuple(kids))


def test_matches_evalb_oracle_on_random_trees():
    rng = np.random.default_rng(7)
    params = ParsevalParams()
    eq = set(params.equivalent_labels)
    total_oracle = np.zeros(3, dtype=int)
    total_ours = np.zeros(3, dtype=int)
    for _ in range(300):
        gold = _random_tree(rng, int(rng.integers(1, 12)))
        test = _perturb(rng, gold)
        s = score_sentence(gold, test, params)
        assert s.status == "ok"
        expected = _evalb_oracle(gold.to_bracket(), test.to_bracket(), params.delete_labels, eq)
        assert (s.matched, s.gold_brackets, s.test_brackets) == expected, (gold, test)
        total_oracle += expected
        total_ours += (s.matched, s.gold_brackets, s.test_brackets)
    assert 0 < total_ours[0] < total_ours[1]  # the cases are neither trivial nor perfect


def test_real_ptb_dev_against_oracle(shared_data):
    files = sorted((shared_data / "ptb-sample" / "dev").glob("*.mrg"))[:5]
    trees = [t for f in files for t in parse_brackets(f.read_text(), source=str(f))]
    assert len(trees) > 20
    rng = np.random.default_rng(3)
    params = ParsevalParams()
    eq = set(params.equivalent_labels)
    tests = [_perturb(rng, t.children[0]) for t in trees]
    result = score_corpus(trees, tests, params)
    assert result.errors == 0
    for gold, test, s in zip(trees, tests, result.sentences):
        assert (s.matched, s.gold_brackets, s.test_brackets) == _evalb_oracle(
            gold.children[0].to_bracket(), test.to_bracket(), params.delete_labels, eq
        )
    assert score_corpus(trees, trees, params).f1 == 100.0
