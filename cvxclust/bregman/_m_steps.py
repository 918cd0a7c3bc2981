r"""The two M-steps of the ADMM for ``ConditionalJC`` (Section 3.1.1).

The M-step of the ADMM (:mod:`cvxclust.bregman._jc_admm`) is

.. math::

    M^+ = \arg\min_{M \in S} f(M) + \frac{\rho}{2}\|M - V\|_F^2,
    \qquad S = \{M : M_{i:} \in \Delta_t\},\quad f(M) = D_F(X, M X),

row-separable (row i only enters through ``M_{i:} X``).  :func:`linearized_m_step` takes one
proximal-gradient step on it (the linearised ADMM); :func:`exact_m_step` solves it to an inner
tolerance, as the paper states.  Either way every point evaluated is in S, so ``M X`` is a convex
combination of data rows and stays in the domain of F (nonnegative for KL, inside (0, 1) for
the logistic divergence), which an extrapolated (FISTA) point would leave.
"""

from __future__ import annotations

import numpy as np

from ..linalg import project_simplex_rows
from ._conditional_jc import ConditionalJC

__all__ = ["exact_m_step", "linearized_m_step"]


def exact_m_step(relax: ConditionalJC, V, M0, rho, L, tol, max_iter, check_every=3):
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
        return relax.row_objectives(MX) + 0.5 * rho * np.sum((M - V) ** 2, axis=1)

    def grad(M, MX):
        return relax.gradient_from(MX) + rho * (M - V)

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


def linearized_m_step(relax: ConditionalJC, M, MX, V, rho, ell, thresholds, scale, multiplier=False):
    r"""One proximal-gradient step on the M-step: f linearised at the current ``M`` (in S)::

        M+ = argmin_{M' in S} <grad f(M), M'> + ell_i/2 ||M'_i: - M_i:||^2 + rho/2 ||M' - V||^2
           = P_S((ell M + rho V - grad f(M)) / (ell + rho))          (row i with ell_i),

    the M-step of the linearised (proximal) ADMM (Lin, Liu & Su 2011; Ouyang et al. 2015), row
    by row with a per-row weight ``ell_i`` >= the curvature of ``f_i`` between ``M`` and ``M+``:
    the rows where the descent lemma ``f_i(M+) <= f_i(M) + <grad f_i, M+ - M> + ell_i/2
    ||M+ - M||^2`` fails double ``ell_i`` and are recomputed (the divergences other than the
    squared Euclidean one have no global constant on S); rows that passed with a measurable
    curvature term shrink ``ell_i`` by 10% for the next call, so that it can follow the curvature
    down.  Every point evaluated is in S, so ``M X`` stays in the domain of F.

    The descent test allows a slack for the rounding of the row objectives:
    ``1e-12 (|f_i(M)| + scale)``.  Rounding is relative to the size of a row's *terms*, not to
    its value: for KL, ``x log(x / y) - x + y`` cancels to about ``eps x`` when ``y = x``, so a
    row fitted exactly (duplicated points) has ``f_i`` at the rounding level, and a slack
    relative to ``f_i`` alone would double ``ell_i`` without end (to ``inf``, then NaN).
    ``scale`` (the mean row objective at ``11'/t``, the problem's own scale) gives the floor,
    and a row whose step is already zero in floating point is never doubled.

    ``ell`` (shape (t,)) is updated in place; ``MX = M @ X`` and ``thresholds`` (the previous
    simplex thresholds, or None) warm-start the work.  Returns ``M+``, ``M+ X``, the new
    thresholds and, if ``multiplier``, the multiplier for which ``M+`` is *exactly* optimal::

        Y_M = rho (M+ - V) + ell (M+ - M) + grad f(M) - grad f(M+),

    since the step's optimality condition reads ``-(grad f(M+) + Y_M) in N_S(M+)``: M+ minimises
    ``f + <Y_M, .>`` over S, so the Frank-Wolfe term of the bound
    (:meth:`~cvxclust.bregman.ConditionalJC.dual_value`) vanishes for Y_M (else None).
    """
    X = relax.X
    G = relax.gradient_from(MX)
    f_rows = relax.row_objectives(MX)

    def step(rows):
        e = ell[rows, None]
        B = M[rows] * e
        B += rho * V[rows]
        B -= G[rows]
        B /= e + rho
        return B

    M_new, thresholds = project_simplex_rows(step(slice(None)), start=thresholds, return_thresholds=True)
    MX_new = M_new @ X
    # ell only shrinks where the curvature term is well above the slack (else tiny late steps
    # would hide the curvature, ell would shrink unchecked and the iteration oscillate)
    slack = 1e-12 * (np.abs(f_rows) + scale)
    rows = np.arange(relax.t)
    shrink = None
    for _ in range(60):
        D = M_new[rows] - M[rows]
        curvature = 0.5 * ell[rows] * np.einsum("ij,ij->i", D, D)
        model = f_rows[rows] + np.einsum("ij,ij->i", G[rows], D) + curvature
        bad = relax.divergence.divergence_rows(X[rows], MX_new[rows]) > model + slack[rows]
        bad &= np.any(D != 0.0, axis=1)  # no weight changes a step that is already zero
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
        Y -= relax.gradient_from(MX_new)
    ell[shrink] *= 0.9  # so that ell can follow the curvature down
    return M_new, MX_new, thresholds, Y
