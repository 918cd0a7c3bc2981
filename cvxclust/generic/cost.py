r"""The linear coefficient of the standard form as an operator: ``C = D + S + w 11^T + U diag(s) U^T``.

A cost read from a cvxpy statement is a sum of a dense part ``D`` (a kernel, a distance matrix),
a sparse part ``S`` (a graph's Laplacian, kept as ``scipy.sparse``), a multiple ``w`` of the
all-ones matrix (``sum(X)``) and a low-rank part ``U diag(s) U^T`` (U of shape ``(n, r)``; a
dense part compressed by :func:`cvxclust.generic.lowrank_cost.compress_cost`), each symmetric.
The dense methods take ``C`` as one dense matrix (:meth:`Cost.dense`); the low-rank methods need
only its products with thin matrices (:meth:`Cost.matmul`), its diagonal and its norm, which cost
what the parts hold: ``O(nnz r)`` for a sparse graph's Laplacian, ``O(n r r')`` for a low-rank
part, never an ``n x n`` array that the statement does not have.

``Cost.error`` bounds the spectral norm of the difference between the coefficient of the problem
and the one these parts stand for (zero unless a dense part was replaced by a low-rank one): a
bound on the optimum computed from the parts is lowered by ``error * tr X`` to hold for the
problem's own coefficient.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Cost", "eigen_form"]


def eigen_form(left: np.ndarray, right: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(U, s)`` with ``U diag(s) U^T = (L R^T + R L^T) / 2`` for L, R of shape ``(n, k)``, no
    ``n x n`` array formed: a thin QR ``[L, R] = Q T`` and the eigendecomposition of the ``2k x 2k``
    matrix ``(T_L T_R^T + T_R T_L^T) / 2``.  Eigenvalues at the level of the rounding of the
    factorisations (the zero ones of a symmetric ``L = R``) are left out.

    Parameters
    ----------
    left, right : ndarray of shape (n, k)
        The factors (not modified).

    Returns
    -------
    U : ndarray of shape (n, r)
        Orthonormal columns, ``r <= 2k``.
    s : ndarray of shape (r,)
        The nonzero eigenvalues.
    """
    left, right = np.asarray(left, dtype=float), np.asarray(right, dtype=float)
    k = left.shape[1]
    Q, T = np.linalg.qr(np.hstack([left, right]))
    half = T[:, :k] @ T[:, k:].T
    values, vectors = np.linalg.eigh((half + half.T) / 2)
    largest = float(np.max(np.abs(values), initial=0.0))
    keep = np.abs(values) > 8 * np.finfo(float).eps * max(T.shape[0], 1) * largest
    return Q @ vectors[:, keep], values[keep]


class Cost:
    """``C = dense + sparse + ones * 11^T + U diag(s) U^T`` of order ``n`` (each part symmetric, any
    may be absent).

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
    lowrank : tuple of ndarray, optional
        ``(U, s)``, U of shape ``(n, r)`` and s of shape ``(r,)``: the part ``U diag(s) U^T``
        (held, not copied).
    error : float
        A bound on the spectral norm of the coefficient the parts stand for less their sum
        (module docstring); 0 where they are exact.
    """

    def __init__(self, n: int, dense: np.ndarray | None = None, sparse=None, ones: float = 0.0,
                 lowrank: tuple | None = None, error: float = 0.0):
        self.n = int(n)
        self.dense_part = dense
        self.sparse_part = None if sparse is None else sp.csr_matrix(sparse)
        self.ones = float(ones)
        self.lowrank_part = None if lowrank is None else (np.asarray(lowrank[0], dtype=float),
                                                          np.asarray(lowrank[1], dtype=float))
        self.error = float(error)

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n, self.n)

    @property
    def is_dense(self) -> bool:
        """Whether C is held as one dense matrix (its other parts absent)."""
        return (self.dense_part is not None and self.sparse_part is None and self.ones == 0.0
                and self.lowrank_part is None)

    @property
    def nbytes(self) -> int:
        """Bytes held by the parts."""
        size = 0 if self.dense_part is None else self.dense_part.nbytes
        if self.sparse_part is not None:
            size += self.sparse_part.data.nbytes + self.sparse_part.indices.nbytes + self.sparse_part.indptr.nbytes
        if self.lowrank_part is not None:
            size += self.lowrank_part[0].nbytes + self.lowrank_part[1].nbytes
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
        if self.lowrank_part is not None:
            U, values = self.lowrank_part
            out += U @ (values[:, None] * (U.T @ V)) if V.ndim == 2 else U @ (values * (U.T @ V))
        return out

    __matmul__ = matmul

    def diagonal(self) -> np.ndarray:
        """The diagonal of C."""
        d = np.full(self.n, self.ones)
        if self.dense_part is not None:
            d += np.diagonal(self.dense_part)
        if self.sparse_part is not None:
            d += self.sparse_part.diagonal()
        if self.lowrank_part is not None:
            U, values = self.lowrank_part
            d += (U * U) @ values
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
        if self.lowrank_part is not None:
            U, values = self.lowrank_part
            value += float(np.vdot(U * values, X @ U))
        return value

    def frobenius_norm(self) -> float:
        """``||C||_F``, without forming C where it is not dense: the inner products of the parts
        (those with a low-rank part from ``r x r`` Grams and products with U)."""
        if self.is_dense:
            return float(np.linalg.norm(self.dense_part))
        D, S, w, L = self.dense_part, self.sparse_part, self.ones, self.lowrank_part
        if D is None and w == 0.0 and L is None:
            return 0.0 if S is None else float(sp.linalg.norm(S))
        # ||D + S + w 11^T + U diag(s) U^T||^2 expanded, each cross term from the parts
        total = w ** 2 * self.n ** 2
        if D is not None:
            total += float(np.vdot(D, D)) + 2.0 * w * float(D.sum())
        if S is not None:
            total += float(S.multiply(S).sum()) + 2.0 * w * float(S.sum())
            if D is not None:
                coo = S.tocoo()
                total += 2.0 * float(np.dot(coo.data, D[coo.row, coo.col]))
        if L is not None:
            U, values = L
            gram = (U.T @ U) * values
            total += float(np.vdot(gram, gram.T)) + 2.0 * w * float(values @ U.sum(axis=0) ** 2)
            for part in (D, S):
                if part is not None:
                    total += 2.0 * float(np.vdot(U * values, part @ U))
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
        if self.lowrank_part is not None:
            U, values = self.lowrank_part
            C += (U * values) @ U.T
        return C

    def __repr__(self) -> str:
        parts = [name for name, part in (("dense", self.dense_part), ("sparse", self.sparse_part)) if part is not None]
        if self.ones:
            parts.append(f"{self.ones:g} * ones")
        if self.lowrank_part is not None:
            parts.append(f"rank {self.lowrank_part[1].size}")
        return f"Cost(n={self.n}, {' + '.join(parts) or '0'})"
