"""Treebank normalization: the clean-up every grammar learner expects before it counts rules.

Raw Penn-Treebank trees carry annotation that a context-free grammar should not see: an unlabelled (or ROOT/TOP)
top bracket, empty elements (`-NONE-` traces and the constituents that contained only them), function tags
(`NP-SBJ`, `PP-CLR`) and coindexation (`NP-SBJ-1`, `NP=2`).  `normalize_tree` removes each of these, controlled by
`NormalizeOptions`; labels that *start* with `-` (`-LRB-`, `-RRB-`, `-NONE-`) are categories, not tagged labels,
and are kept intact.
"""

from __future__ import annotations

import re

import attrs

from treegram.trees.tree import Child, Tree

TOP_LABELS = frozenset({"", "ROOT", "TOP"})
TRACE_LABEL = "-NONE-"

_SPLIT = re.compile(r"([-=])")


@attrs.frozen(slots=True)
class NormalizeOptions:
    """What `normalize_tree` removes.  The defaults give the usual parsing-experiment trees."""

    remove_empty_top: bool = True
    remove_traces: bool = True
    strip_function_tags: bool = True
    strip_indices: bool = True


NO_NORMALIZATION = NormalizeOptions(
    remove_empty_top=False, remove_traces=False, strip_function_tags=False, strip_indices=False
)


def strip_label(label: str, *, function_tags: bool = True, indices: bool = True) -> str:
    """`NP-SBJ-1` -> `NP`, `PP-CLR` -> `PP`, `NP=2` -> `NP`, `S-TPC-3` -> `S`; `-LRB-`/`-NONE-` unchanged.

    A numeric part after `-` or `=` is an index, any other part a function tag; each kind is removed only when
    asked, so `strip_label("NP-SBJ-1", indices=False)` is `NP-1`.
    """
    if not label or label[0] == "-" or ("-" not in label and "=" not in label):
        return label
    parts = _SPLIT.split(label)  # [base, sep, part, sep, part, ...]
    base = parts[0]
    if not base:
        return label
    kept = [base]
    for i in range(1, len(parts) - 1, 2):
        sep, part = parts[i], parts[i + 1]
        is_index = part.isdigit()
        if (is_index and indices) or (not is_index and function_tags):
            continue
        kept.append(sep + part)
    return "".join(kept)


def normalize_tree(tree: Tree, opts: NormalizeOptions = NormalizeOptions()) -> Tree | None:
    """A normalized copy of `tree`, or None when nothing is left (a tree of empty elements only)."""
    strip = opts.strip_function_tags or opts.strip_indices
    removed: set[int] = set()  # ids of nodes that vanish (traces and constituents emptied by their removal)
    done: dict[int, Child] = {}
    for node in tree.postorder():
        if opts.remove_traces and node.label == TRACE_LABEL:
            removed.add(id(node))
            continue
        kids = tuple(c if isinstance(c, str) else done[id(c)] for c in node.children if isinstance(c, str) or id(c) not in removed)
        if opts.remove_traces and node.children and not kids:
            removed.add(id(node))
            continue
        label = node.label
        if strip:
            label = strip_label(label, function_tags=opts.strip_function_tags, indices=opts.strip_indices)
        done[id(node)] = Tree(label, kids)
    if id(tree) in removed:
        return None
    result = done[id(tree)]
    assert isinstance(result, Tree)
    if opts.remove_empty_top:
        result = remove_empty_top(result)
    return result


def remove_empty_top(tree: Tree) -> Tree:
    """Drop top brackets that wrap a single constituent and carry no information: `( (S ...) )`, `(ROOT (S ...))`."""
    while tree.label in TOP_LABELS and len(tree.children) == 1 and isinstance(tree.children[0], Tree):
        tree = tree.children[0]
    return tree
