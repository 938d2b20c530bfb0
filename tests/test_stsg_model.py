"""STSG model: base distribution, Gibbs conditionals against the explicit collapsed joint, determinism, exact resume,
prediction grammar coverage, the rate knob, and the EM/VB baselines."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from treegram.bayes import AnnealingSchedule, CheckpointConfig, GibbsSampler
from treegram.compression.compressor import rate_window
from treegram.formalism import flat_fallback
from treegram.corpora.demo import demo_trees
from treegram.trees import Tree, parse_brackets

from treegram.plugins.stsg import kernels as K
from treegram.plugins.stsg.em import ExtractedForest, digamma, expected_counts, train_em
from treegram.plugins.stsg.grammar import FiniteSTSG
from treegram.plugins.stsg.model import (PairCorpus, STSGSampler, fragment_pair, frontier_index,
                                         maximal_alignment)
from treegram.compression.treeprep import derive_target, wrap_root


def _corpus(n=12, seed=0, rate=0.7, beta=0.1):
    rng = np.random.default_rng(seed)
    src = [wrap_root(t) for t in demo_trees()[:n]]
    keeps = [rng.random(len(t.leaves())) < rate for t in src]
    return PairCorpus(src, [derive_target(s, k) for s, k in zip(src, keeps)], keeps, beta=beta)


@pytest.fixture(scope="module")
def tiny():
    return _corpus()


# -- an independent implementation of P0 and of the collapsed joint ------------------------------------------------

def _label(node):
    m = frontier_index(node.label)
    return node.label.rsplit("[", 1)[0] if m is not None and not node.children else node.label


def _side_logprob(frag: Tree, pcfg, beta, *, root_expands=True):
    """P0 of one elementary tree: root production, then expand (beta * rule) or stop (1 - beta) per nonterminal."""
    if not frag.children:  # a bare target frontier
        return 0.0
    total = 0.0
    stack = [(frag, True)]
    while stack:
        node, is_root = stack.pop()
        if isinstance(node, str):
            continue
        if not node.children:
            total += math.log1p(-beta)
            continue
        if node.is_preterminal:
            prod = (node.label, node.children[0], True)
        else:
            prod = (node.label, tuple(_label(c) for c in node.children), False)
        total += pcfg[prod] + (0.0 if is_root else math.log(beta))
        stack.extend((c, False) for c in node.children)
    return total


def _count_frontier(frag):
    if frag is None:
        return 0, 0
    m = k = 0
    for node in frag.subtrees():
        if not node.children and frontier_index(node.label) is not None:
            m += 1
            k += frontier_index(node.label) > 0
    return m, k


def explicit_log_joint(corpus: PairCorpus, a: np.ndarray, alpha: float) -> float:
    rules = Counter()
    base = {}
    for r in np.flatnonzero(a != K.UNAL):
        f = fragment_pair(corpus, a, int(r))
        key = str(f)
        rules[key] += 1
        if key not in base:
            lp = _side_logprob(f.source, corpus.pcfg_s, corpus.beta)
            if f.target is not None:
                m, _ = _count_frontier(f.source)
                _, k = _count_frontier(f.target) if f.target.children else (1, 1)
                lp += _side_logprob(f.target, corpus.pcfg_t, corpus.beta)
                lp -= math.lgamma(m + 1) - math.lgamma(m - k + 1)
            base[key] = (lp, f.category)
    by_cat = Counter()
    out = 0.0
    for key, n in rules.items():
        lp, cat = base[key]
        by_cat[cat] += n
        ap = alpha * math.exp(lp)
        out += math.lgamma(n + ap) - math.lgamma(ap)
    for cat, n in by_cat.items():
        out += math.lgamma(alpha) - math.lgamma(alpha + n)
    return out


def test_hash_keys_identify_rules_exactly(tiny):
    s = STSGSampler(tiny, seed=3)
    by_hash, by_text = {}, {}
    for r in np.flatnonzero(s.a != K.UNAL):
        h, lp, cat, _ = s.fragment_info(int(r))
        text = str(fragment_pair(tiny, s.a, int(r)))
        assert by_hash.setdefault(h, text) == text
        assert by_text.setdefault(text, h) == h
    assert s.num_rules == len(by_text)  # live table entries = distinct rules


def test_kernel_log_joint_matches_explicit_joint(tiny):
    for seed in range(3):
        s = STSGSampler(tiny, alpha=2.5, seed=seed)
        assert s.log_likelihood() == pytest.approx(explicit_log_joint(tiny, s.a, 2.5), rel=1e-9, abs=1e-6)


def test_gibbs_conditionals_match_explicit_joint(tiny):
    """Eqs (5)-(7): every site's option weights are proportional to the joint of the state with that option."""
    alpha = 3.0
    s = STSGSampler(tiny, alpha=alpha, seed=1)
    GibbsSampler(s, seed=0, schedule=AnnealingSchedule(1.0)).run(3)  # a state with repeated rules
    rng = np.random.default_rng(0)
    checked = 0
    for site in rng.permutation(tiny.sites)[:60]:
        opts, logw = s.site_log_weights(int(site))
        if len(opts) < 2:
            continue
        saved = s.a[site]
        joints = []
        for o in opts:
            s.a[site] = o
            joints.append(explicit_log_joint(tiny, s.a, alpha))
        s.a[site] = saved
        p_kernel = np.exp(logw - logw.max())
        p_kernel /= p_kernel.sum()
        j = np.array(joints)
        p_joint = np.exp(j - j.max())
        p_joint /= p_joint.sum()
        np.testing.assert_allclose(p_kernel, p_joint, rtol=1e-7, atol=1e-12)
        checked += 1
    assert checked >= 30
    assert s.log_likelihood() == pytest.approx(explicit_log_joint(tiny, s.a, alpha), rel=1e-9)


def test_state_respects_extractive_constraints(tiny):
    s = STSGSampler(tiny, seed=2)
    GibbsSampler(s, seed=5, schedule=AnnealingSchedule(5.0, 0.0, 20, "linear")).run()
    for n, v in enumerate(s.a):
        deleted = tiny.s_kept_lo[n] == tiny.s_kept_hi[n]
        if v == K.EPS:
            assert deleted
        elif v >= 0:
            assert not deleted and tiny.T.span[v] == (tiny.s_kept_lo[n], tiny.s_kept_hi[n])
    for r in np.flatnonzero(s.a != K.UNAL):  # every rule's target side is well formed
        f = fragment_pair(tiny, s.a, int(r))
        if f.target is not None and f.target.children:
            idx = sorted(frontier_index(x.label) for x in f.target.subtrees() if not x.children)
            assert idx == list(range(1, len(idx) + 1))


def test_zero_temperature_sweeps_never_lower_the_joint(tiny):
    s = STSGSampler(tiny, seed=4)
    trace = GibbsSampler(s, seed=1, schedule=AnnealingSchedule(0.0)).run(6)
    lls = [r["log_likelihood"] for r in trace]
    assert all(b >= a - 1e-7 for a, b in zip(lls, lls[1:]))


def test_same_seed_same_state_and_exact_resume(tiny, tmp_path):
    def run(seed, schedule=AnnealingSchedule(5.0, 0.0, 12, "linear"), sweeps=12):
        s = STSGSampler(tiny, seed=seed)
        GibbsSampler(s, seed=seed, schedule=schedule).run(sweeps)
        return s

    a, b = run(7), run(7)
    assert np.array_equal(a.a, b.a)
    hot = AnnealingSchedule(1.0)
    assert np.array_equal(run(7, hot, 3).a, run(7, hot, 3).a)
    assert not np.array_equal(run(7, hot, 3).a, run(8, hot, 3).a)
    ck = tmp_path / "run.ckpt"
    s = STSGSampler(tiny, seed=7)
    GibbsSampler(s, seed=7, schedule=AnnealingSchedule(5.0, 0.0, 12, "linear"),
                 checkpoint=CheckpointConfig(ck, every=5)).run(5)
    resumed = STSGSampler(tiny, seed=99)  # a fresh model; the checkpoint supplies the state
    GibbsSampler.resume(ck, resumed).run(12)
    assert np.array_equal(resumed.a, a.a)
    assert resumed.log_likelihood() == pytest.approx(a.log_likelihood(), abs=1e-9)


@pytest.fixture(scope="module")
def grammar(tiny):
    s = STSGSampler(tiny, seed=0)
    GibbsSampler(s, seed=0, schedule=AnnealingSchedule(5.0, 0.0, 30, "linear")).run()
    return FiniteSTSG.from_counts(s.fragments(), tiny.sources)


def test_every_source_tree_is_parseable(grammar):
    trees = [wrap_root(t) for t in demo_trees()]
    trees += [wrap_root(flat_fallback("zzz unseen words here".split())),
              wrap_root(parse_brackets("(FRAG (NP (NNP Xq)) (SBARQ (WHNP (WP what))))")[0]),
              wrap_root(parse_brackets("(NP (NN one))")[0])]
    for t in trees:
        out, keep, score = grammar.decode(t)
        assert math.isfinite(score)
        words = t.leaves()
        compressed = [w for w, k in zip(words, keep) if k]
        assert (out.leaves() if out is not None else []) == compressed


def test_rate_knob_is_monotonic(grammar):
    trees = [wrap_root(t) for t in demo_trees()[:20]]
    for t in trees:
        kept = [int(grammar.decode(t, reward)[1].sum()) for reward in (-20, -5, -1, 0, 1, 5, 20)]
        assert kept == sorted(kept)
        n = len(t.leaves())
        assert kept[-1] == n  # a large enough reward keeps every word (copy rules)
        dec = grammar.decoder(t, t.leaves())
        for rate in (0.0, 0.5, 0.9):
            comp = grammar.compress(t, t.leaves(), rate=rate)
            # within 0.05 of the rate whenever the grammar derives such a length, else the nearest with a note
            if any(dec.decode_length(k) is not None for k in rate_window(n, rate)):
                assert abs(comp.rate - rate) <= 0.05 + 1e-9 and comp.note is None
            else:
                assert comp.note and "nearest" in comp.note


def _all_derivations(sc, node, cat):
    """Every derivation of (node, cat) in a SentenceChart: (log P, target words, applications top-down)."""
    ch = sc.chart
    out = []
    for e in ch.applications_at(node):
        if ch.cat[e] != cat:
            continue
        rule = sc.apps[e][0]
        combos = [(rule.logp, rule.n_words, [e])]
        for u, c in ch.tails(e):
            sub = _all_derivations(sc, u, c)
            combos = [(a + b, n + m, x + y) for a, n, x in combos for b, m, y in sub]
        out += combos
    return out


def test_decoder_is_the_best_of_all_derivations(grammar):
    """The tree-chart decoder against brute force: every derivation of the source tree from the grammar's rule
    applications enumerated, scored log P + reward x target words; the decoder's score is their maximum and its
    output is the yield of a derivation with that score."""
    from treegram.plugins.stsg.grammar import SentenceChart

    for t in [wrap_root(t) for t in demo_trees()[:6]]:
        sc = SentenceChart(grammar, t)
        ders = _all_derivations(sc, 0, sc.cats[t.label])
        assert ders
        for reward in (-1.0, 0.0, 0.7):
            tree, keep, score = sc.decode(reward)
            assert score == pytest.approx(max(lp + reward * n for lp, n, _ in ders))
            assert int(keep.sum()) in {n for lp, n, _ in ders if lp + reward * n == pytest.approx(score)}


def test_loss_augmented_decoding_on_the_stratified_chart(grammar):
    """Loss-augmented decoding as the large-margin STSG needs it: the chart stratified by (true positive, false
    positive) kept words gives max_y score(y) + loss(y) exactly for the non-decomposable loss 1 - precision;
    checked against every derivation."""
    from treegram.plugins.stsg.grammar import SentenceChart

    rng = np.random.default_rng(1)
    for t in [wrap_root(t) for t in demo_trees()[:5]]:
        sc = SentenceChart(grammar, t)
        gold = rng.random(sc.n_words) < 0.6
        root = sc.cats[t.label]
        strat = sc.chart.stratified_viterbi(sc.word_increments(gold), (sc.n_words, sc.n_words))
        table = strat.root_scores(0, root)
        tp, fp = np.indices(table.shape)
        loss = 1.0 - np.where(tp + fp > 0, tp / np.maximum(tp + fp, 1), 0.0)
        got = float(np.max(table + loss))

        def brute_loss(keep):
            k = int(keep.sum())
            return 1.0 - (int((keep & gold).sum()) / k if k else 0.0)

        want = max(lp + brute_loss(sc.output(apps)[1]) for lp, _n, apps in _all_derivations(sc, 0, root))
        assert got == pytest.approx(want)
        best_state = np.unravel_index(int(np.argmax(table + loss)), table.shape)
        _tree, keep = sc.output(strat.derivation(0, root, best_state))
        assert (int((keep & gold).sum()), int((keep & ~gold).sum())) == tuple(int(x) for x in best_state)


def test_grammar_json_round_trip(grammar):
    import json

    g2 = FiniteSTSG.from_json(json.loads(json.dumps(grammar.to_json(), ensure_ascii=False)))
    for t in demo_trees()[:10]:
        a = grammar.decode(wrap_root(t))
        b = g2.decode(wrap_root(t))
        assert np.array_equal(a[1], b[1]) and a[2] == pytest.approx(b[2])


def test_maximal_alignment_is_a_valid_derivation(tiny):
    a = maximal_alignment(tiny)
    s = STSGSampler(tiny, seed=0, init="maximal")
    assert np.array_equal(s.a, a)
    # every alignable site is aligned
    assert all(a[n] != K.UNAL for n in tiny.sites
               if tiny.s_kept_lo[n] == tiny.s_kept_hi[n] or a[tiny.s_parent[n]] != K.UNAL)


def test_digamma():
    assert digamma(1.0) == pytest.approx(-0.5772156649015329, abs=1e-12)
    for x in (0.01, 0.3, 2.5, 7.0, 40.0):
        assert digamma(x + 1) - digamma(x) == pytest.approx(1 / x, rel=1e-10)


def test_em_likelihood_never_decreases_and_vb_runs(tiny):
    forest = ExtractedForest(tiny, min_count=1)
    assert forest.n_composed > 0
    g, info = train_em(tiny, method="em", iterations=8, forest=forest, alpha_em=1.0)
    lls = [t["log_likelihood"] for t in info["trace"]]
    assert all(b >= a - 1e-6 for a, b in zip(lls, lls[1:]))
    # expected counts: each sentence contributes exactly one rule rooted at its root
    counts, _ = expected_counts(forest, np.zeros(forest.num_rules))
    root_rules = {rid for r in tiny.roots for rid, _ in forest.cands[int(r)]}
    assert sum(counts[list(root_rules)]) == pytest.approx(len(tiny.roots))
    gv, _ = train_em(tiny, method="vb", iterations=3, forest=forest)
    for t in tiny.sources:
        assert g.decode(t)[0] is not None and gv.decode(t)[0] is not None


def test_em_counts_match_brute_force_enumeration():
    """Inside-outside expected counts equal the posterior-weighted counts over all derivations of one pair."""
    c = _corpus(n=1, seed=3, rate=0.6)
    forest = ExtractedForest(c, min_count=1)
    rng = np.random.default_rng(0)
    log_theta = np.log(rng.random(forest.num_rules) + 0.1)
    counts, ll = expected_counts(forest, log_theta)

    def derivations(r):  # all (log weight, rule list) derivations below node r
        out = []
        for rid, fr in forest.cands[r]:
            partial = [(log_theta[rid], [rid])]
            for v in fr:
                partial = [(w + w2, rs + rs2) for w, rs in partial for w2, rs2 in derivations(v)]
            out += partial
        return out

    ds = derivations(int(c.roots[0]))
    z = np.logaddexp.reduce([w for w, _ in ds])
    brute = np.zeros(forest.num_rules)
    for w, rs in ds:
        for rid in rs:
            brute[rid] += math.exp(w - z)
    assert ll == pytest.approx(z)
    np.testing.assert_allclose(counts, brute, atol=1e-9)
