"""``CLUHSIC``: scikit-learn compatibility, structures, known labels, every method, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks

import cvxclust
from cvxclust import CLUHSIC
from cvxclust.cluhsic import lowrank, objective, partition_matrix
from cvxclust.kernels import center, rbf
from cvxclust.metrics import accuracy
from cvxclust.structures import admissible_permutations, chain, flat, output_kernel


def blobs_on_a_line(per_cluster=8, c=3, seed=0):
    """c tight blobs at 0, 10, 20, ... on a line: a chain of clusters."""
    rng = np.random.default_rng(seed)
    X = np.concatenate([rng.normal(10.0 * k, 0.5, size=(per_cluster, 2)) for k in range(c)])
    return X, np.repeat(np.arange(c), per_cluster)


#: the estimator's keywords of each method of the family
SETTINGS = {"greedy": {}, "nmf": {"method": "nmf"}, "spectral": {"relaxation": "spectral"},
            "cccp": {"relaxation": "spectral", "method": "cccp"}, "sdp": {"relaxation": "sdp"},
            "lowrank": {"relaxation": "lowrank"}}


@parametrize_with_checks([CLUHSIC()])
def test_sklearn_compatible(estimator, check):
    check(estimator)


@pytest.mark.parametrize("method", ["greedy", "lowrank", "sdp", "spectral", "cccp", "nmf"])
def test_one_cluster_solves_nothing(method):
    X, _ = blobs_on_a_line()
    est = CLUHSIC(1, **SETTINGS[method]).fit(X)
    np.testing.assert_array_equal(est.labels_, np.zeros(24, dtype=int))
    assert est.result_ is None and est.n_iter_ == 0
    assert est.objective_ == pytest.approx(0.0, abs=1e-12)  # 1^T K 1 / m of the centred kernel
    np.testing.assert_array_equal(est.output_kernel_, [[1.0]])


def test_defaults_are_eight_unrelated_clusters():
    X, _ = blobs_on_a_line(per_cluster=4, c=8)
    est = CLUHSIC(random_state=0).fit(X)
    np.testing.assert_array_equal(est.output_kernel_, output_kernel(flat(8)))
    assert est.result_.method == "greedy" and est.n_iter_ == est.result_.iterations
    np.testing.assert_array_equal(CLUHSIC(8, structure=flat(8), random_state=0).fit(X).labels_, est.labels_)


def test_importable_from_package_and_family():
    assert cvxclust.CLUHSIC is cvxclust.cluhsic.CLUHSIC
    assert "CLUHSIC" in cvxclust.__all__


@pytest.mark.parametrize("method", ["greedy", "lowrank", "sdp", "nmf", "spectral", "cccp"])
def test_every_method_recovers_a_chain_of_blobs(method):
    X, y = blobs_on_a_line()
    options = {"cccp": {"max_iter": 20000}, "greedy": {"n_init": 10}}.get(method)
    est = CLUHSIC(3, structure=chain(3), random_state=0, solver_options=options, **SETTINGS[method])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = est.fit_predict(X)
    assert labels.shape == y.shape and set(labels) <= {0, 1, 2}
    perms = admissible_permutations(chain(3)) if method in ("greedy", "lowrank", "sdp") else None
    assert accuracy(y, labels, perms) == 1.0
    K, A = center(rbf(X)), output_kernel(chain(3))
    assert est.objective_ == pytest.approx(objective(K, A, partition_matrix(labels, 3, normalization="l2")))
    np.testing.assert_array_equal(est.output_kernel_, A)


@pytest.mark.parametrize("method", ["greedy", "lowrank", "sdp"])
def test_known_labels_are_kept(method):
    X, y = blobs_on_a_line()
    known = np.full(y.shape, -1)
    known[[0, 8, 16]] = [2, 1, 0]  # fixes the orientation of the chain: reversed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        labels = CLUHSIC(3, structure=chain(3), random_state=0, **SETTINGS[method]).fit(X, known).labels_
    np.testing.assert_array_equal(labels[[0, 8, 16]], [2, 1, 0])
    np.testing.assert_array_equal(labels, 2 - y)  # the whole chain follows the known points


def test_output_kernel_given_directly_equals_structure():
    X, _ = blobs_on_a_line()
    a = CLUHSIC(3, structure=chain(3), method="greedy", random_state=0).fit(X)
    b = CLUHSIC(3, output_kernel=output_kernel(chain(3)), method="greedy", random_state=0).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)


C3 = {"n_clusters": 3, "structure": chain(3)}


@pytest.mark.parametrize(
    ("params", "fit_y", "match"),
    [
        ({"structure": chain(3), "n_clusters": 4}, None, "n_clusters=4 disagrees with the 3 clusters of structure"),
        ({**C3, "output_kernel": np.eye(3)}, None, "structure or output_kernel"),
        ({"n_clusters": 25}, None, "n_clusters=25 must be at most the number of samples, 24"),
        ({"n_clusters": 0}, None, "'n_clusters' parameter of CLUHSIC must be an int in the range"),
        ({"n_clusters": 3.0}, None, "'n_clusters' parameter"),
        ({"n_clusters": True}, None, "'n_clusters' parameter"),
        ({"n_clusters": "3"}, None, "'n_clusters' parameter"),
        ({**C3, "method": "nope"}, None, "method='nope' does not solve relaxation=None; its methods are 'auto', "
                                         "'greedy', 'nmf'"),
        ({**C3, "relaxation": "sdp", "method": "greedy"}, None, "method='greedy' does not solve relaxation='sdp'"),
        ({**C3, "relaxation": "nope"}, None, "'relaxation' parameter of CLUHSIC must be one of None"),
        ({**C3, "method": 3}, None, "'method' parameter"),
        ({**C3, "normalization": "l1"}, None, "normalization='l1' is not supported; use 'l2'"),
        ({**C3, "normalization": True}, None, "'normalization' parameter"),
        ({**C3, "refine_n_init": -1}, None, "'refine_n_init' parameter"),
        ({**C3, "solver_options": {"n_clusters": 3}}, None, "solver_options=.* sets 'n_clusters', which the "
                                                            "estimator sets itself"),
        ({**C3, "relaxation": "sdp", "solver_options": {"method": "admm"}}, None, "sets 'method'"),
        ({**C3, "solver_options": {"random_state": 0}}, None, "sets 'random_state'"),
        ({"n_clusters": 2, "output_kernel": np.eye(3)}, None, "n_clusters=2 disagrees with the 3 clusters of "
                                                                "output_kernel"),
        ({**C3, "affinity": "nope"}, None, "'affinity' parameter"),
        ({**C3, "kernel": "rbf"}, None, "unexpected keyword argument 'kernel'"),
        ({**C3, "relaxation": "lowrank", "normalization": None}, None, "relaxation='lowrank' relaxes the objective "
                                                                         "\\(2.4\\): use normalization='l2'"),
        ({**C3, "normalized": 1}, None, "'normalized' parameter"),
        ({**C3, "rank": 0}, None, "'rank' parameter"),
        ({**C3, "bias": -1.0}, None, "'bias' parameter"),
        ({**C3, "gamma": -1.0}, None, "'gamma' parameter"),
        ({**C3, "gamma": 0.0}, None, "'gamma' parameter"),
        ({**C3, "degree": 1.5}, None, "'degree' parameter"),
        ({**C3, "n_neighbors": 0}, None, "'n_neighbors' parameter"),
        ({**C3, "affinity": "nearest_neighbors", "n_neighbors": 24}, None, "n_neighbors must be between 1 and 23"),
        ({**C3, "affinity": "precomputed"}, None, "X must be a square matrix, got shape"),
        ({**C3, "solver_options": [("tol", 1.0)]}, None, "'solver_options' parameter"),
        ({**C3, "solver_options": {"nope": 1}}, None, "nope"),
        ({**C3, "random_state": np.random.default_rng(0)}, None, "'random_state' parameter"),
        ({**C3, "structure": "chain"}, None, "'structure' parameter"),
        # the estimator's parameter is named, not the A of the functions it calls
        ({"n_clusters": 3, "output_kernel": -np.eye(3)}, None, "^output_kernel must be positive semidefinite"),
        ({"n_clusters": 3, "output_kernel": np.ones((3, 2))}, None, "^output_kernel must be a square matrix"),
        ({"n_clusters": 3, "output_kernel": np.full((3, 3), np.nan)}, None, "^output_kernel contains NaN"),
        ({"n_clusters": 3, "output_kernel": np.ones(3)}, None, "^output_kernel must be a square matrix"),
        ({"n_clusters": 3, "output_kernel": np.eye(3) * (1 + 1j)}, None, "^output_kernel must be real"),
        ({**C3, "relaxation": "lowrank", "rank": 10**6}, None, "^rank must be at most"),  # hung
        ({"n_clusters": 3, "output_kernel": "eye"}, None, "'output_kernel' parameter"),
        ({**C3, "method": "greedy"}, np.r_[5, np.full(23, -1)], "y must lie in -1..2"),
        ({**C3, "method": "greedy"}, np.r_[0, np.full(22, -1)], "y must have 24 entries"),
        ({**C3, "relaxation": "spectral"}, np.r_[0, np.full(23, -1)], "known labels"),
    ],
)
def test_bad_input_raises_naming_the_argument(params, fit_y, match):
    X, _ = blobs_on_a_line()
    with pytest.raises((ValueError, TypeError), match=match):
        CLUHSIC(**params).fit(X, fit_y)


@pytest.mark.parametrize("method", ["spectral", "cccp"])
@pytest.mark.parametrize("affinity", ["precomputed", "nearest_neighbors"])
def test_methods_that_need_a_psd_kernel_name_its_source(method, affinity):
    X, _ = blobs_on_a_line()
    data = center(rbf(X)) - 0.5 * np.eye(24) if affinity == "precomputed" else X
    est = CLUHSIC(3, affinity=affinity, n_neighbors=3, **SETTINGS[method])
    source = "the precomputed kernel X" if affinity == "precomputed" else "affinity='nearest_neighbors'"
    with pytest.raises(ValueError, match=f"relaxation='spectral' needs a positive semidefinite kernel; {source}"):
        est.fit(data)


def test_bias_is_the_rank_one_weight_of_the_low_rank_sdp():
    X, _ = blobs_on_a_line(seed=3)
    K, A = center(rbf(X)), output_kernel(chain(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est = CLUHSIC(3, structure=chain(3), relaxation="lowrank", bias=0.5, rank=4, random_state=1).fit(X)
        reference = lowrank(K, A, rank=4, bias=0.5, random_state=np.random.RandomState(1))
    np.testing.assert_array_equal(est.result_.X, reference.X)
    assert est.n_iter_ == reference.iterations


def test_unnormalized_greedy_uses_2_3():
    X, _ = blobs_on_a_line()
    est = CLUHSIC(3, structure=chain(3), method="greedy", normalization=None, random_state=0).fit(X)
    K = center(rbf(X))
    assert est.objective_ == pytest.approx(objective(K, output_kernel(chain(3)), partition_matrix(est.labels_, 3)))


def test_clone_and_reproducible():
    X, _ = blobs_on_a_line(seed=3)
    est = CLUHSIC(3, relaxation="lowrank", random_state=7)
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
    CLUHSIC(3, structure=G, method="greedy", random_state=0).fit(X)
    assert joblib.hash(G) == before
