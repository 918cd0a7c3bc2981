r"""Local re-optimisation of the hard objectives and the alternating baselines (Section 6).

Section 6 of the paper rounds the optimal M of a relaxation by spectral clustering
(:func:`~cvxclust.bregman.round_equivalence`), then uses the labels to start a *local*
re-optimisation of the original hard objective; the baselines optimise the same objectives by
alternation from 30 random assignments (altCondJC, altCond) or by soft EM from 20 (the joint
model, :func:`~cvxclust.bregman.soft_bregman_em`).  This module holds the alternation for the
three hard objectives, (6), (14) and the joint likelihood of Section 5, whose closed-form
parameter steps are derived in :mod:`cvxclust.bregman._hard_models`.

Each alternation step is exact in its block, so the objectives never increase; points are kept in
their cluster on ties (no cycling) and the run stops at a fixed point (no label changes).  An
emptied cluster of (6) or (14) receives the worst-fitted point of a cluster with two or more
members, which only lowers the objective.  With ``refine=True`` a fixed point is polished by
single-point moves that re-fit the moved clusters exactly (Hartigan's rule), using the closed
cluster cost of :mod:`cvxclust.bregman._hard_models`; the result is then a fixed point of both
rules: no single reassignment lowers the objective, even after re-fitting.  For the joint
model a refined move may also revive an empty cluster.

The loop, the limits, the history and the :class:`~cvxclust.Result` are those of
:class:`cvxclust.solvers.IterativeSolver`; a fixed point has status ``"converged"`` (a local
method: no certificate of optimality).

References
----------
A. Banerjee, S. Merugu, I. Dhillon and J. Ghosh, "Clustering with Bregman divergences", JMLR 6,
2005 (Algorithm 1).  H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import dataclasses
from numbers import Integral

import numpy as np

from .._checks import check_labels, check_n_clusters, check_positive, check_random_state
from ..parameters import Interval, check_parameters
from ..result import Result
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param
from ._hard_models import ConditionalModel, HardModel, JointModel, random_partition
from .divergences import get_divergence

__all__ = [
    "best_of",
    "bregman_hard_clustering",
    "conditional_hard_clustering",
    "joint_hard_clustering",
]


def _fill_empty(model: HardModel, labels: np.ndarray, C: np.ndarray) -> np.ndarray:
    """Move the worst-fitted points of clusters with >= 2 members into the empty clusters.

    Monotone for (6) and (14): the point's term drops to that of its own optimal singleton,
    which is at most its current term, and re-fitting the cluster it left only lowers the rest.
    """
    counts = np.bincount(labels, minlength=model.k)
    empty = np.flatnonzero(counts == 0)
    if empty.size == 0:
        return labels
    labels = labels.copy()
    losses = model.point_losses(C, labels).astype(float)
    for j in empty:
        losses_ok = np.where(counts[labels] >= 2, losses, -np.inf)
        i = int(np.argmax(losses_ok))
        counts[labels[i]] -= 1
        counts[j] += 1
        labels[i] = j
        losses[i] = -np.inf
    return labels


def _single_moves(model: HardModel, labels: np.ndarray, tol_abs: float) -> tuple[np.ndarray, int]:
    """One sweep of Hartigan moves: each point, in turn, goes to the cluster whose exact
    re-fitted objective change is most negative (below ``-tol_abs``); returns (labels, moves)."""
    X, k = model.X, model.k
    labels = labels.copy()
    counts = np.bincount(labels, minlength=k)
    sums = np.zeros((k, X.shape[1]))
    np.add.at(sums, labels, X)
    term = np.array([counts[j] * model.phi(sums[j] / counts[j]) + model.psi(counts[j]) if counts[j] else 0.0
                     for j in range(k)])
    moves = 0
    for i in range(X.shape[0]):
        a = labels[i]
        if counts[a] == 1 and model.relocate:
            continue  # (6)/(14) keep every cluster non-empty
        if counts[a] > 1:
            mask = labels == a
            mask[i] = False
            new_a = (counts[a] - 1) * model.phi(X[mask].mean(axis=0)) + model.psi(counts[a] - 1)
        else:
            new_a = 0.0
        best_delta, best_b, best_new_b = -tol_abs, -1, 0.0
        for b in range(k):
            if b == a:
                continue
            new_b = (counts[b] + 1) * model.phi((sums[b] + X[i]) / (counts[b] + 1)) + model.psi(counts[b] + 1)
            delta = new_a + new_b - term[a] - term[b]
            if delta < best_delta:
                best_delta, best_b, best_new_b = delta, b, new_b
        if best_b >= 0:
            term[a], term[best_b] = new_a, best_new_b
            labels[i] = best_b
            for j in (a, best_b):  # fresh sums: no drift out of the domain (e.g. -1e-16 for KL)
                sums[j] = X[labels == j].sum(axis=0)
                counts[j] = np.count_nonzero(labels == j)
            moves += 1
    return labels, moves


class _Alternation(IterativeSolver):
    """Alternate the Y-step and the exact parameter step of a hard model from given labels until
    a fixed point (status ``"converged"``) or a limit."""

    parameters = IterativeSolver.parameters | {
        "tol": Param(1e-10, POSITIVE),
        "max_iter": Param(300, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "refine": Param(False, ["boolean"]),
    }

    def __init__(self, model: HardModel, labels: np.ndarray, method: str, **params):
        self.method = method
        super().__init__(None, **params)
        self.model, self.start = model, labels

    def init_state(self):
        model, labels = self.model, self.start
        if model.relocate and np.bincount(labels, minlength=model.k).min() == 0:
            labels = _fill_empty(model, labels, model.costs(model.refit(labels)))
        params = model.refit(labels)
        objective = model.objective(labels, params)
        return {"labels": labels, "params": params, "objective": objective, "initial_objective": objective}

    def step(self, state, iteration):
        model, labels = self.model, state["labels"]
        C = model.costs(state["params"])
        rows = np.arange(model.t)
        new = np.argmin(C, axis=1)
        new = np.where(C[rows, labels] <= C[rows, new], labels, new)  # keep on ties
        if model.relocate:
            new = _fill_empty(model, new, C)
        moves = int(np.count_nonzero(new != labels))
        if moves == 0 and self.refine:
            new, moves = _single_moves(model, labels, tol_abs=self.tol * max(abs(state["objective"]), 1.0))
        if moves == 0:
            self.converge()
        else:
            state["labels"], state["params"] = new, model.refit(new)
            state["objective"] = model.objective(new, state["params"])
        return {"objective": state["objective"], "moves": moves}

    def certify(self, state, bound, final=False):
        return Certificate(X=state["labels"], objective=state["objective"], residuals={})

    def extras(self, state):
        return {**self.model.extras(state["params"]), "initial_objective": state["initial_objective"]}


_PARAMETERS = {name: p.constraints for name, p in _Alternation.parameters.items()} | {
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


def best_of(results: list[Result], key: str, *, maximize: bool = False) -> Result:
    """The restart with the least (``maximize``: largest) objective, the first among ties, with
    the time of all restarts and their objectives in ``extras[key]``."""
    objectives = np.array([r.objective for r in results])
    best = results[int(np.argmax(objectives) if maximize else np.argmin(objectives))]
    return dataclasses.replace(best, time=sum(r.time for r in results), extras={**best.extras, key: objectives})


def _alternate(method, model_class, X, divergence, n_clusters, init, n_init, refine, tol, max_iter, time_limit,
               random_state, **model_options) -> Result:
    options = check_parameters(
        _PARAMETERS, {"n_init": n_init, "refine": refine, "tol": tol, "max_iter": max_iter,
                      "time_limit": time_limit, "random_state": random_state}, method)
    div = get_divergence(divergence)
    X = div.check_data(X)
    k = check_n_clusters(n_clusters, X.shape[0])
    if init is not None:
        if n_init != 1:
            raise ValueError(f"n_init must be 1 when init labels are given, got {n_init}")
        starts = [check_labels(init, X.shape[0], k, name="init").astype(np.intp)]
    else:
        rng = check_random_state(random_state)
        starts = [random_partition(X.shape[0], k, rng) for _ in range(n_init)]
    del options["n_init"], options["random_state"]
    model = model_class(X, div, k, **model_options)
    return best_of([_Alternation(model, labels, method, **options).run() for labels in starts],
                   "restart_objectives")


_HARD_DOC_PARAMS = """
    Parameters
    ----------
    X : array-like of shape (t, n)
        Data, in the domain of the divergence (checked by its ``check_domain``).
    divergence : str or Divergence
        A name known to :func:`~cvxclust.bregman.divergences.get_divergence` or an instance.
    n_clusters : int
        d, between 2 and t.
    init : array-like of int, shape (t,), optional
        Labels to start from (re-optimisation of a rounded relaxation); ``n_init`` must be 1.
    n_init : int >= 1
        Random restarts from :func:`random_partition` when ``init`` is None; the run with the
        lowest objective is kept (30 for the paper's alternating baselines).
    refine : bool
        Polish each fixed point with exact single-point (Hartigan) moves.
    tol : float > 0
        A single move must lower the objective by more than ``tol * max(|objective|, 1)``.
    max_iter : int >= 1
        Iterations per run (one Y-step and one parameter step each, or one sweep of moves).
    time_limit : float > 0
        Wall seconds per run; a limit hit gives a ``ConvergenceWarning`` and that status.
    random_state : int, RandomState instance, Generator or None
        Seeds the random restarts.

    Returns
    -------
    Result
        Of the best run: ``X`` its labels (shape (t,)), ``objective`` its objective (the value
        of (6), of (14), or the joint negative log-likelihood
        ``D_F(X, Y Gamma) - sum_j n_j log(n_j / t)``, constants dropped), ``status``
        ``"converged"`` at a fixed point (else ``"max_iter"`` or ``"time_limit"``),
        ``iterations`` and ``history`` (rows with ``objective``, non-increasing, and ``moves``)
        of that run, ``time`` of all runs.  ``extras``:

        ``centres`` : ndarray of shape (d, n)
            Gamma (the means) for (6) and the joint model, B for (14).
        ``prior`` : ndarray of shape (d,)
            Joint model only: the cluster prior ``softmax(w) = n / t``.
        ``initial_objective`` : float
            The objective at the run's starting labels (after refilling empty clusters).
        ``restart_objectives`` : ndarray of shape (n_runs,)
            Final objective of every run (random restarts, or the single run from ``init``).
"""


def bregman_hard_clustering(X, divergence, n_clusters: int, *, init=None, n_init: int = 1, refine: bool = False,
                            tol: float = 1e-10, max_iter: int = 300, time_limit: float = np.inf,
                            random_state=None) -> Result:
    r"""Hard Bregman clustering, Banerjee et al. (2005) Algorithm 1: :math:`\min_{Y,\Gamma} D_F(X, Y\Gamma)` (6).

    Alternates ``y_i = argmin_j D_F(x_i, mu_j)`` and ``mu_j = mean of cluster j`` (the optimal
    Gamma for any Bregman divergence, Section 3.1); the objective never increases.  An emptied
    cluster receives the worst-fitted point of a cluster with two or more members (this only
    lowers the objective; see the module docstring).  ``n_init=30`` random restarts is the
    paper's altCondJC; ``init`` from a rounded relaxation is cvxCondJC's re-optimisation.
    For the squared Euclidean divergence this is Lloyd's k-means (objective = inertia / 2).
    """
    return _alternate("bregman_hard_clustering", HardModel, X, divergence, n_clusters, init, n_init, refine, tol,
                      max_iter, time_limit, random_state)


def conditional_hard_clustering(X, divergence, n_clusters: int, *, alpha: float, init=None, n_init: int = 1,
                                refine: bool = False, tol: float = 1e-10, max_iter: int = 300,
                                time_limit: float = np.inf, random_state=None) -> Result:
    r"""Alternating minimisation of (14): :math:`\min_{Y,B} D_{F^*}(YB, f(X)) + \frac{\alpha}{2}\|YB\|_F^2`.

    B-step: each row b_j solves ``f^{-1}(b_j) + alpha b_j = xbar_j``
    (:func:`~cvxclust.bregman._hard_models.conditional_centres`, closed form for the Euclidean,
    Mahalanobis and Itakura-Saito divergences, bisection to machine precision otherwise);
    Y-step: ``y_i = argmin_j F*(b_j) + alpha/2 ||b_j||^2 - <x_i, b_j>``.  ``n_init=30`` random
    restarts is the paper's altCond; ``init`` from a rounded relaxation is cvxCond's
    re-optimisation.  ``alpha`` (> 0) is the weight of (14); ``extras["centres"]`` is B.
    """
    check_positive(alpha, "alpha")
    return _alternate("conditional_hard_clustering", ConditionalModel, X, divergence, n_clusters, init, n_init,
                      refine, tol, max_iter, time_limit, random_state, alpha=float(alpha))


def joint_hard_clustering(X, divergence, n_clusters: int, *, init=None, n_init: int = 1, refine: bool = False,
                          tol: float = 1e-10, max_iter: int = 300, time_limit: float = np.inf,
                          random_state=None) -> Result:
    r"""Local optimisation of the joint likelihood of Section 5: :math:`\min_{Y,w,B} -1'Yw + t g(w) + L(YB)`.

    Alternates ``y_i = argmin_j D_F(x_i, mu_j) - w_j`` and ``mu_j`` = cluster means,
    ``w_j = log(n_j / t)``; the objective is ``D_F(X, Y Gamma) - sum_j n_j log(n_j / t)`` (derived
    in :mod:`cvxclust.bregman._hard_models`).  Clusters may empty (their prior becomes 0).
    ``extras["prior"]`` is ``softmax(w) = n / t``.  This is cvxJoint's re-optimisation
    (Section 6.4).
    """
    return _alternate("joint_hard_clustering", JointModel, X, divergence, n_clusters, init, n_init, refine, tol,
                      max_iter, time_limit, random_state)


for _fn in (bregman_hard_clustering, conditional_hard_clustering, joint_hard_clustering):
    _fn.__doc__ += _HARD_DOC_PARAMS  # the shared numpydoc sections
del _fn
