r"""Zass & Shashua's successive projections for the QP (6), with Dykstra's correction.

The iteration alternates between the affine set ``C1 = {F = F^T, F 1 = 1}`` and the orthant
``C2 = {F >= 0}``::

    X^{k+1} = Pi_C1(Y^k),    Y^{k+1} = max(X^{k+1} + q^k, 0),    q^{k+1} = X^{k+1} + q^k - Y^{k+1}.

With the correction ``q`` (Dykstra's algorithm) the iterates converge to the nearest doubly
stochastic matrix, the solution of (6); the affine step needs none.  ``Q = -q >= 0`` is then the
multiplier of ``F >= 0``, and ``g(Q)`` (:meth:`FrobeniusDS.dual_value`) certifies a lower bound.
Without it (``q = 0``, the plain alternation of the original FSC method) the iterates reach *a*
doubly stochastic matrix, in general not the nearest, and there is no certificate.

References: R. Zass, A. Shashua, "Doubly Stochastic Normalization for Spectral Clustering",
Advances in Neural Information Processing Systems (NIPS), 2006; J. P. Boyle, R. L. Dykstra, "A
Method for Finding Projections onto the Intersection of Convex Sets in Hilbert Spaces", Lecture
Notes in Statistics, 1986.

It runs on a K of any library of the Python array API standard, on K's device.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._array_ops import frobenius
from ..parameters import Interval
from ..solvers import Certificate, IterativeSolver, Param, SolverState
from ._relaxations import FrobeniusDS, FrobeniusSolver, project_row_sums

__all__ = ["SuccessiveProjections", "successive_projections"]


@dataclass(kw_only=True, eq=False)
class SuccessiveProjectionsState(SolverState):
    """The state of :class:`SuccessiveProjections`."""

    #: the nonnegative iterate, Dykstra's correction and the affine iterate (the candidate)
    Y: np.ndarray
    q: np.ndarray
    X: np.ndarray
    #: whether the last step met the plain alternation's stopping rule
    settled: bool = False


class SuccessiveProjections(FrobeniusSolver):
    """Successive projections between {F = F^T, F 1 = 1} and {F >= 0}; see the module docstring.

    Parameters
    ----------
    relaxation : FrobeniusDS
        The QP (6).
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`).  The candidate is the
        affine iterate X (symmetric with unit row sums; its one violation is small negative
        entries); with ``dykstra=True`` it is certified against the bound g(-q) at each check.
    dykstra : bool
        Carry Dykstra's correction (default).  ``False`` runs the plain alternation, a method
        without a certificate: it stops with status ``"converged"`` once its relative step
        ``||Y^{k+1} - Y^k|| / max(||Y^{k+1}||, 1)`` and its relative infeasibility
        ``||X - Y|| / max(||X||, 1)`` are below ``residual_tol``.

    Returns
    -------
    Result
        ``dual_bound`` is None with ``dykstra=False``.
    """

    method = "successive-projections"
    relaxations = (FrobeniusDS,)
    array_api = True
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(100_000, [Interval(Integral, 1, None, closed="left")]),
        "dykstra": Param(True, ["boolean"]),
    }

    def init_state(self):
        K, xp = self.relaxation.K, self.relaxation.arrays.xp
        # X is returned as is if a limit stops the loop before its first pass
        return SuccessiveProjectionsState(Y=xp.asarray(K, copy=True), q=xp.zeros_like(K), X=project_row_sums(K))

    def step(self, state, iteration):
        xp = self.relaxation.arrays.xp
        state.X = project_row_sums(state.Y)
        Y_prev = state.Y
        state.Y = xp.maximum(state.X + state.q, 0.0)
        if self.dykstra:
            state.q = state.X + state.q - state.Y
        change = frobenius(state.Y - Y_prev, xp) / max(frobenius(state.Y, xp), 1.0)
        infeasibility = frobenius(state.X - state.Y, xp) / max(frobenius(state.X, xp), 1.0)
        state.settled = max(change, infeasibility) < self.residual_tol
        if state.settled and not self.dykstra:
            self.converge()
        elif change == 0.0:
            self.stall("the iterates no longer change")
        return {"change": change, "infeasibility": infeasibility}

    def is_check(self, state, iteration):
        # the plain alternation stops at the iteration its rule is met
        return super().is_check(state, iteration) or state.settled

    def certify(self, state, bound, final=False):
        bound = self.relaxation.dual_value(-state.q) if self.dykstra else None
        return Certificate(state.X, bound)


successive_projections = SuccessiveProjections.as_function()
FrobeniusDS.register_solver("successive-projections", SuccessiveProjections)
