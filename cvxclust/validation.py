"""Scalable solver versus the cvxpy reference on the same instance.

``validate(relaxation)`` solves the reference once, then every scalable method, and reports for
each: relative objective gap ``|f - f_ref| / max(|f_ref|, 1e-12)``, relative distance of the
solutions ``||X - X_ref||_F / max(||X_ref||_F, 1e-12)``, worst relative residual (computed by the
relaxation, the same way for every method), the certified duality gap where known, wall time and
the speed ratio ``time_ref / time``, and pass/fail against tolerances.  A reference certified
infeasible or unbounded has no point: each method's status is then checked against its status.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Iterable
from numbers import Real

import cvxpy as cp
import numpy as np

from ._deprecation import renamed_parameter
from ._relaxation import REFERENCE_SOLVERS, Relaxation
from ._validation_report import Comparison, ValidationReport, has_point, is_inaccurate
from .parameters import Interval, Options, check_parameter
from .result import Result

__all__ = ["validate", "compare", "Comparison", "ValidationReport"]

_TOLERANCE = [Interval(Real, 0, None, closed="neither")]
#: the tolerances' default values, and their old spellings (kept for one release)
_TOLERANCE_DEFAULTS = {"objective_tol": 1e-6, "residual_tol": 1e-6, "solution_tol": None}
_RENAMED = {"tol_objective": "objective_tol", "tol_residual": "residual_tol", "tol_solution": "solution_tol"}


def _tolerances(owner: str, given: dict, renamed: dict) -> dict:
    """The checked tolerances ``{new name: value}`` of ``owner``, the old spellings in ``renamed``
    resolved with a ``FutureWarning``; a bad value is named as the caller spelt it."""
    unknown = sorted(set(renamed) - set(_RENAMED))
    if unknown:
        raise TypeError(f"{owner}() got an unexpected keyword argument {unknown[0]!r}")
    spelt = {new: new for new in given}
    for old, value in renamed.items():
        new = _RENAMED[old]
        given[new] = renamed_parameter(owner, old, value, new, given[new], new_default=_TOLERANCE_DEFAULTS[new],
                                       stacklevel=5)
        spelt[new] = old
    return {new: check_parameter(spelt[new], value, _TOLERANCE if _TOLERANCE_DEFAULTS[new] else
                                    [*_TOLERANCE, None], owner) for new, value in given.items()}


def compare(
    result: Result,
    reference: Result,
    *,
    objective_tol: float = 1e-6,
    residual_tol: float = 1e-6,
    solution_tol: float | None = None,
    **renamed,
) -> Comparison:
    """Measure ``result`` against ``reference``; ``solution_tol=None`` reports without judging.

    A reference with no point (certified infeasible or unbounded) is not measured against: the
    check is then that ``result`` reaches the same status.  The old spellings ``tol_objective``,
    ``tol_residual``, ``tol_solution`` still work, with a ``FutureWarning``.
    """
    tols = _tolerances("compare", {"objective_tol": objective_tol, "residual_tol": residual_tol,
                                   "solution_tol": solution_tol}, renamed)
    for name, value in (("result", result), ("reference", reference)):
        if not isinstance(value, Result):
            raise TypeError(f"{name} must be a cvxclust.Result, got {type(value).__name__}")
    if np.shape(result.X) != np.shape(reference.X):
        raise ValueError(f"result.X has shape {np.shape(result.X)} but reference.X has shape {np.shape(reference.X)}")
    failures = []  # "not <=" so that a NaN fails
    if has_point(reference):
        # agreement with the reference (not a duality gap): an absolute floor lets a zero optimum compare
        obj_gap = abs(result.objective - reference.objective) / max(abs(reference.objective), 1e-12)
        dist = float(np.linalg.norm(result.X - reference.X) / max(np.linalg.norm(reference.X), 1e-300))
        if not obj_gap <= tols["objective_tol"]:
            failures.append(f"objective gap {obj_gap:.2e} > {tols['objective_tol']:g}")
        if not result.max_residual <= tols["residual_tol"]:
            failures.append(f"residual {result.max_residual:.2e} > {tols['residual_tol']:g}")
        if tols["solution_tol"] is not None and not dist <= tols["solution_tol"]:
            failures.append(f"solution distance {dist:.2e} > {tols['solution_tol']:g}")
        if result.status not in ("optimal", "optimal_inaccurate"):
            failures.append(f"status {result.status}")
    else:  # nothing to measure: the method must say what the reference says
        obj_gap = dist = float("nan")
        expected = reference.status.removesuffix("_inaccurate")
        if result.status.removesuffix("_inaccurate") != expected:
            failures.append(f"status {result.status}, the reference's is {reference.status}")
    return Comparison(
        method=result.method,
        status=result.status,
        objective=result.objective,
        objective_gap=obj_gap,
        solution_distance=dist,
        max_residual=result.max_residual,
        relative_duality_gap=result.relative_gap,
        time=result.time,
        speedup=reference.time / max(result.time, 1e-12),
        iterations=result.iterations,
        passed=not failures,
        failures=failures,
        reference_inaccurate=is_inaccurate(reference),
    )


def validate(
    relaxation,
    methods: list[str] | None = None,
    *,
    reference_solver: str | None = None,
    reference_options: dict | None = None,
    method_options: dict[str, dict] | None = None,
    objective_tol: float = 1e-6,
    residual_tol: float = 1e-6,
    solution_tol: float | None = None,
    name: str | None = None,
    errors: str = "raise",
    callback=None,
    **renamed,
) -> ValidationReport:
    """Run the cvxpy reference and each scalable method on ``relaxation``; compare them.

    Parameters
    ----------
    relaxation : Relaxation or cvxpy.Problem
        The instance; a plain cvxpy problem of the class of :func:`cvxclust.solve` is validated
        as a :class:`cvxclust.generic.CvxpyRelaxation` (method ``"generic"``), its report named
        after its matrix variable unless ``name`` is given.
    methods : list of str, optional
        Scalable methods to check; by default every one that applies
        (:meth:`~cvxclust.Relaxation.scalable_methods`: the registered solvers, and
        ``"generic"`` when the problem is of its class).
    reference_solver : {"CLARABEL", "SCS"} or None
        Solver for the cvxpy reference; None picks by size
        (:func:`cvxclust._relaxation.reference_solver_for`).
    reference_options, method_options : dict, optional
        Keyword options for the reference and, per method name, for each method.
    objective_tol, residual_tol, solution_tol : float
        Pass/fail thresholds on the relative objective gap to the reference, the worst residual
        and (if given) the relative distance between solutions.  Their old spellings
        ``tol_objective``, ``tol_residual``, ``tol_solution`` still work, with a
        ``FutureWarning``.  Where the reference is certified infeasible or unbounded there is no
        point to measure against: a method passes when it reaches the reference's status.
    name : str, optional
        The report's name (by default the relaxation's; for a cvxpy problem, the name of its
        variable).
    errors : {"raise", "record"}, default "raise"
        What an exception raised by a scalable method does: propagate, or fail that method's
        comparison (its status ``"error: <type>: <message>"``, a NaN objective, an infinite
        residual and ``extras["traceback"]``) and go on with the next one.  An exception of the
        reference always propagates: without it there is nothing to compare against.
    callback : callable, optional
        ``callback(method, result)`` after each solve, the reference's first (``method`` is
        ``"reference"``): a progress log for long validations.
    **renamed
        ``tol_objective``, ``tol_residual``, ``tol_solution``: the old spellings of the
        tolerances (a ``FutureWarning``); any other keyword is a ``TypeError``.

    Returns
    -------
    ValidationReport
        The reference, one :class:`Comparison` per method, their results and the tolerances:
        ``to_markdown()`` (the table with a legend of its columns), ``to_json()``, ``plot()``.

    Raises
    ------
    ValueError, TypeError
        Naming the bad argument, before anything is solved (``reference_options`` are checked
        by the reference, options of a method by that method).
    """
    check_parameter("name", name, [str, None], "validate")
    if isinstance(relaxation, cp.Problem):
        from .generic import CvxpyRelaxation

        relaxation = CvxpyRelaxation(relaxation)
        relaxation.name = relaxation.primary_name  # the variable's name: "cvxpy problem" says nothing
    if not isinstance(relaxation, Relaxation):
        raise TypeError(f"relaxation must be a cvxclust.Relaxation or a cvxpy.Problem, got {type(relaxation).__name__}")
    tols = _tolerances("validate", {"objective_tol": objective_tol, "residual_tol": residual_tol,
                                    "solution_tol": solution_tol}, renamed)
    for key, value in (("reference_options", reference_options), ("method_options", method_options)):
        check_parameter(key, value, ["dict", None], "validate")
    for key, value in (method_options or {}).items():
        check_parameter(f"method_options[{key!r}]", value, ["dict"], "validate")
    reference_solver = check_parameter("reference_solver", reference_solver.upper() if isinstance(
        reference_solver, str) else reference_solver, [Options(*REFERENCE_SOLVERS), None], "validate")
    check_parameter("errors", errors, [Options("raise", "record")], "validate")
    check_parameter("callback", callback, [callable, None], "validate")
    if isinstance(methods, str):
        methods = [methods]
    if methods is not None and not isinstance(methods, Iterable):
        raise TypeError(f"methods must be a list of method names or None, got {methods!r}")
    # the names are checked first; whether "generic" applies needs the problem built
    known = [m for m in relaxation.methods() if m != "reference"]
    if methods is not None:
        methods = list(methods)
        if not methods:
            raise ValueError(f"methods is empty: nothing to validate; methods are {known}")
        for m in methods:
            if m not in known:
                raise ValueError(f"Unknown method {m!r} for {relaxation.name}; valid methods are {known}")
        if "generic" in methods:
            relaxation.generic_form()  # a ValueError naming what is outside the class
    else:
        unknown = set(method_options or {}) - set(known)
        if unknown:
            raise ValueError(f"method_options names unknown methods {sorted(unknown)}; methods are {known}")
        methods = relaxation.scalable_methods()
        if not methods:
            raise ValueError(
                f"{type(relaxation).__name__} has no registered scalable solver, so there is nothing to validate "
                f"against the reference: register one with {type(relaxation).__name__}.register_solver(name, "
                "func), or solve the reference alone with relaxation.solve('reference')")
    unknown = set(method_options or {}) - set(methods)
    if unknown:
        raise ValueError(f"method_options names methods that are not validated: {sorted(unknown)}; "
                         f"validated methods are {methods}")
    reference = relaxation.solve("reference", solver=reference_solver, **(reference_options or {}))
    if callback is not None:
        callback("reference", reference)
    method_options = method_options or {}
    results, comparisons = {}, []
    for m in methods:
        start = time.perf_counter()
        try:
            res = relaxation.solve(m, **method_options.get(m, {}))
        except Exception as exc:
            if errors == "raise":
                raise
            res = _failed_result(m, exc, reference.X.shape, time.perf_counter() - start)
        if callback is not None:
            callback(m, res)
        results[m] = res
        comparisons.append(compare(res, reference, **tols))
    return ValidationReport(name or relaxation.name, reference, comparisons, results, **tols)


def _failed_result(method: str, exc: Exception, shape: tuple, elapsed: float) -> Result:
    """Stand-in for a method that raised: fails every check, carries the error in its status and
    the end of the traceback in ``extras["traceback"]``."""
    message = f"error: {type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return Result(X=np.full(shape, np.nan), objective=float("nan"), status=message[:120], method=method,
                  iterations=0, time=elapsed, residuals={"error": float("inf")},
                  extras={"traceback": "".join(traceback.format_exception(exc)[-3:])})
