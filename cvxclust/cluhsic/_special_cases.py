r"""Discriminative clustering as CLUHSIC (Section 3): DIFFRAC (3.5)-(3.7) and DisKmeans (3.8)-(3.12).

Both methods turn out to maximize ``tr(K~ Pi A Pi^T)`` (or its normalized form) for a
*transformed* input kernel K~, so any CLUHSIC optimizer runs them once K~ is built:

* DIFFRAC (Bach & Harchaoui 2008): ``K~ = X (X^T X + m kappa I)^{-1} X^T`` (3.6);
* DisKmeans (Ye, Zhao & Wu 2008) with output structure: ``K~ = I - (I + K/lam)^{-1}``
  (Proposition 1).

:func:`diffrac_cost` and :func:`diskmeans_criterion` evaluate the original criteria (3.5)/(3.7)
and (3.12) with their inner variable (W, resp. B) optimized out, so the reductions can be
checked partition by partition (``tests/cluhsic/test_cluhsic_special_cases.py``).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .._checks import (
    check_bool,
    check_data_matrix,
    check_int_range,
    check_kernel,
    check_positive,
    check_psd_eigenvalues,
    rounding_rtol,
)
from .._trace import as_partition_matrix

__all__ = ["diffrac_cost", "diffrac_kernel", "diskmeans_criterion", "diskmeans_kernel"]


def _centre_columns(X: np.ndarray) -> np.ndarray:
    return X - X.mean(axis=0, keepdims=True)


def diffrac_kernel(X, kappa: float, *, center: bool = True) -> np.ndarray:
    r"""DIFFRAC's transformed input kernel (3.6).

    .. math:: \tilde K = X_c (X_c^\top X_c + m\kappa I_d)^{-1} X_c^\top
              = X_c X_c^\top (X_c X_c^\top + m\kappa I_m)^{-1},

    with ``X_c = H X`` the column-centred data (``H = I - 11^T/m``).  With this K~,

    .. math:: \min_W \tfrac1m\|\Pi - X_c W\|_F^2 + \kappa\|W\|_F^2
              = -\tfrac1m \operatorname{tr}\big((\tilde K - I)\Pi\Pi^\top\big)
              = 1 - \tfrac1m \operatorname{tr}(\tilde K \Pi\Pi^\top),

    so minimizing DIFFRAC's cost (3.5) is maximizing CLUHSIC's (2.3) with K~ and ``A = I``
    (3.6); with the weighted norm ``tr(Z A Z^T)`` it is (3.7), see :func:`diffrac_cost`.

    Why centre: DIFFRAC fits an unregularized intercept ``f(x) = W^T x + b``; minimizing over
    ``b`` replaces X by ``X_c`` (and adds the cluster-size term of :func:`diffrac_cost`).
    Centring also makes K~ a centred kernel (``K~ 1 = 0``), as (2.2) assumes of CLUHSIC's K.
    The paper's (3.5) has no intercept; its identity (3.6) holds exactly for the centred X
    with or without ``center`` (``center=False`` uses X as given).

    Parameters
    ----------
    X : array-like of shape (m, d)
        Data, one point per row.
    kappa : float
        The ridge parameter kappa > 0 of (3.5).
    center : bool
        Centre the columns of X first (default, see above).

    Returns
    -------
    K_tilde : ndarray of shape (m, m)
        Symmetric, with eigenvalues in [0, 1).
    """
    X = check_data_matrix(X, "X")
    check_positive(kappa, "kappa")
    if check_bool(center, "center"):
        X = _centre_columns(X)
    m, d = X.shape
    ridge = m * kappa
    if d <= m:
        # d x d system: X (X^T X + m kappa I)^{-1} X^T
        G = X.T @ X
        G[np.diag_indices(d)] += ridge
        K = X @ sla.solve(G, X.T, assume_a="pos")
    else:
        # push-through identity, m x m system: I - m kappa (X X^T + m kappa I)^{-1}
        G = X @ X.T
        G[np.diag_indices(m)] += ridge
        K = np.eye(m) - ridge * sla.solve(G, np.eye(m), assume_a="pos")
    return (K + K.T) / 2


def diffrac_cost(X, labels, kappa: float, A=None, *, intercept: bool = False) -> float:
    r"""DIFFRAC's cost (3.5), or its structured form (3.7), minimized over W in closed form.

    .. math:: J(\Pi) = \min_W \tfrac1m \operatorname{tr}\big((\Pi - XW) A (\Pi - XW)^\top\big)
              + \kappa \operatorname{tr}(W A W^\top)

    (``A = I``: (3.5); ``||Z||^2_{I,A^{-1}} = tr(Z A Z^T)``: Section 3.1.2).  Setting the
    gradient ``(2/m)[(X^T X + m kappa I) W - X^T Pi] A`` to zero, ``W* = (X^T X + m kappa I)^{-1}
    X^T Pi`` is a minimizer for every p.s.d. A, and

    .. math:: J(\Pi) = \tfrac1m\big[\operatorname{tr}(\Pi A \Pi^\top)
              - \operatorname{tr}(\tilde K \Pi A \Pi^\top)\big]
              = -\tfrac1m \operatorname{tr}\big((\tilde K - I)\Pi A \Pi^\top\big),

    with K~ of (3.6) built from the same X.  If ``A_ii = d`` for all i, ``tr(Pi A Pi^T) = m d``
    and ``J = d - tr(K~ Pi A Pi^T) / m``: a constant minus a positive multiple of CLUHSIC's
    objective (2.3) with K~, which is (3.7).

    With ``intercept=True`` (DIFFRAC as published: ``f(x) = W^T x + b``, b unregularized) the
    minimum over ``b`` centres X and Pi, and

    .. math:: J(\Pi) = \tfrac1m\big[\operatorname{tr}(H \Pi A \Pi^\top)
              - \operatorname{tr}(\tilde K_c \Pi A \Pi^\top)\big],\qquad
              \operatorname{tr}(H\Pi A\Pi^\top) = \operatorname{tr}(\Pi A\Pi^\top)
              - \tfrac1m \mathbf 1^\top \Pi A \Pi^\top \mathbf 1,

    where ``K~_c = diffrac_kernel(X, kappa)`` (centred): beyond CLUHSIC's objective this
    rewards balanced clusters through ``1^T Pi A Pi^T 1 / m`` (``sum_k n_k^2 / m`` for A = I).

    Parameters
    ----------
    X : array-like of shape (m, d)
        Data, used as given when ``intercept=False`` (centre it to match
        :func:`diffrac_kernel`'s default).
    labels : array-like
        Labels of length m, or an m x c (relaxed) partition matrix Pi.
    kappa : float
        Ridge parameter kappa > 0.
    A : array-like of shape (c, c), optional
        Symmetric p.s.d. output kernel; default the identity with ``c = max(labels) + 1``.
    intercept : bool
        Fit an unregularized intercept.

    Returns
    -------
    float
        The minimum of (3.5)/(3.7) over W (and b).
    """
    X = check_data_matrix(X, "X")
    check_positive(kappa, "kappa")
    intercept = check_bool(intercept, "intercept")
    m = X.shape[0]
    if A is None:
        Pi = as_partition_matrix(labels, m, None, "labels")
        A = np.eye(Pi.shape[1])
    else:
        A = check_kernel(A, "A")
        Pi = as_partition_matrix(labels, m, A.shape[0], "labels")
    K = diffrac_kernel(X, kappa, center=intercept)
    L = Pi @ A @ Pi.T
    fit = np.trace(L)
    if intercept:
        fit -= L.sum() / m
    return float((fit - np.sum(K * L)) / m)


def diskmeans_kernel(K, lam: float) -> np.ndarray:
    r"""DisKmeans' transformed input kernel (Proposition 1).

    .. math:: \tilde K = I - (I + K/\lambda)^{-1} = K (K + \lambda I)^{-1}
              = U \operatorname{diag}\Big(\frac{\lambda_i}{\lambda_i + \lambda}\Big) U^\top

    for ``K = U diag(lambda_i) U^T`` p.s.d. (``K = X X^T`` in (3.12)).  K~ shares K's
    eigenvectors, so a centred K (``K 1 = 0``) gives a centred K~: K is not centred here, the
    caller centres it as for every CLUHSIC kernel.  See :func:`diskmeans_criterion` for the
    identity behind Proposition 1 and when it is exact.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric p.s.d. kernel (Gram) matrix.
    lam : float
        The regularization parameter lambda > 0 of (3.10).

    Returns
    -------
    K_tilde : ndarray of shape (m, m)
        Symmetric, eigenvalues in [0, 1).
    """
    rtol = rounding_rtol(K)
    K = check_kernel(K, "K")
    check_positive(lam, "lam")
    w, U = sla.eigh(K)
    check_psd_eigenvalues(w, "K", rtol)
    w = np.maximum(w, 0.0)
    Kt = (U * (w / (w + lam))) @ U.T
    return (Kt + Kt.T) / 2


def diskmeans_criterion(K, A, P, lam: float, n_components: int, *, rank_tol: float = 1e-10,
                        return_B: bool = False):
    r"""The DisKmeans criterion (3.12) for a fixed (normalized) partition P, maximized over B.

    .. math:: g_b(P) = \max_{B \in \mathbb R^{m\times b}} \operatorname{tr}\big[
              (B^\top (KK + \lambda K) B)^{-1} B^\top K P A P^\top K B\big]

    (K = X X^T; (3.12) prints ``P A P`` for ``P A P^T``).  Derivation: the part of B in K's
    null space changes neither matrix, so write ``K = U_r Lambda_r U_r^T`` (rank r) and
    ``B = U_r C``.  Then ``S = Lambda_r (Lambda_r + lambda I)`` (p.d.) and
    ``T = Lambda_r U_r^T P A P^T U_r Lambda_r`` (p.s.d.), and for ``b <= r`` the maximum of
    ``tr[(C^T S C)^{-1} C^T T C]`` is the sum of the b largest generalized eigenvalues of the
    pencil ``(T, S)`` (attained at C = their eigenvectors; ``scipy.linalg.eigh(T, S)``).

    Proposition 1, made exact: the sum of *all* generalized eigenvalues is

    .. math:: \operatorname{tr}(S^{-1}T) = \operatorname{tr}\big(U_r \Lambda_r(\Lambda_r+\lambda I)^{-1}
              U_r^\top P A P^\top\big) = \operatorname{tr}\big[(I - (I + K/\lambda)^{-1}) P A P^\top\big],

    and only ``rank(T) <= rank(K P)`` of them are nonzero.  Hence ``g_b(P)`` *equals* the
    CLUHSIC objective with :func:`diskmeans_kernel` whenever ``rank(K P A P^T K) <= b <= r``;
    for a centred K (``K 1 = 0``, and ``1`` lies in the range of P) ``rank(KP) <= c - 1``, so
    ``b = c - 1`` (or ``b = rank A`` if smaller) suffices.  For smaller b, ``g_b(P)`` is only
    a lower bound of it (the b largest of the eigenvalues), and the maximizing partitions
    may differ.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric p.s.d. kernel.
    A : array-like of shape (c, c)
        Symmetric output kernel.
    P : array-like
        Labels of length m (normalized partition matrix of (2.4) is built) or an m x c matrix.
    lam : float
        lambda > 0.
    n_components : int
        b, between 1 and rank(K).
    rank_tol : float
        Eigenvalues of K below ``rank_tol * max eigenvalue`` count as zero.
    return_B : bool
        Also return a maximizing ``B`` (m x b).

    Returns
    -------
    float, or (float, ndarray)
    """
    rtol = rounding_rtol(K)
    K = check_kernel(K, "K")
    A = check_kernel(A, "A")
    check_positive(lam, "lam")
    check_positive(rank_tol, "rank_tol")
    return_B = check_bool(return_B, "return_B")
    m = K.shape[0]
    P = as_partition_matrix(P, m, A.shape[0], "P", normalized=True)
    w, U = sla.eigh(K)
    check_psd_eigenvalues(w, "K", rtol)
    keep = w > rank_tol * max(w[-1], 1e-300)
    w, U = w[keep], U[:, keep]
    b = check_int_range(n_components, "n_components", 1, w.size)
    F = U.T @ P  # r x c
    T = (w[:, None] * (F @ A @ F.T)) * w[None, :]
    S = np.diag(w * (w + lam))
    mu, C = sla.eigh((T + T.T) / 2, S, subset_by_index=[w.size - b, w.size - 1])
    value = float(mu.sum())
    if return_B:
        return value, U @ C
    return value
