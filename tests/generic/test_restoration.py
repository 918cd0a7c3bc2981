"""Feasibility of the generic solver's points: :func:`cvxclust.generic.restoration.scale_to_diagonal`
(a fixed positive diagonal with bounds invariant under scaling) and the ADMM results it makes exactly
feasible (max-cut, correlation clustering); entries tied by rows (must-link,
:mod:`cvxclust.generic.ties`) taken into the box block, and the must-link k-means SDP."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust.generic import CvxpyRelaxation, splitting
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
    (lambda seed: correlation_clustering(signed_graph(30, 3, random_state=seed)), 1),
    (lambda seed: correlation_clustering(signed_graph(30, 3, random_state=seed)), 2),
])
def test_admm_ends_exactly_feasible_on_a_fixed_diagonal(make, seed):
    """Before the scaling, the ADMM returned its iterate in S with its residuals just under
    residual_tol (about 1e-7 on these instances) and iterated until they were."""
    result = cvxclust.solve(make(seed), method="generic", tol=1e-6)
    assert result.status == "optimal"
    assert max(result.residuals.values()) <= 1e-14
    assert np.array_equal(np.diag(result.X), np.ones(30))
    assert abs(result.objective - result.dual_bound) <= 1e-6 * max(abs(result.objective), 1.0)


# -- entries tied by rows (must-link): taken into the box block ------------------------------------
def must_link_instance(n, n_clusters, seed, min_size=None):
    K = blobs_kernel(n, n_clusters, random_state=0)
    rng = np.random.default_rng(seed)
    pairs = [tuple(int(v) for v in rng.choice(n, 2, replace=False)) for _ in range(5)]
    return kmeans_sdp(K, n_clusters, must_link=pairs, min_size=min_size)


def test_must_link_rows_become_ties():
    problem = kmeans_sdp(blobs_kernel(8, 2, random_state=0), 2, must_link=[(1, 2), (2, 1), (0, 3)], min_size=2)
    split = splitting.split(form_of(problem))
    assert split.A.shape[0] == 0 and split.ties is not None
    # X_12 = X_11 and X_21 = X_22 share X_12: one group of three entries (four positions), and X_03 = X_00
    assert sorted(split.ties.count.tolist()) == [3, 4]
    assert split.absorbed["tied_entries"] == 7


@pytest.mark.parametrize("row", [
    lambda X: X[0, 1] == 2 * X[0, 0],  # not the same coefficient
    lambda X: X[0, 1] == X[0, 0] + 0.1,  # not homogeneous
    lambda X: X[0, 1] + X[0, 2] == X[0, 0],  # three entries
])
def test_other_rows_stay_rows(row):
    X = cp.Variable((5, 5), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >> 0, X >= 0, row(X)])
    split = splitting.split(form_of(problem))
    assert split.ties is None and split.A.shape[0] == 1


def test_tied_projection_and_support_against_cvxpy():
    """The projection onto the box with ties is the Frobenius projection, and the support term of
    the bound is the minimum of <Lambda, W> over that set (both computed by Clarabel)."""
    n = 6
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(X)), [X >= 0, cp.diag(X) <= 0.5, X <= 2, X[0, 1] == X[0, 0],
                                                    X[1, 0] == X[1, 1], X[2, 3] == X[4, 5]])
    form = form_of(problem)
    ties = splitting.split(form).ties
    rng = np.random.default_rng(0)
    M = rng.standard_normal((n, n))
    M = (M + M.T) / 2
    W = cp.Variable((n, n), symmetric=True)
    tied = [W >= form.L, W <= form.U, W[0, 1] == W[0, 0], W[1, 1] == W[0, 1], W[2, 3] == W[4, 5]]
    cp.Problem(cp.Minimize(cp.sum_squares(W - M)), tied).solve(solver="CLARABEL")
    assert np.allclose(ties.project(M, form.L, form.U), W.value, atol=1e-6)
    Lam = M
    value = cp.Problem(cp.Minimize(cp.sum(cp.multiply(Lam, W))), tied).solve(solver="CLARABEL")
    finite_L, finite_U = np.isfinite(form.L), np.isfinite(form.U)
    tied_part, terms = ties.support(Lam)
    free = np.where(ties.mask(n), 0.0, Lam)
    free = np.where(((free > 0) & ~finite_L) | ((free < 0) & ~finite_U), 0.0, free)
    support = terms.sum() + np.sum(np.maximum(free, 0) * np.where(finite_L, form.L, 0)) \
        + np.sum(np.minimum(free, 0) * np.where(finite_U, form.U, 0))
    assert np.allclose(free + tied_part, Lam)  # every multiplier has a finite support here
    assert support == pytest.approx(value, abs=1e-6)


def with_rows(problem, extra):
    """``problem`` with the constraints ``extra(X)`` added, or with the Frobenius term ``extra``."""
    X = problem.variables()[0]
    return cp.Problem(problem.objective, problem.constraints + extra(X))


@pytest.mark.parametrize("variant", ["two-block", "consensus", "frobenius"])
def test_must_link_agrees_with_clarabel(variant):
    """Tied entries in the two-block splitting, beside a row the consensus splitting keeps, and
    under a Frobenius objective: the optimum and a valid bound, against Clarabel."""
    problem = must_link_instance(16, 3, 0, min_size=4)
    X = problem.variables()[0]
    if variant == "consensus":
        weights = np.random.default_rng(0).uniform(0, 1, (16, 16))
        # the row is 17.1 at the optimum without it and at least 13.9 on the feasible set
        problem = with_rows(problem, lambda X: [cp.sum(cp.multiply(weights + weights.T, X)) <= 16.0])
    elif variant == "frobenius":
        problem = cp.Problem(cp.Maximize(problem.objective.args[0] - 5.0 * cp.sum_squares(X)), problem.constraints)
    result = cvxclust.solve(problem, method="generic", tol=1e-7, residual_tol=1e-7, max_iter=20000)
    reference = problem.solve(solver="CLARABEL")
    assert result.status == "optimal"
    assert result.extras["splitting"]["tied_entries"] > 0
    assert result.objective == pytest.approx(reference, rel=1e-5)
    assert result.dual_bound >= reference - 1e-6 * abs(reference)  # a maximisation: an upper bound


def test_must_link_certified_within_few_iterations():
    """The k-means SDP with five must-link rows and a least cluster size at n = 60: before the
    rows were tied into the box (a third block of the consensus splitting, whose residual decayed
    long after the gap was met), this instance took 4330 iterations; now 810."""
    result = cvxclust.solve(must_link_instance(60, 6, 2, min_size=8), method="generic", tol=1e-6, max_iter=2000)
    assert result.status == "optimal"
    assert max(result.residuals.values()) <= 1e-6
    assert result.extras["splitting"]["tied_entries"] > 0


# -- a zero total under X >> 0: row sums the eigendecomposition enforces -------------------------------
def test_zero_total_is_taken_as_zero_row_sums():
    split = splitting.split(form_of(min_bisection(random_graph(10, 3, random_state=0))))
    assert split.absorbed["row_sums"] == 0.0 and split.A.shape[0] == 0
    X = cp.Variable((6, 6), symmetric=True)
    without_cone = cp.Problem(cp.Minimize(cp.trace(X)), [X >= -1, X <= 1, cp.sum(X) == 0])
    assert "row_sums" not in splitting.split(form_of(without_cone)).absorbed  # X 1 = 0 needs X >> 0


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate")
def test_min_bisection_is_certified_against_clarabel():
    """With ``sum(X) == 0`` left as a row of the consensus splitting, the ADMM ended at its limit of
    20000 iterations on this instance (n = 30); enforced as ``X 1 = 0`` in S it takes 330."""
    problem = min_bisection(random_graph(30, 5, random_state=0))
    result = cvxclust.solve(problem, method="generic", tol=1e-6, max_iter=2000)
    reference = problem.solve(solver="CLARABEL")  # to about 1e-4 here ("optimal_inaccurate")
    assert result.status == "optimal"
    assert result.objective == pytest.approx(reference, rel=1e-4)
    assert result.dual_bound <= reference + 1e-4 * abs(reference)  # a minimisation: a lower bound
    assert max(result.residuals.values()) <= 1e-6


def test_the_dual_newton_refuses_tied_entries():
    """Its nearest-point problem has no ties: it must not take a problem whose only rows tie
    entries (with them among the splitting's rows it refused them as rows)."""
    problem = must_link_instance(12, 3, 0)
    X = problem.variables()[0]
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - blobs_kernel(12, 3, random_state=1) / 100)),
                         problem.constraints)
    with pytest.raises(ValueError, match="tie entries"):
        cvxclust.solve(problem, method="dual-newton")
    assert cvxclust.solve(problem).method == "generic"


def tied_instance(seed):
    """A random problem with ties of every shape (diagonal to off-diagonal, two off-diagonal
    entries, chains through a shared entry), bounded by the box, with or without a Frobenius term,
    ``X >> 0`` and row sums (every seed used is feasible: Clarabel finds its optimum)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 9))
    X = cp.Variable((n, n), symmetric=True)
    constraints = [X >= 0, X <= 2]
    if rng.integers(2):
        constraints.append(X >> 0)
    if rng.integers(2):
        constraints.append(cp.sum(X, axis=1) == 2)
    for _ in range(int(rng.integers(1, 5))):
        i, j, k, m = (int(v) for v in rng.choice(n, 4, replace=False))
        constraints.append(rng.choice([lambda: X[i, j] == X[k, m], lambda: X[i, j] == X[j, k],
                                       lambda: X[i, k] == X[m, m]])())
    C = rng.standard_normal((n, n))
    objective = cp.trace((C + C.T) @ X)
    if rng.integers(2):
        objective = objective + float(rng.uniform(0.1, 2)) * cp.sum_squares(X)
    return cp.Problem(cp.Minimize(objective), constraints)


@pytest.mark.parametrize("seed", range(8))
def test_random_ties_agree_with_clarabel(seed):
    problem = tied_instance(seed)
    result = cvxclust.solve(problem, method="generic", tol=1e-7, residual_tol=1e-7, max_iter=50000)
    reference = problem.solve(solver="CLARABEL")
    assert result.status == "optimal", result.status
    assert result.objective == pytest.approx(reference, rel=1e-5, abs=1e-6)
    assert result.dual_bound <= reference + 1e-5 * max(abs(reference), 1.0)  # a lower bound
