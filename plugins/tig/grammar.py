"""The parsing grammar of a trained TIG: the string-level TIG -> TSG -> CFG transform of Figure 4 over labels, and
the map from a CFG parse back to a TIG derivation and its derived tree.

Symbols (every cached elementary tree gets its own symbols per node, Goodman style; the base distributions get
one family per label, so unseen structure stays derivable):

    SITE(L)    substitution site / initial-tree root   -> TOP(base L)  alpha/(n+alpha)  |  TOP(e root)  n_e/(n+alpha)
    TOP(o)     an IN logical node (Figure 4's NP_init -> NP_L NP NP_R), body symbol B(o), label L:
               TIG:  -> B                 (1-phi_L)(1-phi_R)        -> B RNE(L)        (1-phi_L)(1-phi_R)
                     -> LNE*(L) B         (1-phi_L)(1-phi_R)        -> LNE=(L) Y(o)    (1-phi_L)
                     Y(o) -> B RNE(L)     (1-phi_R)
               TIG0: -> B (1-phi_L)(1-phi_R)  |  AUXL*(L) B  phi_L  |  B AUXR*(L)  (1-phi_L) phi_R
               (labels at which no auxiliary tree can be inserted skip TOP: B takes its place and its rules carry
               (1-phi_L)(1-phi_R))
    LNE*(L)    non-empty left stack, outermost first: -> AUXL*(L) | AUXL=(L) LNE*(L)       phi_L each
    LNE=(L)    the same with every foot labelled L (a right stack follows): -> AUXL=(L) | AUXL=(L) LNE=(L)
    RNE(L)     non-empty right stack, innermost first: -> AUXR*(L) | RNE(L) AUXR=(L)       phi_R each
               (stacked roots carry the node's label, so only the innermost foot may have another label: `*` = any
               foot label of the category, `=` = foot labelled L)
    AUXd*(L)   one aux tree with root L: -> LEVEL(base d, L, L, mode) alpha/(n+alpha) | LEVEL(e root) n_e/(n+alpha)
    LEVEL      one spine level of an aux tree (yield of its non-spine child, then the rest of the spine's):
               base:   -> FOOT(S, A, B)                  P(S -> A B | cat) foot_S     (foot immediately below)
                       -> X(A) SPINE(B)                  P(S -> A B | cat) (1-foot_S) x stop/expand(A)
               FOOT(S, A, B) -> X(A)                     stop/expand(A)     (B: the foot's label)
    SPINE(S)   a spine node (left aux: left insertions only):  -> LEVEL (1-phi) | LNE*(S) LEVEL (1-phi)
    B(o)       a body: -> children (frontier: SITE; internal: TOP) x P_pcfg x stop/expand for the base, 1 cached

The grammar's probability of a derivation is the product of the DP posterior predictives of its elementary trees
(independent, as in the TSG's Goodman transform) and the insertion decisions, and every CFG derivation is one TIG
derivation: its symbols give the elementary trees and where they are inserted, from which `derived_tree` rebuilds
the derived (binarized) tree, wrapping each auxiliary tree's spine around its foot.  Symbols whose span is a
constituent (SITE, TOP, Y, unwrapped B) carry their label as category, so the TSG's coarse PCFG prunes them; the
flattened insertion symbols span no constituent and are never pruned.
"""

from __future__ import annotations

import math
import sys
from typing import Any

import numpy as np

from treegram.elementary.data import KIND_LEX, KIND_UNARY
from treegram.elementary.tables import NEG
from treegram.grammar.cfg import WeightedCFG
from treegram.grammar.symbols import SymbolTable
from treegram.trees import Tree

from treegram.plugins.tig.derivation import DP_INIT, DP_LEFT, DP_RIGHT, LEFT, RIGHT, RuleLists

(S_SITE, S_TOP, S_Y, S_BODY, S_LNE_EQ, S_LNE_ANY, S_RNE, S_AUX, S_LEVEL, S_FOOT, S_SPINE) = range(11)
FLAT = "~flat"


def _l(x: float) -> float:
    return math.log(x) if x > 0 else NEG


def _l1(x: float) -> float:
    return math.log1p(-x) if x < 1 else NEG


class Builder(RuleLists):
    """Builds the parsing `WeightedCFG` and per-symbol metadata from a TIG sampler state (`sampler.TIGState`)."""

    def __init__(self, state, min_count: int = 1, view=None):
        """`view`: the types to build from (`TypeView`: the state's own by default, or a posterior average of
        several samples, `TypeTableState.averaged_types`; the latter keeps types whose count summed over the
        samples is >= min_count, with their mean counts)."""
        view = state.current_types() if view is None else view
        self.st = state
        self.T = state.T
        self.h = view.hyper
        self.tig0 = state.settings.tig0
        d = state.data
        self.labels = d.labels
        nl = self.nl = d.num_labels
        self.kind: list[int] = []
        self.label: list[int] = []
        self.side: list[int] = []
        self.foot: list[int] = []
        self.cat: list[int] = []
        self.names: list[str] = []
        self._start_rules()
        self.memo: dict[tuple, int] = {}
        h = self.h
        tot = np.asarray(view.total, np.float64)
        self.la = np.log(h.alpha)
        self.lnz = np.log(tot[:, :nl] + h.alpha)
        self.lbeta = np.log(h.beta)
        self.l1beta = np.log1p(-h.beta)
        # cached types by DP
        self.cached: list[list[tuple[Any, int, float]]] = [[], [], []]  # (key, label, (mean) count)
        for (dp, key), occ in view.types.items():
            if view.summed[(dp, key)] >= min_count:
                self.cached[dp].append((key, occ.label, view.count[(dp, key)]))
        for lst in self.cached:
            lst.sort(key=lambda t: (-t[2], repr(t[0])))
        # the base PCFG grouped by parent; conditional spine rules by parent
        self.rules_by_parent: dict[int, list[tuple[int, int, int, float]]] = {}
        for (p, k, a, b), w in self.T.rule.items():
            self.rules_by_parent.setdefault(p, []).append((k, a, b, w))
        self.cond_by_parent: dict[int, dict[int, list[tuple[int, int, float]]]] = {LEFT: {}, RIGHT: {}}
        for side in (LEFT, RIGHT):
            for (p, a, b), w in sorted(self.T.cond[side].items()):
                self.cond_by_parent[side].setdefault(p, []).append((a, b, w))
        # where can an auxiliary tree be inserted (per side, label)?
        self.can = {side: np.zeros(nl, bool) for side in (LEFT, RIGHT)}
        for side, dp in ((LEFT, DP_LEFT), (RIGHT, DP_RIGHT)):
            for p in self.cond_by_parent[side]:
                self.can[side][p] = True
            for _key, lab, _n in self.cached[dp]:
                self.can[side][lab] = True
        self.cached_aux: dict[tuple[int, int], list[tuple[Any, int, int]]] = {}
        for side, dp in ((LEFT, DP_LEFT), (RIGHT, DP_RIGHT)):
            for key, lab, n in self.cached[dp]:
                self.cached_aux.setdefault((side, lab), []).append((key, lab, n))

    # -- plumbing ---------------------------------------------------------------------------------------------
    def new(self, kind: int, label: int, name: str, cat: int | None = None, side: int = 0, foot: int = -1) -> int:
        sid = len(self.kind)
        self.kind.append(kind)
        self.label.append(label)
        self.side.append(side)
        self.foot.append(foot)
        self.cat.append(self.nl if cat is None else cat)
        self.names.append(f"{name}#{sid}")
        return sid

    def symbol(self, key: tuple, kind: int, label: int, name: str, side: int = 0,
               foot: int = -1) -> tuple[int, bool]:
        """(symbol, made now) of `key`: the one made before, or a new one (`new`), remembered under `key`."""
        hit = self.memo.get(key)
        if hit is not None:
            return hit, False
        s = self.memo[key] = self.new(kind, label, name, side=side, foot=foot)
        return s, True

    def phi(self, side: int, L: int) -> float:
        return float(self.h.phi[side][L])

    def skip_factor(self, L: int) -> float:
        return _l1(self.phi(LEFT, L)) + _l1(self.phi(RIGHT, L))

    def insertable(self, L: int) -> bool:
        return bool(self.can[LEFT][L] or self.can[RIGHT][L])

    # -- IN logical nodes -------------------------------------------------------------------------------------
    def in_top(self, L: int, make_body, tag: str) -> int:
        """The top symbol of an IN logical node with label L whose body symbol `make_body(extra, cat)` creates."""
        if not self.insertable(L):
            return make_body(self.skip_factor(L), L)
        top = self.new(S_TOP, L, f"{self.labels[L]}~T{tag}", L)
        body = make_body(0.0, None)
        pl, pr = self.phi(LEFT, L), self.phi(RIGHT, L)
        both = _l1(pl) + _l1(pr)
        self.un.append((top, body, both))
        if self.tig0:
            if self.can[LEFT][L]:
                self.bin.append((top, self.aux(LEFT, L, False), body, _l(pl)))
            if self.can[RIGHT][L]:
                self.bin.append((top, body, self.aux(RIGHT, L, False), _l1(pl) + _l(pr)))
            return top
        if self.can[RIGHT][L]:
            self.bin.append((top, body, self.rne(L), both))
        if self.can[LEFT][L]:
            self.bin.append((top, self.lne(L, False), body, both))
        if self.can[LEFT][L] and self.can[RIGHT][L]:
            y = self.new(S_Y, L, f"{self.labels[L]}~Y", L)
            self.bin.append((top, self.lne(L, True), y, _l1(pl)))
            self.bin.append((y, body, self.rne(L), _l1(pr)))
        return top

    def x_options(self, A: int) -> list[tuple[int, float]]:
        return [(A, float(self.lbeta[A])), (self.base_top(A), float(self.l1beta[A]))]

    def base_top(self, L: int) -> int:
        key = ("BT", L)
        hit = self.memo.get(key)
        if hit is not None:
            return hit
        body_holder: list[int] = []

        def make_body(extra, cat):
            b = self.new(S_BODY, L, f"{self.labels[L]}~base", cat)
            self.memo[("BB", L)] = b
            body_holder.append((b, extra))
            return b

        top = self.in_top(L, make_body, "base")
        self.memo[key] = top
        b, extra = body_holder[0]
        for k, a, bb, w in self.rules_by_parent.get(L, ()):
            if k == KIND_LEX:
                self.lex.append((b, a, w + extra))
            elif k == KIND_UNARY:
                for xa, wa in self.x_options(a):
                    self.un.append((b, xa, w + wa + extra))
            else:
                for xa, wa in self.x_options(a):
                    for xb, wb in self.x_options(bb):
                        self.bin.append((b, xa, xb, w + wa + wb + extra))
        return top

    # -- cached elementary trees --------------------------------------------------------------------------------
    def cached_child(self, k) -> int:
        if k[0] == "s":
            return int(k[1])
        return self.cached_node(k)

    def cached_node(self, node) -> int:
        L = int(node[0])

        def make_body(extra, cat):
            b = self.new(S_BODY, L, f"{self.labels[L]}~c", cat)
            kids = node[1:]
            if kids[0][0] == "w":
                self.lex.append((b, int(kids[0][1]), extra))
            elif len(kids) == 1:
                self.un.append((b, self.cached_child(kids[0]), extra))
            else:
                self.bin.append((b, self.cached_child(kids[0]), self.cached_child(kids[1]), extra))
            return b

        return self.in_top(L, make_body, "c")

    # -- insertion stacks -----------------------------------------------------------------------------------
    def lne(self, L: int, eq: bool) -> int:
        s, made = self.symbol(("LNE", L, eq), S_LNE_EQ if eq else S_LNE_ANY, L,
                              f"{self.labels[L]}~L{'=' if eq else '*'}")
        if not made:
            return s
        w = _l(self.phi(LEFT, L))
        self.un.append((s, self.aux(LEFT, L, eq), w))
        self.bin.append((s, self.aux(LEFT, L, True), s, w))
        return s

    def rne(self, L: int) -> int:
        s, made = self.symbol(("RNE", L), S_RNE, L, f"{self.labels[L]}~R")
        if not made:
            return s
        w = _l(self.phi(RIGHT, L))
        self.un.append((s, self.aux(RIGHT, L, False), w))
        self.bin.append((s, s, self.aux(RIGHT, L, True), w))
        return s

    def aux(self, side: int, L: int, eq: bool) -> int:
        """One auxiliary tree with root label L (eq: its foot is labelled L)."""
        s, made = self.symbol(("AUX", side, L, eq), S_AUX, L,
                              f"{self.labels[L]}~A{'L' if side == LEFT else 'R'}{'=' if eq else '*'}", side=side)
        if not made:
            return s
        dp = DP_LEFT if side == LEFT else DP_RIGHT
        lz = float(self.lnz[dp, L])
        if L in self.cond_by_parent[side]:
            self.un.append((s, self.base_level(side, L, L if eq else -1), float(self.la[dp, L]) - lz))
        for key2, _lab, n in self.cached_aux.get((side, L), ()):
            from treegram.plugins.tig.derivation import foot_label

            if eq and foot_label(key2, side) != L:
                continue
            self.un.append((s, self.cached_level_root(side, key2), math.log(n) - lz))
        return s

    def spine(self, side: int, S: int, level: int) -> tuple[int, float]:
        """A spine node with label S over the level symbol `level` (insertions on the spine's side only)."""
        l1 = _l1(self.phi(side, S))
        if self.tig0 or not self.can[side][S]:
            return level, l1
        s, made = self.symbol(("SP", side, level), S_SPINE, S, f"{self.labels[S]}~sp", side=side)
        if not made:
            return s, 0.0
        self.un.append((s, level, l1))
        if side == LEFT:
            self.bin.append((s, self.lne(S, False), level, l1))
        else:
            self.bin.append((s, level, self.rne(S), l1))
        return s, 0.0

    def base_level(self, side: int, S: int, target: int) -> int:
        """Base spine level with label S; target >= 0: the foot must be labelled `target`."""
        s, made = self.symbol(("BL", side, S, target), S_LEVEL, S, f"{self.labels[S]}~bl", side=side)
        if not made:
            return s
        f = float(self.h.foot[side][S])
        for a, b, w in self.cond_by_parent[side].get(S, ()):
            o, sp = (a, b) if side == LEFT else (b, a)
            if target < 0 or sp == target:
                self.un.append((s, self.foot_sym(side, S, o, sp), w + (0.0 if self.tig0 else _l(f))))
            if not self.tig0 and sp in self.cond_by_parent[side]:
                nxt, extra = self.spine(side, sp, self.base_level(side, sp, target))
                for xo, wo in self.x_options(o):
                    ww = w + _l1(f) + wo + extra
                    self.bin.append((s, xo, nxt, ww) if side == LEFT else (s, nxt, xo, ww))
        return s

    def foot_sym(self, side: int, S: int, o: int, sp: int) -> int:
        s, made = self.symbol(("FT", side, S, o, sp), S_FOOT, S, f"{self.labels[S]}~ft", side=side, foot=sp)
        if not made:
            return s
        for xo, wo in self.x_options(o):
            self.un.append((s, xo, wo))
        return s

    def cached_level_root(self, side: int, key) -> int:
        mk = ("CL", side, id(key))
        hit = self.memo.get(mk)
        if hit is None:
            hit = self.memo[mk] = self.cached_level(side, key)
        return hit

    def cached_level(self, side: int, node) -> int:
        S = int(node[0])
        okey, skey = (node[1], node[2]) if side == LEFT else (node[2], node[1])
        is_foot = skey[0] == "*"
        s = self.new(S_LEVEL, S, f"{self.labels[S]}~cl", side=side, foot=int(skey[1]) if is_foot else -1)
        o = self.cached_child(okey)
        if is_foot:
            self.un.append((s, o, 0.0))
        else:
            nxt, extra = self.spine(side, int(skey[0]), self.cached_level(side, skey))
            self.bin.append((s, o, nxt, extra) if side == LEFT else (s, nxt, o, extra))
        return s

    # -- the whole grammar ------------------------------------------------------------------------------------
    def build(self) -> tuple[WeightedCFG, dict[str, np.ndarray]]:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(max(old, 20000))
        try:
            nl = self.nl
            for L in range(nl):
                self.new(S_SITE, L, self.labels[L], L)
            for L in range(nl):
                if L in self.rules_by_parent:
                    self.un.append((L, self.base_top(L), float(self.la[DP_INIT, L] - self.lnz[DP_INIT, L])))
            for key, L, n in self.cached[DP_INIT]:
                self.un.append((L, self.cached_node(key), math.log(n) - float(self.lnz[DP_INIT, L])))
            # aux symbols for every insertable label exist already through in_top; nothing else is reachable
        finally:
            sys.setrecursionlimit(old)
        b, u, x = self.rule_arrays()
        keep_b, keep_u, keep_x = b[:, 3] > NEG, u[:, 2] > NEG, x[:, 2] > NEG
        b, u, x = b[keep_b], u[keep_u], x[keep_x]
        words = list(self.st.data.words) or ["<none>"]
        cats = SymbolTable(list(self.labels) + [FLAT])
        cfg = WeightedCFG.from_arrays(
            SymbolTable(self.names), SymbolTable(words), 0,
            binary=(b[:, 0].astype(np.int32), b[:, 1].astype(np.int32), b[:, 2].astype(np.int32), b[:, 3].copy()),
            unary=(u[:, 0].astype(np.int32), u[:, 1].astype(np.int32), u[:, 2].copy()),
            lexical=(x[:, 0].astype(np.int32), x[:, 1].astype(np.int32), x[:, 2].copy()),
            categories=cats, category=np.array(self.cat, np.int32))
        meta = {"kind": np.array(self.kind, np.int8), "label": np.array(self.label, np.int32),
                "side": np.array(self.side, np.int8), "foot": np.array(self.foot, np.int32)}
        return cfg, meta


# -- CFG derivation -> TIG derivation -> derived tree ----------------------------------------------------------
class _Node:
    __slots__ = ("sym", "kids", "word")

    def __init__(self, sym, kids, word=None):
        self.sym = sym
        self.kids = kids
        self.word = word


def derivation_nodes(steps: np.ndarray, words: list[str]) -> _Node:
    """The CFG derivation (core `Derivation.steps`, pre-order) as a tree of `_Node`s."""
    from treegram.charts import Derivation

    return Derivation(steps).build(lambda sym, start: _Node(sym, [], words[start]), _Node)


class Decoder:
    """Reads a CFG derivation of the parsing grammar as a TIG derivation: derived tree + insertion counts."""

    def __init__(self, labels: list[str], meta: dict[str, np.ndarray]):
        self.labels = labels
        self.kind = meta["kind"].tolist()
        self.lab = meta["label"].tolist()
        self.side = meta["side"].tolist()
        self.footl = meta["foot"].tolist()
        self.insertions = [0, 0, 0]
        self.mark = False  # annotate labels with the derivation (tests): +s initial root, +l<k>/+r<k> aux root

    @staticmethod
    def _marked(t: Tree, suffix: str) -> Tree:
        return Tree(t.label + suffix, t.children)

    def site(self, n: _Node) -> Tree:
        t = self.logical(n.kids[0])
        return self._marked(t, "+s") if self.mark else t

    def child(self, n: _Node) -> Tree:
        return self.site(n) if self.kind[n.sym] == S_SITE else self.logical(n)

    def logical(self, n: _Node) -> Tree:
        k = self.kind[n.sym]
        if k == S_BODY:
            return self.body(n, self.lab[n.sym])
        left: list[_Node] = []
        right: list[_Node] = []
        holder: list[_Node] = []
        self._collect(n, left, right, holder)
        return self.assemble(self.lab[n.sym], left, right, lambda F: self.body(holder[0], F))

    def _collect(self, n: _Node, left, right, holder) -> None:
        for c in n.kids:
            k = self.kind[c.sym]
            if k in (S_LNE_ANY, S_LNE_EQ):
                self._stack(c, left)
            elif k == S_RNE:
                self._stack(c, right)
            elif k == S_Y:
                self._collect(c, left, right, holder)
            elif k == S_AUX:
                (left if self.side[c.sym] == LEFT else right).append(c)
            else:
                holder.append(c)

    def _stack(self, n: _Node, out: list) -> None:
        for c in n.kids:
            if self.kind[c.sym] == S_AUX:
                out.append(c)
            else:
                self._stack(c, out)

    def assemble(self, L: int, left: list, right: list, make_inner) -> Tree:
        """left: aux nodes outermost first; right: innermost first (string order)."""
        if right:
            F = self.foot_of(right[0])
        elif left:
            F = self.foot_of(left[-1])
        else:
            F = L
        cur = make_inner(F)
        for a in right:
            cur = self.level(a.kids[0], cur)
            if self.mark:
                cur = self._marked(cur, f"+r{self.depth_of(a)}")
        for a in reversed(left):
            cur = self.level(a.kids[0], cur)
            if self.mark:
                cur = self._marked(cur, f"+l{self.depth_of(a)}")
        self.insertions[LEFT] += len(left)
        self.insertions[RIGHT] += len(right)
        return cur

    def body(self, n: _Node, label: int) -> Tree:
        name = self.labels[label]
        if n.word is not None:
            return Tree(name, (n.word,))
        return Tree(name, tuple(self.child(c) for c in n.kids))

    def foot_of(self, a: _Node) -> int:
        return self._spine_end(a)[0]

    def depth_of(self, a: _Node) -> int:
        return self._spine_end(a)[1]

    def _spine_end(self, a: _Node) -> tuple[int, int]:
        """(foot label, spine length) of the auxiliary tree under AUX node `a`."""
        n = a.kids[0]
        depth = 1
        while True:
            k = self.kind[n.sym]
            if k == S_SPINE:
                n = next(c for c in n.kids if self.kind[c.sym] == S_LEVEL)
                continue
            if self.footl[n.sym] >= 0:
                return self.footl[n.sym], depth
            if len(n.kids) == 1:
                return self.footl[n.kids[0].sym], depth  # base FOOT symbol
            n = n.kids[1] if self.side[n.sym] == LEFT else n.kids[0]
            depth += 1

    def level(self, n: _Node, cur: Tree, label: int | None = None) -> Tree:
        side = self.side[n.sym]
        name = self.labels[self.lab[n.sym] if label is None else label]
        if len(n.kids) == 1:
            c = n.kids[0]
            o = self.child(c.kids[0]) if self.kind[c.sym] == S_FOOT else self.child(c)
            spine = cur
        else:
            on, sn = (n.kids[0], n.kids[1]) if side == LEFT else (n.kids[1], n.kids[0])
            o = self.child(on)
            spine = self.spine_node(sn, cur)
        return Tree(name, (o, spine) if side == LEFT else (spine, o))

    def spine_node(self, n: _Node, cur: Tree) -> Tree:
        if self.kind[n.sym] == S_LEVEL:
            return self.level(n, cur)
        left: list[_Node] = []
        right: list[_Node] = []
        holder: list[_Node] = []
        self._collect(n, left, right, holder)
        return self.assemble(self.lab[n.sym], left, right, lambda F: self.level(holder[0], cur, F))


def derived_tree(labels: list[str], meta: dict[str, np.ndarray], steps: np.ndarray, words: list[str]):
    """(derived binarized tree, [_, left insertions, right insertions]) of a CFG derivation whose start is SITE."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 20000))
    try:
        root = derivation_nodes(steps, words)
        dec = Decoder(labels, meta)
        tree = dec.site(root)
    finally:
        sys.setrecursionlimit(old)
    return tree, dec.insertions
