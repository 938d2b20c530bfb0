"""Drawing trees for people: a top-down text picture and a `rich` renderable.

`ascii_tree` lays the tree out like a printed syntax tree: every label centred over its children, box-drawing
lines joining them, all words on the bottom line so the sentence reads left to right:

          S
       ┌──┴───┐
       NP     VP
     ┌─┴─┐    │
     DT  NN  VBD
     │   │    │
    the dog barked

Layout is computed bottom-up (widths) then top-down (positions), without recursion, so any depth is fine.
Characters are assumed to be one column wide.
"""

from __future__ import annotations

import attrs
import rich.text
import rich.tree

from treegram.trees.tree import Tree

GAP = 1  # columns between sibling subtrees

# (up, down, left, right) -> character for the line row between a node and its children
_JUNCTION = {
    (False, False, True, True): "─",
    (True, False, True, True): "┴",
    (False, True, True, True): "┬",
    (True, True, True, True): "┼",
    (False, True, False, True): "┌",
    (False, True, True, False): "┐",
    (True, False, False, True): "└",
    (True, False, True, False): "┘",
    (True, True, False, True): "├",
    (True, True, True, False): "┤",
    (True, True, False, False): "│",
    (True, False, False, False): "│",
    (False, True, False, False): "│",
    (False, False, False, False): " ",
}


@attrs.define(slots=True)
class _Box:
    text: str
    depth: int
    is_word: bool
    children: list[int] = attrs.field(factory=list)
    width: int = 0
    x: int = 0
    center: int = 0
    start: int = 0  # column where the text begins


def _boxes(tree: Tree) -> list[_Box]:
    """One box per node and per word, in pre-order (box 0 is the root)."""
    boxes = [_Box(tree.label, 0, False)]
    stack: list[tuple[Tree, int]] = [(tree, 0)]
    while stack:
        node, index = stack.pop()
        depth = boxes[index].depth + 1
        pending = []
        for c in node.children:
            boxes.append(_Box(c, depth, True) if isinstance(c, str) else _Box(c.label, depth, False))
            boxes[index].children.append(len(boxes) - 1)
            if isinstance(c, Tree):
                pending.append((c, len(boxes) - 1))
        stack.extend(reversed(pending))
    return boxes


def ascii_tree(tree: Tree) -> str:
    """A multi-line top-down drawing of `tree` (labels centred over children, words on the last line)."""
    boxes = _boxes(tree)
    # Widths, children before parents (reverse pre-order is a valid post-order here).
    for b in reversed(boxes):
        kids = sum(boxes[c].width for c in b.children) + GAP * max(len(b.children) - 1, 0)
        b.width = max(len(b.text), kids, 1)
    # Intervals, parents before children.
    for b in boxes:
        if b.children:
            total = sum(boxes[c].width for c in b.children) + GAP * (len(b.children) - 1)
            x = b.x + (b.width - total) // 2
            for c in b.children:
                boxes[c].x = x
                x += boxes[c].width + GAP
    # Centres and text positions, children before parents.
    for b in reversed(boxes):
        if b.children:
            b.center = (boxes[b.children[0]].center + boxes[b.children[-1]].center) // 2
            start = b.center - (len(b.text) - 1) // 2
            b.start = min(max(start, b.x), b.x + b.width - len(b.text))
        else:
            b.start = b.x + (b.width - len(b.text)) // 2
            b.center = b.start + max(len(b.text) - 1, 0) // 2
    word_depth = max((b.depth for b in boxes if b.is_word), default=0)
    label_depth = max(b.depth for b in boxes if not b.is_word)
    bottom = 2 * max(word_depth, label_depth)
    canvas = [[" "] * boxes[0].width for _ in range(bottom + 1)]

    def row_of(b: _Box) -> int:
        return bottom if b.is_word else 2 * b.depth

    for b in boxes:
        row = canvas[row_of(b)]
        row[b.start : b.start + len(b.text)] = list(b.text)
        if not b.children:
            continue
        centers = [boxes[c].center for c in b.children]
        lo, hi = min(centers + [b.center]), max(centers + [b.center])
        line = canvas[row_of(b) + 1]
        wanted = set(centers)
        for col in range(lo, hi + 1):
            line[col] = _JUNCTION[(col == b.center, col in wanted, col > lo, col < hi)]
        for c in b.children:
            child = boxes[c]
            for r in range(row_of(b) + 2, row_of(child)):
                canvas[r][child.center] = "│"
    return "\n".join("".join(r).rstrip() for r in canvas)


def rich_tree(tree: Tree, *, label_style: str = "bold cyan", word_style: str = "green") -> rich.tree.Tree:
    """A `rich` renderable: one line per constituent, preterminals shown with their word (`NN dog`)."""

    def text_of(node: Tree) -> rich.text.Text:
        t = rich.text.Text(node.label or "''", style=label_style)
        if node.is_preterminal:
            t.append(" ")
            t.append(str(node.children[0]), style=word_style)
        return t

    root = rich.tree.Tree(text_of(tree), guide_style="dim")
    stack: list[tuple[Tree, rich.tree.Tree]] = [(tree, root)]
    while stack:
        node, view = stack.pop()
        if node.is_preterminal:
            continue
        for c in node.children:
            if isinstance(c, str):
                view.add(rich.text.Text(c, style=word_style))
            else:
                child_view = view.add(text_of(c))
                stack.append((c, child_view))
    return root
