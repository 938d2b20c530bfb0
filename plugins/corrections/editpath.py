"""The minimum unweighted edit-distance path between two token sequences (section 3) and the correction
isolation heuristics h0..h4 and h-infinity (section 4).

`edit_path(x, y)` returns the operations Equal/Insert/Delete/Substitute (``"E" "I" "D" "S"``) of a minimum
Levenshtein path, each as ``(op, i, j)``: the op consumes x[i] (E, D, S) and/or y[j] (E, I, S); for an insert
``i`` is the x position it happens at, for a delete ``j`` the y position.  Ties are broken the same way every time
(Equal, then Substitute, then Delete, then Insert, scanning back from the end), so the path is deterministic.
The common prefix and suffix are stripped before the dynamic program (this never changes the distance), which
keeps whole-sentence paths fast.

`isolate(path, i)` is heuristic h_i: a correction is a maximal run of non-Equal operations in which at most
``i`` consecutive Equal operations separate two non-Equal ones; ``i=None`` is h-infinity (every non-Equal
operation is its own correction).  A correction is a `Span` (x_start, x_end, y_start, y_end): x[x_start:x_end]
was replaced by y[y_start:y_end].
"""

from __future__ import annotations

from typing import NamedTuple


class Op(NamedTuple):
    op: str   # "E", "S", "D", "I"
    i: int    # position in x
    j: int    # position in y


class Span(NamedTuple):
    x0: int
    x1: int
    y0: int
    y1: int


def edit_path(x: list[str], y: list[str]) -> list[Op]:
    n, m = len(x), len(y)
    p = 0
    while p < n and p < m and x[p] == y[p]:
        p += 1
    s = 0
    while s < n - p and s < m - p and x[n - 1 - s] == y[m - 1 - s]:
        s += 1
    xs, ys = x[p:n - s], y[p:m - s]
    a, b = len(xs), len(ys)
    d = [[0] * (b + 1) for _ in range(a + 1)]
    for i in range(a + 1):
        d[i][0] = i
    for j in range(b + 1):
        d[0][j] = j
    for i in range(1, a + 1):
        row, prev, xi = d[i], d[i - 1], xs[i - 1]
        for j in range(1, b + 1):
            best = prev[j - 1] + (0 if xi == ys[j - 1] else 1)
            if prev[j] + 1 < best:
                best = prev[j] + 1
            if row[j - 1] + 1 < best:
                best = row[j - 1] + 1
            row[j] = best
    mid: list[Op] = []
    i, j = a, b
    while i > 0 or j > 0:
        if i > 0 and j > 0 and xs[i - 1] == ys[j - 1] and d[i][j] == d[i - 1][j - 1]:
            mid.append(Op("E", p + i - 1, p + j - 1)); i -= 1; j -= 1
        elif i > 0 and j > 0 and d[i][j] == d[i - 1][j - 1] + 1:
            mid.append(Op("S", p + i - 1, p + j - 1)); i -= 1; j -= 1
        elif i > 0 and d[i][j] == d[i - 1][j] + 1:
            mid.append(Op("D", p + i - 1, p + j)); i -= 1
        else:
            mid.append(Op("I", p + i, p + j - 1)); j -= 1
    mid.reverse()
    return ([Op("E", k, k) for k in range(p)] + mid
            + [Op("E", n - s + k, m - s + k) for k in range(s)])


def op_span(o: Op) -> Span:
    if o.op == "I":
        return Span(o.i, o.i, o.j, o.j + 1)
    if o.op == "D":
        return Span(o.i, o.i + 1, o.j, o.j)
    return Span(o.i, o.i + 1, o.j, o.j + 1)


def isolate(path: list[Op], max_equal: int | None) -> list[Span]:
    """Heuristic h_{max_equal} (None: h-infinity) -> the corrections as spans, left to right."""
    out: list[Span] = []
    cur: Span | None = None
    gap = 0
    for o in path:
        if o.op == "E":
            gap += 1
            continue
        sp = op_span(o)
        if cur is not None and max_equal is not None and gap <= max_equal:
            cur = Span(cur.x0, sp.x1, cur.y0, sp.y1)
        else:
            if cur is not None:
                out.append(cur)
            cur = sp
        gap = 0
    if cur is not None:
        out.append(cur)
    return out


def trim(x: list[str], y: list[str], sp: Span) -> Span:
    """Shrink a span by the tokens its two sides share at either end (a gold edit 'ask' -> 'like to ask' becomes
    the insertion of 'like to')."""
    x0, x1, y0, y1 = sp
    while x0 < x1 and y0 < y1 and x[x0] == y[y0]:
        x0 += 1; y0 += 1
    while x0 < x1 and y0 < y1 and x[x1 - 1] == y[y1 - 1]:
        x1 -= 1; y1 -= 1
    return Span(x0, x1, y0, y1)


def revert(x: list[str], y: list[str], sp: Span) -> list[str]:
    """The corrected sentence with one correction undone (section 2's instance for that correction)."""
    return y[:sp.y0] + x[sp.x0:sp.x1] + y[sp.y1:]


HEURISTICS: dict[str, int | None] = {"h0": 0, "h1": 1, "h2": 2, "h3": 3, "h4": 4, "hinf": None}
