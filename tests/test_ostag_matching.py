"""`OSTAG.nodes_matching` (the per-tree grammar restriction EM uses) keeps every derivation of the tree, including
adjunctions at internal nodes of elementary trees, where the grammar node's subtree no longer matches the tree."""

from __future__ import annotations

import numpy as np
import pytest
from toy_data import P

from treegram.charts import inside
from treegram.trees import Tree

from treegram.plugins.ostag.extract import depth_fragments, prepare_tree
from treegram.plugins.ostag.grammar import OSTAG
from treegram.plugins.ostag.model import OSTAGSettings, build_grammar, tree_chart_pruning


def _log_z(g: OSTAG, tree: Tree, red) -> float:
    return inside(red.cfg, red.cfg.lexical_input(tree.leaves()), prune=tree_chart_pruning(tree, red)).log_z


def test_adjunction_at_an_internal_node_survives_the_tree_restriction():
    g = OSTAG([(P("(TOP (S (@VP-S (NP (DT the) (NN dog)) (VP-U (VBD ran))) (. .)))"), 1)],
              [(P("(NP (@NP-NP (`` ``) (NP*)) ('' ''))"), 1)], start="TOP", model="ostag3")
    g.init_params(0.2)
    quoted = P("(TOP (S (@VP-S (NP (@NP-NP (`` ``) (NP (DT the) (NN dog))) ('' '')) (VP-U (VBD ran))) (. .)))")
    twice = P("(TOP (S (@VP-S (NP (@NP-NP (`` ``) (NP (@NP-NP (`` ``) (NP (DT the) (NN dog))) ('' ''))) ('' ''))"
              " (VP-U (VBD ran))) (. .)))")
    for tree in (quoted, twice):  # one adjunction, and two stacked ones, at the NP inside the initial tree
        restricted = _log_z(g, tree, g.build_cfg_for_tree(tree))
        reference = _log_z(g, tree, g.build_cfg(words=tree.leaves()))  # the exact word filter
        assert np.isfinite(reference)
        assert restricted == pytest.approx(reference, abs=1e-9)


TREEBANK = [
    "(S (NP (DT the) (NN dog)) (VP (VBD saw) (NP (DT a) (NN cat))))",
    "(S (NP (NP (DT the) (NN dog)) (PP (IN of) (NP (DT a) (NN cat)))) (VP (VBD ran)))",
    "(S (NP (`` ``) (NP (DT the) (NN cat)) ('' '')) (VP (VBD saw) (NP (DT a) (NN dog))))",
    "(S (NP (DT a) (JJ big) (JJ old) (NN cat)) (VP (VBD saw) (NP (`` ``) (NP (DT the) (NN dog)) ('' ''))))",
    "(S (NP (`` ``) (NP (NP (DT the) (NN dog)) (PP (IN of) (NP (DT a) (NN cat)))) ('' '')) (VP (VBD ran)))",
]


@pytest.mark.parametrize("kind", ["ostag1", "ostag3"])
def test_tree_restriction_keeps_the_same_derivations_as_the_word_filter(kind):
    prep = [prepare_tree(P(s), None) for s in TREEBANK]
    g = build_grammar(depth_fragments(prep, 3, 1), OSTAGSettings(kind=kind))
    assert len(g.auxiliary) > 0
    g.init_params(0.3)
    for tree in prep:
        restricted = _log_z(g, tree, g.build_cfg_for_tree(tree))
        reference = _log_z(g, tree, g.build_cfg(words=tree.leaves()))
        assert restricted == pytest.approx(reference, abs=1e-9), tree.to_bracket()
