"""Normalization: empty tops, traces, function tags and indices."""

from __future__ import annotations

import pytest

from treegram.trees import NormalizeOptions, Tree, normalize_tree, parse_brackets, strip_label


def one(text: str) -> Tree:
    (t,) = parse_brackets(text)
    return t


@pytest.mark.parametrize(
    "label, expected",
    [
        ("NP-SBJ-1", "NP"), ("PP-CLR", "PP"), ("NP=2", "NP"), ("S-TPC-3", "S"), ("NP-SBJ=1", "NP"),
        ("PP-LOC-PRD", "PP"), ("-LRB-", "-LRB-"), ("-RRB-", "-RRB-"), ("-NONE-", "-NONE-"), ("NP", "NP"),
        ("PRP$", "PRP$"), ("ADVP|PRT", "ADVP|PRT"), ("", ""),
    ],
)
def test_strip_label(label, expected):
    assert strip_label(label) == expected


def test_strip_label_partially():
    assert strip_label("NP-SBJ-1", indices=False) == "NP-1"
    assert strip_label("NP-SBJ-1", function_tags=False) == "NP-SBJ"
    assert strip_label("PP-LOC=2", function_tags=False) == "PP-LOC"
    assert strip_label("S-TPC-3", function_tags=False, indices=False) == "S-TPC-3"


def test_default_normalization_of_a_ptb_tree():
    raw = one(
        "( (S (NP-SBJ-1 (DT The) (NN man)) (VP (VBD was) (VP (VBN seen) (NP (-NONE- *-1)) "
        "(PP-TMP (IN at) (NP (CD 5))))) (. .)) )"
    )
    assert normalize_tree(raw) == one(
        "(S (NP (DT The) (NN man)) (VP (VBD was) (VP (VBN seen) (PP (IN at) (NP (CD 5))))) (. .))"
    )


def test_nested_empties_vanish_recursively():
    raw = one("(S (NP-SBJ (-NONE- *)) (VP (VB go) (SBAR (-NONE- 0) (S (NP (-NONE- *T*-1))))) (. .))")
    assert normalize_tree(raw) == one("(S (VP (VB go)) (. .))")


def test_tree_of_only_empty_elements_gives_none():
    assert normalize_tree(one("( (S (NP-SBJ (-NONE- *)) (VP (-NONE- *?*))) )")) is None
    assert normalize_tree(one("(-NONE- *)")) is None


@pytest.mark.parametrize("top", ["", "ROOT", "TOP"])
def test_top_bracket_removed(top):
    t = one(f"({top} (S (NP (PRP I)) (VP (VBD ran))))")
    assert normalize_tree(t).label == "S"
    assert normalize_tree(t, NormalizeOptions(remove_empty_top=False)).label == top


def test_top_with_several_children_is_kept():
    t = one("( (S (VP (VB go))) (. .))")
    n = normalize_tree(t)
    assert n.label == "" and len(n.children) == 2


def test_options_switch_each_step_off():
    raw = one("( (S (NP-SBJ-1 (-NONE- *)) (VP (VB go))) )")
    keep_traces = normalize_tree(raw, NormalizeOptions(remove_traces=False))
    assert keep_traces == one("(S (NP (-NONE- *)) (VP (VB go)))")
    keep_tags = normalize_tree(raw, NormalizeOptions(strip_function_tags=False, strip_indices=False, remove_traces=False))
    assert keep_tags.children[0].label == "NP-SBJ-1"


def test_originally_childless_nodes_are_not_removed():
    t = Tree("S", [Tree("NP", []), Tree("VP", [Tree("VB", ["go"])])])
    assert normalize_tree(t) == t


def test_deep_tree_normalizes_without_recursion():
    depth = 4000
    (t,) = parse_brackets("(X-1 " * depth + "(-NONE- *)" + " (Y y)" + ")" * depth)
    n = normalize_tree(t)
    assert n.height() == depth + 2 and n.label == "X"
