"""The blocked sampler's proposal: the TIG -> TSG -> CFG transform (Yamangil & Shieber 2012, Figure 4) anchored
at one training tree's rows, emitted as a `treegram.charts.AnchoredCFG` and sampled exactly with
the core charts.

Symbols (all tied to rows of the tree, so the grammar derives exactly this tree):

    SUB(x)        an initial tree is rooted at top x            -> INB(x)              alpha/(n+alpha)
                                                                 -> CTOP(e, x)         n_e/(n+alpha)  (cached e)
    T(owner, p)   a logical node with top p (Figure 4's NP_init -> NP_L NP NP_R):
                  IN:  T -> M(y) [LMAT(p,y)],   M(y) -> BODY(y) | BODY(f) RMAT(y,f)   (1-phi_L), (1-phi_R)
                  SL:  T -> BODY(p) | LMAT(p,y) BODY(y)      (1-phi_L);   SR mirrored
                  TIG0 IN: T -> BODY(p) | AUXL(p,c2) BODY(c2) | BODY(c1) AUXR(p,c1)
    LMAT(x,y)     a stack of left aux trees from x to foot y:   -> AUXL(x,y) | AUXL(x,u) LMAT(u,y)     phi_L
    RMAT(y,f)     mirrored:                                     -> AUXR(y,f) | RMAT(u,f) AUXR(y,u)     phi_R
    AUXL(x,z)     one left aux tree, root body x, foot z:       -> ABL(x,z)  alpha/(n+alpha) | cached  n_e/(n+alpha)
    ABL(S,q,z)    base spine level (label S, body q):   -> X(o) [SPB(s,z)]   P(S -> o s | cat) x foot x stop/expand
    SPB(s,z)      base spine node with top s: T(('spb', z), s) over ABL(label s, ., z)
    BB(L,f)       base body (rule L -> children of f) x stop/expand of children; X(y) = SUB(y) | INB(y)
    CTOP/CB, CSP/CAB  the same for the nodes of cached elementary trees (weight 1 below the root)

Every CFG derivation is one TIG derivation (the symbols used determine `sub`, `adir`, `afoot`) and the paths of
a derivation sum to prod_e (n_e + alpha P0(e)) / (n + alpha) x prod phi-terms: the independent-predictive
proposal q.  Tests check both by enumeration on small trees.
"""

from __future__ import annotations

import numpy as np

from treegram.charts import AnchoredCFG
from treegram.elementary.data import KIND_BINARY, KIND_LEX, KIND_UNARY
from treegram.elementary.tables import (NEG, TreeProposalBuilder, TypeCounts, build_root, key_sig, log0 as _log,
                                        log1m as _log1m, row_sig)

from treegram.plugins.tig.derivation import DP_INIT, DP_LEFT, DP_RIGHT, IN, LEFT, RIGHT, SL, SR, RuleLists, TIGTables

ROLE_OTHER, ROLE_SUB, ROLE_AUXL, ROLE_AUXR = 0, 1, 2, 3


def type_sig(dp: int, key) -> tuple:
    """The TIG's match signature of a type: (root label,) + root rule shape [+ foot label for auxiliary trees]."""
    from treegram.plugins.tig.derivation import foot_label

    s = (key[0],) + key_sig(key)
    return s + (foot_label(key, LEFT if dp == DP_LEFT else RIGHT),) if dp != DP_INIT else s


def tig_counts(num_labels: int) -> TypeCounts:
    """Type counts of the three TIG DP families (initial / left / right) with their match index."""
    return TypeCounts(3, num_labels, type_sig, "TIG")


class TreeGrammar(TreeProposalBuilder, RuleLists):
    """Builds the anchored proposal CFG of one tree (rows lo..hi-1) from the counts and hyperparameters (the
    rows' shapes filter the cached types: the trimmed CFG is unchanged, see tests/test_tig_builder.py)."""

    def __init__(self, T: TIGTables, counts: TypeCounts, hyper, lo: int, hi: int, tig0: bool, *,
                 filter_candidates: bool = True):
        super().__init__(T, counts, hyper, lo, hi)
        self.tig0 = tig0
        self._paths: dict[tuple[int, int], list[int]] = {}
        self.role: list[int] = []
        self.node: list[int] = []
        self.foot: list[int] = []
        self._start_rules()
        self.filter_candidates = filter_candidates  # False: try every cached type (the unoptimised builder)

    # -- plumbing ---------------------------------------------------------------------------------------------
    def _finish(self, key, rules, role=ROLE_OTHER, node=-1, foot=-1):
        rules = [r for r in rules if r[-1] > NEG]
        if not rules:
            self.memo[key] = None
            return None
        sid = len(self.role)
        self.role.append(role)
        self.node.append(node)
        self.foot.append(foot)
        for r in rules:
            if r[0] == "b":
                self.bin.append((sid, r[1], r[2], r[3]))
            elif r[0] == "u":
                self.un.append((sid, r[1], r[2]))
            else:
                self.lex.append((r[1], sid, r[2]))
        self.memo[key] = sid
        return sid

    def _path(self, p: int, side: int) -> list[int]:
        """Rows below p on the last-child (LEFT) / first-child (RIGHT) path through binary nodes of p's category."""
        hit = self._paths.get((p, side))
        if hit is not None:
            return hit
        T = self.T
        c = T.cat[T.label[p]]
        out = []
        q = p
        ch = T.child2 if side == LEFT else T.child1
        while T.kind[q] == KIND_BINARY:
            q = int(ch[q])
            if T.cat[T.label[q]] != c:
                break
            out.append(q)
        self._paths[(p, side)] = out
        return out

    # -- initial trees --------------------------------------------------------------------------------------
    def sub(self, x: int):
        key = ("SUB", x)
        if key in self.memo:
            return self.memo[key]
        L = int(self._lab[x])
        rules = []
        s = self.inb(x)
        if s is not None:
            rules.append(("u", s, self.log_new(DP_INIT, L)))
        for e in self._init_candidates(x):
            s = self.ctop(e, x)
            if s is not None:
                rules.append(("u", s, self.log_cached(DP_INIT, e, L)))
        return self._finish(key, rules, ROLE_SUB, x)

    def _init_candidates(self, x: int):
        T = self.T
        L = int(self._lab[x])
        bodies = {x}
        if not self.tig0:
            lp = self._path(x, LEFT)
            bodies.update(lp)
            for y in [x] + lp:
                bodies.update(self._path(y, RIGHT))
        elif T.kind[x] == KIND_BINARY:
            bodies.update((int(T.child1[x]), int(T.child2[x])))
        return self.candidates_at(DP_INIT, L, bodies)

    def candidates(self, dp: int, sig: tuple):
        if not self.filter_candidates:
            return self.counts.candidates(dp, sig)
        return super().candidates(dp, sig)

    def expanded(self, x: int):
        return self.inb(x)

    def inb(self, x: int):
        L = int(self._lab[x])
        return self.chain(("inb",), x, IN, lambda f: self.bb(L, f))

    def bb(self, L: int, f: int):
        key = ("BB", L, f)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        k = T.kind[f]
        rules = []
        if k == KIND_LEX:
            rules.append(("l", int(T.start[f]), T.rule_logp(L, KIND_LEX, int(T.pword[f]), -1)))
        elif k == KIND_UNARY:
            y = int(T.child1[f])
            w = T.rule_logp(L, KIND_UNARY, int(self._lab[y]), -1)
            if w > NEG:
                for s, ws in self.x_options(y):
                    rules.append(("u", s, w + ws))
        else:
            y, z = int(T.child1[f]), int(T.child2[f])
            w = T.rule_logp(L, KIND_BINARY, int(self._lab[y]), int(self._lab[z]))
            if w > NEG:
                for s1, w1 in self.x_options(y):
                    for s2, w2 in self.x_options(z):
                        rules.append(("b", s1, s2, w + w1 + w2))
        return self._finish(key, rules)

    # -- insertion chains (Figure 4: NP_init -> NP_L NP NP_R) -----------------------------------------------
    def chain(self, owner: tuple, p: int, elig: int, body):
        """The top symbol T(owner, p) of a logical node whose body symbol at row f is body(f)."""
        if self.tig0 and elig != IN:
            return body(p)
        key = ("T", owner, p)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        L = int(self._lab[p])
        pl = self.h.phi[LEFT][L]
        pr = self.h.phi[RIGHT][L]
        rules = []
        if self.tig0:
            s = body(p)
            if s is not None:
                rules.append(("u", s, _log1m(pl) + _log1m(pr)))
            if T.kind[p] == KIND_BINARY:
                y, z = int(T.child1[p]), int(T.child2[p])
                if T.cat[self._lab[z]] == T.cat[L]:
                    a, s = self.aux(p, z, LEFT), body(z)
                    if a is not None and s is not None:
                        rules.append(("b", a, s, _log(pl)))
                if T.cat[self._lab[y]] == T.cat[L]:
                    a, s = self.aux(p, y, RIGHT), body(y)
                    if a is not None and s is not None:
                        rules.append(("b", s, a, _log1m(pl) + _log(pr)))
            return self._finish(key, rules)
        if elig == IN and not self._path(p, LEFT) and not self._path(p, RIGHT):
            s = body(p)  # no insertion possible here: skip the (single-rule) middle symbol
            if s is not None:
                rules.append(("u", s, _log1m(pl) + _log1m(pr)))
        elif elig == IN:
            m = self.mid(owner, p, p, L, body)
            if m is not None:
                rules.append(("u", m, _log1m(pl)))
            self._stacked(LEFT, p, lambda y: self.mid(owner, p, y, L, body), _log1m(pl), rules)
        else:  # a spine node: insertions on the spine's side only
            side = LEFT if elig == SL else RIGHT
            w = _log1m(pl if side == LEFT else pr)
            s = body(p)
            if s is not None:
                rules.append(("u", s, w))
            self._stacked(side, p, body, w, rules)
        return self._finish(key, rules)

    def _stacked(self, side: int, x: int, then, w: float, rules: list) -> None:
        """The rules "a stack of `side` insertions at x ending at f, then then(f)" for every f on x's `side` path
        (the stack's symbol made before then's)."""
        for f in self._path(x, side):
            m = self.mat(side, x, f)
            if m is None:
                continue
            s = then(f)
            if s is not None:
                rules.append(("b", m, s, w) if side == LEFT else ("b", s, m, w))

    def mid(self, owner: tuple, p: int, y: int, L: int, body):
        """After the left stack of the node with top p, label L (the stack ended at y): right stack, then body."""
        key = ("M", owner, p, y)
        if key in self.memo:
            return self.memo[key]
        lpr = _log1m(self.h.phi[RIGHT][L])
        rules = []
        s = body(y)
        if s is not None:
            rules.append(("u", s, lpr))
        if self._lab[y] == L:  # the outermost right root sits at y and must carry the node's label
            self._stacked(RIGHT, y, body, lpr, rules)
        return self._finish(key, rules)

    def mat(self, side: int, x: int, y: int):
        """The stack of `side` auxiliary trees inserted at x whose last one ends at y: left stacks are emitted
        outside-in (aux, rest), right stacks inside-out (rest, aux), each symbol made in that order."""
        key = ("MAT", side, x, y)
        if key in self.memo:
            return self.memo[key]
        L = int(self._lab[x])
        w = _log(self.h.phi[side][L])
        rules = []
        a = self.aux(x, y, side)
        if a is not None:
            rules.append(("u", a, w))
        for u in self._path(x, side):
            if u == y:
                break
            if self._lab[u] != L:
                continue
            if side == LEFT:
                a, rest = self.aux(x, u, LEFT), self.mat(LEFT, u, y)
                pair = (a, rest)
            else:
                rest, a = self.mat(RIGHT, u, y), self.aux(x, u, RIGHT)
                pair = (rest, a)
            if a is not None and rest is not None:
                rules.append(("b", *pair, w))
        return self._finish(key, rules)

    # -- auxiliary trees ------------------------------------------------------------------------------------
    def aux(self, x: int, z: int, side: int):
        key = ("AUX", side, x, z)
        if key in self.memo:
            return self.memo[key]
        dp = DP_LEFT if side == LEFT else DP_RIGHT
        L = int(self._lab[x])
        rules = []
        s = self.ab(L, x, z, side)
        if s is not None:
            rules.append(("u", s, self.log_new(dp, L)))
        sig = (L,) + row_sig(self.T, x) + (int(self._lab[z]),)
        for e in self.candidates(dp, sig):
            s = self.cab(e, x, z, side)
            if s is not None:
                rules.append(("u", s, self.log_cached(dp, e, L)))
        return self._finish(key, rules, ROLE_AUXL if side == LEFT else ROLE_AUXR, x, z)

    def ab(self, S: int, q: int, z: int, side: int):
        """Base spine level: label S, body q, the tree's foot at z."""
        key = ("AB", side, S, q, z)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        if T.kind[q] != KIND_BINARY:
            return self._finish(key, [])
        y, w2 = int(T.child1[q]), int(T.child2[q])
        o, s = (y, w2) if side == LEFT else (w2, y)
        rules = []
        w0 = T.cond_logp(side, S, int(self._lab[y]), int(self._lab[w2]))
        if w0 > NEG and T.cat[self._lab[s]] == T.cat[S]:
            f = self.h.foot[side][S]
            if s == z:
                wf = 0.0 if self.tig0 else _log(f)
                for so, wo in self.x_options(o):
                    rules.append(("u", so, w0 + wf + wo))
            elif not self.tig0:
                sp = self.chain(("spb", side, z), s, SL if side == LEFT else SR,
                                lambda qq, sl=int(self._lab[s]): self.ab(sl, qq, z, side))
                if sp is not None:
                    for so, wo in self.x_options(o):
                        w = w0 + _log1m(f) + wo
                        rules.append(("b", so, sp, w) if side == LEFT else ("b", sp, so, w))
        return self._finish(key, rules)

    # -- cached elementary trees ----------------------------------------------------------------------------
    def _child(self, ek, y: int):
        """Symbol for a child y of a cached node: its frontier (SUB) or its internal node (CTOP)."""
        if ek[0] == "s":
            return self.sub(y) if self._lab[y] == ek[1] else None
        return self.ctop(ek, y) if self._lab[y] == ek[0] else None

    def ctop(self, enode, p: int):
        if self._lab[p] != enode[0]:
            return None
        return self.chain(("ct", id(enode)), p, IN, lambda f: self.cb(enode, f))

    def cb(self, enode, f: int):
        key = ("CB", id(enode), f)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        kids = enode[1:]
        rules = []
        k = T.kind[f]
        if kids[0][0] == "w":
            if k == KIND_LEX and T.pword[f] == kids[0][1]:
                rules.append(("l", int(T.start[f]), 0.0))
        elif len(kids) == 1:
            if k == KIND_UNARY:
                s = self._child(kids[0], int(T.child1[f]))
                if s is not None:
                    rules.append(("u", s, 0.0))
        elif k == KIND_BINARY:
            s1 = self._child(kids[0], int(T.child1[f]))
            s2 = self._child(kids[1], int(T.child2[f])) if s1 is not None else None
            if s2 is not None:
                rules.append(("b", s1, s2, 0.0))
        return self._finish(key, rules)

    def cab(self, enode, q: int, z: int, side: int):
        """Body q of a cached auxiliary tree's spine node `enode`, the tree's foot at z."""
        key = ("CAB", id(enode), q, z)
        if key in self.memo:
            return self.memo[key]
        T = self.T
        rules = []
        if T.kind[q] == KIND_BINARY and len(enode) == 3:
            y, w2 = int(T.child1[q]), int(T.child2[q])
            o, s = (y, w2) if side == LEFT else (w2, y)
            eo, es = (enode[1], enode[2]) if side == LEFT else (enode[2], enode[1])
            so = self._child(eo, o)
            if so is not None:
                if es[0] == "*":
                    if s == z and self._lab[z] == es[1]:
                        rules.append(("u", so, 0.0))
                elif s != z and self._lab[s] == es[0]:
                    sp = self.chain(("csp", id(es), z, side), s, SL if side == LEFT else SR,
                                    lambda qq: self.cab(es, qq, z, side))
                    if sp is not None:
                        rules.append(("b", so, sp, 0.0) if side == LEFT else ("b", sp, so, 0.0))
        return self._finish(key, rules)

    # -- output ---------------------------------------------------------------------------------------------
    def build(self) -> AnchoredCFG | None:
        start = build_root(self.sub, self.T.data.is_word, self.lo, self.hi)
        if start is None:
            return None
        n = len(self.role)
        # the core chart wants the start symbol; renumber so that it is symbol 0 is not required (start given)
        bin_, un, lex = self.rule_arrays()
        n_words = int(np.count_nonzero(self.T.data.is_word[self.lo:self.hi]))
        return AnchoredCFG(num_symbols=n, start=int(start), n_words=n_words,
                           bin_parent=bin_[:, 0].astype(np.int32), bin_left=bin_[:, 1].astype(np.int32),
                           bin_right=bin_[:, 2].astype(np.int32), bin_logp=bin_[:, 3].copy(),
                           un_parent=un[:, 0].astype(np.int32), un_child=un[:, 1].astype(np.int32),
                           un_logp=un[:, 2].copy(), lex_pos=lex[:, 0].astype(np.int64),
                           lex_sym=lex[:, 1].astype(np.int64), lex_logp=lex[:, 2].copy(),
                           sym_node=np.array(self.node, np.int64), sym_role=np.array(self.role, np.int64))

    def encoding(self, used_symbols: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(sub, adir, afoot) of the derivation that uses these symbols."""
        lo, hi = self.lo, self.hi
        sub = np.zeros(hi - lo, np.int8)
        adir = np.zeros(hi - lo, np.int8)
        afoot = np.full(hi - lo, -1, np.int32)
        role = np.asarray(self.role)[used_symbols]
        node = np.asarray(self.node)[used_symbols]
        foot = np.asarray(self.foot)[used_symbols]
        sub[node[role == ROLE_SUB] - lo] = 1
        for r, d in ((ROLE_AUXL, LEFT), (ROLE_AUXR, RIGHT)):
            m = role == r
            adir[node[m] - lo] = d
            afoot[node[m] - lo] = foot[m]
        return sub, adir, afoot
