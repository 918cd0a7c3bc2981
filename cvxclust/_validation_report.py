"""The report of :func:`cvxclust.validate`: its table (Markdown, HTML, JSON) and its plot."""

from __future__ import annotations

import html
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from numbers import Real

from .result import Result

__all__ = ["Comparison", "ValidationReport", "has_point", "is_inaccurate"]


def has_point(result: Result) -> bool:
    """Whether ``result`` holds a point: not a problem certified infeasible or unbounded."""
    return not result.status.startswith(("infeasible", "unbounded"))


def is_inaccurate(result: Result) -> bool:
    """Whether the cvxpy reference ended with an ``"..._inaccurate"`` status: its solver could not
    reach its own tolerance, so the reference is less accurate than the checks assume."""
    return result.status.endswith("_inaccurate")


@dataclass
class Comparison:
    """One method measured against the reference.

    ``objective_gap`` and ``solution_distance`` are NaN where the reference has no point (it is
    infeasible or unbounded); the check then compares statuses.  ``reference_inaccurate`` says
    that the reference ended ``"..._inaccurate"``.
    """

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
    reference_inaccurate: bool = False

    def check(self) -> str:
        """The check's cell: ``pass`` or ``FAIL: <why>``, and a flag on an inaccurate reference."""
        text = "pass" if self.passed else "FAIL: " + "; ".join(self.failures)
        return text + (" (inaccurate reference)" if self.reference_inaccurate else "")


_HEAD = ["method", "status", "objective gap", "solution distance", "max residual", "certified gap", "iterations",
         "time (s)", "speed-up", "check"]


def _number(value: float | None) -> str:
    return "n/a" if value is None or math.isnan(value) else f"{value:.1e}"


@dataclass
class ValidationReport:
    """The reference result, one :class:`Comparison` per scalable method, and the tolerances the
    checks used."""

    name: str
    reference: Result
    comparisons: list[Comparison]
    results: dict[str, Result]
    objective_tol: float = 1e-6
    residual_tol: float = 1e-6
    solution_tol: float | None = None

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.comparisons)

    @property
    def reference_inaccurate(self) -> bool:
        """Whether the reference ended ``"..._inaccurate"`` (flagged in every table)."""
        return is_inaccurate(self.reference)

    def to_dict(self) -> dict:
        ref = self.reference
        return {
            "name": self.name,
            "passed": self.passed,
            "reference": {
                "method": ref.method,
                "status": ref.status,
                "inaccurate": self.reference_inaccurate,
                "objective": ref.objective,
                "max_residual": ref.max_residual,
                "relative_duality_gap": ref.relative_gap,
                "time": ref.time,
            },
            "tolerances": {"objective_tol": self.objective_tol, "residual_tol": self.residual_tol,
                           "solution_tol": self.solution_tol},
            "comparisons": [asdict(c) for c in self.comparisons],
        }

    def to_json(self) -> str:
        """:meth:`to_dict` as standard JSON: a NaN or an infinity (no point to measure) is null."""
        return json.dumps(_standard(self.to_dict()), indent=2)

    def __repr__(self) -> str:
        verdict = "passed" if self.passed else "FAILED"
        methods = ", ".join(f"{c.method}: {'pass' if c.passed else 'FAIL'}" for c in self.comparisons)
        return (f"ValidationReport(name={self.name!r}, {verdict}, reference={self.reference.method!r} "
                f"status={self.reference.status!r} objective={self.reference.objective:.10g}, {methods})")

    # -- the table ------------------------------------------------------------------------------
    def _rows(self) -> list[list[str]]:
        return [[c.method, c.status, _number(c.objective_gap), _number(c.solution_distance),
                 f"{c.max_residual:.1e}", _number(c.relative_duality_gap), str(c.iterations), f"{c.time:.3f}",
                 f"{c.speedup:.1f}x", c.check()] for c in self.comparisons]

    def _reference_line(self) -> str:
        ref = self.reference
        if not has_point(ref):
            return f"reference `{ref.method}`: status {ref.status}, no point, time {ref.time:.3f} s"
        line = (f"reference `{ref.method}`: objective {ref.objective:.10g}, status {ref.status}, "
                f"max residual {ref.max_residual:.1e}, time {ref.time:.3f} s")
        if self.reference_inaccurate:
            line += ("; **inaccurate reference**: its solver stopped short of its own tolerance, so the gaps "
                     "below are measured against a less accurate point than the checks assume")
        return line

    def legend(self) -> list[str]:
        """What each column means, and what the check tests (the lines under the table)."""
        tolerances = f"objective gap <= {self.objective_tol:g}, max residual <= {self.residual_tol:g}"
        if self.solution_tol is not None:
            tolerances += f", solution distance <= {self.solution_tol:g}"
        check = (f"pass when the method's status is the reference's ({self.reference.status})"
                 if not has_point(self.reference) else
                 f"pass when {tolerances} and the status is optimal (cvxpy's optimal_inaccurate included)")
        return [
            "*objective gap*: `|f - f_ref| / |f_ref|`, agreement of the method's objective with the reference's "
            "(n/a: the reference has no point);",
            "*solution distance*: `||X - X_ref||_F / ||X_ref||_F`, large where the optimum is not unique;",
            "*max residual*: the worst relative constraint violation, computed by the relaxation alike for every "
            "method;",
            "*certified gap*: the method's own relative duality gap `|f - b| / max(|f|, |b|)` to the bound b it "
            "certifies, without the reference (n/a: no bound);",
            "*speed-up*: reference time / method time;",
            f"*check*: {check}.",
        ]

    def to_markdown(self) -> str:
        lines = [f"### {self.name}", "", self._reference_line(), "",
                 "| " + " | ".join(_HEAD) + " |", "|" + "---|" * len(_HEAD)]
        lines += ["| " + " | ".join(row) + " |" for row in self._rows()]
        return "\n".join([*lines, "", *self.legend()])

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def _repr_html_(self) -> str:
        header = "<tr>" + "".join(f"<th>{h}</th>" for h in _HEAD) + "</tr>"
        rows = "".join("<tr>" + "".join(f"<td>{html.escape(x)}</td>" for x in row) + "</tr>" for row in self._rows())
        caption = html.escape(f"{self.name}: {self._reference_line()}".replace("**", "").replace("`", ""))
        legend = html.escape(" ".join(self.legend()).replace("*", "").replace("`", ""))
        return f"<table><caption>{caption}</caption>{header}{rows}</table><p><small>{legend}</small></p>"

    # -- the plot -------------------------------------------------------------------------------
    def plot(self, ax=None, path=None):
        """Each method's certified gap and worst residual against time, from ``Result.history``.

        Left: the certified relative duality gap (solid) and the objective gap to the reference
        (dashed); right: the worst relative residual; one colour per method, each method's final
        point marked, on log scales against the wall time.  The tolerances of the checks are
        drawn as horizontal lines, the reference's time (with its status and objective) as a
        vertical one.  A zero is drawn at 1e-16.

        Parameters
        ----------
        ax : pair of matplotlib Axes, optional
            Where to draw the gaps and the residuals; a new figure when None.
        path : str or path-like, optional
            Also write the figure there (the format from its suffix).  With ``ax=None`` the
            figure is then made without pyplot, so none is left open.

        Returns
        -------
        matplotlib.figure.Figure
        """
        fig, (ax_gap, ax_res) = _axes(ax, path)
        ref = self.reference
        ref_point = has_point(ref) and math.isfinite(ref.objective)
        drawn = [False, False]
        for i, (method, result) in enumerate(self.results.items()):
            color, label = f"C{i % 10}", method  # one legend entry per method: its first curve
            rows = [r for r in result.history if isinstance(r, Mapping)]
            curves = [(ax_gap, "relative_gap", "-", None, result.relative_gap),
                      (ax_res, "max_residual", "-", None, result.max_residual)]
            if ref_point:
                def gap_to_reference(f, f_ref=ref.objective):
                    return abs(f - f_ref) / max(abs(f_ref), 1e-12)

                curves.insert(1, (ax_gap, "objective", "--", gap_to_reference, gap_to_reference(result.objective)))
            for axis, key, style, transform, final in curves:
                points = _series(rows, key, transform)
                last = _point(result.time, final)
                if last is not None:
                    points.append(last)
                if not points:
                    continue
                axis.plot(*zip(*points), linestyle=style, color=color, label=label,
                          marker="." if len(points) < 30 else None)
                if last is not None:
                    axis.plot(*last, "o", color=color, markersize=4)
                label = "_nolegend_"
                drawn[axis is ax_res] = True
        marker = f"{ref.method}: {ref.status}, {ref.time:.2f} s"
        if ref_point:
            marker += f", objective {ref.objective:.6g}"
        for axis, tol, name, ok in ((ax_gap, self.objective_tol, "objective_tol", drawn[0]),
                                    (ax_res, self.residual_tol, "residual_tol", drawn[1])):
            axis.set_xlabel("time (s)")
            if ref.time > 0:
                axis.axvline(ref.time, color="0.3", linestyle="-.", linewidth=1,
                             label=marker if axis is ax_gap else "_nolegend_")
            if not ok:
                axis.text(0.5, 0.5, "no history recorded", ha="center", va="center", transform=axis.transAxes)
                continue
            axis.set_xscale("log")
            axis.set_yscale("log")
            axis.axhline(tol, color="0.5", linestyle=":", linewidth=1, label=f"{name} = {tol:g}")
            axis.grid(True, which="major", alpha=0.3)
        handles = [h for a in (ax_gap, ax_res) for h in a.get_legend_handles_labels()[0]]
        if ax is None:  # a figure of its own: one legend beside both panels
            fig.legend(handles=handles, loc="outside right upper", fontsize="small")
        else:
            ax_gap.legend(handles=handles, fontsize="small")
        ax_gap.set_title("certified gap (solid), objective gap to the reference (dashed)", fontsize="medium")
        ax_res.set_title("worst relative residual", fontsize="medium")
        fig.suptitle(self.name + (" (inaccurate reference)" if self.reference_inaccurate else ""))
        if path is not None:
            fig.savefig(path, dpi=110)
        return fig


def _standard(value):
    """``value`` with every float that JSON cannot hold (NaN, infinities) replaced by None."""
    if isinstance(value, dict):
        return {k: _standard(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_standard(v) for v in value]
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _axes(ax, path):
    """The figure and the two Axes to draw in: ``ax`` checked, or new ones."""
    if ax is None:
        if path is None:
            import matplotlib.pyplot as plt

            fig = plt.figure(figsize=(12, 4.2), layout="constrained")
        else:
            from matplotlib.backends.backend_agg import FigureCanvasAgg
            from matplotlib.figure import Figure

            fig = Figure(figsize=(12, 4.2), layout="constrained")
            FigureCanvasAgg(fig)
        return fig, tuple(fig.subplots(1, 2))
    pair = tuple(ax) if isinstance(ax, Sequence) or hasattr(ax, "__array__") else (ax,)
    if len(pair) != 2 or not all(hasattr(a, "semilogy") for a in pair):
        raise TypeError(f"ax must be a pair of matplotlib Axes (the gaps, the residuals) or None, got {ax!r}")
    return pair[0].figure, pair


def _point(t, value):
    """``(t, value)`` where a log-log plot can draw it (a zero value at 1e-16), else None."""
    if isinstance(value, bool) or not isinstance(value, Real) or not isinstance(t, Real):
        return None
    if not (0 < t < math.inf and 0 <= value < math.inf):
        return None
    return float(t), max(float(value), 1e-16)


def _series(rows: list[Mapping], key: str, transform=None) -> list[tuple[float, float]]:
    """The drawable ``(time, figure)`` points of the history rows that have ``key``."""
    points = []
    for row in rows:
        value = row.get(key)
        if isinstance(value, Real) and not isinstance(value, bool) and transform is not None:
            value = transform(value)
        point = _point(row.get("time"), value)
        if point is not None:
            points.append(point)
    return points
