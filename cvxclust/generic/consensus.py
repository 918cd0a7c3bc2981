"""The X-step of the generic solver's consensus path (:class:`~cvxclust.generic.GenericSolver`,
rows left beside the spectral set): one solve with the rows' Gram matrix ``A A^*``, factored once
per penalty.  It runs on NumPy only (``scipy.sparse`` rows and SciPy's factorizations)."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

__all__ = ["ConsensusStep"]

_TINY = 1e-300


class ConsensusStep:
    """The methods of :class:`~cvxclust.generic.GenericSolver` that take the X-step of its
    consensus path (its state's ``split``, ``gram``, ``rho``, ``copies`` and ``lam``)."""

    def _solve_rows(self, state, r, h):
        """``lambda`` of the X-step: ``(A A^*/h + diag(0, 1/rho)) lambda = r``."""
        split, rho = state.split, state.rho
        m, n_eq = split.A.shape[0], split.n_eq
        if state.factor_key != (rho, h):
            K = state.gram / h
            if m > n_eq:
                K = K + sp.diags(np.r_[np.zeros(n_eq), np.full(m - n_eq, 1.0 / rho)])
            ridge = 1e-13 * max(float(K.diagonal().max()), _TINY)  # redundant equalities
            K = K + ridge * sp.identity(m)
            if m <= 3000:
                factor = sla.cho_factor(K.toarray())
                state.solve = lambda b: sla.cho_solve(factor, b)
            else:
                state.solve = spla.splu(sp.csc_matrix(K)).solve
            state.factor_key = (rho, h)
        return state.solve(r)

    def _x_step(self, state, values, multipliers, t, u_t):
        """X (and the slack s) minimising f plus the copies' penalties subject to the rows."""
        form, split, rho = state.form, state.split, state.rho
        A, n_eq, n = split.A, split.n_eq, form.n
        h = 2.0 * form.c + rho * len(state.copies)
        V = -form.C.copy()
        for name in state.copies:
            V += rho * (values[name] - multipliers[name])
        V /= h
        v = t - u_t
        r = A @ V.ravel()
        r[:n_eq] -= split.lo[:n_eq]
        r[n_eq:] -= v
        lam = self._solve_rows(state, r, h)
        state.lam = lam
        X = V - (A.T @ lam).reshape(n, n) / h
        return X, v + lam[n_eq:] / rho
