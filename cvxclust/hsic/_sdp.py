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

Reference: W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the
CLUHSIC Algorithm", SIAM International Conference on Data Mining (SDM), 2010.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.linalg as sla

from .._checks import as_finite_array
from .._relaxation import Relaxation
from ._operator import AffineOperator
from ._problem import check_sdp_inputs, cluhsic_sdp_problem

__all__ = ["CLUHSICSDP", "cluhsic_sdp_problem", "lift"]


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

    def cost_matrix(self, index: np.ndarray | None = None) -> np.ndarray:
        """``C = A kron K`` (the variable's size, so allowed), restricted to ``index`` if given."""
        C = np.kron(self.A, self.K)
        return C if index is None else C[np.ix_(index, index)]

    def objective_scale(self) -> float:
        r"""``c ||A||_2 ||K||_2``, the largest ``|tr((A kron K) Q)|`` over the feasible set:
        ``|<C, Q>| <= ||C||_2 tr Q`` for ``Q >> 0`` and ``tr Q = tr odiag(Q) = c``.  It floors the
        relative gap, so that an optimum of 0 is certified: with c = 1 the only feasible point is
        ``11^T / m`` (``1^T Q 1 = m`` with ``tr Q = 1``), of objective 0 for a centred K."""
        return float(self.c * np.linalg.norm(self.A, 2) * np.linalg.norm(self.K, 2))

    def _check_Q(self, Q) -> np.ndarray:
        """``Q`` as a finite real (mc, mc) float array (not symmetrised), or a ValueError naming it."""
        n = self.m * self.c
        return self._check_square(Q, "Q", (n, n))

    def objective(self, Q) -> float:
        """``tr((A kron K) Q) = sum_ij A_ij <K, Q_[ij]>`` (5.23) for a finite (mc, mc) matrix Q;
        equals ``tr(K P A P^T)`` for a lifted P."""
        B = self._check_Q(Q).reshape(self.c, self.m, self.c, self.m)
        return float(np.einsum("ij,pq,ipjq->", self.A, self.K, B, optimize=True))

    def residuals(self, Q) -> dict[str, float]:
        """Relative violations of (5.23):

        ``odiag`` max|odiag(Q) - I| and ``bdiag`` max|bdiag(Q) 1 - 1| (targets of size 1),
        ``nonnegativity`` max(0, -min Q)/max|Q|, ``psd`` max(0, -lambda_min)/max|lambda| of the
        symmetric part, ``symmetry`` ||Q - Q^T||_F/||Q||_F, and with known labels ``known``
        max|Q[rows, :]|/max|Q| over the rows that must vanish, for a finite (mc, mc) matrix Q.
        """
        Q = self._check_Q(Q)
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
        y = as_finite_array(y, "y", ndim=1)
        if y.shape != op.b.shape:
            raise ValueError(f"y must have {op.b.size} entries (one per affine constraint), got {y.size}")
        square = (op.n, op.n)
        Z, C, cross = (None if value is None else self._check_square(value, name, square)
                       for value, name in ((Z, "Z"), (C, "C"), (cross, "cross")))
        M = (self.cost_matrix(op.index) if C is None else C).copy()
        op.add_adjoint(M, y, -1.0)
        if Z is not None:
            if Z.min() < 0:
                raise ValueError("Z must be entrywise nonnegative")
            M += (Z + Z.T) / 2
        if cross is not None:
            M[op.cross_k, op.cross_l] = cross[op.cross_k, op.cross_l]
            M[op.cross_l, op.cross_k] = cross[op.cross_k, op.cross_l]
        return float(op.b @ y + self.c * _lambda_max(M))

    @staticmethod
    def _check_square(value, name: str, shape: tuple[int, int]) -> np.ndarray:
        """``value`` as a finite real float array of ``shape``, or a ValueError naming it."""
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

    def embed(self, X: np.ndarray) -> np.ndarray:
        """The full mc x mc Q holding X (given on the free indices), zero elsewhere."""
        n = self.m * self.c
        Q = np.zeros((n, n))
        idx = self.operator.index
        Q[np.ix_(idx, idx)] = X
        return Q


def _lambda_max(M: np.ndarray) -> float:
    n = M.shape[0]
    return float(sla.eigh(M, eigvals_only=True, subset_by_index=(n - 1, n - 1), driver="evr",
                          check_finite=False)[0])
