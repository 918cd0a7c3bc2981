r"""Frobenius projections onto M2 and M3 in closed form: the eigenvalue problem (13) and Lemma 1.

Section 3.1.1 of H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", UAI 2013; the sets are defined in :mod:`cvxclust.bregman.sets`, which re-exports
these functions.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
import scipy.linalg as sla

from .._checks import check_n_clusters, check_square_matrix
from ..linalg import eigh_subset
from ..parameters import Interval, check_parameter
from .._checks import as_finite_array

__all__ = ["M2Projector", "double_center", "project_M2", "project_M3", "spectral_threshold"]

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
        Eigenvalues (any order), finite.
    bound : float
        ``bound > 0`` (``d - 1`` for M3).

    Raises
    ------
    ValueError
        Naming ``sigma`` if it is not a finite 1-D array, ``bound`` if it is not positive.
    """
    sigma = as_finite_array(sigma, "sigma", ndim=1)
    bound = check_parameter("bound", bound, [Interval(Real, 0, None, closed="neither")], "spectral_threshold")

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


def double_center(A: np.ndarray) -> np.ndarray:
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
    w, V = np.linalg.eigh(double_center(A))
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
        """``P_M2(A)`` for a symmetric ``A`` of shape (t, t); ``check=True`` also checks that ``A``
        is symmetric (its shape and finiteness are always checked: cheap beside the spectrum)."""
        A = self._check_shape(A)
        if check:
            A = check_square_matrix(A, "A")
        G = double_center(A)
        bound, t = self.d - 1, self.t
        m = self._block_size()
        if m is not None:
            w, V = eigh_subset(G, (t - m, t - 1))
            theta = spectral_threshold(w, bound)
            if w[0] <= theta:
                self.partial_calls += 1
                return self._finish(w, V, theta)
        self.full_calls += 1
        # LAPACK's divide and conquer (syevd), faster than numpy's default for the whole spectrum
        w, V = sla.eigh(G, driver="evd", check_finite=False)
        return self._finish(w, V, spectral_threshold(w, bound))

    def approximate(self, A: np.ndarray) -> np.ndarray:
        r"""A point of M2 near ``P_M2(A)``, at a fraction of the cost of the exact projection.

        With the top eigenvectors ``Q`` (t x m, orthogonal to 1) that the previous call kept,
        one Rayleigh-Ritz step: the Ritz pairs ``(w_i, v_i)`` of ``G = H A_s H``
        (``A_s = (A + A')/2``) on the block Krylov space ``span[Q, G Q]`` replace the top m
        eigenpairs in (13).  When G changes little between calls, as in the late iterations of a
        splitting method, the error is a small fraction of the change.  Cost: two products of G
        with t x m blocks, a QR and an eigendecomposition of size 2m, well below that of the
        partial eigendecomposition.

        Without such a basis (first call, or too many active eigenvalues for a partial
        spectrum), or when the smallest Ritz value exceeds the threshold of (13) (the block may
        miss active eigenvalues), the exact projection.  Everything is in double precision: the
        polishing of ConditionalJC's feasible point needs more accuracy than single precision
        gives.

        The result ``sum_i mu_i v_i v_i' + 11'/t`` with ``mu = clip(w - theta, 0, 1)`` is in M2
        to double precision (the ``v_i`` are orthonormal and orthogonal to 1, and
        ``sum mu <= d - 1``); only its distance to A is not the least.  For methods that need a
        point of M2 but not the projection itself: the solvers' steps between certified checks and
        the polishing of ConditionalJC's feasible point.
        """
        A = self._check_shape(A)
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

    def _check_shape(self, A) -> np.ndarray:
        A = as_finite_array(A, "A", ndim=2)
        if A.shape != (self.t, self.t):
            raise ValueError(f"A must have shape {(self.t, self.t)}, got {A.shape}")
        return A

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
