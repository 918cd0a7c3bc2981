r"""Recovering the cluster assignment from the relaxed solution (Section 5.3).

From ``Q = Y Y^T`` (the low-rank factor of (5.30)) or a dense solution ``Q`` of the SDP (5.23):

1. the nearest rank-one matrix to ``Q`` in Frobenius norm is ``lambda pi pi^T`` with
   ``lambda`` the largest eigenvalue of ``Q`` and ``pi`` its eigenvector.  For ``Q = Y Y^T`` this
   is ``sigma_1^2 u_1 u_1^T`` with ``(sigma_1, u_1)`` the top singular pair of ``Y``
   (``mc x r``): ``Q`` is never formed;
2. ``sqrt(lambda) pi`` is reshaped to ``Pi`` (``m x c``), column-major so that block ``i`` of
   ``pi`` (entries ``i m .. (i+1) m``) is column ``i``, matching ``vec(P)`` of Lemma 1;
   ``pi`` is defined up to sign, and the sign is chosen so that the positive part carries most
   of the mass (a partition matrix is ``>= 0``, Lemma 2);
3. ``Pi`` is made a nonnegative matrix with orthonormal columns by alternating projections onto
   the Stiefel manifold (the polar factor ``U`` of ``Pi = U H``, the nearest matrix with
   orthonormal columns, Higham 1989) and the nonnegative orthant (negative entries set to 0),
   until the change is below ``tol``;
4. each row (point) is assigned to the column (cluster) holding its largest value.

Known labels (semi-supervised use, Section 6) are enforced inside step 3: the nonnegativity
projection also zeroes the entries of a labelled row outside its known column (the projection
onto that smaller convex set), and the returned labels of labelled points are then set to the
known ones (an all-zero row would otherwise go to cluster 0).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning

from .._checks import (
    as_float_array,
    check_int_range,
    check_kernel,
    check_labels,
    check_positive,
    check_random_state,
    check_square_matrix,
)
from .._trace import partition_matrix, trace_objective
from ..parameters import Interval
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState
from ._factor import check_factor
from ._keywords import no_other_keywords, normalization_of

__all__ = ["AlternatingProjection", "alternating_projection", "round_best", "round_lowrank", "round_sdp"]


def _check_sizes(m, c) -> tuple[int, int]:
    m = check_int_range(m, "m", 2)
    c = check_int_range(c, "c", 2, m)
    return m, c


def _stiefel(Pi: np.ndarray) -> np.ndarray:
    """Polar factor ``U`` of ``Pi = U H``: with the thin SVD ``Pi = W S V^T``, ``U = W V^T``."""
    W, _, Vt = np.linalg.svd(Pi, full_matrices=False)
    return W @ Vt


@dataclass(kw_only=True, eq=False)
class AlternatingState(SolverState):
    """The state of :class:`AlternatingProjection`: the iterate and its last change."""

    Pi: np.ndarray
    change: float = np.inf


class AlternatingProjection(IterativeSolver):
    """The iteration of :func:`alternating_projection` on the core loop: one iteration is one
    Stiefel and one nonnegative projection, its figure the change ``||Pi_new - Pi_old||_F``
    (also the certificate's objective: there is no objective to optimize); the method's own
    rule, the change at most ``tol``, ends it with status ``"converged"``."""

    method = "alternating projection"
    parameters = IterativeSolver.parameters | {
        "tol": Param(1e-10, POSITIVE),
        "max_iter": Param(100, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
    }

    def __init__(self, Pi0: np.ndarray, mask, **params):
        super().__init__(None, **params)
        self.Pi0, self.mask = Pi0, mask

    def size(self) -> int:
        return int(self.Pi0.shape[0])

    def init_state(self):
        return AlternatingState(Pi=_project_nonnegative(self.Pi0, self.mask))

    def step(self, state, iteration):
        new = _project_nonnegative(_stiefel(state.Pi), self.mask)
        state.change = float(np.linalg.norm(new - state.Pi))
        state.Pi = new
        if state.change <= self.tol:
            self.converge()
        return {"change": state.change}

    def certify(self, state, bound, final=False):
        return Certificate(state.Pi, None, state.change, {})


def alternating_projection(
    Pi0,
    *,
    known=None,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> tuple[np.ndarray, int]:
    r"""Alternate the Stiefel and nonnegative projections of Section 5.3 from ``Pi0`` (``m x c``).

    .. math:: \Pi \leftarrow \max(\operatorname{polar}(\Pi), 0)

    until ``||Pi_new - Pi_old||_F <= tol`` (or ``max_iter`` iterations: ConvergenceWarning).

    Parameters
    ----------
    Pi0 : array-like of shape (m, c)
    known : array-like of shape (m,), optional
        Known labels (``-1`` unknown); a labelled row is kept zero outside its known column.
    max_iter, tol : int, float

    Returns
    -------
    Pi : ndarray of shape (m, c)
        The final (nonnegative) iterate.
    iterations : int
    """
    Pi = np.array(as_float_array(Pi0, "Pi0", "matrix"))
    if Pi.ndim != 2 or not np.all(np.isfinite(Pi)):
        raise ValueError("Pi0 must be a finite 2-D array")
    m, c = Pi.shape
    mask = None
    if known is not None:
        known = check_labels(known, m, c, name="known", allow_unknown=True)
        labelled = np.flatnonzero(known >= 0)
        mask = np.ones((m, c), dtype=bool)
        mask[labelled] = False
        mask[labelled, known[labelled]] = True
    result = AlternatingProjection(Pi, mask, max_iter=max_iter, tol=tol).run()
    return result.X, result.iterations


def _project_nonnegative(Pi: np.ndarray, mask) -> np.ndarray:
    Pi = np.maximum(Pi, 0.0)
    if mask is not None:
        Pi[~mask] = 0.0
    return Pi


def _round_vector(v: np.ndarray, m: int, c: int, known, max_iter: int, tol: float):
    """Steps 2-4 from ``v = sqrt(lambda) pi`` (length ``mc``)."""
    # the sign making the positive part the heavier one (an exact vec(P) is all >= 0)
    if np.sum(np.maximum(v, 0) ** 2) < np.sum(np.minimum(v, 0) ** 2):
        v = -v
    Pi0 = v.reshape(c, m).T  # column-major: block i -> column i
    Pi, _ = alternating_projection(Pi0, known=known, max_iter=max_iter, tol=tol)
    labels = np.argmax(Pi, axis=1)
    if known is not None:
        labelled = known >= 0
        labels[labelled] = known[labelled]
    return labels, Pi


def round_lowrank(Y, m: int, c: int, *, known=None, max_iter: int = 100,
                  tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    r"""Labels from the low-rank factor ``Y`` of (5.30), without forming ``Y Y^T`` (Section 5.3).

    The nearest rank-one matrix to ``Y Y^T`` is ``lambda pi pi^T`` with ``lambda = s_1^2`` and
    ``pi = u_1`` from the top singular triple of ``Y``; ``sqrt(lambda) pi = s_1 u_1`` is then
    rounded as in the module docstring.

    Parameters
    ----------
    Y : array-like of shape (m * c, r)
        The factor (block ``i`` = rows ``i m .. (i+1) m`` = cluster ``i``); a vector is taken as
        ``r = 1``.
    m, c : int
        Number of points and of clusters (``2 <= c <= m``).
    known : array-like of shape (m,), optional
        Known labels (``-1`` unknown), kept in the result.
    max_iter, tol : int, float
        Limits of the alternating projections.

    Returns
    -------
    labels : ndarray of shape (m,)
        Cluster index of each point (``0..c-1``, the column order of ``A``).
    P : ndarray of shape (m, c)
        The final nonnegative iterate of the alternating projections.
    """
    m, c = _check_sizes(m, c)
    Y = _check_common(Y, m, c, max_iter, tol, "Y")
    if known is not None:
        known = check_labels(known, m, c, name="known", allow_unknown=True)
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    if s[0] <= 0:
        raise ValueError("Y must not be zero")
    return _round_vector(s[0] * U[:, 0], m, c, known, max_iter, tol)


def round_sdp(Q, m: int, c: int, *, known=None, max_iter: int = 100,
              tol: float = 1e-10) -> tuple[np.ndarray, np.ndarray]:
    r"""Labels from a dense solution ``Q`` (``mc x mc``) of the SDP (5.23) (Section 5.3).

    ``sqrt(lambda) pi`` comes from the top eigenpair of the symmetric ``Q``; the rest is as in
    :func:`round_lowrank`.

    Parameters
    ----------
    Q : array-like of shape (m * c, m * c)
        Symmetric relaxed solution.
    m, c, known, max_iter, tol
        As in :func:`round_lowrank`.

    Returns
    -------
    labels : ndarray of shape (m,)
    P : ndarray of shape (m, c)
    """
    m, c = _check_sizes(m, c)
    Q = check_square_matrix(Q, "Q", rtol=1e-8)
    if Q.shape[0] != m * c:
        raise ValueError(f"Q must be (m * c) x (m * c) = {m * c} x {m * c}, got {Q.shape}")
    _check_common(None, m, c, max_iter, tol, "Q")
    if known is not None:
        known = check_labels(known, m, c, name="known", allow_unknown=True)
    n = m * c
    w, V = sla.eigh(Q, subset_by_index=[n - 1, n - 1])
    if w[0] <= 0:
        raise ValueError("Q must have a positive eigenvalue")
    return _round_vector(np.sqrt(w[0]) * V[:, 0], m, c, known, max_iter, tol)


def _check_common(Y, m, c, max_iter, tol, name):
    """Check the iteration limits and, unless None, the factor Y (a vector is taken as r = 1)."""
    check_int_range(max_iter, "max_iter", 1)
    check_positive(tol, "tol")
    return None if Y is None else check_factor(Y, m, c, name)


def round_best(Y, K, A, *, known=None, n_candidates: int = 10, normalization="l2", random_state=None,
               max_iter: int = 100, tol: float = 1e-10, **deprecated) -> tuple[np.ndarray, np.ndarray]:
    r"""Section 5.3's rounding applied to several vectors of the top eigenspace of ``Y Y^T``,
    keeping the partition with the best objective ``tr(K P A P^T)`` (2.4) (or (2.3)).

    The paper rounds the top eigenvector only.  When the structure has symmetries (a chain can
    be read in both directions) every admissible relabeling of an optimal partition is optimal
    too, so an optimal ``Q`` of (5.23) is typically their *average*, whose top eigenvalues are
    (nearly) tied: the top eigenvector is then an arbitrary mix of the symmetric solutions and
    its rounding can be poor.  The candidates here are ``s_j u_j`` for every singular pair of Y
    and ``n_candidates`` random combinations ``U (s * g)``, g standard normal; the first is the
    paper's, so the result is never worse than it in objective.

    Parameters
    ----------
    Y : array-like of shape (m * c, r)
        Low-rank factor (for a dense SDP solution Q: ``V sqrt(w)`` of its top eigenpairs).
    K, A : arrays of shape (m, m), (c, c)
        The objective's kernels.
    known, max_iter, tol
        As in :func:`round_lowrank`.
    n_candidates : int
        Random combinations in addition to the r singular vectors.
    normalization : {"l2", None}, default="l2"
        Score with (2.4) (``"l2"``) or (2.3) (None); ``normalized=True/False`` is the old
        spelling.
    random_state : int, RandomState, Generator or None

    Returns
    -------
    labels : ndarray of shape (m,)
    P : ndarray of shape (m, c)
    """
    K = check_kernel(K, "K")
    A = check_kernel(A, "A")
    m, c = _check_sizes(K.shape[0], A.shape[0])
    Y = _check_common(Y, m, c, max_iter, tol, "Y")
    check_int_range(n_candidates, "n_candidates", 0)
    normalized = normalization_of("round_best", normalization, deprecated) == "l2"
    no_other_keywords("round_best", deprecated)
    rng = check_random_state(random_state)
    if known is not None:
        known = check_labels(known, m, c, name="known", allow_unknown=True)
    U, s, _ = np.linalg.svd(Y, full_matrices=False)
    candidates = [s[j] * U[:, j] for j in range(len(s)) if s[j] > 0]
    candidates += [U @ (s * rng.standard_normal(len(s))) for _ in range(n_candidates)]
    best, best_value = None, -np.inf
    with warnings.catch_warnings():  # slow alternating projections are fine for a candidate
        warnings.simplefilter("ignore", ConvergenceWarning)
        for v in candidates:
            labels, P = _round_vector(v, m, c, known, max_iter, tol)
            value = trace_objective(K, A, partition_matrix(labels, c, normalized=normalized))
            if value > best_value:
                best, best_value = (labels, P), value
    return best
