r"""The paper's dual solvers LD-SSC1 and LD-SSC2 (Algorithms 1 and 2), kept faithful so that
its claims can be checked, and Zass & Shashua's successive projections for (6).

With ``M = u 1^T + 1 u^T`` and ``P = -(Q + M + K)``, minimising the Lagrangian (8) over F and
the p.s.d. multiplier Z in closed form (``Z = P_+``, (14)) leaves the dual (15)::

    minimize_{Q >= 0, u}  theta(Q, u) = 1/2 ||P_-||_F^2 - 2 1^T u,

with gradients (18) ``d theta / d u_i = -2 - <P_-, T_i + T_i^T> = -2 - 2 (P_- 1)_i`` and (19)
``d theta / d Q = -P_-``.  The primal is recovered by (10): ``F = K + Q + M + Z = -P_-``, and
``1/2 ||K||^2 - theta(Q, u)`` is the dual objective (12), a certified lower bound.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import Bounds, minimize

from .._checks import check_int_range
from .._stopping import IterationMonitor
from ._relaxations import FrobeniusDS, FrobeniusPSD, negativity, project_row_sums
from ..linalg import PSDProjector


class _DualOracle:
    """theta(Q, u) of (15) with its gradients (18)-(19); caches the last negative part P_-."""

    def __init__(self, K: np.ndarray, partial_eig: bool):
        self.K = K
        self.n = K.shape[0]
        self.half_norm_K = 0.5 * float(np.sum(K * K))
        self.project_psd = PSDProjector(self.n, partial=partial_eig)
        self.evaluations = 0
        self.P_minus = None

    def __call__(self, Q: np.ndarray, u: np.ndarray):
        self.evaluations += 1
        Qs = (Q + Q.T) / 2
        P = -(Qs + u[:, None] + u[None, :] + self.K)
        P_minus = P - self.project_psd(P)
        self.P_minus = P_minus
        theta = 0.5 * float(np.sum(P_minus * P_minus)) - 2.0 * u.sum()
        grad_u = -2.0 - 2.0 * P_minus.sum(axis=1)
        grad_Q = -P_minus
        return theta, grad_Q, grad_u

    def primal(self) -> np.ndarray:
        """F = -P_- at the last evaluated point, by (10)."""
        return -self.P_minus

    def dual_bound(self, theta: float) -> float:
        return self.half_norm_K - theta


def _record(monitor, relaxation, oracle, theta):
    F = oracle.primal()
    objective = relaxation.objective(F)
    bound = oracle.dual_bound(theta)
    gap = abs(objective - bound) / max(abs(objective), 1e-12)
    # F = -P_- is symmetric and p.s.d. by construction: only row sums and signs need checking
    # (relaxation.residuals would add a full eigendecomposition to every iteration)
    row_sums, negatives = float(np.abs(F.sum(axis=1) - 1).max()), negativity(F)
    monitor.record(objective=objective, dual_bound=bound, relative_gap=gap, row_sums=row_sums,
                   nonnegativity=negatives, max_residual=max(row_sums, negatives), evaluations=oracle.evaluations)
    return max(gap, row_sums, negatives)


def ld_ssc2(
    relaxation: FrobeniusPSD,
    *,
    tol: float = 1e-7,
    max_iter: int = 10_000,
    time_limit: float = np.inf,
    memory: int = 10,
    restarts: int = 5,
    partial_eig: bool = True,
    verbose: bool = False,
):
    """LD-SSC2 (Algorithm 2): L-BFGS-B on (15) jointly over Q >= 0 (n^2 bounds) and u.

    Stops when the relative duality gap, the row-sum error and the negative entries of the
    recovered F are all below ``tol`` (checked at every L-BFGS-B iteration).  When L-BFGS-B
    stops by itself first, it is restarted from its last point up to ``restarts`` times, then
    the status is ``"stalled"``.
    """
    check_int_range(memory, "memory", 1)
    check_int_range(restarts, "restarts", 0)
    K, n = relaxation.K, relaxation.n
    oracle = _DualOracle(K, partial_eig)
    monitor = IterationMonitor("ld-ssc2", tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)
    iterations = iter(monitor)
    next(iterations, None)  # None: a limit hit before the first iteration (status set)

    def fun(x):
        theta, gQ, gu = oracle(x[: n * n].reshape(n, n), x[n * n :])
        return theta, np.concatenate([gQ.ravel(), gu])

    def callback(intermediate_result):
        if _record(monitor, relaxation, oracle, intermediate_result.fun) < tol:
            monitor.converged()
        if next(iterations, None) is None or monitor.status is not None:
            raise StopIteration

    lower = np.concatenate([np.zeros(n * n), np.full(n, -np.inf)])
    x = np.zeros(n * n + n)
    # L-BFGS-B ends by itself when its line search can make no more progress in floating
    # point; restarting from the last point with a fresh memory usually gets further.
    for _ in range(1 + restarts):
        res = minimize(fun, x, jac=True, method="L-BFGS-B", bounds=Bounds(lower, np.inf), callback=callback,
                       options={"maxiter": max_iter, "maxcor": memory, "ftol": 0.0, "gtol": 0.0,
                                "maxfun": 10 * max_iter})
        x = res.x
        if monitor.status is not None:
            break
    else:
        monitor.stalled()
    theta, *_ = oracle(x[: n * n].reshape(n, n), x[n * n :])
    return relaxation.make_result(oracle.primal(), status=monitor.status, method="ld-ssc2",
                                  iterations=monitor.iterations, time=monitor.elapsed,
                                  dual_bound=oracle.dual_bound(theta), history=monitor.history)


def ld_ssc1(
    relaxation: FrobeniusPSD,
    *,
    tol: float = 1e-7,
    max_iter: int = 20_000,
    inner_iter: int = 10,
    time_limit: float = np.inf,
    partial_eig: bool = True,
    verbose: bool = False,
):
    """LD-SSC1 (Algorithm 1): cyclic coordinate ascent on the dual (13), starting at Q = I.

    Each outer iteration runs at most ``inner_iter`` L-BFGS-B iterations on (16) over u (Q
    fixed), then sets ``Z = P_+`` and ``Q = thr_{>=0}(-(Z + M + K))`` (17).  Stops on the same
    test as :func:`ld_ssc2`.
    """
    check_int_range(inner_iter, "inner_iter", 1)
    K, n = relaxation.K, relaxation.n
    oracle = _DualOracle(K, partial_eig)
    monitor = IterationMonitor("ld-ssc1", tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)
    Q = np.eye(n)
    u = np.zeros(n)
    for _ in monitor:
        res = minimize(lambda v: oracle(Q, v)[::2], u, jac=True, method="L-BFGS-B",
                       options={"maxiter": inner_iter, "ftol": 0.0, "gtol": 0.0})
        u = res.x
        theta, *_ = oracle(Q, u)
        if _record(monitor, relaxation, oracle, theta) < tol:
            monitor.converged()
            break
        # (17) with Z = P_+ = P - P_- and P = -(Q + M + K):  -(Z + M + K) = Q + P_-
        Q = np.maximum(Q + oracle.P_minus, 0.0)
    theta, *_ = oracle(Q, u)
    return relaxation.make_result(oracle.primal(), status=monitor.status, method="ld-ssc1",
                                  iterations=monitor.iterations, time=monitor.elapsed,
                                  dual_bound=oracle.dual_bound(theta), history=monitor.history)


def successive_projections(
    relaxation: FrobeniusDS,
    *,
    tol: float = 1e-7,
    max_iter: int = 100_000,
    time_limit: float = np.inf,
    dykstra: bool = True,
    verbose: bool = False,
):
    """Zass & Shashua's successive projections between {F = F^T, F 1 = 1} and {F >= 0}.

    With ``dykstra=True`` (default) the nonnegativity step carries Dykstra's correction
    ``q``, so the iterates converge to the nearest doubly stochastic matrix, the solution of (6);
    the affine step needs none.  ``dykstra=False`` is the plain von Neumann alternation of the
    original FSC paper, which converges to *a* doubly stochastic matrix that is in general not
    the nearest (its objective gap is then reported honestly).  ``Q = -q >= 0`` is the
    multiplier of ``F >= 0`` and certifies the dual bound.
    """
    K = relaxation.K
    monitor = IterationMonitor("successive-projections", tol=tol, max_iter=max_iter, time_limit=time_limit,
                               verbose=verbose)
    Y, q = K.copy(), np.zeros_like(K)
    X = project_row_sums(Y)  # returned as is if a limit stops the loop before its first pass
    bound = -np.inf
    for it in monitor:
        X = project_row_sums(Y)
        Y_prev = Y
        Y = np.maximum(X + q, 0.0)
        if dykstra:
            q = X + q - Y
        change = np.linalg.norm(Y - Y_prev) / max(np.linalg.norm(Y), 1.0)
        infeasibility = np.linalg.norm(X - Y) / max(np.linalg.norm(X), 1.0)
        row = {"objective": relaxation.objective(X), "change": change, "infeasibility": infeasibility}
        if max(change, infeasibility) < tol or it % 50 == 0:
            bound = max(bound, relaxation.dual_value(-q))
            row.update(dual_bound=bound, relative_gap=abs(row["objective"] - bound) / max(abs(row["objective"]), 1e-12))
        monitor.record(**row)
        if max(change, infeasibility) < tol:
            monitor.converged()
            break
    return relaxation.make_result(X, status=monitor.status, method="successive-projections",
                                  iterations=monitor.iterations, time=monitor.elapsed,
                                  dual_bound=relaxation.dual_value(-q) if dykstra else None,
                                  history=monitor.history)


FrobeniusPSD.register_solver("ld-ssc1", ld_ssc1)
FrobeniusPSD.register_solver("ld-ssc2", ld_ssc2)
FrobeniusDS.register_solver("successive-projections", successive_projections)
