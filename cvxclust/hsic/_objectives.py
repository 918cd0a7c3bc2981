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

from .._checks import as_float_array, check_bool, check_kernel
from .._trace import partition_matrix as assignment_matrix, trace_objective
from ._keywords import no_other_keywords, normalization_of

__all__ = ["hsic", "objective", "partition_matrix"]


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


def partition_matrix(labels, n_clusters: int, *, normalization=None, **deprecated) -> np.ndarray:
    r"""The m x c partition matrix :math:`P = \Pi D` of ``labels`` (:math:`\Pi_{i,\ell_i} = 1`).

    Parameters
    ----------
    labels : array-like of int, shape (m,)
        Cluster of each point, ``0 .. n_clusters - 1``.
    n_clusters : int
        Number c of columns.
    normalization : {None, "l1", "l2"}, default=None
        :math:`D = I` (the objective (2.3)), :math:`(\Pi^\top\Pi)^{-1}` or
        :math:`(\Pi^\top\Pi)^{-1/2}` (the objective (2.4)); empty clusters give zero columns.
        ``normalized=True/False`` is the old spelling of ``"l2"`` / None.

    Returns
    -------
    ndarray of shape (m, c)
    """
    normalization = normalization_of("partition_matrix", normalization, deprecated, default=None,
                                     supported=(None, "l1", "l2"))
    no_other_keywords("partition_matrix", deprecated)
    P = assignment_matrix(labels, n_clusters)
    if normalization is not None:
        sizes = P.sum(axis=0)
        power = 1.0 if normalization == "l1" else 0.5
        P[:, sizes > 0] /= sizes[sizes > 0] ** power
    return P


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
