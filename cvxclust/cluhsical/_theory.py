r"""The theory of CLUHSICAL (Zhong, Pan, Kwok & Tsang, Section III), in checkable form.

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
:func:`krr_dual_value`, checked against the cvxpy statement :func:`~cvxclust.cluhsical._problem.krr_primal_problem`).

Proposition 2 scales the joint kernel by :math:`\gamma` and keeps the first-order term of the
Neumann series of :math:`(\gamma J + S)^{-1}` (20):
:math:`t_1 = 1^\top(\gamma J + S)^{-1} 1 \approx t_2 = 1^\top S^{-1} 1
- \gamma\, 1^\top S^{-1} J S^{-1} 1`.  Lemmas 4 and 5 turn :math:`-t_2` into the objective of
(11), :math:`\tilde C \operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top) - \frac{C}{m}\|\tilde\Pi\|_1`
(:func:`proposition2_objective`), with the loss-augmented partition matrix
:math:`\tilde\Pi` of (12).  Section III-C relates the objectives to the weighted k-means
objective (14) (:func:`lemma_objective`, :func:`lemma_partition_matrix`).

**The size of the approximation error** (derived here, not in the paper).  Write
:math:`v = S^{-1/2} 1` and :math:`M = \gamma S^{-1/2} J S^{-1/2}` (p.s.d. when ``K`` and ``A``
are), with eigenpairs :math:`(\mu_k, u_k)`.  Then
:math:`t_1 = \sum_k (u_k^\top v)^2 / (1 + \mu_k)` and
:math:`t_2 = \sum_k (u_k^\top v)^2 (1 - \mu_k)`, so

.. math::

    t_1 - t_2 = \sum_k (u_k^\top v)^2 \frac{\mu_k^2}{1 + \mu_k} \;\ge\; 0, \qquad
    \frac{t_1 - t_2}{t_1} \le \rho^2, \quad
    \rho = \rho(\gamma S^{-1} J) \le \gamma \|S^{-1}\|_2 \|J\|_2 .

Because :math:`S^{-1} = \tfrac{2C}{m}\,\mathrm{diag}(\Delta)` the relative error depends on
``gamma`` and ``C`` only through :math:`\varepsilon = 2\gamma C / m`, and

.. math::

    \frac{t_1 - t_2}{t_1} = \varepsilon^2\,
    \frac{1^\top D J D J D 1}{1^\top D 1} + O(\varepsilon^3), \qquad D = \mathrm{diag}(\Delta),

second order in :math:`\gamma C`: 10x smaller ``C`` (or ``gamma``) gives about 100x smaller
error, which is the pattern of the paper's Table VI (2.82 -> 3.77e-2 -> 3.94e-4 -> 3.95e-6 for
the face data, and the gamma = 0.1 rows are the gamma = 1 rows shifted by one column of ``C``).
The series condition (10) (with the 2-norm) is sufficient for the Neumann series to converge;
:math:`\rho < 1` is necessary and sufficient; the bound on the error above holds either way.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import eigsh

from .._checks import (
    check_choice,
    check_int_range,
    check_labels,
    check_positive,
    check_square_matrix,
)
from ..cluhsic import objective as _trace_objective
from ..structures import check_loss_matrix, check_output_kernel
from ._partition import loss_transform

__all__ = [
    "FirstOrderApproximation",
    "approximation_error",
    "constraint_pairs",
    "first_order_approximation",
    "first_order_value",
    "joint_kernel_matrices",
    "krr_dual_value",
    "lemma_objective",
    "lemma_partition_matrix",
    "proposition2_objective",
]

# eigenvalues of a kernel above -_PSD_RTOL * max|eigenvalue| count as >= 0 (a centred rbf kernel
# has eigenvalues of about -1e-16 where it is singular)
_PSD_RTOL = 1e-9
# above this size the top eigenvalue is found by Lanczos (scipy eigsh) rather than a full eigvalsh
_DENSE_EIG_MAX = 400


# ----------------------------------------------------------------------------------------------
# input checks and building blocks
# ----------------------------------------------------------------------------------------------


def _check_psd_kernel(K: np.ndarray, name: str) -> None:
    w = sla.eigvalsh(K)
    if w[0] < -_PSD_RTOL * max(np.abs(w).max(), 1e-300):
        raise ValueError(f"{name} must be positive semidefinite (a kernel), smallest eigenvalue {w[0]:.3g}")


def _check_loss(loss, c: int, *, positive_offdiag: bool) -> np.ndarray:
    loss = check_loss_matrix(loss, c)
    if positive_offdiag and np.any(loss[~np.eye(c, dtype=bool)] <= 0):
        raise ValueError(
            "loss must be positive off the diagonal: slack rescaling (3) divides the slack by "
            "sqrt(Delta(y_i, y)) and (6) sets S = m / (2 C Delta), infinite where Delta = 0"
        )
    return loss


def _check_problem(K, A, labels, loss, C=None, *, positive_offdiag: bool = True):
    """Validated ``(K, A, labels, loss, C)`` of (3)-(7), (11); ``C`` may be None (not needed)."""
    K = check_square_matrix(K, "K", min_size=1)
    _check_psd_kernel(K, "K")
    A = check_output_kernel(A)
    c = A.shape[0]
    if c < 2:
        raise ValueError(f"A must be c x c with c >= 2 clusters, got shape {A.shape}")
    loss = _check_loss(loss, c, positive_offdiag=positive_offdiag)
    labels = check_labels(labels, K.shape[0], c)
    if C is not None:
        check_positive(C, "C")
        C = float(C)
    return K, A, labels, loss, C


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
    labels = check_labels(labels, n_clusters=n_clusters)
    grid = np.broadcast_to(np.arange(n_clusters), (labels.shape[0], n_clusters))
    mask = grid != labels[:, None]
    samples = np.repeat(np.arange(labels.shape[0]), n_clusters - 1)
    return samples, grid[mask]  # boolean indexing is row-major: sample-major, y increasing


# ----------------------------------------------------------------------------------------------
# Proposition 1: the KRR primal (3) and its dual (4)-(7)
# ----------------------------------------------------------------------------------------------


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
    K, A, labels, loss, C = _check_problem(K, A, labels, loss, C)
    samples, outputs = constraint_pairs(labels, A.shape[0])
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


def _solve_ones(J: np.ndarray, S: np.ndarray, gamma: float) -> np.ndarray:
    r""":math:`(\gamma J + S)^{-1} 1` by a Cholesky factorization."""
    M = gamma * J
    M[np.diag_indices_from(M)] += S
    try:
        factor = sla.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
    except np.linalg.LinAlgError:
        raise ValueError(
            "gamma J + S is not positive definite: K and A must be positive semidefinite kernels"
        ) from None
    return sla.cho_solve(factor, np.ones(S.shape[0]), check_finite=False)


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
    return 0.5 * float(np.sum(_solve_ones(J, S, float(gamma))))


# ----------------------------------------------------------------------------------------------
# Proposition 2: the first-order approximation (20)
# ----------------------------------------------------------------------------------------------


@dataclass
class FirstOrderApproximation:
    r"""The objective of (9) and its first-order approximation (20), for one ``gamma``.

    Attributes
    ----------
    t1 : float
        :math:`1^\top (\gamma J + S)^{-1} 1` (twice (7)).
    t2 : float
        :math:`1^\top S^{-1} 1 - \gamma\, 1^\top S^{-1} J S^{-1} 1` (20).
    relative_error : float
        :math:`|t_1 - t_2| / t_1`, the quantity of Table VI.
    gamma : float
        The scale of the joint kernel.
    gamma_max : float
        The bound of the series condition (10) with the matrix 2-norm,
        :math:`1 / (\|S^{-1}\|_2 \|J\|_2)` (``inf`` when ``J = 0``).
    condition_holds : bool
        ``gamma < gamma_max``: (10) holds, a sufficient condition for the Neumann series.
    spectral_radius : float
        :math:`\rho(\gamma S^{-1} J) = \gamma\,\lambda_{\max}(S^{-1/2} J S^{-1/2})`; the series
        converges iff it is < 1, and ``relative_error <= spectral_radius**2`` always.
    """

    t1: float
    t2: float
    relative_error: float
    gamma: float
    gamma_max: float
    condition_holds: bool
    spectral_radius: float


def _lambda_max(M: np.ndarray) -> float:
    """Largest eigenvalue of the symmetric matrix ``M`` (Lanczos for large ``M``)."""
    n = M.shape[0]
    if n <= _DENSE_EIG_MAX:
        return float(sla.eigvalsh(M, subset_by_index=[n - 1, n - 1])[0])
    # a fixed start vector keeps the result reproducible
    return float(eigsh(M, k=1, which="LA", v0=np.ones(n), return_eigenvectors=False, tol=1e-10)[0])


def first_order_approximation(J, S, gamma: float = 1.0) -> FirstOrderApproximation:
    r"""Compare :math:`t_1 = 1^\top(\gamma J + S)^{-1} 1` with its first-order approximation (20).

    Lemma 3: under (10), :math:`(\gamma J + S)^{-1} = \sum_{k \ge 0} (-\gamma S^{-1} J)^k
    S^{-1}`; keeping ``k <= 1`` gives :math:`(\gamma J + S)^{-1} \simeq S^{-1} - \gamma S^{-1}
    J S^{-1}` (20) and :math:`t_2 = 1^\top S^{-1} 1 - \gamma 1^\top S^{-1} J S^{-1} 1`.
    ``t1`` comes from a Cholesky solve (no inverse is formed).  The condition (10) is
    evaluated with the 2-norm: :math:`\|S^{-1}\|_2 = \max_p 1/S_p` and :math:`\|J\|_2 =
    \lambda_{\max}(J)` (``J`` is p.s.d.).  See the module docstring for the bound
    :math:`0 \le (t_1 - t_2)/t_1 \le \rho(\gamma S^{-1}J)^2`.

    Parameters
    ----------
    J : array-like of shape (n, n)
        Symmetric p.s.d. (5), from :func:`joint_kernel_matrices`.
    S : array-like of shape (n,)
        Positive diagonal of (6), from :func:`joint_kernel_matrices`.
    gamma : float > 0, default 1
        Scale of the joint kernel (Proposition 2).

    Returns
    -------
    FirstOrderApproximation

    Raises
    ------
    ValueError
        Naming ``J``, ``S`` or ``gamma``.
    """
    check_positive(gamma, "gamma")
    gamma = float(gamma)
    J = check_square_matrix(J, "J")
    S = np.asarray(S, dtype=float)
    if S.ndim != 1 or S.shape[0] != J.shape[0]:
        raise ValueError(f"S must be the diagonal of S, a vector of length {J.shape[0]}, got shape {S.shape}")
    if not np.all(np.isfinite(S)) or np.any(S <= 0):
        raise ValueError("S must have finite positive entries (S = m / (2 C Delta) with Delta > 0)")
    t1 = float(np.sum(_solve_ones(J, S, gamma)))
    u = 1.0 / S  # S^{-1} 1
    t2 = float(np.sum(u) - gamma * (u @ J @ u))
    J_norm = max(_lambda_max(J), 0.0)
    gamma_max = np.inf if J_norm == 0 else 1.0 / (float(np.max(u)) * J_norm)
    r = np.sqrt(u)
    rho = gamma * max(_lambda_max(r[:, None] * J * r[None, :]), 0.0)
    return FirstOrderApproximation(
        t1=t1,
        t2=t2,
        relative_error=abs(t1 - t2) / t1,
        gamma=gamma,
        gamma_max=float(gamma_max),
        condition_holds=bool(gamma < gamma_max),
        spectral_radius=float(rho),
    )


def first_order_value(K, A, labels, loss, C, gamma: float = 1.0) -> float:
    r"""The first-order approximation (20) of :math:`t_1 = 1^\top(\gamma J + S)^{-1}1`:
    :math:`t_2 = 1^\top S^{-1} 1 - \gamma\, 1^\top S^{-1} J S^{-1} 1`.

    By Lemmas 3-5, :math:`-t_2` is the objective of (11) (:func:`proposition2_objective`).

    Parameters
    ----------
    K, A, labels, loss, C
        As in :func:`joint_kernel_matrices`.
    gamma : float > 0, default 1

    Returns
    -------
    float
    """
    check_positive(gamma, "gamma")
    J, S = joint_kernel_matrices(K, A, labels, loss, C)
    u = 1.0 / S
    return float(np.sum(u) - float(gamma) * (u @ J @ u))


def approximation_error(K, A, labels, loss, C, gamma: float = 1.0) -> float:
    r"""The relative error :math:`|t_1 - t_2| / t_1` of the first-order approximation (20)
    (Section IV-D, Table VI), with :math:`t_1 = 1^\top(\gamma J + S)^{-1} 1` (Cholesky) and
    :math:`t_2` of (20).

    It is at most :math:`\rho(\gamma S^{-1}J)^2 \le (\gamma \|S^{-1}\|_2\|J\|_2)^2` and behaves
    like :math:`(2\gamma C/m)^2\, 1^\top DJDJD1 / 1^\top D1` as :math:`\gamma C \to 0` (module
    docstring).  :func:`first_order_approximation` also reports the series condition (10).

    Parameters
    ----------
    K, A, labels, loss, C
        As in :func:`joint_kernel_matrices`.
    gamma : float > 0, default 1

    Returns
    -------
    float
    """
    check_positive(gamma, "gamma")
    J, S = joint_kernel_matrices(K, A, labels, loss, C)
    t1 = float(np.sum(_solve_ones(J, S, float(gamma))))
    u = 1.0 / S
    t2 = float(np.sum(u) - float(gamma) * (u @ J @ u))
    return abs(t1 - t2) / t1


def proposition2_objective(K, A, labels, loss, C, gamma: float = 1.0) -> float:
    r"""The objective of (11) at the labels: :math:`\tilde C \operatorname{tr}(K\tilde\Pi
    A\tilde\Pi^\top) - \frac{C}{m}\|\tilde\Pi\|_1`, :math:`\tilde C = 4 C^2\gamma / m^2`.

    :math:`\tilde\Pi` is the loss-augmented partition matrix (12): row ``i`` has
    :math:`\sum_{y \ne y_i}\Delta(y_i, y)` at :math:`y_i` and :math:`-\Delta(y_i, y)` elsewhere.
    :math:`\|\tilde\Pi\|_1` is the *entrywise* l1 norm :math:`\sum_{ij}|\tilde\Pi_{ij}|`, the
    one Lemma 5 uses (not the induced matrix norm of the paper's notation section).  By Lemma 4
    (:math:`1^\top\Delta J\Delta 1 = \operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)`) and
    Lemma 5 (:math:`1^\top\Delta 1 = \|\tilde\Pi\|_1 / 2`) it equals :math:`-t_2` of (20)
    (Lemma 3, (19)), so maximizing it over labels is the first-order form of (9).

    With the zero-one loss and a centred ``K`` (:math:`K1 = 0`), :math:`\tilde\Pi = c\Pi -
    11^\top`, so :math:`\operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top) = c^2
    \operatorname{tr}(K\Pi A\Pi^\top)` and :math:`\|\tilde\Pi\|_1 = 2m(c - 1)`: (11) is an
    increasing affine function of the CLUHSIC objective (2) (Corollary 1).

    Parameters
    ----------
    K, A, labels, C
        As in :func:`joint_kernel_matrices`.
    loss : array-like of shape (c, c)
        Nonnegative with zero diagonal (zero off-diagonal entries are allowed here: (11) needs
        no ``S``).
    gamma : float > 0, default 1

    Returns
    -------
    float
    """
    K, A, labels, loss, C = _check_problem(K, A, labels, loss, C, positive_offdiag=False)
    check_positive(gamma, "gamma")
    m = K.shape[0]
    Pi = loss_transform(loss)[labels]  # (12)
    C_tilde = 4.0 * C**2 * float(gamma) / m**2
    return C_tilde * _trace_objective(K, A, Pi) - (C / m) * float(np.abs(Pi).sum())


# ----------------------------------------------------------------------------------------------
# Section III-C: the weighted k-means objective (14), Lemmas 1 and 2
# ----------------------------------------------------------------------------------------------


def lemma_partition_matrix(labels, n_clusters: int, form: str = "cluhsic") -> np.ndarray:
    r"""The unnormalized partition matrices of Lemma 1 (15) and Lemma 2 (17).

    * ``form="cluhsic"`` (15): :math:`\Pi_{ic} = 1` if sample ``i`` is in cluster ``c``, else 0;
    * ``form="cluhsical"`` (17): :math:`\Pi_{ic} = c - 1` if in cluster ``c``, else ``-1``
      (the :math:`\tilde\Pi` of (12) with the zero-one loss).

    Parameters
    ----------
    labels : array-like of shape (m,), int
    n_clusters : int >= 2
    form : {"cluhsic", "cluhsical"}

    Returns
    -------
    ndarray of shape (m, n_clusters)
    """
    check_choice(form, "form", ("cluhsic", "cluhsical"))
    n_clusters = check_int_range(n_clusters, "n_clusters", 2)
    labels = check_labels(labels, n_clusters=n_clusters)
    Pi = np.zeros((labels.shape[0], n_clusters)) if form == "cluhsic" else -np.ones((labels.shape[0], n_clusters))
    Pi[np.arange(labels.shape[0]), labels] = 1.0 if form == "cluhsic" else n_clusters - 1.0
    return Pi


def lemma_objective(K, Pi) -> float:
    r"""The weighted k-means objective (14) at its optimal centres, from the kernel alone.

    .. math::

        \sum_{c} \sum_{i} |\Pi_{ic}|\,\|\operatorname{sgn}(\Pi_{ic})\phi(x_i) - \mu_c\|^2,
        \qquad \mu_c = \frac{\sum_i \Pi_{ic}\phi(x_i)}{\sum_j |\Pi_{jc}|} \quad (18)

    (which is (16) for a 0/1 ``Pi``; these centres minimize (14) over :math:`\mu_c`).  Expanding
    the squares with :math:`|\Pi_{ic}|\operatorname{sgn}(\Pi_{ic}) = \Pi_{ic}`:

    .. math::

        \sum_c \Bigl(\sum_i |\Pi_{ic}| K_{ii} - \frac{\Pi_{\cdot c}^\top K \Pi_{\cdot c}}
        {\sum_j |\Pi_{jc}|}\Bigr).

    A column of zeros contributes 0.  **Lemmas 1 and 2, exactly** (equal clusters,
    :math:`m_c = m/c`):

    * Lemma 1, ``Pi`` of (15): (14) :math:`= \operatorname{tr}K - \operatorname{tr}(K\bar\Pi
      A\bar\Pi^\top)` with :math:`A = (m/c) I` and :math:`\bar\Pi` the l1-normalized ``Pi``
      (columns divided by :math:`m_c`): the l1-normalized CLUHSIC objective;
    * Lemma 2, ``Pi`` of (17): :math:`\sum_j|\Pi_{jc}| = m_c(c-2) + m = 2(c-1)m/c`, and
      (14) :math:`= 2(c-1)\operatorname{tr}K - \operatorname{tr}(K\bar\Pi A\bar\Pi^\top)` with
      :math:`A = \frac{2(c-1)m}{c} I` and :math:`\bar\Pi` the l1-normalized :math:`\tilde\Pi`
      of (12) under the zero-one loss: the l1-normalized CLUHSICAL objective.  This ``A`` is the
      one of the paper's proof (Appendix III); the statement of Lemma 2 prints
      :math:`(2c - 1)m/c`, with which the slope becomes :math:`-2(c-1)/(2c-1)` instead of -1
      (still affine and decreasing, so the same minimizers).  The two ``A`` differ by the factor
      :math:`2(c-1)`, as the text after Lemma 2 says.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Input kernel (symmetric).
    Pi : array-like of shape (m, c)
        Unnormalized (signed) partition weights, e.g. from :func:`lemma_partition_matrix`.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``K`` or ``Pi``.
    """
    K = check_square_matrix(K, "K")
    try:
        Pi = np.asarray(Pi, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("Pi must be a numeric matrix") from None
    if Pi.ndim != 2 or Pi.shape[0] != K.shape[0]:
        raise ValueError(f"Pi must be an array of shape ({K.shape[0]}, c), got shape {Pi.shape}")
    if not np.all(np.isfinite(Pi)):
        raise ValueError("Pi contains NaN or infinite entries")
    weights = np.abs(Pi).sum(axis=0)
    used = weights > 0
    within = np.diag(K) @ np.abs(Pi[:, used])
    spread = np.sum(Pi[:, used] * (K @ Pi[:, used]), axis=0) / weights[used]
    return float(np.sum(within - spread))
