r"""Read a cvxpy problem over one symmetric matrix into the standard form the generic solver takes.

The class of problems :func:`cvxclust.solve` accepts is, for one symmetric ``n x n`` variable X,

.. math::

    \min_X\ c\,\|X\|_F^2 + \langle C, X\rangle + \text{const}
    \quad\text{s.t.}\quad X \succeq 0\ (\text{optional}),\quad L \le X \le U,\quad
    \ell \le \mathcal A(X) \le h,

with ``c >= 0`` (a maximisation is read as the minimisation of the negated objective), ``L`` and
``U`` entrywise bounds (``-inf``/``+inf`` where absent), and ``A`` a linear map given by sparse
rows.  A user writes it with cvxpy atoms: a linear objective (``trace(C @ X)``,
``sum(multiply(C, X))``, ``vdot``), a Frobenius term (``w * sum_squares(X - K)``,
``norm(X - K, "fro")**2``, ``sum(square(X - K))``), ``X >> 0``, bounds on X or its slices
(``X >= 0``, ``diag(X) <= u``), and any affine equality or inequality of X.

The atoms of the class are read straight from the expression tree at linear cost
(:mod:`cvxclust.generic.expression_reader`); any other affine expression is read once into its
coefficients on ``vec(X)`` (a sparse matrix with as many rows as the expression has entries) by
cvxpy's own linear-operator backend.  Either way, a row whose
only entry is one ``X_ij`` (with its mirror ``X_ji``) becomes a bound, every other row a row of
``A``.  Nothing is canonicalised into cones, and no ``n^2 x n^2`` dense operator is formed.
Rows act on symmetric matrices, so each is symmetrised: ``A(X) = <A_r, X>`` with ``A_r``
symmetric, held as blocks of rows of a sparse ``m x n^2`` matrix, the row sums as their indices
alone, a row of ``sum(X)`` as its coefficient; bounds of one number (one off the diagonal, another
on it) are views of ``2 n - 1`` numbers (:mod:`cvxclust.generic.compact`).  The linear coefficient
is kept as its parts (:class:`~cvxclust.generic.cost.Cost`): a ``scipy.sparse`` cost stays sparse,
``sum(X)`` is a weight of the all-ones matrix, and a dense part exists only where a dense term does;
the dense ``C`` is written only when a dense method asks for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
from cvxpy.atoms.affine.affine_atom import AffAtom
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.elementwise.power import Power
from cvxpy.atoms.pnorm import Pnorm
from cvxpy.atoms.quad_over_lin import quad_over_lin

from . import expression_form
from .coefficients import CVXPY_VERSIONS, linear_map, symmetric_identity, symmetrize_columns
from .._memory import check_memory, square_bytes
from .compact import Bound, Rows, bound_sizes, finite_count, first_crossing, held_bytes, off_and_diagonal
from .cost import Cost

__all__ = ["CVXPY_VERSIONS", "StandardForm", "linear_map", "standard_form"]

# the variable attributes the class can read (the others change the problem's nature)
_ATTRIBUTES = {"symmetric", "PSD", "nonneg", "nonpos", "bounds"}
#: the largest magnitude of a coefficient or a finite bound: the solver squares them (norms, the
#: objective's terms, the rows' Gram matrix), and their squares summed over n^2 entries must be finite
LARGEST_DATA = 1e150


@dataclass(repr=False)
class StandardForm:
    """A problem of the class, as arrays (see the module docstring).

    Attributes
    ----------
    n : int
        Order of X.
    sense : {"minimize", "maximize"}
        The problem's sense; ``c``, ``C`` and ``constant`` are those of the minimisation
        (negated for a maximisation).
    c : float
        Weight of ``||X||_F^2`` (>= 0).
    cost : Cost
        Symmetric linear coefficient as its parts (:class:`~cvxclust.generic.cost.Cost`: a dense
        part, a sparse part kept as written, a weight of the all-ones matrix): its products,
        norm and inner products with X form no ``n x n`` array that the problem does not have.
    C : ndarray of shape (n, n)
        The same coefficient as one dense matrix, written once on first use, after a check that
        it fits in memory (the solvers that need only products use ``cost``).
    constant : float
        Constant of the objective.
    psd : bool
        Whether ``X >> 0`` is a constraint.
    L, U : ndarray of shape (n, n)
        Symmetric entrywise bounds (``-inf``/``+inf`` where none), read-only: a bound of one
        number off the diagonal and one on it is a view of ``2 n - 1`` numbers
        (:func:`~cvxclust.generic.compact.constant_bound`).
    rows : Rows
        Symmetrised rows of the linear map, as blocks (:class:`~cvxclust.generic.compact.Rows`:
        the row sums as their indices and coefficients).
    A : scipy.sparse.csr_matrix of shape (m, n^2)
        The same rows as one sparse matrix, written on first use (the solvers that need no such
        matrix use ``rows``, :meth:`row_values` and :meth:`adjoint`).
    lo, hi : ndarray of shape (m,)
        Bounds of the rows (equal for an equality).
    variable : cvxpy.Variable
        The problem's variable.
    """

    n: int
    sense: str
    c: float
    cost: Cost
    constant: float
    psd: bool
    L: np.ndarray
    U: np.ndarray
    rows: Rows
    lo: np.ndarray
    hi: np.ndarray
    variable: cp.Variable = field(repr=False)

    @property
    def m(self) -> int:
        """Number of rows of the linear map."""
        return self.rows.shape[0]

    @property
    def C(self) -> np.ndarray:
        """The linear coefficient as one dense ``n x n`` array (:meth:`Cost.dense
        <cvxclust.generic.cost.Cost.dense>`), written once on first use; a
        :class:`~cvxclust._memory.MemoryNeed` (a ValueError) where it would not fit in memory."""
        if getattr(self, "_C", None) is None:
            if not self.cost.is_dense:
                check_memory(square_bytes(self.n), f"the dense cost matrix of order {self.n}",
                             "method='lowrank' works from the sparse cost without forming it")
            self._C = self.cost.dense()
        return self._C

    @property
    def A(self) -> sp.csr_matrix:
        """The rows as one sparse matrix of shape ``(m, n^2)`` (written once, on first use)."""
        if getattr(self, "_A", None) is None:
            self._A = self.rows.tocsr()
        return self._A

    def __repr__(self) -> str:
        bounds = finite_count(self.L) + finite_count(self.U)
        equalities = int(np.sum(self.lo == self.hi))
        return (f"StandardForm(n={self.n}, sense={self.sense!r}, c={self.c:g}, psd={self.psd}, "
                f"finite bounds={bounds}, rows={self.m} ({equalities} equalities))")

    def clip(self, M: np.ndarray) -> np.ndarray:
        """The projection of ``M`` onto the box ``L <= X <= U``."""
        return np.clip(M, self.L, self.U)

    def objective(self, X: np.ndarray) -> float:
        """The objective in the problem's own sense and scale."""
        value = self.c * float(np.vdot(X, X)) + self.cost.inner(X) + self.constant
        return value if self.sense == "minimize" else -value

    def row_values(self, X: np.ndarray) -> np.ndarray:
        """``A(X)`` for a symmetric X."""
        return self.rows.apply(X)

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """``A^*(y) = sum_r y_r A_r``, a symmetric matrix."""
        return self.rows.adjoint(y)

    def residuals(self, X: np.ndarray, *, spectrum: bool = True) -> dict[str, float]:
        """Relative violations of the constraints by ``X``: ``symmetry`` ``||X - X^T|| / ||X||``;
        ``bounds`` the largest violation of ``L <= X <= U``, each entry over ``max(|bound|, max |X|)``
        (a row's scale for a one-entry row); ``rows`` the largest
        violation of ``lo <= A(X) <= hi``, each row over ``max(|bound|, ||A_r||_1 max|X|)``; ``psd``
        ``max(0, -lambda_min) / max |lambda|`` (one eigendecomposition; skipped when ``spectrum`` is
        False).  Only the constraints the problem has appear."""
        X = np.asarray(X, dtype=float)
        scale = max(float(np.abs(X).max()), 1e-300)
        res = {"symmetry": float(np.linalg.norm(X - X.T) / max(np.linalg.norm(X), 1e-300))}
        S = (X + X.T) / 2
        lower, upper = np.isfinite(self.L).any(), np.isfinite(self.U).any()
        if lower or upper:  # the side without a finite bound violates nothing: not computed
            violation = self.L - S if lower else S - self.U
            if lower and upper:
                np.maximum(violation, S - self.U, out=violation)
            violation /= np.maximum(self.bound_sizes, scale)
            res["bounds"] = float(max(violation.max(), 0.0))
        if self.m:
            values = self.row_values(S)
            below, above = self.lo - values, values - self.hi
            size = np.maximum(np.where(np.isfinite(self.lo), np.abs(self.lo), 0),
                              np.where(np.isfinite(self.hi), np.abs(self.hi), 0))
            size = np.maximum(size, self.row_norms * scale)
            res["rows"] = float(max((np.maximum(below, above) / np.maximum(size, 1e-300)).max(), 0.0))
        if self.psd and spectrum:
            w = np.linalg.eigvalsh(S)
            res["psd"] = float(max(0.0, -w[0]) / max(np.abs(w).max(), 1e-300))
        return res

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays of the form: the cost's parts, the bounds (the numbers a view is
        made of), the rows and their ranges (not the sparse matrix ``A`` nor the dense ``C``,
        written only on use)."""
        return self.cost.nbytes + sum(held_bytes(a) for a in (self.L, self.U, self.lo, self.hi)) + self.rows.nbytes

    @property
    def bound_sizes(self) -> np.ndarray:
        """``max(|L|, |U|)`` over the finite bounds of each entry (0 where it has none); a view of
        ``2 n - 1`` numbers where both bounds are."""
        if not hasattr(self, "_bound_sizes"):
            self._bound_sizes = bound_sizes(self.L, self.U)
        return self._bound_sizes

    @property
    def row_norms(self) -> np.ndarray:
        """The 1-norms of the rows ``A_r`` (as symmetric matrices)."""
        if not hasattr(self, "_row_norms"):
            self._row_norms = self.rows.row_norms()
        return self._row_norms


def standard_form(problem) -> StandardForm:
    """Read ``problem`` into a :class:`StandardForm`, or raise a ValueError naming the part of the
    problem outside the class (see the module docstring), a TypeError if it is not a
    ``cvxpy.Problem``."""
    if not isinstance(problem, cp.Problem):
        raise TypeError(f"problem must be a cvxpy.Problem, got {type(problem).__name__}")
    X = _the_variable(problem)
    for where, expr in [("the objective", problem.objective.expr),
                        *((_ConstraintName(i, c), c) for i, c in enumerate(problem.constraints))]:
        if _has_complex_part(expr):
            raise ValueError(f"{where} has complex data or expressions: the class is over real symmetric matrices")
    n = X.shape[0]
    reader = _Reader(X)
    sense = "minimize" if isinstance(problem.objective, cp.Minimize) else "maximize"
    reader.objective(problem.objective.expr, 1.0 if sense == "minimize" else -1.0)
    if X.attributes["PSD"]:
        reader.psd = True
    if X.attributes["nonneg"]:
        reader.L.tighten(0.0)
    if X.attributes["nonpos"]:
        reader.U.tighten(0.0)
    if X.attributes["bounds"] is not None:
        lower, upper = X.attributes["bounds"]
        reader.L.tighten(_bound_value(lower, n, -np.inf))
        reader.U.tighten(_bound_value(upper, n, np.inf))
    for index, constraint in enumerate(problem.constraints):
        reader.constraint(index, constraint)
    return reader.finish(sense)


def _the_variable(problem) -> cp.Variable:
    variables = problem.variables()
    if len(variables) != 1:
        names = [v.name() for v in variables]
        raise ValueError(f"problem must have exactly one variable (a symmetric n x n matrix), got {len(variables)}: "
                         f"{names}")
    if problem.parameters():
        raise ValueError(f"problem has parameters {[p.name() for p in problem.parameters()]}: the generic solver "
                         "reads numbers; build the problem with constants")
    X = variables[0]
    if X.ndim != 2 or X.shape[0] != X.shape[1]:
        raise ValueError(f"the variable {X.name()} must be a square matrix, got shape {X.shape}")
    attributes = {k for k, v in X.attributes.items() if v not in (False, None)}
    if not attributes & {"symmetric", "PSD"}:
        raise ValueError(f"the variable {X.name()} must be symmetric: declare it with "
                         f"cp.Variable(({X.shape[0]}, {X.shape[0]}), symmetric=True) or PSD=True")
    unsupported = sorted(attributes - _ATTRIBUTES)
    if unsupported:
        raise ValueError(f"the variable {X.name()} has attributes {unsupported} outside the class (supported: "
                         f"{sorted(_ATTRIBUTES)})")
    return X


def _describe(expression) -> str:
    """``str(expression)`` on one line (cvxpy prints a matrix constant over several)."""
    return " ".join(str(expression).split())


class _ConstraintName:
    """``constraint i (its text)`` for messages, written only when a message is (the text of a
    constraint with an ``n x n`` constant prints the matrix)."""

    def __init__(self, index: int, constraint):
        self.index, self.constraint = index, constraint

    def __str__(self) -> str:
        return f"constraint {self.index} ({_describe(self.constraint)})"


def _bound_value(value, n: int, default: float):
    """A bound of the variable's ``bounds`` attribute: a number, or an ``(n, n)`` array."""
    if value is None:
        return default
    value = np.asarray(value.value if isinstance(value, cp.Expression) else value, dtype=float)
    return float(value) if value.ndim == 0 else np.broadcast_to(value, (n, n))


def _has_complex_part(expr) -> bool:
    """Whether ``expr`` or any expression it is built of is complex (``real(...)`` of a complex
    product included, which cvxpy's linear-operator backend cannot read)."""
    return expr.is_complex() or any(_has_complex_part(arg) for arg in expr.args)


class _Reader:
    """Accumulates the standard form term by term and constraint by constraint."""

    def __init__(self, X: cp.Variable):
        n = X.shape[0]
        self.X, self.n = X, n
        self.c, self.cost, self.constant = 0.0, expression_form.CostTerms(n), 0.0
        self.psd = False
        self.L, self.U = Bound(n, -np.inf, np.maximum), Bound(n, np.inf, np.minimum)
        self.rows, self.lo, self.hi = [], [], []

    def _affine(self, expr) -> tuple[sp.csr_matrix, np.ndarray]:
        A, b = linear_map(expr, self.X)
        return symmetrize_columns(A, self.n), b

    # -- the objective ------------------------------------------------------------------------
    def objective(self, expr, weight: float) -> None:
        """Add ``weight * expr`` to the objective of the minimisation."""
        if _is_linear(expr):
            constant = expression_form.add_objective(expr, self.X, weight, self.cost)
            if constant is not None:  # read from the expression tree
                self.constant += constant
                return
            A, b = self._affine(expr)
            self.cost.add_row_total(A, weight)
            self.constant += weight * float(b.sum())
            return
        if isinstance(expr, cp.atoms.affine.add_expr.AddExpression):
            for arg in expr.args:
                self.objective(arg, weight)
            return
        if isinstance(expr, cp.atoms.affine.unary_operators.NegExpression):
            return self.objective(expr.args[0], -weight)
        scalar = _scalar_factor(expr)
        if scalar is not None:
            factor, rest = scalar
            return self.objective(rest, weight * factor)
        inner = _squared_frobenius(expr)
        if inner is not None:
            argument, factor = inner
            return self._frobenius(argument, weight * factor, expr)
        raise ValueError(
            f"the objective term {_describe(expr)} (atom {type(expr).__name__}) is outside the class: the generic "
            "solver takes a linear objective plus weighted squared Frobenius norms of affine expressions of X "
            "(sum_squares(X - K), norm(X - K, 'fro')**2)")

    def _frobenius(self, argument, weight: float, expr) -> None:
        """Add ``weight * ||argument||_F^2`` for an affine ``argument = a X + E``."""
        if weight < 0:
            raise ValueError(f"the objective term {_describe(expr)} has the wrong sign for a convex problem (a "
                             "squared norm must be added when minimizing, subtracted when maximizing)")
        if not _is_linear(argument):
            raise ValueError(f"the squared norm in {_describe(expr)} must be of an affine expression of X")
        square = expression_form.squared_norm(argument, self.X, weight, self.cost)
        if square is not None:  # ||a X + E||^2 read from the expression tree
            self.c += square[0]
            self.constant += square[1]
            return
        A, b = self._affine(argument)
        n = self.n
        gram = (A.T @ A).tocsr()
        diagonal = np.arange(n) * (n + 1)
        scale = float(gram[diagonal[0], diagonal[0]])
        identity = symmetric_identity(n)
        if scale <= 0 or abs(gram - scale * identity).max() > 1e-10 * scale:
            raise ValueError(f"the squared norm in {_describe(expr)} is not of the form ||a X + E||_F^2: the generic "
                             "solver takes squared Frobenius norms of the whole matrix (a weighted or partial norm "
                             "has no closed-form proximal step)")
        self.c += weight * scale
        self.cost.add((A.T @ b).reshape(n, n), 2.0 * weight)
        with np.errstate(over="ignore"):  # data too large to square are refused by finish(), naming them
            self.constant += weight * float(b @ b)

    # -- the constraints -------------------------------------------------------------------------
    def constraint(self, index: int, constraint) -> None:
        name = _ConstraintName(index, constraint)
        if not all(_is_linear(arg) for arg in constraint.args):
            raise ValueError(f"{name} is not affine in X: the class has X >> 0 and affine equalities and "
                             "inequalities of X")
        if expression_form.read_constraint(self, constraint, name):  # read from the expression tree
            return
        if isinstance(constraint, cp.constraints.PSD):
            A, b = self._affine(constraint.args[0])
            identity = symmetric_identity(self.n)
            a = float(A[0, 0]) if A.shape == identity.shape else 0.0  # a X >> 0 with a > 0 is X >> 0
            if a <= 0 or abs(A - a * identity).max() > 1e-12 * a or np.abs(b).max(initial=0) > 0:
                raise ValueError(f"{name}: the only semidefinite constraint of the class is X >> 0 on the whole "
                                 "variable")
            self.psd = True
            return
        if isinstance(constraint, (cp.constraints.Equality, cp.constraints.Zero)):
            A, b = self._affine(constraint.expr)
            return self._rows(A, -b, -b, name)
        if isinstance(constraint, (cp.constraints.Inequality, cp.constraints.NonPos)):
            A, b = self._affine(constraint.expr)
            return self._rows(A, np.full(b.shape, -np.inf), -b, name)
        if isinstance(constraint, cp.constraints.NonNeg):
            A, b = self._affine(constraint.expr)
            return self._rows(A, -b, np.full(b.shape, np.inf), name)
        raise ValueError(f"{name}: a {type(constraint).__name__} constraint is outside the class (X >> 0, "
                         "affine equalities and inequalities of X)")

    def _rows(self, A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, name: str) -> None:
        """Rows ``lo <= A x <= hi``: one-entry rows become bounds, empty rows are checked, the
        others join the linear map."""
        n = self.n
        A = sp.csr_matrix(A)
        if not np.isfinite(A.data).all() or np.isnan(lo).any() or np.isnan(hi).any() \
                or np.isinf(lo[lo == hi]).any():
            raise ValueError(f"{name} has NaN or infinite data")
        A.eliminate_zeros()
        count = np.diff(A.indptr)
        empty = count == 0
        if empty.any() and (np.any(lo[empty] > 1e-12 * np.maximum(1, np.abs(lo[empty])))
                            or np.any(hi[empty] < -1e-12 * np.maximum(1, np.abs(hi[empty])))):
            raise ValueError(f"{name} does not involve X and does not hold: the problem is infeasible")
        first = A.indptr[:-1]
        single = np.zeros(A.shape[0], dtype=bool)
        k1 = np.where(count >= 1, A.indices[np.minimum(first, A.nnz - 1)], -1) if A.nnz else np.full(A.shape[0], -1)
        i1, j1 = np.divmod(k1, n)
        single |= (count == 1) & (i1 == j1)
        if A.nnz:
            k2 = np.where(count == 2, A.indices[np.minimum(first + 1, A.nnz - 1)], -1)
            i2, j2 = np.divmod(k2, n)
            single |= (count == 2) & (i1 == j2) & (j1 == i2)
        if single.any():
            coefficient = np.asarray(A[single].sum(axis=1)).ravel()
            i, j = i1[single], j1[single]
            low, high = lo[single] / coefficient, hi[single] / coefficient
            low, high = np.where(coefficient > 0, low, high), np.where(coefficient > 0, high, low)
            self.L.tighten_entries(i, j, low)
            self.U.tighten_entries(i, j, high)
        general = ~single & ~empty
        if general.any():
            self.rows.append(A[general])
            self.lo.append(lo[general])
            self.hi.append(hi[general])

    def finish(self, sense: str) -> StandardForm:
        n = self.n
        data = self.cost.data()
        _check_magnitude("the objective", [*data, [self.c]])  # before its square overflows the constant
        if not (all(np.isfinite(a).all() for a in data) and np.isfinite(self.c) and np.isfinite(self.constant)):
            raise ValueError("the objective has NaN or infinite data")
        L, U = self.L.array(), self.U.array()
        infeasible = first_crossing(L, U)
        if infeasible is not None:
            i, j = infeasible
            raise ValueError(f"the bounds on X[{i}, {j}] are infeasible: {L[i, j]:g} > {U[i, j]:g}")
        rows = Rows(self.rows, n)
        lo = np.concatenate(self.lo) if self.lo else np.zeros(0)
        hi = np.concatenate(self.hi) if self.hi else np.zeros(0)
        dense, sparse, ones, lowrank = self.cost.parts()
        _check_magnitude("the bounds on X", [L, U])
        _check_magnitude("the constraints", [*rows.data(), lo, hi])
        return StandardForm(n=n, sense=sense, c=float(self.c), cost=Cost(n, dense, sparse, ones, lowrank),
                            constant=float(self.constant), psd=self.psd, L=L, U=U, rows=rows, lo=lo, hi=hi,
                            variable=self.X)


def _check_magnitude(where: str, arrays) -> None:
    """Raise a ValueError naming ``where`` if a finite entry of ``arrays`` exceeds ``LARGEST_DATA``."""
    # the largest finite magnitude without a temporary of each array's size (C and the bounds are n x n;
    # a bound of two numbers is read from them)
    arrays = [np.array(compact) if (compact := off_and_diagonal(a)) is not None else a for a in map(np.asarray, arrays)]
    largest = max((max(float(np.max(a, where=np.isfinite(a), initial=0.0)),
                       -float(np.min(a, where=np.isfinite(a), initial=0.0))) for a in arrays),
                  default=0.0)
    if largest > LARGEST_DATA:
        raise ValueError(f"{where} has data of magnitude {largest:.3g}: the generic solver squares the problem's "
                         f"data, so it takes magnitudes up to {LARGEST_DATA:g}; rescale the problem")


def _is_linear(expr) -> bool:
    """Whether ``expr`` is built of affine atoms only (``is_affine`` also holds for a nonlinear atom
    times a zero constant, which the linear-operator backend cannot read)."""
    return expr.is_affine() and all(issubclass(atom, AffAtom) for atom in expr.atoms())


def _scalar_factor(expr):
    """``(factor, rest)`` when ``expr`` is a constant scalar times (or over) an expression."""
    atoms = cp.atoms.affine
    if isinstance(expr, (atoms.binary_operators.multiply, atoms.binary_operators.MulExpression)):
        left, right = expr.args
        for constant, rest in ((left, right), (right, left)):
            if constant.is_constant() and constant.size == 1 and not constant.parameters():
                return float(np.asarray(constant.value).ravel()[0]), rest
    if isinstance(expr, atoms.binary_operators.DivExpression):
        numerator, denominator = expr.args
        if denominator.is_constant() and denominator.size == 1:
            return 1.0 / float(np.asarray(denominator.value).ravel()[0]), numerator
    return None


def _squared_frobenius(expr):
    """``(argument, factor)`` when ``expr`` is ``factor * ||argument||_F^2`` written as
    ``sum_squares``, ``quad_over_lin(., y)``, ``norm(., 'fro')**2`` or ``sum(square(.))``."""
    if isinstance(expr, quad_over_lin) and expr.args[1].is_constant() and expr.args[1].size == 1:
        return expr.args[0], 1.0 / float(np.asarray(expr.args[1].value).ravel()[0])
    if _is_square(expr):
        base = expr.args[0]
        if isinstance(base, Pnorm) and float(base.p) == 2.0 and base.axis is None:
            return base.args[0], 1.0
    if isinstance(expr, Sum) and expr.axis is None and _is_square(expr.args[0]):
        return expr.args[0].args[0], 1.0
    return None


def _is_square(expr) -> bool:
    if not isinstance(expr, Power):
        return False
    p = getattr(expr.p, "value", expr.p)
    return float(p) == 2.0
