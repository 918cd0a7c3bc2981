r"""Greedy local optimization of CLUHSICAL (Sections II and IV-A-2).

The paper does not solve the integer programs (11)/(13) exactly: "we will simply follow CLUHSIC
and obtain an approximate solution by greedy local optimization" -- sweep the points, move each to
the cluster with the largest objective, repeat until no assignment changes (Section II).

Unnormalized, :math:`\operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top) =
\operatorname{tr}(K\Pi\,LAL^\top\,\Pi^\top)` is CLUHSIC's (2) with output kernel
:math:`LAL^\top`, so :func:`cvxclust.hsic.greedy` does it.  Normalized, the column
normalizers depend on all cluster sizes (:math:`\nu = |L|^\top n` for l1), so moving one point
rescales every column; the objective is still a function of c x c statistics only:

.. math:: f = \sum_{jl} w_j w_l A_{jl} \tilde S_{jl}\ \ (\text{l1, (13)}),\qquad
          f = \tilde C\sum_{jl} w_j w_l A_{jl} \tilde S_{jl}
              - \frac{C}{m}\sum_k w_k \nu_k\ \ (\text{l2, (11)}),

with :math:`\tilde S = \tilde\Pi^\top K\tilde\Pi = L^\top S L`, :math:`S = \Pi^\top K\Pi`,
:math:`w_k` the inverse column norm (l1 or l2) and :math:`\nu_k` the column l1 norm of
:math:`\tilde\Pi`, all from the sizes n (:func:`~cvxclust.cluhsical.column_norms`).

Each run from one start is a :class:`cvxclust.solvers.IterativeSolver` (one iteration = one
sweep): a local search has no certificate of optimality, so a sweep with no move ends it with
status ``"converged"``.
"""

from __future__ import annotations

import dataclasses
import time
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from .._checks import check_labels
from .._kernel_estimators import RANDOM_STATE
from .._local_search import SweepSearch, best_of_starts, remove_point
from ..hsic import greedy as trace_greedy
from ..parameters import Interval, Options, check_parameters
from ..result import Result
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param
from ._output_kernels import equivalent_output_kernel
from ._overflow import finite_result
from ._partition import (
    augmentation,
    augmented_partition,
    check_C,
    check_problem,
    inverse_norms,
)

__all__ = ["greedy"]


class NormalizedObjective:
    """The CLUHSICAL objective as a function of ``S~ = L^T S L`` and the sizes, for one size
    vector or a batch of them (one row per candidate cluster); ``normalization=None`` gives the
    unnormalized ``sum(A o S~)`` (w = 1)."""

    def __init__(self, A, loss, normalization, m, C, gamma):
        self.A, self.loss, self.normalization = A, loss, normalization
        self.L = augmentation(loss)
        # column norms are linear in the sizes (column_norms): nu = n |L|, ||.||_2^2 = n (L o L)
        self.abs_L, self.square_L = np.abs(self.L), self.L * self.L
        if normalization == "l2":
            self.weight, self.penalty = 4.0 * C**2 * gamma / m**2, C / m
        else:
            self.weight, self.penalty = 1.0, 0.0

    def weights(self, sizes):
        """Inverse column norms w and (l2) the l1 norms of the normalized columns, w * nu."""
        nu = sizes @ self.abs_L
        if self.normalization is None:
            return np.ones_like(nu), None
        if self.normalization == "l1":
            return inverse_norms(nu), None
        w = inverse_norms(np.sqrt(sizes @ self.square_L))
        return w, w * nu

    def value(self, S, sizes) -> float:
        """f from the 0/1 statistics ``S = Pi^T K Pi`` and the sizes."""
        w, l1 = self.weights(sizes)
        f = self.weight * float(w @ ((self.A * (self.L.T @ S @ self.L)) @ w))
        return f - self.penalty * float(l1.sum()) if self.penalty else f

    def candidates(self, S, sizes, r, kii, a):
        r"""f after moving point i (in cluster a) to each cluster b, for all b at once.

        With i removed: ``r0 = Pi0^T K e_i = r - K_ii e_a``, ``S0 = S - e_a r0^T - r0 e_a^T -
        K_ii e_a e_a^T``, ``n0 = n - e_a``; with ``T = L^T S0 L``, ``u = L^T r0`` and
        ``l_b = L^T e_b`` (row b of L), inserting i into b gives
        ``S~_b = T + u l_b^T + l_b u^T + K_ii l_b l_b^T`` and sizes ``n0 + e_b``, so

        .. math:: f_b = w_b^\top (A\circ T) w_b + 2 (w_b\circ u)^\top A (w_b\circ l_b)
                  + K_{ii} (w_b\circ l_b)^\top A (w_b\circ l_b)

        (times C~, minus the penalty, for l2): O(c^3) for the c candidates, from c x c
        statistics only.  ``f_a`` is the current objective.
        """
        L, A = self.L, self.A
        r0, S0, n0 = remove_point(S, sizes, r, kii, a)
        W, l1 = self.weights(n0[None, :] + np.eye(L.shape[0]))  # row b: sizes with i in b
        T = L.T @ S0 @ L
        u = L.T @ r0
        WL = W * L  # row b: w_b o l_b
        WU = W * u[None, :]
        f = (np.einsum("bj,jl,bl->b", W, A * T, W) + 2.0 * np.einsum("bj,jl,bl->b", WU, A, WL)
             + kii * np.einsum("bj,jl,bl->b", WL, A, WL))
        f = self.weight * f
        return f - self.penalty * l1.sum(axis=1) if self.penalty else f


class LocalSearch(SweepSearch, IterativeSolver):
    """One run of the greedy of :func:`greedy` from one start, for the l1 or l2 normalization;
    one iteration is one sweep over the free points in random order."""

    method = "cluhsical-greedy"
    sense = "maximize"
    parameters = IterativeSolver.parameters | {
        # the smallest relative gain that counts as a move: above rounding noise, or ties could cycle
        "tol": Param(1e-12, POSITIVE),
        "max_iter": Param(100, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
    }

    def __init__(self, K, model, loss, labels, free, rng, scale, **params):
        super().__init__(None, **params)
        self.K, self.model, self.loss, self.start, self.free, self.rng, self.scale = (
            K, model, loss, labels, free, rng, scale)
        self.n_clusters = model.A.shape[0]

    def size(self) -> int:
        return self.K.shape[0]

    def init_state(self):
        return self.start_state(self.start)

    def scores(self, state, i, a):
        return self.model.candidates(state.S, state.sizes, state.KPi[i], state.diag[i], a)

    def min_gain(self, state, current):
        return self.tol * max(abs(current), self.scale)

    def value(self, state):
        return self.model.value(state.S, state.sizes)

    def is_check(self, state, iteration):
        return True  # a check costs O(m c): the objective is already known

    def certify(self, state, bound, final=False):
        X = augmented_partition(state.labels, self.loss, self.model.normalization)
        return Certificate(X, None, objective=state.objective, residuals={})

    def extras(self, state):
        return {"labels": state.labels}


#: the parameters of :func:`greedy` besides the arrays (:mod:`cvxclust.parameters`)
PARAMETERS = {
    "normalization": [Options(None, "l1", "l2")],
    "C": [Interval(Real, 0, None, closed="neither"), None],
    "gamma": [Interval(Real, 0, None, closed="neither")],
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "tol": LocalSearch.parameters["tol"].constraints,
    "max_iter": LocalSearch.parameters["max_iter"].constraints,
    "time_limit": LocalSearch.parameters["time_limit"].constraints,
    "random_state": RANDOM_STATE,
}


@finite_result("K and A")
def greedy(K, A, loss, *, normalization="l1", C=None, gamma: float = 1.0, init=None, known=None,
           max_iter: int = 100, n_init: int = 1, tol: float = 1e-12, time_limit: float = np.inf,
           random_state=None) -> Result:
    r"""Greedy local optimization of CLUHSICAL (13), (11) or its unnormalized form.

    .. math:: \max_{\Pi}\ \operatorname{tr}(K\Pi_1 A\Pi_1^\top)\ \text{(13, "l1")},\quad
              \max_{\Pi}\ \tilde C\operatorname{tr}(K\Pi_2 A\Pi_2^\top) - \tfrac{C}{m}\|\Pi_2\|_1
              \ \text{(11, "l2")},\quad
              \max_{\Pi}\ \operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)\ \text{(None)},

    over hard assignments Pi, with :math:`\tilde\Pi = \Pi L` (12) and its l1/l2 column
    normalizations :math:`\Pi_1, \Pi_2` (:func:`~cvxclust.cluhsical.partition_matrix`).
    As the paper (Sections II, IV-A-2): sweep the free points in random order, move each to the
    cluster with the largest objective, stop after a sweep with no move (then no single move
    gains more than ``tol`` relative: a local optimum).

    * ``normalization=None`` is CLUHSIC (2) with output kernel :math:`LAL^\top`
      (:func:`~cvxclust.cluhsical.equivalent_output_kernel`) and runs
      :func:`cvxclust.hsic.greedy` on it (``normalization=None``); C and gamma are unused.
      (The unnormalized (11) would add :math:`-\frac{C}{m}\|\tilde\Pi\|_1 =
      -\frac{2C}{m}\sum_i(\Delta\mathbf 1)_{y_i}`, a constant for the zero-one, ring and
      balanced-tree losses; it is not included.)
    * "l1"/"l2": the column normalizers depend on every cluster size, so the c candidates of a
      point are scored from the c x c statistics :math:`S = \Pi^\top K\Pi` and the sizes in
      O(c^3) (module docstring); a move updates S in O(c) and :math:`K\Pi` in O(m).  The
      objective is never recomputed from the m x m kernel per candidate, only once per sweep
      (O(m^2 c), against rounding drift).

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric finite input kernel, centred by the caller.
    A : array-like of shape (c, c)
        Symmetric output kernel, ``2 <= c <= m``.
    loss : array-like of shape (c, c)
        :math:`\Delta` (zero diagonal, nonnegative, need not be symmetric).
    normalization : {"l1", "l2", None}
    C : float > 0, optional
        (11) with "l2"; default ``0.1 m`` (Section IV-A-2).
    gamma : float > 0
        The scale of the joint kernel in (11) with "l2" (Proposition 2); default 1 (Section
        IV-A-2).
    init : array-like of int, optional
        Starting labels (known points are overwritten with their labels); default uniformly
        random labels.  With ``init``, ``n_init`` must be 1.
    known : array-like of int, optional
        ``-1`` for free points, a fixed label otherwise; known points never move.
    max_iter : int
        Maximum number of sweeps; hitting it gives status ``"max_iter"`` and a
        ConvergenceWarning.
    n_init : int
        Random restarts; the best objective is kept.
    tol : float
        A move is made only if it raises the objective by more than ``tol * max(|f|, s)``, s a
        typical magnitude of the objective (``max|K| max|A|`` for l1, the bound on the trace
        term plus the penalty scale for l2).
    time_limit : float
        Seconds per run.
    random_state : int, RandomState or None
        Draws the starts and the sweep orders.

    Returns
    -------
    Result
        ``method="cluhsical-greedy"``; ``status`` ``"converged"`` (a local optimum),
        ``"max_iter"`` or ``"time_limit"``; ``objective`` the CLUHSICAL objective of the labels
        (:func:`~cvxclust.cluhsical.labels_objective`); ``X`` the (normalized) :math:`\tilde\Pi`
        of the labels; ``iterations`` the sweeps of the best run; ``history`` the objective and
        the number of moves after each sweep (the first row also holds ``start_objective``); no
        ``dual_bound``; ``time`` covers every run.
        ``extras["labels"]``: the cluster of each point, ``0 .. c - 1``.

    Raises
    ------
    ValueError or TypeError
        Naming ``K``, ``A``, ``loss``, ``init``, ``known`` or the parameter at fault.
    """
    params = check_parameters(PARAMETERS, {
        "normalization": normalization, "C": C, "gamma": gamma, "n_init": n_init, "tol": tol,
        "max_iter": max_iter, "time_limit": time_limit, "random_state": random_state}, "greedy")
    K, A, loss = check_problem(K, A, loss, at_most_m=True)
    m, c = K.shape[0], A.shape[0]
    known = np.full(m, -1) if known is None else check_labels(known, m, c, name="known", allow_unknown=True)
    if init is not None:
        init = check_labels(init, m, c, name="init")
        if n_init != 1:
            raise ValueError(f"n_init must be 1 when init is given, got {n_init}")
    return search(K, A, loss, normalization, check_C(C, m), float(gamma), init=init, known=known, n_init=n_init,
                  rng=check_random_state(random_state), tol=params["tol"], max_iter=params["max_iter"],
                  time_limit=params["time_limit"])


def search(K, A, loss, normalization, C: float, gamma: float, *, init, known, n_init: int, rng,
           **options) -> Result:
    """:func:`greedy` for checked inputs: ``known`` an array (-1 for free points), ``C`` given,
    ``rng`` a RandomState; ``options`` are ``tol``, ``max_iter`` and ``time_limit``."""
    m, c = K.shape[0], A.shape[0]
    if normalization is None:
        base = trace_greedy(K, equivalent_output_kernel(A, loss), normalization=None, init=init, known=known,
                            n_init=n_init, random_state=rng, **options)
        labels = base.extras["labels"]
        return dataclasses.replace(base, X=augmented_partition(labels, loss, None), method=LocalSearch.method,
                                   extras={"labels": labels})
    start = time.perf_counter()
    model = NormalizedObjective(A, loss, normalization, m, C, gamma)
    scale = float(np.abs(K).max() * np.abs(A).max())
    if normalization == "l2":
        # unit l2 columns: |trace term| <= C~ ||K||_2 sum|A| <= C~ m max|K| c^2 max|A|
        scale = model.weight * m * scale + model.penalty
    scale = max(scale, 1e-300)
    free = np.flatnonzero(known < 0)

    def run(labels):
        result = LocalSearch(K, model, loss, labels, free, rng, scale, **options).run()
        return result, result.objective

    best, _ = best_of_starts(run, m, c, known=known, init=init, n_init=n_init, rng=rng)
    return dataclasses.replace(best, time=time.perf_counter() - start)
