"""Head-outward markovized binarization, its label syntax, and the exact round trip through unbinarize."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.errors import InputError
from treegram.trees import (
    Tree,
    base_label,
    binarize,
    is_binarized_node,
    parse_binarized_label,
    parse_brackets,
    unbinarize,
)

SETTINGS = [
    dict(horizontal=h, vertical=v, head_outward=ho, mark_unary=mu, annotate_preterminals=ap)
    for h in (0, 1, 2, None)
    for v in (1, 2, 3)
    for ho in (True, False)
    for mu in (False, True)
    for ap in (False, True)
]


def one(text: str) -> Tree:
    (t,) = parse_brackets(text)
    return t


def random_tree(rng: np.random.Generator, max_depth: int = 4) -> Tree:
    """A random tree with awkward labels, mixed children, frontier nodes and wide nodes (built iteratively)."""
    labels = ["NP", "VP", "S", "PP", "SBAR", "-LRB-", "NP-SBJ", "ADVP|PRT", "S=2", "X-1", "", "QP", "NML", "FOO"]
    tags = ["DT", "NN", "NNS", "VB", "IN", "JJ", ",", ".", "-RRB-", "CD", "PRP$"]
    words = ["a", "b", "c", "-LRB-", "0", "x@y", "*T*-1"]

    def grow(depth: int):
        if depth >= max_depth or rng.random() < 0.3:
            return Tree(str(rng.choice(tags)), [str(rng.choice(words))])
        arity = int(rng.integers(0, 6)) if depth else int(rng.integers(1, 6))
        kids = []
        for _ in range(arity):
            kids.append(str(rng.choice(words)) if rng.random() < 0.08 else grow(depth + 1))
        return Tree(str(rng.choice(labels)), kids)

    return grow(0)


def test_paper_example_shape():
    t = one("(NP (DT the) (JJ big) (NN dog) (SBAR (S (VP (VBD barked)))))")
    b = binarize(t, horizontal=0)
    assert b == Tree(
        "NP",
        [
            Tree("DT", ["the"]),
            Tree("@NN-NP", [Tree("@NN-NP", [Tree("JJ", ["big"]), Tree("NN", ["dog"])]), t.children[3]]),
        ],
    )


def test_horizontal_context_labels():
    t = one("(NP (DT the) (JJ big) (NN dog) (SBAR (S (VP (VBD barked)))))")
    full = binarize(t, horizontal=None)
    inner = full.children[1]
    assert inner.label == "@NN-NP|<JJ|>SBAR"
    assert inner.children[0].label == "@NN-NP|<JJ"
    h1 = binarize(t, horizontal=1)
    assert h1.children[1].label == "@NN-NP|>SBAR" and h1.children[1].children[0].label == "@NN-NP|<JJ"
    parsed = parse_binarized_label("@NN-NP^S|<JJ|>SBAR")
    assert (parsed.head, parsed.parent, parsed.context) == ("NN", "NP^S", (("<", "JJ"), (">", "SBAR")))
    assert parse_binarized_label("@-LRB--PRN|>NP").head == "-LRB-"


def test_alternating_order_then_one_side():
    # Head VBD with no left siblings: all absorbed on the right, innermost first.
    t = one("(VP (VBD saw) (NP (PRP me)) (PP (IN at) (NP (NN noon))) (ADVP (RB today)))")
    b = binarize(t, horizontal=None)
    assert b.children[1].label == "ADVP"
    assert b.children[0].label == "@VBD-VP|>NP|>PP"
    assert b.children[0].children[0].label == "@VBD-VP|>NP"


def test_every_node_is_at_most_binary():
    rng = np.random.default_rng(1)
    for _ in range(50):
        t = random_tree(rng)
        for s in SETTINGS[::5]:
            assert all(len(n.children) <= 2 for n in binarize(t, **s).subtrees())


def test_vertical_annotation():
    t = one("(S (NP (DT the) (NN dog)) (VP (VBD ran) (ADVP (RB off))))")
    v2 = binarize(t, vertical=2)
    assert v2.label == "S"  # the root has no parent
    assert [c.label for c in v2.children] == ["NP^S", "VP^S"]
    assert v2.children[0].children[0].label == "DT"  # preterminals untouched by default
    assert v2.children[1].children[1].label == "ADVP^VP"
    v3 = binarize(t, vertical=3, annotate_preterminals=True)
    assert v3.children[1].children[1].label == "ADVP^VP^S"
    assert v3.children[1].children[1].children[0].label == "RB^ADVP^VP"
    assert v3.children[0].children[0].label == "DT^NP^S"


def test_mark_unary():
    t = one("(S (VP (VB go)) (NP (NP (NN it)) (PP (IN of) (NP (PRP them)))))")
    b = binarize(t, mark_unary=True, vertical=2)
    assert b.children[0].label == "VP^S-U"  # a preterminal child counts as a nonterminal
    assert b.children[0].children[0].label == "VB"  # a preterminal's only child is a word: no mark
    assert b.children[1].label == "NP^S"
    assert b.children[1].children[0].label == "NP^NP-U"
    assert base_label("NP^S-U") == "NP"


def test_base_label_and_is_binarized():
    assert base_label("NP^S") == "NP"
    assert base_label("NP^S^VP") == "NP"
    assert base_label("NP-U") == "NP"
    assert base_label("@NN-NP") == "NP"
    assert base_label("@NN-NP^S|<JJ|>SBAR") == "NP"
    assert base_label("@-LRB--PRN") == "PRN"
    assert base_label("-LRB-") == "-LRB-"
    assert is_binarized_node("@NN-NP") and not is_binarized_node("NP") and not is_binarized_node("-LRB-")


def test_right_factored():
    t = one("(NP (DT a) (JJ b) (NN c) (NNS d))")
    b = binarize(t, head_outward=False, horizontal=None)
    assert b.children[0].label == "DT"
    assert b.children[1].label == "@NNS-NP|<DT"
    assert b.children[1].children[1].label == "@NNS-NP|<DT|<JJ"
    assert unbinarize(b) == t


def test_reserved_labels_are_refused():
    for bad in ["@NP", "NP^S", "NP-U"]:
        with pytest.raises(InputError):
            binarize(Tree("S", [Tree(bad, [Tree("NN", ["x"])])]))


@pytest.mark.parametrize("seed", range(4))
def test_round_trip_on_random_trees(seed):
    rng = np.random.default_rng(seed)
    for _ in range(10):
        t = random_tree(rng)
        for s in SETTINGS:
            assert unbinarize(binarize(t, **s)) == t, (t, s)


def test_deep_tree_binarizes_without_recursion():
    depth = 3000
    t = one("(X (A a) (B b) " * depth + "(C c)" + ")" * depth)
    b = binarize(t, vertical=2, mark_unary=True)
    assert unbinarize(b) == t


def test_unbinarize_names_a_bare_at_root():
    t = Tree("@NN-NP|<DT", [Tree("DT", ["a"]), Tree("NN", ["b"])])
    assert unbinarize(t) == Tree("NP", [Tree("DT", ["a"]), Tree("NN", ["b"])])
