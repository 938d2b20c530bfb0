"""Bayesian OSTAG (plugins/ostag/bayes_*): the blocked sampler's proposal against brute-force enumeration of every
OSTAG derivation of small trees, decoded elementary trees against the OSTAG formalism, seeded determinism,
checkpoint/resume, extraction + parsing, and the CLI."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import numpy as np
import pytest
from conftest import substitution_vectors

from treegram.bayes import BlockedMH, CheckpointConfig
from treegram.elementary.tables import key_to_tree
from treegram.formalism import RunOptions
from treegram.trees import parse_brackets

from treegram.plugins.ostag.bayes_model import (DP_AUX, BayesOSTAGSettings, Invalid, adjunction_log, decode,
                                                key_direction)
from treegram.plugins.ostag.bayes_sampler import BlockedOSTAG, prepare_data
from treegram.plugins.ostag.formalism import BayesOSTAGOptions, train_bayesian

QUOTE = "(S (NP (`` ``) (NP (DT the) (NN dog)) ('' '')) (VP (VBD ran)) (. .))"
STACK = "(NP (NP (NP (DT a) (NN a)) (PP (IN of) (NN b))) (PP (IN in) (NN c)))"
SMALL = "(S (NP (`` ``) (NP (DT a) (NN dog)) ('' '')) (VBD ran))"
CORPUS = [QUOTE, STACK,
          "(S (NP (`` ``) (NP (DT a) (NN cat)) ('' '')) (VP (VBD sat)) (. .))",
          "(S (NP (NP (DT the) (NN cat)) (PP (IN of) (NP (NN b)))) (VP (VBD sat)) (. .))",
          "(S (NP (DT the) (NN dog)) (VP (VBD ran) (ADVP (RB fast))) (. .))"]


def make_state(srcs, seed=0, **kw):
    trees = [parse_brackets(s)[0] for s in srcs]
    settings = BayesOSTAGSettings(rare_threshold=1, **kw)
    _pcfg, data = prepare_data(trees, settings)
    return BlockedOSTAG(data, settings, seed)


def all_encodings(state, item):
    """Every (sub, afoot) over the tree's rows that `decode` accepts: sub over all non-root nonterminal rows, afoot
    over every same-label descendant (a superset of the legal feet)."""
    T = state.T
    lo, hi = state.tree_rows(item)
    nts = [r for r in range(lo, hi) if not state.data.is_word[r]]
    sites = [r for r in nts if r != lo]
    foot_opts = []
    for r in nts:
        opts = [-1] + [z for z in range(r + 1, int(T.subtree_end[r])) if T.label[z] == T.label[r]
                       and not state.data.is_word[z]]
        foot_opts.append(opts)
    out = []
    for sub in substitution_vectors(lo, hi, sites):
        for feet in itertools.product(*foot_opts):
            afoot = np.full(hi - lo, -1, np.int32)
            for r, z in zip(nts, feet):
                afoot[r - lo] = z
            try:
                decode(T, lo, hi, sub, afoot)
            except Invalid:
                continue
            out.append((sub, afoot))
    return out


def enc_key(enc):
    return (enc[0].tobytes(), enc[1].tobytes())


def check_proposal(state, item):
    """Hyperpaths of the proposal grouped by derivation == brute-force derivations with q from `decode`."""
    tp, hg = state.proposal(item)
    by_enc = defaultdict(list)
    for items, lw in hg.hyperpaths():
        by_enc[enc_key(tp.encoding(hg, items))].append(lw)
    brute = all_encodings(state, item)
    assert len(brute) == len(by_enc)
    total = -math.inf
    for enc in brute:
        occs, adj = state.decode(item, enc)
        lq = state._log_pred(occs, False) + adjunction_log(adj, state.hyper)
        paths = by_enc[enc_key(enc)]
        assert paths, "a derivation the proposal cannot produce"
        assert np.logaddexp.reduce(paths) == pytest.approx(lq, abs=1e-9)
        total = np.logaddexp(total, lq)
    assert hg.log_z == pytest.approx(total, abs=1e-9)
    return brute


def test_proposal_matches_enumeration_empty_counts():
    state = make_state([QUOTE], mu=0.3)
    state.remove(0)
    brute = check_proposal(state, 0)
    # wrapping adjunction of the quotes is among them, and every derivation is counted once
    wraps = 0
    for enc in brute:
        occs, _ = state.decode(0, enc)
        wraps += any(o.dp == DP_AUX and key_direction(o.key) == "wrap" for o in occs)
    assert wraps > 0 and len(brute) > 100


def test_proposal_matches_enumeration_with_cached_types():
    state = make_state([SMALL, STACK, SMALL, SMALL, STACK], mu=0.3, seed=4)
    BlockedMH(state, seed=4).run(2)
    # cached auxiliary and initial types: the copies (items 2-4) take derivations with adjunctions
    for item in (2, 3, 4):
        encs = [e for e in all_encodings(state, item) if (e[1] >= 0).any()]
        state.remove(item)
        state.add(item, encs[(7 * item) % len(encs)])
    assert state.num_types()[1] > 0
    for item in (0, 1):
        state.remove(item)
        check_proposal(state, item)
        state.add(item, state.current(item))


def test_stacked_adjunction_enumerated():
    state = make_state([STACK], mu=0.3)
    state.remove(0)
    brute = check_proposal(state, 0)
    assert any(max(k for _l, k, _n in state.decode(0, e)[1]) >= 2 for e in brute)


def test_decoded_trees_are_ostag_trees_and_rederive_the_tree():
    from treegram.charts import inside, tree_pruning
    from treegram.plugins.ostag.grammar import OSTAG, aux_direction, foot_path, subtree_at

    state = make_state([QUOTE], mu=0.3)
    labels, words = state.data.labels, state.data.words
    from treegram.plugins.ostag.extract import prepare_tree

    prepared = prepare_tree(parse_brackets(QUOTE)[0], None)
    checked = 0
    for enc in all_encodings(state, 0)[::13]:
        occs, _ = state.decode(0, enc)
        init = [(key_to_tree(o.key, labels, words), 1.0) for o in occs if o.dp != DP_AUX]
        aux = [(key_to_tree(o.key, labels, words), 1.0) for o in occs if o.dp == DP_AUX]
        for t, _c in aux:
            fp = foot_path(t)
            assert fp is not None and subtree_at(t, fp).label == t.label + "*"
            assert aux_direction(t) == key_direction([o for o in occs if o.dp == DP_AUX][0].key) or len(aux) > 1
        g = OSTAG(init, aux, start="TOP")
        # (build_cfg_for_tree's node filter misses derivations with adjunction inside an elementary tree: use the
        # exact word filter; the chart is still restricted to the tree)
        red = g.build_cfg(prepared.leaves())
        chart = inside(red.cfg, red.cfg.lexical_input(prepared.leaves()), prune=tree_pruning(prepared,
                                                                                          red.cfg.categories))
        assert chart.log_z > -np.inf
        checked += bool(aux)
    assert checked > 5


def run_states(seed, sweeps, ck=None, resume=False):
    state = make_state(CORPUS, seed=seed)
    if resume:
        drv = BlockedMH.resume(ck, state, checkpoint=CheckpointConfig(ck))
    else:
        drv = BlockedMH(state, seed=seed, checkpoint=CheckpointConfig(ck) if ck else None)
    trace = drv.run(sweeps)
    return state, trace


def test_seed_deterministic_and_exact_resume(tmp_path):
    a, ta = run_states(7, 4)
    b, tb = run_states(7, 4)
    assert np.array_equal(a.sub, b.sub) and np.array_equal(a.afoot, b.afoot)
    assert [r["log_likelihood"] for r in ta] == [r["log_likelihood"] for r in tb]
    ck = tmp_path / "ck.npz"
    run_states(7, 2, ck)
    c, tc = run_states(7, 4, ck, resume=True)
    assert np.array_equal(a.sub, c.sub) and np.array_equal(a.afoot, c.afoot)
    assert tc[-1]["log_likelihood"] == ta[-1]["log_likelihood"]
    assert np.array_equal(a.hyper.alpha, c.hyper.alpha)


def test_log_p_sequential_handles_repeats():
    """Two identical fragments in one tree: the sequential predictive counts the first for the second."""
    state = make_state(["(S (NP (DT a)) (VP (NP (DT a))))"])
    state.remove(0)
    lo, hi = state.tree_rows(0)
    T = state.T
    sub = np.zeros(hi - lo, np.int8)
    sub[0] = 1
    nps = [r for r in range(lo, hi) if state.data.labels[T.label[r]] == "NP-U"]
    sub[np.array(nps) - lo] = 1
    enc = (sub, np.full(hi - lo, -1, np.int32))
    occs, adj = state.decode(0, enc)
    h = state.hyper
    np_occ = [o for o in occs if state.data.labels[o.label] == "NP-U"]
    assert len(np_occ) == 2 and np_occ[0].key == np_occ[1].key
    a = h.alpha[0, np_occ[0].label]
    p0 = math.exp(np_occ[0].log_p0(h))
    indep = state._log_pred(occs, False)
    seq = state.log_p(0, enc) - adjunction_log(adj, h)
    # the NP factor changes from (a p0 / a)^2 to (a p0 / a) * (1 + a p0) / (1 + a)
    assert seq - indep == pytest.approx(math.log((1 + a * p0) / (1 + a)) - math.log(p0), abs=1e-9)


def test_train_extract_parse_and_save(tmp_path):
    trees = [parse_brackets(s)[0] for s in CORPUS]
    model, trace = train_bayesian(trees, BayesOSTAGOptions(rare_threshold=1, mu=0.2, tsg_init=0, average=1),
                                  RunOptions(iterations=3, seed=2))
    assert len(trace) == 3
    g = model.grammar
    assert len(g.initial) >= model.info["sampled_initial_trees"]
    assert len(g.auxiliary) == model.info["sampled_auxiliary_trees"]
    for t in trees:
        assert model.parse(t.leaves()).leaves() == t.leaves()
    path = tmp_path / "b.model"
    model.save(path)
    from treegram.formalism import load_model

    back = load_model(path)
    s = trees[0].leaves()
    assert back.parse(s) == model.parse(s)


def test_cli_train_bayesian(tmp_path):
    import subprocess
    import sys

    tb = tmp_path / "tb.mrg"
    tb.write_text("\n".join(CORPUS) + "\n")
    out = tmp_path / "m.model"
    ck = tmp_path / "ck.npz"
    cmd = [sys.executable, "-m", "treegram.cli.app", "train", "ostag", "--bayesian", "--iterations", "2",
           "--seed", "3", "--treebank", str(tb), "--out", str(out), "--checkpoint", str(ck), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert out.exists() and ck.exists()


def test_ostag_bayes_is_a_registered_formalism_and_ostag_bayesian_its_alias(tmp_path, capsys):
    """`train ostag-bayes` runs on the core loop with option() settings; `train ostag --bayesian` (the README's
    command) gives the same model; an option on the wrong side of the alias is one clean error."""
    from treegram.cli.app import main
    from treegram.io import load_bundle
    from treegram.plugin_manager import formalisms

    f = formalisms()["ostag-bayes"].obj
    assert f.sampling is not None and f.Settings is not None and f.state_kinds == ("items",)
    assert formalisms()["ostag"].obj.aliases == {"bayesian": "ostag-bayes"}
    tb = tmp_path / "tb.mrg"
    tb.write_text("\n".join(CORPUS) + "\n")
    common = ["--iterations", "2", "--tsg-init", "1", "--average", "2", "--seed", "3", "--treebank", str(tb)]
    a, b = tmp_path / "a.model", tmp_path / "b.model"
    assert main(["-q", "train", "ostag-bayes", *common, "--out", str(a)]) == 0
    assert main(["-q", "train", "ostag", "--bayesian", *common, "--out", str(b)]) == 0
    (ma, xa), (mb, xb) = load_bundle(a), load_bundle(b)
    for m in (ma, mb):  # wall-clock fields aside, the same file
        m["plugin_meta"]["info"].pop("train_seconds")
        for r in m["plugin_meta"]["trace"]:
            r.pop("seconds")
    assert ma == mb and xa.keys() == xb.keys() and all(np.array_equal(xa[k], xb[k]) for k in xa)
    assert ma["plugin_meta"]["settings"]["prune_threshold"] == 1e-4  # the EM route's None became ostag-bayes's
    capsys.readouterr()
    assert main(["-q", "train", "ostag", "--tsg-init", "3", "--treebank", str(tb), "--out", str(tmp_path / "c")]) != 0
    assert "--tsg-init is an option of `treegram train ostag-bayes`" in capsys.readouterr().err
    assert main(["-q", "train", "ostag", "--bayesian", "--max-depth", "3", "--treebank", str(tb), "--out",
                 str(tmp_path / "c")]) != 0
    assert "--max-depth is not an option of `treegram train ostag-bayes`" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()


def test_tsg_initialisation_starts_from_the_tsg_sample_cuts():
    from treegram.plugins.ostag.bayes_sampler import tsg_initial_cuts

    trees = [parse_brackets(s)[0] for s in CORPUS * 3]
    settings = BayesOSTAGSettings(rare_threshold=1)
    _pcfg, data = prepare_data(trees, settings)
    cuts = tsg_initial_cuts(data, settings, 3, seed=4)
    assert np.array_equal(cuts, tsg_initial_cuts(data, settings, 3, seed=4))  # seeded
    state = BlockedOSTAG(data, settings, 4, init_sub=cuts)
    assert np.array_equal(state.sub[data.sites], cuts[data.sites] != 0)
    assert np.all(state.sub[data.is_root] == 1) and np.all(state.afoot == -1)  # a TSG derivation, no adjunction
    random_start = BlockedOSTAG(data, settings, 4)
    assert not np.array_equal(random_start.sub, state.sub)
    with pytest.raises(Exception, match="rows"):
        BlockedOSTAG(data, settings, 4, init_sub=cuts[:-1])
    options = BayesOSTAGOptions(rare_threshold=1, tsg_init=3, average=1)
    a, _ = train_bayesian(trees, options, RunOptions(iterations=1, seed=4))
    b, _ = train_bayesian(trees, options, RunOptions(iterations=1, seed=4))
    assert a.info["log_likelihood"] == b.info["log_likelihood"]


def test_fixed_mu_keeps_the_adjunction_probability_while_the_rest_is_resampled():
    state = make_state(CORPUS * 2, seed=3, mu=1e-12, fixed_mu=True)
    alpha0 = state.hyper.alpha.copy()
    BlockedMH(state, seed=3).run(2)
    assert np.all(state.hyper.mu == 1e-12)
    assert not np.array_equal(state.hyper.alpha, alpha0)  # the other hyperparameters still move
    assert state.afoot.max() == -1  # with mu ~ 0 no adjunction is ever accepted
