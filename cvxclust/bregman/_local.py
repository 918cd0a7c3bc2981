r"""Rounding of a relaxed M, local re-optimisation, and the alternating baselines (Section 6).

Section 6 of the paper rounds the optimal M of a relaxation by spectral clustering ("SC
rounding", 10 repeats), then uses the labels to start a *local* re-optimisation of the original
hard objective; the baselines optimise the same objectives by alternation from 30 random
assignments (altCondJC, altCond) or by soft EM from 20 (the joint model).  This module holds all
of it; every objective is one of the following, with ``Y`` the t x d assignment matrix of the
labels, ``n_j`` the size of cluster j and ``xbar_j`` its mean.

Hard conditional clustering (6), Banerjee et al. (2005), Algorithm 1
    .. math:: \min_{Y, \Gamma} D_F(X, Y\Gamma),
    for fixed Y the minimiser is ``Gamma = (Y'Y)^+ Y'X`` (the cluster means, Section 3.1); for
    fixed Gamma each point goes to the centre of least ``D_F(x_i, mu_j)``.

Regularised conditional clustering (14)
    .. math:: \min_{Y, B} D_{F^*}(YB, f(X)) + \frac{\alpha}{2}\|YB\|_F^2
              = \sum_i D_{F^*}(b_{y_i}, f(x_i)) + \frac{\alpha}{2}\|b_{y_i}\|^2 .
    *B-step.*  With ``D_{F*}(b, f(x)) = F*(b) + F(x) - <x, b>`` (Fenchel-Young), the terms of
    cluster j are ``n_j (F*(b) - <xbar_j, b> + alpha/2 ||b||^2) + sum_{i in j} F(x_i)``, strictly
    convex in b for alpha > 0; setting the gradient to zero (grad F* = f^{-1}),

    .. math:: f^{-1}(b_j) + \alpha\, b_j = \bar x_j .                         \qquad (\ast)

    Closed forms: Euclidean ``b = xbar / (1 + alpha)``; Mahalanobis
    ``(I + alpha W) b = W xbar``; Itakura-Saito (f^{-1}(b) = -1/b, b < 0) the negative root of
    ``alpha b^2 - xbar b - 1 = 0``, ``b = -2 / (xbar + sqrt(xbar^2 + 4 alpha))`` (written
    without cancellation).  Generalized KL (``e^b + alpha b = xbar``, a Lambert-W equation whose
    closed form overflows for the paper's alpha = 1e-5) and the logistic transfer
    (``sigmoid(b) + alpha b = xbar``) are solved entrywise by bracketing and bisection to machine
    precision: the left side of (*) is strictly increasing.  As alpha -> 0, b -> f(xbar) and
    (14) becomes (6); alpha must be positive here (use :func:`bregman_hard_clustering` for 0).
    *Y-step.*  ``y_i = argmin_j F*(b_j) + alpha/2 ||b_j||^2 - <x_i, b_j>`` (F(x_i) is common).

Joint hard clustering (Section 5, the re-optimisation of Section 6.4)
    .. math:: \min_{Y, \mathbf w, B} -\mathbf 1'Y\mathbf w + t\, g(\mathbf w) + L(YB),
              \qquad g(\mathbf w) = \log\textstyle\sum_j e^{w_j},\quad L(Z) = D_{F^*}(Z, f(X)).
    For fixed Y, B decouples as in (6) (B = f(Gamma), L(YB) = D_F(X, YGamma)) and the w-terms
    ``-sum_j n_j w_j + t g(w)`` are minimised by ``w_j = log(n_j / t)`` (softmax(w) = n / t),
    giving the profile objective ``D_F(X, Y Gamma) - sum_j n_j log(n_j / t)``: hard clustering
    plus the entropy of the cluster sizes.  For fixed (w, Gamma) the Y-step is
    ``y_i = argmin_j D_F(x_i, mu_j) - w_j``.  A cluster that empties gets w_j = -inf and stays
    empty under the Y-step: a smaller model is a legitimate (lower) optimum of the joint likelihood
    (``refine=True`` may revive it when a single move into it, re-fitted, lowers the objective).  The
    regularisers beta, alpha and h of (30) are *not* part of this objective: Section 6.4
    re-optimises the plain joint likelihood, and (30)'s h is never specified in our copy of the
    paper (neither is (33); the text breaks off in Section 5).

Soft clustering, Banerjee et al. (2005), Algorithm 3
    EM for the mixture ``p(x) = sum_j q_j exp(-D_F(x, mu_j)) b(x)`` (1)-(2); the base measure
    b(x) does not depend on the parameters and is left out of the reported log-likelihood.

Each alternation step is exact in its block, so the objectives never increase; points are kept in
their cluster on ties (no cycling) and the run stops at a fixed point (no label changes).  With
``refine=True`` a fixed point is polished by single-point moves that re-fit the moved clusters
exactly (Hartigan's rule), using for every cluster S the closed form

.. math:: \text{cost}(S) = \sum_{i\in S} F(x_i) + |S|\,\varphi(\bar x_S) + \psi(|S|),

with ``phi(m) = -F(m)`` for (6) and the joint model (Bregman information: the linear terms vanish
at the mean), ``phi(m) = F*(b) - <m, b> + alpha/2 ||b||^2`` at the b of (*) for (14), and
``psi(n) = -n log(n / t)`` for the joint model (0 otherwise).  The result is then a fixed point of
both rules: no single reassignment lowers the objective, even after re-fitting.

References
----------
A. Banerjee, S. Merugu, I. Dhillon and J. Ghosh, "Clustering with Bregman divergences", JMLR 6,
2005 (Algorithms 1 and 3).  J. Shi and J. Malik, "Normalized cuts and image segmentation",
PAMI 2000.  A. Ng, M. Jordan and Y. Weiss, "On spectral clustering", NIPS 2002.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp, xlogy
from sklearn.cluster import KMeans
from sklearn.preprocessing import normalize
from sklearn.utils import check_random_state

from .._checks import (
    check_bool,
    check_data_matrix,
    check_int_range,
    check_labels,
    check_n_clusters,
    check_positive,
    check_square_matrix,
)
from .._stopping import IterationMonitor
from ..rounding import spectral_embedding
from .divergences import (
    Divergence,
    ItakuraSaito,
    Mahalanobis,
    SquaredEuclidean,
    get_divergence,
)
from .sets import equivalence_matrix

__all__ = [
    "LocalResult",
    "RoundingResult",
    "SoftResult",
    "bregman_hard_clustering",
    "conditional_centres",
    "conditional_hard_clustering",
    "joint_hard_clustering",
    "random_partition",
    "round_equivalence",
    "soft_bregman_em",
]


# --------------------------------------------------------------------------------------------
# rounding
# --------------------------------------------------------------------------------------------

@dataclass
class RoundingResult:
    """Spectral rounding of a relaxed M: the kept labels and every repeat.

    Attributes
    ----------
    labels : ndarray of shape (t,)
        The repeat with the lowest score.
    all_labels : ndarray of shape (n_init, t)
        The labels of every repeat (the paper reports mean and spread over them).
    scores : ndarray of shape (n_init,)
        The score of every repeat (lower is better).
    best : int
        Index of the kept repeat (the first among ties).
    """

    labels: np.ndarray
    all_labels: np.ndarray
    scores: np.ndarray
    best: int


def _distance_to_equivalence(M: np.ndarray, labels: np.ndarray, n_clusters: int) -> float:
    return float(np.sum((M - equivalence_matrix(labels, n_clusters)) ** 2))


def round_equivalence(M, n_clusters: int, *, n_init: int = 10, random_state=None, score=None) -> RoundingResult:
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
    random_state : int, RandomState instance or None
        Seeds the repeats.
    score : callable, optional
        ``score(labels) -> float``, lower is better.

    Returns
    -------
    RoundingResult
    """
    M = check_square_matrix(M, "M")
    d = check_n_clusters(n_clusters, M.shape[0])
    n_init = check_int_range(n_init, "n_init", 1)
    if score is not None and not callable(score):
        raise ValueError(f"score must be a callable labels -> float, got {score!r}")
    rng = check_random_state(random_state)
    U = normalize(spectral_embedding(M, d), norm="l2", axis=1)
    all_labels = np.empty((n_init, M.shape[0]), dtype=np.intp)
    scores = np.empty(n_init)
    for r in range(n_init):
        km = KMeans(n_clusters=d, n_init=1, random_state=rng.randint(np.iinfo(np.int32).max))
        all_labels[r] = km.fit_predict(U)
        scores[r] = _distance_to_equivalence(M, all_labels[r], d) if score is None else float(score(all_labels[r]))
    best = int(np.argmin(scores))
    return RoundingResult(labels=all_labels[best].copy(), all_labels=all_labels, scores=scores, best=best)


# --------------------------------------------------------------------------------------------
# the B-step of (14)
# --------------------------------------------------------------------------------------------

def _solve_increasing(g, target: np.ndarray, max_iter: int = 400) -> np.ndarray:
    """Entrywise root of the strictly increasing, continuous ``g(b) = target`` on the real line,
    by doubling brackets then bisection to relative machine precision."""
    lo = np.full(target.shape, -1.0)
    hi = np.full(target.shape, 1.0)
    for _ in range(1100):  # brackets up to +-2^1100 would overflow: stops far earlier in practice
        low_bad = g(lo) > target
        high_bad = g(hi) < target
        if not (low_bad.any() or high_bad.any()):
            break
        lo = np.where(low_bad, 2.0 * lo, lo)
        hi = np.where(high_bad, 2.0 * hi, hi)
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        # converged to relative machine precision (absolute 1e-300 near zero)
        done = hi - lo <= 2 * np.finfo(float).eps * np.maximum(np.maximum(np.abs(lo), np.abs(hi)), 1e-300)
        if done.all():
            break
        below = g(mid) < target
        lo = np.where(below & ~done, mid, lo)
        hi = np.where(~below & ~done, mid, hi)
    # of the two adjacent floats, the one with the smaller residual
    return np.where(np.abs(g(lo) - target) <= np.abs(g(hi) - target), lo, hi)


def conditional_centres(means, divergence, alpha: float) -> np.ndarray:
    r"""The minimisers b_j of the B-step of (14): ``f^{-1}(b_j) + alpha b_j = xbar_j`` (*).

    See the module docstring for the derivation and the closed forms.

    Parameters
    ----------
    means : array-like of shape (k, n)
        Cluster means, in the domain of F.
    divergence : str or Divergence
    alpha : float > 0

    Returns
    -------
    B : ndarray of shape (k, n)
        In the domain of F* (the range of f).
    """
    div = get_divergence(divergence)
    check_positive(alpha, "alpha")
    m = div.check_domain(means, "means")
    if isinstance(div, SquaredEuclidean):
        return m / (1.0 + alpha)
    if isinstance(div, Mahalanobis):
        A = np.eye(div.n_features) + alpha * div.W
        return np.linalg.solve(A, (m @ div.W).T).T  # W symmetric: rows of W m, solved with (I + aW)
    if isinstance(div, ItakuraSaito):
        return -2.0 / (m + np.sqrt(m * m + 4.0 * alpha))
    # separable F whose conjugate is finite on the whole line (generalized KL, logistic)
    return _solve_increasing(lambda b: div.inverse_transfer(b) + alpha * b, m)


# --------------------------------------------------------------------------------------------
# the three hard objectives, as small models for one alternation engine
# --------------------------------------------------------------------------------------------

class _HardModel:
    """(6): centres are the cluster means; cost D_F(x_i, mu_j)."""

    relocate = True

    def __init__(self, X: np.ndarray, div: Divergence, k: int):
        self.X, self.div, self.k = X, div, k
        self.t = X.shape[0]

    def means(self, labels: np.ndarray) -> np.ndarray:
        counts = np.bincount(labels, minlength=self.k)
        sums = np.zeros((self.k, self.X.shape[1]))
        np.add.at(sums, labels, self.X)
        mu = np.tile(self.X.mean(axis=0), (self.k, 1))  # empty clusters: a placeholder in the domain
        nonempty = counts > 0
        mu[nonempty] = sums[nonempty] / counts[nonempty, None]
        return mu

    def refit(self, labels):
        return {"centres": self.means(labels), "counts": np.bincount(labels, minlength=self.k)}

    def costs(self, params) -> np.ndarray:
        C = np.empty((self.t, self.k))
        for j, mu in enumerate(params["centres"]):
            C[:, j] = self.div.divergence_rows(self.X, np.broadcast_to(mu, self.X.shape))
        C[:, params["counts"] == 0] = np.inf
        return C

    def point_losses(self, C: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return C[np.arange(self.t), labels]

    def objective(self, labels, params) -> float:
        return self.div.divergence(self.X, params["centres"][labels])

    def phi(self, m: np.ndarray) -> float:
        return -self.div.F(m)

    def psi(self, n: int) -> float:
        return 0.0


class _ConditionalModel(_HardModel):
    """(14): centres b_j from (*); cost F*(b_j) + alpha/2 ||b_j||^2 - <x_i, b_j> (+ F(x_i))."""

    def __init__(self, X, div, k, alpha: float):
        super().__init__(X, div, k)
        self.alpha = alpha
        self._Fx = None

    def refit(self, labels):
        counts = np.bincount(labels, minlength=self.k)
        return {"centres": conditional_centres(self.means(labels), self.div, self.alpha), "counts": counts}

    def _offsets(self, B):
        return np.array([self.div.conjugate(b) for b in B]) + 0.5 * self.alpha * np.sum(B * B, axis=1)

    def costs(self, params):
        B = params["centres"]
        C = self._offsets(B)[None, :] - self.X @ B.T
        C[:, params["counts"] == 0] = np.inf
        return C

    def point_losses(self, C, labels):
        if self._Fx is None:
            self._Fx = np.array([self.div.F(x) for x in self.X])
        return C[np.arange(self.t), labels] + self._Fx

    def objective(self, labels, params):
        YB = params["centres"][labels]
        return self.div.dual_divergence(YB, self.X) + 0.5 * self.alpha * float(np.sum(YB * YB))

    def phi(self, m):
        b = conditional_centres(m[None, :], self.div, self.alpha)[0]
        return self.div.conjugate(b) - float(m @ b) + 0.5 * self.alpha * float(b @ b)


class _JointModel(_HardModel):
    """Section 5 with the profile prior w_j = log(n_j / t): cost D_F(x_i, mu_j) - w_j."""

    relocate = False

    def refit(self, labels):
        params = super().refit(labels)
        with np.errstate(divide="ignore"):
            params["log_prior"] = np.log(params["counts"] / self.t)
        return params

    def costs(self, params):
        return super().costs(params) - params["log_prior"][None, :]

    def objective(self, labels, params):
        counts = params["counts"]
        return super().objective(labels, params) - float(np.sum(xlogy(counts, counts / self.t)))

    def psi(self, n):
        return -float(xlogy(n, n / self.t))


# --------------------------------------------------------------------------------------------
# the alternation engine
# --------------------------------------------------------------------------------------------

@dataclass
class LocalResult:
    """Outcome of a local (re-)optimisation of a hard clustering objective.

    Attributes
    ----------
    labels : ndarray of shape (t,)
        The best run's labels.
    objective : float
        Its objective: D_F(X, Y Gamma) (6), the value of (14), or the joint negative
        log-likelihood ``D_F(X, Y Gamma) - sum_j n_j log(n_j / t)`` (constants dropped).
    iterations : int
        Iterations of the best run.
    status : str
        ``"optimal"`` (a fixed point), or the IterationMonitor reason a limit was hit.
    centres : ndarray of shape (d, n)
        Gamma (the means) for (6) and the joint model, B for (14).
    prior : ndarray of shape (d,) or None
        Joint model only: the cluster prior ``softmax(w) = n / t``.
    history : list of float
        The best run's objective after every iteration (non-increasing).
    restart_objectives : ndarray of shape (n_runs,)
        Final objective of every run (random restarts, or the single run from ``init``).
    method : str
    """

    labels: np.ndarray
    objective: float
    iterations: int
    status: str
    centres: np.ndarray
    prior: np.ndarray | None = None
    history: list = field(default_factory=list)
    restart_objectives: np.ndarray = field(default_factory=lambda: np.empty(0))
    method: str = ""


def random_partition(n_samples: int, n_clusters: int, random_state=None) -> np.ndarray:
    """A uniformly random assignment with every cluster non-empty and sizes within one of each
    other (a random permutation of ``0, 1, ..., d-1, 0, 1, ...``): the paper's random Y."""
    n_clusters = check_n_clusters(n_clusters, n_samples)
    rng = check_random_state(random_state)
    return rng.permutation(np.arange(n_samples) % n_clusters).astype(np.intp)


def _fill_empty(model: _HardModel, labels: np.ndarray, C: np.ndarray) -> np.ndarray:
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


def _single_moves(model: _HardModel, labels: np.ndarray, tol_abs: float) -> tuple[np.ndarray, int]:
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


def _run(model: _HardModel, labels: np.ndarray, method: str, *, refine: bool, tol: float, max_iter: int,
         time_limit: float):
    """Alternate Y-step / parameter step from ``labels`` until a fixed point or a limit."""
    k = model.k
    if model.relocate and np.bincount(labels, minlength=k).min() == 0:
        labels = _fill_empty(model, labels, model.costs(model.refit(labels)))
    params = model.refit(labels)
    obj = model.objective(labels, params)
    history = [obj]
    monitor = IterationMonitor(method, tol=tol, max_iter=max_iter, time_limit=time_limit)
    for _ in monitor:
        C = model.costs(params)
        current = C[np.arange(model.t), labels]
        new = np.argmin(C, axis=1)
        new = np.where(current <= C[np.arange(model.t), new], labels, new)  # keep on ties
        if model.relocate:
            new = _fill_empty(model, new, C)
        moved = not np.array_equal(new, labels)
        if not moved and refine:
            new, n_moves = _single_moves(model, labels, tol_abs=tol * max(abs(obj), 1.0))
            moved = n_moves > 0
        if not moved:
            monitor.record(objective=obj)
            monitor.converged()
            break
        labels, params = new, model.refit(new)
        new_obj = model.objective(labels, params)
        history.append(new_obj)
        monitor.record(objective=new_obj)
        obj = new_obj
    return labels, params, obj, monitor, history


def _prepare(X, divergence, n_clusters, init, n_init, random_state, refine, tol, max_iter, time_limit):
    div = get_divergence(divergence)
    X = check_data_matrix(X, "X")
    X = div.check_domain(X, "X")
    k = check_n_clusters(n_clusters, X.shape[0])
    n_init = check_int_range(n_init, "n_init", 1)
    check_bool(refine, "refine")
    check_positive(tol, "tol")
    check_int_range(max_iter, "max_iter", 1)
    check_positive(time_limit, "time_limit", allow_inf=True)
    if init is not None:
        if n_init != 1:
            raise ValueError(f"n_init must be 1 when init labels are given, got {n_init}")
        inits = [check_labels(init, X.shape[0], k, name="init").astype(np.intp)]
    else:
        rng = check_random_state(random_state)
        inits = [random_partition(X.shape[0], k, rng) for _ in range(n_init)]
    return X, div, k, inits


def _best_of(model, inits, method, refine, tol, max_iter, time_limit) -> LocalResult:
    best, objectives = None, []
    for labels0 in inits:
        labels, params, obj, monitor, history = _run(model, labels0, method, refine=refine, tol=tol,
                                                    max_iter=max_iter, time_limit=time_limit)
        objectives.append(obj)
        if best is None or obj < best[2]:
            best = (labels, params, obj, monitor, history)
    labels, params, obj, monitor, history = best
    prior = np.exp(params["log_prior"]) if "log_prior" in params else None
    return LocalResult(labels=labels, objective=float(obj), iterations=monitor.iterations, status=monitor.status,
                       centres=params["centres"], prior=prior, history=history,
                       restart_objectives=np.asarray(objectives), method=method)


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
    random_state : int, RandomState instance or None
        Seeds the random restarts.

    Returns
    -------
    LocalResult
"""


def bregman_hard_clustering(X, divergence, n_clusters: int, *, init=None, n_init: int = 1, refine: bool = False,
                            tol: float = 1e-10, max_iter: int = 300, time_limit: float = np.inf,
                            random_state=None) -> LocalResult:
    r"""Hard Bregman clustering, Banerjee et al. (2005) Algorithm 1: :math:`\min_{Y,\Gamma} D_F(X, Y\Gamma)` (6).

    Alternates ``y_i = argmin_j D_F(x_i, mu_j)`` and ``mu_j = mean of cluster j`` (the optimal
    Gamma for any Bregman divergence, Section 3.1); the objective never increases.  An emptied
    cluster receives the worst-fitted point of a cluster with two or more members (this only
    lowers the objective; see the module docstring).  ``n_init=30`` random restarts is the
    paper's altCondJC; ``init`` from a rounded relaxation is cvxCondJC's re-optimisation.
    For the squared Euclidean divergence this is Lloyd's k-means (objective = inertia / 2).
    """
    X, div, k, inits = _prepare(X, divergence, n_clusters, init, n_init, random_state, refine, tol, max_iter,
                                time_limit)
    return _best_of(_HardModel(X, div, k), inits, "bregman_hard_clustering", refine, tol, max_iter, time_limit)


def conditional_hard_clustering(X, divergence, n_clusters: int, *, alpha: float, init=None, n_init: int = 1,
                                refine: bool = False, tol: float = 1e-10, max_iter: int = 300,
                                time_limit: float = np.inf, random_state=None) -> LocalResult:
    r"""Alternating minimisation of (14): :math:`\min_{Y,B} D_{F^*}(YB, f(X)) + \frac{\alpha}{2}\|YB\|_F^2`.

    B-step: each row b_j solves ``f^{-1}(b_j) + alpha b_j = xbar_j`` (:func:`conditional_centres`,
    closed form for the Euclidean, Mahalanobis and Itakura-Saito divergences, bisection to machine
    precision otherwise); Y-step: ``y_i = argmin_j F*(b_j) + alpha/2 ||b_j||^2 - <x_i, b_j>``.
    ``n_init=30`` random restarts is the paper's altCond; ``init`` from a rounded relaxation is
    cvxCond's re-optimisation.  ``alpha`` (> 0) is the weight of (14); ``centres`` is B.
    """
    check_positive(alpha, "alpha")
    X, div, k, inits = _prepare(X, divergence, n_clusters, init, n_init, random_state, refine, tol, max_iter,
                                time_limit)
    return _best_of(_ConditionalModel(X, div, k, float(alpha)), inits, "conditional_hard_clustering", refine,
                    tol, max_iter, time_limit)


def joint_hard_clustering(X, divergence, n_clusters: int, *, init=None, n_init: int = 1, refine: bool = False,
                          tol: float = 1e-10, max_iter: int = 300, time_limit: float = np.inf,
                          random_state=None) -> LocalResult:
    r"""Local optimisation of the joint likelihood of Section 5: :math:`\min_{Y,w,B} -1'Yw + t g(w) + L(YB)`.

    Alternates ``y_i = argmin_j D_F(x_i, mu_j) - w_j`` and ``mu_j`` = cluster means,
    ``w_j = log(n_j / t)``; the objective is ``D_F(X, Y Gamma) - sum_j n_j log(n_j / t)`` (the
    module docstring derives it).  Clusters may empty (their prior becomes 0).  ``prior`` is
    ``softmax(w) = n / t``.  This is cvxJoint's re-optimisation (Section 6.4).
    """
    X, div, k, inits = _prepare(X, divergence, n_clusters, init, n_init, random_state, refine, tol, max_iter,
                                time_limit)
    return _best_of(_JointModel(X, div, k), inits, "joint_hard_clustering", refine, tol, max_iter, time_limit)


for _fn in (bregman_hard_clustering, conditional_hard_clustering, joint_hard_clustering):
    _fn.__doc__ += _HARD_DOC_PARAMS  # the shared numpydoc sections
del _fn


# --------------------------------------------------------------------------------------------
# soft EM
# --------------------------------------------------------------------------------------------

@dataclass
class SoftResult:
    """Outcome of :func:`soft_bregman_em` (the best restart).

    Attributes
    ----------
    responsibilities : ndarray of shape (t, d)
        Posteriors p(y = j | x_i).
    labels : ndarray of shape (t,)
        ``argmax_j q_j exp(-D_F(x_i, mu_j))``, the paper's hard assignment for soft EM.
    prior : ndarray of shape (d,)
        q.
    centres : ndarray of shape (d, n)
        mu_j.
    log_likelihood : float
        ``sum_i log sum_j q_j exp(-D_F(x_i, mu_j))`` (base measure dropped).
    iterations, status, history, restart_log_likelihoods, method
        As in :class:`LocalResult`; ``history`` is non-decreasing.
    """

    responsibilities: np.ndarray
    labels: np.ndarray
    prior: np.ndarray
    centres: np.ndarray
    log_likelihood: float
    iterations: int
    status: str
    history: list = field(default_factory=list)
    restart_log_likelihoods: np.ndarray = field(default_factory=lambda: np.empty(0))
    method: str = "soft_bregman_em"


def _log_joint(X, div, prior, centres) -> np.ndarray:
    """log q_j - D_F(x_i, mu_j), shape (t, d)."""
    L = np.empty((X.shape[0], centres.shape[0]))
    with np.errstate(divide="ignore"):
        logq = np.log(prior)
    for j, mu in enumerate(centres):
        L[:, j] = logq[j] - div.divergence_rows(X, np.broadcast_to(mu, X.shape))
    return L


def _m_step(X, R):
    weight = R.sum(axis=0)
    prior = weight / X.shape[0]
    centres = np.tile(X.mean(axis=0), (R.shape[1], 1))  # a dead component keeps a placeholder
    alive = weight > 0
    centres[alive] = (R[:, alive].T @ X) / weight[alive, None]
    return prior, centres


def soft_bregman_em(X, divergence, n_clusters: int, *, n_init: int = 20, tol: float = 1e-10, max_iter: int = 500,
                    time_limit: float = np.inf, random_state=None) -> SoftResult:
    r"""Soft Bregman clustering, Banerjee et al. (2005) Algorithm 3: EM for the mixture (1)-(2).

    .. math::

        \text{E: } \gamma_{ij} = \frac{q_j e^{-D_F(x_i, \mu_j)}}{\sum_l q_l e^{-D_F(x_i, \mu_l)}},
        \qquad \text{M: } q_j = \frac1t \sum_i \gamma_{ij},\
        \mu_j = \frac{\sum_i \gamma_{ij} x_i}{\sum_i \gamma_{ij}},

    which maximises the log-likelihood ``sum_i log sum_j q_j exp(-D_F(x_i, mu_j))`` monotonically
    (the weighted mean is the exact M-step for every Bregman divergence).  Each restart starts
    from the M-step of a :func:`random_partition`; the restart with the highest log-likelihood is
    kept (20 restarts in Section 6.4).  A run stops when the log-likelihood rises by at most
    ``tol * |log-likelihood|``.

    Parameters
    ----------
    X : array-like of shape (t, n)
        Data, in the domain of the divergence.
    divergence : str or Divergence
    n_clusters : int
        d, between 2 and t.
    n_init : int >= 1
    tol : float > 0
    max_iter : int >= 1
    time_limit : float > 0
        Per restart.
    random_state : int, RandomState instance or None

    Returns
    -------
    SoftResult
    """
    div = get_divergence(divergence)
    X = div.check_domain(check_data_matrix(X, "X"), "X")
    k = check_n_clusters(n_clusters, X.shape[0])
    n_init = check_int_range(n_init, "n_init", 1)
    check_positive(tol, "tol")
    check_int_range(max_iter, "max_iter", 1)
    check_positive(time_limit, "time_limit", allow_inf=True)
    rng = check_random_state(random_state)
    best, lls = None, []
    for _ in range(n_init):
        labels0 = random_partition(X.shape[0], k, rng)
        prior, centres = _m_step(X, np.eye(k)[labels0])
        L = _log_joint(X, div, prior, centres)
        ll = float(np.sum(logsumexp(L, axis=1)))
        history = [ll]
        monitor = IterationMonitor("soft_bregman_em", tol=tol, max_iter=max_iter, time_limit=time_limit)
        for _ in monitor:
            R = np.exp(L - logsumexp(L, axis=1, keepdims=True))
            prior, centres = _m_step(X, R)
            L = _log_joint(X, div, prior, centres)
            new_ll = float(np.sum(logsumexp(L, axis=1)))
            history.append(new_ll)
            monitor.record(objective=new_ll)
            gain, ll = new_ll - ll, new_ll
            if gain <= tol * max(abs(ll), 1.0):
                monitor.converged()
        lls.append(ll)
        if best is None or ll > best[0]:
            best = (ll, L, prior, centres, monitor, history)
    ll, L, prior, centres, monitor, history = best
    R = np.exp(L - logsumexp(L, axis=1, keepdims=True))
    return SoftResult(responsibilities=R, labels=np.argmax(L, axis=1).astype(np.intp), prior=prior, centres=centres,
                      log_likelihood=ll, iterations=monitor.iterations, status=monitor.status, history=history,
                      restart_log_likelihoods=np.asarray(lls))
