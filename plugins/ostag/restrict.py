"""Exact per-sentence trimming of a reduction before the chart is built (parse speed).

The reduction of one sentence has (spine nodes x adjunction sites) pair symbols, and the decoder's unary closure
over all of them dominated parse time.  Most of them can take part in no parse of the sentence that the
coarse-to-fine mask allows, and dropping them (with every rule that mentions them) changes no chart entry that
the decoders can use:

* symbols that derive no string of the sentence's words (`min_yield` is infinite: not productive from the
  lexical symbols of its words, the unknown-word tags included);
* symbols that are always *checked* by the mask (never the middle of a unary chain: not both the parent and the
  child of unary rules) whose shortest possible yield is longer than every span their category is allowed on.

Both are sound over-approximations (a superset of lexical symbols only lowers `min_yield`), so Viterbi scores and
trees are unchanged (tests/test_ostag_model.py compares with and without on dev-like sentences).
"""

from __future__ import annotations

import numba as nb
import numpy as np

INF = np.iinfo(np.int64).max // 4


@nb.njit(cache=True)
def _min_yield(nsym, base, bp, bl, br, up, uc):  # pragma: no cover - numba
    """Shortest yield (in words) of every symbol; INF if it derives no string over the base symbols."""
    ml = np.full(nsym, INF, np.int64)
    for s in base:
        ml[s] = 1
    changed = True
    while changed:
        changed = False
        for r in range(bp.shape[0]):
            a, b = ml[bl[r]], ml[br[r]]
            if a < INF and b < INF and a + b < ml[bp[r]]:
                ml[bp[r]] = a + b
                changed = True
        for r in range(up.shape[0]):
            if ml[uc[r]] < ml[up[r]]:
                ml[up[r]] = ml[uc[r]]
                changed = True
    return ml


def max_allowed_length(mask: np.ndarray) -> np.ndarray:
    """Longest span length each category is allowed on by a (n+1, n+1, #categories) mask (0 = nowhere)."""
    n = mask.shape[0] - 1
    i, j = np.triu_indices(n + 1, 1)
    lengths = (j - i)[:, None] * mask[i, j]  # (#spans, #categories)
    return lengths.max(axis=0) if lengths.size else np.zeros(mask.shape[2], np.int64)


def keep_symbols(cfg, base_symbols: np.ndarray, n: int, mask: np.ndarray | None) -> np.ndarray:
    """Bool per symbol: may take part in a parse of an n-word sentence under `mask` (see the module docstring)."""
    i64 = np.int64
    ml = _min_yield(cfg.num_symbols, np.asarray(base_symbols, i64), cfg.bin_parent.astype(i64),
                    cfg.bin_left.astype(i64), cfg.bin_right.astype(i64), cfg.un_parent.astype(i64),
                    cfg.un_child.astype(i64))
    keep = ml <= n
    if mask is not None:
        middle = np.zeros(cfg.num_symbols, bool)
        middle[cfg.un_child] = True
        parent = np.zeros(cfg.num_symbols, bool)
        parent[cfg.un_parent] = True
        middle &= parent
        longest = max_allowed_length(np.asarray(mask, bool))[cfg.category]
        keep &= middle | (ml <= longest)
    keep[cfg.start] = True
    return keep


# -- the site-agnostic coarse pass ---------------------------------------------------------------------------------
#
# The exact reduction has a pair[s, t] symbol for every spine node s and every adjunction site t with the foot's
# label, and its unary closure links every site to every auxiliary root of its label.  The coarse grammar forgets
# which site an auxiliary tree was adjoined at:
#
#     site[X] -> node[root(e)] | ADJ[X]          node[n] -> children, where an adjoinable child c may be ADJ[label(c)]
#     ADJ[X]  -> cpair[root(a)]                  cpair[s] -> children of s, the spine child cpair[c] or FOOT[X]
#     FOOT[X] -> node[t] | ADJ[X]                (t any adjoinable node labelled X: an over-approximation)
#
# Every exact derivation maps to a coarse one with the same spans and categories (pair[s, t] -> cpair[s], an
# adjoined site node[t] -> ADJ[X] at the top and FOOT[X] -> node[t] at the foot), so the mask lets it through
# too.  A coarse inside + outside pass marks every (span, symbol) that lies on some complete coarse derivation;
# the exact reduction then keeps the nodes and spines whose coarse symbol is alive and the sites t whose node[t]
# is alive in a cell where FOOT[label(t)] is: nothing any exact derivation needs is lost, so the Viterbi parse and
# its score are unchanged.  There is no hub of unary rules between sites and auxiliary roots (ADJ variants are
# built into the parents' rules), so the coarse closure stays small.

import attrs  # noqa: E402

from treegram.grammar.cfg import WeightedCFG  # noqa: E402


@attrs.frozen(eq=False)
class CoarseGrammar:
    cfg: WeightedCFG
    node_sym: np.ndarray  # node id -> coarse symbol (node[n] or cpair[s]; -1 if none)
    adj_base: int  # ADJ[X] = adj_base + X
    foot_base: int  # FOOT[X] = foot_base + X
    num_labels: int


def coarse_grammar(g, usable: np.ndarray) -> CoarseGrammar:
    """The site-agnostic coarse grammar of an OSTAG restricted to `usable` nodes (see the comment above)."""
    from treegram.plugins.ostag.grammar import KIND_BINARY, KIND_LEX, KIND_UNARY, NEG, REF_FOOT, REF_NODE, \
        REF_SITE, _Names

    nd = g.nodes
    nlab = len(g.labels)
    alive = NEG / 2
    offs = np.flatnonzero(usable & ~nd.spine)
    aux_ok = np.flatnonzero(usable[g.aux_root] & (g.aux_logp > alive))
    reach = np.zeros(len(nd), bool)
    cur = g.aux_root[aux_ok]
    while cur.size:
        cur = cur[usable[cur]]
        reach[cur] = True
        j = nd.spine_pos[cur]
        k, r = nd.ck[cur, j], nd.cr[cur, j]
        cur = r[k == REF_NODE]
        cur = cur[~reach[cur]]
    spines = np.flatnonzero(reach)
    # the TSG base route (if any) keeps the exact reduction's symbol ids base[X] = nlab + i, so that the unknown-word
    # fallback symbols are the same in both passes
    nb = 0 if g.base is None else len(g.base.labels)
    first = nlab + nb
    sym = np.full(len(nd), -1, np.int64)
    sym[offs] = first + np.arange(offs.size)
    sym[spines] = first + offs.size + np.arange(spines.size)
    adj_base = first + offs.size + spines.size
    foot_base = adj_base + nlab
    nsym = foot_base + nlab
    has_aux = np.zeros(nlab, bool)
    has_aux[g.aux_label[aux_ok]] = True
    ctx = g.ctx
    adjoinable = np.zeros(len(nd), bool)
    cand = offs[ctx[offs] >= 0]
    cand = cand[(g.adj_logp[ctx[cand]] > alive) & has_aux[nd.label[cand]]]
    adjoinable[cand] = True

    def options(n: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
        """(main symbol, ADJ alternative or -1) of child j of nodes n."""
        k, r = nd.ck[n, j], nd.cr[n, j]
        main = np.full(n.size, -1, np.int64)
        alt = np.full(n.size, -1, np.int64)
        m = k == REF_SITE
        main[m] = r[m]
        m = k == REF_FOOT
        main[m] = foot_base + r[m]
        m = k == REF_NODE
        main[m] = sym[r[m]]
        m &= adjoinable[np.where(m, r, 0)]
        alt[m] = adj_base + nd.label[r[m]]
        return main, alt

    parents = np.concatenate([offs, spines])
    bins, uns, lexs = [], [], []  # (parent, child(ren), logp)
    half, quarter = np.log(0.5), np.log(0.25)
    n = parents[nd.kind[parents] == KIND_LEX]
    lexs.append((sym[n], nd.cr[n, 0], np.zeros(n.size)))
    n = parents[nd.kind[parents] == KIND_UNARY]
    c0, a0 = options(n, 0)
    uns.append((sym[n], c0, np.full(n.size, half)))
    m = a0 >= 0
    uns.append((sym[n[m]], a0[m], np.full(int(m.sum()), half)))
    n = parents[nd.kind[parents] == KIND_BINARY]
    c0, a0 = options(n, 0)
    c1, a1 = options(n, 1)
    for x, y in ((c0, c1), (a0, c1), (c0, a1), (a0, a1)):
        m = (x >= 0) & (y >= 0)
        bins.append((sym[n[m]], x[m], y[m], np.full(int(m.sum()), quarter)))
    # substitution, adjunction, feet
    ini = np.flatnonzero(usable[g.initial_root])
    uns.append((g.initial_label[ini], sym[g.initial_root[ini]], g.sub_logp[ini] + half))
    X = np.flatnonzero(has_aux)
    uns.append((X, adj_base + X, np.full(X.size, half)))
    uns.append((adj_base + g.aux_label[aux_ok], sym[g.aux_root[aux_ok]], g.aux_logp[aux_ok]))
    t = np.flatnonzero(adjoinable)
    per_label = np.bincount(nd.label[t], minlength=nlab) + 1.0
    uns.append((foot_base + nd.label[t], sym[t], -np.log(per_label[nd.label[t]])))
    uns.append((foot_base + X, adj_base + X, -np.log(per_label[X])))
    if nb:  # the base route with its own weights (site[X] -> base[X], base rules): no adjunction inside it
        b = g.base
        lab = g.base_label
        child = lambda kind, x: np.where(kind == 1, nlab + x, lab[x])  # noqa: E731
        uns.append((lab[b.hop_label], nlab + b.hop_label, b.hop_logp))
        bins.append((nlab + b.bin_parent, child(b.bin_lkind, b.bin_left), child(b.bin_rkind, b.bin_right),
                     b.bin_logp))
        uns.append((nlab + b.un_parent, child(b.un_kind, b.un_child), b.un_logp))
        lexs.append((nlab + b.lex_parent, g.base_word[b.lex_word], b.lex_logp))
    cat = np.zeros(nsym, np.int64)
    cat[:nlab] = np.arange(nlab)
    if nb:
        cat[nlab:first] = g.base_label
    cat[first:adj_base] = nd.label[parents]
    cat[adj_base:foot_base] = np.arange(nlab)
    cat[foot_base:] = np.arange(nlab)
    col = lambda rows, i: np.concatenate([np.asarray(r[i]) for r in rows]).astype(np.int64)  # noqa: E731
    colf = lambda rows, i: np.maximum(np.concatenate([np.asarray(r[i], float) for r in rows]), NEG)  # noqa: E731
    from treegram.grammar.symbols import SymbolTable

    words = g.words if len(g.words) else SymbolTable(["<none>"])
    cfg = WeightedCFG(nonterminals=_Names(nsym), words=words, start=g.labels[g.start],
                      bin_parent=col(bins, 0), bin_left=col(bins, 1), bin_right=col(bins, 2), bin_logp=colf(bins, 3),
                      un_parent=col(uns, 0), un_child=col(uns, 1), un_logp=colf(uns, 2),
                      lex_parent=col(lexs, 0), lex_word=col(lexs, 1), lex_logp=colf(lexs, 2),
                      categories=g.labels, category=cat)
    return CoarseGrammar(cfg=cfg, node_sym=sym, adj_base=adj_base, foot_base=foot_base, num_labels=nlab)


def coarse_filter(g, usable: np.ndarray, mapped: list[str], unknown: tuple[np.ndarray, np.ndarray],
                  uncovered: list[int] | None, mask: np.ndarray | None, *, coarse: CoarseGrammar | None = None
                  ) -> tuple[np.ndarray, np.ndarray] | None:
    """(usable nodes, adjunction sites) the exact reduction needs for this sentence, from a coarse inside +
    outside pass under `mask`; None if the coarse grammar has no parse (then neither has the exact one).

    `mapped`: the sentence's (rare-word mapped) tokens; `unknown` = (site symbols, log probs) of the unknown-word
    fallback given to the positions in `uncovered` (None: positions without a lexical rule), as in the exact pass.
    """
    from treegram.charts import Pruning, inside, outside

    cg = coarse_grammar(g, usable) if coarse is None else coarse
    cfg = cg.cfg
    lex = cfg.lexical_input(mapped)
    if uncovered is None or uncovered:
        lex = lex.with_fallback(*unknown, positions=uncovered)
    chart = inside(cfg, lex, prune=None if mask is None else Pruning(mask=mask))
    if chart.log_z == -np.inf:
        return None
    out = outside(chart, counts=False)
    live = out.mid_logpost > -np.inf
    cells = out.mid_cell[live].astype(np.int64)
    syms = out.mid_sym[live].astype(np.int64)
    nsym = cfg.num_symbols
    alive_sym = np.zeros(nsym, bool)
    alive_sym[syms] = True
    nd = g.nodes
    keep = np.zeros(len(nd), bool)
    has = cg.node_sym >= 0
    keep[has] = alive_sym[cg.node_sym[has]]
    # sites: node[t] alive in a cell where FOOT[label(t)] is alive
    nlab = cg.num_labels
    foot = syms >= cg.foot_base
    foot_keys = np.unique(cells[foot] * nlab + (syms[foot] - cg.foot_base))
    sym_node = np.full(nsym, -1, np.int64)
    sym_node[cg.node_sym[has]] = np.flatnonzero(has)
    node_entry = sym_node[syms] >= 0
    ncells, nnodes = cells[node_entry], sym_node[syms[node_entry]]
    at_foot = np.isin(ncells * nlab + nd.label[nnodes], foot_keys) & ~nd.spine[nnodes]
    site_ok = np.zeros(len(nd), bool)
    site_ok[nnodes[at_foot]] = True
    return keep & usable, site_ok
