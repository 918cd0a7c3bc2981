"""The certified iterative-solver core that every scalable solver of the package runs on.

A solver is a subclass of :class:`IterativeSolver` that supplies

* ``parameters``: its table of :class:`Param` (default and constraints), checked once;
* :meth:`~IterativeSolver.init_state`: the state before the first iteration;
* :meth:`~IterativeSolver.step`: one iteration, returning the figures of its history row;
* :meth:`~IterativeSolver.certify`: a :class:`Certificate` (an exactly, or best, feasible point,
  a certified bound on the optimal value, and optionally the point's residuals).

The core owns everything else, the same way for every solver: the check cadence
(``check_every``), the best bound (the largest lower bound when minimising, the smallest upper
bound when maximising), the relative gap (:func:`cvxclust.result.relative_gap`, the one
:attr:`Result.relative_gap` reports), the stop test (gap below ``tol`` *and* worst residual
below ``residual_tol``), a last certification when a limit ends the loop, the time limit on
the clock that also gives :attr:`Result.time`, the history rows, the progress bar, the
``ConvergenceWarning`` and the :class:`~cvxclust.Result`.

A point is called optimal only when the *relaxation's own* :meth:`~cvxclust.Relaxation.residuals`
are below ``residual_tol``: a solver may report cheaper residuals of its own at checks, but
before the core stops on them it recomputes them with the relaxation.  Where those exceed
``residual_tol`` although the solver's own are met, the solver cannot see the violated
constraint (a solver registered on a subclass that adds a constraint it does not handle): the
core stops with status ``"stalled"`` and a warning that says so, never ``"optimal"``.

The design follows jaxopt's ``IterativeSolver`` (the base owns ``run``; solvers supply
``init_state`` and ``update``) and pymanopt's optimizers (one result type, the stopping reasons
in one place).
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from dataclasses import dataclass, field
from numbers import Integral, Real
from typing import Any, ClassVar, NamedTuple

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ._array_api import dtype_unit_roundoff
from ._progress import Progress, claim_call_start
from ._deprecation import warn_deprecated
from .linalg import blas_threads
from .parameters import Interval, check_parameter
from .penalty import ResidualBalancing
from .result import Result, relative_gap

__all__ = ["Certificate", "IterativeSolver", "Param", "STOP_REASONS", "SolverState", "balance_penalty",
           "polish_due"]

#: what each status of an iterative solver means
STOP_REASONS = {
    "optimal": "certified relative gap below tol and residuals below residual_tol",
    "converged": "the method's own stopping rule met and residuals below residual_tol, with no certified gap",
    "max_iter": "iteration limit reached",
    "time_limit": "time limit reached",
    "stalled": "no further progress possible",
    "infeasible": "the constraints are certified infeasible: along some multipliers the bound grows without limit",
    "unbounded": "the objective is certified unbounded (if any point is feasible): the iterates move along a "
                 "direction that keeps the constraints and improves it without limit",
}

POSITIVE = [Interval(Real, 0, None, closed="neither")]


class Param(NamedTuple):
    """One entry of a solver's parameter table: its default and the constraints on its value
    (see :mod:`cvxclust.parameters`)."""

    default: Any
    constraints: list


@dataclass(kw_only=True, eq=False)
class SolverState:
    """The base of a solver's state (what :meth:`~IterativeSolver.init_state` returns and
    :meth:`~IterativeSolver.step` updates in place), as jaxopt's solvers type theirs.

    Each solver declares its state as a dataclass that extends this one
    (``@dataclass(kw_only=True, eq=False)``), with every field it ever sets, so the state of a
    solver reads in one place; :meth:`~IterativeSolver.init_state` builds it whole.

    Attributes
    ----------
    iteration : int
        The index of the last iteration stepped (0 before the first, for the solvers that track it).
    checks : int
        The certification checks made so far (for the solvers that count them).
    """

    iteration: int = 0
    checks: int = 0


@dataclass
class Certificate:
    """What a solver's :meth:`~IterativeSolver.certify` returns.

    Attributes
    ----------
    X : ndarray or None
        The candidate: an exactly feasible point where the solver can restore one, else its best;
        None for a solver that keeps the point as a factor (it then gives ``objective`` and
        ``residuals``, computed from the factor with the relaxation's definitions).
    bound : float or None
        A certified bound on the optimal value (valid whatever the iterate), or None where this
        check computed none (the core keeps the best bound seen so far).
    objective : float, optional
        Objective of ``X``; the relaxation's :meth:`~cvxclust.Relaxation.objective` if None.
    residuals : dict, optional
        Relative residuals of ``X``; the relaxation's :meth:`~cvxclust.Relaxation.residuals` if
        None.  A solver may give cheaper ones of its own; the core confirms them with the
        relaxation before it stops.
    figures : dict
        Extra figures for the history row of this check.
    """

    X: np.ndarray
    bound: float | None = None
    objective: float | None = None
    residuals: dict | None = None
    figures: dict = field(default_factory=dict)


class IterativeSolver:
    """Base of every certified scalable solver; see the module docstring.

    Parameters
    ----------
    relaxation : Relaxation or None
        The problem; None for a solver that certifies its own points (its certificates then
        carry objective and residuals).
    **params
        The solver's parameters (its ``parameters`` table).  Every solver has

        tol : float
            Certified relative gap (:func:`cvxclust.result.relative_gap`) to stop at.
        residual_tol : float
            Worst relative residual (:meth:`~cvxclust.Relaxation.residuals`) to stop at.
        max_iter : int
            Iteration limit (status ``"max_iter"`` and a ``ConvergenceWarning``).
        time_limit : float
            Wall-clock limit in seconds, measured on the clock of :attr:`Result.time`: from the
            call of the public entry point (:func:`cvxclust.solve`,
            :meth:`~cvxclust.Relaxation.solve`), reading the problem included (status
            ``"time_limit"`` and a ``ConvergenceWarning``).
        check_every : int
            Iterations between certification checks.
        verbose : bool
            Show the progress (:class:`cvxclust._progress.Progress`): the certified gap and the
            worst residual against ``tol`` and ``residual_tol``, the elapsed time against
            ``time_limit``.
    """

    #: the method name used in messages and in the Result (the registry overrides it)
    method: ClassVar[str] = "iterative"
    #: ``"minimize"`` or ``"maximize"``; taken from the relaxation when there is one
    sense: ClassVar[str] = "minimize"
    parameters: ClassVar[dict[str, Param]] = {
        "tol": Param(1e-6, POSITIVE),
        "residual_tol": Param(1e-6, POSITIVE),
        "max_iter": Param(10000, [Interval(Integral, 1, None, closed="left")]),
        "time_limit": Param(np.inf, [Interval(Real, 0, None, closed="neither", allow_inf=True)]),
        "check_every": Param(10, [Interval(Integral, 1, None, closed="left")]),
        "verbose": Param(False, ["boolean"]),
    }

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        # parameters become attributes of the instance: one must not hide a method
        clashes = sorted(k for k in cls.parameters if callable(getattr(cls, k, None)))
        if clashes:
            raise TypeError(f"{cls.__name__}: parameters {clashes} would hide methods of the same name")
        # the signature that help() and IDEs show is the parameter table's
        params = [inspect.Parameter("relaxation", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=p.default)
                   for k, p in cls.parameters.items()]
        cls.__signature__ = inspect.Signature(params)

    def __init__(self, relaxation=None, **params):
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            raise TypeError(f"{self.method}() got unexpected keyword arguments {unknown}; valid parameters are "
                            f"{sorted(self.parameters)}")
        self.relaxation = relaxation
        for name, param in self.parameters.items():
            value = params.get(name, param.default)
            setattr(self, name, check_parameter(name, value, param.constraints, self.method))
        if relaxation is not None:
            self.sense = getattr(relaxation, "sense", "minimize")
        self.status: str | None = None
        self.history: list[dict] = []

    @classmethod
    def as_function(cls, doc: str | None = None):
        """The solver as a function ``f(relaxation, **params) -> Result``, the form the
        registry of :class:`~cvxclust.Relaxation` takes."""

        def solve(relaxation, **params):
            return cls(relaxation, **params).run()

        solve.__name__ = solve.__qualname__ = cls.method.replace("-", "_")
        solve.__doc__ = doc or cls.__doc__
        solve.__signature__ = cls.__signature__
        solve.__module__ = cls.__module__
        solve.parameters = cls.parameters  # the table, for callers that check options ahead (the catalogue)
        return solve

    # -- what a solver supplies --------------------------------------------------------------
    def init_state(self):
        """The state before the first iteration, a :class:`SolverState` that declares every field
        (set-up work counts towards the time limit)."""
        raise NotImplementedError

    def step(self, state, iteration: int) -> dict | None:
        """One iteration from ``state`` (updated in place); returns figures for the history."""
        raise NotImplementedError

    def certify(self, state, bound: float, final: bool = False) -> Certificate:
        """A certificate of the current state; ``bound`` is the best bound so far, ``final`` is
        True for the certification after the loop (a limit or a stall ended it)."""
        raise NotImplementedError

    def is_check(self, state, iteration: int) -> bool:
        """Whether to certify after this iteration (by default every ``check_every``)."""
        return (iteration + 1) % self.check_every == 0

    def size(self) -> int:
        """Order of the largest dense matrix the solver factors: it sets the BLAS threads
        (:func:`cvxclust.linalg.blas_threads`)."""
        X = getattr(self.relaxation, "K", None)
        return int(np.shape(X)[0]) if X is not None and np.ndim(X) == 2 else 0

    def extras(self, state) -> dict:
        """Outputs particular to the solver for :attr:`Result.extras` (none by default)."""
        return {}

    # -- for a solver's step ------------------------------------------------------------------
    def converge(self) -> None:
        """Declare the method's own stopping rule met (for methods with no certified bound): the
        core stops at the next check if the residuals are below ``residual_tol``, with status
        ``"converged"``."""
        self._converged = True

    def stall(self, note: str = "") -> None:
        """Stop after this iteration with status ``"stalled"``."""
        self.status = "stalled"
        self._stop_note = note

    def declare_infeasible(self, note: str = "") -> None:
        """Stop after this iteration with status ``"infeasible"``: for a solver that has found a
        certificate (a direction of its multipliers along which its bound grows without limit)."""
        self.status = "infeasible"
        self._stop_note = note

    def declare_unbounded(self, note: str = "") -> None:
        """Stop after this iteration with status ``"unbounded"``: for a solver that has found a
        recession direction of the feasible set along which the objective improves without limit."""
        self.status = "unbounded"
        self._stop_note = note

    @property
    def elapsed(self) -> float:
        """Wall seconds since the call of the entry point (:func:`cvxclust._progress.call_clock`),
        or since :meth:`run` started outside one."""
        return time.perf_counter() - self._start

    # -- the loop -------------------------------------------------------------------------------
    def _better(self, new: float | None, old: float) -> float:
        if new is None or not np.isfinite(new):
            return old
        return max(old, new) if self.sense == "minimize" else min(old, new)

    def _evaluate(self, certificate: Certificate, confirm: bool) -> tuple[float, dict]:
        """Objective and residuals of the certificate's point; the relaxation's own residuals
        when ``confirm`` (or when the solver gave none)."""
        relaxation = self.relaxation
        objective = certificate.objective
        if objective is None:
            objective = float(relaxation.objective(certificate.X))
        residuals = certificate.residuals
        # a certificate without X (a solver that keeps a factor of it) is judged by the residuals
        # the solver computed from its factor, with the relaxation's definitions
        if relaxation is not None and (residuals is None or (confirm and certificate.X is not None)):
            residuals = relaxation.residuals(certificate.X)
        return float(objective), dict(residuals or {})

    def _check(self, state, final: bool, row: dict):
        certificate = self.certify(state, self.bound, final=final)
        self.bound = self._better(certificate.bound, self.bound)
        confirmed = final or not self._trust_residuals or self.relaxation is None
        objective, residuals = self._evaluate(certificate, confirm=confirmed)
        gap = relative_gap(objective, self.bound, self.gap_floor)
        worst = max(residuals.values(), default=0.0)
        self._certified = gap <= self.tol
        passed = (self._certified or self._converged) and worst <= self.residual_tol
        if passed and not confirmed:
            # the solver's own residuals passed: confirm with the relaxation's before stopping
            objective, residuals = self._evaluate(certificate, confirm=True)
            worst = max(residuals.values(), default=0.0)
            passed = worst <= self.residual_tol
            if not passed:
                # the solver's own tests are met, so iterating on cannot reduce a residual it does
                # not see: stop now, honestly
                self._trust_residuals = False
                self.status = "stalled"
                self._stop_note = (
                    f"the relaxation's residuals ({worst:.2e}) exceed residual_tol where the solver's own "
                    f"are met: {self.method} may not handle every constraint of {type(self.relaxation).__name__}")
        row.update(certificate.figures)
        finite = bool(np.isfinite(self.bound))
        row.update(objective=objective, dual_bound=self.bound if finite else None,
                   relative_gap=gap if finite else None, max_residual=worst)
        self._last = (certificate, objective, residuals)
        return passed

    def run(self) -> Result:
        """Iterate until certified, a limit, or a stall; return the :class:`~cvxclust.Result`."""
        now = time.perf_counter()
        call = claim_call_start()
        self._start = now if call is None else call
        # the time from the call to here: reading the problem (and checking the options)
        read_time = None if call is None else now - call
        self.status, self.history, self._stop_note = None, [], ""  # a second run starts afresh
        self.bound = -np.inf if self.sense == "minimize" else np.inf
        self._trust_residuals = True
        self._converged = self._certified = False
        scale = self.relaxation.objective_scale() if self.relaxation is not None else 0.0
        # objectives below sqrt(eps) of the instance's scale, eps the unit roundoff of the solve's
        # dtype, are rounding errors: a floor there lets a zero optimum be certified (relative_gap)
        self.gap_floor = float(np.sqrt(self.unit_roundoff()) * abs(scale))
        self._last = None  # (certificate, objective, residuals) of the last check
        self._progress = Progress(self.method, self.tol, self.residual_tol, self.time_limit, self.verbose)
        try:
            with blas_threads(self.size()):
                state = self.init_state()
                if self.status is None and self.elapsed > self.time_limit:
                    self.status = "time_limit"  # reading the problem and the set-up used the time
                    read = "" if read_time is None else f"{read_time:.3g} s reading the problem, "
                    self._stop_note = (f"time_limit={self.time_limit:g} s was spent before the first iteration "
                                       f"({read}{self.elapsed:.3g} s in all): the point returned is the "
                                       f"starting point")
                if self.status is None:
                    self.drive(state)
                if self.status is None:
                    self.status = "max_iter"
                iterations = len(self.history)
                if self.status not in ("optimal", "converged"):
                    # certify the point returned: its figures complete the last iteration's row
                    if not self.history:
                        self.history.append({"iteration": 0})
                    row = self.history[-1]
                    if self._check(state, True, row):
                        self.status = "optimal" if self._certified else "converged"
                    row.update(final=True, time=self.elapsed)
                    self._show(row, check=True)
        finally:
            self._progress.close()
        if self.status not in ("optimal", "converged"):
            self._warn(iterations)
        certificate, objective, residuals = self._last
        extras = self.extras(state)
        if read_time is not None:
            extras = {**extras, "read_time": read_time}
        return Result(
            X=certificate.X, objective=objective, status=self.status, method=self.method,
            iterations=iterations, time=self.elapsed, residuals=residuals,
            dual_bound=self.bound if np.isfinite(self.bound) else None, history=self.history,
            extras=extras, gap_floor=self.gap_floor,
        )

    def unit_roundoff(self) -> float:
        """The unit roundoff of the solve's dtype, which scales the gap floor
        (:attr:`Result.gap_floor`, ``sqrt(eps)`` times the relaxation's
        :meth:`~cvxclust.Relaxation.objective_scale`): that of the relaxation's arrays
        (``relaxation.arrays``, the namespace, device and dtype of its data) where it keeps them,
        else that of the solver's ``dtype`` option where it takes one (:func:`cvxclust.solve`'s),
        else float64's.  float32's is about 5e8 times float64's: its floor is about 2e4 times
        higher, at the level where a float32 objective is rounding noise."""
        arrays = getattr(self.relaxation, "arrays", None)
        if arrays is not None:
            return arrays.eps
        return dtype_unit_roundoff(getattr(self, "dtype", None))

    def drive(self, state) -> None:
        """Run the iterations: :meth:`step` then :meth:`advance`, until :meth:`advance` says stop.

        A solver whose iterations are driven by another library (an optimizer that calls back
        after each of its iterations) overrides this method and calls :meth:`advance` from its
        callback, stopping the library when it returns True.
        """
        for iteration in range(self.max_iter):
            if self.advance(state, self.step(state, iteration)):
                return

    def advance(self, state, figures: dict | None) -> bool:
        """Book one finished iteration (its history ``figures``), certify it when due, and
        return True when the loop must stop (certified, stalled, or a limit reached)."""
        iteration = len(self.history)
        row = {"iteration": iteration + 1, **(figures or {})}
        check = self.status is None and self.is_check(state, iteration)
        if check:
            if self._check(state, False, row):
                self.status = "optimal" if self._certified else "converged"
        row["time"] = self.elapsed
        self.history.append(row)
        self._show(row, check)
        if self.status is None and self.elapsed > self.time_limit:
            self.status = "time_limit"
        if self.status is None and iteration + 1 >= self.max_iter:
            self.status = "max_iter"
        return self.status is not None

    def _show(self, row: dict, check: bool) -> None:
        """Show the progress after the iteration of ``row`` (its certified figures at a check)."""
        gap = row.get("relative_gap") if check else None
        self._progress.update(row["iteration"], row["time"], gap, row.get("max_residual"), check=check)

    def _warn(self, iterations: int) -> None:
        last = self.history[-1] if self.history else {}
        gap = last.get("relative_gap")
        figures = [] if gap is None else [f"relative gap {gap:.2e} (tol={self.tol:g})"]
        figures.append(f"worst residual {last.get('max_residual', np.inf):.2e} (residual_tol={self.residual_tol:g})")
        note = f"; {self._stop_note}" if self._stop_note else ""
        warnings.warn(
            f"{self.method} stopped after {iterations} iterations ({STOP_REASONS[self.status]}) with "
            f"{' and '.join(figures)}{note}",
            ConvergenceWarning,
            stacklevel=_caller_stacklevel(),
        )


def _caller_stacklevel() -> int:
    """The ``stacklevel`` that points a warning at the first frame outside the package and cvxpy
    (the user's call), however deep inside the package it is raised."""
    # cvxpy's frames too: problem.solve(method="cvxclust") calls the package from cvxpy
    packages = (__name__.split(".")[0], "cvxpy")
    frame, level = sys._getframe(1), 1
    while frame is not None and frame.f_globals.get("__name__", "").split(".")[0] in packages:
        frame, level = frame.f_back, level + 1
    return level


def balance_penalty(iteration: int, rho: float, U, r_primal: float, r_dual: float, mu: float, every: int):
    """Residual balancing of an ADMM penalty, every ``every`` iterations; returns ``(rho, U)``.

    Kept for one release: use :class:`cvxclust.penalty.ResidualBalancing` (the one schedule of
    the package's ADMMs, which also keeps rho within :data:`cvxclust.penalty.PENALTY_RANGE` of
    its start, here ``rho`` itself)."""
    warn_deprecated("cvxclust.solvers.balance_penalty is replaced by cvxclust.penalty.ResidualBalancing")
    change = ResidualBalancing(rho, mu, every).change(iteration, rho, r_primal, r_dual)
    return (rho, U) if change == 1.0 else (rho * change, U / change)


def polish_due(gap: float, residual: float, last: tuple[float, float] | None, tol: float) -> bool:
    """Whether a check should polish its iterate into a feasible point (alternating projections,
    :func:`cvxclust.linalg.alternating_projections`, an eigendecomposition per round).

    ``gap`` is the iterate's signed relative gap to the bound (negative: past it), ``residual``
    its primal residual, ``last`` the ``(residual, relative loss of the polished point against
    its iterate)`` of the last polish (None before the first).  A polish loses about in
    proportion to the residual, so it is due when the iterate is within ``tol`` of the bound
    and, after the first, when the last loss scaled by the residual's fall since could finish
    the solve (and the residual fell 5%), or, to recalibrate, when the residual fell tenfold.
    Polishing whenever the residual halved would spend much of a solve in polishes that cannot
    finish it.
    """
    if gap > tol:
        return False
    if last is None:
        return True
    last_residual, loss = last
    shrink = residual / max(last_residual, 1e-300)
    return (gap + max(loss, 0.0) * shrink <= tol and shrink <= 0.95) or shrink <= 0.1
