"""The tree-constrained chart (treegram.charts.treechart) against brute-force enumeration of every derivation:
Viterbi, inside, expected counts, exact sampling and the state-stratified max chart, on random small charts."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from treegram.charts.treechart import TreeChartBuilder


def random_chart(seed: int, n_nodes: int = 7, n_cats: int = 2, n_rules: int = 6):
    """A random source tree (pre-order node numbers) with 1-3 rule applications per (node, some cats); tails are
    frontier cuts below the node with random required categories; scores, rule ids and (tp, fp) increments random."""
    rng = np.random.default_rng(seed)
    parent = [-1] + [int(rng.integers(0, i)) for i in range(1, n_nodes)]
    children = {i: [j for j in range(n_nodes) if parent[j] == i] for i in range(n_nodes)}

    def cuts(v):  # frontier cuts of the subtree below v (sets of descendants, at most 3)
        out = [[]]
        for c in children[v]:
            opts = [[c]] + [x for x in cuts(c) if x]
            out = [a + b for a in out for b in opts + [[]]]
        return [x for x in out if len(x) <= 3]

    b = TreeChartBuilder(n_nodes, n_cats, roots=[0])
    incs = []
    derivable: dict[int, list[int]] = {}
    for v in reversed(range(n_nodes)):  # bottom-up (the builder sorts by node anyway)
        cs = [c for c in cuts(v) if all(derivable[u] for u in c)]
        derivable[v] = []
        for cat in range(n_cats):
            if v != 0 and rng.random() < 0.3:
                continue
            for _ in range(int(rng.integers(1, 3))):
                fr = cs[int(rng.integers(len(cs)))]
                # mostly derivable tail categories, sometimes one that is not (a dead application)
                tails = [(u, int(rng.choice(derivable[u])) if rng.random() < 0.9 else int(rng.integers(n_cats)))
                         for u in fr]
                b.add(v, cat, int(rng.integers(n_rules)), float(rng.normal()), tails)
                incs.append((int(rng.integers(0, 2)), int(rng.integers(0, 2))))
            derivable[v].append(cat)
    return b.build(n_rules), np.array(incs), rng


def enumerate_derivations(chart, node, cat):
    """Every derivation of (node, cat) as a list of chart application indices."""
    out = []
    for e in chart.applications_at(node):
        if chart.cat[e] != cat:
            continue
        subs = [enumerate_derivations(chart, u, c) for u, c in chart.tails(e)]
        for combo in itertools.product(*subs):
            out.append([e] + [x for d in combo for x in d])
    return out


def logsumexp(xs):
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


@pytest.mark.parametrize("seed", range(12))
def test_viterbi_and_inside_equal_brute_force(seed):
    chart, _, rng = random_chart(seed)
    extra = rng.normal(size=len(chart))
    vit = chart.viterbi(extra)
    for cat in range(chart.n_cats):
        ders = enumerate_derivations(chart, 0, cat)
        assert vit.has(0, cat) == bool(ders)
        if not ders:
            continue
        scores = [chart.derivation_score(d, extra) for d in ders]
        assert vit.score(0, cat) == pytest.approx(max(scores))
        best = vit.derivation(0, cat)
        assert sorted(best) in [sorted(d) for d in ders]
        assert chart.derivation_score(best, extra) == pytest.approx(max(scores))
        ins = chart.inside(cat, extra)
        assert ins.score(0, cat) == pytest.approx(logsumexp(scores))


@pytest.mark.parametrize("seed", range(8))
def test_expected_counts_equal_brute_force(seed):
    chart, _, rng = random_chart(seed)
    cat = next((c for c in range(chart.n_cats) if enumerate_derivations(chart, 0, c)), None)
    if cat is None:
        pytest.skip("no derivation")
    theta = rng.normal(size=chart.n_rules)
    ders = enumerate_derivations(chart, 0, cat)
    ins = chart.inside(cat, rule_scores=theta)
    counts, rule_counts, _ = chart.expected_counts(ins)
    w = np.array([sum(theta[chart.rule[e]] for e in d) for d in ders])
    p = np.exp(w - logsumexp(list(w)))
    want = np.zeros(len(chart))
    for d, pd in zip(ders, p):
        for e in d:
            want[e] += pd
    assert np.allclose(counts, want)
    assert np.allclose(rule_counts, np.bincount(chart.rule, weights=want, minlength=chart.n_rules))
    assert ins.total() == pytest.approx(logsumexp(list(w)))


def test_samples_follow_the_posterior():
    chart, _, rng = random_chart(3, n_nodes=5, n_cats=2)
    cat = next(c for c in range(chart.n_cats) if enumerate_derivations(chart, 0, c))
    ders = enumerate_derivations(chart, 0, cat)
    ins = chart.inside(cat)
    w = np.array([chart.derivation_score(d) for d in ders])
    p = np.exp(w - logsumexp(list(w)))
    keys = [tuple(sorted(d)) for d in ders]
    n = 4000
    seen = np.zeros(len(ders))
    for _ in range(n):
        seen[keys.index(tuple(sorted(chart.sample(rng, ins, 0, cat))))] += 1
    # every derivation within 5 standard errors of its probability
    assert np.all(np.abs(seen / n - p) <= 5 * np.sqrt(p * (1 - p) / n) + 1e-3)


@pytest.mark.parametrize("seed", range(10))
def test_stratified_max_equals_brute_force(seed):
    chart, incs_builder, rng = random_chart(seed)
    extra = rng.normal(size=len(chart))
    bounds = (4, 3)
    strat = chart.stratified_viterbi(incs_builder, bounds, extra)
    incs = incs_builder
    for cat in range(chart.n_cats):
        ders = enumerate_derivations(chart, 0, cat)
        table = strat.root_scores(0, cat)
        want = np.full(table.shape, -np.inf)
        for d in ders:
            st = incs[d].sum(axis=0)
            if (st <= np.array(bounds)).all():
                want[tuple(st)] = max(want[tuple(st)], chart.derivation_score(d, extra))
        assert np.allclose(table, want) and np.array_equal(np.isinf(table), np.isinf(want))
        for st in zip(*np.nonzero(np.isfinite(table))):
            d = strat.derivation(0, cat, st)
            assert tuple(incs[d].sum(axis=0)) == tuple(int(x) for x in st)
            assert chart.derivation_score(d, extra) == pytest.approx(table[st])
        # with no state the stratified chart's best equals plain Viterbi
        if ders:
            assert np.max(table) <= chart.viterbi(extra).score(0, cat) + 1e-9


def test_loss_augmented_decoding_through_the_extra_hook():
    """Margin-rescaled loss-augmented decoding with a non-decomposable loss (1 - precision over the state), done
    exactly on the stratified chart, equals the brute-force argmax of score + loss."""
    chart, incs_builder, rng = random_chart(5, n_nodes=8)
    incs = incs_builder
    strat = chart.stratified_viterbi(incs_builder, (8, 8))
    for cat in range(chart.n_cats):
        ders = enumerate_derivations(chart, 0, cat)
        if not ders:
            continue
        table = strat.root_scores(0, cat)
        tp, fp = np.indices(table.shape)
        loss = 1.0 - np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 1.0)
        got = np.max(table + loss)
        want = max(chart.derivation_score(d) + 1.0 - (incs[d].sum(0)[0] / max(incs[d].sum(), 1) if incs[d].sum()
                                                      else 1.0) for d in ders)
        assert got == pytest.approx(want)


def test_builder_rejects_tails_that_are_not_below_the_node():
    b = TreeChartBuilder(3, 1)
    with pytest.raises(ValueError):
        b.add(1, 0, 0, 0.0, [(0, 0)])
