"""The Peng-Wei relaxation at large n: ``method="auto"`` is ``cvxclust.solve(problem, "auto")``, and
the spectral step takes the top eigenvectors from a factor F of the solution (X = F F^T) without
forming X."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

import cvxclust.generic
import cvxclust.ssc._estimator as estimator_module
from cvxclust import Result, SemidefiniteSpectralClustering
from cvxclust.problem_classes import blobs_kernel
from cvxclust.rounding import factor_embedding, round_embedding, round_labels, spectral_embedding
from cvxclust.ssc import PengWei, normalize


def test_auto_is_cvxclust_solve_with_auto(monkeypatch):
    K = blobs_kernel(24, 3, random_state=0)
    calls = []
    real = cvxclust.generic.solve

    def spy(problem, method="auto", **options):
        calls.append((problem, method, options))
        return real(problem, method, **options)

    monkeypatch.setattr(cvxclust.generic, "solve", spy)
    result = PengWei(K, 3).solve(tol=1e-5)
    assert len(calls) == 1 and calls[0][1] == "auto" and calls[0][2] == {"tol": 1e-5}
    assert calls[0][0].variables()[0].shape == (24, 24)
    assert result.status == "optimal" and "auto" in result.extras  # auto's choice, and why
    # a method named explicitly is that method, not auto's choice
    assert PengWei(K, 3).solve("generic").method == "generic" and len(calls) == 1


def test_auto_agrees_with_the_generic_method():
    K = blobs_kernel(30, 3, random_state=1)
    auto, generic = PengWei(K, 3).solve(), PengWei(K, 3).solve("generic")
    assert auto.objective == pytest.approx(generic.objective, rel=1e-5)


def test_factor_embedding_equals_the_eigenvectors_of_f_ft():
    rng = np.random.default_rng(0)
    F = rng.standard_normal((40, 6)) * np.array([6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    np.testing.assert_allclose(factor_embedding(F, 4), spectral_embedding(F @ F.T, 4), atol=1e-10)
    # eigenvalues: the squared singular values
    V = factor_embedding(F, 6)
    np.testing.assert_allclose(np.diag(V.T @ (F @ (F.T @ V))), np.linalg.svd(F, compute_uv=False) ** 2)


def test_factor_embedding_of_a_thin_factor_is_completed_orthonormally():
    F = np.random.default_rng(1).standard_normal((30, 2)) * np.array([3.0, 1.0])
    V = factor_embedding(F, 4)
    np.testing.assert_allclose(V.T @ V, np.eye(4), atol=1e-12)
    np.testing.assert_allclose(V[:, :2], spectral_embedding(F @ F.T, 2), atol=1e-10)
    np.testing.assert_allclose(F.T @ V[:, 2:], 0.0, atol=1e-12)  # the null space of F F^T


@pytest.mark.parametrize("F, match", [(np.ones(5), "shape"), (np.full((5, 2), np.nan), "NaN"),
                                      (np.ones((5, 0)), "shape")])
def test_factor_embedding_errors(F, match):
    with pytest.raises(ValueError, match=match):
        factor_embedding(F, 2)


def test_round_embedding_is_round_labels_on_the_matrix():
    F = np.random.default_rng(2).standard_normal((30, 3)) * np.array([3.0, 2.0, 1.0])
    for method in ("discretize", "kmeans"):  # the same partition (its labels' names may differ)
        assert adjusted_rand_score(round_embedding(factor_embedding(F, 3), 3, method, random_state=0),
                                   round_labels(F @ F.T, 3, method, random_state=0)) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="n_clusters=2 columns"):
        round_embedding(factor_embedding(F, 3), 2)


def _partition_factor(labels: np.ndarray) -> np.ndarray:
    """F with F F^T = Z (Z^T Z)^{-1} Z^T, the Peng-Wei point of the partition ``labels``."""
    Z = np.eye(labels.max() + 1)[labels]
    return Z / np.sqrt(Z.sum(axis=0))


def test_estimator_clusters_from_the_factor_when_x_is_not_formed(monkeypatch):
    """A method that leaves X unformed: the labels come from F, no n x n matrix is rounded."""
    points, truth = make_blobs(45, centers=3, n_features=4, cluster_std=0.3, random_state=0)
    F = _partition_factor(truth)

    def low_rank(problem, method="auto", **options):
        return Result(X=None, objective=0.0, status="optimal", method="lowrank", iterations=1, time=0.0,
                      extras={"factor": F, "rank": F.shape[1]})

    def no_matrix(*args, **kwargs):
        raise AssertionError("the spectral step must not round an n x n matrix when a factor is given")

    monkeypatch.setattr(cvxclust.generic, "solve", low_rank)
    monkeypatch.setattr(estimator_module, "round_labels", no_matrix)
    est = SemidefiniteSpectralClustering(3, relaxation="peng-wei", random_state=0).fit(points)
    assert est.normalized_affinity_ is None and est.result_.method == "lowrank"
    contingency = np.zeros((3, 3), dtype=int)
    np.add.at(contingency, (truth, est.labels_), 1)
    assert sorted(contingency.max(axis=1)) == [15, 15, 15] and (contingency > 0).sum() == 3


def test_normalize_returns_none_for_a_factor_only_result(monkeypatch):
    F = _partition_factor(np.repeat([0, 1], 5))
    result = Result(X=None, objective=0.0, status="optimal", method="lowrank", iterations=1, time=0.0,
                    extras={"factor": F})
    monkeypatch.setattr(cvxclust.generic, "solve", lambda problem, method="auto", **options: result)
    K = F @ F.T + 0.1
    K_hat, returned = normalize(K, "peng-wei", n_clusters=2, return_result=True)
    assert K_hat is None and returned.X is None and returned.extras["factor"] is F
    # judged by the relaxation from the factor: the point of the partition is feasible
    assert returned.objective == pytest.approx(np.vdot(K, F @ F.T)) and returned.max_residual < 1e-12
    assert returned.status == "optimal"


def test_a_factor_the_relaxation_finds_infeasible_is_not_optimal(monkeypatch):
    """The residuals are the relaxation's own, from the factor: a point whose rows do not sum to 1
    is not called optimal, whatever the method reported."""
    F = 1.1 * _partition_factor(np.repeat([0, 1], 5))
    result = Result(X=None, objective=0.0, status="optimal", method="lowrank", iterations=1, time=0.0,
                    extras={"factor": F})
    monkeypatch.setattr(cvxclust.generic, "solve", lambda problem, method="auto", **options: result)
    with pytest.warns(ConvergenceWarning, match="residual_tol"):
        judged = PengWei(F @ F.T, 2).solve(residual_tol=1e-3)
    assert judged.status == "stalled" and judged.residuals["row_sums"] == pytest.approx(0.21)


def test_the_kernel_is_held_once(monkeypatch):
    """The estimator's affinity is the kernel of the relaxation it solves, not a copy of it (a dense
    kernel is 800 MB at n = 10,000); a kernel that is not exactly symmetric is symmetrised into a
    new array, the caller's left as it was."""
    points = make_blobs(30, centers=3, n_features=4, random_state=0)[0]
    held = []

    def capture(self, method="auto", **options):
        held.append(self.K)
        return Result(X=None, objective=0.0, status="optimal", method="lowrank", iterations=1, time=0.0,
                      extras={"factor": _partition_factor(np.arange(30) % 3)})

    monkeypatch.setattr(PengWei, "solve", capture)
    est = SemidefiniteSpectralClustering(3, relaxation="peng-wei", random_state=0).fit(points)
    assert held[0] is est.affinity_matrix_
    K = est.affinity_matrix_.copy()
    K[0, 1] += 1e-13
    before = K.copy()
    symmetrised = PengWei(K, 3).K
    assert not np.shares_memory(symmetrised, K) and np.array_equal(symmetrised, symmetrised.T)
    np.testing.assert_array_equal(K, before)


def test_objective_and_residuals_from_a_factor_equal_those_of_f_ft():
    K = blobs_kernel(40, 3, random_state=3)
    relaxation = PengWei(K, 3)
    F = _partition_factor(np.arange(40) % 3) + 0.05 * np.random.default_rng(0).standard_normal((40, 3))
    assert relaxation.objective(factor=F) == pytest.approx(relaxation.objective(F @ F.T), rel=1e-12)
    from_factor, from_matrix = relaxation.residuals(factor=F), relaxation.residuals(F @ F.T)
    assert set(from_factor) == set(from_matrix) and from_factor["nonnegativity"] > 0
    for key, value in from_matrix.items():
        assert from_factor[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key
    with pytest.raises(TypeError, match="either X"):
        relaxation.residuals()
    with pytest.raises(ValueError, match="factor must be"):
        relaxation.objective(factor=F[:10])


def test_residuals_of_a_nonnegative_factor_form_no_block_of_f_ft(monkeypatch):
    """The low-rank method's factor is nonnegative: its residuals come from F's row norms, no
    product F F^T (at n = 10,000 that took n^2 r flops), and equal those of the matrix."""
    K = blobs_kernel(40, 3, random_state=4)
    relaxation = PengWei(K, 3)
    F = np.abs(_partition_factor(np.arange(40) % 3) + 0.05 * np.random.default_rng(1).standard_normal((40, 3)))
    from_matrix = relaxation.residuals(F @ F.T)

    def refuse(self, F):
        raise AssertionError("a block of F F^T was formed for a nonnegative factor")

    monkeypatch.setattr(PengWei, "_least_entry", refuse)
    from_factor = relaxation.residuals(factor=F)
    assert from_factor["nonnegativity"] == 0.0 and from_factor["row_sums"] > 0
    for key, value in from_matrix.items():
        assert from_factor[key] == pytest.approx(value, rel=1e-9, abs=1e-12), key


def test_every_method_of_cvxclust_solve_passes_through():
    """A method of cvxclust.solve that the relaxation has not registered itself (a newly
    registered one too) is accepted by name, by the estimator as well."""
    from cvxclust.generic import CvxpyRelaxation

    assert set(CvxpyRelaxation.methods()) <= set(PengWei.methods())
    K = blobs_kernel(24, 3, random_state=2)
    relaxation = PengWei(K, 3)
    assert "alm" in relaxation.scalable_methods()
    result = relaxation.solve("alm", tol=1e-5)
    assert result.method == "alm" and result.status == "optimal"
    assert result.objective == pytest.approx(relaxation.solve("generic", tol=1e-6).objective, rel=3e-5)
    points = make_blobs(24, centers=3, n_features=4, random_state=0)[0]
    est = SemidefiniteSpectralClustering(3, relaxation="peng-wei", method="alm", random_state=0).fit(points)
    assert est.result_.method == "alm"
