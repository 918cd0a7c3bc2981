"""``CLUHSIC``: scikit-learn compatibility, structures, known labels, every method, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator, parametrize_with_checks

import cvxclust
from cvxclust import CLUHSIC
from cvxclust.cluhsic import objective, partition_matrix
from cvxclust.kernels import center, rbf
from cvxclust.metrics import accuracy
from cvxclust.structures import admissible_permutations, chain, output_kernel

# the low-rank instance is loosened (API checks on random data, where the default tol 1e-6 costs
# 10-20 s per check); its accuracy is tested below with the defaults
ESTIMATORS = [CLUHSIC(3, method="greedy"), CLUHSIC(3, method="spectral"),
              CLUHSIC(3, method="lowrank", solver_options={"tol": 1e-4})]


def blobs_on_a_line(per_cluster=8, c=3, seed=0):
    """c tight blobs at 0, 10, 20, ... on a line: a chain of clusters."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(10.0 * k, 0.5, size=(per_cluster, 2)) for k in range(c)])
    return X, np.repeat(np.arange(c), per_cluster)


# scikit-learn sets n_clusters = 1 in these checks; CLUHSIC needs at least 2 clusters
N_CLUSTERS_1 = "the check sets n_clusters=1, which is rejected by design (2 <= n_clusters <= n_samples)"
EXPECTED_FAILED_CHECKS = {
    "check_dont_overwrite_parameters": N_CLUSTERS_1,
    "check_fit2d_predict1d": N_CLUSTERS_1,
    "check_methods_subset_invariance": N_CLUSTERS_1,
    "check_fit2d_1feature": N_CLUSTERS_1,
}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=lambda est: EXPECTED_FAILED_CHECKS, xfail_strict=True)
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_expected_failures_are_exactly_the_n_clusters_1_checks():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(clone(ESTIMATORS[0]), on_fail=None)
    failed = {r["check_name"]: r["exception"] for r in results if r["status"] == "failed"}
    assert set(failed) == set(EXPECTED_FAILED_CHECKS)
    for exception in failed.values():
        assert "n_clusters must be" in str(exception) and "got 1" in str(exception)


def test_importable_from_package_and_family():
    assert cvxclust.CLUHSIC is cvxclust.cluhsic.CLUHSIC
    assert "CLUHSIC" in cvxclust.__all__


@pytest.mark.parametrize("method", ["greedy", "lowrank", "sdp", "nmf", "spectral", "cccp"])
def test_every_method_recovers_a_chain_of_blobs(method):
    X, y = blobs_on_a_line()
    options = {"cccp": {"max_iter": 20000}, "greedy": {"n_init": 10}}.get(method)
    est = CLUHSIC(structure=chain(3), method=method, random_state=0, solver_options=options)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = est.fit_predict(X)
    assert labels.shape == y.shape and set(labels) <= {0, 1, 2}
    perms = admissible_permutations(chain(3)) if method in ("greedy", "lowrank", "sdp") else None
    assert accuracy(y, labels, perms) == 1.0
    K, A = center(rbf(X)), output_kernel(chain(3))
    assert est.objective_ == pytest.approx(objective(K, A, partition_matrix(labels, 3, normalized=True)))
    np.testing.assert_array_equal(est.output_kernel_, A)


@pytest.mark.parametrize("method", ["greedy", "lowrank", "sdp"])
def test_known_labels_are_kept(method):
    X, y = blobs_on_a_line()
    known = np.full(y.shape, -1)
    known[[0, 8, 16]] = [2, 1, 0]  # fixes the orientation of the chain: reversed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = CLUHSIC(structure=chain(3), method=method, random_state=0).fit(X, known).labels_
    np.testing.assert_array_equal(labels[[0, 8, 16]], [2, 1, 0])
    np.testing.assert_array_equal(labels, 2 - y)  # the whole chain follows the known points


def test_output_kernel_given_directly_equals_structure():
    X, _ = blobs_on_a_line()
    a = CLUHSIC(structure=chain(3), method="greedy", random_state=0).fit(X)
    b = CLUHSIC(output_kernel=output_kernel(chain(3)), method="greedy", random_state=0).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


@pytest.mark.parametrize(
    ("params", "fit_y", "match"),
    [
        ({"structure": chain(3), "n_clusters": 4}, None, "n_clusters=4 disagrees"),
        ({"structure": chain(3), "output_kernel": np.eye(3)}, None, "structure or output_kernel"),
        ({}, None, "n_clusters is required"),
        ({"n_clusters": 3, "method": "nope"}, None, "method"),
        ({"n_clusters": 3, "kernel": "nope"}, None, "kernel"),
        ({"n_clusters": 3, "method": "lowrank", "normalized": False}, None, "normalized"),
        ({"n_clusters": 3, "rank": 0}, None, "rank"),
        ({"n_clusters": 3, "gamma": -1.0}, None, "gamma"),
        ({"output_kernel": -np.eye(3)}, None, "A"),
        ({"output_kernel": np.ones((3, 2))}, None, "A"),
        ({"n_clusters": 3, "method": "greedy"}, np.r_[5, np.full(23, -1)], "y"),
        ({"n_clusters": 3, "method": "spectral"}, np.r_[0, np.full(23, -1)], "known labels"),
    ],
)
def test_bad_input_raises_value_error(params, fit_y, match):
    X, _ = blobs_on_a_line()
    with pytest.raises(ValueError, match=match):
        CLUHSIC(**params).fit(X, fit_y)


def test_unnormalized_greedy_uses_2_3():
    X, _ = blobs_on_a_line()
    est = CLUHSIC(structure=chain(3), method="greedy", normalized=False, random_state=0).fit(X)
    K = center(rbf(X))
    assert est.objective_ == pytest.approx(objective(K, output_kernel(chain(3)), partition_matrix(est.labels_, 3)))


def test_clone_and_reproducible():
    X, _ = blobs_on_a_line(seed=3)
    est = CLUHSIC(3, method="lowrank", random_state=7)
    a = clone(est).fit_predict(X)
    b = clone(est).fit_predict(X)
    np.testing.assert_array_equal(a, b)


def test_fit_leaves_the_structure_untouched():
    """networkx caches views in a graph's __dict__ on first use; as_structure works on a copy, so
    fit does not change the user's parameter (scikit-learn hashes it before and after fit)."""
    import joblib

    from cvxclust.structures import chain

    G = chain(3)
    before = joblib.hash(G)
    X = np.random.default_rng(0).normal(size=(12, 2))
    CLUHSIC(structure=G, method="greedy", random_state=0).fit(X)
    assert joblib.hash(G) == before
