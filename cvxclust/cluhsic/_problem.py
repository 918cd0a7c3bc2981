"""The cvxpy statement of the CLUHSIC SDP (5.23) (Yang, Kwok & Lu); builds problems, never solves them."""

from __future__ import annotations

import cvxpy as cp
import numpy as np

__all__ = ["cluhsic_sdp_problem"]


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
    """
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
