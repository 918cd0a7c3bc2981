r"""Certified output of the solvers of (10): the exactly feasible point and the checks both share.

Restoring and polishing
-----------------------
The solvers' Z iterate is in M2 and :meth:`~cvxclust.bregman.ConditionalJC.restore` mixes it
with ``J = 11'/t`` into an exactly feasible point of M1.  Mixing with J costs
``t n (f(J) - f(Z))`` for a negativity ``n`` and every point of M1 has entries of average size
``1/t``, so the gap of the restored point closes several times later than that of the
(infeasible) M iterate against the bound.  Once the M-step iterate (in S) is within ``tol`` of
the bound, checks therefore also *polish*: they restore the end point of (relaxed) alternating
projections between M2 and S started from M (:func:`cvxclust.linalg.alternating_projections`),
which converge to a point of M1 near M, so the negativity left for the mixing, and its cost,
shrink with every round (:class:`FeasiblePoint`, which also decides when a polish is worth its
eigendecompositions).  What the polished point still loses is proportional to the primal
residual ``||M - Z||``, so late in a solve the residual, not the bound, decides when the
solvers stop.

The checks
----------
:class:`M1Solver` is the part of :class:`~cvxclust.bregman._jc_admm.ADMM` and
:class:`~cvxclust.bregman._davis_yin.DavisYin` that certifies: at a check, the better of the
solver's two multipliers in :meth:`~cvxclust.bregman.ConditionalJC.best_dual_value` and the
best feasible point so far; after a limit, the bound of the last multiplier and the restored
last Z.  A point is certified when its relative gap to the best bound is below ``tol`` and the
solver's relative primal and dual residuals are below ``residual_tol`` (the returned point is
exactly feasible: its own residuals, those of :meth:`~cvxclust.bregman.ConditionalJC.residuals`,
are at the rounding level).  The history records the objective of the S iterate
(``iterate_objective``), ``restored_objective`` (the better restored point of the check) and
``polished_objective``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from numbers import Integral

import numpy as np

from ..linalg import alternating_projections, project_simplex_rows
from ..parameters import Interval
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState, polish_due
from ._conditional_jc import ConditionalJC
from .sets import M2Projector

__all__ = ["FeasiblePoint", "M1Solver"]


class FeasiblePoint:
    """The best exactly feasible point of M1 found by the checks of a solver (module docstring).

    Each check restores the Z iterate (in M2).  Once the M iterate (in S) is within ``tol`` of
    the bound, a check may also *polish*: run relaxed alternating projections between M2 and S
    from M (:func:`cvxclust.linalg.alternating_projections`), restoring their end point after
    every 5 rounds while that improves the objective by more than ``tol / 10`` (relative) and
    the point does not yet pass the gap test, up to ``rounds`` rounds.  The polished point is
    about the nearest point of M1 to M, and what it loses in objective is proportional to the
    primal residual ``||M - Z||``.  A polish costs an eigendecomposition per round (often a full
    one: at the optimum many eigenvalues of M are strictly between 0 and 1), so after the first
    it runs only when it can finish the solve (:func:`cvxclust.solvers.polish_due`).
    """

    def __init__(self, relax: ConditionalJC, tol: float, rounds: int, partial_eig: bool):
        self.relax, self.tol, self.rounds = relax, tol, rounds
        self.project = M2Projector(relax.t, relax.n_clusters, partial=partial_eig)
        J = np.full((relax.t, relax.t), 1.0 / relax.t)
        self.X, self.f = J, relax.objective(J)
        self._last: tuple[float, float] | None = None  # (primal residual, relative loss) at the last polish

    def keep(self, X: np.ndarray, f_X: float) -> None:
        """Keep ``X`` (exactly feasible, objective ``f_X``) if it is better."""
        if f_X < self.f:
            self.X, self.f = X, f_X

    def restore(self, Z: np.ndarray) -> float:
        """Restore ``Z`` (in M2), keep it if better; return its objective."""
        X = self.relax.restore(Z)
        f_X = self.relax.objective(X)
        self.keep(X, f_X)
        return f_X

    def update(self, M: np.ndarray, f_M: float, Z: np.ndarray, bound: float, residual: float) -> dict:
        """Restore ``Z`` and polish from ``M`` (objective ``f_M``, relative primal residual
        ``residual``) when due; return the figures for the history."""
        f_X = self.restore(Z)
        figures = {}
        gap_M = (f_M - bound) / max(abs(f_M), 1e-300)  # signed: M below the bound is fine
        if self.rounds and polish_due(gap_M, residual, self._last, self.tol):
            X_p, f_p = self._polish(M, bound)
            figures["polished_objective"] = f_p
            self._last = (residual, (f_p - f_M) / max(abs(f_M), 1e-300))
            self.keep(X_p, f_p)
            f_X = min(f_X, f_p)
        figures["restored_objective"] = f_X
        return figures

    def _polish(self, M: np.ndarray, bound: float) -> tuple[np.ndarray, float]:
        """The best restored point of the alternating projections from M and its objective.
        Stops after a block of 5 rounds when the point passes the gap test against ``bound``,
        when the block gained less than ``tol / 10`` or when the objective rose."""
        relax, tol = self.relax, self.tol
        best, f_best = None, np.inf
        # after the first, exact, projection the rounds are warm-started (a point of M2 all the same)
        rounds = alternating_projections(self.project(M), self.project.approximate, project_simplex_rows)
        for r, W in enumerate(rounds, start=1):
            if r % 5 == 0 or r == self.rounds:
                X = relax.restore(W)
                f_X = relax.objective(X)
                if f_X >= f_best:
                    break  # each round removes negativity but moves away from M: past the balance
                gain, best, f_best = f_best - f_X, X, f_X
                if f_X - bound <= tol * abs(f_X) or gain <= 0.1 * tol * abs(f_X):
                    break  # finishes the solve, or more rounds no longer matter to the gap test
            if r == self.rounds:
                break
        return best, f_best


@dataclass(kw_only=True, eq=False)
class M1State(SolverState):
    """What the state of a solver of (10) holds for :class:`M1Solver`; each solver extends it."""

    #: the projection onto M2 (exact, and warm-started approximate)
    project: M2Projector
    #: the best exactly feasible point of the checks
    feasible: FeasiblePoint
    #: the iterate in S and the iterate in M2 (the exact projection at a check)
    M: np.ndarray
    Z: np.ndarray
    #: whether the last Z-step was exact
    exact: bool = True
    #: the thresholds of the last simplex projection of the rows (its warm start)
    thresholds: np.ndarray | None = None
    #: at a check: the objective of M, the relative residuals and the ``(Y, Z)`` pairs of
    #: :meth:`~cvxclust.bregman.ConditionalJC.best_dual_value`
    f_M: float = np.nan
    r_primal: float = np.nan
    r_dual: float = np.nan
    multipliers: list = field(default_factory=list)


class M1Solver(IterativeSolver):
    """The certification shared by the solvers of (10) (module docstring).

    A subclass's :meth:`init_state` returns an :class:`M1State`, and its :meth:`step` leaves
    there: ``M`` (in S), ``Z`` (in M2, the exact projection at a check), and at a check also
    ``f_M`` (the objective of M), ``r_primal``, ``r_dual`` and ``multipliers`` (the ``(Y, Z)``
    pairs of :meth:`~cvxclust.bregman.ConditionalJC.best_dual_value`); it implements
    :meth:`last_multiplier`.
    """

    parameters = IterativeSolver.parameters | {
        "residual_tol": Param(1e-4, POSITIVE),
        "polish_rounds": Param(50, [Interval(Integral, 0, None, closed="left")]),
        "partial_eig": Param(True, ["boolean"]),
        "approximate_projections": Param(True, ["boolean"]),
    }

    def __init__(self, relaxation=None, **params):
        if not isinstance(relaxation, ConditionalJC):
            raise ValueError(f"relaxation must be a ConditionalJC, got {type(relaxation).__name__}")
        super().__init__(relaxation, **params)

    def is_check(self, state, iteration):
        # from the first iteration on: the exact Z-step of a check is part of the iteration
        return iteration % self.check_every == 0

    def size(self):
        return self.relaxation.t

    def last_multiplier(self, state) -> tuple[np.ndarray, np.ndarray | None]:
        """``(Y, Z)`` for the bound of the last iterate (``Z`` None where the last Z-step was
        approximate: then ``g_2`` takes the eigenvalues)."""
        raise NotImplementedError

    def feasible_point(self) -> FeasiblePoint:
        return FeasiblePoint(self.relaxation, self.tol, self.polish_rounds, self.partial_eig)

    def certify(self, state, bound, final=False):
        relax, feasible = self.relaxation, state.feasible
        if final:
            Y, Z = self.last_multiplier(state)
            fresh = relax.best_dual_value(state.M, [(Y, Z)])
            feasible.restore(state.Z)
            return Certificate(feasible.X, fresh, feasible.f)
        fresh = relax.best_dual_value(state.M, state.multipliers)
        figures = feasible.update(state.M, state.f_M, state.Z, max(bound, fresh), state.r_primal)
        residuals = {"primal_residual": state.r_primal, "dual_residual": state.r_dual}
        return Certificate(feasible.X, fresh, feasible.f, residuals, figures)
