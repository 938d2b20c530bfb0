"""Exact per-sentence trimming of a reduction before the chart is built (parse speed).

The reduction of one sentence has (spine nodes x adjunction sites) pair symbols, and the decoder's unary closure
over all of them dominated parse time.  Most of them can take part in no parse of the sentence that the
coarse-to-fine mask allows, and dropping them (with every rule that mentions them) changes no chart entry that
the decoders can use:

* symbols that derive no string of the sentence's words (`min_yield` is infinite: not productive from the
  lexical symbols of its words, the unknown-word tags included);
* symbols that are always *checked* by the mask (never the middle of a unary chain: not both the parent and the
  child of unary rules) whose shortest possible yield is longer than every span their category is allowed on.

Both are sound over-approximations (a superset of lexical symbols only lowers `min_yield`), so Viterbi scores and
trees are unchanged (tests/test_ostag_model.py compares with and without on dev-like sentences).
"""

from __future__ import annotations

import numba as nb
import numpy as np

INF = np.iinfo(np.int64).max // 4


@nb.njit(cache=True)
def _min_yield(nsym, base, bp, bl, br, up, uc):  # pragma: no cover - numba
    """Shortest yield (in words) of every symbol; INF if it derives no string over the base symbols."""
    ml = np.full(nsym, INF, np.int64)
    for s in base:
        ml[s] = 1
    changed = True
    while changed:
        changed = False
        for r in range(bp.shape[0]):
            a, b = ml[bl[r]], ml[br[r]]
            if a < INF and b < INF and a + b < ml[bp[r]]:
                ml[bp[r]] = a + b
                changed = True
        for r in range(up.shape[0]):
            if ml[uc[r]] < ml[up[r]]:
                ml[up[r]] = ml[uc[r]]
                changed = True
    return ml


def max_allowed_length(mask: np.ndarray) -> np.ndarray:
    """Longest span length each category is allowed on by a (n+1, n+1, #categories) mask (0 = nowhere)."""
    n = mask.shape[0] - 1
    i, j = np.triu_indices(n + 1, 1)
    lengths = (j - i)[:, None] * mask[i, j]  # (#spans, #categories)
    return lengths.max(axis=0) if lengths.size else np.zeros(mask.shape[2], np.int64)


def keep_symbols(cfg, base_symbols: np.ndarray, n: int, mask: np.ndarray | None) -> np.ndarray:
    """Bool per symbol: may take part in a parse of an n-word sentence under `mask` (see the module docstring)."""
    i64 = np.int64
    ml = _min_yield(cfg.num_symbols, np.asarray(base_symbols, i64), cfg.bin_parent.astype(i64),
                    cfg.bin_left.astype(i64), cfg.bin_right.astype(i64), cfg.un_parent.astype(i64),
                    cfg.un_child.astype(i64))
    keep = ml <= n
    if mask is not None:
        middle = np.zeros(cfg.num_symbols, bool)
        middle[cfg.un_child] = True
        parent = np.zeros(cfg.num_symbols, bool)
        parent[cfg.un_parent] = True
        middle &= parent
        longest = max_allowed_length(np.asarray(mask, bool))[cfg.category]
        keep &= middle | (ml <= longest)
    keep[cfg.start] = True
    return keep
