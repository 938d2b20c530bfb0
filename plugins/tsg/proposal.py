"""CFG transforms of a TSG: the tree-anchored proposal of the blocked sampler, and the Goodman transform for parsing.

Tree-anchored transform (blocked sampler, Cohn & Blunsom 2010).  For one training tree, every nonterminal row x
gets two CFG symbols: SITE(x) ("an elementary tree is rooted here") and BASE(x) ("x is expanded by the base
distribution").  Rules, with all counts taken *without* the tree being resampled:

    SITE(x) -> BASE(x)                        alpha_c / (n_c + alpha_c)                   c = label(x)
    BASE(x) -> X1 X2  (or X1, or the word)    P_pcfg(rule at x) * prod_i [beta(y_i) if Xi = SITE(y_i)
                                                                        else 1 - beta(y_i)  (Xi = BASE(y_i))]
    for every cached elementary tree e (n_e > 0) that matches the tree at x, with its own symbols E_j(m) for its
    non-root internal rows m:
    SITE(x) -> children of x in e             n_e / (n_c + alpha_c)
    E_j(m)  -> children of m in e             1
    (a child is E_j(y) if e contains y as internal, SITE(y) if y is a frontier of e, the word for a preterminal)

Symbols are anchored at rows, so the grammar derives exactly this tree and no masks are needed.  The paths that
derive a given elementary tree e at x sum to (n_e + alpha_c P0(e)) / (n_c + alpha_c): the CFG assigns each
derivation (set of cut rows) the product of the independent DP predictives, i.e. the blocked sampler's proposal
q, and `treegram.charts.inside` / `sample` give its normaliser and exact draws.  The MH step corrects q towards the
exact sequential predictive (`treegram.bayes.BlockedMH`).

The generic, formalism-independent part is `treegram.charts.AnchoredCFG` (numpy rule arrays over row-anchored
symbols -> `WeightedCFG` + `LexicalInput`, inside, sampling, symbol roles of a sampled derivation); TIG and OSTAG
emit their own anchored rules (insertion/adjunction symbols) into it.
"""

from __future__ import annotations

import numba
import numpy as np

from treegram.charts import AnchoredCFG

from treegram.elementary import kernels as K

ROLE_SITE = 0  # node roles in the proposal grammar: 0 a substitution site, 1 base-PCFG rule, 2 cached fragment


@numba.njit(cache=True)
def _tree_rules(lo, hi, label, kind, child1, child2, start, node_logrule, log_stop, log_expand, total, alpha,
                cnt, inst_slot, inst_ptr, inst_trail, cats):
    n = hi - lo
    nsym_base = 2 * n
    n_inst = inst_slot.shape[0]
    n_internal = inst_ptr[n_inst] - n_inst  # non-root internal rows over all instances
    nsym = nsym_base + n_internal
    # upper bounds on rule counts
    maxb = 4 * n + n_internal + n_inst
    bp = np.empty(maxb, np.int32)
    bl = np.empty(maxb, np.int32)
    br = np.empty(maxb, np.int32)
    bw = np.empty(maxb, np.float64)
    up = np.empty(maxb, np.int32)
    uc = np.empty(maxb, np.int32)
    uw = np.empty(maxb, np.float64)
    lp_ = np.empty(maxb, np.int64)
    ls = np.empty(maxb, np.int64)
    lw = np.empty(maxb, np.float64)
    sym_node = np.empty(nsym, np.int64)
    sym_role = np.empty(nsym, np.int64)
    nb = 0
    nu = 0
    nl = 0
    for x in range(lo, hi):
        k = kind[x]
        j = x - lo
        sym_node[2 * j] = x
        sym_role[2 * j] = 0
        sym_node[2 * j + 1] = x
        sym_role[2 * j + 1] = 1
        if k < 0:
            continue
        c = label[x]
        site = 2 * j
        base = site + 1
        up[nu] = site
        uc[nu] = base
        uw[nu] = np.log(alpha[c]) - np.log(total[c] + alpha[c])
        nu += 1
        w = node_logrule[x]
        if k == 0:
            lp_[nl] = start[x]
            ls[nl] = base
            lw[nl] = w
            nl += 1
        elif k == 1:
            y = child1[x]
            up[nu] = base
            uc[nu] = 2 * (y - lo)
            uw[nu] = w + log_stop[label[y]]
            nu += 1
            up[nu] = base
            uc[nu] = 2 * (y - lo) + 1
            uw[nu] = w + log_expand[label[y]]
            nu += 1
        else:
            y = child1[x]
            z = child2[x]
            for a in range(2):
                for b in range(2):
                    bp[nb] = base
                    bl[nb] = 2 * (y - lo) + a
                    br[nb] = 2 * (z - lo) + b
                    bw[nb] = (w + (log_stop[label[y]] if a == 0 else log_expand[label[y]])
                              + (log_stop[label[z]] if b == 0 else log_expand[label[z]]))
                    nb += 1
    # cached elementary trees
    member = np.full(n, -1, np.int64)
    msym = np.full(n, -1, np.int64)
    nxt = nsym_base
    for q in range(n_inst):
        a0 = inst_ptr[q]
        a1 = inst_ptr[q + 1]
        root = inst_trail[a0]
        c = cats[q]
        wroot = np.log(cnt[inst_slot[q]]) - np.log(total[c] + alpha[c])
        for t in range(a0, a1):
            m = inst_trail[t]
            member[m - lo] = q
            if t == a0:
                msym[m - lo] = 2 * (m - lo)
            else:
                msym[m - lo] = nxt
                sym_node[nxt] = m
                sym_role[nxt] = 2
                nxt += 1
        for t in range(a0, a1):
            m = inst_trail[t]
            p = msym[m - lo]
            w = wroot if m == root else 0.0
            k = kind[m]
            if k == 0:
                lp_[nl] = start[m]
                ls[nl] = p
                lw[nl] = w
                nl += 1
            elif k == 1:
                y = child1[m]
                up[nu] = p
                uc[nu] = msym[y - lo] if member[y - lo] == q else 2 * (y - lo)
                uw[nu] = w
                nu += 1
            else:
                y = child1[m]
                z = child2[m]
                bp[nb] = p
                bl[nb] = msym[y - lo] if member[y - lo] == q else 2 * (y - lo)
                br[nb] = msym[z - lo] if member[z - lo] == q else 2 * (z - lo)
                bw[nb] = w
                nb += 1
    return (nsym, bp[:nb], bl[:nb], br[:nb], bw[:nb], up[:nu], uc[:nu], uw[:nu], lp_[:nl], ls[:nl], lw[:nl],
            sym_node, sym_role)


class TreeProposal:
    """The blocked sampler's proposal for one tree of a `BlockedTSG` state (see the module docstring)."""

    def __init__(self, state, item: int, grammar: AnchoredCFG):
        self.state = state
        self.item = item
        self.grammar = grammar
        self._chart = None

    @property
    def chart(self):
        if self._chart is None:
            self._chart = self.grammar.chart()
        return self._chart

    @classmethod
    def build(cls, state, item: int) -> TreeProposal:
        d = state.data
        lo, hi = d.tree_rows(item)
        inst_slot, inst_ptr, inst_trail = _match_tree(state, lo, hi)
        roots = inst_trail[inst_ptr[:-1]] if len(inst_slot) else np.zeros(0, np.int64)
        cats = d.label[roots] if len(inst_slot) else np.zeros(0, np.int64)
        (nsym, bp, bl, br, bw, up, uc, uw, lpos, lsym, lw, sym_node, sym_role) = _tree_rules(
            lo, hi, d.label, d.kind, d.child1, d.child2, d.start, d.node_logrule, state._ls, state._le,
            state.total, state.alpha, state.cnt, inst_slot, inst_ptr, inst_trail, cats)
        n_words = int(d.is_word[lo:hi].sum())
        g = AnchoredCFG(num_symbols=int(nsym), start=0, n_words=n_words, bin_parent=bp, bin_left=bl,
                        bin_right=br, bin_logp=bw, un_parent=up, un_child=uc, un_logp=uw, lex_pos=lpos,
                        lex_sym=lsym, lex_logp=lw, sym_node=sym_node, sym_role=sym_role)
        return cls(state, item, g)

    def log_z(self) -> float:
        return float(self.chart.log_z)

    def sample(self, rng: np.random.Generator) -> tuple[np.ndarray, float]:
        """(flags of the tree's rows, log Z) for one derivation drawn from the proposal."""
        deriv, log_z = self.grammar.sample(rng, self.chart)
        d = self.state.data
        lo, hi = d.tree_rows(self.item)
        flags = np.zeros(hi - lo, np.int8)
        flags[self.grammar.used_nodes(deriv, ROLE_SITE) - lo] = 1
        return flags, float(log_z)


def _match_tree(state, lo: int, hi: int):
    d = state.data
    cap_out = 64
    cap_trail = 256
    while True:
        out_key = np.zeros(cap_out, np.uint64)
        out_slot = np.zeros(cap_out, np.int64)
        out_ptr = np.zeros(cap_out + 1, np.int64)
        out_trail = np.zeros(cap_trail, np.int64)
        n_out, n_trail = K.match_tree(lo, hi, d.kind, d.is_word, d.subtree_end, d.tok_int, d.tok_front,
                                      state.pkeys, state.keys, state.cnt, out_key, out_slot, out_ptr, out_trail)
        if n_out >= 0:
            return out_slot[:n_out], out_ptr[: n_out + 1], out_trail[:n_trail]
        cap_out *= 4
        cap_trail *= 4
