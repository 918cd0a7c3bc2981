"""The trace form of the HSIC clustering objective, shared by CLUHSIC and CLUHSICAL."""

from __future__ import annotations

import numpy as np

__all__ = ["trace_objective"]


def trace_objective(K: np.ndarray, A: np.ndarray, P: np.ndarray) -> float:
    """``tr(K P A P^T)`` of float arrays of matching shapes (K m x m, P m x c, A c x c), unchecked:
    the solvers call it on inputs checked at the door (users call
    :func:`cvxclust.cluhsic.objective`).  Two products with P, never an m x m output kernel."""
    return float(np.sum((K @ P) * (P @ A)))
