"""Integer-coded tree arrays: layout invariants against the Tree, and exact round trips."""

from __future__ import annotations

import numpy as np
import pytest

from treegram.errors import InputError
from treegram.io import load_bundle, save_bundle
from treegram.grammar import SymbolTable
from treegram.trees import Tree, TreeArrays, TreebankArrays, parse_brackets


def random_tree(rng: np.random.Generator, max_depth: int = 5) -> Tree:
    def grow(depth: int):
        if depth >= max_depth or rng.random() < 0.3:
            return Tree(str(rng.choice(["NN", "DT", "VB"])), [str(rng.choice(["a", "b", "c"]))])
        kids = [str(rng.choice(["w", "v"])) if rng.random() < 0.1 else grow(depth + 1) for _ in range(int(rng.integers(0, 4)))]
        return Tree(str(rng.choice(["S", "NP", "VP"])), kids)

    return grow(0)


def check_against_tree(a: TreeArrays, t: Tree, labels: SymbolTable, words: SymbolTable) -> None:
    """Brute-force comparison of every column with what the Tree says."""
    nodes: list = []  # pre-order, words included, with (parent, start, end)
    spans = {id(s): (b, e) for s, b, e in t.spans()}
    stack = [(t, -1, 0)]
    while stack:
        n, p, pos = stack.pop()
        i = len(nodes)
        if isinstance(n, str):
            nodes.append((n, p, pos, pos + 1))
            continue
        b, e = spans[id(n)]
        nodes.append((n, p, b, e))
        pending, cur = [], b
        for c in n.children:
            pending.append((c, i, cur))
            cur += 1 if isinstance(c, str) else spans[id(c)][1] - spans[id(c)][0]
        stack.extend(reversed(pending))
    assert len(a) == len(nodes)
    for i, (n, p, b, e) in enumerate(nodes):
        assert a.parent[i] == p and a.start[i] == b and a.end[i] == e
        if isinstance(n, str):
            assert a.label[i] == -1 and words.symbol(a.word[i]) == n and a.num_children[i] == 0
        else:
            assert labels.symbol(a.label[i]) == n.label and a.word[i] == -1
            assert a.num_children[i] == len(n.children)
            kids = a.children(i)
            assert len(kids) == len(n.children)
            assert all(a.parent[k] == i for k in kids)
    for col in (a.label, a.parent, a.first_child, a.next_sibling, a.start, a.end):
        assert col.dtype == np.int32


def test_layout_of_a_small_tree():
    (t,) = parse_brackets("(S (NP (DT the) (NN dog)) (VP (VBD barked)))")
    labels, words = SymbolTable(), SymbolTable()
    a = TreeArrays.from_tree(t, labels, words)
    # Rows: S NP DT the NN dog VP VBD barked
    assert a.parent.tolist() == [-1, 0, 1, 2, 1, 4, 0, 6, 7]
    assert a.first_child.tolist() == [1, 2, 3, -1, 5, -1, 7, 8, -1]
    assert a.next_sibling.tolist() == [-1, 6, 4, -1, -1, -1, -1, -1, -1]
    assert a.start.tolist() == [0, 0, 0, 0, 1, 1, 2, 2, 2]
    assert a.end.tolist() == [3, 2, 1, 1, 2, 2, 3, 3, 3]
    assert labels.to_list() == ["S", "NP", "DT", "NN", "VP", "VBD"]
    assert words.to_list() == ["the", "dog", "barked"]
    assert a.num_words == 3
    assert a.to_tree(labels, words) == t


def test_random_trees_round_trip_and_match_brute_force():
    rng = np.random.default_rng(3)
    labels, words = SymbolTable(), {}
    trees = [random_tree(rng) for _ in range(60)]
    for t in trees:
        a = TreeArrays.from_tree(t, labels, words)
        word_table = SymbolTable(sorted(words, key=words.get))
        check_against_tree(a, t, labels, word_table)
        assert a.to_tree(labels, word_table) == t


def test_treebank_arrays(tmp_path):
    rng = np.random.default_rng(4)
    trees = [random_tree(rng) for _ in range(40)]
    labels, words = SymbolTable(), SymbolTable()
    tb = TreebankArrays.from_trees(trees, labels, words)
    assert len(tb) == 40 and tb.offsets[0] == 0 and tb.offsets[-1] == tb.num_nodes
    for k, t in enumerate(trees):
        lo, hi = tb.offsets[k], tb.offsets[k + 1]
        assert tb.parent[lo] == -1
        inner = tb.parent[lo + 1 : hi]
        assert ((inner >= lo) & (inner < hi)).all()  # global indices stay inside their tree
        check_against_tree(tb.tree_arrays(k), t, labels, words)
    assert tb.to_trees(labels, words) == trees
    assert tb.to_tree(7, labels, words) == trees[7]
    save_bundle(tmp_path / "tb.bundle", {"labels": labels.to_list(), "words": words.to_list()}, tb.arrays())
    meta, arrays = load_bundle(tmp_path / "tb.bundle")
    again = TreebankArrays.from_arrays(arrays)
    assert again.to_trees(meta["labels"], meta["words"]) == trees


def test_symbol_table():
    s = SymbolTable(["a", "b"])
    assert s["a"] == 0 and s.add("c") == 2 and len(s) == 3 and "c" in s and s.get("zzz") == -1
    with pytest.raises(KeyError):
        s["zzz"]  # lookup never grows the table; `add` does
    frozen = SymbolTable.from_list(["a"], frozen=True)
    with pytest.raises(InputError):
        frozen.add("b")


def test_inconsistent_arrays_raise_input_error():
    (t,) = parse_brackets("(S (NP (NN x)))")
    labels, words = SymbolTable(), SymbolTable()
    a = TreeArrays.from_tree(t, labels, words)
    with pytest.raises(InputError):
        a.to_tree(["S"], words)
    with pytest.raises(InputError):
        TreebankArrays.from_arrays({"label": np.zeros(3)})
