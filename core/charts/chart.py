"""Generic chart decoders over a `WeightedCFG`: Viterbi, inside/outside, posteriors, expected counts, sampling.

All formalisms parse through these (via their CFG transform), so results are reported in grammar terms: a
`Derivation` lists the CFG rules used, with spans, which a formalism maps back to its own derivation.

Failure convention: `viterbi` returns None when the start symbol does not cover the sentence; `inside` returns
a chart whose `log_z` is -inf; `outside`, `sample` and `coarse_to_fine_mask` raise ParseFailure on such a chart.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, NamedTuple

import attrs
import numpy as np

from treegram.charts import kernels as K
from treegram.errors import InputError, ParseFailure
from treegram.grammar.cfg import LexicalInput, WeightedCFG
from treegram.trees.tree import Tree

if TYPE_CHECKING:  # a mask is passed in; pruning.py runs coarse charts, so it imports this module
    from treegram.charts.pruning import Pruning

KIND_NAMES = ("lexical", "unary", "binary")


class RuleUse(NamedTuple):
    """One CFG rule in a derivation: kind ('lexical' | 'unary' | 'binary'), its index in the grammar's arrays of
    that kind (-1 for a lexical entry supplied from outside the grammar), parent symbol id, span [start, end),
    and aux = lexical-input entry index / unary child symbol / binary split point."""

    kind: str
    rule: int
    parent: int
    start: int
    end: int
    aux: int


@attrs.frozen(eq=False)
class Derivation:
    """A CFG derivation as pre-order rows (kind, rule, parent, start, end, aux) - see `RuleUse`."""

    steps: np.ndarray  # int64 (m, 6)

    def __len__(self) -> int:
        return int(self.steps.shape[0])

    def __iter__(self) -> Iterator[RuleUse]:
        for kind, rule, parent, start, end, aux in self.steps.tolist():
            yield RuleUse(KIND_NAMES[kind], rule, parent, start, end, aux)

    def rules(self, kind: str) -> np.ndarray:
        """Indices of the grammar rules of one kind used (with repetition)."""
        return self.steps[self.steps[:, 0] == KIND_NAMES.index(kind), 1]

    def logp(self, cfg: WeightedCFG, lex: LexicalInput) -> float:
        """Sum of the rule log probabilities (lexical steps score their lexical-input entry)."""
        s = self.steps
        kinds = s[:, 0]
        return float(cfg.bin_logp[s[kinds == K.KIND_BINARY, 1]].sum() + cfg.un_logp[s[kinds == K.KIND_UNARY, 1]].sum()
                     + lex.logp[s[kinds == K.KIND_LEXICAL, 5]].sum())

    def build(self, leaf, inner):
        """Assemble the pre-order steps into a tree: ``leaf(symbol, start)`` makes the node of a lexical step,
        ``inner(symbol, children)`` that of a unary or binary step (children: a list, in order)."""
        stack: list[tuple[int, int, list]] = []
        root = None
        for kind, _rule, parent, start, _end, _aux in self.steps.tolist():
            if kind != K.KIND_LEXICAL:
                stack.append((parent, 1 if kind == K.KIND_UNARY else 2, []))
                continue
            node = leaf(parent, start)
            while stack:
                sym, need, kids = stack[-1]
                kids.append(node)
                if len(kids) < need:
                    break
                stack.pop()
                node = inner(sym, kids)
            else:
                root = node
        if root is None or stack:
            raise ValueError("derivation steps do not form a complete tree")
        return root

    def to_tree(self, cfg: WeightedCFG, words: Sequence[str]) -> Tree:
        """The derived tree, labelled with grammar symbols, `words` at the leaves, unary chains expanded."""
        name = cfg.nonterminals.symbol
        return self.build(lambda sym, start: Tree(name(sym), (words[start],)),
                          lambda sym, kids: Tree(name(sym), tuple(kids)))


@attrs.frozen(eq=False)
class ViterbiParse:
    logp: float
    derivation: Derivation
    tree: Tree

    def rules_used(self) -> list[RuleUse]:
        return list(self.derivation)


@attrs.frozen(eq=False)
class InsideChart:
    """Inside scores over all spans (see `kernels` for the layout); `log_z` is -inf if there is no parse."""

    cfg: WeightedCFG
    lex: LexicalInput
    n: int
    log_z: float
    pre_start: np.ndarray
    pre_len: np.ndarray
    pre_sym: np.ndarray
    pre_score: np.ndarray
    post_start: np.ndarray
    post_len: np.ndarray
    post_sym: np.ndarray
    post_score: np.ndarray

    def cell(self, i: int, j: int) -> dict[str, float]:
        """{symbol name: inside log score} of span (i, j) after unary closure (for inspection and tests)."""
        c = i * (self.n + 1) + j
        lo, hi = self.post_start[c], self.post_start[c] + self.post_len[c]
        name = self.cfg.nonterminals.symbol
        return {name(int(s)): float(v) for s, v in zip(self.post_sym[lo:hi], self.post_score[lo:hi])}

    def score(self, symbol: int | str, i: int, j: int) -> float:
        s = self.cfg.nonterminals[symbol] if isinstance(symbol, str) else int(symbol)
        c = i * (self.n + 1) + j
        lo, hi = int(self.post_start[c]), int(self.post_start[c] + self.post_len[c])
        k = K._find(self.post_sym, lo, hi, s)
        return float(self.post_score[k]) if k >= 0 else float("-inf")

    @property
    def num_entries(self) -> int:
        return int(self.post_sym.shape[0])

@attrs.frozen(eq=False)
class OutsideChart:
    """Outside scores aligned with an inside chart's entries, plus expected counts (if computed)."""

    chart: InsideChart
    out_pre: np.ndarray
    out_post: np.ndarray
    out_mid: np.ndarray
    bin_counts: np.ndarray | None
    un_counts: np.ndarray | None
    lex_counts: np.ndarray | None
    lex_entry_posterior: np.ndarray  # posterior of each lexical-input entry
    # every (cell, symbol) with a node in some derivation, in any unary-chain role (top, middle or bottom -
    # middle and bottom symbols need not be post entries when masks differ), with its log posterior
    mid_cell: np.ndarray  # cell id i * (n + 1) + j
    mid_sym: np.ndarray
    mid_logpost: np.ndarray


@attrs.frozen(eq=False)
class SpanPosteriors:
    """Sparse posteriors: parallel arrays start, end, ids (symbol or category id), prob."""

    start: np.ndarray
    end: np.ndarray
    ids: np.ndarray
    prob: np.ndarray

    def dense(self, n: int, size: int) -> np.ndarray:
        out = np.zeros((n + 1, n + 1, size))
        np.add.at(out, (self.start, self.end, self.ids), self.prob)
        return out


# -- helpers -----------------------------------------------------------------------------------

def _check_lex(cfg: WeightedCFG, lex: LexicalInput) -> None:
    if not isinstance(lex, LexicalInput):
        raise InputError(f"expected a LexicalInput, got {type(lex).__name__}",
                         hint="use cfg.lexical_input(tokens) or LexicalInput.from_triples")
    if len(lex) and int(lex.symbol.max()) >= cfg.num_symbols:
        raise InputError("lexical input mentions a symbol id the grammar does not have")
    if len(lex) and (lex.rule.max() >= cfg.num_lexical):
        raise InputError("lexical input mentions a lexical rule index the grammar does not have")


_LOOKAHEAD: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def parent_lookahead(cfg: WeightedCFG) -> tuple[np.ndarray, np.ndarray]:
    """(side, parent category) per symbol of `cfg` (computed once per grammar): side 1 / 2 when every use of the
    symbol as a child is as the left / right child of binary rules whose parents share one category (then that
    category), and it is never a unary child nor the start symbol; side 0 (no constraint) otherwise.  On a TSG's
    Goodman transform every fragment-internal node symbol has side 1 or 2: its one parent in its fragment."""
    got = _LOOKAHEAD.get(cfg)
    if got is None:
        nsym = cfg.num_symbols
        cat = np.asarray(cfg.category, np.int64)
        side = np.zeros(nsym, np.int8)
        pcat = np.zeros(nsym, np.int64)
        nuses = np.zeros((2, nsym), np.int64)
        lo = np.full(nsym, np.iinfo(np.int64).max)
        hi = np.full(nsym, -1)
        for k, child in enumerate((cfg.bin_left, cfg.bin_right)):
            child = np.asarray(child, np.int64)
            pc = cat[np.asarray(cfg.bin_parent, np.int64)]
            nuses[k] = np.bincount(child, minlength=nsym)
            np.minimum.at(lo, child, pc)
            np.maximum.at(hi, child, pc)
        one = (lo == hi) & (np.bincount(np.asarray(cfg.un_child, np.int64), minlength=nsym) == 0)
        one[cfg.start] = False
        side[one & (nuses[0] > 0) & (nuses[1] == 0)] = 1
        side[one & (nuses[1] > 0) & (nuses[0] == 0)] = 2
        pcat[side > 0] = lo[side > 0]
        got = (side, pcat)
        _LOOKAHEAD[cfg] = got
    return got


def _enclosing(pre_mask: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ext_left, ext_right): ext_left[i, j, c] = pre_mask[i', j, c] for some i' < i (a parent span with this span
    as its right part), ext_right[i, j, c] = pre_mask[i, j', c] for some j' > j (this span as its left part)."""
    ext_left = np.zeros_like(pre_mask)
    ext_left[1:] = np.logical_or.accumulate(pre_mask[:-1], axis=0)
    ext_right = np.zeros_like(pre_mask)
    ext_right[:, :-1] = np.logical_or.accumulate(pre_mask[:, :0:-1], axis=1)[:, ::-1]
    return ext_left, ext_right


def _fill(cfg: WeightedCFG, lex: LexicalInput, mode: int, prune: Pruning | None):
    _check_lex(cfg, lex)
    idx = cfg.index
    cl = idx.closure
    n = lex.n
    masks = prune.layer_masks(n, len(cfg.categories)) if prune is not None else None
    off = np.ones((1, 1, 1), dtype=np.bool_)
    look_side, look_cat = parent_lookahead(cfg)
    ext_left = ext_right = off
    if masks is None:
        pre_mask = post_mask = off
        cell_any = np.ones((1, 1), dtype=np.bool_)
    else:
        pre_mask, post_mask = masks
        cell_any = pre_mask.any(axis=2)
        ext_left, ext_right = _enclosing(pre_mask)
    beam = int(prune.beam) if prune is not None else 0
    threshold = float(prune.threshold) if prune is not None else np.inf
    weights = cl.viterbi_logw if mode == 0 else cl.inside_logw
    return K.fill_chart(mode, n, cfg.num_symbols, lex.ptr, lex.symbol, lex.logp,
                        idx.bl_ptr, idx.bl_right, idx.bl_parent, idx.bl_logp, idx.bl_rule,
                        cl.child_ptr, cl.parent, weights, cfg.category, masks is not None, pre_mask,
                        post_mask, cell_any, beam, threshold, masks is not None, look_side, look_cat,
                        ext_left, ext_right)


# -- decoders ----------------------------------------------------------------------------------

def viterbi(cfg: WeightedCFG, lex: LexicalInput, words: Sequence[str] | None = None, *,
            prune: Pruning | None = None) -> ViterbiParse | None:
    """The best derivation of the start symbol over the sentence, or None if there is none.

    `words` label the leaves of the returned tree (default: the grammar's words of the lexical rules used, or
    '<w{i}>' for entries supplied from outside).
    """
    if lex.n == 0:
        return None
    (pre_start, pre_len, pre_sym, pre_score, pre_rule, pre_split,
     post_start, post_len, post_sym, post_score, post_child) = _fill(cfg, lex, 0, prune)
    idx = cfg.index
    cl = idx.closure
    steps = K.viterbi_backtrace(lex.n, cfg.start, pre_start, pre_len, pre_sym, pre_rule, pre_split,
                                post_start, post_len, post_sym, post_child,
                                cfg.bin_left, cfg.bin_right, cl.child_ptr, cl.parent, cl.viterbi_next,
                                cl.viterbi_rule, lex.rule)
    if steps.shape[0] == 0:
        return None
    root = lex.n
    logp = float(post_score[K._find(post_sym, post_start[root], post_start[root] + post_len[root], cfg.start)])
    deriv = Derivation(steps)
    return ViterbiParse(logp=logp, derivation=deriv, tree=deriv.to_tree(cfg, _leaf_words(cfg, lex, words, deriv)))


def _leaf_words(cfg: WeightedCFG, lex: LexicalInput, words: Sequence[str] | None, deriv: Derivation):
    if words is not None:
        if len(words) != lex.n:
            raise InputError(f"{len(words)} words given for a {lex.n}-position lexical input")
        return list(words)
    out = [f"<w{i}>" for i in range(lex.n)]
    for kind, rule, _p, start, _e, _aux in deriv.steps.tolist():
        if kind == K.KIND_LEXICAL and rule >= 0:
            out[start] = cfg.words.symbol(int(cfg.lex_word[rule]))
    return out


def inside(cfg: WeightedCFG, lex: LexicalInput, *, prune: Pruning | None = None) -> InsideChart:
    """Inside log scores of every (span, symbol) the chart keeps; `log_z` sums all derivations of the start."""
    if lex.n == 0:
        raise InputError("cannot build a chart for an empty sentence")
    (pre_start, pre_len, pre_sym, pre_score, _rule, _split,
     post_start, post_len, post_sym, post_score, _child) = _fill(cfg, lex, 1, prune)
    root = lex.n
    k = K._find(post_sym, post_start[root], post_start[root] + post_len[root], cfg.start)
    log_z = float(post_score[k]) if k >= 0 else float("-inf")
    return InsideChart(cfg=cfg, lex=lex, n=lex.n, log_z=log_z, pre_start=pre_start, pre_len=pre_len,
                       pre_sym=pre_sym, pre_score=pre_score, post_start=post_start, post_len=post_len,
                       post_sym=post_sym, post_score=post_score)


def _require_parse(chart: InsideChart, what: str) -> None:
    if chart.log_z == -np.inf:
        raise ParseFailure(f"{what}: the grammar does not derive this {chart.n}-word sentence (inside = 0)",
                           hint="check lexical coverage (unknown words) or loosen the pruning")


def outside(chart: InsideChart, *, counts: bool = True) -> OutsideChart:
    """Outside scores for `chart` (and expected rule counts unless counts=False)."""
    _require_parse(chart, "outside")
    cfg, lex, idx = chart.cfg, chart.lex, chart.cfg.index
    cl = idx.closure
    out_pre, out_post, out_mid, bc, uc, lc, ep, mid_cell, mid_sym, mid_lp = K.outside_pass(
        chart.n, cfg.num_symbols, cfg.start, chart.log_z, counts,
        chart.pre_start, chart.pre_len, chart.pre_sym, chart.pre_score,
        chart.post_start, chart.post_len, chart.post_sym, chart.post_score,
        lex.ptr, lex.symbol, lex.logp, lex.rule, cfg.num_lexical,
        idx.bl_ptr, idx.bl_right, idx.bl_parent, idx.bl_logp, idx.bl_rule, cfg.num_binary,
        idx.up_ptr, idx.up_child, idx.up_logp, idx.up_rule, cfg.num_unary,
        cl.child_ptr, cl.parent, cl.inside_logw, cl.parent_ptr, idx.cp_child, idx.cp_inside_logw)
    return OutsideChart(chart=chart, out_pre=out_pre, out_post=out_post, out_mid=out_mid,
                        bin_counts=bc if counts else None, un_counts=uc if counts else None,
                        lex_counts=lc if counts else None, lex_entry_posterior=ep,
                        mid_cell=mid_cell, mid_sym=mid_sym, mid_logpost=mid_lp)


def expected_counts(chart: InsideChart, out: OutsideChart | None = None
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Expected number of uses of every rule, (binary, unary, lexical), aligned with the cfg's rule arrays.

    Lexical entries supplied from outside the grammar (rule -1) are not counted here; their posteriors are in
    `OutsideChart.lex_entry_posterior`.
    """
    if out is None or out.bin_counts is None:
        out = outside(chart, counts=True)
    return out.bin_counts, out.un_counts, out.lex_counts


def posteriors(chart: InsideChart, out: OutsideChart | None = None, *, by: str = "category") -> SpanPosteriors:
    """P(a node labelled with the symbol/category spans (i, j) | sentence), for every (span, symbol) that
    has a node in some derivation the chart keeps - including symbols in the middle or at the bottom of a unary
    chain that are not post-closure entries (masks check a chain's ends only, see charts/pruning.py).

    A symbol's posterior counts every role it has on the span (chain top, middle or bottom); summed over a
    category, or for a symbol that occurs twice on one unary chain, the value is an expected count and may
    exceed 1.
    """
    if by not in ("category", "symbol"):
        raise ValueError("by must be 'category' or 'symbol'")
    if out is None:
        out = outside(chart, counts=False)
    start, end = out.mid_cell // (chart.n + 1), out.mid_cell % (chart.n + 1)
    start, end = start.astype(np.int64), end.astype(np.int64)
    prob = np.exp(out.mid_logpost)
    ids = out.mid_sym.astype(np.int64)
    live = prob > 0
    start, end, ids, prob = start[live], end[live], ids[live], prob[live]
    if by == "category":
        ids = chart.cfg.category[ids].astype(np.int64)
        ncat = len(chart.cfg.categories)
        key = (start * (chart.n + 1) + end) * ncat + ids
        uniq, inv = np.unique(key, return_inverse=True)
        summed = np.zeros(uniq.shape[0])
        np.add.at(summed, inv, prob)
        ids = uniq % ncat
        cell = uniq // ncat
        start, end, prob = cell // (chart.n + 1), cell % (chart.n + 1), summed
    return SpanPosteriors(start=start, end=end, ids=ids, prob=prob)


def sample(chart: InsideChart, rng: np.random.Generator, words: Sequence[str] | None = None
           ) -> tuple[Tree, float, Derivation]:
    """One derivation drawn exactly from P(d | sentence) = P(d) / Z, top-down through the inside chart.

    Returns (tree, log P(d) under the cfg, derivation).  Deterministic given the generator's state.
    """
    _require_parse(chart, "sample")
    if not isinstance(rng, np.random.Generator):
        raise TypeError("sample needs a numpy.random.Generator (np.random.default_rng(seed))")
    cfg, lex, idx = chart.cfg, chart.lex, chart.cfg.index
    cl = idx.closure
    u = rng.random(8 * chart.n + 16)
    while True:
        steps, logp, used = K.sample_derivation(
            chart.n, cfg.start, u, chart.pre_start, chart.pre_len, chart.pre_sym, chart.pre_score,
            chart.post_start, chart.post_len, chart.post_sym, chart.post_score,
            lex.ptr, lex.symbol, lex.logp, lex.rule,
            idx.bp_ptr, idx.bp_left, idx.bp_right, idx.bp_logp, idx.bp_rule,
            idx.up_ptr, idx.up_child, idx.up_logp, idx.up_rule,
            cl.child_ptr, cl.parent, cl.inside_logw, cl.parent_ptr, idx.cp_child, idx.cp_inside_logw,
            cfg.num_symbols)
        if used >= 0:
            break
        u = np.concatenate([u, rng.random(u.shape[0])])  # same prefix, so the replay is the same draw
    deriv = Derivation(steps)
    return deriv.to_tree(cfg, _leaf_words(cfg, lex, words, deriv)), float(logp), deriv
