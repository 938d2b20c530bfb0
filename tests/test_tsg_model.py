"""TSG plugin: collapsed probabilities against brute force, Gibbs conditionals, CFG transforms, determinism,
resume."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from treegram.bayes import BlockedMH, DPCounts, GibbsSampler
from treegram.trees import parse_brackets

from treegram.elementary import kernels as K
from treegram.elementary.data import TSGSettings, TSGData, prepare
from treegram.elementary.gibbs import GibbsTSG, TSGState
from treegram.plugins.tsg.state import BlockedTSG
from treegram.plugins.tsg.proposal import TreeProposal

# Tiny treebank, unannotated (v=1) so identical elementary trees recur; includes an A-A-A chain where a split
# gives two *identical* elementary trees (A (A)) above and below the site.
TINY = """
(S (NP (DT the) (NN dog)) (VP (VB runs)))
(S (NP (DT the) (NN cat)) (VP (VB runs)))
(S (NP (DT a) (NN dog)) (VP (VB sleeps) (NP (DT the) (NN cat))))
(A (A (A (A (B x)))))
(A (A (A (B x))))
"""
SETTINGS = TSGSettings(horizontal=None, vertical=1, rare_threshold=1, alpha=0.7, beta=0.4,
                       resample_alpha=False, resample_beta=False)


def tiny_state(cls=GibbsTSG, seed=0, settings=SETTINGS):
    data, _ = prepare(parse_brackets(TINY), settings)
    state = cls(data, settings, seed)
    # distinct per-label hyperparameters, so a wrong category shows up
    state.alpha[:] = 0.3 + 0.2 * np.arange(data.num_labels)
    state.beta[:] = 0.2 + 0.6 * (np.arange(data.num_labels) % 3) / 3
    state.rebuild()
    return state


def brute_fragments(state: TSGState, flags=None):
    """Every elementary tree of the state as (bracket string, root label, log P0 computed from scratch)."""
    d = state.data
    flags = state.flags if flags is None else flags
    out = []
    for r in range(d.num_rows):
        if d.is_word[r] or not flags[r]:
            continue
        tree = state.fragment_tree(r, flags)
        lp = 0.0
        stack = [(r, True)]
        while stack:
            i, is_root = stack.pop()
            if not is_root and flags[i]:
                lp += math.log(state.beta[d.label[i]])
                continue
            lp += d.node_logrule[i] + (0.0 if is_root else math.log1p(-state.beta[d.label[i]]))
            for c in (d.child1[i], d.child2[i]):
                if c >= 0 and not d.is_word[c]:
                    stack.append((int(c), False))
        out.append((tree.to_bracket(), int(d.label[r]), lp))
    return out


def brute_joint(state: TSGState, flags=None) -> float:
    """The collapsed joint from the core DPCounts with string keys (independent of our hashing and table)."""
    dp = DPCounts(state.alpha)
    for key, c, lp in brute_fragments(state, flags):
        dp.increment(dp.intern(key, c, lp))
    return dp.log_joint()


def test_pcfg_rule_probabilities_are_relative_frequencies():
    state = tiny_state()
    d = state.data
    np_ = d.labels.index("NP")
    rows = [i for i in range(d.num_rows) if d.label[i] == np_]
    assert len(rows) == 4
    assert all(d.node_logrule[i] == pytest.approx(0.0) for i in rows)  # NP -> DT NN always
    dt = d.labels.index("DT")
    the = [i for i in range(d.num_rows) if d.label[i] == dt and d.words[d.word[d.child1[i]]] == "the"]
    assert d.node_logrule[the[0]] == pytest.approx(math.log(3 / 4))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_log_joint_matches_brute_force(seed):
    state = tiny_state(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(5):
        state.flags[state.data.sites] = (rng.random(len(state.data.sites)) < 0.5).astype(np.int8)
        state.rebuild()
        assert state.log_likelihood() == pytest.approx(brute_joint(state), abs=1e-9)
        assert state.num_types() == len({f[0] for f in brute_fragments(state)})
        state.check_collisions()


def test_keys_identify_elementary_trees_exactly():
    """Equal keys <-> equal bracket strings over all elementary trees of many random states."""
    state = tiny_state()
    d = state.data
    rng = np.random.default_rng(5)
    by_key, by_text = {}, {}
    for _ in range(30):
        state.flags[d.sites] = (rng.random(len(d.sites)) < 0.5).astype(np.int8)
        ks, _, _, roots = K.tree_frags(0, d.num_rows, state.flags, d.is_word, d.subtree_end, d.label, d.tok_int,
                                       d.tok_front, d.node_logrule, state.log_stop, state.log_expand)
        for k, r in zip(ks.tolist(), roots.tolist()):
            text = state.fragment_tree(r).to_bracket()
            assert by_key.setdefault(k, text) == text
            assert by_text.setdefault(text, k) == k
    assert len(by_key) > 40


def _conditional_p1(state, site_row, temperature):
    """P(site = 1 | rest)^(1/T) normalised, from two explicit joints."""
    f1 = state.flags.copy()
    f1[site_row] = 1
    f0 = state.flags.copy()
    f0[site_row] = 0
    j1, j0 = brute_joint(state, f1) / temperature, brute_joint(state, f0) / temperature
    return 1.0 / (1.0 + math.exp(j0 - j1))


@pytest.mark.parametrize("temperature", [1.0, 0.5, 3.0])
def test_gibbs_flip_probabilities_equal_the_explicit_joint(temperature):
    state = tiny_state(seed=3)
    d = state.data
    rng = np.random.default_rng(11)
    checked_identical = 0
    for trial in range(3):
        state.flags[d.sites] = (rng.random(len(d.sites)) < 0.5).astype(np.int8)
        state.rebuild()
        base_flags = state.flags.copy()
        for row in d.sites.tolist():
            state.flags[:] = base_flags
            state.rebuild()
            p1 = _conditional_p1(state, row, temperature)
            # the kernel sets the flag to 1 iff u < P(1): probe just below and above the exact probability
            for u, expect in ((p1 * (1 - 1e-9) - 1e-12, 1), (p1 * (1 + 1e-9) + 1e-12, 0)):
                if not 0.0 <= u < 1.0:
                    continue
                state.flags[:] = base_flags
                state.rebuild()
                state._kernel(np.array([row]), np.array([u]), temperature)
                assert state.flags[row] == expect, (row, p1, u)
                state.check_collisions()
                assert state.log_likelihood() == pytest.approx(brute_joint(state), abs=1e-9)
            # identical elementary trees above and below the site (the A-chain)
            r = d.parent[row]
            while not base_flags[r]:
                r = d.parent[r]
            f = base_flags.copy()
            f[row] = 1
            if state.fragment_tree(r, f).to_bracket() == state.fragment_tree(row, f).to_bracket():
                checked_identical += 1
        state.flags[:] = base_flags
    assert checked_identical > 0


def test_gibbs_chain_matches_exact_posterior_on_a_tiny_treebank():
    """Empirical state frequencies of the sampler vs the enumerated posterior (5 sites, 32 states)."""
    data, _ = prepare(parse_brackets("(S (A (B x)) (A (B x)))"), SETTINGS)
    state = GibbsTSG(data, SETTINGS, 0)
    sites = data.sites
    assert len(sites) == 5
    exact = {}
    for combo in itertools.product((0, 1), repeat=5):
        f = state.flags.copy()
        f[sites] = combo
        exact[combo] = brute_joint(state, f)
    m = max(exact.values())
    z = sum(math.exp(v - m) for v in exact.values())
    sampler = GibbsSampler(state, seed=4)
    seen: dict[tuple, int] = {}
    n = 6000
    for _ in range(n):
        sampler.run(sampler.sweeps_done + 1)
        key = tuple(state.flags[sites].tolist())
        seen[key] = seen.get(key, 0) + 1
    for combo, lj in exact.items():
        p = math.exp(lj - m) / z
        assert seen.get(combo, 0) / n == pytest.approx(p, abs=0.03)


def test_beta_groups_give_the_exact_joint_change():
    state = tiny_state(seed=2)
    slots = state.live_slots()
    groups = state.beta_groups(slots)
    n = state.cnt[slots]
    la = np.log(state.alpha[state.cat[slots]])
    lb = state.logb[slots]
    for c, (idx, kf, mi) in list(groups.items())[:4]:
        before = state.log_likelihood()
        b0, b1 = state.beta[c], 0.77
        ds, de = math.log(b1) - math.log(b0), math.log1p(-b1) - math.log1p(-b0)
        delta = (K.beta_group_loglik(la[idx], lb[idx], n[idx], kf, mi, ds, de)
                 - K.beta_group_loglik(la[idx], lb[idx], n[idx], kf, mi, 0.0, 0.0))
        state.beta[c] = b1
        state.rebuild()
        assert state.log_likelihood() - before == pytest.approx(delta, abs=1e-9)
        assert state.log_likelihood() == pytest.approx(brute_joint(state), abs=1e-9)
        state.beta[c] = b0
        state.rebuild()


def test_hyperparameter_resampling_is_seeded_and_moves():
    settings = TSGSettings(horizontal=None, vertical=1, rare_threshold=1)
    a = tiny_state(seed=1, settings=settings)
    b = tiny_state(seed=1, settings=settings)
    a.resample_hyperparameters()
    b.resample_hyperparameters()
    assert np.array_equal(a.alpha, b.alpha) and np.array_equal(a.beta, b.beta)
    assert not np.allclose(a.beta, tiny_state(seed=1, settings=settings).beta)
    assert a.log_likelihood() == pytest.approx(brute_joint(a), abs=1e-9)


# -- blocked sampler: the tree-anchored CFG transform ----------------------------------------------------------


def _all_derivations(state, item):
    d = state.data
    lo, hi = d.tree_rows(item)
    local_sites = [i - lo for i in d.sites.tolist() if lo <= i < hi]
    base = state.flags[lo:hi].copy()
    for combo in itertools.product((0, 1), repeat=len(local_sites)):
        f = base.copy()
        f[local_sites] = combo
        yield f


@pytest.mark.parametrize("item", [0, 2, 3])
def test_tree_proposal_normaliser_and_weights_are_the_independent_predictives(item):
    state = tiny_state(BlockedTSG, seed=1)
    state.remove(item)
    proposal = TreeProposal.build(state, item)
    log_z = proposal.log_z()
    weights = []
    for f in _all_derivations(state, item):
        ks, lps, cs, _ = state.tree_fragments(item, f)
        weights.append(K.indep_log_pred(ks, lps, cs, state.keys, state.cnt, state.total, state.alpha))
    assert log_z == pytest.approx(float(np.logaddexp.reduce(weights)), abs=1e-9)
    total = sum(math.exp(state.log_q(item, f)) for f in _all_derivations(state, item))
    assert total == pytest.approx(1.0, abs=1e-9)


def test_tree_proposal_samples_follow_q():
    state = tiny_state(BlockedTSG, seed=2)
    item = 2
    state.remove(item)
    proposal = TreeProposal.build(state, item)
    rng = np.random.default_rng(0)
    counts: dict[bytes, int] = {}
    n = 4000
    for _ in range(n):
        flags, _ = proposal.sample(rng)
        counts[flags.tobytes()] = counts.get(flags.tobytes(), 0) + 1
    for f in _all_derivations(state, item):
        q = math.exp(state.log_q(item, f))
        assert counts.get(f.tobytes(), 0) / n == pytest.approx(q, abs=0.025)


def test_blocked_log_p_is_the_sequential_predictive():
    """joint(other trees + derivation f) == joint(other trees) + log_p(f), for every f (incl. repeated trees)."""
    state = tiny_state(BlockedTSG, seed=0)
    item = 3  # the A-chain: identical elementary trees repeat within one tree
    old = state.current(item)
    state.remove(item)
    without = state.log_likelihood()
    for f in _all_derivations(state, item):
        lp = state.log_p(item, f)
        state.add(item, f)
        assert state.log_likelihood() == pytest.approx(without + lp, abs=1e-9)
        assert state.log_likelihood() == pytest.approx(brute_joint(state), abs=1e-9)
        state.remove(item)
    state.add(item, old)


# -- determinism and resume --------------------------------------------------------------------------------------


def _demo_data(settings):
    from treegram.corpora.demo import demo_trees

    return prepare(demo_trees(), settings)[0]


@pytest.mark.parametrize("cls, driver", [(GibbsTSG, GibbsSampler), (BlockedTSG, BlockedMH)])
def test_same_seed_same_state(cls, driver):
    settings = TSGSettings()
    data = _demo_data(settings)
    runs = []
    for _ in range(2):
        state = cls(data, settings, 7)
        trace = driver(state, seed=7).run(3)
        runs.append((state.flags.copy(), state.alpha.copy(), state.beta.copy(),
                     [r["log_likelihood"] for r in trace]))
    assert np.array_equal(runs[0][0], runs[1][0])
    assert np.array_equal(runs[0][1], runs[1][1]) and np.array_equal(runs[0][2], runs[1][2])
    assert runs[0][3] == runs[1][3]
    other = cls(data, settings, 8)
    driver(other, seed=8).run(3)
    assert not np.array_equal(other.flags, runs[0][0])


@pytest.mark.parametrize("cls, driver", [(GibbsTSG, GibbsSampler), (BlockedTSG, BlockedMH)])
def test_interrupted_run_resumes_to_the_same_state(tmp_path, cls, driver):
    from treegram.bayes import CheckpointConfig

    settings = TSGSettings()
    data = _demo_data(settings)
    full = cls(data, settings, 3)
    driver(full, seed=3).run(5)

    ck = tmp_path / "run.ckpt"
    first = cls(data, settings, 3)

    def stop_after_two(record):
        if record["sweep"] == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        driver(first, seed=3, checkpoint=CheckpointConfig(ck, every=0), callback=stop_after_two).run(5)
    fresh = cls(data, settings, 999)  # a different seed: everything must come from the checkpoint
    resumed = driver.resume(ck, fresh, force=True)  # allowed only when forced
    assert resumed.sweeps_done == 2
    resumed.run(5)
    assert np.array_equal(fresh.flags, full.flags)
    assert np.array_equal(fresh.alpha, full.alpha) and np.array_equal(fresh.beta, full.beta)
    assert fresh.log_likelihood() == full.log_likelihood()


def test_checkpoint_for_other_data_is_refused(tmp_path):
    from treegram.bayes import CheckpointConfig
    from treegram.errors import ModelFileError

    settings = TSGSettings()
    data = _demo_data(settings)
    state = GibbsTSG(data, settings, 0)
    GibbsSampler(state, seed=0, checkpoint=CheckpointConfig(tmp_path / "c.ckpt")).run(1)
    other, _ = prepare(parse_brackets(TINY), settings)
    with pytest.raises(ModelFileError, match="different training data"):
        GibbsSampler.resume(tmp_path / "c.ckpt", GibbsTSG(other, settings, 0))


def test_unbinarized_input_is_rejected():
    from treegram.errors import InputError
    from treegram.trees import Tree

    with pytest.raises(InputError, match="binarized"):
        TSGData([parse_brackets("(S (A x) (B y) (C z))")[0]])
    assert isinstance(parse_brackets("(S (A x))")[0], Tree)
