"""Shared numerical pieces: projections onto the p.s.d. cone (full and partial)."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

__all__ = ["project_psd", "PSDProjector"]


def project_psd(A: np.ndarray) -> np.ndarray:
    """Nearest p.s.d. matrix to the symmetric ``A`` in Frobenius norm, ``A_+ = sum_{l>0} l v v^T``."""
    w, V = np.linalg.eigh(A)
    keep = w > 0
    Vp = V[:, keep] * np.sqrt(w[keep])
    return Vp @ Vp.T


class PSDProjector:
    """Repeated projections onto the p.s.d. cone that compute only the smaller side of the spectrum.

    ``A_+ = A - A_-``: when the previous call found few negative eigenvalues, only the negative
    eigenpairs are computed (LAPACK ``syevr`` restricted to ``(-inf, 0]``), and vice versa, which
    skips most of the back-transformation that a full ``eigh`` pays.  The eigenvalue split found
    by each call guides the next, so iterative solvers whose iterates change slowly profit.
    ``partial=False`` always uses the full decomposition.
    """

    def __init__(self, n: int, *, partial: bool = True, switch_fraction: float = 0.3):
        self.n = n
        self.partial = partial and n >= 64
        self.switch = switch_fraction * n
        self.n_positive: int | None = None

    def __call__(self, A: np.ndarray) -> np.ndarray:
        n_pos = self.n_positive
        if not self.partial or n_pos is None or self.switch <= n_pos <= self.n - self.switch:
            w, V = np.linalg.eigh(A)
            keep = w > 0
            self.n_positive = int(keep.sum())
            if self.n_positive <= self.n // 2:
                Vp = V[:, keep] * np.sqrt(w[keep])
                return Vp @ Vp.T
            Vn = V[:, ~keep] * np.sqrt(-w[~keep])
            return A + Vn @ Vn.T
        if n_pos > self.n - self.switch:  # few negative eigenvalues: A_+ = A - A_-
            w, V = sla.eigh(A, subset_by_value=(-np.inf, 0.0), driver="evr", check_finite=False)
            self.n_positive = self.n - len(w)
            Vn = V * np.sqrt(-w)
            return A + Vn @ Vn.T
        w, V = sla.eigh(A, subset_by_value=(0.0, np.inf), driver="evr", check_finite=False)
        self.n_positive = len(w)
        Vp = V * np.sqrt(w)
        return Vp @ Vp.T
