"""Aligning consecutive revisions and testing for word-deletion compressions (Yamangil & Nelken 2008, section 2).

`sentence_replacements`: Levenshtein distance between two revisions with each sentence an atomic letter
(insert, delete and substitute cost 1); the substitutions of one optimal alignment are the replacements of one
sentence by another.  The common prefix and suffix (most edits are local) are trimmed first; each DP row is computed
with numpy (``D[i, j] = min(D[i-1, j] + 1, D[i-1, j-1] + sub) `` then the insertion recurrence as a running
minimum, ``D[i, j] = min_k<=j (c[k] + j - k)``), and the backtrace walks the stored matrix.  A middle larger than
`max_cells` (a wholesale rewrite) is aligned with `difflib` instead (its 'replace' blocks of equal length paired
one to one), counted in the miner's statistics.

`deletion_compression`: whether the shorter sentence is the longer one with some tokens deleted (a subsequence;
the first token may change case, as when "However, the ..." loses its first word).
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import numpy as np

MAX_CELLS = 4_000_000


def _trim(a: Sequence, b: Sequence) -> tuple[int, int]:
    p = 0
    while p < len(a) and p < len(b) and a[p] == b[p]:
        p += 1
    s = 0
    while s < len(a) - p and s < len(b) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    return p, s


def edit_table(a: Sequence[int], b: Sequence[int]) -> np.ndarray:
    """The full (len(a)+1) x (len(b)+1) Levenshtein table over atomic letters."""
    n, m = len(a), len(b)
    D = np.empty((n + 1, m + 1), dtype=np.int32)
    D[0] = np.arange(m + 1)
    bb = np.asarray(b, dtype=np.int64)
    ar = np.arange(m + 1, dtype=np.int32)
    for i in range(1, n + 1):
        prev = D[i - 1]
        c = np.empty(m + 1, dtype=np.int32)
        c[0] = i
        c[1:] = np.minimum(prev[1:] + 1, prev[:-1] + (bb != a[i - 1]))
        D[i] = np.minimum.accumulate(c - ar) + ar
    return D


def align(a: Sequence[int], b: Sequence[int], *, max_cells: int = MAX_CELLS) -> tuple[list[tuple[int, int]], bool]:
    """Substitutions (i, j) -- letter a[i] replaced by b[j] -- of one minimal edit script, and whether the
    difflib fallback was used."""
    p, s = _trim(a, b)
    ma, mb = a[p:len(a) - s], b[p:len(b) - s]
    if not ma or not mb:
        return [], False
    if len(ma) * len(mb) > max_cells:
        subs = []
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, ma, mb, autojunk=False).get_opcodes():
            if tag == "replace" and i2 - i1 == j2 - j1:
                subs.extend((p + i1 + k, p + j1 + k) for k in range(i2 - i1))
        return subs, True
    D = edit_table(ma, mb)
    i, j = len(ma), len(mb)
    subs = []
    while i > 0 and j > 0:
        d = D[i, j]
        same = ma[i - 1] == mb[j - 1]
        if D[i - 1, j - 1] + (0 if same else 1) == d:
            if not same:
                subs.append((p + i - 1, p + j - 1))
            i, j = i - 1, j - 1
        elif D[i - 1, j] + 1 == d:
            i -= 1
        else:
            j -= 1
    subs.reverse()
    return subs, False


def sentence_replacements(old: Sequence[str], new: Sequence[str], *, max_cells: int = MAX_CELLS
                          ) -> tuple[list[tuple[int, int]], bool]:
    """Replacements (i, j): sentence old[i] replaced by new[j] in one minimal sentence-level edit script."""
    codes: dict[str, int] = {}
    a = [codes.setdefault(x, len(codes)) for x in old]
    b = [codes.setdefault(x, len(codes)) for x in new]
    return align(a, b, max_cells=max_cells)


def deletion_compression(long: Sequence[str], short: Sequence[str]) -> list[int] | None:
    """Indices of the tokens of `long` deleted to give `short`, or None if `short` is not a proper word-deletion
    compression of `long` (tokens in order, nothing added or changed; the first short token may differ in case)."""
    if len(short) >= len(long) or not short:
        return None
    kept = []
    k = 0
    for t, tok in enumerate(short):
        while k < len(long) and not (long[k] == tok or (t == 0 and long[k].lower() == tok.lower())):
            k += 1
        if k == len(long):
            return None
        kept.append(k)
        k += 1
    keep = set(kept)
    return [i for i in range(len(long)) if i not in keep]
