"""The cvxpy statements of the CLUHSICAL family (builds problems, never solves them)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._checks import check_data_matrix, check_labels, check_positive
from ._krr import check_positive_loss, pairs

__all__ = ["krr_primal_problem"]


def krr_primal_problem(Phi, Lambda, labels, loss, C) -> cp.Problem:
    r"""The cvxpy statement of KRR for structured outputs with slack rescaling (3); builds it,
    never solves it.

    ::

        minimize    1/2 ||w||^2 + (C / m) sum_p zeta_p^2
        subject to  1 - <w, dphi_p> - zeta_p / sqrt(Delta_p) == 0     (constraint 0, one per pair p)

    for the pairs ``p = (i, y != y_i)`` of :func:`~cvxclust.cluhsical.constraint_pairs`, with the tensor-product
    joint feature map (8) written out explicitly:
    ``dphi_p = kron(Phi[i], Lambda[y_i] - Lambda[y])`` (``w`` has ``d_x * d_y`` entries) and
    ``Delta_p = loss[y_i, y]``.  Its optimal value equals (7) for ``K = Phi Phi^T``,
    ``A = Lambda Lambda^T`` (Proposition 1).  The dual value of constraint 0 (cvxpy's sign
    convention, for this orientation) is the maximizer :math:`\alpha^* = (J + S)^{-1} 1` of the
    dual (4), and :math:`w^* = \sum_p \alpha^*_p\, \delta\varphi_p`.  Meant for tiny instances.

    Parameters
    ----------
    Phi : array-like of shape (m, d_x)
        Input features, row ``i`` = :math:`\phi(x_i)`.
    Lambda : array-like of shape (c, d_y)
        Output features, row ``y`` = :math:`\lambda(y)`; ``c >= 2``.
    labels : array-like of shape (m,), int
        The outputs ``y_i``.
    loss : array-like of shape (c, c)
        The loss, positive off the diagonal (see :func:`~cvxclust.cluhsical.joint_kernel_matrices`).
    C : float > 0
        Regularization parameter.

    Returns
    -------
    cvxpy.Problem
        Variables named ``"w"`` (``d_x * d_y``) and ``"zeta"`` (``m (c - 1)``, pair order).

    Raises
    ------
    ValueError
        Naming ``Phi``, ``Lambda``, ``labels``, ``loss`` or ``C``.
    """
    Phi = check_data_matrix(Phi, "Phi", min_samples=1)
    Lambda = check_data_matrix(Lambda, "Lambda", min_samples=2)
    m, c = Phi.shape[0], Lambda.shape[0]
    loss = check_positive_loss(loss, c, positive_offdiag=True)
    labels = check_labels(labels, m, c)
    check_positive(C, "C")
    samples, outputs = pairs(labels, c)
    diff = Lambda[labels[samples]] - Lambda[outputs]
    # rows kron(phi_i, lambda(y_i) - lambda(y)), the delta-phi of (3) under (8)
    with np.errstate(over="ignore", invalid="ignore"):
        D = (Phi[samples][:, :, None] * diff[:, None, :]).reshape(samples.shape[0], -1)
    if not np.all(np.isfinite(D)):
        raise ValueError("the joint features of Phi and Lambda overflow float64: rescale Phi or Lambda")
    w = cp.Variable(D.shape[1], name="w")
    zeta = cp.Variable(D.shape[0], name="zeta")
    inv_sqrt_loss = 1.0 / np.sqrt(loss[labels[samples], outputs])
    objective = cp.Minimize(0.5 * cp.sum_squares(w) + (float(C) / m) * cp.sum_squares(zeta))
    # written as "1 - ... == 0" so that cvxpy's multiplier has the sign of the paper's alpha
    margin = np.ones(D.shape[0]) - D @ w - cp.multiply(inv_sqrt_loss, zeta)
    return cp.Problem(objective, [margin == 0])
