r"""The spectral relaxation (4.13) of CLUHSIC, solved by Proposition 2 or by the concave-convex
procedure (4.16)-(4.17), and rounded by k-means."""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.linalg as sla

from .._checks import check_int_range, check_random_state
from .._trace import as_partition_matrix, trace_objective
from ..parameters import Interval
from ..result import Result
from ..rounding import spectral_embedding
from ..solvers import POSITIVE, Certificate, Param, SolverState
from ._heuristic_base import HeuristicSolver, check_kernels, kmeans_rows, labels_result
from ._keywords import no_other_keywords, normalization_of

__all__ = ["CCCP", "cccp", "spectral", "spectral_labels"]


def spectral_labels(K: np.ndarray, c: int, n_init: int, rng) -> np.ndarray:
    """k-means labels of the rows of K's top-c eigenvectors (the rounding of :func:`spectral`)."""
    return kmeans_rows(spectral_embedding(K, c), c, n_init, rng)


def spectral(K, A, *, normalization="l2", n_init: int = 10, random_state=None, **deprecated) -> Result:
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
    normalization : {"l2", None}, default="l2"
        Whether ``objective`` of the labels is (2.4) (``"l2"``) or (2.3) (None);
        ``normalized=True/False`` is the old spelling.
    n_init : int
        k-means restarts.
    random_state : int, RandomState, Generator or None
        Seeds k-means.

    Returns
    -------
    Result
        ``X`` the partition matrix of the labels, status ``"converged"`` (the relaxation is
        solved exactly, the rounding is a heuristic), one iteration.  ``extras``: ``labels``,
        ``P`` (P*), ``relaxed_objective`` (its value ``tr(K P* A P*^T) = sum lambda_i mu_i``).
    """
    start = time.perf_counter()
    K, A = check_kernels(K, A, psd=True, method="spectral")
    c = A.shape[0]
    normalized = normalization_of("spectral", normalization, deprecated) == "l2"
    no_other_keywords("spectral", deprecated)
    n_init = check_int_range(n_init, "n_init", 1)
    rng = check_random_state(random_state)
    U = spectral_embedding(K, c)  # top-c eigenvectors, decreasing eigenvalues, signs fixed
    _, V = sla.eigh(A)
    P = U @ V[:, ::-1].T
    labels = kmeans_rows(U, c, n_init, rng)
    relaxed = trace_objective(K, A, P)
    elapsed = time.perf_counter() - start
    run = Result(X=P, objective=relaxed, status="converged", method="spectral", iterations=1, time=elapsed,
                 history=[{"iteration": 1, "time": elapsed, "objective": relaxed}])
    return labels_result(run, K, A, labels, normalized, P=P, relaxed_objective=relaxed)


def _orthonormal_start(init, m: int, c: int, rng) -> np.ndarray:
    if init is None:
        return sla.polar(rng.standard_normal((m, c)))[0]
    P = as_partition_matrix(init, m, c, "init", normalized=True)
    return P if np.ndim(init) == 1 else sla.polar(P)[0]  # labels give orthonormal columns already


@dataclass(kw_only=True, eq=False)
class CCCPState(SolverState):
    """The state of :class:`CCCP`: the iterate, its objective and the objective of the start."""

    P: np.ndarray
    f: float
    start: float


class CCCP(HeuristicSolver):
    """The iteration of :func:`cccp` from an orthonormal ``P0``; one iteration is one update."""

    method = "cccp"
    parameters = HeuristicSolver.parameters | {
        "tol": Param(1e-10, POSITIVE),
        "max_iter": Param(500, [Interval(Integral, 1, None, closed="left")]),
    }

    def __init__(self, K, A, P0, **params):
        super().__init__(None, **params)
        self.K, self.A, self.P0 = K, A, P0

    def init_state(self):
        f = trace_objective(self.K, self.A, self.P0)
        return CCCPState(P=self.P0, f=f, start=f)

    def step(self, state, iteration):
        P_next = sla.polar(self.K @ state.P @ self.A)[0]
        f_next = trace_objective(self.K, self.A, P_next)
        step = float(np.linalg.norm(P_next - state.P))
        row = {"objective": f_next, "increase": f_next - state.f, "step": step}
        if iteration == 0:
            row["start_objective"] = state.start
        state.P, state.f = P_next, f_next
        if step <= self.tol:
            self.converge()
        return row

    def certify(self, state, bound, final=False):
        return Certificate(state.P, None, state.f, {})


def cccp(K, A, *, normalization="l2", init=None, max_iter: int = 500, tol: float = 1e-10,
         time_limit: float = np.inf, n_init: int = 10, random_state=None, **deprecated) -> Result:
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
    normalization : {"l2", None}, default="l2"
        Whether ``objective`` of the labels is (2.4) (``"l2"``) or (2.3) (None);
        ``normalized=True/False`` is the old spelling.
    init : array-like, optional
        Labels (start at their normalized partition matrix) or an m x c matrix (start at its
        polar factor); default the polar factor of a Gaussian matrix.
    max_iter, tol, time_limit : int, float, float
        Limits and the step tolerance; a limit gives its status and a ConvergenceWarning (for
        instance when ``lambda_c = lambda_{c+1}``: the top-c subspace is not unique and the
        iteration need not settle).
    n_init : int
        k-means restarts for the labels.
    random_state : int, RandomState, Generator or None

    Returns
    -------
    Result
        ``X`` the partition matrix of the labels, status ``"converged"`` when the step fell
        below ``tol``; ``history`` holds the objective of the iterate, its increase and the step
        ``||P_{t+1} - P_t||_F`` per update (the first row also ``start_objective``).
        ``extras``: ``labels``, ``P`` (the last iterate), ``relaxed_objective`` (its value).

    References
    ----------
    N. Quadrianto, L. Song, A. Smola, "Kernelized sorting", NIPS 2008 (CCCP on permutations).
    """
    start = time.perf_counter()
    K, A = check_kernels(K, A, psd=True, method="cccp")
    m, c = K.shape[0], A.shape[0]
    normalized = normalization_of("cccp", normalization, deprecated) == "l2"
    no_other_keywords("cccp", deprecated)
    n_init = check_int_range(n_init, "n_init", 1)
    params = CCCP.check({"max_iter": max_iter, "tol": tol, "time_limit": time_limit})
    rng = check_random_state(random_state)
    run = CCCP(K, A, _orthonormal_start(init, m, c, rng), **params).run()
    labels = kmeans_rows(run.X, c, n_init, rng)
    return labels_result(run, K, A, labels, normalized, P=run.X, relaxed_objective=run.objective,
                         time=time.perf_counter() - start)
