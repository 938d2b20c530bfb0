"""Collins-style head rules on hand-built trees, and their agreement with binarized trees."""

from __future__ import annotations

import pytest

from treegram.trees import Tree, binarize, head_child, head_word_index, parse_brackets


def node(label: str, *child_labels: str) -> Tree:
    """A node whose children are preterminals with the given labels (words w0, w1, ...)."""
    return Tree(label, [Tree(c, [f"w{i}"]) for i, c in enumerate(child_labels)])


@pytest.mark.parametrize(
    "label, kids, expected",
    [
        ("S", ["NP", "VP", "."], 1),
        ("S", ["PP", ",", "NP", "VP", "."], 3),
        ("VP", ["VBD", "NP", "PP"], 0),
        ("VP", ["MD", "VP"], 0),
        ("VP", ["ADVP", "VBZ", "NP"], 1),
        ("NP", ["DT", "JJ", "NN", "NNS"], 3),
        ("NP", ["NNP", "POS"], 1),
        ("NP", ["NP", ",", "NP", ","], 0),
        ("NP", ["DT", "JJ"], 1),
        ("NP", ["DT", "CD"], 1),
        ("NP", ["NP", "PP"], 0),
        ("NP", ["NN", "NP"], 0),
        ("PP", ["IN", "NP"], 0),
        ("PP", ["IN", "IN", "NP"], 1),  # Collins searches PPs from the right
        ("SBAR", ["WHNP", "S"], 0),
        ("SBAR", ["IN", "S"], 0),
        ("ADJP", ["RB", "JJ"], 1),
        ("ADVP", ["RB", "RB"], 1),
        ("QP", ["IN", "CD", "CD"], 0),
        ("WHNP", ["WDT", "NN"], 0),
        ("FRAG", ["NP", "."], 0),  # rightmost, skipping punctuation
        ("PRN", ["-LRB-", "NP", "-RRB-"], 1),  # leftmost, skipping punctuation
        ("FOO", [",", "NN", "VB"], 1),  # unknown category: leftmost non-punctuation
        ("NML", ["NNP", "NNP"], 1),  # GUM's NML is headed like an NP
        ("NP-SBJ-1", ["DT", "NN"], 1),  # function tags are ignored
        ("VP^S", ["VBD", "NP"], 0),  # parent annotation is ignored
        ("S-U", ["VP"], 0),
    ],
)
def test_head_rules(label, kids, expected):
    assert head_child(node(label, *kids)) == expected


def test_preterminal_and_childless():
    assert head_child(Tree("NN", ["dog"])) == 0
    with pytest.raises(ValueError):
        head_child(Tree("NP", []))


def test_binarized_nodes():
    # The @ child continues the head chain; an innermost @ node uses its side mark or head category.
    assert head_child(Tree("NP", [Tree("DT", ["the"]), Tree("@NN-NP", [Tree("JJ", ["a"]), Tree("NN", ["b"])])])) == 1
    assert head_child(node("@NN-NP|<JJ", "JJ", "NN")) == 1
    assert head_child(node("@VB-VP|>VB", "VB", "VB")) == 0
    assert head_child(node("@NN-NP", "JJ", "NN")) == 1
    assert head_child(node("@NN-NP", "NN", "SBAR")) == 0


def test_head_word_index():
    (t,) = parse_brackets("(S (NP (DT the) (JJ big) (NN dog)) (VP (VBD barked) (ADVP (RB loudly))) (. .))")
    assert head_word_index(t) == 3
    assert head_word_index(t.children[0]) == 2


def test_lexical_heads_survive_binarization():
    text = (
        "(S (NP (DT the) (JJ big) (JJ brown) (NN dog) (SBAR (IN that) (S (VP (VBD ran))))) (ADVP (RB then))"
        " (VP (VB saw) (VB saw) (NP (PRP me)) (PP (IN at) (NP (NN noon))) (ADVP (RB today))) (. .))"
    )
    (t,) = parse_brackets(text)
    for horizontal in (1, 2, None):
        for vertical in (1, 2, 3):
            b = binarize(t, horizontal=horizontal, vertical=vertical, mark_unary=True)
            for sub in t.subtrees():
                if sub.children:
                    assert head_word_index(binarize(sub, horizontal=horizontal, vertical=vertical)) == head_word_index(sub)
            assert head_word_index(b) == head_word_index(t)
