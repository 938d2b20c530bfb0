"""Large-margin STSG (Cohn & Lapata 2007): the losses, loss-augmented decoding and gold derivations against brute
force over every derivation of small trees, the QP solver against scipy, the cutting-plane objectives, checkpoint /
resume, the command line and bad input."""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from conftest import write_demo_pairs

from treegram.corpora.demo import demo_trees
from treegram.cli.app import main
from treegram.errors import InputError, ModelFileError
from treegram.formalism import load_model
from treegram.io import load_bundle, save_bundle

from treegram.plugins.stsg.features import FeatureIndex, rule_features
from treegram.plugins.stsg.induce import induce_grammar
from treegram.plugins.stsg.largemargin import (CuttingPlane, SVMGrammar, gold_derivation, loss_table,
                                               most_violated, prepare_examples, rule_scores_of, train_svm)
from treegram.plugins.stsg.model import PairCorpus
from treegram.plugins.stsg.qp import primal_objective, solve_dual
from treegram.compression.treeprep import derive_target, wrap_root


def _corpus(n=16, seed=0, rate=0.7):
    rng = np.random.default_rng(seed)
    src = [wrap_root(t) for t in demo_trees()[:n]]
    keeps = [rng.random(len(t.leaves())) < rate for t in src]
    return PairCorpus(src, [derive_target(s, k) for s, k in zip(src, keeps)], keeps)


@pytest.fixture(scope="module")
def prepared():
    corpus = _corpus()
    grammar = SVMGrammar(induce_grammar(corpus), FeatureIndex())
    examples, skipped = prepare_examples(grammar, corpus.sources, corpus.keeps)
    grammar.index.growing = False
    return corpus, grammar, examples, skipped


# -- losses ----------------------------------------------------------------------------------------------------------

def test_loss_tables_follow_eq_6():
    r, n = 2, 5
    prec, bp1, bp2, ham = (loss_table(x, r, n) for x in ("prec", "bp1", "bp2", "hamming"))
    assert prec.shape == (3, 4)
    assert prec[2, 0] == bp1[2, 0] == bp2[2, 0] == ham[2, 0] == 0.0  # the gold state
    assert prec[1, 1] == pytest.approx(0.5) and bp2[1, 1] == pytest.approx(0.5)  # c = r: no penalty
    assert prec[1, 0] == 0.0 and bp1[1, 0] == pytest.approx(1 - math.exp(1 - 2))  # too short
    assert bp1[2, 2] == pytest.approx(0.5)  # too long: BP1 = 1, BP2 = exp(1 - c/r)
    assert bp2[2, 2] == pytest.approx(1 - 0.5 * math.exp(1 - 2))
    assert prec[0, 0] == bp1[0, 0] == 1.0  # empty output
    assert ham[0, 3] == pytest.approx(5 / 5) and ham[1, 1] == pytest.approx(2 / 5)
    with pytest.raises(InputError, match="unknown loss"):
        loss_table("bleu", 2, 5)


# -- brute force over every derivation --------------------------------------------------------------------------------

def _derivations(chart, node, cat, limit=20000):
    out = []
    for e in chart.applications_at(node):
        if int(chart.cat[e]) != cat:
            continue
        subs = [_derivations(chart, u, c, limit) for u, c in chart.tails(e)]
        for combo in itertools.product(*subs):
            out.append([e] + [x for d in combo for x in d])
            assert len(out) < limit, "tree too large for brute force"
    return out


def test_loss_augmented_decoding_matches_brute_force(prepared):
    _corpus_, grammar, examples, _ = prepared
    R = grammar.feature_matrix()
    rng = np.random.default_rng(3)
    checked = 0
    for ex in examples:
        if ex.n > 7:
            continue
        w = rng.normal(size=len(grammar.index)) * 0.3
        rs = rule_scores_of(R, w)
        extra = rs[ex.app_row]
        f_gold = extra[ex.gold_apps].sum()
        every = _derivations(ex.chart, 0, ex.root)
        for loss in ("prec", "bp1", "bp2", "hamming"):
            L = loss_table(loss, ex.r, ex.n)
            for rescaling in ("slack", "margin"):
                best = -np.inf
                for d in every:
                    tp, fp = ex.inc[d].sum(axis=0)
                    f = extra[d].sum()
                    h = L[tp, fp] * (1 + f - f_gold) if rescaling == "slack" else L[tp, fp] + f - f_gold
                    best = max(best, h)
                got = most_violated(ex, rs, loss, rescaling)
                assert got["H"] == pytest.approx(best, abs=1e-9)
                d = got["apps"]  # the returned derivation really has that value
                tp, fp = ex.inc[d].sum(axis=0)
                f = extra[d].sum()
                h = L[tp, fp] * (1 + f - f_gold) if rescaling == "slack" else L[tp, fp] + f - f_gold
                assert h == pytest.approx(best, abs=1e-9) and (tp, fp) == got["state"]
        checked += 1
    assert checked >= 3


def test_gold_derivation_is_the_one_with_the_most_rules(prepared):
    corpus, grammar, examples, skipped = prepared
    assert not skipped  # every training pair is derivable by its own minimal rules
    checked = 0
    for src, keep in zip(corpus.sources, corpus.keeps):
        if len(keep) > 7:
            continue
        sc = grammar.chart(src)
        inc = sc.word_increments(keep)
        r = int(np.sum(keep))
        root = grammar._cat_ids[src.label]
        gold = gold_derivation(sc, inc, r, root)
        _tree, out = sc.output(gold)
        assert out.tolist() == list(map(bool, keep))
        yielding = [d for d in _derivations(sc.chart, 0, root) if sc.output(d)[1].tolist() == list(map(bool, keep))]
        assert len(gold) == max(len(d) for d in yielding)
        checked += 1
    assert checked >= 3


def test_rule_features_cover_section_3_3():
    corpus = _corpus(4)
    induced = induce_grammar(corpus)
    deleting = [r for r in induced.rules if "[]" in r.text and r.fragment.target is not None]
    f = rule_features(deleting[0].fragment, induced.log_relative_frequencies(deleting[0].fragment))
    assert {"lp(t|s)", "lp(s|t)", "lp(s,t)", "n_rules", "n_dropped"} <= set(f)
    assert any(k.startswith("src=") for k in f) and any(k.startswith("roots=") for k in f)
    assert any(k.startswith("tdel=") for k in f) and any(k.startswith("ydel=") for k in f)
    assert f["lp(t|s)"] <= 0 and "unseen" not in f
    unseen = rule_features(deleting[0].fragment, None)
    assert unseen["unseen"] == 1.0 and "lp(t|s)" not in unseen


# -- the QP ------------------------------------------------------------------------------------------------------------

def test_dual_coordinate_ascent_matches_scipy_on_random_problems():
    scipy_optimize = pytest.importorskip("scipy.optimize")
    rng = np.random.default_rng(1)
    for trial in range(6):
        n_blocks, K, dim = 3, 8, 5
        A = rng.normal(size=(K, dim)) * (rng.random((K, dim)) < 0.7)
        b = rng.random(K)
        block = rng.integers(0, n_blocks, K)
        cap = (0.05, 0.5, 5.0)[trial % 3]
        indptr = np.r_[0, np.cumsum((A != 0).sum(axis=1))]
        cols = np.concatenate([np.flatnonzero(row) for row in A])
        vals = A[A != 0]
        alpha, w, info = solve_dual(indptr, cols, vals, b, block, n_blocks, cap, dim, tol=1e-10, max_epochs=20000)
        assert np.all(alpha >= 0) and np.all(np.bincount(block, alpha, n_blocks) <= cap + 1e-12)

        def objective(x):
            return 0.5 * x[:dim] @ x[:dim] + cap * x[dim:].sum()

        cons = [{"type": "ineq", "fun": (lambda x, k=k: A[k] @ x[:dim] - b[k] + x[dim + block[k]])}
                for k in range(K)]
        ref = scipy_optimize.minimize(objective, np.zeros(dim + n_blocks), method="SLSQP", constraints=cons,
                                      bounds=[(None, None)] * dim + [(0, None)] * n_blocks,
                                      options={"ftol": 1e-13, "maxiter": 2000})
        assert ref.success
        primal = primal_objective(indptr, cols, vals, b, block, n_blocks, cap, w)
        assert info["dual"] == pytest.approx(ref.fun, abs=1e-7)  # strong duality at the optimum
        assert primal == pytest.approx(ref.fun, abs=1e-7)
        assert np.allclose(w, ref.x[:dim], atol=1e-4)


# -- cutting planes ------------------------------------------------------------------------------------------------------

def test_cutting_plane_dual_is_monotone_and_below_the_primal(prepared):
    _corpus_, grammar, examples, _ = prepared
    R = grammar.feature_matrix()
    for rescaling in ("slack", "margin"):
        cp = CuttingPlane(examples, R, len(grammar.index), C=1.0, loss="bp2", rescaling=rescaling)
        trace = cp.run(15)
        duals = [r["dual"] for r in trace]
        assert all(b >= a - 1e-9 for a, b in zip(duals, duals[1:]))  # the working set only grows
        assert all(r["primal"] >= r["dual"] - 1e-9 for r in trace)  # weak duality
        assert trace[-1]["train_loss"] < trace[0]["train_loss"]
        assert cp.working_set_primal() <= trace[-1]["primal"] + 1e-9


def test_checkpoint_resume_reproduces_the_uninterrupted_run(prepared, tmp_path):
    _corpus_, grammar, examples, _ = prepared
    R = grammar.feature_matrix()
    full = CuttingPlane(examples, R, len(grammar.index), C=1.0, loss="prec")
    full.run(4)
    ck = tmp_path / "svm.ckpt"
    part = CuttingPlane(examples, R, len(grammar.index), C=1.0, loss="prec", checkpoint=ck)
    part.run(2)
    resumed = CuttingPlane(examples, R, len(grammar.index), C=1.0, loss="prec", checkpoint=ck)
    resumed.load_checkpoint(ck)
    assert len(resumed.trace) == 2
    resumed.run(4)
    assert np.array_equal(resumed.w, full.w) and resumed.b == full.b
    other = CuttingPlane(examples, R, len(grammar.index), C=2.0, loss="prec")
    with pytest.raises(InputError, match="different run"):
        other.load_checkpoint(ck)


# -- end to end ----------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("svm")
    write_demo_pairs(d, 24)
    assert main(["-q", "train", "stsg", "--method", "svm", "--loss", "bp2", "--C", "1", "--pairs",
                 str(d / "src.txt"), str(d / "tgt.txt"), "--parser", str(d / "parser.model"), "--out",
                 str(d / "svm.model"), "--checkpoint", str(d / "svm.ckpt"), "--json"]) == 0
    return d


def test_train_and_compress_from_the_cli(files, capsys):
    capsys.readouterr()
    m = load_model(files / "svm.model")
    assert m.info["method"] == "svm" and m.info["loss"] == "bp2" and m.grammar.num_rules() > 0
    assert (files / "svm.ckpt").exists()
    inp = files / "in.txt"
    inp.write_text("The cat slept on the mat .\nqqq zzz\n", encoding="utf-8")
    assert main(["-q", "compress", "--model", str(files / "svm.model"), "--input", str(inp), "--json"]) == 0
    got = json.loads(capsys.readouterr().out)
    for s in got["sentences"]:
        words = s["input"].split()
        assert s["compression"].split() == [w for w, k in zip(words, s["keep"]) if k]
    # reward trades length: a large reward keeps everything, a large penalty keeps less
    long = m.compress("The cat slept on the mat .".split(), reward=50.0)
    short = m.compress("The cat slept on the mat .".split(), reward=-50.0)
    assert long.keep.all() and short.keep.sum() < len(short.keep)
    assert main(["-q", "grammar", str(files / "svm.model"), "--top", "3", "--json"]) == 0
    desc = json.loads(capsys.readouterr().out)
    assert len(desc["top_features"]) == 3 and len(desc["top_rules"]) == 3
    weights = [abs(f["weight"]) for f in desc["top_features"]]
    assert weights == sorted(weights, reverse=True)


def test_bad_input_is_a_clear_error(files, capsys):
    corpus = _corpus(4)
    with pytest.raises(InputError, match="unknown loss"):
        train_svm(corpus, loss="f1")
    assert main(["train", "stsg", "--method", "svm", "--loss", "f1", "--pairs", "a", "b", "--parser", "p"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and "Traceback" not in err
    meta, arrays = load_bundle(files / "svm.model")
    arrays["svm.weights"] = arrays["svm.weights"][:-1]
    save_bundle(files / "short.model", meta, arrays)
    with pytest.raises(ModelFileError, match="corrupt"):
        load_model(files / "short.model")
    del meta["plugin_meta"]["svm"]["features"]
    save_bundle(files / "nofeat.model", meta, arrays)
    with pytest.raises(ModelFileError, match="corrupt"):
        load_model(files / "nofeat.model")
    assert main(["-q", "compress", "--model", str(files / "short.model"), "--input", "The cat ."]) != 0
    err = capsys.readouterr().err
    assert "corrupt" in err and "Traceback" not in err


def test_saved_rule_scores_equal_the_feature_scores(files):
    m = load_model(files / "svm.model")
    g = m.grammar
    fresh = SVMGrammar(g.induced, g.index, g.weights)
    assert [r.logp for r in fresh.rules] == pytest.approx([r.logp for r in g.rules], abs=1e-12)


def test_cli_resume_continues_the_checkpointed_run(files, capsys):
    common = ["train", "stsg", "--method", "svm", "--loss", "prec", "--C", "1", "--pairs", str(files / "src.txt"),
              str(files / "tgt.txt"), "--parser", str(files / "parser.model"), "--json"]
    ck = files / "resume.ckpt"
    assert main(["-q", *common, "--iterations", "2", "--checkpoint", str(ck), "--out", str(files / "a.model")]) == 0
    assert main(["-q", *common, "--iterations", "4", "--checkpoint", str(ck), "--resume", "--out",
                 str(files / "b.model")]) == 0
    assert main(["-q", *common, "--iterations", "4", "--out", str(files / "c.model")]) == 0
    capsys.readouterr()
    b, c = load_model(files / "b.model"), load_model(files / "c.model")
    assert b.info["iterations_run"] == c.info["iterations_run"] > 2
    assert np.array_equal(b.grammar.weights, c.grammar.weights)


# -- version 2: features, separable data, length calibration, version-1 files ------------------------------------------

def _pp_adjective_corpus(trees):
    """Compressions that drop every PP, adjective and adverb: a deletion pattern the grammar can express exactly."""
    src = [wrap_root(t) for t in trees]
    keeps = []
    for t in src:
        drop = set()
        for node in t.subtrees():
            if node.label in ("PP", "ADVP") or (node.is_preterminal and node.label in ("JJ", "RB")):
                drop.update(w for w in _word_positions(t, node))
        keeps.append(np.array([i not in drop for i in range(len(t.leaves()))]))
    return PairCorpus(src, [derive_target(s, k) for s, k in zip(src, keeps)], keeps)


def _word_positions(root, node):
    """Word positions of `node` inside `root` (by identity, pre-order)."""
    pos, out = 0, []

    def walk(n, inside):
        nonlocal pos
        for c in n.children:
            if isinstance(c, str):
                if inside:
                    out.append(pos)
                pos += 1
            else:
                walk(c, inside or c is node)

    walk(root, root is node)
    return out


def test_unseen_rules_get_frequencies_below_the_seen_ones():
    corpus = _corpus(12)
    induced = induce_grammar(corpus)
    seen = [induced.smoothed_log_frequencies(r.fragment) for r in induced.rules]
    from treegram.plugins.stsg.grammar import copy_delete_rules

    unseen = [f for t in demo_trees()[12:30] for n in wrap_root(t).subtrees() if n.children
              for f in copy_delete_rules(n) if not induced.is_seen(str(f))]
    assert unseen
    worst_seen = min(lp[2] for lp in seen)
    for f in unseen[:50]:
        lts, lst, ljoint = induced.smoothed_log_frequencies(f)
        # version 1 gave them no value, read as 0 = probability 1, above every seen rule
        assert ljoint < worst_seen and lts <= 0 and lst <= 0
        assert induced.log_prob_given_roots(f) < 0
        v2 = SVMGrammar(induced, FeatureIndex()).features(f)
        assert v2["unseen"] == 1.0 and v2["lp(s,t)"] == ljoint and "lp(e|c)" in v2
        src = str(f).partition(" / ")[0]
        if induced.source_count.get(src):  # a source side seen with other targets: below each of them
            assert lts < min(math.log(r.count / induced.source_count[src]) for r in induced.rules
                             if r.source_text == src)
        v1 = SVMGrammar(induced, FeatureIndex(), version=1).features(f)
        assert "lp(s,t)" not in v1 and "lp(e|c)" not in v1


def test_svm_reaches_the_gold_and_keeps_constituents_whole_on_a_separable_set():
    trees = demo_trees()
    train, test = _pp_adjective_corpus(trees[:36]), _pp_adjective_corpus(trees[36:])
    grammar, info = train_svm(train, loss="hamming", C=1.0, iterations=30)
    assert info["converged"] and info["grammar_version"] == 2
    exact = sum(np.array_equal(grammar.decode(s)[1], k) for s, k in zip(train.sources, train.keeps))
    assert exact >= 0.9 * len(train.sources)
    f1 = []
    for src, keep in zip(test.sources, test.keeps):
        tree, out, _ = grammar.decode(src)
        tp = int((out & keep).sum())
        f1.append(2 * tp / (out.sum() + keep.sum()))
        for node in src.subtrees():  # a PP is kept whole or dropped whole: no stranded preposition or object
            if node.label == "PP":
                kept = [out[i] for i in _word_positions(src, node)]
                assert all(kept) or not any(kept)
    assert np.mean(f1) > 0.9


def test_length_calibration_brings_held_out_pairs_to_the_gold_rate():
    from treegram.plugins.stsg.largemargin import calibrate_length_bias

    corpus = _corpus(40, seed=2, rate=0.6)
    cal = calibrate_length_bias(corpus, holdout=4, loss="bp2", C=0.01, iterations=10)
    assert cal["pairs"] == 10
    assert abs(cal["rate_after"] - cal["gold_rate"]) <= abs(cal["rate_before"] - cal["gold_rate"])
    assert abs(cal["rate_after"] - cal["gold_rate"]) < 8.0
    # the bias moves the rate the right way: below zero when the raw model keeps more than the gold
    assert (cal["bias"] < 0) == (cal["rate_before"] > cal["gold_rate"]) or cal["bias"] == 0


def test_version_1_model_files_still_load_and_decode_as_before(files, tmp_path):
    """A model file written before grammar versions (no "version" in its metadata) is the issue-13 model: version-1
    features, the same decisions as when it was trained."""
    from treegram.plugins.stsg.train import train_stsg
    from treegram.plugins.stsg.largemargin import SVMSTSGModel

    corpus = _corpus(16)
    grammar, info = train_svm(corpus, loss="bp2", C=0.01, iterations=5, version=1)
    path = tmp_path / "v1.model"
    SVMSTSGModel(grammar, load_model(files / "svm.model").parser, info).save(path)
    meta, arrays = load_bundle(path)
    del meta["plugin_meta"]["svm"]["version"]  # as issue-13 files were written
    save_bundle(path, meta, arrays)
    old = load_model(path)
    assert old.grammar.version == 1
    for t in [wrap_root(t) for t in demo_trees()[16:30]]:
        a, b = grammar.decode(t), old.grammar.decode(t)
        assert np.array_equal(a[1], b[1]) and a[2] == pytest.approx(b[2])
    assert train_stsg  # the CLI path is covered by the `files` fixture (version 2, calibrated)


def test_cli_trains_the_calibrated_version_2_model_by_default(files, capsys):
    import attrs

    from treegram.plugins.stsg.formalism import STSGOptions

    opts = attrs.fields_dict(STSGOptions)
    assert (opts["loss"].default, opts["C"].default, opts["calibrate"].default) == ("hamming", 1.0, True)
    m = load_model(files / "svm.model")
    assert m.grammar.version == 2 and m.info["calibration"]["pairs"] > 0
    assert m.policy.reward == m.info["calibration"]["bias"]  # the calibrated default length
    common = ["train", "stsg", "--method", "svm", "--C", "1", "--pairs", str(files / "src.txt"),
              str(files / "tgt.txt"), "--parser", str(files / "parser.model"), "--json"]
    assert main(["-q", *common, "--no-calibrate", "--out", str(files / "raw.model")]) == 0
    capsys.readouterr()
    raw = load_model(files / "raw.model")
    assert raw.info["calibration"] is None and raw.policy.reward == 0.0
