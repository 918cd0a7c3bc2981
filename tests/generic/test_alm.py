"""``cvxclust.solve(problem, method="alm")``: the augmented Lagrangian method with semismooth
Newton subproblems, on the classes of :mod:`cvxclust.problem_classes` against Clarabel; its bound
wherever it stops; the problems it refuses; and ``method="auto"``, which picks it for linear
objectives under ``X >> 0`` and equalities."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation, choose_method, standard_form


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def clarabel(problem: cp.Problem) -> float:
    return problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)


def bound_is_on_the_right_side(problem: cp.Problem, bound: float, reference: float) -> bool:
    slack = 1e-7 * max(abs(reference), 1.0)
    if isinstance(problem.objective, cp.Minimize):
        return bound <= reference + slack
    return bound >= reference - slack


def check_against_clarabel(problem: cp.Problem, result, solution_atol: float | None = 1e-3) -> None:
    """Certified optimal, the objective and the point Clarabel's, feasible by the problem's own
    residuals, the bound on the right side of Clarabel's optimum."""
    reference = clarabel(problem)
    scale = max(abs(reference), 1.0)
    assert result.status == "optimal"
    assert abs(result.objective - reference) <= 2e-6 * scale
    assert bound_is_on_the_right_side(problem, result.dual_bound, reference)
    assert max(CvxpyRelaxation(problem).residuals(result.X).values()) <= 1e-6
    if solution_atol is not None:
        np.testing.assert_allclose(result.X, problem.variables()[0].value, atol=solution_atol)


@settings(max_examples=4, deadline=None)
@given(n=st.integers(8, 24), seed=st.integers(0, 2**31 - 1))
def test_max_cut_agrees_with_clarabel_and_is_exactly_feasible(n, seed):
    problem = pc.max_cut(pc.random_graph(n, 3.0, random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="alm")
    check_against_clarabel(problem, result, solution_atol=None)  # the max-cut SDP's solution need not be unique
    assert result.extras["restored"]  # D^{-1/2} X D^{-1/2}: the diagonal exactly one
    assert np.array_equal(np.diagonal(result.X), np.ones(n))
    assert np.linalg.eigvalsh(result.X)[0] >= -1e-12


def test_max_cut_with_a_unique_solution_agrees_with_clarabel_in_the_point():
    W = pc.signed_graph(12, 2, flip=0.0, random_state=0)  # two planted halves: the cut between them
    problem = pc.max_cut(np.abs(W) * (W < 0))
    check_against_clarabel(problem, cvxclust.solve(problem, method="alm"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_bisection_agrees_with_clarabel_though_it_has_no_strictly_feasible_point(seed):
    n = 12 + 2 * seed
    problem = pc.min_bisection(pc.random_graph(n, 4.0, random_state=seed))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="alm")
    # sum(X) == 0 under X >> 0 implies X 1 = 0, which the Newton steps' cone holds: a few dozen
    # iterations (without it the iteration crawls: max_iter)
    assert result.status == "optimal" and result.iterations <= 60
    # Clarabel's interior point meets the cone only to about 1e-7 here: its optimum to about 1e-6
    reference = clarabel(problem)
    assert abs(result.objective - reference) <= 1e-5 * abs(reference)
    assert result.dual_bound <= result.objective + 1e-6 * abs(result.objective)  # a point within residual_tol
    assert max(CvxpyRelaxation(problem).residuals(result.X).values()) <= 1e-6
    np.testing.assert_allclose(result.X.sum(axis=1), 0.0, atol=1e-8)


@pytest.mark.parametrize("must_link", [(), ((0, 1), (2, 3))], ids=["Peng-Wei", "must-link and least size"])
def test_the_k_means_sdp_with_its_bounds_agrees_with_clarabel(must_link):
    K = pc.blobs_kernel(14, 3, random_state=4)
    problem = pc.kmeans_sdp(K, 3, must_link=must_link, min_size=2 if must_link else None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="alm", max_iter=2000)
    check_against_clarabel(problem, result, solution_atol=1e-2)


@pytest.mark.parametrize("scale", [1e-200, 1e100])
def test_data_of_any_magnitude_solve_as_at_scale_one(scale):
    # the rule of sigma once compared ||X - X_k|| / sigma with 1 + ||C||: at 1e-200 sigma shrank
    # without end and the iteration ran to max_iter
    W = pc.random_graph(14, 3.0, random_state=5)
    one = cvxclust.solve(pc.max_cut(W), method="alm")
    scaled = cvxclust.solve(pc.max_cut(W * scale), method="alm")
    assert scaled.status == one.status == "optimal"
    assert scaled.objective / scale == pytest.approx(one.objective, rel=1e-6)
    assert scaled.dual_bound / scale == pytest.approx(one.dual_bound, rel=1e-5)


@pytest.mark.parametrize("max_iter", [1, 2, 5])
def test_the_bound_holds_wherever_the_iteration_stops(max_iter):
    problem = pc.max_cut(pc.random_graph(20, 4.0, random_state=1))
    reference = clarabel(problem)
    with pytest.warns(ConvergenceWarning, match="alm stopped after"):
        result = cvxclust.solve(problem, method="alm", max_iter=max_iter)
    assert result.status == "max_iter" and result.iterations == max_iter
    assert result.dual_bound is not None and bound_is_on_the_right_side(problem, result.dual_bound, reference)
    assert result.objective <= reference + 1e-9 * abs(reference)  # an exactly feasible point's value
    assert max(result.residuals.values()) <= 1e-12


def test_a_time_limit_ends_with_a_warning_and_an_honest_status():
    problem = pc.max_cut(pc.random_graph(20, 4.0, random_state=2))
    with pytest.warns(ConvergenceWarning, match="time limit"):
        result = cvxclust.solve(problem, method="alm", time_limit=1e-9)
    assert result.status == "time_limit"


def test_contradicting_rows_are_certified_infeasible():
    n = 6
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> 0, cp.diag(X) == 1, X[0, 1] + X[2, 3] == 1,
                                                     X[0, 1] + X[2, 3] == 2])
    with pytest.warns(ConvergenceWarning):
        result = cvxclust.solve(problem, method="alm")
    assert result.status == "infeasible"
    assert result.extras["infeasibility"]["bound"] > 0


def test_constraints_the_cone_contradicts_are_certified_infeasible_along_the_multipliers():
    n = 6
    X = cp.Variable((n, n), symmetric=True)
    C = np.arange(n * n, dtype=float).reshape(n, n)
    # a 2 x 2 minor 1 - 4 < 0: no p.s.d. point, though the rows alone hold
    problem = cp.Problem(cp.Minimize(cp.trace((C + C.T) @ X)), [X >> 0, cp.diag(X) == 1, X[0, 1] == 2])
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        result = cvxclust.solve(problem)
    assert result.method == "alm" and result.status == "infeasible"
    assert result.extras["infeasibility"]["bound"] > 0


def test_inequality_rows_are_refused_with_the_part_named():
    n = 5
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> 0, cp.diag(X) == 1, cp.sum(X) <= 3])
    with pytest.raises(ValueError, match="method='alm' does not apply.*inequalities"):
        cvxclust.solve(problem, method="alm")
    assert "alm" not in CvxpyRelaxation(problem).scalable_methods()


def test_auto_picks_alm_for_linear_objectives_with_equalities_and_says_why():
    problem = pc.max_cut(pc.random_graph(16, 3.0, random_state=3))
    result = cvxclust.solve(problem)
    assert result.method == "alm" and result.status == "optimal"
    assert result.extras["auto"].endswith(": alm")
    n = 6
    X = cp.Variable((n, n), symmetric=True)
    C = np.arange(n * n, dtype=float).reshape(n, n)
    C = C + C.T
    # no bound on the trace: a linear objective would have no finite certificate
    unbounded_trace = cp.Problem(cp.Minimize(cp.trace(C @ X)), [X >> 0, X[0, 1] == 0.5])
    assert choose_method(standard_form(unbounded_trace))[0] != "alm"
    # a Frobenius term: newton's
    assert choose_method(standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X - C)),
                                                  [X >> 0, cp.diag(X) == 1])))[0] == "newton"


@st.composite
def linear_problems(draw):
    """A random small problem with a linear objective over X >> 0 and equalities, with or without
    an inequality row or bounds."""
    n = draw(st.integers(3, 7))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    C = rng.standard_normal((n, n))
    C = (C + C.T) / 2
    X = cp.Variable((n, n), symmetric=True)
    pool = {"diag": cp.diag(X) == 1, "trace": cp.trace(X) == 2, "sum": cp.sum(X) == 0, "nonneg": X >= 0,
            "entry": X[0, n - 1] == 0.3, "le": cp.sum(X) <= 3}
    chosen = [pool[name] for name in sorted(pool) if draw(st.booleans())]
    return cp.Problem(cp.Minimize(cp.trace(C @ X)), [X >> 0, *chosen])


@settings(max_examples=20, deadline=None)
@given(problem=linear_problems())
def test_auto_never_picks_alm_where_it_refuses(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cvxclust.solve(problem, method="generic", max_iter=50)
        except ValueError:
            return
        result = cvxclust.solve(problem, max_iter=50)
    assert result.method in CvxpyRelaxation(problem).scalable_methods()
