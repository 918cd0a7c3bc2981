"""The kernel choice shared by the estimators CLUHSIC and CLUHSICAL (cvxclust._kernel_estimators):
``affinity`` + ``gamma`` (the rbf coefficient, None the median heuristic) + ``degree`` +
``n_neighbors``, each the kernel of cvxclust.kernels; read-only and float32 data."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from cvxclust import CLUHSIC, CLUHSICAL
from cvxclust.kernels import center, knn_affinity, linear, median_distance, polynomial, rbf
from cvxclust.metrics import accuracy
from cvxclust.structures import admissible_permutations, chain

ESTIMATORS = [CLUHSIC, CLUHSICAL]


def blobs(seed=2, spread=3.0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(10.0 * k, spread, size=(6, 2)) for k in range(3)])


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_rbf_gamma_is_the_coefficient_and_none_the_median_heuristic(estimator):
    X = blobs()
    median = median_distance(X)
    by_default = estimator(3, structure=chain(3), random_state=0).fit(X)
    by_median = estimator(3, structure=chain(3), gamma=1.0 / median**2, random_state=0).fit(X)
    # the same kernel up to rounding, which may pick the other reading of the chain
    assert accuracy(by_default.labels_, by_median.labels_, admissible_permutations(chain(3))) == 1.0
    assert by_default.objective_ == pytest.approx(by_median.objective_, rel=1e-12)
    gamma = 0.02
    est = estimator(3, structure=chain(3), gamma=gamma, random_state=0).fit(X)
    K = np.exp(-gamma * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    pre = estimator(3, structure=chain(3), affinity="precomputed", random_state=0).fit(K)
    assert accuracy(est.labels_, pre.labels_, admissible_permutations(chain(3))) == 1.0
    assert est.objective_ == pytest.approx(pre.objective_, rel=1e-10)
    # the default kernel is cvxclust.kernels.rbf with its median width
    pre = estimator(3, structure=chain(3), affinity="precomputed", random_state=0).fit(rbf(X))
    assert by_default.objective_ == pytest.approx(pre.objective_, rel=1e-12)


@pytest.mark.parametrize("estimator", ESTIMATORS)
@pytest.mark.parametrize("affinity, params, kernel", [
    ("polynomial", {"degree": 3}, lambda X: polynomial(X, 3)),
    ("linear", {}, linear),
    ("nearest_neighbors", {"n_neighbors": 4}, lambda X: knn_affinity(X, 4)),
])
def test_every_affinity_is_the_kernel_of_cvxclust_kernels(estimator, affinity, params, kernel):
    X = blobs() / 10.0  # keeps the polynomial kernel's entries moderate
    est = estimator(3, affinity=affinity, random_state=0, **params).fit(X)
    pre = estimator(3, affinity="precomputed", random_state=0).fit(kernel(X))
    np.testing.assert_array_equal(est.labels_, pre.labels_)
    assert est.objective_ == pytest.approx(pre.objective_, rel=1e-12)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_precomputed_kernel_is_centred(estimator):
    X = blobs()
    a = estimator(3, affinity="precomputed", random_state=0).fit(rbf(X))
    b = estimator(3, affinity="precomputed", random_state=0).fit(center(rbf(X)))
    # the same partition (the clusters are unrelated: any relabelling reads it)
    assert accuracy(a.labels_, b.labels_) == 1.0
    assert a.objective_ == pytest.approx(b.objective_, rel=1e-10)


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_read_only_and_float32_inputs(estimator):
    X = blobs(seed=4)
    est = estimator(3, structure=chain(3), random_state=0)
    expected = clone(est).fit(X).labels_
    frozen = X.copy()
    frozen.flags.writeable = False
    np.testing.assert_array_equal(clone(est).fit(frozen).labels_, expected)
    np.testing.assert_array_equal(clone(est).fit(X.astype(np.float32)).labels_, expected)
    y = np.full(len(X), -1)
    y[0] = expected[0]
    y.flags.writeable = False
    assert clone(est).fit(frozen, y).labels_[0] == expected[0]
