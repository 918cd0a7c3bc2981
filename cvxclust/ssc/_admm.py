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
  evaluated every ``bound_every`` iterations, and at the checks every ``check_every`` iterations
  when the last bound's improvement suggests a fresh one could certify the restored point.

For (7) the solver first runs the same iteration on (6) (``warm_start``): it needs no
eigendecomposition, and where the p.s.d. constraint is inactive at the optimum of (6) the
eigendecomposition phase then ends after one iteration.

The returned X is, in general, exactly feasible: the restoration
:meth:`~cvxclust.ssc._relaxations._NearestDoublyStochastic.restore` of the last F, which moves the
mass of F's tiny negative entries onto the diagonal and mixes in the identity as far as the
p.s.d. constraint needs.  The solver stops when the relative gap between X's objective and the
best dual bound is below ``tol``, so "optimal" means an exactly feasible point with a certified
relative suboptimality below ``tol``.  It also stops, returning F itself, if F's negative entries
and F's certified gap both fall below ``tol`` first (only seen with subclasses whose ``restore``
is cruder, such as the one in ``examples/prototype_relaxation.py``).
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int_range, check_positive
from .._stopping import IterationMonitor, balance_penalty
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
    warm_start_tol: float = 1e-4,
    verbose: bool = False,
):
    """Solve (6)/(7) by ADMM; see the module docstring.

    Parameters
    ----------
    tol : float
        Stop when the certified relative gap ``(f(X) - g(Q)) / |f(X)|`` of the exactly feasible
        restoration X of the current F is below ``tol`` (or F's gap and negative entries are).  The relative primal and dual
        residuals ``||F - G|| / max(||F||, ||G||, 1)`` and ``rho ||G - G_prev|| / max(||rho U||, 1)``
        steer the penalty.
    max_iter, time_limit : int, float
        Limits; hitting one gives status ``"max_iter"``/``"time_limit"`` and a ConvergenceWarning.
    rho, alpha, mu, adapt_every : float, float, float, int
        Initial penalty, over-relaxation in (0, 2), residual-balancing ratio and period.
    bound_every, check_every : int
        Period of the dual-bound evaluation (one extra projection) recorded in the history, and
        period of the restoration checks (O(n^2); they refresh the bound when a fresh one may certify).
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.
    warm_start : bool
        For (7), first run the same ADMM on (6) (no eigendecompositions) and start from its
        iterates; recorded as ``warm_start_iterations`` in the first history row.
    warm_start_tol : float
        The warm start stops when its relative primal and dual residuals are below this: it
        only has to find the active set of F >= 0 roughly (n = 2000: 96 instead of 241 of its
        iterations at 1e-7, and the same number of iterations afterwards).
    verbose : bool
        Show a progress bar.
    """
    check_positive(rho, "rho")
    check_positive(mu, "mu")
    check_positive(warm_start_tol, "warm_start_tol")
    for value, name in [(adapt_every, "adapt_every"), (bound_every, "bound_every"), (check_every, "check_every")]:
        check_int_range(value, name, 1)
    if not isinstance(alpha, (int, float)) or not 0 < alpha < 2:
        raise ValueError(f"alpha must lie in (0, 2), got {alpha!r}")
    K = relaxation.K
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
            if max(r_primal, r_dual) < warm_start_tol or monitor.elapsed > time_limit:
                break
            rho, U = balance_penalty(warm_iterations, rho, U, r_primal, r_dual, mu, adapt_every)
    bound, gain = -np.inf, np.inf
    for it in monitor:
        F, G, U, r_primal, r_dual = _step(K, G, U, rho, alpha, project)
        objective, negative = relaxation.objective(F), negativity(F)
        row = {"objective": objective, "primal_residual": r_primal, "dual_residual": r_dual, "rho": rho,
               "nonnegativity": negative}
        if it == 0:
            row["warm_start_iterations"] = warm_iterations
        if it % check_every == 0 or it % bound_every == 0:
            # F is exactly symmetric with unit row sums (and p.s.d.); its one violation, tiny
            # negative entries, is removed by relaxation.restore at O(n^2) cost
            X = relaxation.restore(F)
            restored = relaxation.objective(X)
            scale = max(abs(restored), 1e-12)
            # a fresh bound costs one more projection: pay it for the history, and when the
            # last one's improvement suggests it could close a gap (the bound converges long
            # before X does, so this is rare)
            stale = min(restored - bound, abs(objective - bound) if negative < tol else np.inf) / scale
            if it % bound_every == 0 or stale - tol < gain:
                fresh = relaxation.dual_value(-rho * U, project_bound)
                gain = max(fresh - bound, 0.0) / scale
                bound = max(bound, fresh)
            gap, gap_F = (restored - bound) / scale, abs(objective - bound) / scale
            row.update(dual_bound=bound, relative_gap=gap_F, relative_gap_restored=gap)
            # stop on a gap certified at this very iterate: for the exactly feasible X, or for
            # F once its negative entries are below tol too (when restoring costs more than tol,
            # as it may for a subclass whose restore() is cruder)
            if gap < tol or (negative < tol and gap_F < tol):
                X = X if gap < tol else F
                monitor.record(**row)
                monitor.converged()
                break
        monitor.record(**row)
        rho, U = balance_penalty(it + 1, rho, U, r_primal, r_dual, mu, adapt_every)
    if monitor.status != "optimal":
        X = relaxation.restore(project(G) if monitor.iterations == 0 else F)
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


FrobeniusDS.register_solver("admm", admm)
FrobeniusPSD.register_solver("admm", admm)
