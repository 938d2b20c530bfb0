"""Bayesian OSTAG over fixed training trees (Yamangil & Shieber 2013, section 2, restricted to off-spine adjunction).

Trees are prepared as the OSTAG EM route prepares them (`extract.prepare_tree`: h=0 v=1 head-outward binarization
with -U marks, rare words mapped, TOP root) and integer-coded with the core elementary-tree layer's `TSGData`
(`treegram.elementary`: type keys, `Tables`, type counts), so the elementary trees read off a sample are exactly the kind of trees `OSTAG` / `OSTAGModel` parse with.

A derivation of an observed tree segments its rows into elementary trees:

* initial trees, one DP per root label c: G_c ~ DP(alpha_init[c], P0-init(. | c)); P0-init is the TSG base
  (PCFG rule at every internal node, each non-root node a frontier with probability beta[label] or expanded with
  1 - beta[label]);
* auxiliary trees, one DP per root label c with base P0-aux(. | c): the root's rule from the PCFG, an unbiased
  coin for the spine child among the children of the root's category (base_label), at a spine child labelled c
  exactly a foot (probability foot[c]) or not (1 - foot[c]) (children of the category with another label are
  always expanded), a spine node expanded with its PCFG rule and again a coin, off-spine children drawn as in
  P0-init.  The foot may sit anywhere on the spine, so wrapping trees are allowed; a tree whose spine is only unary
  nodes (nothing but its foot in the yield) has probability 0, as in `OSTAG`.
* adjunction: at every node of an initial tree and every off-spine node of an auxiliary tree that is not a
  frontier node, a Geometric(mu[c]) number k of stacked (simultaneous) adjunctions: mu^k (1 - mu).  None on spine
  nodes (OSTAG's restriction), at the root (stacking covers it) or foot of an auxiliary tree.

Adjunction on the observed tree: an elementary node with label c and *top* row p takes auxiliary trees (p, z1),
(z1, z2), ..., each root/foot pair labelled c, and its own children are those of the last foot (the *body*).

Derivation encoding (per tree, local arrays; the canonical value the sampler stores): `sub` (int8: the row is the
top of an initial tree's root) and `afoot` (int32: the row is the root of an auxiliary tree whose foot is that
global row; -1 otherwise).  `decode` turns it into elementary-tree occurrences (type keys = nested tuples as in the
TIG plugin: ("s", L) frontier, ("*", L) foot, (L, ("w", word)) preterminal, (L, child, ...) internal) with the
pieces of log P0, plus the adjunction counts (label, k) of every adjoinable node, validating it.
"""

from __future__ import annotations

import math
from typing import Any

import attrs
import numpy as np

from treegram.elementary.data import KIND_BINARY, KIND_LEX, KIND_UNARY, TSGData
from treegram.elementary.tables import NEG, Tables
from treegram.elementary.types import InvalidDerivation, Occurrence
from treegram.errors import InputError
from treegram.options import SettingsRecord
from treegram.trees.binarize import check_markovization

DP_INIT, DP_AUX = 0, 1


class Invalid(InvalidDerivation):
    """An encoding that is not an OSTAG derivation of the tree (or has base probability zero)."""


@attrs.frozen
class BayesOSTAGSettings(SettingsRecord):
    """The model definition (tree preparation + initial hyperparameters), not the run."""

    horizontal: int | None = 0
    vertical: int = 1
    mark_unary: bool = True
    rare_threshold: int = 2
    alpha: float = 1.0  # initial DP concentrations (both families, every label)
    beta: float = 0.5  # initial frontier (stop) probability
    foot: float = 0.5  # initial foot probability on the spine of P0-aux
    mu: float = 0.05  # initial adjunction probability (Geometric number of stacked adjunctions)
    resample: bool = True  # slice/Gibbs-sample alpha, beta, foot, mu every sweep
    fixed_mu: bool = False  # keep mu at its initial value (a tiny mu = a Bayesian TSG sampled the same way: ablation)
    hyper_iterations: int = 2
    init_site_prob: float = 0.5  # random initialisation: frontier probability of a non-root node

    def __attrs_post_init__(self):
        for name in ("beta", "foot", "mu", "init_site_prob"):
            v = getattr(self, name)
            if not 0 < v < 1:
                raise InputError(f"--{name.replace('_', '-')} must be in (0, 1), got {v}")
        if self.alpha <= 0:
            raise InputError("--alpha must be > 0")
        check_markovization(self.vertical, self.horizontal)


class Hyper:
    """Hyperparameters, arrays over labels: alpha[dp], beta (stop), foot, mu (adjunction)."""

    NAMES = ("alpha", "beta", "foot", "mu")

    def foot_coins(self, dp: int) -> np.ndarray:
        """Immediate-foot probabilities of the auxiliary base distribution (one row for the one family)."""
        return self.foot

    def __init__(self, num_labels: int, settings: BayesOSTAGSettings):
        self.alpha = np.full((2, num_labels), float(settings.alpha))
        self.beta = np.full(num_labels, float(settings.beta))
        self.foot = np.full(num_labels, float(settings.foot))
        self.mu = np.full(num_labels, float(settings.mu))

    def copy_from(self, d: dict[str, np.ndarray]) -> None:
        for k in self.NAMES:
            setattr(self, k, np.asarray(d[k], np.float64).copy())

    def to_dict(self) -> dict[str, np.ndarray]:
        return {k: getattr(self, k).copy() for k in self.NAMES}


def adjunction_log(adj: list[tuple], h: Hyper) -> float:
    """log prod mu^k (1 - mu) over adjoinable nodes [(label, k, key node)]."""
    lp = 0.0
    mu = h.mu
    for lab, k, _node in adj:
        if k:
            lp += k * math.log(mu[lab])
        lp += math.log1p(-mu[lab])
    return lp


class TreeTables(Tables):
    """The core row tables (`treegram.elementary.tables.Tables`) plus what spines need: parent, subtree ends, row
    depths."""

    def __init__(self, data: TSGData):
        super().__init__(data)
        self.parent = data.parent
        self.subtree_end = data.subtree_end
        depth = np.zeros(data.num_rows, np.int64)
        par = data.parent
        for i in range(data.num_rows):  # parents precede children (pre-order rows)
            if par[i] >= 0:
                depth[i] = depth[par[i]] + 1
        self.depth = depth

    def below(self, s: int, z: int) -> bool:
        """z lies strictly inside the subtree of row s."""
        return s < z < self.subtree_end[s]

    def spine_child(self, s: int, z: int) -> tuple[int, int]:
        """(child index, child row) of s on the path to z (z strictly below s)."""
        a = int(self.child1[s])
        if a == z or self.below(a, z):
            return 0, a
        return 1, int(self.child2[s])

    def num_spine_options(self, s: int, c: int) -> int:
        """How many children of row s have the category of label c (the P0-aux coin's options)."""
        k = self.kind[s]
        if k == KIND_LEX:
            return 0
        cc = self.cat[c]
        m = int(self.cat[self.label[self.child1[s]]] == cc)
        if k == KIND_BINARY:
            m += int(self.cat[self.label[self.child2[s]]] == cc)
        return m

    def feet_set(self, p: int) -> frozenset:
        cache = self.__dict__.setdefault("_feet", {})
        hit = cache.get(p)
        if hit is None:
            hit = cache[p] = frozenset(self.feet(p))
        return hit

    def feet(self, p: int) -> list[int]:
        """Rows z that can be the foot of an auxiliary tree rooted at row p: label(z) = label(p), every spine node
        below p of p's category, and at least one binary spine node (the tree has more than its foot)."""
        L = int(self.label[p])
        cc = self.cat[L]
        out = []
        stack = [(p, False)]
        while stack:
            s, hasbin = stack.pop()
            k = self.kind[s]
            if k == KIND_LEX:
                continue
            hb = hasbin or k == KIND_BINARY
            kids = [int(self.child1[s])] + ([int(self.child2[s])] if k == KIND_BINARY else [])
            for y in kids:
                if self.cat[self.label[y]] != cc:
                    continue
                if self.label[y] == L and hb:
                    out.append(y)
                stack.append((y, hb))
        out.sort()
        return out


def decode(T: TreeTables, lo: int, hi: int, sub: np.ndarray, afoot: np.ndarray, sites: list | None = None):
    """(occurrences, adjunctions [(label, k, type-key node)]) of the derivation encoded by the tree-local arrays `sub`, `afoot`
    (rows lo..hi-1; `afoot` holds global rows); raises `Invalid` for a non-derivation or a base-zero tree.
    `sites` (a list) also receives (type-key node, [auxiliary type keys stacked there, outermost first]) for every
    adjoinable node with at least one adjunction (the adjunction statistics of the TAG->TSG conversion)."""
    label, kind, c1, c2, cat = T.label, T.kind, T.child1, T.child2, T.cat
    occs: list[Occurrence] = []
    adj: list[tuple[int, int]] = []
    todo: list[int] = [lo]
    visited = [0, 0]  # initial roots, auxiliary roots
    if not sub[0]:
        raise Invalid("the root must be the root of an initial tree")

    def child_key(y: int, occ: Occurrence):
        if sub[y - lo]:
            occ.stops.append(int(label[y]))
            todo.append(y)
            return ("s", int(label[y]))
        occ.expands.append(int(label[y]))
        return node(y, occ)

    def node(p: int, occ: Occurrence):
        L = int(label[p])
        x, k = p, 0
        stack = []
        while afoot[x - lo] >= 0:
            z = int(afoot[x - lo])
            stack.append(emit_aux(x, z))
            x, k = z, k + 1
        i = len(adj)
        adj.append((L, k, None))
        key = body(L, x, occ)
        adj[i] = (L, k, key)
        if sites is not None and stack:
            sites.append((key, stack))
        return key

    def body(L: int, f: int, occ: Occurrence):
        w = T.row_rule_logp(f, L)
        if w == NEG:
            raise Invalid("a rule the base PCFG does not have")
        occ.pcfg += w
        k = kind[f]
        if k == KIND_LEX:
            return (L, ("w", int(T.pword[f])))
        if k == KIND_UNARY:
            return (L, child_key(int(c1[f]), occ))
        return (L, child_key(int(c1[f]), occ), child_key(int(c2[f]), occ))

    def emit_aux(x: int, z: int):
        if not (lo <= x < hi) or not T.below(x, z) or label[z] != label[x]:
            raise Invalid(f"row {x}: foot {z} is not a descendant with the same label")
        if z not in T.feet_set(x):
            raise Invalid(f"row {x}: {z} cannot be the foot (spine category or unary-only spine)")
        visited[1] += 1
        occ = Occurrence(DP_AUX, int(label[x]))
        occ.key = spine(x, z, int(label[x]), occ)
        occs.append(occ)
        return occ.key

    def spine(s: int, z: int, c: int, occ: Occurrence):
        j, y = T.spine_child(s, z)
        m = T.num_spine_options(s, c)
        if m == 0 or cat[label[y]] != cat[c]:
            raise Invalid("spine child outside the root's category")
        w = T.row_rule_logp(s)
        if w == NEG:
            raise Invalid("a rule the base PCFG does not have")
        occ.pcfg += w - math.log(m)
        if y == z:
            occ.fyes.append(c)
            skey: Any = ("*", c)
        else:
            if afoot[y - lo] >= 0 or sub[y - lo]:
                raise Invalid("adjunction or substitution on a spine node")
            if label[y] == c:
                occ.fno.append(c)
            skey = spine(y, z, c, occ)
        if kind[s] == KIND_UNARY:
            return (int(label[s]), skey)
        o = int(c2[s]) if j == 0 else int(c1[s])
        okey = child_key(o, occ)
        return (int(label[s]), skey, okey) if j == 0 else (int(label[s]), okey, skey)

    while todo:
        r = todo.pop()
        visited[0] += 1
        occ = Occurrence(DP_INIT, int(label[r]))
        occ.key = node(r, occ)
        occs.append(occ)
    if visited[0] != int(np.count_nonzero(sub)) or visited[1] != int(np.count_nonzero(afoot >= 0)):
        raise Invalid("flags on rows the derivation does not visit")
    return occs, adj


# -- type keys ------------------------------------------------------------------------------------------------------

def spine_length(key) -> int:
    """Number of spine levels from the root of an auxiliary type key down to its foot (-1: no foot)."""
    n = 0
    node = key
    while True:
        nxt = None
        for k in node[1:]:
            if k[0] == "*":
                return n + 1
            if not isinstance(k[0], str) and has_foot(k):
                nxt = k
        if nxt is None:
            return -1
        node, n = nxt, n + 1


def has_foot(node) -> bool:
    if isinstance(node[0], str):
        return node[0] == "*"
    return any(has_foot(k) for k in node[1:] if k[0] != "w")


def key_size(node) -> int:
    if isinstance(node[0], str):
        return 1
    return 1 + sum(key_size(k) for k in node[1:] if k[0] != "w")


def key_direction(key) -> str:
    """'left' / 'right' / 'wrap' for an auxiliary type key: where its other leaves lie relative to the foot."""
    left = right = 0
    seen = False
    stack = [key]
    while stack:
        n = stack.pop()
        if n[0] == "*":
            seen = True
            continue
        if n[0] in ("s", "w") or isinstance(n[0], str):
            right += seen
            left += not seen
            continue
        stack.extend(reversed(n[1:]))
    if left and right:
        return "wrap"
    return "left" if left else "right"
