"""The Context/Outcome/Imply view of a parsing grammar (issue 11 item 5): any `WeightedCFG` whose rule weights
are a generative model of trees - a PCFG, a TSG's Goodman transform, a TIG's string-level transform - as a
generation system, so vocabulary-limited generation (Algorithm 1 + FIXUP, G(c), generating up; see
`treegram.generation.constraints`) works on PCFG, TSG and TIG models exactly as on SPINEDEP.

Contexts are the CFG's nonterminal symbols (their names) plus one *word context* ``("@", w)`` per word; the
outcomes of a nonterminal are its rules' right-hand sides, tuples of child contexts (a lexical rule X -> w has the
outcome ``(("@", w),)``), with P(o | c) = the rule's probability (renormalised over the rules kept); the word
context's single outcome is the word itself, which is what it emits.  So I(c, o) = the tuple o, the words of a
derivation are its word contexts' outcomes left to right (binarization, annotation, Goodman/base symbols and TIG
insertion symbols never reach the surface: only words do, and a TSG fragment's words come out of its internal
symbols' lexical rules), and C_w - the contexts generating up starts from - is the word context of w.

A TSG fragment with an out-of-vocabulary word loses that word context, so FIXUP removes the fragment's root rule
(and its base alternative stays): exactly the pruning of Swanson et al. (2014) at the level of elementary trees.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from treegram.generation.model import GenerationModel
from treegram.generation.protocol import Derivation, SystemBase, leaf_words_in_preorder
from treegram.grammar.cfg import WeightedCFG

WORD = "@"


class CFGViewSystem(SystemBase):
    """Contexts = CFG symbol names and ("@", word); outcomes = tuples of child contexts, or a word (str)."""

    name = "cfg-view"

    def __init__(self, root_label: str = "TOP", formalism: str = ""):
        self.root_label = root_label
        self.formalism = formalism

    def config(self) -> dict[str, Any]:
        return {"root_label": self.root_label, "formalism": self.formalism}

    def root_context(self) -> str:
        return self.root_label

    def imply(self, context, outcome) -> list:
        return list(outcome) if isinstance(outcome, tuple) else []

    def derivations(self, example: Any) -> Derivation:
        raise NotImplementedError("a grammar view is built from a trained model's grammar, not fitted to examples")

    def text(self, derivation: Derivation) -> list[str]:
        return leaf_words_in_preorder(self, derivation)

    def words_of_outcome(self, outcome) -> tuple[str, ...]:
        return (outcome,) if isinstance(outcome, str) else ()

    def context_word(self, context) -> str | None:
        """The word a word context emits (lowercased, as vocabularies and required words are), else None."""
        if isinstance(context, tuple) and len(context) == 2 and context[0] == WORD:
            return context[1].lower()
        return None


def cfg_generation_view(cfg: WeightedCFG, *, keep_word: Callable[[str], bool] | None = None,
                        formalism: str = "") -> tuple[GenerationModel, CFGViewSystem]:
    """(GenerationModel, system) of a weighted CFG; lexical rules whose word fails `keep_word` (e.g. unknown-word
    signature classes) are left out and each symbol's remaining rules renormalised.  A capitalised word whose
    lowercase form is also a word of the grammar is generated in lowercase (treebank sentence-initial "The"; the
    surface form capitalises the first word again); other words keep their case (names)."""
    names = [cfg.nonterminals.symbol(i) for i in range(cfg.num_symbols)]
    words = [cfg.words.symbol(i) for i in range(len(cfg.words))]
    system = CFGViewSystem(names[cfg.start], formalism)
    weights: dict[Any, dict[Any, float]] = {}

    def add(parent: int, outcome, logp: float) -> None:
        if logp == -np.inf:
            return
        dist = weights.setdefault(names[parent], {})
        dist[outcome] = dist.get(outcome, 0.0) + float(np.exp(logp))

    for p, a, b, lp in zip(cfg.bin_parent.tolist(), cfg.bin_left.tolist(), cfg.bin_right.tolist(),
                           cfg.bin_logp.tolist()):
        add(p, (names[a], names[b]), lp)
    for p, a, lp in zip(cfg.un_parent.tolist(), cfg.un_child.tolist(), cfg.un_logp.tolist()):
        add(p, (names[a],), lp)
    kept = [keep_word is None or keep_word(w) for w in words]
    lower = {w for w, k in zip(words, kept) if k and w == w.lower()}
    used_words = set()
    for p, w, lp in zip(cfg.lex_parent.tolist(), cfg.lex_word.tolist(), cfg.lex_logp.tolist()):
        if not kept[w]:
            continue
        word = words[w].lower() if words[w].lower() in lower else words[w]  # "The" -> "the"; "John" stays
        used_words.add(word)
        add(p, ((WORD, word),), lp)
    for word in sorted(used_words):
        weights[(WORD, word)] = {word: 1.0}
    if system.root_context() not in weights:
        weights = {system.root_context(): {}, **weights}
    model = GenerationModel.from_weights(system, weights, info={"view_of": formalism, "cfg_symbols": cfg.num_symbols,
                                                                "cfg_rules": cfg.num_rules})
    return model.prune_dead(), system


__all__ = ["CFGViewSystem", "WORD", "cfg_generation_view"]
