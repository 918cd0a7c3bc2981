"""The trace ``tr(K P A P^T)`` and partition matrices: the pieces the HSIC problem
(:mod:`cvxclust.hsic`) shares with the families that reduce to it."""

from __future__ import annotations

import numpy as np

from ._checks import as_float_array, check_bool, check_int_range, check_labels

__all__ = ["as_partition_matrix", "partition_matrix", "trace_objective"]


def trace_objective(K: np.ndarray, A: np.ndarray, P: np.ndarray) -> float:
    """``tr(K P A P^T)`` of float arrays of matching shapes (K m x m, P m x c, A c x c), unchecked:
    the solvers call it on inputs checked at the door (users call :func:`cvxclust.hsic.objective`).  Two
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
    """The m x c partition matrix of labels (``c`` clusters, or ``max + 1`` if None), or a
    finite real m x c matrix as given, or a ValueError naming ``name`` (callers pass checked
    ``m``, ``c`` and their argument's name)."""
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
