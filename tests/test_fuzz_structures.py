"""Fuzz tests of ``cvxclust.structures`` (builders, validation, output kernels, losses, admissible
relabelings) through its public names only: bad and edge structures (multigraphs, self-loops,
cycles, one node, unsortable nodes, forged attributes, product structures whose factors are not
structures) and arguments (counts, flags, kernels and losses with NaN, wrong shapes).  Each call
either raises a ``ValueError``/``TypeError`` naming the offending argument or returns a correct
result, without changing its input (``fuzz_helpers.call``)."""

from __future__ import annotations

import math

import networkx as nx
import numpy as np
from fuzz_helpers import (
    FUZZ,
    assert_finite,
    assert_refused,
    assert_refused_naming_one_of,
    bad_arrays,
    call,
    counts,
    flags,
    is_flag,
    is_int,
    psd_matrices,
    refused,
    symmetric_matrices,
)
from fuzz_structures import any_structures, forged, small_structures
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cvxclust import structures

# -- builders -------------------------------------------------------------------------------------


@FUZZ
@given(st.sampled_from(["chain", "ring", "flat"]), counts(-1, 9, huge=False))
@example("ring", 2)
@example("chain", True)
def test_chain_ring_flat(builder, c):
    out = call(getattr(structures, builder), c, names=["c"])
    low = 3 if builder == "ring" else 2
    if not (is_int(c) and c >= low):
        return assert_refused(out, "c")
    assert out.graph["kind"] == builder and out.graph["clusters"] == list(range(c))
    assert structures.n_clusters(out) == c


@FUZZ
@given(st.one_of(
    st.lists(counts(-1, 3, huge=False), max_size=3).map(lambda b: b if math.prod(
        v for v in b if is_int(v) and v > 0) <= 27 else b[:1]),
    st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple),
    st.lists(st.integers(0, 3), min_size=1, max_size=3).map(np.array),
    st.sampled_from([None, 2, "22", b"22", {"a": 2}, np.array([[2, 2]]), nx.path_graph(3), nx.DiGraph(),
                     nx.DiGraph([(0, 1), (1, 0)])]),
    small_structures().filter(lambda S: S.is_directed()),
))
def test_tree(branching):
    out = call(structures.tree, branching, names=["branching"])
    if isinstance(branching, nx.DiGraph):
        valid = branching.number_of_nodes() > 0 and nx.is_arborescence(branching) and sum(
            1 for v in branching if branching.out_degree(v) == 0) >= 2
    elif isinstance(branching, (list, tuple)) or (isinstance(branching, np.ndarray) and branching.ndim == 1):
        values = list(branching)
        valid = bool(values) and all(is_int(b) and b >= 1 for b in values) and math.prod(values) >= 2
    else:
        valid = False
    if not valid:
        return assert_refused(out, "branching")
    assert not refused(out), out
    assert out.graph["kind"] == "tree" and len(out.graph["clusters"]) >= 2
    assert all(out.out_degree(v) == 0 for v in out.graph["clusters"])


@FUZZ
@given(any_structures(), any_structures())
def test_kron(first, second):
    (S1, valid1), (S2, valid2) = first, second
    out = call(structures.kron, S1, S2, names=["S1", "S2"])
    if not valid1:
        return assert_refused(out, "S1")
    if not valid2:
        return assert_refused(out, "S2")
    assert not refused(out), out
    c1, c2 = structures.n_clusters(S1), structures.n_clusters(S2)
    assert structures.n_clusters(out) == c1 * c2
    np.testing.assert_array_equal(structures.output_kernel(out, check_psd=False), np.kron(
        structures.output_kernel(S1, check_psd=False), structures.output_kernel(S2, check_psd=False)))


# -- validation and what a structure gives ---------------------------------------------------------


@FUZZ
@given(any_structures())
@example((forged({"factors": [1, 2]}, lambda: structures.kron(structures.chain(2), structures.chain(2)))(), False))
@example((nx.MultiDiGraph(structures.tree([2])), False))  # a multigraph tree was accepted
def test_as_structure(pair):
    """Was an AttributeError for a product whose factors are not structures."""
    S, valid = pair
    out = call(structures.as_structure, S, names=["structure"])
    if not valid:
        return assert_refused(out, "structure")
    assert not refused(out), out
    assert out.graph["kind"] in structures.KINDS and len(out.graph["clusters"]) >= 2
    assert structures.n_clusters(S) == len(out.graph["clusters"])


@FUZZ
@given(any_structures(), flags())
@example((structures.chain(3), True), "no")  # a truthy string was taken for True
def test_output_kernel(pair, check_psd):
    S, valid = pair
    out = call(structures.output_kernel, S, check_psd=check_psd, names=["structure", "check_psd"])
    if not valid or not is_flag(check_psd):
        assert_refused(out)
        assert ("structure" in str(out.error)) or ("check_psd" in str(out.error))
        return
    c = structures.n_clusters(S)
    if refused(out):  # only a general graph's 2I + adjacency can be indefinite
        assert check_psd and structures.as_structure(S).graph["kind"] == "graph", out.error
        return assert_refused(out, "structure", "positive semidefinite")
    assert out.shape == (c, c)
    assert_finite(out)
    np.testing.assert_array_equal(out, out.T)
    if check_psd:
        assert np.linalg.eigvalsh(out)[0] >= -1e-9 * max(1.0, np.abs(out).max())


@FUZZ
@given(st.one_of(psd_matrices(min_n=1), symmetric_matrices(), bad_arrays()), st.one_of(st.none(), counts(-1, 7)),
       flags())
@example(np.eye(2), None, "no")  # a truthy string was taken for True
def test_check_output_kernel(A, n_clusters, psd):
    out = call(structures.check_output_kernel, A, n_clusters, psd, names=["A", "n_clusters", "psd"])
    try:
        if np.asarray(A).dtype.kind in "USc":
            raise TypeError
        M = np.asarray(A, dtype=float)
        square = M.ndim == 2 and M.shape[0] == M.shape[1] >= 1 and np.all(
            np.isfinite(M)) and np.abs(M - M.T).max() <= 1e-10 * max(np.abs(M).max(), 1e-300)
    except (TypeError, ValueError):
        square = False
    if not square:
        return assert_refused(out, "A")
    bad = []
    if n_clusters is not None and not (is_int(n_clusters) and n_clusters >= 1 and n_clusters == M.shape[0]):
        bad.append("n_clusters" if not (is_int(n_clusters) and n_clusters >= 1) else "A")
    if not is_flag(psd):
        bad.append("psd")
    if bad:
        assert_refused_naming_one_of(out, bad)
        return
    lam = np.linalg.eigvalsh(M)
    if psd and lam[0] < -1e-9 * max(1.0, np.abs(lam).max()):
        return assert_refused(out, "A", "positive semidefinite")
    assert not refused(out), out
    np.testing.assert_array_equal(out, (M + M.T) / 2)


def losses():
    return st.one_of(
        st.sampled_from(["structure", "zero-one", "Structure", "", None, 0, b"zero-one"]),
        st.integers(1, 6).flatmap(lambda c: arrays(np.float64, (c, c), elements=st.floats(0, 5)).map(
            lambda L: L - np.diag(np.diag(L)))),
        st.integers(1, 4).map(lambda c: np.ones((c, c))),  # nonzero diagonal
        st.integers(2, 4).map(lambda c: -1.0 + np.eye(c)),  # negative
        bad_arrays(),
    )


def valid_loss(L, c) -> bool:
    try:
        if np.asarray(L).dtype.kind in "USc":
            return False
        M = np.asarray(L, dtype=float)
    except (TypeError, ValueError):
        return False
    return (M.ndim == 2 and M.shape == (c, c) and c >= 1 and bool(np.all(np.isfinite(M))) and M.min() >= 0
            and not np.any(np.diag(M)))


@FUZZ
@given(any_structures(), losses())
def test_loss_matrix(pair, kind):
    S, valid = pair
    out = call(structures.loss_matrix, S, kind, names=["structure", "kind", "loss"])
    if not valid:
        return assert_refused(out, "structure")
    c = structures.n_clusters(S)
    if isinstance(kind, str) or kind is None:
        if kind not in structures.LOSS_KINDS:
            return assert_refused(out, "kind")
    elif not valid_loss(kind, c):
        return assert_refused(out, "loss")
    if refused(out):  # the shortest-path loss of a disconnected graph is infinite
        G = structures.as_structure(S)
        assert kind == "structure" and G.graph["kind"] == "graph" and not nx.is_connected(G), out.error
        return assert_refused(out, "structure", "disconnected")
    assert out.shape == (c, c)
    assert_finite(out)
    assert out.min() >= 0 and not np.any(np.diag(out))


@FUZZ
@given(st.one_of(psd_matrices(min_n=1), losses()), st.one_of(st.none(), counts(-1, 7)))
def test_check_loss_matrix(loss, n_clusters):
    out = call(structures.check_loss_matrix, loss, n_clusters, names=["loss", "n_clusters"])
    try:
        c = np.shape(loss)[0]
    except (TypeError, ValueError, IndexError):  # a ragged list, a scalar
        c = -1
    if n_clusters is not None and not (is_int(n_clusters) and n_clusters >= 1):
        return assert_refused(out, "n_clusters" if valid_loss(loss, c) else "")
    if not valid_loss(loss, c):
        return assert_refused(out, "loss")
    if n_clusters is not None and n_clusters != c:
        return assert_refused(out, "loss")
    assert not refused(out), out
    np.testing.assert_array_equal(out, np.asarray(loss, dtype=float))


@FUZZ
@given(any_structures(), st.one_of(st.just(40320), counts(-1, 30, huge=False)))
def test_admissible_permutations(pair, max_permutations):
    S, valid = pair
    out = call(structures.admissible_permutations, S, max_permutations=max_permutations,
               names=["structure", "max_permutations"])
    if not (is_int(max_permutations) and max_permutations >= 1):
        return assert_refused(out, "max_permutations")
    if not valid:
        return assert_refused(out, "structure")
    if refused(out):
        return assert_refused(out, "structure", "max_permutations")
    A = structures.output_kernel(S, check_psd=False)
    c = A.shape[0]
    assert 1 <= len(out) <= max_permutations
    np.testing.assert_array_equal(out[0], np.arange(c))  # the identity first
    assert len({tuple(p) for p in out}) == len(out)
    for p in out:
        np.testing.assert_array_equal(np.sort(p), np.arange(c))
        np.testing.assert_allclose(A[np.ix_(p, p)], A)
