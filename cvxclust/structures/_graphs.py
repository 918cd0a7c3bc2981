"""What a structure is: a networkx graph with ``kind`` and ``clusters`` graph attributes, checked
and coerced at the door."""

from __future__ import annotations

import copy

import networkx as nx

from .._checks import check_choice

KINDS = ("chain", "ring", "tree", "flat", "product", "graph")


def finish_structure(G: nx.Graph, kind: str, clusters: list) -> nx.Graph:
    """Mark ``G`` as a structure of ``kind`` whose output clusters are ``clusters``, in order."""
    G.graph["kind"] = kind
    G.graph["clusters"] = list(clusters)
    return G


def rooted_tree(T, name: str) -> nx.DiGraph:
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
    return finish_structure(G, "tree", leaves)


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


def coerce_structure(obj, name: str) -> nx.Graph:
    """``obj`` as a structure, checked, with errors naming ``name``; unlike :func:`as_structure`
    it returns a structure given to it as is, not a copy (for read-only use)."""
    if not isinstance(obj, nx.Graph):
        raise ValueError(
            f"{name} must be a structure (chain, ring, flat, tree, kron) or a networkx graph, "
            f"got {type(obj).__name__}"
        )
    if "kind" in obj.graph:
        return _validate_structure(obj, name)
    if obj.is_directed():
        return rooted_tree(obj, name)
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
    return finish_structure(G, "graph", clusters)


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
    return coerce_structure(copy.deepcopy(obj) if isinstance(obj, nx.Graph) else obj, "structure")


def n_clusters(structure) -> int:
    """Number ``c`` of output clusters of ``structure``."""
    return len(coerce_structure(structure, "structure").graph["clusters"])
