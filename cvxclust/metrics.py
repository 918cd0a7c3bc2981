r"""Clustering accuracy and error rate under the best relabeling, and normalized mutual information.

The source papers report the error rate

.. math:: \mathrm{Error\ Rate} = 1 - \frac{1}{n}\sum_{i=1}^n \delta\big(s_i, \mathrm{map}(r_i)\big),

where :math:`r_i` is the cluster of sample :math:`i`, :math:`s_i` its class and
:math:`\mathrm{map}` the one-to-one relabeling of clusters to classes that maximizes the number of
matches.  Without restriction the best map is a maximum-weight matching on the contingency matrix
(the Hungarian method, ``scipy.optimize.linear_sum_assignment``).  Structured outputs only admit
some relabelings (the automorphisms of a tree or ring of clusters); pass those as
``permutations`` to restrict the maximum to them.

For a hierarchy of clusters, :func:`level_scores` reports accuracy and tree loss at every level
(CLUHSICAL Section IV-A, Tables I-III) and :func:`hierarchy_levels` maps leaf clusters to their
ancestors.

References
----------
Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral Clustering via Lagrange Duality",
IEEE Transactions on Image Processing, 2014 (the error rate).

W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
Algorithm", SIAM International Conference on Data Mining (SDM), 2010 (structured losses and
admissible relabelings, Section 5.3).

W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010
(per-level scores).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable

import networkx as nx
import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

from ._checks import check_labels, check_square_matrix
from .structures import admissible_permutations, as_structure, loss_matrix, tree

__all__ = ["best_mapping", "accuracy", "error_rate", "nmi", "structured_loss", "as_hierarchy", "hierarchy_levels",
           "level_scores"]


def _check_labels(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    checked = []
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if y.dtype.kind == "O":  # Python ints, floats or strings get their numpy dtype
            y = np.asarray(y.tolist())
            if y.dtype.kind == "O":
                raise ValueError(f"{name} must hold labels of one type (ints, floats or strings)")
        if y.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array of labels, got shape {y.shape}")
        if y.size == 0:
            raise ValueError(f"{name} must not be empty")
        if y.dtype.kind == "c":
            raise ValueError(f"{name} must hold real or string labels, got complex ones")
        if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
            raise ValueError(f"{name} contains NaN or infinite labels")
        checked.append(y)
    y_true, y_pred = checked
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true and y_pred must have the same length, got {y_true.shape[0]} and {y_pred.shape[0]}"
        )
    return y_true, y_pred


def _is_permutation(P: np.ndarray) -> bool:
    """Whether every row of the integer array ``P`` (1-D or 2-D) is a permutation of
    ``0 .. P.shape[-1] - 1``."""
    return np.issubdtype(P.dtype, np.integer) and np.array_equal(
        np.sort(P, axis=-1), np.broadcast_to(np.arange(P.shape[-1]), P.shape))


def _check_permutation(p, y_pred: np.ndarray) -> np.ndarray:
    try:
        p = np.asarray(p)
    except (TypeError, ValueError):  # ragged nested sequences
        raise ValueError("permutations must hold 1-D integer arrays p with p[cluster] = class") from None
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"permutations must hold 1-D label arrays p with p[cluster] = class, got shape {p.shape}")
    if not _is_permutation(p):
        raise ValueError(f"permutations must hold permutations of 0..{p.size - 1} (integer arrays p with "
                         f"p[cluster] = class, each class once), got {p}")
    if not np.issubdtype(y_pred.dtype, np.integer) or y_pred.min() < 0 or y_pred.max() >= p.size:
        raise ValueError(
            f"permutations index clusters by label: y_pred must hold integers in [0, {p.size - 1}] "
            f"for permutations of length {p.size}"
        )
    return p


def _best_permutation(y_true, y_pred, permutations) -> tuple[np.ndarray, int]:
    if isinstance(permutations, (str, bytes)) or not isinstance(permutations, Iterable):
        raise ValueError(f"permutations must be an iterable of label arrays p with p[cluster] = class, "
                         f"got {type(permutations).__name__}")
    best, best_matches = None, -1
    for p in permutations:
        p = _check_permutation(p, y_pred)
        matches = int(np.count_nonzero(p[y_pred] == y_true))
        if matches > best_matches:
            best, best_matches = p, matches
    if best is None:
        raise ValueError("permutations must contain at least one permutation")
    return best, best_matches


def _hungarian(y_true, y_pred) -> tuple[dict, int]:
    classes, class_idx = np.unique(y_true, return_inverse=True)
    clusters, cluster_idx = np.unique(y_pred, return_inverse=True)
    C = contingency_matrix(class_idx, cluster_idx)  # rows: classes, columns: clusters
    rows, cols = linear_sum_assignment(C, maximize=True)
    mapping = {c.item(): None for c in clusters}
    for r, c in zip(rows, cols):
        mapping[clusters[c].item()] = classes[r].item()
    return mapping, int(C[rows, cols].sum())


def best_mapping(y_true, y_pred, permutations: Iterable | None = None) -> dict:
    r"""The relabeling of clusters to classes that maximizes the number of matches.

    .. math:: \mathrm{map} = \arg\max_{\pi} \sum_{i=1}^n \delta\big(s_i, \pi(r_i)\big)

    over one-to-one maps :math:`\pi` (``permutations=None``: a maximum-weight matching on the
    contingency matrix, by ``scipy.optimize.linear_sum_assignment``) or over the given
    ``permutations`` only.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels :math:`s_i`.
    y_pred : array-like of shape (n_samples,)
        Cluster labels :math:`r_i`.
    permutations : iterable of array-like, optional
        Admissible relabelings, each an integer array ``p`` with ``p[cluster] = class`` that is
        a permutation of ``0 .. len(p) - 1``; cluster labels must then be the integers
        ``0 .. len(p) - 1``.  ``None``: all one-to-one maps.  Ties keep the first best
        permutation.

    Returns
    -------
    dict
        ``{cluster: class}`` for every cluster label in ``y_pred``.  With more clusters than
        classes (and ``permutations=None``) the clusters left unmatched map to ``None``: their
        samples count as errors.
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    if permutations is None:
        return _hungarian(y_true, y_pred)[0]
    p, _ = _best_permutation(y_true, y_pred, permutations)
    return {c.item(): p[c].item() for c in np.unique(y_pred)}


def accuracy(y_true, y_pred, permutations: Iterable | None = None) -> float:
    r"""Fraction of samples whose cluster maps to their class under the best relabeling.

    .. math:: \mathrm{acc} = \max_{\pi} \frac{1}{n} \sum_{i=1}^n \delta\big(s_i, \pi(r_i)\big)

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels :math:`s_i`.
    y_pred : array-like of shape (n_samples,)
        Cluster labels :math:`r_i`.
    permutations : iterable of array-like, optional
        Restrict :math:`\pi` to these relabelings (integer arrays ``p`` with
        ``p[cluster] = class``, each a permutation of ``0 .. len(p) - 1``, cluster labels
        ``0 .. len(p) - 1``), e.g. the automorphisms of an output structure.  ``None``
        (default): all one-to-one maps (Hungarian method).  An entry that is not such a
        permutation raises ``ValueError``.

    Returns
    -------
    float in [0, 1]
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    if permutations is None:
        matches = _hungarian(y_true, y_pred)[1]
    else:
        matches = _best_permutation(y_true, y_pred, permutations)[1]
    return matches / y_true.size


def error_rate(y_true, y_pred, permutations: Iterable | None = None) -> float:
    r"""The papers' error rate, ``1 - accuracy``.

    .. math:: \mathrm{Error\ Rate} = 1 - \max_{\pi}\frac{1}{n}\sum_{i=1}^n \delta\big(s_i, \pi(r_i)\big)

    Parameters are those of :func:`accuracy`.

    Returns
    -------
    float in [0, 1]
    """
    return 1.0 - accuracy(y_true, y_pred, permutations)


def nmi(y_true, y_pred) -> float:
    r"""Normalized mutual information :math:`I(S; R) / \tfrac12 (H(S) + H(R))`.

    scikit-learn's ``normalized_mutual_info_score`` (arithmetic-mean normalization); invariant
    to any relabeling of the clusters.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels.
    y_pred : array-like of shape (n_samples,)
        Cluster labels.

    Returns
    -------
    float in [0, 1]
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    return float(normalized_mutual_info_score(y_true, y_pred))


def structured_loss(y_true, y_pred, loss, permutations: Iterable | None = None) -> float:
    r"""Mean structured loss after the accuracy-maximizing relabeling (the CLUHSIC papers' chain,
    ring and tree losses).

    .. math:: \frac1n \sum_{i=1}^n \Delta\big(s_i, \pi^*(r_i)\big),
              \qquad \pi^* = \text{the map of } :func:`best_mapping`

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Class labels (``0 .. c-1``, indexing ``loss``) and cluster labels.
    loss : array-like of shape (c, c)
        ``loss[s, t]``: the cost of predicting class t for class s, e.g.
        :func:`cvxclust.structures.loss_matrix`.
    permutations : iterable of array-like, optional
        As in :func:`accuracy`.  A cluster left unmatched (more clusters than classes) costs the
        largest entry of ``loss``.

    Returns
    -------
    float
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    loss = check_square_matrix(loss, "loss", symmetric=False)
    c = loss.shape[0]
    y_true = check_labels(y_true, name="y_true")  # classes index the rows of loss
    if y_true.max() >= c:
        raise ValueError(f"loss must be a square matrix indexed by the classes of y_true, got shape {loss.shape} "
                         f"for classes up to {y_true.max()}")
    mapping = best_mapping(y_true, y_pred, permutations)
    worst = float(loss.max())

    def column(cls):  # the column of loss of a class, or None for a class outside 0..c-1
        if isinstance(cls, numbers.Real) and not isinstance(cls, bool) and float(cls).is_integer() and 0 <= cls < c:
            return int(cls)
        return None

    columns = {r: column(cls) for r, cls in mapping.items()}
    costs = [worst if columns[r] is None else loss[s, columns[r]] for s, r in zip(y_true.tolist(), y_pred.tolist())]
    return float(np.mean(costs))


# ----------------------------------------------------------------------------------------------
# scores per level of a hierarchy (CLUHSICAL Section IV-A, Tables I-III)
# ----------------------------------------------------------------------------------------------


def as_hierarchy(structure) -> nx.DiGraph:
    r"""The hierarchy of clusters a structure describes, as a rooted tree whose leaves, in
    ``graph["clusters"]`` order, are the structure's clusters ``0, ..., c - 1``.

    * ``tree``: the structure itself;
    * ``product`` ``S1 x S2`` (``c1 c2`` pairs in Kronecker order): the two-level hierarchy
      root -> first-factor cluster ``a`` -> pair ``(a, b)``, i.e. ``structures.tree([c1, c2])``
      (the hierarchy behind the product's loss in ``structures.loss_matrix``);
    * ``flat``, ``chain``, ``ring``: one level, ``structures.tree([c])`` (a root over the
      clusters; the chain or ring order is not a hierarchy).

    Parameters
    ----------
    structure : structure
        Anything ``cvxclust.structures.as_structure`` accepts, except a general graph.

    Returns
    -------
    networkx.DiGraph
        A ``kind="tree"`` structure (edges parent -> child, ``graph["root"]``); leaf ``k`` of
        ``graph["clusters"]`` is cluster ``k`` of ``structure``.

    Raises
    ------
    ValueError
        Naming ``structure`` if it is not a structure or is a general graph (no levels).
    """
    G = as_structure(structure)
    kind = G.graph["kind"]
    if kind == "tree":
        return G
    if kind == "product":
        f1, f2 = G.graph["factors"]
        return tree([len(f1.graph["clusters"]), len(f2.graph["clusters"])])
    if kind in ("flat", "chain", "ring"):
        return tree([len(G.graph["clusters"])])
    raise ValueError(
        "structure of kind 'graph' is not a hierarchy (no root, no levels); pass a tree, product, "
        "flat, chain or ring structure, or score a general graph with structured_loss"
    )


def _level_nodes(H: nx.DiGraph) -> tuple[np.ndarray, list[list]]:
    """Ancestor index of every leaf at depths 1..height, and the nodes of each level."""
    root, clusters = H.graph["root"], H.graph["clusters"]
    paths = [nx.shortest_path(H, root, leaf) for leaf in clusters]  # root, depth 1, ..., leaf
    height = max(len(p) for p in paths) - 1
    levels = np.empty((height, len(clusters)), dtype=int)
    nodes = []
    for depth in range(1, height + 1):
        # a leaf shallower than this depth stands for itself at the deeper levels
        ancestors = [p[min(depth, len(p) - 1)] for p in paths]
        order = list(dict.fromkeys(ancestors))  # first appearance in cluster order
        index = {v: i for i, v in enumerate(order)}
        levels[depth - 1] = [index[v] for v in ancestors]
        nodes.append(order)
    return levels, nodes


def hierarchy_levels(structure) -> np.ndarray:
    r"""Map every leaf cluster to its ancestor at each depth of the hierarchy.

    ``levels[l - 1, k]`` is the index of the depth-``l`` ancestor of cluster ``k``
    (``l = 1`` the top level, the children of the root; ``l = L`` = the height, the leaves).
    Level-``l`` nodes are numbered ``0, 1, ...`` in the order they first appear along the
    clusters, so ``levels[-1] = arange(c)`` when all leaves are at depth ``L``.  A leaf shallower
    than ``l`` stands for itself at level ``l``.  Composing with leaf labels,
    ``levels[l - 1][y]`` gives the level-``l`` labels of CLUHSICAL Section IV-A (Tables I-III).
    See :func:`as_hierarchy` for the hierarchy of a product or a flat/chain/ring structure.

    Parameters
    ----------
    structure : structure
        A tree, product, flat, chain or ring structure.

    Returns
    -------
    ndarray of int, shape (L, c)

    Raises
    ------
    ValueError
        Naming ``structure`` (a general graph, or not a structure).

    Examples
    --------
    >>> from cvxclust.structures import tree
    >>> hierarchy_levels(tree([2, 3]))
    array([[0, 0, 0, 1, 1, 1],
           [0, 1, 2, 3, 4, 5]])
    """
    return _level_nodes(as_hierarchy(structure))[0]


def _level_losses(structure, H: nx.DiGraph, nodes: list[list]) -> list[np.ndarray]:
    """The tree loss between the nodes of each level, in the order of :func:`_level_nodes`."""
    root = H.graph["root"]
    depth = nx.shortest_path_length(H, root)
    losses = []
    for level, order in enumerate(nodes, start=1):
        if level == len(nodes):
            # the leaves: the structure's own loss (tree loss; ring, chain loss of a one-level
            # structure; 0/1/2 of a product)
            losses.append(loss_matrix(structure))
        elif len(order) == 1:
            losses.append(np.zeros((1, 1)))
        else:
            # the tree cut at this depth: its leaves are the level's nodes
            T = tree(nx.DiGraph(H.subgraph(v for v in H if depth[v] <= level)))
            T.graph["clusters"] = list(order)
            losses.append(loss_matrix(T))
    return losses


def _check_cluster_labels(y: np.ndarray, name: str, c: int) -> np.ndarray:
    if not np.issubdtype(y.dtype, np.integer):
        if not np.issubdtype(y.dtype, np.number) or not np.all(np.mod(y, 1) == 0):
            raise ValueError(f"{name} must hold integer cluster labels 0..{c - 1}")
        y = y.astype(int)
    if y.min() < 0 or y.max() >= c:
        raise ValueError(f"{name} must hold cluster labels in 0..{c - 1} (the structure's clusters), "
                         f"got values in {y.min()}..{y.max()}")
    return y


def _check_permutations(permutations, c: int) -> np.ndarray:
    try:
        P = np.array([np.asarray(p) for p in permutations])
    except (TypeError, ValueError):
        raise ValueError("permutations must be an iterable of arrays p with p[cluster] = class") from None
    if P.ndim != 2 or P.shape[0] == 0 or P.shape[1] != c or not np.issubdtype(P.dtype, np.integer):
        raise ValueError(f"permutations must hold at least one integer array of length c={c}, got shape {P.shape}")
    if not _is_permutation(P):
        raise ValueError(f"permutations must be permutations of 0..{c - 1}")
    return P


def level_scores(y_true, y_pred, structure, permutations: Iterable | None = None) -> dict:
    r"""Accuracy and tree loss at every level of a hierarchy, after the single best admissible
    relabeling (the evaluation of CLUHSICAL Section IV-A, Tables I-III; Table IV for a ring).

    One relabeling :math:`\pi^*` of the leaf clusters is chosen among ``permutations`` (default:
    the structure's admissible permutations, ``structures.admissible_permutations``) by the
    **lowest mean leaf-level loss**, ties broken by the **highest leaf-level accuracy**, then by
    the order of ``permutations`` (the identity first by default):

    .. math:: \pi^* = \arg\min_{\pi} \frac1n \sum_{i=1}^n \Delta\big(s_i, \pi(r_i)\big).

    With :math:`a_l(k)` the level-``l`` ancestor of leaf ``k`` (:func:`hierarchy_levels`), the
    scores at level ``l = 1 .. L`` (1 = top, ``L`` = leaves) are

    .. math:: \mathrm{acc}_l = \frac1n \sum_i \delta\big(a_l(s_i), a_l(\pi^*(r_i))\big), \qquad
              \mathrm{loss}_l = \frac1n \sum_i \Delta_l\big(a_l(s_i), a_l(\pi^*(r_i))\big),

    where :math:`\Delta_l` is the tree loss (height of the first common ancestor,
    ``structures.loss_matrix``) of the hierarchy cut at depth ``l``, and :math:`\Delta_L` is the
    structure's own loss (tree loss; for a one-level ring or chain, the ring or chain loss).  At
    level 1 the tree loss equals the zero-one loss ``1 - acc_1``; the paper omits it, it is
    reported here anyway.  Per-level values are those of :func:`accuracy` and
    :func:`structured_loss` on the level labels.  The same :math:`\pi^*` serves every level, so
    an upper level's accuracy is never below the leaf accuracy.

    Parameters
    ----------
    y_true : array-like of int, shape (n_samples,)
        True leaf clusters ``0 .. c-1`` (the structure's cluster order).
    y_pred : array-like of int, shape (n_samples,)
        Predicted leaf clusters ``0 .. c-1``.
    structure : structure
        A tree, product, flat, chain or ring structure (see :func:`as_hierarchy`).
    permutations : iterable of array-like of shape (c,), optional
        Relabelings to choose from, ``p[cluster] = class``.  ``None``: the structure's
        admissible permutations.  Pass all ``c!`` permutations for unrestricted relabeling.

    Returns
    -------
    dict
        ``"accuracy"``: ndarray of shape (L,), entry ``l - 1`` for level ``l``;
        ``"loss"``: ndarray of shape (L,), the mean tree loss per level;
        ``"permutation"``: ndarray of shape (c,), the relabeling :math:`\pi^*` used.

    Raises
    ------
    ValueError
        Naming ``y_true``, ``y_pred``, ``structure`` or ``permutations``.
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    H = as_hierarchy(structure)
    c = len(H.graph["clusters"])
    y_true = _check_cluster_labels(y_true, "y_true", c)
    y_pred = _check_cluster_labels(y_pred, "y_pred", c)
    levels, nodes = _level_nodes(H)
    losses = _level_losses(structure, H, nodes)
    P = _check_permutations(admissible_permutations(structure) if permutations is None else permutations, c)

    counts = np.bincount(y_true * c + y_pred, minlength=c * c).reshape(c, c)  # [class, cluster]
    leaf_loss = losses[-1]
    total_loss = np.einsum("sr,spr->p", counts, leaf_loss[:, P])  # sum_i Delta(s_i, p[r_i])
    matches = counts[P, np.arange(c)].sum(axis=1)  # sum_i [p[r_i] == s_i]
    best = np.lexsort((np.arange(P.shape[0]), -matches, total_loss))[0]
    perm = P[best]

    relabeled = perm[y_pred]
    acc, loss = [], []
    for lv, Ll in zip(levels, losses):
        t, r = lv[y_true], lv[relabeled]
        identity = [np.arange(Ll.shape[0])]  # pi* is already applied
        acc.append(accuracy(t, r, identity))
        loss.append(structured_loss(t, r, Ll, identity))
    return {"accuracy": np.array(acc), "loss": np.array(loss), "permutation": perm.copy()}
