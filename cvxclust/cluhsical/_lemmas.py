r"""Section III-C of CLUHSICAL: the weighted k-means objective (14) and the unnormalized partition
matrices of Lemmas 1 and 2.

Reference: W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into Discriminative
Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_choice, check_data_matrix, check_int_range, check_labels, check_square_matrix
from ._overflow import finite_result

__all__ = ["lemma_objective", "lemma_partition_matrix"]


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


@finite_result("K and Pi")
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
    Pi = check_data_matrix(Pi, "Pi", min_samples=1)
    if Pi.shape[0] != K.shape[0]:
        raise ValueError(f"Pi must be an array of shape ({K.shape[0]}, c), got shape {Pi.shape}")
    weights = np.abs(Pi).sum(axis=0)
    used = weights > 0
    within = np.diag(K) @ np.abs(Pi[:, used])
    spread = np.sum(Pi[:, used] * (K @ Pi[:, used]), axis=0) / weights[used]
    return float(np.sum(within - spread))
