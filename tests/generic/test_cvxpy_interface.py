"""How the generic solver meets cvxpy: ``problem.solve(method="cvxclust")`` fills the problem as
cvxpy's own solvers do (``Problem.unpack``, ``solver_stats``, every status, warnings at the
caller's line), the time of a solve counts from the call with the reading of the problem, and
the reader's use of cvxpy's internal coefficient backend is guarded and pinned."""

from __future__ import annotations

import importlib
import time
import tomllib
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
from packaging.requirements import Requirement
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import Result
from cvxclust.generic import entry, standard_form
from cvxclust.kernels import rbf
from cvxclust.ssc import FrobeniusPSD

standard_form_module = importlib.import_module("cvxclust.generic.standard_form")
ROOT = Path(__file__).resolve().parents[2]
#: long enough that a limit below it is spent by the reading alone, whatever the machine's load
READING = 0.3


def nearest_problem(n=10, sense=cp.Minimize, trace_bound=None):
    """The nearest doubly stochastic p.s.d. matrix to an rbf kernel (maximised: its negative); with
    ``trace_bound``, also ``tr X <= trace_bound``, for which method="auto" runs the generic solver."""
    rng = np.random.default_rng(3)
    K = rbf(np.r_[rng.standard_normal((n // 2, 2)), rng.standard_normal((n - n // 2, 2)) + 3])
    X = cp.Variable((n, n), symmetric=True, name="X")
    sign = 1.0 if sense is cp.Minimize else -1.0
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1]
    if trace_bound is not None:
        constraints.append(cp.trace(X) <= trace_bound)
    problem = cp.Problem(sense(sign * 0.5 * cp.sum_squares(X - K)), constraints)
    return problem, X


# -- the in-place route --------------------------------------------------------------------------
def test_solve_in_place_fills_solver_stats_and_clears_old_duals():
    problem, X = nearest_problem()
    problem.solve(solver="CLARABEL")
    assert all(c.dual_value is not None for c in problem.constraints)
    value = problem.solve(method="cvxclust", tol=1e-8, residual_tol=1e-8)
    result = problem.cvxclust_result
    assert problem.status == cp.OPTIMAL and value == problem.value == pytest.approx(result.objective, rel=1e-12)
    assert np.array_equal(X.value, result.X)
    stats = problem.solver_stats
    assert stats is not None and stats.solver_name == "cvxclust"
    assert stats.solve_time == result.time and stats.num_iters == result.iterations
    assert stats.setup_time == result.extras["read_time"] and stats.extra_stats is result
    # the multipliers of the generic solver are not the constraints' duals: none is left from Clarabel
    assert all(c.dual_value is None for c in problem.constraints)


@pytest.mark.parametrize(("status", "cvxpy_status", "value"), [
    ("optimal", cp.OPTIMAL, None), ("converged", cp.OPTIMAL_INACCURATE, None),
    ("max_iter", cp.USER_LIMIT, None), ("time_limit", cp.USER_LIMIT, None), ("stalled", cp.USER_LIMIT, None),
    ("infeasible", cp.INFEASIBLE, np.inf), ("unbounded", cp.UNBOUNDED, -np.inf)])
@pytest.mark.parametrize("sense", [cp.Minimize, cp.Maximize])
def test_every_status_maps_to_cvxpy(monkeypatch, status, cvxpy_status, value, sense):
    problem, X = nearest_problem(sense=sense)
    point = np.eye(10) / 10 + 0.09 * np.ones((10, 10)) / 10

    def solved(problem, **options):
        return Result(X=point, objective=1.5, status=status, method="generic", iterations=7, time=0.25)

    monkeypatch.setattr(entry, "solve", solved)
    returned = problem.solve(method="cvxclust")
    assert problem.status == cvxpy_status
    if value is None:  # a point: its value as cvxpy computes it
        assert np.array_equal(X.value, point) and returned == problem.value == problem.objective.value
    else:  # none, and the value of an empty or unbounded problem in its sense
        expected = value if sense is cp.Minimize else -value
        assert X.value is None and returned == problem.value == expected
    assert problem.solver_stats.num_iters == 7 and problem.solver_stats.solve_time == 0.25


def test_a_convergence_warning_in_place_points_at_the_caller():
    problem, _ = nearest_problem(trace_bound=5)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        problem.solve(method="cvxclust", max_iter=2)
    found = [w for w in caught if issubclass(w.category, ConvergenceWarning)]
    assert len(found) == 1 and found[0].filename == __file__


# -- the time of a solve counts from the call ----------------------------------------------------
def slow(function):
    def wrapped(*args, **kwargs):
        time.sleep(READING)
        return function(*args, **kwargs)

    return wrapped


@pytest.mark.parametrize("route", ["solve", "in place"])
def test_a_limit_spent_reading_the_problem_ends_the_solve_at_once(monkeypatch, route):
    monkeypatch.setattr(entry, "standard_form", slow(standard_form))
    problem, X = nearest_problem(trace_bound=5)
    with pytest.warns(ConvergenceWarning, match="spent before the first iteration .* reading the problem"):
        result = cvxclust.solve(problem, time_limit=READING / 2) if route == "solve" else \
            (problem.solve(method="cvxclust", time_limit=READING / 2), problem.cvxclust_result)[1]
    assert result.status == "time_limit" and result.iterations == 0
    assert result.extras["read_time"] >= READING and result.time >= result.extras["read_time"]
    assert result.dual_bound is not None  # the starting point is certified
    if route == "in place":
        assert problem.status == cp.USER_LIMIT and X.value is not None


def test_relaxation_solve_counts_the_reading_of_its_problem(monkeypatch):
    relaxation = FrobeniusPSD(rbf(np.random.default_rng(0).standard_normal((8, 2))))
    monkeypatch.setattr(relaxation, "generic_form", slow(relaxation.generic_form))
    with pytest.warns(ConvergenceWarning, match="spent before the first iteration"):
        result = relaxation.solve("generic", time_limit=READING / 2)
    assert result.status == "time_limit" and result.iterations == 0
    assert result.extras["read_time"] >= READING and result.time >= result.extras["read_time"]


def test_history_times_count_from_the_call(monkeypatch):
    monkeypatch.setattr(entry, "standard_form", slow(standard_form))
    result = cvxclust.solve(nearest_problem()[0])
    assert result.status == "optimal" and result.history[0]["time"] >= result.extras["read_time"] >= READING
    # a second solver run in the same call (none here) or a solver run on its own has no reading to report
    assert "read_time" not in FrobeniusPSD(rbf(np.eye(3))).solve("admm").extras


# -- cvxpy's internal coefficient backend ---------------------------------------------------------
def _backend_problem() -> cp.Problem:
    """A problem with a term the expression reader leaves to cvxpy's coefficient backend."""
    X = cp.Variable((3, 3), symmetric=True)
    return cp.Problem(cp.Minimize(cp.sum_squares(X)), [cp.sum(X @ np.arange(3.0)) == 1])


def test_the_reader_names_the_cvxpy_version_when_the_internal_api_is_missing(monkeypatch):
    from cvxpy.cvxcore.python import canonInterface

    monkeypatch.delattr(canonInterface, "get_problem_matrix")
    with pytest.raises(ImportError, match=rf"cvxpy {cp.__version__} does not have it.*cvxpy>=1\.5,<"):
        standard_form(_backend_problem())


def test_the_reader_names_the_cvxpy_version_when_the_internal_api_changed(monkeypatch):
    from cvxpy.cvxcore.python import canonInterface

    monkeypatch.setattr(canonInterface, "get_problem_matrix", lambda linOps, var_length: None)
    with pytest.raises(ImportError, match=rf"cvxpy {cp.__version__} gives it other arguments"):
        standard_form(_backend_problem())


def test_cvxpy_is_pinned_to_the_tested_versions():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirement = next(Requirement(r) for r in project["dependencies"] if Requirement(r).name == "cvxpy")
    assert requirement.specifier == Requirement("cvxpy" + standard_form_module.CVXPY_VERSIONS).specifier
    assert any(spec.operator == "<" for spec in requirement.specifier)  # an upper bound
    assert requirement.specifier.contains(cp.__version__)
