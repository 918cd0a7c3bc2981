"""The contract every relaxation follows: ``Relaxation``, ``Result`` and the solver registry.

A relaxation states its problem declaratively (:meth:`Relaxation.problem` returns a
``cvxpy.Problem``) and registers hand-written scalable solvers beside it.  ``solve`` dispatches
on ``method``: ``"reference"`` solves the cvxpy statement (SCS or Clarabel), ``"auto"`` the
family's default, any other name a registered solver or a plug-in (a method offered to every
relaxation it applies to, :meth:`Relaxation.register_plugin`; the generic solver of
:func:`cvxclust.solve` registers itself so at import).  This module knows no particular solver.
Every solver returns a :class:`Result` whose objective and residuals are recomputed by the
relaxation itself, so comparisons between solvers are fair whichever produced the point.
"""

from __future__ import annotations

import dataclasses
import time
import warnings
from abc import ABC, abstractmethod
from numbers import Integral, Real
from typing import Callable, ClassVar, NamedTuple

import cvxpy as cp
import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._memory import check_memory, square_bytes
from .parameters import Interval, Options, check_parameter
from .result import Result

__all__ = ["Relaxation", "Result", "ConvergenceWarning"]

#: cvxpy solvers the reference may use, with the name of their accuracy option.
REFERENCE_SOLVERS = ("SCS", "CLARABEL")

# a tolerance at or above 1 accepts any point: both solvers then stop at once and call it optimal
_TOLERANCE = [Interval(Real, 0, 1, closed="neither")]
# the solver keywords the reference sets itself, checked as eps is (the solvers' own checks
# raise other types, or none: Clarabel takes a negative tolerance)
_SOLVER_KEYWORDS = {
    "SCS": {"eps_abs": _TOLERANCE, "eps_rel": _TOLERANCE, "max_iters": [Interval(Integral, 1, 2**31 - 1)]},
    "CLARABEL": {"tol_gap_abs": _TOLERANCE, "tol_gap_rel": _TOLERANCE, "tol_feas": _TOLERANCE,
                 "max_iter": [Interval(Integral, 1, 2**32 - 1)]},
}


SolverFunc = Callable[..., Result]


class _Plugin(NamedTuple):
    """A method offered to every relaxation it applies to (:meth:`Relaxation.register_plugin`)."""

    solver: SolverFunc
    applies: Callable[["Relaxation"], bool]


#: the plug-in methods by name, in the order of registration
_PLUGINS: dict[str, _Plugin] = {}
#: reads a cvxpy problem into a standard form (:meth:`Relaxation.standard_form`); set by cvxclust.generic
_STANDARD_FORM_READER: Callable[[cp.Problem], object] | None = None


def _check_method_name(name) -> None:
    if not isinstance(name, str) or not name:
        raise TypeError(f"name must be a non-empty string, got {name!r}")
    if name in ("reference", "auto"):
        raise ValueError(f"name={name!r} is reserved")


class Relaxation(ABC):
    """A convex relaxation stated in cvxpy, with registered scalable solvers.

    Subclasses set ``name``, ``sense`` and ``default_method``, implement :meth:`problem`,
    :meth:`objective` and :meth:`residuals`, and register solvers with
    :meth:`register_solver`.  The primary variable of :meth:`problem` must be named ``"X"``
    (or the subclass overrides :meth:`primary_variable`).

    A subclass starts with an empty solver registry (a solver written for the parent need not
    solve the subclass's problem), and a subclass that states its own :meth:`problem` does not
    inherit the parent's :meth:`dual_bound_from_reference` unless it says so by defining it.
    """

    name: ClassVar[str] = "relaxation"
    #: ``"minimize"`` or ``"maximize"``, as in :meth:`problem`: the side of the certified bounds
    sense: ClassVar[str] = "minimize"
    default_method: ClassVar[str] = "reference"
    _solvers: ClassVar[dict[str, SolverFunc]] = {}

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # each class owns its registry and starts empty: a subclass that changes the problem
        # must not inherit solvers written for its parent; it registers the ones that apply
        cls._solvers = {}
        if "problem" in cls.__dict__ and "dual_bound_from_reference" not in cls.__dict__:
            # a bound computed from the parent's dual variables need not be valid for a new problem
            cls.dual_bound_from_reference = Relaxation.dual_bound_from_reference
        if cls.sense not in ("minimize", "maximize"):
            raise ValueError(f"{cls.__name__}.sense must be 'minimize' or 'maximize', got {cls.sense!r}")

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

    def objective_scale(self) -> float:
        """A magnitude of the objective on this instance, such as its value at a trivial feasible
        point; 0 (the default) when none is known.

        Certified solvers floor the denominator of the relative gap at ``sqrt(eps)`` times this
        (:func:`cvxclust.result.relative_gap`), so an instance whose optimum is 0 (where the
        objective and the bound are both rounding errors) can still be certified.
        """
        return 0.0

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
    def register_solver(cls, name: str, func=None):
        """Register a solver of this class as method ``name``.

        ``func`` is a function ``func(relaxation, **options) -> Result`` or a subclass of
        :class:`cvxclust.solvers.IterativeSolver`.  Usable as a decorator:
        ``@MyRelaxation.register_solver("admm")``.  The Result of a registered solver reports
        ``name`` as its method.
        """
        _check_method_name(name)

        def decorator(f):
            if isinstance(f, type) and hasattr(f, "as_function"):
                cls._solvers[name] = f.as_function()
            elif callable(f):
                cls._solvers[name] = f
            else:
                raise TypeError(f"func must be a callable or an IterativeSolver subclass, got {f!r}")
            return f

        return decorator if func is None else decorator(func)

    @classmethod
    def register_plugin(cls, name: str, solver: SolverFunc, applies: Callable[["Relaxation"], bool]) -> None:
        """Register a plug-in method: a solver offered to every relaxation it applies to.

        A plug-in is a method that is not written for one class but reads the relaxation's
        :meth:`problem` (the generic solver of :func:`cvxclust.solve` registers itself this way
        at import).  It is listed by :meth:`methods` of every class after the class's own
        solvers, unless a class registers a solver of the same name, which then takes
        precedence for that class; :meth:`scalable_methods` lists it for an instance where
        ``applies(relaxation)`` is True.  ``solver(relaxation, **options)`` returns a
        :class:`Result` and raises a ValueError saying why where it does not apply.

        Parameters
        ----------
        name : str
            The method name (not ``"reference"`` nor ``"auto"``).
        solver : callable
            ``solver(relaxation, **options) -> Result``.
        applies : callable
            ``applies(relaxation) -> bool``: whether the plug-in applies to the instance.
        """
        if cls is not Relaxation:
            raise TypeError(f"plug-ins are registered on Relaxation, for every relaxation; got {cls.__name__} "
                            f"(register a solver of one class with {cls.__name__}.register_solver)")
        _check_method_name(name)
        for what, func in (("solver", solver), ("applies", applies)):
            if not callable(func):
                raise TypeError(f"{what} must be a callable, got {func!r}")
        _PLUGINS[name] = _Plugin(solver, applies)

    @classmethod
    def register_standard_form_reader(cls, reader: Callable[[cp.Problem], object]) -> None:
        """Set the function that reads a ``cvxpy.Problem`` into a standard form
        (:meth:`standard_form`); :mod:`cvxclust.generic` sets :func:`cvxclust.generic.standard_form`
        at import.  The reader raises a ValueError naming the part of a problem outside its class."""
        if not callable(reader):
            raise TypeError(f"reader must be a callable, got {reader!r}")
        global _STANDARD_FORM_READER
        _STANDARD_FORM_READER = reader

    @classmethod
    def methods(cls) -> list[str]:
        """Names accepted by :meth:`solve` (besides ``"auto"``): ``"reference"``, the registered
        solvers, and the plug-ins (:meth:`register_plugin`; ``"generic"``, :func:`cvxclust.solve`
        on :meth:`problem`), which apply where :meth:`scalable_methods` says so."""
        return ["reference", *cls._solvers, *(name for name in _PLUGINS if name not in cls._solvers)]

    def scalable_methods(self) -> list[str]:
        """The methods other than ``"reference"`` that apply to this instance: the registered
        solvers, and the plug-ins that apply to it (``"generic"`` when :meth:`has_generic`)."""
        return [m for m in self.methods()
                if m != "reference" and (m in self._solvers or _PLUGINS[m].applies(self))]

    def standard_form(self):
        """:meth:`problem` read into the standard form of :func:`cvxclust.solve`
        (:class:`cvxclust.generic.StandardForm`), once (the form, or the error, is kept); a
        ValueError names the part of the problem outside its class."""
        cached = getattr(self, "_standard_form", None)
        if cached is None:
            if _STANDARD_FORM_READER is None:
                raise RuntimeError("no standard-form reader is registered (import cvxclust.generic)")
            try:
                cached = _STANDARD_FORM_READER(self.problem())
            except ValueError as error:
                cached = error
            self._standard_form = cached
        if isinstance(cached, ValueError):
            raise ValueError(str(cached))
        return cached

    def has_standard_form(self) -> bool:
        """Whether :meth:`problem` is of the class :func:`cvxclust.solve` takes (:meth:`standard_form`
        reads it; once)."""
        try:
            self.standard_form()
        except ValueError:
            return False
        return True

    def has_generic(self) -> bool:
        """Whether method ``"generic"`` applies: :meth:`has_standard_form`."""
        return self.has_standard_form()

    def generic_form(self):
        """:meth:`standard_form`, with the ValueError saying that method ``"generic"`` does not
        apply (the name it had before :meth:`standard_form`)."""
        try:
            return self.standard_form()
        except ValueError as error:
            raise ValueError(f"method 'generic' does not apply to {self.name}: {error}") from None

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

        Raises
        ------
        InvalidParameterError
            (a ``ValueError`` and a ``TypeError``) naming a bad option, before any solver runs:
            for the reference ``solver``, ``eps`` (in ``(0, 1)``), ``verbose``, and the solver
            keywords it sets itself (Clarabel's ``tol_gap_abs``, ``tol_gap_rel``, ``tol_feas``,
            ``max_iter``; SCS's ``eps_abs``, ``eps_rel``, ``max_iters``).  Other solver keywords
            go to the solver unchecked.
        """
        if method == "auto":
            method = self.default_method
            if method not in self.methods():
                raise ValueError(
                    f"{self.name} has no solver registered for its default method {method!r}: register one "
                    f"with {type(self).__name__}.register_solver({method!r}, func) or use one of {self.methods()}"
                )
        if method == "reference":
            return solve_reference(self, **options)
        try:
            solver = self._solvers[method] if method in self._solvers else _PLUGINS[method].solver
        except (KeyError, TypeError):
            raise ValueError(
                f"Unknown method {method!r} for {self.name}; valid methods are "
                f"{['auto', *self.methods()]}"
            ) from None
        result = solver(self, **options)
        if not isinstance(result, Result):
            raise TypeError(f"method {method!r} of {self.name} returned {type(result).__name__}, not a Result")
        return result if result.method == method else dataclasses.replace(result, method=method)

    def make_result(self, X, *, status, method, iterations, time, dual_bound=None, history=None,
                    extras=None) -> Result:
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
            history=history or (),
            extras=extras or {},
        )


#: Clarabel's memory on semidefinite cones grows like (sum of n(n+1)/2 over the cones)^2 (its
#: dense Hessian blocks and their factor); the constant is fitted on the Peng-Wei SDP
_CLARABEL_BYTES_PER_ENTRY2 = 56.0
#: the default reference moves from Clarabel to SCS above this estimated memory
CLARABEL_MEMORY_LIMIT = 2e9
#: above this p.s.d. order the reference warns that even SCS may take many minutes
SCS_ORDER_WARNING = 400
#: cvxpy's canonicalisation and SCS hold about this many dense n x n arrays of floats for a p.s.d.
#: cone of order n: the peak resident memory of a max-cut solve (200 iterations, ru_maxrss after
#: minus before) over 8 n^2 was 162 at n = 200 and 145 at n = 400
_SCS_COPIES = 160


def reference_bytes(problem: cp.Problem, solver: str) -> int:
    """The estimated peak memory of the reference ``solver`` (``"CLARABEL"`` or ``"SCS"``) on
    ``problem``, from the orders of its p.s.d. cones."""
    orders = semidefinite_orders(problem)
    if solver == "CLARABEL":
        return int(_CLARABEL_BYTES_PER_ENTRY2 * sum(k * (k + 1) // 2 for k in orders) ** 2)
    return sum(square_bytes(k, _SCS_COPIES) for k in orders)


def semidefinite_orders(problem: cp.Problem) -> list[int]:
    """Orders of the p.s.d. cones of ``problem`` (constraints ``>> 0`` and PSD variables)."""
    orders = [int(c.args[0].shape[0]) for c in problem.constraints if isinstance(c, cp.constraints.PSD)]
    return orders + [int(v.shape[0]) for v in problem.variables() if v.attributes.get("PSD")]


def reference_solver_for(problem: cp.Problem) -> tuple[str, str | None]:
    """The default reference solver for ``problem`` and a warning to give, if any.

    Clarabel (an interior-point method, accurate to 1e-9) while its estimated memory is below
    :data:`CLARABEL_MEMORY_LIMIT`, SCS (first-order, memory linear in the cones) above; a
    warning with the estimate either way when the solve is likely to be long.
    """
    orders = semidefinite_orders(problem)
    entries = sum(k * (k + 1) // 2 for k in orders)
    memory = _CLARABEL_BYTES_PER_ENTRY2 * entries ** 2
    if memory <= CLARABEL_MEMORY_LIMIT:
        return "CLARABEL", None
    note = (f"the reference uses SCS: Clarabel would need about {memory / 1e9:.0f} GB for p.s.d. cones of order "
            f"{max(orders)} (pass solver='CLARABEL' to insist)")
    if max(orders) > SCS_ORDER_WARNING:
        note += ("; SCS may itself take many minutes at this size: the scalable methods ('generic', or the "
                 "relaxation's own) solve it on the matrix")
    return "SCS", note


def solve_reference(
    relaxation: Relaxation,
    *,
    solver: str | None = None,
    eps: float | None = None,
    verbose: bool = False,
    **solver_options,
) -> Result:
    """Solve ``relaxation.problem()`` with cvxpy and wrap it as a :class:`Result`.

    ``solver`` is ``"CLARABEL"``, ``"SCS"`` or None, which picks by size
    (:func:`reference_solver_for`: Clarabel unless its estimated memory is too large, with a
    warning that gives the estimate).  ``eps`` sets SCS's ``eps_abs``/``eps_rel`` (default 1e-7)
    or Clarabel's ``tol_gap_abs``, ``tol_gap_rel``, ``tol_feas`` (default 1e-9).  Where the
    solver's estimated memory (:func:`reference_bytes`) exceeds what the machine has, a
    :class:`~cvxclust._memory.MemoryNeed` (a ValueError) says so before cvxpy builds anything.

    A problem the solver certifies infeasible or unbounded (cvxpy's ``"infeasible"``,
    ``"unbounded"`` and their ``"_inaccurate"`` forms) gives a Result with that status, a NaN
    ``X``, cvxpy's optimal value (``+inf`` or ``-inf``) as its objective, no residuals, and a
    ``ConvergenceWarning``; any other end without a point raises a ``RuntimeError``.
    """
    solver = check_parameter("solver", solver.upper() if isinstance(solver, str) else solver,
                                [Options(*REFERENCE_SOLVERS), None], "the reference")
    eps = check_parameter("eps", eps, [*_TOLERANCE, None], "the reference")
    verbose = check_parameter("verbose", verbose, ["boolean"], "the reference")
    # the keywords are checked before the problem is built (with the solver still to choose,
    # against the solver whose keyword each one is)
    for name in [solver] if solver is not None else REFERENCE_SOLVERS:
        for key, constraints in _SOLVER_KEYWORDS[name].items():
            if key in solver_options:
                solver_options[key] = check_parameter(key, solver_options[key], constraints,
                                                         f"the reference ({name})")
    problem = relaxation.problem()
    if solver is None:
        solver, note = reference_solver_for(problem)
    else:
        note = None
    orders = semidefinite_orders(problem)
    check_memory(reference_bytes(problem, solver), f"the reference ({solver}) on p.s.d. cones of order up to "
                 f"{max(orders, default=0)}", "use a scalable method, which works on the matrix itself")
    if note:
        warnings.warn(note, UserWarning, stacklevel=3)
    if solver == "SCS":
        eps = 1e-7 if eps is None else eps
        opts = {"eps_abs": eps, "eps_rel": eps, "max_iters": 1_000_000}
    else:
        eps = 1e-9 if eps is None else eps
        opts = {"tol_gap_abs": eps, "tol_gap_rel": eps, "tol_feas": eps, "max_iter": 500}
    opts.update(solver_options)
    start = time.perf_counter()
    problem.solve(solver=solver, verbose=verbose, **opts)
    elapsed = time.perf_counter() - start
    var = relaxation.primary_variable(problem)
    status = str(problem.status)
    certified = status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE)
    if var.value is None and not certified:
        raise RuntimeError(f"cvxpy/{solver} returned no solution for {relaxation.name} (status {status})")
    if status != cp.OPTIMAL:
        warnings.warn(f"reference solver {solver} ended with status {status!r}", ConvergenceWarning, stacklevel=3)
    stats = problem.solver_stats
    history = [{"solver_time": stats.solve_time, "setup_time": stats.setup_time}]
    if var.value is None:  # certified infeasible or unbounded: no point, the status says why
        return Result(X=np.full(var.shape, np.nan), objective=float(problem.value), status=status,
                      method=f"reference-{solver.lower()}", iterations=stats.num_iters or 0, time=elapsed,
                      history=history)
    return relaxation.make_result(
        np.asarray(var.value, dtype=float),
        status=status,
        method=f"reference-{solver.lower()}",
        iterations=stats.num_iters or 0,
        time=elapsed,
        dual_bound=relaxation.dual_bound_from_reference(problem),
        history=history,
    )
