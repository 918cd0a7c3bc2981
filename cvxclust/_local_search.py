"""Pieces of the greedy local searches over labelings (cluhsic and cluhsical): the statistics
``K Pi`` and ``S = Pi^T K Pi`` of a labeling, their O(m + c) update when one point moves, and
random restarts."""

from __future__ import annotations

import numpy as np


def best_of_starts(search, n_samples: int, n_clusters: int, *, known: np.ndarray, init, n_init: int, rng):
    """Run ``search(labels)`` from ``init`` (once) or from ``n_init`` uniformly random labelings,
    known labels (``known >= 0``) imposed on every start, and return the run with the largest
    objective.  ``search`` returns a tuple whose second entry is the objective."""
    fixed = known >= 0
    best = None
    for _ in range(n_init):
        labels = init.copy() if init is not None else rng.randint(n_clusters, size=n_samples)
        labels[fixed] = known[fixed]
        run = search(labels.astype(int))
        if best is None or run[1] > best[1]:
            best = run
    return best


def labeling_statistics(K: np.ndarray, labels: np.ndarray, n_clusters: int):
    """``K Pi`` (m x c), ``S = Pi^T K Pi`` (c x c) and the cluster sizes of a labeling, afresh."""
    Pi = np.zeros((len(labels), n_clusters))
    Pi[np.arange(len(labels)), labels] = 1.0
    KPi = K @ Pi
    return KPi, Pi.T @ KPi, np.bincount(labels, minlength=n_clusters)


def move_point(K: np.ndarray, KPi: np.ndarray, S: np.ndarray, sizes: np.ndarray, labels: np.ndarray,
               i: int, b: int) -> None:
    """Move point ``i`` to cluster ``b`` in place, updating ``K Pi`` in O(m) and ``S`` and the
    sizes in O(c) (rows and columns a and b of S change by the row of ``K Pi`` without K_ii)."""
    a = labels[i]
    r0 = KPi[i].copy()
    r0[a] -= K[i, i]
    S[a, :] -= r0
    S[:, a] -= r0
    S[a, a] -= K[i, i]
    S[b, :] += r0
    S[:, b] += r0
    S[b, b] += K[i, i]
    KPi[:, a] -= K[:, i]
    KPi[:, b] += K[:, i]
    sizes[a] -= 1
    sizes[b] += 1
    labels[i] = b
