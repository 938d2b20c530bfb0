"""Head finding: which child of a constituent is its head.

The rules follow the scheme of Collins (1999, appendix A): for each category a search direction and a priority
list of child categories; the first category of the list that occurs among the children wins, searching the
children from the given side; with no match the first child from that side is the head.  NPs use Collins'
special procedure (a final POS, else the rightmost nominal, else the leftmost NP, ...).  Two modifications that
most implementations make are built in: punctuation is never chosen as a head if anything else is available,
and categories outside the table (GUM's NML, HYPH, ...) fall back to an NP-like or a leftmost-non-punctuation
choice.

Labels may be annotated (parent annotation `NP^S`, unary marks `NP-U`, binarization nodes `@NN-NP|...`, function
tags `NP-SBJ`): `head_child` looks at `base_label` with function tags stripped.  In a head-outward binarized tree
(see `treegram.trees.binarize`) the `@` child of a node is always its head; inside an `@` node the head is the
child that continues the head chain.
"""

from __future__ import annotations

from functools import lru_cache

from treegram.trees.labels import base_label, binarized_head_side, is_binarized_node, parse_binarized_label
from treegram.trees.normalize import strip_label
from treegram.trees.tree import Tree

LEFT, RIGHT = "left", "right"

PUNCTUATION = frozenset({",", ".", ":", "``", "''", "-LRB-", "-RRB-", "-LCB-", "-RCB-", "#", "$", "HYPH", "NFP"})
# `$` and `#` head QPs/NPs in some rules; they are punctuation only for the fallback below.
_FALLBACK_AVOID = PUNCTUATION - {"$", "#"}

# category -> (direction to search the children, priority list of child categories)
HEAD_RULES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ADJP": (LEFT, ("NNS", "QP", "NN", "$", "ADVP", "JJ", "VBN", "VBG", "ADJP", "JJR", "NP", "JJS", "DT", "FW",
                    "RBR", "RBS", "SBAR", "RB")),
    "ADVP": (RIGHT, ("RB", "RBR", "RBS", "FW", "ADVP", "TO", "CD", "JJR", "JJ", "IN", "NP", "JJS", "NN")),
    "CONJP": (RIGHT, ("CC", "RB", "IN")),
    "FRAG": (RIGHT, ()),
    "INTJ": (LEFT, ()),
    "LST": (RIGHT, ("LS", ":")),
    "NAC": (LEFT, ("NN", "NNS", "NNP", "NNPS", "NP", "NAC", "EX", "$", "CD", "QP", "PRP", "VBG", "JJ", "JJS", "JJR",
                   "ADJP", "FW")),
    "PP": (RIGHT, ("IN", "TO", "VBG", "VBN", "RP", "FW")),
    "PRN": (LEFT, ()),
    "PRT": (RIGHT, ("RP",)),
    "QP": (LEFT, ("$", "IN", "NNS", "NN", "JJ", "RB", "DT", "CD", "NCD", "QP", "JJR", "JJS")),
    "RRC": (RIGHT, ("VP", "NP", "ADVP", "ADJP", "PP")),
    "S": (LEFT, ("TO", "IN", "VP", "S", "SBAR", "ADJP", "UCP", "NP")),
    "SBAR": (LEFT, ("WHNP", "WHPP", "WHADVP", "WHADJP", "IN", "DT", "S", "SQ", "SINV", "SBAR", "FRAG")),
    "SBARQ": (LEFT, ("SQ", "S", "SINV", "SBARQ", "FRAG")),
    "SINV": (LEFT, ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "S", "SINV", "ADJP", "NP")),
    "SQ": (LEFT, ("VBZ", "VBD", "VBP", "VB", "MD", "VP", "SQ")),
    "UCP": (RIGHT, ()),
    "VP": (LEFT, ("TO", "VBD", "VBN", "MD", "VBZ", "VB", "VBG", "VBP", "VP", "ADJP", "NN", "NNS", "NP")),
    "WHADJP": (LEFT, ("CC", "WRB", "JJ", "ADJP")),
    "WHADVP": (RIGHT, ("CC", "WRB")),
    "WHNP": (LEFT, ("WDT", "WP", "WP$", "WHADJP", "WHPP", "WHNP")),
    "WHPP": (RIGHT, ("IN", "TO", "FW")),
    "X": (RIGHT, ()),
}

# Categories headed like NPs (Collins' NP procedure).
NP_LIKE = frozenset({"NP", "NX", "NML"})
_NP_NOMINALS = ("NN", "NNP", "NNPS", "NNS", "NX", "NML", "POS", "JJR")


@lru_cache(maxsize=1 << 16)
def base_category(label: str) -> str:
    """The plain category of a possibly annotated label: no `^`/`@`/`-U` annotation and no function tags."""
    return strip_label(base_label(label))


def _search(cats: list[str], direction: str, priorities: tuple[str, ...]) -> int | None:
    order = range(len(cats)) if direction == LEFT else range(len(cats) - 1, -1, -1)
    for wanted in priorities:
        for i in order:
            if cats[i] == wanted:
                return i
    return None


def _first(cats: list[str], direction: str) -> int:
    """The first non-punctuation child from `direction` (the first child if all are punctuation)."""
    order = list(range(len(cats))) if direction == LEFT else list(range(len(cats) - 1, -1, -1))
    for i in order:
        if cats[i] not in _FALLBACK_AVOID:
            return i
    return order[0]


def _np_head(cats: list[str]) -> int:
    last = len(cats) - 1
    if cats[last] == "POS":
        return last
    for i in range(last, -1, -1):
        if cats[i] in _NP_NOMINALS:
            return i
    for i in range(len(cats)):
        if cats[i] in NP_LIKE:
            return i
    for group in (("$", "ADJP", "PRN"), ("CD",), ("JJ", "JJS", "RB", "QP")):
        for i in range(last, -1, -1):
            if cats[i] in group:
                return i
    return _first(cats, RIGHT)


def head_child_by_category(parent: str, child_categories: list[str]) -> int:
    """The head position among children with the given plain categories, under parent category `parent`."""
    if not child_categories:
        raise ValueError("a node without children has no head child")
    if len(child_categories) == 1:
        return 0
    if parent in NP_LIKE:
        return _np_head(child_categories)
    rule = HEAD_RULES.get(parent)
    if rule is None:
        return _first(child_categories, LEFT)
    direction, priorities = rule
    found = _search(child_categories, direction, priorities)
    return _first(child_categories, direction) if found is None else found


def head_child(tree: Tree) -> int:
    """Index of the head child of `tree` (0 for a preterminal: its word).  Raises ValueError without children.

    Binarized trees are understood when they were binarized head-outward (the default of `binarize`).
    """
    kids = tree.children
    if not kids:
        raise ValueError(f"node {tree.label!r} has no children, so no head child")
    if len(kids) == 1:
        return 0
    # Binarized trees: the @ child continues the head chain.
    for i, c in enumerate(kids):
        if isinstance(c, Tree) and is_binarized_node(c.label):
            return i
    if is_binarized_node(tree.label) and len(kids) == 2:
        side = binarized_head_side(tree.label)
        if side is not None:
            return side
    cats = [c if isinstance(c, str) else base_category(c.label) for c in kids]
    if is_binarized_node(tree.label) and len(kids) == 2:
        # Innermost @ node without side information (h=0): the child matching the recorded head category,
        # preferring the right one (the first sibling absorbed is a left one whenever the head has any).
        try:
            head_cat = strip_label(parse_binarized_label(tree.label).head)
        except ValueError:
            head_cat = ""
        for i in (1, 0):
            if cats[i] == head_cat:
                return i
    return head_child_by_category(base_category(tree.label), cats)


def head_word_index(tree: Tree) -> int:
    """Position (0-based, among the tree's words) of the lexical head reached by following head children."""
    offset = 0
    node: Tree | str = tree
    while isinstance(node, Tree):
        if not node.children:
            raise ValueError(f"node {node.label!r} has no children, so no lexical head")
        h = head_child(node)
        for c in node.children[:h]:
            offset += 1 if isinstance(c, str) else len(c.leaves())
        node = node.children[h]
    return offset
