"""The points the generic solver (:class:`~cvxclust.generic.GenericSolver`) returns besides its
iterate: the best exactly feasible point of its checks, the polish that brings a restored point
closer to the iterate, and, where no restoration applies (entries tied by rows), a point of
alternating projections within ``residual_tol`` (:mod:`cvxclust.generic.restoration`)."""

from __future__ import annotations

import numpy as np

from ..result import relative_gap
from ..solvers import Certificate, polish_due
from .restoration import polished, within_residual

__all__ = ["PolishedPoints"]

_TINY = 1e-300


class PolishedPoints:
    """The methods of :class:`~cvxclust.generic.GenericSolver` that keep and polish its returned
    points (its ``tol``, ``residual_tol``, ``gap_floor`` and ``polish_rounds``, and the
    ``_own_residuals`` of its state)."""

    def _within_residual(self, state, certificate: Certificate, bound: float) -> Certificate:
        """Where entries are tied (no restoration applies) and the iterate meets the gap but not
        ``residual_tol``: when :func:`~cvxclust.solvers.polish_due`, the certificate of the point of
        :func:`~cvxclust.generic.restoration.within_residual` where that point meets the gap too."""
        if certificate.figures["iterate_residual"] <= self.residual_tol or not polish_due(
                self._excess(state, certificate.objective, bound), state.r_primal, state.last_polish, self.tol):
            return certificate
        found = within_residual(state.form, state.split, certificate.X, self.residual_tol, self.polish_rounds)
        if found is None:
            state.last_polish = (state.r_primal, np.inf)  # due again once the residual fell tenfold
            return certificate
        X, objective = found[0], state.form.objective(found[0])
        state.last_polish = (state.r_primal, self._excess(state, objective, certificate.objective))
        certificate.figures["polished_objective"] = objective
        if relative_gap(objective, bound, self.gap_floor) > self.tol:
            return certificate
        return Certificate(X, certificate.bound, objective, self._own_residuals(state, X, in_s=True),
                           certificate.figures)

    @staticmethod
    def _excess(state, objective: float, reference: float) -> float:
        """How much worse ``objective`` is than ``reference``, relative (negative: better)."""
        excess = objective - reference if state.form.sense == "minimize" else reference - objective
        return excess / max(abs(objective), abs(reference), _TINY)

    def _keep(self, state, X: np.ndarray, objective: float) -> None:
        if state.feasible is None or self._excess(state, objective, state.feasible[1]) < 0:
            state.feasible = (X, objective)

    def _polish(self, state, Z: np.ndarray, iterate_objective: float, bound: float) -> float:
        """Restore the rounds of :func:`~cvxclust.generic.restoration.polished` from the iterate Z
        while they gain; keep the best; return its objective.  Stops when a point passes the gap
        test, a round gains less than ``tol / 10`` or loses (each round removes violation but
        moves away from Z), or after ``polish_rounds`` rounds."""
        form, best = state.form, None
        for r, X in enumerate(polished(form, state.split, Z), start=1):
            objective = form.objective(X)
            if best is not None and self._excess(state, objective, best) >= -0.1 * self.tol:
                break
            best = objective
            self._keep(state, X, objective)
            if relative_gap(objective, bound, self.gap_floor) <= self.tol or r == self.polish_rounds:
                break
        if best is not None:
            state.last_polish = (state.r_primal, self._excess(state, best, iterate_objective))
        return np.nan if best is None else best
