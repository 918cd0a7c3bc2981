r"""Refinement of a CLUHSIC partition: place its clusters on the structure, then move points.

A partition can be right as a set of groups and wrong in where it puts them on the structure
(a chain read in a scrambled order): no single-point move of the greedy search repairs that,
since every point of a misplaced cluster would have to move at once.  With
``T = D^T Pi^T K Pi D`` (c x c; the weights ``D`` move with their clusters), relabelling the
clusters by a permutation sigma changes (2.3)/(2.4) to

.. math:: f(\sigma) = \sum_{k,l} A_{\sigma(k)\sigma(l)}\, T_{kl},

a quadratic assignment problem of order c, solved by 2-opt from the current labelling and from
random permutations (:func:`scipy.optimize.quadratic_assignment`).  The spectral relaxation
ignores A (Proposition 2), so the low-rank solver's default start is aligned the same way.
:func:`refine` alternates this placement with the greedy local search
(:func:`cvxclust.hsic.greedy`) until neither raises the objective; the estimator
:class:`~cvxclust.cluhsic.CLUHSIC` runs it from the method's partition and from k-means
partitions that ignore the structure.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment, quadratic_assignment

from .._checks import check_int_range, check_labels
from .._trace import partition_matrix, trace_objective
from ..parameters import check_parameter
from ._greedy import greedy
from ._heuristic_base import check_kernels, check_known
from ._keywords import no_other_keywords, normalization_of, renamed

__all__ = ["align_clusters", "refine"]


def _checked(owner, K, A, labels, known, normalization, n_init, random_state, old_keywords):
    """The checked inputs (the old spellings ``normalized``, ``n_starts`` and ``rng`` taken out
    of ``old_keywords``), ``normalized`` as a bool and ``random_state`` as a
    ``numpy.random.Generator`` (from None, a seed, a RandomState or a Generator)."""
    normalized = normalization_of(owner, normalization, old_keywords, stacklevel=6) == "l2"
    n_init = check_int_range(renamed(owner, old_keywords, "n_starts", "n_init", n_init, 50, stacklevel=6),
                             "n_init", 1)
    random_state = renamed(owner, old_keywords, "rng", "random_state", random_state, None, stacklevel=6)
    K, A = check_kernels(K, A, method=owner)
    m, c = K.shape[0], A.shape[0]
    labels = check_labels(labels, m, c, name="labels")
    known = None if known is None else check_known(known, m, c)
    rng = np.random.default_rng(check_parameter("random_state", random_state, ["random_state"]))
    return K, A, labels, known, normalized, n_init, rng


def align_clusters(K: np.ndarray, A: np.ndarray, labels: np.ndarray, *, normalization="l2", known=None,
                   n_init: int = 50, random_state=None, **deprecated) -> np.ndarray:
    """The labels with the clusters relabelled by the best permutation found for the QAP of the
    module docstring, by 2-opt from the current labelling and from ``n_init - 1`` random
    permutations (a single random start often misses the best relabelling; SciPy's FAQ method
    does no better); never worse than the current labelling.  Known labels (``known >= 0``)
    come first: the clusters holding known points are matched to those labels (Hungarian, on
    the counts) and kept fixed.  Without known labels the result is never worse than the current
    labelling (2-opt only improves its start).  ``normalization`` is that of (2.4) (``"l2"``) or
    (2.3) (None).  The old spellings ``normalized=True/False``, ``n_starts=`` and ``rng=`` give a
    ``FutureWarning``.

    Raises
    ------
    ValueError or TypeError
        Naming ``K``, ``A``, ``labels``, ``known``, ``normalization``, ``n_init`` or
        ``random_state`` (a seed in ``[0, 2**32)``, a RandomState, a Generator or None).
    """
    K, A, labels, known, normalized, n_init, rng = _checked("align_clusters", K, A, labels, known, normalization,
                                                            n_init, random_state, deprecated)
    no_other_keywords("align_clusters", deprecated)
    return _align(K, A, labels, normalized, known, n_init, rng)


def _align(K, A, labels, normalized, known, n_init, rng) -> np.ndarray:
    """:func:`align_clusters` on checked inputs."""
    c = A.shape[0]
    P = partition_matrix(labels, c, normalized=normalized)
    T = P.T @ K @ P
    fixed = np.empty((0, 2), dtype=int)
    if known is not None and np.any(known >= 0):
        labelled = known >= 0
        counts = np.zeros((c, c))
        np.add.at(counts, (labels[labelled], known[labelled]), 1.0)
        rows, cols = linear_sum_assignment(counts, maximize=True)
        keep = counts[rows, cols] > 0
        fixed = np.c_[rows[keep], cols[keep]]
    free = np.setdiff1d(np.arange(c), fixed[:, 0])
    # the current labelling as a guess where the known labels leave it possible
    guess = free[np.isin(free, fixed[:, 1], invert=True)]
    best = None
    for start in range(n_init):
        options = {"maximize": True, "partial_match": fixed, "rng": rng}
        if start == 0 and guess.size:
            options["partial_guess"] = np.c_[guess, guess]
        result = quadratic_assignment(T, A, method="2opt", options=options)
        if best is None or result.fun > best.fun + 1e-12 * abs(best.fun):
            best = result
    return best.col_ind[labels]  # cluster k goes to node col_ind[k]


def refine(K: np.ndarray, A: np.ndarray, labels: np.ndarray, *, normalization="l2", known=None,
           max_rounds: int = 20, n_init: int = 50, random_state=None, **greedy_options):
    """Alternate :func:`align_clusters` and the greedy local search from ``labels`` until a round
    raises the objective by no more than the greedy's tolerance (relative); return the labels,
    their objective and the number of rounds.  ``greedy_options`` go to
    :func:`cvxclust.hsic.greedy` (``tol``, ``max_iter``, ``time_limit``); ``normalization``,
    ``n_init`` and ``random_state`` are those of :func:`align_clusters`, whose old spellings
    give a ``FutureWarning`` here too.

    Raises
    ------
    ValueError or TypeError
        Naming the argument, as :func:`align_clusters` and :func:`cvxclust.hsic.greedy` do.
    """
    K, A, labels, known, normalized, n_init, rng = _checked("refine", K, A, labels, known, normalization, n_init,
                                                            random_state, greedy_options)
    max_rounds = check_int_range(max_rounds, "max_rounds", 1)
    seed = np.random.RandomState(rng.integers(2**32))
    value = trace_objective(K, A, partition_matrix(labels, A.shape[0], normalized=normalized))
    tol = greedy_options.get("tol", 1e-12)
    for rounds in range(1, max_rounds + 1):
        aligned = _align(K, A, labels, normalized, known, n_init, rng)
        run = greedy(K, A, normalization="l2" if normalized else None, init=aligned, known=known, random_state=seed,
                     **greedy_options)
        gain = run.objective - value
        if gain > tol * max(abs(value), 1e-300):
            labels, value = run.extras["labels"], run.objective
        else:
            break
    return labels, value, rounds
