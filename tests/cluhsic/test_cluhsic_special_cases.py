"""DIFFRAC (3.5)-(3.7) and DisKmeans (Proposition 1) as CLUHSIC, checked on every partition of
tiny data sets against the original criteria with their inner variables optimized independently
(least squares for W, the generalized eigenproblem checked by direct evaluation for B)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cvxclust.hsic import objective, partition_matrix
from cvxclust.cluhsic._special_cases import (
    diffrac_cost,
    diffrac_kernel,
    diskmeans_criterion,
    diskmeans_kernel,
)

CHAIN3 = np.array([[2.0, 1, 0], [1, 2, 1], [0, 1, 2]])  # p.d., constant diagonal 2
RING4 = np.array([[2.0, 1, 0, 1], [1, 2, 1, 0], [0, 1, 2, 1], [1, 0, 1, 2]])  # p.s.d., singular (eigenvalue 0)


def labelings(m: int, c: int) -> np.ndarray:
    """Every assignment of m points to c clusters (so every partition, in every labelling)."""
    return np.array(list(itertools.product(range(c), repeat=m)))


def sqrt_psd(A: np.ndarray) -> np.ndarray:
    w, V = np.linalg.eigh(A)
    return (V * np.sqrt(np.clip(w, 0, None))) @ V.T


def ridge_minimum(X, T, kappa, *, intercept=False) -> float:
    """``min_{W,b} (1/m)||T - X W - 1 b^T||_F^2 + kappa ||W||_F^2`` by least squares on the stacked
    system: independent of the closed forms under test."""
    m, d = X.shape
    design = np.hstack([X, np.ones((m, 1))]) if intercept else X
    penalty = np.hstack([np.sqrt(kappa) * np.eye(d), np.zeros((d, design.shape[1] - d))])
    lhs = np.vstack([design / np.sqrt(m), penalty])
    rhs = np.vstack([T / np.sqrt(m), np.zeros((d, T.shape[1]))])
    sol = np.linalg.lstsq(lhs, rhs, rcond=None)[0]
    return float(np.sum((lhs @ sol - rhs) ** 2))


def argbest(values: np.ndarray, *, maximize: bool, tol: float = 1e-9) -> set[int]:
    best = values.max() if maximize else values.min()
    return set(np.flatnonzero(np.abs(values - best) <= tol * max(1.0, abs(best))))


# ------------------------------------------------------------------------------------ DIFFRAC


@pytest.mark.parametrize("m, d, c, kappa", [(7, 2, 3, 0.1), (6, 3, 2, 0.02), (6, 2, 3, 1.0)])
def test_diffrac_36_on_every_partition(m, d, c, kappa):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, d)) + 3.0  # offset: centring matters
    Xc = X - X.mean(axis=0)
    K = diffrac_kernel(X, kappa)
    costs, traces = [], []
    for labels in labelings(m, c):
        Pi = partition_matrix(labels, c)
        J = ridge_minimum(Xc, Pi, kappa)  # (3.5) with W optimized out
        trace = objective(K, np.eye(c), Pi)  # tr(K~ Pi Pi^T)
        # (3.5) = -(1/m) tr((K~ - I) Pi Pi^T) = 1 - tr(K~ Pi Pi^T) / m   (tr(Pi Pi^T) = m)
        assert J == pytest.approx(1.0 - trace / m, abs=1e-10)
        assert J == pytest.approx(-np.trace((K - np.eye(m)) @ Pi @ Pi.T) / m, abs=1e-10)
        assert diffrac_cost(Xc, labels, kappa) == pytest.approx(J, abs=1e-10)
        costs.append(J)
        traces.append(trace)
    assert argbest(np.array(costs), maximize=False) == argbest(np.array(traces), maximize=True)


@pytest.mark.parametrize("m, A", [(7, CHAIN3), (6, RING4)], ids=["chain3-pd", "ring4-psd-singular"])
def test_diffrac_structured_37_on_every_partition(m, A):
    rng = np.random.default_rng(0)
    c, dA = A.shape[0], A[0, 0]
    X = rng.standard_normal((m, 2)) - 1.0
    Xc = X - X.mean(axis=0)
    kappa = 0.05
    K = diffrac_kernel(X, kappa)
    root = sqrt_psd(A)
    costs, values = [], []
    for labels in labelings(m, c):
        Pi = partition_matrix(labels, c)
        # tr(Z A Z^T) = ||Z A^{1/2}||^2 and W' = W A^{1/2}: a plain ridge problem with target Pi A^{1/2}
        J = ridge_minimum(Xc, Pi @ root, kappa)
        value = objective(K, A, Pi)
        assert J == pytest.approx(dA - value / m, abs=1e-10)  # A_ii = d: tr(Pi A Pi^T) = m d
        assert diffrac_cost(Xc, labels, kappa, A) == pytest.approx(J, abs=1e-10)
        costs.append(J)
        values.append(value)
    assert argbest(np.array(costs), maximize=False) == argbest(np.array(values), maximize=True)


@pytest.mark.parametrize("A", [np.eye(3), CHAIN3])
def test_diffrac_with_intercept_adds_a_cluster_size_term(A):
    rng = np.random.default_rng(0)
    m, c, kappa = 7, 3, 0.1
    X = rng.standard_normal((m, 2)) + 5.0  # uncentred: the intercept does the centring
    K = diffrac_kernel(X, kappa)
    root = sqrt_psd(A)
    gaps = []
    for labels in labelings(m, c)[::7]:
        Pi = partition_matrix(labels, c)
        L = Pi @ A @ Pi.T
        J = ridge_minimum(X, Pi @ root, kappa, intercept=True)
        assert J == pytest.approx((np.trace(L) - L.sum() / m - np.sum(K * L)) / m, abs=1e-10)
        assert diffrac_cost(X, labels, kappa, A, intercept=True) == pytest.approx(J, abs=1e-10)
        gaps.append(J - (A[0, 0] - np.sum(K * L) / m))
    # the extra term -1^T Pi A Pi^T 1 / m^2 depends on the partition: not a constant shift
    assert np.ptp(gaps) > 1e-3


@pytest.mark.parametrize("shape", [(9, 3), (5, 8)], ids=["d<m", "d>m"])
def test_diffrac_kernel_matches_definition(shape):
    rng = np.random.default_rng(0)
    X = rng.standard_normal(shape) + 2.0
    m, d = shape
    kappa = 0.3
    Xc = X - X.mean(axis=0)
    expected = Xc @ np.linalg.inv(Xc.T @ Xc + m * kappa * np.eye(d)) @ Xc.T
    K = diffrac_kernel(X, kappa)
    np.testing.assert_allclose(K, expected, atol=1e-12)
    np.testing.assert_array_equal(K, K.T)
    np.testing.assert_allclose(K @ np.ones(m), 0.0, atol=1e-12)  # centred, as CLUHSIC assumes
    w = np.linalg.eigvalsh(K)
    assert w.min() > -1e-12 and w.max() < 1.0
    raw = X @ np.linalg.inv(X.T @ X + m * kappa * np.eye(d)) @ X.T
    np.testing.assert_allclose(diffrac_kernel(X, kappa, center=False), raw, atol=1e-12)


def test_diffrac_bad_input():
    X = np.random.default_rng(0).standard_normal((5, 2))
    bad = X.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="X"):
        diffrac_kernel(bad, 0.1)
    with pytest.raises(ValueError, match="X"):
        diffrac_kernel(X[0], 0.1)
    for kappa in (0.0, -1.0, np.inf, "a"):
        with pytest.raises(ValueError, match="kappa"):
            diffrac_kernel(X, kappa)
    with pytest.raises(ValueError, match="center"):
        diffrac_kernel(X, 0.1, center="yes")
    with pytest.raises(ValueError, match="labels"):
        diffrac_cost(X, np.ones((4, 2)), 0.1, np.eye(2))


@pytest.mark.parametrize("A", [None, np.eye(2)])
@pytest.mark.parametrize("labels", [
    None,  # was an IndexError
    -np.ones(5, dtype=int),  # was a message about A
    np.full(5, np.nan),  # was "cannot convert float NaN to integer"
    np.array(list("ababa")),  # was a UFuncTypeError
    [0, 1, 0, 1],
    [[0, 1], [1]],
    np.ones((5, 2)) * (1 + 1j),  # was cast to real with a ComplexWarning
    np.ones((5, 2, 1)),
])
def test_diffrac_cost_refuses_bad_labels_naming_them(labels, A):
    X = np.random.default_rng(0).standard_normal((5, 2))
    with pytest.raises(ValueError, match="^labels"):
        diffrac_cost(X, labels, 0.1, A)


def test_diffrac_cost_flag_and_default_output_kernel():
    """``intercept`` is a bool (a truthy string was refused naming ``center``); without A the
    clusters are those of the labels (or the columns of Pi), as with the identity given."""
    X = np.random.default_rng(0).standard_normal((6, 2))
    labels = np.array([0, 1, 2, 0, 1, 2])
    for flag in ("yes", 1, None):
        with pytest.raises(ValueError, match="^intercept"):
            diffrac_cost(X, labels, 0.1, intercept=flag)
    Pi = partition_matrix(labels, 3)
    assert diffrac_cost(X, labels, 0.1) == diffrac_cost(X, labels, 0.1, np.eye(3)) == diffrac_cost(X, Pi, 0.1)
    assert diffrac_cost(X, labels, 0.1, intercept=np.True_) == diffrac_cost(X, labels, 0.1, intercept=True)


# ------------------------------------------------------------------------------------ DisKmeans


def diskmeans_312(K, A, P, lam, B) -> float:
    """(3.12) evaluated directly at a given B."""
    S = B.T @ (K @ K + lam * K) @ B
    T = B.T @ K @ P @ A @ P.T @ K @ B
    return float(np.trace(np.linalg.solve(S, T)))


def diskmeans_data(m=7, d=4, centred=True):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((m, d)) + 1.0
    if centred:
        X = X - X.mean(axis=0)
    return X @ X.T  # K = X X^T of rank min(d, m - 1) (centred) or min(d, m)


@pytest.mark.parametrize("A", [np.eye(3), CHAIN3], ids=["A=I", "chain"])
@pytest.mark.parametrize("centred", [True, False])
def test_proposition1_identity_on_every_partition(A, centred):
    """g_b(P) = tr[(I - (I + K/lam)^{-1}) P A P^T] for rank(K P A P^T K) <= b <= rank K:
    b = c - 1 for a centred K, b = c otherwise."""
    m, c, lam = 7, 3, 0.5
    K = diskmeans_data(m, centred=centred)
    b = c - 1 if centred else c
    Kt = diskmeans_kernel(K, lam)
    criteria, values = [], []
    for labels in labelings(m, c):
        P = partition_matrix(labels, c, normalization="l2")
        g = diskmeans_criterion(K, A, labels, lam, b)
        value = objective(Kt, A, P)
        assert g == pytest.approx(value, abs=1e-10)
        criteria.append(g)
        values.append(value)
    assert argbest(np.array(criteria), maximize=True) == argbest(np.array(values), maximize=True)


def test_diskmeans_criterion_is_the_maximum_over_B():
    """The generalized eigenvectors attain (3.12); no random B does better."""
    rng = np.random.default_rng(0)
    m, c, lam = 7, 3, 0.5
    K = diskmeans_data(m)
    for labels in labelings(m, c)[rng.choice(c**m, size=10, replace=False)]:
        P = partition_matrix(labels, c, normalization="l2")
        for b in (1, 2):
            g, B = diskmeans_criterion(K, CHAIN3, labels, lam, b, return_B=True)
            assert B.shape == (m, b)
            assert diskmeans_312(K, CHAIN3, P, lam, B) == pytest.approx(g, rel=1e-9, abs=1e-12)
            for _ in range(50):
                trial = rng.standard_normal((m, b))
                assert diskmeans_312(K, CHAIN3, P, lam, trial) <= g + 1e-9


def test_diskmeans_small_b_is_only_a_lower_bound():
    """With b = 1 < rank(K P A P^T K) the identity fails: g_1 is the largest generalized
    eigenvalue only, below the transformed-kernel objective for some partitions."""
    m, c, lam = 7, 3, 0.5
    K = diskmeans_data(m)
    Kt = diskmeans_kernel(K, lam)
    gaps = []
    for labels in labelings(m, c)[::5]:
        value = objective(Kt, CHAIN3, partition_matrix(labels, c, normalization="l2"))
        gaps.append(value - diskmeans_criterion(K, CHAIN3, labels, lam, 1))
    gaps = np.array(gaps)
    assert gaps.min() > -1e-10
    assert gaps.max() > 1e-3


def test_diskmeans_kernel_matches_definition():
    K = diskmeans_data(8, 3)
    lam = 0.7
    Kt = diskmeans_kernel(K, lam)
    expected = np.eye(8) - np.linalg.inv(np.eye(8) + K / lam)
    np.testing.assert_allclose(Kt, expected, atol=1e-12)
    np.testing.assert_array_equal(Kt, Kt.T)
    np.testing.assert_allclose(Kt @ np.ones(8), 0.0, atol=1e-12)  # centred K -> centred K~


def test_diskmeans_bad_input():
    K = diskmeans_data()
    with pytest.raises(ValueError, match="K"):
        diskmeans_kernel(-K - np.eye(7), 1.0)
    with pytest.raises(ValueError, match="K"):
        diskmeans_kernel(K[:3], 1.0)
    with pytest.raises(ValueError, match="lam"):
        diskmeans_kernel(K, 0.0)
    with pytest.raises(ValueError, match="n_components"):
        diskmeans_criterion(K, np.eye(3), np.zeros(7, dtype=int), 1.0, 7)  # rank K = 4 < 7
    with pytest.raises(ValueError, match="P"):
        diskmeans_criterion(K, np.eye(3), np.ones((7, 2)), 1.0, 1)
    with pytest.raises(ValueError, match="^P must be real"):  # was cast to real with a ComplexWarning
        diskmeans_criterion(K, np.eye(3), np.ones((7, 3)) * (1 + 1j), 1.0, 1)
    with pytest.raises(ValueError, match="^return_B"):  # a truthy string returned B
        diskmeans_criterion(K, np.eye(3), np.zeros(7, dtype=int), 1.0, 1, return_B="no")


def test_diskmeans_float32_kernel_and_inputs():
    """A float32 p.s.d. kernel, indefinite only by its rounding, is accepted (with the float64
    kernel's answer to float32 accuracy); NaN is refused naming K; the inputs are not modified."""
    K = diskmeans_data()
    m = K.shape[0]
    top = np.linalg.eigvalsh(K)[-1]
    # moved along a null vector by twice the float32 precision, then rounded to float32
    null = np.linalg.eigh(K)[1][:, 0]
    K32 = (K - 2 * np.finfo(np.float32).eps * top * np.outer(null, null)).astype(np.float32)
    w = np.linalg.eigvalsh(K32.astype(float))
    assert w[0] < -1e-10 * w[-1]
    copy = K32.copy()
    np.testing.assert_allclose(diskmeans_kernel(K32, 0.7), diskmeans_kernel(K, 0.7), atol=1e-5)
    labels = np.arange(m) % 3
    assert diskmeans_criterion(K32, np.eye(3), labels, 0.7, 2) == pytest.approx(
        diskmeans_criterion(K, np.eye(3), labels, 0.7, 2), rel=1e-5)
    np.testing.assert_array_equal(K32, copy)
    bad = K.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="K"):
        diskmeans_kernel(bad, 1.0)
    with pytest.raises(ValueError, match="K"):
        diskmeans_criterion(bad, np.eye(3), labels, 0.7, 2)
