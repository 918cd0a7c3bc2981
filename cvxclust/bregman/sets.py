r"""Normalized equivalence matrices and their convex relaxations M1, M2, M3.

Section 3.1 of "Convex relaxations of Bregman divergence clustering" (the bregman paper).
For a hard assignment ``Y in {0,1}^{t x d}`` with ``Y 1 = 1`` the *normalized equivalence
matrix* is (9)::

    M = Y (Y^T Y)^+ Y^T = Y diag(Y^T 1)^+ Y^T,      M_ij = [l_i = l_j] / |cluster of i|,

and, after Peng & Wei (2007), the set of all of them (at most d non-empty clusters) is::

    M  = {M : M = M^T, M^2 = M, tr(M) <= d, M_{i:} in Delta_t}

(each row in the probability simplex; the paper's text prints ``M_ii in Delta_t``, which can only
mean the rows ``M_{i:}``, as ``Delta_t^t`` in the definition of M1 confirms).  Replacing ``M^2 = M`` by its convex hull gives the
relaxations of Section 3.1::

    M1 = {M : 0 <= M <= I, tr(M) <= d, M >= 0 entrywise, M 1 = 1}     (p.s.d. order)
    M2 = {M : 0 <= M <= I, tr(M) <= d, M 1 = 1}
    M3 = {M : 0 <= M <= I, tr(M) <= d - 1}                              (12)

with ``M2 = {H S H + 11^T/t : S in M3}``, ``H = I - 11^T/t`` (Lemma 1, (11)).  This module
states each set as cvxpy constraints, measures membership of a numpy matrix, projects onto
M2 and M3 in closed form (the eigenvalue problem (13)), and exhibits a point of M1 outside
conv(M) (the claim of Appendix A).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.linalg as sla
from scipy.sparse.csgraph import connected_components

from .._checks import check_labels, check_n_clusters, check_square_matrix
from ..linalg import _eigh_subset

__all__ = [
    "M2Projector",
    "constraints_M1",
    "constraints_M2",
    "constraints_M3",
    "enumerate_equivalence_matrices",
    "equivalence_matrix",
    "is_equivalence_matrix",
    "m1_not_convex_hull_example",
    "project_M2",
    "project_M3",
    "residuals_M1",
    "residuals_M2",
    "residuals_M3",
    "spectral_threshold",
]


# --------------------------------------------------------------------------------------------
# the exact set M
# --------------------------------------------------------------------------------------------

def equivalence_matrix(labels, n_clusters: int) -> np.ndarray:
    r"""The normalized equivalence matrix (9) of hard labels.

    .. math:: M = Y (Y^\top Y)^\dagger Y^\top, \qquad
              M_{ij} = \frac{[l_i = l_j]}{|\{k : l_k = l_i\}|},

    where ``Y`` is the t x d 0/1 assignment matrix of ``labels``.  Empty clusters contribute
    nothing (the pseudo-inverse), so ``tr(M)`` is the number of non-empty clusters.

    Parameters
    ----------
    labels : array of int, shape (t,)
        Cluster index of every sample, in ``0 .. n_clusters - 1``.
    n_clusters : int
        The number of clusters d, ``2 <= d <= t``.

    Returns
    -------
    M : ndarray, shape (t, t)
        Symmetric, idempotent, nonnegative, with unit row sums.
    """
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError("labels must be a 1-D array of integer cluster indices")
    d = check_n_clusters(n_clusters, labels.shape[0])
    labels = check_labels(labels, n_clusters=d)
    counts = np.bincount(labels, minlength=d)
    same = labels[:, None] == labels[None, :]
    return same / counts[labels][:, None]


def is_equivalence_matrix(M, n_clusters: int | None = None, *, atol: float = 1e-8) -> bool:
    r"""Whether ``M`` is (to ``atol``) a normalized equivalence matrix (9), i.e. lies in the set M.

    The partition is read off the support graph of ``M`` (an edge where ``M_ij > atol``) by
    its connected components; ``M`` is accepted iff it equals, entrywise to ``atol``, the
    equivalence matrix of that partition and (when ``n_clusters`` is given) the partition has
    at most ``n_clusters`` blocks, i.e. ``tr(M) <= d``.  This is equivalent to Peng & Wei's
    description ``M = M^T = M^2``, ``M_{i:} in Delta_t`` but does not square round-off.

    Parameters
    ----------
    M : array, shape (t, t)
    n_clusters : int, optional
        The bound d on the number of clusters; no bound when None.
    atol : float
        Entrywise tolerance.

    Returns
    -------
    bool
    """
    M = check_square_matrix(M, "M", symmetric=False)
    t = M.shape[0]
    if n_clusters is not None:
        check_n_clusters(n_clusters, t)
    if np.abs(M - M.T).max() > atol:
        return False
    n_blocks, labels = connected_components(M > atol, directed=False)
    if n_clusters is not None and n_blocks > n_clusters:
        return False
    counts = np.bincount(labels)
    exact = (labels[:, None] == labels[None, :]) / counts[labels][:, None]
    return bool(np.abs(M - exact).max() <= atol)


def enumerate_equivalence_matrices(n_samples: int, n_clusters: int):
    r"""Yield ``(labels, M)`` for every element of the set M: each partition of
    ``n_samples`` points into at most ``n_clusters`` non-empty blocks, once.

    Partitions are generated as restricted growth strings (``labels[0] = 0`` and each label
    at most one more than the largest before it), so no partition repeats.  Their number is
    ``sum_{k <= d} S(t, k)`` (Stirling numbers of the second kind): meant for tiny ``t``,
    e.g. to compare a relaxation with the exact set or to certify a separation
    (:func:`m1_not_convex_hull_example`).

    Parameters
    ----------
    n_samples : int
        t >= 2.
    n_clusters : int
        d, ``2 <= d <= t``.

    Yields
    ------
    labels : ndarray of int, shape (t,)
    M : ndarray, shape (t, t)
        ``equivalence_matrix(labels, n_clusters)``.
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
        raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
    d = check_n_clusters(n_clusters, int(n_samples))
    t = int(n_samples)
    labels = [0] * t

    def grow(i: int, used: int):
        if i == t:
            lab = np.array(labels)
            yield lab, equivalence_matrix(lab, d)
            return
        for c in range(min(used + 1, d)):
            labels[i] = c
            yield from grow(i + 1, max(used, c + 1))

    yield from grow(1, 1)


# --------------------------------------------------------------------------------------------
# cvxpy statements of M1, M2, M3
# --------------------------------------------------------------------------------------------

def _check_variable(M) -> tuple[int, list]:
    """Size of the square cvxpy expression ``M``, and ``[M == M^T]`` unless it is symmetric."""
    if not isinstance(M, cp.Expression):
        raise ValueError(f"M must be a cvxpy expression (e.g. cp.Variable((t, t), symmetric=True)), "
                         f"got {type(M).__name__}")
    if len(M.shape) != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"M must be a square matrix expression, got shape {M.shape}")
    # the paper encodes symmetry in M >> 0; cvxpy's PSD constraint only constrains (M + M^T)/2
    return M.shape[0], ([] if M.is_symmetric() else [M == M.T])


def constraints_M3(M: cp.Expression, n_clusters: int) -> list[cp.Constraint]:
    r"""cvxpy constraints of (12), ``M3 = {M : 0 <= M <= I, tr(M) <= d - 1}``.

    Returned in this order (so their dual values can be read by index)::

        [M >> 0,  I - M >> 0,  tr(M) <= d - 1]

    preceded by ``M == M^T`` when ``M`` is not a symmetric cvxpy variable.

    Parameters
    ----------
    M : cvxpy Expression, shape (t, t)
        Preferably ``cp.Variable((t, t), symmetric=True)``.
    n_clusters : int
        d, ``2 <= d <= t``.
    """
    t, sym = _check_variable(M)
    d = check_n_clusters(n_clusters, t)
    return sym + [M >> 0, np.eye(t) - M >> 0, cp.trace(M) <= d - 1]


def constraints_M2(M: cp.Expression, n_clusters: int) -> list[cp.Constraint]:
    r"""cvxpy constraints of ``M2 = {M : 0 <= M <= I, tr(M) <= d, M 1 = 1}`` (Section 3.1),
    the spectral constraints of M1.

    Returned in this order::

        [M >> 0,  I - M >> 0,  tr(M) <= d,  M 1 == 1]

    preceded by ``M == M^T`` when ``M`` is not a symmetric cvxpy variable.
    """
    t, sym = _check_variable(M)
    d = check_n_clusters(n_clusters, t)
    ones = np.ones(t)
    return sym + [M >> 0, np.eye(t) - M >> 0, cp.trace(M) <= d, M @ ones == ones]


def constraints_M1(M: cp.Expression, n_clusters: int) -> list[cp.Constraint]:
    r"""cvxpy constraints of
    ``M1 = {M : 0 <= M <= I, tr(M) <= d, M_{i:} in Delta_t}`` (Section 3.1), i.e. M2 plus
    entrywise nonnegativity (rows in the simplex ``Delta_t``).

    ``M <= I`` is implied by the others (Mirsky 1955, Thm 7.5.4) but stated, as in the paper.
    Returned in this order::

        [M >> 0,  I - M >> 0,  tr(M) <= d,  M 1 == 1,  M >= 0]

    preceded by ``M == M^T`` when ``M`` is not a symmetric cvxpy variable.
    """
    return constraints_M2(M, n_clusters) + [M >= 0]


# --------------------------------------------------------------------------------------------
# numpy membership
# --------------------------------------------------------------------------------------------

def _spectral_residuals(M, n_clusters: int, trace_bound_offset: int) -> tuple[np.ndarray, int, dict]:
    M = check_square_matrix(M, "M", symmetric=False)
    d = check_n_clusters(n_clusters, M.shape[0])
    S = (M + M.T) / 2
    w = np.linalg.eigvalsh(S)
    res = {
        "symmetry": float(np.abs(M - M.T).max()),
        "psd": float(max(0.0, -w[0])),
        "upper": float(max(0.0, w[-1] - 1.0)),
        "trace": float(max(0.0, np.trace(S) - (d - trace_bound_offset))),
    }
    return S, d, res


def residuals_M3(M, n_clusters: int) -> dict[str, float]:
    r"""Violations of (12) by a numpy matrix, all ``0`` for a member of M3.

    ``symmetry`` = max|M - M^T|; on the symmetric part S: ``psd`` = max(0, -lambda_min(S)),
    ``upper`` = max(0, lambda_max(S) - 1), ``trace`` = max(0, tr(S) - (d - 1)).  The set is
    scale-free (eigenvalues in [0, 1]), so the figures are absolute.
    """
    return _spectral_residuals(M, n_clusters, 1)[2]


def residuals_M2(M, n_clusters: int) -> dict[str, float]:
    r"""Violations of M2 by a numpy matrix: the keys of :func:`residuals_M3` with the trace
    bound d instead of d - 1, and ``row_sums`` = max|M 1 - 1|."""
    S, _, res = _spectral_residuals(M, n_clusters, 0)
    res["row_sums"] = float(np.abs(S.sum(axis=1) - 1.0).max())
    return res


def residuals_M1(M, n_clusters: int) -> dict[str, float]:
    r"""Violations of M1 by a numpy matrix: those of :func:`residuals_M2` and
    ``nonnegativity`` = max(0, -min_ij M_ij)."""
    res = residuals_M2(M, n_clusters)  # validates M
    res["nonnegativity"] = float(max(0.0, -np.min(np.asarray(M, dtype=float))))
    return res


# --------------------------------------------------------------------------------------------
# projections: the eigenvalue problem (13)
# --------------------------------------------------------------------------------------------

def spectral_threshold(sigma, bound: float) -> float:
    r"""The multiplier ``theta >= 0`` that solves the eigenvalue problem (13)::

        min_mu  sum_i (mu_i - sigma_i)^2   s.t.  0 <= mu_i <= 1,  sum_i mu_i <= bound

    through ``mu_i = clip(sigma_i - theta, 0, 1)``.

    KKT: with a multiplier ``theta >= 0`` of the sum constraint, each ``mu_i`` minimises
    ``(mu_i - sigma_i)^2 + 2 theta mu_i`` over [0, 1], giving the clip; ``theta = 0`` if
    ``g(0) <= bound`` where ``g(theta) = sum_i clip(sigma_i - theta, 0, 1)``, otherwise the
    root of ``g(theta) = bound`` (complementary slackness).  ``g`` is continuous,
    non-increasing and piecewise linear with breakpoints ``sigma_i`` and ``sigma_i - 1``, so
    the root is found exactly: a bisection over the sorted breakpoints, then linear
    interpolation on the bracketing piece (O(t log t)).

    Parameters
    ----------
    sigma : array, shape (t,)
        Eigenvalues (any order).
    bound : float
        ``bound > 0`` (``d - 1`` for M3).
    """
    sigma = np.asarray(sigma, dtype=float)

    def g(theta):
        return float(np.clip(sigma - theta, 0.0, 1.0).sum())

    if g(0.0) <= bound:
        return 0.0
    bp = np.unique(np.concatenate([sigma, sigma - 1.0, [0.0]]))
    bp = bp[bp >= 0.0]  # ascending; g(bp[0] = 0) > bound >= 0 = g(bp[-1] = max sigma)
    lo, hi = 0, len(bp) - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if g(bp[mid]) > bound:
            lo = mid
        else:
            hi = mid
    g_lo, g_hi = g(bp[lo]), g(bp[hi])
    return float(bp[lo] + (g_lo - bound) * (bp[hi] - bp[lo]) / (g_lo - g_hi))


def _orthonormal_complement(K: np.ndarray, skip: int) -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal columns P spanning the columns ``skip:`` of ``K`` (t x c) modulo 1 and the
    first ``skip`` columns (orthonormal and orthogonal to 1), by a QR of ``[1/sqrt(t), K]``:
    exactly orthogonal to both, and orthonormal even where those columns are (nearly) dependent.
    Also returns ``P' K[:, skip:]`` (a block of the triangular factor, so no product)."""
    t = K.shape[0]
    Q, R = np.linalg.qr(np.hstack([np.full((t, 1), t ** -0.5), K]))
    return Q[:, skip + 1:], R[skip + 1:, skip + 1:]


def _assemble(w: np.ndarray, V: np.ndarray, theta: float) -> np.ndarray:
    mu = np.clip(w - theta, 0.0, 1.0)
    keep = mu > 0
    Vk = V[:, keep] * np.sqrt(mu[keep])
    return Vk @ Vk.T


def project_M3(A, n_clusters: int) -> np.ndarray:
    r"""Frobenius projection of a symmetric matrix onto M3 (12)::

        P_M3(A) = argmin_{T : 0 <= T <= I, tr(T) <= d - 1} ||T - A||_F^2
                = Phi diag(mu) Phi^T,   mu_i = clip(sigma_i - theta, 0, 1),

    where ``A = Phi diag(sigma) Phi^T`` and ``theta`` solves the eigenvalue problem (13)
    (:func:`spectral_threshold` with bound ``d - 1``).

    Derivation: M3 is unitarily invariant (its constraints involve only eigenvalues), so by
    von Neumann's trace inequality ``||T - A||^2 >= ||lambda(T) - lambda(A)||^2`` (both sorted)
    with equality when T shares A's eigenvectors in the same order; minimising over the
    eigenvalues of T is (13), whose sorted solution keeps that order.

    Parameters
    ----------
    A : array, shape (t, t)
        Symmetric, finite.
    n_clusters : int
        d, ``2 <= d <= t``.

    Returns
    -------
    ndarray, shape (t, t)
    """
    A = check_square_matrix(A, "A")
    d = check_n_clusters(n_clusters, A.shape[0])
    w, V = np.linalg.eigh(A)
    return _assemble(w, V, spectral_threshold(w, d - 1))


def _double_center(A: np.ndarray) -> np.ndarray:
    """H A H with H = I - 11^T/t, by row/column means (no t x t product)."""
    r = A.mean(axis=1)
    c = A.mean(axis=0)
    G = A - r[:, None] - c[None, :] + r.mean()
    return (G + G.T) / 2


def project_M2(A, n_clusters: int) -> np.ndarray:
    r"""Frobenius projection of a symmetric matrix onto
    ``M2 = {M : 0 <= M <= I, tr(M) <= d, M 1 = 1}`` in closed form (Lemma 1 and (13))::

        P_M2(A) = P_M3(H A H) + 11^T / t,     H = I - 11^T / t.

    Derivation (Section 3.1.1).  By Lemma 1, ``M2 = {H S H + J : S in M3}`` with
    ``J = 11^T/t``, so with ``B = A - J``::

        min_{Z in M2} ||Z - A||^2 = min_{S in M3} ||H S H - B||^2.

    Write ``B = H B H + V``; ``V = J B + B J - J B J`` is orthogonal to every ``H X H`` (as
    ``H J = 0``), hence ``||H S H - B||^2 = ||H S H - H B H||^2 + ||V||^2``.  For ``S`` in M3,
    ``H S H`` is again in M3 (``0 <= H S H <= I`` as H is an orthogonal projector, and
    ``tr(H S H) = tr(S) - 1^T S 1 / t <= tr(S)``), so the problem is the projection
    ``T = P_M3(H B H)`` provided ``H T H = T``.  That holds: ``1`` is an eigenvector of
    ``H B H`` with eigenvalue 0 and (13) maps every ``sigma_i <= theta`` (so 0, as
    ``theta >= 0``) to ``mu_i = 0``, so ``T 1 = 0``.  Finally ``H B H = H A H`` (``H J = 0``)
    and ``Z = T + J``.  Cost: one symmetric eigendecomposition of ``H A H``.

    Parameters
    ----------
    A : array, shape (t, t)
        Symmetric, finite.
    n_clusters : int
        d, ``2 <= d <= t``.

    Returns
    -------
    ndarray, shape (t, t)
        The projection, symmetric with unit row sums.

    See Also
    --------
    M2Projector : the same projection, repeated, computing only the top of the spectrum.
    """
    A = check_square_matrix(A, "A")
    t = A.shape[0]
    d = check_n_clusters(n_clusters, t)
    w, V = np.linalg.eigh(_double_center(A))
    return _assemble(w, V, spectral_threshold(w, d - 1)) + 1.0 / t


class M2Projector:
    r"""Repeated projections onto M2 (as :func:`project_M2`) that compute only the top of the
    spectrum of ``H A H`` when they can, e.g. for the Z-step of an ADMM (Section 3.1.1).

    Only eigenvalues above ``theta`` enter ``P_M3`` (the others give ``mu_i = 0``).  If the
    previous call kept ``k`` eigenvalues, the top ``m = k + max(8, k // 4)`` eigenpairs are
    computed (LAPACK ``syevr`` by index); the threshold ``theta_m`` of (13) on those alone is
    exact whenever the smallest computed eigenvalue is ``<= theta_m`` (every uncomputed
    eigenvalue is smaller still, so contributes 0 to the sum and to the projection).
    Otherwise, or when ``m`` exceeds ``switch_fraction * t``, the call falls back to a full
    eigendecomposition, so the result always equals :func:`project_M2`.

    Parameters
    ----------
    n_samples : int
        t.
    n_clusters : int
        d, ``2 <= d <= t``.
    partial : bool
        Use partial eigendecompositions (only when ``t >= min_partial_size``).
    switch_fraction : float
        Largest fraction of the spectrum computed partially.
    min_partial_size : int, optional
        Below this size a full ``eigh`` is used (default 300).

    :meth:`approximate` trades exactness for speed between such calls: one Rayleigh-Ritz step
    warm-started from the eigenvectors of the previous call, which returns a point of M2 near
    the projection (for splitting methods whose fixed point does not depend on it).

    Attributes
    ----------
    n_active : int or None
        Number of non-zero ``mu_i`` at the last call.
    full_calls, partial_calls, approximate_calls : int
    """

    #: below this size a full eigh costs no more than a partial one
    min_partial_size = 300

    def __init__(self, n_samples: int, n_clusters: int, *, partial: bool = True,
                 switch_fraction: float = 0.25, min_partial_size: int | None = None):
        if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or n_samples < 2:
            raise ValueError(f"n_samples must be an integer >= 2, got {n_samples!r}")
        self.t = int(n_samples)
        self.d = check_n_clusters(n_clusters, self.t)
        if min_partial_size is not None:
            self.min_partial_size = min_partial_size
        self.partial = bool(partial) and self.t >= self.min_partial_size
        self.switch = switch_fraction * self.t
        self.n_active: int | None = None
        self.full_calls = 0
        self.partial_calls = 0
        self.approximate_calls = 0
        self._basis: np.ndarray | None = None  # top eigenvectors of the last H A H (warm start)

    def __call__(self, A: np.ndarray, *, check: bool = False) -> np.ndarray:
        """``P_M2(A)`` for a symmetric ``A`` of shape (t, t); ``check=True`` validates ``A``."""
        if check:
            A = check_square_matrix(A, "A")
        if A.shape != (self.t, self.t):
            raise ValueError(f"A must have shape {(self.t, self.t)}, got {A.shape}")
        G = _double_center(np.asarray(A, dtype=float))
        bound, t = self.d - 1, self.t
        m = self._block_size()
        if m is not None:
            w, V = _eigh_subset(G, (t - m, t - 1))
            theta = spectral_threshold(w, bound)
            if w[0] <= theta:
                self.partial_calls += 1
                return self._finish(w, V, theta)
        self.full_calls += 1
        # LAPACK's divide and conquer (syevd): 135 ms against numpy's 156 ms at t = 1000, one thread
        w, V = sla.eigh(G, driver="evd", check_finite=False)
        return self._finish(w, V, spectral_threshold(w, bound))

    def approximate(self, A: np.ndarray) -> np.ndarray:
        r"""A point of M2 near ``P_M2(A)``, at a fraction of the cost of the exact projection.

        With the top eigenvectors ``Q`` (t x m, orthogonal to 1) that the previous call kept,
        one Rayleigh-Ritz step: the Ritz pairs ``(w_i, v_i)`` of ``G = H A_s H``
        (``A_s = (A + A')/2``) on the block Krylov space ``span[Q, G Q]`` replace the top m
        eigenpairs in (13).  When G changes little between calls, as in the late iterations of a
        splitting method, the error is a small fraction of the change (Digits, t = 1000,
        Davis-Yin: relative error 1e-6 against a step of 1e-5).  Cost: two products of G with
        t x m blocks, a QR and an eigendecomposition of size 2m (t = 1000, m = 122: about 40 ms
        against 100 ms for the partial eigendecomposition on one thread).

        Without such a basis (first call, or too many active eigenvalues for a partial
        spectrum), or when the smallest Ritz value exceeds the threshold of (13) (the block may
        miss active eigenvalues), the exact projection.  (A single-precision eigendecomposition
        would halve the cost there, but its 1e-7 errors stall the polishing of
        :class:`~cvxclust.bregman._conditional_jc._FeasiblePoint` above its limit.)

        The result ``sum_i mu_i v_i v_i' + 11'/t`` with ``mu = clip(w - theta, 0, 1)`` is in M2
        to double precision (the ``v_i`` are orthonormal and orthogonal to 1, and
        ``sum mu <= d - 1``); only its distance to A is not the least.  For methods that need a
        point of M2 but not the projection itself: the solvers' steps between certified checks and
        the polishing of :class:`~cvxclust.bregman._conditional_jc._FeasiblePoint`.
        """
        A = np.asarray(A, dtype=float)
        if A.shape != (self.t, self.t):
            raise ValueError(f"A must have shape {(self.t, self.t)}, got {A.shape}")
        S = (A + A.T) / 2
        Q, m = self._basis, self._block_size()
        if Q is not None and m is not None:
            GQ = S @ Q
            GQ -= GQ.mean(axis=0)  # H S H Q = H S Q, as H Q = Q
            # new directions, orthonormal and orthogonal to 1 and Q even if G Q is (nearly) in span Q
            P, PGQ = _orthonormal_complement(np.hstack([Q, GQ]), Q.shape[1])
            GP = S @ P
            GP -= GP.mean(axis=0)
            K = np.hstack([Q, P])
            B = np.block([[Q.T @ GQ, PGQ.T], [PGQ, P.T @ GP]])  # G on span K; P'GQ from the QR
            w, U = np.linalg.eigh((B + B.T) / 2)
            k = min(m, len(w))
            w, U = w[-k:], U[:, -k:]
            theta = spectral_threshold(w, self.d - 1)
            if w[0] <= theta:
                self.approximate_calls += 1
                return self._finish(w, K @ U, theta)
        return self(S)

    def _block_size(self) -> int | None:
        # eigenpairs a partial call computes (None: use the full spectrum)
        if not self.partial or self.n_active is None:
            return None
        m = self.n_active + max(8, self.n_active // 4)
        return m if m < self.switch else None

    def _finish(self, w: np.ndarray, V: np.ndarray, theta: float) -> np.ndarray:
        self.n_active = int((w > theta).sum())
        m = self._block_size()
        self._basis = V[:, -m:] if m is not None else None
        if self._basis is not None and np.abs(self._basis.sum(axis=0)).max() > 1e-8 * np.sqrt(self.t):
            # the block reaches down to the eigenvalue 0 of H A H, whose eigenvectors include 1:
            # :meth:`approximate` needs a basis orthogonal to 1 (it applies G as H A_s)
            self._basis = _orthonormal_complement(self._basis, 0)[0]
        return _assemble(w, V, theta) + 1.0 / self.t


# --------------------------------------------------------------------------------------------
# Appendix A: M1 is not conv(M)
# --------------------------------------------------------------------------------------------

def m1_not_convex_hull_example() -> dict:
    r"""A point of M1 outside conv(M), with a separating linear functional (Appendix A's claim).

    For ``t = 3`` points and ``d = 2`` clusters, M has four elements: ``J/3`` (one cluster)
    and the three ``{i}{j,k}`` splits.  Write a symmetric matrix with unit row sums by its
    off-diagonal entries ``(a, b, c) = (M_12, M_13, M_23)``; the four elements are
    ``(1/3, 1/3, 1/3)``, ``(1/2, 0, 0)``, ``(0, 1/2, 0)``, ``(0, 0, 1/2)``, and
    ``2a + 2b - c <= 1`` is a facet of their hull.  With::

        C = [[0, 2, 2], [2, 0, -1], [2, -1, 0]],     <C, M> = 2 (2a + 2b - c),

    ``max_{M in M} <C, M> = 2`` (attained on that facet: by J/3, {1,2}{3} and {1,3}{2}), while

        P = [[1/3, 1/3, 1/3], [1/3, 2/3, 0], [1/3, 0, 2/3]]

    is in M1 (symmetric, nonnegative, unit row sums, eigenvalues 1 (eigenvector 1), 2/3
    (``(0, 1, -1)``) and 0 (``(-2, 1, 1)``), trace 5/3 <= 2) and ``<C, P> = 8/3 > 2``.
    So ``conv(M)`` is a strict subset of M1 already at t = 3: the semidefinite constraint
    does not capture the partition polytope.  (The appendix itself is not in the paper text we
    hold; this is our own construction of the claim.)

    The maximum over M is computed here by enumerating M
    (:func:`enumerate_equivalence_matrices`), and the membership figures by
    :func:`residuals_M1`; nothing is taken on trust.

    Returns
    -------
    dict with keys
        ``C`` (3 x 3), ``point`` (P), ``n_clusters`` (2), ``value_point`` (``<C, P>``),
        ``max_over_M`` (``max <C, M>`` over M), ``argmax_labels`` (a maximising partition),
        ``gap`` (``value_point - max_over_M`` > 0) and ``residuals_M1`` (of P, all 0).
    """
    d = 2
    C = np.array([[0.0, 2.0, 2.0], [2.0, 0.0, -1.0], [2.0, -1.0, 0.0]])
    P = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 0.0], [1.0, 0.0, 2.0]]) / 3.0
    best_value, best_labels = -np.inf, None
    for labels, M in enumerate_equivalence_matrices(3, d):
        value = float(np.sum(C * M))
        if value > best_value:
            best_value, best_labels = value, labels
    value_point = float(np.sum(C * P))
    return {
        "C": C,
        "point": P,
        "n_clusters": d,
        "value_point": value_point,
        "max_over_M": best_value,
        "argmax_labels": best_labels,
        "gap": value_point - best_value,
        "residuals_M1": residuals_M1(P, d),
    }
