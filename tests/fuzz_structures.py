"""Strategies of structures for the fuzz tests: valid ones (``cvxclust.structures`` builders and
plain graphs ``as_structure`` accepts) and forged or foreign objects that no function may accept."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from hypothesis import strategies as st

from cvxclust import structures


@st.composite
def small_structures(draw, allow_product=True):
    """Valid structures and graphs that ``as_structure`` accepts, with at most 9 clusters."""
    kinds = ["chain", "ring", "flat", "tree", "rooted digraph", "graph"] + (["product"] if allow_product else [])
    kind = draw(st.sampled_from(kinds))
    if kind == "chain":
        return structures.chain(draw(st.integers(2, 5)))
    if kind == "ring":
        return structures.ring(draw(st.integers(3, 5)))
    if kind == "flat":
        return structures.flat(draw(st.integers(2, 4)))
    if kind == "tree":
        branching = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3).filter(lambda b: 2 <= math.prod(b) <= 9))
        return structures.tree(draw(st.sampled_from([list, tuple, np.array]))(branching))
    if kind == "rooted digraph":
        return nx.balanced_tree(draw(st.integers(2, 3)), draw(st.integers(1, 2)), create_using=nx.DiGraph)
    if kind == "graph":
        n = draw(st.integers(2, 6))
        return nx.gnp_random_graph(n, draw(st.sampled_from([0.0, 0.4, 1.0])), seed=draw(st.integers(0, 99)))
    return structures.kron(draw(small_structures(allow_product=False).filter(few_clusters)),
                           draw(small_structures(allow_product=False).filter(few_clusters)))


def few_clusters(S) -> bool:
    return structures.n_clusters(S) <= 3


def forged(attrs: dict, base=None):
    def make():
        G = structures.chain(3) if base is None else base()
        G.graph.update(attrs)
        return G
    return make


def undirected_tree():
    G = nx.Graph(structures.tree([2, 2]))
    G.graph.update(kind="tree", root=(), clusters=[(0, 0), (0, 1), (1, 0), (1, 1)])
    return G


def product_missing_a_cluster():
    G = structures.kron(structures.chain(2), structures.chain(2))
    G.graph["clusters"] = G.graph["clusters"][:3]
    return G


#: things that are not structures, each made afresh (name, factory)
JUNK = [
    lambda: None, lambda: 3, lambda: "chain", lambda: [[0, 1]], lambda: np.eye(2),
    lambda: nx.Graph(), lambda: nx.empty_graph(1),
    lambda: nx.MultiGraph([(0, 1), (0, 1)]),
    lambda: nx.Graph([(0, 0), (0, 1)]),  # a self-loop
    lambda: nx.DiGraph([(0, 1), (1, 0)]),  # a cycle
    lambda: nx.DiGraph([(0, 1)]),  # a rooted tree with one leaf
    lambda: nx.DiGraph([(0, 2), (1, 2)]),  # two roots
    lambda: nx.Graph([(0, "a")]),  # nodes that do not sort
    forged({"kind": "foo"}), forged({"kind": None}), forged({"kind": ["chain"]}),
    forged({"clusters": [0, 0, 1]}), forged({"clusters": [0, 1, 7]}), forged({"clusters": "012"}),
    forged({"clusters": [0]}), forged({"clusters": [[0], [1]]}),
    forged({"kind": "tree"}), undirected_tree,
    forged({"root": (5,)}, lambda: structures.tree([2, 2])),
    forged({"clusters": [(0, 0), (0, 1)]}, lambda: structures.tree([2, 2])),  # leaves missing
    forged({"kind": "product"}),  # no factors
    forged({"factors": [1, 2]}, lambda: structures.kron(structures.chain(2), structures.chain(2))),
    forged({"factors": [nx.path_graph(2), nx.path_graph(2)]},
            lambda: structures.kron(structures.chain(2), structures.chain(2))),
    forged({"factors": [structures.chain(2)]}, lambda: structures.kron(structures.chain(2), structures.chain(2))),
    product_missing_a_cluster,
    lambda: nx.MultiDiGraph(structures.tree([2])),
]


def any_structures():
    """Pairs ``(S, valid)``: structures of the builders and graphs ``as_structure`` accepts
    (valid), and the forged and foreign objects of ``JUNK`` (not)."""
    return st.one_of(small_structures().map(lambda S: (S, True)),
                     st.sampled_from(JUNK).map(lambda make: (make(), False)))
