r"""HSIC and the CLUHSIC objectives (2.1)-(2.4).

With an input kernel K (m x m), an output kernel A (c x c) on the clusters and a partition
matrix Pi (m x c, one 1 per row), CLUHSIC maximizes the empirical HSIC between K and the output
kernel L = Pi A Pi^T on the labels:

* unnormalized (2.3):  ``max tr(K Pi A Pi^T)``;
* normalized (2.4):    ``max tr(K P A P^T)``, ``P = Pi D``, ``D = (Pi^T Pi)^{-1/2}``, so that
  every cluster (column) has unit norm.

K is assumed centred (HKH) as in (2.2); :func:`hsic` centres it for (2.1).
"""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, check_bool, check_int_range, check_kernel, check_labels

__all__ = ["as_partition_matrix", "hsic", "objective", "partition_matrix", "trace_objective"]


def trace_objective(K: np.ndarray, A: np.ndarray, P: np.ndarray) -> float:
    """``tr(K P A P^T)`` of float arrays of matching shapes (K m x m, P m x c, A c x c), unchecked:
    the solvers call it on inputs checked at the door (users call :func:`objective`).  Two
    products with P, never an m x m output kernel."""
    return float(np.sum((K @ P) * (P @ A)))


def partition_matrix(labels, n_clusters: int, *, normalized: bool = False) -> np.ndarray:
    """The m x c partition matrix Pi of ``labels`` (``Pi[i, labels[i]] = 1``), or with
    ``normalized=True`` the P = Pi (Pi^T Pi)^{-1/2} of (2.4) (empty clusters give zero columns)."""
    n_clusters = check_int_range(n_clusters, "n_clusters", 1)
    labels = check_labels(labels, n_clusters=n_clusters)
    normalized = check_bool(normalized, "normalized")
    Pi = np.zeros((labels.shape[0], n_clusters))
    Pi[np.arange(labels.shape[0]), labels] = 1.0
    if normalized:
        sizes = Pi.sum(axis=0)
        Pi[:, sizes > 0] /= np.sqrt(sizes[sizes > 0])
    return Pi


def as_partition_matrix(labels_or_Pi, m: int, c: int | None, name: str, *, normalized: bool = False) -> np.ndarray:
    """A partition matrix from either of its two usual forms: labels or the matrix itself.

    Parameters
    ----------
    labels_or_Pi : array-like of shape (m,) or (m, c)
        Cluster labels in ``0..c-1`` (turned into :func:`partition_matrix` of ``c`` clusters,
        or ``max + 1`` clusters if ``c`` is None), or a finite real m x c matrix, returned as
        given (a relaxed partition matrix is allowed).
    m, c : int, int or None
        The number of points and of clusters (None: any number of columns).
    name : str
        The argument's name in error messages.
    normalized : bool, default=False
        For labels: return the normalized ``P = Pi (Pi^T Pi)^{-1/2}`` of (2.4).

    Returns
    -------
    ndarray of shape (m, c)

    Raises
    ------
    ValueError
        Naming ``name`` for labels out of range or of the wrong length, or a matrix of the
        wrong shape or with non-finite entries.
    """
    try:
        ndim = np.ndim(labels_or_Pi)
    except ValueError:  # ragged nested sequences, refused below
        ndim = None
    if ndim == 1:
        labels = check_labels(labels_or_Pi, m, c, name=name)
        return partition_matrix(labels, int(labels.max()) + 1 if c is None else c, normalized=normalized)
    P = as_float_array(labels_or_Pi, name, "matrix")
    if P.ndim != 2 or P.shape[0] != m or P.shape[1] < 1 or (c is not None and P.shape[1] != c) or (
            not np.all(np.isfinite(P))):
        expected = f"a finite {m} x {c} matrix" if c is not None else f"a finite matrix of {m} rows"
        raise ValueError(f"{name} must be {m} cluster labels or {expected}, got shape {P.shape}")
    return P


def objective(K, A, P) -> float:
    """``tr(K P A P^T)``, the CLUHSIC objective (2.3)/(2.4) for a (normalized) partition matrix P
    or any relaxed m x c matrix.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric finite input kernel.
    A : array-like of shape (c, c)
        Symmetric finite output kernel.
    P : array-like of shape (m, c)
        Finite (normalized) partition matrix, e.g. :func:`partition_matrix` of some labels.

    Returns
    -------
    float
    """
    K = check_kernel(K, "K")
    A = check_kernel(A, "A")
    P = as_float_array(P, "P", "matrix")
    if P.shape != (K.shape[0], A.shape[0]):
        raise ValueError(f"P must have shape (m, c) = {(K.shape[0], A.shape[0])} for K and A, got {P.shape}")
    if not np.all(np.isfinite(P)):
        raise ValueError("P contains NaN or infinite entries")
    return trace_objective(K, A, P)


def hsic(K, L, *, centered: bool = False) -> float:
    """Empirical HSIC (2.1): ``(m-1)^{-2} tr(H K H L)``, H = I - 11^T/m; with ``centered=True``
    K is taken as already centred and (2.2) ``(m-1)^{-2} tr(K L)`` is returned."""
    K = check_kernel(K, "K", min_size=2)
    L = check_kernel(L, "L")
    centered = check_bool(centered, "centered")
    if L.shape != K.shape:
        raise ValueError(f"L must have the shape of K {K.shape}, got {L.shape}")
    m = K.shape[0]
    if not centered:
        K = K - K.mean(axis=0, keepdims=True)
        K = K - K.mean(axis=1, keepdims=True)
    return float(np.sum(K * L)) / (m - 1) ** 2
