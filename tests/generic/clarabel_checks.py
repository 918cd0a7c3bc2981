"""A certified result checked against Clarabel, shared by the tests of the generic methods."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

from cvxclust.generic import CvxpyRelaxation

#: Clarabel at tolerances well below those of the methods it checks
CLARABEL_TIGHT = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}
#: how far Clarabel's optimal value may be from the optimum, relative (the least accurate seen: the
#: minimum-bisection SDP, which has no strictly feasible point)
REFERENCE_ACCURACY = 1e-7


def clarabel_solution(problem: cp.Problem) -> tuple[float, np.ndarray]:
    """Clarabel's optimal value and point of ``problem`` at tight tolerances.  Where it cannot
    reach them it says ``optimal_inaccurate`` (and warns): its point is then as accurate as it gets."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
        value = problem.solve(**CLARABEL_TIGHT)
    assert problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE), problem.status
    return value, problem.variables()[0].value


def check_bound_side(problem: cp.Problem, bound: float, optimum: float) -> None:
    """The certified bound is on the right side of the optimum (below it for a minimisation)."""
    slack = REFERENCE_ACCURACY * max(abs(optimum), 1.0)
    if isinstance(problem.objective, cp.Minimize):
        assert bound <= optimum + slack, (bound, optimum)
    else:
        assert bound >= optimum - slack, (bound, optimum)


def check_against_clarabel(problem: cp.Problem, result, atol: float | None = 1e-5, *, reference=None,
                           objective_rtol: float = 1e-6, residual_tol: float = 1e-8) -> None:
    """The certified result agrees with Clarabel: status ``"optimal"``, objective within
    ``objective_rtol`` (relative), bound on the right side of the optimum, residuals (the
    problem's own) below ``residual_tol``, and the point within ``atol`` entrywise of Clarabel's
    (``None``: not compared, where the solution is not unique).  ``reference``: Clarabel's
    ``(value, point)`` from :func:`clarabel_solution`, computed here if not given."""
    optimum, solution = clarabel_solution(problem) if reference is None else reference
    scale = max(abs(optimum), 1.0)
    assert result.status == "optimal", result.status
    assert abs(result.objective - optimum) <= objective_rtol * scale, (result.objective, optimum)
    check_bound_side(problem, result.dual_bound, optimum)
    if atol is not None:
        np.testing.assert_allclose(result.X, solution, atol=atol)
    assert max(CvxpyRelaxation(problem).residuals(result.X).values()) <= residual_tol
