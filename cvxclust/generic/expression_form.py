"""The standard form's parts from affine expressions read by :mod:`cvxclust.generic.expression_reader`:
the objective's coefficient as its parts (:class:`CostTerms`: sparse terms stay sparse, ``sum(X)``
is a weight of the all-ones matrix), a squared Frobenius norm, ``X >> 0``, entrywise bounds
and symmetrised rows (row sums kept as their indices and coefficients, :mod:`cvxclust.generic.compact`).

Each function returns None or False where the recogniser does not read the expression, or where its
data are for the coefficient backend's path to refuse (with the same message as before).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from . import expression_reader
from .compact import RowSumsBlock, TotalBlock, row_sums_matrix, stack_rows
from .cost import eigen_form
from .expression_reader import Affine, Entries, Inner, LowRank, RowSums, broadcast_entries, total_of, Unrecognised

__all__ = ["CostTerms", "RowSumsBlock", "add_objective", "read_constraint", "row_sums_matrix", "squared_norm",
           "stack_rows", "symmetrize_in_place"]

_BLOCK = 256  # rows per block of an in-place update (a temporary of _BLOCK x n at most)


# ------------------------------------------------------------------------------------------------
def _add_to(C: np.ndarray, W, a: float) -> None:
    """``C += a * W`` in place (W: float, ndarray or sparse), with temporaries of a block of rows."""
    if sp.issparse(W):
        W = W.tocoo()
        np.add.at(C, (W.row, W.col), a * W.data)
    elif np.ndim(W) == 0:
        C += a * float(W)
    else:
        for start in range(0, C.shape[0], _BLOCK):
            block = slice(start, start + _BLOCK)
            if a == 1.0:
                C[block] += W[block]
            elif a == -1.0:
                C[block] -= W[block]
            else:
                C[block] += a * W[block]


class CostTerms:
    """The objective's linear coefficient while a problem is read, as the parts of a
    :class:`~cvxclust.generic.cost.Cost`: the sparse terms (kept as they are written), the weight
    of the all-ones matrix, the factors of the low-rank terms, and a dense part allocated on the
    first dense term only.

    Parameters
    ----------
    n : int
        Order of the coefficient.
    """

    def __init__(self, n: int):
        self.n = n
        self.dense: np.ndarray | None = None
        self.sparse: list = []
        self.ones = 0.0
        self.lowrank: list = []

    def add(self, W, a: float) -> None:
        """Add ``a * W``: W a float (every entry W), a scipy.sparse matrix, a
        :class:`~cvxclust.generic.expression_reader.LowRank` or an array that broadcasts to ``(n, n)``."""
        if isinstance(W, LowRank):
            self.lowrank.append((a * W.left, W.right))
        elif sp.issparse(W):
            self.sparse.append(a * sp.csr_matrix(W, dtype=float))
        elif np.ndim(W) == 0:
            self.ones += a * float(W)
        else:
            if self.dense is None:
                self.dense = np.zeros((self.n, self.n))
            _add_to(self.dense, np.broadcast_to(W, (self.n, self.n)), a)

    def add_row_total(self, A: sp.csr_matrix, a: float) -> None:
        """Add ``a`` times the sum of the rows of ``A`` (columns indexed by ``vec(X)``, as the
        coefficient backend gives them): a sparse term where it has few entries, dense otherwise."""
        n = self.n
        total = (sp.csr_matrix(np.ones((1, A.shape[0]))) @ A).tocoo()
        if total.nnz > n * n // 8:
            self.add(np.asarray(total.toarray()).reshape(n, n), a)
        else:
            i, j = np.divmod(total.col, n)
            self.add(sp.csr_matrix((total.data, (i, j)), shape=(n, n)), a)

    def parts(self) -> tuple[np.ndarray | None, sp.csr_matrix | None, float, tuple | None]:
        """``(dense, sparse, ones, lowrank)``, each symmetrised (``(S + S^T) / 2`` for the sparse
        part, ``lowrank = (U, s)`` the eigen-form of the symmetrised ``L R^T`` terms,
        :func:`~cvxclust.generic.cost.eigen_form`); where a dense part is held the others are added
        into it (C is then that one array)."""
        sparse = None
        if self.sparse:
            sparse = self.sparse[0]
            for term in self.sparse[1:]:
                sparse = sparse + term
            sparse = ((sparse + sparse.T) / 2).tocsr()
        left, right = (np.hstack([pair[i] for pair in self.lowrank]) if self.lowrank else None for i in (0, 1))
        if self.dense is None:
            return None, sparse, self.ones, None if left is None else eigen_form(left, right)
        if sparse is not None:
            _add_to(self.dense, sparse, 1.0)
        if self.ones:
            self.dense += self.ones
        if left is not None:
            for start in range(0, self.n, _BLOCK):
                self.dense[start:start + _BLOCK] += left[start:start + _BLOCK] @ right.T
        return symmetrize_in_place(self.dense), None, 0.0, None

    def data(self) -> list:
        """The parts' numbers, one array each (for checks of their magnitude)."""
        factors = [f for pair in self.lowrank for f in pair]
        held = (self.dense, *(t.data for t in self.sparse), *factors, np.array([self.ones]))
        return [a for a in held if a is not None]


def add_objective(expr, X: cp.Variable, weight: float, cost: CostTerms) -> float | None:
    """Add ``weight * expr`` (a scalar affine expression) to the coefficient's terms ``cost`` and
    return its constant; None (nothing added) where the recogniser does not read ``expr``."""
    affine = expression_reader.read_affine(expr, X)
    if affine is None or affine.size != 1:
        return None
    try:
        total = total_of(affine, (), X.shape[0])
    except Unrecognised:
        return None
    for term in total.terms:
        cost.add(term.W, weight * term.scale)
    return weight * total.constant


def _whole_scale(affine: Affine):
    """``a`` when ``affine`` is ``a X + E`` with a scalar a, else None."""
    if not affine.terms or not all(isinstance(t, Entries) and t.whole and np.ndim(t.coef) == 0
                                   and not sp.issparse(t.coef) for t in affine.terms):
        return None
    return float(sum(float(t.coef) for t in affine.terms))


def squared_norm(argument, X: cp.Variable, weight: float, cost: CostTerms):
    """Add the linear part of ``weight * ||a X + E||_F^2`` to the coefficient's terms ``cost`` and
    return ``(weight a^2, weight ||E||^2)``; None (nothing added) unless ``argument`` is read as
    ``a X + E``, a != 0."""
    affine = expression_reader.read_affine(argument, X)
    a = None if affine is None else _whole_scale(affine)
    if not a:
        return None
    n = X.shape[0]
    E = affine.constant
    if np.any(E):
        cost.add(E if np.ndim(E) == 0 else np.broadcast_to(E, (n, n)), 2.0 * weight * a)
    square = float(np.vdot(E, E)) * (n * n / max(np.size(E), 1))
    return weight * a * a, weight * square


def symmetrize_in_place(C: np.ndarray) -> np.ndarray:
    """``C <- (C + C^T) / 2`` in place, block by block (no temporary of the size of C); returns C."""
    n = C.shape[0]
    for i in range(0, n, _BLOCK):
        rows = slice(i, i + _BLOCK)
        block = C[rows, rows]
        block[...] = (block + block.T) / 2
        for j in range(i + _BLOCK, n, _BLOCK):
            columns = slice(j, j + _BLOCK)
            mean = (C[rows, columns] + C[columns, rows].T) / 2
            C[rows, columns] = mean
            C[columns, rows] = mean.T
    return C


def read_constraint(reader, constraint, name: str) -> bool:
    """Read ``constraint`` into ``reader`` (the standard form's reader: its ``psd``, ``L`` and ``U``
    (:class:`~cvxclust.generic.compact.Bound`), ``rows``/``lo``/``hi`` and ``_rows``); False
    (nothing read) where the recogniser does not read it, or it has data the reader must refuse
    (the coefficient backend's path then reads it)."""
    X = reader.X
    if isinstance(constraint, cp.constraints.PSD):
        affine = expression_reader.read_affine(constraint.args[0], X)
        a = None if affine is None else _whole_scale(affine)
        if a is None or a <= 0 or np.any(affine.constant):
            return False
        reader.psd = True
        return True
    if isinstance(constraint, (cp.constraints.Equality, cp.constraints.Zero)):
        sides = (-1.0, -1.0)
    elif isinstance(constraint, (cp.constraints.Inequality, cp.constraints.NonPos)):
        sides = (-np.inf, -1.0)
    elif isinstance(constraint, cp.constraints.NonNeg):
        sides = (-1.0, np.inf)
    else:
        return False
    affine = expression_reader.read_affine(constraint.expr, X)
    if affine is None or not np.all(np.isfinite(affine.constant)) \
            or any(isinstance(t, Inner) and isinstance(t.W, LowRank) for t in affine.terms) \
            or not all(_finite(t) for t in affine.terms):
        return False
    b = affine.constant
    lo, hi = (side * b if np.isfinite(side) else side for side in sides)
    terms = affine.terms
    if terms and all(isinstance(t, Entries) and t.whole and not sp.issparse(t.coef) for t in terms):
        coef = terms[0].coef
        for t in terms[1:]:
            coef = coef + t.coef
        if np.any(np.asarray(coef) == 0):
            return False
        _whole_bounds(reader, coef, lo, hi)
        return True
    n = reader.n
    if len(terms) == 1 and isinstance(terms[0], RowSums) and n > 1:
        coef, I = (np.broadcast_to(a, affine.shape).ravel(order="F") for a in (terms[0].coef, terms[0].I))
        if np.all(coef != 0):
            reader.rows.append(RowSumsBlock(I, coef, n))
            reader.lo.append(np.broadcast_to(lo, affine.shape).ravel(order="F").astype(float))
            reader.hi.append(np.broadcast_to(hi, affine.shape).ravel(order="F").astype(float))
            return True
    if n > 1 and terms and all(isinstance(t, Inner) and _is_number(t.W) for t in terms):  # a sum(X): n^2 entries
        coef = sum(float(t.W) * t.scale for t in terms)
        if coef != 0:
            reader.rows.append(TotalBlock([coef], n))
            reader.lo.append(np.broadcast_to(lo, affine.shape).ravel().astype(float))
            reader.hi.append(np.broadcast_to(hi, affine.shape).ravel().astype(float))
            return True
    try:
        A = _rows_matrix(affine, n)
    except Unrecognised:
        return False
    flat = (np.broadcast_to(side, affine.shape).ravel(order="F").astype(float) for side in (lo, hi))
    reader._rows(A, *flat, name)
    return True


def _is_number(W) -> bool:
    return np.ndim(W) == 0 and not sp.issparse(W)


def _finite(term) -> bool:
    values = {Entries: "coef", RowSums: "coef", Inner: "W"}[type(term)]
    value = getattr(term, values)
    data = value.data if sp.issparse(value) else value
    return bool(np.all(np.isfinite(data))) and (not isinstance(term, Inner) or np.isfinite(term.scale))


def _whole_bounds(reader, coef, lo, hi) -> None:
    """``lo <= coef * X <= hi`` entrywise (every coefficient nonzero) as bounds on X and its mirror."""
    low, high = lo / coef, hi / coef
    if np.ndim(coef) == 0:
        if coef < 0:
            low, high = high, low
    else:
        low, high = np.where(coef > 0, low, high), np.where(coef > 0, high, low)
    n = reader.n
    for bound, value in ((reader.L, low), (reader.U, high)):
        if np.ndim(value) == 0:
            if np.isfinite(value):
                bound.tighten(value)
        else:
            value = np.broadcast_to(value, (n, n))
            bound.tighten(value)
            bound.tighten(value.T)


def _rows_matrix(affine: Affine, n: int) -> sp.csr_matrix:
    """The symmetrised rows of ``affine`` (one per entry, in cvxpy's column-major order) on ``vec(X)``."""
    shape, size = affine.shape, affine.size
    rows, i_all, j_all, values = [], [], [], []
    position = np.arange(size)
    for term in affine.terms:
        if isinstance(term, Entries) and sp.issparse(term.coef):  # the whole X times a sparse matrix
            W = term.coef.tocoo()
            rows.append(W.row + W.col * n)
            i_all.append(W.row), j_all.append(W.col), values.append(W.data)
        elif isinstance(term, Entries):
            coef, I, J = (a.ravel(order="F") for a in broadcast_entries(term, shape, n))
            rows.append(position), i_all.append(I), j_all.append(J), values.append(coef)
        elif isinstance(term, RowSums):
            coef, I = (np.broadcast_to(a, shape).ravel(order="F") for a in (term.coef, term.I))
            rows.append(np.repeat(position, n)), i_all.append(np.repeat(I, n))
            j_all.append(np.tile(np.arange(n), size)), values.append(np.repeat(coef, n))
        else:  # an Inner term: the expression is a scalar
            W = term.W
            if sp.issparse(W):
                W = W.tocoo()
                i, j, v = W.row, W.col, W.data
            else:
                i, j = (a.ravel() for a in np.indices((n, n)))
                v = np.broadcast_to(W, (n, n)).ravel()
            rows.append(np.zeros(i.size, dtype=int)), i_all.append(i), j_all.append(j), values.append(term.scale * v)
    row, i, j, v = (np.concatenate(a) if a else np.zeros(0, dtype=int) for a in (rows, i_all, j_all, values))
    half = v / 2
    columns = np.concatenate([i * n + j, j * n + i])
    A = sp.csr_matrix((np.concatenate([half, half]), (np.concatenate([row, row]), columns)), shape=(size, n * n))
    A.sum_duplicates()
    return A
