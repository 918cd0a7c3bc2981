"""Loss-augmented partition matrices (12), the l1/l2 normalizations, the objectives (11)/(13),
the identity Pi~ = Pi L behind the route to CLUHSIC, and Corollary 1 (cvxclust.cluhsical._partition)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from cvxclust import structures
from cvxclust.cluhsic import objective as cluhsic_objective
from cvxclust.cluhsic import partition_matrix as assignment
from cvxclust.cluhsical import (
    column_norms,
    equivalent_output_kernel,
    l2_objective,
    labels_objective,
    loss_transform,
    objective,
    partition_matrix,
    relaxation_output_kernel,
)
from cvxclust.kernels import center, rbf

ASYMMETRIC = np.array([[0.0, 1.0, 4.0, 2.5],
                       [0.5, 0.0, 3.0, 0.0],
                       [2.0, 1.5, 0.0, 1.0],
                       [0.0, 2.0, 0.5, 0.0]])

# (structure, loss): the paper's losses and a user loss that is asymmetric and has zeros off the diagonal
CASES = {
    "zero-one": (structures.chain(4), structures.loss_matrix(structures.chain(4), "zero-one")),
    "chain": (structures.chain(4), structures.loss_matrix(structures.chain(4))),
    "ring": (structures.ring(5), structures.loss_matrix(structures.ring(5))),
    "tree": (structures.tree([2, 2]), structures.loss_matrix(structures.tree([2, 2]))),
    "user": (structures.chain(4), ASYMMETRIC),
}


def kernel(m: int, seed: int = 0, centred: bool = True) -> np.ndarray:
    rng = np.random.default_rng(seed)
    K = rbf(rng.standard_normal((m, 3)))
    return center(K) if centred else K


def random_labels(m: int, c: int, rng) -> np.ndarray:
    return rng.permutation(np.concatenate([np.arange(c), rng.integers(0, c, m - c)]))


def literal_row(loss: np.ndarray, label: int) -> np.ndarray:
    """Row (12) of a point with output y^label, written exactly as the paper does."""
    c = loss.shape[0]
    row = np.empty(c)
    for j in range(c):
        if j == label:
            row[j] = sum(loss[label, y] for y in range(c) if y != label)
        else:
            row[j] = -loss[label, j]
    return row


# -- (12) and L -------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", CASES)
def test_partition_matrix_matches_the_papers_rows(case):
    _, loss = CASES[case]
    c = loss.shape[0]
    labels = random_labels(11, c, np.random.default_rng(1))
    expected = np.array([literal_row(loss, y) for y in labels])
    assert np.allclose(partition_matrix(labels, loss), expected, rtol=0, atol=1e-12)
    L = loss_transform(loss)
    # Pi~ = Pi L, rows sum to zero, and row l of L is (12) for cluster l
    assert np.allclose(assignment(labels, c) @ L, expected, rtol=0, atol=1e-12)
    assert np.allclose(L.sum(axis=1), 0.0, atol=1e-12)
    assert np.allclose(L, np.array([literal_row(loss, l) for l in range(c)]), atol=1e-12)


def test_zero_one_transform_is_c_identity_minus_ones():
    """With the zero-one loss the rows are (23): c - 1 on the own cluster, -1 elsewhere."""
    c = 4
    L = loss_transform(1.0 - np.eye(c))
    assert np.array_equal(L, c * np.eye(c) - np.ones((c, c)))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(3))
def test_column_norms_are_linear_in_the_sizes(case, seed):
    """||Pi~_k||_1 = (|L|^T n)_k and ||Pi~_k||_2^2 = ((L o L)^T n)_k, n the cluster sizes."""
    _, loss = CASES[case]
    c = loss.shape[0]
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, c, 13)  # empty clusters allowed
    n = np.bincount(labels, minlength=c)
    Pi_t = partition_matrix(labels, loss)
    L = loss_transform(loss)
    assert np.allclose(np.abs(Pi_t).sum(axis=0), np.abs(L).T @ n, atol=1e-12)
    assert np.allclose(column_norms(n, loss, "l1"), np.abs(Pi_t).sum(axis=0), atol=1e-12)
    assert np.allclose(column_norms(n, loss, "l2"), np.linalg.norm(Pi_t, axis=0), atol=1e-12)
    # several size vectors at once, one per row
    assert np.allclose(column_norms(np.stack([n, n + 1]), loss, "l1")[1], np.abs(L).T @ (n + 1))


@pytest.mark.parametrize("case", ["zero-one", "chain", "ring", "tree"])
def test_normalized_columns(case):
    """l1: every column has unit l1 norm, so ||Pi||_1 = c is constant (why (11) loses C, gamma);
    l2: unit l2 columns.  Normalization rescales the columns of Pi~ and nothing else."""
    _, loss = CASES[case]
    c = loss.shape[0]
    labels = random_labels(12, c, np.random.default_rng(2))
    Pi_t = partition_matrix(labels, loss)
    P1, P2 = partition_matrix(labels, loss, "l1"), partition_matrix(labels, loss, "l2")
    assert np.allclose(np.abs(P1).sum(axis=0), 1.0)
    assert np.abs(P1).sum() == pytest.approx(c)
    assert np.allclose(np.linalg.norm(P2, axis=0), 1.0)
    assert np.allclose(P1 * np.abs(Pi_t).sum(axis=0), Pi_t)
    assert np.allclose(P2 * np.linalg.norm(Pi_t, axis=0), Pi_t)


def test_zero_column_stays_zero():
    """All points in cluster 0 and Delta(0, 1) = 0: column 1 of Pi~ is zero; the normalized
    forms keep it at zero (no NaN) and the objectives stay finite."""
    loss = np.array([[0.0, 0.0, 2.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]])
    labels = np.zeros(5, dtype=int)
    Pi_t = partition_matrix(labels, loss)
    assert np.all(Pi_t[:, 1] == 0)
    K, A = kernel(5), np.eye(3)
    for normalization in ("l1", "l2"):
        P = partition_matrix(labels, loss, normalization)
        assert np.all(np.isfinite(P)) and np.all(P[:, 1] == 0)
        assert np.count_nonzero(np.linalg.norm(P, axis=0) > 0) == 2
        assert np.isfinite(labels_objective(K, A, labels, loss, normalization))


# -- objectives ---------------------------------------------------------------------------------------
def test_objective_is_the_trace():
    rng = np.random.default_rng(3)
    K, A = kernel(9), structures.output_kernel(structures.tree([2, 2]))
    P = rng.standard_normal((9, 4))
    assert objective(K, A, P) == pytest.approx(np.trace(K @ P @ A @ P.T), rel=1e-12)
    assert objective(K, A, P) == pytest.approx(cluhsic_objective(K, A, P), rel=1e-12)


@pytest.mark.parametrize("C, gamma", [(None, 1.0), (2.0, 0.5), (30.0, 1e-3)])
def test_l2_objective_is_11_with_l2_columns(C, gamma):
    S = structures.ring(5)
    m, A, loss = 15, structures.output_kernel(S), structures.loss_matrix(S)
    K = kernel(m)
    labels = random_labels(m, 5, np.random.default_rng(4))
    P2 = partition_matrix(labels, loss, "l2")
    C_value = 0.1 * m if C is None else C
    C_tilde = 4 * C_value**2 * gamma / m**2
    expected = C_tilde * np.trace(K @ P2 @ A @ P2.T) - C_value / m * np.abs(P2).sum()
    kwargs = {} if C is None else {"C": C}
    assert l2_objective(K, A, labels, loss, gamma=gamma, **kwargs) == pytest.approx(expected, rel=1e-12)
    assert labels_objective(K, A, labels, loss, "l2", gamma=gamma, **kwargs) == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", range(4))
def test_equivalent_output_kernel_identity(case, seed):
    """tr(K Pi~ A Pi~^T) = tr(K Pi (L A L^T) Pi^T) for any labels: CLUHSIC (2) with A' = L A L^T."""
    structure, loss = CASES[case]
    c = loss.shape[0]
    A = structures.output_kernel(structure)
    rng = np.random.default_rng(seed)
    m = 10
    K = kernel(m, seed)
    labels = rng.integers(0, c, m)
    A_eq = equivalent_output_kernel(A, loss)
    value = objective(K, A, partition_matrix(labels, loss))
    assert value == pytest.approx(cluhsic_objective(K, A_eq, assignment(labels, c)), rel=1e-10, abs=1e-10)
    assert value == pytest.approx(labels_objective(K, A, labels, loss), rel=1e-12, abs=1e-12)
    L = loss_transform(loss)
    assert np.allclose(A_eq, L @ A @ L.T) and np.allclose(A_eq, A_eq.T)
    assert np.linalg.eigvalsh(A_eq).min() >= -1e-10 * np.abs(A_eq).max()


def balanced_partitions(m: int, c: int, sizes=None):
    sizes = np.full(c, m // c) if sizes is None else np.asarray(sizes)
    for labels in itertools.product(range(c), repeat=m):
        labels = np.array(labels)
        if np.array_equal(np.bincount(labels, minlength=c), sizes):
            yield labels


@pytest.mark.parametrize("case", ["zero-one", "chain", "user"])
def test_l1_and_unnormalized_carry_over_on_balanced_partitions(case):
    """m/c times CLUHSIC's normalized objective (2.4) with relaxation_output_kernel equals the
    CLUHSICAL objective for every balanced partition of an 8-point set (l1, none and l2 up to
    (11)'s constant penalty); on an unbalanced partition the identity does not hold."""
    structure, loss = CASES[case]
    c, m = 4, 8
    A = structures.output_kernel(structure)
    K = kernel(m, 5)
    B1 = relaxation_output_kernel(A, loss, "l1", n_samples=m)
    B0 = relaxation_output_kernel(A, loss)
    B2 = relaxation_output_kernel(A, loss, "l2", n_samples=m)
    L = loss_transform(loss)
    nu = np.abs(L).T @ np.full(c, m / c)
    N = np.diag(1 / nu)
    assert np.allclose(B1, L @ N @ A @ N @ L.T) and np.allclose(B0, equivalent_output_kernel(A, loss))
    C, gamma = 0.1 * m, 1.0
    C_tilde = 4 * C**2 * gamma / m**2
    norms2 = column_norms(np.full(c, m / c), loss, "l2")
    penalty = C / m * np.sum(nu / norms2)
    count = 0
    for labels in balanced_partitions(m, c):
        P = assignment(labels, c, normalization="l2")
        assert m / c * cluhsic_objective(K, B1, P) == pytest.approx(
            labels_objective(K, A, labels, loss, "l1"), rel=1e-10, abs=1e-12)
        assert m / c * cluhsic_objective(K, B0, P) == pytest.approx(
            labels_objective(K, A, labels, loss), rel=1e-10, abs=1e-10)
        assert C_tilde * m / c * cluhsic_objective(K, B2, P) - penalty == pytest.approx(
            l2_objective(K, A, labels, loss, C=C, gamma=gamma), rel=1e-10, abs=1e-12)
        count += 1
    assert count == 2520  # 8! / (2!)^4
    unbalanced = np.array([0, 0, 0, 0, 0, 1, 2, 3])
    P = assignment(unbalanced, c, normalization="l2")
    assert abs(m / c * cluhsic_objective(K, B1, P) - labels_objective(K, A, unbalanced, loss, "l1")) > 1e-6


def test_carry_over_with_given_sizes():
    """With sizes n the kernel S L N A N L^T S (S = diag(sqrt(n / mean n))) is exact on every
    partition of those sizes."""
    structure, loss = CASES["tree"]
    A = structures.output_kernel(structure)
    m, c, sizes = 7, 4, [1, 2, 3, 1]
    K = kernel(m, 6)
    for normalization in (None, "l1"):
        B = relaxation_output_kernel(A, loss, normalization, sizes, n_samples=m)
        count = 0
        for labels in balanced_partitions(m, c, sizes):
            P = assignment(labels, c, normalization="l2")
            assert m / c * cluhsic_objective(K, B, P) == pytest.approx(
                labels_objective(K, A, labels, loss, normalization), rel=1e-10, abs=1e-12)
            count += 1
        assert count == 420  # 7! / (2! 3!)


# -- Corollary 1 ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("A_kind", ["chain", "identity"])
def test_corollary_1_zero_one_loss(A_kind):
    """With the zero-one loss and a centred K, tr(K Pi~ A Pi~^T) = c^2 tr(K Pi A Pi^T) for every
    partition of 7 points into 3 clusters, so unnormalized CLUHSICAL and CLUHSIC (2) pick the
    same partition; ||Pi~||_1 = 2 m (c - 1) is constant (Lemma 5), so the unnormalized (11)
    is C~ c^2 CLUHSIC minus a constant.  With an uncentred K the proportionality fails."""
    m, c = 7, 3
    A = structures.output_kernel(structures.chain(c)) if A_kind == "chain" else np.eye(c)
    loss = 1.0 - np.eye(c)
    K = kernel(m, 7)
    K_raw = kernel(m, 7, centred=False)
    C, gamma = 0.1 * m, 1.0
    C_tilde = 4 * C**2 * gamma / m**2
    ours, theirs, ratio_raw = [], [], []
    for labels in itertools.product(range(c), repeat=m):
        labels = np.array(labels)
        Pi_t = partition_matrix(labels, loss)
        value = objective(K, A, Pi_t)
        reference = cluhsic_objective(K, A, assignment(labels, c))
        assert value == pytest.approx(c**2 * reference, rel=1e-10, abs=1e-10)
        assert np.abs(Pi_t).sum() == 2 * m * (c - 1)
        unnormalized_11 = C_tilde * value - C / m * np.abs(Pi_t).sum()
        assert unnormalized_11 == pytest.approx(C_tilde * c**2 * reference - 2 * C * (c - 1), rel=1e-10, abs=1e-10)
        ours.append(value)
        theirs.append(reference)
        raw = cluhsic_objective(K_raw, A, assignment(labels, c))
        ratio_raw.append(objective(K_raw, A, Pi_t) / raw if abs(raw) > 1e-9 else np.nan)
    assert len(ours) == c**m
    best_ours = np.flatnonzero(np.isclose(ours, max(ours), rtol=1e-12))
    best_theirs = np.flatnonzero(np.isclose(theirs, max(theirs), rtol=1e-12))
    assert np.array_equal(best_ours, best_theirs)
    assert np.nanmax(ratio_raw) - np.nanmin(ratio_raw) > 1.0  # the centring matters


# -- bad input -----------------------------------------------------------------------------------------
LABELS = np.array([0, 1, 2, 1, 0])
LOSS = 1.0 - np.eye(3)


@pytest.mark.parametrize("call, match", [
    (lambda: partition_matrix(LABELS, LOSS + np.eye(3)), "loss"),
    (lambda: partition_matrix(LABELS, LOSS - 2 * np.eye(3)[::-1]), "loss"),  # negative off-diagonal entries
    (lambda: partition_matrix(LABELS, np.ones((3, 2))), "loss"),
    (lambda: partition_matrix(LABELS, [[0.0, np.nan], [1.0, 0.0]]), "loss"),
    (lambda: partition_matrix(LABELS, np.zeros((1, 1))), "loss"),
    (lambda: partition_matrix([0, 1, 3], LOSS), "labels"),
    (lambda: partition_matrix([0, -1, 2], LOSS), "labels"),
    (lambda: partition_matrix([0.5, 1, 2], LOSS), "labels"),
    (lambda: partition_matrix(LABELS, LOSS, "l3"), "normalization"),
    (lambda: partition_matrix(LABELS, LOSS, "L1"), "normalization"),
    (lambda: partition_matrix(LABELS, LOSS, n_clusters=4), "n_clusters"),
    (lambda: loss_transform(-LOSS), "loss"),
    (lambda: column_norms([1, 2], LOSS, "l1"), "sizes"),
    (lambda: column_norms([1, 2, 3], LOSS, None), "normalization"),
    (lambda: objective(np.eye(5), np.eye(3), np.ones((5, 2))), "Pi"),
    (lambda: objective(np.ones((5, 4)), np.eye(3), np.ones((5, 3))), "K"),
    (lambda: objective(np.eye(5), [[1.0, 2.0], [0.0, 1.0]], np.ones((5, 2))), "A"),
    (lambda: l2_objective(np.eye(5), np.eye(3), LABELS, LOSS, C=-1.0), "C"),
    (lambda: l2_objective(np.eye(5), np.eye(3), LABELS, LOSS, gamma=0.0), "gamma"),
    (lambda: l2_objective(np.eye(5), np.eye(3), LABELS[:4], LOSS), "labels"),
    (lambda: labels_objective(np.eye(5), np.eye(3), LABELS, LOSS, "max"), "normalization"),
    (lambda: equivalent_output_kernel(np.eye(4), LOSS), "loss"),
    (lambda: equivalent_output_kernel(np.eye(3), LOSS + np.eye(3)), "loss"),
    (lambda: relaxation_output_kernel(np.eye(3), LOSS, "l1"), "n_samples"),
    (lambda: relaxation_output_kernel(np.eye(3), LOSS, "l1", n_samples=2), "n_samples"),
    (lambda: relaxation_output_kernel(np.eye(3), LOSS, "l1", [1, 2]), "sizes"),
    (lambda: relaxation_output_kernel(np.eye(3), LOSS, "l1", [1, 0, 2]), "sizes"),
    (lambda: relaxation_output_kernel(np.eye(3), LOSS, "l1", [1, 2, 2], n_samples=6), "sizes"),
    (lambda: relaxation_output_kernel(np.eye(3), LOSS, "l0", n_samples=6), "normalization"),
])
def test_bad_input_names_the_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()
