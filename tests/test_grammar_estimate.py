"""Relative-frequency estimation on hand-built trees (and, with shared data, a PTB grammar that parses)."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from toy_data import T

from treegram.errors import InputError
from treegram.grammar import estimate_pcfg, rule_counts


TREES = [
    T("S", T("NP", T("DT", "the"), T("NN", "dog")), T("VP", T("VBD", "barked"))),
    T("S", T("NP", T("NN", "dogs")), T("VP", T("VBD", "saw"), T("NP", T("DT", "the"), T("NN", "cat")))),
    T("S", T("NP", T("DT", "the"), T("NN", "cat")), T("VP", T("VBD", "saw"), T("NP", T("NN", "dogs")))),
    T("NP", T("DT", "the"), T("NN", "cat")),
]


def rule_table(g):
    """{rule string: probability} for every rule of the grammar."""
    out = {}
    for kind, n in (("binary", g.num_binary), ("unary", g.num_unary), ("lexical", g.num_lexical)):
        logp = {"binary": g.bin_logp, "unary": g.un_logp, "lexical": g.lex_logp}[kind]
        for r in range(n):
            out[g.rule_str(kind, r)] = math.exp(logp[r])
    return out


def test_relative_frequencies_by_hand():
    g = estimate_pcfg(TREES)
    p = rule_table(g)
    # TOP -> S in 3 of 4 trees, TOP -> NP in 1
    assert p["TOP -> S"] == pytest.approx(3 / 4) and p["TOP -> NP"] == pytest.approx(1 / 4)
    assert p["S -> NP VP"] == pytest.approx(1.0)
    # NP: DT NN x4 (trees 1, 2, 3, 4), NN x2 (unary)
    assert p["NP -> DT NN"] == pytest.approx(4 / 6) and p["NP -> NN"] == pytest.approx(2 / 6)
    assert p["VP -> VBD"] == pytest.approx(1 / 3) and p["VP -> VBD NP"] == pytest.approx(2 / 3)
    # P(word | tag): NN emits dog 1, dogs 2, cat 3
    assert p["NN -> 'cat'"] == pytest.approx(3 / 6) and p["NN -> 'dogs'"] == pytest.approx(2 / 6)
    assert p["VBD -> 'saw'"] == pytest.approx(2 / 3) and p["DT -> 'the'"] == pytest.approx(1.0)
    # every parent's distribution sums to one
    totals = Counter()
    for rule, prob in p.items():
        totals[rule.split(" -> ")[0]] += prob
    assert all(v == pytest.approx(1.0) for v in totals.values())
    assert g.nonterminals.symbol(g.start) == "TOP"


def test_rule_counts_match_a_python_count():
    rc = rule_counts(TREES * 3)
    want = Counter()
    for t in TREES * 3:
        want[("TOP", t.label)] += 1
        for node in t.subtrees():
            want[(node.label,) + tuple(c if isinstance(c, str) else c.label for c in node.children)] += 1
    nt, w = rc.nonterminals.symbol, rc.words.symbol
    got = Counter()
    for p, l, r, c in zip(rc.bin_parent, rc.bin_left, rc.bin_right, rc.bin_count):
        got[(nt(p), nt(l), nt(r))] += c
    for p, ch, c in zip(rc.un_parent, rc.un_child, rc.un_count):
        got[(nt(p), nt(ch))] += c
    for p, wd, c in zip(rc.lex_parent, rc.lex_word, rc.lex_count):
        got[(nt(p), w(wd))] += c
    assert got == want
    totals = rc.parent_totals()
    assert totals[rc.nonterminals["NP"]] == 18


def test_root_already_start_label_and_categories():
    trees = [T("TOP", T("S", T("NN", "a"), T("NN", "b")))]
    g = estimate_pcfg(trees, category=lambda s: s.lower())
    assert g.num_unary == 1 and g.rule_str("unary", 0) == "TOP -> S"
    assert sorted(g.categories) == ["nn", "s", "top"]


@pytest.mark.parametrize("bad,msg", [
    (T("S", T("A", "a"), T("B", "b"), T("C", "c")), "binarize"),
    (T("S", T("A", "a"), "b"), "mixes words"),
    (T("S", T("A", "a"), T("NP")), "no children"),
])
def test_bad_trees_raise(bad, msg):
    with pytest.raises(InputError, match=msg):
        estimate_pcfg([TREES[0], bad])


def test_no_trees_raises():
    with pytest.raises(InputError):
        estimate_pcfg([])


def test_estimated_grammar_parses_training_sentence():
    from treegram.charts import viterbi

    g = estimate_pcfg(TREES)
    words = TREES[1].leaves()
    parse = viterbi(g, g.lexical_input(words), words)
    assert parse is not None and parse.tree == T("TOP", TREES[1])
    assert np.isfinite(parse.logp)
