"""cvxpy statements of the Frobenius normalizations of Y. Yan, C. Shen, H. Wang, "Efficient
Semidefinite Spectral Clustering via Lagrange Duality", IEEE Transactions on Image Processing,
2014.  Builds problems; never solves them."""

from __future__ import annotations

import cvxpy as cp
import numpy as np


def nearest_doubly_stochastic(K: np.ndarray, *, psd: bool) -> cp.Problem:
    r"""The QP (6) (``psd=False``) or the SDP (7) (``psd=True``)::

        minimize    1/2 ||F - K||_F^2
        subject to  F >= 0,  F 1 = 1,  F = F^T   [,  F >> 0]

    The variable is named ``"X"``.  Constraint 0 is ``F >= 0``: its dual value is the
    multiplier Q of (8); constraint 2, when present, is ``F >> 0`` with multiplier Z.
    The factor 1/2 matches the Lagrangian (8) and the dual (12).
    """
    n = K.shape[0]
    F = cp.Variable((n, n), symmetric=True, name="X")
    constraints = [F >= 0, F @ np.ones(n) == np.ones(n)]
    if psd:
        constraints.append(F >> 0)
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(F - K)), constraints)
