"""The standard form's compact parts (:mod:`cvxclust.generic.compact`): bounds as read-only views of
a few numbers, row sums as their indices; the same values as dense arrays and one sparse matrix,
the same solves, and a write into a bound refused."""

from __future__ import annotations

import dataclasses
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from test_generic_solver import instance
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust.generic import CvxpyRelaxation, expression_reader, standard_form
from cvxclust.generic.compact import RowSumsBlock, Rows, constant_bound, off_and_diagonal
from cvxclust.kernels import rbf
from cvxclust.ssc import FrobeniusPSD, PengWei


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def peng_wei(n: int, spelling: str = "trace") -> cp.Problem:
    K = rbf(np.random.default_rng(0).standard_normal((n, 3)))
    X = cp.Variable((n, n), symmetric=True)
    objective = cp.trace(K @ X) if spelling == "trace" else cp.sum(cp.multiply(K, X))
    return cp.Problem(cp.Maximize(objective), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 3])


def dense(form):
    """``form`` with its bounds as dense writable arrays and its rows as one sparse matrix."""
    return dataclasses.replace(form, L=np.array(form.L), U=np.array(form.U), rows=Rows([form.A], form.n))


@pytest.mark.parametrize("n", [1, 2, 7])
def test_constant_bound_is_the_dense_matrix(n):
    expected = np.full((n, n), -2.0)
    np.fill_diagonal(expected, 3.5)
    view = constant_bound(-2.0, 3.5, n)
    np.testing.assert_array_equal(view, expected)
    np.testing.assert_array_equal(view.T, expected)
    np.testing.assert_array_equal(np.diag(view), np.full(n, 3.5))


def test_the_two_numbers_are_read_back_from_a_compact_bound_only():
    assert off_and_diagonal(constant_bound(-2.0, 3.5, 5)) == (-2.0, 3.5)
    dense = np.array(constant_bound(-2.0, 3.5, 5))
    assert off_and_diagonal(dense) is None
    dense.flags.writeable = False
    assert off_and_diagonal(dense) is None and off_and_diagonal(dense[::-1]) is None


@pytest.mark.parametrize("spelling", ["trace", "multiply"])
def test_a_peng_wei_statement_is_held_in_about_one_copy_of_x(spelling, monkeypatch):
    n = 60
    problem = peng_wei(n, spelling)
    form = standard_form(problem)
    assert form.nbytes <= 8 * n * n + 200 * n  # C, and O(n) numbers for the bounds and the rows
    assert any(isinstance(block, RowSumsBlock) for block in form.rows.blocks)
    with monkeypatch.context() as m:  # the coefficient backend's reading: dense bounds, one matrix
        m.setattr(expression_reader, "read_affine", lambda expr, X: None)
        old = standard_form(problem)
    np.testing.assert_array_equal(form.L, old.L)
    np.testing.assert_array_equal(form.U, old.U)
    assert (form.A != old.A).nnz == 0
    rng = np.random.default_rng(0)
    X = rng.standard_normal((n, n))
    np.testing.assert_allclose(form.row_values(X + X.T), old.row_values(X + X.T), rtol=1e-13, atol=1e-13)
    y = rng.standard_normal(form.m)
    np.testing.assert_allclose(form.adjoint(y), old.adjoint(y), rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(form.row_norms, old.row_norms, rtol=1e-15)


BOUNDS = {
    "one number": lambda X: [X >= 0],
    "a diagonal": lambda X: [X >= -1, cp.diag(X) == 1],
    "entries": lambda X: [X >= 0, X[0, 1] <= 0.3],
    "a matrix": lambda X: [X <= np.arange(16.0).reshape(4, 4)],
}


@pytest.mark.parametrize("bounds", BOUNDS)
def test_a_write_into_a_bound_raises_and_changes_nothing(bounds):
    X = cp.Variable((4, 4), symmetric=True)
    form = standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X)), BOUNDS[bounds](X)))
    before = [np.array(form.L), np.array(form.U)]
    for bound in (form.L, form.U):
        with pytest.raises(ValueError, match="read-only"):
            bound[0, 1] = 7.0
        with pytest.raises(ValueError, match="read-only"):
            np.add(bound, 1.0, out=bound)
        with pytest.raises(ValueError, match="read-only"):
            bound.fill(0.0)
    np.testing.assert_array_equal(form.L, before[0])
    np.testing.assert_array_equal(form.U, before[1])


def test_bounds_of_a_diagonal_and_of_entries_by_hand():
    X = cp.Variable((4, 4), symmetric=True)
    form = standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X)), BOUNDS["a diagonal"](X)))
    expected = np.full((4, 4), -1.0)
    np.fill_diagonal(expected, 1.0)
    np.testing.assert_array_equal(form.L, expected)
    np.testing.assert_array_equal(form.U, np.where(np.eye(4, dtype=bool), 1.0, np.inf))
    assert form.nbytes < 8 * 16 + 8 * 20  # C and two views of 7 numbers each
    form = standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X)), BOUNDS["entries"](X)))
    assert form.U[0, 1] == form.U[1, 0] == 0.3 and np.isinf(form.U[0, 2]) and np.all(form.L == 0)


def _problems():
    K = rbf(np.random.default_rng(2).standard_normal((30, 2)))
    X = cp.Variable((30, 30), symmetric=True)
    yield "peng-wei", PengWei(K, 3).problem()
    yield "ssc (7)", FrobeniusPSD(K).problem()
    yield "nearest correlation", cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - K)), [X >> 0, cp.diag(X) == 1])
    yield "box and rows", instance(8, 3, {"psd", "nonneg", "row_sums", "diagonal", "inequality"}, "minimize", 1.0,
                                   "sum_squares")
    yield "trace and upper", instance(8, 5, {"psd", "trace", "upper"}, "maximize", 0.0, "fro")


@pytest.mark.parametrize("name, problem", list(_problems()), ids=[name for name, _ in _problems()])
def test_the_compact_form_solves_as_the_dense_form(name, problem):
    compact = CvxpyRelaxation(problem)
    method = cvxclust.generic.choose_method(compact.standard_form())[0]
    uncompact = CvxpyRelaxation(problem)
    uncompact._standard_form = dense(uncompact.standard_form())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        results = [relaxation.solve(method, max_iter=300) for relaxation in (compact, uncompact)]
    new, old = results
    assert new.status == old.status and new.iterations == old.iterations
    assert new.objective == pytest.approx(old.objective, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(new.X, old.X, rtol=0, atol=1e-12)


def test_off_diagonal_all_reads_compact_views_and_dense_arrays_alike():
    from cvxclust.generic.compact import constant_bound, off_diagonal_all

    zero_off = constant_bound(0.0, 1.0, 5)
    is_zero = lambda M: M == 0  # noqa: E731
    assert off_diagonal_all(is_zero, zero_off) and off_diagonal_all(is_zero, np.array(zero_off))
    dense = np.array(zero_off)
    dense[1, 3] = dense[3, 1] = 2.0
    assert not off_diagonal_all(is_zero, dense)
    assert not off_diagonal_all(is_zero, constant_bound(2.0, 0.0, 5))
    assert off_diagonal_all(lambda a, b: a <= b, constant_bound(0.0, 9.0, 4), constant_bound(1.0, -9.0, 4))
