"""A minimal CSR matrix on numpy arrays (scipy is not a dependency).

Only what generation needs: build from (row, col, value) triplets summing duplicates, and products with dense
vectors from either side (z @ M for expected counts E = sum_i z0 M^i, M @ x for backward fixpoints).
"""

from __future__ import annotations

import attrs
import numpy as np


@attrs.frozen(eq=False, repr=False)
class SparseMatrix:
    shape: tuple[int, int]
    indptr: np.ndarray   # int64 [rows + 1]
    indices: np.ndarray  # int64 [nnz], column ids, sorted within each row
    data: np.ndarray     # float64 [nnz]

    @staticmethod
    def from_triplets(rows, cols, vals, shape: tuple[int, int]) -> SparseMatrix:
        """CSR from coordinates; entries at the same (row, col) are summed."""
        rows = np.asarray(rows, dtype=np.int64)
        cols = np.asarray(cols, dtype=np.int64)
        vals = np.asarray(vals, dtype=np.float64)
        n_rows, n_cols = shape
        if rows.size and (rows.min() < 0 or rows.max() >= n_rows or cols.min() < 0 or cols.max() >= n_cols):
            raise ValueError("triplet coordinates out of range for shape " + str(shape))
        key = rows * n_cols + cols
        uniq, inverse = np.unique(key, return_inverse=True)
        data = np.bincount(inverse, weights=vals, minlength=uniq.size).astype(np.float64)
        urows = uniq // n_cols if n_cols else uniq
        ucols = uniq % n_cols if n_cols else uniq
        indptr = np.zeros(n_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(urows, minlength=n_rows), out=indptr[1:])
        return SparseMatrix((n_rows, n_cols), indptr, ucols.astype(np.int64), data)

    @property
    def nnz(self) -> int:
        return int(self.data.size)

    def row_ids(self) -> np.ndarray:
        """The row of every stored entry (COO view)."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def vecmat(self, z: np.ndarray) -> np.ndarray:
        """z @ M for a dense row vector z."""
        z = np.asarray(z, dtype=np.float64)
        return np.bincount(self.indices, weights=self.data * z[self.row_ids()], minlength=self.shape[1])

    def matvec(self, x: np.ndarray) -> np.ndarray:
        """M @ x for a dense column vector x."""
        x = np.asarray(x, dtype=np.float64)
        return np.bincount(self.row_ids(), weights=self.data * x[self.indices], minlength=self.shape[0])

    def transpose(self) -> SparseMatrix:
        return SparseMatrix.from_triplets(self.indices, self.row_ids(), self.data, (self.shape[1], self.shape[0]))

    def get(self, i: int, j: int) -> float:
        lo, hi = self.indptr[i], self.indptr[i + 1]
        k = lo + np.searchsorted(self.indices[lo:hi], j)
        return float(self.data[k]) if k < hi and self.indices[k] == j else 0.0

    def to_dense(self) -> np.ndarray:
        out = np.zeros(self.shape, dtype=np.float64)
        out[self.row_ids(), self.indices] = self.data
        return out

    def __repr__(self) -> str:
        return f"SparseMatrix(shape={self.shape}, nnz={self.nnz})"
