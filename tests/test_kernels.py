import numpy as np
import pytest

from cvxclust import kernels


@pytest.fixture
def X():
    return np.random.RandomState(0).randn(12, 3)


def _sqdist(X):
    return ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)


def test_rbf_matches_formula(X):
    K = kernels.rbf(X, delta=1.7)
    np.testing.assert_allclose(K, np.exp(-_sqdist(X) / 1.7**2), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.diag(K), 1.0)


def test_rbf_default_delta_is_median_distance(X):
    dists = np.sqrt(_sqdist(X))[np.triu_indices(len(X), 1)]
    med = np.median(dists)
    assert kernels.median_distance(X) == pytest.approx(med, rel=1e-12)
    np.testing.assert_allclose(kernels.rbf(X), kernels.rbf(X, delta=med), rtol=1e-12)
    np.testing.assert_allclose(kernels.rbf(X), np.exp(-_sqdist(X) / med**2), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize("delta", [0.1, 1.0, 10.0, None])
def test_rbf_is_psd_and_symmetric(X, delta):
    K = kernels.rbf(X, delta)
    np.testing.assert_array_equal(K, K.T)
    assert np.linalg.eigvalsh(K).min() > -1e-10


def test_polynomial_and_linear_match_formula(X):
    np.testing.assert_allclose(kernels.polynomial(X, degree=3), (X @ X.T + 1) ** 3, rtol=1e-12)
    np.testing.assert_allclose(kernels.polynomial(X), (X @ X.T + 1) ** 2, rtol=1e-12)
    np.testing.assert_allclose(kernels.linear(X), X @ X.T, rtol=1e-12, atol=1e-14)


def test_knn_affinity_symmetric_with_expected_structure():
    X = np.random.RandomState(1).rand(20, 2)
    k = 4
    W = kernels.knn_affinity(X, n_neighbors=k)
    assert isinstance(W, np.ndarray) and W.shape == (20, 20)
    np.testing.assert_array_equal(W, W.T)
    np.testing.assert_array_equal(np.diag(W), 1.0)
    assert set(np.unique(W)) <= {0.0, 0.5, 1.0}
    # direct construction: each point's k nearest points (itself included)
    D = np.sqrt(_sqdist(X))
    A = np.zeros_like(D)
    for i in range(len(X)):
        A[i, np.argsort(D[i])[:k]] = 1
    np.testing.assert_array_equal(W, 0.5 * (A + A.T))


def test_center_equals_HKH(X):
    K = kernels.rbf(X)
    n = len(K)
    H = np.eye(n) - np.ones((n, n)) / n
    Kc = kernels.center(K)
    np.testing.assert_allclose(Kc, H @ K @ H, atol=1e-13)
    np.testing.assert_array_equal(Kc, Kc.T)
    np.testing.assert_allclose(Kc.sum(axis=0), 0, atol=1e-12)
    B = np.arange(16.0).reshape(4, 4) ** 1.5  # nonsymmetric square input also works
    H4 = np.eye(4) - np.ones((4, 4)) / 4
    np.testing.assert_allclose(kernels.center(B), H4 @ B @ H4, atol=1e-10)


def test_affinity_dispatch(X):
    np.testing.assert_array_equal(kernels.affinity(X), kernels.rbf(X))
    np.testing.assert_array_equal(kernels.affinity(X, "rbf", delta=2.0), kernels.rbf(X, 2.0))
    np.testing.assert_array_equal(kernels.affinity(X, "polynomial", degree=3), kernels.polynomial(X, 3))
    np.testing.assert_array_equal(kernels.affinity(X, "linear"), kernels.linear(X))
    np.testing.assert_array_equal(
        kernels.affinity(X, "nearest_neighbors", n_neighbors=3), kernels.knn_affinity(X, 3)
    )
    K = kernels.rbf(X)
    out = kernels.affinity(K, "precomputed")
    np.testing.assert_array_equal(out, K)
    assert out.dtype == float


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda X: kernels.rbf(X, delta=0), "delta"),
        (lambda X: kernels.rbf(X, delta=-1.0), "delta"),
        (lambda X: kernels.rbf(X, delta=np.inf), "delta"),
        (lambda X: kernels.rbf(np.ones((5, 2))), "delta"),  # median distance 0
        (lambda X: kernels.polynomial(X, degree=0), "degree"),
        (lambda X: kernels.polynomial(X, degree=2.5), "degree"),
        (lambda X: kernels.knn_affinity(X, n_neighbors=0), "n_neighbors"),
        (lambda X: kernels.knn_affinity(X, n_neighbors=len(X)), "n_neighbors"),
        (lambda X: kernels.affinity(X, "cosine"), "Unknown affinity kind 'cosine'.*valid"),
        (lambda X: kernels.affinity(X, "rbf", degree=2), "degree"),
        (lambda X: kernels.affinity(X, "precomputed"), "X must be a square"),
        (lambda X: kernels.affinity(np.triu(np.ones((4, 4))), "precomputed"), "X must be symmetric"),
        (lambda X: kernels.affinity(np.full((3, 3), np.nan), "precomputed"), "X contains NaN"),
        (lambda X: kernels.center(np.ones((2, 3))), "K must be a square"),
    ],
)
def test_errors(X, call, match):
    with pytest.raises(ValueError, match=match):
        call(X)


@pytest.mark.parametrize("func", [kernels.rbf, kernels.polynomial, kernels.linear, kernels.knn_affinity,
                                  kernels.median_distance, kernels.affinity])
@pytest.mark.parametrize(
    "bad, match",
    [
        (np.ones(5), "X must be a 2-D"),
        (np.ones((1, 3)), "X must have at least 2 rows"),
        (np.array([[0.0, 1.0], [np.nan, 2.0]]), "X contains NaN"),
        (np.array([["a", "b"], ["c", "d"]]), "X must be a numeric"),
    ],
)
def test_bad_X(func, bad, match):
    with pytest.raises(ValueError, match=match):
        func(bad)
