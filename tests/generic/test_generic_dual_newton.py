"""``cvxclust.solve(problem, method="dual-newton")``: the nearest-point problems of the class
(a squared Frobenius term; bounds, common row sums, a fixed trace, the cone) against Clarabel
and against the SSC solver of the same relaxation; the problems it does not take, named."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from test_generic_solver import instance
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust.generic import nearest_point_form, standard_form
from cvxclust.kernels import rbf
from cvxclust.ssc import FrobeniusPSD, PengWei

ACCURATE = {"tol": 1e-7, "residual_tol": 1e-7}


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@st.composite
def nearest_point_instances(draw):
    """:func:`instance` with a Frobenius term and no constraint rows but the row sums and the trace."""
    forms = {form for form in ("psd", "nonneg", "row_sums", "trace", "diagonal", "upper") if draw(st.booleans())}
    arguments = dict(n=draw(st.integers(4, 10)), seed=draw(st.integers(0, 2**32 - 1)), forms=forms,
                     sense=draw(st.sampled_from(["minimize", "maximize"])),
                     weight=draw(st.sampled_from([0.1, 1.0, 3.0])),
                     spelling=draw(st.sampled_from(["sum_squares", "fro", "square"])))
    note(f"instance(**{arguments})")
    return instance(**arguments)


@settings(max_examples=20, deadline=None)
@given(problem=nearest_point_instances())
def test_random_nearest_point_problems_agree_with_clarabel(problem):
    point, reason = nearest_point_form(standard_form(problem))
    assert point is not None, reason
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="dual-newton", **ACCURATE)
    assert result.method == "dual-newton" and result.status == "optimal"
    reference = problem.solve(solver="CLARABEL")
    scale = max(abs(reference), 1.0)
    assert abs(result.objective - reference) <= 1e-5 * scale
    if isinstance(problem.objective, cp.Minimize):
        assert result.dual_bound <= reference + 1e-7 * scale
    else:
        assert result.dual_bound >= reference - 1e-7 * scale
    assert max(result.residuals.values()) <= ACCURATE["residual_tol"]


def test_the_ssc_relaxation_stated_in_cvxpy_matches_its_own_solver():
    from cvxclust.datasets import load_dataset

    K = rbf(load_dataset("iris", n_samples=45)[0])
    relaxation = FrobeniusPSD(K)
    generic = cvxclust.solve(relaxation.problem(), method="dual-newton", **ACCURATE)
    own = relaxation.solve("dual-newton", **ACCURATE)
    assert generic.status == own.status == "optimal"
    assert generic.objective == pytest.approx(own.objective, rel=1e-7)
    np.testing.assert_allclose(generic.X, own.X, atol=1e-5)
    assert relaxation.residuals(generic.X)["psd"] == pytest.approx(0.0, abs=1e-12)
    assert generic.extras["newton_iterations"] >= 1


def test_problems_of_another_kind_are_refused_with_the_reason():
    K = rbf(np.random.default_rng(0).standard_normal((8, 2)))
    linear = PengWei(K, 2).problem()  # no Frobenius term
    with pytest.raises(ValueError, match="dual-newton.*c = 0"):
        cvxclust.solve(linear, method="dual-newton")
    X = cp.Variable((8, 8), symmetric=True)
    square = cp.sum_squares(X - K)
    with pytest.raises(ValueError, match="rows"):
        cvxclust.solve(cp.Problem(cp.Minimize(square), [X >> 0, cp.sum(X[0]) + X[1, 2] == 1]), method="dual-newton")
    with pytest.raises(ValueError, match="trace is bounded"):
        cvxclust.solve(cp.Problem(cp.Minimize(square), [X >> 0, cp.trace(X) <= 3]), method="dual-newton")
    with pytest.raises(ValueError, match="Unknown method|method"):
        cvxclust.solve(cp.Problem(cp.Minimize(square), [X >> 0]), method="no-such-method")


def test_validate_runs_it_where_it_applies():
    K = rbf(np.random.default_rng(1).standard_normal((20, 2)))
    nearest = cvxclust.generic.CvxpyRelaxation(FrobeniusPSD(K).problem())
    assert nearest.scalable_methods() == ["generic", "dual-newton", "alm"]
    report = cvxclust.validate(nearest)
    assert [c.method for c in report.comparisons] == ["generic", "dual-newton", "alm"] and report.passed


def _count_eigendecompositions(monkeypatch) -> dict:
    """Wrap every eigendecomposition routine the solvers call (numpy's and scipy's) with a counter."""
    import scipy.linalg

    counts = {}
    for module, name in ((np.linalg, "eigh"), (np.linalg, "eigvalsh"), (scipy.linalg, "eigh")):
        original = getattr(module, name)

        def counted(*args, _original=original, _key=f"{module.__name__}.{name}", **kwargs):
            counts[_key] = counts.get(_key, 0) + 1
            return _original(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)
    return counts


def test_the_ssc_statement_through_auto_spends_what_its_own_solver_spends(monkeypatch):
    """``cvxclust.solve`` of the SDP (7) runs the same dual Newton as ``FrobeniusPSD.solve``, from the
    same start: the same iterates, and no eigendecomposition more (reading, choosing the method,
    the centre), nor Newton step."""
    from cvxclust.datasets import load_dataset

    K = rbf(load_dataset("iris", n_samples=45)[0])
    relaxation = FrobeniusPSD(K)
    counts = _count_eigendecompositions(monkeypatch)
    own = relaxation.solve(**ACCURATE)
    spent_own = dict(counts)
    counts.clear()
    generic = cvxclust.solve(relaxation.problem(), **ACCURATE)
    assert own.method == generic.method == "dual-newton"
    assert own.status == generic.status == "optimal"
    assert generic.iterations == own.iterations
    assert generic.extras["newton_iterations"] == own.extras["newton_iterations"]
    assert counts == spent_own
    assert generic.objective == pytest.approx(own.objective, rel=1e-12)
    assert generic.dual_bound == pytest.approx(own.dual_bound, rel=1e-12)
    np.testing.assert_allclose(generic.X, own.X, rtol=0, atol=1e-12)
