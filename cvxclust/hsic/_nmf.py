r"""The NMF baseline of Table 1 for CLUHSIC: orthogonal NMF on the shifted kernel."""

from __future__ import annotations

import time
from dataclasses import dataclass
from numbers import Integral

import numpy as np

from .._checks import check_labels, check_random_state
from .._trace import partition_matrix, trace_objective
from ..parameters import Interval
from ..result import Result
from ..solvers import POSITIVE, Certificate, Param, SolverState
from ._heuristic_base import HeuristicSolver, check_kernels, check_known, labels_result
from ._keywords import no_other_keywords, normalization_of

__all__ = ["NMF", "nmf"]


@dataclass(kw_only=True, eq=False)
class NMFState(SolverState):
    """The state of :class:`NMF`: the iterate and its figures (objective, orthogonality)."""

    P: np.ndarray
    figures: dict


class NMF(HeuristicSolver):
    """The multiplicative updates of :func:`nmf` on the shifted kernel ``K_plus`` from ``P0``;
    one iteration is one update."""

    method = "nmf"
    parameters = HeuristicSolver.parameters | {
        "tol": Param(1e-6, POSITIVE),
        "max_iter": Param(5000, [Interval(Integral, 1, None, closed="left")]),
    }

    def __init__(self, K_plus, A, P0, **params):
        super().__init__(None, **params)
        self.K, self.A, self.P0 = K_plus, A, P0

    def _figures(self, P) -> dict:
        c = self.A.shape[0]
        return {"objective": trace_objective(self.K, self.A, P),
                "orthogonality": float(np.linalg.norm(P.T @ P - np.eye(c)))}

    def init_state(self):
        return NMFState(P=self.P0, figures=self._figures(self.P0))

    def step(self, state, iteration):
        P = state.P
        numerator = self.K @ P @ self.A
        denominator = P @ (P.T @ numerator)
        ratio = np.divide(numerator, denominator, out=np.zeros_like(P), where=denominator > 0)
        P_next = P * np.sqrt(ratio)
        step = float(np.linalg.norm(P_next - P) / max(np.linalg.norm(P), 1e-300))
        row = {**self._figures(P_next), "step": step}
        if iteration == 0:
            row.update(start_objective=state.figures["objective"], start_orthogonality=state.figures["orthogonality"])
        state.P, state.figures = P_next, row
        if step < self.tol:
            self.converge()
        return row

    def certify(self, state, bound, final=False):
        return Certificate(state.P, None, state.figures["objective"], {})


def nmf(K, A, *, normalization="l2", init=None, known=None, max_iter: int = 5000, tol: float = 1e-6,
        time_limit: float = np.inf, random_state=None, **deprecated) -> Result:
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
    converges to.  The shifted objective is *not* monotone along the iterates: the start is not
    orthogonal (a nonnegative P with ``P^T P = I`` has disjoint column supports, from which the
    update could never move), so its objective is inflated by the overlap of the columns and
    the first update removes most of it; afterwards it rises overall, with occasional small
    dips.  ``history`` records the shifted objective and ``||P^T P - I||_F`` so a run can be
    inspected.  Known points have their other entries fixed at zero, so they keep their label.
    Labels: the largest entry of each row.  It stops when the relative step
    ``||P_{t+1} - P_t||_F / ||P_t||_F`` is below ``tol``.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred by the caller; shifted here as above).
    A : array-like of shape (c, c)
        Symmetric output kernel with nonnegative entries.
    normalization : {"l2", None}, default="l2"
        Whether ``objective`` of the labels is (2.4) (``"l2"``) or (2.3) (None); the updates
        model (2.4).  ``normalized=True/False`` is the old spelling.
    init : array-like of int, optional
        Start at the normalized partition matrix of these labels plus 0.2 (Ding et al.'s
        smoothing); default a uniform random positive P; columns scaled to unit norm.
    known : array-like of int, optional
        ``-1`` for free points, a fixed label otherwise.
    max_iter, tol, time_limit : int, float, float
    random_state : int, RandomState, Generator or None

    Returns
    -------
    Result
        ``X`` the partition matrix of the labels and ``objective`` its f with the caller's
        (centred) K; status ``"converged"`` when the step fell below ``tol``; ``history`` the
        shifted objective, the orthogonality and the step per update (the first row also the
        start's, ``start_objective`` and ``start_orthogonality``).  ``extras``: ``labels``,
        ``P`` (the final nonnegative factor), ``relaxed_objective`` (its shifted objective
        ``tr(K+ P A P^T)``).
    """
    start = time.perf_counter()
    K, A = check_kernels(K, A, method="nmf")
    m, c = K.shape[0], A.shape[0]
    if A.min() < 0:
        raise ValueError(f"A must have nonnegative entries for the multiplicative updates (min {A.min():.3g})")
    normalized = normalization_of("nmf", normalization, deprecated) == "l2"
    no_other_keywords("nmf", deprecated)
    known = check_known(known, m, c)
    params = NMF.check({"max_iter": max_iter, "tol": tol, "time_limit": time_limit})
    if init is not None:
        init = check_labels(init, m, c, name="init")
    rng = check_random_state(random_state)
    K_plus = K - min(0.0, K.min())
    if init is None:
        P = rng.uniform(0.1, 1.0, size=(m, c))
    else:
        P = partition_matrix(init, c, normalized=True) + 0.2
    fixed = np.flatnonzero(known >= 0)
    P[fixed] = 0.0
    P[fixed, known[fixed]] = 1.0
    P /= np.linalg.norm(P, axis=0, keepdims=True)
    run = NMF(K_plus, A, P, **params).run()
    labels = np.argmax(run.X, axis=1)
    labels[fixed] = known[fixed]
    return labels_result(run, K, A, labels, normalized, P=run.X, relaxed_objective=run.objective,
                         time=time.perf_counter() - start)
