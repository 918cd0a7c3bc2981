"""Stopping rules shared by every iterative solver: one place, readable reasons.

Usage inside a solver::

    monitor = IterationMonitor("admm", tol=tol, max_iter=max_iter, time_limit=time_limit,
                               verbose=verbose)
    for it in monitor:                      # yields 0, 1, ... until a limit is hit
        ...
        monitor.record(objective=f, primal_residual=r)
        if r < tol:
            monitor.converged()             # stops the loop with status "optimal"
    status = monitor.status                 # "optimal" | "max_iter" | "time_limit" | "stalled"
"""

from __future__ import annotations

import time
import warnings

from sklearn.exceptions import ConvergenceWarning
from tqdm.auto import tqdm

from ._checks import check_int_range, check_positive
from .solvers import balance_penalty  # noqa: F401  (re-exported for solvers not yet on the core)

STOP_REASONS = {
    "optimal": "stopping tolerances met",
    "max_iter": "iteration limit reached",
    "time_limit": "time limit reached",
    "stalled": "no further progress possible",
}


class IterationMonitor:
    """Iterate until convergence, an iteration limit or a time limit; record the history.

    On a stop other than ``"optimal"`` a :class:`~sklearn.exceptions.ConvergenceWarning`
    names the method and the reason.
    """

    def __init__(self, method: str, *, tol: float, max_iter: int, time_limit: float, verbose: bool = False):
        check_positive(tol, "tol")
        check_int_range(max_iter, "max_iter", 1)
        check_positive(time_limit, "time_limit", allow_inf=True)
        self.method = method
        self.tol = float(tol)
        self.max_iter = int(max_iter)
        self.time_limit = float(time_limit)
        self.history: list[dict] = []
        self.status: str | None = None
        self.iterations = 0
        self._start = time.perf_counter()
        self._bar = tqdm(total=self.max_iter, desc=method, disable=not verbose, leave=False)

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self._start

    def __iter__(self):
        # the clock started at construction: set-up work before the loop counts too
        for it in range(self.max_iter):
            if self.elapsed > self.time_limit:
                self._stop("time_limit")
                return
            self.iterations = it + 1
            yield it
            self._bar.update(1)
            if self.status is not None:
                self._bar.close()
                return
        self._stop("max_iter")

    def record(self, **figures) -> None:
        """Append one row of figures (the iteration number and elapsed time are added)."""
        row = {"iteration": self.iterations, "time": self.elapsed, **figures}
        self.history.append(row)
        shown = {k: f"{v:.2e}" for k, v in figures.items() if isinstance(v, float)}
        self._bar.set_postfix(shown, refresh=False)

    def converged(self) -> None:
        self.status = "optimal"
        self._bar.close()

    def stalled(self) -> None:
        self._stop("stalled")

    def _stop(self, status: str) -> None:
        self.status = status
        self._bar.close()
        if status != "optimal":
            warnings.warn(
                f"{self.method} stopped after {self.iterations} iterations: {STOP_REASONS[status]} "
                f"before tol={self.tol:g} was met",
                ConvergenceWarning,
                stacklevel=3,
            )
