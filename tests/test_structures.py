import itertools
import math

import networkx as nx
import numpy as np
import pytest

from cvxclust import metrics
from cvxclust import structures as st

# the matrices printed in the CLUHSIC paper (Section 2 and Section 6.1.1)
CHAIN4 = np.array([[2, 1, 0, 0], [1, 2, 1, 0], [0, 1, 2, 1], [0, 0, 1, 2]])
RING4 = np.array([[2, 1, 0, 1], [1, 2, 1, 0], [0, 1, 2, 1], [1, 0, 1, 2]])
TREE22 = np.array([[2, 1, 0, 0], [1, 2, 0, 0], [0, 0, 2, 1], [0, 0, 1, 2]])
TEAPOT5 = np.array([[2, 1, 0, 0, 0], [1, 2, 1, 0, 0], [0, 1, 2, 1, 0], [0, 0, 1, 2, 1], [0, 0, 0, 1, 2]])
FACE = np.kron(np.eye(3), [[2, 1, 1], [1, 2, 1], [1, 1, 2]])
COIL = np.kron(np.eye(4), [[2, 1, 0], [1, 2, 1], [0, 1, 2]])


def _labels(Pi):
    return np.argmax(np.asarray(Pi), axis=1)


# ---------------------------------------------------------------------------------- kernels


@pytest.mark.parametrize(
    "structure, expected",
    [
        (st.chain(4), CHAIN4),
        (st.chain(5), TEAPOT5),
        (st.ring(4), RING4),
        (st.tree([2, 2]), TREE22),
        (st.tree([3, 3]), FACE),
        (st.kron(st.flat(3), st.ring(3)), FACE),
        (st.kron(st.flat(4), st.chain(3)), COIL),
        (st.flat(3), np.eye(3)),
    ],
)
def test_kernels_equal_the_papers_matrices(structure, expected):
    A = st.output_kernel(structure)
    np.testing.assert_array_equal(A, expected)
    assert st.n_clusters(structure) == expected.shape[0]


def test_structure_attributes():
    G = st.chain(3)
    assert G.graph["kind"] == "chain" and G.graph["clusters"] == [0, 1, 2]
    T = st.tree([2, 2])
    assert T.graph["kind"] == "tree" and T.graph["root"] == ()
    assert T.graph["clusters"] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    P = st.kron(st.flat(4), st.chain(3))
    assert P.graph["kind"] == "product" and len(P.graph["factors"]) == 2
    assert P.graph["clusters"][:4] == [(0, 0), (0, 1), (0, 2), (1, 0)]
    # the product graph is the disjoint union of 4 chains of 3
    assert nx.number_connected_components(P) == 4
    assert all(nx.is_isomorphic(P.subgraph(comp), nx.path_graph(3)) for comp in nx.connected_components(P))
    assert st.flat(5).number_of_edges() == 0


def test_tree_from_digraph_and_as_structure():
    # an unbalanced hierarchy: root r -> a, b; a -> x, y; b -> z -> (u, v)
    T = nx.DiGraph([("r", "a"), ("r", "b"), ("a", "x"), ("a", "y"), ("b", "z"), ("z", "u"), ("z", "v")])
    S = st.tree(T)
    assert S.graph["root"] == "r"
    assert S.graph["clusters"] == ["x", "y", "u", "v"]
    assert "kind" not in T.graph  # the caller's graph is not modified
    assert st.as_structure(T).graph["clusters"] == S.graph["clusters"]
    # A[i, j] = number of shared non-root nodes on the root paths
    np.testing.assert_array_equal(
        st.output_kernel(S), [[2, 1, 0, 0], [1, 2, 0, 0], [0, 0, 3, 2], [0, 0, 2, 3]]
    )
    # a plain graph: kind "graph", clusters sorted, kernel 2I + adjacency
    G = nx.Graph([(2, 0), (0, 1)])
    S = st.as_structure(G)
    assert S.graph["kind"] == "graph" and S.graph["clusters"] == [0, 1, 2]
    np.testing.assert_array_equal(st.output_kernel(S), [[2, 1, 1], [1, 2, 0], [1, 0, 2]])
    assert st.as_structure(st.ring(5)).graph["kind"] == "ring"
    # tree() accepts a numpy array of branching factors
    assert st.n_clusters(st.tree(np.array([2, 3]))) == 6


# ------------------------------------------------------------------------------------ p.s.d.


def test_even_ring_is_psd_but_singular():
    A = st.output_kernel(st.ring(6))
    w = np.linalg.eigvalsh(A)
    assert abs(w[0]) < 1e-12  # 2 + 2 cos(pi) = 0
    st.check_output_kernel(A, n_clusters=6)


@pytest.mark.parametrize("graph", [nx.star_graph(5), nx.star_graph(8), nx.complete_bipartite_graph(3, 3)])
def test_indefinite_graph_kernel_raises(graph):
    with pytest.raises(ValueError, match="structure.*positive semidefinite.*own"):
        st.output_kernel(graph)
    A = st.output_kernel(graph, check_psd=False)  # still available on request
    assert np.linalg.eigvalsh(A)[0] < -0.1
    with pytest.raises(ValueError, match="A must be positive semidefinite"):
        st.check_output_kernel(A)
    st.check_output_kernel(A, psd=False)


def test_complete_graph_kernel_is_psd():
    # 2I + adj(K5) = I + 11^T has eigenvalues 1 and 6; a star with 4 leaves is singular, p.s.d.
    assert np.linalg.eigvalsh(st.output_kernel(nx.complete_graph(5)))[0] == pytest.approx(1)
    assert np.linalg.eigvalsh(st.output_kernel(nx.star_graph(4)))[0] == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize(
    "A, n, match",
    [
        (np.ones((2, 3)), None, "A must be a square"),
        ([[1, 2], [0, 1]], None, "A must be symmetric"),
        ([[1, np.nan], [np.nan, 1]], None, "A contains NaN"),
        (np.eye(3), 4, "A must be 4 x 4"),
        ([[0, 1], [1, 0]], None, "A must be positive semidefinite"),
        ("abc", None, "A must be a numeric"),
    ],
)
def test_check_output_kernel_rejects(A, n, match):
    with pytest.raises(ValueError, match=match):
        st.check_output_kernel(A, n_clusters=n)


# ------------------------------------------------------------------------------------ losses


def test_zero_one_loss():
    for S in (st.chain(4), st.ring(5), st.tree([2, 2]), st.flat(3)):
        c = st.n_clusters(S)
        np.testing.assert_array_equal(st.loss_matrix(S, "zero-one"), 1 - np.eye(c))
    np.testing.assert_array_equal(st.loss_matrix(st.flat(3)), 1 - np.eye(3))


def test_chain_loss_is_position_difference():
    np.testing.assert_array_equal(
        st.loss_matrix(st.chain(4)), [[0, 1, 2, 3], [1, 0, 1, 2], [2, 1, 0, 1], [3, 2, 1, 0]]
    )


def test_ring_loss_zero_one_two():
    L = st.loss_matrix(st.ring(5))
    expected = np.array(
        [[0, 1, 2, 2, 1], [1, 0, 1, 2, 2], [2, 1, 0, 1, 2], [2, 2, 1, 0, 1], [1, 2, 2, 1, 0]]
    )
    np.testing.assert_array_equal(L, expected)
    np.testing.assert_array_equal(st.loss_matrix(st.ring(3)), 1 - np.eye(3))


def test_tree_loss_heights():
    np.testing.assert_array_equal(
        st.loss_matrix(st.tree([2, 2])), [[0, 1, 2, 2], [1, 0, 2, 2], [2, 2, 0, 1], [2, 2, 1, 0]]
    )
    L = st.loss_matrix(st.tree([2, 2, 2]))
    assert L[0, 1] == 1 and L[0, 2] == 2 and L[0, 4] == 3 and L[7, 0] == 3
    # unequal depths: height above the deeper leaf (x, y at depth 2; u, v at depth 3)
    T = nx.DiGraph([("r", "a"), ("r", "b"), ("a", "x"), ("a", "y"), ("b", "z"), ("z", "u"), ("z", "v")])
    np.testing.assert_array_equal(
        st.loss_matrix(T), [[0, 1, 3, 3], [1, 0, 3, 3], [3, 3, 0, 1], [3, 3, 1, 0]]
    )


def test_product_loss_two_level_hierarchy():
    L = st.loss_matrix(st.kron(st.flat(2), st.chain(3)))
    expected = np.array(
        [
            [0, 1, 1, 2, 2, 2],
            [1, 0, 1, 2, 2, 2],
            [1, 1, 0, 2, 2, 2],
            [2, 2, 2, 0, 1, 1],
            [2, 2, 2, 1, 0, 1],
            [2, 2, 2, 1, 1, 0],
        ]
    )
    np.testing.assert_array_equal(L, expected)
    # the same as the tree loss of the corresponding two-level tree
    np.testing.assert_array_equal(st.loss_matrix(st.kron(st.flat(3), st.ring(3))), st.loss_matrix(st.tree([3, 3])))


def test_graph_loss_is_shortest_path():
    G = nx.Graph([(0, 1), (1, 2), (1, 3), (3, 4)])
    L = st.loss_matrix(G)
    assert L[0, 4] == 3 and L[2, 3] == 2 and L[0, 1] == 1
    np.testing.assert_array_equal(L, nx.floyd_warshall_numpy(G, nodelist=[0, 1, 2, 3, 4]))
    with pytest.raises(ValueError, match="structure is a disconnected graph"):
        st.loss_matrix(nx.Graph([(0, 1), (2, 3)]))


def test_user_loss_accepted_and_bad_ones_rejected():
    user = np.array([[0, 1, 5], [2, 0, 1], [3, 3, 0]])  # need not be symmetric
    np.testing.assert_array_equal(st.loss_matrix(st.chain(3), user), user)
    bad = [
        (np.zeros((2, 2)), "loss must be 3 x 3"),
        (np.ones((3, 3)), "loss must have a zero diagonal"),
        (-user, "loss must have nonnegative"),
        ([[0, np.inf, 0], [0, 0, 0], [0, 0, 0]], "loss contains NaN or infinite"),
        (np.zeros((3, 2)), "loss must be a square"),
    ]
    for loss, match in bad:
        with pytest.raises(ValueError, match=match):
            st.loss_matrix(st.chain(3), loss)
    with pytest.raises(ValueError, match="Unknown kind 'tree'"):
        st.loss_matrix(st.chain(3), "tree")


# ------------------------------------------------------------------------------ permutations


@pytest.mark.parametrize(
    "structure, count",
    [
        (st.chain(2), 2),
        (st.chain(5), 2),
        (st.ring(3), 6),
        (st.ring(4), 8),
        (st.ring(7), 14),
        (st.tree([2, 2]), 8),
        (st.tree([3, 3]), math.factorial(3) ** 4),
        (st.kron(st.flat(4), st.chain(3)), math.factorial(4) * 2**4),
        (st.flat(4), 24),
        (st.kron(st.chain(2), st.chain(3)), 4),
        (nx.star_graph(3), 6),
    ],
)
def test_permutation_counts_and_invariance(structure, count):
    perms = st.admissible_permutations(structure)
    assert len(perms) == count
    assert len({tuple(p) for p in perms}) == count
    c = st.n_clusters(structure)
    np.testing.assert_array_equal(perms[0], np.arange(c))  # identity first
    A = st.output_kernel(structure, check_psd=False)
    L = st.loss_matrix(structure)
    for p in perms:
        assert sorted(p) == list(range(c))
        np.testing.assert_array_equal(A[np.ix_(p, p)], A)
        np.testing.assert_array_equal(L[np.ix_(p, p)], L)


@pytest.mark.parametrize(
    "structure",
    [st.chain(4), st.ring(5), st.ring(6), st.tree([2, 2]), st.kron(st.flat(2), st.chain(3)), nx.star_graph(4)],
)
def test_permutations_are_exactly_the_kernel_automorphisms(structure):
    # brute force over all c! relabelings (c <= 6) as an independent check of the VF2 search
    A = st.output_kernel(structure, check_psd=False)
    c = A.shape[0]
    brute = {p for p in itertools.permutations(range(c)) if np.array_equal(A[np.ix_(p, p)], A)}
    assert {tuple(p) for p in st.admissible_permutations(structure)} == brute


def test_chain_and_ring_permutations_are_reversal_and_dihedral():
    assert [list(p) for p in st.admissible_permutations(st.chain(4))] == [[0, 1, 2, 3], [3, 2, 1, 0]]
    c = 5
    dihedral = {tuple((s + d * k) % c for k in range(c)) for s in range(c) for d in (1, -1)}
    assert {tuple(p) for p in st.admissible_permutations(st.ring(c))} == dihedral


def test_flat_permutations_are_all_and_too_many_raise():
    assert {tuple(p) for p in st.admissible_permutations(st.flat(3))} == set(itertools.permutations(range(3)))
    with pytest.raises(ValueError, match="structure admits all 9! .*Hungarian"):
        st.admissible_permutations(st.flat(9))
    with pytest.raises(ValueError, match="structure admits more than max_permutations=100.*Hungarian"):
        st.admissible_permutations(st.kron(st.flat(4), st.chain(3)), max_permutations=100)
    with pytest.raises(ValueError, match="max_permutations must be"):
        st.admissible_permutations(st.chain(3), max_permutations=0)


def test_section_5_3_chain_example():
    # six images, three clusters of two along a chain
    a = _labels([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]])
    b = _labels([[0, 0, 1], [0, 0, 1], [0, 1, 0], [0, 1, 0], [1, 0, 0], [1, 0, 0]])
    d = _labels([[1, 0, 0], [1, 0, 0], [0, 0, 1], [0, 0, 1], [0, 1, 0], [0, 1, 0]])
    perms = st.admissible_permutations(st.chain(3))
    assert metrics.accuracy(a, a, permutations=perms) == 1.0
    assert metrics.accuracy(a, b, permutations=perms) == 1.0
    assert metrics.accuracy(a, d, permutations=perms) < 1.0
    assert metrics.accuracy(a, d, permutations=perms) == pytest.approx(1 / 3)
    # structure-less (Hungarian) matching considers (a), (b), (d) all correct
    for pred in (a, b, d):
        assert metrics.accuracy(a, pred) == 1.0
    # and the admissible relabeling of (b) leaves the CLUHSIC objective tr(K Pi A Pi^T) unchanged
    rng = np.random.default_rng(0)
    X = rng.standard_normal((6, 3))
    K = X @ X.T
    A = st.output_kernel(st.chain(3))

    def obj(y):
        Pi = np.eye(3)[y]
        return np.trace(K @ Pi @ A @ Pi.T)

    assert obj(b) == pytest.approx(obj(a))
    # the mapping chosen matches metrics' convention p[cluster] = class
    assert metrics.best_mapping(a, b, permutations=perms) == {0: 2, 1: 1, 2: 0}


# ------------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: st.chain(1), "c must be"),
        (lambda: st.chain(2.5), "c must be an integer"),
        (lambda: st.ring(2), "c must be"),
        (lambda: st.flat(1), "c must be"),
        (lambda: st.tree([]), "branching must be"),
        (lambda: st.tree([2, 0]), "branching must be"),
        (lambda: st.tree([1]), "branching must give at least 2 leaves"),
        (lambda: st.tree("22"), "branching must be"),
        (lambda: st.tree(nx.DiGraph([(0, 1), (1, 0)])), "branching must be a rooted tree"),
        (lambda: st.tree(nx.DiGraph([(0, 2), (1, 2)])), "branching must be a rooted tree"),
        (lambda: st.tree(nx.path_graph(3)), "branching must be .*undirected"),
        (lambda: st.kron(st.chain(2), "x"), "S2 must be a structure"),
        (lambda: st.kron(np.eye(2), st.chain(2)), "S1 must be a structure"),
        (lambda: st.as_structure(np.eye(3)), "structure must be a structure"),
        (lambda: st.as_structure(nx.Graph([(0, 0), (0, 1)])), "structure must not have self-loops"),
        (lambda: st.as_structure(nx.MultiGraph([(0, 1), (0, 1)])), "structure must be a simple graph"),
        (lambda: st.as_structure(nx.empty_graph(1)), "structure must have at least 2 nodes"),
        (lambda: st.as_structure(nx.Graph([(0, "a")])), "structure nodes must be sortable"),
        (lambda: st.as_structure(nx.DiGraph([(0, 1), (2, 1)])), "structure must be a rooted tree"),
        (lambda: st.as_structure(nx.Graph(kind="cube")), "Unknown structure kind 'cube'"),
        (lambda: st.output_kernel([[1, 0], [0, 1]]), "structure must be a structure"),
        (lambda: st.n_clusters(3), "structure must be a structure"),
        (lambda: st.loss_matrix("chain"), "structure must be a structure"),
        (lambda: st.admissible_permutations(None), "structure must be a structure"),
        (lambda: st.check_loss_matrix(np.eye(2) - 1), "loss must have nonnegative"),
    ],
)
def test_bad_inputs_raise_naming_argument(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_tampered_structure_attributes_raise():
    G = st.chain(3)
    G.graph["clusters"] = [0, 1, 7]
    with pytest.raises(ValueError, match=r"structure.graph\['clusters'\] must list distinct nodes"):
        st.output_kernel(G)
    T = st.tree([2, 2])
    T.graph["clusters"] = [(), (0, 0)]
    with pytest.raises(ValueError, match="must be its leaves"):
        st.loss_matrix(T)
    P = st.kron(st.flat(2), st.chain(2))
    P.graph["factors"] = [st.flat(2)]
    with pytest.raises(ValueError, match="factors"):
        st.output_kernel(P)


def _generated_group(generators) -> set:
    """The closure of a set of permutations under composition."""
    group = {tuple(range(len(generators[0])))}
    frontier = set(group)
    while frontier:
        new = {tuple(np.asarray(g)[list(h)]) for h in frontier for g in generators} - group
        group |= new
        frontier = new
    return group


@pytest.mark.parametrize("structure", [st.chain(4), st.ring(5), st.tree([2, 2]), st.flat(4), st.flat(2)])
def test_kernel_automorphisms_of_the_matrix_are_the_admissible_permutations(structure):
    A = st.output_kernel(structure)
    listed = {tuple(p) for p in st.admissible_permutations(structure)}
    assert {tuple(p) for p in st.kernel_automorphisms(A)} == listed
    # the generators generate exactly the same group
    assert _generated_group(st.kernel_automorphisms(A, generators=True)) == listed


@pytest.mark.parametrize("c", [1, 2, 3, 9, 12])
def test_kernel_automorphisms_generators_of_a_flat_kernel_need_no_limit(c):
    generators = st.kernel_automorphisms(2.0 * np.eye(c), generators=True)
    assert len(generators) <= 2
    if c <= 9:  # all c! relabelings, without enumerating them in the function
        assert len(_generated_group(generators)) == math.factorial(c)
    for p in generators:
        assert sorted(p) == list(range(c))


def test_kernel_automorphisms_refuse_what_is_not_a_symmetric_kernel():
    with pytest.raises(ValueError, match="A"):
        st.kernel_automorphisms(np.array([[1.0, 2.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="A admits all 9!"):
        st.kernel_automorphisms(np.eye(9))
    assert [list(p) for p in st.kernel_automorphisms(np.diag([1.0, 2.0, 3.0]))] == [[0, 1, 2]]
    # nearly flat is not flat: the same tolerance as the search (relative 1e-9)
    nearly_flat = 2.0 * np.eye(3) + 1e-6 * np.diag([0.0, 1.0, 2.0])
    assert [list(p) for p in st.kernel_automorphisms(nearly_flat, generators=True)] == [[0, 1, 2]]
    assert len(st.kernel_automorphisms(2.0 * np.eye(3) + 1e-12 * np.diag([0.0, 1.0, 2.0]))) == 6
