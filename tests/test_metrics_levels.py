"""Per-level scores of a hierarchy (metrics.hierarchy_levels / level_scores) and kernel k-means
(kernels.kernel_kmeans)."""

import itertools

import networkx as nx
import numpy as np
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score

from cvxclust.kernels import kernel_kmeans, linear, rbf
from cvxclust.metrics import (
    accuracy,
    as_hierarchy,
    hierarchy_levels,
    level_scores,
    structured_loss,
)
from cvxclust.structures import (
    admissible_permutations,
    chain,
    flat,
    kron,
    loss_matrix,
    ring,
    tree,
)


def _uneven_tree():
    """root -> a -> {a1, a2}; root -> b (a leaf at depth 1): clusters [a1, a2, b]."""
    T = nx.DiGraph([("r", "a"), ("r", "b"), ("a", "a1"), ("a", "a2")])
    return tree(T)


# ----------------------------------------------------------------------------------------------
# hierarchy_levels
# ----------------------------------------------------------------------------------------------


def test_hierarchy_levels_of_trees():
    np.testing.assert_array_equal(hierarchy_levels(tree([2, 3])), [[0, 0, 0, 1, 1, 1], [0, 1, 2, 3, 4, 5]])
    np.testing.assert_array_equal(
        hierarchy_levels(tree([2, 2, 2])),
        [[0, 0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 2, 2, 3, 3], np.arange(8)],
    )
    # the leaf b at depth 1 stands for itself at level 2
    S = _uneven_tree()
    assert S.graph["clusters"] == ["a1", "a2", "b"]
    np.testing.assert_array_equal(hierarchy_levels(S), [[0, 0, 1], [0, 1, 2]])


def test_hierarchy_levels_of_product_and_one_level_structures():
    # kron(S1, S2): root -> S1 cluster -> pair, pairs in Kronecker order
    np.testing.assert_array_equal(hierarchy_levels(kron(flat(3), chain(2))), [[0, 0, 1, 1, 2, 2], np.arange(6)])
    for S in (ring(5), chain(4), flat(3)):
        c = len(S.graph["clusters"])
        np.testing.assert_array_equal(hierarchy_levels(S), [np.arange(c)])
    assert as_hierarchy(kron(flat(2), ring(3))).graph["kind"] == "tree"


def test_hierarchy_levels_rejects_a_general_graph():
    with pytest.raises(ValueError, match="structure"):
        hierarchy_levels(nx.path_graph(4))
    with pytest.raises(ValueError, match="structure"):
        hierarchy_levels([[0, 1], [1, 0]])


# ----------------------------------------------------------------------------------------------
# level_scores: hand-made examples
# ----------------------------------------------------------------------------------------------


def test_level_scores_sibling_and_cousin_errors():
    S = tree([2, 3])  # groups {0, 1, 2} and {3, 4, 5}
    y = np.repeat(np.arange(6), 3)
    pred = y.copy()
    pred[0] = 1  # class 0 -> sibling 1: leaf error, tree loss 1, level 1 right
    pred[9] = 0  # class 3 -> cousin 0: leaf and level-1 error, tree loss 2
    s = level_scores(y, pred, S)
    np.testing.assert_array_equal(s["permutation"], np.arange(6))
    np.testing.assert_allclose(s["accuracy"], [17 / 18, 16 / 18])
    np.testing.assert_allclose(s["loss"], [1 / 18, 3 / 18])  # level 1: zero-one; level 2: (1 + 2) / 18


def test_level_scores_relabels_by_an_admissible_permutation():
    S = tree([2, 3])
    y = np.repeat(np.arange(6), 2)
    # swap the two groups and permute inside them: an admissible relabeling, a perfect clustering
    p = np.array([4, 3, 5, 1, 2, 0])  # p[cluster] = class
    pred = np.argsort(p)[y]
    s = level_scores(y, pred, S)
    np.testing.assert_array_equal(s["permutation"], p)
    np.testing.assert_allclose(s["accuracy"], [1, 1])
    np.testing.assert_allclose(s["loss"], [0, 0])
    # the same clusters in an order that breaks the hierarchy cannot be perfect
    bad = np.array([0, 3, 1, 4, 2, 5])[y]
    assert accuracy(y, bad) == 1.0  # Hungarian does not see the structure
    assert level_scores(y, bad, S)["accuracy"][-1] < 1


def test_level_scores_lowest_loss_beats_highest_accuracy():
    # tree([2, 2]): classes 0, 1 under A and 2, 3 under B.  Counts[s, r] = points of class s in
    # cluster r.  Worked by hand over the 8 admissible relabelings:
    #   p = [0, 1, 3, 2] matches 0 + 2 + 3 + 1 = 6 points (the most) at loss
    #     4 + 6 + 0 + 2 = 16;
    #   p = [2, 3, 1, 0] matches 2 + 2 + 1 = 5 points at the lowest loss
    #     r0: 2 class-3 pts -> 2 (siblings) 2;  r1: 2 class-1 pts -> 3 (cousins) 4, 1 class-2 -> 3: 1;
    #     r2: 3 class-3 pts -> 1: 6;  r3: 1 class-2 pt -> 0: 2.   Total 15.
    counts = np.array([[0, 0, 0, 1],
                       [0, 2, 0, 0],
                       [2, 1, 0, 1],
                       [2, 2, 3, 0]])
    y, pred = [], []
    for s, r in itertools.product(range(4), range(4)):
        y += [s] * counts[s, r]
        pred += [r] * counts[s, r]
    y, pred = np.array(y), np.array(pred)
    S = tree([2, 2])
    s = level_scores(y, pred, S)
    np.testing.assert_array_equal(s["permutation"], [2, 3, 1, 0])
    # level 1 under p = [2, 3, 1, 0]: clusters 0, 1 -> B, clusters 2, 3 -> A;
    # right: r0 all 4, r1 the 3 class-2/3 points, r3 the class-0 point -> 8 of 14
    np.testing.assert_allclose(s["accuracy"], [8 / 14, 5 / 14])
    np.testing.assert_allclose(s["loss"], [6 / 14, 15 / 14])
    # the accuracy-maximizing relabeling among the same permutations has more matches
    assert accuracy(y, pred, admissible_permutations(S)) == pytest.approx(6 / 14)


def test_level_scores_tie_keeps_the_first_permutation_and_uneven_depths():
    S = _uneven_tree()  # clusters [a1, a2, b]; admissible: identity and a1 <-> a2
    y = np.array([0, 1, 2, 2])
    pred = np.array([1, 1, 2, 0])
    # identity: matches points 1, 2; losses 1 (a1 vs a2) + 2 (b vs a1) = 3; the swap ties
    s = level_scores(y, pred, S)
    np.testing.assert_array_equal(s["permutation"], [0, 1, 2])
    np.testing.assert_allclose(s["accuracy"], [3 / 4, 2 / 4])
    np.testing.assert_allclose(s["loss"], [1 / 4, 3 / 4])


def test_level_scores_ring_loss_after_the_best_rotation():
    S = ring(5)
    y = np.repeat(np.arange(5), 2)
    pred = (y + 2) % 5  # rotated by 2: admissible
    pred[1] = 3  # class 0 -> 1 after undoing the rotation: neighbours, ring loss 1
    pred[5] = 1  # class 2 -> 4: not neighbours, ring loss 2
    s = level_scores(y, pred, S)
    np.testing.assert_array_equal(s["permutation"], (np.arange(5) - 2) % 5)
    np.testing.assert_allclose(s["accuracy"], [8 / 10])
    np.testing.assert_allclose(s["loss"], [3 / 10])


def test_level_scores_of_a_product_structure():
    S = kron(flat(2), chain(3))  # objects x poses
    y = np.tile(np.arange(6), 2)
    perfect = np.array([5, 4, 3, 2, 1, 0])[y]  # swap the objects, reverse the chains: admissible
    s = level_scores(y, perfect, S)
    np.testing.assert_allclose(s["accuracy"], [1, 1])
    np.testing.assert_allclose(s["loss"], [0, 0])
    pred = perfect.copy()
    pred[0] = 4  # class 0 -> class 1: same object, product loss 1
    pred[4] = 5  # class 4 -> class 0: other object, loss 2
    s = level_scores(y, pred, S)
    np.testing.assert_allclose(s["accuracy"], [11 / 12, 10 / 12])
    np.testing.assert_allclose(s["loss"], [1 / 12, 3 / 12])


# ----------------------------------------------------------------------------------------------
# level_scores: properties on random predictions
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("branching", [[2, 3], [3, 2], [2, 2, 2]])
def test_level_scores_properties(branching):
    S = tree(branching)
    c = len(S.graph["clusters"])
    perms = admissible_permutations(S)
    delta = loss_matrix(S)
    rng = np.random.RandomState(0)
    for _ in range(20):
        y = rng.randint(c, size=30)
        pred = np.where(rng.rand(30) < 0.6, y, rng.randint(c, size=30))
        s = level_scores(y, pred, S)
        acc, loss = s["accuracy"], s["loss"]
        # never beats unrestricted (Hungarian) relabeling
        assert acc[-1] <= accuracy(y, pred) + 1e-12
        # a right leaf has right ancestors: accuracy cannot grow going down
        assert np.all(np.diff(acc) <= 1e-12)
        # at level 1 the tree loss is the zero-one loss
        assert loss[0] == pytest.approx(1 - acc[0])
        # the leaf loss is the least over the admissible relabelings, accuracy the best among those
        per_perm = [(structured_loss(y, pred, delta, [p]), accuracy(y, pred, [p])) for p in perms]
        best_loss = min(v for v, _ in per_perm)
        assert loss[-1] == pytest.approx(best_loss)
        assert acc[-1] == pytest.approx(max(a for v, a in per_perm if v == pytest.approx(best_loss)))
        assert any(np.array_equal(s["permutation"], p) for p in perms)


def test_level_scores_with_all_permutations():
    S = tree([2, 2])
    rng = np.random.RandomState(1)
    y = rng.randint(4, size=25)
    pred = rng.randint(4, size=25)
    every = [np.array(p) for p in itertools.permutations(range(4))]
    free = level_scores(y, pred, S, permutations=every)
    restricted = level_scores(y, pred, S)
    assert free["loss"][-1] <= restricted["loss"][-1] + 1e-12
    assert free["accuracy"][-1] <= accuracy(y, pred) + 1e-12


# ----------------------------------------------------------------------------------------------
# level_scores: bad input
# ----------------------------------------------------------------------------------------------


def test_level_scores_bad_input():
    S = tree([2, 2])
    y = np.array([0, 1, 2, 3])
    with pytest.raises(ValueError, match="y_true"):
        level_scores([0, 1, 2, 4], y, S)
    with pytest.raises(ValueError, match="y_pred"):
        level_scores(y, [0, 1, 2, -1], S)
    with pytest.raises(ValueError, match="y_pred"):
        level_scores(y, [0.5, 1, 2, 3], S)
    with pytest.raises(ValueError, match="y_true"):
        level_scores(["a", "b", "c", "d"], y, S)
    with pytest.raises(ValueError, match="same length"):
        level_scores(y, y[:3], S)
    with pytest.raises(ValueError, match="structure"):
        level_scores(y, y, nx.cycle_graph(4))
    with pytest.raises(ValueError, match="permutations"):
        level_scores(y, y, S, permutations=[[0, 1, 2]])
    with pytest.raises(ValueError, match="permutations"):
        level_scores(y, y, S, permutations=[[0, 0, 1, 2]])
    with pytest.raises(ValueError, match="permutations"):
        level_scores(y, y, S, permutations=[])


# ----------------------------------------------------------------------------------------------
# kernel_kmeans
# ----------------------------------------------------------------------------------------------


def _kkm_objective(K, labels):
    r"""tr K - sum_k (1/|C_k|) sum_{i,j in C_k} K_ij."""
    total = np.trace(K)
    for k in np.unique(labels):
        idx = labels == k
        total -= K[np.ix_(idx, idx)].sum() / idx.sum()
    return total


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_kmeans_linear_kernel_is_kmeans(seed):
    X = np.random.RandomState(seed).randn(60, 3)
    labels = kernel_kmeans(linear(X), 4, random_state=seed)
    km = KMeans(4, n_init=10, random_state=seed).fit(X)
    assert adjusted_rand_score(km.labels_, labels) == 1.0
    assert _kkm_objective(linear(X), labels) == pytest.approx(km.inertia_, rel=1e-9)


def test_kernel_kmeans_beats_random_partitions():
    rng = np.random.RandomState(3)
    X = np.vstack([rng.randn(20, 2) + offset for offset in ([0, 0], [4, 0], [0, 4])])
    K = rbf(X, 2.0)
    labels = kernel_kmeans(K, 3, random_state=0)
    assert set(labels) == {0, 1, 2}
    best = _kkm_objective(K, labels)
    random = [_kkm_objective(K, rng.randint(3, size=60)) for _ in range(200)]
    assert best <= min(random)
    # reproducible
    np.testing.assert_array_equal(labels, kernel_kmeans(K, 3, random_state=0))


def test_kernel_kmeans_bad_input():
    K = linear(np.random.RandomState(0).randn(6, 2))
    with pytest.raises(ValueError, match="K"):
        kernel_kmeans(K[:, :5], 2)
    with pytest.raises(ValueError, match="K"):
        kernel_kmeans(K + np.triu(np.ones((6, 6)), 1), 2)
    with pytest.raises(ValueError, match="K"):
        kernel_kmeans(np.where(np.eye(6) > 0, np.nan, K), 2)
    with pytest.raises(ValueError, match="K"):
        kernel_kmeans(-np.eye(6), 2)  # no p.s.d. part
    with pytest.raises(ValueError, match="n_clusters"):
        kernel_kmeans(K, 1)
    with pytest.raises(ValueError, match="n_clusters"):
        kernel_kmeans(K, 7)
    with pytest.raises(ValueError, match="n_init"):
        kernel_kmeans(K, 2, n_init=0)
