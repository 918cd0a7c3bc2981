r"""The augmented Lagrangian of the low-rank method (:mod:`cvxclust.generic.lowrank`) on its factor,
as methods of :class:`FactorLagrangian`, a base class of :class:`~cvxclust.generic.lowrank.LowRank`:
the factor of the free variable, the point returned, ``L_s`` with its gradient, and the dense
multiplier of ``X >= 0`` where it holds it (the math in the module docstring of
:mod:`cvxclust.generic.lowrank`).
"""

from __future__ import annotations

import numpy as np

from .._memory import available_bytes, check_memory, square_bytes
from .lowrank_check import nonnegative_term, nonnegative_violation, shifted

__all__ = ["DENSE_MULTIPLIER_MAX_N", "MULTIPLIER_PENALTY_CAP", "FactorLagrangian"]

_TINY = 1e-300
#: the order up to which ``nonnegative="auto"`` hands ``X >= 0`` to a dense multiplier where the bound stalls
DENSE_MULTIPLIER_MAX_N = 1000
#: the largest penalty over the first with a dense multiplier of ``X >= 0``, whose term over ``n^2``
#: entries a larger one conditions too badly for L-BFGS-B (measured on k-means SDPs with rows)
MULTIPLIER_PENALTY_CAP = 1e4


class FactorLagrangian:
    """The factor and the augmented Lagrangian of :class:`~cvxclust.generic.lowrank.LowRank`
    (module docstring); its state is a :class:`~cvxclust.generic.lowrank.LowRankState`, and it
    reads the solver's ``nonnegative`` option."""

    @staticmethod
    def _factor(state, W):
        """``(V, norms)``: the factor of the free variable (rows scaled to sqrt(d) where the
        diagonal is fixed; norms the rows' norms of W, None otherwise)."""
        d = state.kind.diagonal
        if d is None:
            return W, None
        norms = np.maximum(np.linalg.norm(W, axis=1), _TINY)
        return W * (state.kind.sqrt_diagonal / norms)[:, None], norms

    def _point(self, state) -> np.ndarray:
        """The factor of the point certified and returned: that of W, and where a row
        ``1^T X 1 = 0`` forces ``X 1 = 0``, moved onto ``V^T 1 = 0`` with the diagonal held by
        alternating the projection and the rows' scaling (each step moves V by the other's
        violation, so a few steps meet both to rounding)."""
        if state.device is not None:
            return state.device.factor(state.W)
        V = self._factor(state, state.W)[0]
        if not state.kind.deflate:
            return V
        d = state.kind.sqrt_diagonal if state.kind.diagonal is not None else None
        for _ in range(20):
            V = V - V.mean(axis=0)
            if d is None:
                break
            V *= (d / np.maximum(np.linalg.norm(V, axis=1), _TINY))[:, None]
            if np.abs(V.sum(axis=0)).max() <= 1e-15 * max(float(np.abs(V).sum()), _TINY):
                break
        return V

    def _lagrangian(self, state, w_flat):
        """``L_s`` of module docstring at the free variable and its gradient."""
        form, rows, shape = state.form, state.rows, state.W.shape
        W = w_flat.reshape(shape)
        V, norms = self._factor(state, W)
        CV = form.cost.matmul(V)
        value = float(np.vdot(V, CV))
        if form.m:
            r = self._active_residual(state, shifted(rows.apply(V), state.y, state.penalty, form.lo, form.hi))
            multiplier = state.y - state.penalty * r
            value += float(-state.y @ r + 0.5 * state.penalty * (r @ r))
            CV -= rows.adjoint_matmul(multiplier, V)
        if state.Z is not None:  # X >= 0 by its dense multiplier
            X = np.matmul(V, V.T, out=state.work[0])
            term, T = nonnegative_term(state.Z, state.penalty, X, state.work[1])
            value += term
            CV -= T @ V
        if state.w is not None:  # the bounds on the diagonal: rows <e_i e_i^T, X> of their own
            r = shifted(np.einsum("ij,ij->i", V, V), state.w, state.penalty, *state.kind.box)
            value += float(-state.w @ r + 0.5 * state.penalty * (r @ r))
            CV -= (state.w - state.penalty * r)[:, None] * V
        if state.kind.deflate:  # X 1 = 0 as the linear constraint V^T 1 = 0 on the factor
            total = V.sum(axis=0)
            value += float(-state.shift @ total + 0.5 * state.penalty * (total @ total))
            CV -= 0.5 * (state.shift - state.penalty * total)
        G = 2.0 * CV
        if norms is not None:  # the chain rule through the unit rows
            U = W / norms[:, None]
            G = (G - np.einsum("ij,ij->i", G, U)[:, None] * U) * (state.kind.sqrt_diagonal / norms)[:, None]
        return value, G.ravel()

    @staticmethod
    def _active_residual(state, r: np.ndarray) -> np.ndarray:
        """``r`` without the row ``1^T X 1 = 0``, held as ``V^T 1 = 0`` (:meth:`_lagrangian`)."""
        if state.kind.deflate:
            r = r.copy()
            r[state.kind.zero_row] = 0.0
        return r

    def _update_nonnegative(self, state, V) -> float:
        """The update ``Z <- max(0, Z - s V V^T)`` of the dense multiplier of ``X >= 0`` (exactly
        symmetric), and the relative violation of ``X >= 0`` at V."""
        X = np.matmul(V, V.T, out=state.work[0])
        T = nonnegative_term(state.Z, state.penalty, X, state.work[1])[1]
        state.Z = 0.5 * (T + T.T)
        return nonnegative_violation(X)

    def _dense_multiplier(self, form, kind) -> bool:
        """Whether ``X >= 0`` may be held by a dense multiplier (``nonnegative``): ``"multiplier"``
        (its memory checked), ``"factor"`` never, ``"auto"`` up to order :data:`DENSE_MULTIPLIER_MAX_N`
        where its arrays fit; never where ``X >= 0`` does not stand."""
        if not kind.nonnegative or self.nonnegative == "factor":
            return False
        need = square_bytes(form.n, 4)  # Z, two work arrays and Z's update
        what = f"the dense multiplier of X >= 0 at order {form.n} (four {form.n} x {form.n} arrays)"
        if self.nonnegative == "multiplier":
            check_memory(need, what, "give nonnegative='factor'")
            return True
        available = available_bytes()
        return form.n <= DENSE_MULTIPLIER_MAX_N and (available is None or need <= available // 2)

    @staticmethod
    def _hold_by_multiplier(state, Z) -> None:
        """From here on ``X >= 0`` is held by the dense multiplier Z (a factor of any sign), the
        penalty's cap counted from the penalty now."""
        n = state.form.n
        state.Z, state.work = Z, (np.empty((n, n)), np.empty((n, n)))
        state.penalty_start, state.residual, state.switch = state.penalty, np.inf, None
