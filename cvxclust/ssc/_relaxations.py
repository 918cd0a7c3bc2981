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

:func:`check_matrix` checks the matrices given to them at the door, and :class:`FrobeniusSolver`
is the base of their scalable solvers.  K may be an array of any library of the Python array API
standard (a PyTorch tensor on a GPU): the objective, residuals, projections, restoration and dual
function then run in its namespace and on its device, as do the solvers that declare
``array_api`` (:meth:`FrobeniusPSD.array_api_methods`); the others, and the cvxpy statement, take
NumPy arrays and refuse such a K naming those that run.

References: Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral Clustering via Lagrange
Duality", IEEE Transactions on Image Processing, 2014; R. Zass, A. Shashua, "Doubly Stochastic
Normalization for Spectral Clustering", Advances in Neural Information Processing Systems (NIPS),
2006.
"""

from __future__ import annotations

from typing import ClassVar

import cvxpy as cp
import numpy as np

from .._array_api import add_to_diagonal, check_arrays, diagonal, is_foreign, library, namespace_of
from .._array_ops import frobenius, inner
from .._checks import check_square_matrix
from .._relaxation import Relaxation
from ..linalg import PSDProjector
from ..parameters import check_parameter
from ..solvers import IterativeSolver
from ._problem import nearest_doubly_stochastic

__all__ = ["FrobeniusDS", "FrobeniusPSD", "FrobeniusSolver", "check_matrix"]


def check_matrix(A, name: str, n: int | None = None, *, symmetric: bool = True, min_size: int = 1) -> np.ndarray:
    """``A`` as a square finite float matrix (of order ``n`` if given), or a ValueError naming it.

    Complex and string arrays are refused (:func:`cvxclust._checks.check_square_matrix`), and
    ``symmetric=True`` also symmetrises exactly.  Never modifies ``A``; a writeable float array
    that is already exactly symmetric is returned as it is rather than copied, so that a dense kernel
    (800 MB at n = 10,000) is held once however many functions check it.  An array of another
    array API library (PyTorch, CuPy, ...) stays in its namespace and on its device, and is not
    copied either where it is exactly symmetric.
    """
    if is_foreign(A):
        exact = symmetric and A.ndim == 2 and A.shape[0] == A.shape[1] and _exactly_symmetric(A)
    else:
        exact = symmetric and isinstance(A, np.ndarray) and A.dtype == np.float64 and A.flags.writeable \
            and A.ndim == 2 and A.shape[0] == A.shape[1] and _equals_transpose(A)
    A = check_square_matrix(A, name, symmetric=symmetric and not exact, min_size=min_size)
    if n is not None and tuple(A.shape) != (n, n):
        raise ValueError(f"{name} must be of shape ({n}, {n}) like K, got {tuple(A.shape)}")
    return A


def _equals_transpose(A: np.ndarray, block: int = 128) -> bool:
    """Whether the square NumPy ``A`` equals its transpose exactly, compared by panels of ``block``
    rows against the matching columns (the upper triangle once, no n x n temporary; at n = 10,000
    about three times faster than ``np.array_equal(A, A.T)``, which reads ``A.T`` across rows)."""
    n = A.shape[0]
    return all(np.array_equal(A[i:i + block, i:], A[i:, i:i + block].T) for i in range(0, n, block))


def _exactly_symmetric(A) -> bool:
    """Whether the foreign square ``A`` equals its transpose (NaN entries never do)."""
    try:
        xp = namespace_of(A)
        return bool(xp.all(A == A.T))
    except (TypeError, ValueError, RuntimeError):  # a dtype the checks refuse with a clearer message
        return False


def negativity(X: np.ndarray) -> float:
    """Relative violation of ``X >= 0``: ``max(0, -min X) / max|X|``."""
    xp = namespace_of(X)
    return float(max(0.0, -float(xp.min(X))) / max(float(xp.max(xp.abs(X))), 1e-300))


class _NearestDoublyStochastic(Relaxation):
    """Shared statement, objective, residuals and dual bound of (6) and (7)."""

    psd: bool = False
    default_method = "dual-newton"

    def __init__(self, K):
        self.K = check_matrix(K, "K", min_size=2)
        self.n = self.K.shape[0]
        #: the namespace, device and dtype of K: every method but the reference runs there
        self.arrays = check_arrays(K=self.K)
        xp = self.arrays.xp
        # the rounding of the solvers' arithmetic with K's entries, which restore() allows for (in
        # the unit roundoff of K's dtype: float32 allows about 5e8 times more than float64)
        self._K_rounding = 10 * self.arrays.eps * float(xp.max(xp.abs(self.K)))

    def _point(self, X, name: str):
        """``X`` checked as an (n, n) matrix of K's library, device and dtype (a ValueError or
        TypeError naming it otherwise)."""
        if is_foreign(X) or not self.arrays.numpy:
            check_arrays(K=self.K, **{name: X})
        return check_matrix(X, name, self.n, symmetric=False)

    def problem(self) -> cp.Problem:
        """The cvxpy statement (the ``"reference"`` method).  cvxpy takes NumPy arrays: for a K of
        another array library it raises a ValueError, so method ``"reference"`` (and the plug-in
        ``"generic"``, which reads this statement) is refused on such a K; convert it with
        :func:`cvxclust._array_api.to_numpy` to compare with the reference."""
        if not self.arrays.numpy:
            raise ValueError(
                f"the cvxpy statement of {self.name} (methods 'reference' and 'generic') takes NumPy arrays and K is "
                f"an array of {library(self.arrays.xp)}: pass K as a NumPy array "
                f"(cvxclust._array_api.to_numpy(K)) for them; the methods {self.array_api_methods()} run on K's "
                "device")
        return nearest_doubly_stochastic(self.K, psd=self.psd)

    def scalable_methods(self) -> list[str]:
        """The methods other than ``"reference"`` that apply to this instance; for a K of a library
        other than NumPy, those that run on it (:meth:`array_api_methods`)."""
        if not self.arrays.numpy:
            return self.array_api_methods()
        return super().scalable_methods()

    @classmethod
    def array_api_methods(cls) -> list[str]:
        """The registered methods that run on a K of any array API library (the others, and the
        reference, take NumPy arrays only)."""
        return [name for name in cls._solvers if name in FrobeniusSolver.array_api_names]

    def objective(self, X) -> float:
        """``1/2 ||X - K||_F^2`` for a finite (n, n) matrix X (of K's library and device)."""
        X = self._point(X, "X")
        return 0.5 * frobenius(X - self.K, self.arrays.xp) ** 2

    def objective_scale(self) -> float:
        """The objective at the feasible point ``11^T / n``: its order of magnitude."""
        return 0.5 * frobenius(self.K - 1.0 / self.n, self.arrays.xp) ** 2

    def residuals(self, X) -> dict[str, float]:
        """Relative violations: ``row_sums`` max|X1 - 1| (target 1), ``symmetry``
        ||X - X^T||_F/||X||_F, ``nonnegativity`` max(0, -min X)/max|X|, and for (7) ``psd``
        max(0, -lambda_min)/max|lambda|, for a finite (n, n) matrix X (of K's library and device,
        where the eigenvalues are computed)."""
        X = self._point(X, "X")
        xp = self.arrays.xp
        res = {
            "row_sums": float(xp.max(xp.abs(xp.sum(X, axis=1) - 1))),
            "symmetry": frobenius(X - X.T, xp) / max(frobenius(X, xp), 1e-300),
            "nonnegativity": negativity(X),
        }
        if self.psd:
            symmetric = (X + X.T) / 2
            w = np.linalg.eigvalsh(symmetric) if self.arrays.numpy else xp.linalg.eigvalsh(symmetric)
            res["psd"] = float(max(0.0, -float(w[0])) / max(float(xp.max(xp.abs(w))), 1e-300))
        return res

    def projector(self, partial: bool = True):
        """A callable ``Y -> Pi_C1(Y)`` for symmetric (n, n) Y of K's library and device, which it
        trusts (stateful: reuses spectral splits); ``partial`` computes only the smaller side of
        the spectrum (NumPy; elsewhere each projection is one full eigendecomposition)."""
        raise NotImplementedError

    def restorable(self, F) -> bool:
        """Whether :meth:`restore` applies to F: symmetric with unit row sums up to rounding (of
        the sums of F's entries, and of an iterate's arithmetic with K's entries).

        Raises ValueError naming F if it is not a finite (n, n) matrix.
        """
        return self._within_rounding(self._point(F, "F"))

    def _within_rounding(self, F: np.ndarray) -> bool:
        """:meth:`restorable` for a checked F."""
        xp = self.arrays.xp
        tolerance = self.n * max(1e-9 * max(1.0, float(xp.max(xp.abs(F)))), self._K_rounding)
        return bool(float(xp.max(xp.abs(F - F.T))) <= tolerance
                    and float(xp.max(xp.abs(xp.sum(F, axis=1) - 1.0))) <= tolerance)

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
        the barycentre 11^T/n, and the gap to the barycentre's widens with n.  Subclasses with
        further constraints override it.  X is of F's library and on its device; the rounding
        allowance of :meth:`restorable` is in the unit roundoff of K's dtype (it holds for
        float64; float32 is looser).

        Raises ValueError naming F if it is not a finite (n, n) matrix, symmetric with unit row
        sums up to rounding (:meth:`restorable`).
        """
        F = self._point(F, "F")
        if not self._within_rounding(F):
            raise ValueError("F must be symmetric with unit row sums (up to rounding) for restore")
        xp = self.arrays.xp
        d = -xp.sum(xp.minimum(F, 0.0), axis=1)  # N 1
        largest = float(xp.max(d))
        if not largest > 0.0:
            return F
        A = xp.maximum(F, 0.0)
        A = add_to_diagonal(A, -d, xp)
        low = min(0.0, float(xp.min(diagonal(A, xp))))
        if self.psd:
            low = min(low, -2.0 * largest)
        s = -low / (1.0 - low)
        if s > 0:
            A *= 1.0 - s
            A = add_to_diagonal(A, s, xp)
        return A

    def dual_value(self, Q, project=None) -> float:
        """The dual function g(Q) above: a lower bound on the optimum for any finite (n, n) Q (of
        K's library and device), taken as its part in the dual domain, ``max((Q + Q^T) / 2, 0)``;
        ``project`` is a :meth:`projector` to reuse."""
        Q = self._point(Q, "Q")
        project = check_parameter("project", project, [callable, None], "dual_value")
        xp = self.arrays.xp
        Q = xp.maximum((Q + Q.T) / 2, 0.0)
        project = project or self.projector(partial=False)
        W = self.K + Q
        residual = frobenius(W - project(W), xp)
        return float(0.5 * residual ** 2 - inner(self.K, Q, xp) - 0.5 * inner(Q, Q, xp))

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        Q = problem.constraints[0].dual_value
        return None if Q is None else self.dual_value(np.asarray(Q, dtype=float))


def project_row_sums(Y: np.ndarray) -> np.ndarray:
    """Projection of symmetric Y onto {F = F^T, F 1 = 1}: ``F = Y + u 1^T + 1 u^T`` with
    ``u = (r - (1^T r / 2n) 1) / n`` and ``r = 1 - Y 1`` (in Y's namespace and on its device)."""
    xp = namespace_of(Y)
    n = Y.shape[0]
    r = 1.0 - xp.sum(Y, axis=1)
    u = (r - xp.sum(r) / (2 * n)) / n
    return Y + u[:, None] + u[None, :]


class FrobeniusDS(_NearestDoublyStochastic):
    r"""Nearest doubly stochastic matrix in Frobenius norm, the QP (6) (Zass & Shashua's FSC)::

        minimize 1/2 ||F - K||_F^2  s.t.  F >= 0, F 1 = 1, F = F^T.

    Methods: ``"reference"`` (cvxpy), ``"dual-newton"`` (default: semismooth Newton on the
    row-sum multipliers, which solves (6) in a few passes over K), ``"admm"``,
    ``"successive-projections"``
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
        check_parameter("partial", partial, ["boolean"], "projector")
        return project_row_sums


class FrobeniusPSD(_NearestDoublyStochastic):
    r"""Nearest doubly stochastic **p.s.d.** matrix in Frobenius norm, the SDP (7)::

        minimize 1/2 ||F - K||_F^2  s.t.  F >= 0, F 1 = 1, F = F^T, F >> 0.

    Methods: ``"reference"`` (cvxpy + SCS/Clarabel), ``"dual-newton"`` (default ``"auto"``:
    semismooth Newton on the row-sum multipliers inside an accelerated projected gradient on
    the p.s.d. multiplier, one partial eigendecomposition per iteration), ``"admm"`` (an
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
        project_psd = PSDProjector(n, partial=check_parameter("partial", partial, ["boolean"], "projector"))

        xp = self.arrays.xp

        def project(Y):
            # J Y J with J = I - 11^T/n (double centering), then add back e e^T = 11^T / n
            r = xp.mean(Y, axis=1)
            JYJ = Y - r[:, None]
            JYJ -= r[None, :]
            JYJ += xp.mean(r)
            F = project_psd(JYJ)
            F += 1.0 / n
            return F

        return project


class FrobeniusSolver(IterativeSolver):
    """Base of the scalable solvers of (6) and (7): refuses, naming it, a ``relaxation`` that is
    not one of the ``relaxations`` the solver handles (or a subclass of one), and one whose K is
    an array of a library other than NumPy unless the solver runs on any (``array_api``)."""

    #: the relaxations the solver handles
    relaxations: ClassVar[tuple] = (FrobeniusDS, FrobeniusPSD)
    #: whether the solver runs on a K of any array API library, on its device (else NumPy only)
    array_api: ClassVar[bool] = False
    #: the method names of the solvers that do
    array_api_names: ClassVar[set] = set()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("array_api"):
            FrobeniusSolver.array_api_names.add(cls.method)

    def __init__(self, relaxation=None, **params):
        if not isinstance(relaxation, self.relaxations):
            names = " or ".join(cls.__name__ for cls in self.relaxations)
            raise TypeError(f"relaxation must be a {names} for {self.method}, got {type(relaxation).__name__}")
        arrays = getattr(relaxation, "arrays", None)
        if arrays is not None and not arrays.numpy and not self.array_api:
            raise TypeError(
                f"method {self.method!r} runs on NumPy arrays only and K is an array of {library(arrays.xp)}: the "
                f"methods {relaxation.array_api_methods()} run on K's device; or pass K as a NumPy array")
        super().__init__(relaxation, **params)
