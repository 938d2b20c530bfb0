"""Vocabulary constraint machinery against brute-force enumeration on tiny hand-made models."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from treegram.generation import GenerationModel, SystemBase
from treegram.generation.sampling import sample_entries
from treegram.generation.constraints import (GenerateUp, NoSentenceError, acyclic_edges, algorithm1_keep,
                                                   constrain, entry_keys, expected_counts, goodness,
                                                   log_likelihood_ratio, oov_outcomes, prune_to_vocabulary,
                                                   rejection_sample_entries)


class ToySystem(SystemBase):
    """Context = a symbol; outcome = (word or "", (child symbols...)); emits the word, implies the children."""

    name = "toy"

    def root_context(self):
        return "S"

    def imply(self, context, outcome):
        return list(outcome[1])

    def derivations(self, example):  # pragma: no cover - toy models are built from weights
        raise NotImplementedError

    def text(self, derivation):
        return [n.outcome[0] for n in derivation.nodes() if n.outcome[0]]

    def words_of_outcome(self, outcome):
        return (outcome[0],) if outcome[0] else ()

    @staticmethod
    def context_word(context):
        return context


def toy_model(weights):
    return GenerationModel.from_weights(ToySystem(), weights)


# A DAG grammar (finite language): S -> A B | A | C ;  A -> a | x ;  B -> b | A ; C -> c A | y
DAG = {
    "S": {("", ("A", "B")): 0.5, ("", ("A",)): 0.3, ("", ("C",)): 0.2},
    "A": {("a", ()): 0.6, ("x", ()): 0.4},
    "B": {("b", ()): 0.7, ("", ("A",)): 0.3},
    "C": {("c", ("A",)): 0.5, ("y", ()): 0.5},
}
# A recursive grammar: S -> a S | b | x S S  (x out of vocabulary in the tests)
CYCLIC = {
    "S": {("", ("N",)): 1.0},
    "N": {("a", ("N",)): 0.3, ("b", ()): 0.5, ("x", ("N", "N")): 0.1, ("c", ("M",)): 0.1},
    "M": {("m", ("N",)): 0.5, ("z", ()): 0.5},
}


def enumerate_trees(model: GenerationModel, max_nodes: int, min_prob: float = 1e-7, allowed=None):
    """Every derivation (as pre-order entry lists) with at most max_nodes nodes and probability >= min_prob
    (only `allowed` entries, default all), with its probability."""
    out = []

    def expand(stack, entries, p):
        if len(entries) > max_nodes or p < min_prob:
            return
        if not stack:
            out.append((tuple(entries), p))
            return
        c, rest = stack[0], stack[1:]
        for e in range(model.ctx_ptr[c], model.ctx_ptr[c + 1]):
            if model.prob[e] <= 0 or (allowed is not None and not allowed[e]):
                continue
            expand(list(model.implied(e)) + rest, entries + [e], p * model.prob[e])

    expand([model.root], [], 1.0)
    return out


def in_vocab(model, entries, oov):
    return not oov[model.out_id[list(entries)]].any()


def test_algorithm1_and_fixup_give_a_consistent_model():
    # removing x kills D's only outcome -> E (which needs D) dies -> S keeps only its other outcome
    weights = {
        "S": {("", ("E",)): 0.5, ("", ("A",)): 0.5},
        "E": {("e", ("D",)): 1.0},
        "D": {("x", ()): 1.0},
        "A": {("a", ()): 0.5, ("", ("L",)): 0.5},
        "L": {("l", ("L",)): 1.0},  # a loop with no exit: valid for Algorithm 1, unproductive
    }
    m = toy_model(weights)
    oov = oov_outcomes(m, lambda w: w != "x")
    keep, rounds = algorithm1_keep(m, ~oov[m.out_id])
    kept = {(m.contexts[c], m.outcomes[m.out_id[e]]) for e, c in enumerate(m.ctx_of_entry) if keep[e]}
    assert ("D", ("x", ())) not in kept and ("E", ("e", ("D",))) not in kept
    assert ("S", ("", ("E",))) not in kept and ("S", ("", ("A",))) in kept
    assert rounds >= 3  # D invalid -> E invalid -> S's E-outcome removed, then a stable round
    assert ("L", ("l", ("L",))) in kept  # Algorithm 1 alone cannot see the endless loop
    pruned, report = prune_to_vocabulary(m, oov)
    assert pruned.is_consistent()
    assert set(pruned.contexts) == {"S", "A"}  # the loop goes with the productivity fixpoint
    assert report.oov_entries == 1 and report.unproductive_entries >= 1
    # probabilities are the unconstrained ones (not renormalized)
    assert pruned.prob_of("S", ("", ("A",))) == pytest.approx(0.5)
    assert pruned.prob_of("A", ("a", ())) == pytest.approx(0.5)


def test_empty_vocabulary_raises_no_sentence():
    m = toy_model(DAG)
    with pytest.raises(NoSentenceError):
        prune_to_vocabulary(m, oov_outcomes(m, lambda w: False))


@pytest.mark.parametrize("method", ["acyclic", "fixpoint"])
def test_goodness_matches_enumeration_on_a_dag(method):
    m = toy_model(DAG)
    vocab = {"a", "b", "c"}
    oov = oov_outcomes(m, vocab.__contains__)
    pruned, _ = prune_to_vocabulary(m, oov)
    g = goodness(pruned, method=method)
    for ctx in pruned.contexts:
        sub = GenerationModel.from_weights(ToySystem(), {**DAG, "S": {("", (ctx,)): 1.0}}) if ctx != "S" else m
        sub_oov = oov_outcomes(sub, vocab.__contains__)
        brute = sum(p for ents, p in enumerate_trees(sub, 20) if in_vocab(sub, ents, sub_oov))
        assert g[pruned.context_index[ctx]] == pytest.approx(brute, abs=1e-12), ctx


def test_goodness_fixpoint_on_a_recursive_grammar_and_acyclic_drops_cycles():
    m = toy_model(CYCLIC)
    vocab = {"a", "b", "c", "m", "z"}
    oov = oov_outcomes(m, vocab.__contains__)
    pruned, _ = prune_to_vocabulary(m, oov)
    g = goodness(pruned, method="fixpoint")
    brute = sum(p for ents, p in enumerate_trees(m, 60, 1e-12, allowed=~oov[m.out_id]))
    # enumeration truncated (60 nodes, p >= 1e-12): a lower bound within the tail mass
    assert brute <= g[pruned.root] + 1e-12
    assert g[pruned.root] - brute < 1e-6
    # analytically: G(N) = 0.3 G(N) + 0.5 + 0.1 (0.5 G(N) + 0.5)  =>  G(N) = 0.55 / 0.65
    assert g[pruned.context_index["N"]] == pytest.approx(0.55 / 0.65, abs=1e-10)
    # N -> a N and N -> c M, M -> m N are cycles: the acyclic graph must drop some edge and stay a DAG
    src, dst, accepted, prefix = acyclic_edges(pruned)
    assert not accepted.all() and prefix < src.size
    n = pruned.n_contexts
    adj = {i: [d for s, d, a in zip(src, dst, accepted) if a and s == i] for i in range(n)}
    state = [0] * n

    def dfs(u):
        state[u] = 1
        for v in adj[u]:
            assert state[v] != 1, "cycle left in the acyclic graph"
            if state[v] == 0:
                dfs(v)
        state[u] = 2

    for u in range(n):
        if state[u] == 0:
            dfs(u)
    # greedy: every rejected edge would close a cycle with the accepted ones (u reachable from v)
    for s, d, a in zip(src, dst, accepted):
        if a:
            continue
        seen, stack = {int(d)}, [int(d)]
        while stack:
            x = stack.pop()
            for y in adj[x]:
                if y not in seen:
                    seen.add(y)
                    stack.append(y)
        assert int(s) in seen
    ga = goodness(pruned, method="acyclic")
    assert np.all((ga >= 0) & (ga <= 1 + 1e-12))


def _exact_constrained_distribution(model, oov, max_nodes):
    trees = enumerate_trees(model, max_nodes, 1e-12, allowed=~oov[model.out_id])
    z = sum(p for _, p in trees)
    return {entry_keys(model, np.asarray(e)): p / z for e, p in trees}


def test_pv_equals_rejection_sampler_exactly_on_a_dag():
    m = toy_model(DAG)
    oov = oov_outcomes(m, {"a", "b", "c", "y"}.__contains__)
    pruned, _ = prune_to_vocabulary(m, oov)
    pv = constrain(pruned, goodness(pruned, method="acyclic"))
    want = _exact_constrained_distribution(m, oov, 20)
    got = {entry_keys(pv, np.asarray(e)): p for e, p in enumerate_trees(pv, 20)}
    assert set(got) == set(want)
    for k in want:
        assert got[k] == pytest.approx(want[k], abs=1e-12)
    # G = 1 (plain renormalization) is not the rejection sampler here
    p1 = constrain(pruned, goodness(pruned, method="one"))
    got1 = {entry_keys(p1, np.asarray(e)): p for e, p in enumerate_trees(p1, 20)}
    assert max(abs(got1[k] - want[k]) for k in want) > 0.01


def test_pv_sampling_matches_rejection_sampling_on_a_recursive_grammar():
    m = toy_model(CYCLIC)
    oov = oov_outcomes(m, {"a", "b", "c", "m", "z"}.__contains__)
    pruned, _ = prune_to_vocabulary(m, oov)
    pv = constrain(pruned, goodness(pruned, method="fixpoint"))
    want = _exact_constrained_distribution(m, oov, 25)
    got = {entry_keys(pv, np.asarray(e)): p for e, p in enumerate_trees(pv, 25, 1e-12)}
    for k in sorted(want, key=want.get, reverse=True)[:30]:
        assert got[k] == pytest.approx(want[k], rel=1e-6)
    # the samplers themselves: frequencies of the top trees agree within sampling error
    rng = np.random.default_rng(5)
    n = 8000
    ours = Counter(entry_keys(pv, sample_entries(pv, rng, max_nodes=200)) for _ in range(n))
    rs = Counter()
    for _ in range(n):
        ent, _tries = rejection_sample_entries(m, oov, rng, max_nodes=200)
        rs[entry_keys(m, ent)] += 1
    for k in sorted(want, key=want.get, reverse=True)[:5]:
        sd = math.sqrt(want[k] * (1 - want[k]) / n)
        assert abs(ours[k] / n - want[k]) < 5 * sd
        assert abs(rs[k] / n - want[k]) < 5 * sd
    assert log_likelihood_ratio(ours.elements(), rs.elements()) < 60


def test_expected_counts_match_enumeration():
    d = toy_model(DAG)
    e, left = expected_counts(d)
    brute = np.zeros(d.n_contexts)
    for ents, p in enumerate_trees(d, 20, 0.0):
        for c in d.ctx_of_entry[list(ents)]:
            brute[c] += p
    assert left == 0.0
    np.testing.assert_allclose(e, brute, atol=1e-12)
    m = toy_model(CYCLIC)
    e, left = expected_counts(m, max_depth=400, tol=1e-13)
    assert left < 1e-12
    # subcritical branching: E(N) = 1 / (1 - m), m = 0.3 + 2 * 0.1 + 0.1 * 0.5 expected N children per N node
    assert e[m.context_index["N"]] == pytest.approx(1 / (1 - 0.55), rel=1e-9)
    assert e[m.context_index["M"]] == pytest.approx(0.1 / (1 - 0.55), rel=1e-9)


def test_generating_up_distribution_is_eq12_and_always_contains_the_word():
    # "B" contexts carry the required word: the tree may hold 0, 1 or 2 of them (assumption A can fail)
    weights = {
        "S": {("", ("A", "A")): 0.4, ("", ("A",)): 0.6},
        "A": {("a", ()): 0.5, ("", ("B",)): 0.3, ("", ("A2",)): 0.2},
        "A2": {("q", ()): 0.5, ("", ("B",)): 0.5},
        "B": {("b", ()): 1.0},
    }
    m = toy_model(weights)
    oov = oov_outcomes(m, lambda w: True)
    pruned, _ = prune_to_vocabulary(m, oov)
    pv = constrain(pruned, goodness(pruned, method="fixpoint"))
    e, _ = expected_counts(pv)
    cw = np.array([c == "B" for c in pv.contexts])
    up = GenerateUp(pv, e, cw)
    trees = enumerate_trees(pv, 20)
    z = sum(e[cw])
    want = {}
    for ents, p in trees:
        kappa = int(cw[pv.ctx_of_entry[list(ents)]].sum())
        if kappa:
            want[entry_keys(pv, np.asarray(ents))] = kappa * p / z  # eq. 12
    assert sum(want.values()) == pytest.approx(1.0)
    rng = np.random.default_rng(3)
    n = 20000
    got = Counter()
    for _ in range(n):
        ents = up.sample_entries(rng)
        assert cw[pv.ctx_of_entry[ents]].any()
        got[entry_keys(pv, ents)] += 1
    assert set(got) <= set(want)
    for k, p in want.items():
        assert abs(got[k] / n - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-9
    # same seed, same samples
    a = [tuple(up.sample_entries(np.random.default_rng(9))) for _ in range(3)]
    b = [tuple(up.sample_entries(np.random.default_rng(9))) for _ in range(3)]
    assert a == b


def test_generating_up_without_word_contexts_raises():
    m = toy_model(DAG)
    pv = constrain(m, np.ones(m.n_contexts))
    e, _ = expected_counts(pv)
    with pytest.raises(NoSentenceError):
        GenerateUp(pv, e, np.zeros(pv.n_contexts, dtype=bool))


def test_log_likelihood_ratio():
    assert log_likelihood_ratio("aabb", "abab") == pytest.approx(0.0)
    assert log_likelihood_ratio("aaaa", "bbbb") == pytest.approx(8 * math.log(2))
    assert log_likelihood_ratio(itertools.repeat("a", 10), "ab" * 5) > 0
