"""``SemidefiniteSpectralClustering``: scikit-learn compatibility, accuracy on Iris, attributes,
precomputed affinities, parameter validation, reproducibility."""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import parametrize_with_checks
from ssc_helpers import data

import cvxclust
from cvxclust import Result, SemidefiniteSpectralClustering
from cvxclust.kernels import rbf
from cvxclust.metrics import error_rate
from cvxclust.ssc import RELAXATIONS, FrobeniusPSD

ESTIMATORS = [SemidefiniteSpectralClustering(), SemidefiniteSpectralClustering(relaxation="frobenius")]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_defaults_follow_scikit_learn():
    est = SemidefiniteSpectralClustering()
    params = est.get_params()
    assert params["n_clusters"] == 8  # as KMeans and SpectralClustering
    assert params["affinity"] == "rbf" and params["gamma"] is None
    assert params["method"] == "auto" and params["solver_options"] is None
    assert set(params) == set(SemidefiniteSpectralClustering._parameter_constraints)
    assert list(inspect.signature(SemidefiniteSpectralClustering).parameters)[0] == "n_clusters"


def test_importable_from_package_and_family():
    assert cvxclust.SemidefiniteSpectralClustering is cvxclust.ssc.SemidefiniteSpectralClustering
    assert "SemidefiniteSpectralClustering" in cvxclust.__all__
    assert "SemidefiniteSpectralClustering" in cvxclust.ssc.__all__


def test_init_only_stores_parameters():
    est = SemidefiniteSpectralClustering(n_clusters=-5, affinity="nope", relaxation="nope", n_init=0)
    assert est.get_params()["n_clusters"] == -5  # validated in fit, not in __init__
    assert est.relaxation == "nope"


@pytest.fixture(scope="module")
def iris():
    return data("iris")


@pytest.fixture(scope="module")
def iris_fit(iris):
    X, _ = iris
    return SemidefiniteSpectralClustering(3, random_state=0).fit(X)


def test_iris_error_rate_frobenius_psd(iris, iris_fit):
    _, y = iris
    assert iris_fit.relaxation == "frobenius-psd"
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
    assert est.result_.status == "optimal" and est.result_.method == "dual-newton"
    np.testing.assert_array_equal(est.result_.X, est.normalized_affinity_)
    # the normalized affinity is the SSC solution: doubly stochastic and p.s.d.
    F = est.normalized_affinity_
    np.testing.assert_allclose(F.sum(axis=1), 1.0, atol=1e-6)
    assert F.min() >= -1e-6 and np.linalg.eigvalsh(F)[0] >= -1e-9
    assert est.n_features_in_ == X.shape[1]
    assert np.array_equal(est.fit_predict(X), est.labels_)


@pytest.mark.parametrize("relaxation", ["none", "ratio-cut", "normalized-cut"])
def test_closed_form_normalizations_have_no_result(iris, relaxation):
    X, y = iris
    est = SemidefiniteSpectralClustering(3, relaxation=relaxation, random_state=0).fit(X)
    assert est.result_ is None
    assert est.labels_.shape == (X.shape[0],)
    if relaxation == "none":
        np.testing.assert_array_equal(est.normalized_affinity_, est.affinity_matrix_)
    assert error_rate(y, est.labels_) <= 0.35  # RC is the weakest in the paper's Table II


def test_precomputed_affinity(iris):
    X, _ = iris
    K = rbf(X, 1.5)
    est = SemidefiniteSpectralClustering(3, affinity="precomputed", random_state=0).fit(K)
    np.testing.assert_allclose(est.affinity_matrix_, K)
    assert est.labels_.shape == (150,)
    # the same kernel computed from X gives the same clustering
    from_X = SemidefiniteSpectralClustering(3, gamma=1 / 1.5**2, random_state=0).fit(X)
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
    # (the solvers' convergence on the polynomial kernel is tested in test_ssc_solvers.py)
    est = SemidefiniteSpectralClustering(3, affinity=affinity, random_state=0).fit(X)
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
    # a Generator, which the parameter table accepts, reached sklearn's check_random_state, which refused it
    g = SemidefiniteSpectralClustering(3, assign_labels=assign_labels, random_state=np.random.default_rng(3)).fit(X)
    assert g.labels_.shape == (60,)


def test_method_and_solver_options_are_used():
    X, _ = data("iris", 30)
    est = SemidefiniteSpectralClustering(3, method="ld-ssc2", solver_options={"max_iter": 3}, random_state=0)
    with pytest.warns(ConvergenceWarning, match="ld-ssc2"):
        est.fit(X)
    assert est.result_.method == "ld-ssc2" and est.result_.status == "max_iter"
    assert est.n_iter_ == 3 and est.objective_ == est.result_.objective
    assert est.solver_options == {"max_iter": 3}  # not modified by fit
    ds = SemidefiniteSpectralClustering(3, relaxation="frobenius", method="successive-projections").fit(X)
    assert ds.result_.method == "successive-projections"
    assert ds.result_.max_residual <= 1e-6


@pytest.mark.parametrize(
    ("params", "name"),
    [
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 31}, "n_clusters"),
        ({"n_clusters": 2.0}, "n_clusters"),
        ({"n_clusters": "3"}, "n_clusters"),
        ({"n_clusters": True}, "n_clusters"),
        ({"affinity": "cosine"}, "affinity"),
        ({"affinity": None}, "affinity"),
        ({"relaxation": "sinkhorn"}, "relaxation"),
        ({"assign_labels": "qr"}, "assign_labels"),
        ({"n_init": 0}, "n_init"),
        ({"n_init": 2.5}, "n_init"),
        ({"gamma": -1.0}, "gamma"),
        ({"gamma": 0.0}, "gamma"),
        ({"gamma": np.nan}, "gamma"),
        ({"gamma": "scale"}, "gamma"),
        ({"affinity": "polynomial", "degree": 0}, "degree"),
        ({"degree": 1.5}, "degree"),
        ({"affinity": "nearest_neighbors", "n_neighbors": 30}, "n_neighbors"),
        ({"n_neighbors": 0}, "n_neighbors"),
        ({"method": "nope"}, "method"),
        ({"method": None}, "method"),
        ({"relaxation": "frobenius", "method": "ld-ssc2"}, "method"),
        ({"solver_options": [("tol", 1e-3)]}, "solver_options"),
        ({"solver_options": {"tol": -1.0}}, "tol"),
        ({"relaxation": "none", "solver_options": {"tol": 1e-3}}, "tol"),
        ({"random_state": "seed"}, "random_state"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(params, name):
    X, _ = data("iris", 30)
    est = SemidefiniteSpectralClustering(**{"n_clusters": 3, **params})
    with pytest.raises(ValueError, match=name):
        est.fit(X)


@pytest.mark.parametrize("relaxation", ["none", "ratio-cut", "normalized-cut"])
@pytest.mark.parametrize("method", ["admm", "dual-newton", "nope"])
def test_method_with_a_closed_form_relaxation_raises_naming_both(relaxation, method):
    """A closed form has no solver: method='admm' with relaxation='none' was silently ignored."""
    X, _ = data("iris", 30)
    est = SemidefiniteSpectralClustering(3, relaxation=relaxation, method=method)
    with pytest.raises(ValueError, match=rf"'method' parameter.*relaxation='{relaxation}'.*"
                                         rf"method must be 'auto'. Got method='{method}'"):
        est.fit(X)
    auto = SemidefiniteSpectralClustering(3, relaxation=relaxation, random_state=0).fit(X)
    assert auto.result_ is None and auto.labels_.shape == (30,)


def test_n_clusters_equal_to_n_samples_is_allowed():
    X, _ = data("iris", 6)
    est = SemidefiniteSpectralClustering(6, random_state=0).fit(X)
    assert est.labels_.shape == (6,)


@pytest.mark.parametrize("X", [np.ones((1, 3)), np.array([[0.0, np.nan], [1.0, 2.0]]), np.ones((3, 0))])
def test_bad_X(X):
    with pytest.raises(ValueError):
        SemidefiniteSpectralClustering(2).fit(X)


def test_every_relaxation_fits():
    X, _ = data("iris", 30)
    for relaxation in RELAXATIONS:
        est = SemidefiniteSpectralClustering(3, relaxation=relaxation, random_state=0).fit(X)
        assert est.labels_.shape == (30,)
        if relaxation == "frobenius-psd":
            ref = FrobeniusPSD(est.affinity_matrix_).solve("reference")
            assert est.result_.objective == pytest.approx(ref.objective, rel=1e-6)


def test_unknown_solver_option_is_a_type_error_naming_it():
    X, _ = data("iris", 30)
    with pytest.raises(TypeError, match="nope"):
        SemidefiniteSpectralClustering(3, solver_options={"nope": 1}).fit(X)


def test_parameter_errors_name_the_estimator_the_value_and_the_expectation():
    X, _ = data("iris", 30)
    with pytest.raises(ValueError, match=r"The 'gamma' parameter of SemidefiniteSpectralClustering must be "
                                         r"a float in the range \(0, inf\) or None. Got -1 instead."):
        SemidefiniteSpectralClustering(3, gamma=-1).fit(X)
    with pytest.raises(ValueError, match=r"'method'.*'admm'.*'ld-ssc1'.*Got 'nope'"):
        SemidefiniteSpectralClustering(3, method="nope").fit(X)


@pytest.mark.parametrize("relaxation", RELAXATIONS)
def test_one_cluster_puts_every_point_in_it_without_a_solve(relaxation, monkeypatch):
    X, _ = data("iris", 30)
    monkeypatch.setattr(FrobeniusPSD, "solve", lambda *a, **k: pytest.fail("n_clusters=1 must not solve"))
    est = SemidefiniteSpectralClustering(1, relaxation=relaxation).fit(X)
    np.testing.assert_array_equal(est.labels_, np.zeros(30, dtype=int))
    assert est.result_ is None and est.n_iter_ == 0 and est.objective_ is None
    assert est.normalized_affinity_ is None
    np.testing.assert_allclose(est.affinity_matrix_, rbf(X), rtol=1e-12)
    assert np.array_equal(est.fit_predict(X), est.labels_)


def test_one_cluster_still_validates_a_precomputed_affinity():
    with pytest.raises(ValueError, match=r"\bX\b"):
        SemidefiniteSpectralClustering(1, affinity="precomputed").fit(np.ones((4, 3)))


def test_gamma_is_the_rbf_coefficient():
    X, _ = data("wine", 30)
    X = StandardScaler().fit_transform(X)
    gamma = 0.07
    est = SemidefiniteSpectralClustering(3, gamma=gamma, random_state=0).fit(X)
    sq = np.sum((X[:, None, :] - X[None, :, :]) ** 2, axis=-1)
    np.testing.assert_allclose(est.affinity_matrix_, np.exp(-gamma * sq), rtol=1e-12, atol=1e-300)
    # None: the median heuristic gamma = 1 / median_distance**2
    default = SemidefiniteSpectralClustering(3, random_state=0).fit(X)
    median = cvxclust.kernels.median_distance(X)
    np.testing.assert_allclose(default.affinity_matrix_, np.exp(-sq / median**2), rtol=1e-12)
    # the affinity's own parameters are ignored by the others
    poly = SemidefiniteSpectralClustering(3, affinity="polynomial", gamma=5.0, random_state=0).fit(X)
    np.testing.assert_allclose(poly.affinity_matrix_, cvxclust.kernels.affinity(X, "polynomial", degree=2))


def test_median_heuristic_on_coincident_points_names_gamma():
    X = np.vstack([np.zeros((6, 2)), np.eye(2)])  # most pairs coincide: median distance 0
    with pytest.raises(ValueError, match="gamma"):
        SemidefiniteSpectralClustering(2).fit(X)
    est = SemidefiniteSpectralClustering(2, gamma=1.0, random_state=0).fit(X)
    assert est.labels_.shape == (8,)


def test_n_iter_and_objective(iris_fit):
    assert iris_fit.n_iter_ == iris_fit.result_.iterations >= 1
    assert iris_fit.objective_ == iris_fit.result_.objective
    assert iris_fit.objective_ == pytest.approx(
        0.5 * np.sum((iris_fit.normalized_affinity_ - iris_fit.affinity_matrix_) ** 2), rel=1e-12)


def test_fit_runs_under_the_blas_thread_policy(monkeypatch):
    import cvxclust.ssc._estimator as module

    sizes = []
    real = module.blas_threads

    def spy(n):
        sizes.append(n)
        return real(n)

    monkeypatch.setattr(module, "blas_threads", spy)
    X, _ = data("iris", 30)
    SemidefiniteSpectralClustering(3, random_state=0).fit(X)
    assert sizes == [30]


def test_fit_does_not_modify_X_or_parameters():
    X, _ = data("iris", 30)
    X = np.array(X)
    before = X.copy()
    options = {"max_iter": 5000}
    est = SemidefiniteSpectralClustering(3, solver_options=options, random_state=0)
    est.fit(X)
    np.testing.assert_array_equal(X, before)
    assert options == {"max_iter": 5000}
    K = rbf(X)
    K_before = K.copy()
    SemidefiniteSpectralClustering(3, affinity="precomputed", random_state=0).fit(K)
    np.testing.assert_array_equal(K, K_before)
