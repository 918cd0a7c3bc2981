"""The structures of the papers: chains, rings, flat sets, trees and products of them."""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import numpy as np

from .._checks import check_int_range
from ._graphs import coerce_structure, finish_structure, rooted_tree
from ._kernels import output_kernel


def chain(c: int) -> nx.Graph:
    r"""A chain of ``c >= 2`` clusters (Figure 1(a)): the path graph with edges ``(k, k + 1)``.

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
    return finish_structure(nx.path_graph(c), "chain", range(c))


def ring(c: int) -> nx.Graph:
    r"""A ring of ``c >= 3`` clusters (Figure 1(b)): the cycle graph with edges ``(k, k + 1 mod c)``.

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
    return finish_structure(nx.cycle_graph(c), "ring", range(c))


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
    return finish_structure(nx.empty_graph(c), "flat", range(c))


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
        return rooted_tree(branching, "branching")
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
    return finish_structure(G, "tree", level)  # breadth-first leaves of a full tree are in DFS order


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
    S1 = coerce_structure(S1, "S1")
    S2 = coerce_structure(S2, "S2")
    A = np.kron(output_kernel(S1, check_psd=False), output_kernel(S2, check_psd=False))
    clusters = [(a, b) for a in S1.graph["clusters"] for b in S2.graph["clusters"]]
    G = nx.Graph()
    G.add_nodes_from(clusters)
    rows, cols = np.nonzero(np.triu(A, 1))
    G.add_weighted_edges_from((clusters[i], clusters[j], float(A[i, j])) for i, j in zip(rows, cols))
    G.graph["factors"] = [S1, S2]
    return finish_structure(G, "product", clusters)
