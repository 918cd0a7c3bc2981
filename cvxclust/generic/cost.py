r"""The linear coefficient of the standard form as an operator: ``C = D + S + w 11^T``.

A cost read from a cvxpy statement is a sum of a dense part ``D`` (a kernel, a distance matrix),
a sparse part ``S`` (a graph's Laplacian, kept as ``scipy.sparse``) and a multiple ``w`` of the
all-ones matrix (``sum(X)``), each symmetric.  The dense methods take ``C`` as one dense matrix
(:meth:`Cost.dense`); the low-rank methods need only its products with thin matrices
(:meth:`Cost.matmul`), its diagonal and its norm, which cost what the parts hold: ``O(nnz r)``
for a sparse graph's Laplacian, never an ``n x n`` array that the statement does not have.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Cost"]


class Cost:
    """``C = dense + sparse + ones * 11^T`` of order ``n`` (each part symmetric, any may be absent).

    Parameters
    ----------
    n : int
        Order of C.
    dense : ndarray of shape (n, n), optional
        Symmetric dense part (held, not copied).
    sparse : scipy.sparse matrix of shape (n, n), optional
        Symmetric sparse part (held as CSR).
    ones : float
        Weight of the all-ones matrix.
    """

    def __init__(self, n: int, dense: np.ndarray | None = None, sparse=None, ones: float = 0.0):
        self.n = int(n)
        self.dense_part = dense
        self.sparse_part = None if sparse is None else sp.csr_matrix(sparse)
        self.ones = float(ones)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    @property
    def is_dense(self) -> bool:
        """Whether C is held as one dense matrix (its other parts absent)."""
        return self.dense_part is not None and self.sparse_part is None and self.ones == 0.0

    @property
    def nbytes(self) -> int:
        """Bytes held by the parts."""
        size = 0 if self.dense_part is None else self.dense_part.nbytes
        if self.sparse_part is not None:
            size += self.sparse_part.data.nbytes + self.sparse_part.indices.nbytes + self.sparse_part.indptr.nbytes
        return size

    def matmul(self, V: np.ndarray) -> np.ndarray:
        """``C @ V`` for ``V`` of shape ``(n, r)`` or ``(n,)``."""
        V = np.asarray(V, dtype=float)
        out = np.zeros(V.shape)
        if self.dense_part is not None:
            out += self.dense_part @ V
        if self.sparse_part is not None:
            out += self.sparse_part @ V
        if self.ones:
            out += self.ones * V.sum(axis=0)
        return out

    __matmul__ = matmul

    def diagonal(self) -> np.ndarray:
        """The diagonal of C."""
        d = np.full(self.n, self.ones)
        if self.dense_part is not None:
            d += np.diagonal(self.dense_part)
        if self.sparse_part is not None:
            d += self.sparse_part.diagonal()
        return d

    def inner_factor(self, V: np.ndarray) -> float:
        """``<C, V V^T> = sum(V * (C V))``."""
        return float(np.vdot(V, self.matmul(V)))

    def inner(self, X: np.ndarray) -> float:
        """``<C, X> = <D, X> + sum(S .* X) + w sum(X)`` for an ``n x n`` X, without forming C."""
        value = 0.0 if self.dense_part is None else float(np.vdot(self.dense_part, X))
        if self.sparse_part is not None:
            coo = self.sparse_part.tocoo()
            value += float(np.dot(coo.data, X[coo.row, coo.col]))
        if self.ones:
            value += self.ones * float(X.sum())
        return value

    def frobenius_norm(self) -> float:
        """``||C||_F``, without forming C where it is not dense."""
        if self.is_dense:
            return float(np.linalg.norm(self.dense_part))
        if self.dense_part is None and self.ones == 0.0:
            return 0.0 if self.sparse_part is None else float(sp.linalg.norm(self.sparse_part))
        # ||D + S + w 11^T||^2 expanded, each cross term from the parts
        total = self.ones ** 2 * self.n ** 2
        D, S, w = self.dense_part, self.sparse_part, self.ones
        if D is not None:
            total += float(np.vdot(D, D)) + 2.0 * w * float(D.sum())
        if S is not None:
            total += float(S.multiply(S).sum()) + 2.0 * w * float(S.sum())
            if D is not None:
                coo = S.tocoo()
                total += 2.0 * float(np.dot(coo.data, D[coo.row, coo.col]))
        return float(np.sqrt(max(total, 0.0)))

    def dense(self) -> np.ndarray:
        """C as one dense ``n x n`` array (the dense part itself where it is all of C)."""
        if self.is_dense:
            return self.dense_part
        C = np.zeros((self.n, self.n)) if self.dense_part is None else self.dense_part.copy()
        if self.sparse_part is not None:
            coo = self.sparse_part.tocoo()
            np.add.at(C, (coo.row, coo.col), coo.data)
        if self.ones:
            C += self.ones
        return C

    def __repr__(self) -> str:
        parts = [name for name, part in (("dense", self.dense_part), ("sparse", self.sparse_part)) if part is not None]
        if self.ones:
            parts.append(f"{self.ones:g} * ones")
        return f"Cost(n={self.n}, {' + '.join(parts) or '0'})"
