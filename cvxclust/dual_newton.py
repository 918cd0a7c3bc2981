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
eigendecomposition's workspace on top.  The rounding allowance of the Newton stop, ``n eps (...)``, takes the dtype's ``eps``: it holds
for float64, and float32 (an option off NumPy) is looser.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import LinearOperator

from ._array_api import Arrays, add_to_diagonal, check_arrays, check_device_memory, diagonal
from ._array_ops import clip_in_place, conjugate_gradients, inner
from .linalg import PSDProjector
from .parameters import Interval
from .result import relative_gap
from .solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState

__all__ = ["DualNewtonSolver", "NearestPoint", "NewtonResult", "generalized_hessian", "newton_multipliers"]


#: the n x n arrays a solve holds beside T at its peak off NumPy, with the cone and without it
#: (checked against a CUDA device's free memory before the first iteration; the
#: eigendecomposition's workspace comes on top)
_DEVICE_ARRAYS = {True: 7, False: 3}


class NewtonResult(NamedTuple):
    """What :func:`newton_multipliers` returns."""

    #: ``clip(T + u 1^T + 1 u^T + v I, L, U)`` at the last (u, v), in T's namespace and on its device
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
    T : (n, n) array
        Symmetric target (trusted: callers check it), of NumPy or of any array API library; F
        and u come back in its namespace and on its device.
    row_sum, trace : float, optional
        beta and t; None leaves the constraint (and its multiplier) out.
    lower, upper : float or (n, n) array
        The box (arrays of T's library, device and dtype); ``upper=None`` for none above.
    u, v : optional
        Start (e.g. the previous solution); by default the solution without the box.
    tol : float
        Stop when ``max(max_i |(F 1)_i - beta|, |tr F - t| / 2) <= tol``, or below the rounding
        error of the sums, ``n eps (max|T| + 2 max|u| + |v|)`` with the ``eps`` of T's dtype, if
        that is larger.
    max_iter : int
        Newton steps at most.

    Raises
    ------
    TypeError, ValueError
        Naming ``T``, ``lower``, ``upper`` or ``u`` where they mix libraries, devices or dtypes
        (:func:`cvxclust._array_api.check_arrays`).
    """
    arrays = check_arrays(T=T, lower=lower, upper=upper, u=u)
    xp, numpy = arrays.xp, arrays.numpy
    n = T.shape[0]
    rows, traced = row_sum is not None, trace is not None
    if rows and u is None:
        r = row_sum - xp.sum(T, axis=1)
        u = (r - xp.sum(r) / (2 * n)) / n  # F 1 = beta 1 where no entry is clipped
    if not rows:
        u = None
    if v is None:  # tr F = t where no entry is clipped
        v = (trace - float(xp.sum(diagonal(T, xp))) - 2.0 * (float(xp.sum(u)) if rows else 0.0)) / n if traced else 0.0
    F, trial = (np.empty_like(T), np.empty_like(T)) if numpy else (None, None)
    norm_T = inner(T, T, xp)
    size = max(float(xp.max(T)), -float(xp.min(T)))

    def evaluate(u, v, out):
        """``F(u, v)`` (into ``out`` in NumPy); returns it, ``-theta`` (minimised) and the residual vector."""
        if numpy:
            if rows:
                np.add(u[:, None], u[None, :], out=out)  # u_i + u_j: exactly symmetric, hence F too
                out += T
            else:
                out[...] = T
        else:
            out = u[:, None] + u[None, :] if rows else xp.zeros_like(T)
            out += T  # in place (the standard's +=): one n x n array
        if traced:
            out = add_to_diagonal(out, v, xp)
        out = clip_in_place(out, lower, upper, xp)
        sums, tr = xp.sum(out, axis=1), float(xp.sum(diagonal(out, xp)))
        FF, FT = inner(out, out, xp), inner(out, T, xp)
        inner_value = 0.5 * (FF - 2.0 * FT + norm_T)
        parts = []
        if rows:
            inner_value -= 2.0 * float(xp.sum(u * sums)) - 2.0 * row_sum * float(xp.sum(u))
            parts.append(sums - row_sum)
        if traced:
            inner_value -= v * tr - v * trace
            parts.append(arrays.asarray([0.5 * (tr - trace)]) if not numpy else np.array([0.5 * (tr - trace)]))
        residual = (np.concatenate(parts) if numpy else xp.concat(parts)) if parts else arrays.asarray(np.empty(0))
        return out, -inner_value, residual

    def largest(x) -> float:
        return float(xp.max(xp.abs(x))) if x.shape[0] else 0.0

    F, psi, r = evaluate(u, v, F)
    mask = np.empty(T.shape, dtype=np.float32) if numpy else None
    iteration = 0
    while True:
        worst = largest(r)
        floor = n * arrays.eps * (size + 2.0 * (largest(u) if rows else 0.0) + abs(v))
        if worst <= max(tol, floor):
            return NewtonResult(F, u, v, -psi, iteration, "converged")
        if iteration == max_iter:
            return NewtonResult(F, u, v, -psi, iteration, "max_iter")
        # the regularisation of the Hessian, in the units of T: a row whose entries are all at a
        # bound has no curvature, and its step (about r / eps) must be able to span T's range
        norm_r = float(xp.linalg.vector_norm(r))
        eps = min(1e-2, norm_r) / max(1.0, size)
        hessian, preconditioner = generalized_hessian(F, lower=lower, upper=upper, rows=rows, traced=traced,
                                                      shift=eps, out=mask)
        step = conjugate_gradients(hessian.matvec, -r, preconditioner, rtol=min(0.1, norm_r), maxiter=100, xp=xp)
        del hessian  # the pattern (n x n) is not needed in the line search
        slope = 2.0 * float(xp.sum(r * step))
        t = 1.0
        for _ in range(30):
            u_new = u + t * step[:n] if rows else None
            v_new = v + t * float(step[-1]) if traced else v
            candidate_F, candidate, r_new = evaluate(u_new, v_new, trial)
            # Armijo; near the optimum the decrease drowns in rounding, so a halved residual also passes
            if candidate <= psi + 1e-4 * t * slope or largest(r_new) <= 0.5 * worst:
                break
            t *= 0.5
        else:
            return NewtonResult(F, u, v, -psi, iteration, "line_search")
        u, v, r = u_new, v_new, r_new
        F, trial, psi = candidate_F, F if numpy else None, candidate
        iteration += 1


class _Operator:
    """A symmetric linear operator off NumPy: ``matvec`` and ``@`` on vectors of its namespace."""

    def __init__(self, shape, matvec):
        self.shape, self.matvec = shape, matvec

    def __matmul__(self, x):
        return self.matvec(x)


def generalized_hessian(F: np.ndarray, *, lower=0.0, upper=None, rows: bool = True, traced: bool = False,
                        shift: float = 0.0, out: np.ndarray | None = None):
    r"""Half an element of the generalized Hessian of ``-theta`` in (u, v) at ``F = F(u, v)``.

    With ``P`` the 0/1 pattern of the entries of F strictly inside the box and ``d = diag(P)``,

    .. math::

        \tfrac12 H = \begin{pmatrix} \operatorname{Diag}(P\mathbf 1) + P & d \\ d^T & \tfrac12
        \mathbf 1^T d\end{pmatrix} + \text{shift}\cdot I,

    the (u, u) block when ``rows``, the (v, v) entry when ``traced``.  Returns it as an operator
    with ``matvec`` and ``@`` (a SciPy ``LinearOperator`` for NumPy, whose products with P run in
    single precision: ``out``, an n x n float32 buffer, holds P; elsewhere P has F's dtype and
    stays on F's device) and its diagonal, for a Jacobi preconditioner.
    """
    arrays = check_arrays(F=F, lower=lower, upper=upper)
    xp, numpy = arrays.xp, arrays.numpy
    n = F.shape[0]
    if numpy:
        mask = np.empty(F.shape, dtype=np.float32) if out is None else out
        if upper is None:
            np.greater(F, lower, out=mask, casting="unsafe")
        else:
            np.logical_and(F > lower, F < upper, out=mask, casting="unsafe")
        degree = mask.sum(axis=1, dtype=float)
        on_diagonal = np.diagonal(mask).astype(float)

        def times_mask(a):
            return mask @ a.astype(np.float32)
    else:
        inside = F > lower if upper is None else xp.logical_and(F > lower, F < upper)
        mask = xp.astype(inside, F.dtype)
        del inside
        degree = xp.sum(mask, axis=1)
        on_diagonal = diagonal(mask, xp)

        def times_mask(a):
            return mask @ a
    parts = ([degree + on_diagonal] if rows else []) + ([0.5 * xp.sum(on_diagonal, keepdims=True)] if traced else [])
    diagonal_of = (np.concatenate(parts) if numpy else xp.concat(parts)) if parts else arrays.asarray(np.empty(0))

    def product(x):
        parts = []
        if rows:
            a = x[:n]
            top = shift * a + degree * a + times_mask(a)
            if traced:
                top = top + on_diagonal * x[n]
            parts.append(top)
        if traced:
            last = (shift + diagonal_of[-1]) * x[-1:]
            if rows:
                last = last + xp.sum(on_diagonal * x[:n], keepdims=True)
            parts.append(last)
        return (np.concatenate(parts) if numpy else xp.concat(parts)) if parts else x * shift

    m = diagonal_of.shape[0]
    operator = LinearOperator((m, m), matvec=product, dtype=float) if numpy else _Operator((m, m), product)
    return operator, diagonal_of + shift


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
