"""Exactly feasible points near the generic solver's iterates (see :func:`restore`,
:func:`polished` and :func:`scale_to_diagonal`)."""

from __future__ import annotations

import numpy as np

from .._array_api import add_to_diagonal, diagonal
from .device import moved, set_diagonal
from ..linalg import alternating_projections
from .compact import off_diagonal_all
from .standard_form import StandardForm
from .splitting import Splitting

__all__ = ["polished", "projected", "restore", "scale_to_diagonal", "within_residual"]


def restore(form: StandardForm, split: Splitting, Z: np.ndarray) -> np.ndarray | None:
    """An exactly feasible point near ``Z`` (in S, violating the box a little), or None.

    Where S fixes the row sums but not the trace, the off-diagonal violations are first moved
    onto the diagonal (``Z + N - Diag(N 1)`` keeps symmetry and row sums and lowers the
    smallest eigenvalue by at most twice the largest row of N, a Laplacian); then the point
    is mixed with a feasible ``a 11^T + b I`` (``(1 - theta) A + theta P``, convex, so S and
    the box are kept) for the smallest theta that repairs the remaining entries and, after
    the move, the p.s.d. constraint.  P is the point deepest in the cone, or, where that one
    touches a bound the point violates, the point halfway to the centre.
    """
    spectral = split.spectral
    if split.ties is not None:
        # the mix below would break ties that Z violates: only the box's projection repairs them
        return split.project_box(form, Z) if spectral.trivial else None
    device = not isinstance(Z, np.ndarray)  # on a device: the form's bounds are held there
    if not (form.L.finite or form.U.finite if device else np.isfinite(form.L).any() or np.isfinite(form.U).any()):
        return Z
    scaled = scale_to_diagonal(form, Z)
    if scaled is not None:
        return scaled
    if spectral.trivial:
        return form.clip(Z)  # the box is the only constraint: its projection
    if split.centre is None:
        return None
    if spectral.beta is not None and spectral.trace is None and split.psd_centre is not None and device:
        return _device_moved(form, split, Z)
    if spectral.beta is not None and spectral.trace is None and split.psd_centre is not None:
        off = ~np.eye(form.n, dtype=bool)
        N = np.where(off, np.maximum(form.L - Z, 0.0), 0.0) - np.where(off, np.maximum(Z - form.U, 0.0), 0.0)
        if np.any(N):
            A = Z + N
            A[np.diag_indices(form.n)] -= N.sum(axis=1)
            shift = 2.0 * float(np.abs(N).sum(axis=1).max())
            halfway = (split.psd_centre + split.centre) / 2
            for partner in (split.psd_centre, halfway):
                X = _mix(form, A, partner, shift)
                if X is not None:
                    return X
            return None
    return _mix(form, Z, split.centre, 0.0)


def polished(form: StandardForm, split: Splitting, Z: np.ndarray):
    """Exactly feasible points near ``Z`` (in S): the restored (:func:`restore`) point of every
    round of relaxed alternating projections between S and the box started at ``Z``
    (:func:`cvxclust.linalg.alternating_projections`; one projection onto S per round).

    :func:`restore` repairs a violation of the box by mixing in a point of the interior, whose
    entries may be small (``1/n`` for unit row sums): the repair costs the violation times
    about n in objective.  The rounds converge to a point of the intersection near ``Z``, so
    the violation left to repair, and its cost, shrink with every round, and what the point
    still loses is of the order of its distance to ``Z``.  The generator stops where a round
    cannot be restored; otherwise the caller decides when to stop.
    """
    for W in projected(form, split, Z):
        X = restore(form, split, W)
        if X is None:
            return
        yield X


def projected(form: StandardForm, split: Splitting, Z: np.ndarray):
    """The points in S of the rounds of relaxed alternating projections between S and the box
    (with its ties) started at ``Z`` (:func:`cvxclust.linalg.alternating_projections`), Z
    itself left out; the generator never ends."""
    rounds = alternating_projections(Z, split.spectral.project, lambda W: split.project_box(form, W))
    next(rounds)  # Z itself
    yield from rounds


def within_residual(form: StandardForm, split: Splitting, Z: np.ndarray, residual_tol: float,
                    rounds: int) -> tuple[np.ndarray, float] | None:
    """The first of at most ``rounds`` points of :func:`projected` from ``Z`` whose residuals (S's
    constraints hold by construction) are at most ``residual_tol``, with its worst residual; None
    where none is.  Where no restoration to exact feasibility applies (entries tied by rows), the
    ADMM's iterate may meet the gap long before its residuals fall below ``residual_tol``; a few
    rounds take them there at about their distance to the iterate in objective."""
    for r, W in enumerate(projected(form, split, Z), start=1):
        worst = max(form.residuals(W, spectrum=False).values(), default=0.0)
        if worst <= residual_tol:
            return W, worst
        if r >= rounds:
            return None


def _device_moved(form, split: Splitting, Z):
    """:func:`restore`'s move of the off-diagonal violations onto the diagonal and its mix, on a device."""
    xp = form.xp
    N = form.L.entries(lambda z, low, high: xp.maximum(low - z, 0.0) - xp.maximum(z - high, 0.0), Z, form.U)
    N = N - add_to_diagonal(xp.zeros_like(N), diagonal(N, xp), xp)  # nothing on the diagonal
    if not bool(xp.any(N != 0)):
        return _mix(form, Z, split.centre, 0.0)
    A = add_to_diagonal(Z + N, -xp.sum(N, axis=1), xp)
    shift = 2.0 * float(xp.max(xp.sum(xp.abs(N), axis=1)))
    for partner in (split.psd_centre, (split.psd_centre + split.centre) / 2):
        X = _mix(form, A, partner, shift)
        if X is not None:
            return X
    return None


def _mix(form: StandardForm, A: np.ndarray, partner: np.ndarray, shift: float) -> np.ndarray | None:
    """``(1 - theta) A + theta partner`` for the smallest theta that satisfies the box and
    (when ``shift > 0``, A's smallest eigenvalue being at least ``-shift``) the cone; None
    where no theta in [0, 1] does."""
    if not isinstance(A, np.ndarray):
        return _device_mix(form, A, partner, shift)
    low, high = A < form.L, A > form.U
    if not (low.any() or high.any()) and shift == 0.0:
        return A
    # a violated entry where the partner is not strictly inside cannot be repaired by mixing
    if np.any(low & (partner <= form.L)) or np.any(high & (partner >= form.U)):
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        need = np.zeros_like(A)
        need[low] = (form.L[low] - A[low]) / (partner[low] - A[low])
        need[high] = (A[high] - form.U[high]) / (A[high] - partner[high])
    return _mixed(form, A, partner, float(need.max(initial=0.0)), shift)


def _mixed(form, A, partner, theta: float, shift: float):
    """The mix of :func:`_mix` at ``theta``, raised to repair the cone where ``shift > 0``."""
    if shift > 0:
        n = form.n
        a = float(partner[0, 1]) if n > 1 else 0.0
        margin = min(float(partner[0, 0]) - a, float(partner[0, 0]) - a + n * a)  # smallest eigenvalue of a 11' + b I
        if margin <= 0:
            return None
        theta = max(theta, shift / (shift + margin))  # (1 - theta)(-shift) + theta margin >= 0
    if not 0 <= theta <= 1:
        return None
    X = (1.0 - theta) * A + theta * partner
    return form.clip(X)  # rounding only: theta makes every entry feasible


def _device_mix(form, A, partner, shift: float):
    """:func:`_mix` on a device (the bounds as the device form holds them)."""
    xp = form.xp

    def need(a, p, low, high):  # the theta each entry needs; inf where the partner cannot repair it
        below, above = a < low, a > high
        low_need = xp.where(below & (p > low), (low - a) / xp.where(below, p - a, 1.0), xp.inf)
        high_need = xp.where(above & (p < high), (a - high) / xp.where(above, a - p, 1.0), xp.inf)
        return xp.where(below, low_need, xp.where(above, high_need, 0.0))

    theta = float(xp.max(form.L.entries(need, (A, partner), form.U)))
    if theta == 0.0 and shift == 0.0:
        return A
    return _mixed(form, A, partner, theta, shift) if np.isfinite(theta) else None


def scale_to_diagonal(form: StandardForm, X: np.ndarray) -> np.ndarray | None:
    r"""``D^{-1/2} X' D^{-1/2}``, exactly feasible, where the constraints allow it; None elsewhere.

    It applies where ``form`` has no rows, fixes some diagonal entries to positive values
    (``L_ii = U_ii > 0``: ``diag(X) == 1``), and every other bound is invariant under
    ``X -> D X D`` for a positive diagonal D: sign bounds (``L_ij`` 0 or ``-inf``, ``U_ij`` 0 or
    ``+inf``; on a diagonal entry that is not fixed, ``L_ii`` 0 or ``-inf`` and no upper bound).
    ``X`` is symmetric (p.s.d. where the form has ``X >> 0``).  First the violations N of the
    sign bounds off the diagonal are repaired and ``Diag(|N| 1)`` added (``N + Diag(|N| 1)`` is
    diagonally dominant, so ``X' = X + N + Diag(|N| 1)`` stays p.s.d.); then
    ``D = Diag(X'_ii / target_i)`` on the fixed entries (1 elsewhere) scales the diagonal onto
    its targets.  A congruence keeps ``X' >> 0``, and positive scaling keeps every sign, so
    the point meets every constraint up to the rounding of the product (the fixed entries are
    set exactly).  Its distance to X is of the order of X's violations.  None also where a
    diagonal entry to be scaled is not positive.
    """
    device = not isinstance(X, np.ndarray)
    L, U = (form.host.L, form.host.U) if device else (form.L, form.U)  # the checks read the host's bounds
    n = form.n
    if form.m:
        return None
    d_low, d_high = np.diagonal(L), np.diagonal(U)
    fixed = np.isfinite(d_low) & (d_low == d_high)
    if not fixed.any() or np.any(d_low[fixed] <= 0):
        return None
    free = ~fixed
    if np.any(np.isfinite(d_high[free])) or np.any(np.isfinite(d_low[free]) & (d_low[free] != 0)):
        return None
    if not off_diagonal_all(lambda low, high: (~np.isfinite(low) | (low == 0)) & (~np.isfinite(high) | (high == 0)),
                            L, U):
        return None
    if device:
        return _device_scaled(form, X, fixed, d_low)
    X = np.array(X, dtype=float)  # a copy: the caller's point is kept
    N = np.maximum(L - X, 0.0) - np.maximum(X - U, 0.0)
    N[np.diag_indices(n)] = 0.0
    if np.any(N):
        X += N
        X[np.diag_indices(n)] += np.abs(N).sum(axis=1)
    diagonal = np.diagonal(X).copy()
    # a free diagonal entry below its bound 0 (X not p.s.d.): raising the diagonal keeps X' >> 0
    raised = free & (diagonal < d_low)
    X[raised, raised] = diagonal[raised] = d_low[raised]
    if np.any(diagonal[fixed] <= 0):
        return None
    scale = np.ones(n)
    scale[fixed] = np.sqrt(d_low[fixed] / diagonal[fixed])
    X *= scale[:, None]
    X *= scale[None, :]
    X = (X + X.T) / 2
    index = np.flatnonzero(fixed)
    X[index, index] = d_low[fixed]  # exactly
    return X


def _device_scaled(form, X, fixed: np.ndarray, d_low: np.ndarray):
    """The arithmetic of :func:`scale_to_diagonal` on a device, once its checks have passed on
    the host (``fixed`` the fixed diagonal entries, ``d_low`` the diagonal's lower bounds)."""
    xp, arrays = form.xp, form.arrays
    N = form.L.entries(lambda z, low, high: xp.maximum(low - z, 0.0) - xp.maximum(z - high, 0.0), X, form.U)
    N = N - add_to_diagonal(xp.zeros_like(N), diagonal(N, xp), xp)  # nothing on the diagonal
    X = add_to_diagonal(X + N, xp.sum(xp.abs(N), axis=1), xp)  # a new array: the caller's point is kept
    on = moved(fixed, arrays) > 0.5
    low = moved(np.where(np.isfinite(d_low), d_low, 0.0), arrays)
    # a free diagonal entry below its bound 0 (X not p.s.d.): raising the diagonal keeps X' >> 0
    d = diagonal(X, xp)
    bounded = moved(np.isfinite(d_low), arrays) > 0.5
    d = xp.where(~on & bounded & (d < low), low, d)
    if bool(xp.any(on & (d <= 0))):
        return None
    scale = xp.where(on, xp.sqrt(xp.where(on, low, 1.0) / xp.where(on, d, 1.0)), 1.0)
    X = set_diagonal(X, d, xp) * scale[:, None] * scale[None, :]
    X = (X + X.T) / 2
    return set_diagonal(X, xp.where(on, low, diagonal(X, xp)), xp)  # the fixed entries exactly
