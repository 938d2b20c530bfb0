"""Chart decoders checked against exhaustive enumeration of derivations on small hand-written grammars."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import pytest

from treegram.charts import (
    Pruning,
    coarse_to_fine_mask,
    expected_counts,
    inside,
    mask_from_tree,
    outside,
    posteriors,
    sample,
    tree_pruning,
    viterbi,
)
from treegram.errors import InputError, ParseFailure
from treegram.grammar import LexicalInput, WeightedCFG
from treegram.trees.tree import Tree

L = math.log


def pp_grammar(category=None) -> WeightedCFG:
    """Ambiguous PP attachment, a unary chain S -> VP -> V, and a word with two tags."""
    return WeightedCFG.from_rules(
        "S",
        binary=[("S", "NP", "VP", L(0.9)), ("VP", "V", "NP", L(0.5)), ("NP", "NP", "PP", L(0.2)),
                ("VP", "VP", "PP", L(0.3)), ("PP", "P", "NP", L(1.0))],
        unary=[("S", "VP", L(0.1)), ("VP", "V", L(0.2)), ("NP", "N", L(0.5))],
        lexical=[("N", "I", L(0.3)), ("N", "fish", L(0.4)), ("V", "fish", L(0.5)), ("V", "saw", L(0.5)),
                 ("N", "saw", L(0.3)), ("P", "with", L(1.0)), ("NP", "I", L(0.3)), ("NP", "fish", L(0.5))],
        category=category)


def cyclic_grammar() -> WeightedCFG:
    """Unary cycle A <-> B (mass 0.06) plus a unary X -> A that feeds back into binary rules."""
    return WeightedCFG.from_rules(
        "S",
        binary=[("S", "X", "X", L(0.5)), ("A", "X", "X", L(0.5)), ("B", "X", "X", L(0.7))],
        unary=[("S", "A", L(0.5)), ("A", "B", L(0.2)), ("B", "A", L(0.3)), ("X", "A", L(0.1))],
        lexical=[("A", "a", L(0.3)), ("X", "a", L(0.9))])


def enumerate_derivations(cfg: WeightedCFG, lex: LexicalInput, words, max_unary: int):
    """Every derivation of the start symbol (unary chains of at most `max_unary` rules per span).

    Returns a list of (logp, tree, rule uses) with rule uses as (kind, rule, parent, start, end).
    """
    name = cfg.nonterminals.symbol
    memo: dict = {}

    def derive(a: int, i: int, j: int, budget: int):
        key = (a, i, j, budget)
        if key in memo:
            return memo[key]
        out = []
        if j - i == 1:
            for e in range(lex.ptr[i], lex.ptr[i + 1]):
                if lex.symbol[e] == a:
                    out.append((float(lex.logp[e]), Tree(name(a), (words[i],)),
                                (("lexical", int(lex.rule[e]), a, i, j),)))
        for r in np.flatnonzero(cfg.bin_parent == a):
            for k in range(i + 1, j):
                for lp, lt, ld in derive(int(cfg.bin_left[r]), i, k, max_unary):
                    for rp, rt, rd in derive(int(cfg.bin_right[r]), k, j, max_unary):
                        out.append((float(cfg.bin_logp[r]) + lp + rp, Tree(name(a), (lt, rt)),
                                    (("binary", int(r), a, i, j),) + ld + rd))
        if budget > 0:
            for r in np.flatnonzero(cfg.un_parent == a):
                for cp, ct, cd in derive(int(cfg.un_child[r]), i, j, budget - 1):
                    out.append((float(cfg.un_logp[r]) + cp, Tree(name(a), (ct,)), (("unary", int(r), a, i, j),) + cd))
        memo[key] = out
        return out

    return derive(cfg.start, 0, lex.n, max_unary)


def logsumexp(xs) -> float:
    xs = list(xs)
    if not xs:
        return -math.inf
    m = max(xs)
    return m + math.log(sum(math.exp(x - m) for x in xs))


SENTENCES = ["I saw fish with fish", "fish saw I with fish with fish", "fish", "saw fish"]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_viterbi_and_inside_match_enumeration(sentence):
    g = pp_grammar()
    words = sentence.split()
    lex = g.lexical_input(words)
    derivs = enumerate_derivations(g, lex, words, max_unary=g.num_symbols)
    assert derivs, "test sentence should be grammatical"
    best = max(derivs, key=lambda d: d[0])
    parse = viterbi(g, lex, words)
    assert parse is not None
    assert parse.logp == pytest.approx(best[0], abs=1e-10)
    assert parse.tree == best[1]
    assert parse.derivation.logp(g, lex) == pytest.approx(parse.logp, abs=1e-10)
    assert parse.tree.leaves() == words
    chart = inside(g, lex)
    assert chart.log_z == pytest.approx(logsumexp(d[0] for d in derivs), abs=1e-10)


def test_derivation_rule_uses_match_tree():
    g = pp_grammar()
    words = "I saw fish with fish".split()
    lex = g.lexical_input(words)
    parse = viterbi(g, lex, words)
    uses = parse.rules_used()
    # pre-order rule uses line up with the tree's pre-order nonterminal nodes (preterminals are lexical uses)
    nodes = list(parse.tree.spans())
    assert len(uses) == len(nodes)
    for use, (node, i, j) in zip(uses, nodes):
        assert g.nonterminals.symbol(use.parent) == node.label
        assert (use.start, use.end) == (i, j)
        if use.kind == "binary":
            assert g.rule_str("binary", use.rule) == f"{node.label} -> {node[0].label} {node[1].label}"
            assert use.aux == i + len(node[0].leaves())
        elif use.kind == "unary":
            assert g.rule_str("unary", use.rule) == f"{node.label} -> {node[0].label}"
        else:
            assert g.rule_str("lexical", use.rule) == f"{node.label} -> {node[0]!r}"


def test_cyclic_unary_chains():
    g = cyclic_grammar()
    for words, max_unary in ((["a"], 15), (["a", "a"], 15), (["a", "a", "a"], 5)):
        lex = g.lexical_input(words)
        derivs = enumerate_derivations(g, lex, words, max_unary=max_unary)
        best = max(derivs, key=lambda d: d[0])
        parse = viterbi(g, lex, words)
        assert parse.logp == pytest.approx(best[0], abs=1e-10)
        assert parse.tree == best[1]
        if max_unary >= 15:  # truncating chains at 15 unary rules per span loses ~0.06^7 relative mass
            assert inside(g, lex).log_z == pytest.approx(logsumexp(d[0] for d in derivs), abs=1e-8)


def test_closure_equals_matrix_inverse():
    g = cyclic_grammar()
    nsym = g.num_symbols
    u = np.zeros((nsym, nsym))
    np.add.at(u, (g.un_parent, g.un_child), np.exp(g.un_logp))
    expect = np.linalg.inv(np.eye(nsym) - u)
    cl = g.index.closure
    got = np.zeros((nsym, nsym))
    got[cl.parent, cl.child] = np.exp(cl.inside_logw)
    np.testing.assert_allclose(got, expect, atol=1e-12)
    # pattern = reachability; Viterbi weights are best single chains
    assert set(zip(cl.parent.tolist(), cl.child.tolist())) == set(zip(*np.nonzero(expect > 0)))
    s, a, b = (g.nonterminals[x] for x in "SAB")
    k = [t for t in range(cl.size) if cl.parent[t] == s and cl.child[t] == b][0]
    assert cl.viterbi_logw[k] == pytest.approx(L(0.5) + L(0.2))
    assert cl.viterbi_next[k] == a


@pytest.mark.parametrize("unary", [[("A", "B", 0.0), ("B", "A", 0.0)], [("A", "A", 0.0)],
                                   [("A", "B", L(0.9)), ("B", "A", L(0.5)), ("A", "A", L(0.6))]])
def test_divergent_unary_cycle_raises(unary):
    g = WeightedCFG.from_rules("A", unary=unary, lexical=[("A", "a", 0.0)])
    with pytest.raises(InputError, match="cycle"):
        viterbi(g, g.lexical_input(["a"]), ["a"])


def _exact_distribution(g, words, max_unary):
    lex = g.lexical_input(words)
    derivs = enumerate_derivations(g, lex, words, max_unary)
    logz = logsumexp(d[0] for d in derivs)
    probs: dict[str, float] = defaultdict(float)
    for lp, tree, _ in derivs:
        probs[tree.to_bracket()] += math.exp(lp - logz)
    return lex, derivs, logz, probs


@pytest.mark.parametrize("grammar,sentence,max_unary", [(pp_grammar, "fish saw I with fish with fish", 10),
                                                        (cyclic_grammar, "a a", 13)])
def test_sample_matches_exact_distribution(grammar, sentence, max_unary):
    g = grammar()
    words = sentence.split()
    lex, derivs, logz, probs = _exact_distribution(g, words, max_unary)
    logp_of = {t.to_bracket(): lp for lp, t, _ in derivs}
    chart = inside(g, lex)
    rng = np.random.default_rng(1234)
    draws = 4000
    seen: Counter = Counter()
    for _ in range(draws):
        tree, logp, deriv = sample(chart, rng, words)
        key = tree.to_bracket()
        seen[key] += 1
        if key in logp_of:
            assert logp == pytest.approx(logp_of[key], abs=1e-10)
            assert deriv.logp(g, lex) == pytest.approx(logp, abs=1e-10)
    # only derivations with chains longer than the enumeration's cut-off may be missing from `probs`
    outside_enumeration = sum(c for k, c in seen.items() if k not in probs)
    assert outside_enumeration == 0 if grammar is pp_grammar else outside_enumeration <= 0.002 * draws
    # chi-square over trees with expected count >= 5 (the rest pooled)
    stat, df, pooled_e, pooled_o = 0.0, -1, 0.0, 0
    for key, p in probs.items():
        e = draws * p
        if e >= 5:
            stat += (seen[key] - e) ** 2 / e
            df += 1
        else:
            pooled_e += e
            pooled_o += seen[key]
    pooled_o += sum(c for k, c in seen.items() if k not in probs)
    if pooled_e >= 5:
        stat += (pooled_o - pooled_e) ** 2 / pooled_e
        df += 1
    assert df >= 2
    assert stat < df + 5 * math.sqrt(2 * df)  # ~ mean + 5 sd of a chi-square(df)


def test_sample_is_reproducible():
    g = pp_grammar()
    words = "fish saw I with fish with fish".split()
    chart = inside(g, g.lexical_input(words))
    a = [sample(chart, np.random.default_rng(7))[0] for _ in range(3)]
    b = [sample(chart, np.random.default_rng(7))[0] for _ in range(3)]
    assert a == b


def expected_from_derivations(cfg: WeightedCFG, derivs, logz: float):
    """Expected rule counts {"binary", "unary", "lexical": array} and span posteriors {(i, j, category): p}, summed
    over enumerated derivations (log p, tree, rule uses) normalised by `logz`."""
    want = {"binary": np.zeros(cfg.num_binary), "unary": np.zeros(cfg.num_unary),
            "lexical": np.zeros(cfg.num_lexical)}
    post: dict = defaultdict(float)
    for lp, tree, uses in derivs:
        p = math.exp(lp - logz)
        for kind, rule, _parent, _i, _j in uses:
            want[kind][rule] += p
        for node, i, j in tree.spans():
            post[(i, j, int(cfg.category[cfg.nonterminals[node.label]]))] += p
    return want, post


def assert_counts_match(chart, want, want_post, tol):
    """The chart's expected counts and posteriors (outside pass) equal the enumerated ones; returns the counts."""
    out = outside(chart)
    bc, uc, lc = expected_counts(chart, out)
    np.testing.assert_allclose(bc, want["binary"], atol=tol)
    np.testing.assert_allclose(uc, want["unary"], atol=tol)
    np.testing.assert_allclose(lc, want["lexical"], atol=tol)
    post = posteriors(chart, out)
    got = {(int(i), int(j), int(c)): float(p) for i, j, c, p in zip(post.start, post.end, post.ids, post.prob)}
    assert set(got) == {k for k, v in want_post.items() if v > 0}
    for key, v in want_post.items():
        assert got[key] == pytest.approx(v, abs=tol)
    return bc, uc, lc


@pytest.mark.parametrize("grammar,sentence,max_unary,tol", [(pp_grammar, "fish saw I with fish with fish", 10, 1e-10),
                                                            (cyclic_grammar, "a a", 15, 1e-7)])
def test_expected_counts_and_posteriors_match_enumeration(grammar, sentence, max_unary, tol):
    g = grammar()
    words = sentence.split()
    lex, derivs, logz, _ = _exact_distribution(g, words, max_unary)
    want, want_post = expected_from_derivations(g, derivs, logz)
    bc, _uc, lc = assert_counts_match(inside(g, lex), want, want_post, tol)
    assert lc.sum() == pytest.approx(len(words))  # one lexical rule per word
    assert bc.sum() == pytest.approx(len(words) - 1)  # n - 1 binary nodes in any binary tree


def test_no_parse():
    g = pp_grammar()
    words = ["with", "with"]
    lex = g.lexical_input(words)
    assert viterbi(g, lex, words) is None
    chart = inside(g, lex)
    assert chart.log_z == -math.inf
    with pytest.raises(ParseFailure):
        outside(chart)
    with pytest.raises(ParseFailure):
        sample(chart, np.random.default_rng(0))
    # an unknown word yields no lexical entries at all
    lex = g.lexical_input(["I", "zebra"])
    assert lex.uncovered_positions() == [1]
    assert viterbi(g, lex) is None


def test_lexical_input_from_triples_with_outside_scores():
    """Tag scores supplied directly (rule -1) behave like lexical rules with those scores."""
    g = pp_grammar()
    words = "I saw fish".split()
    ref = g.lexical_input(words)
    lex = LexicalInput.from_triples(ref.n, ref.position[::-1], ref.symbol[::-1], ref.logp[::-1])
    assert (lex.rule == -1).all() and (lex.position == ref.position).all()
    a, b = viterbi(g, ref, words), viterbi(g, lex, words)
    assert a.logp == pytest.approx(b.logp) and a.tree == b.tree
    assert [u.rule for u in b.rules_used() if u.kind == "lexical"] == [-1, -1, -1]
    assert inside(g, lex).log_z == pytest.approx(inside(g, ref).log_z)
    # without words the leaves come from the grammar's vocabulary, or placeholders for outside entries
    assert viterbi(g, ref).tree.leaves() == words
    assert viterbi(g, lex).tree.leaves() == ["<w0>", "<w1>", "<w2>"]
    out = outside(inside(g, lex))
    assert out.lex_counts.sum() == 0 and out.lex_entry_posterior.sum() == pytest.approx(3.0)


# -- pruning ---------------------------------------------------------------------------------

def test_all_true_mask_equals_no_pruning():
    g = pp_grammar()
    words = "fish saw I with fish with fish".split()
    lex = g.lexical_input(words)
    n = len(words)
    full = Pruning(mask=np.ones((n + 1, n + 1, len(g.categories)), bool))
    a, b = viterbi(g, lex, words), viterbi(g, lex, words, prune=full)
    assert a.logp == b.logp and a.tree == b.tree
    ca, cb = inside(g, lex), inside(g, lex, prune=full)
    assert ca.log_z == cb.log_z
    for x, y in zip(expected_counts(ca), expected_counts(cb)):
        np.testing.assert_array_equal(x, y)
    wrong = Pruning(top_mask=np.ones((n, n, len(g.categories)), bool))
    with pytest.raises(InputError, match="shape"):
        inside(g, lex, prune=wrong)


def test_restrictive_mask_excludes_span_category():
    g = pp_grammar()
    words = "I saw fish with fish".split()
    lex = g.lexical_input(words)
    derivs = enumerate_derivations(g, lex, words, g.num_symbols)
    np_id = g.categories["NP"]
    mask = np.ones((6, 6, len(g.categories)), bool)
    mask[2, 5, np_id] = False  # no NP over "fish with fish": forces VP attachment
    allowed = [d for d in derivs if not any(node.label == "NP" and (i, j) == (2, 5) for node, i, j in d[1].spans())]
    assert 0 < len(allowed) < len(derivs)
    parse = viterbi(g, lex, words, prune=Pruning(mask=mask))
    best = max(allowed, key=lambda d: d[0])
    assert parse.logp == pytest.approx(best[0]) and parse.tree == best[1]
    assert inside(g, lex, prune=Pruning(mask=mask)).log_z == pytest.approx(logsumexp(d[0] for d in allowed))


def test_mask_by_category_covers_split_symbols():
    """A fine grammar with NP split into NP^x / NP^y (category NP): masking the category removes both."""
    g = WeightedCFG.from_rules(
        "S",
        binary=[("S", "NP^y", "VP", L(0.9)), ("VP", "V", "NP^y", L(0.4)), ("VP", "V", "NP^x", L(0.2)),
                ("NP^x", "NP^y", "PP", L(1.0)), ("VP", "VP", "PP", L(0.3)), ("PP", "P", "NP^y", L(1.0)),
                ("NP^y", "NP^x", "PP", L(0.1))],
        unary=[("S", "VP", L(0.1)), ("VP", "V", L(0.1)), ("NP^y", "N", L(0.4))],
        lexical=[("N", "I", L(0.3)), ("N", "fish", L(0.7)), ("V", "fish", L(0.5)), ("V", "saw", L(0.5)),
                 ("P", "with", L(1.0)), ("NP^y", "fish", L(0.5))],
        category=lambda s: s.split("^")[0])
    assert len(g.categories) == g.num_symbols - 1
    assert g.categories.symbol(int(g.category[g.nonterminals["NP^x"]])) == "NP"
    words = "fish saw fish with fish with fish".split()
    lex = g.lexical_input(words)
    n = len(words)
    free = inside(g, lex)
    assert "NP^x" in free.cell(2, 5) and "NP^y" in free.cell(2, 7)
    mask = np.ones((n + 1, n + 1, len(g.categories)), bool)
    mask[2, 5, g.categories["NP"]] = False
    mask[2, 7, g.categories["NP"]] = False
    masked = inside(g, lex, prune=Pruning(mask=mask))
    assert not {"NP^x", "NP^y"} & (set(masked.cell(2, 5)) | set(masked.cell(2, 7)))
    assert "VP" in masked.cell(1, 7)
    only_words = np.ones_like(mask)
    only_words[:, :, g.categories["NP"]] = False
    for i in range(n):
        only_words[i, i + 1, g.categories["NP"]] = True
    parse = viterbi(g, lex, words, prune=Pruning(mask=only_words))
    assert parse is not None
    assert all(j - i == 1 for node, i, j in parse.tree.spans() if node.label.startswith("NP"))


def test_tree_pruning_restricts_to_that_tree():
    g = pp_grammar()
    words = "fish saw I with fish with fish".split()
    lex = g.lexical_input(words)
    derivs = enumerate_derivations(g, lex, words, g.num_symbols)
    ranked = sorted(derivs, key=lambda d: d[0])
    # trees with a unary chain (NP (N x)) next to a direct (NP x) are the hard case for span restriction
    chained = [d for d in ranked if any(len(t) == 1 and isinstance(t[0], Tree) for t in d[1].subtrees())]
    for target_lp, target, _ in (ranked[len(ranked) // 2], chained[0], chained[-1], ranked[-1]):
        chart = inside(g, lex, prune=tree_pruning(target, g.categories))
        assert chart.log_z == pytest.approx(target_lp)
        rng = np.random.default_rng(3)
        for _ in range(3):
            tree, lp, _ = sample(chart, rng, words)
            assert tree == target and lp == pytest.approx(target_lp)
        assert viterbi(g, lex, words, prune=tree_pruning(target, g.categories)).tree == target
        # the looser all-labels mask keeps the tree but may admit chain variants of it
        loose = inside(g, lex, prune=Pruning(mask=mask_from_tree(target, g.categories)))
        assert loose.log_z >= target_lp - 1e-9


def test_tree_pruning_extra_root_labels():
    g = pp_grammar()
    words = ["saw", "fish"]
    lex = g.lexical_input(words)
    sub = Tree("VP", (Tree("V", ("saw",)), Tree("NP", (Tree("N", ("fish",)),))))
    want = L(0.1) + L(0.5) + L(0.5) + L(0.5) + L(0.4)  # S -> VP, VP -> V NP, V saw, NP -> N, N fish
    assert inside(g, lex, prune=tree_pruning(sub, g.categories)).log_z == -math.inf  # VP is not the start
    chart = inside(g, lex, prune=tree_pruning(sub, g.categories, extra_root_labels=["S"]))
    assert chart.log_z == pytest.approx(want)
    m2 = mask_from_tree(sub, g.categories, extra_root_labels=["S"])
    assert m2[0, 2, g.categories["S"]] and m2[0, 2, g.categories["VP"]] and not m2[0, 1, g.categories["VP"]]
    with pytest.raises(InputError, match="not categories"):
        mask_from_tree(Tree("ZZ", ("saw",)), g.categories)
    with pytest.raises(InputError, match="not categories"):
        tree_pruning(Tree("ZZ", ("saw",)), g.categories)


def test_beam_and_threshold():
    g = pp_grammar()
    words = "fish saw I with fish with fish".split()
    lex = g.lexical_input(words)
    chart = inside(g, lex, prune=Pruning(beam=1))
    assert chart.post_len.max() == 1
    full = inside(g, lex)
    thr = inside(g, lex, prune=Pruning(threshold=1.0))
    assert thr.num_entries < full.num_entries
    for i in range(len(words)):
        for j in range(i + 1, len(words) + 1):
            cell_full, cell_thr = full.cell(i, j), thr.cell(i, j)
            if cell_thr:
                assert max(cell_thr.values()) - min(cell_thr.values()) <= 1.0 + 1e-12
            if j - i == 1:  # length-1 cells see no pruned children, so their kept scores are exact
                for s, v in cell_thr.items():
                    assert v == pytest.approx(cell_full[s])
    assert inside(g, lex, prune=Pruning(threshold=1e6)).log_z == pytest.approx(full.log_z)
    with pytest.raises(InputError):
        Pruning(beam=-1)


def test_coarse_to_fine_mask():
    g = pp_grammar()
    words = "fish saw I with fish with fish".split()
    lex = g.lexical_input(words)
    n = len(words)
    post = posteriors(inside(g, lex))
    dense = post.dense(n, len(g.categories))
    for thr in (1e-4, 0.3):
        mask = coarse_to_fine_mask(g, lex, threshold=thr, projection=g)
        assert mask.shape == (n + 1, n + 1, len(g.categories))
        np.testing.assert_array_equal(mask, dense >= thr)
    mask = coarse_to_fine_mask(g, lex, threshold=1e-4, projection=np.arange(g.num_symbols))
    a, b = viterbi(g, lex, words), viterbi(g, lex, words, prune=Pruning(mask=mask))
    assert a.tree == b.tree and a.logp == b.logp
    # a fine grammar whose categories the coarse grammar lacks: those are never pruned
    fine = pp_grammar(category=lambda s: s if s != "PP" else "PPX")
    m2 = coarse_to_fine_mask(g, lex, projection=fine)
    assert m2[:, :, fine.categories["PPX"]].all()
    with pytest.raises(ParseFailure):
        coarse_to_fine_mask(g, g.lexical_input(["with", "with"]), projection=g)
