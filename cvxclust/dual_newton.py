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

**Arrays and devices.**  The method runs on the arrays of any library of the Python array API
standard (:mod:`cvxclust._array_api`): a PyTorch or CuPy target T on a GPU stays there, with the
Newton solves (their conjugate gradients included), the projections and the certificates, and
the point comes back there; only scalars (inner products, the residual's norm) reach the host.
NumPy keeps its fast paths: the pattern of the generalized Hessian in single precision, in-place
updates, the smallest eigenvalue by index (LAPACK ``syevr``) and partial projections.  Elsewhere
the pattern has T's dtype, a projection is one full ``eigh`` and the smallest eigenvalue at a
certificate one full ``eigvalsh`` (counted in ``extras["lambda_min_eigs"]``).  With the cone,
a solve holds T and 7 more n x n arrays at its peak (S, the extrapolated point, and the
projection's argument, eigenvectors, scaled eigenvectors, product and result; 3 without the
cone), checked against a CUDA device's free memory before the first iteration, the
eigendecomposition's workspace on top.  The rounding allowance of the Newton stop,
``n eps (...)``, takes the dtype's ``eps``: it holds for float64, and float32 (an option off
NumPy) is looser.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.linalg as sla

from ._array_api import Arrays, add_to_diagonal, check_arrays, check_device_memory, diagonal
from ._array_ops import inner
from ._box_newton import NewtonResult, generalized_hessian, newton_multipliers
from .linalg import PSDProjector
from .parameters import Interval
from .result import relative_gap
from .solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState

__all__ = ["DualNewtonSolver", "NearestPoint", "NewtonResult", "generalized_hessian", "newton_multipliers"]


#: the n x n arrays a solve holds beside T at its peak off NumPy, with the cone and without it
#: (checked against a CUDA device's free memory before the first iteration; the
#: eigendecomposition's workspace comes on top)
_DEVICE_ARRAYS = {True: 7, False: 3}


@dataclass
class NearestPoint:
    """A problem ``min weight * ||X - T||^2 + constant`` over the constraints of the module
    docstring, as :class:`DualNewtonSolver` takes it.

    ``centre`` (``(a, b)``: the feasible point ``a 11^T + b I``) is needed with ``psd`` to make a
    feasible point; ``sense`` is the problem's: for ``"maximize"`` the objective and the bound
    reported are those of the negated minimisation.  ``T`` and the bounds ``lower`` and ``upper``
    (numbers, or arrays of T's shape) are arrays of one library of the Python array API standard,
    on one device, of one dtype (:meth:`arrays`); the solver runs there.

    Raises
    ------
    TypeError, ValueError
        Naming ``T``, ``lower`` or ``upper`` where they mix libraries, devices or dtypes.
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

    def __post_init__(self):
        self.arrays()

    def arrays(self) -> Arrays:
        """The namespace, device and dtype of ``T`` and the bounds
        (:func:`cvxclust._array_api.check_arrays`)."""
        return check_arrays(T=self.T, lower=self.lower, upper=self.upper)


@dataclass(kw_only=True, eq=False)
class DualNewtonState(SolverState):
    """The state of :class:`DualNewtonSolver`."""

    problem: NearestPoint
    arrays: Arrays
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
    #: the smallest eigenvalues computed at certificates
    lambda_min_eigs: int = 0
    #: ``(F, theta, iterations)`` of the last Newton solve at S (None before one)
    at_S: tuple | None = None
    half_norm_T: float


class DualNewtonSolver(IterativeSolver):
    """Solve a :class:`NearestPoint` problem on its dual; see the module docstring.

    Subclasses supply :meth:`nearest_point` (the problem, read from their relaxation).  It runs
    in the namespace and on the device of the problem's arrays; X comes back there.

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
        Compute only the smaller side of the spectrum in the p.s.d. projections (NumPy; off
        NumPy a projection is one full eigendecomposition).

    Returns
    -------
    Result
        History rows hold ``newton_iterations`` (of the step's inner solve) and, with the cone,
        ``restart`` (whether the momentum was reset) and, at checks, ``lambda_min`` (of F, where
        a mixture could certify) or ``lambda_min_bound`` (Gershgorin's bound on it, elsewhere);
        ``extras``: ``newton_iterations`` (the total) and ``lambda_min_eigs`` (the smallest
        eigenvalues computed: LAPACK by index in NumPy, a full ``eigvalsh`` each elsewhere).
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
        arrays = problem.arrays()
        xp = arrays.xp
        n = problem.T.shape[0]
        if not arrays.numpy:
            # beside T, with the cone: S, Y and the projection's argument, eigenvectors, scaled
            # eigenvectors, product and result (the Newton solve's target, two points and pattern
            # are fewer); without it the Newton solve's two points and pattern
            count = _DEVICE_ARRAYS[bool(problem.psd)]
            check_device_memory(count * n * n * xp.finfo(arrays.dtype).bits // 8,
                                f"the dual Newton at order {n} ({count} n x n arrays beside T)", arrays,
                                "use float32, a device with more memory, or the CPU")
        # without the cone S = Y = 0 throughout: no matrices for them, no projector
        S = xp.zeros((n, n), dtype=arrays.dtype, device=arrays.device) if problem.psd else None
        return DualNewtonState(
            problem=problem, arrays=arrays, S=S, Y=S,
            project=PSDProjector(n, partial=self.partial_eig) if problem.psd else None,
            half_norm_T=0.5 * inner(problem.T, problem.T, xp))

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
            theta += state.half_norm_T - 0.5 * inner(target, target, state.arrays.xp)
        return result.F, theta, result.iterations

    def step(self, state, iteration):
        if not state.problem.psd:
            state.at_S = self._newton(state, None, 1)
            return {"newton_iterations": state.at_S[2]}
        if state.Y is state.S and state.at_S is not None:
            F, iterations = state.at_S[0], 0  # no momentum: the last check's solve is at Y
        else:
            F, _, iterations = self._newton(state, state.Y, self.newton_max_iter)
        state.at_S = None
        gradient_step = state.Y - F
        del F  # n x n arrays are few on a device: none is kept past its use
        S_new = state.project(gradient_step)
        del gradient_step
        if state.arrays.numpy:
            S_new += S_new.T  # exactly symmetric, so that every F is
        else:
            S_new = S_new + S_new.T  # (an in-place sum with its own transpose is not portable)
        S_new *= 0.5
        # restart when the projected step turns against the momentum (O'Donoghue & Candes)
        moved = S_new - state.S
        restart = inner(state.Y - S_new, moved, state.arrays.xp) > 0.0
        momentum = 1.0 if restart else state.momentum
        following = (1.0 + math.sqrt(1.0 + 4.0 * momentum ** 2)) / 2.0
        # without momentum (the first step, a restart) Y is S itself, which the next check solves at
        state.S, state.Y = S_new, None
        if momentum == 1.0:
            state.Y = S_new
        else:  # Y = S_new + c (S_new - S), in place
            moved *= (momentum - 1.0) / following
            moved += S_new
            state.Y = moved
        state.momentum = following
        return {"newton_iterations": iterations, "restart": restart}

    def _in_sense(self, state, value: float) -> float:
        """A value of the nearest-point problem as one of the problem's objective."""
        problem = state.problem
        value = 2.0 * problem.weight * value + problem.constant
        return value if problem.sense == "minimize" else -value

    def certify(self, state, bound, final=False):
        problem = state.problem
        xp = state.arrays.xp
        if state.at_S is None:
            # with the cone: F at the p.s.d. S (the step's F is at the extrapolated Y); without it,
            # before any step: F at the start
            state.at_S = self._newton(state, state.S, self.newton_max_iter if problem.psd else 0)
        F, theta, _ = state.at_S
        T, n = problem.T, F.shape[0]
        FF, FT = inner(F, F, xp), inner(F, T, xp)
        value = 0.5 * FF - FT + state.half_norm_T  # 1/2 ||F - T||^2, without an n x n temporary
        fresh = self._in_sense(state, theta)
        residuals = {"equalities": self._equality_residual(problem, F, xp)}
        if not problem.psd:
            return Certificate(F, fresh, self._in_sense(state, value), residuals)
        # 1/2 ||(1 - s) F + s Z - T||^2 = value + s b + s^2 a / 2 with a = ||Z - F||^2 and
        # b = <F - T, Z - F>: its minimum over s >= 0 bounds every mixture's from below, so the
        # eigenvalue is computed only when a mixture could certify; otherwise Gershgorin's bound
        # on it (O(n^2)) gives a feasible, if poorer, point
        ca, cb = problem.centre
        FZ = ca * float(xp.sum(F)) + cb * float(xp.sum(diagonal(F, xp)))
        TZ = ca * float(xp.sum(T)) + cb * float(xp.sum(diagonal(T, xp)))
        ZZ = ca * ca * n * n + 2.0 * ca * cb * n + cb * cb * n
        a = max(ZZ - 2.0 * FZ + FF, 0.0)
        b = FZ - FF - TZ + FT
        lowest = value - b * b / (2.0 * a) if b < 0 and a > 0 else value
        lowest_objective = self._in_sense(state, lowest)
        figures = {}
        if relative_gap(lowest_objective, self._better(fresh, bound), self.gap_floor) > self.tol and not final:
            on_diagonal = diagonal(F, xp)
            low = float(xp.min(on_diagonal + xp.abs(on_diagonal) - xp.sum(xp.abs(F), axis=1)))
            figures["lambda_min_bound"] = low
        else:
            state.lambda_min_eigs += 1
            if state.arrays.numpy:
                low = float(sla.eigh(F, subset_by_index=[0, 0], eigvals_only=True, driver="evr",
                                     check_finite=False)[0])
            else:  # the standard has no eigenvalue by index: one full eigvalsh, at certificates only
                low = float(xp.linalg.eigvalsh(F)[0])
            figures["lambda_min"] = low
        level = max(0.0, -low)
        s = level / (min(cb, n * ca + cb) + level)
        X = F * (1.0 - s)
        if ca:
            X += s * ca
        X = add_to_diagonal(X, s * cb, xp)
        residuals = {"equalities": self._equality_residual(problem, X, xp)}
        return Certificate(X, fresh, self._in_sense(state, value + s * b + 0.5 * s * s * a), residuals, figures)

    @staticmethod
    def _equality_residual(problem, X, xp) -> float:
        worst = 0.0
        if problem.row_sum is not None:
            worst = float(xp.max(xp.abs(xp.sum(X, axis=1) - problem.row_sum))) / max(abs(problem.row_sum), 1.0)
        if problem.trace is not None:
            worst = max(worst, abs(float(xp.sum(diagonal(X, xp))) - problem.trace) / max(abs(problem.trace), 1.0))
        return worst

    def extras(self, state):
        return {"newton_iterations": state.newton_total, "lambda_min_eigs": state.lambda_min_eigs}
