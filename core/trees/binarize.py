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
from treegram.trees.tree import Child, Tree, bottom_up

__all__ = [
    "BinarizedLabel",
    "base_label",
    "binarize",
    "binarized_head_side",
    "is_binarized_node",
    "parse_binarized_label",
    "unbinarize",
]


def _check_labels(tree: Tree) -> None:
    for node in tree.subtrees():
        if has_reserved_syntax(node.label):
            raise InputError(
                f"cannot binarize: label {node.label!r} already uses annotation syntax (@ prefix, ^, or -U suffix)",
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
    _check_labels(tree)
    # Ancestor labels (nearest first, at most vertical-1 of them) for every node.
    ancestors: dict[int, tuple[str, ...]] = {id(tree): ()}
    if vertical > 1:
        for node in tree.subtrees():
            up = ((node.label,) + ancestors[id(node)])[: vertical - 1]
            for c in node.children:
                if isinstance(c, Tree):
                    ancestors[id(c)] = up

    factor = _head_outward if head_outward else _right_factored

    def build(node: Tree, kids: tuple[Child, ...]) -> Tree:
        label = node.label
        if vertical > 1 and (annotate_preterminals or not node.is_preterminal):
            for a in ancestors[id(node)]:
                label += PARENT_SEP + a
        if len(kids) > 2:
            return factor(label, node.children, list(kids), head_child(node), horizontal)
        if mark_unary and len(kids) == 1 and isinstance(kids[0], Tree):
            label += UNARY_MARK
        return Tree(label, kids)

    return bottom_up(tree, build)


def unbinarize(tree: Tree) -> Tree:
    """Undo `binarize`: splice out `@` nodes and strip vertical annotations and unary marks."""

    def build(node: Tree, kids: tuple[Child, ...]) -> Tree:
        spliced: list[Child] = []
        for c in kids:
            if isinstance(c, Tree) and is_binarized_node(c.label):
                spliced.extend(c.children)
            else:
                spliced.append(c)
        if is_binarized_node(node.label):
            return Tree(node.label, spliced)  # spliced into its parent one level up
        return Tree(strip_annotations(node.label), spliced)

    result = bottom_up(tree, build)
    if is_binarized_node(result.label):  # a parser may return a bare @ root; name it by its category
        result = Tree(base_label(result.label), result.children)
    return result
