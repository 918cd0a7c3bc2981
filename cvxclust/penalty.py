"""The one penalty schedule of the package's ADMMs: residual balancing.

An ADMM with penalty rho converges for any rho > 0, but how fast depends on it: a large rho
enforces the consensus of the blocks (the primal residual falls), a small one moves the
multipliers (the dual residual falls).  Residual balancing (Boyd, Parikh, Chu, Peleato and
Eckstein, "Distributed optimization and statistical learning via the alternating direction
method of multipliers", Foundations and Trends in Machine Learning, 2011, section 3.4.1)
multiplies rho by ``factor`` when the primal figure exceeds ``mu`` times the dual one and divides
it by ``factor`` in the opposite case, every ``every`` iterations.  The scaled multiplier
``U = Y / rho`` of an ADMM then follows (divided by the same factor); each solver rescales its
own.

The solvers differ only in what they balance and how often:

* the ADMMs of :mod:`cvxclust.ssc`, :mod:`cvxclust.bregman` and :mod:`cvxclust.generic` weigh the
  relative primal and dual residuals;
* the ADMM of the CLUHSIC SDP (:mod:`cvxclust.hsic`) weighs its two stopping figures instead, the
  worst residual against ``residual_tol`` and the certified gap against its target, and only at
  a check: Anderson acceleration restarts at each change of rho, so it balances rarely.

Whatever the figures, rho stays within :data:`PENALTY_RANGE` of its start: a figure that cannot
reach its target (a tolerance below what the bound attains) would otherwise move rho until a step
that divides by it overflows, and a runaway penalty helps neither side.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

from .parameters import Interval

__all__ = ["ADAPT_EVERY", "MU", "PENALTY_RANGE", "ResidualBalancing"]

#: the range of an ADMM penalty relative to its initial value
PENALTY_RANGE = (1e-6, 1e6)
#: the constraints on the balancing ratio ``mu`` (below 1 both sides would call for a change)
MU = [Interval(Real, 1, None, closed="left")]
#: the constraints on the balancing period ``adapt_every``
ADAPT_EVERY = [Interval(Integral, 1, None, closed="left")]

_TINY = 1e-300


@dataclass(frozen=True)
class ResidualBalancing:
    """Residual balancing of an ADMM penalty; see the module docstring.

    Parameters
    ----------
    start : float
        The initial penalty: :data:`PENALTY_RANGE` is relative to it.
    mu : float
        The ratio of the two figures beyond which the penalty changes (>= 1).
    every : int
        The period, in iterations.
    factor : float
        The change of the penalty.
    """

    start: float
    mu: float = 10.0
    every: int = 1
    factor: float = 2.0

    def due(self, iterations: int) -> bool:
        """Whether the penalty may change after ``iterations`` finished iterations (a multiple of
        ``every``; before the first, figures that are still NaN change nothing)."""
        return iterations % self.every == 0

    def change(self, iterations: int, rho: float, primal: float, dual: float) -> float:
        """The factor to multiply rho by after ``iterations`` finished iterations: ``factor`` when
        ``primal > mu * dual``, ``1 / factor`` when ``dual > mu * primal``, 1 otherwise (off the
        period, a NaN figure, or a change that would leave :data:`PENALTY_RANGE`).  The scaled
        multipliers divide by it."""
        if not self.due(iterations):
            return 1.0
        if primal > self.mu * max(dual, _TINY):
            change = self.factor
        elif dual > self.mu * max(primal, _TINY):
            change = 1.0 / self.factor
        else:
            return 1.0
        low, high = PENALTY_RANGE
        return change if low <= rho * change / self.start <= high else 1.0
