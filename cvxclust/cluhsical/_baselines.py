r"""The structure-aware baselines of CLUHSICAL Section IV-A-2: kernel hierarchical k-means and the
structure-sensitive agglomerative variants (average, complete and Ward linkage).

Neither uses the output structure to *build* its clusters; both only *walk* the given hierarchy
top-down.  Every node of the hierarchy with ``b >= 2`` children splits the points it received
into ``b`` groups,

* kernel hierarchical k-means: by kernel k-means (``cvxclust.kernels.kernel_kmeans``) on the
  node's points ("instead of going down the dendrogram, we perform kernel k-means to divide a
  node into several sub-clusters");
* agglomerative: by undoing the top ``b - 1`` merges of the node's sub-dendrogram, the complete
  dendrogram being built once by SciPy's ``linkage`` on the kernel-induced distance
  :math:`d_{ij} = \sqrt{K_{ii} + K_{jj} - 2K_{ij}}` ("by going down the root using the
  dendrogram ... we further trace down the corresponding branch", Fig. 4),

and hands the groups to its children aligned as the paper does: "the one with the largest
variance corresponds to the tree node having the largest subtree" (groups sorted by their
within-group kernel variance, children by the number of leaf clusters below them, both
decreasing; ties keep the order of the children in the structure and of the groups).  This
alignment only fixes an order; the evaluation (``cvxclust.metrics.level_scores``, Tables I-III)
relabels the leaves by the best of the structure's admissible permutations anyway.

A product structure ``S1 x S2`` is walked as the two-level hierarchy root -> ``S1`` cluster ->
pair, a flat, chain or ring structure as one level (the chain or ring order is not used: those
are the kernel k-means and agglomerative baselines of Section IV-B); see
``cvxclust.metrics.as_hierarchy``.  A general graph has no hierarchy to walk.
"""

from __future__ import annotations

import heapq

import networkx as nx
import numpy as np
from scipy.cluster.hierarchy import linkage as scipy_linkage
from scipy.cluster.hierarchy import to_tree
from scipy.spatial.distance import squareform
from sklearn.utils import check_random_state

from .._checks import check_choice, check_int_range, check_square_matrix
from .._kernel_estimators import RANDOM_STATE
from ..kernels import kernel_kmeans
from ..metrics import as_hierarchy
from ..parameters import check_parameter

__all__ = ["LINKAGES", "kernel_distances", "hierarchical_kernel_kmeans", "hierarchical_agglomerative"]

#: Linkages of the agglomerative baselines (Section IV-A-2, items 1-3).
LINKAGES = ("average", "complete", "ward")

# squared kernel distances below -_NEG_RTOL * max|K| are not rounding: K is not p.s.d. there
_NEG_RTOL = 1e-10


def kernel_distances(K) -> np.ndarray:
    r"""The kernel-induced distance matrix, the distance between feature vectors:

    .. math:: d_{ij} = \|\phi(x_i) - \phi(x_j)\| = \sqrt{K_{ii} + K_{jj} - 2K_{ij}}.

    Squared distances that are negative by rounding are set to 0; the diagonal is exactly 0.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Symmetric finite kernel matrix, ``n >= 2``.

    Returns
    -------
    ndarray of shape (n, n)

    Raises
    ------
    ValueError
        Naming ``K`` if it is not a symmetric finite matrix, or if a squared distance is
        clearly negative (``K`` is not positive semidefinite on that pair).
    """
    return _distances(check_square_matrix(K, "K", min_size=2))


def _distances(K: np.ndarray) -> np.ndarray:
    """:func:`kernel_distances` of a checked kernel."""
    d = np.diag(K)
    with np.errstate(over="ignore", invalid="ignore"):
        D2 = d[:, None] + d[None, :] - 2.0 * K
    if not np.all(np.isfinite(D2)):
        raise ValueError("K gives squared distances K_ii + K_jj - 2 K_ij that overflow float64: rescale K")
    if D2.min() < -_NEG_RTOL * max(np.abs(K).max(), 1e-300):
        raise ValueError(
            f"K gives a negative squared distance K_ii + K_jj - 2 K_ij = {D2.min():.3g}: it is not "
            "positive semidefinite, so it induces no distance"
        )
    D = np.sqrt(np.maximum(D2, 0.0))
    np.fill_diagonal(D, 0.0)
    return (D + D.T) / 2  # exactly symmetric for squareform


def _within_variance(K: np.ndarray, idx: np.ndarray) -> float:
    r"""Mean squared feature-space distance to the group's centroid,
    :math:`\frac1m\sum_i K_{ii} - \frac1{m^2}\sum_{ij} K_{ij}` (``-inf`` for an empty group)."""
    if idx.size == 0:
        return -np.inf
    return float(np.mean(K[idx, idx]) - np.mean(K[np.ix_(idx, idx)]))


def _align(K: np.ndarray, H: nx.DiGraph, children: list, groups: list, members) -> list[tuple]:
    """Pair groups with children: largest within-group variance with largest subtree (Section
    IV-A-2); stable sorts, so ties keep the structure's and the split's order."""
    n_leaves = {v: sum(1 for u in nx.descendants(H, v) | {v} if H.out_degree(u) == 0) for v in children}
    by_size = sorted(children, key=lambda v: -n_leaves[v])
    variances = [_within_variance(K, members(g)) for g in groups]
    by_variance = [groups[i] for i in sorted(range(len(groups)), key=lambda i: -variances[i])]
    return list(zip(by_size, by_variance))


def _walk(K: np.ndarray, H: nx.DiGraph, split, members, root_payload) -> np.ndarray:
    """Walk the hierarchy ``H`` top-down; ``split(payload, b)`` cuts a node's points (described
    by ``payload``, listed by ``members(payload)``) into ``b`` groups."""
    clusters = H.graph["clusters"]
    leaf_label = {leaf: k for k, leaf in enumerate(clusters)}
    labels = np.full(K.shape[0], -1, dtype=int)
    stack = [(H.graph["root"], root_payload)]
    while stack:
        node, payload = stack.pop()
        children = list(H.successors(node))
        if not children:
            labels[members(payload)] = leaf_label[node]
            continue
        if len(children) == 1:  # a single child inherits every point
            stack.append((children[0], payload))
            continue
        m = members(payload).size
        if m < len(children):
            raise ValueError(
                f"structure node {node!r} has {len(children)} children but receives only {m} of the "
                f"{K.shape[0]} points of K: the hierarchy cannot be walked on so few points"
            )
        groups = split(payload, len(children))
        # reversed so that the first child is walked first (the stack is LIFO)
        stack.extend(reversed(_align(K, H, children, groups, members)))
    return labels


def hierarchical_kernel_kmeans(K, structure, *, n_init: int = 10, random_state=None) -> np.ndarray:
    r"""Kernel hierarchical k-means (CLUHSICAL Section IV-A-2): split the hierarchy top-down by
    kernel k-means.

    The root's points (all of them) are split by kernel k-means into as many groups as the root
    has children; each child's points are split the same way into its children, and so on down
    to the leaves.  Each split minimizes, on the node's points only, the kernel k-means
    objective

    .. math:: \sum_{k=1}^{b} \sum_{i \in C_k} \Big\| \phi(x_i) - \frac{1}{|C_k|}
              \sum_{j \in C_k}\phi(x_j) \Big\|^2,

    so the structure enters only through the number of children of each node ("can only
    consider the sub-structure information separately, but not as a whole", Section IV-A-3).
    Groups go to children by the variance/subtree-size alignment of the module docstring.  A
    node with one child passes all its points on; a flat, chain or ring structure is a single
    k-means split into ``c`` clusters.  The paper uses this result to initialize CLUHSIC and
    CLUHSICAL.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Symmetric finite input kernel (centring does not matter: k-means is translation
        invariant in feature space).
    structure : structure
        A tree, product, flat, chain or ring structure (``cvxclust.structures``).
    n_init : int >= 1, keyword-only
        k-means++ restarts of every split.
    random_state : None, int or numpy.random.RandomState, keyword-only
        Drawn from once per split, in depth-first order: results are reproducible.

    Returns
    -------
    labels : ndarray of int, shape (n,)
        Leaf cluster of each point, ``0 .. c-1`` in the structure's cluster order.  A leaf can
        be left empty only when k-means finds fewer distinct groups than asked (duplicate
        points).

    Raises
    ------
    ValueError
        Naming ``K``, ``structure`` (a general graph; a node receiving fewer points than it has
        children) or ``n_init``.
    """
    K = check_square_matrix(K, "K", min_size=2)
    H = as_hierarchy(structure)  # raises naming structure for a general graph
    n_init = check_int_range(n_init, "n_init", 1)
    rng = check_random_state(check_parameter("random_state", random_state, RANDOM_STATE))

    def split(idx: np.ndarray, b: int) -> list[np.ndarray]:
        sub = kernel_kmeans(K[np.ix_(idx, idx)], b, n_init=n_init, random_state=rng)
        return [idx[sub == k] for k in range(b)]

    return _walk(K, H, split, lambda idx: idx, np.arange(K.shape[0]))


def _undo_top_merges(node, b: int) -> list:
    """The ``b`` sub-dendrograms left by undoing the last ``b - 1`` merges below ``node``.

    SciPy numbers merges in the order they happen (node ids ``n .. 2n - 2``), so the last merges
    of a subtree are its highest ids; every id exceeds its children's, hence splitting the
    frontier's highest id ``b - 1`` times undoes exactly those merges, as ``cut_tree`` /
    ``fcluster(criterion="maxclust")`` would on the node's own dendrogram.
    """
    frontier = [(-node.get_id(), node)]
    for _ in range(b - 1):
        _, top = heapq.heappop(frontier)  # internal: the node holds >= b points
        for child in (top.get_left(), top.get_right()):
            heapq.heappush(frontier, (-child.get_id(), child))
    return [n for _, n in sorted(frontier, key=lambda t: -t[0])]  # earliest merges first


def hierarchical_agglomerative(K, structure, *, linkage: str = "average") -> np.ndarray:
    r"""Structure-sensitive agglomerative clustering (CLUHSICAL Section IV-A-2): build the
    complete dendrogram on the kernel-induced distance, then walk it down the hierarchy.

    The dendrogram is SciPy's ``scipy.cluster.hierarchy.linkage`` on
    :math:`d_{ij} = \sqrt{K_{ii} + K_{jj} - 2K_{ij}}` (:func:`kernel_distances`) with the
    cluster dissimilarity

    * ``"average"``: :math:`D(A, B) = \frac{1}{n_A n_B}\sum_{i \in A, j \in B} d_{ij}`;
    * ``"complete"``: :math:`D(A, B) = \max_{i \in A, j \in B} d_{ij}`;
    * ``"ward"``: :math:`D(A, B) = \sqrt{\frac{n_A n_B}{n_A + n_B}}\, d(A_m, B_m)`, ``A_m, B_m``
      the cluster means.  SciPy's Lance-Williams update for Ward is exact only for Euclidean
      distances; :math:`d_{ij}` is the Euclidean distance between the feature vectors
      :math:`\phi(x_i)`, so it is Ward's method in feature space.

    The root of the hierarchy takes the whole dendrogram; a node with ``b`` children takes the
    ``b`` sub-dendrograms obtained by undoing the top ``b - 1`` merges of its own
    sub-dendrogram (at the root this is ``fcluster(Z, b, criterion="maxclust")`` when the merge
    heights are distinct), hands them to its children by the variance/subtree-size alignment of
    the module docstring, and so on recursively; the points under a leaf form that cluster.
    The method is deterministic.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Symmetric finite positive semidefinite input kernel.
    structure : structure
        A tree, product, flat, chain or ring structure (``cvxclust.structures``).
    linkage : {"average", "complete", "ward"}, keyword-only

    Returns
    -------
    labels : ndarray of int, shape (n,)
        Leaf cluster of each point, ``0 .. c-1`` in the structure's cluster order; every leaf
        receives at least one point.

    Raises
    ------
    ValueError
        Naming ``K`` (not symmetric, finite, or inducing a negative squared distance),
        ``linkage``, or ``structure`` (a general graph; a node receiving fewer points than it
        has children).
    """
    check_choice(linkage, "linkage", LINKAGES)
    K = check_square_matrix(K, "K", min_size=2)
    D = _distances(K)
    H = as_hierarchy(structure)  # raises naming structure for a general graph
    Z = scipy_linkage(squareform(D, checks=False), method=linkage)
    root = to_tree(Z)
    return _walk(K, H, _undo_top_merges, lambda node: np.asarray(node.pre_order(), dtype=int), root)
