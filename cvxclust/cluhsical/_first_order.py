r"""Proposition 2 of CLUHSICAL (Section III-B): the first-order approximation (20) of the KRR
value (7), and the objective (11) it leads to.

Proposition 2 scales the joint kernel by :math:`\gamma` and keeps the first-order term of the
Neumann series of :math:`(\gamma J + S)^{-1}` (20):
:math:`t_1 = 1^\top(\gamma J + S)^{-1} 1 \approx t_2 = 1^\top S^{-1} 1
- \gamma\, 1^\top S^{-1} J S^{-1} 1`.  Lemmas 4 and 5 turn :math:`-t_2` into the objective of
(11), :math:`\tilde C \operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top) - \frac{C}{m}\|\tilde\Pi\|_1`
(:func:`proposition2_objective`), with the loss-augmented partition matrix
:math:`\tilde\Pi` of (12).

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

second order in :math:`\gamma C`: a 10x smaller ``C`` (or ``gamma``) gives an about 100x smaller
error, the pattern of the paper's Table VI (where the gamma = 0.1 rows are the gamma = 1 rows
shifted by one column of ``C``).
The series condition (10) (with the 2-norm) is sufficient for the Neumann series to converge;
:math:`\rho < 1` is necessary and sufficient; the bound on the error above holds either way.

Reference: W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into Discriminative
Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
from scipy.sparse.linalg import eigsh

from .._checks import as_float_array, check_positive, check_square_matrix
from ._krr import check_krr_problem, joint_kernel_matrices, solve_ones
from ._overflow import finite_result
from ._partition import augmented_partition, penalized_objective

__all__ = [
    "FirstOrderApproximation",
    "approximation_error",
    "first_order_approximation",
    "first_order_value",
    "proposition2_objective",
]

# above this size the top eigenvalue is found by Lanczos (scipy eigsh) rather than a full eigvalsh
_DENSE_EIG_MAX = 400


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


def _joint(K, A, labels, loss, C, gamma) -> tuple[np.ndarray, np.ndarray, float]:
    """J and S of :func:`joint_kernel_matrices` and the checked ``gamma``."""
    check_positive(gamma, "gamma")
    return (*joint_kernel_matrices(K, A, labels, loss, C), float(gamma))


def _values(J: np.ndarray, S: np.ndarray, gamma: float, culprit: str | None = None) -> tuple[float, float]:
    """``t1`` (a Cholesky solve) and ``t2`` of (20) for checked J, S."""
    t1 = float(np.sum(solve_ones(J, S, gamma, *([culprit] if culprit else []))))
    return t1, _first_order_term(J, S, gamma)


def _first_order_term(J: np.ndarray, S: np.ndarray, gamma: float) -> float:
    r"""``t2`` of (20): :math:`1^\top S^{-1} 1 - \gamma\, 1^\top S^{-1} J S^{-1} 1`."""
    u = 1.0 / S
    return float(np.sum(u) - gamma * (u @ J @ u))


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
    S = as_float_array(S, "S", "vector of positive numbers (the diagonal of S)")
    if S.ndim != 1 or S.shape[0] != J.shape[0]:
        raise ValueError(f"S must be the diagonal of S, a vector of length {J.shape[0]}, got shape {S.shape}")
    if not np.all(np.isfinite(S)) or np.any(S <= 0):
        raise ValueError("S must have finite positive entries (S = m / (2 C Delta) with Delta > 0)")
    with np.errstate(over="ignore", invalid="ignore"):
        t1, t2 = _values(J, S, gamma, culprit="J must be positive semidefinite")
    if not (np.isfinite(t1) and np.isfinite(t2)):
        raise ValueError("first_order_approximation overflows float64 for these J, S and gamma: rescale them")
    u = 1.0 / S  # S^{-1} 1
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


@finite_result("K, A, loss, C and gamma")
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
    J, S, gamma = _joint(K, A, labels, loss, C, gamma)
    return _first_order_term(J, S, gamma)


@finite_result("K, A, loss, C and gamma")
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
    t1, t2 = _values(*_joint(K, A, labels, loss, C, gamma))
    return abs(t1 - t2) / t1


@finite_result("K, A, loss, C and gamma")
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
    K, A, labels, loss, C = check_krr_problem(K, A, labels, loss, C, positive_offdiag=False)
    check_positive(gamma, "gamma")
    return penalized_objective(K, A, augmented_partition(labels, loss, None), C, float(gamma))
