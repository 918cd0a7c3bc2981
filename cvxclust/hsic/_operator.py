r"""The affine operator of the CLUHSIC SDP (5.23) on its block structure, and the projection onto
its affine constraints.

With Q an mc x mc symmetric matrix of m x m blocks ``Q_[ij]`` (block i belongs to cluster i),
``A(Q) = (tr Q_[ij] for i <= j, bdiag(Q) 1)`` collects the constraints ``odiag(Q) = I`` (5.20)
and ``bdiag(Q) 1 = 1`` (5.19) of (5.23), with right-hand side ``b = (delta_ij for i <= j, 1_m)``;
``A*`` is its adjoint on symmetric matrices.  Known labels (Section 6) force rows of Q to zero,
so the operator acts on the principal submatrix of the *free* indices.
"""

from __future__ import annotations

import numpy as np

from .._array_api import add_to_diagonal

__all__ = ["AffineOperator", "DeviceAffineOperator"]


class AffineOperator:
    r"""``A(Q)`` and ``A*(y)`` of (5.23) restricted to the free indices, and the projection onto
    ``{A(Q) = b}``, using the block structure only (no mc x mc constraint matrix is formed).

    Free index k stands for row ``cluster[k] * m + point[k]`` of the full Q; free indices are
    sorted, so each cluster's are a contiguous slice.  The constraint matrices, as symmetric
    matrices G_t with ``A(Q)_t = <G_t, Q>``, are

    * ``O_ii`` = identity on cluster i's free indices;
    * ``O_ij`` (i < j) = 1/2 at the entries ((i, p), (j, p)) and ((j, p), (i, p)), p free in both;
    * ``R_p`` with ``R_p[k, k'] = [cluster k = cluster k'] ([point k = p] + [point k' = p]) / 2``.

    Their Gram matrix ``A A*`` has the closed form ``<O_ii, O_ii> = n_i``,
    ``<O_ij, O_ij> = n_ij / 2``, ``<R_p, O_ii> = [p free in i]``, ``<R_p, O_ij> = 0`` and
    ``<R_p, R_q> = 1/2 sum_i [p, q free in i] ([p = q] n_i + 1)`` (n_i free points of cluster i,
    n_ij points free in both i and j): a (c(c+1)/2 + m) square matrix, factorized once.

    ``zero_cross=True`` gives the equivalent system the solver uses: on the nonnegative orthant
    ``tr Q_[ij] = sum_p Q[(i, p), (j, p)] = 0`` (i != j) holds iff every such *cross entry* is
    zero, so the O_ij rows are replaced by fixing the cross entries at 0.  They lie outside the
    diagonal blocks that O_ii and R_p read, so the projection zeroes them and projects the rest
    onto the remaining rows.  Stating the forced zeros explicitly removes the degeneracy that
    the ADMM would otherwise resolve slowly through the interplay of A(X) = b and X >= 0.
    """

    def __init__(self, m: int, c: int, free: np.ndarray, zero_cross: bool = False):
        self.m, self.c = m, c
        self.zero_cross = zero_cross
        self.index = np.flatnonzero(free.ravel())  # row-major over (cluster, point) = block order
        self.n = self.index.size
        self.cluster, self.point = np.divmod(self.index, m)
        bounds = np.searchsorted(self.cluster, np.arange(c + 1))
        self.slices = [slice(bounds[i], bounds[i + 1]) for i in range(c)]
        self.points = [self.point[s] for s in self.slices]
        tri_rows, tri_cols = np.triu_indices(c)
        self.n_odiag = tri_rows.size
        tri = np.zeros((c, c), dtype=int)
        tri[tri_rows, tri_cols] = np.arange(self.n_odiag)
        # same-point pairs k <= k' (so cluster k <= cluster k'): the entries that odiag reads
        position = np.full((c, m), -1)
        position[self.cluster, self.point] = np.arange(self.n)
        first, second = [], []
        for i, j in zip(tri_rows, tri_cols):
            both = np.flatnonzero((position[i] >= 0) & (position[j] >= 0))
            first.append(position[i, both])
            second.append(position[j, both])
        self.pair_k, self.pair_l = np.concatenate(first), np.concatenate(second)
        self.pair_bin = tri[self.cluster[self.pair_k], self.cluster[self.pair_l]]
        self.pair_diag = self.pair_k == self.pair_l
        self.cross_k, self.cross_l = self.pair_k[~self.pair_diag], self.pair_l[~self.pair_diag]
        # the rows of A kept: all, or (zero_cross) all but the O_ij, i < j
        self.keep = np.concatenate([tri_rows == tri_cols if zero_cross else np.ones(self.n_odiag, bool),
                                    np.ones(m, bool)])
        self.b = np.concatenate([(tri_rows == tri_cols).astype(float), np.ones(m)])[self.keep]
        self.gram = self._gram(free)[np.ix_(self.keep, self.keep)]
        # (A A*)^+ by an eigendecomposition: with known labels A may have dependent rows
        # (a cluster reduced to one known point has O_ii = R_p), and O_ij = 0 when no point is
        # free in both i and j; the system stays consistent, so the pseudo-inverse projects
        w, V = np.linalg.eigh(self.gram)
        keep = w > 1e-10 * w.max()
        self._gram_pinv = (V[:, keep] / w[keep]) @ V[:, keep].T

    def _gram(self, free: np.ndarray) -> np.ndarray:
        c, T = self.c, self.n_odiag
        counts = free.sum(axis=1).astype(float)  # n_i
        tri_rows, tri_cols = np.triu_indices(c)
        both = (free[tri_rows] & free[tri_cols]).sum(axis=1).astype(float)
        G_oo = np.diag(np.where(tri_rows == tri_cols, both, both / 2))
        G_ro = np.zeros((self.m, T))
        diag_bins = np.flatnonzero(tri_rows == tri_cols)
        G_ro[:, diag_bins] = free.T  # <R_p, O_ii> = [p free in i]
        F = free.astype(float)
        G_rr = 0.5 * (np.diag(F.T @ counts) + F.T @ F)
        return np.block([[G_oo, G_ro.T], [G_ro, G_rr]])

    def apply(self, X: np.ndarray) -> np.ndarray:
        """``A(X)`` for symmetric X (n x n, free indices)."""
        odiag = np.bincount(self.pair_bin, weights=X[self.pair_k, self.pair_l], minlength=self.n_odiag)
        rows = np.zeros(self.m)
        for s, pts in zip(self.slices, self.points):
            rows[pts] += X[s, s].sum(axis=1)  # a cluster's free points are distinct
        return np.concatenate([odiag, rows])[self.keep]

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """``A*(y)``, the symmetric matrix with ``<A*(y), X> = y^T A(X)`` for symmetric X."""
        out = np.zeros((self.n, self.n))
        self.add_adjoint(out, y)
        return out

    def add_adjoint(self, out: np.ndarray, y: np.ndarray, scale: float = 1.0) -> None:
        """``out += scale * A*(y)`` in place."""
        y_kept = scale * np.asarray(y, dtype=float)
        y = np.zeros(self.keep.size)
        y[self.keep] = y_kept
        T = self.n_odiag
        values = y[self.pair_bin] * np.where(self.pair_diag, 1.0, 0.5)
        out[self.pair_k, self.pair_l] += values
        off = ~self.pair_diag
        out[self.pair_l[off], self.pair_k[off]] += values[off]
        for s, pts in zip(self.slices, self.points):
            u = 0.5 * y[T + pts]
            out[s, s] += u[:, None]
            out[s, s] += u[None, :]

    def multiplier(self, W: np.ndarray) -> np.ndarray:
        """``(A A*)^+ (A(W) - b)``: the projection of W is ``W - A*(multiplier)``."""
        return self._gram_pinv @ (self.apply(W) - self.b)

    def project(self, W: np.ndarray) -> np.ndarray:
        """Euclidean projection of the symmetric W onto ``{X : A(X) = b}``."""
        X = W.copy()
        self.add_adjoint(X, self.multiplier(W), -1.0)
        if self.zero_cross:
            X[self.cross_k, self.cross_l] = 0.0
            X[self.cross_l, self.cross_k] = 0.0
        return X

    def least_squares(self, M: np.ndarray) -> np.ndarray:
        """``argmin_y ||M - A*(y)||_F = (A A*)^+ A(M)``."""
        return self._gram_pinv @ self.apply(M)

    def plus_adjoint(self, out: np.ndarray, y: np.ndarray, scale: float = 1.0) -> np.ndarray:
        """``out + scale * A*(y)``, in place: :meth:`add_adjoint` returning ``out``."""
        self.add_adjoint(out, y, scale)
        return out


class DeviceAffineOperator:
    r"""The solver's system (an :class:`AffineOperator` with ``zero_cross=True``: the rows
    ``O_ii`` and ``R_p``, the cross entries fixed at zero) on the namespace and device of
    ``arrays`` (:class:`cvxclust._array_api.Arrays`), written against the array API standard.

    Where :class:`AffineOperator` gathers and scatters by index (NumPy's fast path), this one
    uses dense 0/1 matrices, which run on any device: with ``G`` (n x c, free index -> its
    cluster) and ``E`` (n x m, free index -> its point),

    * ``A(X) = (G^T diag(X), E^T ((X o S) 1))``, ``S = G G^T`` the same-cluster mask;
    * ``A*(y) = Diag(G y_O) + S o (u 1^T + 1 u^T) / 2``, ``u = E y_R``;

    and the cross entries are those of ``E E^T - S`` (same point, another cluster).  The Gram
    matrix's pseudo-inverse is the host operator's, moved once.
    """

    def __init__(self, op: AffineOperator, arrays):
        if not op.zero_cross:
            raise ValueError("DeviceAffineOperator holds the solver's system: build op with zero_cross=True")
        xp = arrays.xp
        self.xp, self.n, self.c = xp, op.n, op.c
        self.index, self.b = op.index, arrays.asarray(op.b)
        self._gram_pinv = arrays.asarray(op._gram_pinv)
        rows = np.arange(op.n)
        G, E = np.zeros((op.n, op.c)), np.zeros((op.n, op.m))
        G[rows, op.cluster] = 1.0
        E[rows, op.point] = 1.0
        self._G, self._E = arrays.asarray(G), arrays.asarray(E)
        self._cluster = xp.asarray(op.cluster, device=arrays.device)
        self._point = xp.asarray(op.point, device=arrays.device)
        self.same_cluster = self._G @ self._G.T
        self.cross = (self._E @ self._E.T - self.same_cluster) > 0.5

    def apply(self, X):
        """``A(X)`` for symmetric X (n x n, free indices)."""
        xp = self.xp
        odiag = self._G.T @ xp.linalg.diagonal(X)
        rows = self._E.T @ xp.sum(X * self.same_cluster, axis=1)
        return xp.concat([odiag, rows])

    def plus_adjoint(self, out, y, scale: float = 1.0):
        """``out + scale * A*(y)`` (a new array)."""
        xp, c = self.xp, self.c
        y = y * scale
        u = 0.5 * xp.take(y[c:], self._point)
        out = out + self.same_cluster * (u[:, None] + u[None, :])
        return add_to_diagonal(out, xp.take(y[:c], self._cluster), xp)

    def multiplier(self, W):
        """``(A A*)^+ (A(W) - b)``: the projection of W is ``W - A*(multiplier)``."""
        return self._gram_pinv @ (self.apply(W) - self.b)

    def project(self, W):
        """Euclidean projection of the symmetric W onto ``{X : A(X) = b}`` (a new array)."""
        X = self.plus_adjoint(W, self.multiplier(W), -1.0)
        return self.xp.where(self.cross, 0.0, X)

    def least_squares(self, M):
        """``argmin_y ||M - A*(y)||_F = (A A*)^+ A(M)``."""
        return self._gram_pinv @ self.apply(M)
