"""Exactly feasible points near the generic solver's iterates (see :func:`restore` and
:func:`polished`)."""

from __future__ import annotations

import numpy as np

from ..linalg import alternating_projections
from .standard_form import StandardForm
from .splitting import Splitting

__all__ = ["polished", "restore"]


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
    if not (np.isfinite(form.L).any() or np.isfinite(form.U).any()):
        return Z
    if spectral.trivial:
        return np.clip(Z, form.L, form.U)  # the box is the only constraint: its projection
    if split.centre is None:
        return None
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
    rounds = alternating_projections(Z, split.spectral.project, lambda W: np.clip(W, form.L, form.U))
    next(rounds)  # Z itself
    for W in rounds:
        X = restore(form, split, W)
        if X is None:
            return
        yield X


def _mix(form: StandardForm, A: np.ndarray, partner: np.ndarray, shift: float) -> np.ndarray | None:
    """``(1 - theta) A + theta partner`` for the smallest theta that satisfies the box and
    (when ``shift > 0``, A's smallest eigenvalue being at least ``-shift``) the cone; None
    where no theta in [0, 1] does."""
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
    theta = float(need.max(initial=0.0))
    if shift > 0:
        n = form.n
        a = partner[0, 1] if n > 1 else 0.0
        margin = min(partner[0, 0] - a, partner[0, 0] - a + n * a)  # smallest eigenvalue of a 11' + b I
        if margin <= 0:
            return None
        theta = max(theta, shift / (shift + margin))  # (1 - theta)(-shift) + theta margin >= 0
    if not 0 <= theta <= 1:
        return None
    X = (1.0 - theta) * A + theta * partner
    return np.clip(X, form.L, form.U)  # rounding only: theta makes every entry feasible
