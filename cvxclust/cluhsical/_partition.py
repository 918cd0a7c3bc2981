r"""Loss-augmented partition matrices and the CLUHSICAL objectives (11)-(13).

Source: W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010;
equation numbers are that paper's.

CLUHSICAL replaces the 0/1 partition matrix Pi of CLUHSIC (2) by the loss-augmented
:math:`\tilde\Pi` of (12): the row of a point of cluster :math:`\ell` is

.. math:: \tilde\Pi_i = [-\Delta(y^\ell, y^1), \dots, \textstyle\sum_{y \ne y^\ell}\Delta(y^\ell, y),
          \dots, -\Delta(y^\ell, y^c)],

with the positive entry in column :math:`\ell`.  That row depends only on the cluster, so
:math:`\tilde\Pi = \Pi L` with the ``c x c`` matrix (:func:`loss_transform`)

.. math:: L = \operatorname{diag}(\Delta \mathbf 1) - \Delta, \qquad L\mathbf 1 = 0,

(``loss[l, j]`` = :math:`\Delta(y^l, y^j)`, zero diagonal, not necessarily symmetric).  The
objectives, for an input kernel K (centred by the caller, as the paper assumes throughout) and an
output kernel A on the clusters:

* unnormalized: :math:`\operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)`, the first term of (11)
  and the (22) of Corollary 1;
* ``"l1"``: (13), :math:`\operatorname{tr}(K\Pi_1 A\Pi_1^\top)` with every column of
  :math:`\tilde\Pi` divided by its l1 norm (then :math:`\|\Pi_1\|_1 = c` is constant and (11)
  loses its second term, C and gamma);
* ``"l2"``: (11) itself, :math:`\tilde C\operatorname{tr}(K\Pi_2 A\Pi_2^\top) -
  \frac{C}{m}\|\Pi_2\|_1` with :math:`\tilde C = 4C^2\gamma/m^2`, every column of
  :math:`\tilde\Pi` divided by its l2 norm (see :func:`l2_objective` for this reading).

Because :math:`\tilde\Pi = \Pi L`, the unnormalized objective is CLUHSIC's unnormalized (2) with
the output kernel :math:`L A L^\top`, and on partitions with fixed cluster sizes the normalized
ones are CLUHSIC's normalized objective with a fixed kernel: the route to CLUHSIC's SDP and
low-rank relaxations in :mod:`cvxclust.hsic` (:mod:`cvxclust.cluhsical._output_kernels`).
"""

from __future__ import annotations

import numpy as np

from .._checks import (
    as_float_array,
    check_data_matrix,
    check_int_range,
    check_labels,
    check_positive,
    check_square_matrix,
)
from .._trace import trace_objective
from ..structures import check_loss_matrix, check_output_kernel
from ._overflow import finite_result

__all__ = [
    "NORMALIZATIONS",
    "column_norms",
    "l2_objective",
    "labels_objective",
    "loss_transform",
    "objective",
    "partition_matrix",
]

#: The normalizations of the loss-augmented partition matrix: none, l1 (13), l2 (11).
NORMALIZATIONS = (None, "l1", "l2")


def check_normalization(normalization, allowed=NORMALIZATIONS):
    """Raise ``ValueError`` naming ``normalization`` unless it is one of ``allowed``."""
    if not any(normalization is v or (isinstance(normalization, str) and normalization == v) for v in allowed):
        raise ValueError(f"Unknown normalization {normalization!r}; valid values are "
                         f"{', '.join(repr(v) for v in allowed)}")
    return normalization


@finite_result("loss")
def loss_transform(loss) -> np.ndarray:
    r"""The ``c x c`` matrix L with :math:`\tilde\Pi = \Pi L` (12) for the 0/1 assignment Pi.

    .. math:: L = \operatorname{diag}(\Delta\mathbf 1) - \Delta,\qquad
              L_{\ell\ell} = \sum_{j}\Delta(y^\ell, y^j),\quad L_{\ell j} = -\Delta(y^\ell, y^j)\ (j \ne \ell),

    i.e. row :math:`\ell` of L is the row (12) of every point of cluster :math:`\ell` (the
    diagonal of Delta is zero, so the sum over :math:`y \ne y^\ell` is the full row sum).  Rows
    sum to zero, :math:`L\mathbf 1 = 0`.  With the zero-one loss ``1 - I``,
    :math:`L = cI - \mathbf 1\mathbf 1^\top` and the rows are (23).

    Parameters
    ----------
    loss : array-like of shape (c, c)
        :math:`\Delta`, ``loss[i, j]`` the cost of cluster j for a point of cluster i:
        finite, nonnegative, zero diagonal, not necessarily symmetric
        (:func:`cvxclust.structures.check_loss_matrix`).

    Returns
    -------
    ndarray of shape (c, c)

    Raises
    ------
    ValueError
        Naming ``loss``.
    """
    return augmentation(check_loss_matrix(loss))


def augmentation(loss: np.ndarray) -> np.ndarray:
    """:func:`loss_transform` of a checked loss."""
    return np.diag(loss.sum(axis=1)) - loss


def check_loss(loss, n_clusters: int | None = None) -> np.ndarray:
    """``loss`` checked (:func:`cvxclust.structures.check_loss_matrix`), with at least two
    clusters and, if given, ``n_clusters`` of them."""
    loss = check_loss_matrix(loss)
    c = loss.shape[0]
    if c < 2:
        raise ValueError(f"loss must be at least 2 x 2 (one row per cluster), got {loss.shape}")
    if n_clusters is not None:
        n_clusters = check_int_range(n_clusters, "n_clusters", 2)
        if n_clusters != c:
            raise ValueError(f"n_clusters must equal the size of loss ({c}), got {n_clusters}")
    return loss


def check_problem(K, A, loss, *, at_most_m: bool = False):
    """The checked ``(K, A, loss)`` of a CLUHSICAL objective: K symmetric and finite, A a
    symmetric c x c output kernel with ``c >= 2`` (and ``c <= m`` if ``at_most_m``), loss
    c x c."""
    K = check_square_matrix(K, "K")
    A = check_output_kernel(A, psd=False)
    m, c = K.shape[0], A.shape[0]
    if c < 2 or (at_most_m and c > m):
        bound = f"2 <= c <= m = {m}" if at_most_m else "c >= 2"
        raise ValueError(f"A must be c x c with {bound} clusters, got shape {A.shape}")
    return K, A, check_loss_matrix(loss, c)


@finite_result("sizes and loss")
def column_norms(sizes, loss, normalization) -> np.ndarray:
    r"""Column norms of :math:`\tilde\Pi` from the cluster sizes n alone.

    Column k of :math:`\tilde\Pi = \Pi L` holds :math:`L_{\ell k}` for each of the
    :math:`n_\ell` points of cluster :math:`\ell`, so

    .. math:: \|\tilde\Pi_{\cdot k}\|_1 = (|L|^\top n)_k = \nu_k,\qquad
              \|\tilde\Pi_{\cdot k}\|_2 = \sqrt{((L\circ L)^\top n)_k}.

    Parameters
    ----------
    sizes : array-like of shape (c,) or (k, c)
        Cluster sizes (k rows of them at once are allowed).
    loss : array-like of shape (c, c)
    normalization : {"l1", "l2"}

    Returns
    -------
    ndarray of shape (c,) or (k, c)
    """
    check_normalization(normalization, ("l1", "l2"))
    L = loss_transform(loss)
    sizes = as_float_array(sizes, "sizes", "array of cluster sizes")
    if sizes.ndim not in (1, 2) or sizes.shape[-1] != L.shape[0] or not np.all(np.isfinite(sizes)) or np.any(
            sizes < 0):
        raise ValueError(f"sizes must be a vector (or a matrix of rows) of {L.shape[0]} finite nonnegative cluster "
                         f"sizes, got shape {sizes.shape}")
    return norms_of_columns(sizes, L, normalization)


def norms_of_columns(sizes: np.ndarray, L: np.ndarray, normalization: str) -> np.ndarray:
    """:func:`column_norms` for checked sizes and ``L`` = :func:`loss_transform` of the loss."""
    if normalization == "l1":
        return sizes @ np.abs(L)
    return np.sqrt(sizes @ (L * L))


def inverse_norms(norms: np.ndarray) -> np.ndarray:
    """``1 / norms`` with 0 for a zero norm: a zero column stays zero after normalization."""
    out = np.zeros_like(norms, dtype=float)
    np.divide(1.0, norms, out=out, where=norms > 0)
    return out


@finite_result("loss")
def partition_matrix(labels, loss, normalization=None, *, n_clusters=None) -> np.ndarray:
    r"""The loss-augmented partition matrix :math:`\tilde\Pi` of (12), optionally normalized.

    .. math:: \tilde\Pi = \Pi L\ \text{(12)},\qquad
              \Pi_1 = \tilde\Pi\,\operatorname{diag}(\nu)^{-1}\ \text{(the } \Pi \text{ of (13))},\qquad
              \Pi_2 = \tilde\Pi\,\operatorname{diag}(\|\tilde\Pi_{\cdot k}\|_2)^{-1}\ \text{(11, l2)},

    with Pi the 0/1 assignment of ``labels``, L = :func:`loss_transform` and
    :math:`\nu = |L|^\top n` the column l1 norms (n = cluster sizes, :func:`column_norms`).

    Zero columns: a column of :math:`\tilde\Pi` is zero only if :math:`L_{\ell k} = 0` for
    every non-empty cluster :math:`\ell`, which needs zero off-diagonal losses (with a loss that
    is positive off the diagonal, a non-empty cluster k has :math:`L_{kk} > 0` and an empty one
    has :math:`-\Delta(y^\ell, y^k) < 0` in the rows of the other clusters).  Such a column is
    left at zero by the normalization (its normalizer is taken as 0, not 1/0), so it contributes
    nothing to any objective, as an empty cluster does in CLUHSIC's normalized partition matrix.

    Parameters
    ----------
    labels : array-like of int, shape (m,)
        Cluster of each point, ``0..c-1``.
    loss : array-like of shape (c, c)
        :math:`\Delta` (zero diagonal, nonnegative; need not be symmetric).
    normalization : {None, "l1", "l2"}
        None for :math:`\tilde\Pi`; "l1" for (13); "l2" for the l2-normalized form of (11).
    n_clusters : int, optional
        If given, must equal c (a consistency check).

    Returns
    -------
    ndarray of shape (m, c)

    Raises
    ------
    ValueError
        Naming ``labels`` (not integers in ``0..c-1``), ``loss``, ``normalization`` or
        ``n_clusters``.
    """
    loss = check_loss(loss, n_clusters)
    check_normalization(normalization)
    labels = check_labels(labels, n_clusters=loss.shape[0])
    return augmented_partition(labels, loss, normalization)


def augmented_partition(labels: np.ndarray, loss: np.ndarray, normalization) -> np.ndarray:
    """:func:`partition_matrix` for checked labels and loss."""
    L = augmentation(loss)
    Pi_tilde = L[labels]  # row i of Pi L is row labels[i] of L
    if normalization is None:
        return Pi_tilde
    sizes = np.bincount(labels, minlength=L.shape[0])
    return Pi_tilde * inverse_norms(norms_of_columns(sizes, L, normalization))[None, :]


@finite_result("K, A and Pi")
def objective(K, A, Pi) -> float:
    r"""``tr(K Pi A Pi^T)``, the CLUHSICAL objective (13) for a (normalized) loss-augmented
    partition matrix, or CLUHSIC's (2) for a 0/1 one: the same function of any m x c matrix.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred by the caller).
    A : array-like of shape (c, c)
        Symmetric output kernel.
    Pi : array-like of shape (m, c)
        E.g. :func:`partition_matrix` of some labels.

    Returns
    -------
    float
    """
    K = check_square_matrix(K, "K")
    A = check_output_kernel(A, psd=False)
    Pi = check_data_matrix(Pi, "Pi", min_samples=1)
    if Pi.shape != (K.shape[0], A.shape[0]):
        raise ValueError(f"Pi must be a {K.shape[0]} x {A.shape[0]} matrix (points x clusters), got shape {Pi.shape}")
    return trace_objective(K, A, Pi)


def check_C(C, m: int) -> float:
    """``C`` checked, or its default ``0.1 m`` (Section IV-A-2) for None."""
    if C is None:
        return 0.1 * m
    check_positive(C, "C")
    return float(C)


def evaluate(K, A, labels, loss, normalization, C: float, gamma: float) -> float:
    """:func:`labels_objective` for checked inputs (``C`` already defaulted)."""
    Pi = augmented_partition(labels, loss, normalization)
    if normalization != "l2":
        return trace_objective(K, A, Pi)
    return penalized_objective(K, A, Pi, C, gamma)


def penalized_objective(K, A, Pi, C: float, gamma: float) -> float:
    r"""The form of (11), :math:`\tilde C\operatorname{tr}(K\Pi A\Pi^\top) - \frac{C}{m}\|\Pi\|_1`
    with :math:`\tilde C = 4C^2\gamma/m^2`, for a checked m x c matrix ``Pi``."""
    m = K.shape[0]
    C_tilde = 4.0 * C**2 * gamma / m**2
    return C_tilde * trace_objective(K, A, Pi) - (C / m) * float(np.abs(Pi).sum())


@finite_result("K, A, loss, C and gamma")
def l2_objective(K, A, labels, loss, *, C=None, gamma: float = 1.0) -> float:
    r"""The objective of (11) with the l2-normalized loss-augmented partition matrix.

    .. math:: \tilde C \operatorname{tr}(K \Pi_2 A \Pi_2^\top) - \frac{C}{m}\|\Pi_2\|_1,
              \qquad \tilde C = \frac{4 C^2 \gamma}{m^2},

    :math:`\Pi_2` = :func:`partition_matrix` ``(labels, loss, "l2")`` (each column of
    :math:`\tilde\Pi` divided by its l2 norm) and :math:`\|\cdot\|_1` the entrywise l1 norm (the
    norm of Lemma 5, :math:`\mathbf 1^\top\Delta\mathbf 1 = \frac12\|\tilde\Pi\|_1`), so
    :math:`\|\Pi_2\|_1 = \sum_k \|\tilde\Pi_{\cdot k}\|_1 / \|\tilde\Pi_{\cdot k}\|_2`.

    Reading of the paper: Section III-B says the normalization of CLUHSIC (unit l2 columns)
    "can also be performed on the :math:`\tilde\Pi` in (11)", and that the l1 normalization is
    preferred because it makes :math:`\|\tilde\Pi\|_1` in (11) constant, so that it, C and gamma
    drop out.  Under the l2 normalization the norm is *not* constant, so the l2 version keeps
    (11) whole, with the normalized matrix in both terms; this is why Section IV-A-2 must fix
    :math:`C = 0.1m` and :math:`\gamma = 1` for it (with the unnormalized
    :math:`\|\tilde\Pi\|_1 = 2\sum_i (\Delta\mathbf 1)_{y_i}` the penalty would be constant for
    the paper's zero-one, ring and balanced-tree losses, and C, gamma would not matter).

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred by the caller).
    A : array-like of shape (c, c)
        Symmetric output kernel.
    labels : array-like of int, shape (m,)
    loss : array-like of shape (c, c)
    C : float > 0, optional
        Regularization of (3); default ``0.1 m`` (Section IV-A-2).
    gamma : float > 0
        Scaling of the joint kernel (Proposition 2); default 1 (Section IV-A-2).

    Returns
    -------
    float
    """
    return labels_objective(K, A, labels, loss, "l2", C=C, gamma=gamma)


@finite_result("K, A, loss, C and gamma")
def labels_objective(K, A, labels, loss, normalization=None, *, C=None, gamma: float = 1.0) -> float:
    r"""The CLUHSICAL objective of ``labels`` under a normalization.

    * None: :math:`\operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)` (the first term of (11),
      what :func:`equivalent_output_kernel` and the SDP route handle);
    * "l1": (13), :math:`\operatorname{tr}(K\Pi_1 A\Pi_1^\top)`;
    * "l2": (11), :func:`l2_objective` (C and gamma are used only here).

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred by the caller).
    A : array-like of shape (c, c)
        Symmetric output kernel, ``c >= 2``.
    labels : array-like of int, shape (m,)
    loss : array-like of shape (c, c)
    normalization : {None, "l1", "l2"}
    C : float > 0, optional
        Default ``0.1 m``.
    gamma : float > 0
        Default 1.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Naming ``K``, ``A``, ``labels``, ``loss``, ``normalization``, ``C`` or ``gamma``.
    """
    check_normalization(normalization)
    K, A, loss = check_problem(K, A, loss)
    labels = check_labels(labels, K.shape[0], A.shape[0])
    C = check_C(C, K.shape[0])
    check_positive(gamma, "gamma")
    return evaluate(K, A, labels, loss, normalization, C, float(gamma))
