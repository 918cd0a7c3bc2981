r"""The low-rank method of :func:`cvxclust.solve`: ``X = V V^T`` with an adaptive rank inside an
augmented Lagrangian method, certified by the smallest eigenvalue of the dual slack.

The class it takes: ``min <C, X> + const`` (no squared Frobenius term) subject to ``X >> 0``,
rows ``lo <= A(X) <= hi`` (equalities where ``lo = hi``), and entrywise bounds only of these
kinds: a fixed diagonal (``diag(X) = d``, ``d >= 0``), or bounds ``l <= diag(X) <= u`` on a
diagonal that is not fixed, and ``X >= 0`` (off the diagonal, and optionally on it) with no
upper bound; the constraints must bound the trace (a fixed diagonal, a row ``tr X = tau``, or
finite upper bounds on every diagonal entry).  This is max-cut, the minimum bisection,
correlation clustering and the k-means SDP of Peng and Wei, with must-link rows and a minimum
cluster size (``diag(X) <= 1 / m``) too.  A ValueError names the part of any other problem.
Where ``X >= 0`` stands with a fixed diagonal and no rows (correlation clustering), the method
runs the route of :mod:`cvxclust.generic.lowrank_penalty` (a dense multiplier of ``X >= 0``).

**The factor.**  ``V`` of shape ``(n, r)``.  With a fixed diagonal ``V = Diag(sqrt(d)) U`` where
U is W with its rows scaled to unit norm (the diagonal held exactly, the gradient by the chain
rule, as Burer and Monteiro do); with ``X >= 0`` the factor is nonnegative (bounds of L-BFGS-B),
so that ``X >= 0`` holds exactly, the route of NLR and RiNNAL+.

**X >= 0 by a dense multiplier** (``nonnegative="multiplier"`` from the start; ``"auto"``, the
default, from the check that ends :data:`~cvxclust.generic.lowrank_check.STALLED_CHECKS` checks in a
row whose gap did not halve and is above ``tol`` and
:data:`~cvxclust.generic.lowrank_check.STALLED_GAP`, up to order
:data:`~cvxclust.generic.lowrank_lagrangian.DENSE_MULTIPLIER_MAX_N` where its ``n x n`` arrays fit,
the multiplier then starting from the one built from the factor). A nonnegative factor restricts X
to the completely positive matrices of its rank, where a random start can stall at a local optimum,
and the multiplier of ``X >= 0`` built from it vanishes off its range (the certificate's limit,
:mod:`cvxclust.generic.lowrank_certificate`).  Here the factor has any sign and ``X >= 0`` enters
the augmented Lagrangian with a multiplier ``Z >= 0`` of full size, the penalty route of NLR and
RiNNAL+ (:func:`~cvxclust.generic.lowrank_check.nonnegative_term`):

.. math::

    L_s(V; y, Z) + \tfrac{1}{2s}\|\max(0, Z - s\,VV^\top)\|_F^2,\qquad
    \text{gradient term } -2\max(0, Z - s\,VV^\top)\,V,

with ``Z <- max(0, Z - s V V^T)`` after each run, and the certificate's dual slack
``C - A^*(y) - Diag(w) - Z``.  Each evaluation costs ``O(n^2 r)``.  The penalty and the rank grow
only after an inner run that converged (before, a residual that did not halve or a negative
eigenvalue is Z's lag, not a missing column's), the penalty to
:data:`~cvxclust.generic.lowrank_lagrangian.MULTIPLIER_PENALTY_CAP` times its start, and the rank
by the eigenvector alone.

**The rows** by an augmented Lagrangian on V,

.. math::

    L_s(V; y) = \langle C, VV^\top\rangle - y^\top(\mathcal A(VV^\top) - b)
    + \tfrac{s}{2}\|\mathcal A(VV^\top) - b\|^2,\qquad
    \nabla_V L_s = 2\,(C - \mathcal A^*(y - s\,r))\,V,

all matrix-free (:class:`~cvxclust.generic.factor_rows.FactorRows`).  An inequality row, and a
bound on a diagonal that is not fixed (a row ``<e_i e_i^T, X>`` of its own, multiplier ``w_i``),
enter through ``r = A(VV^T) - clip(A(VV^T) - y / s, lo, hi)`` in place of ``A(VV^T) - b``: for
``g(V) <= 0`` with ``mu = -y >= 0`` the term is Rockafellar's
``(s/2) ||max(0, g + mu/s)||^2 - ||mu||^2 / (2s)``, continuously differentiable
(:func:`~cvxclust.generic.lowrank_check.shifted`).  An iteration is one run of
L-BFGS-B on ``L_s`` warm started from the last factor (its gradient tolerance shrinking from one
iteration to the next), then ``y <- y - s r`` (for an inequality ``mu <- max(0, mu + s g)``), and
``s`` grown by ``penalty_growth`` where the
relative residual did not fall below half its last value and is above a tenth of
``residual_tol`` (at most :data:`PENALTY_CAP` times its start).  Where a row ``1^T X 1 = 0`` forces
``X 1 = 0`` (the minimum bisection), it is held instead as the linear constraint ``V^T 1 = 0``
on the factor, whose multiplier is well defined, and the point is moved onto it exactly.

**A fixed diagonal alone** (max-cut: no rows, no ``X >= 0``) needs no augmented Lagrangian: the
factor's rows lie on spheres, and an iteration is one run of a Riemannian gradient method there
(:mod:`cvxclust.generic.lowrank_oblique`) to a gradient tolerance that falls tenfold per
iteration, from ``1e-2`` to ``1e-2 tol`` of the gradient's scale ``|<C, V V^T>| / sqrt(tau)``;
after a check it is the gradient reached times ``tol`` over twice the gap (the gap falling about as
the gradient), between a tenth and a half of it.

**The rank** starts at ``rank`` (by default ``min(n, max(8, ceil(tau) + 2))`` for a trace row,
``min(n, max(8, ceil(2.5 n^(1/3))))`` for a fixed diagonal alone, a little above the rank max-cut's
solutions on sparse random graphs need, capped where the descent's 12 copies of the factor would
take more than half the available memory (n = 10^6), ``min(n, 8)`` otherwise) and grows where the
certificate's smallest eigenvalue is clearly negative, once the rows are met to 1e-3 (for a fixed
diagonal alone, once the bound's loss exceeds thirty times the last relative gradient norm: the
loss that a gradient not yet zero leaves measured about ten times it): its eigenvector (its
larger sign part for a nonnegative factor), scaled small, becomes a new column (as in HALLaR),
with small random columns besides for a factor of any sign (a quarter of the rank in all), up to
``max_rank``.

**The certificate** (:mod:`cvxclust.generic.lowrank_certificate`, its steps in
:mod:`cvxclust.generic.lowrank_check`) at every check: the row
multipliers y (of an inequality, with the sign of its side), those of the bounds on a diagonal
that is not fixed (the augmented Lagrangian's), those of a fixed diagonal
``w_i = ((C - A^* y) V)_i . v_i / d_i`` (the stationarity of
the unit rows), the multiplier of ``X >= 0`` built from the factor's first-order conditions, and
the smallest eigenvalue of the dual slack by Lanczos; the bound is valid whatever the iterate.
The status is ``"optimal"`` only when the certified relative gap is below ``tol`` and the
residuals, computed from the factor with the definitions of
:meth:`~cvxclust.generic.StandardForm.residuals` (the rows from ``A(V V^T)``, by how much they
leave ``[lo, hi]``; the bounds on a diagonal that is not fixed from ``diag(V V^T)``; the other
bounds hold by construction up to rounding; ``X = V V^T`` is p.s.d.), are below ``residual_tol``.

**The point.**  ``result.extras["factor"]`` is V (``X = V V^T``).  ``result.X`` is ``V V^T``
where ``form_X`` is True, or where it is None (the default) and ``8 n^2`` bytes are at most a
quarter of the available memory (:func:`cvxclust._memory.available_bytes`, or a CUDA device's
free memory); otherwise None.

**On a device** (``device=``), a fixed diagonal alone runs there, factor, descent and certificate
(:mod:`cvxclust.generic.lowrank_device`), and V and ``result.X`` come back there; the other
classes, whose inner solver is SciPy's L-BFGS-B, run on NumPy only.

References: S. Burer, R. D. C. Monteiro, "A nonlinear programming algorithm for solving
semidefinite programs via low-rank factorization", Mathematical Programming 95(2), 2003;
R. D. C. Monteiro, A. Sujanani, D. Cifuentes, "A low-rank augmented Lagrangian method for large-scale
semidefinite programming based on a hybrid convex-nonconvex approach" (HALLaR), 2024; Q. Han et al.,
"Low-rank ADMM splitting approaches for semidefinite programming" (LoRADS), 2024; Z. Zhuang, Y. Chen,
Y. Yang, R. Y. Zhang, "Statistically optimal k-means clustering via nonnegative low-rank semidefinite
programming" (NLR), ICLR 2024; D. Hou, T. Tang, K.-C. Toh, "RiNNAL+: a Riemannian ALM solver for
SDP-RLT relaxations of mixed-binary quadratic programs", 2025.
"""

from __future__ import annotations

import dataclasses
import math
import time
from dataclasses import dataclass
from numbers import Integral, Real

import numpy as np
from scipy.optimize import Bounds, minimize

from .._memory import available_bytes, check_memory
from ..linalg import scipy_blas_threads
from ..parameters import Interval, Options
from ..solvers import POSITIVE, IterativeSolver, Param, SolverState
from .device import arrays_for
from .factor_rows import FactorRows
from .lowrank_check import LowRankChecks, shifted, signed_multipliers, violation
from .lowrank_cost import compress_cost
from .lowrank_device import device_state, square_fits
from .lowrank_form import LowRankForm, lowrank_form
from .lowrank_lagrangian import MULTIPLIER_PENALTY_CAP, FactorLagrangian
from .lowrank_oblique import oblique_descent, oblique_rank
from .lowrank_start import START_KINDS, spectral_applies, spectral_factor, stationary_multipliers
from .sparse_product import cost_product, product_threads

__all__ = ["LowRank"]

_TINY = 1e-300
#: the copies of an ``n x r`` factor the Riemannian descent of a fixed diagonal alone holds
OBLIQUE_COPIES = 12
#: the order from which ``start="auto"`` is spectral (on small instances its stalls and a
#: random start's were about as frequent; on large ones the random start stalls far from the optimum)
SPECTRAL_MIN_ORDER = 1000
#: the largest penalty over the first (with a dense multiplier of ``X >= 0``,
#: :data:`~cvxclust.generic.lowrank_lagrangian.MULTIPLIER_PENALTY_CAP`)
PENALTY_CAP = 1e6


@dataclass(kw_only=True, eq=False)
class LowRankState(SolverState):
    """The state of :class:`LowRank` (see its module)."""

    form: object
    kind: LowRankForm
    rows: FactorRows
    #: the free variable (V itself, or V before its rows are scaled to sqrt(d))
    W: np.ndarray
    y: np.ndarray
    #: the multipliers of the bounds on the diagonal held by the augmented Lagrangian (None where none)
    w: np.ndarray | None = None
    #: the multiplier of V^T 1 = 0 where X 1 = 0 is forced
    shift: np.ndarray | None = None
    penalty: float
    penalty_start: float = 1.0
    gtol: float
    residual: float = np.inf
    max_rank: int
    cost_norm: float
    rng: np.random.Generator
    eigsh: int = 0
    lanczos_matvecs: int = 0
    lbfgs_iterations: int = 0
    outer: int = 0
    lambda_min: float = np.nan
    #: |<C, V V^T>| at the last check, the gradient tolerance of the first L-BFGS-B run
    value: float | None = None
    growth: tuple | None = None
    gtol_start: float = np.nan
    start_vector: np.ndarray | None = None
    #: whether the fixed diagonal is the only constraint (the Riemannian inner solver)
    oblique: bool = False
    matmul: object = None
    #: the Riemannian inner solver's last relative gradient norm (its norm over the gradient's scale)
    gradient_reached: float = np.inf
    #: on a device, its parts (:class:`~cvxclust.generic.lowrank_device.DeviceOblique`) and descent
    device: object = None
    descent: object = None
    #: the dense multiplier of X >= 0 where the augmented Lagrangian holds it (``nonnegative``), and
    #: two ``n x n`` work arrays
    Z: np.ndarray | None = None
    work: tuple = ()
    #: whether the last inner run converged (within ``inner_max_iter``)
    converged: bool = True
    #: whether a stalled bound hands X >= 0 to a dense multiplier (``nonnegative="auto"``), the gap of the
    #: last check, and the multiplier to start from where it does (at the next step)
    switchable: bool = False
    last_gap: float = np.inf
    stalled: int = 0
    switch: object = None


class LowRank(LowRankChecks, FactorLagrangian, IterativeSolver):
    r"""The low-rank augmented Lagrangian method of :mod:`cvxclust.generic.lowrank`.

    Parameters
    ----------
    relaxation : Relaxation
        The problem, read into its :meth:`~cvxclust.Relaxation.standard_form`.
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        The options of every solver (:class:`cvxclust.solvers.IterativeSolver`); an iteration
        is one run of L-BFGS-B and one multiplier update (for a fixed diagonal alone, one run of
        the Riemannian gradient method); a check (one smallest eigenvalue)
        comes every ``check_every`` iterations.
    rank : int or None
        The starting rank (module docstring for the default); at most n.
    max_rank : int or None
        The largest rank (None: n); at most n.
    random_state : int, Generator or None
        The random start of the factor and of Lanczos (0 by default: a solve is reproducible).
    nonnegative : {"auto", "factor", "multiplier"}
        How ``X >= 0`` is held (module docstring): ``"factor"``, a nonnegative factor (memory
        ``O(n r)``); ``"multiplier"``, a factor of any sign and a dense multiplier (four ``n x n``
        arrays); ``"auto"`` (the default), the nonnegative factor until its bound stalls, then the
        multiplier, up to order
        :data:`~cvxclust.generic.lowrank_lagrangian.DENSE_MULTIPLIER_MAX_N` where it fits.  Where a
        fixed diagonal stands without rows, ``"auto"`` and ``"multiplier"`` take the route of
        :mod:`cvxclust.generic.lowrank_penalty`.  Ignored where ``X >= 0`` does not stand.
    start : {"auto", "random", "spectral"}
        The factor's start: ``"spectral"``, a spectral clustering's normalised indicator factor
        with the row multipliers it leaves stationary, for the k-means SDP of Peng and Wei
        (:mod:`cvxclust.generic.lowrank_start`); ``"random"``, a random factor; ``"auto"`` (the
        default), spectral where that structure stands and n >= :data:`SPECTRAL_MIN_ORDER`.
    form_X : bool or None
        Whether ``result.X`` is ``V V^T``; None forms it where it takes at most a quarter of the
        available memory.
    inner_max_iter : int
        L-BFGS-B (or Riemannian gradient) iterations per iteration at most.
    penalty : float or None
        The first penalty s; None scales it to the problem.
    penalty_growth : float
        The factor s grows by where the residual did not halve.
    device, dtype : str, torch.device or None
        Where the iterations run (:func:`cvxclust._array_api.device_namespace`: None or ``"cpu"``
        is NumPy, ``"cuda"`` or a ``torch.device`` PyTorch there) and in which floating type
        (``"float64"``, the default, or ``"float32"``): only for a fixed diagonal alone
        (:mod:`cvxclust.generic.lowrank_device`; the other classes are a ValueError there).  The
        bound's rounding allowance is scaled by the dtype's unit roundoff: it holds for float64,
        and is about 5e8 times wider in float32.

    Returns
    -------
    Result
        History rows hold ``outer``, ``penalty``, ``rows_residual``, ``rank`` and
        ``lbfgs_iterations`` (and ``nonnegative_residual`` while a dense multiplier holds
        ``X >= 0``; for a fixed diagonal alone ``outer``, ``rank``, ``gradient_norm`` and
        ``lbfgs_iterations``, the Riemannian iterations; and, at checks, ``lambda_min``);
        ``extras``: ``factor`` (V), ``rank``, ``eigsh`` (smallest-eigenvalue computations),
        ``lanczos_matvecs``, ``lbfgs_iterations``, ``row_multipliers``, ``diagonal_multipliers``
        (those of the bounds on a diagonal that is not fixed, ``<= 0`` for an upper bound; None
        where there are none), ``nonnegative_multiplier`` (the dense Z where it held ``X >= 0``,
        else None).
    """

    method = "lowrank"
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(500, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "rank": Param(None, [None, Interval(Integral, 1, None, closed="left")]),
        "max_rank": Param(None, [None, Interval(Integral, 1, None, closed="left")]),
        "random_state": Param(0, ["random_state"]),
        "form_X": Param(None, [None, "boolean"]),
        "inner_max_iter": Param(500, [Interval(Integral, 1, None, closed="left")]),
        "penalty": Param(None, [None, *POSITIVE]),
        "penalty_growth": Param(4.0, [Interval(Real, 1, None, closed="left")]),
        "start": Param("auto", [Options(*START_KINDS)]),
        "nonnegative": Param("auto", [Options("auto", "factor", "multiplier")]),
        "device": Param(None, [object]),
        "dtype": Param(None, [None, object]),
    }

    # -- set-up ---------------------------------------------------------------------------------
    def init_state(self):
        # a dense cost of numerically low rank as a low-rank part, its error bound in the certificate
        form = self.relaxation.standard_form()
        form = dataclasses.replace(form, cost=compress_cost(form.cost))
        kind = lowrank_form(form)
        n = form.n
        self._check_ranks(n)
        if self.rank:
            rank = self.rank
        elif kind.trace_row:
            rank = min(n, max(8, math.ceil(kind.tau) + 2))
        elif form.m or kind.nonnegative:
            rank = min(n, 8)
        else:  # a fixed diagonal alone: about the ranks max-cut's solutions of random graphs need, where it fits
            rank = oblique_rank(n)
            available = available_bytes()
            if available is not None:  # the rank grows from below where the certificate asks
                rank = max(min(rank, available // (2 * OBLIQUE_COPIES * 8 * n)), min(n, 8))
        max_rank = self.max_rank or n
        rank = min(rank, max_rank)
        oblique = kind.diagonal is not None and not form.m and not kind.nonnegative
        arrays = arrays_for(self.device, self.dtype)
        if not arrays.numpy:  # the oblique path on the device (lowrank_device), the rest refused there
            return LowRankState(form=form, kind=kind, rows=FactorRows(form.rows), y=np.zeros(0), penalty=1.0,
                                gtol=np.inf, residual=0.0, max_rank=max_rank, cost_norm=form.cost.frobenius_norm(),
                                oblique=True, **device_state(self, form, kind, rank, max_rank, arrays))
        # the factor, its gradient and L-BFGS-B's pairs (maxcor 10) and work arrays: about 30 copies (12 where oblique)
        check_memory((OBLIQUE_COPIES if oblique else 30) * 8 * n * rank,
                     f"method='lowrank' at rank {rank} (the factor and L-BFGS-B's memory)", "give a smaller rank")
        rng = np.random.default_rng(self.random_state)
        rows, matmul = FactorRows(form.rows), cost_product(form.cost, product_threads())
        y = np.zeros(form.m)
        if self._spectral(kind, n):  # a spectral clustering's indicator factor (lowrank_start)
            W = spectral_factor(matmul, n, min(rank, max(1, round(kind.tau))), rng)
            y = stationary_multipliers(rows, matmul, W)
        else:
            W = rng.standard_normal((n, rank))
            if kind.nonnegative:
                W = np.abs(W)
            if kind.diagonal is None:
                W *= math.sqrt(kind.tau) / max(np.linalg.norm(W), _TINY)
        cost_norm = form.cost.frobenius_norm()
        state = LowRankState(form=form, kind=kind, rows=rows, W=W, y=y, penalty=1.0, gtol=np.inf,
                             max_rank=max_rank, cost_norm=cost_norm, rng=rng, matmul=matmul, oblique=oblique)
        V = self._factor(state, W)[0]
        r = np.concatenate([violation(rows.apply(V), form.lo, form.hi)] +
                           ([violation(np.einsum("ij,ij->i", V, V), *kind.box)] if kind.box is not None else []))
        if kind.box is not None:
            state.w = np.zeros(n)
        state.switchable = self._dense_multiplier(form, kind)
        if state.switchable and self.nonnegative == "multiplier":
            self._hold_by_multiplier(state, np.zeros((n, n)))
        if self.penalty is not None:
            state.penalty = float(self.penalty)
        else:  # the penalty term as large as the objective's scale at the start
            state.penalty = max(cost_norm * kind.tau, _TINY) / max(float(r @ r), 1.0) if r.size else 1.0
        state.penalty_start = state.penalty
        state.residual = np.inf if r.size else 0.0
        if kind.deflate:
            state.shift = np.zeros(W.shape[1])
        return state

    def _check_ranks(self, n: int) -> None:
        """A ValueError where ``rank`` or ``max_rank`` exceeds the order n of X."""
        for name in ("rank", "max_rank"):
            value = getattr(self, name)
            if value is not None and value > n:
                raise ValueError(f"{name}={value} exceeds the order n={n} of X: a factor of X has at most n "
                                 f"columns (give {name} <= {n}, or None)")

    def _spectral(self, kind, n: int) -> bool:
        """Whether the start is spectral (:mod:`cvxclust.generic.lowrank_start`): by default where it
        applies and n is at least :data:`SPECTRAL_MIN_ORDER`; ``start="spectral"`` where it does
        not apply is a ValueError."""
        if self.start == "spectral" and not spectral_applies(kind):
            raise ValueError("start='spectral' needs the k-means SDP's structure (X >= 0, a row tr X = k and the "
                             "row sums of every index); this problem lacks it (give start='random' or 'auto')")
        if self.start == "auto":  # measured: below that order neither start stalls less often
            return spectral_applies(kind) and n >= SPECTRAL_MIN_ORDER
        return self.start == "spectral"

    def size(self) -> int:
        return 0  # thin products only: one BLAS thread is the package's policy below order 1500

    def is_check(self, state, iteration: int) -> bool:
        """Every ``check_every`` iterations, once the rows are met to 1e-3: before, the multipliers,
        and with them the bound, mean little, and the rank does not grow (a check at the end
        certifies the point returned wherever the iterations stop).  For a fixed diagonal alone,
        once the relative gradient norm is at most ``max(3e-4, tol / 10)``: above, the gap it
        leaves (about ten times it) is beyond ``tol`` and, below a loss of 1%, grows no rank."""
        if state.oblique:
            return super().is_check(state, iteration) and state.gradient_reached <= max(3e-4, 0.1 * self.tol)
        return super().is_check(state, iteration) and state.residual <= 1e-3

    # -- iterations -----------------------------------------------------------------------------
    def step(self, state, iteration):
        form = state.form
        if state.growth is not None:
            (state.device.grow if state.device is not None else self._grow_rank)(state, *state.growth)
            state.growth = None
        if state.switch is not None:  # the bound stalled with the nonnegative factor
            A, P = state.switch
            self._hold_by_multiplier(state, A @ P.T + P @ A.T)
        if state.oblique:
            return self._oblique_step(state)
        if not np.isfinite(state.gtol):  # the first gradient sets the scale of the tolerances
            state.gtol = 1e-3 * max(float(np.abs(self._lagrangian(state, state.W.ravel())[1]).max()), _TINY)
            state.gtol_start = state.gtol
        bounds = Bounds(np.zeros(state.W.size), np.inf) if state.kind.nonnegative and state.Z is None else None

        def stop_at_time_limit(intermediate_result):
            if self.elapsed > self.time_limit:
                raise StopIteration

        with scipy_blas_threads(1):
            out = minimize(lambda x: self._lagrangian(state, x), state.W.ravel(), jac=True, method="L-BFGS-B",
                           bounds=bounds, callback=stop_at_time_limit,
                           options={"maxiter": self.inner_max_iter, "gtol": state.gtol, "ftol": 0.0, "maxcor": 10})
        state.W = out.x.reshape(state.W.shape)
        state.converged = out.nit < self.inner_max_iter
        if state.Z is not None:  # the gradient reached, relative to the objective's scale (for the rank's growth)
            value = abs(float(out.fun)) if state.value is None else state.value
            state.gradient_reached = float(np.linalg.norm(out.jac)) * math.sqrt(state.kind.tau) / max(value, _TINY)
        state.lbfgs_iterations += int(out.nit)
        state.outer += 1
        residual, held = np.nan, form.m or state.w is not None or state.Z is not None
        if held:
            V = self._factor(state, state.W)[0]
            residual = 0.0
        if form.m:
            a = state.rows.apply(V)
            state.y = state.y - state.penalty * self._active_residual(
                state, shifted(a, state.y, state.penalty, form.lo, form.hi))
            if state.kind.deflate:
                state.shift = state.shift - state.penalty * V.sum(axis=0)
            residual = self._row_residual(state, V, a)
        if state.w is not None:
            x = np.einsum("ij,ij->i", V, V)
            # the signs exact: a rounding of the update gives no multiplier a side without a bound
            state.w = signed_multipliers(state.w - state.penalty * shifted(x, state.w, state.penalty, *state.kind.box),
                                         *state.kind.box)
            residual = max(residual, self._box_residual(state, x))
        violated = self._update_nonnegative(state, V) if state.Z is not None else np.nan
        if held:
            # grown only while the residual is above a tenth of its tolerance and did not halve:
            # beyond, a larger s only amplifies the rounding of r in the multipliers
            both = max(residual, violated) if state.Z is not None else residual
            # (with a dense multiplier, only after an inner run that converged: before, Z lags and not s)
            if both > max(0.5 * state.residual, 0.1 * self.residual_tol) and (state.Z is None or state.converged):
                cap = PENALTY_CAP if state.Z is None else MULTIPLIER_PENALTY_CAP
                state.penalty = min(state.penalty * self.penalty_growth, cap * state.penalty_start)
            state.residual = both
        state.gtol = max(0.2 * state.gtol, 1e-15)
        row = {"outer": state.outer, "penalty": state.penalty, "rows_residual": residual,
               "rank": state.W.shape[1], "lbfgs_iterations": int(out.nit)}
        if state.Z is not None:
            row["nonnegative_residual"] = violated
        return row

    def _oblique_step(self, state) -> dict:
        """One run of the Riemannian inner solver (:mod:`cvxclust.generic.lowrank_oblique`) to a
        gradient tolerance relative to the gradient's scale ``|<C, V V^T>| / sqrt(tau)`` that falls
        tenfold from one iteration to the next, from a hundredth to a hundredth of ``tol`` (after a
        check, as :meth:`certify` sets it from the gap)."""
        if not np.isfinite(state.gtol):
            state.gtol = 1e-2
        if state.value is None:
            V = self._factor(state, state.W)[0]
            state.value = abs(float(np.vdot(V, state.matmul(V))))
        scale = max(state.value, self.gap_floor, _TINY) / math.sqrt(state.kind.tau)
        deadline = time.perf_counter() + self.time_limit - self.elapsed
        with scipy_blas_threads(1):
            options = {"gtol": state.gtol * scale, "max_iter": self.inner_max_iter, "deadline": deadline}
            if state.descent is not None:  # on a device
                run = state.descent(state.matmul, state.W, state.kind.sqrt_diagonal, **options)
            else:
                run = oblique_descent(state.matmul, state.W, state.kind.sqrt_diagonal, threads=product_threads(),
                                      **options)
        state.W = run.V
        state.value = abs(run.value)
        state.lbfgs_iterations += run.iterations
        state.outer += 1
        state.gradient_reached = run.grad_norm * math.sqrt(state.kind.tau) / max(state.value, self.gap_floor, _TINY)
        state.gtol = max(0.1 * state.gtol, 1e-2 * self.tol)
        return {"outer": state.outer, "rank": state.W.shape[1], "lbfgs_iterations": run.iterations,
                "gradient_norm": run.grad_norm}

    # -- result ---------------------------------------------------------------------------------
    def certify(self, state, bound, final=False):
        if state.device is not None:
            return state.device.certify(state, final)
        return super().certify(state, bound, final)

    def run(self):
        route = self._route()
        if route is not type(self):
            return route(self.relaxation, **{name: getattr(self, name) for name in self.parameters}).run()
        result = super().run()
        V = result.extras["factor"]
        form_X = self.form_X if self.form_X is not None else square_fits(V)
        return dataclasses.replace(result, X=V @ V.T) if form_X else result

    def _route(self):
        """The class that solves the problem: :class:`~cvxclust.generic.lowrank_penalty.DensePenalty`
        where ``X >= 0`` stands with a fixed diagonal and no rows, on the host, else :class:`LowRank`
        (which refuses that class on a device)."""
        from .lowrank_penalty import DensePenalty, dense_penalty_applies  # it builds on this module

        form = self.relaxation.standard_form()
        on_host = arrays_for(self.device, self.dtype).numpy
        penalty = on_host and self.nonnegative != "factor" and dense_penalty_applies(form, lowrank_form(form))
        return DensePenalty if penalty else LowRank

    def extras(self, state):
        return {"factor": self._point(state), "rank": int(state.W.shape[1]), "eigsh": state.eigsh,
                "lanczos_matvecs": state.lanczos_matvecs, "lbfgs_iterations": state.lbfgs_iterations,
                "outer_iterations": state.outer, "penalty": state.penalty, "row_multipliers": state.y,
                "diagonal_multipliers": state.w, "nonnegative_multiplier": state.Z}

