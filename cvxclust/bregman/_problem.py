r"""cvxpy statements of the Bregman-clustering relaxations and of the norm Omega of Theorem 3.
Builds problems; never solves them.

Each function returns a ``cvxpy.Problem``; the primary variable of :func:`conditional_jc_problem`
is named ``"X"`` (the :class:`~cvxclust.Relaxation` contract; the paper's M), those of the
matrix-fractional statements ``"T"``, ``"V"`` and ``"Z"`` (their relaxations say so).
:func:`omega_squared_problem`, :func:`omega_dual_problem` and :func:`omega_dual_squared_problem`
state Omega and its dual norm (:mod:`cvxclust.bregman._omega` computes them in closed form).

Equation numbers are those of H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman
Divergence Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.linalg as sla

from .._checks import check_choice, check_data_matrix, check_n_clusters, check_positive
from .divergences import (
    Divergence,
    GeneralizedKL,
    ItakuraSaito,
    Logistic,
    Mahalanobis,
    SquaredEuclidean,
    get_divergence,
)
from .sets import constraints_M1, constraints_M2, constraints_M3

__all__ = [
    "conditional_jc_problem",
    "conditional_problem",
    "cvxpy_conjugate",
    "cvxpy_dual_divergence",
    "discriminative_problem",
    "joint_problem",
    "lifted_constraints",
    "omega_dual_problem",
    "omega_dual_squared_problem",
    "omega_squared_problem",
]

_DOMAINS = ("M2", "M3")


def conditional_jc_problem(X, divergence, n_clusters: int) -> cp.Problem:
    r"""The relaxation (10) over M1 for a jointly convex divergence (Section 3.1)::

        minimize    D_F(X, M X)
        subject to  M in M1 = {M : 0 <= M <= I, tr(M) <= d, M_{i:} in Delta_t}

    ``D_F(X, M X) = sum_i D_F(X_{i:}, M_{i:} X)`` (rows = points); it is convex in M exactly
    when D_F is convex in its second argument, which :meth:`Divergence.cvxpy_divergence`
    requires (it raises ``ValueError`` otherwise).

    The variable ``M`` is a symmetric ``t x t`` cvxpy variable named ``"X"``; the constraints are
    those of :func:`~cvxclust.bregman.sets.constraints_M1`, in its order::

        [M >> 0,  I - M >> 0,  tr(M) <= d,  M 1 == 1,  M >= 0]

    Parameters
    ----------
    X : array_like, shape (t, n)
        The data, in the divergence's domain.
    divergence : str or Divergence
        A jointly convex divergence.
    n_clusters : int
        d, ``2 <= d <= t``.
    """
    div = get_divergence(divergence)
    X = div.check_data(X)
    t = X.shape[0]
    d = check_n_clusters(n_clusters, t)
    M = cp.Variable((t, t), symmetric=True, name="X")
    objective = div.cvxpy_divergence(X, M @ X)
    return cp.Problem(cp.Minimize(objective), constraints_M1(M, d))


def lifted_constraints(V, d: int, domain: str):
    """``[[M, V], [V^T, S]] >> 0`` with M in M2 or M3: minimizing ``tr(S)`` over (M, S) gives
    ``Omega^2(V)`` (the matrix-fractional form of (16), (29), (33) and of Theorem 3's norm).
    Returns ``M``, ``S`` and the constraints (constraint 0 the block, then the set's, in
    :mod:`~cvxclust.bregman.sets` order)."""
    t, n = V.shape
    M = cp.Variable((t, t), symmetric=True, name="M")
    S = cp.Variable((n, n), symmetric=True, name="S")
    block = cp.bmat([[M, V], [V.T, S]])
    constraints = [(block + block.T) / 2 >> 0]  # symmetric by construction; cvxpy needs to see it
    constraints += constraints_M2(M, d) if domain == "M2" else constraints_M3(M, d)
    return M, S, constraints


def cvxpy_dual_divergence(divergence: Divergence, X, T) -> cp.Expression:
    """``L(T) = D_{F*}(T, f(X)) = F*(T) + F(X) - <X, T>`` as a DCP expression."""
    return cvxpy_conjugate(divergence, T) + float(divergence.F(X)) - cp.sum(cp.multiply(X, T))


def cvxpy_conjugate(divergence: Divergence, T: cp.Expression) -> cp.Expression:
    r"""A DCP expression of :math:`F^*(T)` summed over all entries (rows for Mahalanobis).

    ==============  ====================================  ========================
    divergence      :math:`F^*(y)`                        cvxpy
    ==============  ====================================  ========================
    euclidean       :math:`y^2/2`                          ``sum_squares(T) / 2``
    mahalanobis     :math:`y^\top W^{-1} y / 2`            ``sum_squares(T L^{-T}) / 2``, W = L L'
    kl              :math:`e^y`                            ``sum(exp(T))``
    logistic        :math:`\log(1 + e^y)` (softplus)       ``sum(logistic(T))``
    itakura-saito   :math:`-1 - \log(-y)`, y < 0           ``sum(-1 - log(-T))``
    ==============  ====================================  ========================

    Raises
    ------
    ValueError
        For a :class:`Divergence` subclass without a known cvxpy form.
    """
    if isinstance(divergence, Mahalanobis):
        # y' W^{-1} y = ||L^{-1} y||^2 for each row y, i.e. ||T L^{-T}||_F^2 over the rows
        L = np.linalg.cholesky(divergence.W)
        L_inv_T = sla.solve_triangular(L, np.eye(divergence.n_features), lower=True).T
        return 0.5 * cp.sum_squares(T @ L_inv_T)
    if isinstance(divergence, SquaredEuclidean):
        return 0.5 * cp.sum_squares(T)
    if isinstance(divergence, GeneralizedKL):
        return cp.sum(cp.exp(T))
    if isinstance(divergence, Logistic):
        return cp.sum(cp.logistic(T))
    if isinstance(divergence, ItakuraSaito):
        return cp.sum(-1.0 - cp.log(-T))
    raise ValueError(f"divergence {divergence!r} has no cvxpy statement of its conjugate F*; the "
                     "scalable solver still applies")


def conditional_problem(X, divergence, n_clusters: int, alpha: float, *, domain: str = "M2") -> cp.Problem:
    r"""The matrix-fractional SDP statement of (16); builds, never solves.

    ::

        minimize    F*(T) + F(X) - <X, T> + alpha/2 tr(S)          (= L(T) + alpha/2 tr(S))
        subject to  [[M, T], [T^T, S]] >> 0                         (constraint 0)
                    M in M2  (M >> 0, I - M >> 0, tr M <= d, M 1 = 1; constraints 1-4)
                    or M in M3 (M >> 0, I - M >> 0, tr M <= d - 1; constraints 1-3)

    Its optimal value is that of (17); minimising over (M, S) for fixed T gives
    ``tr(S) = Omega^2(T)``.

    Parameters
    ----------
    X : array_like of shape (t, n)
        Data in the domain of F.
    divergence : str or Divergence
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha : float
        Positive regularisation weight of (14).
    domain : {"M2", "M3"}, default="M2"

    Returns
    -------
    cvxpy.Problem
        Variables ``"T"`` (t x n, the primary variable), ``"M"`` (t x t symmetric) and
        ``"S"`` (n x n symmetric).
    """
    div = get_divergence(divergence)
    X = div.check_data(X)
    t, n = X.shape
    d = check_n_clusters(n_clusters, t)
    check_positive(alpha, "alpha")
    check_choice(domain, "domain", _DOMAINS)
    T = cp.Variable((t, n), name="T")
    _, S, constraints = lifted_constraints(T, d, domain)
    loss = cvxpy_dual_divergence(div, X, T)
    return cp.Problem(cp.Minimize(loss + 0.5 * alpha * cp.trace(S)), constraints)


def discriminative_problem(X, n_clusters: int, alpha: float, *, domain: str = "M2") -> cp.Problem:
    r"""The matrix-fractional statement of (28)/(29); builds, never solves.

    ::

        minimize    alpha/2 tr(S) + 1/t sum_i [ log_sum_exp(Z_i:) - Z_ii ],   Z = X V^T / t + 1 tau^T
        subject to  [[M, V], [V^T, S]] >> 0                                   (constraint 0)
                    M in M2 (constraints 1-4) or M in M3 (constraints 1-3)

    Minimising over (M, S) for fixed V gives ``tr(S) = Omega^2(V)``, so the optimal value is that
    of (29).

    Parameters
    ----------
    X : array_like of shape (t, n)
        Features (any real values).
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha : float
        Positive weight of :math:`\tfrac12\Omega^2(V)` (the paper's :math:`\gamma`).
    domain : {"M2", "M3"}, default="M2"

    Returns
    -------
    cvxpy.Problem
        Variables ``"V"`` (t x n, the primary variable), ``"tau"`` (t), ``"M"`` (t x t) and
        ``"S"`` (n x n).
    """
    X = check_data_matrix(X, "X")
    t, n = X.shape
    d = check_n_clusters(n_clusters, t)
    check_positive(alpha, "alpha")
    check_choice(domain, "domain", _DOMAINS)
    V = cp.Variable((t, n), name="V")
    tau = cp.Variable(t, name="tau")
    _, S, constraints = lifted_constraints(V, d, domain)
    Z = X @ V.T / t + np.ones((t, 1)) @ cp.reshape(tau, (1, t), order="C")
    loss = (cp.sum(cp.log_sum_exp(Z, axis=1)) - cp.trace(Z)) / t
    return cp.Problem(cp.Minimize(0.5 * alpha * cp.trace(S) + loss), constraints)


def joint_problem(X, divergence, n_clusters: int, alpha: float, beta: float, *, domain: str = "M2",
                  W=None) -> cp.Problem:
    r"""The matrix-fractional statement of (32)/(33); builds, never solves.

    ::

        minimize    log_sum_exp(u / t) - 1'u / t + (F*(T) + F(X) - <X, T>) / t + tr(S) / 2
        subject to  [[M, [sqrt(beta) u, sqrt(alpha) T]], [., S]] >> 0          (constraint 0)
                    M in M2 (constraints 1-4) or M in M3 (constraints 1-3)
        with        [u, T] = Z[:, 0], Z[:, 1:]

    Minimising over (M, S) for fixed Z gives ``tr(S) = Omega^2([sqrt(beta) u, sqrt(alpha) T])``.

    Parameters
    ----------
    X : array_like of shape (t, n)
        Data in the domain of F.
    divergence : str or Divergence
        Any divergence with a cvxpy conjugate
        (:func:`~cvxclust.bregman._conditional.cvxpy_conjugate`).
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha, beta : float
        Positive weights of the value regularisers of T and u.
    domain : {"M2", "M3"}, default="M2"
    W : array_like, optional
        The weight matrix of the ``"mahalanobis"`` divergence.

    Returns
    -------
    cvxpy.Problem
        Variables ``"Z"`` (t x (1 + n), the primary variable ``[u, T]``), ``"M"``, ``"S"``.
    """
    div = get_divergence(divergence, W=W)
    X = div.check_data(X)
    t, n = X.shape
    d = check_n_clusters(n_clusters, t)
    check_positive(alpha, "alpha")
    check_positive(beta, "beta")
    check_choice(domain, "domain", _DOMAINS)
    Z = cp.Variable((t, n + 1), name="Z")
    u, T = Z[:, 0], Z[:, 1:]
    _, S, constraints = lifted_constraints(Z @ np.diag(np.r_[np.sqrt(beta), np.full(n, np.sqrt(alpha))]), d, domain)
    prior = cp.log_sum_exp(u / t) - cp.sum(u) / t
    likelihood = cvxpy_dual_divergence(div, X, T) / t
    return cp.Problem(cp.Minimize(prior + likelihood + 0.5 * cp.trace(S)), constraints)


# -- the norm of Theorem 3 (Omega; values in cvxclust.bregman._omega) ----------------------------


def _check_norm_argument(A, name: str, n_clusters, domain: str) -> tuple[np.ndarray, int]:
    A = check_data_matrix(A, name, min_samples=1)
    d = check_n_clusters(n_clusters, A.shape[0])
    check_choice(domain, "domain", ("M3", "M2"))
    return A, d


def omega_squared_problem(T, n_clusters: int, *, domain: str = "M3") -> cp.Problem:
    r"""The matrix-fractional SDP whose optimal value is :math:`\Omega^2(T)`; builds, never solves.

    ::

        minimize    tr(S)
        subject to  [[M, T], [T^T, S]] >> 0     (constraint 0: S >> T^T M^+ T, Im T in Im M)
                    M >> 0                      (constraint 1)
                    I - M >> 0                  (constraint 2)
                    tr(M) <= d - 1              (constraint 3)           domain="M3", (12)
                    tr(M) <= d,  M 1 = 1        (constraints 3, 4)        domain="M2"

    Parameters
    ----------
    T : array_like of shape (t, n)
        Becomes the ``cp.Parameter`` named ``"T"`` (set ``.value`` to re-solve).
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"

    Returns
    -------
    cvxpy.Problem
        Variables ``"M"`` (t x t) and ``"S"`` (n x n); at the optimum M is a minimiser of (17).
    """
    T, d = _check_norm_argument(T, "T", n_clusters, domain)
    Tp = cp.Parameter(T.shape, name="T", value=T)
    _, S, constraints = lifted_constraints(Tp, d, domain)
    return cp.Problem(cp.Minimize(cp.trace(S)), constraints)


def omega_dual_problem(R, n_clusters: int, *, domain: str = "M3") -> cp.Problem:
    r"""The dual norm by its definition, :math:`\Omega_*(R) = \max_{\Omega(T) \le 1} \langle R, T\rangle`,
    over the lifted unit ball of Omega; builds, never solves.

    ::

        maximize    <R, T>
        subject to  [[M, T], [T^T, S]] >> 0,  tr(S) <= 1,  M in M3 (or M2)

    Parameters
    ----------
    R : array_like of shape (t, n)
        Becomes the ``cp.Parameter`` named ``"R"``.
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"

    Returns
    -------
    cvxpy.Problem
        Variables ``"T"``, ``"M"``, ``"S"``; at the optimum T is a subgradient of Omega_* at R.
    """
    R, d = _check_norm_argument(R, "R", n_clusters, domain)
    Rp = cp.Parameter(R.shape, name="R", value=R)
    T = cp.Variable(R.shape, name="T")
    _, S, constraints = lifted_constraints(T, d, domain)
    constraints.append(cp.trace(S) <= 1)
    return cp.Problem(cp.Maximize(cp.sum(cp.multiply(Rp, T))), constraints)


def omega_dual_squared_problem(R, n_clusters: int, *, domain: str = "M3") -> cp.Problem:
    r"""The conjugate form :math:`\Omega_*^2(R) = \max_{M \in \mathcal{M}_3} \mathrm{tr}(R^\top M R)`,
    a linear SDP; builds, never solves.

    ::

        maximize    <M, R R^T>
        subject to  M >> 0,  I - M >> 0,  tr(M) <= d - 1     (M2: tr(M) <= d, M 1 = 1)

    The optimum is the sum of the top ``d - 1`` eigenvalues of :math:`RR^\top` (Ky Fan), and an
    optimal M projects onto the span of the top ``d - 1`` left singular vectors of R.

    Parameters
    ----------
    R : array_like of shape (t, n)
        Enters through the symmetric ``cp.Parameter`` named ``"RRt"`` holding ``R @ R.T``
        (``tr(R^T M R)`` with R a parameter would not be DPP).
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"

    Returns
    -------
    cvxpy.Problem
        Variable ``"M"`` (t x t).
    """
    R, d = _check_norm_argument(R, "R", n_clusters, domain)
    t = R.shape[0]
    gram = R @ R.T
    RRt = cp.Parameter((t, t), symmetric=True, name="RRt", value=(gram + gram.T) / 2)
    M = cp.Variable((t, t), symmetric=True, name="M")
    return cp.Problem(cp.Maximize(cp.trace(M @ RRt)),
                      (constraints_M3(M, d) if domain == "M3" else constraints_M2(M, d)))
