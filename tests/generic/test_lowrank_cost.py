"""A cost with a low-rank part (:class:`cvxclust.generic.cost.Cost`) and the compression of a dense
cost of numerically low rank (:mod:`cvxclust.generic.lowrank_cost`): its error bound against the
exact difference, its refusal of full-rank costs, and the low-rank method's certificate with it."""

from __future__ import annotations

import numpy as np
import pytest
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic import lowrank as lowrank_module
from cvxclust.generic.cost import Cost
from cvxclust.generic.factor_rows import FactorRows
from cvxclust.generic.lowrank_certificate import SlackOperator, slack_bound
from cvxclust.generic.lowrank_cost import compress_cost, low_rank_part
from cvxclust.generic.lowrank_form import lowrank_form


def _low_rank_plus_noise(n, rank, noise, seed):
    rng = np.random.default_rng(seed)
    L = rng.standard_normal((n, rank)) * 10.0 ** rng.uniform(-1, 2, rank)
    E = rng.standard_normal((n, n))
    return L @ np.diag(rng.choice([-1.0, 1.0], rank)) @ L.T + noise * (E + E.T)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("noise, rtol", [(0.0, 1e-10), (1e-13, 1e-10), (1e-7, 1e-4), (1e-4, 1e-2)])
def test_error_bound_holds(seed, noise, rtol):
    D = _low_rank_plus_noise(56, 1 + seed, noise, seed)
    before = D.copy()
    U, s, error = low_rank_part(D, rtol=rtol, random_state=seed)
    np.testing.assert_array_equal(D, before)
    exact = np.linalg.norm(D - (U * s) @ U.T)
    assert exact <= error <= rtol * np.linalg.norm(D)
    assert np.linalg.norm(D - (U * s) @ U.T, 2) <= error
    np.testing.assert_allclose(U.T @ U, np.eye(s.size), atol=1e-12)
    assert s.size <= 56 // 8


def test_dropped_part_beyond_the_tolerance_is_refused():
    D = _low_rank_plus_noise(56, 2, 1e-6, 0)
    assert low_rank_part(D) is None  # a dropped part of 1e-6 relative is no rounding
    assert low_rank_part(D, rtol=1e-3) is not None


@pytest.mark.parametrize("name", ["gaussian-noise", "gaussian-kernel", "rank-beyond-the-cap"])
def test_full_rank_cost_is_kept_dense(name):
    rng = np.random.default_rng(1)
    if name == "gaussian-noise":
        D = rng.standard_normal((60, 60))
        D = D + D.T
    elif name == "gaussian-kernel":  # well spread points, a narrow kernel
        P = rng.uniform(size=(60, 2))
        D = np.exp(-((P[:, None] - P[None]) ** 2).sum(-1) / 0.01)
    else:
        D = _low_rank_plus_noise(60, 8, 0.0, 1)  # rank 8 > 60 // 8
    cost = Cost(60, dense=D, ones=0.5)
    assert compress_cost(cost) is cost and cost.error == 0.0


def _kmeans_problem():
    """Blobs in 2 dimensions: a kernel of rank 2, compressed at n = 48 (cap 48 // 8 = 6)."""
    return pc.kmeans_sdp(pc.blobs_kernel(48, 3, n_features=2, random_state=4), 3)


def test_compressed_kmeans_agrees_with_clarabel_and_certifies(monkeypatch):
    problem = _kmeans_problem()
    optimum, _ = clarabel_solution(problem)
    used = []

    def spy(cost, **options):
        used.append(compress_cost(cost, **options))
        return used[-1]

    monkeypatch.setattr(lowrank_module, "compress_cost", spy)
    # the nonnegative factor holds X >= 0 exactly, as residual_tol = 1e-9 asks
    result = cvxclust.solve(problem, method="lowrank", nonnegative="factor", tol=1e-7, residual_tol=1e-9)
    assert used and used[0].lowrank_part is not None and used[0].dense_part is None
    assert used[0].lowrank_part[1].size == 2 and 0.0 < used[0].error
    assert result.status == "optimal"
    assert abs(result.objective - optimum) <= (1e-7 + REFERENCE_ACCURACY) * abs(optimum)
    check_bound_side(problem, result.dual_bound, optimum)
    assert result.relative_gap <= 1e-7


def test_certificate_is_lowered_by_the_compression_error():
    problem = _kmeans_problem()
    optimum, _ = clarabel_solution(problem)
    form = CvxpyRelaxation(problem).standard_form()
    kind, rows = lowrank_form(form), FactorRows(form.rows)
    compressed = compress_cost(form.cost)
    U, s = compressed.lowrank_part
    y = np.random.default_rng(0).standard_normal(form.m)
    constant, w = float(form.lo @ y), np.zeros(form.n)
    bounds = {}
    for error in (0.0, 1e-3 * abs(optimum)):
        cost = Cost(form.n, lowrank=(U, s), error=error)
        S = SlackOperator(cost, rows, y, w, deflate=kind.deflate)
        bounds[error] = slack_bound(S, constant, kind.tau, cost.frobenius_norm(), random_state=0)["bound"]
        # a maximisation: the bound of the minimisation, negated, is above the optimum
        check_bound_side(problem, -(bounds[error] + form.constant), optimum)
    big = 1e-3 * abs(optimum)
    assert bounds[big] == pytest.approx(bounds[0.0] - kind.tau * big, rel=1e-12)


def test_rank_beyond_the_first_block_is_found():
    """A rank above the first Gaussian block (16) and below the cap (200 // 8 = 25): the second
    block finds the rest of the range, however little the first lowered the estimate."""
    L = np.random.default_rng(5).standard_normal((200, 20))  # 20 eigenvalues of one size
    D = L @ L.T
    U, s, error = low_rank_part(D)
    assert s.size == 20 and np.linalg.norm(D - (U * s) @ U.T) <= error
