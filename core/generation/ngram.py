"""An n-gram language model as a Context/Outcome/Imply system.

Context = the previous n-1 words (padded with `<s>` at the start), outcome = the next word or `</s>`, and
I(c, o) = [c shifted by o] unless o is `</s>`.  A derivation is therefore a chain, one node per emitted token.
"""

from __future__ import annotations

from typing import Any

from treegram.errors import InputError
from treegram.generation.protocol import Derivation, SystemBase, as_token_list

BOS = "<s>"
EOS = "</s>"


class NgramSystem(SystemBase):
    """n-gram model of order `order` (1 = unigram: the context is the empty tuple)."""

    name = "ngram"

    def __init__(self, order: int = 3):
        if not isinstance(order, int) or isinstance(order, bool) or order < 1:
            raise InputError(f"n-gram order {order!r} is not a positive integer", hint="use order=2 for bigrams, 3 for trigrams")
        self.order = order

    def config(self) -> dict[str, Any]:
        return {"order": self.order}

    def root_context(self) -> tuple[str, ...]:
        return (BOS,) * (self.order - 1)

    def imply(self, context: tuple[str, ...], outcome: str) -> list[tuple[str, ...]]:
        if outcome == EOS:
            return []
        if self.order == 1:
            return [()]
        return [context[1:] + (outcome,)]

    def derivations(self, example: Any) -> Derivation:
        tokens = as_token_list(example, "n-gram training sentence")
        for i, tok in enumerate(tokens):
            if tok in (BOS, EOS):
                raise InputError(f"n-gram training sentence: token {i} is the reserved boundary symbol {tok!r}",
                                 hint="strip sentence-boundary markers before training")
        contexts = [self.root_context()]
        for tok in tokens:
            contexts.append(self.imply(contexts[-1], tok)[0])
        node = Derivation(contexts[-1], EOS, ())
        for ctx, tok in zip(reversed(contexts[:-1]), reversed(tokens)):
            node = Derivation(ctx, tok, (node,))
        return node

    def text(self, derivation: Derivation) -> list[str]:
        return [n.outcome for n in derivation.nodes() if n.outcome != EOS]

    def words_of_outcome(self, outcome: str) -> tuple[str, ...]:
        return () if outcome == EOS else (outcome,)
