"""``cvxclust.solve(problem, method="newton")``: the semismooth Newton method of Qi and Sun on the
dual of Frobenius problems with ``X >> 0`` and affine equalities, against Clarabel; its generalized
Hessian against finite differences of its gradient; the problems it refuses; and
``method="auto"``, which picks newton, dual-newton or generic by the problem's structure."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from clarabel_checks import check_against_clarabel
from hypothesis import given, note, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust.generic import CvxpyRelaxation, choose_method, equality_form, standard_form

ACCURATE = {"tol": 1e-8, "residual_tol": 1e-8}


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def perturbed_correlation(n: int, seed: int, alpha: float = 0.1) -> np.ndarray:
    """A random correlation matrix perturbed by a random symmetric matrix, unit diagonal (the
    examples of Qi and Sun): an indefinite G with diag(G) = 1."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, max(2, n // 3)))
    C = B @ B.T
    d = 1.0 / np.sqrt(np.diag(C))
    E = rng.uniform(-1.0, 1.0, (n, n))
    G = (1.0 - alpha) * (C * d[:, None] * d[None, :]) + alpha * (E + E.T) / 2.0
    np.fill_diagonal(G, 1.0)
    return G


def nearest_correlation(G: np.ndarray) -> tuple[cp.Problem, cp.Variable]:
    X = cp.Variable(G.shape, symmetric=True)
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - G)), [X >> 0, cp.diag(X) == 1]), X


def test_nearest_correlation_matrix_agrees_with_clarabel_and_is_exactly_feasible():
    problem, _ = nearest_correlation(perturbed_correlation(25, 0))
    result = cvxclust.solve(problem, method="newton", **ACCURATE)
    assert result.method == "newton" and result.extras["restored"]
    check_against_clarabel(problem, result)
    assert np.array_equal(np.diagonal(result.X), np.ones(25))  # restored exactly, not nearly
    assert np.linalg.eigvalsh(result.X)[0] >= -1e-12
    # quadratic convergence: a handful of steps, one eigendecomposition each
    assert result.iterations <= 10 and result.extras["eigh"] <= 2 * result.iterations + 1


def test_several_equality_rows_and_fixed_entries_agree_with_clarabel():
    rng = np.random.default_rng(3)
    n = 14
    B = rng.standard_normal((n, n))
    K = (B + B.T) / 2
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Maximize(cp.trace(B @ X) - 2.0 * cp.sum_squares(X - K)),
                         [X >> 0, cp.sum(X, axis=1) == 1, X[0, 1] == 0.2, X[2, 2] == 0.5,
                          cp.trace(X[3:6, 3:6]) == 1])
    result = cvxclust.solve(problem, method="newton", **ACCURATE)
    assert not result.extras["restored"]  # rows besides the diagonal: reported with its residuals
    check_against_clarabel(problem, result)


@st.composite
def equality_problems(draw):
    """A random problem of newton's kind: a (weighted, shifted) Frobenius objective, with or
    without X >> 0, fixed entries and random equality rows."""
    n = draw(st.integers(3, 9))
    seed = draw(st.integers(0, 2**32 - 1))
    psd = draw(st.booleans())
    fixed = draw(st.integers(0, n))
    rows = draw(st.integers(0, 3))
    weight = draw(st.sampled_from([0.1, 1.0, 4.0]))
    note(f"n={n}, seed={seed}, psd={psd}, fixed={fixed}, rows={rows}, weight={weight}")
    rng = np.random.default_rng(seed)
    K, C = (rng.standard_normal((2, n, n)) + rng.standard_normal((2, n, n)).transpose(0, 2, 1)) / 2
    X = cp.Variable((n, n), symmetric=True)
    # a feasible point: the constraints' values at a random positive definite Z
    B = rng.standard_normal((n, n))
    Z = B @ B.T / n + np.eye(n)
    constraints = [X >> 0] if psd else []
    for i in rng.choice(n, fixed, replace=False):
        j = int(rng.integers(n))
        constraints.append(X[i, j] == Z[i, j])
    for _ in range(rows):
        R = rng.standard_normal((n, n)) * (rng.random((n, n)) < 0.4)
        constraints.append(cp.sum(cp.multiply(R, X)) == float(np.sum(R * Z)))
    sense = draw(st.sampled_from(["minimize", "maximize"]))
    objective = weight * cp.sum_squares(X - K) + cp.trace(C @ X)
    return cp.Problem(cp.Minimize(objective) if sense == "minimize" else cp.Maximize(-objective), constraints)


@settings(max_examples=15, deadline=None)
@given(problem=equality_problems())
def test_random_problems_of_its_kind_agree_with_clarabel(problem):
    assert choose_method(standard_form(problem))[0] == "newton"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, **ACCURATE)
    assert result.method == "newton"
    check_against_clarabel(problem, result, atol=1e-4)


@pytest.mark.parametrize("shift", [0.0, 3.0], ids=["few positive eigenvalues", "few non-positive ones"])
@pytest.mark.parametrize("rows", [False, True], ids=["fixed entries", "rows and fixed entries"])
def test_the_generalized_hessian_is_the_derivative_of_the_gradient(shift, rows):
    rng = np.random.default_rng(7)
    n = 10
    B = rng.standard_normal((n, n))
    K = (B + B.T) / 2 + shift * np.eye(n)
    X = cp.Variable((n, n), symmetric=True)
    constraints = [X >> 0, cp.diag(X) == 1, X[0, 3] == 0.1]
    if rows:
        constraints += [cp.sum(X, axis=1) == 2, cp.trace(X[:4, :4]) == 3]
    dual, reason = equality_form(standard_form(cp.Problem(cp.Minimize(1.5 * cp.sum_squares(X - K)), constraints)))
    assert dual is not None, reason
    y, d = 0.3 * rng.standard_normal((2, dual.size))
    point = dual.evaluate(y)
    assert np.abs(point.w).min() > 1e-3  # theta is twice differentiable there
    assert 0 < (point.w > 0).sum() < n
    if shift:
        assert (point.w > 0).sum() > n // 2  # the product goes through the non-positive side
    else:
        assert (point.w > 0).sum() <= n // 2
    h = 1e-6
    difference = -(dual.evaluate(y + h * d).gradient - dual.evaluate(y - h * d).gradient) / (2 * h)
    np.testing.assert_allclose(dual.hessian(point).matvec(d), difference, atol=1e-7 * np.abs(difference).max())
    # the dual value's own derivative is the gradient
    value_difference = (dual.evaluate(y + h * d).value - dual.evaluate(y - h * d).value) / (2 * h)
    assert value_difference == pytest.approx(point.gradient @ d, rel=1e-6)


def test_the_bound_is_below_the_optimum_at_any_multiplier():
    problem, _ = nearest_correlation(perturbed_correlation(12, 4))
    dual, _ = equality_form(standard_form(problem))
    optimum = problem.solve(solver="CLARABEL")
    for seed in range(5):
        assert dual.evaluate(np.random.default_rng(seed).standard_normal(dual.size) * 3).value <= optimum + 1e-8
    # and tight at the solved multipliers: a wrong constant or sign in theta would miss the optimum there
    bound = cvxclust.solve(problem, method="newton").dual_bound
    assert optimum - 1e-6 * abs(optimum) <= bound <= optimum + 1e-8


def test_problems_of_another_kind_are_refused_with_the_part_named():
    n = 6
    X = cp.Variable((n, n), symmetric=True)
    G = perturbed_correlation(n, 1)
    square = cp.sum_squares(X - G)
    cases = [
        (cp.Problem(cp.Maximize(cp.trace(G @ X)), [X >> 0, cp.diag(X) == 1]), r"newton.*c = 0"),
        (cp.Problem(cp.Minimize(square), [X >> 0, X >= 0]), r"newton.*X\[0, 0\] has a bound.*0 <= X\[0, 0\]"),
        (cp.Problem(cp.Minimize(square), [X >> 0, cp.diag(X) <= 1]), r"newton.*X\[0, 0\].*<= 1"),
        (cp.Problem(cp.Minimize(square), [X >> 0, cp.trace(X) <= 3]), r"newton.*1 constraint rows are inequalities"),
    ]
    for problem, message in cases:
        with pytest.raises(ValueError, match=message):
            cvxclust.solve(problem, method="newton")
        assert "newton" not in CvxpyRelaxation(problem).scalable_methods()


@pytest.mark.parametrize("constraints, message", [
    (lambda X: [X >> 0, cp.diag(X) == -1], r"X >> 0 needs X\[0, 0\] >= 0"),
    (lambda X: [X >> 0, cp.sum(X, axis=1) == 3, cp.trace(X) == 1], "tr X = 1, .*at least 3"),
])
def test_constraints_that_contradict_outright_are_named_not_iterated_on(constraints, message):
    X = cp.Variable((5, 5), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - np.eye(5))), constraints(X))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # raised before the iterations run out
        with pytest.raises(ValueError, match="infeasible: .*" + message):
            cvxclust.solve(problem, method="newton", max_iter=100)


def test_auto_picks_by_structure_and_says_why():
    n = 8
    X = cp.Variable((n, n), symmetric=True)
    G = perturbed_correlation(n, 2)
    square = cp.sum_squares(X - G)
    cases = [  # one problem per row of the table of the user guide
        ([X >> 0, cp.diag(X) == 1], "newton", "affine equalities only"),
        ([X >> 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 2], "newton", "affine equalities only"),
        ([X >> 0, X >= 0, cp.sum(X, axis=1) == 1], "dual-newton", "nearest-point problem"),
        ([X >> 0, cp.diag(X) == 1, cp.sum(X) <= 10], "generic", "nor dual-newton"),
    ]
    for constraints, method, reason in cases:
        problem = cp.Problem(cp.Minimize(square), constraints)
        result = cvxclust.solve(problem)
        assert (result.method, result.status) == (method, "optimal")
        assert reason in result.extras["auto"] and result.extras["auto"].endswith(f": {method}")
        assert problem.solve(method="cvxclust") == pytest.approx(result.objective)
        assert problem.cvxclust_result.method == method
    linear = cp.Problem(cp.Maximize(cp.trace(G @ X)), [X >> 0, cp.diag(X) == 1])
    assert cvxclust.solve(linear).method == "alm"
    # an option only the generic solver takes makes auto run it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = cvxclust.solve(cp.Problem(cp.Minimize(square), [X >> 0, cp.diag(X) == 1]), partial_eig=True,
                                max_iter=20)
    assert result.method == "generic" and "partial_eig" in result.extras["auto"]


@st.composite
def small_problems(draw):
    """A random small problem of the class, of any of the three kinds."""
    n = draw(st.integers(2, 6))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    K = rng.standard_normal((n, n))
    K = (K + K.T) / 2
    X = cp.Variable((n, n), symmetric=True)
    pool = {"psd": X >> 0, "diag": cp.diag(X) == 1, "nonneg": X >= 0, "rows": cp.sum(X, axis=1) == 1,
            "trace": cp.trace(X) == 2, "trace_le": cp.trace(X) <= 2, "entry": X[0, n - 1] == 0.3,
            "upper": X <= 1, "row": cp.sum(cp.multiply(K, X)) == 0.5}
    chosen = sorted(name for name in pool if draw(st.booleans()))
    weight = draw(st.sampled_from([0.0, 1.0]))
    note(f"n={n}, constraints={chosen}, weight={weight}")
    objective = cp.trace(K @ X) + weight * cp.sum_squares(X - K)
    return cp.Problem(cp.Minimize(objective), [pool[name] for name in chosen])


@settings(max_examples=25, deadline=None)
@given(problem=small_problems())
def test_auto_never_raises_where_generic_does_not(problem):
    options = {"max_iter": 300}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            cvxclust.solve(problem, method="generic", **options)
        except ValueError:
            return  # outside the class, or an infeasibility the reading finds: generic raises too
        result = cvxclust.solve(problem, **options)
    assert result.method == choose_method(standard_form(problem))[0]
    assert result.method in CvxpyRelaxation(problem).scalable_methods()
