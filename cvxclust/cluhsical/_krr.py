r"""Proposition 1 of CLUHSICAL (Section III-A), in checkable form.

Kernel ridge regression for structured outputs with slack rescaling (3),

.. math::

    \min_{w, \zeta}\ \tfrac12 \|w\|^2 + \frac{C}{m} \sum_{i,\, y \ne y_i} \zeta_{iy}^2
    \quad\text{s.t.}\quad \langle w, \delta\varphi_i(y)\rangle
    = 1 - \frac{\zeta_{iy}}{\sqrt{\Delta(y_i, y)}},
    \qquad \delta\varphi_i(y) = \varphi(x_i, y_i) - \varphi(x_i, y),

has one equality constraint per pair ``(i, y)``, ``y != y_i`` (``n = m (c - 1)`` pairs, ordered
sample-major with ``y`` increasing: :func:`constraint_pairs`).  Its dual (4) is the unconstrained
QP :math:`\max_\alpha \alpha^\top 1 - \tfrac12 \alpha^\top (J + S) \alpha` with

* ``J`` (5): :math:`J_{iy, j\bar y} = \langle \delta\varphi_i(y), \delta\varphi_j(\bar y)\rangle`;
  with the tensor-product joint feature map (8) :math:`\varphi(x, y) = \phi(x)\otimes\lambda(y)`
  it is :math:`K_{ij}\,(A_{y_i y_j} - A_{y_i \bar y} - A_{y y_j} + A_{y \bar y})`
  (:func:`joint_kernel_matrices`);
* ``S`` (6): diagonal, :math:`S_{iy} = m / (2 C \Delta(y_i, y))`,

so that :math:`\alpha^* = (J + S)^{-1} 1`, :math:`w^* = \sum \alpha^*_{iy}\,\delta\varphi_i(y)`,
and the optimal value is (7) :math:`\tfrac12 1^\top (J + S)^{-1} 1` (Proposition 1,
:func:`krr_dual_value`, checked against the cvxpy statement :func:`~cvxclust.cluhsical.krr_primal_problem`).

Reference: W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into Discriminative
Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .._checks import check_int_range, check_kernel, check_labels, check_positive
from ..structures import check_loss_matrix, check_output_kernel
from ._overflow import finite_result

__all__ = ["constraint_pairs", "joint_kernel_matrices", "krr_dual_value"]

# eigenvalues of a kernel above -_PSD_RTOL * max|eigenvalue| count as >= 0 (a centred rbf kernel
# has eigenvalues of about -1e-16 where it is singular; check_kernel widens it for float32 input)
_PSD_RTOL = 1e-9


def check_positive_loss(loss, c: int, *, positive_offdiag: bool) -> np.ndarray:
    """``loss`` checked as a c x c loss, and (``positive_offdiag``) positive off the diagonal."""
    loss = check_loss_matrix(loss, c)
    if positive_offdiag and np.any(loss[~np.eye(c, dtype=bool)] <= 0):
        raise ValueError(
            "loss must be positive off the diagonal: slack rescaling (3) divides the slack by "
            "sqrt(Delta(y_i, y)) and (6) sets S = m / (2 C Delta), infinite where Delta = 0"
        )
    return loss


def check_krr_problem(K, A, labels, loss, C, *, positive_offdiag: bool = True):
    """Validated ``(K, A, labels, loss, C)`` of (3)-(7) and (11)."""
    K = check_kernel(K, "K", psd=True, rtol=_PSD_RTOL)
    A = check_output_kernel(A)
    c = A.shape[0]
    if c < 2:
        raise ValueError(f"A must be c x c with c >= 2 clusters, got shape {A.shape}")
    loss = check_positive_loss(loss, c, positive_offdiag=positive_offdiag)
    labels = check_labels(labels, K.shape[0], c)
    check_positive(C, "C")
    return K, A, labels, loss, float(C)


def constraint_pairs(labels, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The pairs ``(i, y)``, ``y != y_i``, that index the constraints of (3) and the rows of J, S.

    Parameters
    ----------
    labels : array-like of shape (m,), int
        Cluster of each sample, in ``0 .. n_clusters - 1``.
    n_clusters : int >= 2
        Number ``c`` of clusters (outputs).

    Returns
    -------
    samples, outputs : ndarray of shape (m (c - 1),), int
        Pair ``p`` is ``(samples[p], outputs[p])``; sample-major, ``y`` increasing within a
        sample.  Every function of this module uses this order.
    """
    n_clusters = check_int_range(n_clusters, "n_clusters", 2)
    return pairs(check_labels(labels, n_clusters=n_clusters), n_clusters)


def pairs(labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`constraint_pairs` for checked labels."""
    grid = np.broadcast_to(np.arange(n_clusters), (labels.shape[0], n_clusters))
    mask = grid != labels[:, None]
    samples = np.repeat(np.arange(labels.shape[0]), n_clusters - 1)
    return samples, grid[mask]  # boolean indexing is row-major: sample-major, y increasing


@finite_result("K, A, loss and C")
def joint_kernel_matrices(K, A, labels, loss, C) -> tuple[np.ndarray, np.ndarray]:
    r"""The matrices ``J`` (5) and ``S`` (6) of the dual (4) of KRR (3), for the tensor-product
    joint feature map (8).

    With :math:`\varphi(x, y) = \phi(x)\otimes\lambda(y)`, :math:`K = [\langle\phi(x_i),
    \phi(x_j)\rangle]` and :math:`A = [\langle\lambda(y), \lambda(\bar y)\rangle]`,

    .. math::

        J_{iy,\, j\bar y} = \langle \phi(x_i)\otimes(\lambda(y_i) - \lambda(y)),\,
        \phi(x_j)\otimes(\lambda(y_j) - \lambda(\bar y))\rangle
        = K_{ij}\,\bigl(A_{y_i y_j} - A_{y_i \bar y} - A_{y y_j} + A_{y \bar y}\bigr)
        \quad (5), (8),

    .. math:: S = \mathrm{diag}\Bigl(\frac{m}{2 C\, \Delta(y_i, y)}\Bigr) \quad (6),

    for the pairs ``(i, y != y_i)``, ``(j, ybar != y_j)`` of :func:`constraint_pairs`.  ``J`` is
    built from ``K`` and ``A`` by indexing (never from explicit features): it is the Hadamard
    product of ``K`` expanded to the pairs and the Gram matrix of the output differences.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Input kernel (symmetric p.s.d.).
    A : array-like of shape (c, c)
        Output kernel (symmetric p.s.d.), ``c >= 2``.
    labels : array-like of shape (m,), int
        The outputs ``y_i`` in ``0 .. c - 1``.
    loss : array-like of shape (c, c)
        The loss :math:`\Delta(y, \bar y)` (row = true output): nonnegative, zero diagonal
        (``cvxclust.structures.check_loss_matrix``), and **positive off the diagonal**: slack
        rescaling divides the slack by :math:`\sqrt{\Delta}`, so a zero loss for a wrong output
        makes ``S`` infinite (the constraint would be a hard margin) and is refused.
    C : float > 0
        Regularization parameter of (3).

    Returns
    -------
    J : ndarray of shape (m (c - 1), m (c - 1))
        Symmetric p.s.d.
    S : ndarray of shape (m (c - 1),)
        The diagonal of ``S`` (a vector: ``S`` is diagonal and may be large).

    Raises
    ------
    ValueError
        Naming ``K``, ``A``, ``labels``, ``loss`` or ``C``.
    """
    K, A, labels, loss, C = check_krr_problem(K, A, labels, loss, C)
    samples, outputs = pairs(labels, A.shape[0])
    truth = labels[samples]
    # G[p, :] = <lambda(y_i) - lambda(y), lambda(.)> for pair p = (i, y)
    G = A[truth] - A[outputs]
    J = G[:, truth]
    J -= G[:, outputs]
    J *= K[np.ix_(samples, samples)]
    J += J.T  # exact symmetry (the two subtractions round differently for J[p, q] and J[q, p])
    J *= 0.5
    S = K.shape[0] / (2.0 * C * loss[truth, outputs])
    return J, S


def solve_ones(J: np.ndarray, S: np.ndarray, gamma: float,
               culprit: str = "K and A must be positive semidefinite kernels") -> np.ndarray:
    r""":math:`(\gamma J + S)^{-1} 1` by a Cholesky factorization; ``culprit`` completes the
    error message where :math:`\gamma J + S` is not positive definite."""
    M = gamma * J
    M[np.diag_indices_from(M)] += S
    try:
        factor = sla.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise ValueError(f"gamma J + S is not positive definite: {culprit}") from None
    return sla.cho_solve(factor, np.ones(S.shape[0]), check_finite=False)


@finite_result("K, A, loss, C and gamma")
def krr_dual_value(K, A, labels, loss, C, gamma: float = 1.0) -> float:
    r"""The optimal value (7) of KRR (3) and its dual (4): :math:`\tfrac12\, 1^\top
    (\gamma J + S)^{-1} 1`.

    Proposition 1: the dual of (3) is :math:`\max_\alpha \alpha^\top 1 - \tfrac12 \alpha^\top
    (J + S)\alpha` (4), maximized by :math:`\alpha^* = (J + S)^{-1} 1`; strong duality gives (7).
    ``gamma`` scales the joint kernel as in Proposition 2 (``J -> gamma J``); ``gamma = 1`` is
    (7) itself.  Solved by a Cholesky factorization of :math:`\gamma J + S`.

    Parameters
    ----------
    K, A, labels, loss, C
        As in :func:`joint_kernel_matrices`.
    gamma : float > 0, default 1
        Scale of the joint kernel.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming the offending argument.
    """
    check_positive(gamma, "gamma")
    J, S = joint_kernel_matrices(K, A, labels, loss, C)
    return 0.5 * float(np.sum(solve_ones(J, S, float(gamma))))
