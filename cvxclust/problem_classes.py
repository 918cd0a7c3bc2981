r"""The classical clustering and graph SDPs, stated in plain cvxpy as a user writes them, with
generators of their data.

Each function returns a :class:`cvxpy.Problem` over one symmetric variable ``X``, the class
:func:`cvxclust.solve` takes.  They are the instances the solvers of :mod:`cvxclust.generic` are
measured and tested on, and a starting point for a new relaxation.

============================  ==================================================================
function                      problem
============================  ==================================================================
:func:`nearest_correlation`   :math:`\min \tfrac12\|X - G\|_F^2` s.t. :math:`X \succeq 0`,
                              :math:`\operatorname{diag}(X) = 1`
:func:`max_cut`               :math:`\max \tfrac14\langle L, X\rangle` s.t. :math:`X \succeq 0`,
                              :math:`\operatorname{diag}(X) = 1`
:func:`min_bisection`         :math:`\min \tfrac14\langle L, X\rangle` s.t. :math:`X \succeq 0`,
                              :math:`\operatorname{diag}(X) = 1`, :math:`\langle 11^\top, X\rangle = 0`
:func:`correlation_clustering`  :math:`\max \langle W, X\rangle` s.t. :math:`X \succeq 0`,
                              :math:`X \ge 0`, :math:`\operatorname{diag}(X) = 1`
:func:`kmeans_sdp`            :math:`\max \langle K, X\rangle` s.t. :math:`X \succeq 0`,
                              :math:`X \ge 0`, :math:`X 1 = 1`, :math:`\operatorname{tr} X = k`,
                              and optionally must-link rows :math:`X_{ij} = X_{ii}` and a least
                              cluster size :math:`m`: :math:`\operatorname{diag}(X) \le 1/m`
============================  ==================================================================

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

from ._checks import check_random_state
from .parameters import Interval, check_parameter

__all__ = ["blobs_kernel", "correlation_clustering", "kmeans_sdp", "laplacian", "max_cut", "min_bisection",
           "nearest_correlation", "perturbed_correlation", "random_graph", "signed_graph"]


def _symmetric_matrix(M, name: str, *, sparse_ok: bool = True):
    """``M`` as a finite square symmetric float matrix (a sparse one kept sparse where allowed)."""
    if sp.issparse(M):
        if not sparse_ok:
            M = M.toarray()
        else:
            M = sp.csr_matrix(M, dtype=float)
            data = M.data
            if M.shape[0] != M.shape[1] or not np.isfinite(data).all() or abs(M - M.T).max() > 0:
                raise ValueError(f"{name} must be a finite square symmetric matrix")
            return M
    try:
        M = np.asarray(M, dtype=float)
    except (TypeError, ValueError) as error:
        raise TypeError(f"{name} must be a numeric matrix, got {type(M).__name__}") from error
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] < 2:
        raise ValueError(f"{name} must be a square matrix of order at least 2, got shape {M.shape}")
    if not np.isfinite(M).all():
        raise ValueError(f"{name} must be finite")
    if not np.allclose(M, M.T, rtol=0.0, atol=1e-12 * max(1.0, float(np.abs(M).max()))):
        raise ValueError(f"{name} must be symmetric")
    return M


def _variable(n: int) -> cp.Variable:
    return cp.Variable((n, n), symmetric=True, name="X")


def laplacian(W):
    """The Laplacian ``diag(W 1) - W`` of a graph's weights, sparse where W is."""
    W = _symmetric_matrix(W, "W")
    degrees = np.asarray(W.sum(axis=1)).ravel()
    if sp.issparse(W):
        return (sp.diags(degrees) - W).tocsr()
    return np.diag(degrees) - W


def nearest_correlation(G) -> cp.Problem:
    r"""The nearest correlation matrix to G: ``min 1/2 ||X - G||_F^2`` s.t. ``X >> 0``,
    ``diag(X) == 1``."""
    G = _symmetric_matrix(G, "G", sparse_ok=False)
    X = _variable(G.shape[0])
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - G)), [X >> 0, cp.diag(X) == 1])


def max_cut(W) -> cp.Problem:
    r"""The max-cut SDP of the graph with weights W (dense or sparse, kept sparse):
    ``max 1/4 <L, X>`` s.t. ``X >> 0``, ``diag(X) == 1``."""
    L = laplacian(W)
    X = _variable(L.shape[0])
    return cp.Problem(cp.Maximize(0.25 * cp.trace(L @ X)), [X >> 0, cp.diag(X) == 1])


def min_bisection(W) -> cp.Problem:
    r"""The minimum-bisection SDP of the graph with weights W: ``min 1/4 <L, X>`` s.t.
    ``X >> 0``, ``diag(X) == 1``, ``sum(X) == 0`` (two halves of equal size)."""
    L = laplacian(W)
    X = _variable(L.shape[0])
    return cp.Problem(cp.Minimize(0.25 * cp.trace(L @ X)), [X >> 0, cp.diag(X) == 1, cp.sum(X) == 0])


def correlation_clustering(W) -> cp.Problem:
    r"""The correlation-clustering SDP of the signed weights W (positive: similar, negative:
    dissimilar): ``max <W, X>`` s.t. ``X >> 0``, ``X >= 0``, ``diag(X) == 1``."""
    W = _symmetric_matrix(W, "W", sparse_ok=False)
    X = _variable(W.shape[0])
    return cp.Problem(cp.Maximize(cp.sum(cp.multiply(W, X))), [X >> 0, X >= 0, cp.diag(X) == 1])


def kmeans_sdp(K, n_clusters: int, *, must_link=(), min_size: float | None = None) -> cp.Problem:
    r"""The k-means SDP of Peng and Wei for a kernel K: ``max <K, X>`` s.t. ``X >> 0``,
    ``X >= 0``, ``sum(X, axis=1) == 1``, ``trace(X) == n_clusters``; each pair ``(i, j)`` of
    ``must_link`` adds ``X[i, j] == X[i, i]`` (i and j in one cluster), and ``min_size = m`` adds
    ``diag(X) <= 1 / m`` (every cluster of at least m points)."""
    K = _symmetric_matrix(K, "K", sparse_ok=False)
    n = K.shape[0]
    check_parameter("n_clusters", n_clusters, [Interval(Integral, 1, n, closed="both")])
    X = _variable(n)
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == n_clusters]
    for pair in must_link:
        i, j = (int(index) for index in pair)
        if not (0 <= i < n and 0 <= j < n and i != j):
            raise ValueError(f"must_link must hold pairs of distinct indices in [0, {n}), got {pair!r}")
        constraints.append(X[i, j] == X[i, i])
    if min_size is not None:
        check_parameter("min_size", min_size, [Interval(Real, 1, n / n_clusters, closed="both")])
        constraints.append(cp.diag(X) <= 1.0 / min_size)
    return cp.Problem(cp.Maximize(cp.trace(K @ X)), constraints)


def perturbed_correlation(n: int, *, alpha: float = 0.05, rank: int = 5, random_state=None) -> np.ndarray:
    """A random correlation matrix of rank ``rank`` perturbed by a uniform random symmetric
    matrix with weight ``alpha``, unit diagonal: an indefinite G with ``diag(G) = 1`` (the
    examples of H. Qi, D. Sun, SIAM J. Matrix Anal. Appl. 28(2), 2006)."""
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
    ``degree`` (``networkx.gnm_random_graph``), sparse."""
    check_parameter("n", n, [Interval(Integral, 2, None, closed="left")])
    check_parameter("degree", degree, [Interval(Real, 0, n - 1, closed="neither")])
    seed = int(check_random_state(random_state).randint(2 ** 31))
    graph = nx.gnm_random_graph(n, int(round(degree * n / 2)), seed=seed)
    return sp.csr_matrix(nx.to_scipy_sparse_array(graph, nodelist=range(n), dtype=float))


def signed_graph(n: int, n_clusters: int = 4, *, flip: float = 0.2, random_state=None) -> np.ndarray:
    """Signed weights of ``n`` points in ``n_clusters`` planted clusters: +1 inside a cluster,
    -1 across, each sign flipped with probability ``flip``; zero diagonal."""
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
    ``n_features`` dimensions (``sklearn.datasets.make_blobs``), centred."""
    check_parameter("n", n, [Interval(Integral, 2, None, closed="left")])
    check_parameter("n_clusters", n_clusters, [Interval(Integral, 1, n, closed="both")])
    check_parameter("n_features", n_features, [Interval(Integral, 1, None, closed="left")])
    seed = int(check_random_state(random_state).randint(2 ** 31))
    Z, _ = make_blobs(n_samples=n, centers=n_clusters, n_features=n_features, random_state=seed)
    Z -= Z.mean(axis=0)
    return Z @ Z.T
