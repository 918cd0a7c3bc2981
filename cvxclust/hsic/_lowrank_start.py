"""Starting points of the low-rank solver of (5.30): a nonnegative factor with disjoint block
supports, built from random owners or from a labelling (the rounded spectral relaxation,
relabelled to fit the output kernel)."""

from __future__ import annotations

import numpy as np

from ._factor import AugmentedLagrangian
from ._refine import align_clusters
from ._spectral import spectral_labels

__all__ = ["initial_factor", "initial_labels"]


def initial_factor(rng, c: int, m: int, r: int, known: np.ndarray | None, ev: AugmentedLagrangian,
                    labels: np.ndarray | None = None) -> np.ndarray:
    """``Y >= 0`` with disjoint block supports, scaled to be nearly feasible.

    Every entry ``(l, a)`` (point ``l``, column ``a``) is given to one cluster ``i`` (the known
    one for a labelled point; ``labels[l]`` for every column if ``labels`` is given, else a
    random cluster per entry) with a value drawn uniformly in [0.5, 1], so that the
    off-diagonal constraints ``<Y_i, Y_j> = 0`` (5.27) hold exactly from the start: a dense
    start violates them so much that the first L-BFGS-B steps can clip whole blocks to zero, a
    stationary point of the penalty that no multiplier update leaves.
    A random start is then multiplied by ``alpha`` minimizing ``||h(alpha Y) - b||^2 =
    ||alpha^2 h(Y) - b||^2``: ``alpha^2 = <h(Y), b> / ||h(Y)||^2``.  A start from labels has each
    block scaled to unit norm instead (the diagonal of (5.27) exactly), which leaves (5.29) off
    only by ``1 - E[u]^2 / E[u^2]`` (about 4%) for the uniform entries.
    """
    if labels is None:
        owner = rng.randint(0, c, size=(m, r))
    else:
        owner = np.repeat(labels[:, None], r, axis=1)
    if known is not None:
        labelled = known >= 0
        owner[labelled] = known[labelled, None]
    Y3 = np.zeros((c, m, r))
    rows, cols = np.meshgrid(np.arange(m), np.arange(r), indexing="ij")
    Y3[owner, rows, cols] = rng.uniform(0.5, 1.0, size=(m, r))
    if labels is not None:
        norms = np.linalg.norm(Y3.reshape(c, -1), axis=1)
        return Y3 / np.where(norms > 0, norms, 1.0)[:, None, None]
    h_o, h_b, _ = ev.constraints(Y3)
    b_o = np.eye(c)[ev.upper]
    h_o, h_b = h_o + b_o, h_b + 1.0  # h(Y) itself
    alpha2 = (h_o @ b_o + h_b.sum()) / (h_o @ h_o + h_b @ h_b)
    return Y3 * np.sqrt(alpha2)


def initial_labels(init, K: np.ndarray, A: np.ndarray, rng, known: np.ndarray | None) -> np.ndarray | None:
    """The labels a start is built from (``init`` checked by the caller): None for
    ``"random"``, the rounded spectral relaxation aligned to A for ``"spectral"``, else
    ``init`` itself."""
    if isinstance(init, str):
        if init == "random":
            return None
        return align_clusters(K, A, spectral_labels(K, A.shape[0], 10, rng), known=known,
                              random_state=rng.randint(2**31))
    return init
