r"""Dual semismooth Newton solver for (6) and (7): Newton on the row-sum multipliers, accelerated
projected gradient on the p.s.d. multiplier.

Dualising ``F 1 = 1`` (multiplier u) and ``F >> 0`` (multiplier S >> 0) and keeping ``F >= 0``
in the inner minimum gives, with ``F(u, S) = max(K + S + u 1^T + 1 u^T, 0)`` entrywise,

.. math::

    \theta(u, S) = \min_{F \ge 0}\ \tfrac12\|F - K\|_F^2 - \langle S + u\mathbf 1^T
    + \mathbf 1 u^T, F\rangle + 2\,\mathbf 1^T u
    = \tfrac12\|K\|_F^2 - \tfrac12\|F(u, S)\|_F^2 + 2\,\mathbf 1^T u,

a lower bound on the optimum for every u and every S >> 0 (weak duality).  For (6) S = 0.

**Newton on u.**  ``psi(u) = 1/2 ||F(u, S)||^2 - 2 1^T u`` is convex with gradient
``2 (F 1 - 1)``, piecewise quadratic, and its generalized Hessian is
``2 (Diag(M 1) + M)`` with ``M`` the 0/1 pattern of ``F > 0``.  A semismooth Newton method with
conjugate gradients (Jacobi preconditioner, matrix-vector products with M in single precision)
and an Armijo line search minimises it in a handful of steps, each a few passes over an n x n
matrix (:func:`minimize_row_multipliers`).  Its solution ``F(u*, 0)`` *is* the optimum of (6),
exactly nonnegative and symmetric, with unit row sums to ``newton_tol``.  This is the
semismooth Newton method of H. Qi and D. Sun, "A Quadratically Convergent Newton Method for
Computing the Nearest Correlation Matrix", SIAM Journal on Matrix Analysis and Applications,
2006, applied to the row-sum constraints with the nonnegativity in the inner minimum.

**Accelerated projected gradient on S** (for (7)).  ``phi(S) = min_u psi(u, S)`` is convex and
its gradient ``F(u*(S), S)`` is 1-Lipschitz (a partial minimum of a function with a 1-Lipschitz
gradient), so the dual is ``min_{S >> 0} phi(S)``.  Each iteration takes one projected gradient
step with unit step from an extrapolated point (FISTA: A. Beck, M. Teboulle, "A Fast Iterative
Shrinkage-Thresholding Algorithm for Linear Inverse Problems", SIAM Journal on Imaging Sciences,
2009), restarted when the step and the momentum disagree (B. O'Donoghue, E. Candes, "Adaptive
Restart for Accelerated Gradient Schemes", Foundations of Computational Mathematics, 2015)::

    F_Y = F(u*(Y), Y)            (Newton, warm-started from the previous u)
    S+  = Pi_psd(Y - F_Y)        (one partial eigendecomposition)
    Y+  = S+ + (t_k - 1) / t_{k+1} (S+ - S).

So the expensive part, one eigendecomposition per iteration, is spent only on the p.s.d.
multiplier: the n^2 multipliers of ``F >= 0`` never appear (they are eliminated in closed form),
and the n row-sum multipliers are found by Newton's method to full accuracy at every step.  On
affinities whose nearest doubly stochastic matrix (6) is nearly p.s.d. the first iterations
already certify small gaps.

**Certificate.**  At a check, ``F = F(u*(S), S)`` at the current p.s.d. S is nonnegative,
symmetric, with unit row sums; mixing in the identity, ``X = (1 - s) F + s I`` with
``s = l / (1 + l)`` and ``l = max(0, -lambda_min(F))`` (one eigenvalue, LAPACK ``syevr`` by
index), keeps those and makes X p.s.d.: an exactly feasible point.  Its objective against
``theta(u*(S), S)`` is the certified gap; the eigenvalue is skipped when even the best mixture
``min_{s >= 0} f((1 - s) F + s I)`` could not certify ``tol``.

The loop, the stopping test and the certification at a limit are those of
:class:`cvxclust.solvers.IterativeSolver`.
"""

from __future__ import annotations

from numbers import Integral
from types import SimpleNamespace

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import LinearOperator, cg

from ..linalg import PSDProjector
from ..parameters import Interval
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param
from ._relaxations import FrobeniusDS, FrobeniusPSD, FrobeniusSolver

__all__ = ["DualNewton", "dual_newton", "minimize_row_multipliers"]


def minimize_row_multipliers(C: np.ndarray, u: np.ndarray | None = None, *, tol: float = 1e-12,
                             max_iter: int = 50):
    r"""Minimise ``psi(u) = 1/2 ||max(C + u 1^T + 1 u^T, 0)||_F^2 - 2 1^T u`` by semismooth Newton.

    At the minimum ``F = max(C + u 1^T + 1 u^T, 0)`` has unit row sums: F is the nearest
    matrix to C in Frobenius norm among the nonnegative ones with unit row sums (for symmetric C).

    Parameters
    ----------
    C : (n, n) ndarray
        Symmetric matrix (trusted: callers check it).
    u : (n,) ndarray, optional
        Start (e.g. the previous solution); by default the solution without the ``max``.
    tol : float
        Stop when ``max_i |(F 1)_i - 1| <= tol``, or below the rounding error of the row sums,
        ``n eps (max|C| + 2 max|u|)``, if that is larger.
    max_iter : int
        Newton steps at most.

    Returns
    -------
    F : (n, n) ndarray
    u : (n,) ndarray
    iterations : int
        Newton steps taken.
    status : str
        ``"converged"`` (the row sums reached ``tol``), ``"max_iter"``, or ``"line_search"`` (no
        step along the Newton direction decreased psi: rounding, far below any useful ``tol``).
    """
    n = C.shape[0]
    if u is None:
        r = 1.0 - C.sum(axis=1)
        u = (r - r.sum() / (2 * n)) / n  # F 1 = 1 where no entry is clipped
    F, trial = np.empty_like(C), np.empty_like(C)
    mask = np.empty(C.shape, dtype=np.float32)

    def evaluate(u, out):
        np.add(u[:, None], u[None, :], out=out)  # u_i + u_j: exactly symmetric, hence F too
        out += C
        np.maximum(out, 0.0, out=out)
        return 0.5 * float(np.vdot(out, out)) - 2.0 * float(u.sum())

    psi = evaluate(u, F)
    size = max(float(C.max()), -float(C.min()))
    for iteration in range(max_iter + 1):
        r = F.sum(axis=1) - 1.0
        worst = float(np.abs(r).max())
        if worst <= max(tol, n * np.finfo(float).eps * (size + 2.0 * float(np.abs(u).max()))):
            return F, u, iteration, "converged"
        if iteration == max_iter:
            return F, u, iteration, "max_iter"
        # the generalized Hessian / 2: Diag(M 1) + M, M = pattern of F > 0, regularised by eps
        np.greater(F, 0.0, out=mask, casting="unsafe")
        degree = mask.sum(axis=1, dtype=float)
        eps = min(1e-2, float(np.linalg.norm(r)))
        diagonal = degree + np.diagonal(mask) + eps

        def hessian(v, mask=mask, degree=degree, eps=eps):
            return (degree + eps) * v + mask @ v.astype(np.float32)

        step, _ = cg(LinearOperator((n, n), matvec=hessian, dtype=float), -r,
                     rtol=min(0.1, float(np.linalg.norm(r))), maxiter=100,
                     M=LinearOperator((n, n), matvec=lambda v: v / diagonal, dtype=float))
        slope = 2.0 * float(r @ step)
        t = 1.0
        for _ in range(30):
            candidate = evaluate(u + t * step, trial)
            # Armijo; near the optimum psi's decrease drowns in rounding, so a halved residual also passes
            if candidate <= psi + 1e-4 * t * slope or np.abs(trial.sum(axis=1) - 1.0).max() <= 0.5 * worst:
                break
            t *= 0.5
        else:
            return F, u, iteration, "line_search"
        u = u + t * step
        F, trial, psi = trial, F, candidate


class DualNewton(FrobeniusSolver):
    """Solve (6)/(7) on the dual: Newton on the row-sum multipliers, accelerated projected
    gradient on the p.s.d. multiplier; see the module docstring.

    Parameters
    ----------
    relaxation : FrobeniusDS or FrobeniusPSD
        The problem.
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`): stop when the certified
        relative gap of the feasible point is below ``tol`` and its residuals below
        ``residual_tol``.  An iteration is one projected gradient step (one partial
        eigendecomposition with its Newton solves) for (7), one Newton step for (6).
    newton_tol : float
        Row-sum accuracy of the inner Newton solves (the row-sum residual of the returned X).
    newton_max_iter : int
        Newton steps per inner solve of (7) at most.
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.

    Returns
    -------
    Result
        History rows hold ``newton_iterations`` (of the step's inner solve) and ``restart``
        (whether the momentum was reset); ``extras``: ``newton_iterations`` (the total).
    """

    method = "dual-newton"
    parameters = IterativeSolver.parameters | {
        "tol": Param(1e-7, POSITIVE),
        "residual_tol": Param(1e-7, POSITIVE),
        "max_iter": Param(1000, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "newton_tol": Param(1e-12, POSITIVE),
        "newton_max_iter": Param(50, [Interval(Integral, 1, None, closed="left")]),
        "partial_eig": Param(True, ["boolean"]),
    }

    def init_state(self):
        K = self.relaxation.K
        n = K.shape[0]
        # for (6) S = Y = 0 throughout: no matrices for them
        S, Y = (np.zeros((n, n)), np.zeros((n, n))) if self.relaxation.psd else (None, None)
        return SimpleNamespace(
            S=S, Y=Y, momentum=1.0, u=None, newton_total=0,
            project=PSDProjector(n, partial=self.partial_eig), at_S=None, half_norm_K=0.5 * float(np.vdot(K, K)))

    def _newton(self, state, shift, max_iter):
        """F(u*, shift) (shift None: 0) warm-started from the last u; books the Newton steps."""
        K = self.relaxation.K
        F, state.u, iterations, status = minimize_row_multipliers(
            K if shift is None else K + shift, state.u, tol=self.newton_tol, max_iter=max_iter)
        state.newton_total += iterations
        if status == "line_search":
            self.stall(f"the Newton line search failed at row-sum residual above newton_tol={self.newton_tol:g}")
        return F, iterations

    def step(self, state, iteration):
        if not self.relaxation.psd:
            # (6): S = Y = 0 and an iteration is one Newton step; F is the candidate
            state.at_S, iterations = self._newton(state, None, 1)
            return {"newton_iterations": iterations}
        F, iterations = self._newton(state, state.Y, self.newton_max_iter)
        row = {"newton_iterations": iterations}
        S_new = state.project(state.Y - F)
        S_new += S_new.T  # exactly symmetric, so that every F(u, S) is
        S_new *= 0.5
        # restart when the projected step turns against the momentum (O'Donoghue & Candes)
        restart = float(np.vdot(state.Y - S_new, S_new - state.S)) > 0.0
        momentum = 1.0 if restart else state.momentum
        following = (1.0 + np.sqrt(1.0 + 4.0 * momentum ** 2)) / 2.0
        state.Y = S_new + ((momentum - 1.0) / following) * (S_new - state.S)
        state.S, state.momentum, state.at_S = S_new, following, None
        row["restart"] = restart
        return row

    def certify(self, state, bound, final=False):
        relaxation = self.relaxation
        K, n = relaxation.K, relaxation.n
        if state.at_S is None:
            # (7): F at the p.s.d. S (the step's F is at the extrapolated Y); (6) before any
            # step: F at the start u
            state.at_S, _ = self._newton(state, state.S, self.newton_max_iter if relaxation.psd else 0)
        F = state.at_S
        FF, KF = float(np.vdot(F, F)), float(np.vdot(K, F))
        fresh = state.half_norm_K - 0.5 * FF + 2.0 * float(state.u.sum())
        objective = state.half_norm_K - KF + 0.5 * FF  # 1/2 ||F - K||^2, without an n x n temporary
        if not relaxation.psd:
            return Certificate(F, fresh, objective, {"row_sums": float(np.abs(F.sum(axis=1) - 1.0).max())})
        # f((1 - s) F + s I) = f(F) + s b + s^2 a / 2 with a = ||I - F||^2, b = <F - K, I - F>: its
        # minimum over s >= 0 bounds every mixture's objective from below, so the eigenvalue is
        # computed only when a mixture could certify
        trace_F = float(np.trace(F))
        a = max(n - 2.0 * trace_F + FF, 0.0)
        b = trace_F - float(np.trace(K)) - FF + KF
        lowest = objective - b * b / (2.0 * a) if b < 0 and a > 0 else objective
        if lowest - max(bound, fresh) > self.tol * abs(lowest) and not final:
            # no candidate at this check
            return Certificate(F, fresh, np.inf, {"row_sums": float(np.abs(F.sum(axis=1) - 1.0).max())})
        low = float(sla.eigh(F, subset_by_index=[0, 0], eigvals_only=True, driver="evr", check_finite=False)[0])
        level = max(0.0, -low)
        s = level / (1.0 + level)
        X = F * (1.0 - s)
        X[np.diag_indices_from(X)] += s
        residuals = {"row_sums": float(np.abs(X.sum(axis=1) - 1.0).max())}
        return Certificate(X, fresh, objective + s * b + 0.5 * s * s * a, residuals, {"lambda_min": low})

    def extras(self, state):
        return {"newton_iterations": state.newton_total}


dual_newton = DualNewton.as_function()
FrobeniusDS.register_solver("dual-newton", DualNewton)
FrobeniusPSD.register_solver("dual-newton", DualNewton)
