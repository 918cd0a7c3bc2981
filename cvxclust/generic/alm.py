r"""The second-order method of :func:`cvxclust.solve` for the problems of the class with
equalities and bounds: an augmented Lagrangian method on the dual (a proximal point method on
the primal) whose subproblems are solved by the semismooth Newton-CG method of
:mod:`cvxclust.generic.newton`.

For ``f(X) = c ||X||^2 + <C, X>`` (``c >= 0``, a linear objective above all) over
``F = {X >> 0, A(X) = b, L <= X <= U}``, each outer iteration takes the proximal step

.. math::

    X_{k+1} \approx \operatorname*{argmin}_{X \in F}\ f(X) + \frac{1}{2\sigma_k}\|X - X_k\|_F^2
    = \operatorname*{argmin}_{X \in F}\ w_k \|X - T_k\|_F^2,\qquad
    w_k = c + \frac{1}{2\sigma_k},\quad T_k = \frac{X_k / \sigma_k - C}{2 w_k},

a nearest-point problem.  Its dual in the multipliers ``y`` of the equalities (the rows and the
entries fixed by ``L == U``) and ``Z`` of the other bounds (the box B) is, with
``W = T_k + (A^* y + Z) / (2 w_k)``,

.. math::

    \theta_k(y, Z) = b^\top y + \min_{V \in B}\langle Z, V\rangle - w_k \|\Pi_+(W)\|_F^2 + \text{const},

and ``X = Pi_+(W)``.  In y it is the function :class:`~cvxclust.generic.EqualityDual`
maximises (retargeted to ``T_k + Z / (2 w_k)``, ``w_k``): one semismooth Newton-CG step per
iteration, one eigendecomposition per trial point.  The n^2 multipliers Z are not handled by
Newton's method: as in SDPNAL+, the p.s.d. term is majorized in Z (its gradient ``-X`` is
``1/(2 w_k)``-Lipschitz), which makes the Z step a closed-form projection onto the box,

.. math::

    Z \leftarrow Z - 2 w_k X + 2 w_k\,\Pi_B\big(X - Z / (2 w_k)\big),

extrapolated as in Nesterov's method (restarted with each subproblem) and alternating with the
Newton steps in y.  The multipliers ``(y, Z)`` carry over from one subproblem to the next (they
are the dual iterates of the augmented Lagrangian method, X its multiplier).  A subproblem ends
when its residuals, ``||A(X) - b||`` and the move of the box step, are below a tenth of the
proximal move ``||X - X_k||`` (the criterion (B) of Rockafellar), or after ``inner_max_iter``
Newton steps; then ``sigma`` grows or shrinks by ``sigma_growth`` to balance the relative primal
residual against the dual one, ``||X_{k+1} - X_k|| / (sigma ||C||)`` (the rule of SDPNAL).

Where a row ``<11^T, X> = 0`` stands under ``X >> 0`` (the minimum-bisection SDP, which has no
strictly feasible point), it implies ``X 1 = 0``: the Newton steps then project ``J W J``
(``J = I - 11^T / n``), so that every iterate meets it, and the bound minimises over the
matrices with zero row sums; without this the iteration crawls.

**Certificate.**  At every check the bound of :func:`cvxclust.generic.certificates.bound_at` at
the multipliers (``y`` of the rows, ``Z`` plus the fixed entries' multipliers as the box
multiplier) bounds the optimum whatever the iteration's accuracy: for a linear objective it is
``b^T y + min_B <Lambda, V> + tau * min(0, lambda_min(C - A^* y - Lambda))`` under a trace
bound ``tau`` (fixed or implied by the bounds on the diagonal), the bound of an extreme
eigenvalue.  A check comes at the end of a subproblem whose step promises a gap within
``10 tol`` (the bound loses about ``tau ||X_{k+1} - X_k|| / sigma``), and every ``check_every``
iterations.  The point is ``X = Pi_+(W)``, p.s.d. by construction; where the rows are fixed
positive diagonal entries it is scaled by ``D^{-1/2}`` to meet them exactly (which keeps it
p.s.d. and keeps the signs of its entries), and where the eigendecomposition's set S
(common row sums, the trace) holds every other row it is moved onto S's affine constraints
congruently; then the box is repaired by :func:`cvxclust.generic.restoration.restore`.  The
exactly feasible point is returned where it passes the gap test or the raw point's residuals
fail; otherwise the raw point with its residuals.

**On any array API device** (``device=``): the Newton steps by
:class:`~cvxclust.generic.newton_device.DeviceEqualityDual`, the box step, the bound (its extreme
eigenvalue by a full ``eigvalsh`` there: the standard has no eigenvalue by index) and the
restoration on the device; the reading, the splitting's linear programs and the test for
contradicting rows stay on the host, once, before the iteration.

References: X.-Y. Zhao, D. Sun, K.-C. Toh, "A Newton-CG augmented Lagrangian method for
semidefinite programming", SIAM Journal on Optimization 20(4), 2010; L. Yang, D. Sun, K.-C. Toh,
"SDPNAL+: a majorized semismooth Newton-CG augmented Lagrangian method for semidefinite
programming with nonnegative constraints", Mathematical Programming Computation 7(3), 2015;
X. Li, D. Sun, K.-C. Toh, "QSDPNAL: a two-phase augmented Lagrangian method for convex quadratic
semidefinite programming", Mathematical Programming Computation 10(4), 2018; R. T. Rockafellar,
"Monotone operators and the proximal point algorithm", SIAM Journal on Control and Optimization
14(5), 1976.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np

from .._array_api import diagonal, namespace_of
from .._array_ops import frobenius
from ..parameters import Interval
from ..result import relative_gap
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState
from .certificates import INFEASIBILITY_EVERY, bound_at, contradicting_rows, infeasibility_test
from .device import DeviceBound, arrays_for, device_split, shared_device_form
from .newton import NEWTON_STEP_PARAMETERS, DualPoint, EqualityDual, inequality_rows, newton_step
from .restoration import restore
from .spectral_set import SpectralSet, centred, frobenius_norm
from .splitting import Splitting, split, zero_total_row
from .standard_form import StandardForm

__all__ = ["AugmentedLagrangian", "alm_form", "alm_reason"]

_TINY = 1e-300


def alm_form(form: StandardForm) -> tuple[EqualityDual | None, str]:
    """The :class:`~cvxclust.generic.EqualityDual` of the equalities of ``form`` (its rows
    and fixed entries) for :class:`AugmentedLagrangian`, or None and the reason the form is
    outside the method's kind (inequality rows; the bounds are taken)."""
    reason = alm_reason(form)
    return (None, reason) if reason else (EqualityDual(form), "")


def alm_reason(form: StandardForm) -> str:
    """Why ``form`` is outside the kind of :class:`AugmentedLagrangian`, or ``""``."""
    reason = inequality_rows(form)
    return f"{reason}: only affine equalities and entrywise bounds are taken" if reason else ""


@dataclass(kw_only=True, eq=False)
class AlmState(SolverState):
    """The state of :class:`AugmentedLagrangian` (see its module)."""

    form: StandardForm
    #: the splitting (its spectral set bounds the trace for the certificate; its centre restores)
    #: and, for :func:`~cvxclust.generic.certificates.bound_at`, the same with every equality row
    #: of the form dualised
    parts: Splitting
    split: Splitting
    spectral: SpectralSet
    #: whether the rows imply ``X 1 = 0`` (:func:`~cvxclust.generic.splitting.zero_total_row`), held by
    #: the cone of the Newton steps
    deflated: bool
    dual: EqualityDual
    #: the box B (bounds that do not fix an entry): its bounds (infinite elsewhere) and whether it has one
    lower: np.ndarray
    upper: np.ndarray
    boxed: bool
    #: for :func:`~cvxclust.generic.certificates.bound_at`: where the bounds are finite, and their values (0 elsewhere)
    finite_L: np.ndarray
    finite_U: np.ndarray
    L0: np.ndarray
    U0: np.ndarray
    #: the proximal centre X_k, the step sigma, the subproblem's weight w and target T (without Z)
    centre: np.ndarray
    previous_centre: np.ndarray | None = None
    step_sigma: float = np.nan
    sigma: float
    sigma_start: float
    weight: float = np.nan
    target: np.ndarray | None = None
    #: the box multiplier and the current point of theta (at y and Z)
    Z: np.ndarray | None = None
    #: the last box step before its extrapolation, and the momentum of the extrapolation
    Z_plain: np.ndarray | None = None
    momentum: float = 1.0
    point: DualPoint | None = None
    #: outer iterations, Newton steps of the current subproblem, and whether the last step ended one
    outer: int = 0
    inner: int = 0
    outer_done: bool = False
    cg_total: int = 0
    line_search_total: int = 0
    restored: bool = False
    last_multipliers: tuple | None = None
    infeasibility: dict | None = None
    #: the namespace, device and dtype of the iteration (:mod:`cvxclust.generic.newton_device`)
    arrays: object = None


class AugmentedLagrangian(IterativeSolver):
    r"""The augmented Lagrangian method with semismooth Newton-CG subproblems of
    :mod:`cvxclust.generic.alm`, for the problems of the class whose rows are equalities (any
    objective of the class, entrywise bounds).  A ValueError names the part of a problem
    outside that kind.

    Parameters
    ----------
    relaxation : Relaxation
        The problem, read into its :meth:`~cvxclust.Relaxation.standard_form`.
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        The options of every solver (:class:`cvxclust.solvers.IterativeSolver`).  An iteration
        is one Newton step (with the box step before it where there is a box); a check comes at
        the end of a subproblem whose gap may pass ``tol``, and every ``check_every`` iterations.
    sigma : float or None
        The first proximal step; None scales it to the problem (``||X_0|| / ||C||``).
    sigma_growth : float
        The factor sigma grows by after a subproblem that took few Newton steps.
    inner_max_iter : int
        Newton steps per subproblem at most.
    cg_tol, cg_max_iter, device, dtype
        As for :class:`~cvxclust.generic.GenericNewton` (the iteration on a device:
        :mod:`cvxclust.generic.newton_device`).

    Returns
    -------
    Result
        History rows hold ``outer``, ``sigma``, ``gradient_norm``, ``box_move``, ``cg_iterations``
        and ``step``; ``extras``: ``eigh`` (full eigendecompositions of the Newton steps),
        ``spectral_eigh`` (those of the splitting and of the bounds: an extreme eigenvalue each),
        ``outer_iterations``, ``sigma``, ``cg_iterations``, ``line_search_trials``, ``restored``,
        ``row_multipliers``, ``box_multiplier`` and ``infeasibility`` (None, or the certificate
        of :func:`~cvxclust.generic.certificates.infeasibility_test`).
    """

    method = "alm"
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(2000, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(10, [Interval(Integral, 1, None, closed="left")]),
        "sigma": Param(None, [None, *POSITIVE]),
        "sigma_growth": Param(3.0, [Interval(Real, 1, None, closed="left")]),
        "inner_max_iter": Param(30, [Interval(Integral, 1, None, closed="left")]),
        "accelerate": Param(True, ["boolean"]),
        "device": Param(None, [object]),
        "dtype": Param(None, [None, object]),
    } | NEWTON_STEP_PARAMETERS

    # -- set-up ---------------------------------------------------------------------------------
    def init_state(self):
        host = form = self.relaxation.standard_form()
        arrays = arrays_for(self.device, self.dtype)
        reason = alm_reason(form)
        if reason:
            raise ValueError(f"method='alm' does not apply to this problem: {reason} (use method='generic')")
        # on a device the centres are projected there (device_split), not by the host's eigensolver
        n, parts = form.n, split(form, partial=arrays.numpy, project_centre=arrays.numpy)
        fixed = np.isfinite(form.L) & (form.L == form.U)
        lower, upper = np.where(fixed, -np.inf, form.L), np.where(fixed, np.inf, form.U)
        boxed = bool(np.isfinite(lower).any() or np.isfinite(upper).any())
        finite_L, finite_U = np.isfinite(form.L), np.isfinite(form.U)
        if arrays.numpy:
            dual = EqualityDual(form)
            L0, U0 = np.where(finite_L, form.L, 0.0), np.where(finite_U, form.U, 0.0)
        else:  # moved once, here: the cost, the bounds, the rows, the target and the centres
            from .newton_device import DeviceEqualityDual  # noqa: PLC0415 -- NumPy solves need none of it

            parts, form = device_split(parts, arrays, self.method), shared_device_form(self.relaxation, arrays)
            dual = DeviceEqualityDual(form, arrays, self.method)
            lower, upper = DeviceBound(lower, arrays), DeviceBound(upper, arrays)
            L0, U0 = (bound.map(lambda v, xp: xp.where(xp.isfinite(v), v, 0.0)) for bound in (form.L, form.U))
            finite_L = finite_U = None
        spectral = parts.spectral
        deflated = form.psd and zero_total_row(host) is not None
        if deflated:  # X 1 = 0 implied: the cone of the Newton steps holds it (the splitting's set does)
            dual.deflate_row_sums()
        xp, on = arrays.xp, {"dtype": arrays.dtype, "device": arrays.device}  # formed on the device
        start = parts.centre if parts.centre is not None else xp.eye(n, **on)
        sigma = self.sigma
        if sigma is None:
            sigma = max(frobenius(start, xp), 1.0) / max(frobenius_norm(form.C), _TINY) if form.c == 0 else \
                1.0 / (2.0 * form.c)
        state = AlmState(form=form, parts=parts, split=replace(parts, A=host.A, lo=host.lo, hi=host.hi),
                         spectral=spectral, deflated=deflated, dual=dual, lower=lower, upper=upper, boxed=boxed,
                         finite_L=finite_L, finite_U=finite_U, L0=L0, U0=U0, centre=start, sigma=float(sigma),
                         sigma_start=float(sigma), Z=xp.zeros((n, n), **on), arrays=arrays)
        state.infeasibility = contradicting_rows(host)
        if state.infeasibility is not None:
            self.declare_infeasible(state.infeasibility["note"])
        self._retarget(state)
        zeros = arrays.asarray(np.zeros(dual.size))
        y = zeros if state.infeasibility is not None else dual.start()
        state.point = dual.evaluate(y if bool(arrays.xp.all(arrays.xp.isfinite(y))) else zeros)
        return state

    def size(self) -> int:
        return self.relaxation.standard_form().n

    def _retarget(self, state) -> None:
        """The subproblem of the current centre and sigma, at the current Z."""
        form = state.form
        state.weight = form.c + 1.0 / (2.0 * state.sigma)
        state.target = (state.centre / state.sigma - form.C) / (2.0 * state.weight)
        state.dual.retarget(state.target + state.Z / (2.0 * state.weight), state.weight)

    # -- iterations -----------------------------------------------------------------------------
    def _box_step(self, state) -> float:
        """The majorized step in Z (module docstring), extrapolated as in Nesterov's method
        (restarted with each subproblem); returns the move ``||Z' - Z|| / (2w)`` (in X's units)
        and re-evaluates theta at the new Z (one eigendecomposition)."""
        w, X, Z = state.weight, state.point.X, state.Z
        shifted = X - Z / (2.0 * w)
        if state.arrays.numpy:
            clipped = np.clip(shifted, state.lower, state.upper)
        else:
            xp = state.arrays.xp
            clipped = state.lower.entries(lambda M, low, high: xp.clip(M, low, high), shifted, state.upper)
        new = 2.0 * w * (clipped - shifted)
        move = frobenius_norm(new - Z) / (2.0 * w)
        previous, state.Z_plain = state.Z_plain, new
        if self.accelerate and previous is not None:
            t = (1.0 + float(np.sqrt(1.0 + 4.0 * state.momentum ** 2))) / 2.0
            new = new + ((state.momentum - 1.0) / t) * (new - previous)
            state.momentum = t
        state.Z = new
        self._retarget(state)
        state.point = state.dual.evaluate(state.point.y)
        return move

    def step(self, state, iteration):
        state.outer_done = False
        box_move = self._box_step(state) if state.boxed else 0.0
        candidate, cg_iterations, t, trials = newton_step(state.dual, state.point, self.cg_tol, self.cg_max_iter)
        state.cg_total += cg_iterations
        state.line_search_total += trials
        if candidate is not None:
            state.point = candidate
        state.inner += 1
        X = state.point.X
        residual = state.dual.norm(state.point.gradient)
        move = frobenius_norm(X - state.centre)
        # criterion (B): the subproblem's residuals below a fraction of the proximal move
        small = max(residual, box_move) <= max(0.1 * move, 1e-3 * self.tol * max(frobenius_norm(X), 1.0))
        if small or state.inner >= self.inner_max_iter or candidate is None:
            self._next_subproblem(state, residual, box_move)
        return {"outer": state.outer, "sigma": state.sigma, "gradient_norm": residual, "box_move": box_move,
                "cg_iterations": cg_iterations, "step": t}

    def _next_subproblem(self, state, residual: float, box_move: float) -> None:
        """Move the proximal centre to the subproblem's point; balance sigma between the relative
        primal residual (the subproblem's) and the dual one ``||X - X_k|| / sigma`` (SDPNAL's
        rule: a larger sigma shrinks the dual residual faster, and makes the subproblem harder)."""
        form, X = state.form, state.point.X
        primal = max(residual, box_move) / (1.0 + frobenius_norm(X))
        # over ||C||, not 1 + ||C||: sigma scales as 1 / C, and so must the rule (data of any magnitude)
        dual = frobenius_norm(X - state.centre) / (state.sigma * max(frobenius_norm(form.C), _TINY))
        if dual > 2.0 * primal:
            state.sigma *= self.sigma_growth
        elif primal > 2.0 * dual:
            state.sigma /= self.sigma_growth
        state.step_sigma = state.sigma  # the step that produced X (_promising)
        state.sigma = float(np.clip(state.sigma, 1e-6 * state.sigma_start, 1e10 * state.sigma_start))
        state.previous_centre, state.centre = state.centre, X
        state.Z_plain, state.momentum = None, 1.0
        state.outer += 1
        state.inner = 0
        state.outer_done = True
        self._retarget(state)
        state.point = state.dual.evaluate(state.point.y)

    def is_check(self, state, iteration):
        """At the end of a subproblem whose estimated gap could pass ``tol``, and every
        ``check_every`` iterations (a check costs an extreme eigenvalue or a projection)."""
        return (state.outer_done and self._promising(state)) or super().is_check(state, iteration)

    def _promising(self, state) -> bool:
        """Whether the gap the next bound is expected to certify is within ``10 tol``: for a
        linear objective under a trace bound ``tau`` the p.s.d. multiplier misses the cone by
        about ``||X_{k+1} - X_k|| / sigma``, and the bound loses ``tau`` times that."""
        spectral = state.spectral
        tau = spectral.trace if spectral.trace is not None else spectral.trace_max
        if state.form.c > 0 or tau is None or state.previous_centre is None:
            return True
        loss = abs(tau) * frobenius_norm(state.centre - state.previous_centre) / state.step_sigma
        objective = abs(state.form.objective(state.centre))
        return loss <= 10.0 * self.tol * max(objective, self.gap_floor, _TINY)

    # -- certification --------------------------------------------------------------------------
    def _multipliers(self, state):
        """``(Lambda, y)``: the box multiplier (Z and the fixed entries') and the rows'."""
        dual, y = state.dual, state.point.y
        return state.Z + dual.adjoint(dual.entry_part(y)), y[:dual.m]

    def certify(self, state, bound, final=False):
        form = state.form
        Lam, y = self._multipliers(state)
        fresh = bound_at(state, Lam, y)
        fresh = fresh if form.sense == "minimize" else -fresh
        if not final:
            state.checks += 1
            if state.checks % INFEASIBILITY_EVERY == 0:
                found = infeasibility_test(state, Lam, y)
                if found is not None and found["bound"] > 0:
                    state.infeasibility = found
                    self.declare_infeasible(f"the bound without the objective along the multipliers' move is "
                                            f"{found['bound']:.3g} > 0")
        X = state.point.X
        residuals = self._residuals(state, X)
        certificate = Certificate(X, fresh, form.objective(X), residuals)
        certificate.figures["iterate_residual"] = max(residuals.values(), default=0.0)
        restored = self._restore(state, X)
        state.restored = False
        if restored is not None:
            objective = form.objective(restored)
            certificate.figures["restored_objective"] = objective
            best = self._better(fresh, bound)
            if relative_gap(objective, best, self.gap_floor) <= self.tol or \
                    certificate.figures["iterate_residual"] > self.residual_tol:
                certificate = Certificate(restored, fresh, objective, self._residuals(state, restored),
                                          certificate.figures)
                state.restored = True
        if not getattr(self.relaxation, "judged_by_standard_form", False):
            certificate.objective = None  # a relaxation other than the plain problem judges with its own
        return certificate

    @staticmethod
    def _residuals(state, X) -> dict:
        residuals = state.form.residuals(X, spectrum=False)
        if state.form.psd:
            residuals["psd"] = 0.0  # Pi_+ of a matrix, scaled or mixed with a p.s.d. centre: the core confirms it
        return residuals

    @staticmethod
    def _restore(state, X) -> np.ndarray | None:
        """An exactly feasible point near ``X`` (module docstring), or None."""
        form, parts, spectral = state.form, state.parts, state.spectral
        if state.deflated or parts.A.shape[0]:
            # rows the eigendecomposition's set does not hold, or X 1 = 0, which no congruence that
            # sets the diagonal keeps: X is returned with its residuals
            return None
        scaled = state.dual.restore(X) if state.dual.size else X
        if scaled is None and spectral.beta is None:
            return None
        if scaled is None:
            scaled = onto_affine_hull(spectral, X)
            if scaled is None:
                return None
        return restore(form, parts, scaled)

    def extras(self, state):
        Lam, y = self._multipliers(state)
        return {"eigh": state.dual.eigh_count, "spectral_eigh": state.spectral.eigendecompositions,
                "outer_iterations": state.outer, "sigma": state.sigma, "cg_iterations": state.cg_total,
                "line_search_trials": state.line_search_total, "restored": state.restored,
                "row_multipliers": y, "box_multiplier": Lam, "infeasibility": state.infeasibility}


def onto_affine_hull(spectral: SpectralSet, X: np.ndarray) -> np.ndarray | None:
    """A p.s.d. ``X`` moved onto the affine constraints of S (common row sums ``beta``, the
    trace) by a congruence and a scaling that keep it p.s.d.: ``a J X J + (beta / n) 11^T``
    (``J = I - 11^T / n``), with ``a`` the trace's (1 without one); None where that needs
    ``a < 0`` or S has no row sums."""
    if spectral.beta is None:
        return None
    n = spectral.n
    JXJ = centred(X)
    a = 1.0
    if spectral.trace is not None or spectral.trace_max is not None:
        free = float(np.trace(JXJ)) if isinstance(JXJ, np.ndarray) else float(namespace_of(JXJ).sum(diagonal(JXJ)))
        target = spectral.trace if spectral.trace is not None else min(spectral.trace_max, free + spectral.beta)
        rest = target - spectral.beta
        if free <= 0 or rest < 0:
            return None
        a = rest / free
    JXJ *= a
    JXJ += spectral.beta / n
    return JXJ
