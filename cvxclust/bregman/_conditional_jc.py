r"""``ConditionalJC``: the relaxation (10) over M1 for a jointly convex divergence, and its ADMM
(Section 3.1.1).

The problem
-----------
With X the t x n data (rows = points) and d clusters,

.. math::

    \min_{M \in \mathcal{M}_1} f(M) := D_F(X, M X) = \sum_i D_F(X_{i:}, M_{i:} X),
    \qquad
    \mathcal{M}_1 = \{M : 0 \preceq M \preceq I,\ \mathrm{tr}(M) \le d,\ M_{i:} \in \Delta_t\}.

On the exact set M of normalized equivalence matrices (9), ``M X`` replaces each point by the
mean of its cluster, and Banerjee et al. (2005) show the mean is the optimal centre for every
Bregman divergence, so (10) on M is Bregman hard clustering ``min_{Y, Gamma} D_F(X, Y Gamma)``.

The ADMM (Section 3.1.1)
------------------------
Split the constraints into the row-wise simplex constraints
``S = {M : M_{i:} in Delta_t}`` (non-spectral) and the spectral set M2 (so that
``M1 = S ∩ M2``)::

    minimize f(M) + i_S(M) + i_M2(Z)   subject to  M = Z.

In scaled form with penalty rho (the paper's ``1/mu``) and scaled multiplier U = Y / rho
(the paper's ``Lambda = -Y``):

1. M-step ``M+ = argmin_{M in S} f(M) + rho/2 ||M - Z + U||^2``: row-separable (row i only
   enters through ``M_{i:} X``).  By default it is *linearised* (``m_step="linearized"``):
   one proximal-gradient step on f from the previous M, with a per-row proximal weight found
   by backtracking (:func:`_linearized_m_step`; the linearised ADMM of Lin, Liu & Su 2011), so
   an iteration costs one gradient and one simplex projection of all rows.  ``m_step="exact"``
   solves it as the paper states, to an inner tolerance that follows the residuals, by an
   accelerated projected gradient method whose iterates stay in S (:func:`_m_step`).  Either
   way every point evaluated is in S, so ``M X`` is a convex combination of data rows and stays
   in the domain of F (nonnegative for KL, inside (0, 1) for the logistic divergence), which a
   FISTA extrapolation would leave.  Digits, KL, t = 300: 3.5 s linearised (301 iterations)
   against 10.4 s exact (241 iterations of about 5 inner steps).
2. Z-step ``Z+ = P_M2(M+ + U)`` in closed form (Lemma 1 and (13);
   :class:`~cvxclust.bregman.sets.M2Projector`).  Only the dual bound needs it exact, so between
   checks a warm-started Rayleigh-Ritz step replaces it
   (:meth:`~cvxclust.bregman.sets.M2Projector.approximate`: a point of M2 near the projection).
3. ``U+ = U + M+ - Z+``; residual balancing of rho (Boyd et al. 2010, 3.4.1).

The dual bound
--------------
With multiplier Y of ``M = Z`` the Lagrange dual function is

.. math::

    g(Y) = \underbrace{\min_{M \in S} f(M) + \langle Y, M\rangle}_{g_1(Y)}
         \;+\; \underbrace{\min_{Z \in \mathcal{M}_2} -\langle Y, Z\rangle}_{g_2(Y)}
         \;\le\; p^\star

for every Y (weak duality).  ``g_2`` is exact: by Lemma 1, ``Z = H S H + J`` with ``S`` in
M3 and ``J = 11'/t``, so with ``Y_s = (Y + Y')/2``

.. math::

    g_2(Y) = -\frac{1}{t}\mathbf{1}'Y\mathbf{1}
             - \sum_{i=1}^{d-1} \max(\lambda_i(H Y_s H), 0)

(top d - 1 eigenvalues: ``max <A, S>`` over ``0 <= S <= I, tr S <= d - 1`` is a linear
program in the eigenvalues of S, by von Neumann's trace inequality).  ``g_1`` has no closed
form, but for any ``M̂`` in S convexity of ``phi(M) = f(M) + <Y, M>`` gives the certified
lower bound (a Frank-Wolfe gap; the linear minimisation over a product of simplices picks
the smallest entry of each row)

.. math::

    g_1(Y) \ge \phi(\hat M) + \sum_i \big(\min_j G_{ij} - \langle G_{i:}, \hat M_{i:}\rangle\big),
    \qquad G = \nabla f(\hat M) + Y,\quad \nabla f(M) = \nabla_2 D_F(X, M X)\, X'.

Every check evaluates this bound at ``M̂ = M+`` for two multipliers and keeps the best bound so
far; each is exact on one side:

* ``Y = rho U+``: the Z-step makes ``Z+`` exactly optimal for ``g_2(Y)`` (so ``g_2 = -<Y, Z+>``,
  no eigenvalues), but the Frank-Wolfe term of ``g_1`` only vanishes as the residuals do;
* ``Y_M``, for which the M-step makes ``M+`` exactly optimal in ``g_1`` (linearised:
  ``Y_M = rho (M+ - V) + ell (M+ - M) + grad f(M) - grad f(M+)``; exact: ``rho (M+ - V)`` up
  to the inner tolerance), so the Frank-Wolfe term vanishes and ``g_2`` takes the top d - 1
  eigenvalues (LAPACK bisection, about 50 ms at t = 1000).

Late in a solve the second is much tighter (Digits, KL, t = 300, iteration 350: relative gap of
f(M) to the first 5.7e-5, to the second 2e-7; the bound along the segment between the two
multipliers is linear, so neither a mixture nor an extrapolation does better), and stopping
needed about half the iterations at t = 1000 (KL 411 against 751).  The bound is certified (up
to floating point) at every check, not an estimate.

Feasible output
---------------
``Z`` is in M2 (symmetric, ``0 <= Z <= I``, ``tr Z <= d``, ``Z 1 = 1``) but may have small
negative entries.  ``J = 11'/t`` lies in M1 and M1, M2 are convex, so
``(1 - s) Z + s J`` stays in M2 for every s in [0, 1] and is entrywise nonnegative for
``s = t n / (1 + t n)``, ``n = max(0, -min Z)``: an exactly feasible point of M1 at an
objective change of order ``t n``.  The solver stops when the certified relative gap of that
point, ``(f(restored) - g) / |f(restored)|``, is below ``tol`` and the relative primal and dual
residuals are below ``residual_tol``.

Mixing with J is what limited the speed: the gap of the *infeasible* M iterate against the
bound reaches 1e-4 three to five times sooner than that of the restored point (t = 100,
Euclidean: iteration ~400 vs ~1500; t = 300: ~540 vs ~2700), because mixing in ``J`` costs
``t n (f(J) - f(Z))`` and every point of M1 has entries of average size ``1/t``.  So once the
M-step iterate (in S) is within ``tol`` of the bound, checks also *polish*: they restore the end
point of (relaxed) alternating projections between M2 and S started from M, which converge to a
point of M1 near M, so the negativity ``n`` left for the mixing, and its cost, shrink with every
round (:class:`_FeasiblePoint`, which also decides when a polish is worth its eigendecompositions).
When polishing was introduced, with the ADMM of that time (exact M-step, one bound), Digits
(Euclidean, d = 10) needed 136 instead of 386 iterations at t = 100 and 286 instead of 761 at
t = 300.  What the polished point still loses is proportional to the primal residual (about
1.2-1.8 times the relative residual at t = 1000, Euclidean and KL; about 0.9 at t = 300), so
with the second bound (above) the residual, not the bound, decides when the solvers stop.  The
history records
the objective of M with ``dual_bound``, ``restored_objective`` (the better restored point) and
``polished_objective``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .._checks import (
    check_data_matrix,
    check_int_range,
    check_n_clusters,
    check_positive,
)
from .._relaxation import Relaxation
from ..linalg import project_simplex_rows
from .._stopping import IterationMonitor, balance_penalty
from ._problem import conditional_jc_problem
from .divergences import Divergence, GeneralizedKL, get_divergence
from .sets import M2Projector, _double_center, residuals_M1

__all__ = ["ConditionalJC"]


class ConditionalJC(Relaxation):
    r"""The convex relaxation (10) of Bregman hard clustering over M1 (Section 3.1)::

        minimize    D_F(X, M X) = sum_i D_F(X_{i:}, M_{i:} X)
        subject to  M in M1 = {M : 0 <= M <= I, tr(M) <= d, M_{i:} in Delta_t}

    for a divergence D_F that is jointly convex (so the objective is convex in M).  On a
    normalized equivalence matrix (9) ``M = Y (Y'Y)^+ Y'`` the objective is the Bregman
    hard-clustering objective ``D_F(X, Y Gamma)`` with ``Gamma = (Y'Y)^+ Y'X`` the cluster
    means, so the optimum of (10) over M1 is a lower bound on the best hard clustering.

    Methods: ``"reference"`` (cvxpy; Clarabel or SCS), ``"admm"`` (the ADMM of Section 3.1.1
    with a certified dual bound, its M-step linearised by default, see
    :mod:`cvxclust.bregman._conditional_jc`; the default for the non-quadratic divergences) and
    ``"davis-yin"`` (three-operator splitting of the same problem with one gradient step per
    iteration and a global step size, for the quadratic divergences, where it is the default;
    see :mod:`cvxclust.bregman._davis_yin`).

    Parameters
    ----------
    X : array_like, shape (t, n)
        Data, one point per row, in the domain of the divergence (nonnegative for ``"kl"``,
        strictly inside (0, 1) for ``"logistic"``).
    divergence : str or Divergence
        A jointly convex divergence: ``"euclidean"``, ``"kl"``, ``"logistic"`` (aliases
        ``"linear"``, ``"poisson"``, ``"sigmoid"``, ``"bernoulli"``) or a
        :class:`~cvxclust.bregman.divergences.Divergence` instance (e.g. ``Mahalanobis(W)``).
    n_clusters : int
        d, ``2 <= d <= t``.

    Raises
    ------
    ValueError
        Naming ``divergence`` if it is unknown or not jointly convex (use the conditional
        relaxation (15)/(17) for those), ``X`` if it is not a finite matrix in the divergence's
        domain, ``n_clusters`` if out of range.
    """

    name = "ConditionalJC"

    @classmethod
    def from_catalogue(cls, K, X, y, table):
        """Build from a catalogue file (``cvxclust validate``): the data of its ``[data]`` table
        and the top-level keys ``divergence`` and ``n_clusters``; a kernel, if the file gives one,
        is not used."""
        for key in ("divergence", "n_clusters"):
            if key not in table:
                raise ValueError(f"{key} is required (a top-level key of the file)")
        return cls(X, table["divergence"], table["n_clusters"])

    def __init__(self, X, divergence, n_clusters):
        if isinstance(divergence, str) and divergence.lower() == "mahalanobis":
            raise ValueError("divergence='mahalanobis' needs its weight matrix: pass Mahalanobis(W) instead")
        self.divergence: Divergence = get_divergence(divergence)
        if not self.divergence.jointly_convex:
            raise ValueError(
                f"divergence {self.divergence.name!r} is not jointly convex, so D_F(X, M X) is not convex "
                "in M and (10) is not a convex problem; use the conditional relaxation (15)/(17)"
            )
        X = check_data_matrix(X, "X")
        self.X = self.divergence.check_domain(X, "X")
        self.t, self.n = self.X.shape
        self.n_clusters = check_n_clusters(n_clusters, self.t)

    @property
    def default_method(self) -> str:
        """``"davis-yin"`` for a quadratic divergence (its gradient is Lipschitz), else ``"admm"``."""
        return "davis-yin" if self.divergence.quadratic else "admm"

    # -- the statement -------------------------------------------------------------------
    def problem(self):
        """The cvxpy statement (10) over M1; see
        :func:`~cvxclust.bregman._problem.conditional_jc_problem`."""
        return conditional_jc_problem(self.X, self.divergence, self.n_clusters)

    def objective(self, M) -> float:
        """``D_F(X, M X)``; ``inf`` where ``M X`` leaves the domain of F (as in the cvxpy atoms)."""
        M = self._check_M(M)
        try:
            return self.divergence.divergence(self.X, M @ self.X)
        except ValueError:
            return float("inf")

    def residuals(self, M) -> dict[str, float]:
        """Violations of M1 (:func:`~cvxclust.bregman.sets.residuals_M1`): ``symmetry``,
        ``psd``, ``upper``, ``trace``, ``row_sums``, ``nonnegativity``; all absolute, as the
        set is scale-free."""
        return residuals_M1(self._check_M(M), self.n_clusters)

    def _check_M(self, M) -> np.ndarray:
        M = np.asarray(M, dtype=float)
        if M.shape != (self.t, self.t):
            raise ValueError(f"M must have shape {(self.t, self.t)}, got {M.shape}")
        return M

    # -- pieces of the solver ------------------------------------------------------------
    def gradient(self, M) -> np.ndarray:
        r"""``grad f(M) = grad_2 D_F(X, M X) X'`` (chain rule; t x t), for M with M X in the domain.

        For the generalized KL divergence, entries with ``x = (M X) = 0`` get the one-sided
        derivative 1 of ``y -> kl_div(0, y) = y`` at 0+ (``gradient_second`` gives 0/0 there).
        """
        M = self._check_M(M)
        return self._gradient_from(M @ self.X)

    def _gradient_from(self, MX: np.ndarray) -> np.ndarray:
        G = self.divergence.gradient_second(self.X, MX)
        if isinstance(self.divergence, GeneralizedKL):
            G = np.where((self.X == 0) & (MX == 0), 1.0, G)
        return G @ self.X.T

    def _rows(self, MX: np.ndarray) -> np.ndarray:
        return self.divergence.divergence_rows(self.X, MX)

    def restore(self, Z: np.ndarray) -> np.ndarray:
        """An exactly feasible point of M1 from ``Z`` in M2: ``(1 - s) Z + s 11'/t`` with the
        smallest s making it nonnegative (see the module docstring)."""
        Z = (Z + Z.T) / 2
        neg = max(0.0, -float(Z.min()))
        if neg == 0.0:
            return Z
        s = self.t * neg / (1.0 + self.t * neg)
        return (1.0 - s) * Z + s / self.t

    def dual_value(self, Y: np.ndarray, M_hat: np.ndarray, Z: np.ndarray | None = None) -> float:
        r"""The certified lower bound ``g_1`` (Frank-Wolfe bound at ``M_hat`` in S) ``+ g_2``
        (exact) on the optimum of (10) over M1, for any multiplier ``Y`` of ``M = Z`` (module
        docstring).  ``M_hat`` must have rows in the simplex.

        ``g_2`` takes a partial eigendecomposition of ``H Y H``, unless ``Z`` is given: a
        minimiser of ``-<Y, Z>`` over M2, i.e. ``Y`` in the normal cone of M2 at ``Z``, as for
        ``Z = P_M2(V)`` and ``Y = c (V - Z)`` with ``c > 0`` (the Z-steps of the solvers).  Then
        ``g_2 = -<Y, Z>`` needs no eigenvalues.
        """
        return self._best_dual_value(M_hat, [(Y, Z)])

    def _best_dual_value(self, M_hat: np.ndarray, multipliers) -> float:
        """The best :meth:`dual_value` over ``(Y, Z)`` pairs at one ``M_hat`` (f and its
        gradient at ``M_hat`` are computed once)."""
        MX = M_hat @ self.X
        grad, f = self._gradient_from(MX), self._rows(MX).sum()
        return max(self._g1(grad, f, Y, M_hat) + self._g2(Y, Z) for Y, Z in multipliers)

    @staticmethod
    def _g1(grad: np.ndarray, f: float, Y: np.ndarray, M_hat: np.ndarray) -> float:
        G = grad + Y
        phi = f + float(np.sum(Y * M_hat))
        return phi + float(np.sum(G.min(axis=1)) - np.sum(G * M_hat))

    def _g2(self, Y: np.ndarray, Z: np.ndarray | None) -> float:
        if Z is not None:
            return -float(np.sum(Y * Z))
        t, d = self.t, self.n_clusters
        C = _double_center(Y)
        try:
            # bisection (syevx) for the d - 1 values: 53 ms against 84 ms for MRRR at t = 1000
            top = sla.eigh(C, eigvals_only=True, subset_by_index=(t - d + 1, t - 1), driver="evx",
                           check_finite=False)
        except np.linalg.LinAlgError:
            # LAPACK's partial drivers can fail on tight eigenvalue clusters (MRRR did, with
            # single-thread OpenBLAS, on a triple eigenvalue); the full symmetric QR algorithm does not
            top = np.linalg.eigvalsh(C)[t - d + 1:]
        return -float(Y.sum()) / t - float(np.maximum(top, 0.0).sum())


def _m_step(relax: ConditionalJC, V, M0, rho, L, tol, max_iter, check_every=3):
    r"""``argmin_{M in S} phi(M) = f(M) + rho/2 ||M - V||^2`` row by row, all rows at once.

    Accelerated projected gradient with feasible iterates (Tseng 2008, "variant 1";
    Auslender & Teboulle 2006)::

        y = (1 - th) x + th z,   z+ = P_S(z - grad phi(y) / (th L)),   x+ = (1 - th) x + th z+,
        th+ = (sqrt(th^4 + 4 th^2) - th^2) / 2,

    per row, with per-row Lipschitz estimates ``L`` (backtracking on the usual sufficient
    decrease test, doubled where it fails; halved on entry so they can adapt downwards), a
    per-row restart (th = 1, z = x) where phi_i increased or the step opposes the gradient
    (O'Donoghue & Candes 2015), and th kept above ``sqrt(rho / L_i)`` (phi is rho-strongly
    convex).  Stops when the gradient mapping ``G = L (x - P_S(x - grad phi(x)/L))`` has
    Frobenius norm ``<= rho * tol``: for the rho-strongly convex phi,
    ``||x - M*|| <= ||G|| / L + 2 ||G|| / rho <= 3 tol``.

    ``L`` (shape (t,)) is updated in place.  Returns the M-step iterate (rows in the simplex)
    and the number of iterations.
    """
    X = relax.X
    t = relax.t

    def phi_rows(M, MX):
        return relax._rows(MX) + 0.5 * rho * np.sum((M - V) ** 2, axis=1)

    def grad(M, MX):
        return relax._gradient_from(MX) + rho * (M - V)

    L *= 0.5
    np.maximum(L, rho, out=L)
    x = M0
    z = M0.copy()
    th = np.ones(t)
    phix = phi_rows(x, x @ X)
    it = 0
    for it in range(1, max_iter + 1):
        y = (1.0 - th)[:, None] * x + th[:, None] * z
        MXy = y @ X
        phiy = phi_rows(y, MXy)
        g = grad(y, MXy)
        zn = np.empty_like(z)
        xn = np.empty_like(x)
        phin = np.empty(t)
        rows = slice(None)  # every row on the first pass (views, no copies); then the failing ones
        for _ in range(60):
            z_r = project_simplex_rows(z[rows] - g[rows] / (th[rows] * L[rows])[:, None])
            x_r = (1.0 - th[rows])[:, None] * x[rows] + th[rows][:, None] * z_r
            phi_r = relax.divergence.divergence_rows(X[rows], x_r @ X) + 0.5 * rho * np.sum(
                (x_r - V[rows]) ** 2, axis=1)
            zn[rows], xn[rows], phin[rows] = z_r, x_r, phi_r
            step = x_r - y[rows]
            model = phiy[rows] + np.sum(g[rows] * step, axis=1) + 0.5 * L[rows] * np.sum(step * step, axis=1)
            bad = phi_r > model + 1e-12 * (np.abs(phiy[rows]) + 1.0)
            if not bad.any():
                break
            rows = np.flatnonzero(bad) if isinstance(rows, slice) else rows[bad]
            L[rows] *= 2.0
        # restart where phi_i rose or the step opposes the gradient (O'Donoghue & Candes 2015);
        # th never drops below sqrt(rho / L_i), the momentum of the rho-strongly convex case
        restart = (phin > phix) | (np.sum(g * (xn - x), axis=1) > 0)
        z = np.where(restart[:, None], xn, zn)
        th = np.where(restart, 1.0, np.maximum((np.sqrt(th**4 + 4 * th**2) - th**2) / 2, np.sqrt(rho / L)))
        x, phix = xn, phin
        if it % check_every == 0 and it < max_iter:  # the last iteration stops anyway
            p = project_simplex_rows(x - grad(x, x @ X) / L[:, None])
            if np.linalg.norm(L[:, None] * (x - p)) <= rho * tol:
                break
    return x, it


def _linearized_m_step(relax: ConditionalJC, M, MX, V, rho, ell, thresholds, multiplier=False):
    r"""One proximal-gradient step on the M-step: f linearised at the current ``M`` (in S)::

        M+ = argmin_{M' in S} <grad f(M), M'> + ell_i/2 ||M'_i: - M_i:||^2 + rho/2 ||M' - V||^2
           = P_S((ell M + rho V - grad f(M)) / (ell + rho))          (row i with ell_i),

    the M-step of the linearised (proximal) ADMM (Lin, Liu & Su 2011; Ouyang et al. 2015), row
    by row with a per-row weight ``ell_i`` >= the curvature of ``f_i`` between ``M`` and ``M+``:
    the rows where the descent lemma ``f_i(M+) <= f_i(M) + <grad f_i, M+ - M> + ell_i/2
    ||M+ - M||^2`` fails double ``ell_i`` and are recomputed (the divergences other than the
    squared Euclidean one have no global constant on S); rows that passed with a measurable
    curvature term shrink ``ell_i`` by 10% for the next call, so that it can follow the curvature
    down.  Every point evaluated is in S, so ``M X`` stays in the
    domain of F.

    ``ell`` (shape (t,)) is updated in place; ``MX = M @ X`` and ``thresholds`` (the previous
    simplex thresholds, or None) warm-start the work.  Returns ``M+``, ``M+ X``, the new
    thresholds and, if ``multiplier``, the multiplier for which ``M+`` is *exactly* optimal::

        Y_M = rho (M+ - V) + ell (M+ - M) + grad f(M) - grad f(M+),

    since the step's optimality condition reads ``-(grad f(M+) + Y_M) in N_S(M+)``: M+ minimises
    ``f + <Y_M, .>`` over S, so the Frank-Wolfe term of the bound (:meth:`ConditionalJC.dual_value`)
    vanishes for Y_M (else None).
    """
    X = relax.X
    G = relax._gradient_from(MX)
    f_rows = relax._rows(MX)

    def step(rows):
        e = ell[rows, None]
        B = M[rows] * e
        B += rho * V[rows]
        B -= G[rows]
        B /= e + rho
        return B

    M_new, thresholds = project_simplex_rows(step(slice(None)), start=thresholds, return_thresholds=True)
    MX_new = M_new @ X
    # the divergence rows are sums of nonnegative terms, accurate to about 1e-14 relative: the
    # slack of the test is above that, and ell only shrinks where the curvature term is well above
    # the slack (else tiny late steps would hide the curvature, ell would shrink unchecked and the
    # iteration oscillate)
    slack = 1e-12 * np.abs(f_rows)
    rows = np.arange(relax.t)
    shrink = None
    for _ in range(60):
        D = M_new[rows] - M[rows]
        curvature = 0.5 * ell[rows] * np.einsum("ij,ij->i", D, D)
        model = f_rows[rows] + np.einsum("ij,ij->i", G[rows], D) + curvature
        bad = relax.divergence.divergence_rows(X[rows], MX_new[rows]) > model + slack[rows]
        if shrink is None:
            shrink = ~bad & (curvature > 1e3 * slack)
        if not bad.any():
            break
        rows = rows[bad]
        ell[rows] *= 2.0
        M_new[rows], thresholds[rows] = project_simplex_rows(step(rows), return_thresholds=True)
        MX_new[rows] = M_new[rows] @ X
    Y = None
    if multiplier:
        Y = M_new - V
        Y *= rho
        Y += ell[:, None] * (M_new - M)
        Y += G
        Y -= relax._gradient_from(MX_new)
    ell[shrink] *= 0.9  # so that ell can follow the curvature down
    return M_new, MX_new, thresholds, Y


class _FeasiblePoint:
    """The best exactly feasible point of M1 found by the checks of a solver (module docstring).

    Each check restores the Z iterate (in M2).  Once the M iterate (in S) is within ``tol`` of
    the bound, a check may also *polish*: run relaxed alternating projections between M2 and S
    from M (:func:`_alternating_projections`), restoring their end point after every 5 rounds
    while that improves the objective by more than ``tol / 10`` (relative) and the point does
    not yet pass the gap test, up to ``rounds`` rounds.  The polished point is about the
    nearest point of M1 to M, and what it loses in objective is proportional to the primal
    residual ``||M - Z||`` (Digits, t = 1000: loss / relative residual = 1.6 to 1.5 over
    iterations 350-720, while the M gap fell 40-fold).
    A polish costs an eigendecomposition per round (the full one at t = 1000: some 250-350
    eigenvalues are active, too many for a partial one), so after the first it runs only when it can
    finish the solve: when the M gap plus the last loss, scaled by the residual, is below
    ``tol`` (and the residual fell 5% since), or, to recalibrate, when the residual fell tenfold
    since.  (Digits, KL, t = 1000: loss / residual = 1.15 to 1.47 over iterations 80-410; a rule
    that also polished whenever the residual halved spent half of the solve in polishes that could
    not finish it.)
    """

    def __init__(self, relax: ConditionalJC, tol: float, rounds: int, partial_eig: bool):
        self.relax, self.tol, self.rounds = relax, tol, rounds
        self.project = M2Projector(relax.t, relax.n_clusters, partial=partial_eig)
        J = np.full((relax.t, relax.t), 1.0 / relax.t)
        self.X, self.f = J, relax.objective(J)
        self._last: tuple[float, float] | None = None  # (primal residual, relative loss) at the last polish

    def update(self, M: np.ndarray, f_M: float, Z: np.ndarray, bound: float, row: dict) -> float:
        """Restore ``Z`` (and polish from ``M`` when due); record the figures in ``row`` (which
        must hold the ``primal_residual`` of M and Z); return the certified relative gap of the
        best point so far."""
        relax = self.relax
        X = relax.restore(Z)
        f_X = relax.objective(X)
        gap_M = (f_M - bound) / max(abs(f_M), 1e-300)
        residual = row["primal_residual"]
        if self.rounds and gap_M <= self.tol and self._due(gap_M, residual):
            X_p, f_p = self._polish(M, bound)
            row["polished_objective"] = f_p
            self._last = (residual, (f_p - f_M) / max(abs(f_M), 1e-300))
            if f_p < f_X:
                X, f_X = X_p, f_p
        if f_X < self.f:
            self.X, self.f = X, f_X
        gap = (self.f - bound) / max(abs(self.f), 1e-300)
        row.update(dual_bound=bound, restored_objective=f_X, relative_gap=gap)
        return gap

    def _due(self, gap_M: float, residual: float) -> bool:
        if self._last is None:
            return True
        last_residual, loss = self._last
        shrink = residual / max(last_residual, 1e-300)
        return (gap_M + max(loss, 0.0) * shrink <= self.tol and shrink <= 0.95) or shrink <= 0.1

    def _polish(self, M: np.ndarray, bound: float) -> tuple[np.ndarray, float]:
        """The best restored point of the alternating projections from M and its objective.
        Stops after a block of 5 rounds when the point passes the gap test against ``bound``,
        when the block gained less than ``tol / 10`` or when the objective rose."""
        relax, tol = self.relax, self.tol
        best, f_best = None, np.inf
        for r, W in enumerate(_alternating_projections(M, self.project), start=1):
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


def _alternating_projections(M: np.ndarray, project_M2, relaxation: float = 1.9):
    """Relaxed alternating projections onto M2 and S from ``M`` in S: yields the M2 point of every
    round ``W+ = P_M2(W + lambda (P_S(W) - W))``.  For ``lambda`` in (0, 2) the map is a
    composition of averaged operators whose fixed points are ``M1 = S ∩ M2``, so the rounds
    converge to a point of M1, which leaves less negativity for :meth:`ConditionalJC.restore` to
    mix away.  Over-relaxing the projection onto S halves the rounds: Digits, t = 1000, from the
    iterate at 500 Davis-Yin iterations, the restored point is within 2e-6 of its limit after 20
    rounds with ``lambda = 1.9``, 40 with 1 (von Neumann's method), and the limit is no worse.
    After the first round the projections are warm-started (:meth:`M2Projector.approximate`):
    every yielded point is in M2 all the same."""
    W = project_M2(M)
    while True:
        yield W
        W = project_M2.approximate(W + relaxation * (project_simplex_rows(W) - W))


def admm(
    relaxation: ConditionalJC,
    *,
    tol: float = 1e-6,
    residual_tol: float = 1e-4,
    max_iter: int = 5000,
    time_limit: float = np.inf,
    rho: float | None = None,
    alpha: float = 1.8,
    mu: float = 2.0,
    adapt_every: int = 5,
    check_every: int = 10,
    inner_max_iter: int = 300,
    inner_factor: float = 0.1,
    partial_eig: bool = True,
    polish_rounds: int = 50,
    approximate_projections: bool = True,
    m_step: str = "linearized",
    verbose: bool = False,
):
    """Solve (10) over M1 by the ADMM of Section 3.1.1; see the module docstring.

    Parameters
    ----------
    tol : float
        Stop when the certified relative gap ``(f(X) - g) / |f(X)|`` of the exactly feasible
        restored point X is below ``tol`` (g the best dual bound so far) ...
    residual_tol : float
        ... and the relative primal residual ``||M - Z|| / max(||M||, ||Z||)`` and dual
        residual ``rho ||Z - Z_prev|| / ||rho U||`` are below ``residual_tol``.
    max_iter, time_limit : int, float
        Limits; hitting one gives status ``"max_iter"``/``"time_limit"`` and a
        ConvergenceWarning, and the restored point of the last Z with the best bound.
    rho : float, optional
        Initial penalty (the paper's ``1/mu``); default ``||grad f(J)||_F`` at the barycentre
        ``J = 11'/t``, so that both terms of the first M-step weigh alike.  Residual balancing
        adapts it anyway (measured: the iteration count hardly depends on it).
    alpha : float
        Over-relaxation in (0, 2): the Z- and U-steps use ``alpha M + (1 - alpha) Z_prev``
        instead of M (Boyd et al. 2010, 3.4.3); the dual bound holds for every multiplier.
        Digits, linearised, t = 300: 1.8 needs 12-20% fewer iterations than 1.6 (KL 361 against
        411, Euclidean 261 against 291), 1.9 no fewer than 1.8.
    mu, adapt_every : float, int
        Residual balancing: rho is doubled or halved every ``adapt_every`` iterations when the
        primal and dual residuals differ by more than the factor ``mu``.
    check_every : int
        Period of the checks: the exact Z-step, the two dual bounds (one needs the top d - 1
        eigenvalues), the restoration, and the residuals and objective in the history (which
        also records them where the penalty is balanced).
    m_step : {"linearized", "exact"}
        One proximal-gradient step on f per iteration (:func:`_linearized_m_step`; the default,
        about 3x faster on Digits at t = 300) or the paper's M-step solved to an inner tolerance
        by accelerated projected gradient (:func:`_m_step`).
    inner_max_iter, inner_factor : int, float
        ``m_step="exact"`` only: the M-step runs until the distance bound of its iterate to the
        exact M-step is below ``inner_factor`` times the last primal and dual residuals
        (absolute, in M's units), or ``inner_max_iter`` iterations.
    partial_eig : bool
        Let :class:`~cvxclust.bregman.sets.M2Projector` compute only the top of the spectrum.
    polish_rounds : int
        Once the M-step iterate is within ``tol`` of the dual bound, checks also restore the
        end point of up to this many alternating projections between M2 and S started at it,
        when that can finish the solve (:class:`_FeasiblePoint`), and keep the better feasible
        point; 0 turns this off.
    approximate_projections : bool
        Between checks, replace the Z-step by :meth:`~cvxclust.bregman.sets.M2Projector.approximate`
        (a warm-started Rayleigh-Ritz step, a point of M2 near the projection); the checks, whose
        bound needs the exact projection, keep it.
    verbose : bool
        Show a progress bar.
    """
    check_positive(tol, "tol")
    check_positive(residual_tol, "residual_tol")
    check_positive(mu, "mu")
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 2:
        raise ValueError(f"alpha must lie in (0, 2), got {alpha!r}")
    check_positive(inner_factor, "inner_factor")
    for value, name in [(adapt_every, "adapt_every"), (check_every, "check_every"),
                        (inner_max_iter, "inner_max_iter")]:
        check_int_range(value, name, 1)
    polish_rounds = check_int_range(polish_rounds, "polish_rounds", 0)
    if m_step not in ("linearized", "exact"):
        raise ValueError(f"m_step must be 'linearized' or 'exact', got {m_step!r}")
    linearized = m_step == "linearized"
    relax = relaxation
    t, d = relax.t, relax.n_clusters
    monitor = IterationMonitor("admm", tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)
    project = M2Projector(t, d, partial=partial_eig)
    feasible = _FeasiblePoint(relax, tol, polish_rounds, partial_eig)

    J = np.full((t, t), 1.0 / t)
    if rho is None:
        # weigh both terms of the first M-step alike: the gradient of f at J against rho times a
        # distance of order 1 between points of S
        rho = max(float(np.linalg.norm(relax._gradient_from(J @ relax.X))), 1e-8)
    else:
        check_positive(rho, "rho")
    M, Z, U = J.copy(), J.copy(), np.zeros((t, t))
    MX = M @ relax.X
    L = np.full(t, float(rho))  # per-row curvature estimates of the M-step (of f when linearised)
    thresholds = None
    inner_tol = 1e-2
    bound = -np.inf
    for it in monitor:
        check = it % check_every == 0
        V = Z - U
        if linearized:
            M, MX, thresholds, Y_M = _linearized_m_step(relax, M, MX, V, rho, L, thresholds, multiplier=check)
            inner = 1
        else:
            M, inner = _m_step(relax, V, M, rho, L, inner_tol, inner_max_iter)
            MX = M @ relax.X
            # M is optimal for f + <Y_M, .> over S up to the inner tolerance
            Y_M = rho * (M - V) if check else None
        Z_prev = Z
        A = alpha * M + (1.0 - alpha) * Z_prev  # over-relaxation (Boyd et al. 2010, 3.4.3)
        A += U
        # the bound needs the exact projection; between checks a warm-started one does
        exact = check or not approximate_projections
        Z = project(A) if exact else project.approximate(A)
        U = A
        U -= Z  # U + (alpha M + (1 - alpha) Z_prev) - Z
        balance = (it + 1) % adapt_every == 0
        if linearized and not (check or balance):
            monitor.record()
            continue
        # the figures (five norms) only where a check, the penalty or the inner tolerance needs them
        dM, dZ = np.linalg.norm(M - Z), np.linalg.norm(Z - Z_prev)
        r_primal = dM / max(np.linalg.norm(M), np.linalg.norm(Z), 1e-300)
        r_dual = rho * dZ / max(rho * np.linalg.norm(U), 1e-300)
        inner_tol = max(inner_factor * min(dM, dZ), 1e-14)
        row = {"objective": float(relax._rows(MX).sum()), "primal_residual": r_primal,
               "dual_residual": r_dual, "rho": rho, "inner_iterations": inner}
        if check:
            # two multipliers: rho U = rho (A - Z) is in the normal cone of M2 at Z = P_M2(A), so
            # g_2 needs no eigenvalues; for Y_M the M-step makes the Frank-Wolfe term of g_1 vanish
            # (exactly when linearised), which is what limits the first bound late in a solve
            # (Digits, KL, t = 300: relative gap of M against it 5.7e-5 against 2e-7 at iteration 350)
            bound = max(bound, relax._best_dual_value(M, [(rho * U, Z), (Y_M, None)]))
            gap = feasible.update(M, row["objective"], Z, bound, row)
            if gap < tol and max(r_primal, r_dual) < residual_tol:
                monitor.record(**row)
                monitor.converged()
                break
        monitor.record(**row)
        rho, U = balance_penalty(it + 1, rho, U, r_primal, r_dual, mu, adapt_every)
    # an approximate Z is in M2 (so it can be restored) but not the minimiser g_2 needs
    return _finish(feasible, monitor, Z, bound, lambda: relax.dual_value(rho * U, M, Z=Z if exact else None))


def _finish(feasible: _FeasiblePoint, monitor: IterationMonitor, Z, bound, last_bound):
    """The result of a solver of (10): the best feasible point and bound, with the last iterate's
    (``Z`` and the callable ``last_bound``) considered once more if the solver stopped at a limit."""
    relax = feasible.relax
    if monitor.status != "optimal" and monitor.iterations > 0:
        bound = max(bound, last_bound())
        X = relax.restore(Z)
        f_X = relax.objective(X)
        if f_X < feasible.f:
            feasible.X, feasible.f = X, f_X
    return relax.make_result(
        feasible.X,
        status=monitor.status,
        method=monitor.method,
        iterations=monitor.iterations,
        time=monitor.elapsed,
        dual_bound=bound if np.isfinite(bound) else None,
        history=monitor.history,
    )


ConditionalJC.register_solver("admm", admm)
