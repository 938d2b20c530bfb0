"""Pruning hooks for the chart decoders: span/category masks, beams and thresholds.

A mask is a bool array (n+1, n+1, #categories) over the fine grammar's *categories* (not its symbols): an entry
for symbol s over span (i, j) survives only if mask[i, j, category[s]].  Masks serve two purposes:
  * coarse-to-fine parsing: `coarse_to_fine_mask` keeps the (span, category) pairs a cheap coarse PCFG gives
    posterior >= threshold;
  * restricting a chart to one known tree (the TSG blocked sampler): `mask_from_tree`.

Unary chains: the chart applies a precomputed unary closure in one step per cell, and the mask is checked on
the symbols that *enter* a cell - the bottom of a chain (built by a binary or lexical rule) and its top (used by
the parent) - not on the intermediate symbols of the chain.
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import numpy as np

from treegram.errors import InputError, ParseFailure
from treegram.grammar.cfg import LexicalInput, WeightedCFG
from treegram.grammar.symbols import SymbolTable
from treegram.trees.tree import Tree


def _check_beam(_, attribute, value):
    if value < 0:
        raise InputError(f"pruning beam must be >= 0 (0 = no beam), got {value}")


def _check_threshold(_, attribute, value):
    if not value > 0:
        raise InputError(f"pruning threshold must be > 0 nats (inf = off), got {value}")


@attrs.frozen(eq=False)
class Pruning:
    """What a decoder may drop.  mask: bool (n+1, n+1, #categories) or None; beam: max post entries per cell
    (0 = unlimited); threshold: drop post entries more than this many nats below the cell's best."""

    mask: np.ndarray | None = attrs.field(default=None)
    beam: int = attrs.field(default=0, validator=_check_beam)
    threshold: float = attrs.field(default=float("inf"), validator=_check_threshold)

    def mask_for(self, n: int, num_categories: int) -> np.ndarray | None:
        if self.mask is None:
            return None
        m = np.asarray(self.mask)
        if m.shape != (n + 1, n + 1, num_categories):
            raise InputError(f"pruning mask has shape {m.shape}, expected {(n + 1, n + 1, num_categories)} "
                             f"for a {n}-word sentence", hint="masks are (n+1, n+1, #categories of the grammar)")
        return np.ascontiguousarray(m, dtype=np.bool_)


def mask_from_tree(tree: Tree, categories: SymbolTable, n: int | None = None, *,
                   extra_root_labels: Iterable[str] = ()) -> np.ndarray:
    """Allowed = exactly the tree's (span, label) pairs, labels read as category names.

    All labels of a unary chain share one span, so every label of the chain is allowed on that span.
    `extra_root_labels` (e.g. the grammar's start category "TOP" when the tree lacks it) are allowed on the
    whole sentence span.  Unknown labels raise InputError.
    """
    leaves = tree.leaves()
    n = len(leaves) if n is None else n
    if n != len(leaves):
        raise InputError(f"mask_from_tree: tree has {len(leaves)} words but n = {n}")
    spans, labels = [], []
    for node, i, j in tree.spans():
        spans.append((i, j))
        labels.append(node.label)
    for lab in extra_root_labels:
        spans.append((0, n))
        labels.append(lab)
    ids = categories.ids(labels)
    missing = sorted({lab for lab, c in zip(labels, ids) if c < 0})
    if missing:
        raise InputError(f"mask_from_tree: labels {missing[:8]} are not categories of the grammar",
                         hint="map the tree's labels to the grammar's categories first")
    mask = np.zeros((n + 1, n + 1, len(categories)), dtype=bool)
    sp = np.array(spans, dtype=np.int64).reshape(-1, 2)
    mask[sp[:, 0], sp[:, 1], np.array(ids, dtype=np.int64)] = True
    return mask


def _projection_array(projection, coarse_cfg: WeightedCFG) -> np.ndarray:
    if isinstance(projection, WeightedCFG):
        projection = projection.categories
    if isinstance(projection, SymbolTable):
        return np.array(coarse_cfg.nonterminals.ids(projection), dtype=np.int64)
    proj = np.asarray(projection, dtype=np.int64).ravel()
    if proj.size and (proj.max() >= coarse_cfg.num_symbols or proj.min() < -1):
        raise InputError("coarse_to_fine_mask: projection mentions an id outside the coarse grammar's symbols")
    return proj


def coarse_to_fine_mask(coarse_cfg: WeightedCFG, coarse_lex: LexicalInput, n: int | None = None, *,
                        threshold: float = 1e-4, projection, prune: Pruning | None = None) -> np.ndarray:
    """Mask for a fine grammar from a coarse PCFG's span posteriors.

    `projection` maps each fine category to a coarse symbol: an int array (fine category id -> coarse symbol
    id, -1 = never prune), or the fine grammar (or its categories SymbolTable), matched by name (categories with
    no coarse symbol of the same name are never pruned).  A (span, fine category) pair is allowed when its
    coarse symbol's posterior over the span (summed over its unary-chain roles) is >= threshold.
    Raises ParseFailure when the coarse grammar cannot parse the sentence.
    """
    from treegram.charts.chart import inside, outside, posteriors

    n = coarse_lex.n if n is None else n
    if n != coarse_lex.n:
        raise InputError(f"coarse_to_fine_mask: n = {n} but the lexical input has {coarse_lex.n} positions")
    proj = _projection_array(projection, coarse_cfg)
    chart = inside(coarse_cfg, coarse_lex, prune=prune)
    if chart.log_z == -np.inf:
        raise ParseFailure(f"the coarse grammar cannot parse this {n}-word sentence",
                           hint="parse without coarse-to-fine pruning")
    post = posteriors(chart, outside(chart, counts=False), by="symbol")
    keep = post.prob >= threshold
    allowed = np.zeros((n + 1, n + 1, coarse_cfg.num_symbols + 1), dtype=bool)
    allowed[:, :, -1] = True  # the slot projection -1 points at
    allowed[post.start[keep], post.end[keep], post.ids[keep]] = True
    return allowed[:, :, proj]
