"""The Context / Outcome / Imply view of a generative model (Swanson, Yamangil & Charniak 2014, section 3).

A generation system fixes a set of contexts, a set of outcomes and an Imply function I(c, o) giving the list of
new contexts that choosing outcome o in context c creates.  Starting from one root context, a derivation is grown
by choosing an outcome for every open context until none remain; a system-specific mapping turns the derivation
into words.  A CFG is the case where contexts are nonterminals and outcomes right-hand sides; an n-gram model is
the case where a context is the last n-1 words and I(c, o) yields one shifted context.

This module holds what every system shares: the immutable `Derivation` tree, the `GenerationSystem` protocol, a
`SystemBase` with the JSON encoding defaults, and `check_derivation`.  Contexts and outcomes are ordinary hashable
Python values here (at the edges); `GenerationModel` integer-codes them for the numeric work.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Protocol, runtime_checkable

import attrs

from treegram.errors import InputError

Context = Hashable
Outcome = Hashable


@attrs.frozen(slots=True, eq=False, repr=False)
class Derivation:
    """One (context, outcome) node plus the derivations of the contexts I(context, outcome) implies, in order.

    Frozen and hashable; equality, hashing and every traversal are iterative, because an n-gram derivation is a
    chain as deep as the sentence is long.
    """

    context: Context
    outcome: Outcome
    children: tuple[Derivation, ...] = attrs.field(converter=tuple, default=())

    # -- traversal -------------------------------------------------------------------------
    def nodes(self) -> Iterator[Derivation]:
        """Every node (self included) in pre-order: a node before its children, children left to right."""
        stack: list[Derivation] = [self]
        while stack:
            node = stack.pop()
            yield node
            stack.extend(reversed(node.children))

    def postorder(self) -> list[Derivation]:
        """Every node with children before their parent (the order for bottom-up computations)."""
        out: list[Derivation] = []
        stack: list[Derivation] = [self]
        while stack:
            node = stack.pop()
            out.append(node)
            stack.extend(node.children)
        out.reverse()
        return out

    def pairs(self) -> Iterator[tuple[Context, Outcome]]:
        """(context, outcome) of every node in pre-order: what MLE counts."""
        for node in self.nodes():
            yield node.context, node.outcome

    def size(self) -> int:
        return sum(1 for _ in self.nodes())

    def depth(self) -> int:
        """Number of nodes on the longest root-to-leaf path."""
        best = 0
        stack: list[tuple[Derivation, int]] = [(self, 1)]
        while stack:
            node, d = stack.pop()
            best = max(best, d)
            stack.extend((c, d + 1) for c in node.children)
        return best

    def child_contexts(self) -> tuple[Context, ...]:
        return tuple(c.context for c in self.children)

    # -- construction ----------------------------------------------------------------------
    @staticmethod
    def from_preorder(items: Iterable[tuple[Context, Outcome, int]]) -> Derivation:
        """Build from (context, outcome, number_of_children) triples listed in pre-order (no recursion)."""
        items = list(items)
        if not items:
            raise ValueError("from_preorder needs at least one node")
        built: list[Derivation] = []  # stack of finished subtrees, rightmost on top
        for context, outcome, n_kids in reversed(items):
            if n_kids > len(built):
                raise ValueError("pre-order listing is not a single tree (a node claims more children than follow it)")
            kids = [built.pop() for _ in range(n_kids)]  # popped left to right: the leftmost child is on top
            built.append(Derivation(context, outcome, tuple(kids)))
        if len(built) != 1:
            raise ValueError("pre-order listing is not a single tree (several roots)")
        return built[0]

    # -- equality / hashing ----------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        # Walk both trees in step: comparing nested key tuples would recurse in C on deep chains.
        if not isinstance(other, Derivation):
            return NotImplemented
        stack: list[tuple[Derivation, Derivation]] = [(self, other)]
        while stack:
            a, b = stack.pop()
            if a is b:
                continue
            if a.context != b.context or a.outcome != b.outcome or len(a.children) != len(b.children):
                return False
            stack.extend(zip(a.children, b.children))
        return True

    def __hash__(self) -> int:
        # Bottom-up over flat tuples (child hashes), never a nested tuple as deep as the tree.
        memo: dict[int, int] = {}
        for node in self.postorder():
            memo[id(node)] = hash((node.context, node.outcome, tuple(memo[id(c)] for c in node.children)))
        return memo[id(self)]

    def __repr__(self) -> str:
        return f"Derivation(context={self.context!r}, outcome={self.outcome!r}, nodes={self.size()})"

    def pretty(self, indent: str = "  ") -> str:
        """One line per node, indented by depth: for debugging and docs."""
        lines: list[str] = []
        stack: list[tuple[Derivation, int]] = [(self, 0)]
        while stack:
            node, d = stack.pop()
            lines.append(f"{indent * d}{node.context!r} -> {node.outcome!r}")
            stack.extend((c, d + 1) for c in reversed(node.children))
        return "\n".join(lines)


@runtime_checkable
class GenerationSystem(Protocol):
    """What a generation system must provide (structural: any class with these members qualifies).

    `SystemBase` supplies the JSON encoding defaults; subclass it unless contexts/outcomes need custom encoding.
    """

    name: str

    def config(self) -> dict[str, Any]:
        """JSON-able constructor keywords, so a saved model can rebuild its system: cls(**config())."""
        ...

    def root_context(self) -> Context:
        """The unique context every derivation starts from."""
        ...

    def imply(self, context: Context, outcome: Outcome) -> list[Context]:
        """I(c, o): the contexts choosing `outcome` in `context` opens, in the order their derivations appear."""
        ...

    def derivations(self, example: Any) -> Derivation:
        """The derivation this system would have built to produce one training example (Tree, tokens, ...)."""
        ...

    def text(self, derivation: Derivation) -> list[str]:
        """M: the words of a derivation."""
        ...

    def words_of_outcome(self, outcome: Outcome) -> tuple[str, ...]:
        """The words an outcome emits (the vocabulary predicate V(o) asks whether any is out of vocabulary)."""
        ...

    def encode_context(self, context: Context) -> Any: ...

    def decode_context(self, data: Any) -> Context: ...

    def encode_outcome(self, outcome: Outcome) -> Any: ...

    def decode_outcome(self, data: Any) -> Outcome: ...


def to_json_value(value: Any) -> Any:
    """Tuples (nested) become lists; str/int/float/bool/None pass through.  The inverse is `from_json_value`."""
    if isinstance(value, tuple):
        return [to_json_value(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot encode {value!r} ({type(value).__name__}) as JSON; give the system encode/decode methods")


def from_json_value(data: Any) -> Any:
    """Lists (nested) become tuples, so decoded values are hashable again."""
    if isinstance(data, list):
        return tuple(from_json_value(v) for v in data)
    return data


class SystemBase:
    """Defaults for systems whose contexts and outcomes are strings, numbers and (nested) tuples of them."""

    name: str = "base"

    def config(self) -> dict[str, Any]:
        return {}

    def encode_context(self, context: Context) -> Any:
        return to_json_value(context)

    def decode_context(self, data: Any) -> Context:
        return from_json_value(data)

    def encode_outcome(self, outcome: Outcome) -> Any:
        return to_json_value(outcome)

    def decode_outcome(self, data: Any) -> Outcome:
        return from_json_value(data)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.config().items())
        return f"{type(self).__name__}({args})"


def check_derivation(system: GenerationSystem, derivation: Derivation, *,
                     imply_cache: dict[tuple[Context, Outcome], tuple[Context, ...]] | None = None) -> None:
    """Raise InputError unless the derivation starts at the root and every node's children are I(c, o).

    `imply_cache` lets a caller checking a whole corpus call `system.imply` once per distinct pair.
    """
    if derivation.context != system.root_context():
        raise InputError(f"derivation starts at context {derivation.context!r}, not the root "
                         f"{system.root_context()!r} of system {system.name!r}",
                         hint="build derivations with the same system (and settings) that checks them")
    cache = {} if imply_cache is None else imply_cache
    for node in derivation.nodes():
        key = (node.context, node.outcome)
        implied = cache.get(key)
        if implied is None:
            implied = tuple(system.imply(node.context, node.outcome))
            cache[key] = implied
        if node.child_contexts() != implied:
            raise InputError(f"derivation node {node.context!r} -> {node.outcome!r} has children "
                             f"{list(node.child_contexts())!r}, but system {system.name!r} implies {list(implied)!r}",
                             hint="the system's derivations() and imply() disagree; fix the system")


def map_derivation(derivation: Derivation,
                   fn: Callable[[Derivation, tuple[Derivation, ...]], Derivation]) -> Derivation:
    """Rebuild bottom-up without recursion: fn(original_node, new_children) -> new node."""
    done: dict[int, Derivation] = {}
    for node in derivation.postorder():
        done[id(node)] = fn(node, tuple(done[id(c)] for c in node.children))
    return done[id(derivation)]


def leaf_words_in_preorder(system: GenerationSystem, derivation: Derivation) -> list[str]:
    """The words of every outcome in pre-order: the text mapping of systems that emit words left to right."""
    out: list[str] = []
    for node in derivation.nodes():
        out.extend(system.words_of_outcome(node.outcome))
    return out


def as_token_list(example: Any, what: str) -> list[str]:
    """Validate a token sequence at the edge (a str would silently split into characters)."""
    if isinstance(example, str) or not isinstance(example, Sequence):
        raise InputError(f"{what}: expected a list of tokens, got {type(example).__name__}",
                         hint="tokenize the sentence first (e.g. sentence.split())")
    tokens = list(example)
    for i, tok in enumerate(tokens):
        if not isinstance(tok, str) or not tok:
            raise InputError(f"{what}: token {i} is {tok!r}, not a non-empty string",
                             hint="remove empty tokens and convert tokens to str")
    return tokens
