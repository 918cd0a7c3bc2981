"""One result type for every solver: :class:`Result`, and the one relative-gap definition."""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np

__all__ = ["Result", "relative_gap"]


def relative_gap(objective: float, bound: float | None, floor: float = 0.0) -> float | None:
    r"""The relative duality gap every solver and :class:`Result` use.

    .. math:: \frac{|f - b|}{\max(|f|, |b|, \varphi)}

    for an objective ``f``, a certified bound ``b`` and a floor :math:`\varphi \ge 0` (0 when
    ``f = b``; ``inf`` when either is not finite).  Above the floor it is invariant to the scale
    of the problem and symmetric in ``f`` and ``b``; the absolute value makes a point that
    violates its constraints, and so may lie past the bound, no better certified than one on the
    right side.  The floor lets a zero optimum be certified: where ``f`` and ``b`` are both
    rounding errors, no ratio of them is small.  Solvers set it to ``sqrt(eps)`` times the
    relaxation's :meth:`~cvxclust.Relaxation.objective_scale` (0, no floor, by default).
    """
    if bound is None:
        return None
    objective, bound = _real(objective, "objective"), _real(bound, "bound")
    floor = _real(floor, "floor")
    if not (math.isfinite(objective) and math.isfinite(bound)):
        return math.inf
    gap = abs(objective - bound)
    return 0.0 if gap == 0.0 else gap / max(abs(objective), abs(bound), floor)


def _real(value, name: str) -> float:
    """``float(value)`` for a real number (NaN and infinities included: a record keeps what a
    solver found); booleans, strings and non-numbers raise naming ``name``."""
    if not isinstance(value, (bool, np.bool_, str, bytes)):
        try:
            return float(value)
        except (TypeError, ValueError, OverflowError):
            pass
    raise TypeError(f"{name} must be a real number (a float), got {value!r}")


def _count(value, name: str) -> int:
    """``int(value)`` for a nonnegative integer (an integral float too, never a boolean)."""
    real = _real(value, name)
    if not (real.is_integer() and real >= 0):
        raise ValueError(f"{name} must be a nonnegative integer, got {value!r}")
    return int(real)


class _ReadOnlyDict(dict):
    """A dict that refuses changes (and, unlike ``MappingProxyType``, pickles)."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("a Result is read-only: build a new one with dataclasses.replace")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = __ior__ = _refuse

    def __reduce__(self):
        return (type(self), (dict(self),))


def _frozen(mapping: Mapping | None) -> Mapping:
    return _ReadOnlyDict(mapping or {})


@dataclass(frozen=True, repr=False, eq=False)
class Result:
    """Outcome of one solve, for every solver of the package.

    Attributes
    ----------
    X : ndarray or None
        The primary variable (the matrix of the relaxation, or the iterate of a solver that has
        no relaxation object); None where a method leaves it unformed, such as a low-rank method
        whose ``n x n`` X would not fit in memory (its factor F, ``X = F F^T``, is then
        ``extras["factor"]``).
    objective : float
        Objective of ``X`` as computed by the relaxation (:meth:`Relaxation.objective`), in the
        problem's own sense and scale.
    status : str
        ``"optimal"`` (relative gap below ``tol`` and worst residual below ``residual_tol``,
        both certified), ``"converged"`` (a method with no certificate of optimality, such as a
        local search or a rounding, met its own stopping rule), ``"max_iter"``,
        ``"time_limit"``, ``"stalled"`` (no further progress possible), ``"infeasible"`` (the
        constraints are certified infeasible), ``"unbounded"`` (the objective is certified to
        improve without limit; ``objective`` is then ``-inf``, or ``+inf`` when maximising), or a
        cvxpy status for the reference.
    method : str
        The name the method was called by.
    iterations : int
        Iterations of the method (outer iterations where there are two levels).
    time : float
        Wall seconds from the call of the entry point (:func:`cvxclust.solve`,
        :meth:`Relaxation.solve`), reading the problem and the set-up included (the reading
        alone is ``extras["read_time"]`` where a problem is read).
    residuals : mapping of str to float
        Relative feasibility violations of ``X`` from :meth:`Relaxation.residuals`.
    dual_bound : float or None
        The best certified bound on the optimal value (a lower bound when minimising, an upper
        bound when maximising), or None where the method yields none.
    history : tuple of dict
        Per-iteration figures.  Every row has ``iteration`` and ``time``; rows of certification
        checks also have ``objective``, ``dual_bound``, ``relative_gap`` and ``max_residual``.
    extras : mapping
        Outputs particular to a method (a factor, labels, an auxiliary variable); each solver's
        docstring lists its keys.
    gap_floor : float
        The floor of :func:`relative_gap` the solver certified with (0: none).
    """

    X: np.ndarray
    objective: float
    status: str
    method: str
    iterations: int
    time: float
    residuals: Mapping[str, float] = field(default_factory=dict)
    dual_bound: float | None = None
    history: tuple = ()
    extras: Mapping[str, Any] = field(default_factory=dict)
    gap_floor: float = 0.0

    def __post_init__(self):
        set_ = object.__setattr__
        for name in ("status", "method"):
            if not isinstance(getattr(self, name), str):
                raise TypeError(f"Result.{name} must be a str, got {getattr(self, name)!r}")
        for name in ("residuals", "extras"):
            if not isinstance(getattr(self, name), Mapping):
                raise TypeError(f"Result.{name} must be a mapping, got {getattr(self, name)!r}")
        if isinstance(self.history, (str, bytes)) or not isinstance(self.history, Iterable):
            raise TypeError(f"Result.history must be a sequence of dicts, got {self.history!r}")
        time = _real(self.time, "Result.time")
        if not time >= 0 or math.isinf(time):
            raise ValueError(f"Result.time must be a finite number of seconds >= 0, got {self.time!r}")
        set_(self, "objective", _real(self.objective, "Result.objective"))
        set_(self, "iterations", _count(self.iterations, "Result.iterations"))
        set_(self, "time", time)
        set_(self, "residuals", _frozen({k: _real(v, f"Result.residuals[{k!r}]") for k, v in self.residuals.items()}))
        set_(self, "dual_bound", None if self.dual_bound is None else _real(self.dual_bound, "Result.dual_bound"))
        set_(self, "history", tuple(self.history))
        set_(self, "extras", _frozen(self.extras))
        floor = _real(self.gap_floor, "Result.gap_floor")
        if not floor >= 0 or math.isinf(floor):
            raise ValueError(f"Result.gap_floor must be a finite number >= 0, got {self.gap_floor!r}")
        set_(self, "gap_floor", floor)

    @property
    def duality_gap(self) -> float | None:
        """``|objective - dual_bound|``, or None where no bound is known."""
        return None if self.dual_bound is None else abs(self.objective - self.dual_bound)

    @property
    def relative_gap(self) -> float | None:
        """:func:`relative_gap` of ``objective`` and ``dual_bound`` with ``gap_floor`` (None
        without a bound)."""
        return relative_gap(self.objective, self.dual_bound, self.gap_floor)

    @property
    def max_residual(self) -> float:
        """The worst relative feasibility violation (0 when there are no constraints)."""
        return max(self.residuals.values(), default=0.0)

    # -- display ---------------------------------------------------------------------------
    def _summary(self) -> list[tuple[str, str]]:
        gap = self.relative_gap
        shape = "x".join(str(s) for s in np.shape(self.X))
        rows = [
            ("method", self.method),
            ("status", self.status),
            ("objective", f"{self.objective:.10g}"),
            ("dual_bound", "n/a" if self.dual_bound is None else f"{self.dual_bound:.10g}"),
            ("relative_gap", "n/a" if gap is None else f"{gap:.2e}"),
            ("max_residual", f"{self.max_residual:.2e}"),
            ("iterations", str(self.iterations)),
            ("time", f"{self.time:.3f} s"),
            ("X", f"array of shape {shape}" if self.X is not None else "None (the factor: extras['factor'])"),
        ]
        if self.extras:
            rows.append(("extras", ", ".join(self.extras)))
        return rows

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" if k in ("method", "status") else f"{k}={v}" for k, v in self._summary())
        return f"Result({inner})"

    def _repr_markdown_(self) -> str:
        lines = ["| | |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in self._summary()]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        cells = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th><td>{html.escape(v)}</td></tr>"
                        for k, v in self._summary())
        return f"<table><caption>Result</caption>{cells}</table>"

    def plot(self, keys=("relative_gap", "max_residual"), ax=None):
        """Plot the convergence history on a logarithmic scale.

        Parameters
        ----------
        keys : sequence of str
            History figures to draw against the iteration (rows lacking one are skipped).
        ax : matplotlib Axes, optional
            Where to draw; a new figure when None.

        Returns
        -------
        matplotlib Axes

        Raises
        ------
        TypeError
            Naming ``keys`` (not a str or a sequence of str) or ``ax`` (not an Axes).
        ValueError
            If no row of the history has a positive figure for ``keys``.
        """
        import matplotlib.pyplot as plt

        if isinstance(keys, str):
            keys = (keys,)
        keys = tuple(keys) if isinstance(keys, Iterable) else keys
        if not isinstance(keys, tuple) or not all(isinstance(k, str) for k in keys):
            raise TypeError(f"keys must be a str or a sequence of str, got {keys!r}")
        if ax is not None and not hasattr(ax, "semilogy"):
            raise TypeError(f"ax must be a matplotlib Axes or None, got {ax!r}")

        def positive(value) -> bool:  # a figure that a log scale can draw
            try:
                return isinstance(value, Real) and not isinstance(value, bool) and 0 < float(value) < math.inf
            except OverflowError:  # an int beyond the floats
                return False

        if ax is None:
            _, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
        drawn = False
        for key in keys:
            rows = [(r["iteration"], r[key]) for r in self.history
                    if isinstance(r, Mapping) and isinstance(r.get("iteration"), Real) and positive(r.get(key))]
            if rows:
                it, value = zip(*rows)
                ax.semilogy(it, value, marker="." if len(rows) < 50 else None, label=key.replace("_", " "))
                drawn = True
        if not drawn:
            raise ValueError(f"the history of this result has no positive figures for keys={list(keys)}")
        ax.set_xlabel("iteration")
        ax.set_title(f"{self.method}: {self.status} after {self.iterations} iterations")
        ax.legend()
        ax.grid(True, which="major", alpha=0.3)
        return ax
