"""Generic chart decoders over weighted CFGs (Viterbi, inside/outside, sampling, pruning), and the tree-constrained
chart of synchronous grammars over a given source tree (`treechart`)."""

from treegram.charts.anchored import AnchoredCFG
from treegram.charts.chart import (
    Derivation,
    InsideChart,
    OutsideChart,
    RuleUse,
    SpanPosteriors,
    ViterbiParse,
    expected_counts,
    inside,
    outside,
    posteriors,
    sample,
    viterbi,
)
from treegram.charts.pruning import Pruning, coarse_to_fine_mask, mask_from_tree, tree_pruning
from treegram.charts.treechart import TreeChart, TreeChartBuilder

__all__ = [
    "AnchoredCFG", "Derivation", "InsideChart", "OutsideChart", "Pruning", "RuleUse", "SpanPosteriors", "ViterbiParse",
    "coarse_to_fine_mask", "expected_counts", "inside", "mask_from_tree", "outside", "posteriors", "sample",
    "tree_pruning", "viterbi",
    "TreeChart", "TreeChartBuilder",
]
