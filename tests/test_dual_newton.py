"""The core dual Newton method (cvxclust.dual_newton): the derivatives of its dual function
against finite differences, its Newton solve and its solver against cvxpy on nearest-point
problems with a two-sided box, row sums, a trace and the cone."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from cvxclust import Relaxation
from cvxclust.dual_newton import DualNewtonSolver, NearestPoint, generalized_hessian, newton_multipliers

N, LOWER, UPPER, ROW_SUM, TRACE = 12, 0.0, 0.45, 1.0, 3.0


def target(seed=0):
    A = np.random.default_rng(seed).standard_normal((N, N))
    return 0.3 * (A + A.T) + 0.2


def minus_theta(T, u, v):
    """-theta(u, v) with S = 0, and F."""
    M = u[:, None] + u[None, :] + v * np.eye(N)
    F = np.clip(T + M, LOWER, UPPER)
    theta = 0.5 * np.sum((F - T) ** 2) - np.sum(M * F) + 2 * ROW_SUM * u.sum() + TRACE * v
    return -theta, F


def statement(T, psd=False):
    X = cp.Variable((N, N), symmetric=True, name="X")
    constraints = [X >= LOWER, X <= UPPER, cp.sum(X, axis=1) == ROW_SUM, cp.trace(X) == TRACE]
    if psd:
        constraints.append(X >> 0)
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - T)), constraints)


def reference(T, psd=False):
    problem = statement(T, psd)
    problem.solve(solver="CLARABEL")
    return problem.value, problem.variables()[0].value


def test_gradient_and_generalized_hessian_match_finite_differences():
    T = target()
    rng = np.random.default_rng(1)
    u, v = 0.1 * rng.standard_normal(N), 0.05
    x, direction = np.r_[u, v], rng.standard_normal(N + 1)

    def at(x):  # the solver's own F and theta at (u, v), no Newton step taken
        return newton_multipliers(T, row_sum=ROW_SUM, trace=TRACE, lower=LOWER, upper=UPPER, u=x[:N], v=x[N],
                                  max_iter=0)

    start = at(x)
    assert -start.value == pytest.approx(minus_theta(T, u, v)[0], rel=1e-12)

    def gradient(result):  # of -theta, from F
        return np.r_[2 * (result.F.sum(axis=1) - ROW_SUM), np.trace(result.F) - TRACE]

    h = 1e-6
    numeric = np.array([(at(x - h * e).value - at(x + h * e).value) / (2 * h) for e in np.eye(N + 1)])
    np.testing.assert_allclose(gradient(start), numeric, rtol=1e-6, atol=1e-6)
    # away from the box's faces the generalized Hessian is the Hessian
    A = T + u[:, None] + u[None, :] + v * np.eye(N)
    assert min(np.abs(A - LOWER).min(), np.abs(A - UPPER).min()) > 1e-4
    half, diagonal = generalized_hessian(start.F, lower=LOWER, upper=UPPER, rows=True, traced=True)
    numeric = (gradient(at(x + h * direction)) - gradient(at(x - h * direction))) / (2 * h)
    np.testing.assert_allclose(2 * (half @ direction), numeric, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(diagonal, [half @ e @ e for e in np.eye(N + 1)], rtol=1e-6)


@pytest.mark.parametrize("seed", range(3))
def test_newton_solves_the_problem_without_the_cone(seed):
    T = target(seed)
    result = newton_multipliers(T, row_sum=ROW_SUM, trace=TRACE, lower=LOWER, upper=UPPER)
    assert result.status == "converged"
    F = result.F
    assert F.min() >= LOWER and F.max() <= UPPER and np.array_equal(F, F.T)
    assert np.abs(F.sum(axis=1) - ROW_SUM).max() <= 1e-11 and abs(np.trace(F) - TRACE) <= 1e-11
    optimum, X = reference(T)
    assert 0.5 * np.sum((F - T) ** 2) == pytest.approx(optimum, rel=1e-7, abs=1e-9)
    assert result.value == pytest.approx(optimum, rel=1e-7, abs=1e-9)  # theta closes the gap
    np.testing.assert_allclose(F, X, atol=1e-4)  # Clarabel's entries are accurate to about 1e-5


def test_warm_start_and_limits():
    T = target()
    cold = newton_multipliers(T, row_sum=ROW_SUM, trace=TRACE, lower=LOWER, upper=UPPER)
    warm = newton_multipliers(T + 1e-3 * np.eye(N), row_sum=ROW_SUM, trace=TRACE, lower=LOWER, upper=UPPER,
                              u=cold.u, v=cold.v)
    assert warm.status == "converged" and warm.iterations < cold.iterations
    stopped = newton_multipliers(T, row_sum=ROW_SUM, trace=TRACE, lower=LOWER, upper=UPPER, max_iter=1)
    assert (stopped.iterations, stopped.status) == (1, "max_iter")
    # no equality at all: the box alone, in closed form
    free = newton_multipliers(T, lower=LOWER, upper=UPPER)
    assert free.iterations == 0 and np.array_equal(free.F, np.clip(T, LOWER, UPPER))


class _Nearest(Relaxation):
    """The nearest-point problem of this file with the cone, as a relaxation."""

    name = "nearest"

    def __init__(self, T):
        self.T = T

    def problem(self):
        return statement(self.T, psd=True)

    def objective(self, X):
        return 0.5 * float(np.sum((X - self.T) ** 2))

    def residuals(self, X):
        return {"row_sums": float(np.abs(X.sum(axis=1) - ROW_SUM).max()), "trace": abs(np.trace(X) - TRACE),
                "box": max(0.0, LOWER - X.min(), X.max() - UPPER),
                "psd": max(0.0, -np.linalg.eigvalsh(X)[0])}


class _Solver(DualNewtonSolver):
    def nearest_point(self):
        # the centre a 11^T + b I with 12 a + b = 1 (row sums) and 12 (a + b) = 3 (trace): inside
        # the box, smallest eigenvalue b > 0
        b = 2.0 / 11.0
        return NearestPoint(T=self.relaxation.T, weight=0.5, lower=LOWER, upper=UPPER, row_sum=ROW_SUM,
                            trace=TRACE, psd=True, centre=((1.0 - b) / 12.0, b))


@pytest.mark.parametrize("seed", range(2))
def test_the_solver_with_the_cone_matches_clarabel_and_returns_a_feasible_point(seed):
    T = target(seed)
    ds_optimum, ds_X = reference(T)
    assert np.linalg.eigvalsh(ds_X)[0] < -1e-3  # the cone is active
    optimum, X_ref = reference(T, psd=True)
    result = _Solver(_Nearest(T), tol=1e-8, residual_tol=1e-8).run()
    assert result.status == "optimal"
    assert result.objective == pytest.approx(optimum, rel=1e-6)
    assert result.dual_bound <= optimum + 1e-8 * abs(optimum)
    X = result.X
    assert X.min() >= LOWER and X.max() <= UPPER
    assert np.linalg.eigvalsh(X)[0] >= -1e-12
    np.testing.assert_allclose(X, X_ref, atol=1e-3)


@pytest.mark.parametrize("scale", [1e4, 1e9])
def test_newton_recovers_rows_pushed_entirely_below_the_box_at_any_scale(scale):
    """A step may push every entry of a row below the box: that row has no curvature, and the
    regularised step, in T's units, must be able to span T's range to bring the row back."""
    A = np.random.default_rng(0).standard_normal((N, 2))
    T = scale * np.exp(-np.sum((A[:, None] - A[None]) ** 2, axis=2))
    result = newton_multipliers(T, row_sum=ROW_SUM, lower=LOWER)
    assert result.status == "converged"
    np.testing.assert_allclose(result.F.sum(axis=1), ROW_SUM, atol=1e-9)
    X = cp.Variable((N, N), symmetric=True)
    problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - T / scale)),
                         [X >= LOWER / scale, cp.sum(X, axis=1) == ROW_SUM / scale])
    problem.solve(solver="CLARABEL")  # the same projection, scaled down: scale * X is the answer
    np.testing.assert_allclose(result.F / scale, X.value, atol=1e-7)
