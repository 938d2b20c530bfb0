"""Relative-frequency PCFG estimation from (already binarized / annotated) trees.

Rules are read off every node: a preterminal gives a lexical rule P(w | tag), any other 1-child node a unary
rule, a 2-child node a binary rule; each tree's root R also gives `TOP -> R` (unless R is TOP already).  Counting
is done on integer codes with `np.unique` over packed int64 keys; the only per-node Python work is the walk
itself and one dict lookup per label.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import attrs
import numpy as np

from treegram.errors import InputError
from treegram.grammar.cfg import WeightedCFG
from treegram.grammar.symbols import SymbolTable
from treegram.trees.tree import Tree


@attrs.frozen(eq=False)
class RuleCounts:
    """Distinct rules with their counts, as id arrays over `nonterminals` / `words` (start symbol id = start)."""

    nonterminals: SymbolTable
    words: SymbolTable
    start: int
    bin_parent: np.ndarray
    bin_left: np.ndarray
    bin_right: np.ndarray
    bin_count: np.ndarray
    un_parent: np.ndarray
    un_child: np.ndarray
    un_count: np.ndarray
    lex_parent: np.ndarray
    lex_word: np.ndarray
    lex_count: np.ndarray

    def parent_totals(self) -> np.ndarray:
        """Total count of rules rewriting each nonterminal (all kinds)."""
        n = len(self.nonterminals)
        return (np.bincount(self.bin_parent, self.bin_count, n) + np.bincount(self.un_parent, self.un_count, n)
                + np.bincount(self.lex_parent, self.lex_count, n))


def _unique_counts(columns: list[list[int]], sizes: list[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """Distinct rows of integer columns with their multiplicities (packed int64 keys when they fit)."""
    arrs = [np.asarray(c, dtype=np.int64) for c in columns]
    if arrs[0].size == 0:
        return [np.zeros(0, np.int32) for _ in arrs], np.zeros(0)
    bits = [max(1, int(s - 1).bit_length()) for s in sizes]
    if sum(bits) <= 62:
        key = np.zeros_like(arrs[0])
        for a, b in zip(arrs, bits):
            key = (key << b) | a
        uniq, counts = np.unique(key, return_counts=True)
        out = []
        for b in reversed(bits):
            out.append((uniq & ((1 << b) - 1)).astype(np.int32))
            uniq = uniq >> b
        return out[::-1], counts.astype(np.float64)
    rows, counts = np.unique(np.stack(arrs, axis=1), axis=0, return_counts=True)
    return [rows[:, k].astype(np.int32) for k in range(rows.shape[1])], counts.astype(np.float64)


def rule_counts(trees: Iterable[Tree], *, start_label: str = "TOP") -> RuleCounts:
    """Count every rule in `trees` (see the module docstring); raises InputError for unbinarized nodes."""
    nts = SymbolTable([start_label])
    words = SymbolTable()
    nt_id, w_id = nts.add, words.add
    start = 0
    bp: list[int] = []
    bl: list[int] = []
    br: list[int] = []
    up: list[int] = []
    uc: list[int] = []
    lp: list[int] = []
    lw: list[int] = []
    for t_index, tree in enumerate(trees):
        if not isinstance(tree, Tree):
            raise InputError(f"tree {t_index}: expected a Tree, got {type(tree).__name__}")
        root = nt_id(tree.label)
        if root != start:
            up.append(start)
            uc.append(root)
        for node in tree.subtrees():
            kids = node.children
            nk = len(kids)
            if nk == 1:
                child = kids[0]
                if isinstance(child, str):
                    lp.append(nt_id(node.label))
                    lw.append(w_id(child))
                else:
                    up.append(nt_id(node.label))
                    uc.append(nt_id(child.label))
            elif nk == 2:
                left, right = kids
                if isinstance(left, str) or isinstance(right, str):
                    raise InputError(f"tree {t_index}: node {node.label!r} mixes words and subtrees",
                                     hint="words must sit under preterminals, e.g. (NN dog)")
                bp.append(nt_id(node.label))
                bl.append(nt_id(left.label))
                br.append(nt_id(right.label))
            elif nk == 0:
                raise InputError(f"tree {t_index}: node {node.label!r} has no children",
                                 hint="training trees must be complete (no empty frontier nodes)")
            else:
                raise InputError(f"tree {t_index}: node {node.label!r} has {nk} children; binarize first",
                                 hint="binarize the trees first (treegram.trees.binarize)")
    nsym, nw = len(nts), len(words)
    (b_p, b_l, b_r), b_c = _unique_counts([bp, bl, br], [nsym, nsym, nsym])
    (u_p, u_c), u_n = _unique_counts([up, uc], [nsym, nsym])
    (l_p, l_w), l_n = _unique_counts([lp, lw], [nsym, max(nw, 1)])
    return RuleCounts(nonterminals=nts, words=words, start=start, bin_parent=b_p, bin_left=b_l, bin_right=b_r,
                      bin_count=b_c, un_parent=u_p, un_child=u_c, un_count=u_n, lex_parent=l_p, lex_word=l_w,
                      lex_count=l_n)


def estimate_pcfg(trees: Iterable[Tree], *, start_label: str = "TOP",
                  category: Callable[[str], str] | None = None) -> WeightedCFG:
    """Relative-frequency PCFG: P(A -> rhs) = count(A -> rhs) / count(A), over all three rule kinds."""
    rc = rule_counts(trees, start_label=start_label)
    totals = rc.parent_totals()
    if totals[rc.start] == 0:
        raise InputError("estimate_pcfg: no trees given", hint="pass at least one tree")

    def logp(parent: np.ndarray, count: np.ndarray) -> np.ndarray:
        return np.log(count) - np.log(totals[parent]) if count.size else np.zeros(0)

    return WeightedCFG.from_arrays(
        rc.nonterminals, rc.words, rc.start,
        binary=(rc.bin_parent, rc.bin_left, rc.bin_right, logp(rc.bin_parent, rc.bin_count)),
        unary=(rc.un_parent, rc.un_child, logp(rc.un_parent, rc.un_count)),
        lexical=(rc.lex_parent, rc.lex_word, logp(rc.lex_parent, rc.lex_count)),
        category=category)
