"""Random restarts of a local search over labelings, shared by the families' greedy methods."""

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
