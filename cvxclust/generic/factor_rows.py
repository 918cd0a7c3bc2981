r"""The rows of the standard form applied to a factored ``X = V V^T``, matrix-free.

For ``V`` of shape ``(n, r)``, :class:`FactorRows` computes ``A(V V^T)`` and ``A^*(z) V`` at the
cost of what the rows hold, never an ``n x n`` array:

* row sums (:class:`~cvxclust.generic.compact.RowSumsBlock`, ``coef (X 1)_i``):
  ``(V V^T 1)_i = v_i \cdot (V^T 1)``, and ``A^*(z) V = (u (1^T V) + 1 (u^T V)) / 2`` with
  ``u = sum_r z_r coef_r e_{i_r}``;
* a row ``a 1^T X 1`` (all ``n^2`` coefficients equal, as ``sum(X) == 0``): ``a ||V^T 1||^2``,
  and ``a 1 (1^T V)`` for its adjoint;
* any other sparse row ``sum_k a_k X_{i_k j_k}``: ``sum_k a_k v_{i_k} \cdot v_{j_k}``, and the
  adjoint as a sparse ``n x n`` matrix times V.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .compact import RowSumsBlock, Rows, TotalBlock

__all__ = ["FactorRows"]

# relative accuracy at which two coefficients are the same number
_SAME = 1e-10


class _SparseRows:
    """Rows of a CSR block on ``vec(X)`` or a :class:`~cvxclust.generic.compact.TotalBlock`: those
    of all ``n^2`` equal coefficients apart, the others as their entries ``(row, i, j, a)``."""

    def __init__(self, block, n: int):
        self.n, self.m = n, block.shape[0]
        if isinstance(block, TotalBlock):
            self.ones, self.rest = block.coef.copy(), np.zeros(0, dtype=int)
            self.k = self.i = self.j = np.zeros(0, dtype=int)
            self.a = np.zeros(0)
            return
        count = np.diff(block.indptr)
        full = np.zeros(self.m, dtype=bool)
        self.ones = np.zeros(self.m)
        for r in np.flatnonzero(count == n * n):
            data = block.data[block.indptr[r]:block.indptr[r + 1]]
            if np.abs(data - data[0]).max() <= _SAME * abs(data[0]):
                full[r], self.ones[r] = True, data[0]
        rest = block[np.flatnonzero(~full)].tocoo() if (~full).any() else sp.coo_matrix((0, n * n))
        self.rest = np.flatnonzero(~full)
        self.k = self.rest[rest.row]
        self.i, self.j = rest.col // n, rest.col % n
        self.a = rest.data

    def apply(self, V: np.ndarray, total: np.ndarray) -> np.ndarray:
        out = self.ones * float(total @ total)
        if self.a.size:
            products = np.einsum("ij,ij->i", V[self.i], V[self.j]) if V.ndim == 2 else V[self.i] * V[self.j]
            out += np.bincount(self.k, weights=self.a * products, minlength=self.m)
        return out

    def add_adjoint_matmul(self, z: np.ndarray, V: np.ndarray, total: np.ndarray, out: np.ndarray) -> None:
        weight = float(self.ones @ z)
        if weight:
            out += weight * total  # a 1 (1^T V): every row
        if self.a.size:
            M = sp.csr_matrix((self.a * z[self.k], (self.i, self.j)), shape=(self.n, self.n))
            out += M @ V

    def adjoint_norm(self, z: np.ndarray) -> float:
        """An upper bound on ``||A^*(z)||_F``."""
        return abs(float(self.ones @ z)) * self.n + float(np.linalg.norm(self.a * z[self.k]))


class FactorRows:
    """The rows of a :class:`~cvxclust.generic.compact.Rows` on factored matrices (module docstring).

    Parameters
    ----------
    rows : Rows
        The symmetrised rows of the standard form.
    """

    def __init__(self, rows: Rows):
        self.n, self.m = rows.n, rows.shape[0]
        starts = np.cumsum([0] + [b.shape[0] for b in rows.blocks])
        self.blocks = [(b if isinstance(b, RowSumsBlock) else _SparseRows(b, rows.n), s, e)
                       for b, s, e in zip(rows.blocks, starts[:-1], starts[1:])]

    def apply(self, V: np.ndarray) -> np.ndarray:
        """``A(V V^T)`` for ``V`` of shape ``(n, r)``."""
        total = V.sum(axis=0)
        out = np.zeros(self.m)
        for block, s, e in self.blocks:
            if isinstance(block, RowSumsBlock):
                out[s:e] = block.coef * (V[block.I] @ total)
            else:
                out[s:e] = block.apply(V, total)
        return out

    def adjoint_matmul(self, z: np.ndarray, V: np.ndarray) -> np.ndarray:
        """``A^*(z) V`` for ``V`` of shape ``(n, r)`` or ``(n,)``."""
        total = V.sum(axis=0)
        out = np.zeros(V.shape)
        for block, s, e in self.blocks:
            if isinstance(block, RowSumsBlock):
                u = np.bincount(block.I, weights=z[s:e] * block.coef, minlength=self.n)
                out += np.multiply.outer(u, total) / 2
                out += (u @ V) / 2
            else:
                block.add_adjoint_matmul(z[s:e], V, total, out)
        return out

    def adjoint_norm(self, z: np.ndarray) -> float:
        """An upper bound on ``||A^*(z)||_F`` (the triangle inequality over the blocks)."""
        size = 0.0
        for block, s, e in self.blocks:
            if isinstance(block, RowSumsBlock):
                u = np.bincount(block.I, weights=z[s:e] * block.coef, minlength=self.n)
                size += np.sqrt(self.n) * float(np.linalg.norm(u))
            else:
                size += block.adjoint_norm(z[s:e])
        return size
