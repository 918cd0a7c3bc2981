r"""The pieces of the low-rank SDP (5.30) computed on the blocks of the factor Y.

``Q = Y Y^T`` with ``Y`` in :math:`\mathbb{R}^{mc \times r}`, ``Y >= 0`` (5.26); block ``i`` of
``Y`` (rows ``i m .. (i+1) m``) is the ``m x r`` matrix ``Y_i`` of cluster ``i`` (``vec(P)`` stacks
the columns of ``P``).  Every quantity is computed from the blocks, never from an ``mc x mc``
matrix (Section 5.2.2):

* ``f(Y) = tr(Y^T (A kron K) Y) = sum_ij A_ij <Y_i, K Y_j>``: one product ``K [Y_1 .. Y_c]``
  (``m x cr``), then the ``c x c`` mixing by ``A``; ``grad_{Y_i} f = 2 sum_j A_ij K Y_j``;
* ``g(Y) = tr(Y^T 1 1^T Y) = ||s||^2`` with ``s = Y^T 1``; ``grad g = 2 * 1 s^T``;
* (5.27) ``odiag(Y Y^T)_ij = <Y_i, Y_j> = delta_ij`` for ``i <= j`` (the ``c(c+1)/2``
  symmetric constraints of footnote 3);
* (5.29) ``bdiag(Y Y^T) 1 = sum_i Y_i (Y_i^T 1) = 1`` (``m`` constraints).

:class:`AugmentedLagrangian` evaluates these, the constraint Jacobian products and the
augmented Lagrangian; :func:`restore_feasibility` projects a factor onto the constraints on its
face.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator, cg

from .._checks import as_float_array, check_int_range, check_kernel

__all__ = ["AugmentedLagrangian", "check_factor", "factor_residuals", "lowrank_objective", "lowrank_residuals",
           "restore_feasibility"]


class AugmentedLagrangian:
    """Objective, constraints and augmented Lagrangian of (5.30) on the blocks of Y.

    ``Y`` is handled as an array of shape ``(c, m, r)`` (``Y.reshape(c, m, r)`` of the
    ``mc x r`` factor: block ``i`` is ``[i]``).
    """

    def __init__(self, K: np.ndarray, A: np.ndarray, rank: int, bias: float):
        self.K, self.A, self.bias = K, A, float(bias)
        self.m, self.c, self.r = K.shape[0], A.shape[0], rank
        # bound on ||A kron K + bias 1 1^T||_2 (infinity norms of symmetric matrices)
        self.scale = max(np.abs(A).sum(axis=1).max() * np.abs(K).sum(axis=1).max() + self.bias * self.m * self.c,
                         1e-12)
        self.upper = np.triu_indices(self.c)
        self.n_odiag = len(self.upper[0])

    # -- pieces --------------------------------------------------------------------------
    def objective_terms(self, Y3: np.ndarray):
        """``f``, ``grad f``, ``g``, ``grad g`` (``grad g`` as the r-vector ``2 s``)."""
        c, m, r = Y3.shape
        KY = (self.K @ Y3.transpose(1, 0, 2).reshape(m, c * r)).reshape(m, c, r).transpose(1, 0, 2)
        AKY = np.tensordot(self.A, KY, axes=(1, 0))  # block i: sum_j A_ij K Y_j
        f = float(np.vdot(Y3, AKY))
        s = Y3.sum(axis=(0, 1))
        return f, 2.0 * AKY, float(s @ s), 2.0 * s

    def constraints(self, Y3: np.ndarray):
        """``h(Y) - b`` split into odiag (``c(c+1)/2``, upper triangle) and bdiag (``m``), and
        the block sums ``t_i = Y_i^T 1`` reused by the gradient."""
        c = Y3.shape[0]
        Y2 = Y3.reshape(c, -1)
        G = Y2 @ Y2.T - np.eye(c)
        t = Y3.sum(axis=1)  # (c, r)
        u = np.einsum("imr,ir->m", Y3, t) - 1.0
        return G[self.upper], u, t

    def constraint_vjp(self, Y3: np.ndarray, w_odiag: np.ndarray, w_bdiag: np.ndarray, t=None) -> np.ndarray:
        """``sum_k w_k grad h_k(Y)`` as a ``(c, m, r)`` array.

        odiag: ``grad <Y_i, Y_j> = (Y_j at block i) + (Y_i at block j)``, so the sum is
        ``2 Omega Y`` (blockwise) with Omega symmetric, ``Omega_ii = w_ii``,
        ``Omega_ij = w_ij / 2``.  bdiag: ``grad_{Y_i} v^T Y_i Y_i^T 1 = v t_i^T + 1 (Y_i^T v)^T``.
        """
        c = Y3.shape[0]
        if t is None:
            t = Y3.sum(axis=1)
        Omega = np.zeros((c, c))
        Omega[self.upper] = w_odiag
        Omega = (Omega + Omega.T) / 2  # off-diagonals halved, diagonal kept
        grad = 2.0 * np.tensordot(Omega, Y3, axes=(1, 0))
        grad += w_bdiag[None, :, None] * t[:, None, :]
        grad += np.einsum("imr,m->ir", Y3, w_bdiag)[:, None, :]
        return grad

    def constraint_jvp(self, Y3: np.ndarray, D: np.ndarray, t: np.ndarray):
        """The directional derivative ``h'(Y)[D]`` (odiag upper triangle, bdiag), ``t = Y^T 1`` blockwise:
        ``d<Y_i, Y_j> = <D_i, Y_j> + <Y_i, D_j>`` and ``d(Y_i t_i) = D_i t_i + Y_i (D_i^T 1)``."""
        c = Y3.shape[0]
        M = Y3.reshape(c, -1) @ D.reshape(c, -1).T
        return (M + M.T)[self.upper], np.einsum("imr,ir->m", D, t) + np.einsum("imr,ir->m", Y3, D.sum(axis=1))

    def value_and_grad(self, Y3: np.ndarray, y_odiag, y_bdiag, sigma: float):
        """``L_sigma(Y; y)`` and its gradient (same shape as ``Y3``)."""
        f, grad_f, g, grad_g = self.objective_terms(Y3)
        h_o, h_b, t = self.constraints(Y3)
        w_o, w_b = sigma * h_o - y_odiag, sigma * h_b - y_bdiag
        value = (-(f + self.bias * g) / self.scale - y_odiag @ h_o - y_bdiag @ h_b
                 + 0.5 * sigma * (h_o @ h_o + h_b @ h_b))
        grad = self.constraint_vjp(Y3, w_o, w_b, t)
        grad -= grad_f / self.scale
        grad -= (self.bias / self.scale) * grad_g[None, None, :]
        return value, grad


def check_factor(Y, m: int, c: int, name: str = "Y") -> np.ndarray:
    """``Y`` as a finite real float ``(m c, r)`` array (a vector is taken as ``r = 1``), or a
    ValueError naming ``name``."""
    Y = as_float_array(Y, name, "matrix")
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != m * c or Y.shape[1] < 1:
        raise ValueError(f"{name} must have shape (m * c, r) = ({m * c}, r), got {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return Y


def lowrank_objective(K, A, Y) -> float:
    """``f(Y) = tr(Y^T (A kron K) Y) = sum_ij A_ij <Y_i, K Y_j>``, the objective of (5.23) at
    ``Q = Y Y^T``, computed blockwise."""
    K = check_kernel(K, "K")
    A = check_kernel(A, "A")
    m, c = K.shape[0], A.shape[0]
    Y = check_factor(Y, m, c)
    return AugmentedLagrangian(K, A, Y.shape[1], 0.0).objective_terms(Y.reshape(c, m, -1))[0]


def lowrank_residuals(Y, m: int, c: int) -> dict[str, float]:
    """Feasibility violations of ``Q = Y Y^T`` for (5.23), computed blockwise.

    Returns ``{"odiag": max_{i<=j} |<Y_i, Y_j> - delta_ij|, "bdiag": max_l |(sum_i Y_i Y_i^T 1)_l - 1|,
    "nonnegativity": max(-min(Y), 0)}`` (absolute: the right-hand sides are 0 and 1).
    """
    m = check_int_range(m, "m", 1)
    c = check_int_range(c, "c", 1)
    Y = check_factor(Y, m, c)
    return factor_residuals(Y.reshape(c, m, -1))


def factor_residuals(Y3: np.ndarray) -> dict[str, float]:
    """:func:`lowrank_residuals` of the unchecked ``(c, m, r)`` array of blocks."""
    c = Y3.shape[0]
    Y2 = Y3.reshape(c, -1)
    G = Y2 @ Y2.T - np.eye(c)
    u = np.einsum("imr,ir->m", Y3, Y3.sum(axis=1)) - 1.0
    return {
        "odiag": float(np.abs(G[np.triu_indices(c)]).max()),
        "bdiag": float(np.abs(u).max()),
        "nonnegativity": float(max(-Y3.min(), 0.0)),
    }


def restore_feasibility(ev: AugmentedLagrangian, Y3: np.ndarray, tol: float, max_steps: int = 30):
    r"""Feasibility restoration on one face of (5.30): the nearest-step Gauss-Newton projection onto
    ``h(Y) = b`` with the support of ``Y`` fixed.

    With ``Y >= 0``, ``<Y_i, Y_j> = 0`` (i != j) holds iff no entry ``(l, a)`` is positive in two
    blocks: a complementarity constraint, at which the constraint gradients are degenerate and
    the augmented Lagrangian converges slowly: the last digits of feasibility take more outer
    iterations, at ever larger penalties, than the first ones, while the objective no longer
    moves.  Giving each entry to the block where it is largest (zeroing it elsewhere) makes
    those constraints hold exactly; on that face the rest, ``||Y_i||^2 = 1`` and (5.29), have
    well-conditioned gradients, and Gauss-Newton steps ``D = J^T lambda`` with
    ``J J^T lambda = -(h - b)`` (J restricted to the positive entries, solved by conjugate
    gradients with the products of :meth:`constraint_vjp` and :meth:`constraint_jvp`) converge
    to ``tol`` in a few steps, each shortened so that no entry loses more than half its value
    (nonnegativity).  Known-label zeros stay zero.

    Returns the restored ``Y3`` and its infeasibility ``||h - b||_inf`` (check it against ``tol``).
    """
    c, m, r = Y3.shape
    owner = Y3.argmax(axis=0)
    Y3 = np.where(np.arange(c)[:, None, None] == owner[None], Y3, 0.0)
    n_odiag = ev.n_odiag
    size = n_odiag + m
    infeasibility = np.inf
    for step in range(max_steps + 1):
        h_o, h_b, t = ev.constraints(Y3)
        infeasibility = float(max(np.abs(h_o).max(), np.abs(h_b).max()))
        if infeasibility <= tol or step == max_steps:
            break
        positive = Y3 > 0

        def normal_product(lam, Y3=Y3, t=t, positive=positive):  # J J^T lambda on the positive entries
            D = positive * ev.constraint_vjp(Y3, lam[:n_odiag], lam[n_odiag:], t)
            return np.concatenate(ev.constraint_jvp(Y3, D, t))

        lam, _ = cg(LinearOperator((size, size), matvec=normal_product), -np.concatenate([h_o, h_b]),
                    rtol=1e-8, maxiter=10 * size)
        D = positive * ev.constraint_vjp(Y3, lam[:n_odiag], lam[n_odiag:], t)
        shrink = float((-D / np.where(positive, Y3, np.inf)).max())
        Y3 = np.maximum(Y3 + min(1.0, 0.5 / max(shrink, 1e-300)) * D, 0.0)
    return Y3, infeasibility
