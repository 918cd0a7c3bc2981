r"""Consensus ADMM for the CLUHSIC SDP (5.23), Anderson-accelerated, with a certified upper bound.

Splitting (C = A kron K on the free indices, scaled by ``s = ||C||_F / c`` so that rho = 1 is a
sensible start)::

    minimize  -<C, X> + i_{A(X) = b}(X) + i_psd(Y) + i_{>=0}(Z)   s.t.  X = Y,  X = Z

gives, with scaled multipliers U, V and over-relaxation ``alpha``,

* X-step: ``X = Pi_aff(W)``, ``W = (Y - U + Z - V) / 2 + C / (2 rho)``, the closed form
  ``Pi_aff(W) = W - A*((A A*)^+ (A(W) - b))`` (Gram matrix factorized once).  The affine set is
  the equivalent one of ``AffineOperator(zero_cross=True)``: the odiag rows ``tr X_[ij] = 0``
  (i != j) replaced by fixing the entries ``((i, p), (j, p))`` at zero, which they must be on
  X >= 0.  Stating these forced zeros removes a degeneracy the iteration would otherwise resolve
  slowly through the interplay of ``A(X) = b`` and ``X >= 0``, and makes the bound's cross
  entries free multipliers;
* Y-step: ``Y = Pi_psd(alpha X + (1 - alpha) Y + U)`` (partial eigendecompositions,
  :class:`cvxclust.linalg.PSDProjector`); when the output kernel admits relabelings of the
  clusters, the iterates are invariant under them and the projection splits into blocks of
  smaller order (:mod:`cvxclust.hsic._symmetry`); Z-step: ``Z = max(alpha X + (1 - alpha) Z + V, 0)``;
* ``U``, ``V`` take the residuals.

The iteration is a fixed-point map of the pre-projection points ``S_Y = alpha X + (1 - alpha) Y
+ U`` and ``S_Z`` (then ``Y = Pi_psd(S_Y)``, ``U = S_Y - Y``, ``Z = max(S_Z, 0)``,
``V = min(S_Z, 0)``; Douglas-Rachford form), which is extrapolated by type-II Anderson
acceleration (:class:`cvxclust.acceleration.AndersonAccelerator`) with ``anderson`` past steps;
an extrapolated step whose fixed-point residual grows by more than ``safeguard`` is rejected
and the memory restarted.  The extrapolation leaves a markedly smaller gap than the plain
iteration after the same number of iterations.

The penalty follows the two stopping figures rather than the primal and dual residuals
(:class:`cvxclust.penalty.ResidualBalancing` on those figures): every ``adapt_every`` iterations
(at a check) rho is doubled (within :data:`~cvxclust.penalty.PENALTY_RANGE` of its start) when
the worst residual relative to ``residual_tol`` exceeds ``mu`` times the certified gap relative
to its target, and halved in the opposite case. A large rho enforces the
consensus X = Y = Z quickly, a small one moves the multipliers, hence the bound. The gap's target
is ``tol / 4`` while the gap is above ``tol``, because the best bound is kept for good while the
multipliers, hence fresh bounds, hardly move once rho is large: the bound is settled first, then
the residuals. Once the certified gap is below ``tol`` the bound has done its part and the target
is ``tol`` itself, so the residuals get the penalty; otherwise both figures can creep down together
at a balanced, small rho for thousands of iterations. The state ``S`` (value plus scaled
multiplier) changes meaning with rho, so the extrapolation memory restarts at each change; classic
residual balancing (Boyd et al. 2011, 3.4.1) changes rho too often for the extrapolation, hence the
long period. With the cross entries fixed, this balancing needs fewer iterations than a fixed
penalty.

``rho U <= 0`` (negative part of a p.s.d. projection) and ``rho V <= 0``; at a fixed point
``C - A*(y) = rho (U + V)``.  At every check the multiplier ``y = argmin ||C - rho U - rho V -
A*(y)||`` with ``Z = -rho V >= 0`` or ``Z = max(rho U - C + A*(y), 0)`` (the better of the two)
give the certified upper bound :meth:`~cvxclust.hsic.CLUHSICSDP.dual_value`
``b^T y + c lambda_max(C - A*(y) + Z)``; the core keeps the smallest seen (every one is valid).

The candidate is X (affine constraints and known rows exact, symmetric), embedded in the full
mc x mc Q.  The loop, the stop test (certified relative gap below ``tol`` and worst residual of
:meth:`~cvxclust.hsic.CLUHSICSDP.residuals` below ``residual_tol``), the certification at a
limit and the Result are those of :class:`cvxclust.solvers.IterativeSolver`.

The iteration is written against the Python array API standard: given K as an array of
PyTorch, CuPy or another library of the standard (on a GPU, say), the relaxation keeps it there
and every step (the projections, their eigendecompositions, the products, the extrapolation and
the certificate's eigenvalues) runs on that device; only a few numbers an iteration come to the
host, and Q comes back on the device.  The affine constraints are then applied by dense 0/1
matrices (:class:`~cvxclust.hsic._operator.DeviceAffineOperator`) instead of NumPy's index
updates.  NumPy keeps its own fast paths: in-place updates, LAPACK by index for the partial
p.s.d. projections and for the bound's largest eigenvalue.  The bound's rounding allowance
(:func:`~cvxclust.hsic._sdp.certified_lambda_max`) is scaled to the unit roundoff of K's dtype: it
holds for float64, where it is negligible, and is looser in float32 (about ``n 1e-7`` relative),
which is an option, not the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral, Real
from typing import Callable

import numpy as np
import scipy.linalg as sla

from .._array_api import check_device_memory, is_numpy, to_numpy
from ..acceleration import AndersonAccelerator
from ..linalg import PSDProjector
from ..parameters import Interval
from ..penalty import ADAPT_EVERY, MU, ResidualBalancing
from ..result import relative_gap
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState
from ._operator import AffineOperator, DeviceAffineOperator
from ._sdp import CLUHSICSDP
from ._symmetry import ClusterSymmetry, SymmetricPSDProjector

__all__ = ["ADMM", "admm"]

#: the fraction of ``tol`` the penalty balancing aims the certified gap at while it is above ``tol``
GAP_MARGIN = 0.25


@dataclass(kw_only=True, eq=False)
class ADMMState(SolverState):
    """The state of :class:`ADMM` (module docstring)."""

    #: the affine constraints on the free indices (on K's device), their order, C scaled by ``scale``
    op: AffineOperator | DeviceAffineOperator
    n: int
    Cs: np.ndarray
    scale: float
    #: the penalty, and the factor of its last change that the scaled multipliers still have to follow
    rho: float
    penalty: ResidualBalancing
    rescale: float = 1.0
    #: the p.s.d. projection and the orders of the blocks it splits into
    project_psd: Callable[[np.ndarray], np.ndarray]
    psd_blocks: list
    accelerator: AndersonAccelerator
    #: the state S = (S_Y, S_Z), one flat array: Y = Pi_psd(S_Y), Z = max(S_Z, 0); its image T(S)
    S: np.ndarray
    image: np.ndarray | None = None
    #: the X-step's point, the scaled multipliers of X = Y and X = Z, the last Y and Z
    X: np.ndarray
    U: np.ndarray | None = None
    V: np.ndarray | None = None
    Y_prev: np.ndarray | None = None
    Z_prev: np.ndarray | None = None
    #: the figures of the last check, which the penalty balancing weighs, and whether there was one
    gap: float = np.inf
    worst: float = np.inf
    checked: bool = False


class ADMM(IterativeSolver):
    r"""Solve the CLUHSIC SDP (5.23) by consensus ADMM; see the module docstring.

    .. math::

        \max_Q\ \operatorname{tr}((A \otimes K) Q)\quad\text{s.t.}\quad Q \succeq 0,\ Q \ge 0,\
        \operatorname{odiag}(Q) = I_c,\ \operatorname{bdiag}(Q)\mathbf 1 = \mathbf 1_m

    Parameters
    ----------
    relaxation : CLUHSICSDP
        The problem.
    tol : float, default 1e-4
        Certified relative gap ``|f(X) - bound| / max(|f(X)|, |bound|)`` to stop at.  With X
        feasible to ``residual_tol`` the objective is then within about ``tol`` of the optimum
        (usually far closer, see the tests).
    residual_tol : float, default 1e-5
        Worst relative residual (:meth:`~cvxclust.hsic.CLUHSICSDP.residuals`) to stop at.
    max_iter, time_limit : int, float
        Limits (an iteration is one evaluation of the map: one p.s.d. projection).
    check_every : int, default 10
        Period of the certificate (the bound and the residuals: two largest eigenvalues and one
        spectrum, without eigenvectors).
    verbose : bool
        Show a progress bar.
    rho, alpha, mu, adapt_every : float, float, float, int
        Initial penalty (for the scaled C), over-relaxation in (0, 2), balancing ratio (>= 1)
        and period (a multiple of ``check_every`` to take effect).
    anderson : int
        Memory of the Anderson acceleration; 0 for plain ADMM.
    safeguard : float
        Largest accepted growth factor of the fixed-point residual after an extrapolation.
    partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.
    symmetry : bool
        Split the p.s.d. projections by the relabelings of the clusters that keep ``A``
        (without known labels): the same iteration up to rounding, with cheaper projections (for
        ``chain(c)`` two blocks of half the order, for ``flat(c)`` two of order m).

    Returns
    -------
    Result
        ``X`` the mc x mc matrix Q, in K's namespace and on its device; the history rows hold
        ``primal_residual``, ``dual_residual`` and ``rho``.  ``extras``: ``rho`` (the final penalty), ``scale``
        (the scale ``s`` of C) and ``psd_blocks`` (the orders of the blocks the p.s.d.
        projection splits into, each as often as it repeats; ``[m c]`` without symmetry).
    """

    method = "admm"
    parameters = IterativeSolver.parameters | {
        "tol": Param(1e-4, POSITIVE),
        "residual_tol": Param(1e-5, POSITIVE),
        "max_iter": Param(20000, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(10, [Interval(Integral, 1, None, closed="left")]),
        "rho": Param(1.0, POSITIVE),
        "alpha": Param(1.6, [Interval(Real, 0, 2, closed="neither")]),
        "mu": Param(2.0, MU),
        "adapt_every": Param(50, ADAPT_EVERY),
        "anderson": Param(10, [Interval(Integral, 0, None, closed="left")]),
        "safeguard": Param(2.0, POSITIVE),
        "partial_eig": Param(True, ["boolean"]),
        "symmetry": Param(True, ["boolean"]),
    }

    def size(self) -> int:
        return self.relaxation.m * self.relaxation.c

    def init_state(self):
        relaxation = self.relaxation
        arrays = relaxation.arrays
        xp = arrays.xp
        op = AffineOperator(relaxation.m, relaxation.c, relaxation.free, zero_cross=True)
        n = op.n
        if not arrays.numpy:
            # the state, its image and the extrapolation's 2 anderson differences (2 n^2 numbers
            # each), a dozen n x n iterates and masks, and the eigendecomposition's workspace
            words = (4 + 4 * self.anderson + 16) * n * n
            check_device_memory(words * np.dtype(str(arrays.dtype).rsplit(".", 1)[-1]).itemsize,
                                f"the CLUHSIC SDP ADMM of order {n} (anderson={self.anderson})", arrays,
                                "lower anderson, pass K in float32, or solve a smaller instance")
            op = DeviceAffineOperator(op, arrays)
        C = relaxation.cost_matrix(op.index)
        scale = max(float(np.linalg.norm(C) if arrays.numpy else xp.linalg.vector_norm(C)) / relaxation.c, 1e-300)
        X = op.project(xp.zeros((n, n), dtype=arrays.dtype, device=arrays.device))
        # the start is invariant under the relabelings that keep A, and every step commutes with
        # them; known labels fix clusters, so they are left to the plain projection
        symmetry = (ClusterSymmetry.from_kernel(relaxation.A) if self.symmetry and n == relaxation.m * relaxation.c
                    else None)
        if symmetry is None or symmetry.trivial:
            # below PSDProjector's size threshold this is a full eigh, as fast as a partial one
            project_psd, blocks = PSDProjector(n, partial=self.partial_eig), [n]
        else:
            project_psd = SymmetricPSDProjector(symmetry, relaxation.m, partial=self.partial_eig, arrays=arrays)
            blocks = symmetry.orders(relaxation.m)
        return ADMMState(
            op=op, n=n, Cs=C / scale, scale=scale, rho=self.rho,
            penalty=ResidualBalancing(self.rho, self.mu, self.adapt_every),
            project_psd=project_psd, psd_blocks=blocks,
            accelerator=AndersonAccelerator(self.anderson, self.safeguard, 2 * n * n, arrays=arrays),
            S=xp.concat([xp.reshape(X, (-1,)), xp.reshape(X, (-1,))]), X=X,
        )

    def _split(self, state):
        """``Y = Pi_psd(S_Y)``, ``U = S_Y - Y``, ``Z = max(S_Z, 0)``, ``V = min(S_Z, 0)``."""
        n, xp = state.n, self.relaxation.arrays.xp
        S_Y, S_Z = xp.reshape(state.S[: n * n], (n, n)), xp.reshape(state.S[n * n:], (n, n))
        Y = state.project_psd(S_Y)
        U = S_Y - Y
        Z = xp.maximum(S_Z, 0.0)
        V = xp.minimum(S_Z, 0.0)  # exactly <= 0: -rho V is a valid Z in the bound
        if state.rescale != 1.0:
            # rho changed: the scaled multipliers U = Lambda / rho follow (Y + U / f projects to Y)
            U /= state.rescale
            V /= state.rescale
            state.rescale = 1.0
        return Y, U, Z, V

    def _advance(self, state, iteration: int) -> None:
        """Move the state past the previous iteration: rebalance rho after a check of a
        balancing period, or take the (accelerated) fixed-point step."""
        if state.checked:
            # balance the two stopping figures, each against its target: the gap's is a quarter
            # of tol until the gap is certified below tol, because the best bound is kept while a
            # raised penalty all but freezes the multipliers, so the bound must be good before
            # the residuals are pushed down
            gap_target = self.tol if state.gap <= self.tol else GAP_MARGIN * self.tol
            # within PENALTY_RANGE of the start (cvxclust.penalty): a gap that cannot reach its
            # target (a tol below what the bound attains) would otherwise halve rho until the
            # X-step's C / rho overflows
            factor = state.penalty.change(iteration, state.rho, state.worst / self.residual_tol,
                                          state.gap / gap_target)
            if factor != 1.0:
                state.rescale = factor
                state.rho *= factor
                state.S = state.image
                state.accelerator.reset()
                state.Y_prev = None
                return
        state.S = state.accelerator.step(state.S, state.image)

    def step(self, state, iteration):
        if state.image is not None:
            self._advance(state, iteration)
        state.checked = False
        rho, alpha = state.rho, self.alpha
        Y, U, Z, V = self._split(state)
        W = Y - U
        W += Z
        W -= V
        W += state.Cs / rho
        W *= 0.5
        X = state.op.project(W)
        if self.relaxation.arrays.numpy:
            return self._numpy_step(state, X, Y, U, Z, V)
        xp = self.relaxation.arrays.xp
        X = (X + X.T) * 0.5  # exact symmetry: eigh and the residuals see the same matrix
        T_Y = alpha * X + (1.0 - alpha) * Y + U
        T_Z = alpha * X + (1.0 - alpha) * Z + V
        image = xp.concat([xp.reshape(T_Y, (-1,)), xp.reshape(T_Z, (-1,))])  # T(S)
        norm = xp.linalg.vector_norm
        figures = [xp.sum((X - Y) ** 2) + xp.sum((X - Z) ** 2), norm(X), norm(Y), norm(Z), xp.sum(state.Cs * X)]
        if state.Y_prev is not None:
            figures += [norm((Y - state.Y_prev) + (Z - state.Z_prev)), norm(U + V)]
        figures = [float(v) for v in to_numpy(xp.stack(figures))]  # one transfer to the host
        r_primal = np.sqrt(figures[0]) / max(*figures[1:4], 1e-300)
        r_dual = figures[5] / max(figures[6], 1e-300) if state.Y_prev is not None else np.nan
        state.Y_prev, state.Z_prev = Y, Z
        state.X, state.U, state.V, state.image = X, U, V, image
        return {"objective": state.scale * figures[4], "primal_residual": float(r_primal),
                "dual_residual": float(r_dual), "rho": rho}

    def _numpy_step(self, state, X, Y, U, Z, V):
        """The rest of :meth:`step` with NumPy's in-place updates."""
        n, rho, alpha = state.n, state.rho, self.alpha
        X += X.T
        X *= 0.5  # exact symmetry: eigh and the residuals see the same matrix
        image = np.empty_like(state.S)  # T(S)
        T_Y, T_Z = image[: n * n].reshape(n, n), image[n * n:].reshape(n, n)
        np.multiply(X, alpha, out=T_Y)
        T_Z[...] = T_Y
        T_Y += (1.0 - alpha) * Y
        T_Y += U
        T_Z += (1.0 - alpha) * Z
        T_Z += V
        r_primal = np.sqrt(np.sum((X - Y) ** 2) + np.sum((X - Z) ** 2)) / max(
            np.linalg.norm(X), np.linalg.norm(Y), np.linalg.norm(Z), 1e-300)
        r_dual = np.nan
        if state.Y_prev is not None:
            r_dual = np.linalg.norm((Y - state.Y_prev) + (Z - state.Z_prev)) / max(np.linalg.norm(U + V), 1e-300)
        state.Y_prev, state.Z_prev = Y, Z
        state.X, state.U, state.V, state.image = X, U, V, image
        return {"objective": state.scale * float(np.sum(state.Cs * X)), "primal_residual": float(r_primal),
                "dual_residual": float(r_dual), "rho": rho}

    def certify(self, state, bound, final=False):
        relaxation = self.relaxation
        if state.U is None:  # no iteration ran: the projected start and the multipliers of S
            _, state.U, _, state.V = self._split(state)
        X, rho = state.X, state.rho
        fresh = state.scale * _certificate(relaxation, state.op, state.Cs, rho * state.U, rho * state.V)
        xp = relaxation.arrays.xp
        objective = state.scale * float(xp.sum(state.Cs * X))
        worst = _worst_residual(X, state.op, xp)
        # the figures the rho balancing of the next iteration weighs
        state.gap = relative_gap(objective, min(bound, fresh), self.gap_floor)
        state.worst = worst
        state.checked = True
        return Certificate(relaxation.embed(X), fresh, objective, {"worst": worst})

    def extras(self, state):
        return {"rho": state.rho, "scale": state.scale, "psd_blocks": state.psd_blocks}


def _certificate(relaxation: CLUHSICSDP, op, C, Lam_psd, Lam_nonneg) -> float:
    """The better of two certified bounds :meth:`CLUHSICSDP.dual_value` from the unscaled
    multipliers ``rho U <= 0`` of X = Y and ``rho V <= 0`` of X = Z of the solver's system
    ``op`` (cross entries fixed at zero): ``y = argmin ||C - rho U - rho V - A*(y)||`` over
    op's rows (the O_ij rows of the full system get multiplier 0), the cross entries of the
    bound's matrix set to those of ``rho U``, and either ``Z = -rho V`` (the ADMM's own
    multiplier of Q >= 0) or ``Z = max(rho U - C + A*(y), 0)``, the smallest Z >= 0 bringing
    ``C - A*(y) + Z`` entrywise up to ``rho U`` (a dual residual of one sign).  Off NumPy,
    :meth:`CLUHSICSDP.device_dual_value` computes them on the device."""
    y = op.least_squares(C - Lam_psd - Lam_nonneg)
    R = op.plus_adjoint(Lam_psd - C, y)
    if not relaxation.arrays.numpy:
        xp = relaxation.arrays.xp
        return min(relaxation.device_dual_value(op, y, Z, C, Lam_psd) for Z in (-Lam_nonneg, xp.maximum(R, 0.0)))
    y_full = np.zeros(op.keep.size)
    y_full[op.keep] = y
    return min(relaxation.dual_value(y_full, Z, C=C, cross=Lam_psd) for Z in (-Lam_nonneg, np.maximum(R, 0.0)))


def _worst_residual(X, op, xp) -> float:
    """The worst of :meth:`CLUHSICSDP.residuals` for the symmetric X on the free indices (the
    known rows are zero by construction and the embedding adds only zero eigenvalues)."""
    if is_numpy(xp):
        affine = np.abs(op.apply(X) - op.b).max()
        scale = max(np.abs(X).max(), 1e-300)
        w = sla.eigh(X, eigvals_only=True, check_finite=False)
        psd = max(0.0, -w[0]) / max(np.abs(w).max(), 1e-300)
        return float(max(affine, max(0.0, -X.min()) / scale, psd))
    w = xp.linalg.eigvalsh(X)
    figures = xp.stack([xp.max(xp.abs(op.apply(X) - op.b)), xp.max(xp.abs(X)), xp.min(X), w[0], xp.max(xp.abs(w))])
    affine, top, low, w_min, w_top = (float(v) for v in to_numpy(figures))
    return max(affine, max(0.0, -low) / max(top, 1e-300), max(0.0, -w_min) / max(w_top, 1e-300))


admm = ADMM.as_function()
CLUHSICSDP.register_solver("admm", ADMM)
