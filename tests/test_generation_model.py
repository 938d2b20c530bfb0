"""GenerationModel: MLE against hand counts, min_count + dead-context pruning, mean matrix, persistence."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from toy_data import T

from treegram.errors import InputError, ModelFileError
from treegram.generation import (EOS, GenerationModel, NgramSystem, PCFGSystem, SparseMatrix, SystemBase, fit_mle,
                                 sample, try_sample)


TREES = [
    T("S", T("NP", T("D", "the"), T("N", "dog")), T("VP", T("V", "barks"))),
    T("S", T("NP", T("D", "the"), T("N", "cat")), T("VP", T("V", "sees"), T("NP", T("D", "a"), T("N", "dog")))),
    T("S", T("NP", T("N", "dogs")), T("VP", T("V", "bark"))),
]


class GraphSystem(SystemBase):
    """Toy system for structural tests: contexts are ints, an outcome is the tuple of contexts it implies plus a tag."""

    name = "graph"

    def root_context(self):
        return 0

    def imply(self, context, outcome):
        return list(outcome[1])

    def derivations(self, example):
        raise NotImplementedError

    def text(self, derivation):
        return [n.outcome[0] for n in derivation.nodes()]

    def words_of_outcome(self, outcome):
        return (outcome[0],)


def test_pcfg_mle_equals_relative_frequencies():
    system = PCFGSystem(root_label="S")
    model = fit_mle(system, TREES)
    # brute force from the trees themselves, not from derivations
    rule_counts = Counter()
    for tree in TREES:
        for node in tree.subtrees():
            rhs = node.children[0] if node.is_preterminal else tuple(k.label for k in node.children)
            rule_counts[node.label, rhs] += 1
    lhs_totals = Counter()
    for (lhs, _), n in rule_counts.items():
        lhs_totals[lhs] += n
    assert model.n_entries == len(rule_counts)
    for (lhs, rhs), n in rule_counts.items():
        assert model.prob_of(lhs, rhs) == pytest.approx(n / lhs_totals[lhs])
        assert model.count[model.entry(model.context_index[lhs], model.outcome_index[rhs])] == n
    # a few by hand
    assert model.prob_of("NP", ("D", "N")) == pytest.approx(3 / 4)
    assert model.prob_of("VP", ("V", "NP")) == pytest.approx(1 / 3)
    assert model.prob_of("N", "dog") == pytest.approx(2 / 4)
    assert model.prob_of("N", "bark") == 0.0
    assert model.distribution("D") == pytest.approx({"the": 2 / 3, "a": 1 / 3})
    np.testing.assert_allclose(np.bincount(model.ctx_of_entry, weights=model.prob), 1.0)
    # log P of a training tree = sum over its rules
    d = system.derivations(TREES[0])
    hand = math.log(1 * 3 / 4 * 2 / 3 * 2 / 4 * 2 / 3 * 1 / 3)
    assert model.log_prob(d) == pytest.approx(hand)
    assert model.decode_entries(model.encode_derivation(d)) == d
    unseen = system.derivations(T("S", T("NP", T("N", "cat")), T("VP", T("V", "dog"))))
    assert model.log_prob(unseen) == -math.inf


def test_ngram_mle_by_hand():
    system = NgramSystem(2)
    model = fit_mle(system, [["a", "b"], ["a", "c"], ["b"], ["a", "b", "b"]])
    assert model.distribution(("<s>",)) == pytest.approx({"a": 3 / 4, "b": 1 / 4})
    assert model.distribution(("a",)) == pytest.approx({"b": 2 / 3, "c": 1 / 3})
    assert model.distribution(("b",)) == pytest.approx({EOS: 3 / 4, "b": 1 / 4})
    assert model.distribution(("c",)) == pytest.approx({EOS: 1.0})
    assert model.contexts[model.root] == ("<s>",)
    assert model.info["examples"] == 4 and model.is_consistent()


def cascade_corpus():
    # (a -> c) is seen twice but everything after c dies under min_count=2, two levels deep
    return [["a", "b"], ["a", "b"], ["a", "c", "f", "g"], ["a", "c", "f", "h"]]


def test_min_count_discards_and_leaves_dead_contexts():
    system = NgramSystem(2)
    raw = fit_mle(system, cascade_corpus(), min_count=2, prune=False)
    assert raw.info["pairs_seen"] == 9 and raw.info["pairs_kept"] == 5
    assert raw.distribution(("a",)) == pytest.approx({"b": 0.5, "c": 0.5})
    assert raw.distribution(("c",)) == pytest.approx({"f": 1.0})
    assert raw.distribution(("f",)) == {}          # f->g, f->h seen once each
    assert not raw.is_consistent()
    dead = {raw.contexts[i] for i in np.flatnonzero(raw.dead_contexts())}
    assert dead == {("f",)}
    productive = {raw.contexts[i] for i in np.flatnonzero(raw.productive())}
    assert productive == {("<s>",), ("a",), ("b",)}  # c only leads to dead f
    # sampling the raw model hits the dead context about half the time
    reasons = Counter(getattr(try_sample(raw, np.random.default_rng(s)), "reason", "ok") for s in range(200))
    assert set(reasons) == {"ok", "dead_context"} and 60 < reasons["dead_context"] < 140


def test_prune_dead_reaches_the_fixpoint():
    system = NgramSystem(2)
    model = fit_mle(system, cascade_corpus(), min_count=2)  # prune=True by default
    assert set(model.contexts) == {("<s>",), ("a",), ("b",)}
    assert model.distribution(("a",)) == pytest.approx({"b": 1.0})
    assert model.is_consistent() and model.info["history"] == ["prune_dead"]
    assert set(model.outcomes) == {"a", "b", EOS}
    for seed in range(20):
        assert system.text(sample(model, np.random.default_rng(seed))) == ["a", "b"]
    with pytest.raises(InputError, match="min_count"):
        fit_mle(system, cascade_corpus(), min_count=5)


def test_prune_dead_removes_nonterminating_cycles():
    system = PCFGSystem(root_label="TOP")
    weights = {"TOP": {("A",): 1.0, ("B",): 3.0}, "A": {("A", "B"): 1.0}, "B": {"b": 1.0, ("B", "C"): 1.0}}
    model = GenerationModel.from_weights(system, weights)  # C is implied but has no outcome
    assert model.prob_of("TOP", ("B",)) == pytest.approx(0.75)
    assert not model.is_consistent()
    pruned = model.prune_dead()
    assert set(pruned.contexts) == {"TOP", "B"}
    assert pruned.distribution("TOP") == pytest.approx({("B",): 1.0})
    assert pruned.distribution("B") == pytest.approx({"b": 1.0})
    assert pruned.is_consistent()


def brute_force_productive(weights, n_ctx):
    good = set()
    changed = True
    while changed:
        changed = False
        for c, dist in weights.items():
            if c not in good and any(all(k in good for k in o[1]) for o in dist):
                good.add(c)
                changed = True
    return good


def brute_force_reachable(weights):
    seen, todo = {0}, [0]
    while todo:
        c = todo.pop()
        for o in weights.get(c, {}):
            for k in o[1]:
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
    return seen


def random_weights(rng, n_ctx):
    weights = {}
    for c in range(n_ctx):
        if rng.random() < 0.15:
            continue  # dead
        weights[c] = {}
        for j in range(int(rng.integers(1, 4))):
            kids = tuple(int(k) for k in rng.integers(0, n_ctx, size=int(rng.integers(0, 3))))
            weights[c][(f"w{c}_{j}", kids)] = float(rng.integers(1, 5))
    weights.setdefault(0, {("root", (1,)): 1.0})
    return weights


@pytest.mark.parametrize("seed", range(12))
def test_fixpoints_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n_ctx = 12
    weights = random_weights(rng, n_ctx)
    model = GenerationModel.from_weights(GraphSystem(), weights)
    ids = model.context_index
    good = brute_force_productive(weights, n_ctx)
    assert {c for c in ids if model.productive()[ids[c]]} == good
    assert {c for c in ids if model.reachable()[ids[c]]} == brute_force_reachable(weights)
    if 0 not in good:
        with pytest.raises(InputError):
            model.prune_dead()
        return
    pruned = model.prune_dead()
    assert pruned.is_consistent()
    assert np.all(pruned.productive()) and np.all(pruned.reachable())
    for c in pruned.contexts:  # survivors keep their probabilities up to renormalisation over surviving outcomes
        kept = {o: w for o, w in weights[c].items() if all(k in good for k in o[1])}
        total = sum(kept.values())
        assert pruned.distribution(c) == pytest.approx({o: w / total for o, w in kept.items()})


def test_restrict_with_a_mask_renormalises():
    model = fit_mle(PCFGSystem(root_label="S"), TREES)
    keep = np.ones(model.n_entries, dtype=bool)
    keep[model.entry(model.context_index["N"], model.outcome_index["dog"])] = False
    sub = model.restrict(keep)
    assert sub.distribution("N") == pytest.approx({"cat": 0.5, "dogs": 0.5})
    assert sub.distribution("NP") == model.distribution("NP")
    # drop the only way to end a VP: everything above it dies, including the root
    keep = np.ones(model.n_entries, dtype=bool)
    for word in ["barks", "sees", "bark"]:
        keep[model.entry(model.context_index["V"], model.outcome_index[word])] = False
    with pytest.raises(InputError, match="root"):
        model.restrict(keep)


def test_mean_matrix_entries_by_hand():
    model = fit_mle(PCFGSystem(root_label="S"), TREES)
    M = model.mean_matrix()
    i = model.context_index
    assert M.get(i["S"], i["NP"]) == pytest.approx(1.0)
    assert M.get(i["S"], i["VP"]) == pytest.approx(1.0)
    assert M.get(i["VP"], i["V"]) == pytest.approx(1.0)
    assert M.get(i["VP"], i["NP"]) == pytest.approx(1 / 3)
    assert M.get(i["NP"], i["D"]) == pytest.approx(3 / 4)
    assert M.get(i["NP"], i["N"]) == pytest.approx(1.0)  # 3/4 from (D N) + 1/4 from (N)
    assert M.get(i["N"], i["S"]) == 0.0
    assert M.nnz == 6 and M.to_dense()[i["D"]].sum() == 0.0


def test_mean_matrix_counts_repeated_children():
    system = PCFGSystem(root_label="X")
    model = GenerationModel.from_weights(system, {"X": {("Y", "Y"): 1.0, ("Y",): 1.0, "x": 2.0}, "Y": {"y": 1.0}})
    M = model.mean_matrix()
    assert M.get(model.context_index["X"], model.context_index["Y"]) == pytest.approx(2 * 0.25 + 0.25)


def test_expected_counts_from_the_mean_matrix_match_sampling():
    model = fit_mle(PCFGSystem(root_label="S"), TREES)
    M = model.mean_matrix()
    z = np.zeros(model.n_contexts)
    z[model.root] = 1.0
    expected = np.zeros(model.n_contexts)
    for _ in range(20):  # the series is finite here: trees have depth <= 6
        expected += z
        z = M.vecmat(z)
    assert expected[model.context_index["NP"]] == pytest.approx(4 / 3)
    rng = np.random.default_rng(3)
    n = 3000
    seen = np.zeros(model.n_contexts)
    for _ in range(n):
        for node in sample(model, rng).nodes():
            seen[model.context_index[node.context]] += 1
    np.testing.assert_allclose(seen / n, expected, atol=0.05)


def test_sparse_matrix_against_dense():
    rng = np.random.default_rng(0)
    rows, cols = rng.integers(0, 5, 40), rng.integers(0, 7, 40)
    vals = rng.random(40)
    M = SparseMatrix.from_triplets(rows, cols, vals, (5, 7))
    dense = np.zeros((5, 7))
    np.add.at(dense, (rows, cols), vals)
    np.testing.assert_allclose(M.to_dense(), dense)
    z, x = rng.random(5), rng.random(7)
    np.testing.assert_allclose(M.vecmat(z), z @ dense)
    np.testing.assert_allclose(M.matvec(x), dense @ x)
    np.testing.assert_allclose(M.transpose().to_dense(), dense.T)


def test_oov_outcomes():
    model = fit_mle(PCFGSystem(root_label="S"), TREES)
    oov = model.oov_outcomes({"the", "dog", "barks", "unrelated"})
    flagged = {model.outcomes[o] for o in np.flatnonzero(oov)}
    assert flagged == {"cat", "sees", "a", "dogs", "bark"}  # rule outcomes emit no words: never OOV


def test_save_load_round_trip(tmp_path):
    for system, data in [(NgramSystem(3), [["a", "b"], ["a", "c", "b"], ["b", "b"]]), (PCFGSystem("S"), TREES)]:
        model = fit_mle(system, data)
        path = tmp_path / f"{system.name}.tgm"
        model.save(path, system)
        back = GenerationModel.load(path)
        again = GenerationModel.load(path, system)
        for loaded in (back, again):
            assert loaded.contexts == model.contexts and loaded.outcomes == model.outcomes
            assert loaded.words == model.words and loaded.root == model.root and loaded.info == model.info
            for name in ("ctx_ptr", "out_id", "count", "prob", "imp_ptr", "imp_ctx", "word_ptr", "word_id"):
                np.testing.assert_array_equal(getattr(loaded, name), getattr(model, name))
        assert [sample(back, np.random.default_rng(s)) for s in range(5)] == \
               [sample(model, np.random.default_rng(s)) for s in range(5)]
    with pytest.raises(ModelFileError, match="trained with system"):
        GenerationModel.load(tmp_path / "ngram.tgm", NgramSystem(2))
    with pytest.raises(InputError):
        model.save(tmp_path / "x.tgm", NgramSystem(2))
    (tmp_path / "junk.tgm").write_bytes(b"not a zip")
    with pytest.raises(ModelFileError):
        GenerationModel.load(tmp_path / "junk.tgm")


def test_fit_rejects_bad_input():
    with pytest.raises(InputError, match="no training examples"):
        fit_mle(NgramSystem(2), [])
    with pytest.raises(InputError, match="training example 1"):
        fit_mle(NgramSystem(2), [["a"], "a b"])
    with pytest.raises(InputError, match="min_count"):
        fit_mle(NgramSystem(2), [["a"]], min_count=0)
