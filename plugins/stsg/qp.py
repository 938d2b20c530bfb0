"""The inner quadratic program of the n-slack structural SVM (Tsochantaridis et al. 2005), by dual coordinate ascent.

Working set: constraints k = 1..K, each belonging to one training example i(k), with a sparse vector a_k and an
offset b_k.  Slack rescaling (Cohn & Lapata 2007, eq. 4) gives a_k = Delta_k * dPsi_k and b_k = Delta_k; margin
rescaling a_k = dPsi_k, b_k = Delta_k.  The primal over the working set

    min_w,xi  1/2 |w|^2 + (C/n) sum_i xi_i     s.t.  <w, a_k> >= b_k - xi_{i(k)},  xi_i >= 0

has the dual

    max_alpha  D(alpha) = sum_k alpha_k b_k - 1/2 |sum_k alpha_k a_k|^2     s.t.  alpha >= 0,  sum_{k in i} alpha_k <= C/n

with w = sum_k alpha_k a_k.  Each example's block is a simplex once a dummy constraint (a = 0, b = 0) takes up the
slack U - sum alpha, so the solver is SMO on simplices: in a block, move mass t from the coordinate with the smallest
gradient g = b - <w, a> (among those with mass) to the one with the largest, t = (g_j - g_k) / |a_j - a_k|^2 clipped
to the mass available -- the exact maximiser of D along that direction, so D never decreases.  It stops when every
block's KKT gap max g - min g (over coordinates with mass) is below `tol`.  `tests/test_stsg_svm.py` checks it
against scipy's SLSQP on random problems.
"""

from __future__ import annotations

import numba
import numpy as np

__all__ = ["solve_dual", "dual_objective", "primal_objective"]


@numba.njit(cache=True)
def _dot_w(indptr, indices, data, k, w):
    s = 0.0
    for p in range(indptr[k], indptr[k + 1]):
        s += data[p] * w[indices[p]]
    return s


@numba.njit(cache=True)
def _dot_rows(indptr, indices, data, j, k):
    """<a_j, a_k> of two rows with sorted column indices (merge)."""
    p, pe = indptr[j], indptr[j + 1]
    q, qe = indptr[k], indptr[k + 1]
    s = 0.0
    while p < pe and q < qe:
        if indices[p] == indices[q]:
            s += data[p] * data[q]
            p += 1
            q += 1
        elif indices[p] < indices[q]:
            p += 1
        else:
            q += 1
    return s


@numba.njit(cache=True)
def _smo(indptr, indices, data, norms, b, block_ptr, members, alpha, slack, w, tol, max_epochs, inner):
    """SMO epochs over the blocks (in place).  Returns (epochs run, final max KKT gap)."""
    n_blocks = block_ptr.shape[0] - 1
    g = np.empty(members.shape[0] + 1)
    gap = np.inf
    epochs = 0
    for epoch in range(max_epochs):
        epochs = epoch + 1
        gap = 0.0
        for blk in range(n_blocks):
            lo, hi = block_ptr[blk], block_ptr[blk + 1]
            if lo == hi:
                continue
            for it in range(inner):
                # gradients; index -1 = the dummy (a = 0, b = 0, gradient 0, mass = slack[blk])
                jbest, gj = -1, 0.0
                kbest, gk = -1, np.inf
                if slack[blk] > 0.0:
                    gk = 0.0
                for m in range(lo, hi):
                    k = members[m]
                    gm = b[k] - _dot_w(indptr, indices, data, k, w)
                    g[m - lo] = gm
                    if gm > gj:
                        jbest, gj = k, gm
                    if alpha[k] > 0.0 and gm < gk:
                        kbest, gk = k, gm
                diff = gj - gk
                if it == 0 and diff > gap:
                    gap = diff
                if diff <= tol or jbest == kbest:
                    break
                nj = norms[jbest] if jbest >= 0 else 0.0
                nk = norms[kbest] if kbest >= 0 else 0.0
                cross = _dot_rows(indptr, indices, data, jbest, kbest) if jbest >= 0 and kbest >= 0 else 0.0
                q = nj + nk - 2.0 * cross
                avail = alpha[kbest] if kbest >= 0 else slack[blk]
                t = avail if q <= 1e-300 else min(avail, diff / q)
                if t <= 0.0:
                    break
                if jbest >= 0:
                    alpha[jbest] += t
                    for p in range(indptr[jbest], indptr[jbest + 1]):
                        w[indices[p]] += t * data[p]
                else:
                    slack[blk] += t
                if kbest >= 0:
                    alpha[kbest] -= t
                    if alpha[kbest] < 0.0:
                        alpha[kbest] = 0.0
                    for p in range(indptr[kbest], indptr[kbest + 1]):
                        w[indices[p]] -= t * data[p]
                else:
                    slack[blk] -= t
                    if slack[blk] < 0.0:
                        slack[blk] = 0.0
        if gap <= tol:
            break
    return epochs, gap


def _w_of(indptr, indices, data, alpha, dim) -> np.ndarray:
    w = np.zeros(dim)
    rows = np.repeat(np.arange(len(alpha)), np.diff(indptr))
    np.add.at(w, indices, data * alpha[rows])
    return w


def dual_objective(b: np.ndarray, alpha: np.ndarray, w: np.ndarray) -> float:
    return float(alpha @ b - 0.5 * (w @ w))


def primal_objective(indptr, indices, data, b, block, n_blocks, cap, w) -> float:
    """1/2 |w|^2 + cap * sum_i max(0, max_{k in i} b_k - <w, a_k>) over the working set (cap = C/n)."""
    margins = np.zeros(len(b))
    for k in range(len(b)):
        margins[k] = b[k] - float(data[indptr[k]:indptr[k + 1]] @ w[indices[indptr[k]:indptr[k + 1]]])
    xi = np.zeros(n_blocks)
    np.maximum.at(xi, block, margins)
    return float(0.5 * (w @ w) + cap * xi.sum())


def solve_dual(indptr, indices, data, b, block, n_blocks: int, cap: float, dim: int, alpha0=None, *,
               tol: float = 1e-6, max_epochs: int = 1000, inner: int = 20) -> tuple[np.ndarray, np.ndarray, dict]:
    """Maximise the dual over the working set, warm-started from `alpha0` (feasible, e.g. the previous solution
    padded with zeros for new constraints).  Rows of the CSR matrix (indptr, indices, data) are the a_k with
    sorted, unique column indices; `block[k]` is the example of constraint k; `cap` = C/n.

    Returns (alpha, w, info) with info = {"epochs", "kkt_gap", "dual"}."""
    indptr = np.asarray(indptr, dtype=np.int64)
    indices = np.asarray(indices, dtype=np.int64)
    data = np.asarray(data, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    block = np.asarray(block, dtype=np.int64)
    K = len(b)
    alpha = np.zeros(K) if alpha0 is None else np.array(alpha0, dtype=np.float64)
    if alpha.shape != (K,):
        raise ValueError(f"alpha0 has {alpha.shape} entries for {K} constraints")
    if cap <= 0:
        raise ValueError("C must be positive")
    members = np.argsort(block, kind="stable").astype(np.int64)
    block_ptr = np.searchsorted(block[members], np.arange(n_blocks + 1)).astype(np.int64)
    used = np.bincount(block, weights=alpha, minlength=n_blocks)
    if np.any(used > cap * (1 + 1e-9)) or np.any(alpha < 0):
        raise ValueError("alpha0 is not feasible")
    slack = np.maximum(cap - used, 0.0)
    norms = np.bincount(np.repeat(np.arange(K), np.diff(indptr)), weights=data * data, minlength=K)
    w = _w_of(indptr, indices, data, alpha, dim)
    epochs, gap = _smo(indptr, indices, data, norms, b, block_ptr, members, alpha, slack, w, float(tol),
                       int(max_epochs), int(inner)) if K else (0, 0.0)
    w = _w_of(indptr, indices, data, alpha, dim)  # recomputed exactly (no drift from incremental updates)
    return alpha, w, {"epochs": int(epochs), "kkt_gap": float(gap), "dual": dual_objective(b, alpha, w)}
