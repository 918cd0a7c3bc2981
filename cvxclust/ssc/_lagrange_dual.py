r"""The paper's dual solvers LD-SSC1 and LD-SSC2 (Algorithms 1 and 2), kept faithful so that
its claims can be checked.

With ``M = u 1^T + 1 u^T`` and ``P = -(Q + M + K)``, minimising the Lagrangian (8) over F and
the p.s.d. multiplier Z in closed form (``Z = P_+``, (14)) leaves the dual (15)::

    minimize_{Q >= 0, u}  theta(Q, u) = 1/2 ||P_-||_F^2 - 2 1^T u,

with gradients (18) ``d theta / d u_i = -2 - <P_-, T_i + T_i^T> = -2 - 2 (P_- 1)_i`` and (19)
``d theta / d Q = -P_-``.  The primal is recovered by (10): ``F = K + Q + M + Z = -P_-``, and
``1/2 ||K||^2 - theta(Q, u)`` is the dual objective (12), a certified lower bound for every
``Q >= 0`` and ``u``.

Both solvers run on :class:`cvxclust.solvers.IterativeSolver`: a check certifies the recovered
``F`` (symmetric and p.s.d. by construction, so its own residuals are the row sums and the
negative entries; the core confirms them with the relaxation's before it stops) against the
bound (12).

Both run on NumPy arrays (SciPy's L-BFGS-B): a K of another array library is refused, naming the
methods that run on it (:meth:`~cvxclust.ssc.FrobeniusPSD.array_api_methods`).

Reference: Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral Clustering via Lagrange
Duality", IEEE Transactions on Image Processing, 2014.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import ClassVar

import numpy as np
from scipy.optimize import Bounds, minimize

from ..linalg import PSDProjector
from ..parameters import Interval
from ..solvers import Certificate, IterativeSolver, Param, SolverState
from ._relaxations import FrobeniusPSD, FrobeniusSolver, negativity

__all__ = ["LDSSC1", "LDSSC2", "ld_ssc1", "ld_ssc2"]


class _DualOracle:
    """theta(Q, u) of (15) with its gradients (18)-(19); caches the last negative part P_-."""

    def __init__(self, K: np.ndarray, partial_eig: bool):
        self.K = K
        self.n = K.shape[0]
        self.half_norm_K = 0.5 * float(np.sum(K * K))
        self.project_psd = PSDProjector(self.n, partial=partial_eig)
        self.evaluations = 0
        self.P_minus = None

    def __call__(self, Q: np.ndarray, u: np.ndarray):
        self.evaluations += 1
        Qs = (Q + Q.T) / 2
        P = -(Qs + u[:, None] + u[None, :] + self.K)
        P_minus = P - self.project_psd(P)
        self.P_minus = P_minus
        theta = 0.5 * float(np.sum(P_minus * P_minus)) - 2.0 * u.sum()
        grad_u = -2.0 - 2.0 * P_minus.sum(axis=1)
        grad_Q = -P_minus
        return theta, grad_Q, grad_u

    def primal(self) -> np.ndarray:
        """F = -P_- at the last evaluated point, by (10)."""
        return -self.P_minus

    def dual_bound(self, theta: float) -> float:
        return self.half_norm_K - theta


@dataclass(kw_only=True, eq=False)
class DualState(SolverState):
    """The state of LD-SSC1 and LD-SSC2: the oracle and ``theta``, the value of (15) at the dual
    point when the oracle's last evaluation was there (None otherwise); each adds its dual point."""

    oracle: _DualOracle
    theta: float | None = None


@dataclass(kw_only=True, eq=False)
class LDSSC2State(DualState):
    """The state of :class:`LDSSC2`: the dual point ``(Q, u)`` as one vector for L-BFGS-B."""

    x: np.ndarray


@dataclass(kw_only=True, eq=False)
class LDSSC1State(DualState):
    """The state of :class:`LDSSC1`: the dual point."""

    Q: np.ndarray
    u: np.ndarray


class _DualSolver(FrobeniusSolver):
    """What LD-SSC1 and LD-SSC2 share: the oracle of (15) and the certificate of F = -P_-.

    A subclass keeps in its state (its ``state_type``, a :class:`DualState`) the oracle, the dual
    point (:meth:`dual_point`) and ``theta``.
    """

    state_type: ClassVar[type[DualState]] = DualState

    relaxations = (FrobeniusPSD,)
    parameters = IterativeSolver.parameters | {
        # a check costs O(n^2) against an eigendecomposition per iteration: certify every one
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "partial_eig": Param(True, ["boolean"]),
    }

    def start(self) -> dict:
        """The dual variables at the start, as fields of the state."""
        raise NotImplementedError

    def dual_point(self, state) -> tuple[np.ndarray, np.ndarray]:
        """The current (Q, u)."""
        raise NotImplementedError

    def init_state(self):
        return self.state_type(oracle=_DualOracle(self.relaxation.K, self.partial_eig), **self.start())

    def certify(self, state, bound, final=False):
        oracle = state.oracle
        if final or state.theta is None:
            # the oracle's last evaluation may be elsewhere (a line-search trial point)
            state.theta, *_ = oracle(*self.dual_point(state))
        F = oracle.primal()
        row_sums, negatives = float(np.abs(F.sum(axis=1) - 1).max()), negativity(F)
        return Certificate(F, oracle.dual_bound(state.theta), self.relaxation.objective(F),
                           {"row_sums": row_sums, "nonnegativity": negatives},
                           {"row_sums": row_sums, "nonnegativity": negatives, "evaluations": oracle.evaluations})

    def extras(self, state):
        return {"evaluations": state.oracle.evaluations}


class LDSSC2(_DualSolver):
    """LD-SSC2 (Algorithm 2): L-BFGS-B on (15) jointly over Q >= 0 (n^2 bounds) and u.

    Parameters
    ----------
    relaxation : FrobeniusPSD
        The SDP (7).
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`); an iteration is one
        L-BFGS-B iteration, and by default every one is checked.
    memory : int
        Corrections L-BFGS-B keeps (its ``maxcor``).
    restarts : int
        L-BFGS-B ends by itself when its line search can make no more progress in floating
        point; it is restarted from its last point with a fresh memory up to ``restarts``
        times, then the status is ``"stalled"``.
    """

    method = "ld-ssc2"
    state_type = LDSSC2State
    parameters = _DualSolver.parameters | {
        "memory": Param(10, [Interval(Integral, 1, None, closed="left")]),
        "restarts": Param(5, [Interval(Integral, 0, None, closed="left")]),
    }

    def start(self):
        n = self.relaxation.n
        return {"x": np.zeros(n * n + n)}

    def dual_point(self, state):
        n = self.relaxation.n
        return state.x[: n * n].reshape(n, n), state.x[n * n:]

    def drive(self, state):
        n, oracle = self.relaxation.n, state.oracle

        def fun(x):
            theta, gQ, gu = oracle(x[: n * n].reshape(n, n), x[n * n:])
            return theta, np.concatenate([gQ.ravel(), gu])

        def callback(intermediate_result):
            # L-BFGS-B calls back at the point its line search accepted, the oracle's last evaluation
            state.x, state.theta = intermediate_result.x.copy(), float(intermediate_result.fun)
            if self.advance(state, None):
                raise StopIteration

        lower = np.concatenate([np.zeros(n * n), np.full(n, -np.inf)])
        options = {"maxiter": self.max_iter, "maxcor": self.memory, "ftol": 0.0, "gtol": 0.0,
                   "maxfun": 10 * self.max_iter}
        for _ in range(1 + self.restarts):
            res = minimize(fun, state.x, jac=True, method="L-BFGS-B", bounds=Bounds(lower, np.inf),
                           callback=callback, options=options)
            state.x, state.theta = res.x, None
            if self.status is not None:
                return
        self.stall(f"L-BFGS-B ended by itself {1 + self.restarts} times ({res.message})")


class LDSSC1(_DualSolver):
    """LD-SSC1 (Algorithm 1): cyclic coordinate ascent on the dual (13), starting at Q = I.

    Each iteration runs at most ``inner_iter`` L-BFGS-B iterations on (16) over u (Q fixed),
    then sets ``Z = P_+`` and ``Q = thr_{>=0}(-(Z + M + K))`` (17) before the next.

    Parameters
    ----------
    relaxation : FrobeniusPSD
        The SDP (7).
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`); by default every
        iteration is checked.
    inner_iter : int
        L-BFGS-B iterations over u per iteration.
    """

    method = "ld-ssc1"
    state_type = LDSSC1State
    parameters = _DualSolver.parameters | {
        "max_iter": Param(20_000, [Interval(Integral, 1, None, closed="left")]),
        "inner_iter": Param(10, [Interval(Integral, 1, None, closed="left")]),
    }

    def start(self):
        n = self.relaxation.n
        return {"Q": np.eye(n), "u": np.zeros(n)}

    def dual_point(self, state):
        return state.Q, state.u

    def step(self, state, iteration):
        oracle = state.oracle
        if state.theta is not None:
            # (17) with Z = P_+ = P - P_- and P = -(Q + M + K):  -(Z + M + K) = Q + P_-
            state.Q = np.maximum(state.Q + oracle.P_minus, 0.0)
        Q = state.Q
        res = minimize(lambda v: oracle(Q, v)[::2], state.u, jac=True, method="L-BFGS-B",
                       options={"maxiter": self.inner_iter, "ftol": 0.0, "gtol": 0.0})
        state.u = res.x
        state.theta, *_ = oracle(Q, state.u)
        return {"inner_iterations": int(res.nit)}

    def certify(self, state, bound, final=False):
        if final and state.theta is not None:
            # a limit ends Algorithm 1 as its iterations end, after the update (17) of Q
            state.Q = np.maximum(state.Q + state.oracle.P_minus, 0.0)
        return super().certify(state, bound, final)


# the parameter and the output both share, after each one's own (their docstrings end indented)
_SHARED_DOC = """partial_eig : bool
        Compute only the smaller side of the spectrum in the p.s.d. projections.

    Returns
    -------
    Result
        ``extras``: ``evaluations`` (of the oracle (15)).
"""
LDSSC1.__doc__ += _SHARED_DOC
LDSSC2.__doc__ += _SHARED_DOC
ld_ssc1 = LDSSC1.as_function()
ld_ssc2 = LDSSC2.as_function()
FrobeniusPSD.register_solver("ld-ssc1", LDSSC1)
FrobeniusPSD.register_solver("ld-ssc2", LDSSC2)
