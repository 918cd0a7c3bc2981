r"""Default scalable solver for (6) and (7): over-relaxed two-block ADMM with adaptive penalty.

Splitting ``min 1/2||F - K||^2 + i_C1(F) + i_C2(G)  s.t.  F = G`` (C1, C2 as in
:mod:`cvxclust.ssc._relaxations`) gives, in scaled form with penalty rho and relaxation alpha,

.. math::

    F^{k+1} &= \Pi_{C1}\big((K + \rho (G^k - U^k)) / (1 + \rho)\big) \\
    \hat F &= \alpha F^{k+1} + (1 - \alpha) G^k \\
    G^{k+1} &= \max(\hat F + U^k, 0) \\
    U^{k+1} &= U^k + \hat F - G^{k+1}.

Choices that make it fast, measured in ``benchmarks/``:

* ``Pi_C1`` for (7) is one eigendecomposition (``e e^T + (J Y J)_+``), and only the smaller
  side of the spectrum is computed (:class:`cvxclust.linalg.PSDProjector`);
* over-relaxation ``alpha = 1.6`` cuts the iteration count by about a third;
* the penalty follows residual balancing (Boyd et al., below, sec. 3.4.1): doubled or halved
  when the primal and dual residuals differ by more than ``mu``;
* the multiplier of ``F >= 0`` is ``Q = -rho U``; ``g(max(Q, 0))`` is a certified lower bound,
  evaluated every ``bound_every`` iterations, and at the checks every ``check_every`` iterations
  when the last bound's improvement suggests a fresh one could certify the restored point.

The loop, the stopping test and the certification are those of
:class:`cvxclust.solvers.IterativeSolver`.

For (7) the solver starts from the solution of (6) (``warm_start``), found by the semismooth
Newton method of :func:`cvxclust.dual_newton.newton_multipliers` on the row-sum multipliers u
(a handful of O(n^2) steps, no eigendecomposition): ``G = max(W, 0)`` and the scaled multiplier
``U = -max(-W, 0) / rho`` of ``F >= 0``, ``W = K + u 1^T + 1 u^T``, are a fixed point of the
iteration for (6).  Where the p.s.d. constraint is inactive at the optimum of (6) the
eigendecomposition phase then ends after one iteration; elsewhere it starts from the active set
of ``F >= 0`` that (6) shares with (7).

The returned X is, in general, exactly feasible: the restoration
:meth:`~cvxclust.ssc._relaxations._NearestDoublyStochastic.restore` of the last F, which moves the
mass of F's tiny negative entries onto the diagonal and mixes in the identity as far as the
p.s.d. constraint needs.  The solver stops when the relative gap between X's objective and the
best dual bound is below ``tol``, so "optimal" means an exactly feasible point with a certified
relative suboptimality below ``tol``.  Where restoring costs more than ``tol`` (a subclass whose
``restore`` is cruder), F itself is the candidate once its negative entries are below
``residual_tol``.

It runs on a K of any library of the Python array API standard, on K's device (a PyTorch tensor
on a GPU stays there; X comes back there); NumPy keeps its partial eigendecompositions
(:class:`cvxclust.linalg.PSDProjector`), elsewhere each projection is one full ``eigh``.  Off
NumPy an iteration holds K and 8 more n x n arrays at its peak for (7), 5 for (6), checked
against a CUDA device's free memory before the first iteration.

References: S. Boyd, N. Parikh, E. Chu, B. Peleato, J. Eckstein, "Distributed Optimization and
Statistical Learning via the Alternating Direction Method of Multipliers", Foundations and Trends
in Machine Learning, 2011; Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral Clustering
via Lagrange Duality", IEEE Transactions on Image Processing, 2014.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Callable

import numpy as np

from .._array_api import check_device_memory, namespace_of
from .._array_ops import frobenius
from ..dual_newton import newton_multipliers
from ..parameters import Interval
from ..result import relative_gap
from ..penalty import ADAPT_EVERY, MU, ResidualBalancing
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState
from ._relaxations import FrobeniusDS, FrobeniusPSD, FrobeniusSolver, negativity


@dataclass(kw_only=True, eq=False)
class ADMMState(SolverState):
    """The state of :class:`ADMM`: the blocks, the scaled multiplier and the penalty."""

    #: the projection of the F-step, and the one of the bound (each warm-starts on its own input)
    project: Callable[[np.ndarray], np.ndarray]
    project_bound: Callable[[np.ndarray], np.ndarray]
    #: the nonnegative block and the scaled multiplier ``U`` of ``F = G``
    G: np.ndarray
    U: np.ndarray
    rho: float
    penalty: ResidualBalancing
    #: the projected block (None before the first iteration)
    F: np.ndarray | None = None
    r_primal: float = np.nan
    r_dual: float = np.nan
    #: Newton iterations of the warm start
    warm_iterations: int = 0
    #: the relative improvement of the last fresh bound
    gain: float = np.inf


class ADMM(FrobeniusSolver):
    """Solve (6)/(7) by ADMM; see the module docstring.

    Parameters
    ----------
    relaxation : FrobeniusDS or FrobeniusPSD
        The problem (or a subclass with the same ``projector``, ``restore`` and ``dual_value``).
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`): stop when the certified
        relative gap of the restored point is below ``tol`` and its residuals below
        ``residual_tol``; the checks (a restoration, O(n^2)) come every ``check_every``
        iterations.  The relative primal and dual residuals
        ``||F - G|| / max(||F||, ||G||, 1)`` and ``rho ||G - G_prev|| / max(||rho U||, 1)``
        steer the penalty.
    rho, alpha, mu, adapt_every : float, float, float, int
        Initial penalty, over-relaxation in (0, 2), residual-balancing ratio (>= 1) and period
        (:class:`cvxclust.penalty.ResidualBalancing`).
    bound_every : int
        Period of the dual-bound evaluation (one extra projection) recorded in the history.
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.
    warm_start : bool
        For (7), start from the solution of (6) and its multiplier (module docstring); the
        Newton steps it took are recorded as ``warm_start_iterations`` in the first history row.

    Returns
    -------
    Result
        ``extras``: ``warm_start_iterations``.
    """

    method = "admm"
    array_api = True
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(5000, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(5, [Interval(Integral, 1, None, closed="left")]),
        "rho": Param(1.0, POSITIVE),
        "alpha": Param(1.6, [Interval(Real, 0, 2, closed="neither")]),
        "mu": Param(10.0, MU),
        "adapt_every": Param(5, ADAPT_EVERY),
        "bound_every": Param(25, [Interval(Integral, 1, None, closed="left")]),
        "partial_eig": Param(True, ["boolean"]),
        "warm_start": Param(True, ["boolean"]),
    }

    def init_state(self):
        relaxation = self.relaxation
        K, arrays = relaxation.K, relaxation.arrays
        xp, n = arrays.xp, relaxation.n
        if not arrays.numpy:
            # beside K: G, U, W and for (7) the projection's centred argument, eigenvectors,
            # scaled eigenvectors, product and result (for (6) the projection and the step's
            # over-relaxed point and new G)
            count = 8 if relaxation.psd else 5
            check_device_memory(count * n * n * xp.finfo(arrays.dtype).bits // 8,
                                f"the ADMM at order {n} ({count} n x n arrays beside K)", arrays,
                                "use float32, a device with more memory, or the CPU")
        project = relaxation.projector(partial=self.partial_eig)
        warm_iterations = 0
        if self.warm_start and relaxation.psd:
            # the optimum of (6) and its multiplier: a fixed point of the iteration for (6)
            newton = newton_multipliers(K, row_sum=1.0, lower=0.0)
            U = newton.u[:, None] + newton.u[None, :]
            U += K
            U = xp.minimum(U, 0.0)
            U /= self.rho
            G, warm_iterations = newton.F, newton.iterations
        else:
            G, U = xp.maximum(project(K), 0.0), xp.zeros_like(K)
        return ADMMState(project=project, project_bound=relaxation.projector(partial=self.partial_eig), G=G, U=U,
                         rho=self.rho, penalty=ResidualBalancing(self.rho, self.mu, self.adapt_every),
                         warm_iterations=warm_iterations)

    def step(self, state, iteration):
        change = state.penalty.change(iteration, state.rho, state.r_primal, state.r_dual)  # NaN at first
        if change != 1.0:
            state.rho *= change
            state.U = state.U / change
        state.F, state.G, state.U, state.r_primal, state.r_dual = _step(
            self.relaxation.K, state.G, state.U, state.rho, self.alpha, state.project, self.relaxation.arrays.xp)
        state.iteration = iteration
        row = {"primal_residual": state.r_primal, "dual_residual": state.r_dual, "rho": state.rho,
               "nonnegativity": negativity(state.F)}
        if iteration == 0:
            row["warm_start_iterations"] = state.warm_iterations
        return row

    def is_check(self, state, iteration):
        return iteration % self.check_every == 0 or iteration % self.bound_every == 0

    def _fresh_bound(self, state) -> float:
        return self.relaxation.dual_value(-state.rho * state.U, state.project_bound)

    def certify(self, state, bound, final=False):
        relaxation = self.relaxation
        if state.F is None:  # no iteration ran: the start point
            state.F = state.project(state.G)
        F = state.F
        # F is exactly symmetric with unit row sums (and p.s.d.); its one violation, tiny
        # negative entries, is removed by relaxation.restore at O(n^2) cost
        if not relaxation.restorable(F):  # the row sums drifted past rounding: K's entries are too large
            self.stall("the iterate's row sums are off by more than rounding (K's entries are too large to "
                       "restore a feasible point): its residuals are reported as they are")
            return Certificate(F, None, relaxation.objective(F))
        X = relaxation.restore(F)
        restored = relaxation.objective(X)
        objective, negative = relaxation.objective(F), negativity(F)
        scale = max(abs(restored), 1e-300)
        fresh = None
        if final:
            fresh = self._fresh_bound(state)
        else:
            # a fresh bound costs one more projection: pay it for the history, and when the
            # last one's improvement suggests it could close a gap (the bound converges long
            # before X does, so this is rare)
            stale = min(restored - bound, abs(objective - bound) if negative < self.residual_tol else np.inf) / scale
            if state.iteration % self.bound_every == 0 or stale - self.tol < state.gain:
                fresh = self._fresh_bound(state)
                state.gain = max(fresh - bound, 0.0) / scale
        best = bound if fresh is None else max(bound, fresh)
        figures = {"restored_objective": restored}
        if relative_gap(restored, best, self.gap_floor) >= self.tol and negative < self.residual_tol \
                and relative_gap(objective, best, self.gap_floor) < self.tol:
            # restoring costs more than tol (a cruder restore() of a subclass): F itself, whose
            # one violation is its negative entries
            return Certificate(F, fresh, objective, {"nonnegativity": negative}, figures)
        return Certificate(X, fresh, restored, {"nonnegativity": 0.0}, figures)

    def extras(self, state):
        return {"warm_start_iterations": state.warm_iterations}


def _step(K, G, U, rho, alpha, project, xp=None):
    """One over-relaxed ADMM iteration; returns F, G, U and the relative primal/dual residuals.
    In place where possible (the standard's in-place operators): at large n the O(n^2) passes
    cost as much as the projection.  ``xp`` is K's namespace (found from K where None)."""
    xp = namespace_of(K) if xp is None else xp
    W = G - U
    W *= rho
    W += K
    W /= 1.0 + rho
    F = project(W)
    del W
    V = F * alpha
    V += (1.0 - alpha) * G  # V = F_hat, the over-relaxed point
    V += U
    G_new = xp.maximum(V, 0.0)
    V -= G_new  # U + F_hat - G
    r_primal = frobenius(F - G_new, xp) / max(frobenius(F, xp), frobenius(G_new, xp), 1.0)
    r_dual = rho * frobenius(G_new - G, xp) / max(rho * frobenius(V, xp), 1.0)
    return F, G_new, V, r_primal, r_dual


admm = ADMM.as_function()
FrobeniusDS.register_solver("admm", ADMM)
FrobeniusPSD.register_solver("admm", ADMM)
