"""SymbolTable and WeightedCFG: construction, validation, indexes, lexical input, persistence."""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.charts import inside, viterbi
from treegram.errors import InputError, ModelFileError
from treegram.grammar import LexicalInput, SymbolTable, WeightedCFG
from treegram.io import save_bundle

L = math.log


def small_grammar(category=None) -> WeightedCFG:
    return WeightedCFG.from_rules(
        "S",
        binary=[("S", "NP", "VP", 0.0), ("VP", "V", "NP", L(0.7)), ("NP", "DT", "N", L(0.6))],
        unary=[("VP", "V", L(0.3)), ("NP", "N", L(0.4))],
        lexical=[("DT", "the", 0.0), ("N", "dog", L(0.5)), ("N", "cat", L(0.5)), ("V", "saw", L(0.8)),
                 ("V", "slept", L(0.2))],
        category=category)


def test_symbol_table():
    t = SymbolTable()
    assert t.add("NP") == 0 and t.add("VP") == 1 and t.add("NP") == 0
    assert t["VP"] == 1 and t.get("PP") == -1 and t.get("PP", 7) == 7
    assert t.symbol(1) == "VP" and len(t) == 2 and "NP" in t and "PP" not in t
    assert list(t) == ["NP", "VP"] == t.to_list()
    with pytest.raises(KeyError):
        t["PP"]
    u = SymbolTable.from_list(t.to_list())
    assert u == t and u["VP"] == 1
    t.freeze()
    assert t.add("NP") == 0  # existing symbols are still fine
    with pytest.raises(InputError):
        t.add("PP")
    with pytest.raises(InputError):
        SymbolTable.from_list(["A", "A"])


def test_from_rules_arrays_and_repr():
    g = small_grammar()
    assert g.nonterminals.symbol(g.start) == "S"
    assert (g.num_binary, g.num_unary, g.num_lexical, g.num_rules) == (3, 2, 5, 10)
    assert g.rule_str("binary", 1) == "VP -> V NP" and g.rule_str("lexical", 3) == "V -> 'saw'"
    assert g.bin_parent.dtype == np.int32 and g.bin_logp.dtype == np.float64
    assert "3 binary + 2 unary + 5 lexical" in repr(g)
    with pytest.raises(ValueError):
        g.bin_logp[0] = 1.0  # immutable
    # default categories are the symbols themselves
    assert g.categories.to_list() == g.nonterminals.to_list()
    assert (g.category == np.arange(g.num_symbols)).all()
    g2 = small_grammar(category=lambda s: s[0])
    assert g2.categories.symbol(int(g2.category[g2.nonterminals["NP"]])) == "N"
    assert g2.category[g2.nonterminals["NP"]] == g2.category[g2.nonterminals["N"]]


def test_validation_errors():
    nts, words = ["S", "A"], ["a"]
    with pytest.raises(InputError, match="outside the symbol table"):
        WeightedCFG.from_arrays(nts, words, "S", unary=([0], [5], [0.0]))
    with pytest.raises(InputError, match="NaN"):
        WeightedCFG.from_arrays(nts, words, "S", lexical=([1], [0], [float("nan")]))
    with pytest.raises(InputError, match="equal length"):
        WeightedCFG.from_arrays(nts, words, "S", binary=([0], [1], [1, 1], [0.0]))
    with pytest.raises(InputError):
        LexicalInput.from_triples(2, [0, 2], [0, 0], [0.0, 0.0])


def test_indexes_group_rules():
    g = small_grammar()
    idx = g.index
    for b in range(g.num_symbols):
        rows = range(idx.bl_ptr[b], idx.bl_ptr[b + 1])
        assert sorted(idx.bl_rule[r] for r in rows) == sorted(np.flatnonzero(g.bin_left == b))
        for r in rows:
            rule = idx.bl_rule[r]
            assert (idx.bl_right[r], idx.bl_parent[r], idx.bl_logp[r]) == (g.bin_right[rule], g.bin_parent[rule],
                                                                            g.bin_logp[rule])
        rows = range(idx.bp_ptr[b], idx.bp_ptr[b + 1])
        assert sorted(idx.bp_rule[r] for r in rows) == sorted(np.flatnonzero(g.bin_parent == b))
        rows = range(idx.up_ptr[b], idx.up_ptr[b + 1])
        assert sorted(idx.up_rule[r] for r in rows) == sorted(np.flatnonzero(g.un_parent == b))
    for w in range(len(g.words)):
        rows = range(idx.lw_ptr[w], idx.lw_ptr[w + 1])
        assert sorted(idx.lw_rule[r] for r in rows) == sorted(np.flatnonzero(g.lex_word == w))
    assert g.index is idx  # built once


def test_lexical_input():
    g = small_grammar()
    lex = g.lexical_input(["the", "dog", "zebra", "saw"])
    assert lex.n == 4 and len(lex) == 3
    assert lex.position.tolist() == [0, 1, 3]
    assert [g.nonterminals.symbol(int(s)) for s in lex.symbol] == ["DT", "N", "V"]
    assert lex.uncovered_positions() == [2]
    for e in range(len(lex)):
        assert lex.logp[e] == g.lex_logp[lex.rule[e]]
    assert lex.ptr.tolist() == [0, 1, 2, 2, 3]
    # generic triples are sorted by (position, symbol) and may repeat a (position, symbol) pair
    t = LexicalInput.from_triples(3, [2, 0, 0, 1], [4, 3, 1, 1], [-1.0, -2.0, -0.5, -0.1])
    assert t.position.tolist() == [0, 0, 1, 2] and t.symbol.tolist() == [1, 3, 1, 4]
    assert (t.rule == -1).all()


def test_duplicate_lexical_entries_max_and_sum():
    g = WeightedCFG.from_rules("S", unary=[("S", "A", 0.0)], lexical=[("A", "a", 0.0)])
    lex = LexicalInput.from_triples(1, [0, 0], [1, 1], [L(0.2), L(0.3)])
    assert viterbi(g, lex).logp == pytest.approx(L(0.3))
    assert inside(g, lex).log_z == pytest.approx(L(0.5))


def test_save_load_roundtrip(tmp_path):
    g = small_grammar(category=lambda s: s.lower())
    path = tmp_path / "g.tgz"
    g.save(path)
    h = WeightedCFG.load(path)
    assert h.nonterminals == g.nonterminals and h.words == g.words and h.categories == g.categories
    assert h.start == g.start
    for name in ("bin_parent", "bin_left", "bin_right", "bin_logp", "un_parent", "un_child", "un_logp",
                 "lex_parent", "lex_word", "lex_logp", "category"):
        np.testing.assert_array_equal(getattr(h, name), getattr(g, name))
    words = "the dog saw the cat".split()
    a, b = viterbi(g, g.lexical_input(words), words), viterbi(h, h.lexical_input(words), words)
    assert a.tree == b.tree and a.logp == b.logp
    save_bundle(tmp_path / "other", {"format": "something-else"}, {})
    with pytest.raises(ModelFileError, match="not a weighted CFG"):
        WeightedCFG.load(tmp_path / "other")
    with pytest.raises(ModelFileError):
        WeightedCFG.load(tmp_path / "missing")
