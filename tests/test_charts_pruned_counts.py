"""Outside / expected counts / posteriors on charts whose top and bottom masks differ (`tree_pruning`),
checked against brute-force enumeration of the derivations the pruning allows.

The pruning semantics (charts/pruning.py): a unary chain over a span is checked at its top (top_mask) and its
bottom (bottom_mask) only; middle symbols are free.  Regression test for unary rules on a chain getting
expected count 0 when their child is not a post-closure entry of the cell.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from treegram.charts import Pruning, expected_counts, inside, sample, tree_pruning, viterbi
from treegram.grammar import WeightedCFG

from test_charts_decoders import (assert_counts_match, enumerate_derivations, expected_from_derivations,
                                  logsumexp)

L = math.log


def chain_grammar() -> WeightedCFG:
    """Unary chains of 2 and 3 labels (S -> VP -> V, NP -> NN -> N) next to direct alternatives."""
    return WeightedCFG.from_rules(
        "S",
        binary=[("S", "NP", "VP", L(0.7)), ("NP", "D", "N", L(0.2)), ("VP", "V", "NP", L(0.6))],
        unary=[("S", "VP", L(0.3)), ("NP", "N", L(0.5)), ("NP", "NN", L(0.2)), ("NN", "N", L(0.9)),
               ("VP", "V", L(0.4))],
        lexical=[("NP", "fish", L(0.1)), ("NN", "fish", L(0.1)), ("N", "fish", L(0.6)), ("N", "saw", L(0.4)),
                 ("V", "fish", L(0.5)), ("V", "saw", L(0.5)), ("D", "the", L(1.0))])


def allowed(tree, bottom, top, cfg) -> bool:
    """Does the pruning admit this derivation's tree (chain tops in `top`, chain bottoms in `bottom`)?"""
    tops, bottoms = {}, {}
    for node, i, j in tree.spans():
        tops.setdefault((i, j), node.label)
        bottoms[(i, j)] = node.label
    cat = lambda lab: int(cfg.category[cfg.nonterminals[lab]])  # noqa: E731
    return (all(top[i, j, cat(lab)] for (i, j), lab in tops.items())
            and all(bottom[i, j, cat(lab)] for (i, j), lab in bottoms.items()))


_DERIVS: dict = {}


def all_derivations(cfg, words):
    key = (id(cfg), tuple(words))
    if key not in _DERIVS:
        _DERIVS[key] = (cfg, enumerate_derivations(cfg, cfg.lexical_input(words), words, cfg.num_symbols))
    return _DERIVS[key][1]


def brute_force(cfg, words, prune):
    lex = cfg.lexical_input(words)
    bottom, top = prune.layer_masks(len(words), len(cfg.categories))
    derivs = [d for d in all_derivations(cfg, words) if allowed(d[1], bottom, top, cfg)]
    logz = logsumexp(d[0] for d in derivs)
    want, post = expected_from_derivations(cfg, derivs, logz)
    return lex, derivs, logz, want, post


def check_against_brute_force(cfg, words, prune, tol=1e-10):
    lex, derivs, logz, want, want_post = brute_force(cfg, words, prune)
    chart = inside(cfg, lex, prune=prune)
    if not derivs:
        assert chart.log_z == -math.inf
        return False
    assert chart.log_z == pytest.approx(logz, abs=1e-10)
    best = max(derivs, key=lambda d: d[0])
    parse = viterbi(cfg, lex, words, prune=prune)
    assert parse.logp == pytest.approx(best[0], abs=1e-10)
    assert_counts_match(chart, want, want_post, tol)
    return True


@pytest.mark.parametrize("sentence", ["fish", "fish saw the fish", "the fish saw fish", "saw fish"])
def test_tree_pruning_counts_match_brute_force(sentence):
    g = chain_grammar()
    words = sentence.split()
    lex = g.lexical_input(words)
    derivs = enumerate_derivations(g, lex, words, g.num_symbols)
    trees = {d[1].to_bracket(): d[1] for d in derivs}
    assert any(len(t) == 1 and isinstance(t[0], type(t)) and len(t[0]) == 1 and isinstance(t[0][0], type(t))
               for tree in trees.values() for t in tree.subtrees()) or len(words) > 1
    for tree in trees.values():
        prune = tree_pruning(tree, g.categories)
        assert check_against_brute_force(g, words, prune)
        # every unary rule of the pinned tree gets a positive expected count (NP -> N and NP -> NN -> N share
        # both chain ends, so they split the mass of such a chain)
        _, uc, _ = expected_counts(inside(g, lex, prune=prune))
        for t in tree.subtrees():
            if len(t) == 1 and not isinstance(t[0], str):
                r = np.flatnonzero((g.un_parent == g.nonterminals[t.label])
                                   & (g.un_child == g.nonterminals[t[0].label]))
                assert uc[r].sum() > 0.2


def test_tree_pruning_em_keeps_training_tree_derivable():
    """One EM step on a tree-restricted chart must leave the tree derivable (the reported OSTAG failure)."""
    g = chain_grammar()
    words = "fish saw the fish".split()
    tree = next(d[1] for d in enumerate_derivations(g, g.lexical_input(words), words, g.num_symbols)
                if "(NN (N fish))" in d[1].to_bracket())
    prune = tree_pruning(tree, g.categories)
    bc, uc, lc = expected_counts(inside(g, g.lexical_input(words), prune=prune))
    # M step: renormalise per parent (rules never used keep probability 0)
    parents = np.concatenate([g.bin_parent, g.un_parent, g.lex_parent])
    counts = np.concatenate([bc, uc, lc])
    tot = np.bincount(parents, weights=counts, minlength=g.num_symbols)
    with np.errstate(divide="ignore", invalid="ignore"):
        logp = np.log(counts / tot[parents])
    nb, nu = g.num_binary, g.num_unary
    g2 = WeightedCFG(nonterminals=g.nonterminals, words=g.words, start=g.start, bin_parent=g.bin_parent,
                     bin_left=g.bin_left, bin_right=g.bin_right, bin_logp=logp[:nb], un_parent=g.un_parent,
                     un_child=g.un_child, un_logp=logp[nb:nb + nu], lex_parent=g.lex_parent, lex_word=g.lex_word,
                     lex_logp=logp[nb + nu:])
    chart = inside(g2, g2.lexical_input(words), prune=prune)
    assert chart.log_z > -math.inf
    # the training tree itself keeps a positive probability (every rule it uses got a positive count)
    lp = {d[1].to_bracket(): d[0] for d in enumerate_derivations(g2, g2.lexical_input(words), words, 6)}
    assert lp[tree.to_bracket()] > -math.inf


@pytest.mark.parametrize("seed", range(12))
def test_random_top_bottom_masks_match_brute_force(seed):
    g = chain_grammar()
    rng = np.random.default_rng(seed)
    words = ["fish saw the fish", "the fish saw fish", "fish saw fish"][seed % 3].split()
    n, ncat = len(words), len(g.categories)
    checked = tries = 0
    while checked < 3 and tries < 200:
        tries += 1
        bottom = rng.random((n + 1, n + 1, ncat)) < 0.9
        top = rng.random((n + 1, n + 1, ncat)) < 0.9
        checked += check_against_brute_force(g, words, Pruning(bottom_mask=bottom, top_mask=top))
    assert checked == 3


def test_tree_pruning_sample_returns_the_tree():
    g = chain_grammar()
    words = "fish saw the fish".split()
    lex = g.lexical_input(words)
    rng = np.random.default_rng(5)
    for d in enumerate_derivations(g, lex, words, g.num_symbols):
        chart = inside(g, lex, prune=tree_pruning(d[1], g.categories))
        tree, lp, _ = sample(chart, rng, words)
        # NP -> N and NP -> NN -> N share both ends, so the sample is the tree up to that choice
        assert tree.leaves() == words and chart.log_z >= d[0] - 1e-9
