"""The route of the low-rank method where ``X >= 0`` stands with a fixed diagonal (correlation
clustering, :mod:`cvxclust.generic.lowrank_penalty`): against Clarabel, its bound at arbitrary
multipliers, the gradient of its penalized objective, its exact repair, its memory check and
``method="auto"``'s choice of it.

The instances are signed graphs with planted clusters and 10% of the signs flipped: their optimum
is the clusters' block matrix.  With 20% flipped at these small orders the optimum is degenerate
(eigenvalues spread over five decades) and the residual of ``X >= 0`` falls slowly, as
``tests/generic/test_problem_classes_solve.py`` records."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.lowrank_penalty import dense_slack_bound, penalized

TOL, RESIDUAL_TOL = 1e-6, 1e-7


def _problem(n: int, seed: int, flip: float = 0.1):
    return pc.correlation_clustering(pc.signed_graph(n, 4, flip=flip, random_state=seed))


@pytest.mark.parametrize("n, seed", [(40, 0), (40, 3), (60, 2)])
def test_agrees_with_clarabel_and_certifies(n, seed):
    problem = _problem(n, seed)
    optimum, _ = clarabel_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", tol=TOL, residual_tol=RESIDUAL_TOL)
    assert result.status == "optimal" and result.method == "lowrank"
    assert abs(result.objective - optimum) <= (TOL + REFERENCE_ACCURACY) * abs(optimum)
    check_bound_side(problem, result.dual_bound, optimum)
    V = result.extras["factor"]
    np.testing.assert_allclose(result.X, V @ V.T)
    residuals = CvxpyRelaxation(problem).residuals(result.X)
    assert max(residuals.values()) <= RESIDUAL_TOL
    assert set(result.residuals) == set(residuals)
    # the multiplier of X >= 0 is dense and nonnegative, positive between the planted clusters
    Z = result.extras["nonnegative_multiplier"]
    assert Z.min() >= 0.0 and np.linalg.matrix_rank(Z) > V.shape[1]


@pytest.mark.parametrize("seed", [0, 1])
def test_bound_is_valid_at_arbitrary_multipliers(seed):
    """Weak duality: ``d^T w + tau min(0, lambda_min(C - Z - Diag(w)))`` lies below the optimum of
    ``min <C, X>`` for any symmetric ``Z >= 0`` and any w, however far from optimal (the problem is
    a maximization: the bound, negated, lies above its optimum)."""
    problem = _problem(20, seed, flip=0.2)
    optimum, _ = clarabel_solution(problem)
    form = CvxpyRelaxation(problem).standard_form()
    C, d = form.cost.dense(), np.ones(form.n)
    rng = np.random.default_rng(seed)
    for trial in range(6):
        Z = np.abs(rng.standard_normal((form.n, form.n))) * 10.0 ** rng.uniform(-2, 1)
        Z = Z + Z.T
        w = rng.standard_normal(form.n) * 10.0 ** rng.uniform(-2, 1)
        bound = dense_slack_bound(C - Z, w, d, random_state=trial)["bound"] + form.constant
        check_bound_side(problem, -bound, optimum)


def test_gradient_matches_finite_differences():
    rng = np.random.default_rng(0)
    n, r, sigma = 15, 4, 3.0
    C = rng.standard_normal((n, n))
    C = C + C.T
    Z = np.maximum(rng.standard_normal((n, n)), 0.0)
    Z = Z + Z.T
    V = rng.standard_normal((n, r))
    value, half = penalized(C, Z, sigma, V)
    gradient = 2.0 * half
    # the value is <C, V V^T> + ||max(0, Z - sigma V V^T)||^2 / (2 sigma)
    X = V @ V.T
    assert value == pytest.approx(float(np.vdot(C, X)) + np.sum(np.maximum(Z - sigma * X, 0.0) ** 2) / (2 * sigma))
    for _ in range(5):
        D = rng.standard_normal((n, r))
        h = 1e-6
        numeric = (penalized(C, Z, sigma, V + h * D)[0] - penalized(C, Z, sigma, V - h * D)[0]) / (2 * h)
        assert numeric == pytest.approx(float(np.vdot(gradient, D)), rel=1e-6, abs=1e-6)


def test_repaired_point_is_exactly_feasible_and_the_caller_arrays_untouched():
    """The repair is taken (its extra column ``sqrt(t) sqrt(d)``): ``X >= 0`` and the diagonal hold to
    the rounding of the product ``V V^T``; the signed weights are not modified."""
    W = pc.signed_graph(60, 4, flip=0.1, random_state=1)
    kept = W.copy()
    result = cvxclust.solve(pc.correlation_clustering(W), method="lowrank", tol=TOL, residual_tol=RESIDUAL_TOL)
    np.testing.assert_array_equal(W, kept)
    V = result.extras["factor"]
    assert result.status == "optimal"
    np.testing.assert_allclose(V[:, -1], V[0, -1])  # the repair's column, constant as d is
    assert result.residuals["bounds"] <= 1e-15 and (V @ V.T).min() >= -1e-15
    np.testing.assert_allclose(np.einsum("ij,ij->i", V, V), 1.0, atol=1e-14)


def test_memory_is_checked_before_the_dense_multiplier(monkeypatch):
    from cvxclust import _memory

    problem = _problem(40, 0)
    monkeypatch.setattr(_memory, "available_bytes", lambda: 3 * 8 * 40 * 40)
    with pytest.raises(ValueError, match=r"method='lowrank' on a problem of order 40 with X >= 0 and a fixed "
                                         r"diagonal .* needs .* use method='generic'"):
        cvxclust.solve(problem, method="lowrank")


def test_auto_picks_the_route_from_its_order(monkeypatch):
    from cvxclust.generic import entry

    form = CvxpyRelaxation(_problem(40, 0)).standard_form()
    assert entry.choose_method(form)[0] != "lowrank"  # below LOWRANK_PENALTY_MIN_N
    monkeypatch.setattr(entry, "LOWRANK_PENALTY_MIN_N", 40)
    method, reason = entry.choose_method(form)
    assert method == "lowrank" and "dense multiplier" in reason and reason.startswith("n = 40 >= 40")
    assert reason.endswith(": lowrank")
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(_problem(40, 0), tol=TOL, residual_tol=RESIDUAL_TOL)
    assert result.method == "lowrank" and result.status == "optimal" and result.extras["auto"] == reason


def test_spectral_start_is_refused():
    with pytest.raises(ValueError, match="start='spectral' needs the k-means SDP's structure"):
        cvxclust.solve(_problem(20, 0), method="lowrank", start="spectral")
