"""Markovized, head-outward binarization (and its exact inverse).

Chart parsers and the OSTAG sister-adjunction scheme need binary rules.  Following Swanson et al. (2013, sec. 5),
a node with more than two children is rebuilt from its head child outward; every added node is labelled with `@`
and records the head child's category and the parent:

    NP -> DT JJ NN SBAR   (head NN)   becomes   NP        -> DT @NN-NP
                                                @NN-NP    -> @NN-NP SBAR
                                                @NN-NP    -> JJ NN          (shown with horizontal=0)

Siblings are absorbed alternately: the nearest left sibling, then the nearest right one, then the next left one,
... (continuing on one side once the other is used up); this order reproduces the paper's example.  With
`head_outward=False` the node is instead right-factored left to right (`P -> c0 @; @ -> c1 @; ...`).

Label format (parsed by `treegram.trees.labels`):

* `@HEAD-PARENT` is an added node; HEAD is the head child's plain category (function tags and annotations
  removed), PARENT the full (possibly parent-annotated) label of the node being binarized.
* Horizontal markovization `horizontal=h` appends the last h absorbed siblings, oldest first, each marked with its
  side: `@NN-NP|<JJ|>SBAR` (JJ absorbed on the left, then SBAR on the right).  `h=None` keeps all of them, so
  no information is lost; `h=0` gives the paper's bare `@NN-NP`.  With `head_outward=False` the entries are the
  siblings already generated to the left of the node (Klein & Manning's left-to-right markovization), all `<`.
* Vertical markovization `vertical=v` (v >= 2) appends the labels of the v-1 nearest ancestors: `NP^S` (v=2),
  `NP^S^VP` (v=3, grandparent VP).  The root has no ancestors and keeps its label; preterminals are annotated
  only with `annotate_preterminals=True`.  Ancestor labels are the original (unannotated) ones.
* `mark_unary=True` appends `-U` to a nonterminal whose only child is a nonterminal (after everything else):
  `S^VP-U`.

`unbinarize` splices out every `@` node and strips all annotations, so `unbinarize(binarize(t, ...)) == t` for
every setting.  To guarantee that, `binarize` refuses trees whose labels already use this syntax (start with `@`,
contain `^`, or end with `-U`).  Everything runs bottom-up without recursion.
"""

from __future__ import annotations

from treegram.errors import InputError
from treegram.trees.heads import head_child
from treegram.trees.labels import (
    BINARIZED_PREFIX,
    CONTEXT_SEP,
    LEFT_MARK,
    PARENT_SEP,
    RIGHT_MARK,
    UNARY_MARK,
    BinarizedLabel,
    base_label,
    binarized_head_side,
    has_reserved_syntax,
    is_binarized_node,
    parse_binarized_label,
    strip_annotations,
)
from treegram.trees.normalize import strip_label
from treegram.trees.tree import Child, Tree

__all__ = [
    "BinarizedLabel",
    "base_label",
    "binarize",
    "binarized_head_side",
    "check_markovization",
    "is_binarized_node",
    "parse_binarized_label",
    "unbinarize",
]


def _check_label(label: str) -> None:
    if has_reserved_syntax(label):
        raise InputError(
            f"cannot binarize: label {label!r} already uses annotation syntax (@ prefix, ^, or -U suffix)",
            hint="unbinarize the tree first, or rename the label",
        )


def _binarized_label(head_cat: str, parent: str, context: list[tuple[str, str]], horizontal: int | None) -> str:
    label = f"{BINARIZED_PREFIX}{head_cat}-{parent}"
    kept = context if horizontal is None else context[-horizontal:] if horizontal > 0 else []
    if kept:
        label += CONTEXT_SEP + CONTEXT_SEP.join(side + sib for side, sib in kept)
    return label


def _label_of(child: Child) -> str:
    return child if isinstance(child, str) else child.label


def _head_outward(
    label: str, originals: tuple[Child, ...], kids: list[Child], head: int, horizontal: int | None
) -> Tree:
    """Absorb siblings around kids[head], alternating left/right starting on the left."""
    head_cat = strip_label(base_label(_label_of(originals[head])))
    left = list(range(head - 1, -1, -1))
    right = list(range(head + 1, len(kids)))
    order: list[int] = []
    while left or right:
        if left:
            order.append(left.pop(0))
        if right:
            order.append(right.pop(0))
    current: Child = kids[head]
    absorbed: list[tuple[str, str]] = []
    for step, idx in enumerate(order):
        side = LEFT_MARK if idx < head else RIGHT_MARK
        absorbed.append((side, _label_of(originals[idx])))
        pair = (kids[idx], current) if idx < head else (current, kids[idx])
        is_last = step == len(order) - 1
        current = Tree(label if is_last else _binarized_label(head_cat, label, absorbed, horizontal), pair)
    assert isinstance(current, Tree)
    return current


def _right_factored(
    label: str, originals: tuple[Child, ...], kids: list[Child], head: int, horizontal: int | None
) -> Tree:
    """P -> c0 @; @ -> c1 @; ... ; @ -> c[n-2] c[n-1], each @ recording the siblings generated to its left."""
    head_cat = strip_label(base_label(_label_of(originals[head])))
    n = len(kids)
    current: Child = kids[n - 1]
    for i in range(n - 2, -1, -1):
        if i == 0:
            node_label = label
        else:
            generated = [(LEFT_MARK, _label_of(originals[j])) for j in range(i)]
            node_label = _binarized_label(head_cat, label, generated, horizontal)
        current = Tree(node_label, (kids[i], current))
    assert isinstance(current, Tree)
    return current


def check_markovization(vertical: int, horizontal: int | None) -> None:
    """A settings class's markovization, checked when it is made: vertical >= 1, horizontal >= 0 or None."""
    if vertical < 1 or (horizontal is not None and horizontal < 0):
        raise InputError("markovization: vertical >= 1 and horizontal >= 0 (or None)")


def binarize(
    tree: Tree,
    *,
    horizontal: int | None = 2,
    vertical: int = 1,
    head_outward: bool = True,
    mark_unary: bool = False,
    annotate_preterminals: bool = False,
) -> Tree:
    """A binary-branching copy of `tree` (see the module docstring for the labels it adds)."""
    if horizontal is not None and horizontal < 0:
        raise ValueError(f"horizontal must be >= 0 or None, not {horizontal}")
    if vertical < 1:
        raise ValueError(f"vertical must be >= 1, not {vertical}")
    factor = _head_outward if head_outward else _right_factored
    up_to = vertical - 1
    annotate_tags = annotate_preterminals and up_to > 0
    checked: set[str] = set()

    def check(label: str) -> None:
        if label not in checked:
            _check_label(label)
            checked.add(label)

    # Pre-order pass recording each node's ancestor labels (nearest first, at most vertical-1 of them).
    # Preterminals that stay as they are are only checked, not visited: they are about half of all nodes.
    check(tree.label)
    order: list[tuple[Tree, tuple[str, ...]]] = []
    stack: list[tuple[Tree, tuple[str, ...]]] = [(tree, ())]
    while stack:
        node, anc = stack.pop()
        order.append((node, anc))
        if node.children:
            up = ((node.label,) + anc)[:up_to] if up_to else ()
            for c in node.children:
                if c.__class__ is Tree:
                    check(c.label)
                    if annotate_tags or not c.is_preterminal:
                        stack.append((c, up))
    done: dict[int, Child] = {}
    for node, anc in reversed(order):
        children = node.children
        kids = [done.get(id(c), c) for c in children]
        label = node.label
        if anc and (annotate_preterminals or not node.is_preterminal):
            label += "".join(PARENT_SEP + a for a in anc)
        if len(kids) > 2:
            done[id(node)] = factor(label, children, kids, head_child(node), horizontal)
        else:
            if mark_unary and len(kids) == 1 and kids[0].__class__ is Tree:
                label += UNARY_MARK
            if label is node.label and all(k is c for k, c in zip(kids, children)):
                done[id(node)] = node  # unchanged subtree: share it (trees are immutable)
            else:
                done[id(node)] = Tree(label, kids)
    result = done[id(tree)]
    assert isinstance(result, Tree)
    return result


class _Splice(list):
    """Children an @ node hands up to its parent: items and nested `_Splice`s, in order."""


def _flatten(items: list) -> list[Child]:
    out: list[Child] = []
    stack = [iter(items)]
    while stack:
        for x in stack[-1]:
            if x.__class__ is _Splice:
                stack.append(iter(x))
                break
            out.append(x)
        else:
            stack.pop()
    return out


def unbinarize(tree: Tree) -> Tree:
    """Undo `binarize`: splice out `@` nodes and strip vertical annotations and unary marks."""
    stripped: dict[str, str] = {}
    # Pre-order; preterminals without annotation are left as they are and not visited.
    order: list[Tree] = []
    stack = [tree]
    while stack:
        node = stack.pop()
        order.append(node)
        for c in node.children:
            if c.__class__ is Tree:
                if c.is_preterminal:
                    label = c.label
                    plain = stripped.get(label)
                    if plain is None:
                        plain = stripped[label] = strip_annotations(label)
                    if plain == label and label[:1] != BINARIZED_PREFIX:
                        continue
                stack.append(c)
    # For each node: its rebuilt children; an @ node hands its children up as a `_Splice` (a rope: items and nested
    # ropes, flattened once by the first non-@ ancestor), so a long @ chain costs linear, not quadratic, time/memory.
    done: dict[int, Child | _Splice] = {}
    for node in reversed(order):
        items: list = [done.get(id(c), c) if c.__class__ is Tree else c for c in node.children]
        label = node.label
        if label[:1] == BINARIZED_PREFIX:
            done[id(node)] = _Splice(items)
            continue
        spliced = _flatten(items) if any(i.__class__ is _Splice for i in items) else items
        plain = stripped.get(label)
        if plain is None:
            plain = stripped[label] = strip_annotations(label)
        if plain == label and len(spliced) == len(node.children) and all(
            k is c for k, c in zip(spliced, node.children)
        ):
            done[id(node)] = node  # unchanged subtree: share it
        else:
            done[id(node)] = Tree(plain, spliced)
    result = done[id(tree)]
    if isinstance(result, _Splice):  # a parser may return a bare @ root; name it by its category
        return Tree(base_label(tree.label), _flatten(result))
    assert isinstance(result, Tree)
    return result
