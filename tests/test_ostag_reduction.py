"""OSTAG -> CFG reduction: language, derivation bijection and probabilities against a brute-force OSTAG
enumerator written independently of the reduction (it applies substitution and adjunction to elementary trees)."""

from __future__ import annotations

import itertools
import math
from functools import lru_cache

import numpy as np
import pytest
from toy_data import P

from treegram.charts import inside, sample, viterbi
from treegram.errors import InputError
from treegram.grammar.cfg import WeightedCFG
from treegram.trees import Tree

from treegram.plugins.ostag.derivation import adjunction_stats, derived_tree, ostag_derivation
from treegram.plugins.ostag.grammar import OSTAG, aux_direction, foot_path


# -- brute force ------------------------------------------------------------------------------------------------

FOOT = Tree("<foot>", ())  # a childless leaf: contributes no words


class Brute:
    """All OSTAG derivations with at most `budget` words, with derived trees and log probabilities.

    Model: at an adjoinable node a stack of k >= 0 auxiliary trees (outermost first) with probability
    p^k (1-p) prod P(a | X), p = padj[label]; a substitution of e at a site labelled X has P(e | X).
    Adjoinable: internal nodes off the spine; with `levels` = k, spine nodes below the root of an auxiliary tree
    adjoined at level d <= k (level 1 = adjoined at an off-spine node)."""

    def __init__(self, initial, auxiliary, padj, levels=0):
        self.initial = initial  # [(tree, prob)]
        self.aux = auxiliary
        self.padj = padj
        self.levels = levels

    def init_options(self, label, budget):
        out = []
        for e, (t, pe) in enumerate(self.initial):
            if t.label != label:
                continue
            for ops, tree, lp in self.node(t, (), None, 0, budget, root_of_aux=False):
                out.append((("init", e, ops), tree, lp + math.log(pe)))
        return out

    def aux_options(self, label, level, budget):
        out = []
        for a, (t, pa) in enumerate(self.aux):
            if t.label != label:
                continue
            path = foot_path(t)
            for ops, tree, lp in self.node(t, (), path, level, budget, root_of_aux=True):
                out.append((("aux", a, ops), tree, lp + math.log(pa)))
        return out

    def node(self, t, addr, spine, level, budget, root_of_aux):
        """Options for the subtree of internal node t: (ops tuple, derived tree (foot = FOOT leaf), logp).

        `spine`: remaining path to the foot if t is on a spine, else None; `level`: the aux tree's level."""
        if budget <= 0:
            return []
        on_spine = spine is not None and not root_of_aux
        adjoinable = (spine is None) or (on_spine and level <= self.levels)
        # children
        kids = t.children
        need = [0 if (isinstance(c, Tree) and c.label.endswith("*")) else 1 for c in kids]
        per_child = []
        for i, c in enumerate(kids):
            b = budget - (sum(need) - need[i])
            sub_spine = spine[1:] if spine and spine[0] == i else None
            if isinstance(c, str):
                per_child.append([((), c, 0.0, 1)])
            elif not c.children:
                if c.label.endswith("*"):
                    per_child.append([((), FOOT, 0.0, 0)])
                else:
                    per_child.append([(((addr + (i,), "sub", (d,)),), tr, lp, len(_words(tr)))
                                      for d, tr, lp in self.init_options(c.label, b)])
            else:
                opts = self.node(c, addr + (i,), sub_spine, level, b, root_of_aux=False)
                per_child.append([(ops, tr, lp, len(_words(tr))) for ops, tr, lp in opts])
        base = []
        for combo in itertools.product(*per_child):
            n = sum(x[3] for x in combo)
            if n > budget:
                continue
            ops = tuple(op for x in combo for op in x[0])
            base.append((ops, Tree(t.label, tuple(x[1] for x in combo)), sum(x[2] for x in combo), n))
        if not adjoinable or t.label not in self.padj:
            return [(ops, tr, lp) for ops, tr, lp, _n in base]
        p = self.padj[t.label]
        aux_level = level + 1 if on_spine else 1
        out = []
        # stacks of auxiliary trees, built inside out: each new one wraps the current result
        frontier = [(ops, tr, lp, n, ()) for ops, tr, lp, n in base]
        while frontier:
            nxt = []
            for ops, tr, lp, n, stack in frontier:
                out.append((tuple(sorted(ops + (((addr, "adj", stack),) if stack else ()))), tr,
                            lp + math.log(1 - p)))
                for d, atr, alp in self.aux_options(t.label, aux_level, budget - n):
                    m = len(_words(atr))
                    if n + m > budget:
                        continue
                    nxt.append((ops, _plug(atr, tr), lp + alp + math.log(p), n + m, (d,) + stack))
            frontier = nxt
        return out


def _words(tree):
    return tree.leaves() if isinstance(tree, Tree) else [tree]


def _plug(aux_tree: Tree, inner) -> Tree:
    """Replace the FOOT leaf of aux_tree's derived tree by `inner` (the foot node takes the inner node's place)."""
    def rec(t):
        if isinstance(t, str):
            return t
        kids = []
        for c in t.children:
            if c is FOOT:
                kids.append(inner)
            else:
                kids.append(rec(c))
        return Tree(t.label, tuple(kids))
    return rec(aux_tree)


# -- exhaustive CFG derivations ---------------------------------------------------------------------------------

def all_cfg_derivations(cfg: WeightedCFG, words):
    wid = cfg.words.ids(words)

    @lru_cache(maxsize=None)
    def derivs(sym, i, j):
        out = []
        if j == i + 1:
            for r in np.flatnonzero((cfg.lex_parent == sym) & (cfg.lex_word == wid[i])).tolist():
                out.append((((0, r, sym, i, j, -1),), cfg.lex_logp[r]))
        for r in np.flatnonzero(cfg.un_parent == sym).tolist():
            c = int(cfg.un_child[r])
            for d, lp in derivs(c, i, j):
                out.append((((1, r, sym, i, j, c),) + d, lp + cfg.un_logp[r]))
        for r in np.flatnonzero(cfg.bin_parent == sym).tolist():
            for k in range(i + 1, j):
                for dl, lpl in derivs(int(cfg.bin_left[r]), i, k):
                    for dr, lpr in derivs(int(cfg.bin_right[r]), k, j):
                        out.append((((2, r, sym, i, j, k),) + dl + dr, lpl + lpr + cfg.bin_logp[r]))
        return tuple(out)

    return [(np.array(d, dtype=np.int64), lp) for d, lp in derivs(cfg.start, 0, len(words))]


def check_bijection(grammar: OSTAG, brute: Brute, strings, start):
    red = grammar.build_cfg()
    total = 0
    for s in strings:
        words = s.split()
        ref = {}
        for d, tr, lp in brute.init_options(start, len(words)):
            if _words(tr) == words:
                assert d not in ref
                ref[d] = (tr, lp)
        got = {}
        for steps, lp in all_cfg_derivations(red.cfg, words):
            d = ostag_derivation(red, steps)
            assert d not in got, f"two CFG derivations map to one OSTAG derivation for {s!r}"
            got[d] = (derived_tree(red, steps, words), lp)
        assert set(got) == set(ref), s
        for d in ref:
            assert got[d][0] == ref[d][0]
            assert got[d][1] == pytest.approx(ref[d][1], abs=1e-9)
        if ref:
            lz = inside(red.cfg, red.cfg.lexical_input(words)).log_z
            assert lz == pytest.approx(np.logaddexp.reduce([v[1] for v in ref.values()]), abs=1e-9)
        total += len(ref)
    return total


# -- the paper's grammars ----------------------------------------------------------------------------------------

FIG3_INIT = ["(S (T x) (T y))"]
FIG3_AUX = ["(T a (T*) a)", "(T b (T*) b)"]


def fig3(padj=0.3, model="ostag1"):
    g = OSTAG([(P(t), 1) for t in FIG3_INIT], [(P(t), c) for t, c in zip(FIG3_AUX, (1, 3))], start="S",
              model=model)
    g.adj_logp[:] = math.log(padj)
    g.noadj_logp[:] = math.log1p(-padj)
    brute = Brute([(P(t), 1.0) for t in FIG3_INIT], [(P(FIG3_AUX[0]), 0.25), (P(FIG3_AUX[1]), 0.75)], {"T": padj})
    return g, brute


def in_fig3_language(words):
    if "x" not in words or "y" not in words:
        return False
    i, j = words.index("x"), words.index("y")
    w = words[:i]
    if words.count("x") != 1 or words.count("y") != 1 or i > j:
        return False
    # w x w^R v y v^R : split the middle part between w^R and v
    mid = words[i + 1:j]
    for cut in range(len(mid) + 1):
        a, b = mid[:cut], mid[cut:]
        if a == w[::-1] and words[j + 1:] == b[::-1] and set(w + b) <= {"a", "b"}:
            return True
    return False


def test_figure3_rules_match_the_paper():
    g, _ = fig3()
    red = g.build_cfg()
    c = red.cfg
    types = np.concatenate([red.rtype["binary"], red.rtype["unary"], red.rtype["lexical"]])
    # 1 initial tree (type 5 at the start), 2 sites (T nodes) x 2 aux trees (type 3), 2 aux x 2 sites spine rules
    assert (types == 5).sum() == 1
    assert (types == 3).sum() == 4
    assert (types == 2).sum() == 8  # the paper's 4 ternary type 2 rules, each binarized into two
    assert c.num_lexical == 4  # x, y and the two word holders a, b


def test_figure3_language_exhaustive():
    g, _ = fig3()
    red = g.build_cfg()
    c = red.cfg
    alphabet = ["a", "b", "x", "y"]
    for n in range(1, 7):
        for words in itertools.product(alphabet, repeat=n):
            words = list(words)
            derivable = inside(c, c.lexical_input(words)).log_z > -np.inf
            assert derivable == in_fig3_language(words), words


def test_figure3_bijection_and_probabilities():
    g, brute = fig3()
    strings = ["x y", "a x a y", "b x b a y a", "a b x b a b y b", "a b x b a y", "a a x a a y", "x b b y b b",
               "a b a x a b a y"]
    assert check_bijection(g, brute, strings, "S") == len(strings)  # unambiguous language: one each


def test_figure3_samples_decode_consistently():
    g, brute = fig3()
    red = g.build_cfg()
    words = "a b x b a b a y a b".split()
    chart = inside(red.cfg, red.cfg.lexical_input(words))
    rng = np.random.default_rng(0)
    ref = {d: lp for d, tr, lp in brute.init_options("S", len(words)) if _words(tr) == words}
    for _ in range(5):
        _t, lp, deriv = sample(chart, rng)
        d = ostag_derivation(red, deriv.steps)
        assert ref[d] == pytest.approx(lp)
    stats = adjunction_stats(red, viterbi(red.cfg, red.cfg.lexical_input(words), words).derivation.steps)
    assert stats["adjunctions"] == 4 and stats["wrap"] == 4


# Figure 4: the palindrome language with k + m elementary trees

def fig4(k, m, padj=0.4):
    init = [f"(S a{i} (T a{i}) a{i})" for i in range(1, k + 1)]
    aux = [f"(T b{j} (T*) b{j})" for j in range(1, m + 1)]
    g = OSTAG([(P(t), 1) for t in init], [(P(t), 1) for t in aux], start="S", model="ostag1")
    g.adj_logp[:] = math.log(padj)
    g.noadj_logp[:] = math.log1p(-padj)
    brute = Brute([(P(t), 1 / k) for t in init], [(P(t), 1 / m) for t in aux], {"T": padj})
    return g, brute, init, aux


def in_pal(words, k, m):
    n = len(words)
    if n < 3 or n % 2 == 0:
        return False
    mid = n // 2
    a = words[0]
    if a not in {f"a{i}" for i in range(1, k + 1)} or words[mid] != a or words[-1] != a:
        return False
    w, wr = words[1:mid], words[mid + 1:-1]
    return w == wr[::-1] and all(x in {f"b{j}" for j in range(1, m + 1)} for x in w)


def test_figure4_palindromes():
    k, m = 2, 3
    g, brute, init, aux = fig4(k, m)
    assert len(g.initial) + len(g.auxiliary) == k + m
    red = g.build_cfg()
    c = red.cfg
    alphabet = [f"a{i}" for i in range(1, k + 1)] + [f"b{j}" for j in range(1, m + 1)]
    for n in (1, 2, 3, 4, 5):
        for words in itertools.product(alphabet, repeat=n):
            words = list(words)
            assert (inside(c, c.lexical_input(words)).log_z > -np.inf) == in_pal(words, k, m), words
    strings = ["a1 a1 a1", "a2 b1 a2 b1 a2", "a1 b3 b2 a1 b2 b3 a1", "a2 b1 b1 b2 a2 b2 b1 b1 a2"]
    assert check_bijection(g, brute, strings, "S") == len(strings)


def test_substitution_and_no_spurious_ambiguity():
    """Adjunction at a substitution site is not a separate derivation from adjunction at the root of the tree
    substituted there: derivation sets match the brute force, which adjoins at internal nodes only."""
    init = ["(S (T) (U y))", "(T x)", "(T (T x) z)", "(U w)"]
    aux = ["(T a (T*))", "(T (T*) b c)", "(U (U*) q)", "(S (S*) e)"]
    g = OSTAG([(P(t), 1) for t in init], [(P(t), 1) for t in aux], start="S", model="ostag1")
    padj = {"T": 0.3, "U": 0.2, "S": 0.1}
    g.adj_logp[:] = [math.log(padj[n]) for n in g.ctx_names]
    g.noadj_logp[:] = [math.log1p(-padj[n]) for n in g.ctx_names]
    sub = {e: math.exp(lp) for e, lp in enumerate(g.sub_logp)}
    auxp = {a: math.exp(lp) for a, lp in enumerate(g.aux_logp)}
    brute = Brute([(P(t), sub[e]) for e, t in enumerate(init)], [(P(t), auxp[a]) for a, t in enumerate(aux)], padj)
    strings = ["x y", "a x y", "x b c y", "a x z y", "x z b c y q", "a a x y e", "x z y q q", "a x b c z y q e"]
    n = check_bijection(g, brute, strings, "S")
    assert n > len(strings)  # ambiguous strings are covered too


def test_internal_binarization_ternary_and_mixed_words():
    init = ["(S (A p) (B q) (C r) (D s))", "(A p)"]
    aux = ["(B u (B*) v w)", "(A (A*) k)"]
    g = OSTAG([(P(t), 1) for t in init], [(P(t), 1) for t in aux], start="S", model="ostag1")
    padj = {"A": 0.25, "B": 0.5}
    g.adj_logp[:] = [math.log(padj[n]) for n in g.ctx_names]
    g.noadj_logp[:] = [math.log1p(-padj[n]) for n in g.ctx_names]
    brute = Brute([(P(init[0]), 1.0), (P(init[1]), 1.0)], [(P(aux[0]), 1.0), (P(aux[1]), 1.0)], padj)
    strings = ["p q r s", "p k q r s", "p u q v w r s", "p k k u u q v w v w r s"]
    assert check_bijection(g, brute, strings, "S") == len(strings)


def test_spine_levels_relaxation():
    """k = 1 allows one level of adjunction on spines below the root; k = 0 forbids it."""
    init = ["(S (T x))"]
    aux = ["(T a (U (T*) c))", "(U d (U*))"]
    padj = {"T": 0.3, "U": 0.4}

    def make(levels):
        g = OSTAG([(P(t), 1) for t in init], [(P(t), 1) for t in aux], start="S", model="ostag1",
                  spine_levels=levels)
        g.adj_logp[:] = [math.log(padj[n]) for n in g.ctx_names]
        g.noadj_logp[:] = [math.log1p(-padj[n]) for n in g.ctx_names]
        return g, Brute([(P(init[0]), 1.0)], [(P(aux[0]), 1.0), (P(aux[1]), 1.0)], padj, levels=levels)

    on_spine = "a d x c"  # U adjoined at the spine node U of the T auxiliary tree
    g0, b0 = make(0)
    c0 = g0.build_cfg().cfg
    assert inside(c0, c0.lexical_input(on_spine.split())).log_z == -np.inf
    g1, b1 = make(1)
    strings = ["x", "a x c", on_spine, "a d d x c", "a a x c c", "a d a d x c c"]
    assert check_bijection(g1, b1, strings, "S") == len(strings)
    g2, b2 = make(2)
    assert check_bijection(g2, b2, ["a d a d x c c"], "S") == 1


def test_bad_elementary_trees():
    with pytest.raises(InputError, match="does not match root"):
        OSTAG([(P("(S x)"), 1)], [(P("(T a (U*))"), 1)], start="S")
    with pytest.raises(InputError, match="feet"):
        OSTAG([(P("(S x)"), 1)], [(P("(T (T*) (T*))"), 1)], start="S")
    with pytest.raises(InputError, match="nothing besides"):
        OSTAG([(P("(S x)"), 1)], [(P("(T (V (T*)))"), 1)], start="S")
    with pytest.raises(InputError, match="has a foot"):
        OSTAG([(P("(S (S*) x)"), 1)], start="S")
    with pytest.raises(InputError, match="unknown OSTAG model"):
        OSTAG([(P("(S x)"), 1)], start="S", model="ostag9")


def test_aux_direction():
    assert aux_direction(P("(NP (NP*) (PP x))")) == "right"
    assert aux_direction(P("(NP (DT x) (NP*))")) == "left"
    assert aux_direction(P("(NP (`` ``) (NP*) ('' ''))")) == "wrap"


def test_word_filter_is_exact():
    """The per-sentence CFG (trees whose words occur in the sentence) gives the same inside score."""
    g, _ = fig3()
    words = "a x a y".split()
    full = g.build_cfg()
    small = g.build_cfg(words=words)
    assert small.cfg.num_rules < full.cfg.num_rules
    a = inside(full.cfg, full.cfg.lexical_input(words)).log_z
    b = inside(small.cfg, small.cfg.lexical_input(words)).log_z
    assert a == pytest.approx(b)
