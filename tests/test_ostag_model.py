"""Probabilistic OSTAG: EM on a tiny treebank, extraction heuristic, parsing, persistence, CLI."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import attrs
import numpy as np
import pytest
from toy_data import OSTAG_TREEBANK, P

from treegram.charts import inside
from treegram.errors import InputError

from treegram.plugins.ostag.extract import (
    depth_fragments,
    ostag_from_tsg,
    prepare_tree,
    root_foot_pairs,
    tsg_prime,
)
from treegram.plugins.ostag.grammar import OSTAG, aux_direction
from treegram.plugins.ostag.model import (
    OSTAGModel,
    OSTAGSettings,
    build_grammar,
    em,
    train_ostag,
    tree_chart_pruning,
)




def trees():
    return [P(s) for s in OSTAG_TREEBANK]


def test_root_foot_pairs_extraction():
    rule = P("(NP (NP (DT the) (NN)) (PP (IN of) (NP)))")
    pairs = {(a.to_bracket(), left.to_bracket()) for a, left in root_foot_pairs(rule)}
    # the foot at the frontier NP would leave a bare frontier node behind: not a TSG rule, skipped
    assert pairs == {("(NP (NP*) (PP (IN of) (NP)))", "(NP (DT the) (NN))")}
    wrap = P("(NP (@NP-NP (`` ``) (NP (DT the) (NN))) ('' ''))")
    ((a, left),) = root_foot_pairs(wrap)
    assert a.to_bracket() == "(NP (@NP-NP (`` ``) (NP*)) ('' ''))" and aux_direction(a) == "wrap"
    assert left.to_bracket() == "(NP (DT the) (NN))"
    assert root_foot_pairs(P("(NP (NP (NN dogs)))")) == []  # a unary chain adds nothing


def test_extraction_counts_and_tsg_prime():
    el = [(P("(NP (NP (DT the) (NN)) (PP))"), 3), (P("(NP (DT a) (NN))"), 2)]
    init, aux = ostag_from_tsg(el)
    init_d = {t.to_bracket(): c for t, c in init}
    aux_d = {t.to_bracket(): c for t, c in aux}
    assert aux_d == {"(NP (NP*) (PP))": 3}
    assert init_d == {"(NP (NP (DT the) (NN)) (PP))": 3, "(NP (DT the) (NN))": 3, "(NP (DT a) (NN))": 2}
    assert {t.to_bracket() for t, _c in tsg_prime(el)} == set(init_d)


def test_depth_fragments_cover_the_treebank():
    prep = [prepare_tree(t, None) for t in trees()]
    el = depth_fragments(prep, 2, 1)
    g = OSTAG(el, start="TOP", model="ostag1")
    for t in prep:
        red = g.build_cfg_for_tree(t)
        ch = inside(red.cfg, red.cfg.lexical_input(t.leaves()), prune=tree_chart_pruning(t, red))
        assert ch.log_z > -np.inf


def _likelihood(g, prep):
    total = 0.0
    for t in prep:
        red = g.build_cfg_for_tree(t)
        total += inside(red.cfg, red.cfg.lexical_input(t.leaves()), prune=tree_chart_pruning(t, red)).log_z
    return total


@pytest.mark.parametrize("kind", ["ostag1", "ostag2", "ostag3"])
def test_em_increases_likelihood(kind):
    prep = [prepare_tree(t, None) for t in trees()]
    el = depth_fragments(prep, 3, 1)
    g = build_grammar(el, OSTAGSettings(kind=kind))
    assert len(g.auxiliary) > 0
    g.init_params(0.2)
    before = _likelihood(g, prep)
    trace = em(g, prep, 4)
    lls = [before] + [r["log_likelihood"] for r in trace]
    assert all(b >= a - 1e-6 for a, b in zip(lls, lls[1:])), lls
    assert lls[-1] > lls[0]
    # the trace's value is the likelihood under the parameters before that iteration's M-step
    assert trace[0]["log_likelihood"] == pytest.approx(before, abs=1e-3)


def test_em_counts_match_brute_force_posterior():
    """One E-step on a one-tree treebank equals the posterior computed from the CFG derivations directly."""
    from tests.test_ostag_reduction import all_cfg_derivations

    g = OSTAG([(P("(S (T) (U (Y y)))"), 1), (P("(T (X x))"), 1), (P("(T (T (X x)) (Z z))"), 1),
               (P("(U (W w))"), 1)],
              [(P("(T (A a) (T*))"), 1), (P("(T (T*) (Z z))"), 1)], start="S", model="ostag1")
    g.init_params(0.3)
    tree = P("(S (T (A a) (T (T (X x)) (Z z))) (U (Y y)))")
    red = g.build_cfg_for_tree(tree)
    words = tree.leaves()
    derivs = all_cfg_derivations(red.cfg, words)
    from treegram.plugins.ostag.derivation import derived_tree

    kept = [(s, lp) for s, lp in derivs if derived_tree(red, s, words) == tree]
    z = np.logaddexp.reduce([lp for _s, lp in kept])
    expect_sub = np.zeros(len(g.initial))
    expect_aux = np.zeros(len(g.auxiliary))
    for s, lp in kept:
        w = math.exp(lp - z)
        for kind, rule in s[:, :2].tolist():
            k = ("lexical", "unary", "binary")[kind]
            if red.init[k][rule] >= 0:
                expect_sub[red.init[k][rule]] += w
            if red.aux[k][rule] >= 0:
                expect_aux[red.aux[k][rule]] += w
    # both derivations of this tree: adjoin (T (T*) z) at the root of (T x), or substitute (T (T x) z)
    assert len(kept) == 2
    from treegram.charts import outside

    ch = inside(red.cfg, red.cfg.lexical_input(words), prune=tree_chart_pruning(tree, red))
    assert ch.log_z == pytest.approx(z)  # the pruned chart holds exactly the derivations of `tree`
    out = outside(ch)
    sub, aux, _adj, _noadj = red.param_counts(out.bin_counts, out.un_counts, out.lex_counts)
    assert sub == pytest.approx(expect_sub)
    assert aux == pytest.approx(expect_aux)


def test_train_parse_save_load(tmp_path):
    ts = trees()
    model = train_ostag(ts * 3, OSTAGSettings(kind="ostag3", em_iterations=2, max_depth=2, min_count=1,
                                              rare_threshold=1, prune_threshold=0))
    assert len(model.trace) == 2
    tokens = "the dog saw a cat".split()
    tree = model.parse(tokens)
    assert tree.leaves() == tokens and tree.label == "S"
    path = tmp_path / "m.ostag"
    model.save(path)
    from treegram.formalism import load_model

    again = load_model(path)
    assert isinstance(again, OSTAGModel)
    assert again.parse(tokens) == tree
    assert np.allclose(again.grammar.adj_logp, model.grammar.adj_logp)
    d = again.describe(top=3)
    assert d["auxiliary_trees"] == len(model.grammar.auxiliary) and len(d["top_rules"]) == 3
    # an unknown word still parses (open-class fallback)
    assert model.parse("the zebra saw a cat".split()).leaves() == "the zebra saw a cat".split()


def viterbi_parses(model, sentences, **setting):
    """(log p, tree, unary rules of the reduction) of each sentence's Viterbi parse with `setting` applied to the
    model's settings, (None, None, 0) where it fails: the speed-ups (trim, coarse_pass) must change none of them."""
    from treegram.errors import ParseFailure

    model.settings = attrs.evolve(model.settings, **setting)
    out = []
    for toks in sentences:
        try:
            tree, red, res = model.parse_derivation(toks)
            out.append((res.logp, tree, red.cfg.num_unary))
        except ParseFailure:  # must then fail both ways
            out.append((None, None, 0))
    assert any(lp is not None for lp, *_x in out)
    return out


def test_trimming_keeps_parses_identical_toy():
    """Trimming the per-sentence reduction (restrict.keep_symbols) changes no Viterbi score or tree."""
    model = train_ostag(trees(), OSTAGSettings(kind="ostag3", max_depth=3, min_count=1, em_iterations=2))
    sents = ["the dog saw a cat".split(), "a big old cat ran to the dog".split(), "the zebra saw a dog".split(),
             "`` the cat '' saw the big dog".split()]
    for threshold in (1e-4, 0.0):  # with and without the coarse-to-fine mask
        model.settings = attrs.evolve(model.settings, prune_threshold=threshold)
        full, trimmed = viterbi_parses(model, sents, trim=False), viterbi_parses(model, sents, trim=True)
        for (lp0, t0, _u0), (lp1, t1, _u1) in zip(full, trimmed):
            assert (lp1 is None) == (lp0 is None) and lp1 == pytest.approx(lp0, abs=1e-9) and t1 == t0


def test_trimming_keeps_parses_identical_ptb(shared_data):
    from treegram.trees import read_treebank

    train = list(read_treebank([shared_data / "ptb-sample" / "train"]))[:250]
    dev = [t.leaves() for t in read_treebank([shared_data / "ptb-sample" / "dev"]) if len(t.leaves()) <= 18][:6]
    model = train_ostag(train, OSTAGSettings(kind="ostag1", em_iterations=1))
    full, trimmed = viterbi_parses(model, dev, trim=False), viterbi_parses(model, dev, trim=True)
    for (lp0, t0, u0), (lp1, t1, u1) in zip(full, trimmed):
        assert (lp1 is None) == (lp0 is None) and lp1 == pytest.approx(lp0, abs=1e-9) and t1 == t0
    assert sum(u for *_x, u in trimmed) < sum(u for *_x, u in full)  # it does drop rules


def test_settings_errors():
    with pytest.raises(InputError, match="unknown OSTAG model"):
        OSTAGSettings(kind="ostag7")
    with pytest.raises(InputError):
        OSTAGSettings(adj_init=1.5)


def test_cli_train_parse_grammar(tmp_path):
    tb = tmp_path / "tb.mrg"
    tb.write_text("\n".join(OSTAG_TREEBANK * 2) + "\n")
    model = tmp_path / "o.model"
    exe = [str(Path(sys.executable).parent / "treegram")]
    r = subprocess.run(exe + ["train", "ostag", "--treebank", str(tb), "--out", str(model), "--em-iterations", "2",
                              "--min-count", "1", "--rare-threshold", "1", "--json"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    r = subprocess.run(exe + ["parse", "--model", str(model), "--input", "-"], input="the cat saw the dog\n",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert P(r.stdout.strip()).leaves() == "the cat saw the dog".split()
    r = subprocess.run(exe + ["ostag-grammar", str(model), "--aux", "--json"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["auxiliary_trees"] > 0 and all("*" in row["auxiliary tree"] for row in info["trees"])
    r = subprocess.run(exe + ["ostag-grammar", str(model), "--wrapping", "--json"], capture_output=True, text=True)
    assert all(row["type"] == "wrap" for row in json.loads(r.stdout)["trees"])
    r = subprocess.run(exe + ["train", "ostag", "--treebank", str(tb), "--out", str(model), "--bayesian",
                              "--iterations", "-1"], capture_output=True, text=True)
    assert r.returncode != 0 and "--iterations" in r.stderr  # a bad option value: one-line error, no traceback
    assert "Traceback" not in r.stderr
