"""Scalable solver versus the cvxpy reference on the same instance.

``validate(relaxation)`` solves the reference once, then every scalable method, and reports for
each: relative objective gap ``|f - f_ref| / max(|f_ref|, 1e-12)``, relative distance of the
solutions ``||X - X_ref||_F / max(||X_ref||_F, 1e-12)``, worst relative residual (computed by the
relaxation, the same way for every method), the certified duality gap where known, wall time and
the speed ratio ``time_ref / time``, and pass/fail against tolerances.
"""

from __future__ import annotations

import html
import json
import time
import traceback
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from numbers import Real

import cvxpy as cp
import numpy as np

from ._relaxation import REFERENCE_SOLVERS, Relaxation
from .parameters import Interval, Options, validate_parameter
from .result import Result

__all__ = ["validate", "compare", "Comparison", "ValidationReport"]

_TOLERANCE = [Interval(Real, 0, None, closed="neither")]


@dataclass
class Comparison:
    """One method measured against the reference."""

    method: str
    status: str
    objective: float
    objective_gap: float
    solution_distance: float
    max_residual: float
    relative_duality_gap: float | None
    time: float
    speedup: float
    iterations: int
    passed: bool
    failures: list[str] = field(default_factory=list)


def compare(
    result: Result,
    reference: Result,
    *,
    tol_objective: float = 1e-6,
    tol_residual: float = 1e-6,
    tol_solution: float | None = None,
) -> Comparison:
    """Measure ``result`` against ``reference``; ``tol_solution=None`` reports without judging."""
    for name, value in (("tol_objective", tol_objective), ("tol_residual", tol_residual)):
        validate_parameter(name, value, _TOLERANCE, "compare")
    validate_parameter("tol_solution", tol_solution, [*_TOLERANCE, None], "compare")
    for name, value in (("result", result), ("reference", reference)):
        if not isinstance(value, Result):
            raise TypeError(f"{name} must be a cvxclust.Result, got {type(value).__name__}")
    if np.shape(result.X) != np.shape(reference.X):
        raise ValueError(f"result.X has shape {np.shape(result.X)} but reference.X has shape {np.shape(reference.X)}")
    # agreement with the reference (not a duality gap): an absolute floor lets a zero optimum compare
    obj_gap = abs(result.objective - reference.objective) / max(abs(reference.objective), 1e-12)
    dist = float(np.linalg.norm(result.X - reference.X) / max(np.linalg.norm(reference.X), 1e-300))
    failures = []  # "not <=" so that a NaN fails
    if not obj_gap <= tol_objective:
        failures.append(f"objective gap {obj_gap:.2e} > {tol_objective:g}")
    if not result.max_residual <= tol_residual:
        failures.append(f"residual {result.max_residual:.2e} > {tol_residual:g}")
    if tol_solution is not None and not dist <= tol_solution:
        failures.append(f"solution distance {dist:.2e} > {tol_solution:g}")
    if result.status not in ("optimal", "optimal_inaccurate"):
        failures.append(f"status {result.status}")
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
    )


@dataclass
class ValidationReport:
    """The reference result and one :class:`Comparison` per scalable method."""

    name: str
    reference: Result
    comparisons: list[Comparison]
    results: dict[str, Result]

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    def to_dict(self) -> dict:
        ref = self.reference
        return {
            "name": self.name,
            "passed": self.passed,
            "reference": {
                "method": ref.method,
                "status": ref.status,
                "objective": ref.objective,
                "max_residual": ref.max_residual,
                "relative_duality_gap": ref.relative_gap,
                "time": ref.time,
            },
            "comparisons": [asdict(c) for c in self.comparisons],
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2)

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        methods = ", ".join(f"{c.method}: {'pass' if c.passed else 'FAIL'}" for c in self.comparisons)
        return (f"ValidationReport(name={self.name!r}, {verdict}, reference={self.reference.method!r} "
                f"objective={self.reference.objective:.10g}, {methods})")

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def _repr_html_(self) -> str:
        ref = self.reference
        head = ["method", "status", "objective gap", "solution distance", "max residual", "duality gap",
                "iterations", "time (s)", "speed-up", "check"]
        rows = []
        for c in self.comparisons:
            gap = "n/a" if c.relative_duality_gap is None else f"{c.relative_duality_gap:.1e}"
            check = "pass" if c.passed else "FAIL: " + "; ".join(c.failures)
            cells = [c.method, c.status, f"{c.objective_gap:.1e}", f"{c.solution_distance:.1e}",
                     f"{c.max_residual:.1e}", gap, str(c.iterations), f"{c.time:.3f}", f"{c.speedup:.1f}x", check]
            rows.append("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in cells) + "</tr>")
        caption = html.escape(f"{self.name}: reference {ref.method}, objective {ref.objective:.10g}, "
                              f"status {ref.status}, time {ref.time:.3f} s")
        header = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>"
        return f"<table><caption>{caption}</caption>{header}{''.join(rows)}</table>"

    def to_markdown(self) -> str:
        ref = self.reference
        lines = [
            f"### {self.name}",
            "",
            f"reference `{ref.method}`: objective {ref.objective:.10g}, status {ref.status}, "
            f"max residual {ref.max_residual:.1e}, time {ref.time:.3f} s",
            "",
            "| method | status | objective gap | solution distance | max residual | duality gap | "
            "iterations | time (s) | speed-up | check |",
            "|---|---|---|---|---|---|---|---|---|---|",
        ]
        for c in self.comparisons:
            gap = "n/a" if c.relative_duality_gap is None else f"{c.relative_duality_gap:.1e}"
            check = "pass" if c.passed else "FAIL: " + "; ".join(c.failures)
            lines.append(
                f"| {c.method} | {c.status} | {c.objective_gap:.1e} | {c.solution_distance:.1e} | "
                f"{c.max_residual:.1e} | {gap} | {c.iterations} | {c.time:.3f} | {c.speedup:.1f}x | {check} |"
            )
        return "\n".join(lines)


def validate(
    relaxation,
    methods: list[str] | None = None,
    *,
    reference_solver: str | None = None,
    reference_options: dict | None = None,
    method_options: dict[str, dict] | None = None,
    tol_objective: float = 1e-6,
    tol_residual: float = 1e-6,
    tol_solution: float | None = None,
    name: str | None = None,
    errors: str = "raise",
    callback=None,
) -> ValidationReport:
    """Run the cvxpy reference and each scalable method on ``relaxation``; compare them.

    Parameters
    ----------
    relaxation : Relaxation or cvxpy.Problem
        The instance; a plain cvxpy problem of the class of :func:`cvxclust.solve` is validated
        as a :class:`cvxclust.generic.CvxpyRelaxation` (method ``"generic"``).
    methods : list of str, optional
        Scalable methods to check; by default every one that applies
        (:meth:`~cvxclust.Relaxation.scalable_methods`: the registered solvers, and
        ``"generic"`` when the problem is of its class).
    reference_solver : {"CLARABEL", "SCS"} or None
        Solver for the cvxpy reference; None picks by size
        (:func:`cvxclust._relaxation.reference_solver_for`).
    reference_options, method_options : dict, optional
        Keyword options for the reference and, per method name, for each method.
    tol_objective, tol_residual, tol_solution : float
        Pass/fail thresholds on relative objective gap, worst residual and (if given) relative
        distance between solutions.
    name : str, optional
        The report's name (by default the relaxation's).
    errors : {"raise", "record"}, default "raise"
        What an exception raised by a scalable method does: propagate, or fail that method's
        comparison (its status ``"error: <type>: <message>"``, a NaN objective, an infinite
        residual and ``extras["traceback"]``) and go on with the next one.  An exception of the
        reference always propagates: without it there is nothing to compare against.
    callback : callable, optional
        ``callback(method, result)`` after each solve, the reference's first (``method`` is
        ``"reference"``): a progress log for long validations.

    Raises
    ------
    ValueError, TypeError
        Naming the bad argument, before anything is solved (``reference_options`` are checked
        by the reference, options of a method by that method).
    """
    if isinstance(relaxation, cp.Problem):
        from .generic import CvxpyRelaxation

        relaxation = CvxpyRelaxation(relaxation)
    if not isinstance(relaxation, Relaxation):
        raise TypeError(f"relaxation must be a cvxclust.Relaxation or a cvxpy.Problem, got {type(relaxation).__name__}")
    for key, value in (("tol_objective", tol_objective), ("tol_residual", tol_residual)):
        validate_parameter(key, value, _TOLERANCE, "validate")
    validate_parameter("tol_solution", tol_solution, [*_TOLERANCE, None], "validate")
    for key, value in (("reference_options", reference_options), ("method_options", method_options)):
        validate_parameter(key, value, ["dict", None], "validate")
    for key, value in (method_options or {}).items():
        validate_parameter(f"method_options[{key!r}]", value, ["dict"], "validate")
    reference_solver = validate_parameter("reference_solver", reference_solver.upper() if isinstance(
        reference_solver, str) else reference_solver, [Options(*REFERENCE_SOLVERS), None], "validate")
    validate_parameter("name", name, [str, None], "validate")
    validate_parameter("errors", errors, [Options("raise", "record")], "validate")
    validate_parameter("callback", callback, [callable, None], "validate")
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
        comparisons.append(
            compare(res, reference, tol_objective=tol_objective, tol_residual=tol_residual, tol_solution=tol_solution)
        )
    return ValidationReport(name or relaxation.name, reference, comparisons, results)


def _failed_result(method: str, exc: Exception, shape: tuple, elapsed: float) -> Result:
    """Stand-in for a method that raised: fails every check, carries the error in its status and
    the end of the traceback in ``extras["traceback"]``."""
    message = f"error: {type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return Result(X=np.full(shape, np.nan), objective=float("nan"), status=message[:120], method=method,
                  iterations=0, time=elapsed, residuals={"error": float("inf")},
                  extras={"traceback": "".join(traceback.format_exception(exc)[-3:])})
