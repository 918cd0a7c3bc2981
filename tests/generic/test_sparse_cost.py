"""A sparse cost from the cvxpy statement to the standard form, and memory checked before it is spent."""

import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import cvxclust
import cvxclust._memory
from cvxclust import problem_classes as pc
from cvxclust.generic import entry
from cvxclust.generic.compact import (Rows, TotalBlock, bound_sizes, constant_bound, finite_count, first_crossing,
                                      off_and_diagonal)
from cvxclust.generic.entry import CvxpyRelaxation, choose_method, fits_dense
from cvxclust.generic.standard_form import standard_form
from cvxclust.result import Result

N = 40


def _laplacian(n=N, seed=0):
    return pc.laplacian(pc.random_graph(n, 6, random_state=seed))


def _hand_written(cost_of):
    L = _laplacian()
    X = cp.Variable((N, N), symmetric=True)
    return cp.Problem(cp.Maximize(cost_of(L, X)), [cp.diag(X) == 1, X >> 0]), L


@pytest.mark.parametrize("statement", [
    lambda: (pc.max_cut(pc.random_graph(N, 6, random_state=0)), 0.25 * _laplacian()),
    lambda: (pc.min_bisection(pc.random_graph(N, 6, random_state=0)), 0.25 * _laplacian()),
    lambda: _hand_written(lambda L, X: cp.trace(L @ X)),
    lambda: _hand_written(lambda L, X: cp.sum(cp.multiply(L, X))),
    lambda: _hand_written(lambda L, X: cp.sum(cp.multiply(X, L))),  # cvxpy's vdot takes no sparse matrix
    lambda: _hand_written(lambda L, X: cp.trace(X @ L)),  # cvxpy writes it with L.T, which it evaluates dense
], ids=["max-cut", "min-bisection", "trace", "multiply", "multiply-right", "trace-right"])
def test_a_sparse_cost_stays_sparse_and_nothing_n_by_n_is_held(statement):
    problem, M = statement()  # M: the objective's coefficient, in the problem's sense
    form = standard_form(problem)
    assert form.cost.sparse_part is not None and form.cost.dense_part is None and form.cost.ones == 0.0
    sign = -1.0 if form.sense == "maximize" else 1.0
    np.testing.assert_allclose(form.cost.sparse_part.toarray(), sign * M.toarray(), atol=1e-12)
    # the old reader held C as an n x n array (and min-bisection's sum(X) as a row of n^2 entries)
    assert form.nbytes < 8 * N * N / 2
    np.testing.assert_allclose(form.C, sign * M.toarray(), atol=1e-12)  # written on use


def test_sum_of_x_is_the_all_ones_weight_and_a_sparse_part_is_symmetrised():
    rng = np.random.default_rng(0)
    S = sp.random(N, N, density=0.05, random_state=1, format="csr")  # not symmetric
    X = cp.Variable((N, N), symmetric=True)
    form = standard_form(cp.Problem(cp.Minimize(cp.trace(S @ X) + 3 * cp.sum(X)), [X >> 0, cp.diag(X) == 1]))
    assert form.cost.dense_part is None and form.cost.ones == 3.0
    np.testing.assert_allclose(form.cost.sparse_part.toarray(), (S + S.T).toarray() / 2, atol=1e-15)
    Y = rng.normal(size=(N, N))
    Y = Y + Y.T
    assert form.objective(Y) == pytest.approx(float(np.vdot(S.toarray(), Y)) + 3 * Y.sum(), rel=1e-12)


def test_a_dense_term_takes_the_other_parts_into_one_dense_matrix():
    rng = np.random.default_rng(2)
    K = rng.normal(size=(N, N))
    L = _laplacian()
    X = cp.Variable((N, N), symmetric=True)
    form = standard_form(cp.Problem(cp.Minimize(cp.trace(K @ X) + cp.trace(L @ X) + cp.sum(X)), [X >> 0]))
    assert form.cost.is_dense and form.C is form.cost.dense_part
    np.testing.assert_allclose(form.C, (K + K.T) / 2 + L.toarray() + 1.0, atol=1e-12)


def test_the_dense_cost_is_refused_where_it_would_not_fit(monkeypatch):
    form = standard_form(pc.max_cut(pc.random_graph(N, 6, random_state=0)))
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: 1000)
    with pytest.raises(ValueError, match=rf"dense cost matrix of order {N} needs 12.5 KiB.*method='lowrank'"):
        form.C
    assert form.objective(np.eye(N)) == pytest.approx(0.25 * _laplacian().diagonal().sum())  # no C needed


def test_compact_bounds_answered_from_their_two_numbers():
    n = 6
    L, U = constant_bound(0.0, 1.0, n), constant_bound(np.inf, 1.0, n)
    sizes = bound_sizes(L, U)
    assert off_and_diagonal(sizes) == (0.0, 1.0)
    np.testing.assert_array_equal(sizes, bound_sizes(np.array(L), np.array(U)))
    assert finite_count(L) == finite_count(np.array(L)) == n * n and finite_count(U) == n
    assert first_crossing(L, U) is None
    assert first_crossing(constant_bound(2.0, 0.0, n), U) is None
    assert first_crossing(constant_bound(2.0, 0.0, n), constant_bound(1.0, 1.0, n)) == (0, 1)
    assert first_crossing(constant_bound(0.0, 2.0, n), U) == (0, 0)
    dense = np.array(U)
    dense[2, 3] = -1.0
    assert first_crossing(L, dense) == (2, 3)


def test_infeasible_bounds_are_still_named():
    X = cp.Variable((N, N), symmetric=True)
    with pytest.raises(ValueError, match=r"bounds on X\[0, 0\] are infeasible: 2 > 1"):
        standard_form(cp.Problem(cp.Minimize(cp.trace(X)), [X <= 1, cp.diag(X) >= 2]))


def test_total_rows_match_their_sparse_matrix():
    n = 5
    rows = Rows([TotalBlock([2.0, -1.0], n)], n)
    A = rows.tocsr()
    assert A.nnz == 2 * n * n
    X = np.random.default_rng(0).normal(size=(n, n))
    np.testing.assert_allclose(rows.apply(X), A @ X.ravel())
    y = np.array([0.5, 3.0])
    np.testing.assert_allclose(rows.adjoint(y).ravel(), A.T @ y)
    np.testing.assert_allclose(rows.row_norms(), np.asarray(abs(A).sum(axis=1)).ravel())
    np.testing.assert_allclose(rows.select(np.array([False, True])).tocsr().toarray(), A[1].toarray())


@pytest.mark.parametrize("method", ["generic", "alm", "newton", "dual-newton"])
def test_a_dense_method_is_refused_naming_method_size_and_remedy(monkeypatch, method):
    problem = pc.nearest_correlation(pc.perturbed_correlation(N, random_state=0)) if "newton" in method \
        else pc.max_cut(pc.random_graph(N, 6, random_state=0))
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: 50_000)
    with pytest.raises(ValueError, match=rf"method='{method}' on a problem of order {N} .* needs .*KiB of memory "
                                         r"and 48.8 KiB is available: use method='lowrank' \(a low-rank factor\)"):
        cvxclust.solve(problem, method=method)


def test_auto_picks_no_dense_method_that_would_not_fit(monkeypatch):
    form = standard_form(pc.max_cut(pc.random_graph(N, 6, random_state=0)))
    assert choose_method(form)[0] == "alm" and fits_dense(form, "alm")
    need = entry.DENSE_COPIES["alm"] * 8 * N * N
    assert not fits_dense(form, "alm", available=need - 1) and fits_dense(form, "alm", available=need)
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: need - 1)
    assert choose_method(form) == ("lowrank", "alm would not fit in memory at order 40: lowrank")
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: 1000)
    assert choose_method(form) == ("lowrank", "no dense method fits in memory at order 40: lowrank")
    # a problem outside the low-rank method's class (a Frobenius term) is refused, naming the need
    nearest = standard_form(pc.nearest_correlation(np.eye(N)))
    with pytest.raises(ValueError, match="every dense method on a problem of order 40 .*method='lowrank'"):
        choose_method(nearest)
    X = cp.Variable((N, N), symmetric=True)
    boxed = standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X - np.eye(N))), [X >> 0, X >= 0, cp.diag(X) <= 0.1]))
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: entry.DENSE_COPIES["generic"] * 8 * N * N - 1)
    with pytest.raises(ValueError, match="method='generic' on a problem of order 40"):
        choose_method(boxed)


@pytest.mark.parametrize("solver", [None, "SCS"])
def test_the_reference_is_refused_beyond_its_memory(monkeypatch, solver):
    relaxation = CvxpyRelaxation(pc.max_cut(pc.random_graph(N, 6, random_state=0)))
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: 100_000)
    with pytest.raises(ValueError, match=rf"the reference \({solver or 'CLARABEL'}\) on p.s.d. cones of order up to "
                                         r"40 needs .* use a scalable method"):
        relaxation.solve("reference", solver=solver)


def _factor_result(n=4):
    F = np.ones((n, 1))
    return Result(X=None, objective=2.5, status="optimal", method="lowrank", iterations=3, time=0.1,
                  residuals={"rows": 0.0}, dual_bound=2.5, extras={"factor": F})


def test_a_result_without_x_validates_and_displays():
    result = _factor_result()
    assert "X=None (the factor: extras['factor'])" in repr(result)
    assert "None (the factor: extras[&#x27;factor&#x27;])" in result._repr_html_()
    assert "None (the factor: extras['factor'])" in result._repr_markdown_()


def test_problem_solve_without_x_leaves_the_value_none_and_points_at_the_factor(monkeypatch):
    X = cp.Variable((4, 4), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> 0, cp.diag(X) == 1])
    X.value = np.eye(4)  # a value from before is cleared
    result = _factor_result()
    monkeypatch.setattr(entry, "solve", lambda problem, **options: result)
    with pytest.warns(UserWarning, match=r"factor F \(X = F F\^T\) in problem.cvxclust_result.extras\['factor'\]"):
        value = problem.solve(method="cvxclust")
    assert X.value is None and value == problem.value == 2.5 and problem.status == cp.OPTIMAL
    assert problem.cvxclust_result.extras["factor"] is result.extras["factor"]


def test_problem_solve_with_x_gives_no_factor_warning():
    X = cp.Variable((4, 4), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> 0, cp.diag(X) == 1])
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)
        problem.solve(method="cvxclust")
    assert X.value.shape == (4, 4)


def test_objective_scale_forms_no_centre_where_no_dense_array_fits(monkeypatch):
    """The scale of a problem too large for a dense centre is read from the fixed trace (the
    centre ``a 11^T + b I`` was written as an n x n array: 74.5 GiB at n = 10^5)."""
    relaxation = CvxpyRelaxation(pc.max_cut(pc.random_graph(N, 6, random_state=0)))
    form = relaxation.standard_form()
    monkeypatch.setattr(cvxclust._memory, "available_bytes", lambda: 1000)
    assert relaxation.objective_scale() == pytest.approx(form.cost.frobenius_norm() * N)
