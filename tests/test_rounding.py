import numpy as np
import pytest

from cvxclust import metrics, rounding
from cvxclust.rounding import _discretize_from, _normalized_embedding


def _blocks(sizes=(5, 9, 16), noise=0.0, seed=0):
    """Shuffled block-diagonal affinity with unequal block sizes, and its labels."""
    rng = np.random.RandomState(seed)
    y = np.repeat(np.arange(len(sizes)), sizes)
    A = (y[:, None] == y[None, :]).astype(float)
    if noise:
        E = noise * rng.rand(len(y), len(y))
        A = A + (E + E.T) / 2
    perm = rng.permutation(len(y))
    return A[np.ix_(perm, perm)], y[perm]


def test_spectral_embedding_top_eigenvectors():
    rng = np.random.RandomState(0)
    B = rng.randn(8, 8)
    A = B + B.T
    V = rounding.spectral_embedding(A, 3)
    w, U = np.linalg.eigh(A)
    assert V.shape == (8, 3)
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(A @ V, V * w[::-1][:3], atol=1e-10)
    np.testing.assert_allclose(np.abs(V), np.abs(U[:, ::-1][:, :3]), atol=1e-10)
    # deterministic signs: largest-magnitude entry of each column is positive
    assert np.all(V[np.argmax(np.abs(V), axis=0), np.arange(3)] > 0)


@pytest.mark.parametrize("method", ["discretize", "kmeans"])
@pytest.mark.parametrize("noise", [0.0, 0.3])
def test_recovers_unequal_blocks_exactly(method, noise):
    A, y = _blocks(noise=noise)
    labels = rounding.round_labels(A, 3, method, random_state=0)
    assert labels.shape == y.shape
    assert metrics.error_rate(y, labels) == 0.0
    assert len(np.unique(labels)) == 3


def test_direct_functions_match_dispatcher():
    A, y = _blocks(seed=3)
    np.testing.assert_array_equal(rounding.discretize(A, 3, random_state=1),
                                  rounding.round_labels(A, 3, "discretize", random_state=1))
    np.testing.assert_array_equal(rounding.kmeans_rounding(A, 3, random_state=1),
                                  rounding.round_labels(A, 3, "kmeans", random_state=1))


def test_discretize_objective_on_exact_blocks_is_n():
    # partition matrix aligned exactly with the embedding: tr(S) = n
    A, y = _blocks()
    labels, obj = rounding.discretize(A, 3, random_state=0, return_objective=True)
    assert obj == pytest.approx(len(y), rel=1e-10)
    assert metrics.accuracy(y, labels) == 1.0


def test_discretize_keeps_best_restart():
    rng = np.random.RandomState(5)
    B = rng.rand(40, 40)
    A = B + B.T  # no clear clusters: restarts end in different local optima
    U = _normalized_embedding(A, 4)
    firsts = np.random.RandomState(7).randint(40, size=12)
    singles = [_discretize_from(U, int(f), 30) for f in firsts]
    labels, best = rounding.discretize(A, 4, n_init=12, random_state=7, return_objective=True)
    objectives = [obj for _, obj, _ in singles]
    assert len(set(np.round(objectives, 8))) > 1, "test instance should have distinct local optima"
    assert all(best >= obj for obj in objectives)
    assert best == max(objectives)
    np.testing.assert_array_equal(labels, singles[int(np.argmax(objectives))][0])
    # public API: more restarts from the same seed (which share the first restart) never hurt
    _, one = rounding.discretize(A, 4, n_init=1, random_state=7, return_objective=True)
    assert best >= one
    assert one == pytest.approx(objectives[0])
    assert best <= 40 + 1e-9


def test_discretize_objective_monotone_within_restart():
    rng = np.random.RandomState(2)
    B = rng.rand(30, 30)
    U = _normalized_embedding(B + B.T, 3)
    prev = -np.inf
    for it in range(1, 8):
        _, obj, _ = _discretize_from(U, 0, it)
        assert obj >= prev - 1e-12
        prev = obj


def test_reproducible_with_seed():
    A, _ = _blocks(noise=0.8, seed=4)
    for method in ("discretize", "kmeans"):
        a = rounding.round_labels(A, 3, method, random_state=11)
        b = rounding.round_labels(A, 3, method, random_state=11)
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda A: rounding.round_labels(A, 3, "spectral"), "Unknown method 'spectral'.*valid"),
        (lambda A: rounding.round_labels(A, 1), "n_clusters"),
        (lambda A: rounding.round_labels(A, 31), "n_clusters"),
        (lambda A: rounding.round_labels(A, 2.0), "n_clusters"),
        (lambda A: rounding.discretize(A, 0), "n_clusters"),
        (lambda A: rounding.kmeans_rounding(A, 40), "n_clusters"),
        (lambda A: rounding.discretize(A, 3, n_init=0), "n_init"),
        (lambda A: rounding.discretize(A, 3, max_iter=0), "max_iter"),
        (lambda A: rounding.kmeans_rounding(A, 3, n_init=0), "n_init"),
        (lambda A: rounding.spectral_embedding(A, 0), "n_components"),
        (lambda A: rounding.spectral_embedding(A, 31), "n_components"),
        (lambda A: rounding.round_labels(np.triu(A), 3), "A must be symmetric"),
        (lambda A: rounding.discretize(A[:, :5], 3), "A must be a square"),
        (lambda A: rounding.kmeans_rounding(np.full((4, 4), np.inf), 2), "A contains NaN"),
    ],
)
def test_errors(call, match):
    A, _ = _blocks()
    with pytest.raises(ValueError, match=match):
        call(A)


def test_spectral_embedding_on_a_degenerate_spectrum():
    # LAPACK's subset eigensolver returns no vector for this matrix (all eigenvalues equal, with
    # subnormal entries); the embedding falls back to the full decomposition
    A = np.eye(178) * 0.5 + 1e-300
    V = rounding.spectral_embedding(A, 3)
    assert V.shape == (178, 3)
    np.testing.assert_allclose(V.T @ V, np.eye(3), atol=1e-12)
