"""Refinement of a CLUHSICAL partition: relabel whole clusters, then move single points.

The greedy moves one point at a time, so it cannot empty a cluster into another or read a
structure in another order; on well-separated data it stops with clusters merged, split or
left empty.  :func:`refine` alternates the best relabelling of the clusters found by swaps
(:func:`cvxclust._local_search.best_relabelling`, on the c x c statistics of the partition)
with the greedy from the relabelled partition, until neither raises the objective.
"""

from __future__ import annotations

import numpy as np

from .._local_search import best_relabelling, labeling_statistics, relabelled_statistics
from ._greedy import NormalizedObjective, search

__all__ = ["refine"]


def refine(K, A, loss, normalization, C: float, gamma: float, labels, *, known, rng, max_rounds: int = 20,
           **options):
    """The refined labels and their objective from ``labels`` (inputs checked by the caller;
    ``known`` an array with -1 for free points, ``rng`` a RandomState; ``options`` those of the
    greedy: ``tol``, ``max_iter``, ``time_limit``)."""
    m, c = K.shape[0], A.shape[0]
    model = NormalizedObjective(A, loss, normalization, m, C, gamma)
    fixed = np.unique(known[known >= 0])
    tol = options.get("tol", 1e-12)
    _, S, sizes = labeling_statistics(K, labels, c)
    value = model.value(S, sizes)
    for _ in range(max_rounds):
        sigma = best_relabelling(lambda s: model.value(*relabelled_statistics(S, sizes, s)), c, fixed=fixed,
                                 rng=rng.randint(2**32))
        run = search(K, A, loss, normalization, C, gamma, init=sigma[labels], known=known, n_init=1, rng=rng,
                     **options)
        if run.objective - value <= tol * max(abs(value), 1e-300):
            break
        labels, value = run.extras["labels"], run.objective
        _, S, sizes = labeling_statistics(K, labels, c)
    return labels, value
