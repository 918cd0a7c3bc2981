"""What the generic solver reads off a standard form before it iterates: the constraints an
eigendecomposition can enforce exactly (common row sums, the trace, an implied trace or trace
bound), the rows that tie two entries (taken into the box, :mod:`cvxclust.generic.ties`), the
rows left for the splitting, and a strictly feasible centre ``a 11^T + b I``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

from .spectral_set import SpectralSet
from .compact import off_and_diagonal, row_sums_matrix
from .standard_form import StandardForm
from .ties import TiedEntries, tied_rows

__all__ = ["Splitting", "bounds_the_trace", "fixed_trace", "outline", "split", "zero_total_row"]

# relative accuracy at which two coefficients are the same number
_SAME = 1e-10


@dataclass
class Splitting:
    """The split of a standard form: ``spectral`` (the set projected onto by one
    eigendecomposition), the remaining rows ``A``, ``lo``, ``hi`` (equalities first, ``n_eq`` of
    them), ``ties`` (the entries rows hold equal, enforced with the box; None where no row ties
    two entries), and ``centre``, a point of the form ``a 11^T + b I`` feasible for every
    constraint (None when that family has none)."""

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
    ties: TiedEntries | None = None

    def project_box(self, form: StandardForm, M: np.ndarray) -> np.ndarray:
        """The projection of the symmetric M onto the box of ``form`` with the ties."""
        return form.clip(M) if self.ties is None else self.ties.project(M, form.L, form.U)


def split(form: StandardForm, *, partial: bool = True, project_centre: bool = True) -> Splitting:
    """Split ``form`` (see the module docstring).

    ``project_centre=False`` leaves the centres as the linear programs give them, ``a 11^T + b I``
    with the equalities held to the programs' tolerance, instead of projecting them onto the set
    S (two eigendecompositions with ``X >> 0``): enough where only their coefficients are read.
    """
    n, lo, hi = form.n, form.lo, form.hi
    keep = np.ones(form.m, dtype=bool)
    absorbed = {}
    beta, rows = _common_row_sums(form)
    if beta is None and form.psd:
        row = zero_total_row(form)
        rows, beta = (None, None) if row is None else ([row], 0.0)
    row_sums = beta
    if beta is not None and (beta >= 0 or not form.psd):
        keep[rows] = False
        absorbed["row_sums"] = beta
    else:
        beta = None
    sparse, where = form.rows.sparse_part()  # a row of the trace is in a sparse block
    trace, trace_max, row = _trace_row(sparse, lo[where], hi[where], keep[where], n)
    _check_consistent(form, row_sums, trace, trace_max)
    if row is not None:
        keep[where[row]] = False
        absorbed["trace"] = trace if trace is not None else trace_max
    if form.psd and trace is None and form.c == 0:
        implied = _implied_trace(form)
        if implied is not None:
            trace, trace_max = implied, None
            absorbed["implied_trace"] = implied
        else:
            caps = [trace_max] if trace_max is not None else []
            if np.isfinite(np.diag(form.U)).all():
                caps.append(float(np.diag(form.U).sum()))
            if beta is not None and _off_diagonal(form.L, np.min) >= 0:
                caps.append(n * beta)  # X >= 0 and X 1 = beta 1 give X_ii <= beta
            trace_max = min(caps) if caps else None
            if trace_max is not None:
                absorbed["trace_bound"] = trace_max
    spectral = SpectralSet(n, psd=form.psd, beta=beta, trace=trace, trace_max=trace_max, partial=partial)
    # the centre meets the ties too: found before they leave the rows
    A, lo, hi = _kept_rows(form, keep)
    centre = _centre(form, spectral, A, lo, hi, project=project_centre)
    deepest = _centre(form, spectral, A, lo, hi, deepest=True, project=project_centre) \
        if form.psd and centre is not None else None
    sparse, where = form.rows.sparse_part()  # a tie is a row of a sparse block
    rows, ties = tied_rows(sparse, form.lo[where], form.hi[where], np.flatnonzero(keep[where]), form.L, form.U)
    if ties is not None:
        keep[where[rows]] = False
        absorbed["tied_entries"] = int(ties.positions.size)
        A, lo, hi = _kept_rows(form, keep)
    n_eq = int(np.sum(lo == hi))
    return Splitting(spectral, sp.csr_matrix(A), lo, hi, n_eq, centre, absorbed, deepest, ties)


def _kept_rows(form: StandardForm, keep: np.ndarray):
    """The kept rows, equalities first."""
    A, lo, hi = form.rows.select(keep).tocsr(), form.lo[keep], form.hi[keep]
    order = np.argsort(lo != hi, kind="stable")
    return A[order], lo[order], hi[order]


def bounds_the_trace(form: StandardForm) -> bool:
    """Whether the constraints of ``form`` bound ``tr X`` (finite upper bounds on the diagonal,
    a trace row, or equality rows that fix it), which a certificate of a linear objective under
    ``X >> 0`` needs (:func:`~cvxclust.generic.certificates.bound_at`); read without an
    eigendecomposition."""
    if np.isfinite(np.diag(form.U)).all():
        return True
    sparse, where = form.rows.sparse_part()  # a row of the trace is in a sparse block
    if _trace_row(sparse, form.lo[where], form.hi[where], np.ones(where.size, dtype=bool), form.n)[2] is not None:
        return True
    return _implied_trace(form) is not None


def fixed_trace(form: StandardForm) -> tuple[float, int] | None:
    """``(tau, r)`` of an equality row r ``a tr X = a tau`` of ``form``, else None."""
    sparse, where = form.rows.sparse_part()  # a row of the trace is in a sparse block
    trace, _, row = _trace_row(sparse, form.lo[where], form.hi[where], np.ones(where.size, dtype=bool), form.n)
    return None if trace is None else (trace, int(where[row]))


def _check_consistent(form: StandardForm, beta, trace, trace_max) -> None:
    """Raise a ValueError naming constraints read here that contradict each other outright (a
    typo such as ``diag(X) == -1`` under ``X >> 0``), on which the splitting would only run to its
    iteration limit: ``X >> 0`` needs ``X_ii >= 0``, ``1^T X 1 >= 0`` and, with ``X 1 = beta 1``,
    ``X_ii >= beta / n`` (Cauchy-Schwarz), so ``tr X >= beta``; ``X >= 0`` off the diagonal with
    the row sums gives ``X_ii <= beta``."""
    n = form.n
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
    if beta is not None and n > 1 and _off_diagonal(form.L, np.min) >= 0:
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
    n, lo, hi = form.n, form.lo, form.hi
    equality = np.flatnonzero(lo == hi)
    if equality.size < n:
        return None, None
    sparse, where = form.rows.sparse_part()
    if not np.any(np.diff(sparse.indptr)[lo[where] == hi[where]] == 2 * n - 1):
        # no sparse equality row has the 2 n - 1 entries of a row sum: those read as row sums are all
        I, coef, rows = form.rows.row_sums()
        held = lo[rows] == hi[rows]
        return _common(n, I[held], rows[held], lo[rows[held]] / coef[held])
    A = form.A
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
    return _common(n, i[match], candidates[match], lo[candidates[match]] / a[match])


def _common(n: int, i: np.ndarray, rows: np.ndarray, values: np.ndarray):
    """``(beta, rows)`` when the row sums ``values`` of the rows ``rows`` (of indices ``i``) are
    those of every index once, all equal to beta; else ``(None, None)``."""
    if np.unique(i).size != n or i.size != n:
        return None, None
    beta = float(values[0])
    if np.abs(values - beta).max() > _SAME * max(abs(beta), 1.0):
        return None, None
    return beta, rows


def zero_total_row(form: StandardForm) -> int | None:
    """The index of an equality row ``a 1^T X 1 = 0``, else None: under ``X >> 0`` it states
    ``X 1 = 0`` (``1^T X 1 = ||X^{1/2} 1||^2``), row sums the eigendecomposition enforces (the
    minimum bisection's ``sum(X) == 0``)."""
    n = form.n
    A, where = form.rows.sparse_part()  # a row of n^2 entries is in a sparse block
    count = np.diff(A.indptr)
    for r in np.flatnonzero((form.lo[where] == 0) & (form.hi[where] == 0) & (count == n * n)):
        data = A.data[A.indptr[r]:A.indptr[r + 1]]
        if np.abs(data - data[0]).max() <= _SAME * abs(data[0]):
            return int(where[r])
    return None


def _trace_row(A, lo, hi, keep, n):
    """``(trace, trace_max, row)`` for the first kept row ``a tr X`` (an equality, or an upper
    bound on the trace), else Nones."""
    count = np.diff(A.indptr)
    for r in np.flatnonzero(keep & (count == n)):
        cols, data = A.indices[A.indptr[r]:A.indptr[r + 1]], A.data[A.indptr[r]:A.indptr[r + 1]]
        a = data[0]
        # entry (i, i) is column i (n + 1): no n^2 mask of the diagonal
        if np.any(cols % (n + 1)) or np.abs(data - a).max() > _SAME * abs(a):
            continue
        if lo[r] == hi[r]:
            return float(lo[r] / a), None, r
        upper = hi[r] / a if a > 0 else lo[r] / a
        if np.isfinite(upper) and not np.isfinite(lo[r] if a > 0 else hi[r]):
            return None, float(upper), r
    return None, None, None


def _implied_trace(form: StandardForm):
    """``tr X`` when the equality rows fix it (the identity is a combination of their
    coefficients), else None; checked by least squares on the rows' Gram matrix."""
    n, lo, hi = form.n, form.lo, form.hi
    equality = lo == hi
    if not equality.any() or equality.sum() > 4000:
        return None
    E = form.rows.select(equality).tocsr()
    identity = np.zeros(n * n)
    identity[np.arange(n) * (n + 1)] = 1.0
    gram = (E @ E.T).toarray()
    w = np.linalg.lstsq(gram, E @ identity, rcond=None)[0]
    if np.linalg.norm(E.T @ w - identity) > 1e-9 * np.sqrt(n):
        return None
    return float(w @ lo[equality])


def outline(form: StandardForm) -> Splitting:
    """``split(form, partial=False, project_centre=False)``, computed once per standard form (no
    eigendecomposition): what the choice of a method and the dual Newton method read of the
    split.  Its spectral set is for reading (a solver splits the form itself, so that its
    counts of eigendecompositions are its own)."""
    if getattr(form, "_outline", None) is None:
        form._outline = split(form, partial=False, project_centre=False)
    return form._outline


def _centre(form, spectral, A, lo, hi, deepest: bool = False, project: bool = True):
    """The point ``a 11^T + b I`` with the largest margin to every inequality (equalities held),
    or with ``deepest`` the largest smallest eigenvalue ``min(b, b + n a)``, by a linear program
    in (a, b); None when no point of that form is feasible."""
    n = form.n
    rows = list(spectral.centre_family())
    if n > 1:
        rows.append((1.0, 0.0, _off_diagonal(form.L, np.max), _off_diagonal(form.U, np.min)))
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
    if not project:
        a, b = _on_equalities(spectral, a, b)
    centre = np.full((n, n), a)
    centre[np.diag_indices(n)] += b
    # the linear program holds equalities to its tolerance; the projection holds S's exactly
    return centre if spectral.trivial or not project else spectral.project(centre)


def _off_diagonal(M: np.ndarray, reduce) -> float:
    """``reduce`` (``np.max`` or ``np.min``) of the entries of the ``n x n`` M off its diagonal, n > 1
    (of the two numbers of a bound that is one number off the diagonal)."""
    parts = off_and_diagonal(M)
    if parts is not None:
        return parts[0]
    return float(reduce(M, where=~np.eye(M.shape[0], dtype=bool), initial=np.inf if reduce is np.min else -np.inf))


def _on_equalities(spectral, a: float, b: float) -> tuple[float, float]:
    """``(a, b)`` moved onto the row sums and the trace S fixes (``n a + b = beta``, ``n (a + b) =
    t``), which the linear program holds only to its tolerance."""
    n, beta, trace = spectral.n, spectral.beta, spectral.trace
    if beta is not None and trace is not None and n > 1:
        b = (trace - beta) / (n - 1)
        return (beta - b) / n, b
    if beta is not None:
        return a, beta - n * a
    if trace is not None:
        return a, trace / n - a
    return a, b
