"""Inequality rows and bounds on the diagonal in the low-rank method of :func:`cvxclust.solve`
(:mod:`cvxclust.generic.lowrank`): against Clarabel, the signs of their multipliers, the
certificate at arbitrary signed multipliers, and the k-means SDP with must-link rows and a
minimum cluster size."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.factor_rows import FactorRows
from cvxclust.generic.lowrank_certificate import SlackOperator, slack_bound
from cvxclust.generic.lowrank_check import dual_constant, shifted, signed_multipliers
from cvxclust.generic.lowrank_form import lowrank_form


def _cost(n, seed):
    C = np.random.default_rng(seed).standard_normal((n, n))
    return C + C.T


def _diagonal_upper():
    """A trace row and ``diag(X) <= u``, the bounds active at the optimum."""
    X = cp.Variable((20, 20), symmetric=True)
    return cp.Problem(cp.Minimize(cp.trace(_cost(20, 0) @ X)), [X >> 0, cp.trace(X) == 3, cp.diag(X) <= 0.25])


def _diagonal_box():
    """Bounds on the diagonal alone bound the trace: ``0.1 <= X_ii <= 0.3``."""
    X = cp.Variable((16, 16), symmetric=True)
    return cp.Problem(cp.Maximize(cp.trace(_cost(16, 1) @ X)), [X >> 0, cp.diag(X) >= 0.1, cp.diag(X) <= 0.3])


def _inequality_rows():
    """A fixed diagonal with rows ``sum(X) <= 2`` and ``X[0, 1] + X[1, 2] >= 0.5``."""
    X = cp.Variable((18, 18), symmetric=True)
    return cp.Problem(cp.Minimize(cp.trace(_cost(18, 2) @ X)),
                      [X >> 0, cp.diag(X) == 1, cp.sum(X) <= 2, X[0, 1] + X[1, 2] >= 0.5])


def _kmeans_constrained():
    """The k-means SDP with must-link rows and a minimum cluster size it meets."""
    K = pc.blobs_kernel(30, 3, random_state=5)
    return pc.kmeans_sdp(K, 3, must_link=[(0, 1), (10, 11)], min_size=5)


CASES = {"diagonal_upper": _diagonal_upper, "diagonal_box": _diagonal_box, "inequality_rows": _inequality_rows,
         "kmeans_constrained": _kmeans_constrained}


@pytest.mark.parametrize("name", list(CASES))
def test_agrees_with_clarabel_and_certifies(name):
    problem = CASES[name]()
    optimum, _ = clarabel_solution(problem)
    tol = 1e-7
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", tol=tol, residual_tol=1e-8)
    assert result.status == "optimal" and result.method == "lowrank"
    assert abs(result.objective - optimum) <= (tol + REFERENCE_ACCURACY) * max(abs(optimum), 1.0)
    check_bound_side(problem, result.dual_bound, optimum)
    residuals = CvxpyRelaxation(problem).residuals(result.X)
    assert set(result.residuals) == set(residuals)
    assert max(residuals.values()) <= 1e-7


@pytest.mark.parametrize("name", ["diagonal_upper", "diagonal_box", "inequality_rows"])
def test_multipliers_keep_their_signs(name):
    """``X_ii <= u`` has a multiplier ``w <= 0`` (mu = -w >= 0), ``X_ii >= l`` one ``>= 0``, and a
    row's multiplier the sign of its finite side; the bounds are active, so some are nonzero."""
    problem = CASES[name]()
    result = cvxclust.solve(problem, method="lowrank", tol=1e-7, residual_tol=1e-8)
    form = CvxpyRelaxation(problem).standard_form()
    kind = lowrank_form(form)
    y, w = result.extras["row_multipliers"], result.extras["diagonal_multipliers"]
    if name == "inequality_rows":
        assert w is None
        np.testing.assert_array_equal(y, signed_multipliers(y, form.lo, form.hi))
        inequality = form.lo != form.hi
        assert np.any(y[inequality] != 0)
        return
    np.testing.assert_array_equal(w, signed_multipliers(w, *kind.box))
    assert np.all(w[~np.isfinite(kind.box[0])] <= 0) and np.any(w < 0)


def test_augmented_lagrangian_update_of_an_interval():
    """``y - s (a - clip(a - y/s, lo, hi))``: ``y - s (a - b)`` for an equality, and Rockafellar's
    ``mu <- max(0, mu + s g)`` for ``g = a - hi <= 0`` (``mu = -y``) or ``g = lo - a <= 0`` (``mu = y``)."""
    a, y, s = np.array([2.0, 0.5, 3.0, 1.0]), np.array([1.0, -0.2, -1.0, -0.5]), 2.0
    lo, hi = np.array([1.0, -np.inf, -np.inf, 0.0]), np.array([1.0, 1.0, 1.0, np.inf])
    updated = y - s * shifted(a, y, s, lo, hi)
    mu_upper = np.maximum(0.0, -y + s * (a - hi))
    mu_lower = np.maximum(0.0, y + s * (lo - a))
    np.testing.assert_allclose(updated, [1.0 - s * 1.0, -mu_upper[1], -mu_upper[2], mu_lower[3]], atol=1e-15)
    np.testing.assert_allclose(updated, [-1.0, 0.0, -5.0, 0.0], atol=1e-15)


@pytest.mark.parametrize("name", ["diagonal_upper", "diagonal_box", "inequality_rows"])
def test_certificate_is_valid_at_arbitrary_signed_multipliers(name):
    """Weak duality with inequalities: any multipliers of the signs of :func:`signed_multipliers`."""
    problem = CASES[name]()
    optimum, _ = clarabel_solution(problem)
    form = CvxpyRelaxation(problem).standard_form()
    kind = lowrank_form(form)
    rows, rng = FactorRows(form.rows), np.random.default_rng(0)
    for trial in range(5):
        y = signed_multipliers(rng.standard_normal(form.m) * 10.0 ** rng.uniform(-2, 2), form.lo, form.hi)
        constant = dual_constant(y, form.lo, form.hi)
        w = rng.standard_normal(form.n)
        if kind.box is not None:
            w = signed_multipliers(w, *kind.box)
            constant += dual_constant(w, *kind.box)
        else:
            constant += float(kind.diagonal @ w)
        S = SlackOperator(form.cost, rows, y, w)
        bound = slack_bound(S, constant, kind.tau, form.cost.frobenius_norm(), random_state=trial)["bound"]
        bound += form.constant
        check_bound_side(problem, bound if form.sense == "minimize" else -bound, optimum)


def test_auto_picks_lowrank_for_the_constrained_kmeans_sdp_from_its_order(monkeypatch):
    """The thresholds of the plain k-means SDP: not below them, lowrank from them."""
    from cvxclust.generic import entry

    form = CvxpyRelaxation(_kmeans_constrained()).standard_form()
    assert entry.choose_method(form)[0] != "lowrank"  # n = 30, below the thresholds
    monkeypatch.setattr(entry, "LOWRANK_MIN_N", 20)
    monkeypatch.setattr(entry, "LOWRANK_NONNEGATIVE_MIN_N", 20)
    method, reason = entry.choose_method(form)
    assert method == "lowrank" and "bounds on the diagonal" in reason and reason.endswith(": lowrank"), reason
