"""The dual Newton solver of (6) and (7): its inner Newton method against finite differences
and cvxpy, its dual function against the reference optimum, and the solver where the p.s.d.
constraint is strongly active (the registry tests in test_ssc_solvers.py cover the rest)."""

from __future__ import annotations

import numpy as np
import pytest
from ssc_helpers import INSTANCES, instance_id, kernel, reference

from cvxclust.ssc import FrobeniusDS, FrobeniusPSD, dual_newton
from cvxclust.ssc._dual_newton import minimize_row_multipliers


def psi(C, u):
    F = np.maximum(C + u[:, None] + u[None, :], 0.0)
    return 0.5 * np.sum(F * F) - 2.0 * u.sum(), F


def theta(K, u, S):
    """The dual function of the module docstring at (u, S)."""
    F = np.maximum(K + S + u[:, None] + u[None, :], 0.0)
    return 0.5 * np.sum(K * K) - 0.5 * np.sum(F * F) + 2.0 * u.sum()


def random_symmetric(n, seed):
    A = np.random.default_rng(seed).standard_normal((n, n))
    return (A + A.T) / 2


def test_psi_gradient_and_generalized_hessian_match_finite_differences():
    C = random_symmetric(12, 0)
    rng = np.random.default_rng(1)
    u, v = rng.standard_normal(12), rng.standard_normal(12)
    value, F = psi(C, u)
    gradient = 2.0 * (F.sum(axis=1) - 1.0)
    h = 1e-6
    numeric = np.array([(psi(C, u + h * e)[0] - psi(C, u - h * e)[0]) / (2 * h) for e in np.eye(12)])
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-6)
    # away from the kinks the Hessian is 2 (Diag(M 1) + M), M the pattern of F > 0
    A = C + u[:, None] + u[None, :]
    assert np.abs(A).min() > 1e-3
    M = (A > 0).astype(float)
    hessian_v = 2.0 * (M.sum(axis=1) * v + M @ v)
    gradient_at = lambda w: 2.0 * (psi(C, w)[1].sum(axis=1) - 1.0)  # noqa: E731
    numeric = (gradient_at(u + h * v) - gradient_at(u - h * v)) / (2 * h)
    np.testing.assert_allclose(hessian_v, numeric, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("instance", INSTANCES[::2], ids=instance_id)
def test_newton_on_the_row_multipliers_solves_the_qp_6(instance):
    K = kernel(*instance)
    F, u, iterations, status = minimize_row_multipliers(K)
    assert status == "converged" and 1 <= iterations <= 30
    assert F.min() >= 0.0 and np.array_equal(F, F.T)
    assert np.abs(F.sum(axis=1) - 1.0).max() <= 1e-12
    ref = reference("FrobeniusDS", *instance)
    objective = 0.5 * np.sum((F - K) ** 2)
    assert abs(objective - ref.objective) <= 1e-7 * ref.objective
    # F is the optimum, so theta(u, 0) closes the gap to rounding
    assert abs(theta(K, u, 0.0) - objective) <= 1e-10 * objective


def test_newton_warm_start_takes_fewer_steps_and_reports_its_limit():
    K = kernel("digits", 50, 0.5)
    _, u, cold, _ = minimize_row_multipliers(K)
    _, _, warm, status = minimize_row_multipliers(K + 1e-3 * np.eye(50), u)
    assert status == "converged" and warm < cold
    _, _, steps, status = minimize_row_multipliers(K, max_iter=1)
    assert (steps, status) == (1, "max_iter")


@pytest.mark.parametrize("seed", range(3))
def test_the_dual_function_bounds_the_optimum_for_every_psd_multiplier(seed):
    K = kernel("iris", 40, 1.0)
    optimum = reference("FrobeniusPSD", "iris", 40, 1.0).objective
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((40, 5))
    u = 0.1 * rng.standard_normal(40)
    for S in (np.zeros((40, 40)), 0.01 * B @ B.T, B @ B.T):
        assert theta(K, u, S) <= optimum + 1e-9 * optimum


def test_dual_newton_where_the_psd_constraint_is_strongly_active():
    # a random symmetric K: the optimum of (6) is far from p.s.d., so the projected gradient
    # on S, not the first Newton solve, does the work
    K = random_symmetric(30, 3)
    relaxation = FrobeniusPSD(K)
    ds = FrobeniusDS(K).solve("dual-newton")
    assert np.linalg.eigvalsh(ds.X)[0] < -0.1
    ref = relaxation.solve("reference", solver="CLARABEL")
    result = dual_newton(relaxation, tol=1e-8, residual_tol=1e-8)
    assert result.status == "optimal" and result.iterations > 5
    assert abs(result.objective - ref.objective) <= 1e-7 * ref.objective
    assert np.linalg.norm(result.X - ref.X) <= 1e-3 * np.linalg.norm(ref.X)
    assert result.dual_bound <= ref.objective + 1e-9 * ref.objective
    # exactly feasible: nonnegative, symmetric, p.s.d. by the identity mixture, unit row sums
    X = result.X
    assert X.min() >= 0.0 and np.array_equal(X, X.T)
    assert np.linalg.eigvalsh(X)[0] >= -1e-12
    assert np.abs(X.sum(axis=1) - 1.0).max() <= 1e-11
    # checks whose best mixture could not certify computed no candidate, and say so
    skipped = [row for row in result.history if row.get("objective") == np.inf]
    assert all("lambda_min" not in row for row in skipped)
    assert "lambda_min" in result.history[-1]


def test_an_iteration_of_6_is_one_newton_step():
    K = kernel("wine", 40, 0.5)
    result = FrobeniusDS(K).solve("dual-newton")
    assert result.status == "optimal"
    assert all(row["newton_iterations"] <= 1 for row in result.history)
    assert result.extras["newton_iterations"] == sum(row["newton_iterations"] for row in result.history)
    assert result.iterations == len(result.history) <= 30
