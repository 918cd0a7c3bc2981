"""What the generic solver reads off a standard form before it iterates: the constraints an
eigendecomposition can enforce exactly (common row sums, the trace, an implied trace or trace
bound), the rows left for the splitting, and a strictly feasible centre ``a 11^T + b I``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .spectral_set import SpectralSet
from .expression_form import row_sums_matrix
from .standard_form import StandardForm

__all__ = ["Splitting", "bounds_the_trace", "split"]

# relative accuracy at which two coefficients are the same number
_SAME = 1e-10


@dataclass
class Splitting:
    """The split of a standard form: ``spectral`` (the set projected onto by one
    eigendecomposition), the remaining rows ``A``, ``lo``, ``hi`` (equalities first, ``n_eq`` of
    them), and ``centre``, a point of the form ``a 11^T + b I`` feasible for every constraint
    (None when that family has none)."""

    spectral: SpectralSet
    A: sp.csr_matrix
    lo: np.ndarray
    hi: np.ndarray
    n_eq: int
    centre: np.ndarray | None
    absorbed: dict
    #: the feasible point ``a 11^T + b I`` deepest in the p.s.d. cone (largest smallest
    #: eigenvalue), a partner of a restoration that has already repaired the box off the diagonal
    psd_centre: np.ndarray | None = None


def split(form: StandardForm, *, partial: bool = True) -> Splitting:
    """Split ``form`` (see the module docstring)."""
    n, A, lo, hi = form.n, form.A, form.lo, form.hi
    keep = np.ones(form.m, dtype=bool)
    absorbed = {}
    beta, rows = _common_row_sums(form)
    row_sums = beta
    if beta is not None and (beta >= 0 or not form.psd):
        keep[rows] = False
        absorbed["row_sums"] = beta
    else:
        beta = None
    trace, trace_max, row = _trace_row(A, lo, hi, keep, n)
    _check_consistent(form, row_sums, trace, trace_max)
    if row is not None:
        keep[row] = False
        absorbed["trace"] = trace if trace is not None else trace_max
    if form.psd and trace is None and form.c == 0:
        implied = _implied_trace(A, lo, hi, n)
        if implied is not None:
            trace, trace_max = implied, None
            absorbed["implied_trace"] = implied
        else:
            caps = [trace_max] if trace_max is not None else []
            if np.isfinite(np.diag(form.U)).all():
                caps.append(float(np.diag(form.U).sum()))
            off_diagonal = ~np.eye(n, dtype=bool)
            if beta is not None and (form.L[off_diagonal] >= 0).all():
                caps.append(n * beta)  # X >= 0 and X 1 = beta 1 give X_ii <= beta
            trace_max = min(caps) if caps else None
            if trace_max is not None:
                absorbed["trace_bound"] = trace_max
    spectral = SpectralSet(n, psd=form.psd, beta=beta, trace=trace, trace_max=trace_max, partial=partial)
    A, lo, hi = A[keep], lo[keep], hi[keep]
    order = np.argsort(lo != hi, kind="stable")  # equalities first
    A, lo, hi = A[order], lo[order], hi[order]
    n_eq = int(np.sum(lo == hi))
    centre = _centre(form, spectral, A, lo, hi)
    deepest = _centre(form, spectral, A, lo, hi, deepest=True) if form.psd and centre is not None else None
    return Splitting(spectral, sp.csr_matrix(A), lo, hi, n_eq, centre, absorbed, deepest)


def bounds_the_trace(form: StandardForm) -> bool:
    """Whether the constraints of ``form`` bound ``tr X`` (finite upper bounds on the diagonal,
    a trace row, or equality rows that fix it), which a certificate of a linear objective under
    ``X >> 0`` needs (:func:`~cvxclust.generic.certificates.bound_at`); read without an
    eigendecomposition."""
    if np.isfinite(np.diag(form.U)).all():
        return True
    keep = np.ones(form.m, dtype=bool)
    if _trace_row(form.A, form.lo, form.hi, keep, form.n)[2] is not None:
        return True
    return _implied_trace(form.A, form.lo, form.hi, form.n) is not None


def _check_consistent(form: StandardForm, beta, trace, trace_max) -> None:
    """Raise a ValueError naming constraints read here that contradict each other outright (a
    typo such as ``diag(X) == -1`` under ``X >> 0``), on which the splitting would only run to its
    iteration limit: ``X >> 0`` needs ``X_ii >= 0``, ``1^T X 1 >= 0`` and, with ``X 1 = beta 1``,
    ``X_ii >= beta / n`` (Cauchy-Schwarz), so ``tr X >= beta``; ``X >= 0`` off the diagonal with
    the row sums gives ``X_ii <= beta``."""
    n, off_diagonal = form.n, ~np.eye(form.n, dtype=bool)
    lower, upper = np.diag(form.L), np.diag(form.U)
    if form.psd and upper.min() < 0:
        i = int(np.argmin(upper))
        raise ValueError(f"the problem is infeasible: X >> 0 needs X[{i}, {i}] >= 0, but X[{i}, {i}] <= {upper[i]:g}")
    if form.psd and beta is not None and beta < 0:
        raise ValueError(f"the problem is infeasible: X >> 0 needs 1^T X 1 >= 0, but the rows of X sum to {beta:g}")
    least = [(float(lower.sum()), "the bounds on the diagonal")]
    if form.psd:
        least.append((0.0 if beta is None else beta, "X >> 0" if beta is None else "X >> 0 and the row sums"))
    most = [(float(upper.sum()), "the bounds on the diagonal")]
    if beta is not None and n > 1 and (form.L[off_diagonal] >= 0).all():
        most.append((n * beta, "X >= 0 off the diagonal and the row sums"))
    low, why_low = max(least)
    high, why_high = min(most)
    for value, relation in ((trace, "="), (trace_max, "<=")):
        if value is None:
            continue
        margin = 1e-9 * max(1.0, abs(value))
        if value < low - margin:
            raise ValueError(f"the problem is infeasible: tr X {relation} {value:g}, but {why_low} make it at "
                             f"least {low:g}")
        if relation == "=" and value > high + margin:
            raise ValueError(f"the problem is infeasible: tr X = {value:g}, but {why_high} make it at most {high:g}")


def _common_row_sums(form: StandardForm):
    """``(beta, rows)`` when equality rows state ``X 1 = beta 1`` (each row once), else ``(None, None)``."""
    n, A, lo, hi = form.n, form.A, form.lo, form.hi
    equality = np.flatnonzero(lo == hi)
    if equality.size < n:
        return None, None
    E = A[equality]
    D = E[:, np.arange(n) * (n + 1)].tocsr()
    one = np.diff(D.indptr) == 1
    if one.sum() < n:
        return None, None
    candidates = equality[one]
    i = D.indices[D.indptr[:-1][one]]
    a = D.data[D.indptr[:-1][one]]
    R = row_sums_matrix(np.arange(n), np.ones(n), n)  # the symmetrised row sums, built by index arithmetic
    difference = A[candidates] - sp.diags(a) @ R[i]
    match = np.asarray(abs(difference).max(axis=1).todense()).ravel() <= _SAME * np.abs(a)
    i, rows, values = i[match], candidates[match], lo[candidates[match]] / a[match]
    if np.unique(i).size != n or i.size != n:
        return None, None
    beta = float(values[0])
    if np.abs(values - beta).max() > _SAME * max(abs(beta), 1.0):
        return None, None
    return beta, rows


def _trace_row(A, lo, hi, keep, n):
    """``(trace, trace_max, row)`` for the first kept row ``a tr X`` (an equality, or an upper
    bound on the trace), else Nones."""
    count = np.diff(A.indptr)
    diagonal = np.zeros(n * n, dtype=bool)
    diagonal[np.arange(n) * (n + 1)] = True
    for r in np.flatnonzero(keep & (count == n)):
        cols, data = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
        a = data[0]
        if not diagonal[cols].all() or np.abs(data - a).max() > _SAME * abs(a):
            continue
        if lo[r] == hi[r]:
            return float(lo[r] / a), None, r
        upper = hi[r] / a if a > 0 else lo[r] / a
        if np.isfinite(upper) and not np.isfinite(lo[r] if a > 0 else hi[r]):
            return None, float(upper), r
    return None, None, None


def _implied_trace(A, lo, hi, n):
    """``tr X`` when the equality rows fix it (the identity is a combination of their
    coefficients), else None; checked by least squares on the rows' Gram matrix."""
    equality = lo == hi
    if not equality.any() or equality.sum() > 4000:
        return None
    E = A[equality]
    identity = np.zeros(n * n)
    identity[np.arange(n) * (n + 1)] = 1.0
    gram = (E @ E.T).toarray()
    w = np.linalg.lstsq(gram, E @ identity, rcond=None)[0]
    if np.linalg.norm(E.T @ w - identity) > 1e-9 * np.sqrt(n):
        return None
    return float(w @ lo[equality])


def _centre(form, spectral, A, lo, hi, deepest: bool = False):
    """The point ``a 11^T + b I`` with the largest margin to every inequality (equalities held),
    or with ``deepest`` the largest smallest eigenvalue ``min(b, b + n a)``, by a linear program
    in (a, b); None when no point of that form is feasible."""
    n = form.n
    rows = list(spectral.centre_family())
    off = ~np.eye(n, dtype=bool)
    if n > 1:
        rows.append((1.0, 0.0, float(form.L[off].max()), float(form.U[off].min())))
    rows.append((1.0, 1.0, float(np.diag(form.L).max()), float(np.diag(form.U).min())))
    if A.shape[0]:
        total = np.asarray(A.sum(axis=1)).ravel()
        trace = np.asarray(A[:, np.arange(n) * (n + 1)].sum(axis=1)).ravel()
        rows += list(zip(total, trace, lo, hi))
    A_ub, b_ub, A_eq, b_eq = [], [], [], []
    if deepest:  # t <= b and t <= b + n a, every other row without margin
        A_ub += [[0.0, -1.0, 1.0], [-float(n), -1.0, 1.0]]
        b_ub += [0.0, 0.0]
    for ca, cb, low, high in rows:
        norm = np.hypot(ca, cb)
        if norm == 0:
            continue
        if low == high:
            A_eq.append([ca, cb, 0.0])
            b_eq.append(low)
            continue
        margin = 0.0 if deepest else norm
        if np.isfinite(high):
            A_ub.append([ca, cb, margin])
            b_ub.append(high)
        if np.isfinite(low):
            A_ub.append([-ca, -cb, margin])
            b_ub.append(-low)
    scale = max([abs(v) for v in b_ub + b_eq] + [1.0])
    result = linprog([0.0, 0.0, -1.0], A_ub=A_ub or None, b_ub=b_ub or None, A_eq=A_eq or None,
                     b_eq=b_eq or None, bounds=[(None, None), (None, None), (0.0, scale)], method="highs",
                     options={"primal_feasibility_tolerance": 1e-10})
    if result.status != 0:
        return None
    a, b, _ = result.x
    centre = a * np.ones((n, n)) + b * np.eye(n)
    # the linear program holds equalities to its tolerance; the projection holds S's exactly
    return centre if spectral.trivial else spectral.project(centre)
