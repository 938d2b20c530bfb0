"""Where an OSTAG's elementary trees come from.

The interface to a TSG is deliberately small: **a list of (elementary tree, count)**, each tree a `Tree` whose
frontier nonterminals are leaf nodes with no children, over the same prepared (binarized, rare-word-mapped,
TOP-rooted) trees the OSTAG is trained on.  Sources:

* `tsg_model_elementary_trees(model)`: the fragments of a trained TSG model of the tsg plugin
  (`model.fragments`: [{"tree": bracket string, "count": n, ...}]).
* `depth_fragments(trees, max_depth)`: a deterministic stand-in (every node's complete fragments of depth
  1..max_depth, deeper ones kept when seen at least `min_count` times).

`ostag_from_tsg` is the paper's heuristic (section 5): every root/foot pair (same label, foot strictly below
root) inside a TSG rule gives the auxiliary tree between them and the TSG rule left behind when that adjunction
is undone; `tsg_prime` is the expanded TSG (TSG rules + rules left behind), the fair baseline.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from treegram.trees import Tree, binarize, parse_brackets
from treegram.trees.signatures import RareWordMapper

from treegram.plugins.ostag.grammar import FOOT_MARK, frontier_yield

START = "TOP"


def prepare_tree(tree: Tree, mapper: RareWordMapper | None, *, horizontal: int | None = 0, vertical: int = 1,
                 mark_unary: bool = True) -> Tree:
    """Binarize (the paper's @HEAD-PARENT scheme: h=0, v=1, -U on unary nodes), map rare words, root in TOP."""
    b = binarize(tree, horizontal=horizontal, vertical=vertical, mark_unary=mark_unary)
    if mapper is not None:
        b = mapper.map_training_tree(b)
    return b if b.label == START else Tree(START, (b,))


# -- sources of TSG elementary trees -------------------------------------------------------------------------------

def _cut(node: Tree, depth: int) -> Tree:
    """The fragment of `node` down to `depth` levels (a preterminal above the cut keeps its word)."""
    if depth == 0:
        return Tree(node.label, ())
    if node.is_preterminal:
        return node
    return Tree(node.label, tuple(c if isinstance(c, str) else _cut(c, depth - 1) for c in node.children))


def depth_fragments(trees: Iterable[Tree], max_depth: int = 2, min_count: int = 2) -> list[tuple[Tree, int]]:
    """Every node's complete fragments of depth 1..max_depth; depth >= 2 kept if seen >= min_count times."""
    counts: Counter[Tree] = Counter()
    deep: Counter[Tree] = Counter()
    for t in trees:
        for node in t.subtrees():
            counts[_cut(node, 1)] += 1
            for d in range(2, max_depth + 1):
                f = _cut(node, d)
                if f != _cut(node, d - 1):
                    deep[f] += 1
    out = list(counts.items())
    out += [(f, c) for f, c in deep.items() if c >= min_count]
    return out


def tsg_model_elementary_trees(model) -> list[tuple[Tree, int]]:
    """(tree, count) of a trained tsg-plugin model (its `fragments` list)."""
    out = []
    for f in model.fragments:
        (tree,) = parse_brackets(f["tree"], source="tsg fragment")
        out.append((tree, int(f["count"])))
    return out


# -- the paper's heuristic ---------------------------------------------------------------------------------------

def _paths(tree: Tree):
    stack = [(tree, ())]
    while stack:
        node, path = stack.pop()
        yield node, path
        for i, c in enumerate(node.children):
            if isinstance(c, Tree):
                stack.append((c, path + (i,)))


def _replace(tree: Tree, path: tuple[int, ...], new: Tree) -> Tree:
    if not path:
        return new
    i = path[0]
    kids = list(tree.children)
    kids[i] = _replace(kids[i], path[1:], new)  # type: ignore[arg-type]
    return Tree(tree.label, tuple(kids))


def _at(tree: Tree, path: tuple[int, ...]) -> Tree:
    for i in path:
        tree = tree.children[i]  # type: ignore[assignment]
    return tree


def root_foot_pairs(rule: Tree) -> list[tuple[Tree, Tree]]:
    """(auxiliary tree, TSG rule left behind) for every root/foot pair inside `rule`."""
    out = []
    nodes = list(_paths(rule))
    for r, rp in nodes:
        if not r.children:
            continue
        for f, fp in nodes:
            if len(fp) <= len(rp) or fp[: len(rp)] != rp or f.label != r.label:
                continue
            aux = _replace(r, fp[len(rp):], Tree(r.label + FOOT_MARK, ()))
            if len(frontier_yield(aux)) < 2:
                continue  # a unary chain back to the same label adds nothing
            left = _replace(rule, rp, f)
            if not left.children:
                continue  # the rule would shrink to a bare frontier node
            out.append((aux, left))
    return out


def ostag_from_tsg(elementary: Iterable[tuple[Tree, float]]) -> tuple[list[tuple[Tree, float]],
                                                                      list[tuple[Tree, float]]]:
    """The paper's extraction: (initial trees = TSG rules + rules left behind, auxiliary trees), with counts
    summed over the TSG rules they came from."""
    init: Counter[Tree] = Counter()
    aux: Counter[Tree] = Counter()
    for rule, count in elementary:
        init[rule] += count
        for a, left in root_foot_pairs(rule):
            aux[a] += count
            init[left] += count
    return list(init.items()), list(aux.items())


def tsg_prime(elementary: Iterable[tuple[Tree, float]]) -> list[tuple[Tree, float]]:
    """TSG': the TSG rules plus every rule left behind by the extraction (no auxiliary trees)."""
    init, _aux = ostag_from_tsg(elementary)
    return init
