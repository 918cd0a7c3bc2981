"""The structured estimators find the structure on easy data: the refinement (placement of whole
clusters on the structure + greedy), its pieces, the data generator, and the partition certificate."""

import itertools
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from cvxclust._local_search import best_relabelling
from cvxclust.cluhsic import (CLUHSIC, CLUHSICSDP, align_clusters, certify_partition, greedy, lowrank, nmf,
                              objective, partition_matrix, refine, round_best)
from cvxclust.cluhsical import CLUHSICAL, labels_objective
from cvxclust.datasets import rotating_object, structure_layout, structured_blobs
from cvxclust.kernels import center, kernel_embedding, kernel_kmeans, rbf
from cvxclust.structures import chain, flat, kron, output_kernel, ring, tree

EASY = [(chain(6), 90), (chain(8), 120), (ring(8), 96), (tree([2, 2, 2]), 80), (tree([3, 3]), 90),
        (kron(flat(2), chain(3)), 72)]
IDS = ["chain6", "chain8", "ring8", "tree222", "tree33", "flat2xchain3"]


def _problem(structure, m, seed=0):
    X, y = structured_blobs(structure, m, random_state=seed)
    return X, y, center(rbf(X)), output_kernel(structure)


def _truth(K, A, y):
    return objective(K, A, partition_matrix(y, A.shape[0], normalization="l2"))


# --------------------------------------------------------------------------- the data


def test_layout_follows_the_structure():
    C = structure_layout(chain(5), spacing=2.0)
    D = np.linalg.norm(C[:, None] - C[None], axis=2)
    np.testing.assert_allclose(D, 2.0 * np.abs(np.subtract.outer(np.arange(5), np.arange(5))), atol=1e-9)
    C = structure_layout(ring(6))
    D = np.linalg.norm(C[:, None] - C[None], axis=2)
    np.testing.assert_allclose([D[k, (k + 1) % 6] for k in range(6)], 1.0, atol=1e-9)  # a regular hexagon
    C = structure_layout(tree([2, 2]))  # siblings 2 apart (through the parent), cousins 4
    D = np.linalg.norm(C[:, None] - C[None], axis=2)
    np.testing.assert_allclose(D[0], [0, 2, 4, 4], atol=1e-9)


def test_blobs_shapes_labels_and_reproducibility():
    X, y = structured_blobs(ring(5), 23, random_state=3)
    assert X.shape[0] == 23 and np.all(np.diff(y) >= 0) and set(y) == set(range(5))
    assert np.bincount(y).max() - np.bincount(y).min() <= 1
    X2, y2 = structured_blobs(ring(5), 23, random_state=3)
    np.testing.assert_array_equal(X, X2)
    X0, _ = structured_blobs(chain(3), 9, cluster_std=0.0, random_state=0)
    np.testing.assert_allclose(np.unique(np.round(X0.ravel(), 9)).size, 3)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_samples": 3}, "n_samples"),
    ({"spacing": 0.0}, "spacing"),
    ({"cluster_std": -1.0}, "cluster_std"),
    ({"random_state": "x"}, "random_state"),
])
def test_blobs_bad_input(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        structured_blobs(chain(4), **{"n_samples": 20, **kwargs})


def test_kernel_embedding_reproduces_the_kernel():
    X, _ = structured_blobs(chain(3), 30, random_state=0)
    K = rbf(X)
    Phi = kernel_embedding(K)
    np.testing.assert_allclose(Phi @ Phi.T, K, atol=1e-8)
    with pytest.raises(ValueError, match="positive eigenvalue"):
        kernel_embedding(-np.eye(3))


# --------------------------------------------------------------------------- the pieces


def test_alignment_repairs_a_scrambled_chain():
    # the right groups in a scrambled order along the chain: no single-point move repairs it
    X, y, K, A = _problem(chain(6), 90)
    scrambled = np.array([3, 0, 5, 1, 4, 2])[y]
    before = objective(K, A, partition_matrix(scrambled, 6, normalization="l2"))
    aligned = align_clusters(K, A, scrambled, random_state=0)
    assert before < _truth(K, A, y) - 1.0
    assert objective(K, A, partition_matrix(aligned, 6, normalization="l2")) == pytest.approx(_truth(K, A, y),
                                                                                              rel=1e-12)
    # the greedy alone stays stuck
    stuck = greedy(K, A, init=scrambled, random_state=0).objective
    assert stuck < _truth(K, A, y) - 1.0


def test_alignment_keeps_the_clusters_of_known_points():
    X, y, K, A = _problem(chain(5), 50)
    scrambled = np.array([2, 0, 4, 1, 3])[y]
    known = np.full(50, -1)
    known[y == 0] = 2  # cluster 2 holds known points: it keeps its label
    aligned = align_clusters(K, A, scrambled, known=known, random_state=0)
    np.testing.assert_array_equal(aligned[scrambled == 2], 2)
    assert objective(K, A, partition_matrix(aligned, 5, normalization="l2")) >= \
        objective(K, A, partition_matrix(scrambled, 5, normalization="l2")) - 1e-9


@pytest.mark.parametrize("seed", range(5))
def test_refinement_never_lowers_the_objective(seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(30, 2))  # no structure: many local optima
    K, A = center(rbf(X)), output_kernel(ring(5))
    for normalization in ("l2", None):
        labels = rng.integers(5, size=30)
        start = objective(K, A, partition_matrix(labels, 5, normalization=normalization))
        refined, value, rounds = refine(K, A, labels, normalization=normalization, random_state=seed)
        assert value >= start - 1e-12 * abs(start)
        assert value == pytest.approx(objective(K, A, partition_matrix(refined, 5, normalization=normalization)),
                                      rel=1e-10)
        assert rounds >= 1


def test_best_relabelling_against_enumeration():
    rng = np.random.default_rng(0)
    M, N = rng.normal(size=(5, 5)), rng.normal(size=(5, 5))

    def value(sigma):
        inverse = np.argsort(sigma)
        return float(np.sum(M * N[np.ix_(inverse, inverse)]))

    best = max(value(np.array(p)) for p in itertools.permutations(range(5)))
    sigma = best_relabelling(value, 5, n_starts=20, rng=0)
    assert value(sigma) == pytest.approx(best)
    fixed = best_relabelling(value, 5, fixed=[1, 3], n_starts=20, rng=0)
    assert fixed[1] == 1 and fixed[3] == 3 and value(fixed) >= value(np.arange(5))


# --------------------------------------------------------------------------- the estimators


@pytest.mark.parametrize(("structure", "m"), EASY, ids=IDS)
def test_default_cluhsic_reaches_the_truth(structure, m):
    X, y, K, A = _problem(structure, m)
    est = CLUHSIC(A.shape[0], structure=structure, random_state=0).fit(X)
    assert est.objective_ >= _truth(K, A, y) * (1 - 1e-9)
    assert est.objective_ >= est.method_objective_


@pytest.mark.parametrize(("structure", "m"), EASY[:3], ids=IDS[:3])
def test_default_cluhsical_reaches_the_truth(structure, m):
    X, y, K, A = _problem(structure, m)
    est = CLUHSICAL(A.shape[0], structure=structure, random_state=0).fit(X)
    assert est.objective_ >= labels_objective(K, est.output_kernel_, y, est.loss_, "l1") * (1 - 1e-9)


def test_cluhsical_fills_every_cluster_of_the_ring_images():
    # the greedy alone leaves a cluster empty here; the refinement finds the ten poses
    X, y, _ = rotating_object("ring")
    keep = np.concatenate([np.flatnonzero(y == k)[::5] for k in range(10)])
    X, y = X[keep], y[keep]
    alone = CLUHSICAL(10, refine=False, random_state=0).fit(X)
    est = CLUHSICAL(10, random_state=0).fit(X)
    truth = labels_objective(center(rbf(X)), est.output_kernel_, y, est.loss_, "l1")
    # each comparison with its own allowance for rounding (a chained one would compare truth and alone exactly)
    assert est.objective_ >= truth * (1 - 1e-9) and truth >= alone.objective_ * (1 - 1e-9)
    assert np.bincount(est.labels_, minlength=10).min() > 0


def test_not_below_the_cheaper_methods():
    # the default never scores below NMF or the greedy started from the rounded relaxation
    X, y, K, A = _problem(chain(6), 60, seed=1)
    est = CLUHSIC(6, structure=chain(6), relaxation="lowrank", random_state=0).fit(X)
    Y = lowrank(K, A, random_state=0).X
    rounded = round_best(Y, K, A, random_state=0)[0]
    assert est.objective_ >= greedy(K, A, init=rounded, random_state=0).objective - 1e-9
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)  # NMF's iteration limit: its partition counts
        assert est.objective_ >= nmf(K, A, random_state=0).objective - 1e-9


def test_refine_false_returns_the_method_partition():
    X, y, K, A = _problem(chain(6), 60)
    est = CLUHSIC(6, structure=chain(6), refine=False, random_state=0).fit(X)
    assert est.objective_ == est.method_objective_
    assert est.objective_ == pytest.approx(greedy(K, A, random_state=0).objective, rel=1e-12)


# --------------------------------------------------------------------------- the certificate


def test_certificate_bounds_the_best_partition():
    X, y, K, A = _problem(chain(3), 9)
    est = CLUHSIC(3, structure=chain(3), random_state=0).fit(X)  # m c = 27: certified by default
    cert = est.certificate_
    assert cert.available and cert.reason == ""
    assert cert.objective == pytest.approx(est.objective_)
    assert cert.upper_bound >= est.objective_ and cert.gap == pytest.approx(
        (cert.upper_bound - est.objective_) / cert.upper_bound)
    # every partition is below the SDP's optimum (Clarabel), which is below the certified bound
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Clarabel may call its solution inaccurate at 1e-8
        reference = CLUHSICSDP(K, A).solve("reference", solver=cp.CLARABEL)
    assert reference.objective <= cert.upper_bound * (1 + 1e-6)
    best = max(objective(K, A, partition_matrix(np.array(p), 3, normalization="l2"))
               for p in itertools.product(range(3), repeat=9) if len(set(p)) == 3)
    assert est.objective_ == pytest.approx(best, rel=1e-9)  # the refinement finds the best partition
    assert best <= cert.upper_bound


def test_certificate_function_and_what_is_not_available():
    X, y, K, A = _problem(chain(3), 12)
    cert = certify_partition(K, A, y, tol=1e-4)
    assert cert.available and cert.gap >= 0 and cert.upper_bound >= _truth(K, A, y)
    X, _ = structured_blobs(chain(4), 60, random_state=0)
    big = CLUHSIC(4, structure=chain(4), random_state=0).fit(X).certificate_
    assert not big.available and "m c = 240" in big.reason and big.upper_bound is None
    off = CLUHSIC(4, structure=chain(4), certify=False, random_state=0).fit(X).certificate_
    assert not off.available and "certify=False" in off.reason
    unnormalized = CLUHSIC(4, structure=chain(4), normalization=None, random_state=0).fit(X).certificate_
    assert not unnormalized.available and "normalization='l2'" in unnormalized.reason
    with pytest.raises(ValueError, match="certify"):
        CLUHSIC(4, certify="always").fit(X)


def test_kernel_kmeans_is_kmeans_on_the_shared_embedding():
    from sklearn.cluster import KMeans
    X, y = structured_blobs(chain(4), 40, random_state=0)
    K = rbf(X)
    expected = KMeans(4, n_init=10, random_state=0).fit_predict(kernel_embedding(K))
    np.testing.assert_array_equal(kernel_kmeans(K, 4, random_state=0), expected)


@pytest.mark.parametrize(("call", "error", "match"), [
    (lambda K, A, y: refine(K, A, y[:-1]), ValueError, "labels"),
    (lambda K, A, y: align_clusters(K, A, y, known=np.zeros(3, dtype=int)), ValueError, "known"),
    (lambda K, A, y: align_clusters(K[:, :-1], A, y), ValueError, "K"),
    (lambda K, A, y: refine(K, A, y, normalization="yes"), (TypeError, ValueError), "normalization"),
    (lambda K, A, y: refine(K, A, y, normalization="l1"), ValueError, "normalization='l1' is not supported"),
    (lambda K, A, y: align_clusters(K, A, y, n_init=0), ValueError, "n_init"),
    (lambda K, A, y: align_clusters(K, A, y, random_state=-1), ValueError, "random_state"),
    (lambda K, A, y: certify_partition(K, A, y + 5), ValueError, "labels"),
])
def test_public_pieces_check_their_input(call, error, match):
    X, y, K, A = _problem(chain(3), 12)
    with pytest.raises(error, match=match):
        call(K, A, y)
