"""Input kernels and affinities: Gaussian (rbf), polynomial, linear, k-nearest-neighbour; centering.

Every function takes a data matrix ``X`` of shape ``(n_samples, n_features)`` (finite, at least two
rows) and returns a dense symmetric ``n_samples x n_samples`` array.  :func:`affinity` dispatches on
a name, in the manner of scikit-learn's ``SpectralClustering(affinity=...)``.

Data of another library of the Python array API standard (a PyTorch tensor on a GPU) stay in their
namespace and on their device: :func:`rbf`, :func:`polynomial`, :func:`linear`,
:func:`median_distance` and :func:`center` compute there and return an array of that library
(float32 data give a float32 kernel); :func:`knn_affinity` (scikit-learn's neighbour search),
:func:`kernel_embedding` and :func:`kernel_kmeans` take NumPy arrays only, and
:func:`knn_affinity` refuses such data with a TypeError.
"""

from __future__ import annotations

import inspect

import numpy as np
from scipy.spatial.distance import pdist, squareform
from sklearn.cluster import KMeans
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel
from sklearn.neighbors import kneighbors_graph
from sklearn.preprocessing import KernelCenterer

from . import _array_kernels
from ._array_api import is_foreign, library, namespace_of
from ._checks import (
    check_choice,
    check_data_matrix,
    check_int_range,
    check_n_clusters,
    check_positive,
    check_random_state,
    check_square_matrix,
)

__all__ = ["rbf", "polynomial", "linear", "knn_affinity", "center", "median_distance", "affinity", "AFFINITIES",
           "kernel_embedding", "kernel_kmeans"]


def _symmetrize(K: np.ndarray) -> np.ndarray:
    """``(K + K^T) / 2``: removes the rounding asymmetry of a BLAS ``X @ X.T``."""
    return (K + K.T) / 2


def _unit_scaled(X: np.ndarray) -> tuple[np.ndarray, int]:
    """``(X / 2**e, e)`` with the largest ``|entry|`` of the result in ``[1/2, 1)``.  Dividing by a
    power of two is exact, so distances keep their ratios while squares neither overflow
    (data near 1e160) nor underflow (near 1e-170)."""
    top = np.abs(X).max()
    if top == 0:
        return X, 0
    e = int(np.frexp(top)[1])
    return np.ldexp(X, -e), e


def _finite_kernel(K: np.ndarray, name: str, kernel: str) -> np.ndarray:
    if not np.all(np.isfinite(K)):
        raise ValueError(f"the {kernel} of {name} overflows float64: the entries of {name} are too large; "
                         f"rescale {name}")
    return K


def median_distance(X) -> float:
    r"""Median of the pairwise Euclidean distances ``||a_i - a_j||``, ``i < j``.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.

    Returns
    -------
    float
        :math:`\operatorname{median}_{i<j} \|a_i - a_j\|_2`.
    """
    if is_foreign(X):
        return _array_kernels.median_distance(X)
    X, e = _unit_scaled(check_data_matrix(X))
    median = float(np.ldexp(np.median(pdist(X, metric="euclidean")), e))
    if not np.isfinite(median):
        raise ValueError("the median distance of X overflows float64: the entries of X are too large; rescale X")
    return median


def rbf(X, delta: float | None = None) -> np.ndarray:
    r"""Gaussian kernel with the width convention of Yan, Shen & Wang (IEEE TIP 2014, Sec. IV-B).

    .. math:: K_{ij} = \exp\!\left(-\frac{\|a_i - a_j\|_2^2}{\delta^2}\right)

    (scikit-learn's ``rbf_kernel`` with ``gamma = 1 / delta**2``, computed here from SciPy's
    ``pdist`` so that the matrix is exactly symmetric with unit diagonal).  It is positive
    semidefinite.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.
    delta : float > 0, optional
        Kernel width.  ``None`` (default) uses the *median heuristic*: ``delta`` is the median of
        the pairwise Euclidean distances (:func:`median_distance`), so that a typical pair of
        points has affinity ``exp(-1)``.

    Returns
    -------
    K : ndarray of shape (n_samples, n_samples)

    Raises
    ------
    ValueError
        If ``delta`` is not a positive number, or ``delta=None`` and the median distance is 0
        (more than half of the pairs coincide).
    """
    if is_foreign(X):
        if delta is None:
            delta = median_distance(X)
            if delta <= 0:
                raise ValueError("delta=None uses the median pairwise distance of X, which is 0; pass delta "
                                 "explicitly")
        check_positive(delta, "delta")
        return _array_kernels.rbf(X, delta)
    X, e = _unit_scaled(check_data_matrix(X))
    if delta is None:
        delta = float(np.median(pdist(X, metric="euclidean")))
        if delta <= 0:
            raise ValueError("delta=None uses the median pairwise distance of X, which is 0; pass delta explicitly")
    else:
        check_positive(delta, "delta")
        with np.errstate(over="ignore", under="ignore"):
            delta = np.ldexp(float(delta), -e)  # in the units of the scaled X
    S = squareform(pdist(X, metric="sqeuclidean"))
    with np.errstate(over="ignore", under="ignore", divide="ignore"):
        # S / delta**2 (delta**2 may overflow or underflow: coincident points stay at 1)
        E = np.divide(S, np.float64(delta) ** 2, out=np.zeros_like(S), where=S > 0)
    return np.exp(-E)


def polynomial(X, degree: int = 2) -> np.ndarray:
    r"""Inhomogeneous polynomial kernel :math:`K = (X X^\top + \mathbf{1}\mathbf{1}^\top)^{\circ d}`,
    i.e. :math:`K_{ij} = (a_i^\top a_j + 1)^d`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.
    degree : int >= 1
        The exponent ``d``.

    Returns
    -------
    K : ndarray of shape (n_samples, n_samples)

    Raises
    ------
    ValueError
        Naming ``X`` (not a finite matrix of at least two rows, or so large that the kernel
        overflows float64) or ``degree``.
    """
    if is_foreign(X):
        return _array_kernels.polynomial(X, check_int_range(degree, "degree", 1))
    X = check_data_matrix(X)
    degree = check_int_range(degree, "degree", 1)
    with np.errstate(over="ignore", invalid="ignore"):
        K = _symmetrize(polynomial_kernel(X, degree=degree, gamma=1.0, coef0=1.0))
    return _finite_kernel(K, "X", f"polynomial kernel of degree {degree}")


def linear(X) -> np.ndarray:
    r"""Linear kernel :math:`K = X X^\top`, i.e. :math:`K_{ij} = a_i^\top a_j`.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.

    Returns
    -------
    K : ndarray of shape (n_samples, n_samples)

    Raises
    ------
    ValueError
        Naming ``X`` (not a finite matrix of at least two rows, or so large that the kernel
        overflows float64).
    """
    if is_foreign(X):
        return _array_kernels.linear(X)
    X = check_data_matrix(X)
    with np.errstate(over="ignore", invalid="ignore"):
        K = _symmetrize(linear_kernel(X))
    return _finite_kernel(K, "X", "linear kernel")


def knn_affinity(X, n_neighbors: int = 10) -> np.ndarray:
    r"""Symmetric k-nearest-neighbour connectivity affinity.

    .. math:: W = \tfrac12 (A + A^\top), \qquad
              A_{ij} = \begin{cases} 1 & a_j \text{ is among the } k \text{ nearest neighbours of } a_i
              \text{ (} a_i \text{ itself included)} \\ 0 & \text{otherwise,} \end{cases}

    with ``A`` from ``sklearn.neighbors.kneighbors_graph(X, k, mode="connectivity",
    include_self=True)``.  Entries of ``W`` are 1 (mutual neighbours), 1/2 (one-sided) or 0.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Data, one sample per row.
    n_neighbors : int
        ``k``, between 1 and ``n_samples - 1``.

    Returns
    -------
    W : ndarray of shape (n_samples, n_samples)
        Dense symmetric affinity with unit diagonal.

    Raises
    ------
    TypeError
        For ``X`` of an array library other than NumPy: the neighbour search runs on NumPy arrays.
    """
    if is_foreign(X):
        raise TypeError(f"knn_affinity (affinity='nearest_neighbors') runs on NumPy arrays only and X is an array "
                        f"of {library(namespace_of(X))}: the rbf, polynomial, linear and precomputed kernels are "
                        "computed on X's device; or pass X as a NumPy array")
    X = check_data_matrix(X)
    n_neighbors = check_int_range(n_neighbors, "n_neighbors", 1, X.shape[0] - 1)
    X, _ = _unit_scaled(X)  # the same neighbours, with distances that neither overflow nor underflow
    # each point itself, then its k - 1 nearest others: include_self=True would let a duplicate
    # of a point take its place
    A = np.eye(X.shape[0])
    if n_neighbors > 1:
        A += kneighbors_graph(X, n_neighbors - 1, mode="connectivity", include_self=False).toarray()
    return 0.5 * (A + A.T)


def center(K) -> np.ndarray:
    r"""Double centering :math:`H K H` with :math:`H = I - \tfrac1n \mathbf{1}\mathbf{1}^\top`.

    The centered kernel is the Gram matrix of the feature vectors after subtracting their mean;
    its rows and columns sum to zero.  Computed without forming ``H`` (scikit-learn's
    ``KernelCenterer``); a symmetric input gives an exactly symmetric output.

    Parameters
    ----------
    K : array-like of shape (n, n)
        A square finite matrix (usually a kernel).

    Returns
    -------
    ndarray of shape (n, n)

    Raises
    ------
    ValueError
        Naming ``K`` (not a square finite matrix, or so large that the centering overflows).
    """
    K = check_square_matrix(K, "K", symmetric=False)
    if is_foreign(K):
        return _array_kernels.center(K)
    with np.errstate(over="ignore", invalid="ignore"):
        Kc = _finite_kernel(KernelCenterer().fit_transform(K), "K", "centering")
    if np.array_equal(K, K.T):
        Kc = (Kc + Kc.T) / 2
    return Kc


def _precomputed(X) -> np.ndarray:
    return check_square_matrix(X, "X", min_size=2)


#: Names accepted by :func:`affinity`, with the function each one calls.
AFFINITIES = {
    "rbf": rbf,
    "polynomial": polynomial,
    "linear": linear,
    "nearest_neighbors": knn_affinity,
    "precomputed": _precomputed,
}


def affinity(X, kind: str = "rbf", **params) -> np.ndarray:
    r"""Affinity matrix of ``X`` by name.

    Parameters
    ----------
    X : array-like
        Data of shape ``(n_samples, n_features)``, or for ``kind="precomputed"`` a square
        symmetric finite matrix, returned (as floats) after validation.
    kind : {"rbf", "polynomial", "linear", "nearest_neighbors", "precomputed"}
        ``"rbf"``: :func:`rbf` (parameter ``delta``); ``"polynomial"``: :func:`polynomial`
        (``degree``); ``"linear"``: :func:`linear`; ``"nearest_neighbors"``:
        :func:`knn_affinity` (``n_neighbors``).
    **params
        Parameters of the chosen kernel.

    Returns
    -------
    ndarray of shape (n_samples, n_samples)

    Raises
    ------
    ValueError
        For an unknown ``kind``, a parameter the chosen kernel does not take, or invalid data,
        naming it.
    """
    check_choice(kind, "affinity kind", AFFINITIES)
    func = AFFINITIES[kind]
    accepted = [p for p in inspect.signature(func).parameters if p != "X"]
    unknown = sorted(set(params) - set(accepted))
    if unknown:
        raise ValueError(f"Unknown parameter(s) {unknown} for affinity {kind!r}; valid parameters are {accepted}")
    return func(X, **params)


# eigenvalues of K at or below this fraction of the largest are dropped from the embedding: the
# null space (and rounding noise around it) carries no distance information
_EMBED_RTOL = 1e-10


def kernel_embedding(K) -> np.ndarray:
    r"""The kernel-PCA embedding :math:`\Phi = U_+ \Lambda_+^{1/2}` of a symmetric ``K``
    (:math:`K = U \Lambda U^\top`, the eigenpairs with :math:`\lambda > 10^{-10}\lambda_{\max}`):
    :math:`\Phi\Phi^\top` is K for a p.s.d. K (up to the dropped null space), its p.s.d. part
    otherwise.

    Raises
    ------
    ValueError
        Naming ``K``: not square, symmetric and finite, or without a positive eigenvalue.
    """
    K = check_square_matrix(K, "K", min_size=2)
    w, V = np.linalg.eigh(K)
    if w[-1] <= 0:
        raise ValueError("K must have a positive eigenvalue: kernel k-means clusters its p.s.d. part, which is 0")
    keep = w > _EMBED_RTOL * w[-1]
    return V[:, keep] * np.sqrt(w[keep])


def kernel_kmeans(K, n_clusters: int, *, n_init: int = 10, random_state=None) -> np.ndarray:
    r"""Kernel k-means: scikit-learn ``KMeans`` on the kernel-PCA embedding of ``K``.

    Minimizes the kernel k-means objective over partitions :math:`C_1, \dots, C_c` of the points,

    .. math:: \sum_{k=1}^{c} \sum_{i \in C_k} \Big\| \phi(x_i) - \frac{1}{|C_k|}\sum_{j \in C_k}
              \phi(x_j) \Big\|^2 = \operatorname{tr} K - \sum_{k=1}^{c} \frac{1}{|C_k|}
              \sum_{i, j \in C_k} K_{ij},

    by Lloyd's algorithm with k-means++ starts (``n_init`` of them, the best kept) on the rows of
    the full embedding :math:`\Phi = U_+ \Lambda_+^{1/2}` (:math:`K = U \Lambda U^\top`, the
    eigenpairs with :math:`\lambda > 10^{-10} \lambda_{\max}`).  Since :math:`\Phi\Phi^\top = K`
    for a p.s.d. ``K`` (up to the dropped null space), Euclidean k-means on :math:`\Phi` has
    exactly the objective above; for an indefinite ``K`` it is that of the p.s.d. part
    :math:`U_+\Lambda_+U_+^\top`.  With ``A = I`` this is CLUHSIC (2.3) and the "kernel k-means"
    baseline of CLUHSICAL Section IV-B (Table IV).  The objective is invariant to centring ``K``.

    Parameters
    ----------
    K : array-like of shape (n, n)
        Symmetric finite kernel matrix.
    n_clusters : int
        ``c``, between 2 and ``n``.
    n_init : int >= 1, keyword-only
        Number of k-means++ restarts.
    random_state : None, int or numpy.random.RandomState, keyword-only
        Seeds the restarts (passed to ``KMeans``).

    Returns
    -------
    labels : ndarray of int, shape (n,)
        Cluster of each point, ``0..c-1`` in ``KMeans``' (arbitrary) order.

    Raises
    ------
    ValueError
        Naming ``K`` (not square, symmetric and finite, or without a positive eigenvalue),
        ``n_clusters``, ``n_init`` or ``random_state``.
    """
    K = check_square_matrix(K, "K", min_size=2)
    n_clusters = check_n_clusters(n_clusters, K.shape[0])
    n_init = check_int_range(n_init, "n_init", 1)
    random_state = check_random_state(random_state)
    embedding = kernel_embedding(K)
    return KMeans(n_clusters, n_init=n_init, random_state=random_state).fit_predict(embedding)
