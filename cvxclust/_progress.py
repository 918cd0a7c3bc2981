"""What a solve shows and how it is timed: the progress display of ``verbose=True``
(:class:`Progress`) and the clock of a public entry point (:func:`call_clock`).

Both serve :class:`cvxclust.solvers.IterativeSolver`, and any solver with a loop of its own that
shows progress uses :class:`Progress` the same way.
"""

from __future__ import annotations

import contextvars
import math
import time
from contextlib import contextmanager
from dataclasses import dataclass

from tqdm.auto import tqdm

__all__ = ["Progress", "call_clock", "claim_call_start"]

#: seconds between two refreshes of the display between checks (a check always refreshes it)
REFRESH_EVERY = 0.5


class _Bar(tqdm):
    """A tqdm bar whose format has one more field, ``{figures}``: the solver's figures."""

    figures = ""

    @property
    def format_dict(self):
        return {**super().format_dict, "figures": self.figures}


class Progress:
    """The progress display of one solve: what a user waits for, never an estimate from ``max_iter``.

    The bar's position is the progress, on a logarithmic scale, of the certified relative gap from
    its first value above ``tol`` down to ``tol``, and likewise of the worst residual down to
    ``residual_tol``: the lesser of the two, since a solve ends when both are met (the residual
    alone for a method with no certified gap).  Beside it, the last certified values against
    their tolerances, the elapsed time against ``time_limit`` and the iteration::

        generic:  41%|####      | gap=1.2e-03/1e-06 res=4.0e-05/1e-06 12.3s/300s it=80

    Parameters
    ----------
    method : str
        The name shown.
    tol, residual_tol : float
        The tolerances the gap and the worst residual are shown against.
    time_limit : float
        The limit the elapsed time is shown against (``inf``: none shown).
    enabled : bool
        Whether to show anything (``verbose``); when False every call returns at once.
    """

    def __init__(self, method: str, tol: float, residual_tol: float, time_limit: float, enabled: bool):
        self.tol, self.residual_tol, self.time_limit = tol, residual_tol, time_limit
        self.enabled = bool(enabled)
        self.gap = self.residual = None
        self._first: dict[str, float] = {}
        self._shown = -math.inf
        self._bar = _Bar(total=100, desc=method, disable=not self.enabled, leave=False,
                         bar_format="{desc}: {percentage:3.0f}%|{bar}| {figures}")

    def update(self, iteration: int, elapsed: float, gap: float | None = None, residual: float | None = None,
               check: bool = False) -> None:
        """Show the state after ``iteration`` at ``elapsed`` seconds.  At a check (``check``) the
        certified ``gap`` (None where there is no finite bound) and worst ``residual`` replace the
        last ones and the display is refreshed; between checks the last ones are kept and the
        display is refreshed at most every :data:`REFRESH_EVERY` seconds."""
        if not self.enabled:
            return
        if check:
            self.gap = self.gap if gap is None else float(gap)
            self.residual = self.residual if residual is None else float(residual)
        elif time.perf_counter() - self._shown < REFRESH_EVERY:
            return
        self._bar.n = 100.0 * self.fraction()
        self._bar.figures = self.figures(iteration, elapsed)
        self._bar.refresh()
        self._shown = time.perf_counter()

    def fraction(self) -> float:
        """The bar's position in [0, 1] (see the class docstring)."""
        parts = [self._toward("gap", self.gap, self.tol), self._toward("residual", self.residual, self.residual_tol)]
        return min((p for p in parts if p is not None), default=0.0)

    def _toward(self, name: str, value: float | None, target: float) -> float | None:
        if value is None:
            return None
        if value <= target:
            return 1.0
        if not math.isfinite(value):
            return 0.0
        first = self._first.setdefault(name, value)
        return min(max(math.log(first / value) / math.log(first / target), 0.0), 1.0)

    def figures(self, iteration: int, elapsed: float) -> str:
        """``gap=.../tol res=.../residual_tol elapsed/time_limit it=iteration`` (the figures known)."""
        parts = []
        if self.gap is not None:
            parts.append(f"gap={self.gap:.1e}/{self.tol:g}")
        if self.residual is not None:
            parts.append(f"res={self.residual:.1e}/{self.residual_tol:g}")
        limit = f"/{self.time_limit:g}s" if math.isfinite(self.time_limit) else ""
        parts.append(f"{elapsed:.1f}s{limit}")
        parts.append(f"it={iteration}")
        return " ".join(parts)

    def close(self) -> None:
        self._bar.close()


@dataclass
class _Call:
    start: float
    claimed: bool = False


_CALL: contextvars.ContextVar[_Call | None] = contextvars.ContextVar("cvxclust_call", default=None)


@contextmanager
def call_clock():
    """Time a public entry point (:func:`cvxclust.solve`, :meth:`cvxclust.Relaxation.solve`)
    from its call.

    The first solver run inside (:func:`claim_call_start`) starts its clock (elapsed time,
    ``time_limit``, :attr:`cvxclust.Result.time`) at the call instead of at its own start, so
    that the work before it, reading the problem, counts.  A nested use keeps the outer clock.
    """
    if _CALL.get() is not None:
        yield
        return
    token = _CALL.set(_Call(time.perf_counter()))
    try:
        yield
    finally:
        _CALL.reset(token)


def claim_call_start() -> float | None:
    """The start of the entry point being timed (:func:`call_clock`), for the first solver run
    that asks; None for a later run (a solver that runs others) or outside an entry point."""
    call = _CALL.get()
    if call is None or call.claimed:
        return None
    call.claimed = True
    return call.start
