"""The entry points of the generic solver: :func:`solve`, :class:`CvxpyRelaxation` (a plain cvxpy
problem as a :class:`~cvxclust.Relaxation`), and ``problem.solve(method="cvxclust")``."""

from __future__ import annotations

import dataclasses
import warnings

import cvxpy as cp
import numpy as np
from cvxpy import settings as cvxpy_settings
from cvxpy.problems.problem import SolverStats
from cvxpy.reductions.solution import Solution

from .._array_api import check_arrays, is_foreign, library, to_numpy
from .._checks import check_square_matrix
from .._memory import MemoryNeed, check_memory, square_bytes
from .._progress import call_clock
from .._relaxation import Relaxation
from ..result import Result
from .alm import AugmentedLagrangian
from .certificates import contradicting_rows
from .compact import off_diagonal_all
from .device import DEVICE_COPIES, arrays_for, check_device_fits, check_device_options, device_form, device_key
from .dual_newton import GenericDualNewton, nearest_point_reason
from .lowrank import LowRank
from .lowrank_device import lowrank_on_device
from .lowrank_form import lowrank_form, lowrank_reason
from .lowrank_penalty import dense_penalty_applies, fits_penalty
from .newton import GenericNewton, equality_form, inequality_rows
from .solver import GenericSolver
from .splitting import bounds_the_trace
from .standard_form import standard_form

__all__ = ["CvxpyRelaxation", "DENSE_COPIES", "LOWRANK_MIN_N", "LOWRANK_NONNEGATIVE_MIN_N", "LOWRANK_PENALTY_MIN_N",
           "check_dense_memory",
           "choose_method", "fits_dense", "solve"]

#: The peak memory of each dense method, in dense ``n x n`` arrays of floats (``8 n^2`` bytes each).
#: Measured as (the peak resident memory after the solve, ``ru_maxrss``) minus (that once the cvxpy
#: problem is built), over ``8 n^2``, at n = 1000 and 1500 on max-cut (a random graph of degree 10),
#: the nearest correlation matrix and the k-means SDP of 10 blobs (45 s time limits, one thread);
#: the largest figure of each method, rounded up with a margin: generic 42.1 (k-means), alm 26.7,
#: dual-newton 14.7, newton 13.1.  The reading of the problem is included.
DENSE_COPIES = {"generic": 44, "alm": 28, "dual-newton": 16, "newton": 14}
#: what a problem too large for the dense methods can use instead
LOWRANK_REMEDY = "use method='lowrank' (a low-rank factor) for problems whose solutions have low rank"


def check_dense_memory(form, method: str, available: int | None = None) -> None:
    """Raise :class:`~cvxclust._memory.MemoryNeed` (a ValueError) where the dense ``method``
    (a key of :data:`DENSE_COPIES`) would need more memory than is available on ``form``; the
    message names the method, the order, the bytes and the low-rank method."""
    copies = DENSE_COPIES[method]
    check_memory(square_bytes(form.n, copies), f"method={method!r} on a problem of order {form.n} (about {copies} "
                 f"dense {form.n} x {form.n} arrays)", LOWRANK_REMEDY, available)


def fits_dense(form, method: str, available: int | None = None) -> bool:
    """Whether the dense ``method`` fits in the memory available on ``form`` (:func:`check_dense_memory`)."""
    try:
        check_dense_memory(form, method, available)
    except MemoryNeed:
        return False
    return True


def choose_method(form) -> tuple[str, str]:
    """The method ``method="auto"`` runs on a standard form, and why (the table of the user guide):

    * a squared Frobenius objective whose constraints are ``X >> 0`` and affine equalities only
      (rows with ``lo == hi``, entries fixed by ``L == U``): ``"newton"``, also where
      ``"dual-newton"`` takes the problem (on the nearest correlation matrix it takes about a sixth
      of the time, ``benchmarks/results/newton.md``);
    * another nearest-point problem (:func:`~cvxclust.generic.nearest_point_form`) whose box has
      no finite upper bound (``X >= 0`` with row sums, as the SDP (7)): ``"dual-newton"``; with
      upper bounds (``diag(X) <= u``) its accelerated gradient on the p.s.d. multiplier takes
      hundreds of iterations where the ADMM takes a few dozen, so those go to ``"generic"``;
    * a linear objective (``c = 0``) under ``X >> 0`` whose rows are equalities and whose
      constraints bound the trace (fixed diagonal entries, a trace row), with no other bound on
      the entries (max-cut, min-bisection): ``"alm"``, the augmented Lagrangian method with
      semismooth Newton subproblems (:mod:`cvxclust.generic.alm`), which needs a few dozen
      eigendecompositions where the ADMM needs hundreds;
    * of order ``n >= LOWRANK_MIN_N`` (``LOWRANK_NONNEGATIVE_MIN_N`` with ``X >= 0``), a linear
      objective under ``X >> 0`` with rows (equalities or inequalities), constraints that bound
      the trace (a fixed diagonal, a trace row, upper bounds on the diagonal), and no entrywise
      bound but ``X >= 0`` and bounds on the diagonal, ``X >= 0`` not with a fixed diagonal
      (max-cut, min-bisection, the k-means SDP of Peng and Wei, with must-link rows and a
      minimum cluster size too; :mod:`cvxclust.generic.lowrank`):
      ``"lowrank"``, whose iterations cost products with the cost and a factor of X, and whose
      certificate one smallest eigenvalue (``benchmarks/results/classes.md`` and ``lowrank.md``);
    * of order ``n >= LOWRANK_PENALTY_MIN_N``, a linear objective under ``X >> 0``, ``X >= 0`` and
      a fixed diagonal only (correlation clustering), where its dense multiplier fits in memory:
      ``"lowrank"`` with ``X >= 0`` held by that multiplier (:mod:`cvxclust.generic.lowrank_penalty`;
      ``benchmarks/results/classes_correlation.md``);
    * everything else: ``"generic"``.

    Each method is chosen only where it takes the problem, so the choice never refuses a
    problem that ``"generic"`` solves, and only where it fits in memory (:func:`fits_dense`):
    where the dense choice does not, ``"lowrank"`` where it takes the problem, else a
    :class:`~cvxclust._memory.MemoryNeed` (a ValueError) says how much the dense methods need
    before any ``n x n`` array is formed.  Returns ``(method, reason)``.
    """
    lowrank = _lowrank_reason(form)
    if lowrank is not None:
        return "lowrank", lowrank
    smallest = min(DENSE_COPIES, key=DENSE_COPIES.get)
    if not fits_dense(form, smallest):  # the tests below form n x n arrays
        if not lowrank_reason(form):
            return "lowrank", f"no dense method fits in memory at order {form.n}: lowrank"
        check_memory(square_bytes(form.n, DENSE_COPIES[smallest]), f"every dense method on a problem of order "
                     f"{form.n} (at least {DENSE_COPIES[smallest]} dense {form.n} x {form.n} arrays)", LOWRANK_REMEDY)
    method, reason = _dense_choice(form)
    if not fits_dense(form, method) and not lowrank_reason(form):
        return "lowrank", f"{method} would not fit in memory at order {form.n}: lowrank"
    check_dense_memory(form, method)
    return method, reason


def _dense_choice(form) -> tuple[str, str]:
    """:func:`choose_method` among the dense methods, by the problem's structure alone."""
    dual, why_not = equality_form(form)
    if dual is not None and contradicting_rows(form) is not None:
        dual, why_not = None, "two of its rows contradict each other, which the ADMM certifies infeasible"
    if dual is not None:
        return "newton", "squared Frobenius objective, X >> 0 and affine equalities only: newton"
    try:
        reason = nearest_point_reason(form)
    except ValueError as error:  # the splitting's own checks: the generic solver says it again
        reason = str(error)
    alm = _alm_reason(form)
    if alm is not None:
        return "alm", alm
    if not reason and not np.isfinite(form.U).any():
        return "dual-newton", (f"nearest-point problem with no upper bound, not of newton's kind ({why_not}): "
                               "dual-newton")
    if not reason:
        reason = "its upper bounds slow the dual Newton's gradient on the cone down"
    return "generic", f"neither newton ({why_not}) nor dual-newton ({reason}) applies: generic"


def choose_device_method(form, arrays) -> tuple[str, str]:
    """The method ``method="auto"`` runs on a device, and why: ``"lowrank"`` where
    :func:`choose_method` picks it on the host and its path runs on a device (a fixed diagonal
    alone: max-cut, :mod:`cvxclust.generic.lowrank_device`) and fits there at its starting rank;
    otherwise the dense method :func:`choose_method` picks by the problem's structure (every one
    runs on a device, :data:`~cvxclust.generic.device.DEVICE_METHODS`) where its arrays fit the
    device's free memory, else ``"generic"``."""
    where = f"on {library(arrays.xp)} device {arrays.device}"
    lowrank = _lowrank_reason(form)
    if lowrank is not None and lowrank_on_device(form, arrays):
        return "lowrank", f"{lowrank} ({where})"
    method, reason = _dense_choice(form)
    if method != "generic":
        try:
            check_device_fits(form.n, method, DEVICE_COPIES[method], arrays)
            return method, f"{reason} ({where})"
        except MemoryNeed:
            return "generic", f"{method} would not fit in the free memory {where}: generic"
    return method, f"{reason} ({where})"


#: the order from which ``"auto"`` picks ``"lowrank"`` where it takes the problem
LOWRANK_MIN_N = 1000
#: the same where ``X >= 0`` is held by a nonnegative factor (the k-means SDP): below it the
#: ADMM needs fewer eigendecompositions' time (``benchmarks/results/lowrank.md``)
LOWRANK_NONNEGATIVE_MIN_N = 2000
#: the same where ``X >= 0`` stands with a fixed diagonal and no rows (correlation clustering), held by a
#: dense multiplier (:mod:`cvxclust.generic.lowrank_penalty`, ``benchmarks/results/classes_correlation.md``)
LOWRANK_PENALTY_MIN_N = 500


def _lowrank_reason(form) -> str | None:
    """Why ``"lowrank"`` is picked for ``form`` (:func:`choose_method`), or None where it is not:
    below :data:`LOWRANK_MIN_N` (or the two orders below it)."""
    if form.n < min(LOWRANK_MIN_N, LOWRANK_PENALTY_MIN_N) or lowrank_reason(form):
        return None
    kind = lowrank_form(form)
    if dense_penalty_applies(form, kind):  # correlation clustering, where its dense arrays fit
        fits = form.n >= LOWRANK_PENALTY_MIN_N and fits_penalty(form)
        return (f"n = {form.n} >= {LOWRANK_PENALTY_MIN_N}, a linear objective, X >> 0, X >= 0 and a fixed diagonal "
                "only, X >= 0 by a dense multiplier: lowrank") if fits else None
    least = LOWRANK_NONNEGATIVE_MIN_N if kind.nonnegative else LOWRANK_MIN_N
    if form.n < least or (kind.nonnegative and kind.diagonal is not None):
        return None
    return (f"n = {form.n} >= {least}, a linear objective, X >> 0, rows and a bounded trace, no bound but "
            "X >= 0 and bounds on the diagonal: lowrank")


def _alm_reason(form) -> str | None:
    """Why ``"alm"`` is picked for ``form`` (:func:`choose_method`), or None where it is not."""
    def unboxed(low, high):  # no bound, or a fixed entry
        return (~np.isfinite(low) & ~np.isfinite(high)) | (np.isfinite(low) & (low == high))

    if form.c > 0 or not form.psd or not np.all(unboxed(np.diagonal(form.L), np.diagonal(form.U))) \
            or not off_diagonal_all(unboxed, form.L, form.U) or inequality_rows(form) \
            or not bounds_the_trace(form) or contradicting_rows(form) is not None:
        return None
    return "linear objective, X >> 0, affine equalities and a bounded trace: alm"


class CvxpyRelaxation(Relaxation):
    """A cvxpy problem over one symmetric matrix (the class of :func:`cvxclust.solve`) as a
    relaxation: its objective and residuals are those of the problem, ``"generic"`` solves it at
    scale and ``"reference"`` with cvxpy, so :func:`cvxclust.validate` compares the two.

    Parameters
    ----------
    problem : cvxpy.Problem
        The problem; read once (a ValueError names any part outside the class).
    name : str, optional
        A name for reports.
    """

    default_method = "generic"
    #: its objective and residuals are those of its standard form (the generic solver's figures stand)
    judged_by_standard_form = True

    def __init__(self, problem, name: str = "cvxpy problem"):
        self._standard_form = form = standard_form(problem)  # the cache of standard_form()
        self._problem = problem
        self.name = name
        self.sense = form.sense
        self.primary_name = form.variable.name()
        self._objective_scale = None  # read from the splitting's linear programs once, on demand

    def problem(self) -> cp.Problem:
        return self._problem

    def _check(self, X) -> np.ndarray:
        n = self.standard_form().n
        X = check_square_matrix(X, "X", symmetric=False)
        if tuple(X.shape) != (n, n):
            raise ValueError(f"X must be of shape ({n}, {n}), got {tuple(X.shape)}")
        return X

    def _form_of(self, X):
        """The standard form, or, for an X of another array library, its parts on X's device
        (:meth:`device_form`): no ``n x n`` copy of X to the host."""
        return self.device_form(check_arrays(X=X)) if is_foreign(X) else self.standard_form()

    def device_form(self, arrays):
        """The standard form's cost and bounds on the device of ``arrays``
        (:func:`~cvxclust.generic.device.device_form`), moved once per library, device and dtype
        and shared by the solvers and the checks of their points."""
        forms = self.__dict__.setdefault("_device_forms", {})
        key = device_key(arrays)
        if key not in forms:
            forms[key] = device_form(self.standard_form(), arrays)
        return forms[key]

    def objective(self, X) -> float:
        """The problem's objective at X (its own sense and scale; on X's device for an array of
        another library)."""
        X = self._check(X)
        return self._form_of(X).objective(X)

    def residuals(self, X) -> dict[str, float]:
        """Relative violations (:meth:`cvxclust.generic.StandardForm.residuals`; on X's device
        for an array of another library)."""
        X = self._check(X)
        return self._form_of(X).residuals(X)

    def scalable_methods(self) -> list[str]:
        """``"generic"``, ``"dual-newton"`` where the problem is a nearest-point problem
        (:func:`~cvxclust.generic.nearest_point_form`), ``"newton"`` where its constraints are
        ``X >> 0`` and affine equalities (:func:`~cvxclust.generic.equality_form`) and ``"alm"``
        where its rows are equalities (:func:`~cvxclust.generic.alm_form`)."""
        methods = super().scalable_methods()
        if nearest_point_reason(self.standard_form()):
            methods.remove("dual-newton")
        if equality_form(self.standard_form())[0] is None:
            methods.remove("newton")
        if inequality_rows(self.standard_form()):  # alm_form's test, without building its dual
            methods.remove("alm")
        if lowrank_reason(self.standard_form()):
            methods.remove("lowrank")
        return methods

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve with ``method``; ``"auto"`` picks one by the problem's structure
        (:func:`choose_method`) and records why in ``Result.extras["auto"]``.  A dense method
        (:data:`DENSE_COPIES`) is refused before it starts where its arrays would not fit in
        memory (:func:`check_dense_memory`: a ValueError naming the method, the order, the bytes
        and what to use instead).  ``device=`` and ``dtype=`` (:func:`solve`) are checked here,
        once."""
        device, dtype = options.get("device"), options.get("dtype")
        if device is not None or dtype is not None:
            arrays = arrays_for(device, dtype)
            if arrays.numpy:  # "cpu": NumPy in float64, as without the options
                if "32" in str(getattr(dtype, "name", dtype)):
                    raise ValueError(f"dtype={dtype!r} needs a device (device='cuda' or a torch.device): NumPy "
                                     "solves in float64")
                options = {k: v for k, v in options.items() if k not in ("device", "dtype")}
            else:
                return self._solve_on_device(method, arrays, options)
        if method != "auto":
            if method in DENSE_COPIES:
                check_dense_memory(self.standard_form(), method)
            return super().solve(method, **options)
        method, reason = choose_method(self.standard_form())
        accepted = getattr(self._solvers[method], "parameters", None)
        others = sorted(set(options) - set(accepted or options))
        if others:  # options only another method takes: the generic solver takes the most
            method, reason = "generic", f"options {others} are not {method}'s ({reason}): generic"
            check_dense_memory(self.standard_form(), method)
        result = super().solve(method, **options)
        return dataclasses.replace(result, extras={**result.extras, "auto": reason})

    def _solve_on_device(self, method: str, arrays, options) -> Result:
        """:meth:`solve` with ``device=`` off NumPy: the methods of
        :data:`~cvxclust.generic.device.DEVICE_METHODS` only; ``"auto"`` picks one of them
        (:func:`choose_device_method`)."""
        form = self.standard_form()
        reason = None
        if method == "auto":
            method, reason = choose_device_method(form, arrays)
        check_device_options(method, arrays)
        if method != "lowrank":  # the low-rank method checks its factor's memory at its rank itself
            check_device_fits(form.n, method, DEVICE_COPIES[method], arrays)
        result = super().solve(method, **options)
        if reason is None:
            return result
        return dataclasses.replace(result, extras={**result.extras, "auto": reason})

    def objective_scale(self) -> float:
        """The size of the objective's terms at the centre ``a 11^T + b I`` of the feasible set,
        ``c ||X||^2 + ||C|| ||X|| + |constant|``, 0 if there is none.  It bounds the objective
        there, and unlike the objective it does not vanish by cancellation (a graph Laplacian's
        objective is 0 at ``11^T``), which would leave a zero optimum without a floor.  Where no
        ``n x n`` array fits (the low-rank method's problems), ``||C|| tau + |constant|`` with
        ``tau`` the fixed trace, which bounds the same terms at every feasible point."""
        if self._objective_scale is None:
            from .splitting import outline

            form = self.standard_form()
            if not fits_dense(form, min(DENSE_COPIES, key=DENSE_COPIES.get)) and not lowrank_reason(form):
                # no n x n centre: at every feasible X, ||X||_F <= tr X <= tau bounds the terms instead
                tau = lowrank_form(form).tau
                self._objective_scale = form.cost.frobenius_norm() * tau + abs(form.constant)
                return self._objective_scale
            dual = equality_form(form)[0]
            # equalities alone: the centre in closed form; otherwise the linear programs' centre (a
            # magnitude: not projected onto the spectral set, which would take eigendecompositions)
            centre = dual.centre() if dual is not None else outline(form).centre
            self._objective_scale = 0.0
            if centre is not None:
                size = float(np.linalg.norm(centre))
                self._objective_scale = form.c * size ** 2 + form.cost.frobenius_norm() * size + abs(form.constant)
        return self._objective_scale


CvxpyRelaxation.register_solver("generic", GenericSolver)
CvxpyRelaxation.register_solver("dual-newton", GenericDualNewton)
CvxpyRelaxation.register_solver("newton", GenericNewton)
CvxpyRelaxation.register_solver("alm", AugmentedLagrangian)
CvxpyRelaxation.register_solver("lowrank", LowRank)


def solve(problem, method: str = "auto", **options) -> Result:
    r"""Solve a cvxpy problem over one symmetric matrix at scale, with a certified gap.

    The class (:mod:`cvxclust.generic.standard_form`): one symmetric ``n x n`` variable X;
    minimize or maximize a linear objective plus weighted squared Frobenius norms
    ``w ||a X + E||_F^2`` (convex in the problem's sense); subject to ``X >> 0``, entrywise
    bounds on X or its slices, and any affine equalities and inequalities of X.  Anything else
    raises a ValueError naming the part outside the class.

    The solver (:class:`cvxclust.generic.GenericSolver`) is ADMM on the matrix: p.s.d. cone,
    common row sums and trace by one (partial) eigendecomposition per iteration, the box and the
    remaining rows by projections and one solve with the rows' Gram matrix.  Every check
    computes a bound on the optimal value valid for the current multipliers, and the returned
    point is exactly feasible where a feasible centre ``a 11^T + b I`` exists to restore it.

    ``method="dual-newton"`` solves the problems of the class that are nearest-point problems
    (a squared Frobenius term; besides bounds, only common row sums and a fixed trace;
    :mod:`cvxclust.generic.dual_newton`) on their dual instead: Newton's method on the
    multipliers of the row sums and the trace, a projected gradient on that of ``X >> 0``.  Where
    the cone barely moves the optimum it needs a few eigendecompositions where the ADMM needs
    dozens; where it moves it far, many more.

    ``method="lowrank"`` solves the problems with a linear objective, ``X >> 0``, rows
    (equalities and inequalities), constraints that bound the trace (a fixed diagonal, a trace
    row, upper bounds on the diagonal), and no bound but ``X >= 0`` and bounds on the diagonal
    (max-cut, min-bisection, the k-means SDP, with must-link rows and ``diag(X) <= 1 / m`` too) with
    ``X = V V^T`` of adaptive rank inside an augmented Lagrangian method,
    certified by the smallest eigenvalue of the dual slack (:mod:`cvxclust.generic.lowrank`):
    nothing ``n x n`` is formed but the cost as the statement holds it; ``extras["factor"]`` is V,
    and ``X`` is None where ``V V^T`` would take more than a quarter of the available memory
    (``form_X``).  ``"auto"`` picks it from order :data:`LOWRANK_MIN_N` where ``X >= 0`` does
    not stand with a fixed diagonal.

    ``method="alm"`` solves the problems whose rows are equalities (entrywise bounds allowed) by
    an augmented Lagrangian method on the dual whose subproblems are solved by semismooth
    Newton-CG (:mod:`cvxclust.generic.alm`); ``"auto"`` picks it for a linear objective under
    ``X >> 0`` and equalities that bound the trace (max-cut, min-bisection).

    Parameters
    ----------
    problem : cvxpy.Problem
        The problem; it is not solved by cvxpy, and its variable's value is not set (use
        ``problem.solve(method="cvxclust")`` for that).
    method : {"auto", "generic", "dual-newton", "newton", "alm", "lowrank"}
        The solver.
    **options
        Options of :class:`~cvxclust.generic.GenericSolver`: ``tol`` (certified relative gap,
        default 1e-6), ``residual_tol`` (1e-6), ``max_iter``, ``time_limit``, ``check_every``,
        ``verbose``, ``rho``, ``alpha``, ``mu``, ``adapt_every``, ``partial_eig``, ``warm_start``
        (a previous Result); for ``"dual-newton"`` those of
        :class:`~cvxclust.dual_newton.DualNewtonSolver`; for ``"newton"`` those of
        :class:`~cvxclust.generic.GenericNewton`; for ``"alm"`` those of
        :class:`~cvxclust.generic.AugmentedLagrangian`; for ``"lowrank"`` those of
        :class:`~cvxclust.generic.LowRank` (``rank``, ``max_rank``, ``random_state``, ``form_X``,
        ...).  With ``"auto"``, options of the chosen method.  ``device=`` (``"cuda"``,
        ``"cuda:1"``, a ``torch.device``; None or ``"cpu"``: NumPy) and ``dtype=``
        (``"float64"``, the default, or ``"float32"``) run ``"generic"`` (its two-block path),
        ``"dual-newton"``, ``"newton"``, ``"alm"`` with PyTorch on that device, ``X`` returned
        there, and ``"lowrank"`` for a fixed diagonal alone (max-cut:
        :mod:`cvxclust.generic.lowrank_device`; its other classes are refused there); ``"auto"``
        picks among them (:func:`choose_device_method`).

    Raises
    ------
    ValueError
        A part of the problem outside the class; a bad option; a method whose arrays would not
        fit in memory (:func:`check_dense_memory`, :class:`~cvxclust._memory.MemoryNeed`: the
        method, the order, the bytes, and what to use instead), refused before it starts.

    Returns
    -------
    Result
        ``X`` the matrix (None from ``"lowrank"`` where it would not fit); ``objective`` in the
        problem's own sense and scale; ``dual_bound`` a certified bound on the optimal value;
        ``status == "optimal"`` only when the relative gap is below ``tol`` and every residual
        below ``residual_tol``.  ``time`` counts from the
        call, reading the problem included (as ``time_limit`` does: a limit spent by the reading
        ends the solve at its starting point with status ``"time_limit"``);
        ``extras["read_time"]`` is the part spent reading the problem.

    Examples
    --------
    >>> import cvxpy as cp, numpy as np, cvxclust
    >>> K = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 2.0]])
    >>> X = cp.Variable((3, 3), symmetric=True)
    >>> problem = cp.Problem(cp.Maximize(cp.trace(K @ X)),
    ...                      [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 2])
    >>> result = cvxclust.solve(problem)
    >>> result.status, round(result.objective, 4)
    ('optimal', 5.0)
    """
    with call_clock():
        return CvxpyRelaxation(problem).solve(method, **options)


#: cvxpy's status for each status of a Result (any other, a limit or a stall: USER_LIMIT)
CVXPY_STATUS = {"optimal": cp.OPTIMAL, "converged": cp.OPTIMAL_INACCURATE, "infeasible": cp.INFEASIBLE,
                "unbounded": cp.UNBOUNDED}


def cvxpy_solution(problem, result: Result) -> Solution:
    """``result`` as the :class:`cvxpy.Solution` of ``problem`` that ``problem.unpack`` takes:
    the status (:data:`CVXPY_STATUS`), the point (none where the problem is infeasible or
    unbounded, whose value is then ``+inf`` or ``-inf`` in the problem's sense, as cvxpy's own
    solvers report them, and none where ``result.X`` is None: a low-rank method's factor
    ``extras["factor"]`` stands for the point; a point on a device is copied to the host, as
    cvxpy holds NumPy values), no dual values (the solver's multipliers belong to the standard form,
    not to the problem's constraints: those of an earlier solve are cleared), and the
    statistics of :class:`cvxpy.problems.problem.SolverStats`."""
    status = CVXPY_STATUS.get(result.status, cp.USER_LIMIT)
    minimize = isinstance(problem.objective, cp.Minimize)
    if status == cp.INFEASIBLE:
        value, point = (np.inf if minimize else -np.inf), None
    elif status == cp.UNBOUNDED:
        value, point = (-np.inf if minimize else np.inf), None
    else:  # cvxpy holds NumPy values: a point on a device is copied to the host here, once
        value, point = result.objective, to_numpy(result.X)
    primal = {variable.id: point for variable in problem.variables()}
    dual = {constraint.id: None for constraint in problem.constraints}
    attr = {cvxpy_settings.SOLVE_TIME: result.time, cvxpy_settings.SETUP_TIME: result.extras.get("read_time"),
            cvxpy_settings.NUM_ITERS: result.iterations, cvxpy_settings.EXTRA_STATS: result}
    return Solution(status, value, primal, dual, attr)


def _solve_in_place(problem, **options):
    """``problem.solve(method="cvxclust", **options)``: fills the problem as cvxpy's own solvers
    do (``problem.unpack``: status, value, the variable's value; ``problem.solver_stats``: the
    time from the call, the reading in ``setup_time``, the iterations, the Result as
    ``extra_stats``); returns the optimal value.  The Result is ``problem.cvxclust_result``.

    Where the method leaves the ``n x n`` solution unformed (``result.X`` is None: a low-rank
    method on a problem whose X would not fit in memory), the variable's value stays None, the
    problem's value is the method's objective, and a ``UserWarning`` says that the solution is
    the factor ``F`` (``X = F F^T``) in ``problem.cvxclust_result.extras["factor"]``."""
    with call_clock():
        result = solve(problem, **options)
    solution = cvxpy_solution(problem, result)
    problem.unpack(solution)
    if result.X is None and solution.status in cvxpy_settings.SOLUTION_PRESENT:
        problem._value = solution.opt_val  # the objective, which cvxpy cannot evaluate without the point
        warnings.warn(f"method {result.method!r} left the {problem.variables()[0].shape} solution unformed: its value "
                      "is None, and the solution is the factor F (X = F F^T) in "
                      "problem.cvxclust_result.extras['factor']", UserWarning, stacklevel=3)
    # cvxpy has no public way to set the statistics: its own solve writes this attribute too
    problem._solver_stats = SolverStats.from_dict(solution.attr, "cvxclust")
    problem.cvxclust_result = result
    return problem.value


cp.Problem.register_solve("cvxclust", _solve_in_place)
