"""The low-rank method with ``X >= 0`` held by a dense multiplier (``nonnegative="multiplier"``,
:mod:`cvxclust.generic.lowrank`): against Clarabel on k-means SDPs with rows, where the
nonnegative factor stalls; its Lagrangian's gradient and its term of ``X >= 0`` against finite
differences; the dual slack with a dense multiplier against the matrix written out; its memory
check and the choice of ``nonnegative="auto"``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation, lowrank, lowrank_lagrangian
from cvxclust.generic.factor_rows import FactorRows
from cvxclust.generic.lowrank_certificate import SlackOperator
from cvxclust.generic.lowrank_check import nonnegative_term
from cvxclust.generic.lowrank_form import lowrank_form

TOL, RESIDUAL_TOL = 1e-6, 1e-7


def _must_link(n: int, seed: int):
    """A k-means SDP whose must-link pair across two blobs makes the solution no clustering."""
    return pc.kmeans_sdp(pc.blobs_kernel(n, 3, random_state=seed), 3, must_link=[(0, 1), (2, 5)], min_size=n / 4)


def _kmeans(n: int, seed: int):
    return pc.kmeans_sdp(pc.blobs_kernel(n, 3, random_state=seed), 3)


@pytest.mark.parametrize("problem", [_must_link(12, 0), _must_link(24, 1), _kmeans(30, 5), _kmeans(40, 2)],
                         ids=["must-link-12", "must-link-24", "kmeans-30", "kmeans-40"])
def test_agrees_with_clarabel_and_certifies(problem):
    optimum, _ = clarabel_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", nonnegative="multiplier", tol=TOL,
                                residual_tol=RESIDUAL_TOL)
    assert result.status == "optimal" and result.method == "lowrank"
    assert abs(result.objective - optimum) <= (TOL + REFERENCE_ACCURACY) * abs(optimum)
    check_bound_side(problem, result.dual_bound, optimum)
    V = result.extras["factor"]
    residuals = CvxpyRelaxation(problem).residuals(V @ V.T)
    assert max(residuals.values()) <= RESIDUAL_TOL and set(result.residuals) == set(residuals)
    assert max(result.residuals.values()) <= RESIDUAL_TOL
    # a factor of any sign, and a dense symmetric multiplier Z >= 0
    Z = result.extras["nonnegative_multiplier"]
    assert Z.shape == (V.shape[0],) * 2 and Z.min() >= 0.0 and np.array_equal(Z, Z.T)


def test_spectral_start_certifies_with_the_multiplier():
    """Ten well separated blobs (the instance where a random nonnegative factor stalls,
    ``test_lowrank_start.py``): from the spectral start the multiplier's route certifies too."""
    problem = pc.kmeans_sdp(pc.blobs_kernel(60, 10, n_features=10, random_state=1), 10)
    optimum, _ = clarabel_solution(problem)
    result = cvxclust.solve(problem, method="lowrank", start="spectral", nonnegative="multiplier", tol=TOL,
                            residual_tol=RESIDUAL_TOL)
    assert result.status == "optimal" and result.extras["nonnegative_multiplier"] is not None
    assert abs(result.objective - optimum) <= (TOL + REFERENCE_ACCURACY) * abs(optimum)
    check_bound_side(problem, result.dual_bound, optimum)


def test_the_nonnegative_factor_stalls_where_the_multiplier_certifies():
    """The must-link instance: the multiplier of ``X >= 0`` built from a nonnegative factor leaves
    the dual slack indefinite, and the bound stalls although the point is optimal."""
    problem = _must_link(12, 0)
    with pytest.warns(ConvergenceWarning):
        stalled = cvxclust.solve(problem, method="lowrank", nonnegative="factor", tol=TOL,
                                 residual_tol=RESIDUAL_TOL, max_iter=30)
    assert stalled.status == "max_iter" and stalled.extras["nonnegative_multiplier"] is None
    assert stalled.extras["factor"].min() >= 0.0
    result = cvxclust.solve(problem, method="lowrank", tol=TOL, residual_tol=RESIDUAL_TOL)  # auto: the multiplier
    assert result.status == "optimal" and result.extras["nonnegative_multiplier"] is not None
    assert result.relative_gap <= TOL < stalled.relative_gap


def test_nonnegative_term_matches_its_definition_and_finite_differences():
    rng = np.random.default_rng(0)
    n, r, s = 12, 3, 2.5
    Z = np.maximum(rng.standard_normal((n, n)), 0.0)
    Z = Z + Z.T
    V = rng.standard_normal((n, r))

    def term(V):
        return nonnegative_term(Z, s, V @ V.T)

    value, T = term(V)
    X = V @ V.T
    assert value == pytest.approx(np.sum(np.maximum(Z - s * X, 0.0) ** 2) / (2 * s))
    np.testing.assert_allclose(T, np.maximum(Z - s * X, 0.0))
    gradient = -2.0 * T @ V
    for _ in range(5):
        D = rng.standard_normal((n, r))
        h = 1e-6
        numeric = (term(V + h * D)[0] - term(V - h * D)[0]) / (2 * h)
        assert numeric == pytest.approx(float(np.vdot(gradient, D)), rel=1e-6, abs=1e-6)


def _solver(problem, **options):
    solver = lowrank.LowRank(CvxpyRelaxation(problem), nonnegative="multiplier", **options)
    return solver, solver.init_state()


def test_lagrangian_gradient_matches_finite_differences():
    """``L_s`` with the rows, the diagonal's bounds and the term of ``X >= 0`` at a dense Z."""
    solver, state = _solver(_must_link(12, 0))
    rng = np.random.default_rng(1)
    n = state.form.n
    state.Z = np.maximum(rng.standard_normal((n, n)), 0.0)
    state.Z = state.Z + state.Z.T
    state.y = rng.standard_normal(state.form.m)
    if state.w is not None:
        state.w = rng.standard_normal(n)
    state.penalty = 3.0
    W = rng.standard_normal(state.W.shape)
    value, gradient = solver._lagrangian(state, W.ravel())
    for _ in range(5):
        D = rng.standard_normal(W.shape).ravel()
        h = 1e-6
        numeric = (solver._lagrangian(state, W.ravel() + h * D)[0]
                   - solver._lagrangian(state, W.ravel() - h * D)[0]) / (2 * h)
        assert numeric == pytest.approx(float(gradient @ D), rel=1e-5, abs=1e-6)


def test_dual_slack_with_a_dense_multiplier_is_the_matrix_written_out():
    problem = _kmeans(20, 0)
    form = CvxpyRelaxation(problem).standard_form()
    rng = np.random.default_rng(2)
    n = form.n
    y, w = rng.standard_normal(form.m), rng.standard_normal(n)
    Z = np.maximum(rng.standard_normal((n, n)), 0.0)
    Z = Z + Z.T
    rows = FactorRows(form.rows)
    S = SlackOperator(form.cost, rows, y, w, Z)
    written = form.cost.dense() - rows.adjoint_matmul(y, np.eye(n)) - np.diag(w) - Z
    np.testing.assert_allclose(S @ np.eye(n), written, atol=1e-12 * np.abs(written).max())
    assert S.norm_bound(np.linalg.norm(form.cost.dense())) >= np.linalg.norm(written) * (1 - 1e-12)


def test_auto_hands_X_nonnegative_to_the_multiplier_up_to_its_order(monkeypatch):
    problem = _kmeans(30, 5)
    form = CvxpyRelaxation(problem).standard_form()
    assert lowrank_form(form).nonnegative
    state = lowrank.LowRank(CvxpyRelaxation(problem)).init_state()
    assert state.Z is None and state.switchable  # the factor first; 30 <= DENSE_MULTIPLIER_MAX_N
    state = lowrank.LowRank(CvxpyRelaxation(problem), nonnegative="multiplier").init_state()
    assert state.Z is not None and not state.Z.any() and state.W.min() >= 0.0
    assert not lowrank.LowRank(CvxpyRelaxation(problem), nonnegative="factor").init_state().switchable
    monkeypatch.setattr(lowrank_lagrangian, "DENSE_MULTIPLIER_MAX_N", 29)
    assert not lowrank.LowRank(CvxpyRelaxation(problem)).init_state().switchable
    monkeypatch.setattr(lowrank_lagrangian, "DENSE_MULTIPLIER_MAX_N", 30)
    monkeypatch.setattr(lowrank_lagrangian, "available_bytes", lambda: 2 * 4 * 8 * 30 * 30 - 1)  # does not fit
    assert not lowrank.LowRank(CvxpyRelaxation(problem)).init_state().switchable
    # where X >= 0 does not stand, nothing changes
    state = lowrank.LowRank(CvxpyRelaxation(pc.max_cut(pc.random_graph(20, 4, random_state=0))),
                            nonnegative="multiplier").init_state()
    assert state.Z is None and not state.switchable


def test_auto_switches_where_the_bound_stalls_and_not_where_it_certifies():
    """The must-link instance stalls with the factor's multiplier: ``"auto"`` hands ``X >= 0`` to
    the dense one after the first check that does not halve the gap, and certifies; well separated
    blobs from the spectral start are certified by the nonnegative factor at its first check."""
    result = cvxclust.solve(_must_link(12, 0), method="lowrank", tol=TOL, residual_tol=RESIDUAL_TOL)
    assert result.status == "optimal" and result.extras["nonnegative_multiplier"] is not None
    checks = [row for row in result.history if "relative_gap" in row]
    switched = next(i for i, row in enumerate(result.history) if "nonnegative_residual" in row)
    assert len([row for row in checks if row["iteration"] <= switched]) >= 2
    problem = pc.kmeans_sdp(pc.blobs_kernel(60, 4, n_features=10, random_state=2), 4)
    result = cvxclust.solve(problem, method="lowrank", start="spectral", tol=TOL, residual_tol=1e-8)
    assert result.status == "optimal" and result.extras["nonnegative_multiplier"] is None


def test_memory_is_checked_before_the_multiplier(monkeypatch):
    from cvxclust import _memory

    problem = _kmeans(100, 0)
    with pytest.warns(ConvergenceWarning):  # it fits
        cvxclust.solve(problem, method="lowrank", nonnegative="multiplier", max_iter=1)
    # room for the factor (30 copies of 100 x 8), not for four 100 x 100 arrays
    monkeypatch.setattr(_memory, "available_bytes", lambda: 4 * 8 * 100 * 100 - 1)
    with pytest.raises(ValueError, match=r"the dense multiplier of X >= 0 at order 100 .* needs .* "
                                         r"give nonnegative='factor'"):
        cvxclust.solve(problem, method="lowrank", nonnegative="multiplier")


def test_option_is_checked():
    with pytest.raises(ValueError, match="nonnegative"):
        cvxclust.solve(_kmeans(12, 0), method="lowrank", nonnegative="dense")
