"""WeightedCFG snapshots its symbol tables instead of freezing the caller's objects."""

from __future__ import annotations

import math

import numpy as np

from treegram.charts import inside
from treegram.grammar import SymbolTable, WeightedCFG


def _grammar(nts, words, cats=None, category=None):
    return WeightedCFG(nonterminals=nts, words=words, start=nts["S"],
                       bin_parent=[nts["S"]], bin_left=[nts["A"]], bin_right=[nts["A"]], bin_logp=[0.0],
                       un_parent=[], un_child=[], un_logp=[],
                       lex_parent=[nts["A"]], lex_word=[words["a"]], lex_logp=[0.0],
                       categories=cats, category=category)


def test_caller_tables_stay_mutable():
    nts, words, cats = SymbolTable(["S", "A"]), SymbolTable(["a"]), SymbolTable(["X"])
    g = _grammar(nts, words, cats, np.zeros(2, np.int32))
    for table in (nts, words, cats):
        assert not table.frozen
    # the caller can keep growing its tables (e.g. a vocabulary shared by many per-sentence grammars) ...
    assert words.add("b") == 1 and cats.add("Y") == 1 and nts.add("B") == 2
    # ... without changing the grammar, whose own tables are frozen snapshots
    assert len(g.words) == 1 and len(g.categories) == 1 and g.num_symbols == 2
    for table in (g.nonterminals, g.words, g.categories):
        assert table.frozen
    assert g.words.get("b") == -1
    assert inside(g, g.lexical_input(["a", "a"])).log_z == math.log(1.0)
    # a second grammar from the same (grown) tables sees the new symbols
    g2 = _grammar(nts, words)
    assert len(g2.words) == 2 and g2.num_symbols == 3 and len(g2.categories) == 3


def test_frozen_tables_are_shared():
    nts, words = SymbolTable(["S", "A"]).freeze(), SymbolTable(["a"]).freeze()
    g = _grammar(nts, words)
    assert g.nonterminals is nts and g.words is words
