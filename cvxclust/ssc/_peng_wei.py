r"""The Peng-Wei semidefinite relaxation of (kernel) k-means.

For a kernel matrix K and k clusters, k-means maximises ``tr(K X)`` over the matrices
``X = Z (Z^T Z)^{-1} Z^T`` of the partitions (Z the 0/1 assignment); these are symmetric,
nonnegative, p.s.d., with unit row sums and trace k.  Keeping only those properties gives the SDP

.. math::

    \max_X\ \langle K, X\rangle \quad\text{s.t.}\quad X \succeq 0,\ X \ge 0,\ X\mathbf 1 = \mathbf 1,
    \ \operatorname{tr} X = k,

whose solution is also a doubly stochastic p.s.d. normalization of K (the spectral step of
:class:`~cvxclust.ssc.SemidefiniteSpectralClustering` clusters its top eigenvectors).  It has no
hand-written solver: ``method="auto"`` hands the cvxpy statement below to
``cvxclust.solve(problem, method="auto")``, which picks the method by the instance (at large n one
that returns the solution as a factor F, X = F F^T, in ``Result.extras["factor"]``, and may leave
``Result.X`` unformed); any other name (``"generic"``, ``"reference"``, ...) runs that method.

Reference: J. Peng, Y. Wei, "Approximating K-means-type Clustering via Semidefinite
Programming", SIAM Journal on Optimization, 2007.
"""

from __future__ import annotations

import dataclasses
import warnings
from numbers import Integral

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from .._array_api import check_arrays, is_foreign, is_numpy, library, namespace_of, to_numpy
from .._relaxation import Relaxation
from ..result import Result
from ..parameters import Interval, check_parameter
from ._relaxations import check_matrix, negativity

__all__ = ["PengWei"]


class PengWei(Relaxation):
    """The Peng-Wei SDP of the module docstring.

    Parameters
    ----------
    K : (n, n) array_like
        Symmetric finite kernel matrix (``X X^T`` for the linear k-means); never modified.
    n_clusters : int
        k, between 1 and n.
    """

    name = "peng-wei"
    sense = "maximize"
    default_method = "generic"  # not used by solve, which sends "auto" to cvxclust.solve's own choice

    def __init__(self, K, n_clusters: int):
        self.K = check_matrix(K, "K", min_size=2)
        self.n = self.K.shape[0]
        self.n_clusters = check_parameter("n_clusters", n_clusters, [Interval(Integral, 1, self.n, closed="both")],
                                             "PengWei")

    @classmethod
    def methods(cls) -> list[str]:
        """``"reference"``, ``"generic"`` (judged by this class's :meth:`residuals`) and every other
        method of :func:`cvxclust.solve` (those registered when it is called)."""
        from ..generic import CvxpyRelaxation  # at call time: the generic solver registers itself on this core

        own = super().methods()
        return own + [name for name in CvxpyRelaxation.methods() if name not in own]

    def scalable_methods(self) -> list[str]:
        """The methods of :func:`cvxclust.solve` that apply to the statement (:meth:`problem`)."""
        from ..generic import CvxpyRelaxation

        return CvxpyRelaxation(self.problem()).scalable_methods()

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve the SDP: ``"reference"`` and ``"generic"`` as for every relaxation; ``"auto"`` and
        the other methods of :func:`cvxclust.solve` are ``cvxclust.solve(self.problem(), method,
        **options)``, whose result is judged by the standard form of the statement (with
        ``"auto"``, ``extras["auto"]`` says what ran and why).

        A K given as a PyTorch tensor solves on its device (``device=K.device``, ``dtype=K.dtype``
        unless given): the statement is read on the host, the methods that run on a device
        (:func:`cvxclust.solve`) solve there, and ``Result.X`` comes back there."""
        if is_foreign(self.K):
            if not library(namespace_of(self.K)) == "torch":
                raise TypeError(f"a PengWei K of {library(namespace_of(self.K))} has no device that cvxclust.solve "
                                "takes: pass K as a NumPy array or a PyTorch tensor")
            options = {"device": self.K.device, "dtype": str(self.K.dtype).rsplit(".", 1)[-1]} | options
            if method in super().methods():
                raise ValueError(f"method={method!r} reads K on the host: on K's device use 'auto' or another "
                                 "method of cvxclust.solve that runs there")
        elif method in super().methods():
            return super().solve(method, **options)
        from ..generic import solve

        return self._judged(solve(self.problem(), method, **options), options.get("residual_tol", 1e-6))

    def _judged(self, result: Result, residual_tol: float) -> Result:
        """``result`` with this class's objective and residuals, from the factor F where the method
        returned one (``extras["factor"]``, X = F F^T: no n x n matrix is formed or decomposed),
        else from X; a point called optimal whose residuals exceed ``residual_tol`` is ``"stalled"``
        with a ``ConvergenceWarning``, as the solver core does."""
        factor = result.extras.get("factor")
        point = {"factor": factor} if factor is not None else {"X": result.X}
        if factor is None and result.X is None:
            return result
        residuals = self.residuals(**point)
        status, worst = result.status, max(residuals.values())
        if status == "optimal" and worst > residual_tol:
            status = "stalled"
            warnings.warn(f"{result.method} met its own residuals, but the worst of {self.name}'s is {worst:.2e} > "
                          f"residual_tol={residual_tol:g}: status 'stalled'; a smaller residual_tol may reach it",
                          ConvergenceWarning, stacklevel=3)
        return dataclasses.replace(result, objective=self.objective(**point), residuals=residuals, status=status)

    def problem(self) -> cp.Problem:
        n = self.n
        X = cp.Variable((n, n), symmetric=True, name="X")
        constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == self.n_clusters]
        # cvxpy holds NumPy constants: a K of another library is copied to the host here
        return cp.Problem(cp.Maximize(cp.trace(to_numpy(self.K) @ X)), constraints)

    def objective(self, X=None, *, factor=None) -> float:
        """``<K, X>`` for a finite (n, n) matrix X, or ``<K, F F^T> = <K F, F>`` for a factor F
        (``factor``, of shape (n, r)) without forming X."""
        F = self._factor(X, factor)
        if F is not None:
            return float(np.vdot(self._host_K() @ F, F))
        X = self._point(X)
        xp = namespace_of(X)
        return float(np.vdot(self.K, X)) if is_numpy(xp) else float(xp.sum(self.K * X))

    def _host_K(self) -> np.ndarray:
        """K on the host, for a factor (a NumPy array from the low-rank method)."""
        return to_numpy(self.K)

    def _point(self, X):
        """X checked, in K's library and on its device (refused naming X elsewhere)."""
        if is_foreign(self.K) or is_foreign(X):
            check_arrays(K=self.K, X=X)
        return check_matrix(X, "X", self.n, symmetric=False)

    def _factor(self, X, factor) -> np.ndarray | None:
        """The checked factor where ``factor`` is given (and X is not), else None."""
        if (X is None) == (factor is None):
            raise TypeError("give either X, an (n, n) matrix, or factor, an (n, r) matrix F with X = F F^T")
        if factor is None:
            return None
        F = np.asarray(factor)
        if F.ndim != 2 or F.shape[0] != self.n or F.shape[1] < 1 or F.dtype.kind not in "fiu" \
                or not np.all(np.isfinite(F)):
            raise ValueError(f"factor must be a finite real ({self.n}, r) matrix with r >= 1, got "
                             f"{F.dtype} of shape {F.shape}")
        return F

    def objective_scale(self) -> float:
        """The objective at the feasible centre ``11^T/n + (k - 1)/(n - 1) (I - 11^T/n)``."""
        n, k = self.n, self.n_clusters
        xp = namespace_of(self.K)
        mean = float(xp.sum(self.K)) / n
        trace = float(xp.sum(xp.linalg.diagonal(self.K)))
        return abs(mean + (k - 1) / (n - 1) * (trace - mean)) if n > 1 else abs(mean)

    def residuals(self, X=None, *, factor=None) -> dict[str, float]:
        """Relative violations: ``row_sums`` ``max|X1 - 1|``, ``trace`` ``|tr X - k| / k``, ``symmetry``,
        ``nonnegativity`` max(0, -min X)/max|X| and ``psd`` max(0, -lambda_min)/max|lambda|.

        For a factor F (``factor``; X = F F^T, symmetric and p.s.d. by construction) they are
        computed from F: the row sums as ``F (F^T 1)``, the trace as ``||F||_F^2``, the entries' largest
        magnitude as the largest squared row norm of F, and their least value as 0 for a nonnegative F
        (the low-rank method's), otherwise over blocks of rows of ``F F^T``, never the whole n x n."""
        F = self._factor(X, factor)
        if F is not None:
            return self._factor_residuals(F)
        X = self._point(X)
        xp = namespace_of(X)
        w = (np.linalg.eigvalsh if is_numpy(xp) else xp.linalg.eigvalsh)((X + X.T) / 2)
        return {
            "row_sums": float(xp.max(xp.abs(xp.sum(X, axis=1) - 1))),
            "trace": float(abs(float(xp.sum(xp.linalg.diagonal(X))) - self.n_clusters) / self.n_clusters),
            "symmetry": float(xp.linalg.matrix_norm(X - X.T) / max(float(xp.linalg.matrix_norm(X)), 1e-300)),
            "nonnegativity": negativity(X),
            "psd": float(max(0.0, -float(w[0])) / max(float(xp.max(xp.abs(w))), 1e-300)),
        }

    def _factor_residuals(self, F: np.ndarray) -> dict[str, float]:
        rows = F @ F.sum(axis=0)
        # max|F F^T| is the largest squared row norm: |<f_i, f_j>| <= ||f_i|| ||f_j|| (Cauchy-Schwarz),
        # attained on the diagonal; a nonnegative F (the low-rank method's) has no negative entry in F F^T
        largest = float(np.einsum("ij,ij->i", F, F).max())
        least = 0.0 if F.min() >= 0 else self._least_entry(F)
        return {
            "row_sums": float(np.abs(rows - 1).max()),
            "trace": float(abs(np.vdot(F, F) - self.n_clusters) / self.n_clusters),
            "symmetry": 0.0,
            "nonnegativity": float(max(0.0, -least) / max(largest, 1e-300)),
            "psd": 0.0,
        }

    def _least_entry(self, F: np.ndarray) -> float:
        """The least entry of ``F F^T``, over blocks of its rows (32 MB each), never the whole n x n."""
        block = max(1, 4_000_000 // self.n)
        return min(float((F[start:start + block] @ F.T).min()) for start in range(0, self.n, block))
