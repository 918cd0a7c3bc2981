r"""Output structures on the clusters: chains, rings, trees, products and general graphs.

CLUHSIC (Yang, Kwok & Lu, Section 2) maximizes the dependence between the input kernel ``K`` and
the output kernel ``L = Pi A Pi^T`` on the labels,

.. math:: \max_{\Pi}\ \operatorname{tr}(K \Pi A \Pi^\top) \quad (2.3), \qquad
          \max_{P = \Pi D}\ \operatorname{tr}(K P A P^\top) \quad (2.4),

where the ``c x c`` output kernel ``A`` encodes how the clusters are related (Figure 1: chain,
ring, tree).  CLUHSICAL (Zhong, Pan, Kwok & Tsang) adds a loss :math:`\Delta(y, u)` between
clusters (tree loss, ring loss).  This module holds what both families need about the structure:

* a *structure* is a networkx graph with graph attributes ``G.graph["kind"]`` (one of
  :data:`KINDS`) and ``G.graph["clusters"]``, the ordered list of the ``c`` nodes that are the
  output clusters: label ``k`` is ``clusters[k]``.  Build one with :func:`chain`, :func:`ring`,
  :func:`flat`, :func:`tree`, :func:`kron`, or pass a plain graph / rooted tree to
  :func:`as_structure`;
* :func:`output_kernel` -- the ``A`` of (2.3)/(2.4);
* :func:`loss_matrix` -- the structured loss :math:`\Delta` (CLUHSICAL (11)-(12); evaluation
  losses of Section 6.1.2);
* :func:`admissible_permutations` -- the relabelings that keep the structure (the automorphisms
  of ``A``).  Section 5.3: a solution whose clusters are a *reversed* chain is as right as the
  original, a solution with the clusters in the wrong order is wrong, although unrestricted
  (Hungarian) matching scores both perfect.  Pass the result to
  ``cvxclust.metrics.accuracy(y_true, y_pred, permutations=...)``.

Conventions: a permutation is an int array ``perm`` with ``perm[k]`` the new label of cluster
``k`` (so ``perm[y_pred]`` relabels a prediction), as ``cvxclust.metrics`` expects
(``p[cluster] = class``).  Kernel automorphisms satisfy ``A[perm][:, perm] == A``.
"""

from __future__ import annotations

import copy
import itertools
import math
from collections.abc import Sequence

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import GraphMatcher

from ._checks import check_bool, check_choice, check_int_range, check_square_matrix

__all__ = [
    "KINDS",
    "LOSS_KINDS",
    "chain",
    "ring",
    "flat",
    "tree",
    "kron",
    "as_structure",
    "n_clusters",
    "output_kernel",
    "check_output_kernel",
    "loss_matrix",
    "check_loss_matrix",
    "admissible_permutations",
]

KINDS = ("chain", "ring", "tree", "flat", "product", "graph")
LOSS_KINDS = ("structure", "zero-one")

# eigenvalues above -_PSD_RTOL * max(1, |lambda|_max) count as >= 0: an even ring's 2I + adjacency
# is singular and eigvalsh returns its zero eigenvalue as about -1e-15.
_PSD_RTOL = 1e-9
# flat(c) admits all c! relabelings; 8! = 40320 is the most the default enumerates.
_DEFAULT_MAX_PERMUTATIONS = math.factorial(8)


# ----------------------------------------------------------------------------------------------
# builders
# ----------------------------------------------------------------------------------------------


def _finish(G: nx.Graph, kind: str, clusters: list) -> nx.Graph:
    G.graph["kind"] = kind
    G.graph["clusters"] = list(clusters)
    return G


def chain(c: int) -> nx.Graph:
    r"""A chain of ``c >= 2`` clusters (Figure 1(a)): the path graph ``0 - 1 - ... - (c-1)``.

    Output kernel ``2I + adjacency`` (Section 2; the 5 x 5 teapot kernel of Section 6.1.1);
    structured loss ``|i - j|`` (the chain loss of Section 6.1.2); admissible relabelings: the
    identity and the reversal.

    Parameters
    ----------
    c : int >= 2
        Number of clusters.

    Returns
    -------
    networkx.Graph
        ``kind="chain"``, ``clusters=[0, ..., c-1]``.
    """
    c = check_int_range(c, "c", 2)
    return _finish(nx.path_graph(c), "chain", range(c))


def ring(c: int) -> nx.Graph:
    r"""A ring of ``c >= 3`` clusters (Figure 1(b)): the cycle graph ``0 - 1 - ... - (c-1) - 0``.

    Output kernel ``2I + adjacency`` (Section 2; CLUHSICAL Section IV-B: 2 same, 1 neighbours,
    0 otherwise); ring loss 0 / 1 / 2 (same / neighbours / otherwise, CLUHSICAL Section IV-B);
    admissible relabelings: the ``2c`` rotations and reflections (dihedral group).

    Parameters
    ----------
    c : int >= 3
        Number of clusters.

    Returns
    -------
    networkx.Graph
        ``kind="ring"``, ``clusters=[0, ..., c-1]``.
    """
    c = check_int_range(c, "c", 3)
    return _finish(nx.cycle_graph(c), "ring", range(c))


def flat(c: int) -> nx.Graph:
    r"""``c >= 2`` unrelated clusters (no edges): plain clustering, output kernel ``A = I``.

    With ``A = I`` (2.3) is kernel k-means (Section 4); the loss is zero-one and every one of
    the ``c!`` relabelings is admissible.

    Parameters
    ----------
    c : int >= 2
        Number of clusters.

    Returns
    -------
    networkx.Graph
        ``kind="flat"``, ``clusters=[0, ..., c-1]``.
    """
    c = check_int_range(c, "c", 2)
    return _finish(nx.empty_graph(c), "flat", range(c))


def _tree_from_digraph(T, name: str) -> nx.DiGraph:
    """A ``kind="tree"`` copy of the rooted tree ``T`` (edges parent -> child)."""
    if T.is_multigraph():
        raise ValueError(f"{name} must be a simple directed tree, got a multigraph")
    if T.number_of_nodes() == 0 or not nx.is_arborescence(T):
        raise ValueError(
            f"{name} must be a rooted tree: a connected nx.DiGraph with edges parent -> child, "
            "one root (in-degree 0) and every other node with exactly one parent"
        )
    G = nx.DiGraph(T)  # copy: the caller's graph attributes stay untouched
    root = next(v for v, d in G.in_degree() if d == 0)
    leaves = [v for v in nx.dfs_preorder_nodes(G, root) if G.out_degree(v) == 0]
    if len(leaves) < 2:
        raise ValueError(f"{name} must have at least 2 leaves (clusters), got {len(leaves)}")
    G.graph.clear()
    G.graph["root"] = root
    return _finish(G, "tree", leaves)


def tree(branching) -> nx.DiGraph:
    r"""A hierarchy of clusters (Figure 1(c)); the clusters are its leaves.

    Output kernel: the hierarchy kernel of CLUHSICAL Section IV-A-2.  Each node ``z`` other than
    the root gives a feature :math:`\lambda_z(y) = 1` if ``z`` is leaf ``y`` or an ancestor of
    it, else 0; with :math:`\Lambda_{yz} = \lambda_z(y)`, :math:`A = \Lambda\Lambda^\top`, i.e.
    ``A[i, j]`` = the number of non-root nodes shared by the root paths of leaves ``i`` and
    ``j``.  ``tree([2, 2])`` gives the tree kernel printed in Section 2, ``tree([3, 3])`` gives
    ``I_3 kron (I + 11^T)``, the face kernel of Section 6.1.1.  Loss: the tree loss
    (Section 6.1.2), see :func:`loss_matrix`.

    Parameters
    ----------
    branching : sequence of int >= 1, or networkx.DiGraph
        Either the number of children at each level (``[2, 2]``: a root with 2 children, each
        with 2 leaf clusters; nodes are the tuples of child indices, root ``()``), or an existing
        rooted tree as an ``nx.DiGraph`` with edges parent -> child (the root is the node of
        in-degree 0; it is copied, not modified).

    Returns
    -------
    networkx.DiGraph
        ``kind="tree"``, ``root``, and ``clusters`` = the leaves in depth-first order.
    """
    if isinstance(branching, nx.Graph):
        if not branching.is_directed():
            raise ValueError("branching must be a sequence of ints or a rooted nx.DiGraph, got an undirected graph")
        return _tree_from_digraph(branching, "branching")
    if isinstance(branching, np.ndarray) and branching.ndim == 1:
        branching = branching.tolist()
    if isinstance(branching, (str, bytes)) or not isinstance(branching, Sequence) or len(branching) == 0:
        raise ValueError(f"branching must be a non-empty sequence of ints or a rooted nx.DiGraph, got {branching!r}")
    counts = [check_int_range(b, "branching", 1) for b in branching]
    if math.prod(counts) < 2:
        raise ValueError(f"branching must give at least 2 leaves (clusters), got {list(branching)!r}")
    G = nx.DiGraph()
    G.add_node(())
    level = [()]
    for b in counts:
        nxt = []
        for parent in level:
            for k in range(b):
                G.add_edge(parent, parent + (k,))
                nxt.append(parent + (k,))
        level = nxt
    G.graph["root"] = ()
    return _finish(G, "tree", level)  # breadth-first leaves of a full tree are in DFS order


def kron(S1, S2) -> nx.Graph:
    r"""The product structure ``S1 x S2``: clusters are the pairs ``(a, b)`` in Kronecker order
    (``a`` major), output kernel ``np.kron(A1, A2)``.

    ``kron(flat(4), chain(3))`` is the COIL kernel ``I_4 kron chain_3`` of Section 6.1.1 (4
    objects, each a chain of 3 poses); ``kron(flat(3), ring(3))`` the face kernel
    ``I_3 kron (I + 11^T)``.  The graph is the support of the product kernel: the pairs joined
    when their kernel entry is nonzero, with ``weight`` = that entry (for ``kron(flat(4),
    chain(3))``: 4 disjoint chains of 3), so that its automorphisms are those of the kernel.
    The factors are kept in ``G.graph["factors"]``.  Loss: the two-level hierarchy
    (see :func:`loss_matrix`).

    Parameters
    ----------
    S1, S2 : structure
        Anything :func:`as_structure` accepts.

    Returns
    -------
    networkx.Graph
        ``kind="product"``, ``factors=[S1, S2]``, ``clusters=[(a, b) for a in S1 for b in S2]``.
    """
    S1 = _as_structure(S1, "S1")
    S2 = _as_structure(S2, "S2")
    A = np.kron(output_kernel(S1, check_psd=False), output_kernel(S2, check_psd=False))
    clusters = [(a, b) for a in S1.graph["clusters"] for b in S2.graph["clusters"]]
    G = nx.Graph()
    G.add_nodes_from(clusters)
    rows, cols = np.nonzero(np.triu(A, 1))
    G.add_weighted_edges_from((clusters[i], clusters[j], float(A[i, j])) for i, j in zip(rows, cols))
    G.graph["factors"] = [S1, S2]
    return _finish(G, "product", clusters)


# ----------------------------------------------------------------------------------------------
# validation
# ----------------------------------------------------------------------------------------------


def _validate_structure(G, name: str) -> nx.Graph:
    kind = G.graph.get("kind")
    check_choice(kind, f"{name} kind", KINDS)
    clusters = G.graph.get("clusters")
    if not isinstance(clusters, list) or len(clusters) < 2:
        raise ValueError(f"{name}.graph['clusters'] must be a list of at least 2 nodes")
    try:
        distinct = len(set(clusters)) == len(clusters)
    except TypeError:
        distinct = False
    if not distinct or not all(G.has_node(v) for v in clusters):
        raise ValueError(f"{name}.graph['clusters'] must list distinct nodes of the graph")
    if kind == "tree":
        root = G.graph.get("root")
        if (not G.is_directed() or G.is_multigraph() or not nx.is_arborescence(G) or root not in G
                or G.in_degree(root) != 0):
            raise ValueError(f"{name} of kind 'tree' must be a rooted nx.DiGraph tree with graph['root']")
        if set(clusters) != {v for v in G if G.out_degree(v) == 0}:
            raise ValueError(f"{name}.graph['clusters'] of a tree must be its leaves")
    elif G.is_directed() or G.is_multigraph() or nx.number_of_selfloops(G):
        raise ValueError(f"{name} of kind {kind!r} must be a simple undirected nx.Graph without self-loops")
    if kind == "product":
        factors = G.graph.get("factors")
        if not isinstance(factors, list) or len(factors) != 2:
            raise ValueError(f"{name}.graph['factors'] must be a list of the 2 factor structures")
        if not all(isinstance(f, nx.Graph) and "kind" in f.graph for f in factors):
            raise ValueError(f"{name}.graph['factors'] must hold 2 structures (chain, ring, flat, tree, kron)")
        f1, f2 = (_validate_structure(f, f"{name} factor") for f in factors)
        if len(clusters) != len(f1.graph["clusters"]) * len(f2.graph["clusters"]):
            raise ValueError(f"{name}.graph['clusters'] must hold one cluster per pair of factor clusters")
    return G


def _as_structure(obj, name: str) -> nx.Graph:
    if not isinstance(obj, nx.Graph):
        raise ValueError(
            f"{name} must be a structure (chain, ring, flat, tree, kron) or a networkx graph, "
            f"got {type(obj).__name__}"
        )
    if "kind" in obj.graph:
        return _validate_structure(obj, name)
    if obj.is_directed():
        return _tree_from_digraph(obj, name)
    if obj.is_multigraph():
        raise ValueError(f"{name} must be a simple graph, got a multigraph")
    if nx.number_of_selfloops(obj):
        raise ValueError(f"{name} must not have self-loops (the kernel's diagonal is fixed at 2)")
    if obj.number_of_nodes() < 2:
        raise ValueError(f"{name} must have at least 2 nodes (clusters), got {obj.number_of_nodes()}")
    try:
        clusters = sorted(obj.nodes)
    except TypeError:
        raise ValueError(f"{name} nodes must be sortable to fix the cluster order") from None
    G = nx.Graph(obj)  # copy: the caller's graph stays untouched
    G.graph.clear()
    return _finish(G, "graph", clusters)


def as_structure(obj) -> nx.Graph:
    """Return ``obj`` as a structure.

    Parameters
    ----------
    obj : structure, networkx.Graph or networkx.DiGraph
        A structure built by this module (returned as is after checking its attributes); a
        plain undirected ``nx.Graph`` (a copy with ``kind="graph"`` and ``clusters`` = its
        nodes, sorted); or a rooted ``nx.DiGraph`` tree, edges parent -> child (as
        :func:`tree`).

    Returns
    -------
    networkx.Graph

    Raises
    ------
    ValueError
        Naming ``structure``, for anything else (wrong type, multigraph, self-loops, fewer than
        2 clusters, a DiGraph that is not a rooted tree, inconsistent attributes).

    Notes
    -----
    The result is always a copy: networkx caches its views (``G.nodes``, ``G.edges``, ...) in
    the graph's ``__dict__`` on first use, so working on the caller's graph would change an
    estimator's parameter during ``fit`` (scikit-learn's ``check_estimators_overwrite_params``).
    """
    return _as_structure(copy.deepcopy(obj) if isinstance(obj, nx.Graph) else obj, "structure")


def n_clusters(structure) -> int:
    """Number ``c`` of output clusters of ``structure``."""
    return len(_as_structure(structure, "structure").graph["clusters"])


# ----------------------------------------------------------------------------------------------
# output kernels
# ----------------------------------------------------------------------------------------------


def _min_eig_ok(A: np.ndarray) -> tuple[bool, float]:
    w = np.linalg.eigvalsh(A)
    return bool(w[0] >= -_PSD_RTOL * max(1.0, np.abs(w).max())), float(w[0])


def check_output_kernel(A, n_clusters: int | None = None, psd: bool = True) -> np.ndarray:
    r"""Validate a user-given ``c x c`` output kernel ``A`` for (2.3)/(2.4).

    Parameters
    ----------
    A : array-like of shape (c, c)
        Square, finite, symmetric and (if ``psd``) positive semidefinite: ``A`` is a kernel on
        the clusters, :math:`A = \Lambda\Lambda^\top`.
    n_clusters : int, optional
        Required ``c``.
    psd : bool
        Check :math:`\lambda_{\min}(A) \ge -10^{-9}\max(1, |\lambda|_{\max})`.

    Returns
    -------
    ndarray of shape (c, c)
        ``A`` as a float array, exactly symmetric.

    Raises
    ------
    ValueError
        Naming ``A``, ``n_clusters`` or ``psd`` (a bool, not a truthy value).
    """
    A = check_square_matrix(A, "A")
    psd = check_bool(psd, "psd")
    if n_clusters is not None:
        n_clusters = check_int_range(n_clusters, "n_clusters", 1)
        if A.shape[0] != n_clusters:
            raise ValueError(f"A must be {n_clusters} x {n_clusters} (one row per cluster), got {A.shape}")
    if psd:
        ok, lam = _min_eig_ok(A)
        if not ok:
            raise ValueError(f"A must be positive semidefinite, its smallest eigenvalue is {lam:.3g}")
    return A


def _hierarchy_kernel(G: nx.DiGraph) -> np.ndarray:
    root, clusters = G.graph["root"], G.graph["clusters"]
    features = {z: i for i, z in enumerate(v for v in G if v != root)}  # the root's feature is excluded
    Lam = np.zeros((len(clusters), len(features)))
    for k, leaf in enumerate(clusters):
        for z in nx.ancestors(G, leaf) | {leaf}:
            if z != root:
                Lam[k, features[z]] = 1.0
    return Lam @ Lam.T


def output_kernel(structure, *, check_psd: bool = True) -> np.ndarray:
    r"""The ``c x c`` output kernel ``A`` of a structure, in cluster order.

    * chain, ring, general graph: ``2I + adjacency`` (Section 2, Figure 1(a),(b); edge weights
      are ignored);
    * flat: ``I`` (plain kernel k-means);
    * tree: the hierarchy kernel :math:`\Lambda\Lambda^\top` of CLUHSICAL Section IV-A-2
      (see :func:`tree`); the tree matrix of Section 2 for ``tree([2, 2])``;
    * product: ``np.kron(A1, A2)`` of the factors' kernels (Section 6.1.1).

    Parameters
    ----------
    structure : structure
        Anything :func:`as_structure` accepts.
    check_psd : bool, keyword-only
        Raise if ``A`` is not positive semidefinite.  Only a general graph's ``2I + adjacency``
        can fail (e.g. a star with 5 or more leaves: :math:`\lambda_{\min} = 2 - \sqrt{5}`).

    Returns
    -------
    ndarray of shape (c, c)

    Raises
    ------
    ValueError
        Naming ``structure``, if it is not a structure or (``check_psd``) its kernel is
        indefinite; pass your own p.s.d. kernel instead (:func:`check_output_kernel`).
        Naming ``check_psd`` if it is not a bool.
    """
    G = _as_structure(structure, "structure")
    check_psd = check_bool(check_psd, "check_psd")
    kind, clusters = G.graph["kind"], G.graph["clusters"]
    c = len(clusters)
    if kind == "flat":
        A = np.eye(c)
    elif kind == "tree":
        A = _hierarchy_kernel(G)
    elif kind == "product":
        f1, f2 = G.graph["factors"]
        A = np.kron(output_kernel(f1, check_psd=False), output_kernel(f2, check_psd=False))
    else:  # chain, ring, graph
        A = 2.0 * np.eye(c) + nx.to_numpy_array(G, nodelist=clusters, weight=None)
    if check_psd:
        ok, lam = _min_eig_ok(A)
        if not ok:
            raise ValueError(
                f"structure gives an output kernel that is not positive semidefinite (smallest "
                f"eigenvalue {lam:.3g}); pass your own p.s.d. output kernel A instead "
                "(validated by cvxclust.structures.check_output_kernel)"
            )
    return A


# ----------------------------------------------------------------------------------------------
# losses
# ----------------------------------------------------------------------------------------------


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
    G = _as_structure(structure, "structure")
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


# ----------------------------------------------------------------------------------------------
# admissible relabelings
# ----------------------------------------------------------------------------------------------


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-12)


def admissible_permutations(structure, *, max_permutations: int = _DEFAULT_MAX_PERMUTATIONS) -> list[np.ndarray]:
    r"""The relabelings of the clusters that keep the structure: the automorphisms of ``A``.

    A permutation ``perm`` (``perm[k]`` = new label of cluster ``k``) is admissible when
    ``A[perm[i], perm[j]] == A[i, j]`` for all ``i, j``: relabeling a partition matrix by it,
    :math:`\Pi \to \Pi Q`, leaves the CLUHSIC objective :math:`\operatorname{tr}(K\Pi A\Pi^\top)`
    (2.3)/(2.4) unchanged.  Section 5.3: for a chain only the identity and the reversal are
    admissible, so solutions (a) and (b) are equally right and (d) is wrong.  They are found as
    the automorphisms of the weighted complete graph on the clusters (node attribute
    ``A[k, k]``, edge attribute ``A[i, j]``) by networkx's VF2 ``GraphMatcher``; the graph
    searched keeps only the nonzero entries as edges, which has the same automorphisms (an
    isomorphism maps non-edges, i.e. zero entries, to non-edges) and is much faster for sparse
    kernels.  A kernel ``a I + b (11^T - I)`` (flat, complete graph, one-level tree) admits every
    relabeling; its ``c!`` permutations are listed directly, without a search.  Counts: chain 2, ring
    ``2c``, ``tree([2, 2])`` 8, ``kron(flat(4), chain(3))`` :math:`4!\,2^4 = 384`, flat ``c!``.

    They are the symmetries of the *kernel*, which is what CLUHSIC sees: where the kernel has
    more symmetry than the drawn structure, so does this list (``ring(3)``'s kernel is that of
    a complete graph: 6 relabelings; ``kron(chain(2), chain(2))``'s may also swap the two
    factors, which the product's two-level loss of :func:`loss_matrix` does not respect).

    Parameters
    ----------
    structure : structure
        Anything :func:`as_structure` accepts.
    max_permutations : int, keyword-only
        Raise rather than enumerate more than this many (default ``8! = 40320``; ``flat(9)``
        would need 362880).  The search costs about 0.2 ms per permutation for ``c = 18`` on
        one core, so a structure far beyond the limit takes seconds to be refused
        (``tree([3, 3, 2])``, 663552 relabelings: about 9 s).

    Returns
    -------
    list of ndarray of shape (c,), dtype int
        Sorted lexicographically, so the identity comes first.  Pass them as
        ``cvxclust.metrics.accuracy(y_true, y_pred, permutations=...)``.

    Raises
    ------
    ValueError
        Naming ``structure`` when there are more than ``max_permutations``; use unrestricted
        Hungarian matching (``permutations=None``) then.
    """
    max_permutations = check_int_range(max_permutations, "max_permutations", 1)
    A = output_kernel(structure, check_psd=False)
    c = A.shape[0]
    off = A[~np.eye(c, dtype=bool)]
    fully_symmetric = np.allclose(np.diag(A), A[0, 0]) and np.allclose(off, off[0])
    if fully_symmetric and math.factorial(c) > max_permutations:
        # every relabeling keeps A = a I + b (11^T - I) (flat, complete graph, one-level tree)
        raise ValueError(
            f"structure admits all {c}! = {math.factorial(c)} relabelings of its {c} clusters "
            f"(more than max_permutations={max_permutations}); use unrestricted Hungarian "
            "matching instead (cvxclust.metrics.accuracy(..., permutations=None))"
        )
    if fully_symmetric:
        return [np.array(p, dtype=int) for p in itertools.permutations(range(c))]  # lexicographic
    G = nx.Graph()
    G.add_nodes_from((k, {"a": float(A[k, k])}) for k in range(c))
    # zero entries are the complete graph's missing edges
    rows, cols = np.nonzero(np.abs(np.triu(A, 1)) > 1e-12 * np.abs(A).max())
    G.add_edges_from((i, j, {"a": float(A[i, j])}) for i, j in zip(rows.tolist(), cols.tolist()))

    def match(x, y):  # node and edge attributes alike
        return _close(x["a"], y["a"])

    perms = []
    for iso in GraphMatcher(G, G, node_match=match, edge_match=match).isomorphisms_iter():
        if len(perms) == max_permutations:
            raise ValueError(
                f"structure admits more than max_permutations={max_permutations} relabelings; "
                "use unrestricted Hungarian matching instead (cvxclust.metrics.accuracy(..., "
                "permutations=None)) or raise max_permutations"
            )
        perms.append(tuple(iso[k] for k in range(c)))
    return [np.array(p, dtype=int) for p in sorted(perms)]
