r"""Clustering accuracy and error rate under the best relabeling, and normalized mutual information.

The source papers report the error rate

.. math:: \mathrm{Error\ Rate} = 1 - \frac{1}{n}\sum_{i=1}^n \delta\big(s_i, \mathrm{map}(r_i)\big),

where :math:`r_i` is the cluster of sample :math:`i`, :math:`s_i` its class and
:math:`\mathrm{map}` the one-to-one relabeling of clusters to classes that maximizes the number of
matches.  Without restriction the best map is a maximum-weight matching on the contingency matrix
(the Hungarian method, ``scipy.optimize.linear_sum_assignment``).  Structured outputs only admit
some relabelings (the automorphisms of a tree or ring of clusters); pass those as
``permutations`` to restrict the maximum to them.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from scipy.optimize import linear_sum_assignment
from sklearn.metrics import normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

__all__ = ["best_mapping", "accuracy", "error_rate", "nmi", "structured_loss"]


def _check_labels(y_true, y_pred) -> tuple[np.ndarray, np.ndarray]:
    y_true = np.asarray(y_true)
    y_pred = np.asarray(y_pred)
    for name, y in (("y_true", y_true), ("y_pred", y_pred)):
        if y.ndim != 1:
            raise ValueError(f"{name} must be a 1-D array of labels, got shape {y.shape}")
        if y.size == 0:
            raise ValueError(f"{name} must not be empty")
    if y_true.shape != y_pred.shape:
        raise ValueError(
            f"y_true and y_pred must have the same length, got {y_true.shape[0]} and {y_pred.shape[0]}"
        )
    return y_true, y_pred


def _check_permutation(p, y_pred: np.ndarray) -> np.ndarray:
    p = np.asarray(p)
    if p.ndim != 1 or p.size == 0:
        raise ValueError(f"permutations must hold 1-D label arrays p with p[cluster] = class, got shape {p.shape}")
    if not np.issubdtype(y_pred.dtype, np.integer) or y_pred.min() < 0 or y_pred.max() >= p.size:
        raise ValueError(
            f"permutations index clusters by label: y_pred must hold integers in [0, {p.size - 1}] "
            f"for permutations of length {p.size}"
        )
    return p


def _best_permutation(y_true, y_pred, permutations) -> tuple[np.ndarray, int]:
    best, best_matches = None, -1
    for p in permutations:
        p = _check_permutation(p, y_pred)
        matches = int(np.count_nonzero(p[y_pred] == y_true))
        if matches > best_matches:
            best, best_matches = p, matches
    if best is None:
        raise ValueError("permutations must contain at least one permutation")
    return best, best_matches


def _hungarian(y_true, y_pred) -> tuple[dict, int]:
    classes, class_idx = np.unique(y_true, return_inverse=True)
    clusters, cluster_idx = np.unique(y_pred, return_inverse=True)
    C = contingency_matrix(class_idx, cluster_idx)  # rows: classes, columns: clusters
    rows, cols = linear_sum_assignment(C, maximize=True)
    mapping = {c.item(): None for c in clusters}
    for r, c in zip(rows, cols):
        mapping[clusters[c].item()] = classes[r].item()
    return mapping, int(C[rows, cols].sum())


def best_mapping(y_true, y_pred, permutations: Iterable | None = None) -> dict:
    r"""The relabeling of clusters to classes that maximizes the number of matches.

    .. math:: \mathrm{map} = \arg\max_{\pi} \sum_{i=1}^n \delta\big(s_i, \pi(r_i)\big)

    over one-to-one maps :math:`\pi` (``permutations=None``: a maximum-weight matching on the
    contingency matrix, by ``scipy.optimize.linear_sum_assignment``) or over the given
    ``permutations`` only.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels :math:`s_i`.
    y_pred : array-like of shape (n_samples,)
        Cluster labels :math:`r_i`.
    permutations : iterable of array-like, optional
        Admissible relabelings, each an array ``p`` with ``p[cluster] = class``; cluster labels
        must then be the integers ``0 .. len(p) - 1``.  ``None``: all one-to-one maps.  Ties
        keep the first best permutation.

    Returns
    -------
    dict
        ``{cluster: class}`` for every cluster label in ``y_pred``.  With more clusters than
        classes (and ``permutations=None``) the clusters left unmatched map to ``None``: their
        samples count as errors.
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    if permutations is None:
        return _hungarian(y_true, y_pred)[0]
    p, _ = _best_permutation(y_true, y_pred, permutations)
    return {c.item(): p[c].item() for c in np.unique(y_pred)}


def accuracy(y_true, y_pred, permutations: Iterable | None = None) -> float:
    r"""Fraction of samples whose cluster maps to their class under the best relabeling.

    .. math:: \mathrm{acc} = \max_{\pi} \frac{1}{n} \sum_{i=1}^n \delta\big(s_i, \pi(r_i)\big)

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels :math:`s_i`.
    y_pred : array-like of shape (n_samples,)
        Cluster labels :math:`r_i`.
    permutations : iterable of array-like, optional
        Restrict :math:`\pi` to these relabelings (arrays ``p`` with ``p[cluster] = class``,
        cluster labels ``0 .. len(p) - 1``), e.g. the automorphisms of an output structure.
        ``None`` (default): all one-to-one maps (Hungarian method).

    Returns
    -------
    float in [0, 1]
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    if permutations is None:
        matches = _hungarian(y_true, y_pred)[1]
    else:
        matches = _best_permutation(y_true, y_pred, permutations)[1]
    return matches / y_true.size


def error_rate(y_true, y_pred, permutations: Iterable | None = None) -> float:
    r"""The papers' error rate, ``1 - accuracy``.

    .. math:: \mathrm{Error\ Rate} = 1 - \max_{\pi}\frac{1}{n}\sum_{i=1}^n \delta\big(s_i, \pi(r_i)\big)

    Parameters are those of :func:`accuracy`.

    Returns
    -------
    float in [0, 1]
    """
    return 1.0 - accuracy(y_true, y_pred, permutations)


def nmi(y_true, y_pred) -> float:
    r"""Normalized mutual information :math:`I(S; R) / \tfrac12 (H(S) + H(R))`.

    scikit-learn's ``normalized_mutual_info_score`` (arithmetic-mean normalization); invariant
    to any relabeling of the clusters.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Class labels.
    y_pred : array-like of shape (n_samples,)
        Cluster labels.

    Returns
    -------
    float in [0, 1]
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    return float(normalized_mutual_info_score(y_true, y_pred))


def structured_loss(y_true, y_pred, loss, permutations: Iterable | None = None) -> float:
    r"""Mean structured loss after the accuracy-maximizing relabeling (the CLUHSIC papers' chain,
    ring and tree losses).

    .. math:: \frac1n \sum_{i=1}^n \Delta\big(s_i, \pi^*(r_i)\big),
              \qquad \pi^* = \text{the map of } :func:`best_mapping`

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
        Class labels (``0 .. c-1``, indexing ``loss``) and cluster labels.
    loss : array-like of shape (c, c)
        ``loss[s, t]``: the cost of predicting class t for class s, e.g.
        :func:`cvxclust.structures.loss_matrix`.
    permutations : iterable of array-like, optional
        As in :func:`accuracy`.  A cluster left unmatched (more clusters than classes) costs the
        largest entry of ``loss``.

    Returns
    -------
    float
    """
    y_true, y_pred = _check_labels(y_true, y_pred)
    loss = np.asarray(loss, dtype=float)
    if loss.ndim != 2 or loss.shape[0] != loss.shape[1] or y_true.max() >= loss.shape[0]:
        raise ValueError(f"loss must be a square matrix indexed by the classes of y_true, got shape {loss.shape}")
    mapping = best_mapping(y_true, y_pred, permutations)
    worst = float(loss.max())
    costs = [worst if mapping[r] is None or mapping[r] >= loss.shape[1] else loss[s, mapping[r]]
             for s, r in zip(y_true.tolist(), y_pred.tolist())]
    return float(np.mean(costs))
