"""Tokens, sentences and sentence alignment for essays (plain UTF-8 text).

* `tokenize(text)` -- words (with inner apostrophes/hyphens kept: "don't", "T-shirt") and single punctuation
  marks, each with its character span, so character-level corrections map onto tokens.
* `split_sentences(text)` -- character spans of sentences: a line break ends a sentence, and so does ., ! or ?
  (with closing quotes/brackets) followed by white space.
* `align_sentences(a, b)` -- a monotone alignment of two sentence lists (1-1, 1-2, 2-1, 1-0, 0-1 beads, cost from
  word overlap) for a whole-text original and its corrected version, where the teacher may have split or joined
  sentences.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*|\S")
_SENT_END = re.compile(r"[.!?]+['\"”’)\]]*(?=\s)|\n")


def tokenize(text: str) -> list[str]:
    return _TOKEN.findall(text)


def tokenize_spans(text: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def split_sentences(text: str) -> list[tuple[int, int]]:
    """Character spans [start, end) of the non-blank sentences of `text` (surrounding white space excluded)."""
    spans = []
    start = 0
    for m in _SENT_END.finditer(text):
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        seg = text[a:b]
        if not seg.strip():
            continue
        a += len(seg) - len(seg.lstrip())
        b -= len(seg) - len(seg.rstrip())
        out.append((a, b))
    return out


def sentences(text: str) -> list[str]:
    return [text[a:b] for a, b in split_sentences(text)]


def _overlap_cost(a: list[str], b: list[str]) -> float:
    """1 - Dice overlap of the lower-cased word multisets (0: same words, 1: nothing shared)."""
    if not a and not b:
        return 0.0
    from collections import Counter

    ca, cb = Counter(w.lower() for w in a), Counter(w.lower() for w in b)
    common = sum((ca & cb).values())
    return 1.0 - 2.0 * common / (sum(ca.values()) + sum(cb.values()))


def align_sentences(a: list[str], b: list[str], *, skip_cost: float = 0.9) -> list[tuple[list[int], list[int]]]:
    """Monotone sentence alignment by dynamic programming over beads 1-1, 1-2, 2-1, 1-0 and 0-1.

    Returns beads as (indices into a, indices into b); every sentence of each side is in exactly one bead.
    """
    ta = [tokenize(s) for s in a]
    tb = [tokenize(s) for s in b]
    n, m = len(a), len(b)
    inf = float("inf")
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    back: list[list[tuple[int, int] | None]] = [[None] * (m + 1) for _ in range(n + 1)]
    cost[0][0] = 0.0
    for i in range(n + 1):
        for j in range(m + 1):
            c0 = cost[i][j]
            if c0 == inf:
                continue
            moves = ((1, 1), (1, 2), (2, 1), (1, 0), (0, 1))
            for di, dj in moves:
                ii, jj = i + di, j + dj
                if ii > n or jj > m:
                    continue
                if di == 0 or dj == 0:
                    c = skip_cost
                else:
                    wa = [w for k in range(i, ii) for w in ta[k]]
                    wb = [w for k in range(j, jj) for w in tb[k]]
                    c = _overlap_cost(wa, wb) + (0.05 if di + dj > 2 else 0.0)
                if c0 + c < cost[ii][jj]:
                    cost[ii][jj] = c0 + c
                    back[ii][jj] = (i, j)
    beads = []
    i, j = n, m
    while (i, j) != (0, 0):
        pi, pj = back[i][j]
        beads.append((list(range(pi, i)), list(range(pj, j))))
        i, j = pi, pj
    beads.reverse()
    return beads
