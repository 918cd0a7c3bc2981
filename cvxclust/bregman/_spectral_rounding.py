r"""Spectral rounding of a relaxed normalized equivalence matrix (Section 6, "SC rounding").

References
----------
H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence Clustering",
Conference on Uncertainty in Artificial Intelligence (UAI), 2013.  J. Shi and J. Malik,
"Normalized cuts and image segmentation", PAMI 2000.  A. Ng, M. Jordan and Y. Weiss, "On
spectral clustering", NIPS 2002.
"""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize

from .._checks import check_n_clusters, check_random_state, check_square_matrix
from ..parameters import Interval, check_parameters
from ..result import Result
from ..rounding import spectral_embedding
from .sets import equivalence_matrix

__all__ = ["round_equivalence"]

_PARAMETERS = {
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
    "score": [callable, None],
}


def round_equivalence(M, n_clusters: int, *, n_init: int = 10, random_state=None, score=None) -> Result:
    r"""Spectral-clustering rounding of a relaxed normalized equivalence matrix (Section 6).

    Every matrix of M1 and M2 has unit row sums (``M 1 = 1``), so the Shi-Malik degree matrix
    ``D = diag(M 1)`` is the identity and the normalized affinity ``D^{-1/2} M D^{-1/2}`` is M
    itself: the spectral embedding is M's top-d eigenvectors, taken directly from M
    (:func:`cvxclust.rounding.spectral_embedding`).  Negative entries of M (allowed in M2) are
    therefore *not* clipped: clipping would change the degrees, break ``D = I`` and perturb the
    spectrum the relaxation optimised.  For an exact ``M = Y (Y'Y)^+ Y'`` (9) the top-d
    eigenvectors span the cluster indicators (eigenvalue 1, the rest 0), so the embedded rows of a
    cluster coincide.  The rows are normalized to unit length (Ng-Jordan-Weiss, as in
    :mod:`cvxclust.rounding`); no row vanishes since ``1/sqrt(t)`` is always among the
    eigenvectors when ``M 1 = 1``.  Each repeat is one k-means run (``n_init=1``, k-means++
    seeding) on the embedding, the random element the paper repeats 10 times.

    The kept repeat minimises ``score(labels)``, by default the squared distance to the exact set,

    .. math:: \| M - Y(Y'Y)^\dagger Y' \|_F^2,

    i.e. the repeat whose equivalence matrix (9) is nearest the relaxed M.  Pass e.g. the
    original objective as ``score`` to keep the repeat that starts re-optimisation best.

    Parameters
    ----------
    M : array-like of shape (t, t)
        Symmetric relaxed equivalence matrix (from M1, M2, or M3 + 11'/t).
    n_clusters : int
        d, between 2 and t.
    n_init : int >= 1
        Number of repeats (10 in the paper).
    random_state : int, RandomState instance, Generator or None
        Seeds the repeats.
    score : callable, optional
        ``score(labels) -> float``, lower is better.

    Returns
    -------
    Result
        ``X`` the kept labels (shape (t,)), ``objective`` their score, status ``"converged"``,
        ``iterations`` the number of repeats.  ``extras``:

        ``all_labels`` : ndarray of shape (n_init, t)
            The labels of every repeat (the paper reports mean and spread over them).
        ``scores`` : ndarray of shape (n_init,)
            The score of every repeat (lower is better).
        ``best`` : int
            Index of the kept repeat (the first among ties).
    """
    start = time.perf_counter()
    M = check_square_matrix(M, "M")
    d = check_n_clusters(n_clusters, M.shape[0])
    params = check_parameters(_PARAMETERS, {"n_init": n_init, "random_state": random_state, "score": score},
                                 "round_equivalence")
    n_init = params["n_init"]
    rng = check_random_state(random_state)
    U = normalize(spectral_embedding(M, d), norm="l2", axis=1)
    all_labels = np.empty((n_init, M.shape[0]), dtype=np.intp)
    scores = np.empty(n_init)
    for r in range(n_init):
        km = KMeans(n_clusters=d, n_init=1, random_state=rng.randint(np.iinfo(np.int32).max))
        all_labels[r] = km.fit_predict(U)
        if score is None:
            scores[r] = float(np.sum((M - equivalence_matrix(all_labels[r], d)) ** 2))
        else:
            scores[r] = float(score(all_labels[r]))
    best = int(np.argmin(scores))
    return Result(X=all_labels[best].copy(), objective=scores[best], status="converged", method="spectral-rounding",
                  iterations=n_init, time=time.perf_counter() - start,
                  extras={"all_labels": all_labels, "scores": scores, "best": best})
