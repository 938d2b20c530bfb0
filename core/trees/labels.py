"""The label syntax of annotated and binarized trees (see `treegram.trees.binarize` for how it is produced).

    NP^S          vertical (parent) annotation: an NP under an S          (v=2)
    NP^S^VP       ... whose grandparent is a VP                           (v=3)
    NP-U          unary mark: an NP with a single nonterminal child       (mark_unary)
    NP^S-U        both; the unary mark always comes last
    @NN-NP^S      a binarization node inside an NP^S whose head child is an NN
    @NN-NP|<JJ|>SBAR
                  ... that has absorbed, in head-outward order, JJ to the left of the head, then SBAR to the right
                  (horizontal markovization keeps the last h of these entries; h=0 leaves none)

Everything here only reads labels; it never builds trees.
"""

from __future__ import annotations

import attrs

BINARIZED_PREFIX = "@"
PARENT_SEP = "^"
UNARY_MARK = "-U"
CONTEXT_SEP = "|"
LEFT_MARK, RIGHT_MARK = "<", ">"


def is_binarized_node(label: str) -> bool:
    """True for nodes added by binarization (`@...`), which `unbinarize` splices away."""
    return label.startswith(BINARIZED_PREFIX)


@attrs.frozen(slots=True)
class BinarizedLabel:
    """The parts of an `@` label: head category, (annotated) parent label, absorbed siblings as (side, label)."""

    head: str
    parent: str
    context: tuple[tuple[str, str], ...]


def _split_head(body: str) -> tuple[str, str]:
    """Split `HEAD-REST`; a head like `-LRB-` (starting with `-`) runs to its closing `-`."""
    if body.startswith("-"):
        close = body.find("-", 1)
        if close > 0 and close + 1 < len(body) and body[close + 1] == "-":
            return body[: close + 1], body[close + 2 :]
    head, sep, rest = body.partition("-")
    if not sep:
        raise ValueError(f"not a binarized label: @{body}")
    return head, rest


def parse_binarized_label(label: str) -> BinarizedLabel:
    """Parse `@HEAD-PARENT[|<SIB|>SIB...]` (ValueError for anything else)."""
    if not is_binarized_node(label):
        raise ValueError(f"not a binarized label: {label!r}")
    head, rest = _split_head(label[1:])
    parent, _, ctx = rest.partition(CONTEXT_SEP)
    context: list[tuple[str, str]] = []
    if ctx:
        for entry in ctx.split(CONTEXT_SEP):
            if entry[:1] in (LEFT_MARK, RIGHT_MARK):
                context.append((entry[0], entry[1:]))
            elif context:  # a sibling label that itself contained `|` (e.g. ADVP|PRT)
                side, sib = context[-1]
                context[-1] = (side, sib + CONTEXT_SEP + entry)
    return BinarizedLabel(head, parent, tuple(context))


def binarized_head_side(label: str) -> int | None:
    """For a two-child `@` node: 1 if its last absorbed sibling is on the left (so the head chain is child 1),
    0 if on the right, None when the label records no context (h=0)."""
    pos = max(label.rfind(CONTEXT_SEP + LEFT_MARK), label.rfind(CONTEXT_SEP + RIGHT_MARK))
    if pos < 0:
        return None
    return 1 if label[pos + 1] == LEFT_MARK else 0


def strip_annotations(label: str) -> str:
    """Remove the unary mark and vertical annotation: `NP^S^VP-U` -> `NP` (an `@` label is returned as is)."""
    if label.endswith(UNARY_MARK):
        label = label[: -len(UNARY_MARK)]
    cut = label.find(PARENT_SEP)
    return label if cut < 0 else label[:cut]


def base_label(label: str) -> str:
    """The original category of any annotated label: `NP^S` -> `NP`, `NP-U` -> `NP`, `@NN-NP^S|<JJ` -> `NP`."""
    if is_binarized_node(label):
        try:
            return strip_annotations(parse_binarized_label(label).parent)
        except ValueError:
            return label[1:]
    return strip_annotations(label)


def has_reserved_syntax(label: str) -> bool:
    """Labels binarize cannot round-trip: they already look annotated or binarized."""
    return (
        label.startswith(BINARIZED_PREFIX)
        or PARENT_SEP in label
        or label.endswith(UNARY_MARK)
    )
