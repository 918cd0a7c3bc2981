"""The low-rank method of :func:`cvxclust.solve` (:mod:`cvxclust.generic.lowrank`): against
Clarabel on max-cut, the minimum bisection and the k-means SDP (correlation clustering in
``test_lowrank_penalty.py``), and the bound of correlation clustering at a limit; its
certificate alone at arbitrary multipliers; its products with the factor; its refusals; the
factor without X; the time limit."""

from __future__ import annotations

import re
import tracemalloc
import warnings
from dataclasses import replace

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.compact import RowSumsBlock, Rows, constant_bound
from cvxclust.generic.cost import Cost
from cvxclust.generic.factor_rows import FactorRows
from cvxclust.generic.lowrank_certificate import SlackOperator, nonnegative_multiplier, slack_bound
from cvxclust.generic.lowrank_form import lowrank_form

CASES = {
    "max_cut": lambda: pc.max_cut(pc.random_graph(40, 5, random_state=3)),
    "min_bisection": lambda: pc.min_bisection(pc.random_graph(24, 4, random_state=1)),
    "kmeans_sdp": lambda: pc.kmeans_sdp(pc.blobs_kernel(30, 3, random_state=5), 3),
}
#: the certified gap each case is run to (the first-order stationarity of the factor limits
#: the multipliers' accuracy, and with it the bound, near 1e-8 where X >= 0 or X 1 = 0 stand)
TOLS = {"max_cut": 1e-9, "min_bisection": 1e-6, "kmeans_sdp": 1e-7}


@pytest.mark.parametrize("name", list(CASES))
def test_agrees_with_clarabel_and_certifies(name):
    problem = CASES[name]()
    optimum, _ = clarabel_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", tol=TOLS[name], residual_tol=1e-9)
    assert result.status == "optimal" and result.method == "lowrank"
    scale = max(abs(optimum), 1.0)
    assert abs(result.objective - optimum) <= (TOLS[name] + REFERENCE_ACCURACY) * scale
    check_bound_side(problem, result.dual_bound, optimum)
    assert result.relative_gap <= TOLS[name]
    # the factor's own residuals are the problem's residuals of X = V V^T
    V = result.extras["factor"]
    np.testing.assert_allclose(result.X, V @ V.T)
    residuals = CvxpyRelaxation(problem).residuals(result.X)
    assert max(residuals.values()) <= 1e-8
    assert set(result.residuals) == set(residuals)
    assert result.extras["eigsh"] >= 1 and result.extras["rank"] == V.shape[1]


def test_kmeans_point_is_the_clustering():
    """Well separated blobs: the solution is unique (the clusters' normalised indicators)."""
    problem = pc.kmeans_sdp(pc.blobs_kernel(24, 3, random_state=0), 3)
    _, point = clarabel_solution(problem)
    result = cvxclust.solve(problem, method="lowrank", tol=1e-7, residual_tol=1e-9)
    assert result.status == "optimal"
    np.testing.assert_allclose(result.X, point, atol=1e-4)


def test_correlation_clustering_bound_is_valid():
    """At a limit (the dense-multiplier route, :mod:`cvxclust.generic.lowrank_penalty`), the bound
    is valid and the point ``V V^T`` keeps its unit diagonal; its residual is that of ``X >= 0``."""
    problem = pc.correlation_clustering(pc.signed_graph(20, 3, random_state=2))
    optimum, _ = clarabel_solution(problem)
    with pytest.warns(ConvergenceWarning):
        result = cvxclust.solve(problem, method="lowrank", max_iter=5)
    check_bound_side(problem, result.dual_bound, optimum)
    V = result.extras["factor"]
    np.testing.assert_allclose(np.einsum("ij,ij->i", V, V), 1.0, atol=1e-12)
    residuals = CvxpyRelaxation(problem).residuals(V @ V.T)
    assert result.residuals["bounds"] == pytest.approx(residuals["bounds"], abs=1e-12)


@pytest.mark.parametrize("name", list(CASES) + ["correlation_clustering"])
def test_certificate_is_valid_at_arbitrary_multipliers(name):
    """Weak duality: the bound holds for any multipliers, however far from optimal."""
    problem = CASES[name]() if name in CASES else pc.correlation_clustering(pc.signed_graph(20, 3, random_state=1))
    optimum, _ = clarabel_solution(problem)
    form = CvxpyRelaxation(problem).standard_form()
    kind = lowrank_form(form)
    rows, rng = FactorRows(form.rows), np.random.default_rng(0)
    for trial in range(5):
        y = rng.standard_normal(form.m) * 10.0 ** rng.uniform(-2, 2)
        w = rng.standard_normal(form.n) if kind.diagonal is not None else np.zeros(form.n)
        Z = None
        if kind.nonnegative:
            V = np.abs(rng.standard_normal((form.n, 4)))
            Z = nonnegative_multiplier(rng.standard_normal((form.n, 4)), V)
        S = SlackOperator(form.cost, rows, y, w, Z, deflate=kind.deflate)
        constant = float(form.lo @ y) + (float(kind.diagonal @ w) if kind.diagonal is not None else 0.0)
        bound = slack_bound(S, constant, kind.tau, form.cost.frobenius_norm(), random_state=trial)["bound"]
        bound += form.constant
        check_bound_side(problem, bound if form.sense == "minimize" else -bound, optimum)


@pytest.mark.parametrize("problem", [CASES["kmeans_sdp"](), CASES["min_bisection"](),
                                     pc.kmeans_sdp(pc.blobs_kernel(12, 2, random_state=0), 2, must_link=[(0, 3)])],
                         ids=["row-sums-and-trace", "total", "sparse-row"])
def test_factor_rows_match_the_dense_rows(problem):
    form = CvxpyRelaxation(problem).standard_form()
    rows, rng = FactorRows(form.rows), np.random.default_rng(1)
    V, z = rng.standard_normal((form.n, 3)), rng.standard_normal(form.m)
    np.testing.assert_allclose(rows.apply(V), form.row_values(V @ V.T), atol=1e-10)
    np.testing.assert_allclose(rows.adjoint_matmul(z, V), form.adjoint(z) @ V, atol=1e-10)
    assert rows.adjoint_norm(z) >= np.linalg.norm(form.adjoint(z)) * (1 - 1e-12)


def _variable(n=6):
    return cp.Variable((n, n), symmetric=True)


def _refusals():
    X, C = _variable(), np.arange(36.0).reshape(6, 6)
    C = C + C.T
    base = [X >> 0, cp.diag(X) == 1]
    return {
        "partial_nonnegative": (cp.Problem(cp.Minimize(cp.trace(C @ X)), base + [X[0, 2] >= 0]),
                                r"X\[0, 2\] has a lower bound other than that of X\[0, 1\]"),
        "frobenius": (cp.Problem(cp.Minimize(cp.sum_squares(X - C)), base), r"squared Frobenius term"),
        "upper": (cp.Problem(cp.Minimize(cp.trace(C @ X)), base + [X <= 2]), r"X\[0, 1\] has an upper bound"),
        "unbounded_trace": (cp.Problem(cp.Minimize(cp.trace(C @ X)), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1]),
                            r"do not bound the trace"),
        "partial_upper": (cp.Problem(cp.Minimize(cp.trace(C @ X)), [X >> 0, X[0, 0] <= 1, X[1, 1] >= 1]),
                          r"do not bound the trace"),
        "no_psd": (cp.Problem(cp.Minimize(cp.trace(C @ X)), [cp.diag(X) == 1, X >= -1, X <= 1]),
                   r"X >> 0 is not a constraint"),
    }


@pytest.mark.parametrize("case", list(_refusals()))
def test_refuses_outside_its_kind_naming_the_part(case):
    problem, part = _refusals()[case]
    relaxation = CvxpyRelaxation(problem)
    assert "lowrank" not in relaxation.scalable_methods()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        with pytest.raises(ValueError, match="method='lowrank' does not apply") as refusal:
            cvxclust.solve(problem, method="lowrank")
    assert re.search(part, str(refusal.value)), str(refusal.value)


@pytest.mark.parametrize("option", ["rank", "max_rank"])
def test_rank_beyond_n_is_refused(option):
    problem = CASES["max_cut"]()
    with pytest.raises(ValueError, match=rf"{option}=41 exceeds the order n=40"):
        cvxclust.solve(problem, method="lowrank", **{option: 41})


def test_factor_without_X():
    """``form_X=False``: X is None, the factor is given, and the result is certified from it
    (the core takes a certificate without X)."""
    problem = CASES["max_cut"]()
    result = cvxclust.solve(problem, method="lowrank", form_X=False)
    assert result.X is None and result.status == "optimal"
    assert "X=None (the factor: extras['factor'])" in repr(result)
    V = result.extras["factor"]
    assert V.shape == (40, result.extras["rank"])
    relaxation = CvxpyRelaxation(problem)
    assert abs(relaxation.objective(V @ V.T) - result.objective) <= 1e-9 * abs(result.objective)
    assert max(relaxation.residuals(V @ V.T).values()) <= 1e-6


def test_time_limit_warns_with_a_valid_bound():
    problem = CASES["kmeans_sdp"]()
    optimum, _ = clarabel_solution(problem)
    with pytest.warns(ConvergenceWarning, match="time limit"):
        result = cvxclust.solve(problem, method="lowrank", time_limit=1e-3, tol=1e-12)
    assert result.status == "time_limit"
    if result.dual_bound is not None:
        check_bound_side(problem, result.dual_bound, optimum)
    assert result.extras["factor"].shape[0] == 30


def test_options_are_checked():
    problem = CASES["max_cut"]()
    with pytest.raises(ValueError, match="penalty_growth"):
        cvxclust.solve(problem, method="lowrank", penalty_growth=0.5)
    with pytest.raises(ValueError, match="form_X"):
        cvxclust.solve(problem, method="lowrank", form_X="yes")


def test_auto_picks_lowrank_from_its_order(monkeypatch):
    from cvxclust.generic import entry

    problems = {"max_cut": CASES["max_cut"](), "kmeans_sdp": CASES["kmeans_sdp"](),
                "correlation_clustering": pc.correlation_clustering(pc.signed_graph(30, 3, random_state=0))}
    forms = {name: CvxpyRelaxation(p).standard_form() for name, p in problems.items()}
    assert all(entry.choose_method(f)[0] != "lowrank" for f in forms.values())  # below LOWRANK_MIN_N
    monkeypatch.setattr(entry, "LOWRANK_MIN_N", 20)
    assert entry.choose_method(forms["kmeans_sdp"])[0] != "lowrank"  # below LOWRANK_NONNEGATIVE_MIN_N
    monkeypatch.setattr(entry, "LOWRANK_NONNEGATIVE_MIN_N", 20)
    for name in ("max_cut", "kmeans_sdp"):
        method, reason = entry.choose_method(forms[name])
        assert method == "lowrank" and reason.endswith(": lowrank"), reason
    assert entry.choose_method(forms["correlation_clustering"])[0] != "lowrank"  # below LOWRANK_PENALTY_MIN_N
    result = cvxclust.solve(problems["max_cut"])
    assert result.method == "lowrank" and result.status == "optimal"


def test_memory_of_the_factor_is_checked(monkeypatch):
    from cvxclust import _memory

    monkeypatch.setattr(_memory, "available_bytes", lambda: 10_000)
    with pytest.raises(ValueError, match=r"method='lowrank' at rank 8 .* needs .* give a smaller rank"):
        cvxclust.solve(CASES["max_cut"](), method="lowrank", rank=8)


def test_reading_the_kind_takes_no_square_temporary():
    """What the method reads off a form of order n allocates nothing of n^2 entries (a boolean
    mask of the diagonal took n^2 bytes: 10 GB at n = 10^5)."""
    n = 3000
    problem = pc.kmeans_sdp(np.eye(4), 2)  # any statement: only its form's kind is read below
    form = CvxpyRelaxation(problem).standard_form()
    trace = sp.csr_matrix((np.ones(n), (np.zeros(n, dtype=np.int64), np.arange(n) * (n + 1))), shape=(1, n * n))
    big = replace(form, n=n, cost=Cost(n), L=constant_bound(0.0, 0.0, n), U=constant_bound(np.inf, np.inf, n),
                  rows=Rows([RowSumsBlock(np.arange(n), np.ones(n), n), trace], n), lo=np.r_[np.ones(n), 2.0],
                  hi=np.r_[np.ones(n), 2.0])
    tracemalloc.start()
    kind = lowrank_form(big)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert kind.tau == 2.0 and kind.nonnegative and kind.diagonal is None
    assert peak < n * n / 10, peak


def _weighted_diagonal_cut(n=30, seed=4):
    """Max-cut with the diagonal fixed at unequal values."""
    W = pc.random_graph(n, 4, random_state=seed)
    d = np.random.default_rng(seed).uniform(0.5, 3.0, n)
    X = _variable(n)
    return cp.Problem(cp.Maximize(cp.trace(pc.laplacian(W) @ X) / 4), [X >> 0, cp.diag(X) == d]), d


@pytest.mark.parametrize("rank", [None, 1])
def test_fixed_diagonal_alone_agrees_with_clarabel(rank):
    """The Riemannian inner solver (a fixed diagonal the only constraint), from the default rank
    and from rank 1, whose certificate makes the rank grow: certified, the diagonal met, the bound
    below (here, as the problem maximizes, above) the optimum."""
    problem, d = _weighted_diagonal_cut()
    optimum, _ = clarabel_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", tol=1e-8, residual_tol=1e-9, rank=rank)
    assert result.status == "optimal" and result.relative_gap <= 1e-8
    assert abs(result.objective - optimum) <= (1e-8 + REFERENCE_ACCURACY) * abs(optimum)
    check_bound_side(problem, result.dual_bound, optimum)
    V = result.extras["factor"]
    np.testing.assert_allclose(np.einsum("ij,ij->i", V, V), d, rtol=1e-12, atol=1e-15)
    if rank == 1:
        assert result.extras["rank"] > 1


def test_oblique_descent_gradient_and_stopping():
    """The Riemannian gradient is the derivative along the retraction, and a run stops at its
    tolerance with the rows on their spheres."""
    from cvxclust.generic.lowrank_oblique import _gradient, oblique_descent, retract

    rng = np.random.default_rng(2)
    n, r = 25, 4
    C = rng.standard_normal((n, n))
    C = C + C.T
    sqrt_d = rng.uniform(0.5, 2.0, n)
    V = retract(rng.standard_normal((n, r)), sqrt_d)
    G = _gradient(V, C @ V, 1.0 / sqrt_d ** 2)
    xi = rng.standard_normal((n, r))
    xi -= (np.einsum("ij,ij->i", xi, V) / sqrt_d ** 2)[:, None] * V  # a tangent vector
    f = lambda U: float(np.vdot(U, C @ U))  # noqa: E731
    t = 1e-6
    derivative = (f(retract(V + t * xi, sqrt_d)) - f(retract(V - t * xi, sqrt_d))) / (2 * t)
    assert abs(derivative - np.vdot(G, xi)) <= 1e-6 * np.linalg.norm(G) * np.linalg.norm(xi)
    before = V.copy()
    run = oblique_descent(lambda U: C @ U, V, sqrt_d, gtol=1e-8, max_iter=20000)
    np.testing.assert_array_equal(V, before)  # the start is not modified
    assert run.grad_norm <= 1e-8 and run.value < f(V)
    np.testing.assert_allclose(np.linalg.norm(run.V, axis=1), sqrt_d, rtol=1e-14)
    G = _gradient(run.V, C @ run.V, 1.0 / sqrt_d ** 2)
    assert np.linalg.norm(G) == pytest.approx(run.grad_norm, rel=1e-6, abs=1e-12)


def test_no_check_while_the_rows_are_far_from_met():
    """A smallest eigenvalue is spent only once the rows are met to 1e-3 (before, the multipliers
    mean little and the rank does not grow); the point returned is certified all the same."""
    problem = CASES["kmeans_sdp"]()
    result = cvxclust.solve(problem, method="lowrank", tol=1e-7, residual_tol=1e-9)
    assert result.status == "optimal"
    checked = [row for row in result.history if "lambda_min" in row]
    assert checked and all(row["rows_residual"] <= 1e-3 for row in checked)
    assert result.extras["eigsh"] < len(result.history) * 2


def test_fixed_diagonal_alone_checks_only_small_gradients():
    """For a fixed diagonal alone a smallest eigenvalue is spent only once the relative gradient
    norm ``||grad|| sqrt(tau) / |<C, X>|`` is at most ``max(3e-4, tol / 10)``."""
    problem = CASES["max_cut"]()
    result = cvxclust.solve(problem, method="lowrank", tol=1e-6, residual_tol=1e-9)
    assert result.status == "optimal"
    checked = [row for row in result.history if "lambda_min" in row]
    assert checked and len(checked) < len(result.history) and result.extras["eigsh"] == len(checked)
    for row in checked:
        assert row["gradient_norm"] * np.sqrt(40) / abs(row["objective"]) <= 3e-4 * (1 + 1e-9)
