"""Exact feasibility of the generic solver's points: :func:`cvxclust.generic.restoration.scale_to_diagonal`
(a fixed positive diagonal with bounds invariant under scaling) and the ADMM results it makes exactly
feasible (max-cut, correlation clustering)."""

from __future__ import annotations

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.restoration import scale_to_diagonal
from cvxclust.problem_classes import (blobs_kernel, correlation_clustering, kmeans_sdp, max_cut, min_bisection,
                                      random_graph, signed_graph)


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def form_of(problem):
    return CvxpyRelaxation(problem).standard_form()


def near_feasible(n, seed, shift):
    """A p.s.d. matrix near a correlation matrix, its diagonal off 1 by ~1e-3; ``shift`` moves
    its factors' entries off 0 (a small shift leaves negative entries)."""
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((n, 3)) + shift
    X = B @ B.T
    d = np.sqrt(np.diag(X)) * (1.0 + 1e-3 * rng.uniform(-1, 1, n))
    return X / d[:, None] / d[None, :]


@pytest.mark.parametrize("problem", ["max_cut", "correlation_clustering"])
def test_scale_to_diagonal_is_exactly_feasible_and_near(problem):
    n = 12
    W = signed_graph(n, 3, random_state=1)
    form = form_of(max_cut(np.abs(W)) if problem == "max_cut" else correlation_clustering(W))
    X = near_feasible(n, 2, shift=1.0 if problem == "correlation_clustering" else 0.0)
    if problem == "correlation_clustering":
        assert X.min() < 0  # the sign bounds are violated before
    before = X.copy()
    Y = scale_to_diagonal(form, X)
    assert np.array_equal(X, before)  # the caller's point is kept
    assert np.array_equal(np.diag(Y), np.ones(n))
    assert np.array_equal(Y, Y.T)
    assert np.all(Y >= form.L) and np.all(Y <= form.U)
    assert np.linalg.eigvalsh(Y)[0] >= -1e-14
    residuals = form.residuals(Y)
    assert max(residuals.values()) <= 1e-14
    # as far from X as X's violations, not more
    assert np.linalg.norm(Y - X) <= 3 * n * (np.abs(np.minimum(X, 0)).sum(axis=1).max() + np.abs(np.diag(X) - 1).max())


@pytest.mark.parametrize("make", [
    lambda: min_bisection(random_graph(10, 3, random_state=0)),  # a row: 1^T X 1 == 0
    lambda: kmeans_sdp(blobs_kernel(10, 2, random_state=0), 2),  # row sums, no fixed diagonal
])
def test_scale_to_diagonal_refuses_constraints_scaling_breaks(make):
    form = form_of(make())
    assert scale_to_diagonal(form, np.eye(form.n)) is None


def test_scale_to_diagonal_refuses_a_nonpositive_diagonal():
    form = form_of(max_cut(np.abs(signed_graph(6, 2, random_state=0))))
    X = np.eye(6)
    X[2, 2] = 0.0
    assert scale_to_diagonal(form, X) is None


@pytest.mark.parametrize("make, seed", [
    (lambda seed: max_cut(random_graph(30, 5, random_state=seed)), 0),
    (lambda seed: correlation_clustering(signed_graph(30, 3, random_state=seed)), 0),
    (lambda seed: correlation_clustering(signed_graph(30, 3, random_state=seed)), 1),
])
def test_admm_ends_exactly_feasible_on_a_fixed_diagonal(make, seed):
    """Before the scaling, the ADMM returned its iterate in S with its residuals just under
    residual_tol (about 1e-7 on these instances) and iterated until they were."""
    result = cvxclust.solve(make(seed), method="generic", tol=1e-6)
    assert result.status == "optimal"
    assert max(result.residuals.values()) <= 1e-14
    assert np.array_equal(np.diag(result.X), np.ones(30))
    assert abs(result.objective - result.dual_bound) <= 1e-6 * max(abs(result.objective), 1.0)
