r"""The dual Newton method (:mod:`cvxclust.dual_newton`) for the problems of :func:`cvxclust.solve`
that are nearest-point problems.

A standard form ``min c ||X||^2 + <C, X> + const`` with ``c > 0`` is ``c ||X - T||^2`` plus a
constant, ``T = -C / (2c)``.  Where its splitting (:mod:`cvxclust.generic.splitting`) leaves no
rows beside the box, the common row sums and a fixed trace, and the cone has a feasible centre
``a 11^T + b I`` to mix in, it is a :class:`~cvxclust.dual_newton.NearestPoint` problem:
Newton's method on the multipliers of the row sums and the trace, the box in closed form, an
accelerated projected gradient on the p.s.d. multiplier.  :func:`nearest_point_form` says
whether a problem is of that kind, and why not.
"""

from __future__ import annotations

import numpy as np

from .._array_api import Arrays
from ..dual_newton import DualNewtonSolver, NearestPoint
from ..solvers import POSITIVE, Param
from .compact import off_and_diagonal
from .device import arrays_for, moved
from .standard_form import StandardForm
from . import splitting

__all__ = ["GenericDualNewton", "nearest_point_form", "nearest_point_reason"]


def nearest_point_reason(form: StandardForm) -> str:
    """Why ``form`` is not a :class:`~cvxclust.dual_newton.NearestPoint` problem, ``""`` where it
    is: :func:`nearest_point_form` without building the problem (no ``n x n`` work beyond the
    split of the form, read once)."""
    return _centre(form)[1]


def _centre(form: StandardForm) -> tuple[tuple[float, float] | None, str]:
    """``((a, b), "")`` with the feasible centre ``a 11^T + b I`` of a nearest-point ``form``, or
    ``(None, reason)``."""
    if form.c <= 0:
        return None, "the objective has no squared Frobenius term (c = 0)"
    split = splitting.outline(form)  # the centre's coefficients alone: no eigendecomposition
    spectral = split.spectral
    if split.A.shape[0]:
        return None, (f"{split.A.shape[0]} constraint rows are neither bounds, common row sums nor the trace "
                      "(use method='generic')")
    if split.ties is not None:
        return None, "constraint rows tie entries of X to each other (use method='generic')"
    if spectral.trace is None and "trace" in split.absorbed:
        return None, "the trace is bounded, not fixed (use method='generic')"
    centre = split.psd_centre if split.psd_centre is not None else split.centre
    if form.psd and centre is None:
        return None, "no point a 11^T + b I is feasible to restore p.s.d. points from (use method='generic')"
    n = form.n
    a = float(centre[0, 1]) if centre is not None and n > 1 else 0.0
    b = float(centre[0, 0]) - a if centre is not None else 1.0
    if form.psd and min(b, n * a + b) <= 0:
        return None, "no point a 11^T + b I is positive definite to restore p.s.d. points from (use method='generic')"
    return (a, b), ""


def nearest_point_form(form: StandardForm, arrays: Arrays | None = None) -> tuple[NearestPoint | None, str]:
    """The :class:`~cvxclust.dual_newton.NearestPoint` problem of ``form``, or None and the
    reason it is not one; with ``arrays`` off NumPy, its target and bounds on that device (a
    bound that is one number everywhere as that number)."""
    centre, reason = _centre(form)
    if centre is None:
        return None, reason
    a, b = centre
    spectral = splitting.outline(form).spectral
    T = -form.C / (2.0 * form.c)
    upper = form.U if np.isfinite(form.U).any() else None
    lower, constant = form.L, form.constant - form.c * float(np.vdot(T, T))
    if arrays is not None and not arrays.numpy:  # moved once, before the iteration
        T, lower = moved(T, arrays), _on_device(lower, arrays)
        upper = None if upper is None else _on_device(upper, arrays)
    problem = NearestPoint(T=T, weight=form.c, constant=constant, lower=lower, upper=upper, row_sum=spectral.beta,
                           trace=spectral.trace, psd=form.psd, centre=(a, b), sense=form.sense)
    return problem, ""


def _on_device(bound: np.ndarray, arrays: Arrays):
    """A bound of the form on the device: one number where it is one number everywhere."""
    pair = off_and_diagonal(bound)
    if pair is not None and pair[0] == pair[1]:
        return pair[0]
    return moved(bound, arrays)


class GenericDualNewton(DualNewtonSolver):
    """:class:`~cvxclust.dual_newton.DualNewtonSolver` on the standard form of the relaxation's
    problem; see the module docstring.  A ValueError says why a problem is not of its kind.
    ``tol`` and ``residual_tol`` default to 1e-6, as for :func:`cvxclust.solve`'s other method."""

    parameters = DualNewtonSolver.parameters | {"tol": Param(1e-6, POSITIVE), "residual_tol": Param(1e-6, POSITIVE),
                                                "device": Param(None, [object]), "dtype": Param(None, [None, object])}

    def size(self) -> int:
        return self.relaxation.standard_form().n

    def nearest_point(self) -> NearestPoint:
        problem, reason = nearest_point_form(self.relaxation.standard_form(), arrays_for(self.device, self.dtype))
        if problem is None:
            raise ValueError(f"method='dual-newton' does not apply to this problem: {reason}")
        return problem
