"""Tree drawings: every label and word appears, words on the bottom line, labels centred over children."""

from __future__ import annotations

import io

import rich.console

from treegram.trees import Tree, ascii_tree, parse_brackets, rich_tree

SENTENCE = (
    "(S (NP-SBJ (NP (NNP Pierre) (NNP Vinken)) (, ,) (ADJP (NP (CD 61) (NNS years)) (JJ old)) (, ,))"
    " (VP (MD will) (VP (VB join) (NP (DT the) (NN board)))) (. .))"
)


def test_small_drawing_exactly():
    (t,) = parse_brackets("(S (NP (DT the) (NN dog)) (VP (VBD barked)))")
    expected = "\n".join(
        [
            "      S",
            "   ┌──┴───┐",
            "   NP     VP",
            " ┌─┴─┐    │",
            " DT  NN  VBD",
            " │   │    │",
            "the dog barked",
        ]
    )
    assert ascii_tree(t) == expected


def test_drawing_contains_everything_in_order():
    (t,) = parse_brackets(SENTENCE)
    picture = ascii_tree(t)
    lines = picture.splitlines()
    assert lines[-1].split() == t.leaves()
    labels = [n.label for n in t.subtrees()]
    body = "\n".join(lines[:-1])
    for label in set(labels):
        assert body.count(label) >= labels.count(label) or label in ",."
    # Each label row lists its depth's labels left to right.
    depth_rows = [l for i, l in enumerate(lines[:-1]) if i % 2 == 0]
    assert depth_rows[0].split() == ["S"]
    assert depth_rows[1].split() == ["NP-SBJ", "VP", "."]


def test_labels_are_centred_over_their_children():
    (t,) = parse_brackets("(X (A aaaaaaa) (B bbbbbbb))")
    lines = ascii_tree(t).splitlines()
    x_col = lines[0].index("X")
    a_col = lines[2].index("A")
    b_col = lines[2].index("B")
    assert abs((a_col + b_col) / 2 - x_col) <= 1
    assert lines[1][x_col] == "┴"


def test_wide_label_and_frontier_node():
    t = Tree("AVERYLONGLABEL", [Tree("A", ["x"]), Tree("B", [])])
    lines = ascii_tree(t).splitlines()
    assert lines[0].strip() == "AVERYLONGLABEL"
    assert "B" in lines[2] and lines[-1].split() == ["x"]


def test_deep_tree_draws():
    depth = 400
    (t,) = parse_brackets("(X " * depth + "w" + ")" * depth)
    lines = ascii_tree(t).splitlines()
    assert len(lines) == 2 * depth + 1 and lines[-1].strip() == "w"


def test_rich_tree_renders_all_labels_and_words():
    (t,) = parse_brackets(SENTENCE)
    console = rich.console.Console(file=io.StringIO(), width=100, color_system=None)
    console.print(rich_tree(t))
    text = console.file.getvalue()
    for label in {n.label for n in t.subtrees()}:
        assert label in text
    for word in t.leaves():
        assert word in text
    assert "NNP Pierre" in text  # preterminals are shown with their word
