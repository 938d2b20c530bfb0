"""Trees as flat integer arrays, for numba samplers and other hot loops that cannot touch Python objects.

Layout (`TreeArrays`): one row per node in pre-order, node 0 the root.  **Words are leaf nodes** of their own
(label -1, word id >= 0), so any `Tree` round-trips exactly: preterminals, nodes mixing words and subtrees, and
frontier nonterminals without children (elementary trees) alike.  For a nonterminal `word` is -1.

    label[i]         symbol id of a nonterminal / preterminal; -1 for a word node
    word[i]          word id of a word node; -1 otherwise
    parent[i]        parent node, -1 for the root
    first_child[i]   first child node, -1 if none
    next_sibling[i]  next sibling node, -1 if none
    num_children[i]  number of children (words included)
    start[i], end[i] the words the node covers: positions start..end-1 (a word node covers [k, k+1))

Because of the pre-order, a node's descendants are exactly the rows i+1 .. i+size-1 and parent[i] < i.
`TreebankArrays` concatenates many trees: the same columns with *global* node indices, plus `offsets` (tree t is
rows offsets[t] .. offsets[t+1]-1); `start`/`end` stay positions within each sentence.

Symbols are interned with a `treegram.grammar.SymbolTable` (or any dict str->int, which grows on a miss).
"""

from __future__ import annotations

from collections.abc import Iterable, MutableMapping, Sequence
from typing import Any, Union

import attrs
import numpy as np

from treegram.errors import InputError
from treegram.grammar.symbols import SymbolTable
from treegram.trees.tree import Child, Tree

COLUMNS = ("label", "word", "parent", "first_child", "next_sibling", "num_children", "start", "end")


SymbolMap = Union[SymbolTable, MutableMapping[str, int]]
SymbolList = Union[SymbolTable, Sequence[str]]


def _interner(table: SymbolMap):
    if isinstance(table, SymbolTable):
        return table.add

    def intern(symbol: str) -> int:
        i = table.get(symbol)
        if i is None:
            i = table[symbol] = len(table)
        return i

    return intern


def _flatten(tree: Tree, label_id, word_id) -> tuple[list[int], ...]:
    """Pre-order columns of one tree as Python lists (local indices)."""
    label: list[int] = []
    word: list[int] = []
    parent: list[int] = []
    first_child: list[int] = []
    next_sibling: list[int] = []
    num_children: list[int] = []
    start: list[int] = []
    last_child: list[int] = []
    position = 0
    stack: list[tuple[Child, int]] = [(tree, -1)]
    while stack:
        node, p = stack.pop()
        i = len(label)
        if p >= 0:
            if first_child[p] < 0:
                first_child[p] = i
            else:
                next_sibling[last_child[p]] = i
            last_child[p] = i
        parent.append(p)
        first_child.append(-1)
        next_sibling.append(-1)
        last_child.append(-1)
        start.append(position)
        if isinstance(node, str):
            label.append(-1)
            word.append(word_id(node))
            num_children.append(0)
            position += 1
        else:
            label.append(label_id(node.label))
            word.append(-1)
            num_children.append(len(node.children))
            for c in reversed(node.children):
                stack.append((c, i))
    end = [s + 1 if w >= 0 else s for s, w in zip(start, word)]
    for i in range(len(label) - 1, 0, -1):
        p = parent[i]
        if end[i] > end[p]:
            end[p] = end[i]
    return label, word, parent, first_child, next_sibling, num_children, start, end


def _symbols(table: SymbolList) -> Sequence[str]:
    return table.symbols if isinstance(table, SymbolTable) else table


def _rebuild(
    label: Sequence[int],
    word: Sequence[int],
    first_child: Sequence[int],
    next_sibling: Sequence[int],
    base: int,
    labels: Sequence[str],
    words: Sequence[str],
) -> Tree:
    """The tree in rows base.. of the given column slices (child/sibling links are row numbers offset by base)."""
    built: dict[int, Child] = {}
    try:
        for k in range(len(label) - 1, -1, -1):
            if label[k] < 0:
                built[k] = words[word[k]]
                continue
            kids = []
            c = first_child[k]
            while c >= 0:
                kids.append(built.pop(c - base))
                c = next_sibling[c - base]
            built[k] = Tree(labels[label[k]], kids)
    except (IndexError, KeyError) as exc:
        raise InputError(f"inconsistent tree arrays ({exc!r})", hint="the arrays or the symbol lists do not match") from None
    root = built.get(0)
    if not isinstance(root, Tree):
        raise InputError("tree arrays whose root is not a nonterminal", hint="row 0 of a tree must be its root")
    return root


def _rows(cols: dict[str, np.ndarray], lo: int, hi: int) -> tuple[list[int], ...]:
    return tuple(cols[name][lo:hi].tolist() for name in ("label", "word", "first_child", "next_sibling"))


@attrs.frozen(eq=False)
class _Columns:
    """The node columns of the module docstring (`COLUMNS`), shared by one tree and a treebank."""

    label: np.ndarray
    word: np.ndarray
    parent: np.ndarray
    first_child: np.ndarray
    next_sibling: np.ndarray
    num_children: np.ndarray
    start: np.ndarray
    end: np.ndarray

    def columns(self) -> dict[str, np.ndarray]:
        return {name: getattr(self, name) for name in COLUMNS}


@attrs.frozen(eq=False)
class TreeArrays(_Columns):
    """One tree as pre-order int32 columns (see the module docstring)."""

    @classmethod
    def from_tree(cls, tree: Tree, labels: SymbolMap, words: SymbolMap) -> TreeArrays:
        cols = _flatten(tree, _interner(labels), _interner(words))
        return cls(*(np.asarray(c, dtype=np.int32) for c in cols))

    def to_tree(self, labels: SymbolList, words: SymbolList) -> Tree:
        return _rebuild(*_rows(self.columns(), 0, len(self)), 0, _symbols(labels), _symbols(words))

    def __len__(self) -> int:
        return int(self.label.shape[0])

    @property
    def num_words(self) -> int:
        return int(self.end[0]) if len(self) else 0

    def children(self, i: int) -> list[int]:
        out = []
        c = int(self.first_child[i])
        while c >= 0:
            out.append(c)
            c = int(self.next_sibling[c])
        return out


@attrs.frozen(eq=False)
class TreebankArrays(_Columns):
    """Many trees as one set of flat int32 columns with global node indices, plus int64 `offsets`."""

    offsets: np.ndarray

    @classmethod
    def from_trees(cls, trees: Iterable[Tree], labels: SymbolMap, words: SymbolMap) -> TreebankArrays:
        label_id, word_id = _interner(labels), _interner(words)
        cols: list[list[int]] = [[] for _ in COLUMNS]
        offsets = [0]
        linked = (COLUMNS.index("parent"), COLUMNS.index("first_child"), COLUMNS.index("next_sibling"))
        for tree in trees:
            base = offsets[-1]
            part = _flatten(tree, label_id, word_id)
            for k, values in enumerate(part):
                if k in linked and base:
                    values = [v + base if v >= 0 else -1 for v in values]
                cols[k].extend(values)
            offsets.append(base + len(part[0]))
        arrays = [np.asarray(c, dtype=np.int32) for c in cols]
        return cls(*arrays, offsets=np.asarray(offsets, dtype=np.int64))

    def __len__(self) -> int:
        return int(self.offsets.shape[0] - 1)

    @property
    def num_nodes(self) -> int:
        return int(self.label.shape[0])

    def tree_arrays(self, t: int) -> TreeArrays:
        """Tree t on its own, with local (0-based) node indices."""
        lo, hi = int(self.offsets[t]), int(self.offsets[t + 1])
        cols = {}
        for name in COLUMNS:
            col = self.__getattribute__(name)[lo:hi].copy()
            if name in ("parent", "first_child", "next_sibling"):
                col[col >= 0] -= lo
            cols[name] = col
        return TreeArrays(**cols)

    def to_tree(self, t: int, labels: SymbolList, words: SymbolList) -> Tree:
        lo, hi = int(self.offsets[t]), int(self.offsets[t + 1])
        return _rebuild(*_rows(self.columns(), lo, hi), lo, _symbols(labels), _symbols(words))

    def to_trees(self, labels: SymbolList, words: SymbolList) -> list[Tree]:
        label, word, first_child, next_sibling = _rows(self.columns(), 0, self.num_nodes)
        offsets = self.offsets.tolist()
        labels, words = _symbols(labels), _symbols(words)
        return [
            _rebuild(label[lo:hi], word[lo:hi], first_child[lo:hi], next_sibling[lo:hi], lo, labels, words)
            for lo, hi in zip(offsets, offsets[1:])
        ]

    def arrays(self) -> dict[str, np.ndarray]:
        """All columns plus offsets, e.g. for `treegram.io.save_bundle`."""
        return {**self.columns(), "offsets": self.offsets}

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any]) -> TreebankArrays:
        try:
            cols = {name: np.asarray(arrays[name], dtype=np.int32) for name in COLUMNS}
            offsets = np.asarray(arrays["offsets"], dtype=np.int64)
        except KeyError as exc:
            raise InputError(f"tree arrays lack column {exc}", hint="save them with TreebankArrays.arrays()") from None
        n = offsets[-1] if offsets.size else 0
        if any(c.shape != (n,) for c in cols.values()):
            raise InputError("tree array columns differ in length from the offsets", hint="the saved arrays are corrupt")
        return cls(**cols, offsets=offsets)
