r"""The classical clustering and graph SDPs, stated in plain cvxpy as a user writes them, with
generators of their data.

Each function returns a :class:`cvxpy.Problem` over one symmetric variable ``X``, the class
:func:`cvxclust.solve` takes.  They are the instances the solvers of :mod:`cvxclust.generic` are
measured and tested on, and a starting point for a new relaxation.

================================  ==============================================================
function                          problem
================================  ==============================================================
:func:`nearest_correlation`       :math:`\min \tfrac12\|X - G\|_F^2` s.t. :math:`X \succeq 0`,
                                  :math:`\operatorname{diag}(X) = 1`
:func:`max_cut`                   :math:`\max \tfrac14\langle L, X\rangle` s.t. :math:`X \succeq 0`,
                                  :math:`\operatorname{diag}(X) = 1`
:func:`min_bisection`             :math:`\min \tfrac14\langle L, X\rangle` s.t. :math:`X \succeq 0`,
                                  :math:`\operatorname{diag}(X) = 1`, :math:`\langle 11^\top, X\rangle = 0`
:func:`correlation_clustering`    :math:`\max \langle W, X\rangle` s.t. :math:`X \succeq 0`,
                                  :math:`X \ge 0`, :math:`\operatorname{diag}(X) = 1`
:func:`kmeans_sdp`                :math:`\max \langle K, X\rangle` s.t. :math:`X \succeq 0`,
                                  :math:`X \ge 0`, :math:`X 1 = 1`, :math:`\operatorname{tr} X = k`,
                                  and optionally must-link rows :math:`X_{ij} = X_{ii}` and a least
                                  cluster size :math:`m`: :math:`\operatorname{diag}(X) \le 1/m`
================================  ==============================================================

``L = D - W`` is the Laplacian of the graph with weights W.  The max-cut relaxation is that of
M. X. Goemans, D. P. Williamson, "Improved approximation algorithms for maximum cut and
satisfiability problems using semidefinite programming", Journal of the ACM 42(6), 1995; the
k-means SDP that of J. Peng, Y. Wei, "Approximating K-means-type clustering via semidefinite
programming", SIAM Journal on Optimization 18(1), 2007; correlation clustering's that of C.
Swamy, "Correlation clustering: maximizing agreements via semidefinite programming", SODA 2004
(with ``W`` the signed weights, the agreements up to a constant); the nearest correlation matrix
that of N. J. Higham, "Computing the nearest correlation matrix - a problem from finance", IMA
Journal of Numerical Analysis 22(3), 2002.
"""

from __future__ import annotations

from numbers import Integral, Real

import cvxpy as cp
import networkx as nx
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_blobs

from ._checks import as_float_array, check_random_state
from .parameters import Interval, check_parameter

__all__ = ["blobs_kernel", "correlation_clustering", "kmeans_sdp", "laplacian", "max_cut", "min_bisection",
           "nearest_correlation", "perturbed_correlation", "random_graph", "signed_graph"]


def _symmetric_matrix(M, name: str, *, sparse_ok: bool = True):
    """``M`` as a finite square symmetric float matrix of order at least 2, symmetrised exactly (a
    new matrix: the caller's is neither modified nor referred to); a sparse one kept sparse
    (CSR) where ``sparse_ok``, made dense otherwise.  Rounding asymmetry (1e-12 relative) is
    accepted."""
    if sp.issparse(M):
        if M.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be a real numeric matrix, got a sparse matrix of dtype {M.dtype}")
        M = sp.csr_matrix(M, dtype=float, copy=True) if sparse_ok else M.toarray().astype(float)
    else:
        M = as_float_array(M, name, "matrix")
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] < 2:
        raise ValueError(f"{name} must be a square matrix of order at least 2, got shape {M.shape}")
    values = M.data if sp.issparse(M) else M
    if not np.isfinite(values).all():
        raise ValueError(f"{name} must be finite, got {int(np.size(values) - np.isfinite(values).sum())} "
                         "NaN or infinite entries")
    asymmetry = float(abs(M - M.T).max()) if values.size else 0.0
    scale = float(np.abs(values).max()) if values.size else 0.0
    if asymmetry > 1e-12 * max(1.0, scale):
        raise ValueError(f"{name} must be symmetric, got max |{name} - {name}^T| = {asymmetry:.3g}")
    M = (M + M.T) / 2.0
    return M.tocsr() if sp.issparse(M) else M


def _variable(n: int) -> cp.Variable:
    return cp.Variable((n, n), symmetric=True, name="X")


def laplacian(W):
    """The Laplacian ``diag(W 1) - W`` of a graph's weights.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix of shape (n, n)
        Symmetric finite weights of the graph, n >= 2 (a sparse one stays sparse).

    Returns
    -------
    ndarray or scipy.sparse.csr_matrix of shape (n, n)
        The Laplacian, exactly symmetric, sparse where W is.
    """
    W = _symmetric_matrix(W, "W")
    degrees = np.asarray(W.sum(axis=1)).ravel()
    if sp.issparse(W):
        return (sp.diags(degrees) - W).tocsr()
    return np.diag(degrees) - W


def nearest_correlation(G) -> cp.Problem:
    r"""The nearest correlation matrix to G: ``min 1/2 ||X - G||_F^2`` s.t. ``X >> 0``,
    ``diag(X) == 1``.

    Parameters
    ----------
    G : array_like of shape (n, n)
        Symmetric finite matrix, n >= 2 (a sparse one is made dense).

    Returns
    -------
    cvxpy.Problem
        The problem over the symmetric variable ``X``; its solution is unique.
    """
    G = _symmetric_matrix(G, "G", sparse_ok=False)
    X = _variable(G.shape[0])
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - G)), [X >> 0, cp.diag(X) == 1])


def max_cut(W) -> cp.Problem:
    r"""The max-cut SDP of the graph with weights W: ``max 1/4 <L, X>`` s.t. ``X >> 0``,
    ``diag(X) == 1``, with ``L`` the Laplacian (:func:`laplacian`).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix of shape (n, n)
        The graph's weights, as for :func:`laplacian`; a sparse W stays sparse in the problem.

    Returns
    -------
    cvxpy.Problem
        The problem over the symmetric variable ``X``.
    """
    L = laplacian(W)
    X = _variable(L.shape[0])
    return cp.Problem(cp.Maximize(0.25 * cp.trace(L @ X)), [X >> 0, cp.diag(X) == 1])


def min_bisection(W) -> cp.Problem:
    r"""The minimum-bisection SDP of the graph with weights W: ``min 1/4 <L, X>`` s.t.
    ``X >> 0``, ``diag(X) == 1``, ``sum(X) == 0`` (two halves of equal size).

    Parameters
    ----------
    W : array_like or scipy.sparse matrix of shape (n, n)
        The graph's weights, as for :func:`max_cut`.

    Returns
    -------
    cvxpy.Problem
        The problem over the symmetric variable ``X``.  It has no strictly feasible point:
        ``sum(X) == 0`` with ``X >> 0`` forces ``X 1 = 0``, so every feasible X is singular.
    """
    L = laplacian(W)
    X = _variable(L.shape[0])
    return cp.Problem(cp.Minimize(0.25 * cp.trace(L @ X)), [X >> 0, cp.diag(X) == 1, cp.sum(X) == 0])


def correlation_clustering(W) -> cp.Problem:
    r"""The correlation-clustering SDP of the signed weights W (positive: similar, negative:
    dissimilar): ``max <W, X>`` s.t. ``X >> 0``, ``X >= 0``, ``diag(X) == 1``.

    Parameters
    ----------
    W : array_like or scipy.sparse matrix of shape (n, n)
        Symmetric finite signed weights, n >= 2 (a sparse one stays sparse), such as
        :func:`signed_graph` draws.

    Returns
    -------
    cvxpy.Problem
        The problem over the symmetric variable ``X``.
    """
    W = _symmetric_matrix(W, "W")
    X = _variable(W.shape[0])
    return cp.Problem(cp.Maximize(cp.sum(cp.multiply(W, X))), [X >> 0, X >= 0, cp.diag(X) == 1])


def _must_link_pairs(must_link, n: int) -> list[tuple[int, int]]:
    """The pairs of ``must_link`` as ints, each two distinct indices in ``[0, n)``."""
    expected = f"must_link must be a sequence of pairs (i, j) of distinct int indices in [0, {n})"
    try:
        pairs = list(must_link)
    except TypeError:
        raise TypeError(f"{expected}, got {must_link!r}") from None
    valid = Interval(Integral, 0, n - 1, closed="both")
    checked = []
    for pair in pairs:
        try:
            i, j = pair
        except (TypeError, ValueError):
            raise ValueError(f"{expected}, got the element {pair!r}") from None
        if not (valid.accepts(i) and valid.accepts(j)) or i == j:
            raise ValueError(f"{expected}, got the pair {pair!r}")
        checked.append((int(i), int(j)))
    return checked


def kmeans_sdp(K, n_clusters: int, *, must_link=(), min_size: float | None = None) -> cp.Problem:
    r"""The k-means SDP of Peng and Wei for a kernel K: ``max <K, X>`` s.t. ``X >> 0``,
    ``X >= 0``, ``sum(X, axis=1) == 1``, ``trace(X) == n_clusters``; each pair ``(i, j)`` of
    ``must_link`` adds ``X[i, j] == X[i, i]`` (i and j in one cluster), and ``min_size = m`` adds
    ``diag(X) <= 1 / m`` (every cluster of at least m points).

    Parameters
    ----------
    K : array_like of shape (n, n)
        Symmetric finite kernel, n >= 2 (a sparse one is made dense).
    n_clusters : int
        Number of clusters, in ``[1, n]``.
    must_link : sequence of pairs of int
        Pairs ``(i, j)`` of distinct indices in ``[0, n)`` to put in one cluster.
    min_size : float, optional
        Least cluster size, in ``[1, n / n_clusters]``.

    Returns
    -------
    cvxpy.Problem
        The problem over the symmetric variable ``X``.
    """
    K = _symmetric_matrix(K, "K", sparse_ok=False)
    n = K.shape[0]
    check_parameter("n_clusters", n_clusters, [Interval(Integral, 1, n, closed="both")])
    X = _variable(n)
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == n_clusters]
    for i, j in _must_link_pairs(must_link, n):
        constraints.append(X[i, j] == X[i, i])
    if min_size is not None:
        check_parameter("min_size", min_size, [Interval(Real, 1, n / n_clusters, closed="both")])
        constraints.append(cp.diag(X) <= 1.0 / min_size)
    return cp.Problem(cp.Maximize(cp.trace(K @ X)), constraints)


def perturbed_correlation(n: int, *, alpha: float = 0.05, rank: int = 5, random_state=None) -> np.ndarray:
    """A random correlation matrix of rank ``rank`` perturbed by a uniform random symmetric
    matrix with weight ``alpha``, unit diagonal: an indefinite G with ``diag(G) = 1`` (the
    examples of H. Qi, D. Sun, "A quadratically convergent Newton method for computing the
    nearest correlation matrix", SIAM Journal on Matrix Analysis and Applications 28(2), 2006).

    Parameters
    ----------
    n : int
        Order, at least 2.
    alpha : float
        Weight of the perturbation, in ``[0, 1]``; 0 gives a correlation matrix of rank
        ``min(rank, n)``.
    rank : int
        Rank of the correlation matrix, at least 1.
    random_state : int, RandomState, Generator or None
        Seed of the draw.

    Returns
    -------
    ndarray of shape (n, n)
        ``G``, exactly symmetric, unit diagonal, entries in ``[-1, 1]``.
    """
    check_parameter("n", n, [Interval(Integral, 2, None, closed="left")])
    check_parameter("alpha", alpha, [Interval(Real, 0, 1, closed="both")])
    check_parameter("rank", rank, [Interval(Integral, 1, None, closed="left")])
    rng = check_random_state(random_state)
    B = rng.standard_normal((n, rank))
    B /= np.linalg.norm(B, axis=1, keepdims=True)
    E = rng.uniform(-1.0, 1.0, (n, n))
    G = (1.0 - alpha) * (B @ B.T) + alpha * (E + E.T) / 2.0
    np.fill_diagonal(G, 1.0)
    return G


def random_graph(n: int, degree: float = 10.0, *, random_state=None) -> sp.csr_matrix:
    """The adjacency matrix of a uniform random graph with ``n`` nodes and average degree
    ``degree`` (``networkx.gnm_random_graph``), sparse.

    Parameters
    ----------
    n : int
        Number of nodes, at least 2.
    degree : float
        Average degree, in ``(0, n - 1]`` (``n - 1``: the complete graph); the graph has
        ``round(degree * n / 2)`` edges.
    random_state : int, RandomState, Generator or None
        Seed of the draw.

    Returns
    -------
    scipy.sparse.csr_matrix of shape (n, n)
        The 0/1 adjacency matrix: symmetric, zero diagonal.
    """
    check_parameter("n", n, [Interval(Integral, 2, None, closed="left")])
    check_parameter("degree", degree, [Interval(Real, 0, n - 1, closed="right")])
    seed = int(check_random_state(random_state).randint(2 ** 31))
    graph = nx.gnm_random_graph(n, int(round(degree * n / 2)), seed=seed)
    return sp.csr_matrix(nx.to_scipy_sparse_array(graph, nodelist=range(n), dtype=float))


def signed_graph(n: int, n_clusters: int = 4, *, flip: float = 0.2, random_state=None) -> np.ndarray:
    """Signed weights of ``n`` points in ``n_clusters`` planted clusters: +1 inside a cluster,
    -1 across, each sign flipped with probability ``flip``; zero diagonal.

    Parameters
    ----------
    n : int
        Number of points, at least 2; point i is in cluster ``i % n_clusters``.
    n_clusters : int
        Number of planted clusters, in ``[1, n]``.
    flip : float
        Probability of flipping each sign (the same for ``(i, j)`` and ``(j, i)``), in ``[0, 1]``.
    random_state : int, RandomState, Generator or None
        Seed of the draw.

    Returns
    -------
    ndarray of shape (n, n)
        ``W``, symmetric, entries ``+1`` and ``-1`` off the diagonal.
    """
    check_parameter("n", n, [Interval(Integral, 2, None, closed="left")])
    check_parameter("n_clusters", n_clusters, [Interval(Integral, 1, n, closed="both")])
    check_parameter("flip", flip, [Interval(Real, 0, 1, closed="both")])
    rng = check_random_state(random_state)
    labels = np.arange(n) % n_clusters
    W = np.where(labels[:, None] == labels[None, :], 1.0, -1.0)
    flips = np.triu(rng.random((n, n)) < flip, 1)
    flips = flips | flips.T
    W[flips] *= -1.0
    np.fill_diagonal(W, 0.0)
    return W


def blobs_kernel(n: int, n_clusters: int = 10, *, n_features: int = 10, random_state=None) -> np.ndarray:
    """The linear kernel ``Z Z^T`` of ``n`` points drawn from ``n_clusters`` Gaussian blobs in
    ``n_features`` dimensions (``sklearn.datasets.make_blobs``), centred.

    Parameters
    ----------
    n : int
        Number of points, at least 2.
    n_clusters : int
        Number of blobs, in ``[1, n]``.
    n_features : int
        Dimension of the points, at least 1.
    random_state : int, RandomState, Generator or None
        Seed of the draw.

    Returns
    -------
    ndarray of shape (n, n)
        ``K``, symmetric, p.s.d. of rank at most ``n_features``, rows summing to 0.
    """
    check_parameter("n", n, [Interval(Integral, 2, None, closed="left")])
    check_parameter("n_clusters", n_clusters, [Interval(Integral, 1, n, closed="both")])
    check_parameter("n_features", n_features, [Interval(Integral, 1, None, closed="left")])
    seed = int(check_random_state(random_state).randint(2 ** 31))
    Z, _ = make_blobs(n_samples=n, centers=n_clusters, n_features=n_features, random_state=seed)
    Z -= Z.mean(axis=0)
    return Z @ Z.T
