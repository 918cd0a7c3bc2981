r"""The certificate and the rank growth of the low-rank method (:mod:`cvxclust.generic.lowrank`),
as methods of :class:`LowRankChecks`, a base class of :class:`~cvxclust.generic.lowrank.LowRank`.

At a check, the multipliers of the rows are the augmented Lagrangian's, those of the diagonal and
of ``X >= 0`` come from the factor's first-order conditions, and the bound from the smallest
eigenvalue of the dual slack (:mod:`cvxclust.generic.lowrank_certificate`); where that eigenvalue
is clearly negative, its eigenvector becomes a new column of the factor at the next iteration.
"""

from __future__ import annotations

import math

import numpy as np

from ..result import relative_gap
from ..solvers import Certificate
from .lowrank_certificate import SlackOperator, nonnegative_multiplier, slack_bound
from .lowrank_form import trace_shift

__all__ = ["LowRankChecks", "dual_constant", "nonnegative_term", "nonnegative_violation", "shifted",
           "signed_multipliers", "violation"]

_TINY = 1e-300
#: the checks in a row without halving a gap above ``max(tol, STALLED_GAP)`` after which
#: ``nonnegative="auto"`` hands ``X >= 0`` to a dense multiplier (measured on k-means SDPs: the
#: nonnegative factor's bound plateaus below 1e-5 on its way to a certificate, and stalls above 1e-3)
STALLED_CHECKS, STALLED_GAP = 3, 1e-4


def violation(a: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max(0, lo - a, a - hi)``: by how much the values a leave ``[lo, hi]``."""
    return np.maximum(np.maximum(lo - a, a - hi), 0.0)


def shifted(a: np.ndarray, y: np.ndarray, s: float, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    r"""``r = a - clip(a - y / s, lo, hi)``: the residual of the augmented Lagrangian of the rows
    ``lo <= a <= hi`` at the multipliers y and the penalty s.

    The term of the rows in the augmented Lagrangian is
    ``(s/2) dist(a - y/s, [lo, hi])^2 - ||y||^2 / (2s) = -y^T r + (s/2) ||r||^2`` (Rockafellar's,
    continuously differentiable), of gradient ``-(y - s r)`` in a, and the update is
    ``y <- y - s r``; for an equality row (``lo = hi = b``) r is ``a - b``, and for an inequality
    ``g = a - hi <= 0`` with ``mu = -y >= 0`` the term is ``(s/2) max(0, g + mu/s)^2 - mu^2/(2s)``
    and the update ``mu <- max(0, mu + s g)``.  After an update, ``y > 0`` only where the lower
    bound holds it and ``y < 0`` only where the upper bound does."""
    return a - np.clip(a - y / s, lo, hi)


def nonnegative_term(Z: np.ndarray, s: float, X: np.ndarray, T: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    r"""``(||max(0, Z - s X)||_F^2 / (2s), T)`` with ``T = max(0, Z - s X)``, at ``X = V V^T``:
    the term of ``X >= 0`` in an augmented Lagrangian of dense multiplier ``Z >= 0`` and penalty
    s, without its constant ``-||Z||^2 / (2s)`` (which would only cost the line searches digits).

    Its gradient in X is ``-T``, in V ``-2 T V``, and the multiplier's update is ``Z <- T``
    (Rockafellar's, as :func:`shifted` for the rows).  ``T`` (``n x n``, overwritten) is a work
    array where given."""
    T = np.multiply(X, -s, out=T)
    T += Z
    np.maximum(T, 0.0, out=T)
    return float(np.vdot(T, T)) / (2.0 * s), T


def nonnegative_violation(X: np.ndarray) -> float:
    """The relative violation of ``X >= 0`` (its most negative entry over ``max |X|``), as
    :meth:`~cvxclust.generic.StandardForm.residuals` defines it."""
    return max(-float(X.min()), 0.0) / max(float(np.abs(X).max()), _TINY)


def signed_multipliers(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """y with 0 where its sign has no finite bound to pair with: ``y > 0`` needs a finite ``lo``,
    ``y < 0`` a finite ``hi`` (an equality row takes either sign)."""
    return np.where(((y > 0) & ~np.isfinite(lo)) | ((y < 0) & ~np.isfinite(hi)), 0.0, y)


def dual_constant(y: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """``sum_r y_r (lo_r if y_r > 0 else hi_r)`` for multipliers of :func:`signed_multipliers`:
    the part of the bound that the rows ``lo <= A(X) <= hi`` give (``b^T y`` for equalities)."""
    return float(np.where(y > 0, lo, np.where(y < 0, hi, 0.0)) @ y) if y.size else 0.0


class LowRankChecks:
    """The checks of :class:`~cvxclust.generic.lowrank.LowRank`: its certificate (``certify``),
    the residuals of a factor and the growth of the rank (module docstring).  It reads the
    solver's ``tol`` and ``gap_floor`` and the factor of the point, ``_point(state)``."""

    @staticmethod
    def _row_residual(state, V, a) -> float:
        """The relative violation of the rows, ``A(V V^T) = a``, as
        :meth:`~cvxclust.generic.StandardForm.residuals` defines it, ``max|X|`` being the largest
        diagonal entry of ``V V^T``."""
        form = state.form
        scale = max(float(np.einsum("ij,ij->i", V, V).max()), _TINY)
        size = np.maximum(np.maximum(np.where(np.isfinite(form.lo), np.abs(form.lo), 0.0),
                                     np.where(np.isfinite(form.hi), np.abs(form.hi), 0.0)), form.row_norms * scale)
        return float(max((violation(a, form.lo, form.hi) / np.maximum(size, _TINY)).max(), 0.0))

    @staticmethod
    def _box_residual(state, x) -> float:
        """The relative violation of the bounds on the diagonal x of ``V V^T`` (``kind.box``), as
        :meth:`~cvxclust.generic.StandardForm.residuals` defines it."""
        lower, upper = state.kind.box
        size = np.maximum(np.where(np.isfinite(lower), np.abs(lower), 0.0),
                          np.where(np.isfinite(upper), np.abs(upper), 0.0))
        size = np.maximum(size, max(float(x.max()), _TINY))
        return float((violation(x, lower, upper) / size).max())

    # -- certification --------------------------------------------------------------------------
    def _multipliers(self, state, V, y):
        """``(w, Z)`` of the certificate at the row multipliers y (module docstring of the
        certificate)."""
        form, kind = state.form, state.kind
        S1V = form.cost.matmul(V)
        if form.m:
            S1V -= state.rows.adjoint_matmul(y, V)
        if state.Z is not None:  # held by a dense multiplier: S_1 = C - A^*(y) - Z
            S1V -= state.Z @ V
        w = np.zeros(form.n) if state.w is None else signed_multipliers(state.w, *kind.box)
        if kind.diagonal is not None:
            positive = kind.diagonal > 0
            shift = np.zeros(V.shape[1])
            # where X 1 = 0 is forced, the slack is J S J: stationarity asks (S_1 - Diag(w)) V = 1 mu^T
            # only, mu = the mean row; a few fixed-point rounds find w and mu together
            for _ in range(30 if kind.deflate else 1):
                w[positive] = np.einsum("ij,ij->i", S1V - shift, V)[positive] / kind.diagonal[positive]
                if kind.deflate:
                    shift = (S1V - w[:, None] * V).mean(axis=0)
        Z = state.Z
        if Z is None and kind.nonnegative:
            Z = nonnegative_multiplier(S1V - w[:, None] * V, V)
        return w, Z

    def _bound_at(self, state, V, y) -> dict:
        """:func:`~cvxclust.generic.lowrank_certificate.slack_bound` at the row multipliers y."""
        form, kind = state.form, state.kind
        y = signed_multipliers(y, form.lo, form.hi)
        w, Z = self._multipliers(state, V, y)
        S = SlackOperator(form.cost, state.rows, y, w, Z, deflate=kind.deflate)
        constant = dual_constant(y, form.lo, form.hi)
        if kind.diagonal is not None:
            constant += float(kind.diagonal @ w)
        elif kind.box is not None:
            constant += dual_constant(w, *kind.box)
        # Lanczos to a residual whose loss in the bound, tau ||r||, is a thousandth of tol
        value = abs(form.cost.inner_factor(V)) if state.value is None else state.value
        accuracy = 1e-3 * self.tol * max(value, self.gap_floor, _TINY) / max(kind.tau * S.norm_bound(state.cost_norm),
                                                                            _TINY)
        # on the sphere's product: Lanczos aimed at a Ritz residual costing a twentieth of tol in the bound
        aim = 0.05 * self.tol * max(value, self.gap_floor, _TINY) / kind.tau if state.oblique else None
        found = slack_bound(S, constant, kind.tau, state.cost_norm, random_state=state.rng, start=state.start_vector,
                            tol=float(np.clip(accuracy, 1e-12, 1e-3)), residual=aim)
        state.eigsh += 1
        state.lanczos_matvecs += found["products"]
        found["multiplier"] = Z
        return found

    def certify(self, state, bound, final=False):
        form, kind = state.form, state.kind
        V = self._point(state)
        inner = form.cost.inner_factor(V)
        state.value, value = abs(inner), inner + form.constant
        found = self._bound_at(state, V, state.y)
        residuals = self._residuals(state, V)
        # not where this check stops the solve (gap and residuals met): the slack of a solution is singular,
        # its smallest eigenvalue zero up to Lanczos's accuracy and of either sign, and a second run gains nothing
        stops = relative_gap(value, found["bound"] + form.constant, self.gap_floor) <= self.tol \
            and max(residuals.values()) <= self.residual_tol
        if found["lambda_min"] < 0 and kind.shift is not None and not stops:
            # the multipliers of a trace row with row sums are not unique: raise S where it is indefinite
            move = trace_shift(kind, np.einsum("ij,ij->i", V, V), -1.01 * found["lambda_min"], form.m)
            moved = self._bound_at(state, V, state.y + move)
            if moved["bound"] > found["bound"]:
                found = moved
        state.lambda_min = found["lambda_min"]
        gap = relative_gap(value, found["bound"] + form.constant, self.gap_floor)
        if gap <= 0.5 * state.last_gap:  # the gap halved since the last reference: a new one
            state.last_gap, state.stalled = gap, 0
        else:
            state.stalled += 1
        if state.switchable and state.Z is None and not final and gap > max(self.tol, STALLED_GAP) \
                and state.stalled >= STALLED_CHECKS:
            # the bound stalls with the multiplier built from the factor: a dense one from it on
            state.switch = found["multiplier"]
        if state.oblique:
            self.next_gradient_tolerance(state, found["lambda_min"])
        state.start_vector = found["vector"]
        return self.factor_certificate(state, found, inner, residuals, V.shape[1], final)

    def next_gradient_tolerance(self, state, lambda_min: float) -> None:
        """For a fixed diagonal alone, the next gradient tolerance: below the last as the gap is above
        tol (the gap falling about as the gradient)."""
        gap = state.kind.tau * max(-lambda_min, 0.0) / max(state.value, self.gap_floor, _TINY)
        ratio = float(np.clip(0.5 * self.tol / max(gap, _TINY), 0.1, 0.5))
        state.gtol = max(1e-2 * self.tol, ratio * state.gradient_reached)

    @staticmethod
    def factor_certificate(state, found: dict, inner: float, residuals: dict, rank: int, final: bool) -> Certificate:
        """The certificate of a check from the bound ``found``, ``<C, V V^T> = inner`` and the
        residuals, in the problem's sense; the rank's growth booked for the next step."""
        form = state.form
        minimum = found["bound"] + form.constant
        fresh = minimum if form.sense == "minimize" else -minimum
        value = inner + form.constant
        objective = value if form.sense == "minimize" else -value
        # the rank grows at the next step (the factor certified here is the one returned if this check stops)
        state.growth = None if final else (found, value, minimum)
        return Certificate(None, fresh, objective, residuals, {"lambda_min": found["lambda_min"], "rank": rank})

    def _residuals(self, state, V) -> dict:
        form, kind = state.form, state.kind
        residuals = {"symmetry": 0.0}
        if kind.diagonal is not None or kind.nonnegative or kind.box is not None:
            diagonal = np.einsum("ij,ij->i", V, V)
            scale = max(float(diagonal.max()), _TINY)
            violated = 0.0  # V >= 0 exactly: X >= 0 holds; a fixed diagonal up to rounding
            if kind.diagonal is not None:
                violated = float((np.abs(diagonal - kind.diagonal) / np.maximum(kind.diagonal, scale)).max())
            if kind.box is not None:
                violated = self._box_residual(state, diagonal)
            if state.Z is not None:  # X >= 0 held by a multiplier: its negative entries
                violated = max(violated, nonnegative_violation(V @ V.T))
            residuals["bounds"] = violated
        if form.m:
            residuals["rows"] = self._row_residual(state, V, state.rows.apply(V))
        residuals["psd"] = 0.0  # V V^T
        return residuals

    def grows(self, state, found, value, minimum) -> bool:
        """Whether the rank grows after the check that found the bound ``found`` at ``value``."""
        loss = -state.kind.tau * found["lambda_min"]
        # not while the rows are far from met: the multipliers, and with them S, mean little yet
        size = max(abs(value), abs(minimum), self.gap_floor, _TINY)
        if state.W.shape[1] >= state.max_rank or state.residual > 1e-3 or loss <= 0.1 * self.tol * size:
            return False
        # with a dense multiplier of X >= 0, a negative eigenvalue before the inner run converged well below it
        # is Z's lag, not a missing column's
        if state.Z is not None and not (state.converged and state.gradient_reached * size <= 1e-2 * loss):
            return False
        # on the sphere's product, a loss of up to about ten times the relative gradient norm is the
        # gradient's, not a missing column's: grown only beyond thirty times
        return not (state.oblique and loss <= 30.0 * state.gradient_reached * size)

    def _grow_rank(self, state, found, value, minimum) -> None:
        """Append the eigenvector of a clearly negative smallest eigenvalue as a new column (with,
        for a factor of any sign, small random columns to a quarter of the rank besides)."""
        if not self.grows(state, found, value, minimum):
            return
        rank = state.W.shape[1]
        u = found["vector"]
        if state.kind.nonnegative and state.Z is None:
            u = np.maximum(u, 0.0) if np.linalg.norm(np.maximum(u, 0.0)) >= np.linalg.norm(np.minimum(u, 0.0)) \
                else np.maximum(-u, 0.0)
        columns = [u]
        if not state.kind.nonnegative:  # room for L-BFGS: small random columns besides, a quarter of the rank
            extra = min(max(rank // 4 - 1, 0), state.max_rank - rank - 1)
            columns += list(state.rng.standard_normal((extra, u.size)) / math.sqrt(u.size))
        new = np.column_stack(columns)
        if state.kind.diagonal is not None:  # in W's units: its rows' norms
            new *= 1e-2 * math.sqrt(state.form.n) * np.linalg.norm(state.W, axis=1)[:, None]
        else:
            new *= 1e-2 * math.sqrt(state.kind.tau)
        state.W = np.column_stack([state.W, new])
        if state.shift is not None:
            state.shift = np.append(state.shift, np.zeros(new.shape[1]))
        if not state.oblique:
            state.gtol = max(state.gtol, 1e-4 * state.gtol_start)
