"""Decoders: from a sentence's chart over a formalism's parsing CFG to one output tree.

Every formalism that parses through the core `WeightedCFG` charts (PCFG, TSG, TIG, ...) gets every decoder
registered through the ``register_decoders`` hook (see `treegram.hookspecs`); `treegram parse --decoder NAME`
picks one.  A model takes part by implementing `ChartModel`:

    chart_input(tokens) -> ChartInput       the CFG, lexical input, pruning (and any per-sentence context)
    derivation_tree(derivation, input)      the back-transform: a CFG derivation -> the output (treebank) tree
    category_tree(tree, input)              finish a tree labelled with the CFG's *categories* (binarized,
                                            annotated labels) into the output tree (drop START, unbinarize, ...)

Core decoders (equations refer to Petrov & Klein 2007, section 4, and Cohn, Blunsom & Goldwater 2010, section 6):

* ``mpd``  - most probable derivation: Viterbi over the transform, argmax_d P(d | w); its back-transformed tree.
* ``mpp``  - most probable parse, approximated by sampling: N derivations drawn exactly from P(d | w) on the
  (pruned) inside chart, each back-transformed; the tree drawn most often wins (ties: the first drawn).
  P(t | w) = sum over d with tree(d) = t of P(d | w), which no chart computes for a TSG (Sima'an 1996), hence
  the Monte Carlo estimate (Bod 1992; Cohn et al. 2010 use the same).
* ``maxrule`` / ``maxrule-sum`` - max-rule-product / max-rule-sum (P&K 2007 eq. 4-5; Cohn et al.'s MER):
  the anchored-rule posteriors
      r(A -> B C, i, k, j) = sum over CFG rules X -> Y Z with cat(X)=A, cat(Y)=B, cat(Z)=C of
                             out_pre(X, i, j) P(X -> Y Z) in_post(Y, i, k) in_post(Z, k, j) / Z(w)
      u(T over B, i, j)    = sum over closure pairs (X => Y*) with cat(X)=T, cat(Y)=B of
                             out_post(X, i, j) closure(X, Y) in_pre(Y, i, j) / Z(w)
      l(A, i)              = sum over lexical entries of symbols X with cat(X)=A of in(X, i, i+1) out(X, i, i+1) / Z
  are computed by one pass over the inside/outside charts on the *categories* (the labels the back-transform
  produces: a TSG fragment's internal nodes count as their labels, Goodman/base/annotation symbols merge), and
  a CKY over them returns the tree maximising the product (``maxrule``) or the sum (``maxrule-sum``) of the
  posteriors of its anchored rules, unary layers (including "no unary": u(A over A)) and preterminals.
  Trees are over the chart's binarized categories, then `ChartModel.category_tree` undoes the binarization.
  A unary chain of more than two distinct categories keeps the middle categories of its most probable member.
  Exact for formalisms whose derived tree is the category projection of the CFG derivation (PCFG, TSG);
  TIG's flattened insertion symbols (category ``~flat``) are spliced into their parents, so an auxiliary
  tree's spine nodes between its root and foot are not recovered (the derived tree of `mpd`/`mpp` has them).
"""

from __future__ import annotations

import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import attrs
import numba
import numpy as np
from numba import types
from numba.typed import Dict

from treegram.charts.chart import Derivation, inside, outside, sample, viterbi
from treegram.charts.kernels import NEG_INF, _find, _put_row
from treegram.charts.pruning import Pruning
from treegram.errors import InputError, ParseFailure
from treegram.grammar.cfg import LexicalInput, WeightedCFG
from treegram.trees.tree import Tree

DEFAULT_SAMPLES = 100


@attrs.frozen(eq=False)
class ChartInput:
    """What a model hands the decoders for one sentence: its parsing CFG, lexical input, optional pruning, the
    words, and any context its back-transform needs.  When the input has no parse, every decoder retries once with
    `retry()`: ``fallback()`` if the model gave one (e.g. OSTAG: its full, untrimmed reduction without pruning,
    when the pruned input was trimmed by the mask), else the same input without its pruning."""

    cfg: WeightedCFG
    lex: LexicalInput
    words: list[str]
    prune: Pruning | None = None
    context: Any = None
    fallback: Any = None  # () -> ChartInput, or None

    def retry(self) -> ChartInput | None:
        if self.fallback is not None:
            return self.fallback()
        if self.prune is not None:
            return attrs.evolve(self, prune=None)
        return None


@runtime_checkable
class ChartModel(Protocol):
    """A model whose parsing goes through the core charts (see the module docstring)."""

    def chart_input(self, tokens: list[str]) -> ChartInput: ...

    def derivation_tree(self, derivation: Derivation, inp: ChartInput) -> Tree: ...

    def category_tree(self, tree: Tree, inp: ChartInput) -> Tree: ...


@attrs.frozen
class Decoder:
    """A registered decoder: `decode(model, tokens, samples=N) -> Tree` (raises ParseFailure if no parse).
    `uses_samples`: whether `samples` means anything to it (`--samples`)."""

    name: str
    description: str
    decode: Any
    uses_samples: bool = False


def _no_parse(tokens) -> ParseFailure:
    return ParseFailure(f"no parse for a sentence of {len(tokens)} words")


def _check(model, tokens) -> ChartInput:
    if not isinstance(model, ChartModel):
        raise InputError(f"a {getattr(model, 'formalism', type(model).__name__)} model does not parse through the "
                         "core charts, so it supports only its own decoder",
                         hint="parse without --decoder")
    if not tokens:
        raise InputError("empty sentence", hint="give at least one token")
    return model.chart_input(list(tokens))


def _inside_chart(inp: ChartInput, tokens) -> tuple[Any, ChartInput]:
    """(inside chart, the input it is over): `inp`'s, else its `retry()` input's; ParseFailure if neither parses."""
    chart = inside(inp.cfg, inp.lex, prune=inp.prune)
    if chart.log_z == -np.inf:
        again = inp.retry()
        if again is not None:
            inp = again
            chart = inside(inp.cfg, inp.lex, prune=inp.prune)
    if chart.log_z == -np.inf:
        raise _no_parse(tokens)
    return chart, inp


# -- MPD -----------------------------------------------------------------------------------------------------

def mpd_derivation(model: ChartModel, tokens: Sequence[str]):
    """(Viterbi result, the ChartInput it is over) of the most probable derivation; ParseFailure if none.  For
    models that analyse the derivation itself (OSTAG's adjunction statistics)."""
    inp = _check(model, tokens)
    result = viterbi(inp.cfg, inp.lex, inp.words, prune=inp.prune)
    if result is None:
        again = inp.retry()
        if again is not None:
            inp = again
            result = viterbi(inp.cfg, inp.lex, inp.words, prune=inp.prune)
    if result is None:
        raise _no_parse(tokens)
    return result, inp


def decode_mpd(model: ChartModel, tokens: Sequence[str], *, samples: int | None = None) -> Tree:
    """Most probable derivation (Viterbi), back-transformed."""
    result, inp = mpd_derivation(model, tokens)
    return model.derivation_tree(result.derivation, inp)


# -- MPP -----------------------------------------------------------------------------------------------------

def sentence_seed(tokens: Sequence[str]) -> int:
    """The sampling seed of a sentence: a function of its words only (same result in any order, any worker)."""
    return zlib.crc32(" ".join(tokens).encode("utf-8"))


def mpp_votes(model: ChartModel, tokens: Sequence[str], samples: int, *, seed: int | None = None
              ) -> tuple[Counter[str], dict[str, Tree]]:
    """(votes per bracketed output tree, tree per bracket string) over `samples` sampled derivations."""
    if samples < 1:
        raise InputError(f"--samples must be >= 1, got {samples}")
    chart, inp = _inside_chart(_check(model, tokens), tokens)
    rng = np.random.default_rng(sentence_seed(tokens) if seed is None else seed)
    votes: Counter[str] = Counter()
    trees: dict[str, Tree] = {}
    for _ in range(samples):
        _t, _lp, deriv = sample(chart, rng, inp.words)
        tree = model.derivation_tree(deriv, inp)
        key = tree.to_bracket()
        votes[key] += 1
        trees.setdefault(key, tree)
    return votes, trees


def decode_mpp(model: ChartModel, tokens: Sequence[str], *, samples: int | None = None) -> Tree:
    """The output tree drawn most often among `samples` derivations sampled from the chart."""
    votes, trees = mpp_votes(model, tokens, samples or DEFAULT_SAMPLES)
    return trees[votes.most_common(1)[0][0]]


# -- max-rule ------------------------------------------------------------------------------------------------

@numba.njit(cache=True)
def _rule_posteriors(n, logz, ncat, category, pre_start, pre_len, pre_sym, pre_score, out_pre,
                     post_start, post_len, post_sym, post_score, out_post,
                     bl_ptr, bl_right, bl_parent, bl_logp, cl_ptr, cl_parent, cl_logw, nsym, min_post):
    """Anchored category-rule posteriors (module docstring): binary rows (cell, split, A, B, C, p) aggregated
    per (cell, split); unary-layer rows (cell, T, B, p, fine top, fine bottom of the most probable member)."""
    # rows of (small) integers and the posterior, all exact in float64
    b_rows = np.empty((1024, 6), np.float64)  # cell, split, A, B, C, p
    nb = 0
    u_rows = np.empty((1024, 6), np.float64)  # cell, T, B, fine top, fine bottom, p
    nu = 0
    rin = np.full(nsym, NEG_INF)
    aout = np.full(nsym, NEG_INF)
    pout = np.full(nsym, NEG_INF)
    # Every term below is at most the posterior of each chart entry it uses (a binary term <= its parent's pre
    # and its children's post posteriors, a unary term <= its top's post and its bottom's pre posterior), so
    # entries with posterior <= min_post / 2 (half: no rounding can matter) are dropped up front: the same terms
    # pass `x > min_post`, in the same order, over a chart that is mostly dead on large transforms (TIG: > 90%
    # of the entries have outside score 0).  Live post entries are compacted per cell (l_*), in chart order.
    lthr = np.log(min_post) + np.log(0.5) + logz
    ncell = (n + 1) * (n + 1)
    l_start = np.zeros(ncell, np.int64)
    l_len = np.zeros(ncell, np.int64)
    nlive = 0
    for q in range(post_sym.shape[0]):
        if out_post[q] + post_score[q] > lthr:
            nlive += 1
    l_sym = np.empty(nlive, np.int64)
    l_score = np.empty(nlive, np.float64)
    m = 0
    for cell in range(ncell):
        l_start[cell] = m
        for q in range(post_start[cell], post_start[cell] + post_len[cell]):
            if out_post[q] + post_score[q] > lthr:
                l_sym[m] = post_sym[q]
                l_score[m] = post_score[q]
                m += 1
        l_len[cell] = m - l_start[cell]
    acc = Dict.empty(key_type=types.int64, value_type=types.float64)
    best = Dict.empty(key_type=types.int64, value_type=types.float64)
    arg = Dict.empty(key_type=types.int64, value_type=types.int64)
    for length in range(1, n + 1):
        for i in range(0, n - length + 1):
            j = i + length
            cell = i * (n + 1) + j
            p0 = pre_start[cell]
            p1 = p0 + pre_len[cell]
            if p1 == p0:
                continue
            # unary layer: post T over pre B
            q0 = post_start[cell]
            q1 = q0 + post_len[cell]
            for q in range(q0, q1):
                pout[post_sym[q]] = out_post[q]
            for p in range(p0, p1):
                if out_pre[p] + pre_score[p] <= lthr:
                    continue
                b = pre_sym[p]
                for c in range(cl_ptr[b], cl_ptr[b + 1]):
                    t = cl_parent[c]
                    ot = pout[t]
                    if ot == NEG_INF:
                        continue
                    x = np.exp(ot + cl_logw[c] + pre_score[p] - logz)
                    if x <= min_post:
                        continue
                    key = category[t] * ncat + category[b]
                    if key in acc:
                        acc[key] += x
                        if x > best[key]:
                            best[key] = x
                            arg[key] = np.int64(t) * nsym + b
                    else:
                        acc[key] = x
                        best[key] = x
                        arg[key] = np.int64(t) * nsym + b
            for key, x in acc.items():
                u_rows = _put_row(u_rows, nu, cell, key // ncat, key % ncat, arg[key] // nsym, arg[key] % nsym, x)
                nu += 1
            for q in range(q0, q1):
                pout[post_sym[q]] = NEG_INF
            acc.clear()
            best.clear()
            arg.clear()
            if length == 1:
                continue
            # binary: pre A over (i, j) -> post B (i, k) post C (k, j)
            for p in range(p0, p1):
                if out_pre[p] + pre_score[p] > lthr:
                    aout[pre_sym[p]] = out_pre[p]
            for k in range(i + 1, j):
                lc = i * (n + 1) + k
                rc = k * (n + 1) + j
                if l_len[lc] == 0 or l_len[rc] == 0:
                    continue
                r0 = l_start[rc]
                r1 = r0 + l_len[rc]
                for r in range(r0, r1):
                    rin[l_sym[r]] = l_score[r]
                for li in range(l_start[lc], l_start[lc] + l_len[lc]):
                    b = l_sym[li]
                    sb = l_score[li]
                    for q in range(bl_ptr[b], bl_ptr[b + 1]):
                        sc = rin[bl_right[q]]
                        if sc == NEG_INF:
                            continue
                        a = bl_parent[q]
                        oa = aout[a]
                        if oa == NEG_INF:
                            continue
                        x = np.exp(oa + bl_logp[q] + sb + sc - logz)
                        if x <= min_post:
                            continue
                        key = (np.int64(category[a]) * ncat + category[b]) * ncat + category[bl_right[q]]
                        if key in acc:
                            acc[key] += x
                        else:
                            acc[key] = x
                for r in range(r0, r1):
                    rin[l_sym[r]] = NEG_INF
                for key, x in acc.items():
                    b_rows = _put_row(b_rows, nb, cell, k, key // (ncat * ncat), (key // ncat) % ncat, key % ncat, x)
                    nb += 1
                acc.clear()
            for p in range(p0, p1):
                aout[pre_sym[p]] = NEG_INF
    return b_rows[:nb], u_rows[:nu]


@numba.njit(cache=True)
def _maxrule_cky(n, use_sum, b_cell, b_split, b_a, b_b, b_c, b_p, u_cell, u_t, u_b, u_p, l_cell, l_a, l_p, ncat):
    """CKY over the anchored category rules (rows sorted by cell length then start): best scores of bottom
    (built by a binary rule or a preterminal) and top (after the unary layer) categories per cell, with
    backpointers (row indices)."""
    bot = Dict.empty(key_type=types.int64, value_type=types.float64)
    bot_bp = Dict.empty(key_type=types.int64, value_type=types.int64)  # >= 0 binary row, < 0: -1 - lexical row
    top = Dict.empty(key_type=types.int64, value_type=types.float64)
    top_bp = Dict.empty(key_type=types.int64, value_type=types.int64)  # unary row
    for r in range(l_cell.shape[0]):
        key = l_cell[r] * ncat + l_a[r]
        s = l_p[r] if use_sum else np.log(l_p[r])
        if key not in bot or s > bot[key]:
            bot[key] = s
            bot_bp[key] = -1 - r
    bi = 0
    ui = 0
    nb = b_cell.shape[0]
    nu = u_cell.shape[0]
    for length in range(1, n + 1):
        for i in range(0, n - length + 1):
            cell = i * (n + 1) + i + length
            while bi < nb and b_cell[bi] == cell:
                lk = (i * (n + 1) + b_split[bi]) * ncat + b_b[bi]
                rk = (b_split[bi] * (n + 1) + i + length) * ncat + b_c[bi]
                if lk in top and rk in top:
                    s = (b_p[bi] if use_sum else np.log(b_p[bi])) + top[lk] + top[rk]
                    key = cell * ncat + b_a[bi]
                    if key not in bot or s > bot[key]:
                        bot[key] = s
                        bot_bp[key] = bi
                bi += 1
            while ui < nu and u_cell[ui] == cell:
                bk = cell * ncat + u_b[ui]
                if bk in bot:
                    s = (u_p[ui] if use_sum else np.log(u_p[ui])) + bot[bk]
                    key = cell * ncat + u_t[ui]
                    if key not in top or s > top[key]:
                        top[key] = s
                        top_bp[key] = ui
                ui += 1
    return bot, bot_bp, top, top_bp


def _order(cells: np.ndarray, n: int) -> np.ndarray:
    """Row order by (cell length, cell start) - the CKY's cell order."""
    i, j = cells // (n + 1), cells % (n + 1)
    return np.lexsort((i, j - i))


@attrs.frozen(eq=False)
class RulePosteriors:
    """Anchored category-rule posteriors of one sentence (see the module docstring)."""

    n: int
    num_categories: int
    binary: dict[str, np.ndarray]  # cell, split, a, b, c, p
    unary: dict[str, np.ndarray]  # cell, t, b, p, fine_top, fine_bottom
    lexical: dict[str, np.ndarray]  # cell, a, p


def rule_posteriors(chart, out=None, *, min_posterior: float = 1e-12) -> RulePosteriors:
    """Category-level anchored rule posteriors from an inside chart (and its outside chart)."""
    cfg, n = chart.cfg, chart.n
    if out is None:
        out = outside(chart, counts=False)
    idx = cfg.index
    cl = idx.closure
    ncat = len(cfg.categories)
    category = np.ascontiguousarray(cfg.category, dtype=np.int64)
    b_rows, u_rows = _rule_posteriors(
        n, chart.log_z, ncat, category, chart.pre_start, chart.pre_len, chart.pre_sym, chart.pre_score, out.out_pre,
        chart.post_start, chart.post_len, chart.post_sym, chart.post_score, out.out_post,
        idx.bl_ptr, idx.bl_right, idx.bl_parent, idx.bl_logp, cl.child_ptr, cl.parent, cl.inside_logw,
        cfg.num_symbols, float(min_posterior))
    # preterminals: pre entries of length-1 cells, summed per category
    cells = np.arange(n) * (n + 1) + np.arange(1, n + 1)
    rows_cell, rows_a, rows_p = [], [], []
    for c in cells.tolist():
        lo, hi = int(chart.pre_start[c]), int(chart.pre_start[c] + chart.pre_len[c])
        if hi == lo:
            continue
        p = np.exp(chart.pre_score[lo:hi] + out.out_pre[lo:hi] - chart.log_z)
        cats = category[chart.pre_sym[lo:hi]]
        summed = np.bincount(cats, weights=p, minlength=ncat)
        live = np.flatnonzero(summed > min_posterior)
        rows_cell.append(np.full(live.shape[0], c, np.int64))
        rows_a.append(live.astype(np.int64))
        rows_p.append(summed[live])
    lexical = {"cell": np.concatenate(rows_cell) if rows_cell else np.zeros(0, np.int64),
               "a": np.concatenate(rows_a) if rows_a else np.zeros(0, np.int64),
               "p": np.concatenate(rows_p) if rows_p else np.zeros(0)}
    b_rows = b_rows[_order(b_rows[:, 0].astype(np.int64), n)]
    u_rows = u_rows[_order(u_rows[:, 0].astype(np.int64), n)]
    binary = {name: b_rows[:, c].astype(np.int64) for c, name in enumerate(("cell", "split", "a", "b", "c"))}
    binary["p"] = b_rows[:, 5].copy()
    unary = {name: u_rows[:, c].astype(np.int64)
             for c, name in enumerate(("cell", "t", "b", "fine_top", "fine_bottom"))}
    unary["p"] = u_rows[:, 5].copy()
    return RulePosteriors(n=n, num_categories=ncat, binary=binary, unary=unary, lexical=lexical)


def _chain_middle(cfg: WeightedCFG, top: int, bottom: int) -> list[int]:
    """Categories strictly between the ends of the most probable unary chain top =>* bottom (consecutive
    repeats merged)."""
    cl = cfg.index.closure
    cats: list[int] = []
    cur, guard = top, 0
    while cur != bottom and guard < cfg.num_symbols:
        lo, hi = int(cl.child_ptr[bottom]), int(cl.child_ptr[bottom + 1])
        k = lo + int(np.searchsorted(cl.parent[lo:hi], cur))
        if k >= hi or cl.parent[k] != cur:
            break
        cur = int(cl.viterbi_next[k])
        if cur < 0 or cur == bottom:
            break
        cats.append(int(cfg.category[cur]))
        guard += 1
    t, b = int(cfg.category[top]), int(cfg.category[bottom])
    out: list[int] = []
    for c in cats:
        if c not in (t, b) and (not out or out[-1] != c):
            out.append(c)
    return out


def max_rule_tree(chart, *, use_sum: bool = False, out=None, words: Sequence[str] | None = None
                  ) -> tuple[Tree, float]:
    """(tree over the chart's categories, its score) maximising the product (or sum) of anchored rule
    posteriors; the root is the start symbol's category.  Raises ParseFailure if the chart has no parse."""
    if chart.log_z == -np.inf:
        raise ParseFailure(f"max-rule: the grammar does not derive this {chart.n}-word sentence")
    cfg, n = chart.cfg, chart.n
    rp = rule_posteriors(chart, out)
    ncat = rp.num_categories
    B, U, L = rp.binary, rp.unary, rp.lexical
    bot, bot_bp, top, top_bp = _maxrule_cky(n, use_sum, B["cell"], B["split"], B["a"], B["b"], B["c"], B["p"],
                                            U["cell"], U["t"], U["b"], U["p"], L["cell"], L["a"], L["p"], ncat)
    root = int(cfg.category[cfg.start])
    rkey = n * ncat + root  # cell (0, n)
    if rkey not in top:
        raise ParseFailure(f"max-rule: no tree over the {n}-word sentence")
    name = cfg.categories.symbol
    leaves = list(words) if words is not None else [f"<w{i}>" for i in range(n)]

    def build_top(i: int, j: int, t: int) -> Tree:
        cell = i * (n + 1) + j
        u = top_bp[cell * ncat + t]
        b = int(U["b"][u])
        node = build_bottom(i, j, b)
        if b != t:
            for c in reversed(_chain_middle(cfg, int(U["fine_top"][u]), int(U["fine_bottom"][u]))):
                node = Tree(name(c), (node,))
            node = Tree(name(t), (node,))
        return node

    def build_bottom(i: int, j: int, a: int) -> Tree:
        cell = i * (n + 1) + j
        r = bot_bp[cell * ncat + a]
        if r < 0:
            return Tree(name(a), (leaves[i],))
        k = int(B["split"][r])
        return Tree(name(a), (build_top(i, k, int(B["b"][r])), build_top(k, j, int(B["c"][r]))))

    return build_top(0, n, root), float(top[rkey])


def decode_maxrule(model: ChartModel, tokens: Sequence[str], *, samples: int | None = None,
                   use_sum: bool = False) -> Tree:
    chart, inp = _inside_chart(_check(model, tokens), tokens)
    tree, _score = max_rule_tree(chart, use_sum=use_sum, words=inp.words)
    return model.category_tree(tree, inp)


def decode_maxrule_sum(model: ChartModel, tokens: Sequence[str], *, samples: int | None = None) -> Tree:
    return decode_maxrule(model, tokens, use_sum=True)


# -- helpers for models ---------------------------------------------------------------------------------------

def splice(tree: Tree, labels) -> Tree:
    """`tree` with every node whose label is in `labels` (a set, or a predicate label -> bool) replaced by its
    children (in place in its parent)."""
    drop = labels if callable(labels) else labels.__contains__

    def rebuild(node):
        if not isinstance(node, Tree):
            return [node]
        kids: list = []
        for c in node.children:
            kids.extend(rebuild(c))
        if drop(node.label):
            return kids
        return [Tree(node.label, tuple(kids))]

    out = rebuild(tree)
    if len(out) != 1 or not isinstance(out[0], Tree):
        raise ValueError("splice removed the root")
    return out[0]


CORE_DECODERS = (
    Decoder("mpd", "most probable derivation (Viterbi over the CFG transform)", decode_mpd),
    Decoder("mpp", "most probable parse among N derivations sampled from the pruned chart (--samples, default "
            f"{DEFAULT_SAMPLES})", decode_mpp, uses_samples=True),
    Decoder("maxrule", "max-rule-product over anchored rule posteriors (inside-outside; Petrov & Klein 2007)",
            decode_maxrule),
    Decoder("maxrule-sum", "max-rule-sum (expected correct rules, Cohn et al. 2010's MER)", decode_maxrule_sum),
)




def get_decoder(name: str) -> Decoder:
    from treegram.plugin_manager import decoders

    found = decoders()
    if name not in found:
        raise InputError(f"unknown decoder {name!r} (installed: {', '.join(sorted(found)) or 'none'})",
                         hint="`treegram plugins` lists the decoders")
    return found[name].obj


def decoder_parse(model, decoder: str = "mpd", samples: int | None = None):
    """`tokens -> Tree` for `model` with the named decoder, checked up front (clear errors for an unknown
    decoder, a model outside the core charts, or --samples with a decoder that draws none)."""
    d = get_decoder(decoder)
    if not isinstance(model, ChartModel):
        raise InputError(f"a {getattr(model, 'formalism', type(model).__name__)} model does not parse through the "
                         "core charts, so --decoder does not apply to it", hint="parse without --decoder")
    if samples is not None:
        if not d.uses_samples:
            raise InputError(f"--samples is for sampling decoders; {d.name!r} draws no samples",
                             hint="use --decoder mpp, or drop --samples")
        if samples < 1:
            raise InputError(f"--samples must be >= 1, got {samples}")
    return lambda tokens: d.decode(model, list(tokens), samples=samples)


def model_decoder(model) -> str | None:
    """The decoder saved in a chart model (its ``default_decoder`` attribute, written by formalisms whose
    benchmarks found a better default than ``mpd``), or None (model files from before the field, or a model outside
    the core charts)."""
    name = getattr(model, "default_decoder", None)
    return name if isinstance(name, str) and name and isinstance(model, ChartModel) else None


def resolve_decoder(model, decoder: str | None = None, samples: int | None = None
                    ) -> tuple[str | None, int | None]:
    """**The one place a decoder is chosen** (issue 28): (decoder name, samples) for parsing with `model` --
    the named `decoder`, else the model's saved one (`model_decoder`, with its ``default_samples`` for a sampling
    decoder, e.g. `train tsg --mpp-samples N`), else ``mpd`` for a chart model.  (None, None): a model outside the
    core charts, which parses with its own ``parse`` (spaCy dependency parses, ...).  `treegram parse`, batch and
    Dask workers, compression's source parse, `Model.parse` and `describe()` all go through this."""
    if decoder is not None:
        return decoder, samples
    saved = model_decoder(model)
    if saved is not None:
        if samples is not None and not get_decoder(saved).uses_samples:
            raise InputError(f"--samples is for sampling decoders; this model's default decoder {saved!r} draws "
                             "none", hint="add --decoder mpp, or drop --samples")
        if samples is None and get_decoder(saved).uses_samples:
            own = getattr(model, "default_samples", None)
            samples = own if isinstance(own, int) and own > 0 else None
        return saved, samples
    if isinstance(model, ChartModel) or samples is not None:
        return "mpd", samples  # --samples with a model outside the charts: decoder_parse says why not
    return None, None


def decoder_label(model) -> str:
    """What `describe()` reports as a model's default decoder: exactly what `resolve_decoder` picks."""
    name, samples = resolve_decoder(model)
    if name is None:
        return "the model's own parse"
    return f"{name} ({samples} samples)" if samples else name


def parse_default(model, decoder: str | None = None, samples: int | None = None, *, cell_beam: float | None = None):
    """`tokens -> Tree` as `treegram parse` runs it (`resolve_decoder`), checked up front.  Cluster workers and
    compressors build their parser with this too, so every parse with a model decodes the same way.  `cell_beam`
    (`parse --cell-beam`; None: the default, `treegram.option_groups.CELL_BEAM`) is set on the model: the cell beam
    of its exhaustive chart pass (`treegram.charts.pruning.cell_beam`)."""
    if cell_beam is not None:
        if not hasattr(model, "cell_beam"):
            raise InputError(f"a {getattr(model, 'formalism', type(model).__name__)} model has no chart pass to "
                             "prune, so --cell-beam does not apply to it", hint="parse without --cell-beam")
        model.cell_beam = cell_beam
    name, samples = resolve_decoder(model, decoder, samples)
    if name is None:
        return model.parse
    return decoder_parse(model, name, samples)


def default_parse(model, tokens: Sequence[str]) -> Tree:
    """``model.parse(tokens)`` of every chart model: its default decoder (`resolve_decoder`)."""
    name, samples = resolve_decoder(model)
    return get_decoder(name).decode(model, list(tokens), samples=samples)


def decode(model, tokens: Sequence[str], decoder: str = "mpd", *, samples: int | None = None) -> Tree:
    """Parse `tokens` with `model` using the named decoder."""
    return get_decoder(decoder).decode(model, list(tokens), samples=samples)


__all__ = ["CORE_DECODERS", "ChartInput", "ChartModel", "DEFAULT_SAMPLES", "Decoder", "RulePosteriors", "decode",
           "decode_maxrule", "decode_mpd", "decode_mpp", "decoder_label", "decoder_parse", "default_parse", "get_decoder",
           "max_rule_tree", "model_decoder", "mpd_derivation", "mpp_votes", "parse_default", "resolve_decoder",
           "rule_posteriors", "sentence_seed", "splice"]
