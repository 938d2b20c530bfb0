"""Pruning hooks for the chart decoders: span/category masks, beams and thresholds.

A mask is a bool array (n+1, n+1, #categories) over the fine grammar's *categories* (not its symbols): an entry
for symbol s over span (i, j) survives only if mask[i, j, category[s]].  Masks serve two purposes:
  * coarse-to-fine parsing: `coarse_to_fine_mask` keeps the (span, category) pairs a cheap coarse PCFG gives
    posterior >= threshold;
  * restricting a chart to one known tree (the TSG blocked sampler): `mask_from_tree`.

Unary chains: the chart applies a precomputed unary closure in one step per cell, so masks are checked on the
two ends of a chain only: its *bottom* (the symbol built over the span by a binary or lexical rule) and its
*top* (the symbol the parent rule uses); intermediate symbols of a chain are never checked (by every decoder
alike: inside, Viterbi, sampling, and outside, whose expected unary counts and posteriors credit the middle and
bottom symbols of a chain even where they are not post-closure entries of the cell).  `mask` applies to
both ends; `bottom_mask` / `top_mask` restrict one end only.  `tree_pruning` uses them to pin every span of a
tree to its chain's bottom and top labels, which restricts the chart to exactly that tree whenever the grammar
has no second unary path between the same two ends (always true for chains of at most two labels in a grammar
without unary cycles whose paths of 2+ rules duplicate a direct rule).  `mask_from_tree` is looser: it allows
every label of the span at both ends, so (NP (N fish)) also admits (NP fish) and (N fish).

The parse-time pruning of every model is built here once (issue 26): `cell_beam`, the cell beam of each
exhaustive chart pass (a PCFG's own chart, the coarse PCFG pass of a coarse-to-fine model; its default
`CELL_BEAM` is declared with the other option defaults in `treegram.option_groups`), and `coarse_stage`,
the coarse-to-fine stage (coarse PCFG posteriors -> a category mask for the fine grammar, as disco-dop prunes its
DOP stage with its PCFG stage).  `treegram parse --cell-beam` overrides the beam; models report both in describe().
"""

from __future__ import annotations

from collections.abc import Iterable

import attrs
import numpy as np

from treegram.errors import InputError, ParseFailure
from treegram.grammar.cfg import LexicalInput, WeightedCFG
from treegram.grammar.symbols import SymbolTable
from treegram.option_groups import CELL_BEAM
from treegram.trees.tree import Tree


def _check_beam(_, attribute, value):
    if value < 0:
        raise InputError(f"pruning beam must be >= 0 (0 = no beam), got {value}")


def _check_threshold(_, attribute, value):
    if not value > 0:
        raise InputError(f"pruning threshold must be > 0 nats (inf = off), got {value}")


@attrs.frozen(eq=False)
class Pruning:
    """What a decoder may drop.

    mask / bottom_mask / top_mask: bool (n+1, n+1, #categories) or None (see the module docstring for which
    chart entries each one restricts); beam: max post-closure entries per cell (0 = unlimited); threshold: drop
    post-closure entries more than this many nats below the cell's best (inf = off).
    """

    mask: np.ndarray | None = attrs.field(default=None)
    beam: int = attrs.field(default=0, validator=_check_beam)
    threshold: float = attrs.field(default=float("inf"), validator=_check_threshold)
    bottom_mask: np.ndarray | None = attrs.field(default=None, kw_only=True)
    top_mask: np.ndarray | None = attrs.field(default=None, kw_only=True)

    def layer_masks(self, n: int, num_categories: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(bottom, top) masks for an n-word sentence with all given masks combined, or None if there are none."""
        given = [(name, m) for name, m in (("mask", self.mask), ("bottom_mask", self.bottom_mask),
                                           ("top_mask", self.top_mask)) if m is not None]
        if not given:
            return None
        shape = (n + 1, n + 1, num_categories)
        for name, m in given:
            if np.shape(m) != shape:
                raise InputError(f"pruning {name} has shape {np.shape(m)}, expected {shape} for a {n}-word "
                                 "sentence", hint="masks are (n+1, n+1, #categories of the grammar)")
        base = np.ones(shape, np.bool_) if self.mask is None else np.asarray(self.mask, np.bool_)
        bottom = base if self.bottom_mask is None else base & np.asarray(self.bottom_mask, np.bool_)
        top = base if self.top_mask is None else base & np.asarray(self.top_mask, np.bool_)
        return np.ascontiguousarray(bottom), np.ascontiguousarray(top)


def cell_beam(beam: float | None = None) -> Pruning | None:
    """The pruning of an exhaustive chart pass with cell beam `beam` (default `treegram.option_groups.CELL_BEAM`;
    0 or inf: none)."""
    beam = CELL_BEAM if beam is None else float(beam)
    return Pruning(threshold=beam) if 0 < beam < float("inf") else None


def beam_label(beam: float | None = None) -> str:
    """How describe() reports a cell beam (`cell_beam`)."""
    beam = CELL_BEAM if beam is None else float(beam)
    return f"cell beam {beam:g} nats" if 0 < beam < float("inf") else "exhaustive"


def stage_label(threshold: float | None, beam: float | None = None) -> str:
    """How describe() reports a model's coarse-to-fine stage (`coarse_stage`)."""
    if not threshold:
        return "none"
    return f"coarse PCFG posterior >= {threshold:g} (coarse chart: {beam_label(beam)})"


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


def tree_pruning(tree: Tree, categories: SymbolTable, n: int | None = None, *,
                 extra_root_labels: Iterable[str] = ()) -> Pruning:
    """Pruning that pins each span of `tree` to its unary chain's ends: the top label (the node whose parent
    is above the span) as `top_mask` and the bottom label (the node with a binary or lexical expansion) as
    `bottom_mask`.  `extra_root_labels` (outermost first, e.g. ["TOP"]) extend the root chain upwards.
    See the module docstring for when this restricts the chart to exactly this tree.
    """
    leaves = tree.leaves()
    n = len(leaves) if n is None else n
    if n != len(leaves):
        raise InputError(f"tree_pruning: tree has {len(leaves)} words but n = {n}")
    tops: dict[tuple[int, int], str] = {}
    bottoms: dict[tuple[int, int], str] = {}
    for node, i, j in tree.spans():  # pre-order: the first node seen on a span is its chain's top
        tops.setdefault((i, j), node.label)
        bottoms[(i, j)] = node.label
    extra = list(extra_root_labels)
    if extra:
        tops[(0, n)] = extra[0]
    spans = list(tops)
    shape = (n + 1, n + 1, len(categories))
    masks = []
    for table in (tops, bottoms):
        labels = [table[sp] for sp in spans]
        ids = categories.ids(labels)
        missing = sorted({lab for lab, c in zip(labels, ids) if c < 0})
        if missing:
            raise InputError(f"tree_pruning: labels {missing[:8]} are not categories of the grammar",
                             hint="map the tree's labels to the grammar's categories first")
        m = np.zeros(shape, dtype=bool)
        sp = np.array(spans, dtype=np.int64).reshape(-1, 2)
        m[sp[:, 0], sp[:, 1], np.array(ids, dtype=np.int64)] = True
        masks.append(m)
    return Pruning(top_mask=masks[0], bottom_mask=masks[1])


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


def coarse_stage(coarse_cfg: WeightedCFG, coarse_lex: LexicalInput, projection, *, threshold: float | None,
                 beam: float | None = None) -> Pruning | None:
    """The coarse-to-fine stage of a model with a coarse PCFG: `coarse_to_fine_mask` over the coarse chart built
    with the cell beam `beam` (default `CELL_BEAM`), as a fine-grammar `Pruning`.  None when `threshold` is 0/None
    (pruning off) or the coarse grammar cannot parse the sentence (also not without the beam): the fine pass then
    runs unpruned."""
    if not threshold:
        return None
    for prune in dict.fromkeys((cell_beam(beam), None)):  # the beamed pass, then (if it lost the parse) without
        try:
            return Pruning(mask=coarse_to_fine_mask(coarse_cfg, coarse_lex, threshold=threshold, projection=projection,
                                                    prune=prune))
        except ParseFailure:
            continue
    return None
