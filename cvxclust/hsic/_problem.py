"""The cvxpy statement of the CLUHSIC SDP (5.23) (Yang, Kwok & Lu); builds problems, never solves them."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from .._array_api import check_arrays, is_foreign, to_numpy
from .._checks import check_kernel, check_labels
from ..structures import check_output_kernel

__all__ = ["check_sdp_inputs", "cluhsic_sdp_problem"]


def check_sdp_inputs(K, A, known=None) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """K (m x m, symmetric, finite), A (c x c output kernel, p.s.d., ``c <= m``) and the known
    labels (``-1`` unknown, None for none) of (5.23) as new arrays, or a ValueError naming the
    argument; known labels that leave (5.23) infeasible are refused.

    K may be an array of another array API library (PyTorch, CuPy, ...): it is checked there and
    returned on its device (:func:`cvxclust._checks.check_kernel`); A, a c x c structure, may
    be a NumPy array or an array of K's library and device, and is returned as a NumPy array, as
    are the labels ``known``."""
    if is_foreign(K) or is_foreign(A):
        check_arrays(K=K, A=A if is_foreign(A) else None)
        A = to_numpy(A)
    K = check_kernel(K, "K")
    A = check_output_kernel(A)
    m, c = K.shape[0], A.shape[0]
    if c > m:
        raise ValueError(f"A must be at most {m} x {m} (one row per cluster, at most one "
                         f"cluster per point of K), got {A.shape}")
    if known is None:
        return K, A, None
    known = check_labels(to_numpy(known) if is_foreign(known) else known, m, c, name="known", allow_unknown=True)
    # a cluster with no known point must be reachable by a distinct unknown point
    missing = c - np.unique(known[known >= 0]).size
    if missing > np.count_nonzero(known < 0):
        raise ValueError(f"known leaves {missing} clusters without a known point but only "
                         f"{np.count_nonzero(known < 0)} unknown points: (5.23) is infeasible")
    return K, A, known


def cluhsic_sdp_problem(K: np.ndarray, A: np.ndarray, known: np.ndarray | None = None) -> cp.Problem:
    r"""The cvxpy statement of (5.23); builds it, never solves it.

    ::

        maximize    tr((A kron K) X)
        subject to  X >> 0                          (constraint 0)
                    X >= 0                          (constraint 1)
                    tr X_[ij] = delta_ij, i <= j     (constraint 2: odiag(X) = I, (5.20))
                    sum_i X_[ii] 1 = 1               (constraint 3: bdiag(X) 1 = 1, (5.19))
                    X[(l, p), :] = 0                 (constraint 4, only with known labels:
                                                      known point p, every cluster l != known[p])

    The variable is the symmetric ``mc x mc`` matrix named ``"X"``; block (i, j) is
    ``X[i*m:(i+1)*m, j*m:(j+1)*m]``.  bdiag and odiag are written as sums and traces of slices,
    so cvxpy sees them as the linear operators they are.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric finite input kernel (centred by the caller, (2.2)).
    A : array-like of shape (c, c)
        Symmetric p.s.d. output kernel, ``c <= m``.
    known : array-like of shape (m,), optional
        Known labels, ``-1`` for unknown (Section 6).

    Raises
    ------
    ValueError
        Naming ``K``, ``A`` or ``known``.
    """
    K, A, known = check_sdp_inputs(K, A, known)
    if is_foreign(K):
        raise TypeError("the cvxpy statement of (5.23) needs K as a NumPy array (cvxpy runs on the CPU): pass "
                        "K as a NumPy array, or solve the relaxation on K's device with method='admm'")
    m, c = K.shape[0], A.shape[0]
    X = cp.Variable((m * c, m * c), symmetric=True, name="X")

    def block(i, j):
        return X[i * m:(i + 1) * m, j * m:(j + 1) * m]

    rows, cols = np.triu_indices(c)
    odiag = cp.hstack([cp.trace(block(i, j)) for i, j in zip(rows, cols)])
    bdiag = sum(block(i, i) for i in range(c))
    constraints = [
        X >> 0,
        X >= 0,
        odiag == (rows == cols).astype(float),
        bdiag @ np.ones(m) == np.ones(m),
    ]
    zero_rows = _zero_rows(known, m, c)
    if zero_rows.size:
        constraints.append(X[zero_rows, :] == 0)
    objective = sum(A[i, j] * cp.trace(K @ block(j, i)) for i in range(c) for j in range(c) if A[i, j] != 0)
    return cp.Problem(cp.Maximize(objective), constraints)


def _zero_rows(known, m: int, c: int) -> np.ndarray:
    """Indices ``l*m + p`` of the rows forced to zero by the known labels."""
    if known is None:
        return np.zeros(0, dtype=int)
    p = np.flatnonzero(known >= 0)
    rows = [l * m + p[known[p] != l] for l in range(c)]
    return np.sort(np.concatenate(rows)).astype(int)
