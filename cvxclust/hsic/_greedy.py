r"""Greedy local search for CLUHSIC (2.3)/(2.4) (Song et al. 2007, the "greedy" of Table 1)."""

from __future__ import annotations

import time
from numbers import Integral

import numpy as np

from .._checks import check_int_range, check_labels, check_random_state
from .._local_search import SweepSearch, best_of_starts, remove_point
from .._trace import partition_matrix
from ..parameters import Interval
from ..result import Result
from ..solvers import POSITIVE, Certificate, Param
from ._heuristic_base import HeuristicSolver, check_kernels, check_known, labels_result
from ._keywords import no_other_keywords, normalization_of

__all__ = ["GreedySearch", "greedy", "move_gains"]


def _weights(sizes: np.ndarray, normalized: bool) -> np.ndarray:
    if not normalized:
        return np.ones(sizes.shape[0])
    w = np.zeros(sizes.shape[0])
    w[sizes > 0] = 1.0 / np.sqrt(sizes[sizes > 0])
    return w


def _value(A: np.ndarray, S: np.ndarray, sizes: np.ndarray, normalized: bool) -> float:
    """``f = sum_kl A_kl w_k w_l S_kl`` with ``w_k = n_k^{-1/2}`` (2.4) or 1 (2.3)."""
    w = _weights(sizes, normalized)
    return float(np.sum(A * S * np.outer(w, w)))


def move_gains(A, S, sizes, r, kii, a, normalized):
    r"""Objective of moving point i (now in cluster a) to each cluster b, minus the objective
    with i removed, for all b at once in O(c^2).

    With i removed: ``r0 = Pi0^T K e_i = r - K_ii e_a``, ``S0 = S - e_a r0^T - r0 e_a^T
    - K_ii e_a e_a^T``, ``n0 = n - e_a``.  Inserting i into b changes only row/column b of S
    (``S0_bl + r0_l``; ``S0_bb + 2 r0_b + K_ii``) and the weight ``w_b -> omega_b =
    (n0_b + 1)^{-1/2}``, so with ``M_bl = A_bl w_l``

    .. math:: g_b = 2\sum_{l\ne b} M_{bl}\,[\omega_b (S^0_{bl} + r^0_l) - w_b S^0_{bl}]
              + A_{bb}\,[\omega_b^2 (S^0_{bb} + 2 r^0_b + K_{ii}) - w_b^2 S^0_{bb}].

    ``g_b - g_a`` is the change of f when i moves from a to b.
    """
    r0, S0, n0 = remove_point(S, sizes, r, kii, a)
    w = _weights(n0, normalized)
    omega = 1.0 / np.sqrt(n0 + 1.0) if normalized else np.ones_like(w)
    M = A * w[None, :]
    dM, dS, dA = np.diag(M), np.diag(S0), np.diag(A)
    row_new = (M * (S0 + r0[None, :])).sum(axis=1) - dM * (dS + r0)
    row_old = (M * S0).sum(axis=1) - dM * dS
    return 2.0 * (omega * row_new - w * row_old) + dA * (omega**2 * (dS + 2.0 * r0 + kii) - w**2 * dS)


class GreedySearch(SweepSearch, HeuristicSolver):
    """One run of the greedy local search of :func:`greedy` from given labels (one iteration is
    one sweep over the free points); the checked inputs are trusted."""

    method = "greedy"
    parameters = HeuristicSolver.parameters | {
        "tol": Param(1e-12, POSITIVE),
        "max_iter": Param(100, [Interval(Integral, 1, None, closed="left")]),
    }

    def __init__(self, K, A, labels, free, normalized, rng, **params):
        super().__init__(None, **params)
        self.K, self.A, self.labels, self.free, self.normalized, self.rng = K, A, labels, free, normalized, rng
        self.n_clusters = A.shape[0]

    def init_state(self):
        state = self.start_state(self.labels)
        # moves must gain more than rounding noise, or ties could cycle forever
        state.scale = max(np.abs(self.K).max() * np.abs(self.A).max(), 1e-300)
        return state

    def scores(self, state, i, a):
        return move_gains(self.A, state.S, state.sizes, state.KPi[i], state.diag[i], a, self.normalized)

    def min_gain(self, state, current):
        return self.tol * max(abs(state.objective), state.scale)

    def value(self, state):
        return _value(self.A, state.S, state.sizes, self.normalized)

    def certify(self, state, bound, final=False):
        return Certificate(partition_matrix(state.labels, self.n_clusters, normalized=self.normalized), None,
                           state.objective, {})

    def extras(self, state):
        return {"labels": state.labels.copy()}


def greedy(K, A, *, normalization="l2", init=None, known=None, max_iter: int = 100, n_init: int = 1,
           tol: float = 1e-12, time_limit: float = np.inf, random_state=None, **deprecated) -> Result:
    r"""Greedy local search for (2.3)/(2.4) (Song et al. 2007, the "greedy" of Table 1).

    .. math:: \max_{\Pi} \operatorname{tr}(K P A P^\top),\quad P = \Pi D,\
              D = (\Pi^\top\Pi)^{-1/2}\ \text{(2.4)}\ \text{or}\ D = I\ \text{(2.3)}

    Sweep the unknown points in random order and move each to the cluster that maximizes the
    objective; stop after a sweep that moves nothing (then no single move improves the
    objective by more than ``tol`` relative).  With ``S = Pi^T K Pi`` the objective is
    ``sum_kl A_kl S_kl w_k w_l`` (``w_k = n_k^{-1/2}`` or 1); moving one point changes only row
    and column a and b of S, so all c candidate moves of a point cost O(c^2) from the row of
    ``K Pi`` (see :func:`move_gains`), and a move updates ``K Pi`` in O(m): never a full
    recomputation per point.  ``K Pi`` and S are recomputed exactly once per sweep.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel, centred by the caller.
    A : array-like of shape (c, c)
        Symmetric output kernel.
    normalization : {"l2", None}, default="l2"
        (2.4) with ``"l2"``, (2.3) with None (``normalized=True/False`` is the old spelling).
    init : array-like of int, optional
        Starting labels (known points are overwritten with their labels); default uniformly
        random labels.  With ``init``, ``n_init`` must be 1.
    known : array-like of int, optional
        ``-1`` for free points, a fixed label otherwise; known points never move.
    max_iter : int
        Maximum number of sweeps; hitting it gives status ``"max_iter"`` and a ConvergenceWarning.
    n_init : int
        Random restarts; the best objective is kept.
    tol : float
        A move is made only if it raises the objective by more than
        ``tol * max(|f|, max|K| max|A|)``.
    time_limit : float
        Seconds per run.
    random_state : int, RandomState, Generator or None

    Returns
    -------
    Result
        The best run: ``X`` the partition matrix of the labels, ``status`` ``"converged"`` at a
        local optimum; ``iterations`` the sweeps; ``history`` the objective and the number of
        moves after each sweep (the first row also holds ``start_objective``); ``time`` covers
        every run.  ``extras``: ``labels``, ``P`` (= X), ``relaxed_objective`` (None).

    References
    ----------
    L. Song, A. Smola, A. Gretton, K. Borgwardt, "A dependence maximization view of
    clustering", ICML 2007.
    """
    start = time.perf_counter()
    K, A = check_kernels(K, A, method="greedy")
    m, c = K.shape[0], A.shape[0]
    normalized = normalization_of("greedy", normalization, deprecated) == "l2"
    no_other_keywords("greedy", deprecated)
    known = check_known(known, m, c)
    n_init = check_int_range(n_init, "n_init", 1)
    params = {"max_iter": max_iter, "tol": tol, "time_limit": time_limit}
    GreedySearch.check(params)
    if init is not None:
        init = check_labels(init, m, c, name="init")
        if n_init != 1:
            raise ValueError(f"n_init must be 1 when init is given, got {n_init}")
    rng = check_random_state(random_state)
    free = np.flatnonzero(known < 0)

    def search(labels):
        run = GreedySearch(K, A, labels, free, normalized, rng, **params).run()
        return run, run.objective

    best, _ = best_of_starts(search, m, c, known=known, init=init, n_init=n_init, rng=rng)
    return labels_result(best, K, A, best.extras["labels"], normalized, time=time.perf_counter() - start)
