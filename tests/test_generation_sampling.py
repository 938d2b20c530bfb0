"""Ancestral sampling: determinism, agreement with a reference sampler, frequencies, budgets, real data."""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import pytest

from treegram.errors import InputError
from treegram.generation import (BOS, EOS, DeadContextError, DerivationTooLarge, GenerationError, GenerationModel,
                                 NgramSystem, PCFGSystem, SampleFailure, fit_mle, sample, sample_entries,
                                 sample_text, try_sample)
from treegram.trees.tree import Tree

CORPUS = [s.split() for s in [
    "the dog bit me", "the cat licked me", "the dog licked the cat", "a cat bit the dog",
    "the furry dog bit me", "the cute cat licked me", "a dog barked", "the cat slept",
]]


def reference_sample(model: GenerationModel, rng: np.random.Generator) -> list[int]:
    """Plain-Python pre-order sampler drawing one uniform per node: what the kernel must reproduce."""
    entries, stack = [], [model.root]
    while stack:
        c = stack.pop()
        lo, hi = model.ctx_ptr[c], model.ctx_ptr[c + 1]
        probs = model.prob[lo:hi]
        u = rng.random() * probs.sum()
        e = lo + min(int(np.searchsorted(np.cumsum(probs), u, side="right")), hi - lo - 1)
        entries.append(e)
        stack.extend(reversed(model.implied(e).tolist()))
    return entries


def test_same_seed_same_samples():
    system = NgramSystem(2)
    model = fit_mle(system, CORPUS)
    a = sample_text(model, system, np.random.default_rng(11), 50)
    b = sample_text(model, system, np.random.default_rng(11), 50)
    c = sample_text(model, system, 11, 50)
    assert a == b == c
    assert a != sample_text(model, system, np.random.default_rng(12), 50)


def test_kernel_matches_reference_sampler():
    # long derivations exercise the doubling uniform buffer (first buffer holds 64 draws)
    system = PCFGSystem(root_label="X")
    model = GenerationModel.from_weights(system, {"X": {("X", "Y"): 0.97, ("Y",): 0.03}, "Y": {"a": 1, "b": 2, "c": 0}})
    sizes = []
    for seed in range(200):
        got = sample_entries(model, np.random.default_rng(seed), max_nodes=100000)
        assert got.tolist() == reference_sample(model, np.random.default_rng(seed))
        sizes.append(got.size)
    assert max(sizes) > 64
    # the zero-probability outcome is never drawn
    c_entry = model.entry(model.context_index["Y"], model.outcome_index["c"])
    assert all(c_entry not in sample_entries(model, np.random.default_rng(s)).tolist() for s in range(300))


def test_root_frequencies_match_the_model():
    system = NgramSystem(2)
    model = fit_mle(system, CORPUS)
    rng = np.random.default_rng(5)
    n = 6000
    first = Counter(sample(model, rng).outcome for _ in range(n))
    for word, p in model.distribution((BOS,)).items():
        assert abs(first[word] / n - p) < 4 * np.sqrt(p * (1 - p) / n)
    assert set(first) <= set(model.distribution((BOS,)))


def test_inner_transition_frequencies_match_the_model():
    system = NgramSystem(2)
    model = fit_mle(system, CORPUS)
    rng = np.random.default_rng(9)
    after_the = Counter()
    for _ in range(3000):
        for node in sample(model, rng).nodes():
            if node.context == ("the",):
                after_the[node.outcome] += 1
    n = sum(after_the.values())
    for word, p in model.distribution(("the",)).items():
        assert abs(after_the[word] / n - p) < 4 * np.sqrt(p * (1 - p) / n)


def trigrams(words: list[str]) -> set[tuple[str, str, str]]:
    """The trigrams of a sentence padded as the order-3 n-gram system pads it (BOS BOS words EOS)."""
    padded = [BOS, BOS] + words + [EOS]
    return set(zip(padded, padded[1:], padded[2:]))


def test_ngram_samples_are_paths_of_seen_ngrams():
    system = NgramSystem(3)
    model = fit_mle(system, CORPUS)
    seen = set().union(*map(trigrams, CORPUS))
    novel = 0
    for words in sample_text(model, system, np.random.default_rng(0), 300):
        assert trigrams(words) <= seen
        novel += words not in CORPUS
    assert novel > 0  # "the dog licked me" etc.: recombination, not only copies


def test_pcfg_samples_are_trees_of_the_grammar():
    trees = [Tree("S", (Tree("NP", (Tree("N", ("dogs",)),)), Tree("VP", (Tree("V", ("bark",)),)))),
             Tree("S", (Tree("NP", (Tree("N", ("cats",)),)), Tree("VP", (Tree("V", ("sleep",)),))))]
    system = PCFGSystem(root_label="S")
    model = fit_mle(system, trees)
    got = {" ".join(w) for w in sample_text(model, system, np.random.default_rng(1), 200)}
    assert got == {"dogs bark", "dogs sleep", "cats bark", "cats sleep"}
    d = sample(model, np.random.default_rng(2))
    assert system.tree(d).leaves() == system.text(d)
    assert model.log_prob(d) == pytest.approx(np.log(0.25))


def test_node_budget():
    system = NgramSystem(2)
    model = fit_mle(system, [["a", "b", "c", "d", "e"]])  # every sample has exactly 6 nodes
    assert sample(model, 0, max_nodes=6).size() == 6
    with pytest.raises(DerivationTooLarge):
        sample(model, 0, max_nodes=5)
    failure = try_sample(model, 0, max_nodes=5)
    assert isinstance(failure, SampleFailure) and failure.reason == "too_large"
    with pytest.raises(InputError):
        sample(model, 0, max_nodes=0)


def test_supercritical_pcfg_hits_the_budget():
    system = PCFGSystem(root_label="X")
    model = GenerationModel.from_weights(system, {"X": {("X", "X"): 0.9, "x": 0.1}})
    results = [try_sample(model, np.random.default_rng(s), max_nodes=2000) for s in range(50)]
    too_large = sum(isinstance(r, SampleFailure) for r in results)
    assert too_large > 35  # extinction probability is 1/9
    ok = [r for r in results if not isinstance(r, SampleFailure)]
    assert all(r.size() % 2 == 1 for r in ok)
    with pytest.raises(GenerationError, match="succeeded"):
        sample_text(model, system, np.random.default_rng(0), 40, max_nodes=200, max_attempts=40)


def test_dead_context_is_reported():
    system = PCFGSystem(root_label="X")
    model = GenerationModel.from_weights(system, {"X": {("Y",): 1.0}})
    with pytest.raises(DeadContextError, match="'Y'"):
        sample(model, 0)


def tokenize(sentence: str) -> list[str]:
    return re.findall(r"\w+(?:'\w+)*|[^\w\s]", sentence)


@pytest.mark.shared
def test_trigram_on_graded_sentences(shared_data):
    folder = shared_data / "sentences" / "graded-enja" / "dist" / "easy"
    sentences = []
    for level in (3, 4, 5):  # easy/5.tsv alone has 719 lines; levels 3-5 give ~1900 level<=5 sentences
        for line in (folder / f"{level}.tsv").read_text(encoding="utf-8").splitlines():
            english = line.split("\t")[0].strip()
            if english:
                sentences.append(tokenize(english))
    sentences = sentences[:2000]
    assert len(sentences) > 1500
    system = NgramSystem(3)
    model = fit_mle(system, sentences)
    seen = set().union(*map(trigrams, sentences))
    out = sample_text(model, system, np.random.default_rng(2014), 100)
    assert len(out) == 100
    for words in out:
        assert trigrams(words) <= seen
    assert sum(words not in sentences for words in out) > 10
