"""A PCFG as a Context/Outcome/Imply system.

Context = a nonterminal label; outcome = the right-hand side, a tuple of child labels, or the word itself (a
`str`) for a preterminal; I(c, o) = the child labels (nothing for a word).  I does not depend on c here: P(o|c)
alone ties right-hand sides to their left-hand sides.

Treebanks have varied root labels (S, SINV, FRAG, ...) but the framework needs one root context, so a tree whose
root is not `root_label` is derived under an extra unary node `root_label -> (tree.label,)`.
"""

from __future__ import annotations

from typing import Any

from treegram.errors import InputError
from treegram.generation.protocol import Derivation, SystemBase, leaf_words_in_preorder
from treegram.trees.tree import Tree


class PCFGSystem(SystemBase):
    name = "pcfg"

    def __init__(self, root_label: str = "TOP"):
        if not isinstance(root_label, str):
            raise InputError(f"PCFG root label {root_label!r} is not a string", hint='use e.g. root_label="TOP"')
        self.root_label = root_label

    def config(self) -> dict[str, Any]:
        return {"root_label": self.root_label}

    def root_context(self) -> str:
        return self.root_label

    def imply(self, context: str, outcome: tuple[str, ...] | str) -> list[str]:
        return list(outcome) if isinstance(outcome, tuple) else []

    def derivations(self, example: Any) -> Derivation:
        if not isinstance(example, Tree):
            raise InputError(f"PCFG training example is a {type(example).__name__}, not a Tree",
                             hint="read bracketed trees into treegram.trees.Tree first")
        tree = example if example.label == self.root_label else Tree(self.root_label, (example,))
        done: dict[int, Derivation] = {}
        for node in tree.postorder():
            kids = node.children
            if node.is_preterminal:
                done[id(node)] = Derivation(node.label, kids[0], ())
                continue
            if any(isinstance(k, str) for k in kids):
                raise InputError(f"tree node {node.label!r} mixes words and subtrees: {node.to_bracket()[:80]}",
                                 hint="put every word under its own preterminal before building a PCFG")
            done[id(node)] = Derivation(node.label, tuple(k.label for k in kids), tuple(done[id(k)] for k in kids))
        return done[id(tree)]

    def text(self, derivation: Derivation) -> list[str]:
        return leaf_words_in_preorder(self, derivation)

    def words_of_outcome(self, outcome: tuple[str, ...] | str) -> tuple[str, ...]:
        return (outcome,) if isinstance(outcome, str) else ()

    def tree(self, derivation: Derivation) -> Tree:
        """The tree a derivation stands for (the synthetic root node, if any, is kept)."""
        done: dict[int, Tree] = {}
        for node in derivation.postorder():
            if isinstance(node.outcome, str):
                done[id(node)] = Tree(node.context, (node.outcome,))
            else:
                done[id(node)] = Tree(node.context, tuple(done[id(c)] for c in node.children))
        return done[id(derivation)]
