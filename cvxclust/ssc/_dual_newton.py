r"""Dual semismooth Newton solver for (6) and (7): Newton on the row-sum multipliers, accelerated
projected gradient on the p.s.d. multiplier.

(6) and (7) are the nearest-point problems of :mod:`cvxclust.dual_newton` with target K, the box
``F >= 0`` and unit row sums, (7) with the cone.  Dualising ``F 1 = 1`` (multiplier u) and
``F >> 0`` (multiplier S >> 0) and keeping ``F >= 0`` in the inner minimum gives, with
``F(u, S) = max(K + S + u 1^T + 1 u^T, 0)`` entrywise,

.. math::

    \theta(u, S) = \tfrac12\|K\|_F^2 - \tfrac12\|F(u, S)\|_F^2 + 2\,\mathbf 1^T u
    \ \le\ \text{optimum}

for every u and every S >> 0 (for (6), S = 0).  Newton's method on u solves (6) outright in a
few passes over K: its ``F(u*, 0)`` is the optimum, exactly nonnegative and symmetric, with unit
row sums to ``newton_tol``.  For (7) an accelerated projected gradient moves S, one partial
eigendecomposition per iteration, with u found by Newton's method at every step; each check
mixes the identity into F, ``X = (1 - s) F + s I``, as far as ``lambda_min(F)`` requires: an
exactly feasible point certified by theta.  The method and its references are in
:mod:`cvxclust.dual_newton`.

It runs on a K of any library of the Python array API standard, on K's device (a PyTorch tensor
on a GPU stays there; X comes back there): see :mod:`cvxclust.dual_newton` for what stays
NumPy-only (partial eigendecompositions, the smallest eigenvalue by index) and the memory it
holds.
"""

from __future__ import annotations

from ..dual_newton import DualNewtonSolver, NearestPoint
from ._relaxations import FrobeniusDS, FrobeniusPSD, FrobeniusSolver

__all__ = ["DualNewton", "dual_newton"]


class DualNewton(FrobeniusSolver, DualNewtonSolver):
    """Solve (6)/(7) on the dual: Newton on the row-sum multipliers, accelerated projected
    gradient on the p.s.d. multiplier; see the module docstring.

    Parameters
    ----------
    relaxation : FrobeniusDS or FrobeniusPSD
        The problem.
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`): stop when the certified
        relative gap of the feasible point is below ``tol`` and its residuals below
        ``residual_tol``.  An iteration is one projected gradient step (one partial
        eigendecomposition with its Newton solves) for (7), one Newton step for (6).
    newton_tol : float
        Row-sum accuracy of the inner Newton solves (the row-sum residual of the returned X).
    newton_max_iter : int
        Newton steps per inner solve of (7) at most.
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.

    Returns
    -------
    Result
        History rows hold ``newton_iterations`` (of the step's inner solve) and ``restart``
        (whether the momentum was reset); ``extras``: ``newton_iterations`` (the total).
    """

    array_api = True

    def nearest_point(self) -> NearestPoint:
        relaxation = self.relaxation
        return NearestPoint(T=relaxation.K, weight=0.5, lower=0.0, row_sum=1.0, psd=relaxation.psd,
                            centre=(0.0, 1.0))


dual_newton = DualNewton.as_function()
FrobeniusDS.register_solver("dual-newton", DualNewton)
FrobeniusPSD.register_solver("dual-newton", DualNewton)
