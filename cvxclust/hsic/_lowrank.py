r"""The low-rank SDP (5.30) by an augmented Lagrangian (Burer & Monteiro, 2003).

Replacing the variable of the SDP (5.23) by ``Q = Y Y^T`` with ``Y`` in
:math:`\mathbb{R}^{mc \times r}`, ``Y >= 0`` (5.26), and adding the term of (5.30) that favours a
large projection of ``Q`` on ``1 1^T`` (weight ``bias``, the paper's gamma) gives

.. math::

    \max_{Y \ge 0}\; f(Y) + \beta\, g(Y)
    \quad\text{s.t.}\quad h(Y) = b,

    f(Y) = \operatorname{tr}(Y^\top (A \otimes K) Y),\qquad
    g(Y) = \operatorname{tr}(Y^\top \mathbf 1 \mathbf 1^\top Y) = \|\mathbf 1^\top Y\|^2,

where ``h(Y) = b`` collects the constraints (5.27) ``odiag(Y Y^T) = I`` and (5.29)
``bdiag(Y Y^T) 1 = 1`` (Lemmas 4 and 5), all computed on the blocks of Y
(:mod:`~cvxclust.hsic._factor`, Section 5.2.2).

The augmented Lagrangian, minimized over ``Y >= 0`` by L-BFGS-B for fixed multipliers ``y`` and
penalty ``sigma``, is

.. math::

    L_\sigma(Y; y) = -\frac{f(Y) + \beta g(Y)}{s}
                     - y^\top (h(Y) - b) + \frac{\sigma}{2} \|h(Y) - b\|^2,

with a fixed scale ``s = ||A||_inf ||K||_inf + beta m c`` (a bound on the spectral norm of the
objective's matrix ``A kron K + beta 1 1^T``) that makes one ``sigma`` fit every data scale.
After each inner solve the multipliers take the first-order step ``y <- y - sigma (h - b)``, and
``sigma`` is multiplied by ``penalty_growth`` whenever the infeasibility ``||h - b||_inf`` has
not dropped below ``decrease`` times its previous value (the classic rule of Conn, Gould & Toint
/ Burer & Monteiro), judged only after inner solves that finished: one cut by
``inner_max_iter`` says nothing about sigma, and raising sigma after each froze the iterate at
poorer points.  The outer loop ends when ``||h - b||_inf <= residual_tol``.

Two further departures from the plain method make it scale:

* **Feasibility restoration.**  With ``Y >= 0`` the off-diagonal constraints of (5.27) are
  complementarity constraints (``<Y_i, Y_j> = 0`` iff no entry is positive in both blocks), at
  which the augmented Lagrangian converges slowly: the last digits of feasibility take more
  outer iterations, at ever larger penalties, than the first ones while the objective no longer
  moves.  Once an outer iterate is within ``restore_below`` of feasible and its objective has
  moved by at most ``restore_stall`` (relative) since the previous outer iteration,
  :func:`~cvxclust.hsic._factor.restore_feasibility` gives every entry to the block where it
  is largest and takes Gauss-Newton steps on that face to ``1e-3 residual_tol``; the restored
  factor is returned, at an objective indistinguishable from that of the full run.  When a
  limit stops the loop, the restoration is tried once more, so that the factor returned is
  feasible whenever it can be; the status stays ``"max_iter"``/``"time_limit"``.
* **Working set.**  Each inner solve optimizes only the entries that are positive or whose
  partial derivative would raise them from 0 by more than the inner tolerance; the others
  stay at 0 until the next outer iteration.  Most entries sit at their bound (each row
  belongs mostly to one block), and L-BFGS-B's own work grows with its variable count.

The start is nonnegative with disjoint block supports (each entry ``(l, a)`` belongs to one
cluster), so (5.27)'s off-diagonal constraints hold from the start, scaled to be nearly feasible
(:mod:`~cvxclust.hsic._lowrank_start`).  With ``init="random"`` (the paper's start) each
entry's cluster is random; with ``init="spectral"`` (the default, a departure from the paper)
every row belongs to the cluster of its point in the rounded spectral relaxation (Proposition
2), relabelled to fit A, so ``Y Y^T`` starts near the lift of a good partition: from the random
start the method can end at far lower objectives, with labels near chance.  Inner tolerances
are relative to the projected gradient at the start, since gradients shrink with the entries
of ``Y`` as m grows.

Cost per L-BFGS-B iteration: one ``K [Y_1 .. Y_c]`` product, O(m^2 c r) (Section 5.2.2), plus
L-BFGS-B's own O(m c r) work.  This is a local method on a nonconvex problem: different seeds
can give different local solutions, and with rank 1 it usually stops at a poor one (Section
6.1.3, Figure 3).  It has no certified bound (see :class:`LowRank`), so it never reports
``"optimal"``: its status is ``"converged"`` when the factor is feasible to ``residual_tol``.

Semi-supervised use (Section 6): a point ``l`` with known label ``k`` has rows ``l`` of every
block ``Y_i``, ``i != k``, fixed to 0 through the bounds of L-BFGS-B.

``Y Y^T`` is p.s.d. and entrywise nonnegative by construction and satisfies the equality
constraints of (5.23) to ``residual_tol``, so ``f(Y)`` is (up to ``residual_tol``) a lower bound
of the optimum of the SDP (5.23); it equals it when the SDP has an optimal solution of rank
<= r that this local method finds.

References
----------
S. Burer and R. Monteiro, "A nonlinear programming algorithm for solving semidefinite programs
via low-rank factorization", Mathematical Programming 95(2), 2003.

W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
Algorithm", SIAM International Conference on Data Mining (SDM), 2010.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.optimize import Bounds, minimize

from .._checks import check_kernel, check_labels, check_random_state
from ..linalg import scipy_blas_threads
from ..parameters import Interval, Options, check_parameter
from ..result import Result
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState
from ._factor import AugmentedLagrangian, check_factor, factor_residuals, restore_feasibility
from ._heuristic_base import refuse_foreign
from ._lowrank_start import initial_factor, initial_labels

__all__ = ["LowRank", "lowrank"]

NONNEGATIVE = [Interval(Real, 0, None, closed="left")]


@dataclass(kw_only=True, eq=False)
class LowRankState(SolverState):
    """The state of :class:`LowRank` (module docstring)."""

    #: the augmented Lagrangian, the factor (c x m x rank) and the upper bounds of its entries
    ev: AugmentedLagrangian
    Y3: np.ndarray
    upper: np.ndarray
    #: the multipliers of the off-diagonal and the balance constraints, and the penalty
    y_o: np.ndarray
    y_b: np.ndarray
    sigma: float
    #: the infeasibility, and the one at the last penalty decision
    infeasibility: float
    reference: float
    #: the objective and the penalty term of the factor, and the objective of the step before
    f: float
    g: float
    f_previous: float = np.inf
    #: the scale of the inner tolerances (the projected gradient at the start)
    grad_scale: float
    #: the labels the start was drawn from (None with a given start)
    start_labels: np.ndarray | None
    inner_total: int = 0
    done: bool = False


class LowRank(IterativeSolver):
    r"""The augmented Lagrangian of (5.30) on :class:`cvxclust.solvers.IterativeSolver`: one
    iteration is one outer (multiplier) iteration; see the module docstring and :func:`lowrank`.

    Why no certified bound: the dual bound of the SDP (5.23),
    ``b^T y + c lambda_max(A kron K - A*(y) + Z)``, needs a multiplier ``Z >= 0`` of
    ``Q >= 0``, an mc x mc matrix the factorized method does not produce; with ``Z = 0`` the
    bound at the method's multipliers stays several times the optimum.  So the solver has no
    ``tol`` (no gap to test) and stops with status ``"converged"`` once its factor is feasible
    to ``residual_tol``.
    """

    method = "lowrank"
    sense = "maximize"
    #: no certified bound, hence no gap tolerance: the core's gap test never passes
    tol = 0.0
    parameters = {k: p for k, p in IterativeSolver.parameters.items() if k != "tol"} | {
        "residual_tol": Param(1e-6, POSITIVE),
        "max_iter": Param(100, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "rank": Param(10, [Interval(Integral, 1, None, closed="left")]),
        "bias": Param(0.1, NONNEGATIVE),
        "random_state": Param(None, ["random_state"]),
        "sigma": Param(10.0, POSITIVE),
        "penalty_growth": Param(10.0, [Interval(Real, 1, None, closed="neither")]),
        "decrease": Param(0.25, [Interval(Real, 0, 1, closed="neither")]),
        "inner_max_iter": Param(500, [Interval(Integral, 1, None, closed="left")]),
        "restore_below": Param(1e-2, NONNEGATIVE),
        "restore_stall": Param(1e-3, NONNEGATIVE),
    }

    def __init__(self, K, A, *, known=None, init="spectral", Y0=None, **params):
        super().__init__(None, **params)
        refuse_foreign("lowrank", K=K, A=A)  # L-BFGS-B is SciPy's
        self.K = check_kernel(K, "K", min_size=2)
        self.A = check_kernel(A, "A")
        m, c = self.K.shape[0], self.A.shape[0]
        if not 2 <= c <= m:
            raise ValueError(f"A must be c x c with 2 <= c <= m = {m} (the number of clusters), got c = {c}")
        self.known = None if known is None else check_labels(known, m, c, name="known", allow_unknown=True)
        if isinstance(init, str):
            init = check_parameter("init", init, [Options("spectral", "random")], self.method)
        else:
            init = check_labels(init, m, c, name="init")
        self.init = init
        # every Y Y^T with Y >= 0 is a sum of at most n(n+1)/2 terms y y^T, y >= 0 (Caratheodory in
        # the n(n+1)/2-dimensional space of symmetric n x n matrices, n = mc): more columns add nothing
        max_rank = m * c * (m * c + 1) // 2
        self.Y0 = None
        if Y0 is not None:
            self.Y0 = check_factor(Y0, m, c, "Y0")
            if self.Y0.min() < 0:
                raise ValueError("Y0 must be entrywise nonnegative")
            if self.Y0.shape[1] > max_rank:
                raise ValueError(f"Y0 must have at most m c (m c + 1) / 2 = {max_rank} columns, got {self.Y0.shape[1]}")
            self.rank = self.Y0.shape[1]
        elif self.rank > max_rank:
            raise ValueError(f"rank must be at most m c (m c + 1) / 2 = {max_rank} for m = {m} points and c = {c} "
                             f"clusters (a larger factor Y >= 0 adds nothing), got {self.rank}")

    def size(self) -> int:
        return int(self.K.shape[0])

    def init_state(self):
        K, A, known, rank = self.K, self.A, self.known, self.rank
        m, c = K.shape[0], A.shape[0]
        rng = check_random_state(self.random_state)
        ev = AugmentedLagrangian(K, A, rank, self.bias)
        upper = np.full((c, m, rank), np.inf)
        fixed = None
        if known is not None:
            labelled = np.flatnonzero(known >= 0)
            fixed = np.zeros((c, m, rank), dtype=bool)
            fixed[:, labelled] = True
            fixed[known[labelled], labelled] = False  # the block of the known label stays free
            upper[fixed] = 0.0
        start_labels = None
        if self.Y0 is None:
            start_labels = initial_labels(self.init, K, A, rng, known)
            Y3 = initial_factor(rng, c, m, rank, known, ev, start_labels)
        else:
            Y3 = self.Y0.reshape(c, m, rank).copy()
            if fixed is not None:
                Y3[fixed] = 0.0
        y_o, y_b = np.zeros(ev.n_odiag), np.zeros(m)
        h_o, h_b, _ = ev.constraints(Y3)
        infeasibility = float(max(np.abs(h_o).max(), np.abs(h_b).max()))
        # gradients shrink with the entries of Y (about 1 / sqrt(m / c)): the inner tolerances are
        # relative to the projected gradient at the start, or L-BFGS-B stops at once for large m
        _, grad0 = ev.value_and_grad(Y3, y_o, y_b, self.sigma)
        movable = (upper > 0) & ((Y3 > 0) | (grad0 < 0))
        f, _, g, _ = ev.objective_terms(Y3)
        return LowRankState(
            ev=ev, Y3=Y3, upper=upper, y_o=y_o, y_b=y_b, sigma=self.sigma, infeasibility=infeasibility,
            reference=infeasibility, f=f, g=g, start_labels=start_labels,
            grad_scale=max(float(np.abs(grad0[movable]).max(initial=0.0)), 1e-300),
        )

    def is_check(self, state, iteration):
        return state.done or super().is_check(state, iteration)

    def step(self, state, iteration):
        ev, upper, sigma = state.ev, state.upper, state.sigma
        y_o, y_b, shape = state.y_o, state.y_b, state.Y3.shape
        # inner accuracy follows the infeasibility: early inner solves need not be exact, late
        # ones must be to reach residual_tol
        gtol = state.grad_scale * float(np.clip(0.01 * state.infeasibility, 1e-3 * self.residual_tol, 1e-3))

        # working set: the entries that are positive or that the Lagrangian would raise from 0;
        # the others stay at 0 for this inner solve (L-BFGS-B's own work grows with its variables,
        # and most entries sit at their bound: each row belongs mostly to one block)
        _, grad = ev.value_and_grad(state.Y3, y_o, y_b, sigma)
        work = np.flatnonzero((upper > 0) & ((state.Y3 > 0) | (grad < -gtol)))
        full = np.zeros(state.Y3.size)

        def fun(x):
            full[work] = x
            value, grad = ev.value_and_grad(full.reshape(shape), y_o, y_b, sigma)
            return value, grad.ravel()[work]

        def stop_on_time(intermediate_result):
            # the time limit applies inside an inner solve too: one L-BFGS-B run may be long
            if self.elapsed > self.time_limit:
                raise StopIteration

        # L-BFGS-B's BLAS (SciPy's own OpenBLAS, where it ships one) does vector work only: a
        # second spinning thread pool would slow NumPy's K @ Y down (see scipy_blas_threads)
        with scipy_blas_threads(1):
            res = minimize(fun, state.Y3.ravel()[work], jac=True, method="L-BFGS-B",
                           bounds=Bounds(np.zeros(work.size), upper.ravel()[work]), callback=stop_on_time,
                           options={"maxiter": self.inner_max_iter, "maxfun": 2 * self.inner_max_iter,
                                    "gtol": gtol, "ftol": 1e-15, "maxcor": 10})
        timed_out = self.elapsed > self.time_limit  # a cut inner solve has not settled: no restoration yet
        # L-BFGS-B keeps its iterates inside the bounds; clip guards the last rounding ulp
        Y3 = np.zeros(state.Y3.size)
        Y3[work] = np.maximum(res.x, 0.0)
        Y3 = Y3.reshape(shape)
        state.inner_total += int(res.nit)
        h_o, h_b, _ = ev.constraints(Y3)
        infeasibility = float(max(np.abs(h_o).max(), np.abs(h_b).max()))
        f, _, g, _ = ev.objective_terms(Y3)
        stalled = abs(f - state.f_previous) <= self.restore_stall * abs(f)
        state.f_previous = f
        restored = False
        if self.residual_tol < infeasibility <= self.restore_below and stalled and not timed_out:
            candidate, candidate_infeasibility = restore_feasibility(ev, Y3, 1e-3 * self.residual_tol)
            if candidate_infeasibility <= self.residual_tol:
                Y3, infeasibility, restored = candidate, candidate_infeasibility, True
                f, _, g, _ = ev.objective_terms(Y3)
        state.Y3, state.infeasibility, state.f, state.g = Y3, infeasibility, f, g
        row = {"objective": f, "penalized_objective": f + self.bias * g, "infeasibility": infeasibility,
               "sigma": float(sigma), "inner_iterations": int(res.nit), "inner_evaluations": int(res.nfev),
               "inner_gtol": gtol, "inner_message": str(res.message), "restored": restored,
               "working_set": work.size / Y3.size}
        if infeasibility <= self.residual_tol:
            state.done = True
            self.converge()
            return row
        # first-order multiplier step (Hestenes-Powell), then the classic penalty rule
        state.y_o = y_o - sigma * h_o
        state.y_b = y_b - sigma * h_b
        if res.nit < self.inner_max_iter:  # an unfinished inner solve says nothing about sigma
            if infeasibility > self.decrease * state.reference:
                state.sigma = sigma * self.penalty_growth
            state.reference = min(state.reference, infeasibility)
        return row

    def certify(self, state, bound, final=False):
        if final and not state.done and self.restore_below > 0:
            # stopped by a limit: return a feasible factor if one is at hand (the status stays)
            candidate, candidate_infeasibility = restore_feasibility(state.ev, state.Y3, 1e-3 * self.residual_tol)
            if candidate_infeasibility <= self.residual_tol:
                state.Y3 = candidate
                state.f, _, state.g, _ = state.ev.objective_terms(candidate)
        c, m, r = state.Y3.shape
        return Certificate(state.Y3.reshape(m * c, r), None, state.f, factor_residuals(state.Y3))

    def extras(self, state):
        c = self.A.shape[0]
        multipliers = np.zeros((c, c))
        multipliers[state.ev.upper] = state.y_o
        multipliers = multipliers + np.triu(multipliers, 1).T
        return {"penalized_objective": state.f + self.bias * state.g, "inner_iterations": state.inner_total,
                "multipliers": {"odiag": multipliers, "bdiag": state.y_b}, "sigma": float(state.sigma),
                "scale": state.ev.scale,
                "start_labels": None if state.start_labels is None else np.array(state.start_labels)}


def lowrank(K, A, *, known=None, init="spectral", Y0=None, **params) -> Result:
    r"""Maximize the low-rank SDP (5.30) over ``Y >= 0`` by an augmented Lagrangian.

    .. math::

        \max_{Y \in \mathbb{R}^{mc \times r},\ Y \ge 0}\;
            \operatorname{tr}(Y^\top (A \otimes K) Y) + \beta \operatorname{tr}(Y^\top \mathbf 1 \mathbf 1^\top Y)
        \quad\text{s.t.}\quad \operatorname{odiag}(YY^\top) = I\ (5.27),\quad
            \operatorname{bdiag}(YY^\top)\mathbf 1 = \mathbf 1\ (5.29).

    See the module docstring for the algorithm.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred, as in (2.2)).
    A : array-like of shape (c, c)
        Symmetric output kernel on the ``c`` clusters, ``2 <= c <= m``.
    known : array-like of shape (m,), optional
        Known labels in ``0..c-1``, ``-1`` for unknown (semi-supervised use, Section 6).
    init : {"spectral", "random"} or array-like of int of shape (m,)
        Start (see the module docstring): ``"spectral"`` rounds the spectral relaxation of
        Proposition 2 (known labels override it), ``"random"`` is the paper's random start, an
        array gives the starting labels.  Ignored when ``Y0`` is given.
    Y0 : array-like of shape (m * c, r), optional
        Nonnegative starting factor (overrides ``rank`` and ``init``); known-label zeros are
        applied to it.
    rank : int, default 10
        ``r``, the number of columns of ``Y`` (the paper uses 10; 1 is the exact rank of a
        partition, Proposition 3), at most ``n (n + 1) / 2`` with ``n = m c``: every ``Y Y^T``
        with ``Y >= 0`` is a sum of that many terms ``y y^T``, ``y >= 0`` (Caratheodory's
        theorem in the space of symmetric n x n matrices), so more columns add nothing.
    bias : float >= 0, default 0.1
        Weight ``beta`` of ``tr(Y^T 1 1^T Y)`` in (5.30) (the paper's gamma, fixed there at 0.1).
    residual_tol : float, default 1e-6
        Stop (status ``"converged"``) when ``||h(Y) - b||_inf <= residual_tol``.
    max_iter, time_limit : int, float
        Limits on the outer iterations and on the wall time (checked inside L-BFGS-B too);
        hitting one gives a ConvergenceWarning and the status ``"max_iter"``/``"time_limit"``.
    check_every : int, default 1
        Outer iterations between the figures of the history (objective and residuals, cheap).
    verbose : bool
        Progress bar over the outer iterations.
    random_state : int, RandomState, Generator or None
        Seed of the start (k-means of the spectral start, the relabelling, the random entries).
    sigma : float, default 10
        Initial penalty (in the units of the scaled objective).
    penalty_growth, decrease : float
        ``sigma *= penalty_growth`` (> 1) when the infeasibility is not below ``decrease``
        (in (0, 1)) times the previous one.
    inner_max_iter : int, default 500
        L-BFGS-B iterations per outer iteration.
    restore_below, restore_stall : float >= 0
        Once the infeasibility of an outer iterate is at most ``restore_below`` and its
        objective has changed by at most ``restore_stall`` (relative) since the previous outer
        iterate, try the feasibility restoration (Gauss-Newton on the iterate's face);
        ``restore_below=0`` disables it.  A larger ``restore_stall`` stops sooner at a lower
        objective (``benchmarks/results/cluhsic_speed.md``).

    Returns
    -------
    Result
        ``X`` the nonnegative factor Y, of shape ``(m * c, r)`` (``Q = X X^T``, never formed);
        ``objective`` ``f(Y) = tr((A kron K) Y Y^T)``, without the bias term; ``residuals``
        ``"odiag"`` ``max_{i<=j} |<Y_i, Y_j> - delta_ij|``, ``"bdiag"``
        ``max_l |(sum_i Y_i Y_i^T 1)_l - 1|`` and ``"nonnegativity"`` ``max(-min(Y), 0)``
        (absolute: the targets are 0 and 1); ``status`` ``"converged"``, ``"max_iter"`` or
        ``"time_limit"``; ``dual_bound`` None; ``iterations`` the outer iterations; one history
        row per outer iteration (objective, penalized objective, infeasibility, sigma, inner
        iterations, whether it was restored, ...).  ``extras``:

        * ``"penalized_objective"``: ``f(Y) + bias g(Y)``, the objective of (5.30);
        * ``"inner_iterations"``: L-BFGS-B iterations summed over the outer iterations;
        * ``"multipliers"``: ``{"odiag": (c, c) symmetric, "bdiag": (m,)}``, the final
          multipliers in the units of the scaled objective ``(f + bias g) / scale``;
        * ``"sigma"``: the final penalty; ``"scale"``: the objective scale ``s``;
        * ``"start_labels"``: the labels the start was built from (for ``init="spectral"`` the
          rounded spectral relaxation aligned to A, or ``init`` itself), None for a random
          start or a given ``Y0``.
    """
    return LowRank(K, A, known=known, init=init, Y0=Y0, **params).run()


lowrank.__signature__ = LowRank.__signature__ = inspect.Signature(
    [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD) for name in ("K", "A")]
    + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
       for name, default in (("known", None), ("init", "spectral"), ("Y0", None))]
    + [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=p.default)
       for name, p in LowRank.parameters.items()])
