"""The immutable tree type shared by every part of treegram.

A `Tree` is a label plus a tuple of children; a child is either another `Tree` or a word (`str`).
A preterminal is a tree whose only child is a word.  Trees are frozen (hashable, safe to share between
derivation states) and every traversal here is iterative, so deep trees never hit Python's recursion limit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Union

import attrs

Child = Union["Tree", str]


@attrs.frozen(slots=True, eq=False, repr=False)
class Tree:
    label: str
    children: tuple[Child, ...] = attrs.field(converter=tuple, default=())

    # -- structure -------------------------------------------------------------------------
    @property
    def is_preterminal(self) -> bool:
        return len(self.children) == 1 and isinstance(self.children[0], str)

    def leaves(self) -> list[str]:
        """The words, left to right."""
        return [c for c in self.frontier() if isinstance(c, str)]

    def frontier(self) -> list[Child]:
        """The frontier, left to right: the words and the nodes without children (the substitution sites and foot
        of an elementary tree), those as themselves."""
        out: list[Child] = []
        stack: list[Child] = [self]
        while stack:
            node = stack.pop()
            if isinstance(node, str) or not node.children:
                out.append(node)
            else:
                stack.extend(reversed(node.children))
        return out

    def pos(self) -> list[tuple[str, str]]:
        """(word, preterminal label) pairs, left to right."""
        return [(t.children[0], t.label) for t in self.subtrees() if t.is_preterminal]  # type: ignore[misc]

    def subtrees(self) -> Iterator[Tree]:
        """All subtrees (self included) in pre-order."""
        stack: list[Tree] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(c for c in reversed(node.children) if isinstance(c, Tree))

    def postorder(self) -> Iterator[Tree]:
        """All subtrees in post-order (children before parents)."""
        out: list[Tree] = []
        stack: list[Tree] = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(c for c in node.children if isinstance(c, Tree))
        return reversed(out)

    def spans(self) -> Iterator[tuple[Tree, int, int]]:
        """(subtree, start, end) for every subtree, in pre-order; word positions are 0-based, end exclusive."""
        lengths: dict[int, int] = {}
        for node in self.postorder():
            lengths[id(node)] = sum(1 if isinstance(c, str) else lengths[id(c)] for c in node.children)
        stack: list[tuple[Tree, int]] = [(self, 0)]
        while stack:
            node, start = stack.pop()
            yield node, start, start + lengths[id(node)]
            pos = start
            pending = []
            for c in node.children:
                if isinstance(c, str):
                    pos += 1
                else:
                    pending.append((c, pos))
                    pos += lengths[id(c)]
            stack.extend(reversed(pending))

    def __len__(self) -> int:
        return len(self.children)

    def __getitem__(self, i: int) -> Child:
        return self.children[i]

    def height(self) -> int:
        """Number of nodes on the longest root-to-word path (a preterminal has height 2)."""
        h: dict[int, int] = {}
        for node in self.postorder():
            h[id(node)] = 1 + max((1 if isinstance(c, str) else h[id(c)] for c in node.children), default=0)
        return h[id(self)]

    def num_nodes(self) -> int:
        return sum(1 for _ in self.subtrees())

    # -- rewriting -------------------------------------------------------------------------
    def map_words(self, fn: Callable[[str], str]) -> Tree:
        return bottom_up(self, lambda t, kids: Tree(t.label, tuple(fn(k) if isinstance(k, str) else k for k in kids)))

    # -- equality / hashing (iterative, so deep trees are fine) ----------------------------
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tree):
            return NotImplemented
        stack: list[tuple[Child, Child]] = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if isinstance(a, str) or isinstance(b, str):
                if a != b:
                    return False
                continue
            if a.label != b.label or len(a.children) != len(b.children):
                return False
            stack.extend(zip(a.children, b.children))
        return True

    def __hash__(self) -> int:
        memo: dict[int, int] = {}
        for node in self.postorder():
            memo[id(node)] = hash((node.label, tuple(c if isinstance(c, str) else memo[id(c)] for c in node.children)))
        return memo[id(self)]

    def __repr__(self) -> str:
        return f"Tree({self.to_bracket()!r})"

    def __str__(self) -> str:
        return self.to_bracket()

    def to_bracket(self) -> str:
        """One-line PTB bracket string, e.g. `(S (NP (DT the) (NN cat)) (VP (VBD sat)))`."""
        parts: list[str] = []
        stack: list[object] = [self]
        while stack:
            item = stack.pop()
            if isinstance(item, Tree):
                parts.append("(" + item.label)
                stack.append(")")
                for c in reversed(item.children):
                    stack.append(c)
                    stack.append(" ")
            else:
                parts.append(item)  # type: ignore[arg-type]
        return "".join(parts)


def bottom_up(tree: Tree, build: Callable[[Tree, tuple[Child, ...]], Child]) -> Tree:
    """Rebuild `tree` bottom-up without recursion: build(original_node, new_children) -> new node.

    `build` may return a word (str) or a Tree; returning a tuple-less Tree drops structure as you like.
    """
    done: dict[int, Child] = {}
    for node in tree.postorder():
        kids = tuple(c if isinstance(c, str) else done[id(c)] for c in node.children)
        done[id(node)] = build(node, kids)
    result = done[id(tree)]
    if not isinstance(result, Tree):
        raise TypeError("bottom_up must return a Tree for the root")
    return result


def oversized(trees, max_nodes: int) -> list[int]:
    """Indices of the trees with more than `max_nodes` nodes (words included), counted without recursion."""
    out = []
    for i, t in enumerate(trees):
        n = 0
        stack: list[Child] = [t]
        while stack:
            node = stack.pop()
            n += 1
            if n > max_nodes:
                out.append(i)
                break
            if not isinstance(node, str):
                stack.extend(node.children)
    return out


def drop_oversized(trees, max_nodes: int, *, what: str, note: Callable[[str], object] | None = None) -> list[Tree]:
    """`trees` without those over `max_nodes` nodes, with one note saying how many were left out and why.

    For training paths whose per-tree cost grows faster than linearly in the tree's size (TIG insertion chains,
    OSTAG adjunction spans): a 100,000-node tree is left out with a message instead of running for hours."""
    trees = list(trees)
    big = oversized(trees, max_nodes)
    if not big:
        return trees
    if note is not None:
        note(f"note: left out {len(big)} training tree(s) with more than {max_nodes} nodes "
             f"(first: tree {big[0] + 1}); {what} training cost grows faster than the tree size")
    skip = set(big)
    return [t for i, t in enumerate(trees) if i not in skip]


@contextlib.contextmanager
def recursion_headroom(limit: int = 20_000):
    """Temporarily allow deeper Python recursion for memoized builders whose depth is bounded by a size limit
    (Python 3.11+ runs Python-to-Python calls without growing the C stack)."""
    import sys

    old = sys.getrecursionlimit()
    if old < limit:
        sys.setrecursionlimit(limit)
    try:
        yield
    finally:
        if old < limit:
            sys.setrecursionlimit(old)
