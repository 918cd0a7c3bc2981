r"""The ADMM of Section 3.1.1 for ``ConditionalJC`` (10), with a certified dual bound.

Split the constraints of M1 into the row-wise simplex constraints
``S = {M : M_{i:} in Delta_t}`` (non-spectral) and the spectral set M2 (``M1 = S ∩ M2``)::

    minimize f(M) + i_S(M) + i_M2(Z)   subject to  M = Z.

In scaled form with penalty rho (the paper's ``1/mu``) and scaled multiplier U = Y / rho
(the paper's ``Lambda = -Y``):

1. M-step ``M+ = argmin_{M in S} f(M) + rho/2 ||M - Z + U||^2``, row-separable.  By default it
   is *linearised* (``m_step="linearized"``): one proximal-gradient step on f from the previous
   M with a per-row proximal weight found by backtracking
   (:func:`~cvxclust.bregman._m_steps.linearized_m_step`; the linearised ADMM of Lin, Liu & Su
   2011), so an iteration costs one gradient and one simplex projection of all rows.
   ``m_step="exact"`` solves it as the paper states, to an inner tolerance that follows the
   residuals (:func:`~cvxclust.bregman._m_steps.exact_m_step`); it takes fewer, but much
   dearer, iterations.
2. Z-step ``Z+ = P_M2(alpha M+ + (1 - alpha) Z + U)`` in closed form (Lemma 1 and (13);
   :class:`~cvxclust.bregman.sets.M2Projector`), over-relaxed (Boyd et al. 2011, 3.4.3).  Only
   the dual bound needs it exact, so between checks a warm-started Rayleigh-Ritz step replaces
   it (:meth:`~cvxclust.bregman.sets.M2Projector.approximate`: a point of M2 near the
   projection).
3. ``U+ = U + alpha M+ + (1 - alpha) Z - Z+``; residual balancing of rho (Boyd et al. 2011,
   3.4.1).

The checks (every ``check_every`` iterations, from the first) evaluate the dual bound of
:meth:`~cvxclust.bregman.ConditionalJC.dual_value` for two multipliers:

* ``Y = rho U+``: ``rho U+ = rho (A - Z+)`` is in the normal cone of M2 at ``Z+ = P_M2(A)``,
  so ``g_2 = -<Y, Z+>`` needs no eigenvalues, but the Frank-Wolfe term of ``g_1`` only
  vanishes as the residuals do;
* ``Y_M``, for which the M-step makes ``M+`` exactly optimal in ``g_1`` (linearised:
  ``Y_M = rho (M+ - V) + ell (M+ - M) + grad f(M) - grad f(M+)``; exact: ``rho (M+ - V)`` up
  to the inner tolerance), so the Frank-Wolfe term vanishes and ``g_2`` takes the top d - 1
  eigenvalues.

Late in a solve the second is much tighter (the bound along the segment between the two
multipliers is linear, so neither a mixture nor an extrapolation does better), and it about
halves the iterations to a certified point.  The feasible output and the stop test are those
of :mod:`cvxclust.bregman._feasible`.

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ..parameters import Interval, Options
from ..penalty import ADAPT_EVERY, MU, ResidualBalancing
from ..solvers import POSITIVE, Param
from ._conditional_jc import ConditionalJC
from ._feasible import M1Solver, M1State
from ._m_steps import exact_m_step, linearized_m_step
from .sets import M2Projector

__all__ = ["ADMM", "admm"]


@dataclass(kw_only=True, eq=False)
class ADMMState(M1State):
    """The state of :class:`ADMM`, besides what :class:`~cvxclust.bregman._feasible.M1State` holds."""

    #: ``M X`` (the centres of the M iterate), the scaled multiplier of ``M = Z`` and the penalty
    MX: np.ndarray
    U: np.ndarray
    rho: float
    penalty: ResidualBalancing
    #: per-row curvature estimates of the M-step (of f when linearised)
    L: np.ndarray
    #: the rounding floor of the linearised step
    scale: float
    #: the tolerance of the exact M-step's inner iterations
    inner_tol: float = 1e-2


class ADMM(M1Solver):
    """Solve (10) over M1 by the ADMM of Section 3.1.1; see the module docstring.

    Parameters
    ----------
    relaxation : ConditionalJC
    tol : float, default=1e-6
        Stop when the certified relative gap (:func:`cvxclust.result.relative_gap`) of the best
        exactly feasible point against the best dual bound is below ``tol`` ...
    residual_tol : float, default=1e-4
        ... and the relative primal residual ``||M - Z|| / max(||M||, ||Z||)`` and dual
        residual ``rho ||Z - Z_prev|| / ||rho U||`` of the last check are below
        ``residual_tol``.
    max_iter, time_limit, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`); ``max_iter`` defaults
        to 5000.  At a limit the result is the best feasible point (the restored last Z
        included) with the best bound.
    check_every : int, default=10
        Period of the checks: the exact Z-step, the two dual bounds (one needs the top d - 1
        eigenvalues), the restoration, and the residuals and objective in the history (which
        also records them where the penalty is balanced).
    rho : float, optional
        Initial penalty (the paper's ``1/mu``); default ``||grad f(J)||_F`` at the barycentre
        ``J = 11'/t``, so that both terms of the first M-step weigh alike.  Residual balancing
        adapts it anyway, and the iterations hardly depend on it.
    alpha : float, default=1.8
        Over-relaxation in (0, 2): the Z- and U-steps use ``alpha M + (1 - alpha) Z_prev``
        instead of M (Boyd et al. 2011, 3.4.3); the dual bound holds for every multiplier.
        1.8 saves iterations against 1.6 with the linearised M-step; more saves none.
    mu, adapt_every : float, int, default=2.0, 5
        Residual balancing: rho is doubled or halved every ``adapt_every`` iterations when the
        primal and dual residuals differ by more than the factor ``mu`` (>= 1;
        :class:`cvxclust.penalty.ResidualBalancing`).
    m_step : {"linearized", "exact"}, default="linearized"
        One proximal-gradient step on f per iteration
        (:func:`~cvxclust.bregman._m_steps.linearized_m_step`; several times faster) or the
        paper's M-step solved to an inner tolerance by accelerated projected gradient
        (:func:`~cvxclust.bregman._m_steps.exact_m_step`).
    inner_max_iter, inner_factor : int, float, default=300, 0.1
        ``m_step="exact"`` only: the M-step runs until the distance bound of its iterate to the
        exact M-step is below ``inner_factor`` times the last primal and dual residuals
        (absolute, in M's units), or ``inner_max_iter`` iterations.
    partial_eig : bool, default=True
        Let :class:`~cvxclust.bregman.sets.M2Projector` compute only the top of the spectrum.
    polish_rounds : int, default=50
        Once the M-step iterate is within ``tol`` of the dual bound, checks also restore the
        end point of up to this many alternating projections between M2 and S started at it,
        when that can finish the solve (:class:`~cvxclust.bregman._feasible.FeasiblePoint`),
        and keep the better feasible point; 0 turns this off.
    approximate_projections : bool, default=True
        Between checks, replace the Z-step by
        :meth:`~cvxclust.bregman.sets.M2Projector.approximate` (a warm-started Rayleigh-Ritz
        step, a point of M2 near the projection); the checks, whose bound needs the exact
        projection, keep it.

    Returns
    -------
    Result
        ``X``: the best exactly feasible point of M1; ``dual_bound``: the best certified lower
        bound; no ``extras``.  History rows (at checks and where the penalty is balanced):
        ``iterate_objective`` (f of the S iterate), ``primal_residual``, ``dual_residual``,
        ``rho``, ``inner_iterations``; at checks also ``restored_objective`` and, after a
        polish, ``polished_objective``.
    """

    method = "admm"
    parameters = M1Solver.parameters | {
        "tol": Param(1e-6, POSITIVE),
        "max_iter": Param(5000, [Interval(Integral, 1, None, closed="left")]),
        "rho": Param(None, [None, *POSITIVE]),
        "alpha": Param(1.8, [Interval(Real, 0, 2, closed="neither")]),
        "mu": Param(2.0, MU),
        "adapt_every": Param(5, ADAPT_EVERY),
        "m_step": Param("linearized", [Options("linearized", "exact")]),
        "inner_max_iter": Param(300, [Interval(Integral, 1, None, closed="left")]),
        "inner_factor": Param(0.1, POSITIVE),
    }

    def init_state(self):
        relax = self.relaxation
        t, d = relax.t, relax.n_clusters
        J = np.full((t, t), 1.0 / t)
        JX = J @ relax.X
        rho = self.rho
        if rho is None:
            # weigh both terms of the first M-step alike: the gradient of f at J against rho times a
            # distance of order 1 between points of S
            rho = max(float(np.linalg.norm(relax.gradient_from(JX))), 1e-8)
        return ADMMState(
            project=M2Projector(t, d, partial=self.partial_eig), feasible=self.feasible_point(),
            M=J.copy(), MX=JX.copy(), Z=J.copy(), U=np.zeros((t, t)), rho=float(rho),
            penalty=ResidualBalancing(float(rho), self.mu, self.adapt_every), L=np.full(t, float(rho)),
            scale=float(relax.row_objectives(JX).mean()),
        )

    def step(self, state, iteration):
        relax = self.relaxation
        check = self.is_check(state, iteration)
        V = state.Z - state.U
        if self.m_step == "linearized":
            state.M, state.MX, state.thresholds, Y_M = linearized_m_step(
                relax, state.M, state.MX, V, state.rho, state.L, state.thresholds, state.scale, multiplier=check)
            inner = 1
        else:
            state.M, inner = exact_m_step(relax, V, state.M, state.rho, state.L, state.inner_tol,
                                          self.inner_max_iter)
            state.MX = state.M @ relax.X
            # M is optimal for f + <Y_M, .> over S up to the inner tolerance
            Y_M = state.rho * (state.M - V) if check else None
        Z_prev = state.Z
        A = self.alpha * state.M + (1.0 - self.alpha) * Z_prev  # over-relaxation (Boyd et al. 2011, 3.4.3)
        A += state.U
        # the bound needs the exact projection; between checks a warm-started one does
        state.exact = check or not self.approximate_projections
        state.Z = state.project(A) if state.exact else state.project.approximate(A)
        state.U = A
        state.U -= state.Z  # U + (alpha M + (1 - alpha) Z_prev) - Z
        balance = (iteration + 1) % self.adapt_every == 0
        if self.m_step == "linearized" and not (check or balance):
            return None
        # the figures (five norms) only where a check, the penalty or the inner tolerance needs them
        rho = state.rho
        dM, dZ = np.linalg.norm(state.M - state.Z), np.linalg.norm(state.Z - Z_prev)
        state.r_primal = dM / max(np.linalg.norm(state.M), np.linalg.norm(state.Z), 1e-300)
        state.r_dual = rho * dZ / max(rho * np.linalg.norm(state.U), 1e-300)
        state.inner_tol = max(self.inner_factor * min(dM, dZ), 1e-14)
        state.f_M = float(relax.row_objectives(state.MX).sum())
        if check:
            # rho U = rho (A - Z) is in the normal cone of M2 at Z = P_M2(A), so g_2 needs no
            # eigenvalues; for Y_M the M-step makes the Frank-Wolfe term of g_1 vanish
            state.multipliers = [(rho * state.U, state.Z), (Y_M, None)]
        row = {"iterate_objective": state.f_M, "primal_residual": state.r_primal, "dual_residual": state.r_dual,
               "rho": rho, "inner_iterations": inner}
        change = state.penalty.change(iteration + 1, rho, state.r_primal, state.r_dual)
        if change != 1.0:
            state.rho, state.U = rho * change, state.U / change
        return row

    def last_multiplier(self, state):
        # an approximate Z is in M2 (so it can be restored) but not the minimiser g_2 needs
        return state.rho * state.U, state.Z if state.exact else None


admm = ADMM.as_function()
ConditionalJC.register_solver("admm", ADMM)
