"""The Bayesian TIG model of Yamangil & Shieber (2012) over fixed (observed) training trees.

Trees are prepared by the core elementary-tree layer (`treegram.elementary`: binarized, rare words mapped, TOP
root) exactly as for the TSG; type keys, rule shapes and type counts are its `tables`.
A TIG derivation of an observed tree is a segmentation of its nodes into elementary trees:

* initial trees (one DP per root label, as in the TSG), rooted at substitution sites;
* left / right auxiliary trees (one DP per root label and side).  A left auxiliary tree with root *body* x has its
  spine on the last-child path below x, every spine node binary and of the root's category (`base_label`, so
  `@NN-NP^S|<JJ` and `NP^S` are both NP), ending in a foot node z (frontier, any depth >= 1).  Symmetrically for
  right auxiliary trees (first-child path).

Insertion.  Every *logical* node n of an elementary tree with label L has a top (where its parent sees it) and a
body (the observed node holding its children).  Left insertions stack on the last-child path below the top:
aux root labels equal L, each foot is the next root (root adjunction = simultaneous insertion); then right
insertions stack on the first-child path; the innermost foot is n's body.  The foot's own label (same category)
is part of the auxiliary tree type, which is how annotated labels (NP^S above NP^NP) stay consistent: the
elementary node keeps the top's label L and its rule is L -> (children of the body).

Insertion parameters: initial-tree nodes and non-spine nodes of auxiliary trees (IN) decide left (phi_L[L]) and
right (phi_R[L]) insertions; spine nodes of left aux trees (root included, foot excluded) only left ones (SL),
of right aux trees only right ones (SR).  A chain of k stacked insertions costs phi^k (1 - phi).
TIG0 (Shindo et al. 2011): feet are children of the root, at most one insertion per IN node (left with
probability phi_L, else right with (1 - phi_L) phi_R), no insertion on auxiliary trees' spines (no stacking).

Base distributions.  P0-init(e | L): the TSG's (treebank PCFG rules x beta stop at frontier, 1 - beta at
internal non-root nodes).  P0-left(a | L): at every spine level with label S the rule S -> A B is drawn from the
PCFG *conditioned on cat(B) = cat(S)*, the spine child is the foot with probability foot_L[S] (TIG only; TIG0
feet are always immediate), the non-spine child A is a frontier (beta[A]) or expanded as in P0-init.  Mirror
for P0-right.

Derivation encoding (per tree row, the canonical value the blocked sampler stores): `sub` (int8: the row is the
top of an initial tree's root), `adir` (int8: 0, LEFT or RIGHT: the row is the *body* of an auxiliary tree's
root) and `afoot` (int32: that tree's foot row, -1 otherwise).  `decode` turns an encoding into elementary tree
occurrences (type keys = nested tuples, P0 pieces) and insertion decisions, validating it.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from treegram.elementary.data import KIND_BINARY, KIND_LEX, KIND_UNARY, TSGData, TSGSettings
from treegram.elementary.tables import NEG, Tables
from treegram.elementary.types import InvalidDerivation, Occurrence
from treegram.errors import InputError
from treegram.options import SettingsRecord

LEFT, RIGHT = 1, 2
DP_INIT, DP_LEFT, DP_RIGHT = 0, 1, 2
IN, SL, SR = 0, 1, 2


class Invalid(InvalidDerivation):
    """An encoding that is not a TIG derivation of the tree (or has probability zero under the base)."""


@attrs.frozen
class TIGSettings(SettingsRecord):
    """The model definition (not the run)."""

    variant: str = "tig"  # tig | tig0
    horizontal: int | None = 1
    vertical: int = 2
    rare_threshold: int = 2
    alpha: float = 1.0  # initial DP concentrations (all DPs)
    beta: float = 0.5  # initial stop probability
    foot: float = 0.5  # initial immediate-foot probability of the aux base distributions
    phi: float = 0.05  # initial insertion probability
    resample: bool = True  # slice/Gibbs-sample alpha, beta, foot, phi every sweep
    hyper_iterations: int = 2

    def __attrs_post_init__(self):
        if self.variant not in ("tig", "tig0"):
            raise InputError(f"unknown TIG variant {self.variant!r}", hint="use --variant tig or --variant tig0")
        for name in ("beta", "foot", "phi"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise InputError(f"--{name} must be in (0, 1), got {v}")
        if self.alpha <= 0:
            raise InputError("--alpha must be > 0")

    @property
    def tig0(self) -> bool:
        return self.variant == "tig0"

    def tsg_settings(self) -> TSGSettings:
        return TSGSettings(horizontal=self.horizontal, vertical=self.vertical, rare_threshold=self.rare_threshold)


class TIGTables(Tables):
    """The core row tables plus the TIG's conditional spine rules: P(L -> A B | cat(B) = cat(L)) (LEFT) and
    P(L -> A B | cat(A) = cat(L)) (RIGHT)."""

    def __init__(self, data: TSGData):
        super().__init__(data)
        nl = len(data.labels)
        self.cond: dict[int, dict[tuple[int, int, int], float]] = {LEFT: {}, RIGHT: {}}
        for side in (LEFT, RIGHT):
            norm = np.full(nl, NEG)
            sel = []
            for (p, k, a, b), w in self.rule.items():
                if k != KIND_BINARY:
                    continue
                spine = b if side == LEFT else a
                if self.cat[spine] == self.cat[p]:
                    sel.append((p, a, b, w))
                    norm[p] = np.logaddexp(norm[p], w)
            self.cond[side] = {(p, a, b): w - norm[p] for p, a, b, w in sel}

    def cond_logp(self, side: int, L: int, a: int, b: int) -> float:
        return self.cond[side].get((L, a, b), NEG)


class RuleLists:
    """The rules a TIG -> CFG transform emits (the per-tree proposal and the parsing grammar): binary (parent, left,
    right, log p), unary (parent, child, log p) and lexical (position or word, symbol, log p) tuples, and the same
    as float arrays."""

    def _start_rules(self) -> None:
        self.bin: list[tuple[int, int, int, float]] = []
        self.un: list[tuple[int, int, float]] = []
        self.lex: list[tuple[int, int, float]] = []

    def rule_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(binary [n, 4], unary [n, 3], lexical [n, 3]) float64 arrays of the rules."""
        return (np.array(self.bin, np.float64).reshape(-1, 4), np.array(self.un, np.float64).reshape(-1, 3),
                np.array(self.lex, np.float64).reshape(-1, 3))


class Hyper:
    """All hyperparameters, arrays over labels: alpha[dp], beta (stop), foot[side], phi[side]."""

    def __init__(self, num_labels: int, settings: TIGSettings):
        self.alpha = np.full((3, num_labels), float(settings.alpha))
        self.beta = np.full(num_labels, float(settings.beta))
        self.foot = np.full((3, num_labels), float(settings.foot))  # rows LEFT, RIGHT used
        self.phi = np.full((3, num_labels), float(settings.phi))  # rows LEFT, RIGHT used

    NAMES = ("alpha", "beta", "foot", "phi")

    def foot_coins(self, dp: int) -> np.ndarray:
        """Immediate-foot probabilities of family dp's base distribution (DP_LEFT / DP_RIGHT)."""
        return self.foot[dp]

    def copy_from(self, d: dict[str, np.ndarray]) -> None:
        for k in self.NAMES:
            setattr(self, k, np.asarray(d[k], np.float64).copy())

    def to_dict(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k).copy() for k in self.NAMES}


def phi_log(decisions, hyper: Hyper) -> float:
    """log-probability of insertion decisions [(label, side, yes, no)]."""
    lp = 0.0
    for lab, side, yes, no in decisions:
        p = hyper.phi[side][lab]
        if yes:
            lp += yes * math.log(p)
        if no:
            lp += no * math.log1p(-p)
    return lp


def decode(T: TIGTables, lo: int, hi: int, sub: np.ndarray, adir: np.ndarray, afoot: np.ndarray, tig0: bool):
    """Elementary-tree occurrences and insertion decisions of the derivation encoded by the tree-local arrays
    `sub`, `adir`, `afoot` (rows lo..hi-1, `afoot` in global rows); raises `Invalid` for a non-derivation."""
    label, kind, c1, c2, cat, pword = T.label, T.kind, T.child1, T.child2, T.cat, T.pword
    occs: list[Occurrence] = []
    phis: list[tuple[int, int, int, int]] = []
    todo: list[int] = [lo]
    counted = [0, 0]  # initial roots, aux roots

    if not sub[0]:
        raise Invalid("the root must be an initial tree root")

    def child_key(y, b: Occurrence):
        if sub[y - lo]:
            b.stops.append(int(label[y]))
            todo.append(y)
            return ("s", int(label[y]))
        b.expands.append(int(label[y]))
        L = int(label[y])
        return node(y, IN, b, lambda f: body_key(L, f, b))

    def body_key(L, f, b: Occurrence):
        k = kind[f]
        if k == KIND_LEX:
            w = T.rule_logp(L, KIND_LEX, int(pword[f]), -1)
            if w == NEG:
                raise Invalid
            b.pcfg += w
            return (L, ("w", int(pword[f])))
        if k == KIND_UNARY:
            y = int(c1[f])
            w = T.rule_logp(L, KIND_UNARY, int(label[y]), -1)
            if w == NEG:
                raise Invalid
            b.pcfg += w
            return (L, child_key(y, b))
        y, z = int(c1[f]), int(c2[f])
        w = T.rule_logp(L, KIND_BINARY, int(label[y]), int(label[z]))
        if w == NEG:
            raise Invalid
        b.pcfg += w
        return (L, child_key(y, b), child_key(z, b))

    def node(p, elig, b, body):
        L = int(label[p])
        x = p
        if tig0:
            if elig == IN:
                side = adir[x - lo]
                if side:
                    x = emit_aux(x, side)
                    if side == LEFT:
                        phis.append((L, LEFT, 1, 0))
                    else:
                        phis.append((L, LEFT, 0, 1))
                        phis.append((L, RIGHT, 1, 0))
                else:
                    phis.append((L, LEFT, 0, 1))
                    phis.append((L, RIGHT, 0, 1))
        else:
            sides = (LEFT, RIGHT) if elig == IN else ((LEFT,) if elig == SL else (RIGHT,))
            for side in sides:
                n = 0
                while adir[x - lo] == side:
                    if x != p and label[x] != L:
                        raise Invalid("stacked auxiliary roots must carry the node's label")
                    x = emit_aux(x, side)
                    n += 1
                phis.append((L, side, n, 1))
        if adir[x - lo]:
            raise Invalid
        return body(x)

    def emit_aux(x, side):
        z = int(afoot[x - lo])
        if not (x < z < hi):
            raise Invalid
        b = Occurrence(DP_LEFT if side == LEFT else DP_RIGHT, int(label[x]))
        b.key = aux_body(x, z, side, b, int(label[x]))
        occs.append(b)
        counted[1] += 1
        return z

    def aux_body(q, z, side, b, lab):
        if kind[q] != KIND_BINARY:
            raise Invalid
        y, w2 = int(c1[q]), int(c2[q])
        o, s = (y, w2) if side == LEFT else (w2, y)
        if cat[label[s]] != cat[lab]:
            raise Invalid
        w = T.cond_logp(side, lab, int(label[y]), int(label[w2]))
        if w == NEG:
            raise Invalid
        b.pcfg += w
        okey = child_key(o, b)
        if s == z:
            if not tig0:
                b.fyes.append(lab)
            skey = ("*", int(label[z]))
        else:
            if tig0:
                raise Invalid("TIG0 feet are children of the root")
            b.fno.append(lab)
            sl = int(label[s])
            skey = node(s, SL if side == LEFT else SR, b, lambda qq: aux_body(qq, z, side, b, sl))
        return (lab, okey, skey) if side == LEFT else (lab, skey, okey)

    while todo:
        r = todo.pop()
        b = Occurrence(DP_INIT, int(label[r]))
        L = int(label[r])
        b.key = node(r, IN, b, lambda f, L=L, b=b: body_key(L, f, b))
        occs.append(b)
        counted[0] += 1
    if counted[0] != int(np.count_nonzero(sub)) or counted[1] != int(np.count_nonzero(adir)):
        raise Invalid("flags on rows the derivation does not visit")
    if np.any((adir == 0) & (afoot != -1)):
        raise Invalid("foot recorded for a row without auxiliary tree")
    return occs, phis


def foot_label(node, side: int) -> int:
    """Label of the foot of an auxiliary tree key."""
    while True:
        spine = node[2] if side == LEFT else node[1]
        if spine[0] == "*":
            return spine[1]
        node = spine
