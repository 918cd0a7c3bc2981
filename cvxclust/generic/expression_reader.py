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
  ``vdot(C, X)``, ``trace(C @ X)`` (which cvxpy writes ``sum(multiply(C, X.T))``); W is a
  :class:`LowRank` ``L R^T`` where the statement writes a product of constants of low rank:
  ``trace(A @ X @ B)`` (A of shape ``(r, n)``, B of shape ``(n, r)``; cvxpy writes it
  ``sum(multiply(A @ X, B.T))``), and ``P @ Q`` of inner dimension ``r < n / 2`` in
  ``trace(P @ Q @ X)``, ``sum(multiply(P @ Q, X))`` or ``vdot(P @ Q, X)``, neither of the
  ``n x n`` product formed (a product NumPy evaluates, ``F @ F.T`` of two arrays, reaches cvxpy
  as one ``n x n`` constant: ``cp.Constant(F) @ F.T`` keeps it a product);

plus a constant.  Nothing of the size of X is copied to describe it: a data matrix is referred to,
a transpose is dropped (X is symmetric, and so is every coefficient once the reader symmetrises
it).  A :class:`LowRank` coefficient is read in the objective only (a constraint that has one
is read by the coefficient backend).  What it does not recognise returns None, and the
coefficient backend reads that expression as before.  The description becomes the objective's
coefficient in place, entrywise bounds (a whole-matrix bound updates L and U in place), or
symmetrised rows built with index arithmetic (:mod:`cvxclust.generic.expression_form`).
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

__all__ = ["Affine", "Entries", "Inner", "LowRank", "RowSums", "Unrecognised", "broadcast_entries", "read_affine",
           "total_of"]


class Unrecognised(Exception):
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
class LowRank:
    """``left @ right.T``, each factor of shape ``(n, r)``: a coefficient of rank at most r held as its
    factors (symmetrised where it is used, ``(L R^T + R L^T) / 2``)."""

    left: np.ndarray
    right: np.ndarray


@dataclass
class Inner:
    """``scale * <W, X>``; ``W`` a float (every entry W), an ndarray of shape (n, n), a sparse matrix
    or a :class:`LowRank`."""

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
    except Unrecognised:
        return None


# ------------------------------------------------------------------------------------------------
# the recogniser
# ------------------------------------------------------------------------------------------------
def _read(expr, X) -> Affine:
    shape = tuple(expr.shape)
    if len(shape) > 2:
        raise Unrecognised
    if isinstance(expr, cp.Variable):
        if expr.id != X.id:
            raise Unrecognised
        return Affine(shape, [Entries(1.0)])
    if expr.is_constant():
        value = _value(expr)
        return Affine(shape, [], value.toarray() if sp.issparse(value) else value)
    if isinstance(expr, NegExpression):
        return _scaled(_read(expr.args[0], X), -1.0, shape)
    if isinstance(expr, AddExpression):
        parts = [_read(arg, X) for arg in expr.args]
        if any(p.shape != shape and p.size == 1 and _has_inner(p) for p in parts):
            raise Unrecognised
        constant = parts[0].constant
        for p in parts[1:]:
            constant = constant + p.constant
        return Affine(shape, [t for p in parts for t in p.terms], constant)
    if isinstance(expr, (multiply, MulExpression)):
        return _product(expr.args[0], expr.args[1], shape, X, matrix=not isinstance(expr, multiply))
    if isinstance(expr, DivExpression) and expr.args[1].is_constant():
        value = _value(expr.args[1])
        if sp.issparse(value):
            raise Unrecognised
        return _scaled(_read(expr.args[0], X), 1.0 / value, shape)
    if isinstance(expr, (Promote, broadcast_to)):
        inner = _read(expr.args[0], X)
        if _has_inner(inner) and int(np.prod(shape, dtype=int)) != 1:
            raise Unrecognised
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
        return total_of(_diagonal(_read(expr.args[0], X), 0, X.shape[0]), shape, X.shape[0])
    if isinstance(expr, index):
        return _indexed(_read(expr.args[0], X), expr.key, shape, X.shape[0])
    raise Unrecognised


def _value(expr):
    """The value of a constant expression: a float, an ndarray that broadcasts to its shape (a
    promoted scalar stays a float), or a sparse matrix."""
    while isinstance(expr, (Promote, broadcast_to)):
        expr = expr.args[0]
    if isinstance(expr, transpose) and expr.axes is None and expr.ndim == 2:  # cvxpy evaluates it dense
        inner = _value(expr.args[0])
        if sp.issparse(inner):
            return inner.T.tocsr()
    value = expr.value
    if sp.issparse(value):
        return sp.csr_matrix(value)
    value = np.asarray(value)
    if np.iscomplexobj(value):
        raise Unrecognised
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
            raise Unrecognised
        return (a * b) if np.ndim(a) == 0 or np.ndim(b) == 0 else a.multiply(b)
    return a * b


def _scaled(affine: Affine, value, shape) -> Affine:
    """``value * affine`` (elementwise, broadcast to ``shape``)."""
    scalar = np.ndim(value) == 0 and not sp.issparse(value)
    terms = []
    for t in affine.terms:
        if isinstance(t, Entries):
            if sp.issparse(value) and not (t.whole and np.ndim(t.coef) == 0):
                raise Unrecognised
            terms.append(Entries(_times(t.coef, value), t.I, t.J))
        elif isinstance(t, RowSums) and not sp.issparse(value):
            terms.append(RowSums(_times(t.coef, value), t.I))
        elif isinstance(t, Inner) and scalar:
            terms.append(Inner(t.W, t.scale * float(value)))
        else:
            raise Unrecognised
    constant = affine.constant
    if sp.issparse(value):
        constant = value.multiply(constant).toarray() if np.any(constant) else 0.0
    else:
        constant = _times(constant, value) if np.any(constant) else 0.0
    return Affine(shape, terms, constant)


def _product(left, right, shape, X, matrix: bool) -> Affine:
    """``left * right`` with one side constant (``matrix``: ``@``, read with a scalar side or as the
    dot product of two vectors)."""
    if matrix and left.size != 1 and right.size != 1 and (left.ndim == 2 or right.ndim == 2):
        return _times_vector(left, right, shape, X)
    if right.is_constant():
        left, right = right, left
    if not left.is_constant():
        raise Unrecognised
    if matrix and left.size != 1 and right.size != 1:
        if left.ndim != 1 or right.ndim != 1:
            raise Unrecognised
        return total_of(_scaled(_read(right, X), _value(left), right.shape), shape, X.shape[0])
    return _scaled(_read(right, X), _value(left), shape)


def _times_vector(left, right, shape, X) -> Affine:
    """``M @ v`` or ``v @ M`` for a square matrix expression M of X and a constant vector v whose
    entries are all equal, ``v = a 1``: a times M's row (column) sums."""
    n = X.shape[0]
    if right.is_constant() and not left.is_constant():
        matrix, vector, axis = left, right, 1
    elif left.is_constant() and not right.is_constant():
        matrix, vector, axis = right, left, 0
    else:
        raise Unrecognised
    if matrix.shape != (n, n) or vector.size != n or (vector.ndim == 2 and vector.shape[axis] != 1):
        raise Unrecognised
    value = _value(vector)
    if sp.issparse(value) or np.ndim(value) == 0:
        raise Unrecognised
    a = float(value.flat[0])
    if np.any(value != a):
        raise Unrecognised
    return _scaled(_axis_sums(_read(matrix, X), axis, shape, n), a, shape)


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


def broadcast_entries(term: Entries, shape, n: int):
    """``(coef, I, J)`` of an entries term, broadcast to ``shape`` (views, no copies)."""
    if sp.issparse(term.coef):
        raise Unrecognised
    I, J = _grid(n) if term.whole else (term.I, term.J)
    return tuple(np.broadcast_to(a, shape) for a in (term.coef, I, J))


def _diagonal(affine: Affine, k: int, n: int) -> Affine:
    """``diag(affine, k)`` of a square matrix expression."""
    before = affine.shape
    if len(before) != 2:
        raise Unrecognised
    shape = (max(0, min(before[0], before[1] - k) if k >= 0 else min(before[0] + k, before[1])),)
    terms = []
    for term in affine.terms:
        if not isinstance(term, Entries):
            raise Unrecognised
        coef, I, J = (a.diagonal(k) for a in broadcast_entries(term, before, n))
        terms.append(Entries(coef, I, J))
    constant = affine.constant
    if np.ndim(constant):
        constant = np.broadcast_to(constant, before).diagonal(k)
    return Affine(shape, terms, constant)


def _indexed(affine: Affine, key, shape, n: int) -> Affine:
    if not all(isinstance(k, slice) for k in key):
        raise Unrecognised
    before = affine.shape
    # cvxpy's keys are literal ranges: slice(5, -1, -1) runs 5, 4, ..., 0 (NumPy would wrap -1)
    ranges = np.ix_(*(np.arange(*k.indices(size)) if k.start is None or k.stop is None
                      else np.arange(k.start, k.stop, k.step or 1) for k, size in zip(key, before)))

    def pick(a):
        return np.broadcast_to(a, before)[ranges].reshape(shape)

    terms = []
    for term in affine.terms:
        if isinstance(term, Entries):
            terms.append(Entries(*(pick(a) for a in broadcast_entries(term, before, n))))
        elif isinstance(term, RowSums):
            terms.append(RowSums(pick(term.coef), pick(term.I)))
        else:
            raise Unrecognised
    constant = affine.constant if np.ndim(affine.constant) == 0 else pick(affine.constant)
    return Affine(shape, terms, constant)


def _summed(expr, shape, X) -> Affine:
    argument = expr.args[0]
    if expr.axis is None and isinstance(argument, multiply):
        # vdot(C, X) is sum(multiply(conj(reshape(C)), reshape(X))): read it at the matrices' shape
        left, right = (a.args[0] if isinstance(a, conj) else a for a in argument.args)
        vdot = isinstance(left, reshape) and isinstance(right, reshape) and left.order == right.order \
            and left.args[0].shape == right.args[0].shape
        if vdot:
            left, right = left.args[0], right.args[0]
        term = _lowrank_inner(left, right, X)
        if term is not None:
            return Affine(shape, [term])
        if vdot:
            return total_of(_product(left, right, left.shape, X, matrix=False), shape, X.shape[0])
    affine = _read(argument, X)
    n = X.shape[0]
    if expr.axis is None:
        return total_of(affine, shape, n)
    if not isinstance(expr.axis, (int, np.integer)):
        raise Unrecognised
    return _axis_sums(affine, expr.axis, shape, n)


def _is_variable(expr, X) -> bool:
    """Whether ``expr`` is X or its transpose (the same, X being symmetric)."""
    if isinstance(expr, transpose) and expr.axes is None:
        expr = expr.args[0]
    return isinstance(expr, cp.Variable) and expr.id == X.id


def _factor(expr, shape) -> np.ndarray | None:
    """The value of the constant ``expr`` as an array of ``shape`` (None where it is not one)."""
    value = _value(expr)
    if sp.issparse(value):
        value = value.toarray()
    return value if np.shape(value) == shape else None


def _lowrank_inner(left, right, X) -> Inner | None:
    """``<W, X>`` with W a :class:`LowRank`, where ``sum(multiply(left, right))`` is the inner product
    of X with a product of constants of inner dimension ``r < n / 2``: X times ``P @ Q``, or ``A @ X``
    (``X @ B``) times a constant M (``<A^T M, X>``, ``<M B^T, X>``); None otherwise (transposes of X
    and of the product are dropped: X is symmetric)."""
    n = X.shape[0]
    for const, other in ((left, right), (right, left)):
        if not const.is_constant() or other.is_constant():
            continue
        product = const.args[0] if isinstance(const, transpose) and const.axes is None else const
        if _is_variable(other, X) and isinstance(product, MulExpression) and product.shape == (n, n) \
                and all(a.is_constant() and a.ndim == 2 for a in product.args) and 2 * product.args[0].shape[1] < n:
            P, Q = product.args
            r = P.shape[1]
            P, Q = _factor(P, (n, r)), _factor(Q, (r, n))
            return None if P is None or Q is None else Inner(LowRank(P, Q.T))
        if not isinstance(other, MulExpression) or other.ndim != 2 or const.shape != other.shape:
            continue
        A, B = other.args
        if A.is_constant() and _is_variable(B, X) and 2 * A.shape[0] < n:  # A @ X, of shape (r, n)
            A, M = _factor(A, other.shape), _factor(const, other.shape)
            return None if A is None or M is None else Inner(LowRank(A.T, M.T))
        if B.is_constant() and _is_variable(A, X) and 2 * B.shape[1] < n:  # X @ B, of shape (n, r)
            B, M = _factor(B, other.shape), _factor(const, other.shape)
            return None if B is None or M is None else Inner(LowRank(M, B))
    return None


def _axis_sums(affine: Affine, axis: int, shape, n: int) -> Affine:
    """The sums of the square matrix expression ``affine`` along ``axis``, of shape ``shape``
    (a column sum of a symmetric X is the row sum of the same index)."""
    if affine.shape != (n, n):
        raise Unrecognised
    coef = 0.0
    for term in affine.terms:
        if not (isinstance(term, Entries) and term.whole and np.ndim(term.coef) == 0):
            raise Unrecognised
        coef += float(term.coef)
    constant = affine.constant if np.ndim(affine.constant) == 0 else \
        np.broadcast_to(affine.constant, affine.shape).sum(axis=axis).reshape(shape)
    if np.ndim(constant) == 0:
        constant = constant * n
    terms = [RowSums(coef, np.arange(n).reshape(shape))] if affine.terms else []
    return Affine(shape, terms, constant)


def total_of(affine: Affine, shape, n: int) -> Affine:
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
            coef, I, J = (a.ravel() for a in broadcast_entries(term, affine.shape, n))
            terms.append(Inner(sp.csr_matrix((coef, (I, J)), shape=(n, n))))
        elif isinstance(term, RowSums):
            coef, I = (np.broadcast_to(a, affine.shape).ravel() for a in (term.coef, term.I))
            W = sp.csr_matrix((np.repeat(coef, n), (np.repeat(I, n), np.tile(np.arange(n), I.size))), shape=(n, n))
            terms.append(Inner(W))
        else:
            raise Unrecognised
    constant = float(np.sum(affine.constant)) * (affine.size / max(np.size(affine.constant), 1))
    return Affine(shape, terms, constant)
