"""``SemidefiniteSpectralClustering``: scikit-learn compatibility, accuracy on Iris, attributes,
precomputed affinities, parameter validation, reproducibility."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks
from ssc_helpers import data

import cvxclust
from cvxclust import Result, SemidefiniteSpectralClustering
from cvxclust.kernels import rbf
from cvxclust.metrics import error_rate
from cvxclust.ssc import NORMALIZATIONS, FrobeniusPSD

# scikit-learn sets n_clusters = 1 in these checks (to make every clusterer "fit" a trivial
# problem); the project requires 2 <= n_clusters <= n_samples and raises ValueError instead.
N_CLUSTERS_1 = "the check sets n_clusters=1, which is rejected by design (2 <= n_clusters <= n_samples)"
EXPECTED_FAILED_CHECKS = {
    "check_dont_overwrite_parameters": N_CLUSTERS_1,
    "check_fit2d_predict1d": N_CLUSTERS_1,
    "check_methods_subset_invariance": N_CLUSTERS_1,
    "check_fit2d_1feature": N_CLUSTERS_1 + " (it expects the message to be about the 1 feature)",
}

ESTIMATORS = [SemidefiniteSpectralClustering(), SemidefiniteSpectralClustering(normalization="frobenius")]


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=["frobenius-psd", "frobenius"])
def test_expected_failures_are_exactly_the_n_clusters_1_checks(estimator):
    """The checks marked as expected failures above fail, and only because of n_clusters=1."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(clone(estimator), on_fail=None)
    failed = {r["check_name"]: r["exception"] for r in results if r["status"] == "failed"}
    assert set(failed) == set(EXPECTED_FAILED_CHECKS)
    for name, exception in failed.items():
        assert "n_clusters must be between 2 and n_samples" in str(exception), (name, exception)
        assert "got 1" in str(exception)


def test_importable_from_package_and_family():
    assert cvxclust.SemidefiniteSpectralClustering is cvxclust.ssc.SemidefiniteSpectralClustering
    assert "SemidefiniteSpectralClustering" in cvxclust.__all__
    assert "SemidefiniteSpectralClustering" in cvxclust.ssc.__all__


def test_init_only_stores_parameters():
    est = SemidefiniteSpectralClustering(n_clusters=-5, affinity="nope", normalization="nope", n_init=0)
    assert est.get_params()["n_clusters"] == -5  # validated in fit, not in __init__
    assert est.normalization == "nope"


@pytest.fixture(scope="module")
def iris():
    return data("iris")


@pytest.fixture(scope="module")
def iris_fit(iris):
    X, _ = iris
    return SemidefiniteSpectralClustering(3, random_state=0).fit(X)


def test_iris_error_rate_frobenius_psd(iris, iris_fit):
    _, y = iris
    assert iris_fit.normalization == "frobenius-psd"
    assert error_rate(y, iris_fit.labels_) <= 0.15


def test_fitted_attributes(iris, iris_fit):
    X, _ = iris
    n = X.shape[0]
    est = iris_fit
    assert est.labels_.shape == (n,)
    assert set(np.unique(est.labels_)) == {0, 1, 2}
    assert est.affinity_matrix_.shape == (n, n)
    np.testing.assert_allclose(est.affinity_matrix_, rbf(X), rtol=1e-12)
    assert est.normalized_affinity_.shape == (n, n)
    assert isinstance(est.result_, Result)
    assert est.result_.status == "optimal" and est.result_.method == "admm"
    np.testing.assert_array_equal(est.result_.X, est.normalized_affinity_)
    # the normalized affinity is the SSC solution: doubly stochastic and p.s.d.
    F = est.normalized_affinity_
    np.testing.assert_allclose(F.sum(axis=1), 1.0, atol=1e-6)
    assert F.min() >= -1e-6 and np.linalg.eigvalsh(F)[0] >= -1e-9
    assert est.n_features_in_ == X.shape[1]
    assert np.array_equal(est.fit_predict(X), est.labels_)


@pytest.mark.parametrize("normalization", ["none", "ratio-cut", "normalized-cut"])
def test_closed_form_normalizations_have_no_result(iris, normalization):
    X, y = iris
    est = SemidefiniteSpectralClustering(3, normalization=normalization, random_state=0).fit(X)
    assert est.result_ is None
    assert est.labels_.shape == (X.shape[0],)
    if normalization == "none":
        np.testing.assert_array_equal(est.normalized_affinity_, est.affinity_matrix_)
    assert error_rate(y, est.labels_) <= 0.35  # RC is the weakest in the paper's Table II


def test_precomputed_affinity(iris):
    X, _ = iris
    K = rbf(X, 1.5)
    est = SemidefiniteSpectralClustering(3, affinity="precomputed", random_state=0).fit(K)
    np.testing.assert_allclose(est.affinity_matrix_, K)
    assert est.labels_.shape == (150,)
    # the same kernel computed from X gives the same clustering
    from_X = SemidefiniteSpectralClustering(3, delta=1.5, random_state=0).fit(X)
    np.testing.assert_array_equal(est.labels_, from_X.labels_)
    assert est.__sklearn_tags__().input_tags.pairwise
    assert not from_X.__sklearn_tags__().input_tags.pairwise


@pytest.mark.parametrize("bad", ["non-square", "non-symmetric"])
def test_precomputed_rejects_bad_kernels(iris, bad):
    X, _ = iris
    K = X if bad == "non-square" else rbf(X) + np.triu(np.full((150, 150), 0.1), 1)
    with pytest.raises(ValueError, match=r"\bX\b"):
        SemidefiniteSpectralClustering(3, affinity="precomputed").fit(K)


@pytest.mark.parametrize("affinity", ["polynomial", "nearest_neighbors"])
def test_other_affinities(affinity):
    X = StandardScaler().fit_transform(data("iris", 60)[0])
    # (the solver's convergence on the polynomial kernel is tested in test_ssc_solvers.py)
    est = SemidefiniteSpectralClustering(3, affinity=affinity, random_state=0,
                                         solver_options={"mu": 10.0}).fit(X)
    assert est.labels_.shape == (60,)
    np.testing.assert_allclose(est.affinity_matrix_, cvxclust.kernels.affinity(X, affinity))
    assert est.result_.status == "optimal"
    F = est.normalized_affinity_
    np.testing.assert_allclose(F.sum(axis=1), 1.0, atol=1e-6)
    assert np.linalg.eigvalsh(F)[0] >= -1e-9


@pytest.mark.parametrize("assign_labels", ["discretize", "kmeans"])
def test_reproducible_with_random_state(assign_labels):
    X, _ = data("wine", 60)
    a = SemidefiniteSpectralClustering(3, assign_labels=assign_labels, random_state=7).fit(X)
    b = SemidefiniteSpectralClustering(3, assign_labels=assign_labels, random_state=7).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    np.testing.assert_array_equal(a.normalized_affinity_, b.normalized_affinity_)
    rs = np.random.RandomState(3)
    c = SemidefiniteSpectralClustering(3, assign_labels=assign_labels, random_state=rs).fit(X)
    assert c.labels_.shape == (60,)


def test_solver_and_solver_options_are_used():
    X, _ = data("iris", 30)
    est = SemidefiniteSpectralClustering(3, solver="ld-ssc2", solver_options={"max_iter": 3}, random_state=0)
    with pytest.warns(ConvergenceWarning, match="ld-ssc2"):
        est.fit(X)
    assert est.result_.method == "ld-ssc2" and est.result_.status == "max_iter"
    assert est.solver_options == {"max_iter": 3}  # not modified by fit
    ds = SemidefiniteSpectralClustering(3, normalization="frobenius", solver="successive-projections").fit(X)
    assert ds.result_.method == "successive-projections"
    assert ds.result_.max_residual <= 1e-6


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"n_clusters": 1}, "n_clusters"),
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 31}, "n_clusters"),
        ({"n_clusters": 2.0}, "n_clusters"),
        ({"n_clusters": "3"}, "n_clusters"),
        ({"affinity": "cosine"}, "affinity"),
        ({"normalization": "sinkhorn"}, "normalization"),
        ({"assign_labels": "qr"}, "assign_labels"),
        ({"n_init": 0}, "n_init"),
        ({"n_init": 2.5}, "n_init"),
        ({"delta": -1.0}, "delta"),
        ({"affinity": "polynomial", "degree": 0}, "degree"),
        ({"affinity": "nearest_neighbors", "n_neighbors": 30}, "n_neighbors"),
        ({"solver": "nope"}, "nope"),
        ({"solver_options": {"tol": -1.0}}, "tol"),
        ({"normalization": "none", "solver_options": {"tol": 1e-3}}, "tol"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(params, name):
    X, _ = data("iris", 30)
    est = SemidefiniteSpectralClustering(**{"n_clusters": 3, **params})
    with pytest.raises(ValueError, match=name):
        est.fit(X)


def test_n_clusters_equal_to_n_samples_is_allowed():
    X, _ = data("iris", 6)
    est = SemidefiniteSpectralClustering(6, random_state=0).fit(X)
    assert est.labels_.shape == (6,)


@pytest.mark.parametrize("X", [np.ones((1, 3)), np.array([[0.0, np.nan], [1.0, 2.0]]), np.ones((3, 0))])
def test_bad_X(X):
    with pytest.raises(ValueError):
        SemidefiniteSpectralClustering(2).fit(X)


def test_every_normalization_fits():
    X, _ = data("iris", 30)
    for normalization in NORMALIZATIONS:
        est = SemidefiniteSpectralClustering(3, normalization=normalization, random_state=0).fit(X)
        assert est.labels_.shape == (30,)
        if normalization == "frobenius-psd":
            ref = FrobeniusPSD(est.affinity_matrix_).solve("reference")
            assert est.result_.objective == pytest.approx(ref.objective, rel=1e-6)
