"""From a CFG derivation of the reduction back to OSTAG: the derived tree, the OSTAG derivation tree, statistics.

A CFG derivation (`treegram.charts.Derivation`: pre-order rows kind, rule, parent, start, end, aux) of an
`OSTAGCFG` maps to exactly one OSTAG derivation:
  * type 5 rules (site -> node[root(e)]) are substitutions of initial tree e,
  * type 3 rules (site symbol -> pair[root(a), site]) are adjunctions of auxiliary tree a, outermost first when
    several are stacked at one node,
  * everything else is deterministic structure.

`ostag_derivation` returns it as nested tuples `(kind, tree id, ops)`, kind 'init' / 'aux', ops a sorted tuple of
`(gorn address, op, children)`: op 'sub' with one child, or 'adj' with the stacked auxiliary derivations
outermost first.  Addresses are child-index paths in the elementary tree as written (not its binarization).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from treegram.trees.tree import Tree

from treegram.plugins.ostag.grammar import (
    REF_FOOT,
    REF_NODE,
    SYM_PAIR,
    SYM_SITE,
    OSTAGCFG,
)

_LEX, _UN, _BIN = 0, 1, 2


def _rtype(red: OSTAGCFG, kind: int, rule: int) -> int:
    if rule < 0:
        return 1
    return int(red.rtype[("lexical", "unary", "binary")[kind]][rule])


def _children(steps: np.ndarray) -> list[list[int]]:
    """Child step indices of every step (pre-order rows; lexical steps have none)."""
    kids: list[list[int]] = [[] for _ in range(steps.shape[0])]
    stack: list[tuple[int, int]] = []  # (step, still needed)
    for i, (kind, *_rest) in enumerate(steps.tolist()):
        if stack:
            p, need = stack[-1]
            kids[p].append(i)
            if need == 1:
                stack.pop()
            else:
                stack[-1] = (p, need - 1)
        if kind == _UN:
            stack.append((i, 1))
        elif kind == _BIN:
            stack.append((i, 2))
    return kids


def derived_tree(red: OSTAGCFG, steps: np.ndarray, words: list[str]) -> Tree:
    """The derived tree (grammar labels, `words` at the leaves): adjunction/substitution hops merged, virtual
    binarization nodes spliced out."""
    g = red.grammar
    labels = g.labels
    cat = red.cfg.category
    virtual = np.zeros(red.cfg.num_symbols, bool)
    nonsite = red.sym_node >= 0  # node and pair symbols (sites and base symbols stand for no grammar node)
    virtual[nonsite] = g.nodes.virtual[red.sym_node[nonsite]]
    kids = _children(steps)
    rows = steps.tolist()
    out: dict[int, list] = {}
    for i in range(len(rows) - 1, -1, -1):  # children before parents
        kind, rule, parent, start, _end, _aux = rows[i]
        if kind == _LEX:
            items: list = [words[start]]
        else:
            items = [x for c in kids[i] for x in out.pop(c)]
            if kind == _UN and _rtype(red, kind, rule) in (3, 5, 7):
                out[i] = items  # a hop: the node continues below
                continue
        if virtual[parent]:
            out[i] = items
        else:
            out[i] = [Tree(labels.symbol(int(cat[parent])), tuple(items))]
    (root,) = out[0]
    return root


def ostag_derivation(red: OSTAGCFG, steps: np.ndarray) -> tuple:
    """The OSTAG derivation tree of a CFG derivation (see the module docstring for the format).

    The derivation must start at a substitution (the start symbol is a site)."""
    g = red.grammar
    nd = g.nodes
    kids = _children(steps)
    rows = steps.tolist()
    # instance records: [kind, tree id, {address: (op, [children])}]
    instances: list[list[Any]] = []

    def new_instance(kind: str, tid: int) -> int:
        instances.append([kind, tid, {}])
        return len(instances) - 1

    root_inst: int | None = None
    # work items: (step, context) with context = (instance, address, offset, ret) ; ret = context of the foot
    stack: list[tuple[int, tuple | None]] = [(0, None)]
    while stack:
        i, ctx = stack.pop()
        kind, rule, parent, start, end, aux = rows[i]
        rt = _rtype(red, kind, rule)
        if kind == _UN and rt == 5:
            e = int(red.init["unary"][rule])
            inst = new_instance("init", e)
            if ctx is None:
                root_inst = inst
            else:
                pinst, addr, off, _ret = ctx
                instances[pinst][2][addr] = ("sub", [inst])
            stack.append((kids[i][0], (inst, (), 0, None)))
            continue
        if rt in (7, 8):
            raise ValueError("the derivation uses the TSG base route (site -> base), which is no OSTAG derivation "
                             "of elementary trees")
        if kind == _UN and rt == 3:
            a = int(red.aux["unary"][rule])
            inst = new_instance("aux", a)
            pinst, addr, off, ret = ctx
            slot = instances[pinst][2].setdefault(addr, ("adj", []))
            slot[1].append(inst)
            # the aux tree's spine returns to the site (same context) at its foot
            stack.append((kids[i][0], (inst, (), 0, ctx)))
            continue
        if kind == _LEX:
            continue
        # a structural rule: type 1 (node) or type 2 (pair); locate the children
        inst, addr, off, ret = ctx
        is_pair = red.sym_kind[parent] == SYM_PAIR
        node = int(red.sym_node[parent])
        if red.sym_kind[parent] == SYM_SITE:  # an external lexical entry never reaches here; a site is a hop
            raise ValueError("malformed derivation: a site symbol expanded without substitution")
        nkids = 2 if kind == _BIN else 1
        for j in range(nkids):
            c = kids[i][j]
            ck, cr = int(nd.ck[node, j]), int(nd.cr[node, j])
            if ck == REF_FOOT:
                stack.append((c, ret))  # the foot is the adjunction site itself
                continue
            if ck == REF_NODE and nd.virtual[cr]:
                child_ctx = (inst, addr, off + j, ret if (is_pair and nd.spine_pos[node] == j) else None)
            else:
                child_addr = addr + (off + j,)
                on_spine = is_pair and nd.spine_pos[node] == j
                child_ctx = (inst, child_addr, 0, ret if on_spine else None)
            stack.append((c, child_ctx))

    def freeze(inst: int) -> tuple:
        kind, tid, ops = instances[inst]
        return (kind, tid, tuple(sorted((addr, op, tuple(freeze(c) for c in cs)) for addr, (op, cs) in ops.items())))

    assert root_inst is not None
    return freeze(root_inst)


def adjunction_stats(red: OSTAGCFG, steps: np.ndarray) -> Counter:
    """Counts of adjunctions in a derivation by auxiliary-tree direction ('adjunctions', 'wrap', 'left', 'right')."""
    out: Counter = Counter()
    m = (steps[:, 0] == _UN)
    rules = steps[m, 1]
    rules = rules[rules >= 0]
    a = red.aux["unary"][rules]
    a = a[(red.rtype["unary"][rules] == 3) & (a >= 0)]
    out["adjunctions"] += int(a.size)
    for x in a.tolist():
        out[red.grammar.aux_dir[x]] += 1
    return out


def used_aux(red: OSTAGCFG, steps: np.ndarray) -> list[int]:
    m = steps[:, 0] == _UN
    rules = steps[m, 1]
    rules = rules[rules >= 0]
    sel = red.rtype["unary"][rules] == 3
    return red.aux["unary"][rules[sel]].tolist()


__all__ = ["adjunction_stats", "derived_tree", "ostag_derivation", "used_aux"]
