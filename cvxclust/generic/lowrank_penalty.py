r"""The route of :mod:`cvxclust.generic.lowrank` where ``X >= 0`` stands with a fixed diagonal and
no rows (correlation clustering): the factor on the spheres' product, ``X >= 0`` held by an
augmented Lagrangian with a dense multiplier.

For ``min <C, X>`` subject to ``X >> 0``, ``diag(X) = d`` and ``X >= 0``, with ``X = V V^T`` and
the rows of V on the spheres of radii ``sqrt(d_i)`` (the diagonal held exactly, as for max-cut in
:mod:`cvxclust.generic.lowrank_oblique`), the constraint ``X >= 0`` is held by an augmented
Lagrangian with a multiplier ``Z >= 0`` of full size ``n x n`` (the penalty route of RiNNAL+ and
of NLR): an iteration minimizes over the spheres

.. math::

    f_\sigma(V; Z) = \langle C, VV^\top\rangle + \tfrac{1}{2\sigma}\|\max(0, Z - \sigma VV^\top)\|_F^2,
    \qquad \nabla_V f_\sigma = 2\,(C - \max(0, Z - \sigma VV^\top))\,V,

by the Riemannian gradient method of :func:`~cvxclust.generic.lowrank_oblique.oblique_descent`
(each step one product ``V V^T`` and one with an ``n x n`` matrix, ``O(n^2 r)``), then sets
``Z <- max(0, Z - sigma V V^T)`` and grows ``sigma`` by ``penalty_growth`` where the violation of
``X >= 0`` did not halve over an iteration whose descent converged (within ``inner_max_iter``).
A check comes once the violation is at most 1e-3, or where it stalls; where the slack's smallest
eigenvalue there costs the bound more than a tenth of ``tol`` and the descent had converged,
its eigenvector, scaled small, becomes a new column of V (up to ``max_rank``).  A multiplier of
full rank is what the dual of correlation clustering needs (positive between clusters, where
``X = 0``): one built from the factor (:func:`~cvxclust.generic.lowrank_certificate.nonnegative_multiplier`)
vanishes on the vectors orthogonal to it and cannot certify.

**The certificate.**  For any symmetric ``Z >= 0`` and any w, every feasible X has
``<Z, X> >= 0`` and ``tr X = tau = sum(d)``, so

.. math::

    \langle C, X\rangle \ \ge\ d^\top w + \tau \min(0, \lambda_{\min}(C - Z - \operatorname{Diag}(w))),

with w from the stationarity of the unit rows, ``w_i = ((C - Z) V)_i \cdot v_i / d_i``, and
``lambda_min`` by Lanczos less its Ritz residual and a rounding allowance
(:func:`~cvxclust.generic.lowrank_certificate.slack_bound`).

**The point** ``V V^T`` is p.s.d. with the diagonal d to rounding; its negative entries violate
``X >= 0`` (the residual ``bounds``, as :meth:`~cvxclust.generic.StandardForm.residuals`
defines it).  Where ``d > 0`` the feasible ``sqrt(d) sqrt(d)^T`` repairs the point exactly: with
``t = m / (m + d_min)`` for the most negative entry ``-m``, ``(1 - t) V V^T + t sqrt(d) sqrt(d)^T``
is p.s.d., of diagonal d and entrywise nonnegative (to the rounding of the product); the
certificate takes the repaired point where its gap is within ``tol`` (its objective differs by ``t`` times
``<C, sqrt(d) sqrt(d)^T - V V^T>``), the factor then ``[sqrt(1 - t) V, sqrt(t) sqrt(d)]``.

References: D. Hou, T. Tang, K.-C. Toh, "RiNNAL+: a Riemannian ALM solver for SDP-RLT
relaxations of mixed-binary quadratic programs", 2025; Z. Zhuang, Y. Chen, Y. Yang, R. Y. Zhang,
"Statistically optimal k-means clustering via nonnegative low-rank semidefinite programming"
(NLR), ICLR 2024; R. T. Rockafellar, "Augmented Lagrangians and applications of the proximal
point algorithm in convex programming", Mathematics of Operations Research 1(2), 1976.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .._memory import MemoryNeed, check_memory, square_bytes
from ..linalg import scipy_blas_threads
from ..result import relative_gap
from ..solvers import Certificate, SolverState
from .lowrank import LowRank
from .lowrank_check import nonnegative_term, nonnegative_violation
from .lowrank_certificate import SlackOperator, slack_bound
from .lowrank_form import LowRankForm, lowrank_form
from .lowrank_oblique import oblique_descent, oblique_rank

__all__ = ["DensePenalty", "PENALTY_COPIES", "check_penalty_memory", "dense_penalty_applies", "dense_slack_bound",
           "fits_penalty", "penalized"]

_TINY = 1e-300
#: the dense ``n x n`` arrays the route holds besides the cost: the multiplier Z, ``V V^T``, the
#: penalty's work array and the point returned (one more where the cost is not held dense)
PENALTY_COPIES = 4
#: the starting rank is this times ``n^(1/3)`` (:func:`~cvxclust.generic.lowrank_oblique.oblique_rank`)
PENALTY_RANK_FACTOR = 1.5


def dense_penalty_applies(form, kind: LowRankForm) -> bool:
    """Whether the route applies: ``X >= 0`` with a fixed diagonal and no rows."""
    return kind.nonnegative and kind.diagonal is not None and not form.m


def check_penalty_memory(form, available: int | None = None) -> None:
    """Raise :class:`~cvxclust._memory.MemoryNeed` (a ValueError) where the route's dense arrays
    (:data:`PENALTY_COPIES`, and the cost written out where it is not held dense) would not fit in
    the memory available; the message names the route, the order, the bytes and what to do."""
    n = form.n
    copies = PENALTY_COPIES + (0 if form.cost.is_dense else 1)
    check_memory(square_bytes(n, copies), f"method='lowrank' on a problem of order {n} with X >= 0 and a fixed "
                 f"diagonal (the multiplier of X >= 0 and {copies - 1} more dense {n} x {n} arrays)",
                 "use method='generic' (the ADMM), or a problem of smaller order", available)


def fits_penalty(form, available: int | None = None) -> bool:
    """Whether the route's arrays fit in memory (:func:`check_penalty_memory`)."""
    try:
        check_penalty_memory(form, available)
    except MemoryNeed:
        return False
    return True


def penalized(C: np.ndarray, Z: np.ndarray, sigma: float, V: np.ndarray, X: np.ndarray | None = None,
              T: np.ndarray | None = None) -> tuple[float, np.ndarray]:
    """``(f_sigma(V; Z), (C - max(0, Z - sigma V V^T)) V)`` (module docstring): the penalized
    objective and half its Euclidean gradient, with ``X`` and ``T`` (``n x n``, overwritten) as
    work arrays where given."""
    X = np.matmul(V, V.T, out=X)
    term, T = nonnegative_term(Z, sigma, X, T)
    value = float(np.vdot(C, X)) + term
    np.subtract(C, T, out=T)
    return value, T @ V


def dense_slack_bound(S0: np.ndarray, w: np.ndarray, d: np.ndarray, **eigen) -> dict:
    """The bound ``d^T w + tau min(0, lambda_min(S0 - Diag(w)))``, ``tau = sum(d)``, for
    ``S0 = C - Z`` with any symmetric ``Z >= 0`` (module docstring), by
    :func:`~cvxclust.generic.lowrank_certificate.slack_bound` (``eigen``: its options)."""
    S = SlackOperator(_DenseCost(S0), _NoRows(), np.zeros(0), w)
    return slack_bound(S, float(d @ w), float(d.sum()), float(np.linalg.norm(S0)), **eigen)


class _DenseCost:
    """A dense matrix with what :class:`~cvxclust.generic.lowrank_certificate.SlackOperator`
    reads of a cost: ``n``, ``matmul``, ``error``."""

    error = 0.0

    def __init__(self, M: np.ndarray):
        self.M, self.n = M, M.shape[0]

    def matmul(self, X: np.ndarray) -> np.ndarray:
        return self.M @ X


class _NoRows:
    """No rows, for :class:`~cvxclust.generic.lowrank_certificate.SlackOperator`."""

    m = 0


@dataclass(kw_only=True, eq=False)
class PenaltyState(SolverState):
    """The state of :class:`DensePenalty` (see its module)."""

    form: object
    kind: LowRankForm
    C: np.ndarray
    V: np.ndarray
    Z: np.ndarray
    X: np.ndarray
    work: np.ndarray
    penalty: float
    penalty_start: float
    gtol: float = 1e-2
    violation: float = np.inf
    value: float = np.nan
    gradient_reached: float = np.inf
    rng: np.random.Generator
    start_vector: np.ndarray | None = None
    eigsh: int = 0
    lanczos_matvecs: int = 0
    descent_iterations: int = 0
    products: int = 0
    outer: int = 0
    lambda_min: float = np.nan
    #: whether the violation of X >= 0 failed to halve over an iteration whose descent converged
    stalled: bool = False
    max_rank: int
    #: the eigenvector of a clearly negative smallest eigenvalue, a new column at the next step
    growth: np.ndarray | None = None
    #: the factor of the point certified last (repaired where it was)
    point: np.ndarray | None = None


class DensePenalty(LowRank):
    """The route of :mod:`cvxclust.generic.lowrank_penalty`, which
    :class:`~cvxclust.generic.lowrank.LowRank` runs on the problems it takes
    (:func:`dense_penalty_applies`), with LowRank's parameters: ``rank`` the factor's columns,
    ``inner_max_iter`` the Riemannian steps per iteration, ``penalty`` the first sigma (None: the
    largest entry of ``|C|`` over that of d), ``penalty_growth``, ``max_rank``; ``start`` must not
    be ``"spectral"``.  ``extras`` as LowRank's, and ``nonnegative_multiplier``, the dense Z."""

    def init_state(self):
        form = self.relaxation.standard_form()
        kind = lowrank_form(form)
        if not dense_penalty_applies(form, kind):
            raise ValueError("the dense-multiplier route of method='lowrank' takes X >= 0 with a fixed diagonal and "
                             "no rows only")
        n = form.n
        check_penalty_memory(form)
        if self.start == "spectral":
            raise ValueError("start='spectral' needs the k-means SDP's structure (X >= 0, a row tr X = k and the "
                             "row sums of every index); this problem lacks it (give start='random' or 'auto')")
        self._check_ranks(n)
        rank = self.rank or oblique_rank(n, PENALTY_RANK_FACTOR)
        rng = np.random.default_rng(self.random_state)
        V = rng.standard_normal((n, rank))
        V *= (kind.sqrt_diagonal / np.maximum(np.linalg.norm(V, axis=1), _TINY))[:, None]
        C = form.cost.dense()
        scale = float(np.abs(C).max()) if n else 1.0
        penalty = self.penalty if self.penalty is not None else max(scale, _TINY) / max(kind.diagonal.max(), _TINY)
        return PenaltyState(form=form, kind=kind, C=C, V=V, Z=np.zeros((n, n)), X=np.empty((n, n)),
                            work=np.empty((n, n)), penalty=penalty, penalty_start=penalty, rng=rng,
                            max_rank=self.max_rank or n)

    @staticmethod
    def _penalized(state, V):
        return penalized(state.C, state.Z, state.penalty, V, state.X, state.work)

    def step(self, state, iteration):
        if state.growth is not None:  # a new column along the eigenvector, small (the rows kept on their spheres)
            new = 1e-2 * math.sqrt(state.form.n) * state.growth[:, None] * state.kind.sqrt_diagonal[:, None]
            state.V = np.column_stack([state.V, new])
            state.growth = None
        deadline = time.perf_counter() + self.time_limit - self.elapsed
        scale = max(abs(state.value) if np.isfinite(state.value) else 0.0, self.gap_floor, _TINY)
        if not np.isfinite(state.value):
            scale = max(abs(float(np.vdot(state.C, state.V @ state.V.T))), float(np.linalg.norm(state.C)), _TINY)
        scale /= math.sqrt(state.kind.tau)
        with scipy_blas_threads(1):
            run = oblique_descent(None, state.V, state.kind.sqrt_diagonal, gtol=state.gtol * scale,
                                  max_iter=self.inner_max_iter, deadline=deadline,
                                  objective=lambda V: self._penalized(state, V))
        state.V = run.V
        state.descent_iterations += run.iterations
        state.products += run.products
        state.outer += 1
        state.gradient_reached = run.grad_norm / scale
        # the multiplier update, Z <- max(0, Z - sigma V V^T), and the violation of X >= 0
        X = state.X
        np.matmul(state.V, state.V.T, out=X)
        state.value = float(np.vdot(state.C, X))
        Z = state.Z
        Z -= state.penalty * X
        np.maximum(Z, 0.0, out=Z)
        violation = max(-float(X.min()), 0.0) / max(float(state.kind.diagonal.max()), _TINY)
        solved = run.iterations < self.inner_max_iter
        if solved and violation > max(0.5 * state.violation, 0.1 * self.residual_tol):
            state.penalty = min(state.penalty * self.penalty_growth, 1e8 * state.penalty_start)
        state.stalled = solved and violation > 0.5 * state.violation
        state.violation = violation
        state.gtol = max(0.3 * state.gtol, 1e-2 * self.tol)
        return {"outer": state.outer, "penalty": state.penalty, "bounds_residual": violation,
                "descent_iterations": run.iterations, "gradient_norm": state.gradient_reached}

    def is_check(self, state, iteration: int) -> bool:
        return (iteration + 1) % self.check_every == 0 and (state.violation <= 1e-3 or state.stalled)

    # -- the certificate ------------------------------------------------------------------------
    def certify(self, state, bound, final=False):
        form, kind, V = state.form, state.kind, state.V
        S0 = state.work
        np.subtract(state.C, state.Z, out=S0)
        d = kind.diagonal
        w = np.divide(np.einsum("ij,ij->i", S0 @ V, V), d, out=np.zeros_like(d), where=d > 0)
        value = form.cost.inner_factor(V)
        aim = 0.05 * self.tol * max(abs(value), self.gap_floor, _TINY) / kind.tau
        found = dense_slack_bound(S0, w, d, random_state=state.rng, start=state.start_vector, residual=aim)
        state.eigsh += 1
        state.lanczos_matvecs += found["products"]
        state.start_vector = found["vector"]
        state.lambda_min = found["lambda_min"]
        loss = kind.tau * max(-found["lambda_min"], 0.0) / max(abs(value), self.gap_floor, _TINY)
        if not final and loss > 0.1 * self.tol and state.V.shape[1] < state.max_rank \
                and state.gradient_reached <= 1e-2 * loss:
            state.growth = found["vector"]
        minimum = found["bound"] + form.constant
        fresh = minimum if form.sense == "minimize" else -minimum
        best = self.bound if form.sense == "minimize" else -self.bound
        point, value = self._repaired(state, V, value, max(best, minimum) if np.isfinite(best) else minimum)
        state.point = point
        objective = value + form.constant
        objective = objective if form.sense == "minimize" else -objective
        # state.X holds V V^T from the repair's test: formed again only for a repaired point
        return Certificate(None, fresh, objective, self._residuals(state, point, formed=point is V),
                           {"lambda_min": found["lambda_min"], "rank": point.shape[1]})

    def _repaired(self, state, V, value, minimum):
        """The factor of the point certified and its ``<C, X>``: V, or the repaired point of the
        module docstring where V V^T has negative entries and the repair's objective is within
        tol of ``minimum`` (the best bound on ``<C, X> + constant``, in the minimized sense)."""
        kind = state.kind
        X = state.X
        np.matmul(V, V.T, out=X)
        most = -float(X.min())
        if most <= 0 or kind.diagonal.min() <= 0:
            return V, value
        t = most / (most + float(kind.diagonal.min())) * (1 + 1e-12)
        root = kind.sqrt_diagonal
        repaired_value = (1 - t) * value + t * float(root @ (state.C @ root))
        if relative_gap(repaired_value + state.form.constant, minimum, self.gap_floor) > self.tol:
            return V, value
        return np.column_stack([math.sqrt(1 - t) * V, math.sqrt(t) * root]), repaired_value

    def _residuals(self, state, V, formed: bool = False) -> dict:
        """The residuals of ``X = V V^T`` as :meth:`~cvxclust.generic.StandardForm.residuals`
        defines them: the diagonal's deviation and the negative entries (over ``max |X|``);
        ``formed``: ``state.X`` already holds ``V V^T``."""
        d = state.kind.diagonal
        X = state.X
        if not formed:
            np.matmul(V, V.T, out=X)
        diagonal = np.diagonal(X)
        scale = max(float(np.abs(X).max()), _TINY)
        bounds = max(float((np.abs(diagonal - d) / np.maximum(d, scale)).max()), nonnegative_violation(X))
        return {"symmetry": 0.0, "bounds": bounds, "psd": 0.0}

    def extras(self, state):
        point = state.point if state.point is not None else state.V
        return {"factor": point, "rank": int(point.shape[1]), "eigsh": state.eigsh,
                "lanczos_matvecs": state.lanczos_matvecs, "lbfgs_iterations": state.descent_iterations,
                "outer_iterations": state.outer, "penalty": state.penalty, "row_multipliers": np.zeros(0),
                "diagonal_multipliers": None, "nonnegative_multiplier": state.Z}

