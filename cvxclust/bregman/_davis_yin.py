r"""Davis-Yin three-operator splitting for ``ConditionalJC`` with a quadratic divergence.

The ADMM of Section 3.1.1 (:func:`~cvxclust.bregman._conditional_jc.admm`) solves an M-step
``argmin_{M in S} f(M) + rho/2 ||M - V||^2`` by an inner iterative method at every iteration.
When ``f(M) = D_F(X, M X)`` has a gradient that is Lipschitz with a known constant, the M-step
can be linearised instead: Davis & Yin (2017, "A three-operator splitting scheme and its
optimization applications", Algorithm 1) minimise ``f + i_S + i_M2`` with one projection onto
each set and one gradient per iteration::

    M  = P_S(W)                                  (row-wise simplex projections)
    V  = 2 M - W - gamma grad f(M)
    Z  = P_M2(V)                                 (Lemma 1 and (13))
    W += lambda (Z - M)

which converges for ``gamma < 2 / L`` and ``lambda < 2 - gamma L / 2`` (Davis & Yin 2017).
``f`` is evaluated at M only, whose rows are in the simplex, so the order of the two
projections keeps ``M X`` in the domain of F.  It applies to the quadratic divergences
``D_F(x, y) = ||(x - y) R||^2 / 2`` (squared Euclidean, Mahalanobis); for the others the
gradient is not Lipschitz on S and the ADMM is used.

The Lipschitz constant
----------------------
Every point the method touches (M in S, Z in M2, the segments between them) has ``M 1 = 1``,
and there ``M X = M X_c + 1 xbar'`` with ``X_c`` the centred data, so ``f`` equals
``f_c(M) = ||(X_c - M X_c) R||^2 / 2``, whose gradient differs from that of ``f`` by a
matrix ``c 1'`` with constant rows; neither projection sees such a matrix (``P_S`` acts row by
row on the simplex, ``P_M2`` through ``H A H`` and ``H 1 = 0``).  The method is therefore the
Davis-Yin method for ``f_c``, with ``L = ||X_c R||_2^2`` instead of ``||X R||_2^2``: the
nonnegative data the divergences need have a large mean, and the centred constant is 14 times
smaller on Digits, which allows a 14 times longer step.

The dual bound
--------------
Each check takes the better of two multipliers in :meth:`ConditionalJC.dual_value`, as the ADMM
does, each exact on one side.  ``Y = (V - Z) / gamma`` is in the normal cone of M2 at
``Z = P_M2(V)``, so ``Z`` minimises ``-<Y, Z>`` over M2 and ``g_2(Y) = -<Y, Z>`` exactly, while
``-Y - grad f(M) = (W - M) / gamma - (M - Z) / gamma`` is a normal of S at M only up to the
primal residual (the Frank-Wolfe bound of ``g_1(Y)`` at M is tight at the fixed point).
``Y_M = (V - M) / gamma = Y + (Z - M) / gamma`` makes ``-Y_M - grad f(M) = (W - M) / gamma`` a
normal of S at ``M = P_S(W)``, so M minimises ``f + <Y_M, .>`` over S and the Frank-Wolfe term
vanishes; its ``g_2`` takes the top d - 1 eigenvalues.  (Digits, t = 1000: 501 iterations
against 731 with the first alone and a polishing rule that has since changed, which mostly
saves time.)  The feasible output is restored and polished exactly as for
the ADMM (:class:`~cvxclust.bregman._conditional_jc._FeasiblePoint`).

Speed: an iteration costs one Z-step, one simplex projection of all rows and two products with
X.  The ADMM with its linearised M-step costs a little more per iteration (its backtracking)
and takes fewer iterations: on Digits Davis-Yin is faster up to t = 300, the two are level at
t = 1000 and the ADMM is faster at t = 2000.  The Z-step is the exact projection
(a partial eigendecomposition) at checks only, where the bound needs it; in between,
:meth:`~cvxclust.bregman.sets.M2Projector.approximate` warm-starts a Rayleigh-Ritz step from the
previous eigenvectors, at 40% of the cost, and the simplex projection starts Newton's method
from the previous thresholds.  Digits, Euclidean, d = 10, certified gap 1e-4
(``benchmarks/bench_bregman.py``, one thread): t = 300 in 2.1 s (ADMM 2.4 s), t = 1000 in 40 s
(ADMM 41 s), t = 2000 in 320 s (ADMM 262 s).
"""

from __future__ import annotations

import numpy as np

from .._checks import check_int_range, check_positive
from .._stopping import IterationMonitor
from ..linalg import project_simplex_rows
from ._conditional_jc import ConditionalJC, _FeasiblePoint, _finish
from .sets import M2Projector

__all__ = ["davis_yin", "gradient_lipschitz"]


def gradient_lipschitz(relaxation: ConditionalJC) -> float:
    r"""``L = ||X_c R||_2^2``: the Lipschitz constant of ``grad f`` on ``{M : M 1 = 1}`` for a
    quadratic divergence ``D_F(x, y) = ||(x - y) R||^2 / 2`` (``X_c``: the centred data; module
    docstring)."""
    return _centred_norm2(relaxation.divergence.whiten(relaxation.X))


def _centred_norm2(XR: np.ndarray) -> float:
    return float(np.linalg.norm(XR - XR.mean(axis=0), 2) ** 2)


def davis_yin(
    relaxation: ConditionalJC,
    *,
    tol: float = 1e-6,
    residual_tol: float = 1e-4,
    max_iter: int = 20000,
    time_limit: float = np.inf,
    step: float = 0.4,
    relaxation_factor: float = 1.6,
    check_every: int = 10,
    polish_rounds: int = 50,
    partial_eig: bool = True,
    approximate_projections: bool = True,
    verbose: bool = False,
):
    """Solve (10) over M1 by Davis-Yin splitting, for a quadratic divergence; see the module
    docstring.

    Parameters
    ----------
    tol : float
        Stop when the certified relative gap ``(f(X) - g) / |f(X)|`` of the best exactly feasible
        point X is below ``tol`` (g the best dual bound so far) ...
    residual_tol : float
        ... and the relative primal residual ``||M - Z|| / max(||M||, ||Z||)`` and dual residual
        ``||Z - Z_prev|| / (gamma ||Y||)`` are below ``residual_tol``.
    max_iter, time_limit : int, float
        Limits; hitting one gives status ``"max_iter"``/``"time_limit"``, a ConvergenceWarning,
        and the best feasible point with the best bound.
    step : float
        ``gamma L`` in (0, 2), L from :func:`gradient_lipschitz`.  Digits (t = 300 and 1000):
        0.2-0.8 need about the same number of iterations; 1.0 and more need up to 3x more.
    relaxation_factor : float
        lambda in ``(0, 2 - step / 2)``; 1.6 needs 1.4x fewer iterations than 1.0 on Digits.
    check_every : int
        Period of the checks: the exact Z-step (when ``approximate_projections``), the dual bound,
        the restoration and the residuals (the history records them at checks only).
    polish_rounds : int
        Most alternating projections per polish of the feasible point (see
        :class:`~cvxclust.bregman._conditional_jc._FeasiblePoint`); 0 turns polishing off.
    partial_eig : bool
        Let :class:`~cvxclust.bregman.sets.M2Projector` compute only the top of the spectrum.
    approximate_projections : bool
        Between checks, replace the Z-step by :meth:`~cvxclust.bregman.sets.M2Projector.approximate`
        (a Rayleigh-Ritz step warm-started at the previous eigenvectors: about 40 ms against 100 ms
        at t = 1000).  Only the bound needs the exact projection; the iteration tolerates the
        error, which is a small fraction of the step (Digits: the same number of iterations at
        t = 300 and 1000, 2x less time per iteration at t = 1000).
    verbose : bool
        Show a progress bar.

    Raises
    ------
    ValueError
        If the divergence is not a quadratic (use ``method="admm"``), or an option is out of range.
    """
    relax = relaxation
    if not relax.divergence.quadratic:
        raise ValueError(
            f"method 'davis-yin' needs a quadratic divergence (euclidean, Mahalanobis), got "
            f"{relax.divergence.name!r}: its gradient is not Lipschitz on M1; use method='admm'"
        )
    check_positive(tol, "tol")
    check_positive(residual_tol, "residual_tol")
    for value, name, high in [(step, "step", 2.0), (relaxation_factor, "relaxation_factor", 2.0 - step / 2)]:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < high:
            raise ValueError(f"{name} must lie in (0, {high:g}), got {value!r}")
    check_int_range(check_every, "check_every", 1)
    polish_rounds = check_int_range(polish_rounds, "polish_rounds", 0)
    t, d, X = relax.t, relax.n_clusters, relax.X
    monitor = IterationMonitor("davis-yin", tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)
    project = M2Projector(t, d, partial=partial_eig)
    feasible = _FeasiblePoint(relax, tol, polish_rounds, partial_eig)
    XR = relax.divergence.whiten(X)
    # identical points make f constant on M1 (L = 0): any step is exact, keep it finite
    gamma = step / max(_centred_norm2(XR), 1e-12 * max(float(np.sum(XR * XR)), 1.0))

    W = np.full((t, t), 1.0 / t)
    Z = W.copy()
    bound = -np.inf
    thresholds = None
    for it in monitor:
        M, thresholds = project_simplex_rows(W, start=thresholds, return_thresholds=True)
        MX = M @ X
        V = relax._gradient_from(MX)  # V = 2 M - W - gamma grad f(M), in place
        V *= -gamma
        V += M
        V += M
        V -= W
        check = it % check_every == 0
        # the bound needs the exact projection; between checks a warm-started one does
        exact = check or not approximate_projections
        Z_prev, Z = Z, project(V) if exact else project.approximate(V)
        step_W = Z - M
        W += relaxation_factor * step_W
        if not check:
            monitor.record()
            continue
        # the figures of a check (computed only here: they cost as much as a simplex projection)
        r_primal = np.linalg.norm(step_W) / max(np.linalg.norm(M), np.linalg.norm(Z), 1e-300)
        Y = (V - Z) / gamma
        r_dual = np.linalg.norm(Z - Z_prev) / max(gamma * np.linalg.norm(Y), 1e-300)
        row = {"objective": float(relax._rows(MX).sum()), "primal_residual": r_primal, "dual_residual": r_dual,
               "step": gamma}
        # Y_M = (V - M) / gamma makes M = P_S(W) exactly optimal for f + <Y_M, .> over S
        bound = max(bound, relax._best_dual_value(M, [(Y, Z), ((V - M) / gamma, None)]))
        gap = feasible.update(M, row["objective"], Z, bound, row)
        monitor.record(**row)
        if gap < tol and max(r_primal, r_dual) < residual_tol:
            monitor.converged()
            break
    # an approximate Z is in M2 (so it can be restored) but not the minimiser g_2 needs
    return _finish(feasible, monitor, Z, bound,
                   lambda: relax.dual_value((V - Z) / gamma, M, Z=Z if exact else None))


ConditionalJC.register_solver("davis-yin", davis_yin)
