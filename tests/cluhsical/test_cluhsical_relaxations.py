"""The route from CLUHSICAL to cluhsic's SDP (5.23) and low-rank (5.30) relaxations through
relaxation_output_kernel, validated against cvxpy (Clarabel) on tiny instances."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from cvxclust import structures
from cvxclust.cluhsic import CLUHSICSDP, lift, lowrank
from cvxclust.cluhsic import partition_matrix as assignment
from cvxclust.cluhsical import labels_objective, relaxation_output_kernel
from cvxclust.kernels import center, rbf

REFERENCE = {"solver": "CLARABEL", "eps": 1e-8}
# (m, c, normalization): c = 2 with an asymmetric user loss, c = 3 with the chain loss
CASES = [(8, 2, "l1"), (8, 2, None), (9, 3, "l1"), (9, 3, None)]


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def instance(m: int, c: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((c, 2))
    K = center(rbf(centres[np.arange(m) % c] + rng.standard_normal((m, 2))))
    S = structures.chain(c)
    loss = structures.loss_matrix(S) if c > 2 else np.array([[0.0, 1.0], [3.0, 0.0]])
    return K, structures.output_kernel(S), loss


def balanced_partitions(m: int, c: int):
    for labels in itertools.product(range(c), repeat=m):
        labels = np.array(labels)
        if np.all(np.bincount(labels, minlength=c) == m // c):
            yield labels


@pytest.fixture(scope="module")
def solved():
    """Each case solved once: the relaxation, its Clarabel reference and the default solver."""
    out = {}
    for m, c, normalization in CASES:
        K, A, loss = instance(m, c)
        B = relaxation_output_kernel(A, loss, normalization, n_samples=m)
        relaxation = CLUHSICSDP(K, B)
        out[(m, c, normalization)] = (K, A, loss, B, relaxation, relaxation.solve("reference", **REFERENCE),
                                      relaxation.solve("auto"))
    return out


@pytest.mark.parametrize("case", CASES)
def test_sdp_auto_matches_reference(solved, case):
    *_, reference, result = solved[case]
    assert reference.status == "optimal" and reference.max_residual <= 1e-7
    assert result.status == "optimal"
    assert abs(result.objective - reference.objective) <= 1e-4 * abs(reference.objective)
    assert result.max_residual <= 1e-5


@pytest.mark.parametrize("case", CASES)
def test_best_balanced_partition_lifts_below_the_sdp_optimum(solved, case):
    """Every balanced partition lifts to a feasible point whose SDP objective times m/c is its
    CLUHSICAL objective; the best of them is at most m/c times the SDP optimum."""
    m, c, normalization = case
    K, A, loss, _, relaxation, reference, result = solved[case]
    values = []
    for labels in balanced_partitions(m, c):
        values.append((labels_objective(K, A, labels, loss, normalization), labels))
    best_value, best_labels = max(values, key=lambda v: v[0])
    Q = lift(assignment(best_labels, c, normalization="l2"))
    assert max(relaxation.residuals(Q).values()) <= 1e-12
    assert m / c * relaxation.objective(Q) == pytest.approx(best_value, rel=1e-10)
    optimum = reference.objective
    assert relaxation.objective(Q) <= optimum + 1e-7 * abs(optimum)
    # the certified bound of the scalable solver is an upper bound too
    assert result.dual_bound >= relaxation.objective(Q) - 1e-9 * abs(optimum)


@pytest.mark.parametrize("case", CASES)
def test_lowrank_is_feasible_and_below_the_sdp_optimum(solved, case):
    """bias = 0: the plain Burer-Monteiro form of (5.23), so its objective is comparable with
    the SDP optimum (the bias term of (5.30) is not scale-free: B of the l1 form has entries
    of order (c/m)^2)."""
    K, _, _, B, relaxation, reference, _ = solved[case]
    result = lowrank(K, B, rank=10, bias=0.0, residual_tol=1e-6, random_state=0)
    assert result.status == "converged"
    assert result.max_residual <= 1e-5
    Q = result.X @ result.X.T
    assert relaxation.residuals(Q)["psd"] <= 1e-10
    assert relaxation.objective(Q) == pytest.approx(result.objective, rel=1e-10)
    assert result.objective <= reference.objective + 1e-5 * abs(reference.objective)
