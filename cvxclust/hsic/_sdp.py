r"""The SDP relaxation (5.23) of normalized CLUHSIC (2.4) and its certified upper bound.

Writing ``Q = vec(P) vec(P)^T`` (``vec`` stacks the columns of the m x c matrix P, so the
(i, j) m x m block of Q is ``Q_[ij] = p_i p_j^T`` and block i belongs to cluster i), the
objective of (2.4) is ``tr(K P A P^T) = tr((A kron K) Q)`` (5.18).  With the linear operators

* ``bdiag(Q) = sum_i Q_[ii]`` (5.19), an m x m matrix (``= P P^T`` for a lifted P, (5.21)),
* ``odiag(Q)_ij = tr(Q_[ij])`` (5.20), a c x c matrix (``= P^T P``, (5.22)),

the relaxation (5.23) reads::

    maximize    tr((A kron K) Q)
    subject to  Q >> 0,  Q >= 0,  odiag(Q) = I_c,  bdiag(Q) 1 = 1_m.

Semi-supervised use (Section 6): a point p known to lie in cluster l has ``P[p, l'] = 0`` for
every other cluster l', hence the rows (and, by symmetry, columns) ``(l', p)`` of Q vanish.

Throughout, ``A(Q) = (tr Q_[ij] for i <= j, bdiag(Q) 1)`` is the affine operator of (5.23) with
right-hand side ``b = (delta_ij for i <= j, 1_m)`` (:class:`~cvxclust.hsic._operator.AffineOperator`);
``A*`` is its adjoint on symmetric matrices.  The scalable solver (:mod:`cvxclust.hsic._admm`)
works on the principal submatrix of Q on the *free* indices (those not forced to zero by known
labels): Q is p.s.d. and supported there iff that submatrix is p.s.d., so the known-label
constraints hold exactly by construction.

K may be an array of any library of the Python array API standard (a PyTorch or CuPy array on a
GPU): the relaxation then keeps it on its device, where ``"admm"`` solves and where
:meth:`~CLUHSICSDP.objective`, :meth:`~CLUHSICSDP.residuals` and :meth:`~CLUHSICSDP.embed` work;
the cvxpy statement (``"reference"``, and every method that reads it) stays NumPy's.

Reference: W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the
CLUHSIC Algorithm", SIAM International Conference on Data Mining (SDM), 2010.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.linalg as sla

from .._array_api import check_arrays, is_foreign, is_numpy, library, to_numpy
from .._checks import as_finite_array
from .._relaxation import Relaxation
from ..result import Result
from ._operator import AffineOperator
from ._problem import check_sdp_inputs, cluhsic_sdp_problem

__all__ = ["CLUHSICSDP", "certified_lambda_max", "cluhsic_sdp_problem", "lift"]


def lift(P) -> np.ndarray:
    """``Q = vec(P) vec(P)^T`` (columns of P stacked), the point of (5.18) for a partition matrix P
    (any finite real m x c matrix; a ValueError names ``P`` otherwise)."""
    v = as_finite_array(P, "P", ndim=2).ravel(order="F")
    return np.outer(v, v)


class CLUHSICSDP(Relaxation):
    r"""The SDP relaxation (5.23) of normalized CLUHSIC (2.4) (Yang, Kwok & Lu, Section 5.1)::

        maximize    tr((A kron K) Q)
        subject to  Q >> 0,  Q >= 0,  odiag(Q) = I,  bdiag(Q) 1 = 1
                    [Q[(l, p), :] = 0 for known points p and clusters l != known[p]]

    over symmetric mc x mc matrices Q, block (i, j) = ``Q[i*m:(i+1)*m, j*m:(j+1)*m]`` standing
    for ``p_i p_j^T``; bdiag (5.19) and odiag (5.20) as in the module docstring.  It relaxes
    (5.18): every normalized partition matrix P gives the feasible ``Q = vec(P) vec(P)^T``
    (:meth:`lift`) with ``tr((A kron K) Q) = tr(K P A P^T)``, and adding rank(Q) = 1 gives (2.4)
    back (Proposition 3).

    Methods: ``"reference"`` (cvxpy + Clarabel/SCS) and ``"admm"`` (default ``"auto"``; see
    :func:`cvxclust.hsic.admm`), which certifies its result with the upper bound of :meth:`dual_value`.

    This is a **maximization**: ``dual_bound`` in a :class:`~cvxclust.Result` is an *upper*
    bound on the optimum; ``Result.duality_gap``/``relative_gap`` use ``|objective - bound|``.

    Parameters
    ----------
    K : (m, m) array_like
        Symmetric finite input kernel, centred by the caller (``HKH``, (2.2)).
    A : (c, c) array_like
        Symmetric output kernel on the clusters (the structure), ``1 <= c <= m``.
    known : (m,) array_like of int, optional
        Semi-supervised labels (Section 6): ``-1`` for unknown, else the fixed cluster.

    Attributes
    ----------
    arrays : cvxclust._array_api.Arrays
        The namespace, device and dtype of K (NumPy's, float64, for a NumPy K): ``"admm"``
        solves there and returns Q there; A and ``known`` are kept as NumPy arrays.
    """

    name = "CLUHSICSDP"
    sense = "maximize"
    default_method = "admm"

    @classmethod
    def from_catalogue(cls, K, X, y, table):
        """Build from a catalogue file (``cvxclust validate``): the top-level keys ``structure``
        (``"chain"``, ``"ring"`` or ``"flat"``) and ``n_clusters`` give A; K is centred (2.2)."""
        from .. import structures
        from ..kernels import center

        if K is None:
            raise ValueError("CLUHSICSDP needs the file's [kernel] table")
        builders = {"chain": structures.chain, "ring": structures.ring, "flat": structures.flat}
        kind = table.get("structure", "chain")
        if kind not in builders:
            raise ValueError(f"structure must be one of {sorted(builders)}, got {kind!r}")
        n_clusters = table.get("n_clusters")
        if not isinstance(n_clusters, int):
            raise ValueError(f"n_clusters must be an integer, got {n_clusters!r}")
        return cls(center(K), structures.output_kernel(builders[kind](n_clusters)))

    def __init__(self, K, A, known=None):
        self.K, self.A, self.known = check_sdp_inputs(K, A, known)
        self.arrays = check_arrays(K=self.K)
        self.m, self.c = self.K.shape[0], self.A.shape[0]
        m, c = self.m, self.c
        self.free = np.ones((c, m), dtype=bool)  # free[l, p]: row (l, p) of Q may be nonzero
        if self.known is not None:
            p = np.flatnonzero(self.known >= 0)
            self.free[:, p] = False
            self.free[self.known[p], p] = True
        self._operator = None

    # -- the statement -------------------------------------------------------------------
    def problem(self) -> cp.Problem:
        return cluhsic_sdp_problem(self.K, self.A, self.known)

    def solve(self, method: str = "auto", **options) -> Result:
        """:meth:`cvxclust.Relaxation.solve`; with K an array of another array API library, only
        ``"admm"`` (and ``"auto"``) run there: the others (cvxpy's ``"reference"``, ``"generic"``)
        read the cvxpy statement, on NumPy arrays, and are refused with a TypeError."""
        if not self.arrays.numpy and method not in ("auto", "admm"):
            raise TypeError(f"method={method!r} of {self.name} runs on NumPy arrays only (it reads the cvxpy "
                            f"statement) and K is an array of {library(self.arrays.xp)} on {self.arrays.device}: "
                            "use method='admm', which runs on K's device, or pass K as a NumPy array")
        return super().solve(method, **options)

    @property
    def operator(self) -> AffineOperator:
        """The affine operator of (5.23) on the free indices (built once)."""
        if self._operator is None:
            self._operator = AffineOperator(self.m, self.c, self.free)
        return self._operator

    @staticmethod
    def lift(P) -> np.ndarray:
        """``vec(P) vec(P)^T`` for an m x c (normalized) partition matrix P, the point of (5.18)."""
        return lift(P)

    def cost_matrix(self, index: np.ndarray | None = None):
        """``C = A kron K`` (the variable's size, so allowed), restricted to ``index`` if given;
        in K's namespace and on its device."""
        if self.arrays.numpy:
            C = np.kron(self.A, self.K)
            return C if index is None else C[np.ix_(index, index)]
        xp, n = self.arrays.xp, self.m * self.c
        C = xp.reshape(self.arrays.asarray(self.A)[:, None, :, None] * self.K[None, :, None, :], (n, n))
        if index is None or index.size == n:
            return C
        index = xp.asarray(index, device=self.arrays.device)
        return xp.take(xp.take(C, index, axis=0), index, axis=1)

    def objective_scale(self) -> float:
        r"""``c ||A||_2 ||K||_2``, the largest ``|tr((A kron K) Q)|`` over the feasible set:
        ``|<C, Q>| <= ||C||_2 tr Q`` for ``Q >> 0`` and ``tr Q = tr odiag(Q) = c``.  It floors the
        relative gap, so that an optimum of 0 is certified: with c = 1 the only feasible point is
        ``11^T / m`` (``1^T Q 1 = m`` with ``tr Q = 1``), of objective 0 for a centred K."""
        if self.arrays.numpy:
            return float(self.c * np.linalg.norm(self.A, 2) * np.linalg.norm(self.K, 2))
        w = self.arrays.xp.linalg.eigvalsh(self.K)
        return float(self.c * np.linalg.norm(self.A, 2) * max(-float(w[0]), float(w[-1])))

    def _check_Q(self, Q) -> np.ndarray:
        """``Q`` as a finite real (mc, mc) float array (not symmetrised), or a ValueError naming it."""
        n = self.m * self.c
        Q = self._check_square(Q, "Q", (n, n))
        return Q if self.arrays.numpy or is_foreign(Q) else self.arrays.asarray(Q)

    def objective(self, Q) -> float:
        """``tr((A kron K) Q) = sum_ij A_ij <K, Q_[ij]>`` (5.23) for a finite (mc, mc) matrix Q;
        equals ``tr(K P A P^T)`` for a lifted P."""
        Q = self._check_Q(Q)
        if self.arrays.numpy:
            B = Q.reshape(self.c, self.m, self.c, self.m)
            return float(np.einsum("ij,pq,ipjq->", self.A, self.K, B, optimize=True))
        xp = self.arrays.xp
        blocks = xp.sum(xp.reshape(Q, (self.c, self.m, self.c, self.m)) * self.K[None, :, None, :], axis=(1, 3))
        return float(xp.sum(self.arrays.asarray(self.A) * blocks))

    def residuals(self, Q) -> dict[str, float]:
        """Relative violations of (5.23):

        ``odiag`` max|odiag(Q) - I| and ``bdiag`` max|bdiag(Q) 1 - 1| (targets of size 1),
        ``nonnegativity`` max(0, -min Q)/max|Q|, ``psd`` max(0, -lambda_min)/max|lambda| of the
        symmetric part, ``symmetry`` ||Q - Q^T||_F/||Q||_F, and with known labels ``known``
        max|Q[rows, :]|/max|Q| over the rows that must vanish, for a finite (mc, mc) matrix Q.
        """
        Q = self._check_Q(Q)
        if not self.arrays.numpy:
            return self._device_residuals(Q)
        B = Q.reshape(self.c, self.m, self.c, self.m)
        scale = max(np.abs(Q).max(), 1e-300)
        odiag = np.einsum("ipjp->ij", B)
        bdiag_rows = np.einsum("ipiq->p", B)
        w = np.linalg.eigvalsh((Q + Q.T) / 2)
        res = {
            "odiag": float(np.abs(odiag - np.eye(self.c)).max()),
            "bdiag": float(np.abs(bdiag_rows - 1.0).max()),
            "nonnegativity": float(max(0.0, -Q.min()) / scale),
            "psd": float(max(0.0, -w[0]) / max(np.abs(w).max(), 1e-300)),
            "symmetry": float(np.linalg.norm(Q - Q.T) / max(np.linalg.norm(Q), 1e-300)),
        }
        if self.known is not None:
            rows = np.flatnonzero(~self.free.ravel())  # the rows l*m + p forced to zero
            res["known"] = float(np.abs(Q[rows]).max() / scale) if rows.size else 0.0
        return res

    def _device_residuals(self, Q) -> dict[str, float]:
        """:meth:`residuals` of a Q on K's device: the figures computed there, brought to the
        host in one transfer."""
        xp, c, m = self.arrays.xp, self.c, self.m
        B = xp.reshape(Q, (c, m, c, m))
        odiag = xp.sum(xp.linalg.diagonal(xp.permute_dims(B, (0, 2, 1, 3))), axis=-1)  # [i, j]: tr Q_[ij]
        bdiag_rows = xp.sum(xp.linalg.diagonal(xp.permute_dims(B, (1, 3, 0, 2))), axis=(1, 2))
        w = xp.linalg.eigvalsh((Q + Q.T) / 2)
        figures = [xp.max(xp.abs(odiag - xp.eye(c, dtype=Q.dtype, device=self.arrays.device))),
                   xp.max(xp.abs(bdiag_rows - 1.0)), xp.min(Q), xp.max(xp.abs(Q)), w[0], xp.max(xp.abs(w)),
                   xp.linalg.vector_norm(Q - Q.T), xp.linalg.vector_norm(Q)]
        rows = np.flatnonzero(~self.free.ravel())
        if rows.size:
            figures.append(xp.max(xp.abs(xp.take(Q, xp.asarray(rows, device=self.arrays.device), axis=0))))
        values = [float(v) for v in to_numpy(xp.stack(figures))]
        odiag_err, bdiag_err, low, top, w_min, w_top, asym, norm = values[:8]
        scale = max(top, 1e-300)
        res = {"odiag": odiag_err, "bdiag": bdiag_err, "nonnegativity": max(0.0, -low) / scale,
               "psd": max(0.0, -w_min) / max(w_top, 1e-300), "symmetry": asym / max(norm, 1e-300)}
        if self.known is not None:
            res["known"] = values[8] / scale if rows.size else 0.0
        return res

    # -- certified bound -------------------------------------------------------------------
    def dual_value(self, y, Z=None, *, C: np.ndarray | None = None, cross: np.ndarray | None = None) -> float:
        r"""Upper bound ``b^T y + c lambda_max(C - A*(y) + Z)`` on the optimum of (5.23), valid
        for every multiplier y of the affine constraints and every ``Z >= 0``.

        Derivation: for feasible Q, ``A(Q) = b`` and ``<Z, Q> >= 0``, so
        ``tr(CQ) <= tr(CQ) + y^T (b - A(Q)) + <Z, Q> = b^T y + <C - A*(y) + Z, Q>``; and
        ``M <= lambda_max(M) I`` with ``Q >> 0`` gives ``<M, Q> <= lambda_max(M) tr Q``, where
        ``tr Q = sum_i tr Q_[ii] = tr odiag(Q) = c``.  Rows forced to zero by known labels do
        not contribute, so only the principal submatrix on the free indices enters (y, Z, C are
        given on those indices: ``y`` as in :class:`AffineOperator`, ``Z`` n x n).  The bound is
        invariant to adding t to every ``y_ii`` (``sum_i O_ii = I``, ``sum_i b_ii = c``).

        The value is rounded up by an allowance for floating point (:func:`certified_lambda_max`
        and ``len(b) eps |b|^T |y|`` for the inner product), so that the bound holds for the
        computed numbers too: in float64 it is about ``n eps`` relative, far below any ``tol``.
        The computation is NumPy's on the host (a relaxation on another device brings C there).

        ``cross``, an n x n symmetric matrix, replaces the entries of ``C - A*(y) + Z`` at the
        cross entries ``((i, p), (j, p))``, i != j: every feasible Q vanishes there
        (``tr Q_[ij] = 0`` with ``Q_[ij] >= 0``), so ``<M, Q>`` does not depend on them and any
        values keep the bound valid (they are free multipliers of ``Q_cross = 0``).

        Raises
        ------
        ValueError
            Naming ``y``, ``Z``, ``C`` or ``cross`` if not finite and real or of the wrong shape
            (``Z``, ``C``, ``cross``: n x n on the free indices), ``Z`` if it has a negative entry.
        """
        op = self.operator
        y, Z, C, cross = (to_numpy(value) if is_foreign(value) else value for value in (y, Z, C, cross))
        y = as_finite_array(y, "y", ndim=1)
        if y.shape != op.b.shape:
            raise ValueError(f"y must have {op.b.size} entries (one per affine constraint), got {y.size}")
        square = (op.n, op.n)
        Z, C, cross = (None if value is None else self._check_square(value, name, square)
                       for value, name in ((Z, "Z"), (C, "C"), (cross, "cross")))
        M = (to_numpy(self.cost_matrix(op.index)) if C is None else C).copy()
        op.add_adjoint(M, y, -1.0)
        if Z is not None:
            if Z.min() < 0:
                raise ValueError("Z must be entrywise nonnegative")
            M += (Z + Z.T) / 2
        if cross is not None:
            M[op.cross_k, op.cross_l] = cross[op.cross_k, op.cross_l]
            M[op.cross_l, op.cross_k] = cross[op.cross_k, op.cross_l]
        eps = np.finfo(float).eps
        return float(op.b @ y + eps * op.b.size * (np.abs(op.b) @ np.abs(y))
                     + self.c * certified_lambda_max(M, np, eps))

    def device_dual_value(self, op, y, Z, C, cross) -> float:
        """:meth:`dual_value` on the device of K, for the solver's system ``op`` (a
        :class:`~cvxclust.hsic._operator.DeviceAffineOperator`; the O_ij rows of the full system
        get multiplier 0) and the device arrays ``y``, ``Z >= 0``, ``C`` and ``cross``, unchecked
        (the solver's own); the rounding allowance is scaled to the unit roundoff of K's dtype, so
        a float32 bound is looser (about ``n 1e-7`` relative) than a float64 one."""
        xp, eps = self.arrays.xp, self.arrays.eps
        M = op.plus_adjoint(C, y, -1.0) + (Z + Z.T) / 2
        M = xp.where(op.cross, (cross + cross.T) / 2, M)
        inner = xp.stack([xp.sum(op.b * y), xp.sum(xp.abs(op.b) * xp.abs(y))])
        value, size = (float(v) for v in to_numpy(inner))
        return value + eps * op.b.shape[0] * size + self.c * certified_lambda_max(M, xp, eps)

    def _check_square(self, value, name: str, shape: tuple[int, int]):
        """``value`` as a finite real float array of ``shape``, or a ValueError naming it; an
        array of another array API library is checked there (it must be K's library, device and
        dtype: :func:`~cvxclust._array_api.check_arrays`) and returned as it is."""
        if is_foreign(value):
            check_arrays(K=self.K, **{name: value})
            if tuple(value.shape) != shape:
                raise ValueError(f"{name} must have shape {shape}, got {tuple(value.shape)}")
            if not bool(self.arrays.xp.all(self.arrays.xp.isfinite(value))):
                raise ValueError(f"{name} contains NaN or infinite entries")
            return value
        value = as_finite_array(value, name, ndim=2)
        if value.shape != shape:
            raise ValueError(f"{name} must have shape {shape}, got {value.shape}")
        return value

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        """The upper bound :meth:`dual_value` from cvxpy's multipliers y of the affine
        constraints and Z >= 0 of ``X >= 0``.  cvxpy reports the duals of a maximization so that
        ``C - A*(y) + Z`` is negative semidefinite at the optimum: the bound is then ``b^T y``
        up to the solver's accuracy (checked in the tests; the opposite sign would not be tight)."""
        y_o, y_r, Z = (problem.constraints[k].dual_value for k in (2, 3, 1))
        if y_o is None or y_r is None or Z is None:
            return None
        idx = self.operator.index
        y = np.concatenate([np.atleast_1d(y_o), np.atleast_1d(y_r)]).astype(float)
        Z = np.maximum(np.asarray(Z, dtype=float)[np.ix_(idx, idx)], 0.0)
        return self.dual_value(y, Z)

    def embed(self, X):
        """The full mc x mc Q holding X (given on the free indices), zero elsewhere; in X's
        namespace and on its device (X itself where every index is free and X is not NumPy's)."""
        n = self.m * self.c
        idx = self.operator.index
        if not is_foreign(X):
            Q = np.zeros((n, n))
            Q[np.ix_(idx, idx)] = X
            return Q
        if idx.size == n:
            return X
        # gather from X bordered by a zero row and column: the fixed indices point there
        xp, k = self.arrays.xp, idx.size
        where = np.full(n, k)
        where[idx] = np.arange(k)
        where = xp.asarray(where, device=self.arrays.device)
        X = xp.concat([X, xp.zeros((k, 1), dtype=X.dtype, device=self.arrays.device)], axis=1)
        X = xp.concat([X, xp.zeros((1, k + 1), dtype=X.dtype, device=self.arrays.device)], axis=0)
        return xp.take(xp.take(X, where, axis=0), where, axis=1)


def certified_lambda_max(M, xp, eps: float) -> float:
    """The largest eigenvalue of the symmetric ``M`` (of namespace ``xp``, on its device) plus
    ``n eps ||M||``, which exceeds the error of the computed eigenvalue (a backward stable
    eigensolver's: ``p(n) eps ||M||_2``, p(n) <= n in practice) and of forming M entry by entry.
    NumPy computes the one eigenvalue by LAPACK's ``syevr`` (``||M||``: the Frobenius norm, above
    the spectral one); elsewhere the spectrum comes whole from ``linalg.eigvalsh``."""
    n = M.shape[0]
    if is_numpy(xp):
        top = float(sla.eigh(M, eigvals_only=True, subset_by_index=(n - 1, n - 1), driver="evr",
                             check_finite=False)[0])
        return top + n * eps * float(np.linalg.norm(M))
    w = xp.linalg.eigvalsh(M)
    low, top = (float(v) for v in to_numpy(xp.stack([w[0], w[-1]])))
    return top + n * eps * max(-low, top)
