"""Shared numerical pieces: projections onto the p.s.d. cone (full and partial) and the simplex,
and alternating projections between two sets."""

from __future__ import annotations

import contextlib
import functools
import os
from numbers import Real

import numpy as np
import scipy.linalg as sla
from threadpoolctl import ThreadpoolController

from ._array_api import is_foreign, namespace_of
from ._checks import as_float_array, check_bool, check_int_range, check_square_matrix
from .parameters import Interval, check_parameter

__all__ = ["alternating_projections", "project_psd", "project_simplex", "project_simplex_rows", "PSDProjector"]

_controller: ThreadpoolController | None = None


def _blas_controller() -> ThreadpoolController:
    """The cached controller.  It is built on first use, after this module's import of
    ``scipy.linalg`` has loaded SciPy's BLAS, so it sees both NumPy's and SciPy's."""
    global _controller
    if _controller is None:
        _controller = ThreadpoolController()
    return _controller


def blas_threads(n: int):
    """Context manager: one BLAS thread for matrices of order ``n < 1500``, all threads beyond.

    The single BLAS policy of the package.  Below that order a BLAS call does too little work
    to pay for waking and synchronising a pool of threads, so a solver that makes many such
    calls (partial eigendecompositions, matrix products of an ADMM step) runs faster on one;
    above it a multithreaded factorization wins.  One cached controller serves every call:
    ``threadpool_limits()`` would rescan the loaded libraries each time.
    """
    n = check_int_range(n, "n", 0)
    return _blas_controller().limit(limits=1 if n < 1500 else None, user_api="blas")


@contextlib.contextmanager
def scipy_blas_threads(n_threads: int):
    """Context manager: at most ``n_threads`` threads for the BLAS that SciPy ships apart from NumPy's.

    The pip wheels of NumPy and SciPy each bundle an OpenBLAS with its own thread pool, and an
    OpenBLAS thread spins for a while after its work is done.  When calls into the two
    alternate, each with a thread per core, the idle pool's spinning threads take the cores the
    other pool needs, which slows both severalfold (in the low-rank CLUHSIC solver: NumPy's
    ``K @ Y`` in the objective against SciPy's L-BFGS-B).  Where one library's BLAS only does
    small vector work (L-BFGS-B's), giving it one thread removes the contention.  A no-op where
    both use one shared library (e.g. conda).
    """
    n_threads = check_int_range(n_threads, "n_threads", 1)
    libs = [lib for lib in _blas_controller().lib_controllers
            if lib.user_api == "blas" and os.path.basename(os.path.dirname(lib.filepath)).startswith("scipy")]
    before = [lib.num_threads for lib in libs]
    for lib in libs:
        lib.set_num_threads(min(n_threads, lib.num_threads))
    try:
        yield
    finally:
        for lib, n in zip(libs, before):
            lib.set_num_threads(n)


def with_blas_threads(order):
    """Decorator for a solver ``func(relaxation, **options)``: run it under
    :func:`blas_threads` ``(order(relaxation))``."""
    if not callable(order):
        raise TypeError(f"order must be a callable order(relaxation) -> int, got {order!r}")

    def decorate(func):
        @functools.wraps(func)
        def solver(relaxation, *args, **kwargs):
            with blas_threads(order(relaxation)):
                return func(relaxation, *args, **kwargs)
        return solver
    return decorate


def eigh_subset(A: np.ndarray, index: tuple[int, int]):
    # syevr on a few eigenpairs, with the thread count of blas_threads
    with blas_threads(len(A)):
        try:
            return sla.eigh(A, subset_by_index=index, driver="evr", check_finite=False)
        except sla.LinAlgError:  # syevr can fail on tightly clustered eigenvalues: use the full solver
            w, V = np.linalg.eigh(A)
            return w[index[0]:index[1] + 1], V[:, index[0]:index[1] + 1]


def project_psd(A: np.ndarray) -> np.ndarray:
    """Nearest p.s.d. matrix to the symmetric ``A`` in Frobenius norm, ``A_+ = sum_{l>0} l v v^T``."""
    A = check_square_matrix(A, "A")
    w, V = np.linalg.eigh(A)
    keep = w > 0
    Vp = V[:, keep] * np.sqrt(w[keep])
    return Vp @ Vp.T


def alternating_projections(start: np.ndarray, project, project_other, relaxation: float = 1.9):
    r"""Relaxed alternating projections between two closed convex sets A and B: from ``start`` in
    A, yields it and then the A point of every round

    .. math:: W_+ = P_A\big(W + \lambda\,(P_B(W) - W)\big).

    For ``lambda`` in (0, 2) the round is a composition of averaged operators whose fixed points
    are ``A ∩ B`` (when it is not empty), so the points converge to a point of the intersection
    near the start: each round leaves less violation of B for a final repair to remove.
    Over-relaxing the projection onto B (``lambda`` near 2) about halves the rounds against
    von Neumann's method (``lambda = 1``).  ``project`` and ``project_other`` are the two
    projections (callables on arrays); the generator never ends, so the caller decides when
    the points are good enough.
    """
    W = start
    while True:
        yield W
        W = project(W + relaxation * (project_other(W) - W))


def project_simplex(v: np.ndarray, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of the vector ``v`` onto ``{x >= 0, sum(x) = total}``.

    Sort-based algorithm of Held, Wolfe & Crowder (1974) / Duchi et al. (2008):
    ``x = max(v - theta, 0)`` with the threshold ``theta`` found from the sorted values.

    Raises
    ------
    ValueError
        Naming ``v`` unless it is a non-empty, finite, real 1-D array, and ``total`` unless it
        is a positive finite number.
    """
    if isinstance(total, (bool, np.bool_)) or not isinstance(total, (int, float, np.integer, np.floating)) or not (
            0 < total < np.inf):
        raise ValueError(f"total must be a positive finite number, got {total!r}")
    v = _real_array(v, "v")
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"v must be a non-empty 1-D array, got shape {v.shape}")
    if not np.isfinite(v).all():
        raise ValueError("v contains NaN or infinite entries")
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - total
    index = np.arange(1, len(u) + 1)
    rho = np.nonzero(u - cumulative / index > 0)[0][-1]
    theta = cumulative[rho] / (rho + 1)
    return np.maximum(v - theta, 0.0)


class PSDProjector:
    """Repeated projections onto the p.s.d. cone that compute only the smaller side of the spectrum.

    ``A_+ = A - A_-``: when the previous call found few negative eigenvalues, only the
    ``k + margin`` smallest eigenpairs are computed (LAPACK ``syevr`` by index), and vice versa,
    which skips most of the back-transformation a full ``eigh`` pays.  If the computed block
    does not reach past zero (the split moved by more than the margin) the call falls back to
    the full decomposition, so the result is always exact.  ``partial=False`` always uses the
    full decomposition.
    """

    #: below this size the back-transformation a partial decomposition saves is too small to pay
    #: for its extra set-up: a full eigh is as fast
    min_partial_size = 300

    def __init__(self, n: int, *, partial: bool = True, switch_fraction: float = 0.25,
                 min_partial_size: int | None = None):
        n = check_int_range(n, "n", 1)
        partial = check_bool(partial, "partial")
        switch_fraction = check_parameter("switch_fraction", switch_fraction,
                                             [Interval(Real, 0, 1, closed="both")], "PSDProjector")
        self.n = n
        if min_partial_size is not None:
            self.min_partial_size = check_int_range(min_partial_size, "min_partial_size", 1)
        self.partial = partial and n >= self.min_partial_size
        self.switch = switch_fraction * n
        self.n_positive: int | None = None
        self.full_calls = 0
        self.partial_calls = 0

    def __call__(self, A: np.ndarray) -> np.ndarray:
        if is_foreign(A):
            return self._project_foreign(A)
        n, n_pos = self.n, self.n_positive
        # O(n^2) checks, cheap beside an eigendecomposition; A is not symmetrised (same iterates)
        A = as_float_array(A, "A", "matrix")
        if A.shape != (n, n):
            raise ValueError(f"A must be {n} x {n} for this PSDProjector(n={n}), got shape {A.shape}")
        if not np.all(np.isfinite(A)):
            raise ValueError("A contains NaN or infinite entries")
        if np.abs(A - A.T).max() > 1e-10 * np.abs(A).max():
            raise ValueError("A must be symmetric")
        if self.partial and n_pos is not None:
            small = min(n_pos, n - n_pos)
            m = small + max(8, small // 4)
            if m < self.switch:
                if n - n_pos <= n_pos:  # few negative eigenvalues: A_+ = A - A_-
                    w, V = eigh_subset(A, (0, m - 1))
                    if w[-1] >= 0:
                        neg = w < 0
                        self.n_positive = n - int(neg.sum())
                        self.partial_calls += 1
                        Vn = V[:, neg] * np.sqrt(-w[neg])
                        return A + Vn @ Vn.T
                else:
                    w, V = eigh_subset(A, (n - m, n - 1))
                    if w[0] <= 0:
                        pos = w > 0
                        self.n_positive = int(pos.sum())
                        self.partial_calls += 1
                        Vp = V[:, pos] * np.sqrt(w[pos])
                        return Vp @ Vp.T
        self.full_calls += 1
        w, V = np.linalg.eigh(A)
        keep = w > 0
        self.n_positive = int(keep.sum())
        if self.n_positive <= n // 2:
            Vp = V[:, keep] * np.sqrt(w[keep])
            return Vp @ Vp.T
        Vn = V[:, ~keep] * np.sqrt(-w[~keep])
        return A + Vn @ Vn.T

    def _project_foreign(self, A):
        """The projection of an array of another array API library, on its device: one full
        eigendecomposition there (LAPACK by index, the partial path, is NumPy's), then the
        smaller side of the spectrum.  The caller's checks hold (square, finite, symmetric)."""
        n = self.n
        if tuple(A.shape) != (n, n):
            raise ValueError(f"A must be {n} x {n} for this PSDProjector(n={n}), got shape {tuple(A.shape)}")
        xp = namespace_of(A)
        self.full_calls += 1
        w, V = xp.linalg.eigh(A)
        keep = w > 0
        self.n_positive = int(xp.sum(xp.astype(keep, xp.int64)))
        few_positive = self.n_positive <= n // 2
        # the kept side's square roots, zero elsewhere: V's columns scaled (in place where the
        # library allows it, an n x n array less), then one product
        scale = xp.sqrt(xp.where(keep, w, 0.0) if few_positive else xp.where(keep, 0.0, -w))
        del w, keep
        if hasattr(V, "mul_"):  # PyTorch
            V.mul_(scale[None, :])
            return V @ V.T if few_positive else A.addmm(V, V.T)
        V = V * scale[None, :]
        return V @ V.T if few_positive else A + V @ V.T



def project_simplex_rows(V: np.ndarray, max_newton: int = 30, *, start: np.ndarray | None = None,
                         return_thresholds: bool = False):
    r"""Euclidean projection of every row of ``V`` onto the unit simplex, all rows at once.

    The projection of a row ``v`` is ``max(v - theta, 0)`` with ``theta`` the root of the convex,
    decreasing, piecewise-linear ``phi(theta) = sum_j max(v_j - theta, 0) - 1``.  Newton's
    method from ``theta_0 = max(v) - 1`` (where ``phi >= 0``) climbs monotonically to the root and
    stops exactly once the active set ``{j : v_j > theta}`` no longer changes (Michelot 1986;
    Condat 2016 compares it with the rest):

    .. math::

        \theta_{k+1} = \theta_k + \frac{\phi(\theta_k)}{|\{j : v_j > \theta_k\}|}.

    It takes a few passes over the matrix, each cheaper than the sort of every row that the
    classic algorithm needs.  Rows not settled after ``max_newton`` steps fall back to the
    sort-based algorithm of :func:`project_simplex` (Held, Wolfe & Crowder 1974; Duchi et al.
    2008), batched over rows.

    ``start`` (one threshold per row, e.g. those of the previous call of an iterative method)
    warm-starts Newton's method: its first step from any ``theta_0 < max(v)`` lands where
    ``phi >= 0`` (phi is convex, so it lies above its tangent at ``theta_0``), and the climb goes
    on from there; near the root that takes fewer passes than a cold start.  ``return_thresholds``
    also returns the thresholds, for the next call.

    Raises
    ------
    ValueError
        Naming ``V`` unless it is a finite real 2-D array with at least one column, ``start``
        unless it holds one finite threshold per row, ``max_newton`` unless it is an int >= 0.
    """
    V = _real_array(V, "V")
    if V.ndim != 2 or V.shape[1] == 0:
        raise ValueError(f"V must be a 2-D array with at least one column, got shape {V.shape}")
    if isinstance(max_newton, (bool, np.bool_)) or not isinstance(max_newton, (int, np.integer)) or max_newton < 0:
        raise ValueError(f"max_newton must be an int >= 0, got {max_newton!r}")
    top = V.max(axis=1)
    # a NaN or +inf shows in the row maxima; -inf only in the minima (one more pass over V)
    if not (np.isfinite(top).all() and np.isfinite(V.min(axis=1, initial=np.inf)).all()):
        raise ValueError("V contains NaN or infinite entries")
    warm = start is not None
    if warm:
        start = _real_array(start, "start")
        if start.shape != top.shape or not np.isfinite(start).all():
            raise ValueError(f"start must hold one finite threshold per row of V, shape {top.shape}")
    # below max(v), so that at least one entry is active; the step from there may go left
    theta = np.minimum(start, top - 1e-12 * (1.0 + np.abs(top))) if warm else top - 1.0
    rows = np.arange(V.shape[0])
    D = np.empty_like(V)
    for _ in range(max_newton):
        W = V[rows] if rows.size < V.shape[0] else V
        np.subtract(W, theta[rows, None], out=D[: rows.size])
        np.maximum(D[: rows.size], 0.0, out=D[: rows.size])
        step = (D[: rows.size].sum(axis=1) - 1.0) / np.count_nonzero(D[: rows.size], axis=1)
        # a warm first step may go left; after it phi >= 0 and the climb is monotone
        moving = (np.abs(step) if warm else step) > 1e-15 * (1.0 + np.abs(theta[rows]))
        warm = False
        theta[rows[moving]] += step[moving]
        rows = rows[moving]
        if rows.size == 0:
            break
    else:
        theta[rows] = _simplex_thresholds(V[rows])
    P = np.maximum(V - theta[:, None], 0.0)
    return (P, theta) if return_thresholds else P


def _real_array(x, name: str) -> np.ndarray:
    """``x`` as a float array (float32 and read-only inputs are converted or used, never
    modified), or ``ValueError`` naming it; complex values are refused, not cast."""
    if np.iscomplexobj(x):
        raise ValueError(f"{name} must be real, got complex values")
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array") from None


def _simplex_thresholds(V: np.ndarray) -> np.ndarray:
    """The thresholds of the sort-based simplex projection, one per row."""
    t = V.shape[1]
    U = -np.sort(-V, axis=1)  # rows in descending order
    C = np.cumsum(U, axis=1)
    C -= 1.0
    positive = U - C / np.arange(1, t + 1) > 0  # true on a prefix of each row
    last = positive.sum(axis=1) - 1
    return C[np.arange(V.shape[0]), last] / (last + 1)
