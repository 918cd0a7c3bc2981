"""Output kernels: the ``c x c`` matrix ``A`` of CLUHSIC's (2.3)/(2.4) that a structure stands for."""

from __future__ import annotations

import networkx as nx
import numpy as np

from .._checks import check_bool, check_int_range, check_square_matrix
from ._graphs import coerce_structure

# eigenvalues above -PSD_RTOL * max(1, |lambda|_max) count as >= 0: an even ring's 2I + adjacency
# is singular and eigvalsh returns its zero eigenvalue as about -1e-15.
PSD_RTOL = 1e-9


def psd_check(A: np.ndarray) -> tuple[bool, float]:
    """Whether ``A`` is p.s.d. to the tolerance ``PSD_RTOL``, and its smallest eigenvalue."""
    w = np.linalg.eigvalsh(A)
    return bool(w[0] >= -PSD_RTOL * max(1.0, np.abs(w).max())), float(w[0])


def check_output_kernel(A, n_clusters: int | None = None, psd: bool = True, *, name: str = "A") -> np.ndarray:
    r"""Validate a user-given ``c x c`` output kernel ``A`` for (2.3)/(2.4).

    Parameters
    ----------
    A : array-like of shape (c, c)
        Square, finite, symmetric and (if ``psd``) positive semidefinite: ``A`` is a kernel on
        the clusters, :math:`A = \Lambda\Lambda^\top`.
    n_clusters : int, optional
        Required ``c``.
    psd : bool
        Check :math:`\lambda_{\min}(A) \ge -10^{-9}\max(1, |\lambda|_{\max})`.
    name : str
        The name the messages give ``A`` (the caller's name for it, e.g. an estimator's
        ``output_kernel``).

    Returns
    -------
    ndarray of shape (c, c)
        ``A`` as a float array, exactly symmetric.

    Raises
    ------
    ValueError
        Naming ``A`` (as ``name``), ``n_clusters`` or ``psd`` (a bool, not a truthy value).
    """
    A = check_square_matrix(A, name)
    psd = check_bool(psd, "psd")
    if n_clusters is not None:
        n_clusters = check_int_range(n_clusters, "n_clusters", 1)
        if A.shape[0] != n_clusters:
            raise ValueError(f"{name} must be {n_clusters} x {n_clusters} (one row per cluster), got {A.shape}")
    if psd:
        ok, lam = psd_check(A)
        if not ok:
            raise ValueError(f"{name} must be positive semidefinite, its smallest eigenvalue is {lam:.3g}")
    return A


def _hierarchy_kernel(G: nx.DiGraph) -> np.ndarray:
    root, clusters = G.graph["root"], G.graph["clusters"]
    features = {z: i for i, z in enumerate(v for v in G if v != root)}  # the root's feature is excluded
    Lam = np.zeros((len(clusters), len(features)))
    for k, leaf in enumerate(clusters):
        for z in nx.ancestors(G, leaf) | {leaf}:
            if z != root:
                Lam[k, features[z]] = 1.0
    return Lam @ Lam.T


def output_kernel(structure, *, check_psd: bool = True) -> np.ndarray:
    r"""The ``c x c`` output kernel ``A`` of a structure, in cluster order.

    * chain, ring, general graph: ``2I + adjacency`` (Section 2, Figure 1(a),(b); edge weights
      are ignored);
    * flat: ``I`` (plain kernel k-means);
    * tree: the hierarchy kernel :math:`\Lambda\Lambda^\top` of CLUHSICAL Section IV-A-2
      (see :func:`tree`); the tree matrix of Section 2 for ``tree([2, 2])``;
    * product: ``np.kron(A1, A2)`` of the factors' kernels (Section 6.1.1).

    Parameters
    ----------
    structure : structure
        Anything :func:`as_structure` accepts.
    check_psd : bool, keyword-only
        Raise if ``A`` is not positive semidefinite.  Only a general graph's ``2I + adjacency``
        can fail (e.g. a star with 5 or more leaves: :math:`\lambda_{\min} = 2 - \sqrt{5}`).

    Returns
    -------
    ndarray of shape (c, c)

    Raises
    ------
    ValueError
        Naming ``structure``, if it is not a structure or (``check_psd``) its kernel is
        indefinite; pass your own p.s.d. kernel instead (:func:`check_output_kernel`).
    """
    G = coerce_structure(structure, "structure")
    check_psd = check_bool(check_psd, "check_psd")
    kind, clusters = G.graph["kind"], G.graph["clusters"]
    c = len(clusters)
    if kind == "flat":
        A = np.eye(c)
    elif kind == "tree":
        A = _hierarchy_kernel(G)
    elif kind == "product":
        f1, f2 = G.graph["factors"]
        A = np.kron(output_kernel(f1, check_psd=False), output_kernel(f2, check_psd=False))
    else:  # chain, ring, graph
        A = 2.0 * np.eye(c) + nx.to_numpy_array(G, nodelist=clusters, weight=None)
    if check_psd:
        ok, lam = psd_check(A)
        if not ok:
            raise ValueError(
                f"structure gives an output kernel that is not positive semidefinite (smallest "
                f"eigenvalue {lam:.3g}); pass your own p.s.d. output kernel A instead "
                "(validated by cvxclust.structures.check_output_kernel)"
            )
    return A
