"""Pieces of the greedy local searches over labelings (cluhsic and cluhsical): the statistics
``K Pi`` and ``S = Pi^T K Pi`` of a labeling, their O(m + c) update when one point moves, the
statistics with one point taken out, the sweep over the points, random restarts, starts that
ignore the structure, and the relabelling of whole clusters."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
from sklearn.cluster import KMeans

from .kernels import kernel_embedding
from .solvers import SolverState


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


def remove_point(S: np.ndarray, sizes: np.ndarray, r: np.ndarray, kii: float, a: int):
    """The statistics with point i (in cluster ``a``, ``r`` its row of ``K Pi``, ``kii = K_ii``)
    taken out, as new arrays: ``r0 = r - K_ii e_a``, ``S0 = S - e_a r0^T - r0 e_a^T - K_ii e_a e_a^T``
    and ``n0 = n - e_a``; inserting i into cluster b changes only row and column b of S0."""
    r0 = r.copy()
    r0[a] -= kii
    S0 = S.copy()
    S0[a, :] -= r0
    S0[:, a] -= r0
    S0[a, a] -= kii
    n0 = sizes.copy()
    n0[a] -= 1
    return r0, S0, n0


@dataclass(kw_only=True, eq=False)
class SweepState(SolverState):
    """The state of a :class:`SweepSearch`: the labels and their statistics
    (:func:`labeling_statistics`), the diagonal of K, the objective and that of the start."""

    labels: np.ndarray
    KPi: np.ndarray
    S: np.ndarray
    sizes: np.ndarray
    diag: np.ndarray
    objective: float = np.nan
    start: float = np.nan
    #: the magnitude a solver measures the gain of a move against (where it needs one)
    scale: float = 0.0


class SweepSearch:
    """The iteration of a greedy local search, to mix into a
    :class:`cvxclust.solvers.IterativeSolver`: one iteration is one sweep over the free points
    in random order, each moved to the cluster of the largest score when that gains more than
    :meth:`min_gain`; a sweep with no move ends the run (:meth:`converge`).

    The solver holds ``K``, ``free`` (the indices that may move), ``rng`` and ``n_clusters``; its
    state is a :class:`SweepState`.  It defines :meth:`scores` and :meth:`value`.
    """

    def scores(self, state, i: int, a: int) -> np.ndarray:
        """A score per cluster for point ``i`` (now in ``a``): the objective, or the objective
        up to a constant, after moving it there."""
        raise NotImplementedError

    def min_gain(self, state, current: float) -> float:
        """The score increase a move must exceed (``current`` is the score of staying)."""
        raise NotImplementedError

    def value(self, state) -> float:
        """The objective of the labeling of ``state`` from its statistics."""
        raise NotImplementedError

    def start_state(self, labels: np.ndarray):
        """The state of the search from ``labels`` (taken over, not copied)."""
        KPi, S, sizes = labeling_statistics(self.K, labels, self.n_clusters)
        state = SweepState(labels=labels, KPi=KPi, S=S, sizes=sizes, diag=np.diag(self.K).copy())
        state.objective = state.start = self.value(state)
        return state

    def step(self, state, iteration):
        moves = 0
        for i in self.rng.permutation(self.free):
            a = state.labels[i]
            values = self.scores(state, i, a)
            b = int(np.argmax(values))
            if values[b] - values[a] <= self.min_gain(state, values[a]):
                continue
            move_point(self.K, state.KPi, state.S, state.sizes, state.labels, i, b)
            moves += 1
        # recompute once per sweep (O(m^2 c), the cost of the sweep) so no rounding drift builds up
        state.KPi, state.S, state.sizes = labeling_statistics(self.K, state.labels, self.n_clusters)
        state.objective = self.value(state)
        if moves == 0:
            self.converge()
        row = {"objective": state.objective, "moves": moves}
        if iteration == 0:
            row["start_objective"] = state.start
        return row


def structure_free_starts(K: np.ndarray, n_clusters: int, n_starts: int, *, known=None, rng=None) -> list[np.ndarray]:
    """``n_starts`` partitions by k-means (one k-means++ run each) on the kernel-PCA embedding of
    K (:func:`cvxclust.kernels.kernel_embedding`, computed once), known labels imposed; none
    when K has no positive eigenvalue."""
    rng = np.random.default_rng(rng)
    try:
        embedding = kernel_embedding(K)
    except ValueError:
        return []
    starts = []
    for _ in range(n_starts):
        labels = KMeans(n_clusters, n_init=1, random_state=int(rng.integers(2**31))).fit_predict(embedding)
        if known is not None:
            labels[known >= 0] = known[known >= 0]
        starts.append(labels.astype(int))
    return starts


def best_refinement(refine, labels: np.ndarray, K: np.ndarray, n_clusters: int, n_starts: int, *, known=None,
                    rng=None) -> np.ndarray:
    """The labels of the best ``refine(start) -> (labels, value)`` over ``labels`` and
    ``n_starts`` :func:`structure_free_starts` (the refinement of both structured estimators)."""
    starts = [labels, *structure_free_starts(K, n_clusters, n_starts, known=known, rng=rng)]
    return max((refine(start) for start in starts), key=lambda refined: refined[1])[0]


def best_relabelling(value, n_clusters: int, *, fixed=(), n_starts: int = 20, rng=None) -> np.ndarray:
    """The relabelling ``sigma`` (cluster k becomes ``sigma[k]``) that maximizes ``value(sigma)``
    among those found by swapping two labels while that gains, from the identity and from
    ``n_starts - 1`` random permutations; clusters in ``fixed`` (holding known points) keep their
    label.  Never worse than the identity.  ``value`` is cheap: a function of c x c statistics."""
    rng = np.random.default_rng(rng)
    identity = np.arange(n_clusters)
    free = np.setdiff1d(identity, np.asarray(fixed, dtype=int))
    best, best_value = identity, value(identity)
    if free.size < 2:
        return best
    pairs = list(itertools.combinations(free, 2))
    for start in range(n_starts):
        sigma = identity.copy()
        if start:
            sigma[free] = rng.permutation(sigma[free])
        current = value(sigma)
        improved = True
        while improved:
            improved = False
            for a, b in pairs:
                sigma[[a, b]] = sigma[[b, a]]
                candidate = value(sigma)
                if candidate > current + 1e-12 * abs(current):
                    current, improved = candidate, True
                else:
                    sigma[[a, b]] = sigma[[b, a]]
        if current > best_value + 1e-12 * abs(best_value):
            best, best_value = sigma.copy(), current
    return best


def relabelled_statistics(S: np.ndarray, sizes: np.ndarray, sigma: np.ndarray):
    """``S`` and the sizes after relabelling cluster k as ``sigma[k]``."""
    inverse = np.argsort(sigma)
    return S[np.ix_(inverse, inverse)], sizes[inverse]
