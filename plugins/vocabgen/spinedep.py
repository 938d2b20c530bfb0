"""SPINEDEP: dependency trees as a Context/Outcome/Imply generation system (Swanson et al. 2014, Figure 2).

A *node* is a (POS, word) pair.  The context of a node is (node, parent node, grandparent POS); its outcome is
the full ordered list of its dependents with the marker `HEAD` standing where the node itself sits, or `END`
when it has no dependents.  I(c, o) gives one context per dependent, left to right:
(dependent, c's node, POS of c's parent).  The root context is (ROOT, NONE, "-"), and its outcome lists the
sentence's root word(s) (no HEAD marker: the root has no position).

Every word is emitted exactly once, by its head's outcome, so the vocabulary predicate V(o) is "some dependent
in o is out of vocabulary", and the contexts whose own node carries word w (`context_word`) are the natural C_w
for the word-inclusion sampler: a sentence contains w exactly when its derivation uses one of them, and one such
context per occurrence of w keeps assumption A of section 5 true whenever w occurs once.

Words are lowercased at training time (`lowercase=True`): vocabularies are case-insensitive and `surface`
restores sentence-initial capitals, "I" and proper nouns (NNP/NNPS) for display.
"""

from __future__ import annotations

from typing import Any

from treegram.corpora import DepSentence
from treegram.errors import InputError
from treegram.generation.protocol import Derivation, SystemBase

HEAD = "*"
END = "END"
ROOT_NODE = ("ROOT", "ROOT")
NONE_NODE = ("-", "-")
ROOT_CONTEXT = (ROOT_NODE, NONE_NODE, "-")

Node = tuple[str, str]
Context = tuple[Node, Node, str]


class SpineDepSystem(SystemBase):
    """SPINEDEP over `DepSentence`s (1-based heads, 0 = root)."""

    name = "spinedep"

    def __init__(self, lowercase: bool = True):
        if not isinstance(lowercase, bool):
            raise InputError(f"lowercase={lowercase!r} is not a bool", hint="use lowercase=True or False")
        self.lowercase = lowercase

    def config(self) -> dict[str, Any]:
        return {"lowercase": self.lowercase}

    def root_context(self) -> Context:
        return ROOT_CONTEXT

    def imply(self, context: Context, outcome) -> list[Context]:
        if outcome == END:
            return []
        node, parent, _ = context
        return [(d, node, parent[0]) for d in outcome if d != HEAD]

    def _word(self, w: str) -> str:
        return w.lower() if self.lowercase else w

    def derivations(self, example: Any) -> Derivation:
        if not isinstance(example, DepSentence):
            raise InputError(f"SPINEDEP training example is a {type(example).__name__}, not a DepSentence",
                             hint="read dependency trees with treegram.corpora (read_conllu/read_dp) or parse text")
        problem = example.problem()
        if problem:
            raise InputError(f"dependency tree {' '.join(example.words)[:80]!r}: {problem}",
                             hint="fix or skip malformed trees")
        n = len(example.words)
        nodes = [ROOT_NODE] + [(example.tags[i], self._word(example.words[i])) for i in range(n)]
        for pos, word in nodes[1:]:
            if not word or any(ch.isspace() for ch in word):
                raise InputError(f"dependency tree {' '.join(example.words)[:80]!r}: bad token {word!r}",
                                 hint="tokens must be non-empty and without spaces")
        kids: list[list[int]] = [[] for _ in range(n + 1)]
        for i, h in enumerate(example.heads, start=1):
            kids[h].append(i)
        parent = [0] + list(example.heads)
        # contexts of every position (0 = ROOT)
        ctx: list[Context] = [ROOT_CONTEXT] + [None] * n  # type: ignore[list-item]
        order = [0]
        for i in order:  # breadth-first from the root: parents before children
            for k in kids[i]:
                gpos = nodes[parent[i]][0] if i != 0 else ROOT_CONTEXT[1][0]
                ctx[k] = (nodes[k], nodes[i], gpos if i != 0 else "-")
                order.append(k)
        done: dict[int, Derivation] = {}
        for i in reversed(order):
            if i == 0:
                outcome = tuple(nodes[k] for k in kids[0])
            elif not kids[i]:
                outcome = END
            else:
                left = [nodes[k] for k in kids[i] if k < i]
                right = [nodes[k] for k in kids[i] if k > i]
                outcome = tuple(left) + (HEAD,) + tuple(right)
            done[i] = Derivation(ctx[i], outcome, tuple(done[k] for k in kids[i]))
        return done[0]

    def tagged_text(self, derivation: Derivation) -> list[Node]:
        """(POS, word) of every word in sentence order (in-order walk, iterative)."""
        out: list[Node] = []
        # stack items: a Derivation to expand, or a Node to emit
        stack: list[Any] = [derivation]
        while stack:
            item = stack.pop()
            if not isinstance(item, Derivation):
                out.append(item)
                continue
            o = item.outcome
            if o == END:
                out.append(item.context[0])
                continue
            seq: list[Any] = []
            kids = iter(item.children)
            for d in o:
                seq.append(item.context[0] if d == HEAD else next(kids))
            stack.extend(reversed(seq))
        return out

    def text(self, derivation: Derivation) -> list[str]:
        return [w for _, w in self.tagged_text(derivation)]

    def words_of_outcome(self, outcome) -> tuple[str, ...]:
        if outcome == END:
            return ()
        return tuple(d[1] for d in outcome if d != HEAD)

    @staticmethod
    def context_word(context: Context) -> str:
        """The word of the context's own node (C_w = the contexts whose context_word is w)."""
        return context[0][1]


_NO_SPACE_BEFORE = {".", ",", "!", "?", ";", ":", "%", ")", "]", "}", "n't", "'s", "'m", "'re", "'ll", "'ve",
                    "'d", "'", "...", "''"}
_NO_SPACE_AFTER = {"(", "[", "{", "$", "``", "#"}


def surface(tagged: list[Node] | list[str]) -> str:
    """Display form: detokenized, first letter capitalized, 'i' -> 'I', proper nouns capitalized (not a word the
    CEFR profile lists in lower case: the parser tags some common nouns NNP, "your Dictionary")."""
    from treegram.plugins.vocabgen.vocab import common_words

    pairs = [(None, t) if isinstance(t, str) else t for t in tagged]
    words = []
    common = common_words() if any(pos in ("NNP", "NNPS") for pos, _ in pairs) else frozenset()
    for pos, w in pairs:
        if w == "i" or (pos in ("NNP", "NNPS") and w[:1].isalpha() and w.lower() not in common):
            w = w[:1].upper() + w[1:]
        words.append(w)
    if words and words[0][:1].isalpha():
        words[0] = words[0][:1].upper() + words[0][1:]
    out = ""
    for i, w in enumerate(words):
        if i and w not in _NO_SPACE_BEFORE and words[i - 1] not in _NO_SPACE_AFTER \
                and not _in_hyphenated(words, i):
            out += " "
        out += w
    return out


def _in_hyphenated(words: list[str], i: int) -> bool:
    """Whether a space before words[i] would split a hyphenated word the parser cut into tokens ("six - thirty"
    is "six-thirty"): a hyphen between two word characters, or the word right after such a hyphen."""
    def joins(k: int) -> bool:
        return 0 < k < len(words) - 1 and words[k] == "-" and words[k - 1][-1:].isalnum() \
            and words[k + 1][:1].isalnum()
    return joins(i) or joins(i - 1)
