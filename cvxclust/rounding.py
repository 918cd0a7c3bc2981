r"""Shared rounding of a relaxed matrix to cluster labels.

Relaxations return a symmetric matrix ``A`` (a normalized affinity, or an equivalence-matrix
estimate :math:`\approx Y (Y^\top Y)^{-1} Y^\top`) whose top eigenvectors span, ideally, the
cluster indicators.  Two roundings are offered, both on the row-normalized top-``k`` eigenvectors:

* ``"kmeans"`` -- k-means on the embedded rows (Ng, Jordan & Weiss, 2002);
* ``"discretize"`` -- the rotation search of Yu & Shi (2003), which seeks the partition matrix
  closest to a rotation of the embedding.

References
----------
S. X. Yu and J. Shi, "Multiclass spectral clustering", ICCV 2003.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize

from ._checks import (
    as_float_array,
    check_bool,
    check_choice,
    check_int_range,
    check_n_clusters,
    check_random_state,
    check_square_matrix,
)

__all__ = ["spectral_embedding", "factor_embedding", "kmeans_rounding", "discretize", "round_labels",
           "round_embedding", "ROUNDINGS"]


def spectral_embedding(A, n_components: int) -> np.ndarray:
    r"""The eigenvectors of the ``n_components`` largest eigenvalues of the symmetric ``A``.

    .. math:: A = \sum_{l=1}^n \lambda_l v_l v_l^\top,\quad \lambda_1 \ge \dots \ge \lambda_n,
              \qquad V = [v_1, \dots, v_k]

    Each column's sign is fixed so that its entry of largest magnitude is positive, which makes
    the result deterministic.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric finite matrix.
    n_components : int
        ``k``, between 1 and ``n``.

    Returns
    -------
    V : ndarray of shape (n, n_components)
        Orthonormal columns, ordered by decreasing eigenvalue.
    """
    A = check_square_matrix(A, "A")
    n = A.shape[0]
    k = check_int_range(n_components, "n_components", 1, n)
    _, V = sla.eigh(A, subset_by_index=[n - k, n - 1])
    if V.shape[1] < k:  # LAPACK's subset driver can return fewer vectors on a degenerate spectrum
        V = np.linalg.eigh(A)[1][:, n - k:]
    return _fixed_signs(V[:, ::-1])


def _fixed_signs(V: np.ndarray) -> np.ndarray:
    """``V`` with each column's entry of largest magnitude made positive (a new array)."""
    signs = np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    signs[signs == 0] = 1.0
    return np.ascontiguousarray(V * signs)


def factor_embedding(F, n_components: int) -> np.ndarray:
    r"""The eigenvectors of the ``n_components`` largest eigenvalues of ``X = F F^T``, from F alone.

    With the thin singular value decomposition :math:`F = U \Sigma W^\top`,
    :math:`X = U \Sigma^2 U^\top`: the eigenvectors of X are the left singular vectors of F and its
    eigenvalues the squared singular values, so an ``n x r`` factor gives them in ``O(n r^2)``
    operations and ``O(n r)`` memory, never forming X.  Where F has fewer than ``n_components``
    columns (X of rank below it, whose remaining eigenvalues are 0), the columns are completed by an
    orthonormal basis of part of the null space of X, drawn with a fixed seed.  Signs are fixed as
    in :func:`spectral_embedding`, whose result this equals for a matrix given as ``F F^T`` (up to
    the choice of basis within a repeated eigenvalue).

    Parameters
    ----------
    F : array-like of shape (n, r)
        Finite factor.
    n_components : int
        ``k``, between 1 and ``n``.

    Returns
    -------
    V : ndarray of shape (n, n_components)
        Orthonormal columns, ordered by decreasing eigenvalue of ``F F^T``.
    """
    F = as_float_array(F, "F", "matrix")
    if F.ndim != 2 or F.shape[1] < 1:
        raise ValueError(f"F must be a 2-D factor of shape (n, r) with r >= 1, got shape {F.shape}")
    if not np.all(np.isfinite(F)):
        raise ValueError("F contains NaN or infinite entries")
    n = F.shape[0]
    k = check_int_range(n_components, "n_components", 1, n)
    U = np.linalg.svd(F, full_matrices=False)[0][:, :k]
    if U.shape[1] < k:  # X = F F^T has rank below k: complete with directions of its null space
        extra = np.random.default_rng(0).standard_normal((n, k - U.shape[1]))
        U = np.linalg.qr(np.hstack([U, extra - U @ (U.T @ extra)]))[0]
    return _fixed_signs(U)


def _normalized_embedding(A, n_clusters: int) -> np.ndarray:
    A = check_square_matrix(A, "A")
    k = check_n_clusters(n_clusters, A.shape[0])
    return normalize(spectral_embedding(A, k), norm="l2", axis=1)


def kmeans_rounding(A, n_clusters: int, *, n_init: int = 10, random_state=None) -> np.ndarray:
    r"""Labels by k-means on the row-normalized spectral embedding of ``A``.

    With :math:`V \in \mathbb{R}^{n\times k}` the top-``k`` eigenvectors of ``A``
    (:func:`spectral_embedding`) and :math:`u_i = V_{i:} / \|V_{i:}\|` its normalized rows,

    .. math:: \min_{r, \{\mu_c\}} \sum_{i=1}^n \|u_i - \mu_{r_i}\|_2^2,

    solved by ``sklearn.cluster.KMeans`` with ``n_init`` restarts (the lowest inertia is kept).

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric finite matrix.
    n_clusters : int
        ``k``, between 2 and ``n``.
    n_init : int >= 1
        Number of k-means restarts.
    random_state : int, RandomState instance or None
        Seeds the k-means initialisations.

    Returns
    -------
    labels : ndarray of shape (n,)
        Integers in ``0 .. n_clusters - 1``.

    Raises
    ------
    ValueError
        Naming ``A``, ``n_clusters``, ``n_init`` or ``random_state``.
    """
    return _kmeans_rows(_normalized_embedding(A, n_clusters), n_init=n_init, random_state=random_state)


def _kmeans_rows(U: np.ndarray, *, n_init: int = 10, random_state=None) -> np.ndarray:
    n_init = check_int_range(n_init, "n_init", 1)
    rng = check_random_state(random_state)
    km = KMeans(n_clusters=U.shape[1], n_init=n_init, random_state=rng)
    return km.fit_predict(U).astype(np.intp)


def _initial_rotation(U: np.ndarray, first: int) -> np.ndarray:
    """Yu-Shi initialisation: columns are rows of ``U``, each as orthogonal as possible to the
    previous ones, starting from row ``first``."""
    n, k = U.shape
    R = np.empty((k, k))
    R[:, 0] = U[first]
    c = np.zeros(n)
    for j in range(1, k):
        c += np.abs(U @ R[:, j - 1])
        R[:, j] = U[np.argmin(c)]
    return R


def _discretize_from(U: np.ndarray, first: int, max_iter: int) -> tuple[np.ndarray, float, int]:
    """One Yu-Shi restart from row ``first``; returns (labels, objective, iterations)."""
    n, k = U.shape
    R = _initial_rotation(U, first)
    tol = 1e-12 * n
    objective = -np.inf
    labels = np.zeros(n, dtype=np.intp)
    for it in range(1, max_iter + 1):
        new_labels = np.argmax(U @ R, axis=1)
        M = np.zeros((k, k))  # X^T U with X the one-hot matrix of new_labels
        np.add.at(M, new_labels, U)
        W_left, S, Wh = np.linalg.svd(M)
        new_objective = float(S.sum())
        if new_objective <= objective + tol:
            return labels, objective, it
        labels, objective = new_labels, new_objective
        R = Wh.T @ W_left.T
    return labels, objective, max_iter


def discretize(
    A,
    n_clusters: int,
    *,
    n_init: int = 10,
    max_iter: int = 30,
    random_state=None,
    return_objective: bool = False,
):
    r"""Yu & Shi (2003) discretization of the spectral embedding of ``A``.

    With :math:`U \in \mathbb{R}^{n\times k}` the row-normalized top-``k`` eigenvectors of ``A``,
    find a partition matrix :math:`X \in \{0,1\}^{n\times k}` (one 1 per row) and a rotation
    :math:`R \in O(k)` solving

    .. math:: \max_{X, R}\ \operatorname{tr}(X^\top U R)

    by alternation: :math:`X_{ic} = 1` for :math:`c = \arg\max_c (UR)_{ic}`; then with
    :math:`X^\top U = W S Z^\top` (SVD), :math:`R = Z W^\top`, which attains
    :math:`\operatorname{tr}(X^\top U R) = \operatorname{tr}(S)`.  The objective
    :math:`\operatorname{tr}(S)` never decreases; a restart stops when it increases by at most
    :math:`10^{-12} n`, or after ``max_iter`` iterations.  Each restart initialises the columns of
    :math:`R` with rows of :math:`U` chosen as orthogonal as possible to each other, the first
    at random; the restart with the largest objective wins.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric finite matrix.
    n_clusters : int
        ``k``, between 2 and ``n``.
    n_init : int >= 1
        Number of random restarts.
    max_iter : int >= 1
        Maximum alternations per restart.
    random_state : int, RandomState instance or None
        Seeds the first row of each restart.
    return_objective : bool
        Also return the best objective :math:`\operatorname{tr}(S) \le n`.

    Returns
    -------
    labels : ndarray of shape (n,)
        Integers in ``0 .. n_clusters - 1`` (a cluster may be empty).
    objective : float
        Only with ``return_objective=True``.

    Raises
    ------
    ValueError
        Naming ``A``, ``n_clusters``, ``n_init``, ``max_iter``, ``random_state`` or
        ``return_objective`` (a bool, not a truthy value).

    References
    ----------
    S. X. Yu and J. Shi, "Multiclass spectral clustering", ICCV 2003, Sec. 3-4.
    """
    return _discretize_rows(_normalized_embedding(A, n_clusters), n_init=n_init, max_iter=max_iter,
                            random_state=random_state, return_objective=return_objective)


def _discretize_rows(U: np.ndarray, *, n_init: int = 10, max_iter: int = 30, random_state=None,
                     return_objective: bool = False):
    n_init = check_int_range(n_init, "n_init", 1)
    max_iter = check_int_range(max_iter, "max_iter", 1)
    rng = check_random_state(random_state)
    return_objective = check_bool(return_objective, "return_objective")
    firsts = rng.randint(U.shape[0], size=n_init)
    best_labels, best_objective = None, -np.inf
    for first in firsts:
        labels, objective, _ = _discretize_from(U, int(first), max_iter)
        if objective > best_objective:
            best_labels, best_objective = labels, objective
    return (best_labels, best_objective) if return_objective else best_labels


#: Names accepted by :func:`round_labels`.
ROUNDINGS = {"discretize": discretize, "kmeans": kmeans_rounding}
#: the same roundings applied to a row-normalized embedding
_ROW_ROUNDINGS = {"discretize": _discretize_rows, "kmeans": _kmeans_rows}


def round_labels(A, n_clusters: int, method: str = "discretize", **options) -> np.ndarray:
    """Round the symmetric matrix ``A`` to ``n_clusters`` cluster labels.

    Parameters
    ----------
    A : array-like of shape (n, n)
        Symmetric finite matrix.
    n_clusters : int
        Between 2 and ``n``.
    method : {"discretize", "kmeans"}
        :func:`discretize` (Yu-Shi rotation) or :func:`kmeans_rounding`.
    **options
        Keyword arguments of the chosen rounding (``n_init``, ``random_state``, and for
        ``"discretize"`` also ``max_iter``).

    Returns
    -------
    labels : ndarray of shape (n,)
    """
    check_choice(method, "method", ROUNDINGS)
    A = check_square_matrix(A, "A")
    check_n_clusters(n_clusters, A.shape[0])
    return ROUNDINGS[method](A, n_clusters, **options)


def round_embedding(V, n_clusters: int, method: str = "discretize", **options) -> np.ndarray:
    """Round a spectral embedding to ``n_clusters`` cluster labels: :func:`round_labels` given the
    top eigenvectors of the matrix instead of the matrix (:func:`factor_embedding` computes them
    from a factor ``F`` of ``A = F F^T`` without forming A).

    Parameters
    ----------
    V : array-like of shape (n, n_clusters)
        Finite embedding (the top ``n_clusters`` eigenvectors, as :func:`spectral_embedding`
        returns them); its rows are normalized, as :func:`round_labels` does.
    n_clusters : int
        Between 2 and ``n``; ``V`` has that many columns.
    method, **options
        As for :func:`round_labels`.

    Returns
    -------
    labels : ndarray of shape (n,)
    """
    check_choice(method, "method", ROUNDINGS)
    V = as_float_array(V, "V", "matrix")
    if V.ndim != 2 or not np.all(np.isfinite(V)):
        raise ValueError(f"V must be a finite 2-D embedding of shape (n, n_clusters), got shape {V.shape}")
    k = check_n_clusters(n_clusters, V.shape[0])
    if V.shape[1] != k:
        raise ValueError(f"V must have n_clusters={k} columns, got shape {V.shape}")
    return _ROW_ROUNDINGS[method](normalize(V, norm="l2", axis=1), **options)
