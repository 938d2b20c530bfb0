"""McDonald (2006) compressor: exact Viterbi (free and fixed length) against brute force over every keep/delete
subset, the feature decomposition, MIRA / perceptron separating a separable toy set, CLI train + compress, and a
corrupt model file."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from treegram.corpora.demo import demo_trees
from treegram.cli.app import main
from treegram.formalism import load_model
from treegram.grammar.pcfg import PCFGModel
from treegram.io import load_bundle, save_bundle
from treegram.trees import parse_brackets

from treegram.plugins.stsg.mcdonald import (Vocab, extract, keep_path, path_features, score_matrix, train_weights,
                                            viterbi, viterbi_length)
from treegram.compression.treeprep import wrap_root


def _path_score(s, keep, reward=0.0):
    p = keep_path(keep)
    return sum(s[a, b] for a, b in zip(p[:-1], p[1:])) + reward * int(np.sum(keep))


@pytest.mark.parametrize("seed", range(6))
def test_viterbi_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 9))
    s = np.triu(rng.normal(size=(n + 2, n + 2)), 1)
    s[np.tril_indices(n + 2)] = -np.inf
    reward = float(rng.normal())
    masks = [np.array(m, dtype=bool) for m in itertools.product([False, True], repeat=n)]
    scores = [_path_score(s, m, reward) for m in masks]
    keep, best = viterbi(s, reward)
    assert best == pytest.approx(max(scores))
    assert _path_score(s, keep, reward) == pytest.approx(best)
    for length in range(n + 1):
        keep_l, best_l = viterbi_length(s, length)
        assert int(keep_l.sum()) == length
        assert best_l == pytest.approx(max(sc for sc, m in zip(scores, masks) if m.sum() == length)
                                       - reward * length)


def _toy_features():
    words, tags, labels = Vocab(), Vocab(), Vocab()
    tree = wrap_root(parse_brackets("(S (NP (DT the) (JJ big) (NN cat)) (VP (VBD sat) (PP (IN on) (NP (DT the) "
                                    "(NN mat)))) (. .))")[0])
    return extract(tree, words, tags, labels, grow=True), (words, tags, labels)


def test_scores_decompose_over_path_features():
    sf, _ = _toy_features()
    bits = 12
    rng = np.random.default_rng(1)
    w = rng.normal(size=1 << bits)
    s = score_matrix(w, sf)
    for _ in range(20):
        keep = rng.random(sf.n) < 0.6
        assert w[path_features(keep, sf, bits)].sum() == pytest.approx(_path_score(s, keep))
    # heads read off the constituents: "cat" heads "the" and "big", "sat" heads "cat" and is the root
    att = sf.att
    assert att[1, 2] == 3 and att[2, 2] == 3 and att[3, 2] == 4 and att[4, 2] == 0 and att[5, 2] == 4


@pytest.mark.parametrize("update", ["mira", "perceptron"])
def test_updates_separate_a_separable_set(update):
    # two sentence shapes with opposite, consistent deletions: adjectives dropped, determiners kept
    trees = ["(S (NP (DT the) (JJ big) (NN cat)) (VP (VBD sat)))",
             "(S (NP (DT a) (JJ small) (NN dog)) (VP (VBD ran) (ADVP (RB fast))))",
             "(S (NP (DT the) (NN man)) (VP (VBD ate) (NP (JJ red) (NNS apples))))"]
    golds = [[1, 0, 1, 1], [1, 0, 1, 1, 1], [1, 1, 1, 0, 1]]
    words, tags, labels = Vocab(), Vocab(), Vocab()
    feats = [extract(wrap_root(parse_brackets(t)[0]), words, tags, labels, grow=True) for t in trees]
    golds = [np.array(g, dtype=bool) for g in golds]
    w, trace = train_weights(feats, golds, bits=14, epochs=8, update=update, seed=0)
    assert trace[0]["mistakes"] > 0 and trace[-1]["mistakes"] == 0
    for sf, g in zip(feats, golds):
        assert np.array_equal(viterbi(score_matrix(w, sf))[0], g)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("mcd")
    trees = demo_trees()
    PCFGModel.train(trees).save(d / "parser.model")
    src, tgt = [], []
    for t in trees:
        words, pos = t.leaves(), [p for _, p in t.pos()]
        keep = [not p.startswith("JJ") and not p.startswith("RB") for p in pos]  # drop adjectives and adverbs
        src.append(" ".join(words))
        tgt.append(" ".join(w for w, k in zip(words, keep) if k))
    (d / "src.txt").write_text("\n".join(src) + "\n", encoding="utf-8")
    (d / "tgt.txt").write_text("\n".join(tgt) + "\n", encoding="utf-8")
    assert main(["-q", "train", "stsg", "--method", "mcdonald", "--epochs", "5", "--pairs", str(d / "src.txt"),
                 str(d / "tgt.txt"), "--parser", str(d / "parser.model"), "--out", str(d / "mcd.model")]) == 0
    return d


def test_train_and_compress_end_to_end(files, capsys):
    m = load_model(files / "mcd.model")
    assert m.formalism == "stsg" and m.kind == "mcdonald" and m.parser is not None
    assert m.info["epochs"] == 5 and len(m.info["trace"]) == 5
    assert m.info["trace"][-1]["hamming"] < m.info["trace"][0]["hamming"]
    src = (files / "src.txt").read_text(encoding="utf-8").split("\n")[0]
    assert main(["-q", "compress", "--model", str(files / "mcd.model"), "--input", src, "--json"]) == 0
    r = json.loads(capsys.readouterr().out)["sentences"][0]
    assert r["input"] == src and len(r["keep"]) == len(src.split())
    assert main(["-q", "compress", "--model", str(files / "mcd.model"), "--input", src, "--rate", "0.5",
                 "--json"]) == 0
    r = json.loads(capsys.readouterr().out)["sentences"][0]
    assert sum(r["keep"]) == int(np.ceil(0.5 * len(src.split())))
    longer = m.compress(src.split(), reward=50.0)
    assert longer.keep.all()


def test_corrupt_model_file_is_a_clear_error(files, tmp_path, capsys):
    meta, arrays = load_bundle(files / "mcd.model")
    arrays = dict(arrays)
    arrays["mcdonald.index"] = arrays["mcdonald.index"][:-1]
    save_bundle(tmp_path / "bad.model", meta, arrays)
    assert main(["-q", "compress", "--model", str(tmp_path / "bad.model"), "--input", "the cat sat"]) != 0
    err = capsys.readouterr().err
    assert "corrupt stsg model" in err and "does not match" in err and "Traceback" not in err


def test_grammar_lists_readable_feature_weights(files, capsys):
    assert main(["-q", "grammar", str(files / "mcd.model"), "--top", "5", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["method"] == "mcdonald" and info["nonzero_weights"] > 0
    drops = {r["feature"]: r["weight"] for r in info["top_rules"] if r["feature"].startswith("drop")}
    assert drops and len(info["top_rules"]) <= 10
    # the training pairs delete exactly the adjectives and adverbs: dropping JJ is rewarded, dropping NN is not
    m = load_model(files / "mcd.model")
    weights = {r["feature"]: r["weight"] for r in m.top_features(100)}
    assert weights["drop a word tagged JJ"] > weights.get("drop a word tagged NN", 0.0)


def test_model_of_another_feature_version_is_refused(files, tmp_path, capsys):
    meta, arrays = load_bundle(files / "mcd.model")
    meta["plugin_meta"]["features"] = "mcdonald-0"
    save_bundle(tmp_path / "old.model", meta, dict(arrays))
    assert main(["-q", "compress", "--model", str(tmp_path / "old.model"), "--input", "the cat sat"]) != 0
    assert "feature set" in capsys.readouterr().err
