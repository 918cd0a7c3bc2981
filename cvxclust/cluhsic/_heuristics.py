r"""The non-SDP optimizers of CLUHSIC (2.3)/(2.4): greedy local search, the spectral relaxation
(Proposition 2), the concave-convex procedure (4.16)-(4.17) and the NMF baseline.

All of them maximize

.. math:: f(P) = \operatorname{tr}(K P A P^\top),\qquad P = \Pi \ \text{(2.3)}\quad\text{or}\quad
          P = \Pi(\Pi^\top\Pi)^{-1/2}\ \text{(2.4)},

for an input kernel K (m x m, centred by the caller: nothing here centres it) and an output kernel
A (c x c) on the clusters, or a relaxation of it, and return a :class:`HeuristicResult` whose
``objective`` is f of the returned *labels* (normalized or not as asked), so results of different
methods compare directly; ``relaxed_objective`` is the value of the continuous iterate where the
method has one.  Section 6.1.2 of the paper compares greedy and NMF (Table 1) with the SDP
relaxations; the spectral relaxation and CCCP are shown (Section 4) to reduce to the spectral
relaxation of k-means (4.15), A playing no part.

Semi-supervised use (Section 6): ``known`` is an int array of length m with ``-1`` for an unknown
point and its fixed label otherwise; greedy and NMF never move the known points.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
import scipy.linalg as sla
from sklearn.cluster import KMeans
from sklearn.utils import check_random_state

from .._checks import check_bool, check_int_range, check_positive, check_square_matrix
from .._local_search import best_of_starts, labeling_statistics, move_point
from .._stopping import IterationMonitor
from ..rounding import spectral_embedding
from ..structures import check_output_kernel
from ._objectives import check_labels, objective, partition_matrix

__all__ = ["HeuristicResult", "cccp", "greedy", "nmf", "spectral"]


@dataclass
class HeuristicResult:
    """Outcome of a CLUHSIC heuristic.

    Attributes
    ----------
    labels : ndarray of int, shape (m,)
        Cluster of each point, ``0..c-1``; column k of the partition matrix is cluster k of A.
    objective : float
        ``tr(K P A P^T)`` of ``labels`` with the caller's K, P normalized as (2.4) if
        ``normalized`` else Pi as (2.3).
    method : str
    status : str
        ``"optimal"`` (the method's own stopping rule met: a local optimum for greedy, a
        stationary objective for CCCP, a stationary iterate for NMF, exact for spectral),
        ``"max_iter"``, ``"time_limit"``.
    iterations : int
        Sweeps (greedy), updates (CCCP, NMF), 1 (spectral).
    time : float
        Wall seconds.
    P : ndarray of shape (m, c)
        The continuous solution (spectral, CCCP, NMF) or the partition matrix of ``labels``
        (greedy).
    relaxed_objective : float or None
        The value of ``P`` for the problem the method optimizes (4.13 for spectral and CCCP,
        the shifted-kernel objective for NMF); None for greedy.
    history : list of dict
        Per sweep/iteration figures; the first row (iteration 0) is the starting point.
    """

    labels: np.ndarray
    objective: float
    method: str
    status: str
    iterations: int
    time: float
    P: np.ndarray
    relaxed_objective: float | None = None
    history: list[dict] = field(default_factory=list)

    @property
    def n_sweeps(self) -> int:
        """Alias of ``iterations`` (greedy: completed sweeps over the points)."""
        return self.iterations


# --------------------------------------------------------------------------- input checks


def _check_psd(M: np.ndarray, name: str, rtol: float = 1e-10) -> None:
    w = sla.eigvalsh(M)
    if w[0] < -rtol * max(np.abs(w).max(), 1e-300):
        raise ValueError(f"{name} must be positive semidefinite (smallest eigenvalue {w[0]:.3g})")


def _check_kernels(K, A, *, psd: bool = False) -> tuple[np.ndarray, np.ndarray]:
    K = check_square_matrix(K, "K", min_size=2)
    A = check_output_kernel(A, psd=psd)
    m, c = K.shape[0], A.shape[0]
    if not 2 <= c <= m:
        raise ValueError(f"A must be c x c with 2 <= c <= m = {m} clusters, got shape {A.shape}")
    if psd:
        _check_psd(K, "K")
    return K, A


def _check_known(known, m: int, c: int) -> np.ndarray:
    if known is None:
        return np.full(m, -1)
    return check_labels(known, m, c, name="known", allow_unknown=True).copy()


def _labels_objective(K, A, labels, normalized: bool) -> float:
    return objective(K, A, partition_matrix(labels, A.shape[0], normalized=normalized))


def _kmeans_rows(U: np.ndarray, c: int, n_init: int, rng) -> np.ndarray:
    """k-means on the rows of the relaxed P: the rounding of the spectral relaxation of
    k-means (4.15). Distances between rows are invariant to ``P -> P V^T``."""
    return KMeans(n_clusters=c, n_init=n_init, random_state=rng).fit(U).labels_.astype(int)


# --------------------------------------------------------------------------- greedy



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


def _move_gains(A, S, sizes, r, kii, a, normalized):
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
    r0 = r.copy()
    r0[a] -= kii
    S0 = S.copy()
    S0[a, :] -= r0
    S0[:, a] -= r0
    S0[a, a] -= kii
    n0 = sizes.copy()
    n0[a] -= 1
    w = _weights(n0, normalized)
    omega = 1.0 / np.sqrt(n0 + 1.0) if normalized else np.ones_like(w)
    M = A * w[None, :]
    dM, dS, dA = np.diag(M), np.diag(S0), np.diag(A)
    row_new = (M * (S0 + r0[None, :])).sum(axis=1) - dM * (dS + r0)
    row_old = (M * S0).sum(axis=1) - dM * dS
    return 2.0 * (omega * row_new - w * row_old) + dA * (omega**2 * (dS + 2.0 * r0 + kii) - w**2 * dS)


def _local_search(K, A, labels, free, normalized, rng, max_iter, tol, time_limit):
    c = A.shape[0]
    diag_K = np.diag(K).copy()
    # moves must gain more than rounding noise, or ties could cycle forever
    scale = max(np.abs(K).max() * np.abs(A).max(), 1e-300)
    KPi, S, sizes = labeling_statistics(K, labels, c)
    f = _value(A, S, sizes, normalized)
    history = [{"iteration": 0, "time": 0.0, "objective": f, "moves": 0}]
    monitor = IterationMonitor("greedy", tol=tol, max_iter=max_iter, time_limit=time_limit)
    for _ in monitor:
        moves = 0
        for i in rng.permutation(free):
            a = labels[i]
            gains = _move_gains(A, S, sizes, KPi[i], diag_K[i], a, normalized)
            b = int(np.argmax(gains))
            if gains[b] - gains[a] <= tol * max(abs(f), scale):
                continue
            move_point(K, KPi, S, sizes, labels, i, b)
            moves += 1
        # recompute once per sweep (O(m^2 c), the cost of the sweep) so no rounding drift builds up
        KPi, S, sizes = labeling_statistics(K, labels, c)
        f = _value(A, S, sizes, normalized)
        monitor.record(objective=f, moves=moves)
        if moves == 0:
            monitor.converged()
    history += monitor.history
    return labels, f, monitor.status, monitor.iterations, history


def greedy(K, A, *, normalized: bool = True, init=None, known=None, max_iter: int = 100, n_init: int = 1,
           tol: float = 1e-12, time_limit: float = np.inf, random_state=None) -> HeuristicResult:
    r"""Greedy local search for (2.3)/(2.4) (Song et al. 2007, the "greedy" of Table 1).

    .. math:: \max_{\Pi} \operatorname{tr}(K P A P^\top),\quad P = \Pi D,\
              D = (\Pi^\top\Pi)^{-1/2}\ \text{(2.4)}\ \text{or}\ D = I\ \text{(2.3)}

    Sweep the unknown points in random order and move each to the cluster that maximizes the
    objective; stop after a sweep that moves nothing (then no single move improves the
    objective by more than ``tol`` relative).  With ``S = Pi^T K Pi`` the objective is
    ``sum_kl A_kl S_kl w_k w_l`` (``w_k = n_k^{-1/2}`` or 1); moving one point changes only row
    and column a and b of S, so all c candidate moves of a point cost O(c^2) from the row of
    ``K Pi`` (see ``_move_gains``), and a move updates ``K Pi`` in O(m): never a full
    recomputation per point.  ``K Pi`` and S are recomputed exactly once per sweep.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel, centred by the caller.
    A : array-like of shape (c, c)
        Symmetric output kernel.
    normalized : bool
        (2.4) if True, (2.3) if False.
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
    random_state : int, Generator, RandomState or None

    Returns
    -------
    HeuristicResult
        ``iterations`` is the number of sweeps; ``history`` the objective and the number of
        moves after each sweep (row 0: the start).

    References
    ----------
    L. Song, A. Smola, A. Gretton, K. Borgwardt, "A dependence maximization view of
    clustering", ICML 2007.
    """
    start = time.perf_counter()
    K, A = _check_kernels(K, A)
    m, c = K.shape[0], A.shape[0]
    normalized = check_bool(normalized, "normalized")
    known = _check_known(known, m, c)
    n_init = check_int_range(n_init, "n_init", 1)
    check_int_range(max_iter, "max_iter", 1)
    check_positive(tol, "tol")
    if init is not None:
        init = check_labels(init, m, c, name="init")
        if n_init != 1:
            raise ValueError(f"n_init must be 1 when init is given, got {n_init}")
    rng = check_random_state(random_state)
    free = np.flatnonzero(known < 0)
    labels, f, status, sweeps, history = best_of_starts(
        lambda start: _local_search(K, A, start, free, normalized, rng, max_iter, tol, time_limit),
        m, c, known=known, init=init, n_init=n_init, rng=rng)
    return HeuristicResult(labels=labels, objective=f, method="greedy", status=status, iterations=sweeps,
                           time=time.perf_counter() - start,
                           P=partition_matrix(labels, c, normalized=normalized), history=history)


# --------------------------------------------------------------------------- spectral relaxation


def spectral(K, A, *, normalized: bool = True, n_init: int = 10, random_state=None) -> HeuristicResult:
    r"""The spectral relaxation (4.13) of (2.4), solved by Proposition 2, rounded by k-means.

    .. math:: \max_{P^\top P = I} \operatorname{tr}(K P A P^\top) = \sum_{i=1}^c \lambda_i\mu_i,
              \qquad P^* = [u_1, \dots, u_c]\, V^\top \quad (4.14),

    with ``lambda_1 >= ... >= lambda_m >= 0`` the eigenvalues of K (eigenvectors ``u_i``) and
    ``mu_1 >= ... >= mu_c >= 0`` those of A (eigenvectors the columns of V): then
    ``P* A P*^T = U_c diag(mu) U_c^T``.  ``P* P*^T = U_c U_c^T`` is also the solution of the
    spectral relaxation of k-means (4.15), so A changes nothing here (Section 4.1).  Labels are
    k-means (``sklearn.cluster.KMeans``, ``n_init`` restarts) on the rows of ``U_c`` (the rows of
    P* are those rows rotated by ``V^T``, same distances); their numbering is k-means' own,
    not matched to the structure in A.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric p.s.d. input kernel, centred by the caller.
    A : array-like of shape (c, c)
        Symmetric p.s.d. output kernel.
    normalized : bool
        Whether ``objective`` of the labels is (2.4) (True) or (2.3).
    n_init : int
        k-means restarts.
    random_state : int, Generator, RandomState or None
        Seeds k-means.

    Returns
    -------
    HeuristicResult
        ``P`` is P*, ``relaxed_objective`` its value ``tr(K P* A P*^T)`` (= sum lambda_i mu_i).
    """
    start = time.perf_counter()
    K, A = _check_kernels(K, A, psd=True)
    c = A.shape[0]
    normalized = check_bool(normalized, "normalized")
    n_init = check_int_range(n_init, "n_init", 1)
    rng = check_random_state(random_state)
    U = spectral_embedding(K, c)  # top-c eigenvectors, decreasing eigenvalues, signs fixed
    _, V = sla.eigh(A)
    P = U @ V[:, ::-1].T
    labels = _kmeans_rows(U, c, n_init, rng)
    relaxed = objective(K, A, P)
    return HeuristicResult(labels=labels, objective=_labels_objective(K, A, labels, normalized), method="spectral",
                           status="optimal", iterations=1, time=time.perf_counter() - start, P=P,
                           relaxed_objective=relaxed,
                           history=[{"iteration": 1, "time": time.perf_counter() - start, "objective": relaxed}])


# --------------------------------------------------------------------------- CCCP


def _orthonormal_start(init, m: int, c: int, rng) -> np.ndarray:
    if init is None:
        return sla.polar(rng.standard_normal((m, c)))[0]
    init = np.asarray(init)
    if init.ndim == 1:
        return partition_matrix(check_labels(init, m, c, name="init"), c, normalized=True)
    init = np.asarray(init, dtype=float)
    if init.shape != (m, c) or not np.all(np.isfinite(init)):
        raise ValueError(f"init must be labels of length {m} or a finite {m} x {c} matrix, got shape {init.shape}")
    return sla.polar(init)[0]


def cccp(K, A, *, normalized: bool = True, init=None, max_iter: int = 500, tol: float = 1e-10,
         time_limit: float = np.inf, n_init: int = 10, random_state=None) -> HeuristicResult:
    r"""The concave-convex procedure (4.16)-(4.17) on the relaxation (4.13), rounded by k-means.

    f(P) = tr(K P A P^T) = ||K^{1/2} P A^{1/2}||_F^2 is convex for p.s.d. K and A, so its
    linearization at P_t (4.16), ``f(P_t) + 2 tr[(P - P_t)^T B_t]`` with ``B_t = K P_t A``,
    minorizes it; maximizing that over ``P^T P = I`` (4.17) is the nearness problem
    ``min ||P - B_t||_F``, solved by the orthonormal polar factor of B_t:

    .. math:: P_{t+1} = B_t (B_t^\top B_t)^{-1/2} = W \Sigma^0 Z^\top\ \text{for}\ B_t = W\Sigma Z^\top,

    (``scipy.linalg.polar``), so ``f(P_{t+1}) >= f(P_t) + 2 tr[(P_{t+1} - P_t)^T B_t] >= f(P_t)``:
    the objective never decreases.  For A p.d. the span of ``P_{t+1}`` is that of ``K P_t``
    (orthogonal iteration), so from a generic start ``P_t P_t^T -> U_c U_c^T`` when
    ``lambda_c > lambda_{c+1}``, and the value reaches Proposition 2's ``sum lambda_i mu_i``:
    CCCP gives the spectral relaxation (end of Section 4.2).  Stops when the step
    ``||P_{t+1} - P_t||_F`` is at most ``tol`` (scale-free: P has orthonormal columns); near the
    maximizer the remaining objective gap is then of order ``tol**2``, and the iterate is within
    about ``tol / (1 - rho)`` of its limit for a linear rate rho.  An objective-increase rule
    would stop with P still ~``sqrt(tol)`` away, since f is flat (quadratic) at its maximum.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric p.s.d. input kernel, centred by the caller.
    A : array-like of shape (c, c)
        Symmetric p.s.d. output kernel.
    normalized : bool
        Whether ``objective`` of the labels is (2.4) (True) or (2.3).
    init : array-like, optional
        Labels (start at their normalized partition matrix) or an m x c matrix (start at its
        polar factor); default the polar factor of a Gaussian matrix.
    max_iter, tol, time_limit : int, float, float
        Limits and the step tolerance; a limit gives its status and a ConvergenceWarning (for
        instance when ``lambda_c = lambda_{c+1}``: the top-c subspace is not unique and the
        iteration need not settle).
    n_init : int
        k-means restarts for the labels.
    random_state : int, Generator, RandomState or None

    Returns
    -------
    HeuristicResult
        ``P`` the last iterate, ``relaxed_objective`` its value; ``history`` holds the
        objective, its increase and the step ``||P_{t+1} - P_t||_F`` per update.

    References
    ----------
    N. Quadrianto, L. Song, A. Smola, "Kernelized sorting", NIPS 2008 (CCCP on permutations).
    """
    start = time.perf_counter()
    K, A = _check_kernels(K, A, psd=True)
    m, c = K.shape[0], A.shape[0]
    normalized = check_bool(normalized, "normalized")
    n_init = check_int_range(n_init, "n_init", 1)
    rng = check_random_state(random_state)
    P = _orthonormal_start(init, m, c, rng)
    f = objective(K, A, P)
    history = [{"iteration": 0, "time": 0.0, "objective": f, "increase": 0.0, "step": 0.0}]
    monitor = IterationMonitor("cccp", tol=tol, max_iter=max_iter, time_limit=time_limit)
    for _ in monitor:
        P_next = sla.polar(K @ P @ A)[0]
        f_next = objective(K, A, P_next)
        step = float(np.linalg.norm(P_next - P))
        monitor.record(objective=f_next, increase=f_next - f, step=step)
        P, f = P_next, f_next
        if step <= tol:
            monitor.converged()
    history += monitor.history
    labels = _kmeans_rows(P, c, n_init, rng)
    return HeuristicResult(labels=labels, objective=_labels_objective(K, A, labels, normalized), method="cccp",
                           status=monitor.status, iterations=monitor.iterations,
                           time=time.perf_counter() - start, P=P, relaxed_objective=f, history=history)


# --------------------------------------------------------------------------- NMF baseline


def nmf(K, A, *, normalized: bool = True, init=None, known=None, max_iter: int = 5000, tol: float = 1e-6,
        time_limit: float = np.inf, random_state=None) -> HeuristicResult:
    r"""The NMF baseline of Table 1 (Song's thesis, [23] in the paper): a baseline, not the
    paper's method.

    K is made nonnegative by shifting it by its minimum, ``K+ = K - min(0, min_ij K_ij) 1 1^T``.
    This un-centres K: ``tr(K+ P A P^T) = tr(K P A P^T) + s 1^T P A P^T 1`` rewards mass in the
    clusters A links, so the method no longer maximizes HSIC (the criticism of Section 1).  It
    then seeks

    .. math:: \max_{P \ge 0} \operatorname{tr}(K_+ P A P^\top) \quad\text{with}\quad P^\top P \approx I

    by the multiplicative update of orthogonal NMF (Ding, Li, Peng & Park 2006, their update for
    ``max tr(H^T W H), H^T H = I, H >= 0``, with the gradient ``2 K+ P A`` of our objective):
    the stationarity condition ``K+ P A = P Lambda``, ``Lambda = P^T K+ P A``, gives

    .. math:: P \leftarrow P \circ \sqrt{\frac{K_+ P A}{P P^\top K_+ P A}},

    which keeps P >= 0 (zeros stay zero) and requires A >= 0 entrywise; its fixed points with
    ``P_ij > 0`` satisfy ``(K+ P A)_ij = (P Lambda)_ij``, the KKT condition Ding et al. prove it
    converges to.  The shifted objective is *not* monotone along the iterates, and nobody claims
    it is: the start is not orthogonal (a nonnegative P with ``P^T P = I`` has disjoint column
    supports, from which the update could never move), so its objective is inflated by the
    overlap of the columns and the first update removes most of it; afterwards it rises
    overall, with occasional dips (measured on the 24-point three-blob instance of the tests:
    random start 66.3, after one update 26.2, final 44.8, 60 dips of at most 0.021; smoothed
    partition start 62.3, 26.7, 44.6, dips of at most 8e-7).  ``history`` records the shifted objective and
    ``||P^T P - I||_F`` so a run can be inspected.  Known points have their other entries fixed
    at zero, so they keep their label.  Labels: the largest entry of each row.  It stops when
    the relative step ``||P_{t+1} - P_t||_F / ||P_t||_F`` is below ``tol``.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred by the caller; shifted here as above).
    A : array-like of shape (c, c)
        Symmetric output kernel with nonnegative entries.
    normalized : bool
        Whether ``objective`` of the labels is (2.4) (True) or (2.3); the updates model (2.4).
    init : array-like of int, optional
        Start at the normalized partition matrix of these labels plus 0.2 (Ding et al.'s
        smoothing); default a uniform random positive P; columns scaled to unit norm.
    known : array-like of int, optional
        ``-1`` for free points, a fixed label otherwise.
    max_iter, tol, time_limit : int, float, float
    random_state : int, Generator, RandomState or None

    Returns
    -------
    HeuristicResult
        ``P`` the final nonnegative factor, ``relaxed_objective`` its shifted objective
        ``tr(K+ P A P^T)``; ``objective`` that of the labels with the caller's (centred) K.
    """
    start = time.perf_counter()
    K, A = _check_kernels(K, A)
    m, c = K.shape[0], A.shape[0]
    if A.min() < 0:
        raise ValueError(f"A must have nonnegative entries for the multiplicative updates (min {A.min():.3g})")
    normalized = check_bool(normalized, "normalized")
    known = _check_known(known, m, c)
    rng = check_random_state(random_state)
    K_plus = K - min(0.0, K.min())
    if init is None:
        P = rng.uniform(0.1, 1.0, size=(m, c))
    else:
        P = partition_matrix(check_labels(init, m, c, name="init"), c, normalized=True) + 0.2
    fixed = np.flatnonzero(known >= 0)
    P[fixed] = 0.0
    P[fixed, known[fixed]] = 1.0
    P /= np.linalg.norm(P, axis=0, keepdims=True)

    def figures(P):
        return {"objective": objective(K_plus, A, P), "orthogonality": float(np.linalg.norm(P.T @ P - np.eye(c)))}

    history = [{"iteration": 0, "time": 0.0, **figures(P), "step": 0.0}]
    monitor = IterationMonitor("nmf", tol=tol, max_iter=max_iter, time_limit=time_limit)
    for _ in monitor:
        numerator = K_plus @ P @ A
        denominator = P @ (P.T @ numerator)
        ratio = np.divide(numerator, denominator, out=np.zeros_like(P), where=denominator > 0)
        P_next = P * np.sqrt(ratio)
        step = float(np.linalg.norm(P_next - P) / max(np.linalg.norm(P), 1e-300))
        P = P_next
        monitor.record(**figures(P), step=step)
        if step < tol:
            monitor.converged()
    history += monitor.history
    labels = np.argmax(P, axis=1)
    labels[fixed] = known[fixed]
    return HeuristicResult(labels=labels, objective=_labels_objective(K, A, labels, normalized), method="nmf",
                           status=monitor.status, iterations=monitor.iterations,
                           time=time.perf_counter() - start, P=P, relaxed_objective=history[-1]["objective"],
                           history=history)
