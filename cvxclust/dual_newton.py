r"""Dual semismooth Newton for nearest-point problems over a box, common row sums, the trace and
the p.s.d. cone.

The problem, for a symmetric target T,

.. math::

    \min_X\ \tfrac12\|X - T\|_F^2 \quad\text{s.t.}\quad L \le X \le U,\quad
    X\mathbf 1 = \beta\mathbf 1\ (\text{optional}),\quad \operatorname{tr} X = t\ (\text{optional}),
    \quad X \succeq 0\ (\text{optional}),

covers the SSC relaxations (6)-(7) (T = K, L = 0, beta = 1) and every problem
``min c ||X||^2 + <C, X>`` with ``c > 0`` whose constraints are of these kinds
(T = -C / (2c)).  Dualising the row sums (u), the trace (v) and the cone (S >> 0) and keeping the
box gives, with ``M = S + u 1^T + 1 u^T + v I`` and ``F = clip(T + M, L, U)``,

.. math::

    \theta(u, v, S) = \tfrac12\|F - T\|_F^2 - \langle M, F\rangle + 2\beta\,\mathbf 1^T u + t\,v
    \ \le\ \text{optimum}

for every u, v and every S >> 0 (weak duality).

* **Newton on (u, v)** (:func:`newton_multipliers`): ``-theta`` is convex in (u, v), piecewise
  quadratic, with gradient ``(2 (F 1 - beta 1), tr F - t)`` and generalized Hessian built from
  the pattern ``P`` of the entries strictly inside the box:
  ``[[2 (Diag(P 1) + P), 2 diag(P)], [2 diag(P)^T, sum diag(P)]]``.  Conjugate gradients with a
  Jacobi preconditioner (products with P in single precision) and an Armijo line search solve it
  in a handful of steps, each a few passes over an n x n matrix.  This is the semismooth Newton
  method of H. Qi and D. Sun, "A Quadratically Convergent Newton Method for Computing the Nearest
  Correlation Matrix", SIAM Journal on Matrix Analysis and Applications, 2006, with the box in
  the inner minimum instead of the cone.
* **Accelerated projected gradient on S** (:class:`DualNewtonSolver`): ``phi(S) = max_{u,v}
  theta`` is concave in S with the 1-Lipschitz gradient ``-F``, so each iteration takes one
  projected step ``S+ = Pi_psd(Y - F(Y))`` (one partial eigendecomposition) from an extrapolated
  point Y (A. Beck, M. Teboulle, "A Fast Iterative Shrinkage-Thresholding Algorithm for Linear
  Inverse Problems", SIAM Journal on Imaging Sciences, 2009), restarted when the step turns
  against the momentum (B. O'Donoghue, E. Candes, "Adaptive Restart for Accelerated Gradient
  Schemes", Foundations of Computational Mathematics, 2015).  Without the cone the Newton method
  alone solves the problem: an iteration is then one Newton step.

The expensive part, one eigendecomposition per iteration, is spent on the p.s.d. multiplier
alone: the n^2 multipliers of the box are eliminated in closed form, and the row-sum and trace
multipliers are found by Newton's method to full accuracy at every step.  Where the optimum
without the cone is nearly p.s.d. (the nearest doubly stochastic matrix to an rbf kernel), the
first iterations already certify small gaps; where the cone moves the optimum far, the projected
gradient needs many iterations.

**Certificate.**  ``F`` at the current S is in the box with the exact row sums and trace; mixing
in a feasible centre ``Z = a 11^T + b I`` (the identity for (7)), ``X = (1 - s) F + s Z`` with
``s = l / (lambda_min(Z) + l)``, ``l = max(0, -lambda_min(F))`` (one eigenvalue, LAPACK
``syevr`` by index), keeps them and makes X p.s.d.: an exactly feasible point.  Where even the
best mixture could not certify ``tol``, Gershgorin's lower bound on ``lambda_min(F)`` replaces
the eigenvalue: a feasible point at O(n^2) cost, further from the optimum.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import LinearOperator, cg

from .linalg import PSDProjector
from .parameters import Interval
from .result import relative_gap
from .solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState

__all__ = ["DualNewtonSolver", "NearestPoint", "NewtonResult", "generalized_hessian", "newton_multipliers"]


class NewtonResult(NamedTuple):
    """What :func:`newton_multipliers` returns."""

    #: ``clip(T + u 1^T + 1 u^T + v I, L, U)`` at the last (u, v)
    F: np.ndarray
    u: np.ndarray | None
    v: float
    #: ``theta`` at (u, v) without S (the target T is the shifted one)
    value: float
    iterations: int
    #: ``"converged"``, ``"max_iter"`` or ``"line_search"`` (no step decreased -theta: rounding)
    status: str


def newton_multipliers(T: np.ndarray, *, row_sum: float | None = None, trace: float | None = None,
                       lower=0.0, upper=None, u: np.ndarray | None = None, v: float | None = None,
                       tol: float = 1e-12, max_iter: int = 50) -> NewtonResult:
    r"""Maximise ``theta(u, v)`` of the module docstring (with S = 0) by semismooth Newton.

    At the maximum ``F`` is the nearest point to T in the box with row sums ``row_sum`` and
    trace ``trace`` (each constraint only when given).

    Parameters
    ----------
    T : (n, n) ndarray
        Symmetric target (trusted: callers check it).
    row_sum, trace : float, optional
        beta and t; None leaves the constraint (and its multiplier) out.
    lower, upper : float or (n, n) ndarray
        The box; ``upper=None`` for none above.
    u, v : optional
        Start (e.g. the previous solution); by default the solution without the box.
    tol : float
        Stop when ``max(max_i |(F 1)_i - beta|, |tr F - t| / 2) <= tol``, or below the rounding
        error of the sums, ``n eps (max|T| + 2 max|u| + |v|)``, if that is larger.
    max_iter : int
        Newton steps at most.
    """
    n = T.shape[0]
    rows, traced = row_sum is not None, trace is not None
    if rows and u is None:
        r = row_sum - T.sum(axis=1)
        u = (r - r.sum() / (2 * n)) / n  # F 1 = beta 1 where no entry is clipped
    if not rows:
        u = None
    if v is None:  # tr F = t where no entry is clipped
        v = (trace - float(np.trace(T)) - 2.0 * (float(u.sum()) if rows else 0.0)) / n if traced else 0.0
    F, trial = np.empty_like(T), np.empty_like(T)
    norm_T = float(np.vdot(T, T))
    size = max(float(T.max()), -float(T.min()))

    def evaluate(u, v, out):
        """``out = F(u, v)``; returns ``-theta`` (minimised) and the residual vector."""
        if rows:
            np.add(u[:, None], u[None, :], out=out)  # u_i + u_j: exactly symmetric, hence F too
            out += T
        else:
            out[...] = T
        if traced:
            np.einsum("ii->i", out)[...] += v
        if upper is None:
            np.maximum(out, lower, out=out)
        else:
            np.clip(out, lower, upper, out=out)
        sums, tr = out.sum(axis=1), float(np.trace(out))
        FF, FT = float(np.vdot(out, out)), float(np.vdot(out, T))
        inner = 0.5 * (FF - 2.0 * FT + norm_T)
        if rows:
            inner -= 2.0 * float(u @ sums) - 2.0 * row_sum * float(u.sum())
        if traced:
            inner -= v * tr - v * trace
        residual = np.r_[sums - row_sum if rows else np.empty(0), [0.5 * (tr - trace)] if traced else []]
        return -inner, residual

    psi, r = evaluate(u, v, F)
    mask = np.empty(T.shape, dtype=np.float32)
    iteration = 0
    while True:
        worst = float(np.abs(r).max(initial=0.0))
        floor = n * np.finfo(float).eps * (size + 2.0 * float(np.abs(u).max(initial=0.0) if rows else 0.0) + abs(v))
        if worst <= max(tol, floor):
            return NewtonResult(F, u, v, -psi, iteration, "converged")
        if iteration == max_iter:
            return NewtonResult(F, u, v, -psi, iteration, "max_iter")
        # the regularisation of the Hessian, in the units of T: a row whose entries are all at a
        # bound has no curvature, and its step (about r / eps) must be able to span T's range
        eps = min(1e-2, float(np.linalg.norm(r))) / max(1.0, size)
        hessian, diagonal = generalized_hessian(F, lower=lower, upper=upper, rows=rows, traced=traced, shift=eps,
                                                out=mask)
        step, _ = cg(hessian, -r, rtol=min(0.1, float(np.linalg.norm(r))), maxiter=100,
                     M=LinearOperator(hessian.shape, matvec=lambda x: x / diagonal, dtype=float))
        slope = 2.0 * float(r @ step)
        t = 1.0
        for _ in range(30):
            u_new = u + t * step[:n] if rows else None
            v_new = v + t * step[-1] if traced else v
            candidate, r_new = evaluate(u_new, v_new, trial)
            # Armijo; near the optimum the decrease drowns in rounding, so a halved residual also passes
            if candidate <= psi + 1e-4 * t * slope or np.abs(r_new).max() <= 0.5 * worst:
                break
            t *= 0.5
        else:
            return NewtonResult(F, u, v, -psi, iteration, "line_search")
        u, v, r = u_new, v_new, r_new
        F, trial, psi = trial, F, candidate
        iteration += 1


def generalized_hessian(F: np.ndarray, *, lower=0.0, upper=None, rows: bool = True, traced: bool = False,
                        shift: float = 0.0, out: np.ndarray | None = None) -> tuple[LinearOperator, np.ndarray]:
    r"""Half an element of the generalized Hessian of ``-theta`` in (u, v) at ``F = F(u, v)``.

    With ``P`` the 0/1 pattern of the entries of F strictly inside the box and ``d = diag(P)``,

    .. math::

        \tfrac12 H = \begin{pmatrix} \operatorname{Diag}(P\mathbf 1) + P & d \\ d^T & \tfrac12
        \mathbf 1^T d\end{pmatrix} + \text{shift}\cdot I,

    the (u, u) block when ``rows``, the (v, v) entry when ``traced``.  Returns it as a
    ``LinearOperator`` (products with P in single precision: ``out``, an n x n float32 buffer,
    holds P) and its diagonal, for a Jacobi preconditioner.
    """
    n = F.shape[0]
    mask = np.empty(F.shape, dtype=np.float32) if out is None else out
    if upper is None:
        np.greater(F, lower, out=mask, casting="unsafe")
    else:
        np.logical_and(F > lower, F < upper, out=mask, casting="unsafe")
    degree = mask.sum(axis=1, dtype=float)
    on_diagonal = np.diagonal(mask).astype(float)
    diagonal = np.r_[degree + on_diagonal if rows else np.empty(0), [0.5 * on_diagonal.sum()] if traced else []]

    def product(x):
        result = shift * x
        if rows:
            a = x[:n]
            result[:n] += degree * a + mask @ a.astype(np.float32)
            if traced:
                result[:n] += on_diagonal * x[n]
                result[n] += on_diagonal @ a
        if traced:
            result[-1] += diagonal[-1] * x[-1]
        return result

    m = diagonal.size
    return LinearOperator((m, m), matvec=product, dtype=float), diagonal + shift


@dataclass
class NearestPoint:
    """A problem ``min weight * ||X - T||^2 + constant`` over the constraints of the module
    docstring, as :class:`DualNewtonSolver` takes it.

    ``centre`` (``(a, b)``: the feasible point ``a 11^T + b I``) is needed with ``psd`` to make a
    feasible point; ``sense`` is the problem's: for ``"maximize"`` the objective and the bound
    reported are those of the negated minimisation.
    """

    T: np.ndarray
    weight: float
    constant: float = 0.0
    lower: float | np.ndarray = 0.0
    upper: float | np.ndarray | None = None
    row_sum: float | None = None
    trace: float | None = None
    psd: bool = False
    centre: tuple[float, float] | None = None
    sense: str = "minimize"


@dataclass(kw_only=True, eq=False)
class DualNewtonState(SolverState):
    """The state of :class:`DualNewtonSolver`."""

    problem: NearestPoint
    #: the multiplier of the cone, the point the next step starts from (with momentum) and the
    #: momentum's weight; None (and no projector) without the cone
    S: np.ndarray | None
    Y: np.ndarray | None
    momentum: float = 1.0
    project: PSDProjector | None
    #: the Newton solve's multipliers of the row sums and the trace (its warm start)
    u: np.ndarray | None = None
    v: float | None = None
    newton_total: int = 0
    #: ``(F, theta, iterations)`` of the last Newton solve at S (None before one)
    at_S: tuple | None = None
    half_norm_T: float


class DualNewtonSolver(IterativeSolver):
    """Solve a :class:`NearestPoint` problem on its dual; see the module docstring.

    Subclasses supply :meth:`nearest_point` (the problem, read from their relaxation).

    Parameters
    ----------
    relaxation : Relaxation
        The problem.
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`).  An iteration is one
        projected gradient step (one partial eigendecomposition with its Newton solves) with the
        cone, one Newton step without it.
    newton_tol : float
        Accuracy of the row sums and trace of the inner Newton solves (the residual of the
        returned X).
    newton_max_iter : int
        Newton steps per inner solve (with the cone) at most.
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.

    Returns
    -------
    Result
        History rows hold ``newton_iterations`` (of the step's inner solve) and, with the cone,
        ``restart`` (whether the momentum was reset) and, at checks, ``lambda_min`` (of F, where
        a mixture could certify) or ``lambda_min_bound`` (Gershgorin's bound on it, elsewhere);
        ``extras``: ``newton_iterations`` (the total).
    """

    method = "dual-newton"
    parameters = IterativeSolver.parameters | {
        # where the cone moves the optimum far the projected gradient needs thousands of iterations
        "max_iter": Param(5000, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "newton_tol": Param(1e-12, POSITIVE),
        "newton_max_iter": Param(50, [Interval(Integral, 1, None, closed="left")]),
        "partial_eig": Param(True, ["boolean"]),
    }

    def nearest_point(self) -> NearestPoint:
        """The problem to solve (subclasses)."""
        raise NotImplementedError

    def init_state(self):
        problem = self.nearest_point()
        n = problem.T.shape[0]
        # without the cone S = Y = 0 throughout: no matrices for them, no projector
        S = np.zeros((n, n)) if problem.psd else None
        return DualNewtonState(
            problem=problem, S=S, Y=S, project=PSDProjector(n, partial=self.partial_eig) if problem.psd else None,
            half_norm_T=0.5 * float(np.vdot(problem.T, problem.T)))

    def _newton(self, state, shift, max_iter):
        """The Newton solve at ``T + shift`` (shift None: 0) warm-started from the last (u, v);
        returns its F and the bound theta(u, v, shift) of the nearest-point problem."""
        problem = state.problem
        target = problem.T if shift is None else problem.T + shift
        result = newton_multipliers(target, row_sum=problem.row_sum, trace=problem.trace, lower=problem.lower,
                                    upper=problem.upper, u=state.u, v=state.v, tol=self.newton_tol, max_iter=max_iter)
        state.u, state.v = result.u, result.v
        state.newton_total += result.iterations
        if result.status == "line_search":
            self.stall(f"the Newton line search failed at residuals above newton_tol={self.newton_tol:g}")
        theta = result.value
        if shift is not None:
            # 1/2 ||X - T||^2 - <S, X> = 1/2 ||X - T - S||^2 + 1/2 ||T||^2 - 1/2 ||T + S||^2
            theta += state.half_norm_T - 0.5 * float(np.vdot(target, target))
        return result.F, theta, result.iterations

    def step(self, state, iteration):
        if not state.problem.psd:
            state.at_S = self._newton(state, None, 1)
            return {"newton_iterations": state.at_S[2]}
        if state.Y is state.S and state.at_S is not None:
            F, iterations = state.at_S[0], 0  # no momentum: the last check's solve is at Y
        else:
            F, _, iterations = self._newton(state, state.Y, self.newton_max_iter)
        S_new = state.project(state.Y - F)
        S_new += S_new.T  # exactly symmetric, so that every F is
        S_new *= 0.5
        # restart when the projected step turns against the momentum (O'Donoghue & Candes)
        restart = float(np.vdot(state.Y - S_new, S_new - state.S)) > 0.0
        momentum = 1.0 if restart else state.momentum
        following = (1.0 + np.sqrt(1.0 + 4.0 * momentum ** 2)) / 2.0
        # without momentum (the first step, a restart) Y is S itself, which the next check solves at
        state.Y = S_new if momentum == 1.0 else S_new + ((momentum - 1.0) / following) * (S_new - state.S)
        state.S, state.momentum, state.at_S = S_new, following, None
        return {"newton_iterations": iterations, "restart": restart}

    def _in_sense(self, state, value: float) -> float:
        """A value of the nearest-point problem as one of the problem's objective."""
        problem = state.problem
        value = 2.0 * problem.weight * value + problem.constant
        return value if problem.sense == "minimize" else -value

    def certify(self, state, bound, final=False):
        problem = state.problem
        if state.at_S is None:
            # with the cone: F at the p.s.d. S (the step's F is at the extrapolated Y); without it,
            # before any step: F at the start
            state.at_S = self._newton(state, state.S, self.newton_max_iter if problem.psd else 0)
        F, theta, _ = state.at_S
        T, n = problem.T, F.shape[0]
        FF, FT = float(np.vdot(F, F)), float(np.vdot(F, T))
        value = 0.5 * FF - FT + state.half_norm_T  # 1/2 ||F - T||^2, without an n x n temporary
        fresh = self._in_sense(state, theta)
        residuals = {"equalities": self._equality_residual(problem, F)}
        if not problem.psd:
            return Certificate(F, fresh, self._in_sense(state, value), residuals)
        # 1/2 ||(1 - s) F + s Z - T||^2 = value + s b + s^2 a / 2 with a = ||Z - F||^2 and
        # b = <F - T, Z - F>: its minimum over s >= 0 bounds every mixture's from below, so the
        # eigenvalue is computed only when a mixture could certify; otherwise Gershgorin's bound
        # on it (O(n^2)) gives a feasible, if poorer, point
        ca, cb = problem.centre
        FZ = ca * float(F.sum()) + cb * float(np.trace(F))
        TZ = ca * float(T.sum()) + cb * float(np.trace(T))
        ZZ = ca * ca * n * n + 2.0 * ca * cb * n + cb * cb * n
        a = max(ZZ - 2.0 * FZ + FF, 0.0)
        b = FZ - FF - TZ + FT
        lowest = value - b * b / (2.0 * a) if b < 0 and a > 0 else value
        lowest_objective = self._in_sense(state, lowest)
        figures = {}
        if relative_gap(lowest_objective, self._better(fresh, bound), self.gap_floor) > self.tol and not final:
            diagonal = np.diagonal(F)
            low = float(np.min(diagonal + np.abs(diagonal) - np.abs(F).sum(axis=1)))
            figures["lambda_min_bound"] = low
        else:
            low = float(sla.eigh(F, subset_by_index=[0, 0], eigvals_only=True, driver="evr", check_finite=False)[0])
            figures["lambda_min"] = low
        level = max(0.0, -low)
        s = level / (min(cb, n * ca + cb) + level)
        X = F * (1.0 - s)
        if ca:
            X += s * ca
        np.einsum("ii->i", X)[...] += s * cb
        residuals = {"equalities": self._equality_residual(problem, X)}
        return Certificate(X, fresh, self._in_sense(state, value + s * b + 0.5 * s * s * a), residuals, figures)

    @staticmethod
    def _equality_residual(problem, X) -> float:
        worst = 0.0
        if problem.row_sum is not None:
            worst = float(np.abs(X.sum(axis=1) - problem.row_sum).max()) / max(abs(problem.row_sum), 1.0)
        if problem.trace is not None:
            worst = max(worst, abs(float(np.trace(X)) - problem.trace) / max(abs(problem.trace), 1.0))
        return worst

    def extras(self, state):
        return {"newton_iterations": state.newton_total}
