"""The baselines of CLUHSICAL Section IV-A-2: kernel hierarchical k-means and the
structure-sensitive agglomerative variants walking the dendrogram down the hierarchy."""

import networkx as nx
import numpy as np
import pytest
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import pdist, squareform
from sklearn.metrics import adjusted_rand_score

from cvxclust.cluhsical import (
    LINKAGES,
    hierarchical_agglomerative,
    hierarchical_kernel_kmeans,
    kernel_distances,
)
from cvxclust.kernels import kernel_kmeans, linear, rbf
from cvxclust.metrics import accuracy, hierarchy_levels, level_scores
from cvxclust.structures import flat, kron, ring, tree


def _hierarchical_blobs(branching, scales, n_per_leaf=8, noise=0.15, seed=0):
    """Points around the leaves of a hierarchy: every level adds an offset on a circle whose
    radius is that level's scale (well separated when scales decrease fast)."""
    rng = np.random.RandomState(seed)
    centers = [np.zeros(2)]
    for b, scale in zip(branching, scales):
        angles = 2 * np.pi * np.arange(b) / b + 0.3
        offsets = scale * np.c_[np.cos(angles), np.sin(angles)]
        centers = [c + o for c in centers for o in offsets]
    y = np.repeat(np.arange(len(centers)), n_per_leaf)
    X = np.asarray(centers)[y] + noise * rng.randn(y.size, 2)
    return X, y


def _run(method, K, S):
    if method == "kmeans":
        return hierarchical_kernel_kmeans(K, S, random_state=0)
    return hierarchical_agglomerative(K, S, linkage=method)


METHODS = ["kmeans", *LINKAGES]


def _same_partition(a, b):
    return adjusted_rand_score(a, b) == 1.0


# ----------------------------------------------------------------------------------------------
# exact recovery on well-separated hierarchical blobs
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_recovers_two_groups_of_three(method, kernel):
    X, y = _hierarchical_blobs([2, 3], [10.0, 2.0])
    K = linear(X) if kernel == "linear" else rbf(X, 3.0)
    S = tree([2, 3])
    labels = _run(method, K, S)
    s = level_scores(y, labels, S)
    np.testing.assert_array_equal(s["accuracy"], [1.0, 1.0])
    np.testing.assert_array_equal(s["loss"], [0.0, 0.0])


@pytest.mark.parametrize("method", METHODS)
def test_recovers_a_three_level_hierarchy(method):
    X, y = _hierarchical_blobs([2, 2, 2], [20.0, 5.0, 1.0], n_per_leaf=6, noise=0.1)
    S = tree([2, 2, 2])
    s = level_scores(y, _run(method, linear(X), S), S)
    np.testing.assert_array_equal(s["accuracy"], [1.0, 1.0, 1.0])


@pytest.mark.parametrize("method", METHODS)
def test_walks_a_product_structure_as_two_levels(method):
    X, y = _hierarchical_blobs([2, 3], [10.0, 2.0])  # leaf k = (k // 3, k % 3): Kronecker order
    S = kron(flat(2), ring(3))
    s = level_scores(y, _run(method, linear(X), S), S)
    np.testing.assert_array_equal(s["accuracy"], [1.0, 1.0])


def test_one_level_structure_is_plain_kernel_kmeans():
    X, y = _hierarchical_blobs([5], [6.0], noise=0.5)
    K = rbf(X, 3.0)
    for S in (ring(5), flat(5)):
        labels = hierarchical_kernel_kmeans(K, S, random_state=0)
        assert _same_partition(labels, kernel_kmeans(K, 5, random_state=0))
        assert accuracy(y, labels) == 1.0
    # flat admits every relabeling; a ring's order is not found by k-means (Section IV-B), so
    # only Hungarian matching is sure to score it perfect
    assert level_scores(y, labels, flat(5))["accuracy"][0] == 1.0


def test_kmeans_is_reproducible():
    X, _ = _hierarchical_blobs([2, 3], [3.0, 2.0], noise=1.0)  # overlapping: restarts matter
    K = rbf(X)
    S = tree([2, 3])
    np.testing.assert_array_equal(hierarchical_kernel_kmeans(K, S, random_state=4),
                                  hierarchical_kernel_kmeans(K, S, random_state=4))


# ----------------------------------------------------------------------------------------------
# the agglomerative walk against SciPy's own cuts
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", LINKAGES)
@pytest.mark.parametrize("branching", [[2, 3], [3, 2]])
def test_agglomerative_walk_matches_scipy_cuts(method, branching):
    # overlapping blobs: no clean hierarchy, the dendrogram decides every split
    X, _ = _hierarchical_blobs(branching, [2.0, 1.0], n_per_leaf=8, noise=0.8, seed=7)
    K = linear(X)
    S = tree(branching)
    labels = hierarchical_agglomerative(K, S, linkage=method)
    levels = hierarchy_levels(S)
    top = levels[0][labels]
    # top level: the full dendrogram cut into b clusters
    Z = linkage(pdist(X), method=method)
    assert _same_partition(top, fcluster(Z, branching[0], criterion="maxclust"))
    # second level: inside each top cluster, its own dendrogram (the same sub-dendrogram for
    # these reducible linkages) cut into as many clusters as the node has children
    for g in np.unique(top):
        idx = np.flatnonzero(top == g)
        sub = fcluster(linkage(pdist(X[idx]), method=method), branching[1], criterion="maxclust")
        assert _same_partition(labels[idx], sub)
    assert len(np.unique(labels)) == len(S.graph["clusters"])  # every leaf gets points


def test_kernel_distances_are_feature_space_distances():
    X = np.random.RandomState(0).randn(12, 3)
    np.testing.assert_allclose(kernel_distances(linear(X)), squareform(pdist(X)), atol=1e-10)
    D = kernel_distances(rbf(X, 2.0))
    np.testing.assert_allclose(D, np.sqrt(2 - 2 * rbf(X, 2.0)), atol=1e-12)
    assert np.all(np.diag(D) == 0) and np.array_equal(D, D.T)


# ----------------------------------------------------------------------------------------------
# alignment: the largest variance goes to the largest subtree
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_largest_variance_goes_to_largest_subtree(method):
    # structure root -> b (a leaf), root -> a -> {a1, a2}; b is listed first, so only the
    # alignment can send the wide two-blob group to a
    T = nx.DiGraph([("r", "b"), ("r", "a"), ("a", "a1"), ("a", "a2")])
    S = tree(T)
    assert S.graph["clusters"] == ["b", "a1", "a2"]
    rng = np.random.RandomState(0)
    X = np.vstack([
        [100.0, 0.0] + 0.1 * rng.randn(10, 2),   # b: tight and far
        [0.0, 0.0] + 1.0 * rng.randn(10, 2),     # a1: the wider sub-blob
        [30.0, 0.0] + 0.3 * rng.randn(10, 2),    # a2
    ])
    y = np.repeat([0, 1, 2], 10)
    labels = _run(method, linear(X), S)
    # no relabeling at all: the alignment alone puts every group at its node
    np.testing.assert_array_equal(labels, y)


# ----------------------------------------------------------------------------------------------
# bad input
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", METHODS)
def test_structures_that_cannot_be_walked(method):
    K = linear(np.random.RandomState(0).randn(10, 2))
    with pytest.raises(ValueError, match="structure"):
        _run(method, K, nx.path_graph(4))  # a general graph has no levels
    with pytest.raises(ValueError, match="structure"):
        _run(method, K, "tree")
    # 4 points: the root splits them 2 groups, a group of at most 3 then needs 3 children...
    with pytest.raises(ValueError, match="structure node .* receives only"):
        _run(method, K[:4, :4], tree([2, 3]))
    # ...and fewer points than the root's children
    with pytest.raises(ValueError, match="receives only 2"):
        _run(method, K[:2, :2], tree([3]))


def test_bad_kernels_and_parameters():
    K = linear(np.random.RandomState(0).randn(10, 2))
    S = tree([2, 2])
    for run in (lambda K: hierarchical_kernel_kmeans(K, S), lambda K: hierarchical_agglomerative(K, S)):
        with pytest.raises(ValueError, match="K"):
            run(K[:, :9])
        with pytest.raises(ValueError, match="K"):
            run(K + np.triu(np.ones_like(K), 1))
        with pytest.raises(ValueError, match="K"):
            run(np.full_like(K, np.inf))
    with pytest.raises(ValueError, match="K"):
        hierarchical_agglomerative(np.array([[0.0, 1.0], [1.0, 0.0]]), tree([2]))  # negative distance
    with pytest.raises(ValueError, match="linkage"):
        hierarchical_agglomerative(K, S, linkage="single")
    with pytest.raises(ValueError, match="n_init"):
        hierarchical_kernel_kmeans(K, S, n_init=0)


def test_single_child_nodes_pass_their_points_on():
    X, _ = _hierarchical_blobs([3], [6.0], noise=0.5)
    K = linear(X)
    S = tree([1, 3])  # root -> one node -> 3 leaves
    np.testing.assert_array_equal(hierarchy_levels(S)[0], [0, 0, 0])
    assert _same_partition(hierarchical_kernel_kmeans(K, S, random_state=0), kernel_kmeans(K, 3, random_state=0))
    Z = linkage(pdist(X), method="ward")
    assert _same_partition(hierarchical_agglomerative(K, S, linkage="ward"), fcluster(Z, 3, criterion="maxclust"))
    s = level_scores(np.repeat(np.arange(3), 8), hierarchical_agglomerative(K, S), S)
    np.testing.assert_array_equal(s["accuracy"], [1.0, 1.0])
    np.testing.assert_array_equal(s["loss"], [0.0, 0.0])
