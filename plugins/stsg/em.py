"""EM and variational-Bayes baselines over a fixed extracted rule set (Yamangil & Shieber 2010, sections 4 and 4.3).

Rule extraction follows Cohn & Lapata (2007): the maximally general (minimal) rules of the derivation in which every
alignable source node is aligned (`model.maximal_alignment`), plus the composed rules obtained by joining a minimal
rule with one of the minimal rules below it, pruned of singletons and of compositions with more than 3 target
variables.  Each training pair's derivation forest is the set of derivations using only these rules; EM runs
inside-outside over it:

    MAP-EM   theta_{c,e} = (n_{c,e} + alpha - 1) / (n_{c,.} + K alpha - K)
    VB       theta_{c,e} = exp(digamma(n_{c,e} + alpha_c P0(e|c))) / exp(digamma(n_{c,.} + alpha_c))

with n the expected counts of the E-step, computed by inside-outside on the core tree chart
(`treegram.charts.treechart`).  The result is a `FiniteSTSG` for the same decoder the Gibbs sampler uses.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from treegram.charts.treechart import TreeChart, TreeChartBuilder
from treegram.errors import TreegramError

from treegram.plugins.stsg import kernels as K
from treegram.plugins.stsg.grammar import FiniteSTSG
from treegram.plugins.stsg.model import PairCorpus, fragment_pair, maximal_alignment

__all__ = ["digamma", "ExtractedForest", "train_em"]


def digamma(x: float) -> float:
    """psi(x) for x > 0: recurrence up to x >= 10, then the asymptotic series (error < 1e-13)."""
    if x <= 0:
        raise ValueError("digamma needs x > 0")
    out = 0.0
    while x < 10.0:
        out -= 1.0 / x
        x += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    return out + math.log(x) - 0.5 * inv - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (1 / 252 - inv2 * (
        1 / 240 - inv2 / 132))))


class ExtractedForest:
    """Minimal + composed rules of a corpus and, per sentence, the derivation forest over them."""

    def __init__(self, corpus: PairCorpus, *, min_count: int = 2, max_vars: int = 3):
        self.corpus = c = corpus
        a = maximal_alignment(corpus)
        self.a = a
        G = c.G()
        stack = np.zeros(4 * c.max_nodes + 16, dtype=np.int64)
        ftgt = np.zeros(c.max_nodes + 16, dtype=np.int64)
        lb, ls = math.log(c.beta), math.log1p(-c.beta)

        def info(r):
            return K.frag(r, a, c.s_label, c.s_word, c.s_cstart, c.s_children, c.s_lp, c.t_label, c.t_word,
                          c.t_cstart, c.t_children, c.t_lp, lb, ls, c.n_labels, stack, ftgt)

        aligned = np.flatnonzero(a != K.UNAL)
        is_aligned = a != K.UNAL
        # frontier of each aligned node's minimal rule: its closest aligned descendants
        frontier: dict[int, list[int]] = {}
        for r in aligned:
            out, todo = [], list(c.s_children[c.s_cstart[r]:c.s_cstart[r + 1]])
            while todo:
                v = todo.pop()
                if is_aligned[v]:
                    out.append(int(v))
                else:
                    todo.extend(c.s_children[c.s_cstart[v]:c.s_cstart[v + 1]])
            frontier[int(r)] = out
        self.frontier = frontier
        # pass 1: count minimal and composed rules (by hash), remembering category, base probability, an example
        seen: dict[int, tuple[int, float, tuple[int, int]]] = {}
        minimal_count: Counter = Counter()
        composed_count: Counter = Counter()
        minimal_of: dict[int, int] = {}
        composed: list[tuple[int, int, list[int]]] = []  # (root, hash, frontier) of each composition
        for r in aligned:
            r = int(r)
            h, lp, cat, _ = info(r)
            h = int(h)
            seen.setdefault(h, (int(cat), float(lp), (r, -1)))
            minimal_count[h] += 1
            minimal_of[r] = h
            for i in frontier[r]:
                fr = [v for v in frontier[r] if v != i] + frontier[i]
                if int(np.count_nonzero(a[fr] >= 0)) > max_vars:
                    continue
                saved = a[i]
                a[i] = K.UNAL
                h2, lp2, cat2, _ = info(r)
                a[i] = saved
                h2 = int(h2)
                seen.setdefault(h2, (int(cat2), float(lp2), (r, i)))
                composed_count[h2] += 1
                composed.append((r, h2, fr))
        # pass 2: the rule set (minimal rules + composed rules seen at least min_count times) and the forests
        final_id: dict[int, int] = {}
        for h in list(minimal_count) + [h for h, n in composed_count.items() if n >= min_count]:
            if h not in final_id:
                final_id[h] = len(final_id)
        self.cat = np.array([seen[h][0] for h in final_id], dtype=np.int64)
        self.lp0 = np.array([seen[h][1] for h in final_id], dtype=np.float64)
        self.examples = [seen[h][2] for h in final_id]
        self.cands: dict[int, list[tuple[int, list[int]]]] = {
            int(r): [(final_id[minimal_of[int(r)]], frontier[int(r)])] for r in aligned}
        for r, h2, fr in composed:
            if h2 in final_id and final_id[h2] != self.cands[r][0][0]:
                self.cands[r].append((final_id[h2], fr))
        self.n_minimal = len(minimal_count)
        self.n_composed = len(final_id) - len(minimal_count)
        self.order = [int(r) for r in aligned]  # preorder: parents before children
        self._chart: TreeChart | None = None

    @property
    def num_rules(self) -> int:
        return len(self.cat)

    def chart(self) -> TreeChart:
        """The derivation forests of the whole corpus as one tree chart (built once): aligned source nodes are the
        items (a single category: the target side is fixed by the alignment), candidate rules the applications."""
        if self._chart is None:
            b = TreeChartBuilder(len(self.corpus.s_label), 1, roots=self.corpus.roots)
            for r in self.order:
                for rid, fr in self.cands[r]:
                    b.add(r, 0, rid, 0.0, [(v, 0) for v in fr])
            self._chart = b.build(self.num_rules)
        return self._chart

    def fragment(self, rid: int):
        r, i = self.examples[rid]
        a = self.a
        if i >= 0:
            saved = a[i]
            a[i] = K.UNAL
            f = fragment_pair(self.corpus, a, r)
            a[i] = saved
            return f
        return fragment_pair(self.corpus, a, r)


def expected_counts(forest: ExtractedForest, log_theta: np.ndarray) -> tuple[np.ndarray, float]:
    """E-step: expected rule counts and the corpus log likelihood (inside-outside over each derivation forest, on
    the core tree chart: one item per aligned source node, one application per candidate rule)."""
    chart = forest.chart()
    ins = chart.inside(0, rule_scores=log_theta)
    _, counts, _ = chart.expected_counts(ins)
    return counts, ins.total()


def train_em(corpus: PairCorpus, *, method: str = "em", iterations: int = 30, alpha_em: float = 1.0001,
             alpha_vb: float = 100.0, delta: float = 1.01, forest: ExtractedForest | None = None,
             progress=None) -> tuple[FiniteSTSG, dict]:
    """Train MAP-EM (method="em") or VB ("vb") and return the decoding grammar plus a log."""
    if method not in ("em", "vb"):
        raise TreegramError(f"unknown method {method!r}", hint="use em or vb")
    forest = forest or ExtractedForest(corpus)
    n_rules = forest.num_rules
    cat = forest.cat
    n_cat = int(cat.max()) + 1 if n_rules else 1
    k_c = np.bincount(cat, minlength=n_cat).astype(float)
    log_theta = -np.log(k_c[cat])  # uniform initialisation
    trace = []
    counts = np.zeros(n_rules)
    steps = range(iterations)
    if progress:
        steps = progress(steps)
    for _ in steps:
        counts, ll = expected_counts(forest, log_theta)
        n_c = np.bincount(cat, weights=counts, minlength=n_cat)
        if method == "em":
            num = counts + alpha_em - 1.0
            den = n_c + k_c * (alpha_em - 1.0)
            log_theta = np.log(np.maximum(num, 1e-300)) - np.log(den[cat])
        else:
            pseudo = alpha_vb * np.exp(forest.lp0)
            log_theta = np.array([digamma(n + p) if n + p > 0 else -745.0 for n, p in zip(counts, pseudo)])
            log_theta -= np.array([digamma(x + alpha_vb) for x in n_c])[cat]
        trace.append({"log_likelihood": ll})
    # decoding grammar: learned weights + add-(delta - 1) smoothed copy/delete rules for every CFG production
    frags = [forest.fragment(i) for i in range(n_rules)]
    if method == "em":
        grammar = FiniteSTSG.from_counts(list(zip(frags, counts)), corpus.sources, pseudo=delta - 1.0)
    else:
        base = FiniteSTSG.from_counts(list(zip(frags, counts)), corpus.sources, pseudo=delta - 1.0)
        vb_lp = {str(f): lp for f, lp in zip(frags, log_theta)}
        rules = [(_frag_of(r), vb_lp.get(r.text, r.logp), r.count) for r in base.rules]
        grammar = FiniteSTSG.from_logprobs(rules, unseen=base.unseen_logp, default_unseen=base.default_unseen)
    info = {"rules": n_rules, "minimal_rules": forest.n_minimal, "composed_rules": forest.n_composed,
            "iterations": iterations, "final_log_likelihood": trace[-1]["log_likelihood"] if trace else None,
            "trace": trace}
    return grammar, info


def _frag_of(rule):
    from treegram.plugins.stsg.model import Fragment

    return Fragment(rule.source, rule.target)
