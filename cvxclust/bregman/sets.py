r"""Normalized equivalence matrices and their convex relaxations M1, M2, M3.

Section 3.1 of H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", UAI 2013.
For a hard assignment ``Y in {0,1}^{t x d}`` with ``Y 1 = 1`` the *normalized equivalence
matrix* is (9)::

    M = Y (Y^T Y)^+ Y^T = Y diag(Y^T 1)^+ Y^T,      M_ij = [l_i = l_j] / |cluster of i|,

and, after Peng & Wei (2007), the set of all of them (at most d non-empty clusters) is::

    M  = {M : M = M^T, M^2 = M, tr(M) <= d, M_{i:} in Delta_t}

(each row in the probability simplex; the paper's text prints ``M_ii in Delta_t``, which can only
mean the rows ``M_{i:}``, as ``Delta_t^t`` in the definition of M1 confirms).  Replacing
``M^2 = M`` by its convex hull gives the relaxations of Section 3.1::

    M1 = {M : 0 <= M <= I, tr(M) <= d, M >= 0 entrywise, M 1 = 1}     (p.s.d. order)
    M2 = {M : 0 <= M <= I, tr(M) <= d, M 1 = 1}
    M3 = {M : 0 <= M <= I, tr(M) <= d - 1}                              (12)

with ``M2 = {H S H + 11^T/t : S in M3}``, ``H = I - 11^T/t`` (Lemma 1, (11)).  This module
states each set as cvxpy constraints, measures membership of a numpy matrix, projects onto
M2 and M3 in closed form (the eigenvalue problem (13); the projections live in
:mod:`cvxclust.bregman._set_projections`), and exhibits a point of M1 outside conv(M) (the
claim of Appendix A).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
from scipy.sparse.csgraph import connected_components

from .._checks import check_labels, check_n_clusters, check_square_matrix
from ._set_projections import M2Projector, double_center, project_M2, project_M3, spectral_threshold


__all__ = [
    "M2Projector",
    "constraints_M1",
    "constraints_M2",
    "constraints_M3",
    "double_center",
    "enumerate_equivalence_matrices",
    "equivalence_matrix",
    "is_equivalence_matrix",
    "m1_not_convex_hull_example",
    "project_M2",
    "project_M3",
    "residuals_M1",
    "residuals_M2",
    "residuals_M3",
    "spectral_threshold",
]


# --------------------------------------------------------------------------------------------
# the exact set M
# --------------------------------------------------------------------------------------------

def equivalence_matrix(labels, n_clusters: int) -> np.ndarray:
    r"""The normalized equivalence matrix (9) of hard labels.

    .. math:: M = Y (Y^\top Y)^\dagger Y^\top, \qquad
              M_{ij} = \frac{[l_i = l_j]}{|\{k : l_k = l_i\}|},

    where ``Y`` is the t x d 0/1 assignment matrix of ``labels``.  Empty clusters contribute
    nothing (the pseudo-inverse), so ``tr(M)`` is the number of non-empty clusters.

    Parameters
    ----------
    labels : array of int, shape (t,)
        Cluster index of every sample, in ``0 .. n_clusters - 1``.
    n_clusters : int
        The number of clusters d, ``2 <= d <= t``.

    Returns
    -------
    M : ndarray, shape (t, t)
        Symmetric, idempotent, nonnegative, with unit row sums.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError("labels must be a 1-D array of integer cluster indices")
    d = check_n_clusters(n_clusters, labels.shape[0])
    labels = check_labels(labels, n_clusters=d)
    counts = np.bincount(labels, minlength=d)
    same = labels[:, None] == labels[None, :]
    return same / counts[labels][:, None]


def is_equivalence_matrix(M, n_clusters: int | None = None, *, atol: float = 1e-8) -> bool:
    r"""Whether ``M`` is (to ``atol``) a normalized equivalence matrix (9), i.e. lies in the set M.

    The partition is read off the support graph of ``M`` (an edge where ``M_ij > atol``) by
    its connected components; ``M`` is accepted iff it equals, entrywise to ``atol``, the
    equivalence matrix of that partition and (when ``n_clusters`` is given) the partition has
    at most ``n_clusters`` blocks, i.e. ``tr(M) <= d``.  This is equivalent to Peng & Wei's
    description ``M = M^T = M^2``, ``M_{i:} in Delta_t`` but does not square round-off.

    Parameters
    ----------
    M : array, shape (t, t)
    n_clusters : int, optional
        The bound d on the number of clusters; no bound when None.
    atol : float
        Entrywise tolerance.

    Returns
    -------
    bool
    """
    M = check_square_matrix(M, "M", symmetric=False)
    t = M.shape[0]
    if n_clusters is not None:
        check_n_clusters(n_clusters, t)
    if np.abs(M - M.T).max() > atol:
        return False
    n_blocks, labels = connected_components(M > atol, directed=False)
    if n_clusters is not None and n_blocks > n_clusters:
        return False
    counts = np.bincount(labels)
    exact = (labels[:, None] == labels[None, :]) / counts[labels][:, None]
    return bool(np.abs(M - exact).max() <= atol)


def enumerate_equivalence_matrices(n_samples: int, n_clusters: int):
    r"""Yield ``(labels, M)`` for every element of the set M: each partition of
    ``n_samples`` points into at most ``n_clusters`` non-empty blocks, once.

    Partitions are generated as restricted growth strings (``labels[0] = 0`` and each label
    at most one more than the largest before it), so no partition repeats.  Their number is
    ``sum_{k <= d} S(t, k)`` (Stirling numbers of the second kind): meant for tiny ``t``,
    e.g. to compare a relaxation with the exact set or to certify a separation
    (:func:`m1_not_convex_hull_example`).

    Parameters
    ----------
    n_samples : int
        t >= 2.
    n_clusters : int
        d, ``2 <= d <= t``.

    Yields
    ------
    labels : ndarray of int, shape (t,)
    M : ndarray, shape (t, t)
        ``equivalence_matrix(labels, n_clusters)``.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    d = check_n_clusters(n_clusters, int(n_samples))
    t = int(n_samples)
    labels = [0] * t

    def grow(i: int, used: int):
        if i == t:
            lab = np.array(labels)
            yield lab, equivalence_matrix(lab, d)
            return
        for c in range(min(used + 1, d)):
            labels[i] = c
            yield from grow(i + 1, max(used, c + 1))

    yield from grow(1, 1)


# --------------------------------------------------------------------------------------------
# cvxpy statements of M1, M2, M3
# --------------------------------------------------------------------------------------------

def _check_variable(M) -> tuple[int, list]:
    """Size of the square cvxpy expression ``M``, and ``[M == M^T]`` unless it is symmetric."""
    if not isinstance(M, cp.Expression):
        raise ValueError(f"M must be a cvxpy expression (e.g. cp.Variable((t, t), symmetric=True)), "
                         f"got {type(M).__name__}")
    if len(M.shape) != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix expression, got shape {M.shape}")
    # the paper encodes symmetry in M >> 0; cvxpy's PSD constraint only constrains (M + M^T)/2
    return M.shape[0], ([] if M.is_symmetric() else [M == M.T])


def constraints_M3(M: cp.Expression, n_clusters: int) -> list[cp.Constraint]:
    r"""cvxpy constraints of (12), ``M3 = {M : 0 <= M <= I, tr(M) <= d - 1}``.

    Returned in this order (so their dual values can be read by index)::

        [M >> 0,  I - M >> 0,  tr(M) <= d - 1]

    preceded by ``M == M^T`` when ``M`` is not a symmetric cvxpy variable.

    Parameters
    ----------
    M : cvxpy Expression, shape (t, t)
        Preferably ``cp.Variable((t, t), symmetric=True)``.
    n_clusters : int
        d, ``2 <= d <= t``.
    """
    t, sym = _check_variable(M)
    d = check_n_clusters(n_clusters, t)
    return sym + [M >> 0, np.eye(t) - M >> 0, cp.trace(M) <= d - 1]


def constraints_M2(M: cp.Expression, n_clusters: int) -> list[cp.Constraint]:
    r"""cvxpy constraints of ``M2 = {M : 0 <= M <= I, tr(M) <= d, M 1 = 1}`` (Section 3.1),
    the spectral constraints of M1.

    Returned in this order::

        [M >> 0,  I - M >> 0,  tr(M) <= d,  M 1 == 1]

    preceded by ``M == M^T`` when ``M`` is not a symmetric cvxpy variable.
    """
    t, sym = _check_variable(M)
    d = check_n_clusters(n_clusters, t)
    ones = np.ones(t)
    return sym + [M >> 0, np.eye(t) - M >> 0, cp.trace(M) <= d, M @ ones == ones]


def constraints_M1(M: cp.Expression, n_clusters: int) -> list[cp.Constraint]:
    r"""cvxpy constraints of
    ``M1 = {M : 0 <= M <= I, tr(M) <= d, M_{i:} in Delta_t}`` (Section 3.1), i.e. M2 plus
    entrywise nonnegativity (rows in the simplex ``Delta_t``).

    ``M <= I`` is implied by the others (Mirsky 1955, Thm 7.5.4) but stated, as in the paper.
    Returned in this order::

        [M >> 0,  I - M >> 0,  tr(M) <= d,  M 1 == 1,  M >= 0]

    preceded by ``M == M^T`` when ``M`` is not a symmetric cvxpy variable.
    """
    return constraints_M2(M, n_clusters) + [M >= 0]


# --------------------------------------------------------------------------------------------
# numpy membership
# --------------------------------------------------------------------------------------------

def _spectral_residuals(M, n_clusters: int, trace_bound_offset: int) -> tuple[np.ndarray, int, dict]:
    M = check_square_matrix(M, "M", symmetric=False)
    d = check_n_clusters(n_clusters, M.shape[0])
    S = (M + M.T) / 2
    w = np.linalg.eigvalsh(S)
    res = {
        "symmetry": float(np.abs(M - M.T).max()),
        "psd": float(max(0.0, -w[0])),
        "upper": float(max(0.0, w[-1] - 1.0)),
        "trace": float(max(0.0, np.trace(S) - (d - trace_bound_offset))),
    }
    return S, d, res


def residuals_M3(M, n_clusters: int) -> dict[str, float]:
    r"""Violations of (12) by a numpy matrix, all ``0`` for a member of M3.

    ``symmetry`` = max|M - M^T|; on the symmetric part S: ``psd`` = max(0, -lambda_min(S)),
    ``upper`` = max(0, lambda_max(S) - 1), ``trace`` = max(0, tr(S) - (d - 1)).  The set is
    scale-free (eigenvalues in [0, 1]), so the figures are absolute.
    """
    return _spectral_residuals(M, n_clusters, 1)[2]


def residuals_M2(M, n_clusters: int) -> dict[str, float]:
    r"""Violations of M2 by a numpy matrix: the keys of :func:`residuals_M3` with the trace
    bound d instead of d - 1, and ``row_sums`` = max|M 1 - 1|."""
    S, _, res = _spectral_residuals(M, n_clusters, 0)
    res["row_sums"] = float(np.abs(S.sum(axis=1) - 1.0).max())
    return res


def residuals_M1(M, n_clusters: int) -> dict[str, float]:
    r"""Violations of M1 by a numpy matrix: those of :func:`residuals_M2` and
    ``nonnegativity`` = max(0, -min_ij M_ij)."""
    res = residuals_M2(M, n_clusters)  # validates M
    res["nonnegativity"] = float(max(0.0, -np.min(np.asarray(M, dtype=float))))
    return res


# --------------------------------------------------------------------------------------------
# Appendix A: M1 is not conv(M)
# --------------------------------------------------------------------------------------------

def m1_not_convex_hull_example() -> dict:
    r"""A point of M1 outside conv(M), with a separating linear functional (Appendix A's claim).

    For ``t = 3`` points and ``d = 2`` clusters, M has four elements: ``J/3`` (one cluster)
    and the three ``{i}{j,k}`` splits.  Write a symmetric matrix with unit row sums by its
    off-diagonal entries ``(a, b, c) = (M_12, M_13, M_23)``; the four elements are
    ``(1/3, 1/3, 1/3)``, ``(1/2, 0, 0)``, ``(0, 1/2, 0)``, ``(0, 0, 1/2)``, and
    ``2a + 2b - c <= 1`` is a facet of their hull.  With::

        C = [[0, 2, 2], [2, 0, -1], [2, -1, 0]],     <C, M> = 2 (2a + 2b - c),

    ``max_{M in M} <C, M> = 2`` (attained on that facet: by J/3, {1,2}{3} and {1,3}{2}), while

        P = [[1/3, 1/3, 1/3], [1/3, 2/3, 0], [1/3, 0, 2/3]]

    is in M1 (symmetric, nonnegative, unit row sums, eigenvalues 1 (eigenvector 1), 2/3
    (``(0, 1, -1)``) and 0 (``(-2, 1, 1)``), trace 5/3 <= 2) and ``<C, P> = 8/3 > 2``.
    So ``conv(M)`` is a strict subset of M1 already at t = 3: the semidefinite constraint
    does not capture the partition polytope.  (The paper states the claim; this example and its
    certificate are constructed here.)

    The maximum over M is computed here by enumerating M
    (:func:`enumerate_equivalence_matrices`), and the membership figures by
    :func:`residuals_M1`; nothing is taken on trust.

    Returns
    -------
    dict with keys
        ``C`` (3 x 3), ``point`` (P), ``n_clusters`` (2), ``value_point`` (``<C, P>``),
        ``max_over_M`` (``max <C, M>`` over M), ``argmax_labels`` (a maximising partition),
        ``gap`` (``value_point - max_over_M`` > 0) and ``residuals_M1`` (of P, all 0).
    """
    d = 2
    C = np.array([[0.0, 2.0, 2.0], [2.0, 0.0, -1.0], [2.0, -1.0, 0.0]])
    P = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 0.0], [1.0, 0.0, 2.0]]) / 3.0
    best_value, best_labels = -np.inf, None
    for labels, M in enumerate_equivalence_matrices(3, d):
        value = float(np.sum(C * M))
        if value > best_value:
            best_value, best_labels = value, labels
    value_point = float(np.sum(C * P))
    return {
        "C": C,
        "point": P,
        "n_clusters": d,
        "value_point": value_point,
        "max_over_M": best_value,
        "argmax_labels": best_labels,
        "gap": value_point - best_value,
        "residuals_M1": residuals_M1(P, d),
    }
