"""Structured losses between clusters (CLUHSICAL (11)-(12); the evaluation losses of CLUHSIC
Section 6.1.2)."""

from __future__ import annotations

import networkx as nx
import numpy as np

from .._checks import check_choice, check_int_range, check_square_matrix
from ._graphs import coerce_structure

LOSS_KINDS = ("structure", "zero-one")


def check_loss_matrix(loss, n_clusters: int | None = None) -> np.ndarray:
    r"""Validate a user loss :math:`\Delta` (``loss[i, j]`` = cost of predicting cluster ``j``
    for a sample of cluster ``i``): ``c x c``, finite, nonnegative, zero diagonal.  It need not
    be symmetric.

    Returns
    -------
    ndarray of shape (c, c), float

    Raises
    ------
    ValueError
        Naming ``loss``.
    """
    L = check_square_matrix(loss, "loss", symmetric=False, nonnegative=True)
    if n_clusters is not None:
        n_clusters = check_int_range(n_clusters, "n_clusters", 1)
    if n_clusters is not None and L.shape[0] != n_clusters:
        raise ValueError(f"loss must be {n_clusters} x {n_clusters} (one row per cluster), got {L.shape}")
    if np.any(np.diag(L) != 0):
        raise ValueError("loss must have a zero diagonal (no loss for the right cluster)")
    return L


def _tree_loss(G: nx.DiGraph) -> np.ndarray:
    root, clusters = G.graph["root"], G.graph["clusters"]
    depth = nx.shortest_path_length(G, root)
    c = len(clusters)
    pairs = [(clusters[i], clusters[j]) for i in range(c) for j in range(i + 1, c)]
    lca = dict(nx.tree_all_pairs_lowest_common_ancestor(G, root=root, pairs=pairs))
    L = np.zeros((c, c))
    for i in range(c):
        for j in range(i + 1, c):
            u, v = clusters[i], clusters[j]
            L[i, j] = L[j, i] = max(depth[u], depth[v]) - depth[lca[(u, v)]]
    return L


def loss_matrix(structure, kind="structure") -> np.ndarray:
    r"""The ``c x c`` loss :math:`\Delta(y_i, y_j)` between clusters (zero diagonal, >= 0).

    ``kind="zero-one"``: ``1 - I``.  ``kind="structure"``, by the structure's kind:

    * chain: ``|i - j|``, the chain loss of Section 6.1.2 (difference of positions);
    * ring: 0 same / 1 neighbours / 2 otherwise (the ring loss of CLUHSICAL Section IV-B);
    * tree: the tree loss of Section 6.1.2 / CLUHSICAL Section IV-A-2, the height of the first
      common ancestor of the two leaves (0 same leaf, 1 siblings, 2 cousins, ...).  Convention
      for leaves at unequal depths: the height is measured above the deeper leaf,
      :math:`\max(d_i, d_j) - d_{\mathrm{lca}(i, j)}` (``d`` = depth), which is the common
      definition for a tree whose leaves all have the same depth;
    * flat: zero-one;
    * product ``S1 x S2``: the two-level hierarchy root -> first-factor cluster ``a`` -> pair
      ``(a, b)``: 0 same pair, 1 same ``a``, 2 otherwise;
    * general graph: the shortest-path (hop) length, by networkx; a disconnected graph raises.

    Parameters
    ----------
    structure : structure
        Anything :func:`as_structure` accepts.
    kind : {"structure", "zero-one"} or array-like of shape (c, c)
        An array is a user loss: it is validated (:func:`check_loss_matrix`) and returned.

    Returns
    -------
    ndarray of shape (c, c)

    Raises
    ------
    ValueError
        Naming ``structure``, ``kind`` or ``loss`` (for a user array).
    """
    G = coerce_structure(structure, "structure")
    clusters = G.graph["clusters"]
    c = len(clusters)
    if kind is not None and not isinstance(kind, str):
        return check_loss_matrix(kind, c)
    check_choice(kind, "kind", LOSS_KINDS)
    skind = G.graph["kind"]
    if kind == "zero-one" or skind == "flat":
        return 1.0 - np.eye(c)
    if skind == "chain":
        pos = np.arange(c, dtype=float)
        return np.abs(pos[:, None] - pos[None, :])
    if skind == "ring":
        adj = nx.to_numpy_array(G, nodelist=clusters, weight=None)
        return np.where(adj > 0, 1.0, 2.0) - 2.0 * np.eye(c)
    if skind == "tree":
        return _tree_loss(G)
    if skind == "product":
        n2 = len(G.graph["factors"][1].graph["clusters"])
        first = np.arange(c) // n2  # the first-factor component of each pair (Kronecker order)
        return np.where(first[:, None] == first[None, :], 1.0, 2.0) - np.eye(c)
    # general graph
    if not nx.is_connected(G):
        raise ValueError(
            "structure is a disconnected graph: its shortest-path loss is infinite between "
            "components; pass your own loss array as kind"
        )
    dist = dict(nx.all_pairs_shortest_path_length(G))
    return np.array([[dist[u][v] for v in clusters] for u in clusters], dtype=float)
