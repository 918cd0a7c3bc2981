r"""Read the affine expressions of the class straight from the cvxpy expression tree, at linear cost.

:mod:`cvxclust.generic.standard_form` reads every affine expression of the symmetric variable X
through cvxpy's coefficient backend, into a sparse matrix with one column per entry of X, and
then symmetrises it: an ``n x n`` data matrix costs tens of eigendecompositions of order n before
the solver starts.  The atoms the class is written with say directly what they do to X, so this
module recognises them and describes an affine expression of shape ``s`` as a sum of terms, each
giving one value per entry ``p`` of the expression (arrays broadcast to ``s``):

* :class:`Entries` ``coef[p] * X[I[p], J[p]]``, or ``coef * X`` for the whole of X (``I = J =
  None``; ``coef`` may then be a sparse matrix): ``X``, ``a * X``, ``multiply(C, X)``, ``X.T``,
  ``diag(X)``, ``X[i, j]``, ``X[i, :]``, slices;
* :class:`RowSums` ``coef[p] * sum_k X[I[p], k]``: ``sum(X, axis=0 | 1)`` (a column sum of a
  symmetric X is the row sum of the same index);
* :class:`Inner` ``scale * <W, X>`` (a scalar expression): ``sum(...)``, ``trace(...)``,
  ``vdot(C, X)``, ``trace(C @ X)`` (which cvxpy writes ``sum(multiply(C, X.T))``);

plus a constant.  Nothing of the size of X is copied to describe it: a data matrix is referred to,
a transpose is dropped (X is symmetric, and so is every coefficient once the reader symmetrises
it).  What it does not recognise returns None, and the coefficient backend reads that expression
as before.  The description becomes the objective's coefficient in place, entrywise bounds (a
whole-matrix bound updates L and U in place), or symmetrised rows built with index arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.affine.add_expr import AddExpression
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
from cvxpy.atoms.affine.broadcast_to import broadcast_to
from cvxpy.atoms.affine.conj import conj
from cvxpy.atoms.affine.diag import diag_mat
from cvxpy.atoms.affine.index import index
from cvxpy.atoms.affine.promote import Promote
from cvxpy.atoms.affine.real import real
from cvxpy.atoms.affine.reshape import reshape
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.affine.trace import Trace
from cvxpy.atoms.affine.transpose import transpose
from cvxpy.atoms.affine.unary_operators import NegExpression

__all__ = ["Affine", "Entries", "Inner", "RowSums", "RowSumsBlock", "add_objective", "read_affine", "read_constraint",
           "row_sums_matrix", "squared_norm", "stack_rows", "symmetrize_in_place"]

_BLOCK = 256  # rows per block of an in-place update (a temporary of _BLOCK x n at most)


class _Unrecognised(Exception):
    """Raised inside the recogniser when a part of the expression is outside what it reads."""


@dataclass
class Entries:
    """``coef[p] * X[I[p], J[p]]`` for each entry p (broadcast); ``I = J = None``: ``coef * X``."""

    coef: object
    I: np.ndarray | None = None
    J: np.ndarray | None = None

    @property
    def whole(self) -> bool:
        return self.I is None


@dataclass
class RowSums:
    """``coef[p] * sum_k X[I[p], k]`` for each entry p (broadcast)."""

    coef: object
    I: np.ndarray


@dataclass
class Inner:
    """``scale * <W, X>``; ``W`` a float (every entry W), an ndarray of shape (n, n) or a sparse matrix."""

    W: object
    scale: float = 1.0


@dataclass
class Affine:
    """An affine expression of X of shape ``shape``: the sum of ``terms`` and ``constant`` (broadcast)."""

    shape: tuple
    terms: list = field(default_factory=list)
    constant: object = 0.0

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=int))


def read_affine(expr, X: cp.Variable) -> Affine | None:
    """The description of the affine expression ``expr`` of ``X``, or None where it has a part the
    recogniser does not read (the coefficient backend then reads it)."""
    try:
        return _read(expr, X)
    except _Unrecognised:
        return None


# ------------------------------------------------------------------------------------------------
# the recogniser
# ------------------------------------------------------------------------------------------------
def _read(expr, X) -> Affine:
    shape = tuple(expr.shape)
    if len(shape) > 2:
        raise _Unrecognised
    if isinstance(expr, cp.Variable):
        if expr.id != X.id:
            raise _Unrecognised
        return Affine(shape, [Entries(1.0)])
    if expr.is_constant():
        value = _value(expr)
        return Affine(shape, [], value.toarray() if sp.issparse(value) else value)
    if isinstance(expr, NegExpression):
        return _scaled(_read(expr.args[0], X), -1.0, shape)
    if isinstance(expr, AddExpression):
        parts = [_read(arg, X) for arg in expr.args]
        if any(p.shape != shape and p.size == 1 and _has_inner(p) for p in parts):
            raise _Unrecognised
        constant = parts[0].constant
        for p in parts[1:]:
            constant = constant + p.constant
        return Affine(shape, [t for p in parts for t in p.terms], constant)
    if isinstance(expr, (multiply, MulExpression)):
        return _product(expr.args[0], expr.args[1], shape, X, matrix=not isinstance(expr, multiply))
    if isinstance(expr, DivExpression) and expr.args[1].is_constant():
        value = _value(expr.args[1])
        if sp.issparse(value):
            raise _Unrecognised
        return _scaled(_read(expr.args[0], X), 1.0 / value, shape)
    if isinstance(expr, (Promote, broadcast_to)):
        inner = _read(expr.args[0], X)
        if _has_inner(inner) and int(np.prod(shape, dtype=int)) != 1:
            raise _Unrecognised
        return Affine(shape, inner.terms, inner.constant)
    if isinstance(expr, (conj, real)):  # of a real expression (complex ones are refused before)
        inner = _read(expr.args[0], X)
        return Affine(shape, inner.terms, inner.constant)
    if isinstance(expr, transpose) and expr.axes is None:
        return _transposed(_read(expr.args[0], X), shape)
    if isinstance(expr, Sum):
        return _summed(expr, shape, X)
    if isinstance(expr, diag_mat):
        return _diagonal(_read(expr.args[0], X), expr.k, X.shape[0])
    if isinstance(expr, Trace):
        return _total(_diagonal(_read(expr.args[0], X), 0, X.shape[0]), shape, X.shape[0])
    if isinstance(expr, index):
        return _indexed(_read(expr.args[0], X), expr.key, shape, X.shape[0])
    raise _Unrecognised


def _value(expr):
    """The value of a constant expression: a float, an ndarray that broadcasts to its shape (a
    promoted scalar stays a float), or a sparse matrix."""
    while isinstance(expr, (Promote, broadcast_to)):
        expr = expr.args[0]
    value = expr.value
    if sp.issparse(value):
        return sp.csr_matrix(value)
    value = np.asarray(value)
    if np.iscomplexobj(value):
        raise _Unrecognised
    return float(value) if value.size == 1 and value.ndim == 0 else value.astype(float, copy=False)


def _has_inner(affine: Affine) -> bool:
    return any(isinstance(t, Inner) for t in affine.terms)


def _times(a, b):
    """``a * b`` without a copy when either is the float 1."""
    if isinstance(a, float) and a == 1.0:
        return b
    if isinstance(b, float) and b == 1.0:
        return a
    if sp.issparse(a) or sp.issparse(b):
        if np.ndim(a) and np.ndim(b) and not (sp.issparse(a) and sp.issparse(b)):
            raise _Unrecognised
        return (a * b) if np.ndim(a) == 0 or np.ndim(b) == 0 else a.multiply(b)
    return a * b


def _scaled(affine: Affine, value, shape) -> Affine:
    """``value * affine`` (elementwise, broadcast to ``shape``)."""
    scalar = np.ndim(value) == 0 and not sp.issparse(value)
    terms = []
    for t in affine.terms:
        if isinstance(t, Entries):
            if sp.issparse(value) and not (t.whole and np.ndim(t.coef) == 0):
                raise _Unrecognised
            terms.append(Entries(_times(t.coef, value), t.I, t.J))
        elif isinstance(t, RowSums) and not sp.issparse(value):
            terms.append(RowSums(_times(t.coef, value), t.I))
        elif isinstance(t, Inner) and scalar:
            terms.append(Inner(t.W, t.scale * float(value)))
        else:
            raise _Unrecognised
    constant = affine.constant
    if sp.issparse(value):
        constant = value.multiply(constant).toarray() if np.any(constant) else 0.0
    else:
        constant = _times(constant, value) if np.any(constant) else 0.0
    return Affine(shape, terms, constant)


def _product(left, right, shape, X, matrix: bool) -> Affine:
    """``left * right`` with one side constant (``matrix``: ``@``, read with a scalar side or as the
    dot product of two vectors)."""
    if right.is_constant():
        left, right = right, left
    if not left.is_constant():
        raise _Unrecognised
    if matrix and left.size != 1 and right.size != 1:
        if left.ndim != 1 or right.ndim != 1:
            raise _Unrecognised
        return _total(_scaled(_read(right, X), _value(left), right.shape), shape, X.shape[0])
    return _scaled(_read(right, X), _value(left), shape)


def _transposed(affine: Affine, shape) -> Affine:
    if len(shape) < 2:
        return Affine(shape, affine.terms, affine.constant)
    before = shape[::-1]

    def t(a):
        if np.ndim(a) == 0:
            return a
        return a.T if sp.issparse(a) else np.broadcast_to(a, before).T

    terms = []
    for term in affine.terms:
        if isinstance(term, Entries):  # a whole X is its own transpose
            terms.append(Entries(t(term.coef)) if term.whole else Entries(t(term.coef), t(term.I), t(term.J)))
        elif isinstance(term, RowSums):
            terms.append(RowSums(t(term.coef), t(term.I)))
        else:
            terms.append(term)
    return Affine(shape, terms, t(affine.constant))


def _grid(n: int):
    r = np.arange(n)
    return r[:, None], r[None, :]


def _explicit(term: Entries, shape, n: int):
    """``(coef, I, J)`` of an entries term, broadcast to ``shape`` (views, no copies)."""
    if sp.issparse(term.coef):
        raise _Unrecognised
    I, J = _grid(n) if term.whole else (term.I, term.J)
    return tuple(np.broadcast_to(a, shape) for a in (term.coef, I, J))


def _diagonal(affine: Affine, k: int, n: int) -> Affine:
    """``diag(affine, k)`` of a square matrix expression."""
    before = affine.shape
    if len(before) != 2:
        raise _Unrecognised
    shape = (max(0, min(before[0], before[1] - k) if k >= 0 else min(before[0] + k, before[1])),)
    terms = []
    for term in affine.terms:
        if not isinstance(term, Entries):
            raise _Unrecognised
        coef, I, J = (a.diagonal(k) for a in _explicit(term, before, n))
        terms.append(Entries(coef, I, J))
    constant = affine.constant if np.ndim(affine.constant) == 0 else np.broadcast_to(affine.constant, before).diagonal(k)
    return Affine(shape, terms, constant)


def _indexed(affine: Affine, key, shape, n: int) -> Affine:
    if not all(isinstance(k, slice) for k in key):
        raise _Unrecognised
    before = affine.shape

    def pick(a):
        return np.broadcast_to(a, before)[key].reshape(shape)

    terms = []
    for term in affine.terms:
        if isinstance(term, Entries):
            terms.append(Entries(*(pick(a) for a in _explicit(term, before, n))))
        elif isinstance(term, RowSums):
            terms.append(RowSums(pick(term.coef), pick(term.I)))
        else:
            raise _Unrecognised
    constant = affine.constant if np.ndim(affine.constant) == 0 else pick(affine.constant)
    return Affine(shape, terms, constant)


def _summed(expr, shape, X) -> Affine:
    argument = expr.args[0]
    if expr.axis is None and isinstance(argument, multiply):
        # vdot(C, X) is sum(multiply(conj(reshape(C)), reshape(X))): read it at the matrices' shape
        left, right = (a.args[0] if isinstance(a, conj) else a for a in argument.args)
        if isinstance(left, reshape) and isinstance(right, reshape) and left.order == right.order \
                and left.args[0].shape == right.args[0].shape:
            inner = left.args[0].shape
            return _total(_product(left.args[0], right.args[0], inner, X, matrix=False), shape, X.shape[0])
    affine = _read(argument, X)
    n = X.shape[0]
    if expr.axis is None:
        return _total(affine, shape, n)
    if not isinstance(expr.axis, (int, np.integer)) or affine.shape != (n, n):
        raise _Unrecognised
    coef = 0.0
    for term in affine.terms:
        if not (isinstance(term, Entries) and term.whole and np.ndim(term.coef) == 0):
            raise _Unrecognised
        coef += float(term.coef)
    constant = affine.constant if np.ndim(affine.constant) == 0 else \
        np.broadcast_to(affine.constant, affine.shape).sum(axis=expr.axis, keepdims=expr.keepdims)
    if np.ndim(constant) == 0:
        constant = constant * n
    terms = [RowSums(coef, np.arange(n).reshape(shape))] if affine.terms else []
    return Affine(shape, terms, constant)


def _total(affine: Affine, shape, n: int) -> Affine:
    """The sum of every entry of ``affine``: a scalar of :class:`Inner` terms."""
    terms = []
    for term in affine.terms:
        if isinstance(term, Inner):
            terms.append(term)
        elif isinstance(term, Entries) and term.whole and affine.shape == (n, n):
            scalar = np.ndim(term.coef) == 0 and not sp.issparse(term.coef)
            W = term.coef if scalar or sp.issparse(term.coef) else np.broadcast_to(term.coef, (n, n))
            terms.append(Inner(float(W), 1.0) if scalar else Inner(W))
        elif isinstance(term, Entries):
            coef, I, J = (a.ravel() for a in _explicit(term, affine.shape, n))
            terms.append(Inner(sp.csr_matrix((coef, (I, J)), shape=(n, n))))
        elif isinstance(term, RowSums):
            coef, I = (np.broadcast_to(a, affine.shape).ravel() for a in (term.coef, term.I))
            W = sp.csr_matrix((np.repeat(coef, n), (np.repeat(I, n), np.tile(np.arange(n), I.size))), shape=(n, n))
            terms.append(Inner(W))
        else:
            raise _Unrecognised
    constant = float(np.sum(affine.constant)) * (affine.size / max(np.size(affine.constant), 1))
    return Affine(shape, terms, constant)


# ------------------------------------------------------------------------------------------------
# the standard form's parts
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


def add_objective(expr, X: cp.Variable, weight: float, C: np.ndarray) -> float | None:
    """Add ``weight * expr`` (a scalar affine expression) to the coefficient ``C`` in place and
    return its constant; None (C untouched) where the recogniser does not read ``expr``."""
    affine = read_affine(expr, X)
    if affine is None or affine.size != 1:
        return None
    total = _total(affine, (), X.shape[0])
    for term in total.terms:
        _add_to(C, term.W, weight * term.scale)
    return weight * total.constant


def _whole_scale(affine: Affine):
    """``a`` when ``affine`` is ``a X + E`` with a scalar a, else None."""
    if not affine.terms or not all(isinstance(t, Entries) and t.whole and np.ndim(t.coef) == 0
                                   and not sp.issparse(t.coef) for t in affine.terms):
        return None
    return float(sum(float(t.coef) for t in affine.terms))


def squared_norm(argument, X: cp.Variable, weight: float, C: np.ndarray):
    """Add the linear part of ``weight * ||a X + E||_F^2`` to ``C`` in place and return ``(weight
    a^2, weight ||E||^2)``; None (C untouched) unless ``argument`` is read as ``a X + E``, a != 0."""
    affine = read_affine(argument, X)
    a = None if affine is None else _whole_scale(affine)
    if not a:
        return None
    n = X.shape[0]
    E = affine.constant
    if np.any(E):
        _add_to(C, E if np.ndim(E) == 0 else np.broadcast_to(E, (n, n)), 2.0 * weight * a)
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
    """Read ``constraint`` into ``reader`` (the standard form's reader: its ``psd``, ``L``, ``U``,
    ``rows``/``lo``/``hi`` and ``_rows``); False (nothing read) where the recogniser does not read
    it, or it has data the reader must refuse (the coefficient backend's path then reads it)."""
    X = reader.X
    if isinstance(constraint, cp.constraints.PSD):
        affine = read_affine(constraint.args[0], X)
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
    affine = read_affine(constraint.expr, X)
    if affine is None or not np.all(np.isfinite(affine.constant)) or not all(_finite(t) for t in affine.terms):
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
    A = _rows_matrix(affine, n)
    flat = (np.broadcast_to(side, affine.shape).ravel(order="F").astype(float) for side in (lo, hi))
    reader._rows(A, *flat, name)
    return True


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
    for bound, value, better in ((reader.L, low, np.maximum), (reader.U, high, np.minimum)):
        if np.ndim(value) == 0:
            if np.isfinite(value):
                better(bound, value, out=bound)
        else:
            value = np.broadcast_to(value, (n, n))
            better(bound, value, out=bound)
            better(bound, value.T, out=bound)


class RowSumsBlock:
    """The symmetrised rows ``coef_r (e_i 1^T + 1 e_i^T) / 2`` (``i = I_r``) on ``vec(X)``, held as
    ``(I, coef)`` until :func:`stack_rows` writes them into the rows' matrix (so that they are never
    held twice).  Each row has ``2 n - 1`` entries: ``coef_r`` at ``(i, i)``, ``coef_r / 2`` elsewhere
    in row and column i."""

    def __init__(self, I: np.ndarray, coef: np.ndarray, n: int):
        self.I, self.coef, self.n = np.asarray(I, dtype=np.int64), np.asarray(coef, dtype=float), n
        self.width = 2 * n - 1
        self.shape = (len(self.I), n * n)
        self.nnz = len(self.I) * self.width

    def fill(self, data: np.ndarray, indices: np.ndarray) -> None:
        """Write the rows' values and column indices (each row sorted) into ``data`` and ``indices``."""
        n, width = self.n, self.width
        column = np.arange(n, dtype=indices.dtype) * n  # (k, i) is k n + i
        row = np.arange(n, dtype=indices.dtype)  # (i, k) is i n + k
        for r, i in enumerate(self.I):
            start = r * width
            indices[start:start + i] = column[:i] + i
            indices[start + i:start + i + n] = row + i * n
            indices[start + i + n:start + width] = column[i + 1:] + i
        data.reshape(-1, width)[...] = (self.coef / 2)[:, None]
        data[np.arange(len(self.I)) * width + 2 * self.I] = self.coef

    def tocsr(self) -> sp.csr_matrix:
        return stack_rows([self], self.n)


def row_sums_matrix(I: np.ndarray, coef: np.ndarray, n: int) -> sp.csr_matrix:
    """:class:`RowSumsBlock` as a CSR matrix of shape ``(len(I), n^2)``."""
    return RowSumsBlock(I, coef, n).tocsr()


def stack_rows(blocks: list, n: int) -> sp.csr_matrix:
    """The rows' matrix of the standard form: the blocks (sparse matrices, :class:`RowSumsBlock`)
    one above the other, written once into arrays of the final size."""
    if not blocks:
        return sp.csr_matrix((0, n * n))
    m, total = sum(b.shape[0] for b in blocks), sum(b.nnz for b in blocks)
    dtype = np.int32 if max(total, n * n) < 2**31 - 1 else np.int64
    data, indices = np.empty(total), np.empty(total, dtype=dtype)
    indptr = np.zeros(m + 1, dtype=dtype)
    row = offset = 0
    for block in blocks:
        rows, nnz = block.shape[0], block.nnz
        if isinstance(block, RowSumsBlock):
            block.fill(data[offset:offset + nnz], indices[offset:offset + nnz])
            ends = np.arange(1, rows + 1) * block.width
        else:
            block = sp.csr_matrix(block)
            data[offset:offset + nnz], indices[offset:offset + nnz] = block.data, block.indices
            ends = block.indptr[1:]
        indptr[row + 1:row + rows + 1] = ends + offset
        row, offset = row + rows, offset + nnz
    return sp.csr_matrix((data, indices, indptr), shape=(m, n * n))


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
            coef, I, J = (a.ravel(order="F") for a in _explicit(term, shape, n))
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
    A = sp.csr_matrix((np.concatenate([half, half]), (np.concatenate([row, row]), np.concatenate([i * n + j, j * n + i]))),
                      shape=(size, n * n))
    A.sum_duplicates()
    return A
