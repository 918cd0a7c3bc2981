"""The relaxations ``FrobeniusDS`` (QP (6)) and ``FrobeniusPSD`` (SDP (7)).

Both are the projection of the affinity K onto C1 ∩ C2 in Frobenius norm, with
C2 = {F >= 0} the nonnegative orthant and

* ``FrobeniusDS``:  C1 = {F = F^T, F 1 = 1}, an affine subspace;
* ``FrobeniusPSD``: C1 = {F >> 0, F 1 = 1}.  Since F e = e with e = 1/sqrt(n), e is an
  eigenvector, so F = e e^T + J G J with G >> 0 and J = I - e e^T, and the projection is
  ``Pi_C1(Y) = e e^T + (J Y J)_+``: a single (partial) eigendecomposition.

Dualising only F >= 0 with Q >= 0 gives the concave dual function (the paper's (11)-(12) after
eliminating u and Z in closed form)::

    g(Q) = 1/2 ||W - Pi_C1(W)||_F^2 - <K, Q> - 1/2 ||Q||_F^2,   W = K + Q,

whose gradient is -Pi_C1(W): every Q >= 0 certifies the lower bound g(Q) <= optimum.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._checks import check_square_matrix
from .._relaxation import Relaxation
from ..linalg import PSDProjector
from ._problem import nearest_doubly_stochastic

__all__ = ["FrobeniusDS", "FrobeniusPSD"]


def negativity(X: np.ndarray) -> float:
    """Relative violation of ``X >= 0``: ``max(0, -min X) / max|X|``."""
    return float(max(0.0, -X.min()) / max(np.abs(X).max(), 1e-300))


class _NearestDoublyStochastic(Relaxation):
    """Shared statement, objective, residuals and dual bound of (6) and (7)."""

    psd: bool = False
    default_method = "admm"

    def __init__(self, K):
        self.K = check_square_matrix(K, "K", min_size=2)
        self.n = self.K.shape[0]

    def problem(self) -> cp.Problem:
        return nearest_doubly_stochastic(self.K, psd=self.psd)

    def objective(self, X) -> float:
        """``1/2 ||X - K||_F^2``."""
        return 0.5 * float(np.sum((np.asarray(X) - self.K) ** 2))

    def residuals(self, X) -> dict[str, float]:
        """Relative violations: ``row_sums`` max|X1 - 1| (target 1), ``symmetry``
        ||X - X^T||_F/||X||_F, ``nonnegativity`` max(0, -min X)/max|X|, and for (7) ``psd``
        max(0, -lambda_min)/max|lambda|."""
        X = np.asarray(X, dtype=float)
        res = {
            "row_sums": float(np.abs(X.sum(axis=1) - 1).max()),
            "symmetry": float(np.linalg.norm(X - X.T) / max(np.linalg.norm(X), 1e-300)),
            "nonnegativity": negativity(X),
        }
        if self.psd:
            w = np.linalg.eigvalsh((X + X.T) / 2)
            res["psd"] = float(max(0.0, -w[0]) / max(np.abs(w).max(), 1e-300))
        return res

    def projector(self, partial: bool = True):
        """A callable ``Y -> Pi_C1(Y)`` for symmetric Y (stateful: reuses spectral splits)."""
        raise NotImplementedError

    def restore(self, F: np.ndarray) -> np.ndarray:
        """An exactly feasible point near ``F``, for F exactly symmetric with unit row sums (and
        p.s.d. for (7)) whose only violation is small negative entries, as the iterates of the
        scalable solvers are.

        With N = max(-F, 0) and d = N 1, ``A = max(F, 0) - Diag(d) = F - L(N)`` moves the mass of
        every negative entry onto the diagonal: symmetry and row sums are kept, and L(N) is the
        graph Laplacian of N, so ``lambda_min(A) >= lambda_min(F) - 2 max_i d_i`` (Gershgorin).
        The identity is doubly stochastic and p.s.d., so ``X = (1 - s) A + s I`` is feasible for
        the smallest s making X's diagonal nonnegative and, for (7), ``(1 - s)(-2 max d) + s >= 0``.
        The change is of the order of the negative entries, not n times them as for mixing in
        the barycentre 11^T/n (measured on ADMM iterates: a 2-16x smaller objective change at
        n = 40-50, 100-1000x at n = 500).  Subclasses with further constraints override it.
        """
        N = np.maximum(-F, 0.0)
        if not N.any():
            return F
        d = N.sum(axis=1)
        A = np.maximum(F, 0.0)
        A[np.diag_indices_from(A)] -= d
        low = min(0.0, float(A.diagonal().min()))
        if self.psd:
            low = min(low, -2.0 * float(d.max()))
        s = -low / (1.0 - low)
        if s > 0:
            A *= 1.0 - s
            A[np.diag_indices_from(A)] += s
        return A

    def dual_value(self, Q, project=None) -> float:
        """The dual function g(Q) above: a lower bound on the optimum for any Q >= 0."""
        Q = np.maximum((Q + Q.T) / 2, 0.0)
        project = project or self.projector(partial=False)
        W = self.K + Q
        return float(0.5 * np.sum((W - project(W)) ** 2) - np.sum(self.K * Q) - 0.5 * np.sum(Q * Q))

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        Q = problem.constraints[0].dual_value
        return None if Q is None else self.dual_value(np.asarray(Q, dtype=float))


def project_row_sums(Y: np.ndarray) -> np.ndarray:
    """Projection of symmetric Y onto {F = F^T, F 1 = 1}: ``F = Y + u 1^T + 1 u^T`` with
    ``u = (r - (1^T r / 2n) 1) / n`` and ``r = 1 - Y 1``."""
    n = Y.shape[0]
    r = 1.0 - Y.sum(axis=1)
    u = (r - r.sum() / (2 * n)) / n
    return Y + u[:, None] + u[None, :]


class FrobeniusDS(_NearestDoublyStochastic):
    r"""Nearest doubly stochastic matrix in Frobenius norm, the QP (6) (Zass & Shashua's FSC)::

        minimize 1/2 ||F - K||_F^2  s.t.  F >= 0, F 1 = 1, F = F^T.

    Methods: ``"reference"`` (cvxpy), ``"admm"`` (default), ``"successive-projections"``
    (Zass & Shashua's alternating projections, with Dykstra's correction so that they converge
    to the nearest point rather than to some point of the set).

    Parameters
    ----------
    K : (n, n) array_like
        Symmetric affinity matrix.
    """

    name = "FrobeniusDS"
    psd = False

    def projector(self, partial: bool = True):
        return project_row_sums


class FrobeniusPSD(_NearestDoublyStochastic):
    r"""Nearest doubly stochastic **p.s.d.** matrix in Frobenius norm, the SDP (7)::

        minimize 1/2 ||F - K||_F^2  s.t.  F >= 0, F 1 = 1, F = F^T, F >> 0.

    Methods: ``"reference"`` (cvxpy + SCS/Clarabel), ``"admm"`` (default ``"auto"``: an
    over-relaxed two-block ADMM with adaptive penalty and partial eigendecompositions),
    ``"ld-ssc1"`` and ``"ld-ssc2"`` (the paper's Algorithms 1 and 2: L-BFGS-B on the dual
    (16) resp. (15), primal recovered by (10)).  Every scalable method reports the dual bound (12).

    Parameters
    ----------
    K : (n, n) array_like
        Symmetric affinity matrix.
    """

    name = "FrobeniusPSD"
    psd = True

    def projector(self, partial: bool = True):
        n = self.n
        project_psd = PSDProjector(n, partial=partial)

        def project(Y):
            # J Y J with J = I - 11^T/n (double centering), then add back e e^T = 11^T / n
            r = Y.mean(axis=1)
            JYJ = Y - r[:, None]
            JYJ -= r[None, :]
            JYJ += r.mean()
            F = project_psd(JYJ)
            F += 1.0 / n
            return F

        return project
