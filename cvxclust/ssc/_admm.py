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
* the penalty follows residual balancing (Boyd et al. 2011, sec. 3.4.1): doubled or halved
  when the primal and dual residuals differ by more than ``mu``;
* the multiplier of ``F >= 0`` is ``Q = -rho U``; ``g(max(Q, 0))`` is a certified lower bound,
  evaluated every ``bound_every`` iterations and every ``check_every`` once F's negative
  entries are below ``tol``; the solver stops when the certified relative gap is below ``tol`` too.

For (7) the solver first runs the same iteration on (6) (``warm_start``): it needs no
eigendecomposition, and where the p.s.d. constraint is inactive at the optimum of (6) the
eigendecomposition phase then ends after one iteration.

The returned X is the exactly feasible restoration ``(1 - t) F + t 11^T/n`` (the barycentre
11^T/n is strictly feasible, so the smallest t removing F's negative entries gives a feasible
point) when its certified gap is below ``tol``; otherwise F itself, exactly symmetric with unit
row sums (and p.s.d. for (7)) and with negative entries below ``tol`` relative to its largest.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int_range, check_positive
from .._stopping import IterationMonitor
from ._relaxations import FrobeniusDS, FrobeniusPSD, _NearestDoublyStochastic, negativity, project_row_sums


def admm(
    relaxation: _NearestDoublyStochastic,
    *,
    tol: float = 1e-7,
    max_iter: int = 5000,
    time_limit: float = np.inf,
    rho: float = 1.0,
    alpha: float = 1.6,
    mu: float = 10.0,
    adapt_every: int = 5,
    bound_every: int = 25,
    check_every: int = 5,
    partial_eig: bool = True,
    warm_start: bool = True,
    verbose: bool = False,
):
    """Solve (6)/(7) by ADMM; see the module docstring.

    Parameters
    ----------
    tol : float
        Stop when the negative entries of F (``max(0, -min F) / max|F|``, the only residual
        of F that is not zero by construction) and the certified relative duality gap
        ``|f(F) - g(Q)| / |f(F)|`` are both below ``tol``.  The relative primal and dual
        residuals ``||F - G|| / max(||F||, ||G||, 1)`` and ``rho ||G - G_prev|| / max(||rho U||, 1)``
        steer the penalty.
    max_iter, time_limit : int, float
        Limits; hitting one gives status ``"max_iter"``/``"time_limit"`` and a ConvergenceWarning.
    rho, alpha, mu, adapt_every : float, float, float, int
        Initial penalty, over-relaxation in (0, 2), residual-balancing ratio and period.
    bound_every, check_every : int
        Period of the dual-bound evaluation (one extra projection) recorded in the history, and
        its period once F's negative entries are below ``tol``.
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.
    warm_start : bool
        For (7), first run the same ADMM on (6) (no eigendecompositions) and start from its
        iterates; recorded as ``warm_start_iterations`` in the first history row.
    verbose : bool
        Show a progress bar.
    """
    check_positive(rho, "rho")
    check_positive(mu, "mu")
    for value, name in [(adapt_every, "adapt_every"), (bound_every, "bound_every"), (check_every, "check_every")]:
        check_int_range(value, name, 1)
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 2:
        raise ValueError(f"alpha must lie in (0, 2), got {alpha!r}")
    K, n = relaxation.K, relaxation.n
    project = relaxation.projector(partial=partial_eig)
    project_bound = relaxation.projector(partial=partial_eig)
    monitor = IterationMonitor("admm", tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)

    G = np.maximum(project(K), 0.0)
    U = np.zeros_like(K)
    warm_iterations = 0
    if warm_start and relaxation.psd:
        # (6) shares (7)'s nonnegativity split and needs no eigendecomposition: its ADMM
        # identifies most of the active set of F >= 0 and a good rho at O(n^2) per iteration
        for warm_iterations in range(1, max_iter + 1):
            _, G, U, r_primal, r_dual = _step(K, G, U, rho, alpha, project_row_sums)
            if max(r_primal, r_dual) < tol or monitor.elapsed > time_limit:
                break
            rho, U = _balance(warm_iterations, rho, U, r_primal, r_dual, mu, adapt_every)
    X = G
    bound = -np.inf
    for it in monitor:
        F, G, U, r_primal, r_dual = _step(K, G, U, rho, alpha, project)
        # F is exactly symmetric with unit row sums (and p.s.d.); its one violation is a few
        # tiny negative entries, measured as in relaxation.residuals().  Mixing in the
        # barycentre 11^T/n (strictly feasible: entries 1/n > 0) removes them:
        # X = (1 - t) F + t 11^T/n is exactly feasible for t = m / (m + 1/n), m = max(0, -min F).
        m = max(0.0, -F.min())
        t = m / (m + 1.0 / n)
        negative = negativity(F)
        objective = relaxation.objective(F)
        row = {"objective": objective, "primal_residual": r_primal, "dual_residual": r_dual, "rho": rho,
               "nonnegativity": negative}
        if it == 0:
            row["warm_start_iterations"] = warm_iterations
        if (negative < tol and it % check_every == 0) or it % bound_every == 0:
            bound = max(bound, relaxation.dual_value(-rho * U, project_bound))
            X = F if t == 0 else (1.0 - t) * F + t / n
            gap_feasible = abs(relaxation.objective(X) - bound) / max(abs(objective), 1e-12)
            gap = abs(objective - bound) / max(abs(objective), 1e-12)
            row.update(dual_bound=bound, relative_gap=gap, relative_gap_restored=gap_feasible)
            # stop on a gap certified at this very iterate: the exactly feasible X if it is
            # close enough, else F once its negative entries are below tol too
            if gap_feasible < tol or (negative < tol and gap < tol):
                X = X if gap_feasible < tol else F
                monitor.record(**row)
                monitor.converged()
                break
        monitor.record(**row)
        X = F
        rho, U = _balance(it + 1, rho, U, r_primal, r_dual, mu, adapt_every)
    if monitor.status != "optimal":
        bound = max(bound, relaxation.dual_value(-rho * U, project_bound))
    return relaxation.make_result(
        X,
        status=monitor.status,
        method="admm",
        iterations=monitor.iterations,
        time=monitor.elapsed,
        dual_bound=bound,
        history=monitor.history,
    )


def _step(K, G, U, rho, alpha, project):
    """One over-relaxed ADMM iteration; returns F, G, U and the relative primal/dual residuals.
    In place where possible: at large n the O(n^2) passes cost as much as the projection."""
    W = G - U
    W *= rho
    W += K
    W /= 1.0 + rho
    F = project(W)
    V = F * alpha
    V += (1.0 - alpha) * G  # V = F_hat, the over-relaxed point
    V += U
    G_new = np.maximum(V, 0.0)
    V -= G_new  # U + F_hat - G
    r_primal = np.linalg.norm(F - G_new) / max(np.linalg.norm(F), np.linalg.norm(G_new), 1.0)
    r_dual = rho * np.linalg.norm(G_new - G) / max(rho * np.linalg.norm(V), 1.0)
    return F, G_new, V, r_primal, r_dual


def _balance(iteration, rho, U, r_primal, r_dual, mu, every):
    """Residual balancing (Boyd et al. 2011, 3.4.1); the scaled multiplier U = Y / rho follows."""
    if iteration % every == 0:
        if r_primal > mu * r_dual:
            return rho * 2.0, U / 2.0
        if r_dual > mu * r_primal:
            return rho / 2.0, U * 2.0
    return rho, U


FrobeniusDS.register_solver("admm", admm)
FrobeniusPSD.register_solver("admm", admm)
