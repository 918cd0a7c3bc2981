"""Whether a standard form is of the kind :mod:`cvxclust.generic.lowrank` takes, and what that
method reads off it: the fixed diagonal, ``X >= 0``, the bound on the trace, ``X 1 = 0``.

The bounds are read from their compact views (:func:`~cvxclust.generic.compact.off_and_diagonal`)
without an ``n x n`` temporary; only a bound held as a dense array is tested entry by entry.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .compact import off_and_diagonal
from .splitting import fixed_trace, zero_total_row
from .standard_form import StandardForm

__all__ = ["LowRankForm", "lowrank_form", "lowrank_reason", "trace_shift"]


@dataclass
class LowRankForm:
    """What the low-rank method reads off a standard form.

    Attributes
    ----------
    diagonal : ndarray or None
        The fixed diagonal d (None where the diagonal is free).
    nonnegative : bool
        Whether ``X >= 0`` is a constraint (off the diagonal).
    tau : float
        ``tr X`` on the feasible set (the sum of d, or the trace row's value).
    trace_row : bool
        Whether tau is a trace row's.
    zero_row : int or None
        The index of a row ``1^T X 1 = 0`` (which forces ``X 1 = 0``), None where there is none.
    shift : tuple or None
        Where a trace row and the row sums of every index stand (the k-means SDP of Peng and
        Wei), what :func:`trace_shift` needs.
    box : tuple of ndarray or None
        ``(lower, upper)``: the bounds on the diagonal where it is not fixed, held by the
        augmented Lagrangian (``-inf``/``inf`` where absent, and a lower bound ``<= 0``, which
        ``X >> 0`` implies, as ``-inf``); None where there are none.
    """

    diagonal: np.ndarray | None
    nonnegative: bool
    tau: float
    trace_row: bool
    zero_row: int | None
    shift: tuple | None = None
    box: tuple | None = None

    @property
    def deflate(self) -> bool:
        """Whether ``X 1 = 0`` is forced."""
        return self.zero_row is not None

    @property
    def sqrt_diagonal(self) -> np.ndarray:
        if not hasattr(self, "_sqrt"):
            self._sqrt = np.sqrt(self.diagonal)
        return self._sqrt


def trace_shift(kind: LowRankForm, x: np.ndarray, delta: float, m: int) -> np.ndarray | None:
    """The move of the row multipliers y whose adjoint is ``-delta (I - (x 1^T + 1 x^T) / 2)``,
    ``x`` the diagonal of ``X = V V^T`` (None where ``kind`` has no trace row with row sums).

    At a clustering X (``x_i = 1 / |cluster of i|``) it keeps ``S V`` and, for row sums of 1,
    the bound's ``b^T y``, while it raises the dual slack by ``delta`` on the vectors orthogonal
    to the clusters' indicators: the multipliers of the k-means SDP are not unique, and the
    augmented Lagrangian's may leave S indefinite there."""
    if kind.shift is None:
        return None
    t, a, where, coef = kind.shift
    move = np.zeros(m)
    move[t] = -delta / a
    move[where] = delta * x / coef
    return move


def _off_diagonal(M: np.ndarray, value: float) -> tuple[int, int] | None:
    """An off-diagonal entry of M that is not ``value`` (None if every one is)."""
    compact = off_and_diagonal(M)
    if compact is not None:
        return None if compact[0] == value or M.shape[0] < 2 else (0, 1)
    bad = M != value
    np.fill_diagonal(bad, False)
    where = np.argwhere(bad)
    return None if where.size == 0 else tuple(int(k) for k in where[0])


def _read(form: StandardForm) -> tuple[LowRankForm | None, str]:
    n = form.n
    if form.c != 0:
        return None, f"the objective has a squared Frobenius term (c = {form.c:g}); only a linear objective is taken"
    if not form.psd:
        return None, "X >> 0 is not a constraint; the factorization X = V V^T needs it"
    L, U = form.L, form.U
    upper = _off_diagonal(U, np.inf)
    if upper is not None:
        return None, f"X[{upper[0]}, {upper[1]}] has an upper bound; only X >= 0 and bounds on the diagonal are taken"
    compact = off_and_diagonal(L)
    off = compact[0] if compact is not None else (float(L[0, 1]) if n > 1 else -np.inf)
    if off not in (0.0, -np.inf):
        return None, f"X[0, 1] has the lower bound {off:g}; only X >= 0 and bounds on the diagonal are taken"
    entry = _off_diagonal(L, off)
    if entry is not None:
        return None, (f"X[{entry[0]}, {entry[1]}] has a lower bound other than that of X[0, 1]; only X >= 0 "
                      "throughout and bounds on the diagonal are taken")
    lower, upper_d = np.diagonal(L), np.diagonal(U)
    if upper_d.min() < 0:
        i = int(np.argmin(upper_d))
        return None, f"X[{i}, {i}] is at most {upper_d[i]:g} < 0, which X >> 0 forbids"
    diagonal = box = None
    if np.all(lower == upper_d):
        diagonal = np.array(upper_d, dtype=float)
    else:  # bounds of the diagonal's entries, held by the augmented Lagrangian (a lower bound <= 0 is implied)
        low = np.where(lower > 0, lower, -np.inf)
        if np.isfinite(low).any() or np.isfinite(upper_d).any():
            box = (low, np.array(upper_d, dtype=float))
    found = fixed_trace(form)
    candidates = [float(diagonal.sum())] if diagonal is not None else []
    if found is not None:
        candidates.append(float(found[0]))
    if box is not None and np.isfinite(box[1]).all():
        candidates.append(float(box[1].sum()))
    if not candidates:
        return None, ("the constraints do not bound the trace (a fixed diagonal, upper bounds on every diagonal "
                      "entry or a row tr X == tau): without it no bound on the optimum follows from the smallest "
                      "eigenvalue")
    tau = min(candidates)
    return LowRankForm(diagonal=diagonal, nonnegative=off == 0.0, tau=tau,
                       trace_row=found is not None and tau == found[0], zero_row=zero_total_row(form),
                       shift=_trace_shift(form, found), box=box), ""


def _trace_shift(form: StandardForm, found) -> tuple | None:
    """Where a trace row and row sums of every index stand, ``(t, a, where, coef)``: the trace
    row's index and coefficient, and the row sums' indices (ordered by their index i) and
    coefficients; None otherwise (:meth:`LowRankForm.shift`)."""
    if found is None:
        return None
    I, coef, where = form.rows.row_sums()
    if I.size != form.n or np.unique(I).size != form.n:
        return None
    order = np.argsort(I)
    tau, t = found
    return t, float(form.lo[t] / tau), where[order], coef[order]


def lowrank_reason(form: StandardForm) -> str:
    """Why ``form`` is outside the kind of the low-rank method ("" where it is inside)."""
    return _read(form)[1]


def lowrank_form(form: StandardForm) -> LowRankForm:
    """What the low-rank method reads off ``form``; a ValueError names the part outside its kind."""
    kind, reason = _read(form)
    if kind is None:
        raise ValueError(f"method='lowrank' does not apply to this problem: {reason} (use method='alm' or "
                         f"'generic')")
    return kind
