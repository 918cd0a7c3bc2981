"""The dual Newton solver of (6) and (7): its Newton method on (6) against cvxpy, its dual
function against the reference optimum, and the solver where the p.s.d. constraint is strongly
active (the registry tests in test_ssc_solvers.py cover the rest; tests/test_dual_newton.py the
core)."""

from __future__ import annotations

import numpy as np
import pytest
from ssc_helpers import INSTANCES, instance_id, kernel, reference

from cvxclust.dual_newton import newton_multipliers
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD, dual_newton


def theta(K, u, S):
    """The dual function of the module docstring at (u, S)."""
    F = np.maximum(K + S + u[:, None] + u[None, :], 0.0)
    return 0.5 * np.sum(K * K) - 0.5 * np.sum(F * F) + 2.0 * u.sum()


def random_symmetric(n, seed):
    A = np.random.default_rng(seed).standard_normal((n, n))
    return (A + A.T) / 2


@pytest.mark.parametrize("instance", INSTANCES[::2], ids=instance_id)
def test_newton_on_the_row_multipliers_solves_the_qp_6(instance):
    K = kernel(*instance)
    F, u, _, value, iterations, status = newton_multipliers(K, row_sum=1.0)
    assert status == "converged" and 1 <= iterations <= 30
    assert F.min() >= 0.0 and np.array_equal(F, F.T)
    assert np.abs(F.sum(axis=1) - 1.0).max() <= 1e-12
    ref = reference("FrobeniusDS", *instance)
    objective = 0.5 * np.sum((F - K) ** 2)
    assert abs(objective - ref.objective) <= 1e-7 * ref.objective
    # F is the optimum, so theta(u, 0) closes the gap to rounding
    assert abs(theta(K, u, 0.0) - objective) <= 1e-10 * objective
    assert value == pytest.approx(theta(K, u, 0.0), rel=1e-12)


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
    # checks whose best mixture could not certify mixed by Gershgorin's bound on the eigenvalue:
    # a feasible point all the same, no better than the exact mixture
    rough = [row for row in result.history if "lambda_min_bound" in row]
    assert rough and all(np.isfinite(row["objective"]) and "lambda_min" not in row for row in rough)
    assert "lambda_min" in result.history[-1]


def test_an_iteration_of_6_is_one_newton_step():
    K = kernel("wine", 40, 0.5)
    result = FrobeniusDS(K).solve("dual-newton")
    assert result.status == "optimal"
    assert all(row["newton_iterations"] <= 1 for row in result.history)
    assert result.extras["newton_iterations"] == sum(row["newton_iterations"] for row in result.history)
    assert result.iterations == len(result.history) <= 30
