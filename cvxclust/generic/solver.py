r"""The generic certified solver: ADMM on the matrix for every problem of the standard form.

For ``min f(X) = c ||X||^2 + <C, X>`` over ``S`` (the set of
:mod:`cvxclust.generic.spectral_set`: p.s.d., common row sums and the trace, enforced by one
eigendecomposition), the box ``B = {L <= X <= U}`` (with the entries that rows such as a
must-link ``X[i, j] == X[i, i]`` tie, :mod:`cvxclust.generic.ties`: still one cheap projection)
and the rows ``lo <= A(X) <= hi`` left over:

* **two blocks** when no row is left (the SSC relaxation (7), the Peng-Wei SDP, the k-means SDP
  with must-link rows): with scaled
  multiplier ``U`` of ``Z = W`` and penalty rho,

  .. math::

      Z &= \Pi_S\big((\rho (W - U) - C) / (2c + \rho)\big), \qquad
      \hat Z = \alpha Z + (1 - \alpha) W, \\
      W &= \Pi_B(\hat Z + U), \qquad U \mathrel{+}= \hat Z - W;

* **consensus** otherwise: X carries f and the rows (equalities exactly, ranges through a slack
  ``s = A_in(X)``), and copies ``Z in S``, ``W in B``, ``t in [lo, hi]`` are projected
  separately; X's step is one solve with the rows' Gram matrix ``A A^*`` (order m, factored
  once per penalty), never an ``n^2 x n^2`` operator.

Both use over-relaxation (``alpha``) and residual balancing of the penalty (Boyd et al. 2011).

**Certificates** (:mod:`cvxclust.generic.certificates`).  Every check computes a bound on the
optimal value at the ADMM multipliers (``Lambda = -rho U``, ``y``); every fifth check tests the
move of the multipliers for infeasibility and, for a linear objective with no finite bound yet,
the move of the iterate for unboundedness (status ``"infeasible"`` or ``"unbounded"``).

**The returned point.**  The iterate in S; in the two-block case it is restored
(:func:`cvxclust.generic.restoration.restore`: the box violations off the diagonal moved onto it,
then a mix with a strictly feasible ``a 11^T + b I`` from :mod:`cvxclust.generic.splitting`; or,
where the diagonal is fixed to positive values and every other bound is a sign bound, as in
max-cut and correlation clustering, the scaling ``D^{-1/2} X D^{-1/2}`` of
:func:`cvxclust.generic.restoration.scale_to_diagonal`), so it is exactly feasible where such a
centre or scaling exists, and the certified gap is that of a feasible point.  Elsewhere the
residuals are reported as they are.  The mix costs the violation times the inverse of the
centre's smallest entry (about n for unit row sums), so once the iterate is within ``tol`` of
the bound a check may also *polish*: restore the points of relaxed alternating projections
between S and the box started at the iterate (:func:`cvxclust.generic.restoration.polished`),
which lose only about their distance to it.  The best exactly feasible point of all checks is
kept.  Where entries are tied no restoration applies, and the iterate may meet the gap long
before its residuals fall below ``residual_tol`` (the k-means SDP with must-link rows: hundreds
to thousands of iterations): once the gap is met, a check may take instead the first point of
alternating projections from the iterate whose residuals do
(:func:`cvxclust.generic.restoration.within_residual`, at most ``polish_rounds`` rounds).

**On any array API device** (``device=``, :mod:`cvxclust.generic.device`).  The two-block
path runs in the namespace of the Python array API standard the option names (PyTorch on a GPU):
the cost, the bounds and the centre move there once, at the start, and the iteration, its
eigendecompositions (full ones: SciPy's eigenvalues by index are NumPy's only), the
certificates and the returned point stay there.  The consensus path and tied entries run on
NumPy only and are refused on a device; NumPy keeps its in-place and partial fast paths.

References: S. Boyd, N. Parikh, E. Chu, B. Peleato, J. Eckstein, "Distributed Optimization and
Statistical Learning via the Alternating Direction Method of Multipliers", Foundations and Trends
in Machine Learning, 2011; G. Banjac, P. Goulart, B. Stellato, S. Boyd, "Infeasibility detection in
the alternating direction method of multipliers for convex optimization", Journal of Optimization
Theory and Applications, 2019; Z. Wen, D. Goldfarb, W. Yin, "Alternating direction augmented
Lagrangian methods for semidefinite programming", Mathematical Programming Computation, 2010.
"""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np

from .._array_ops import frobenius
from ..acceleration import AndersonAccelerator
from ..parameters import Interval
from ..penalty import ADAPT_EVERY, MU, ResidualBalancing
from ..result import Result, relative_gap
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, polish_due
from .certificates import (INFEASIBILITY_EVERY, bound_at, contradicting_rows, infeasibility_test,
                           optimum_certificate, unboundedness_test, unconstrained_optimum)
from .device import arrays_for, device_form, device_split, moved
from .spectral_set import SpectralSet, frobenius_norm
from .state import GenericState
from .consensus import ConsensusStep
from .polishing import PolishedPoints
from .restoration import restore
from . import splitting
from .warm_start import read_warm_start, warm_start_on_host

__all__ = ["GenericSolver"]

_TINY = 1e-300
#: an extrapolation may move the state at most this many times the size of the plain step's image
_REACH = 100.0


class GenericSolver(ConsensusStep, PolishedPoints, IterativeSolver):
    """Solve a problem of the standard form by ADMM with a certified bound; see the module docstring.

    Parameters
    ----------
    relaxation : Relaxation
        The problem: its :meth:`~cvxclust.Relaxation.problem` is read into the standard form
        (:func:`cvxclust.generic.standard_form`), its objective and residuals judge the result.
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`).
    rho : float or None
        Initial penalty; None scales it to the problem (``2c``, or ``||C|| / ||centre||``).
    alpha : float in (0, 2)
        Over-relaxation.
    mu, adapt_every : float, int
        Residual-balancing ratio (>= 1) and period of the penalty
        (:class:`cvxclust.penalty.ResidualBalancing`).
    partial_eig : bool
        Compute only the needed side of the spectrum when it is small.
    anderson, safeguard : int, float
        Memory of the Anderson acceleration of the fixed-point map (0: plain ADMM) and the
        largest accepted growth of its residual at an extrapolated point
        (:class:`cvxclust.acceleration.AndersonAccelerator`).
    cone_free_start, cone_free_tol : bool, float
        In the two-block case with ``X >> 0`` and a Frobenius term (``c > 0``), first iterate
        without the cone (no eigendecomposition) until the relative fixed-point residual is below
        ``cone_free_tol``.  (With a linear objective the problem without the cone is a linear
        program, on which the splitting is slow: no such start.)
    polish_rounds : int
        Two-block case: at most this many rounds of alternating projections (one projection onto
        S each) in a polish (module docstring); 0 turns polishing off.  When a check polishes:
        :func:`cvxclust.solvers.polish_due`.
    warm_start : Result or None
        A previous result of this solver (or any Result whose X has the right shape): its point,
        and its multipliers and penalty where they fit the problem, start the iteration (a
        problem re-solved after changing one constraint).
    device, dtype : str, torch.device or None
        Where the two-block path iterates (:func:`cvxclust._array_api.device_namespace`: None or
        ``"cpu"`` is NumPy, ``"cuda"`` or a ``torch.device`` PyTorch there) and in which floating
        dtype there (``"float64"``, the default, or ``"float32"``); ``X`` comes back on the
        device.  The bound's rounding allowance is scaled by the dtype's unit roundoff: it
        holds for float64, and is looser in float32.

    Returns
    -------
    Result
        ``extras``: ``rho``, ``box_multiplier`` (``Lambda``), ``row_multipliers`` (``y``, for the
        rows left after the splitting is read; a row that ties two entries is part of the box and
        its multiplier part of ``box_multiplier``), ``splitting`` (what the eigendecomposition
        enforces exactly, and ``tied_entries``, the number of tied positions),
        ``eigendecompositions``, ``cone_free_iterations``, ``infeasibility`` (None, or with status
        ``"infeasible"`` the certificate: the moves ``box_multiplier`` and ``row_multipliers`` of
        the multipliers along which the bound of the problem without its
        objective, ``bound``, is positive; see the module docstring; for two contradicting rows
        :func:`~cvxclust.generic.certificates.contradicting_rows`), ``unboundedness`` (None, or
        with status ``"unbounded"`` :func:`~cvxclust.generic.certificates.recession`'s
        certificate: the ``direction``, its ``slope`` and ``residuals``).

    Raises
    ------
    ValueError
        Where ``warm_start`` has an X of another shape or holds NaN or infinite entries
        (:func:`~cvxclust.generic.warm_start.read_warm_start`).
    """

    method = "generic"
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(20000, [Interval(Integral, 1, None, closed="left")]),
        "rho": Param(None, [None, *POSITIVE]),
        "alpha": Param(1.6, [Interval(Real, 0, 2, closed="neither")]),
        "mu": Param(10.0, MU),
        "adapt_every": Param(100, ADAPT_EVERY),
        "partial_eig": Param(True, ["boolean"]),
        "anderson": Param(5, [Interval(Integral, 0, None, closed="left")]),
        "cone_free_start": Param(True, ["boolean"]),
        "cone_free_tol": Param(1e-4, POSITIVE),
        "safeguard": Param(2.0, POSITIVE),
        "polish_rounds": Param(20, [Interval(Integral, 0, None, closed="left")]),
        "warm_start": Param(None, [None, Result]),
        "device": Param(None, [object]),
        "dtype": Param(None, [None, object]),
    }

    def size(self) -> int:
        return self.relaxation.standard_form().n

    # -- set-up ---------------------------------------------------------------------------------
    def init_state(self):
        form = self.relaxation.standard_form()
        arrays = arrays_for(self.device, self.dtype)
        # on a device the centres are projected there (device_split), not by the host's eigensolver
        split = splitting.split(form, partial=self.partial_eig and arrays.numpy, project_centre=arrays.numpy)
        n, host = form.n, form
        if not arrays.numpy:  # the iteration's arrays move to the device once, here
            split = device_split(split, arrays)
            shared = getattr(self.relaxation, "device_form", None)  # the relaxation's copy, where it keeps one
            form = shared(arrays) if shared is not None else device_form(form, arrays)
        start = split.centre if split.centre is not None else moved(np.zeros((n, n)), arrays)
        scale = max(frobenius(start, arrays.xp), 1.0)
        rho = self.rho
        if rho is None:
            rho = 2.0 * form.c if form.c > 0 else max(frobenius_norm(form.C), _TINY) / scale
        state = GenericState(form=form, split=split, spectral=split.spectral, lam=np.zeros(split.A.shape[0]))
        state.arrays, state.scale = arrays, scale
        if arrays.numpy:
            finite_L, finite_U = np.isfinite(form.L), np.isfinite(form.U)
            state.boxed = bool(finite_L.any() or finite_U.any()) or split.ties is not None
            state.L0, state.U0 = np.where(finite_L, form.L, 0.0), np.where(finite_U, form.U, 0.0)
            state.finite_L, state.finite_U = finite_L, finite_U
        else:
            state.boxed = form.L.finite or form.U.finite
            state.L0, state.U0 = (bound.map(lambda v, xp: xp.where(xp.isfinite(v), v, 0.0))
                                  for bound in (form.L, form.U))
        box_multiplier = None
        warm = self.warm_start
        if warm is not None:
            warm = read_warm_start(warm_start_on_host(warm, arrays), n, split.A.shape[0])
            start, box_multiplier = warm.X, warm.box_multiplier
            if not arrays.numpy:
                start = moved(start, arrays)
                box_multiplier = None if box_multiplier is None else moved(box_multiplier, arrays)
            rho = warm.rho if self.rho is None and warm.rho is not None else rho
            if warm.row_multipliers is not None:
                state.lam = -warm.row_multipliers
        state.start = start
        # answers known before any iteration: rows that contradict each other, and a minimiser of
        # the objective alone that meets every constraint (cvxclust.generic.certificates)
        state.infeasibility = contradicting_rows(form)
        if state.infeasibility is not None:
            self.declare_infeasible(state.infeasibility["note"])
        state.optimum, state.unboundedness = unconstrained_optimum(host), None
        if state.optimum is not None and not arrays.numpy:
            state.optimum = moved(state.optimum, arrays)
        state.rho = float(rho)
        state.penalty = ResidualBalancing(rho, self.mu, self.adapt_every)
        state.r_primal = state.r_dual = np.nan
        state.two_block = split.A.shape[0] == 0
        state.copies = ["B"] if state.two_block else self._copies(state)
        state.m_in = split.A.shape[0] - split.n_eq
        # the fixed-point variable: for each copy, its point plus its scaled multiplier (the
        # pre-projection point of the copy's step), then the same for the slack of the range rows
        blocks = []
        for name in state.copies:
            block = start.copy() if name == "S" else self._project_box(state, start)
            if name == "B" and box_multiplier is not None:
                block -= box_multiplier / rho
            blocks.append(arrays.xp.reshape(block, (-1,)))
        if state.m_in:
            blocks.append(np.clip(split.A[split.n_eq:] @ start.ravel(), split.lo[split.n_eq:], split.hi[split.n_eq:]))
        state.S = _stack(blocks, arrays)
        state.image = None
        # no memory where no copy is needed (the X-step alone solves the problem)
        size = state.S.shape[0]
        state.accelerator = AndersonAccelerator(self.anderson if size else 0, self.safeguard, max(size, 1), arrays)
        if not state.two_block:
            state.gram = (split.A @ split.A.T).tocsc()
            state.factor_key = None
        state.Z = None
        state.feasible = None  # (X, objective): the best exactly feasible point of the checks
        state.last_polish = None  # (primal residual, relative loss against the iterate) of the last polish
        if state.two_block and form.psd and form.c > 0 and self.cone_free_start and warm is None:
            self._cone_free_start(state)
        return state

    def _cone_free_start(self, state):
        """Iterate first on the problem without ``X >> 0`` (affine projections, no
        eigendecomposition) until its fixed-point residual is below ``cone_free_tol``: it finds
        most of the box's active set at O(n^2) per iteration, and where the cone is inactive at
        the optimum the eigendecomposition phase has little left to do."""
        spectral = state.spectral
        state.spectral = SpectralSet(spectral.n, psd=False, beta=spectral.beta, trace=spectral.trace,
                                     trace_max=spectral.trace_max)
        state.cone_free_iterations = 0
        try:
            for state.cone_free_iterations in range(1, self.max_iter + 1):
                self.step(state, 0)
                if state.fixed_point_residual <= self.cone_free_tol * max(_norm(state, state.S), _TINY) \
                        or self.elapsed > self.time_limit:
                    break
                state.S = state.accelerator.step(state.S, state.image)
        finally:
            state.spectral = spectral
        state.S, state.image, state.Z = state.image, None, None
        state.accelerator.reset()

    def _copies(self, state):
        copies = []
        if not state.spectral.trivial or (state.form.c == 0 and not state.boxed):
            copies.append("S")
        if state.boxed:
            copies.append("B")
        return copies

    def _project_box(self, state, M):
        return state.split.project_box(state.form, M) if state.boxed else M

    def _unpack(self, state):
        """The copies (projections of their pre-projection points) and their scaled multipliers."""
        n2, S = state.form.n ** 2, state.S
        n = state.form.n
        values, multipliers = {}, {}
        for k, name in enumerate(state.copies):
            point = state.arrays.xp.reshape(S[k * n2:(k + 1) * n2], (n, n))
            # exactly symmetric: the map does not damp an antisymmetric part, and rounding (an
            # eigendecomposition, an extrapolation) would seed one that grows
            point = (point + point.T) / 2
            value = state.spectral.project(point) if name == "S" else self._project_box(state, point)
            values[name], multipliers[name] = value, point - value
        if not state.arrays.numpy:  # the two-block path: no slack
            return values, multipliers, None, None
        slack = S[len(state.copies) * n2:]
        split = state.split
        t = np.clip(slack, split.lo[split.n_eq:], split.hi[split.n_eq:])
        return values, multipliers, t, slack - t

    # -- iterations -----------------------------------------------------------------------------
    def _advance(self, state, iteration):
        """Move past the previous iteration: rebalance rho after a check of a balancing period,
        else take the (accelerated) fixed-point step."""
        # residual balancing (cvxclust.penalty) between the distance of X to its copies and the move
        # of the copies (the dual residual)
        factor = state.penalty.change(iteration, state.rho, state.r_primal, state.r_dual)
        if factor != 1.0:
            factor = float(factor)
            state.rho *= factor
            if self._rejected(state):
                state.image = state.accelerator.fallback  # rescale the plain step, not a failed one
            values, multipliers, t, u_t = self._unpack_image(state)
            blocks = [state.arrays.xp.reshape(values[name] + multipliers[name] / factor, (-1,))
                      for name in state.copies]
            if state.m_in:
                blocks.append(t + u_t / factor)
            state.S = _stack(blocks, state.arrays)
            state.accelerator.reset()
            return
        S = state.accelerator.step(state.S, state.image)
        if S is not state.image and _norm(state, S - state.image) > _REACH * max(_norm(state, state.image), _TINY):
            # the accelerator's safeguard watches the residual, which stays the same when an
            # extrapolation throws a multiplier far along the normal cone of an active bound; the
            # iteration would need a very long time to bring it back: take the plain step
            state.accelerator.reset()
            S = state.image
        state.S = S

    @staticmethod
    def _rejected(state) -> bool:
        """Whether the current state is an extrapolation whose residual grew past the safeguard
        (the accelerator rejects it at its next step, for the plain step it keeps)."""
        accelerator = state.accelerator
        return accelerator.fallback is not None and \
            state.fixed_point_residual > accelerator.safeguard * accelerator.last_norm

    def _unpack_image(self, state):
        S, state.S = state.S, state.image
        try:
            return self._unpack(state)
        finally:
            state.S = S

    def step(self, state, iteration):
        if state.image is not None:
            self._advance(state, iteration)
        values, multipliers, t, u_t = self._unpack(state)
        form, rho, alpha = state.form, state.rho, self.alpha
        previous = state.previous
        if previous is not None:
            move = sum(_norm(state, values[name] - previous[name]) ** 2 for name in state.copies)
            size = sum(_norm(state, multipliers[name]) ** 2 for name in state.copies)
            state.r_dual = math.sqrt(move) / max(math.sqrt(size), state.scale * 1e-12, _TINY)
        state.previous = values
        if state.two_block:
            W, U = values["B"], multipliers["B"]
            V = W - U
            V *= rho
            V -= form.C
            V /= 2.0 * form.c + rho
            X = state.spectral.project(V)
            state.Z, state.U_box = X, U
            state.r_primal = _norm(state, X - W) / max(_norm(state, X), state.scale * 1e-12, _TINY)
        else:
            X, s = self._x_step(state, values, multipliers, t, u_t)
            state.Z = values.get("S", X)
            state.X, state.U_box = X, multipliers.get("B")
            primal = sum(_norm(state, X - values[name]) ** 2 for name in state.copies)
            primal += _norm(state, s - t) ** 2
            state.r_primal = math.sqrt(primal) / max(_norm(state, X), state.scale * 1e-12, _TINY)
        xp = state.arrays.xp
        blocks = [xp.reshape(alpha * X + (1.0 - alpha) * values[name] + multipliers[name], (-1,))
                  for name in state.copies]
        if state.m_in:
            blocks.append(alpha * s + (1.0 - alpha) * t + u_t)
        state.image = _stack(blocks, state.arrays)
        state.fixed_point_residual = float(_norm(state, state.image - state.S))
        return {"primal_residual": state.r_primal, "dual_residual": state.r_dual,
                "fixed_point_residual": state.fixed_point_residual, "rho": state.rho}

    # -- certification --------------------------------------------------------------------------
    def _box_multiplier(self, state):
        U = state.U_box
        return None if U is None or not state.boxed else -state.rho * U

    def dual_bound(self, state) -> float:
        """The certified bound of the module docstring at the current multipliers, in the
        problem's sense and scale."""
        value = bound_at(state, self._box_multiplier(state), -state.lam)
        return value if state.form.sense == "minimize" else -value

    def _own_residuals(self, state, X, in_s: bool):
        residuals = state.form.residuals(X, spectrum=not in_s)
        if in_s and state.form.psd:
            residuals["psd"] = 0.0  # X = Pi_S(.) is p.s.d. by construction
        return residuals

    def certify(self, state, bound, final=False):
        form = state.form
        if final and state.image is not None and self._rejected(state):
            # the point returned comes from the plain step, not from a failed extrapolation
            state.S, state.image = state.accelerator.fallback, None
            state.accelerator.reset()
            self.step(state, 0)
        if state.optimum is not None:  # the minimiser of the objective alone, feasible: no bound needed
            X, optimum_bound, objective = optimum_certificate(form, state.optimum)
            return self._judged(Certificate(X, optimum_bound, objective, self._own_residuals(state, X, in_s=False)))
        if state.Z is None:  # no iteration ran: the start point
            values, multipliers, _, _ = self._unpack(state)
            state.Z = state.spectral.project(next(iter(values.values()), state.start))
            state.U_box = multipliers.get("B")
        fresh = self.dual_bound(state)
        best = self._better(fresh, bound)
        if not final:
            # every INFEASIBILITY_EVERY-th check: the moves of the multipliers and of the iterate
            state.checks += 1
            due = state.checks % INFEASIBILITY_EVERY == 0
            found = infeasibility_test(state, self._box_multiplier(state), -state.lam) if due else None
            if found is not None and found["bound"] > 0:
                state.infeasibility = found
                self.declare_infeasible(
                    f"the bound without the objective along the multipliers' move is {found['bound']:.3g} > 0")
            elif due and form.c == 0 and not np.isfinite(best):
                state.unboundedness = unboundedness_test(state)
                if state.unboundedness is not None:
                    self.declare_unbounded(f"the move of the iterate is a recession direction along which the "
                                           f"objective changes by {state.unboundedness['slope']:.3g} per unit step")
        Z = state.Z
        certificate = Certificate(Z, fresh, form.objective(Z), self._own_residuals(state, Z, in_s=True))
        if final and state.unboundedness is not None:
            # as cvxpy reports an unbounded problem: the value of its supremum or infimum
            certificate.objective = -np.inf if form.sense == "minimize" else np.inf
            return certificate
        # the violation of the iterate itself (a restored point has none)
        certificate.figures["iterate_residual"] = max(certificate.residuals.values(), default=0.0)
        if state.two_block:
            X = restore(state.form, state.split, Z)
            if X is not None:
                restored = form.objective(X)
                certificate.figures["restored_objective"] = restored
                self._keep(state, X, restored)
                if self.polish_rounds and relative_gap(state.feasible[1], best, self.gap_floor) > self.tol and \
                        polish_due(self._excess(state, certificate.objective, best), state.r_primal,
                                   state.last_polish, self.tol):
                    certificate.figures["polished_objective"] = self._polish(state, Z, certificate.objective, best)
                X, restored = state.feasible
                raw_worst = max(certificate.residuals.values(), default=0.0)
                if relative_gap(restored, best, self.gap_floor) <= self.tol or raw_worst > self.residual_tol:
                    certificate = Certificate(X, fresh, restored, self._own_residuals(state, X, in_s=True),
                                              certificate.figures)
            elif state.split.ties is not None and self.polish_rounds:
                certificate = self._within_residual(state, certificate, best)
        return self._judged(certificate)

    def _judged(self, certificate: Certificate) -> Certificate:
        if not getattr(self.relaxation, "judged_by_standard_form", False):
            certificate.objective = None  # a relaxation other than the plain problem judges with its own
        return certificate

    def extras(self, state):
        Lam = self._box_multiplier(state)
        return {"rho": state.rho, "box_multiplier": Lam, "row_multipliers": -state.lam,
                "splitting": dict(state.split.absorbed), "eigendecompositions": state.spectral.eigendecompositions,
                "cone_free_iterations": state.cone_free_iterations,
                "infeasibility": state.infeasibility, "unboundedness": state.unboundedness}


def _norm(state, x) -> float:
    """``||x||`` (Frobenius for a matrix) as a Python float, on the state's device."""
    return frobenius(x, state.arrays.xp)


def _stack(blocks, arrays) -> np.ndarray:
    """The fixed-point variable of the copies' ``blocks`` (empty where no copy is needed: a
    Frobenius objective under rows alone, which the X-step solves exactly)."""
    if not arrays.numpy:  # the two-block path: one copy
        return blocks[0]
    return np.concatenate(blocks) if blocks else np.zeros(0)
