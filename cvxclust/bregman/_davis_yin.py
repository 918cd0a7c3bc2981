r"""Davis-Yin three-operator splitting for ``ConditionalJC`` with a quadratic divergence.

The ADMM of Section 3.1.1 (:mod:`cvxclust.bregman._jc_admm`) handles f through an M-step with
backtracking, as no global Lipschitz constant is known for the general divergences.  When
``f(M) = D_F(X, M X)`` has a gradient that is Lipschitz with a known constant, Davis & Yin
(2017, "A three-operator splitting scheme and its optimization applications", Algorithm 1)
minimise ``f + i_S + i_M2`` with one projection onto each set and one gradient per
iteration::

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
nonnegative data the divergences need often have a large mean, and centring then allows a
much longer step.

The dual bound
--------------
Each check takes the better of two multipliers in
:meth:`~cvxclust.bregman.ConditionalJC.dual_value`, as the ADMM does, each exact on one side.
``Y = (V - Z) / gamma`` is in the normal cone of M2 at ``Z = P_M2(V)``, so ``Z`` minimises
``-<Y, Z>`` over M2 and ``g_2(Y) = -<Y, Z>`` exactly, while ``-Y - grad f(M) = (W - M) / gamma
- (M - Z) / gamma`` is a normal of S at M only up to the primal residual (the Frank-Wolfe bound
of ``g_1(Y)`` at M is tight at the fixed point).  ``Y_M = (V - M) / gamma = Y + (Z - M) /
gamma`` makes ``-Y_M - grad f(M) = (W - M) / gamma`` a normal of S at ``M = P_S(W)``, so M
minimises ``f + <Y_M, .>`` over S and the Frank-Wolfe term vanishes; its ``g_2`` takes the top
d - 1 eigenvalues.  The feasible output and the stop test are those of
:mod:`cvxclust.bregman._feasible`.

Cost: an iteration costs one Z-step, one simplex projection of all rows and two products with
X.  The ADMM with its linearised M-step costs a little more per iteration (its backtracking)
and takes fewer iterations, so Davis-Yin is the faster of the two on small and medium
instances and the ADMM on large ones (``benchmarks/bench_bregman.py``).  The Z-step is the
exact projection (a partial eigendecomposition) at checks only, where the bound needs it; in
between, :meth:`~cvxclust.bregman.sets.M2Projector.approximate` warm-starts a Rayleigh-Ritz step
from the previous eigenvectors at a fraction of the cost, and the simplex projection starts
Newton's method from the previous thresholds.

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np

from ..linalg import project_simplex_rows
from ..parameters import Interval, InvalidParameterError
from ..solvers import POSITIVE, Param
from ._conditional_jc import ConditionalJC
from ._feasible import M1Solver, M1State
from .sets import M2Projector

__all__ = ["DavisYin", "davis_yin", "gradient_lipschitz"]


def gradient_lipschitz(relaxation: ConditionalJC) -> float:
    r"""``L = ||X_c R||_2^2``: the Lipschitz constant of ``grad f`` on ``{M : M 1 = 1}`` for a
    quadratic divergence ``D_F(x, y) = ||(x - y) R||^2 / 2`` (``X_c``: the centred data; module
    docstring).

    Raises
    ------
    ValueError
        If ``relaxation`` is not a :class:`~cvxclust.bregman.ConditionalJC` with a quadratic
        divergence.
    """
    _check_quadratic(relaxation)
    return _centred_norm2(relaxation.divergence.whiten(relaxation.X))


def _check_quadratic(relaxation) -> None:
    if not isinstance(relaxation, ConditionalJC):
        raise ValueError(f"relaxation must be a ConditionalJC, got {type(relaxation).__name__}")
    if not relaxation.divergence.quadratic:
        raise ValueError(
            f"method 'davis-yin' needs a quadratic divergence (euclidean, Mahalanobis), got "
            f"{relaxation.divergence.name!r}: its gradient is not Lipschitz on M1; use method='admm'"
        )


def _centred_norm2(XR: np.ndarray) -> float:
    return float(np.linalg.norm(XR - XR.mean(axis=0), 2) ** 2)


@dataclass(kw_only=True, eq=False)
class DavisYinState(M1State):
    """The state of :class:`DavisYin`: the step, the splitting's point ``W`` and the point ``V``
    projected onto M2, besides what :class:`~cvxclust.bregman._feasible.M1State` holds."""

    gamma: float
    W: np.ndarray
    V: np.ndarray


class DavisYin(M1Solver):
    """Solve (10) over M1 by Davis-Yin splitting, for a quadratic divergence; see the module
    docstring.

    Parameters
    ----------
    relaxation : ConditionalJC
        With a quadratic divergence (``"euclidean"``, ``Mahalanobis(W)``).
    tol : float, default=1e-6
        Stop when the certified relative gap (:func:`cvxclust.result.relative_gap`) of the best
        exactly feasible point against the best dual bound is below ``tol`` ...
    residual_tol : float, default=1e-4
        ... and the relative primal residual ``||M - Z|| / max(||M||, ||Z||)`` and dual residual
        ``||Z - Z_prev|| / (gamma ||Y||)`` of the last check are below ``residual_tol``.
    max_iter, time_limit, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`); ``max_iter`` defaults
        to 20000.  At a limit the result is the best feasible point with the best bound.
    check_every : int, default=10
        Period of the checks: the exact Z-step (when ``approximate_projections``), the dual bound,
        the restoration and the residuals (the history records them at checks only).
    step_size : float, default=0.4
        ``gamma L`` in (0, 2), L from :func:`gradient_lipschitz` (the step gamma relative to its
        limit ``2 / L``).  Values from 0.2 to 0.8 need about the same iterations; 1 and more
        need more.
    relaxation_factor : float, default=1.6
        lambda in ``(0, 2 - step_size / 2)``; 1.6 needs markedly fewer iterations than 1.
    polish_rounds : int, default=50
        Most alternating projections per polish of the feasible point (see
        :class:`~cvxclust.bregman._feasible.FeasiblePoint`); 0 turns polishing off.
    partial_eig : bool, default=True
        Let :class:`~cvxclust.bregman.sets.M2Projector` compute only the top of the spectrum.
    approximate_projections : bool, default=True
        Between checks, replace the Z-step by :meth:`~cvxclust.bregman.sets.M2Projector.approximate`
        (a Rayleigh-Ritz step warm-started at the previous eigenvectors).  Only the bound needs
        the exact projection; the iteration tolerates the error, which is a small fraction of the
        step, and takes the same number of iterations.

    Returns
    -------
    Result
        ``X``: the best exactly feasible point of M1; ``dual_bound``: the best certified lower
        bound; no ``extras``.  History rows at checks: ``iterate_objective`` (f of the S
        iterate), ``primal_residual``, ``dual_residual``, ``step`` (gamma),
        ``restored_objective`` and, after a polish, ``polished_objective``.

    Raises
    ------
    ValueError
        If the divergence is not a quadratic (use ``method="admm"``), or an option is out of range.
    """

    method = "davis-yin"
    parameters = M1Solver.parameters | {
        "tol": Param(1e-6, POSITIVE),
        "max_iter": Param(20000, [Interval(Integral, 1, None, closed="left")]),
        "step_size": Param(0.4, [Interval(Real, 0, 2, closed="neither")]),
        "relaxation_factor": Param(1.6, [Interval(Real, 0, 2, closed="neither")]),
    }

    def __init__(self, relaxation=None, **params):
        _check_quadratic(relaxation)
        super().__init__(relaxation, **params)
        high = 2.0 - self.step_size / 2
        if not self.relaxation_factor < high:
            raise InvalidParameterError(
                f"The 'relaxation_factor' parameter of {self.method} must be below 2 - step_size / 2 = {high:g} "
                f"(step_size={self.step_size!r}). Got {self.relaxation_factor!r} instead.")

    def init_state(self):
        relax = self.relaxation
        t, d = relax.t, relax.n_clusters
        XR = relax.divergence.whiten(relax.X)
        # identical points make f constant on M1 (L = 0): any step is exact, keep it finite
        gamma = self.step_size / max(_centred_norm2(XR), 1e-12 * max(float(np.sum(XR * XR)), 1.0))
        W = np.full((t, t), 1.0 / t)
        return DavisYinState(project=M2Projector(t, d, partial=self.partial_eig), feasible=self.feasible_point(),
                             gamma=gamma, W=W, M=W.copy(), V=W.copy(), Z=W.copy())

    def step(self, state, iteration):
        relax, gamma = self.relaxation, state.gamma
        M, state.thresholds = project_simplex_rows(state.W, start=state.thresholds, return_thresholds=True)
        MX = M @ relax.X
        V = relax.gradient_from(MX)  # V = 2 M - W - gamma grad f(M), in place
        V *= -gamma
        V += M
        V += M
        V -= state.W
        check = self.is_check(state, iteration)
        # the bound needs the exact projection; between checks a warm-started one does
        state.exact = check or not self.approximate_projections
        Z_prev = state.Z
        Z = state.project(V) if state.exact else state.project.approximate(V)
        step_W = Z - M
        state.W += self.relaxation_factor * step_W
        state.M, state.V, state.Z = M, V, Z
        if not check:
            return None
        # the figures of a check (computed only here: they cost as much as a simplex projection)
        state.r_primal = np.linalg.norm(step_W) / max(np.linalg.norm(M), np.linalg.norm(Z), 1e-300)
        Y = (V - Z) / gamma
        # gamma ||Y|| as ||V - Z||: Y scales like the squared data, and its norm would overflow
        state.r_dual = np.linalg.norm(Z - Z_prev) / max(np.linalg.norm(V - Z), 1e-300)
        state.f_M = float(relax.row_objectives(MX).sum())
        # Y_M = (V - M) / gamma makes M = P_S(W) exactly optimal for f + <Y_M, .> over S
        state.multipliers = [(Y, Z), ((V - M) / gamma, None)]
        return {"iterate_objective": state.f_M, "primal_residual": state.r_primal, "dual_residual": state.r_dual,
                "step": gamma}

    def last_multiplier(self, state):
        # an approximate Z is in M2 (so it can be restored) but not the minimiser g_2 needs
        return (state.V - state.Z) / state.gamma, state.Z if state.exact else None


davis_yin = DavisYin.as_function()
ConditionalJC.register_solver("davis-yin", DavisYin)
