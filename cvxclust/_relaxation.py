"""The contract every relaxation follows: ``Relaxation``, ``Result`` and the solver registry.

A relaxation states its problem declaratively (:meth:`Relaxation.problem` returns a
``cvxpy.Problem``) and registers hand-written scalable solvers beside it.  ``solve`` dispatches
on ``method``: ``"reference"`` solves the cvxpy statement (SCS or Clarabel), ``"auto"`` the
family's default, any other name a registered solver.  Every solver returns a :class:`Result`
whose objective and residuals are recomputed by the relaxation itself, so comparisons between
solvers are fair whichever produced the point.
"""

from __future__ import annotations

import time
import warnings
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, ClassVar

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["Relaxation", "Result", "ConvergenceWarning"]

#: cvxpy solvers the reference may use, with the name of their accuracy option.
REFERENCE_SOLVERS = ("SCS", "CLARABEL")


@dataclass
class Result:
    """Outcome of one solve.

    Attributes
    ----------
    X : ndarray
        The primary matrix variable.
    objective : float
        Objective of ``X`` as computed by :meth:`Relaxation.objective`.
    status : str
        ``"optimal"`` (stopping tolerances met), ``"optimal_inaccurate"``, ``"max_iter"``,
        ``"time_limit"``, ``"stalled"`` or a cvxpy status.
    method : str
        The method that produced the result.
    iterations : int
        Iterations of the method (outer iterations where there are two levels).
    time : float
        Wall seconds of the solve itself (for the reference: cvxpy compilation and solver).
    residuals : dict of str to float
        Relative feasibility violations of ``X`` from :meth:`Relaxation.residuals`.
    dual_bound : float or None
        A certified bound on the optimal value (a lower bound for minimisation, an upper bound
        for maximisation), where the method yields one.
    history : list of dict
        Per-iteration figures (objective, residuals, gap, ...) for plots.
    """

    X: np.ndarray
    objective: float
    status: str
    method: str
    iterations: int
    time: float
    residuals: dict[str, float]
    dual_bound: float | None = None
    history: list[dict] = field(default_factory=list)

    @property
    def duality_gap(self) -> float | None:
        """``|objective - dual_bound|``, or None where no bound is known."""
        if self.dual_bound is None:
            return None
        return abs(self.objective - self.dual_bound)

    @property
    def relative_gap(self) -> float | None:
        """Duality gap divided by ``max(|objective|, 1e-12)``."""
        gap = self.duality_gap
        return None if gap is None else gap / max(abs(self.objective), 1e-12)

    @property
    def max_residual(self) -> float:
        """The worst relative feasibility violation."""
        return max(self.residuals.values(), default=0.0)

    def __repr__(self) -> str:
        gap = "n/a" if self.relative_gap is None else f"{self.relative_gap:.2e}"
        return (
            f"Result(method={self.method!r}, status={self.status!r}, objective={self.objective:.10g}, "
            f"relative_gap={gap}, max_residual={self.max_residual:.2e}, iterations={self.iterations}, "
            f"time={self.time:.3f}s)"
        )


SolverFunc = Callable[..., Result]


class Relaxation(ABC):
    """A convex relaxation stated in cvxpy, with registered scalable solvers.

    Subclasses set ``name`` and ``default_method``, implement :meth:`problem`,
    :meth:`objective` and :meth:`residuals`, and register solvers with
    :meth:`register_solver`.  The primary variable of :meth:`problem` must be named ``"X"``
    (or the subclass overrides :meth:`primary_variable`).
    """

    name: ClassVar[str] = "relaxation"
    default_method: ClassVar[str] = "reference"
    _solvers: ClassVar[dict[str, SolverFunc]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # each class owns its registry and starts empty: a subclass that changes the problem
        # must not inherit solvers written for its parent; it registers the ones that apply
        cls._solvers = {}

    # -- the statement -------------------------------------------------------------------
    @abstractmethod
    def problem(self) -> cp.Problem:
        """The exact statement as a ``cvxpy.Problem``; builds it, never solves it."""

    @abstractmethod
    def objective(self, X: np.ndarray) -> float:
        """Objective of a candidate point, same sign and scale as :meth:`problem`."""

    @abstractmethod
    def residuals(self, X: np.ndarray) -> dict[str, float]:
        """Relative feasibility violations of a candidate point."""

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        """A certified bound computed from the dual values of a solved :meth:`problem`."""
        return None

    #: name of the cvxpy variable of ``problem()`` that holds the primary matrix
    primary_name: str = "X"

    def primary_variable(self, problem: cp.Problem) -> cp.Variable:
        """The variable of ``problem`` that holds the primary matrix (named ``primary_name``)."""
        for var in problem.variables():
            if var.name() == self.primary_name:
                return var
        raise ValueError(f"problem() of {self.name} has no variable named {self.primary_name!r}")

    # -- the registry ----------------------------------------------------------------------
    @classmethod
    def register_solver(cls, name: str, func: SolverFunc | None = None):
        """Register ``func(relaxation, **options) -> Result`` as method ``name``.

        Usable as a decorator: ``@MyRelaxation.register_solver("admm")``.
        """
        if name in ("reference", "auto"):
            raise ValueError(f"name={name!r} is reserved")

        def decorator(f: SolverFunc) -> SolverFunc:
            cls._solvers[name] = f
            return f

        return decorator if func is None else decorator(func)

    @classmethod
    def methods(cls) -> list[str]:
        """Names accepted by :meth:`solve` (besides ``"auto"``)."""
        return ["reference", *cls._solvers]

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve the relaxation.

        Parameters
        ----------
        method : str
            ``"auto"`` (the family's default scalable solver), ``"reference"`` (cvxpy; options
            ``solver="CLARABEL"|"SCS"``, ``eps``, ``verbose`` and solver keywords), or a
            registered solver name (see :meth:`methods`).
        **options
            Passed to the solver.
        """
        if method == "auto":
            method = self.default_method
            if method != "reference" and method not in self._solvers:
                raise ValueError(
                    f"{self.name} has no solver registered for its default method {method!r}: register one "
                    f"with {type(self).__name__}.register_solver({method!r}, func) or use one of {self.methods()}"
                )
        if method == "reference":
            return solve_reference(self, **options)
        try:
            solver = self._solvers[method]
        except (KeyError, TypeError):
            raise ValueError(
                f"Unknown method {method!r} for {self.name}; valid methods are "
                f"{['auto', *self.methods()]}"
            ) from None
        return solver(self, **options)

    def make_result(self, X, *, status, method, iterations, time, dual_bound=None, history=None) -> Result:
        """Build a :class:`Result`, recomputing objective and residuals from ``X``."""
        return Result(
            X=X,
            objective=float(self.objective(X)),
            status=status,
            method=method,
            iterations=int(iterations),
            time=float(time),
            residuals=self.residuals(X),
            dual_bound=None if dual_bound is None else float(dual_bound),
            history=history or [],
        )


def solve_reference(
    relaxation: Relaxation,
    *,
    solver: str = "CLARABEL",
    eps: float | None = None,
    verbose: bool = False,
    **solver_options,
) -> Result:
    """Solve ``relaxation.problem()`` with cvxpy and wrap it as a :class:`Result`.

    ``eps`` sets SCS's ``eps_abs``/``eps_rel`` (default 1e-7) or Clarabel's ``tol_gap_abs``,
    ``tol_gap_rel``, ``tol_feas`` (default 1e-9).
    """
    solver = str(solver).upper()
    if solver not in REFERENCE_SOLVERS:
        raise ValueError(f"Unknown reference solver {solver!r}; valid solvers are {list(REFERENCE_SOLVERS)}")
    if solver == "SCS":
        eps = 1e-7 if eps is None else eps
        opts = {"eps_abs": eps, "eps_rel": eps, "max_iters": 1_000_000}
    else:
        eps = 1e-9 if eps is None else eps
        opts = {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps, "max_iter": 500}
    opts.update(solver_options)
    problem = relaxation.problem()
    start = time.perf_counter()
    problem.solve(solver=solver, verbose=verbose, **opts)
    elapsed = time.perf_counter() - start
    var = relaxation.primary_variable(problem)
    if var.value is None:
        raise RuntimeError(f"cvxpy/{solver} returned no solution for {relaxation.name} (status {problem.status})")
    status = str(problem.status)
    if status != cp.OPTIMAL:
        warnings.warn(f"reference solver {solver} ended with status {status!r}", ConvergenceWarning, stacklevel=3)
    stats = problem.solver_stats
    return relaxation.make_result(
        np.asarray(var.value, dtype=float),
        status=status,
        method=f"reference-{solver.lower()}",
        iterations=stats.num_iters or 0,
        time=elapsed,
        dual_bound=relaxation.dual_bound_from_reference(problem),
        history=[{"solver_time": stats.solve_time, "setup_time": stats.setup_time}],
    )
