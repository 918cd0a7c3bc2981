"""The contract of :mod:`cvxclust.problem_classes`: each function states a problem of the class of
:func:`cvxclust.solve` (its standard form is what the docstring says), a sparse graph stays sparse
in the statement, bad input is a ValueError or TypeError naming the argument, the caller's arrays
are left alone, and the generators are reproducible and have the properties they state."""

from __future__ import annotations

import re
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from cvxclust import problem_classes as pc
from cvxclust.generic import standard_form

PROTOTYPING = Path(__file__).resolve().parents[1] / "docs" / "user_guide" / "prototyping.rst"
N = 8


def constants(expression) -> list:
    """The values of the constants in an expression tree."""
    found = []
    for arg in expression.args:
        found += [arg.value] if isinstance(arg, cp.Constant) else constants(arg)
    return found


def diagonal_fixed(form, value=1.0) -> bool:
    """Only the diagonal is bounded, fixed to ``value``."""
    off = ~np.eye(form.n, dtype=bool)
    return (np.all(np.diag(form.L) == value) and np.all(np.diag(form.U) == value)
            and np.all(form.L[off] == -np.inf) and np.all(form.U[off] == np.inf))


def random_symmetric(n, seed=0):
    A = np.random.default_rng(seed).standard_normal((n, n))
    return A + A.T


# -- each function states a problem of the class ----------------------------------------------------
def test_nearest_correlation_reads_as_a_nearest_point_problem_with_a_fixed_diagonal():
    G = pc.perturbed_correlation(N, random_state=0)
    form = standard_form(pc.nearest_correlation(G))
    assert (form.n, form.sense, form.c, form.psd, form.m) == (N, "minimize", 0.5, True, 0)
    # 1/2 ||X - G||^2 = 1/2 ||X||^2 - <G, X> + 1/2 ||G||^2
    np.testing.assert_allclose(form.C, -G)
    assert form.constant == pytest.approx(0.5 * np.sum(G ** 2))
    assert diagonal_fixed(form)


@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_max_cut_and_min_bisection_read_as_linear_problems_over_the_elliptope(sparse):
    W = pc.random_graph(N, 3, random_state=1)
    W = W if sparse else W.toarray()
    L = pc.laplacian(W)
    L = L.toarray() if sparse else L
    cut = standard_form(pc.max_cut(W))
    assert (cut.n, cut.sense, cut.c, cut.psd, cut.m) == (N, "maximize", 0.0, True, 0)
    np.testing.assert_allclose(cut.C, -L / 4)  # negated: the form is the minimisation
    assert diagonal_fixed(cut)
    bisection = standard_form(pc.min_bisection(W))
    assert (bisection.n, bisection.sense, bisection.c, bisection.psd, bisection.m) == (N, "minimize", 0.0, True, 1)
    np.testing.assert_allclose(bisection.C, L / 4)
    assert diagonal_fixed(bisection)
    Y = random_symmetric(N)
    np.testing.assert_allclose(bisection.row_values(Y), [Y.sum()])  # <11^T, X> == 0
    assert bisection.lo[0] == bisection.hi[0] == 0


def test_correlation_clustering_reads_with_nonnegative_entries_and_a_unit_diagonal():
    W = pc.signed_graph(N, 3, random_state=2)
    form = standard_form(pc.correlation_clustering(W))
    assert (form.n, form.sense, form.c, form.psd, form.m) == (N, "maximize", 0.0, True, 0)
    np.testing.assert_allclose(form.C, -W)
    off = ~np.eye(N, dtype=bool)
    assert np.all(form.L[off] == 0) and np.all(form.U[off] == np.inf)
    assert np.all(np.diag(form.L) == 1) and np.all(np.diag(form.U) == 1)


@pytest.mark.parametrize("must_link, min_size", [((), None), ([(0, 3), (5, 2)], 2.5)],
                         ids=["peng-wei", "must-link-and-min-size"])
def test_kmeans_sdp_reads_with_row_sums_trace_and_its_extra_rows(must_link, min_size):
    K = pc.blobs_kernel(N, 3, random_state=3)
    form = standard_form(pc.kmeans_sdp(K, 3, must_link=must_link, min_size=min_size))
    assert (form.n, form.sense, form.c, form.psd) == (N, "maximize", 0.0, True)
    np.testing.assert_allclose(form.C, -K)
    assert np.all(form.L == 0)
    off = ~np.eye(N, dtype=bool)
    assert np.all(form.U[off] == np.inf)
    assert np.all(np.diag(form.U) == (np.inf if min_size is None else 1 / min_size))
    # the rows in the order stated: X 1 = 1, tr X = 3, X[i, j] - X[i, i] = 0 for each pair
    Y = random_symmetric(N)
    expected = [*Y.sum(axis=1), np.trace(Y), *(Y[i, j] - Y[i, i] for i, j in must_link)]
    np.testing.assert_allclose(form.row_values(Y), expected, atol=1e-12)
    np.testing.assert_array_equal(form.lo, [1.0] * N + [3.0] + [0.0] * len(must_link))
    np.testing.assert_array_equal(form.hi, form.lo)


@pytest.mark.parametrize("build", [pc.max_cut, pc.min_bisection, pc.correlation_clustering, pc.laplacian])
def test_a_sparse_graph_stays_sparse_in_the_statement(build):
    W = pc.random_graph(30, 4, random_state=4)
    if build is pc.laplacian:
        assert sp.issparse(build(W))
        return
    values = constants(build(W).objective)
    assert any(sp.issparse(value) and value.shape == (30, 30) for value in values)
    assert not any(isinstance(value, np.ndarray) and value.size >= 30 * 30 for value in values)


def test_laplacian_is_degrees_minus_weights_and_exactly_symmetric():
    W = pc.signed_graph(N, 2, random_state=5)
    W[0, 1] *= 1 + 1e-15  # asymmetry of rounding, accepted and removed
    L = pc.laplacian(W)
    np.testing.assert_array_equal(L, L.T)
    np.testing.assert_allclose(L, np.diag(W.sum(axis=1)) - W, atol=1e-14)
    np.testing.assert_allclose(L.sum(axis=1), 0, atol=1e-13)
    S = pc.laplacian(sp.csr_matrix(W))
    assert (S != S.T).nnz == 0


# -- bad input --------------------------------------------------------------------------------------
G = pc.perturbed_correlation(6, random_state=0)
BAD = {
    "non-square": (lambda: pc.nearest_correlation(np.ones((3, 4))), ValueError, r"G must be a square.*\(3, 4\)"),
    "order 1": (lambda: pc.max_cut(np.ones((1, 1))), ValueError, r"W must be a square matrix of order at least 2"),
    "order 1 sparse": (lambda: pc.max_cut(sp.eye(1)), ValueError, r"W must be a square matrix of order at least 2"),
    "non-square sparse": (lambda: pc.min_bisection(sp.csr_matrix(np.ones((3, 4)))), ValueError,
                          r"W must be a square.*\(3, 4\)"),
    "asymmetric": (lambda: pc.correlation_clustering(np.triu(np.ones((4, 4)))), ValueError,
                   r"W must be symmetric.*\|W - W\^T\| = 1"),
    "asymmetric sparse": (lambda: pc.max_cut(sp.csr_matrix(np.triu(np.ones((4, 4))))), ValueError,
                          r"W must be symmetric"),
    "asymmetric kernel": (lambda: pc.kmeans_sdp(np.triu(G), 2), ValueError, r"K must be symmetric"),
    "NaN": (lambda: pc.nearest_correlation(np.where(np.eye(6) > 0, np.nan, G)), ValueError,
            r"G must be finite, got 6 NaN"),
    "inf sparse": (lambda: pc.max_cut(sp.csr_matrix(np.full((3, 3), np.inf))), ValueError, r"W must be finite"),
    "complex": (lambda: pc.nearest_correlation(G + 0j), ValueError, r"G must be real"),
    "complex sparse": (lambda: pc.max_cut(sp.csr_matrix(np.ones((3, 3)) * 1j)), ValueError, r"W must be a real"),
    "strings": (lambda: pc.nearest_correlation([["1", "0"], ["0", "1"]]), ValueError, r"G must be a numeric matrix"),
    "laplacian of an asymmetric W": (lambda: pc.laplacian(np.triu(np.ones((3, 3)))), ValueError, r"W must be symm"),
    "n_clusters 0": (lambda: pc.kmeans_sdp(G, 0), ValueError, r"'n_clusters'.*\[1, 6\].*Got 0"),
    "n_clusters above n": (lambda: pc.kmeans_sdp(G, 7), ValueError, r"'n_clusters'.*Got 7"),
    "n_clusters float": (lambda: pc.kmeans_sdp(G, 2.0), TypeError, r"'n_clusters'.*an int.*Got 2.0"),
    "must-link out of range": (lambda: pc.kmeans_sdp(G, 2, must_link=[(0, 6)]), ValueError,
                               r"must_link .*in \[0, 6\).*\(0, 6\)"),
    "must-link negative": (lambda: pc.kmeans_sdp(G, 2, must_link=[(-1, 2)]), ValueError, r"must_link.*\(-1, 2\)"),
    "must-link (i, i)": (lambda: pc.kmeans_sdp(G, 2, must_link=[(1, 1)]), ValueError,
                         r"must_link .*distinct.*\(1, 1\)"),
    "must-link float": (lambda: pc.kmeans_sdp(G, 2, must_link=[(1.5, 2)]), ValueError, r"must_link.*\(1.5, 2\)"),
    "must-link triple": (lambda: pc.kmeans_sdp(G, 2, must_link=[(1, 2, 3)]), ValueError, r"must_link.*\(1, 2, 3\)"),
    "must-link flat pair": (lambda: pc.kmeans_sdp(G, 2, must_link=(0, 1)), ValueError, r"must_link.*element 0"),
    "must-link not a sequence": (lambda: pc.kmeans_sdp(G, 2, must_link=3), TypeError, r"must_link.*got 3"),
    "min_size below 1": (lambda: pc.kmeans_sdp(G, 2, min_size=0.5), ValueError, r"'min_size'.*\[1, 3\].*Got 0.5"),
    "min_size above n / k": (lambda: pc.kmeans_sdp(G, 2, min_size=4), ValueError, r"'min_size'.*Got 4"),
    "min_size NaN": (lambda: pc.kmeans_sdp(G, 2, min_size=float("nan")), ValueError, r"'min_size'.*Got nan"),
    "random_state string": (lambda: pc.perturbed_correlation(5, random_state="x"), TypeError,
                            r"'random_state'.*Got 'x'"),
    "random_state negative": (lambda: pc.random_graph(5, 2, random_state=-1), ValueError, r"'random_state'.*Got -1"),
    "random_state float": (lambda: pc.signed_graph(5, random_state=1.5), ValueError, r"'random_state'.*Got 1.5"),
    "random_state bool": (lambda: pc.blobs_kernel(5, 2, random_state=True), ValueError, r"'random_state'.*Got True"),
    "degree 0": (lambda: pc.random_graph(5, 0), ValueError, r"'degree'.*\(0, 4\].*Got 0"),
    "degree above n - 1": (lambda: pc.random_graph(5, 4.5), ValueError, r"'degree'.*Got 4.5"),
    "degree NaN": (lambda: pc.random_graph(5, float("nan")), ValueError, r"'degree'.*Got nan"),
    "alpha": (lambda: pc.perturbed_correlation(5, alpha=2), ValueError, r"'alpha'.*\[0, 1\].*Got 2"),
    "rank": (lambda: pc.perturbed_correlation(5, rank=0), ValueError, r"'rank'.*Got 0"),
    "flip": (lambda: pc.signed_graph(5, flip=-0.1), ValueError, r"'flip'.*Got -0.1"),
    "clusters above n": (lambda: pc.signed_graph(4, 5), ValueError, r"'n_clusters'.*\[1, 4\].*Got 5"),
    "n 1": (lambda: pc.blobs_kernel(1), ValueError, r"'n'.*Got 1"),
    "n float": (lambda: pc.random_graph(5.0, 2), ValueError, r"'n'.*Got 5.0"),
    "n_features": (lambda: pc.blobs_kernel(5, 2, n_features=0), ValueError, r"'n_features'.*Got 0"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_bad_input_is_refused_naming_the_argument(name):
    call, error, message = BAD[name]
    with pytest.raises(error, match=message):
        call()


def test_rounding_asymmetry_is_accepted_dense_or_sparse_and_removed():
    W = pc.signed_graph(6, 2, random_state=6)
    W[0, 1] *= 1 + 1e-15
    for weights in (W, sp.csr_matrix(W)):
        form = standard_form(pc.correlation_clustering(weights))
        np.testing.assert_array_equal(form.C, form.C.T)


# -- the caller's arrays ----------------------------------------------------------------------------
@pytest.mark.parametrize("sparse", [False, True], ids=["dense", "sparse"])
def test_the_callers_arrays_are_neither_modified_nor_referred_to(sparse):
    W = pc.signed_graph(N, 2, random_state=7)
    W[0, 1] *= 1 + 1e-15  # symmetrised in a copy, not in place
    K = pc.blobs_kernel(N, 2, random_state=7)
    G = pc.perturbed_correlation(N, random_state=7)
    inputs = [sp.csr_matrix(W) if sparse else W, K, G]
    before = [M.copy() for M in inputs]
    for M in inputs:  # read-only: a write in place would raise
        (M.data if sp.issparse(M) else M).setflags(write=False)
    problems = [pc.max_cut(inputs[0]), pc.min_bisection(inputs[0]), pc.correlation_clustering(inputs[0]),
                pc.kmeans_sdp(K, 2, must_link=np.array([[0, 1]]), min_size=2), pc.nearest_correlation(G)]
    pc.laplacian(inputs[0])
    for M, copy in zip(inputs, before):
        diff = M - copy
        assert (diff.nnz == 0) if sp.issparse(diff) else np.array_equal(M, copy)
    # each statement holds its own copy: changing the data afterwards does not change the problems
    for problem in problems:
        data = constants(problem.objective)
        assert not any(isinstance(d, np.ndarray) and any(np.shares_memory(d, M) for M in (W, K, G)) for d in data)


# -- the generators ---------------------------------------------------------------------------------
GENERATORS = {
    "perturbed_correlation": lambda seed: pc.perturbed_correlation(12, random_state=seed),
    "random_graph": lambda seed: pc.random_graph(12, 3, random_state=seed).toarray(),
    "signed_graph": lambda seed: pc.signed_graph(12, 3, random_state=seed),
    "blobs_kernel": lambda seed: pc.blobs_kernel(12, 3, random_state=seed),
}


@pytest.mark.parametrize("name", list(GENERATORS))
def test_generators_are_reproducible_with_a_seed(name):
    generate = GENERATORS[name]
    np.testing.assert_array_equal(generate(3), generate(3))
    np.testing.assert_array_equal(generate(np.random.RandomState(3)), generate(3))
    np.testing.assert_array_equal(generate(np.random.default_rng(5)), generate(np.random.default_rng(5)))
    assert not np.array_equal(generate(3), generate(4))


@pytest.mark.parametrize("seed", range(4))
def test_perturbed_correlation_is_symmetric_with_a_unit_diagonal(seed):
    G = pc.perturbed_correlation(20, alpha=0.3, rank=3, random_state=seed)
    np.testing.assert_array_equal(G, G.T)
    np.testing.assert_array_equal(np.diag(G), 1.0)
    assert np.abs(G).max() <= 1.0 + 1e-12
    clean = pc.perturbed_correlation(20, alpha=0.0, rank=3, random_state=seed)
    eigenvalues = np.linalg.eigvalsh(clean)  # no perturbation: a correlation matrix of rank 3
    assert eigenvalues[0] >= -1e-12 and np.sum(eigenvalues > 1e-9) == 3


@pytest.mark.parametrize("n, degree", [(12, 3), (20, 4.5), (7, 6)])
def test_random_graph_is_a_simple_graph_of_the_average_degree(n, degree):
    W = pc.random_graph(n, degree, random_state=n)
    assert sp.issparse(W) and W.shape == (n, n)
    assert (W != W.T).nnz == 0 and not W.diagonal().any()
    assert set(W.data) == {1.0}
    assert W.nnz == 2 * round(degree * n / 2)  # degree n - 1: the complete graph


@pytest.mark.parametrize("seed", range(3))
def test_signed_graph_has_the_planted_signs_flipped_symmetrically(seed):
    n, k = 15, 4
    labels = np.arange(n) % k
    planted = np.where(labels[:, None] == labels[None, :], 1.0, -1.0)
    np.fill_diagonal(planted, 0.0)
    np.testing.assert_array_equal(pc.signed_graph(n, k, flip=0.0, random_state=seed), planted)
    np.testing.assert_array_equal(pc.signed_graph(n, k, flip=1.0, random_state=seed), -planted)
    W = pc.signed_graph(n, k, flip=0.3, random_state=seed)
    np.testing.assert_array_equal(W, W.T)
    np.testing.assert_array_equal(np.diag(W), 0.0)
    off = ~np.eye(n, dtype=bool)
    assert set(np.abs(W[off])) == {1.0}
    assert 0 < np.sum(W != planted) < n * (n - 1)


@pytest.mark.parametrize("seed", range(3))
def test_blobs_kernel_is_a_centred_psd_kernel_of_low_rank(seed):
    K = pc.blobs_kernel(25, 3, n_features=4, random_state=seed)
    np.testing.assert_array_equal(K, K.T)
    eigenvalues = np.linalg.eigvalsh(K)
    scale = eigenvalues[-1]
    assert eigenvalues[0] >= -1e-12 * scale and np.sum(eigenvalues > 1e-9 * scale) <= 4
    np.testing.assert_allclose(K.sum(axis=1), 0.0, atol=1e-10 * scale)


# -- the user guide's example -----------------------------------------------------------------------
def test_the_user_guide_example_runs():
    text = PROTOTYPING.read_text(encoding="utf-8")
    section = re.search(r"\nThe classical problems\n~+\n(.*?)\n\S[^\n]*\n[-~=]+\n", text, re.S).group(1)
    blocks = re.findall(r"\.\. code-block:: python\n\n((?:    .*\n|\n)+)", section)
    assert len(blocks) == 1
    code = "\n".join(line[4:] for line in blocks[0].splitlines())
    namespace: dict = {}
    exec(compile(code, str(PROTOTYPING), "exec"), namespace)
    assert namespace["result"].status == "optimal"
