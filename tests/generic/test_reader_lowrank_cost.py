"""A cost of low rank written in cvxpy stays low rank from the statement to the low-rank method."""

from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import expression_form
from cvxclust.generic.cost import Cost, eigen_form
from cvxclust.generic.standard_form import standard_form

N, R = 30, 3


def _data(seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(N, R)), rng.normal(size=(N, R)), rng.normal(size=(R, N))


def _sym(C):
    return (C + C.T) / 2


F, G, A = _data()
STATEMENTS = {  # the objective and its coefficient, formed here only to compare
    "trace-FtXF": (lambda X: cp.trace(F.T @ X @ F), F @ F.T),
    "trace-AXB": (lambda X: cp.trace(A @ X @ G), G @ A),
    "trace-XFGt": (lambda X: cp.trace(X @ F @ G.T), G @ F.T),
    "trace-product": (lambda X: cp.trace((cp.Constant(F) @ G.T) @ X), F @ G.T),
    "multiply-product": (lambda X: cp.sum(cp.multiply(cp.Constant(F) @ F.T, X)), F @ F.T),
    "vdot-product": (lambda X: cp.vdot(cp.Constant(F) @ G.T, X), F @ G.T),
    "scaled-sum": (lambda X: 2 * cp.trace(F.T @ X @ F) - 0.5 * cp.vdot(cp.Constant(G) @ F.T, X) + cp.sum(X),
                   2 * F @ F.T - 0.5 * G @ F.T + 1.0),
}


def _problem(objective, X):
    return cp.Problem(cp.Minimize(objective), [cp.diag(X) == 1, X >> 0])


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_a_low_rank_product_is_read_as_its_factors(name):
    objective, C = STATEMENTS[name]
    X = cp.Variable((N, N), symmetric=True)
    form = standard_form(_problem(objective(X), X))
    assert form.cost.dense_part is None and form.cost.sparse_part is None
    U, s = form.cost.lowrank_part
    assert U.shape[0] == N and s.size <= 2 * R
    # the coefficient the dense constant gives, read as before
    old = standard_form(_problem(cp.trace(C @ X), X))
    assert old.cost.dense_part is not None
    np.testing.assert_allclose(form.cost.dense(), old.C, atol=1e-12)
    np.testing.assert_allclose(form.cost.dense(), _sym(C), atol=1e-12)


def test_a_low_rank_part_and_a_sparse_part_are_kept_apart():
    L = sp.random(N, N, density=0.1, random_state=3, format="csr")
    X = cp.Variable((N, N), symmetric=True)
    form = standard_form(_problem(cp.trace(F.T @ X @ F) + cp.trace(L @ X), X))
    assert form.cost.dense_part is None and form.cost.sparse_part is not None and form.cost.lowrank_part is not None
    np.testing.assert_allclose(form.C, F @ F.T + _sym(L.toarray()), atol=1e-12)


def test_with_a_dense_term_the_low_rank_part_is_added_into_it():
    K = np.random.default_rng(5).normal(size=(N, N))
    X = cp.Variable((N, N), symmetric=True)
    form = standard_form(_problem(cp.trace(K @ X) + cp.trace(A @ X @ G), X))
    assert form.cost.is_dense
    np.testing.assert_allclose(form.C, _sym(K) + _sym(G @ A), atol=1e-12)


def test_eigen_form_is_exact_and_leaves_out_the_zero_eigenvalues():
    U, s = eigen_form(F, F)  # F F^T: rank R
    assert s.size == R and np.all(s > 0)
    np.testing.assert_allclose(U.T @ U, np.eye(R), atol=1e-12)
    np.testing.assert_allclose((U * s) @ U.T, F @ F.T, atol=1e-12)
    U, s = eigen_form(F, G)
    np.testing.assert_allclose((U * s) @ U.T, _sym(F @ G.T), atol=1e-12)


def test_a_product_of_full_rank_falls_back_to_the_dense_reading():
    rng = np.random.default_rng(1)
    P, Q = rng.normal(size=(N, N // 2)), rng.normal(size=(N // 2, N))  # inner dimension n / 2: not low rank
    X = cp.Variable((N, N), symmetric=True)
    for objective, C in ((cp.trace((cp.Constant(P) @ Q) @ X), P @ Q), (cp.trace(Q @ X @ P), P @ Q)):
        form = standard_form(_problem(objective, X))
        assert form.cost.lowrank_part is None and form.cost.dense_part is not None
        np.testing.assert_allclose(form.C, _sym(C), atol=1e-12)


def test_a_constraint_with_a_low_rank_product_is_read_by_the_coefficient_backend():
    X = cp.Variable((N, N), symmetric=True)
    constraint = cp.trace(F.T @ X @ F) <= 1.0
    assert expression_form.read_constraint(SimpleNamespace(X=X, n=N), constraint, "c") is False
    form = standard_form(cp.Problem(cp.Minimize(cp.trace(X)), [constraint, cp.diag(X) <= 1, X >> 0]))
    assert form.m == 1
    Y = _sym(np.random.default_rng(4).normal(size=(N, N)))
    assert form.rows.apply(Y)[0] == pytest.approx(float(np.vdot(F @ F.T, Y)), rel=1e-12)


def _max_cut_like():
    """max <F F^T, X> over the elliptope: a max-cut SDP with a cost of rank R."""
    X = cp.Variable((N, N), symmetric=True)
    return cp.Problem(cp.Maximize(cp.trace(F.T @ X @ F)), [cp.diag(X) == 1, X >> 0])


def test_the_low_rank_method_solves_it_without_an_n_by_n_cost(monkeypatch):
    kept = F.copy()
    problem = _max_cut_like()
    assert standard_form(problem).cost.dense_part is None
    optimum, _ = clarabel_solution(problem)

    def refused(self):
        raise AssertionError("the cost was formed n x n")

    monkeypatch.setattr(Cost, "dense", refused)
    result = cvxclust.solve(problem, method="lowrank", tol=1e-7)
    assert result.status == "optimal"
    assert abs(result.objective - optimum) <= (1e-6 + REFERENCE_ACCURACY) * abs(optimum)
    np.testing.assert_array_equal(F, kept)


@pytest.mark.parametrize("method", ["alm", "generic"])
def test_the_dense_methods_form_the_cost_where_they_need_it(method):
    problem = _max_cut_like()
    optimum, _ = clarabel_solution(problem)
    result = cvxclust.solve(problem, method=method, tol=1e-7)
    assert abs(result.objective - optimum) <= 1e-5 * abs(optimum)


def test_a_kmeans_sdp_with_a_linear_kernel_written_as_its_points_is_solved_and_certified():
    K = pc.blobs_kernel(48, 3, n_features=2, random_state=4)
    values, vectors = np.linalg.eigh(K)
    Z = vectors[:, -2:] * np.sqrt(values[-2:])  # the centred points, K = Z Z^T
    kept = Z.copy()
    X = cp.Variable((48, 48), symmetric=True)
    problem = cp.Problem(cp.Maximize(cp.trace(Z.T @ X @ Z)),
                         [cp.sum(X, axis=1) == 1, cp.trace(X) == 3, X >= 0, X >> 0])
    form = standard_form(problem)
    assert form.cost.dense_part is None and form.cost.lowrank_part[1].size == 2
    optimum, _ = clarabel_solution(problem)
    # the nonnegative factor: nothing n x n, and X >= 0 exactly, as residual_tol = 1e-9 asks
    result = cvxclust.solve(problem, method="lowrank", nonnegative="factor", tol=1e-7, residual_tol=1e-9)
    assert result.status == "optimal" and result.relative_gap <= 1e-7
    assert abs(result.objective - optimum) <= (1e-7 + REFERENCE_ACCURACY) * abs(optimum)
    check_bound_side(problem, result.dual_bound, optimum)
    np.testing.assert_array_equal(Z, kept)
