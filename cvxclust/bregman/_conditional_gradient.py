r"""Generalized conditional gradient (Algorithm 1) for :math:`\min_T L(T) + \tfrac{\alpha}{2}\Omega^2(T)`.

A generic engine: it sees the smooth convex loss L only through callables (value, gradient and,
optionally, Hessian-vector products) and the norm Omega of Theorem 3 through
:mod:`cvxclust.bregman._omega`, so the conditional model (17), the discriminative model (29) and
the joint model (33), which share this shape, can all use it.

Algorithm 1 (Section 3.2.1)
---------------------------
Starting from :math:`T_0 = 0,\ s_0 = 0`, iterate

1. :math:`S_k = -G_k` with :math:`G_k \in \partial\Omega_*(\nabla L(T_k))`
   (:func:`~cvxclust.bregman._omega.omega_dual_subgradient`): the minimiser of
   :math:`\langle \nabla L(T_k), S\rangle` over the unit ball :math:`\Omega(S) \le 1`, the
   steepest-descent atom (the paper's "up to scaling" is a negative scaling);
2. :math:`(a, b) = \arg\min_{a, b \ge 0} \varphi(a, b) := L(aT_k + bS_k) + \tfrac{\alpha}{2}(a s_k + b)^2`;
3. :math:`T_{k+1} = aT_k + bS_k,\ s_{k+1} = a s_k + b`.

By the triangle inequality :math:`s_k \ge \Omega(T_k)` (T_k is a nonnegative combination of unit
atoms with total weight s_k), so Algorithm 1 is the conditional gradient method on the lifted
problem :math:`\min\{L(T) + \tfrac{\alpha}{2}s^2 : \Omega(T) \le s\}`, which has the optimal value
of (17); the surrogate :math:`L(T_k) + \tfrac{\alpha}{2}s_k^2` is nonincreasing (``(a, b) = (1, 0)``
is a candidate) and converges at the rate O(1/k) (Zhang, Yu & Schuurmans 2012).

The line search (step 2) and the local search that accelerates the method are in
:mod:`cvxclust.bregman._cg_steps`.  With ``local_search`` every iteration ends with a descent
in the factored form of T within its current subspace, and :math:`s_k` is reset to the exact
:math:`\Omega(T_k)` (T_k divided by its norm is itself a unit atom), so the surrogate equals the
objective, every iteration is at least as good as Algorithm 1's step from the same point, and
the O(1/k) guarantee is kept.

Certified bound
---------------
With :math:`h(T) = \tfrac{\alpha}{2}\Omega^2(T)`, :math:`h^*(G) = \Omega_*(G)^2/(2\alpha)`
(the conjugate of half a squared norm is half the squared dual norm). Fenchel duality gives,
for every G, :math:`\min_T L(T) + h(T) \ge -L^*(G) - h^*(-G)`. At :math:`G = \nabla L(T_k)` the
Fenchel-Young equality :math:`L^*(\nabla L(T_k)) = \langle\nabla L(T_k), T_k\rangle - L(T_k)`
makes this computable from quantities the iteration already has:

.. math::

    \mathrm{LB}_k = L(T_k) - \langle \nabla L(T_k), T_k\rangle
                  - \frac{\Omega_*(\nabla L(T_k))^2}{2\alpha},

and the gap :math:`P(T_k) - \mathrm{LB}_k = h(T_k) + h^*(-\nabla L(T_k)) + \langle\nabla L(T_k), T_k\rangle \ge 0`
vanishes exactly at the optimum (where :math:`-\nabla L(T^\star) \in \partial h(T^\star)`).
The loop of :class:`cvxclust.solvers.IterativeSolver` keeps the best bound so far and stops when
the relative gap (:func:`cvxclust.result.relative_gap`) of
:math:`P(T_k) = L(T_k) + \tfrac{\alpha}{2}\Omega^2(T_k)`, evaluated exactly (one thin SVD of
the t x n matrix T), to that bound is below ``tol``.  The problem has no constraints besides
dom L, which every iterate is in; a solver registered on a relaxation whose variable is T (up
to a scaling of its columns) also stops only where the relaxation's own residuals are below
``residual_tol``.

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013; X. Zhang,
Y. Yu, D. Schuurmans, "Accelerated Training for Matrix-norm Regularization: A Boosting
Approach", NIPS 2012.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from numbers import Integral
from typing import Callable

import numpy as np

from .._checks import check_choice, check_int_range, check_n_clusters, check_positive
from ..parameters import Interval, Options
from ..result import Result
from ..solvers import Certificate, IterativeSolver, Param, SolverState
from ._cg_steps import line_search, local_search_step
from ._omega import omega, omega_dual_subgradient

__all__ = ["ConditionalGradient", "OmegaRegularized", "conditional_gradient"]


@dataclass(frozen=True)
class OmegaRegularized:
    r"""The problem :math:`\min_T P(T) = L(T) + \tfrac{\alpha}{2}\Omega^2(T)` that Algorithm 1 solves.

    Parameters
    ----------
    loss : callable
        ``L(T) -> float``, convex and smooth on its domain, returning ``inf`` outside it.
    loss_grad : callable
        ``T -> grad L(T)``, an array of ``shape``.
    shape : (int, int)
        ``(t, n)``, the shape of T.
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha : float
        Positive weight of :math:`\tfrac12\Omega^2`.
    domain : {"M2", "M3"}, default="M2"
        The set of M that defines Omega (Theorem 3 and its footnote 1).
    loss_hvp : callable, optional
        ``(T, V) -> Hess L(T)[V]`` for the Newton line search (forward differences if None).
    start : ndarray, optional
        Starting point; Algorithm 1's ``T_0 = 0`` if None.  Give one when 0 is outside dom L
        (then :math:`s_0 = \Omega(T_0)`).
    scale : ndarray of shape (n,), optional
        For a relaxation whose variable is ``X = T / scale`` (columnwise): the map between the
        two (:meth:`to_primary`, :meth:`from_primary`); the identity if None.
    """

    loss: Callable[[np.ndarray], float]
    loss_grad: Callable[[np.ndarray], np.ndarray]
    shape: tuple[int, int]
    n_clusters: int
    alpha: float
    domain: str = "M2"
    loss_hvp: Callable | None = None
    start: np.ndarray | None = None
    scale: np.ndarray | None = None

    def __post_init__(self):
        try:
            t, n = (int(v) for v in self.shape)
        except (TypeError, ValueError):
            raise ValueError(f"shape must be a pair of integers (t, n), got {self.shape!r}") from None
        check_int_range(t, "shape[0]", 1)
        check_int_range(n, "shape[1]", 1)
        object.__setattr__(self, "shape", (t, n))
        object.__setattr__(self, "n_clusters", check_n_clusters(self.n_clusters, t))
        check_positive(self.alpha, "alpha")
        check_choice(self.domain, "domain", ("M3", "M2"))
        if not callable(self.loss) or not callable(self.loss_grad):
            raise ValueError("loss and loss_grad must be callables")
        if self.loss_hvp is not None and not callable(self.loss_hvp):
            raise ValueError("loss_hvp must be a callable or None")
        if self.start is not None:
            object.__setattr__(self, "start", self.point(self.start, "start"))
        if self.scale is not None:
            scale = np.array(self.scale, dtype=float)
            if scale.shape != (n,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
                raise ValueError(f"scale must be a positive finite vector of length {n}")
            object.__setattr__(self, "scale", scale)

    def point(self, T, name: str = "T") -> np.ndarray:
        """``T`` as a finite float array of :attr:`shape` (a copy), or a ValueError naming ``name``."""
        try:
            T = np.array(T, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a numeric array") from None
        if T.shape != self.shape or not np.all(np.isfinite(T)):
            raise ValueError(f"{name} must be a finite array of shape {self.shape}, got shape {T.shape}")
        return T

    def objective(self, T: np.ndarray) -> float:
        """:math:`P(T)`, ``inf`` outside dom L."""
        value = float(self.loss(T))
        if not np.isfinite(value):
            return np.inf
        return value + 0.5 * self.alpha * omega(T, self.n_clusters, domain=self.domain) ** 2

    def to_primary(self, T: np.ndarray) -> np.ndarray:
        """The relaxation's variable for T (``T / scale``)."""
        return T if self.scale is None else T / self.scale

    def from_primary(self, X: np.ndarray) -> np.ndarray:
        """T for the relaxation's variable X (``X * scale``)."""
        return X if self.scale is None else X * self.scale


@dataclass(frozen=True)
class Evaluation:
    """What :class:`ConditionalGradient` computes at an iterate (module docstring)."""

    loss: float
    #: the linear oracle's atom (its negative is the direction)
    direction: np.ndarray
    objective: float
    #: the lower bound from the iterate's gradient
    lower: float


@dataclass(kw_only=True, eq=False)
class ConditionalGradientState(SolverState):
    """The state of :class:`ConditionalGradient`."""

    #: the iterate and the bound on its norm Omega
    T: np.ndarray
    s: float
    #: the evaluation at T (None after a step, until computed again)
    evaluation: Evaluation | None
    #: the bound at the start point, for the first check (then -inf)
    start_bound: float


class ConditionalGradient(IterativeSolver):
    r"""Algorithm 1 (with local search) for :math:`\min_T L(T) + \tfrac{\alpha}{2}\Omega^2(T)`;
    see the module docstring.

    Registered as ``"conditional-gradient"`` on :class:`~cvxclust.bregman.Conditional`,
    :class:`~cvxclust.bregman.Discriminative` and :class:`~cvxclust.bregman.Joint`, which state
    their problem through ``omega_problem()``; :func:`conditional_gradient` runs it on a problem
    given by callables, with no relaxation.

    Parameters
    ----------
    relaxation : Relaxation, optional
        A relaxation with ``omega_problem()`` (an :class:`OmegaRegularized`); None with ``problem``.
    problem : OmegaRegularized, optional
        The problem, when there is no relaxation (keyword only).
    tol : float, default=1e-6
        Certified relative gap (:func:`cvxclust.result.relative_gap`) to stop at.
    residual_tol : float, default=1e-6
        With a relaxation: the largest relaxation residual
        (:meth:`~cvxclust.Relaxation.residuals`) at which to stop; the problem itself has no
        constraints besides dom L, which every iterate is in.
    max_iter, time_limit, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`); ``max_iter`` defaults
        to 1000.
    check_every : int, default=1
        Iterations between certifications (each costs one loss gradient and one partial SVD,
        which the next step reuses).
    local_search : bool, default=True
        Alternate each conditional-gradient step with the factored local search
        (:mod:`cvxclust.bregman._cg_steps`).
    local_search_iter : int, default=30
        L-BFGS iterations per local search.
    svd_solver : {"auto", "full", "arpack"}, default="auto"
        For the linear oracle (the top ``d - 1`` singular triplets of the gradient;
        :func:`~cvxclust.bregman._omega.omega_dual_subgradient`).
    random_state : int, RandomState, Generator or None
        Seeds the ARPACK starting vectors of the linear oracle.
    warm_start : Result or ndarray, optional
        Start from this point of the relaxation (a previous result's ``X``, or an array of its
        shape; it must lie in dom L) instead of ``omega_problem().start``.

    Returns
    -------
    Result
        ``X``: the last iterate (in the relaxation's variable); ``dual_bound``: the best
        certified lower bound; ``extras``: ``norm_bound``, the bound :math:`s_k \ge \Omega(T_k)`
        of Algorithm 1 (equal to it with ``local_search``).  History rows: ``a``, ``b`` (the
        line search), ``local_search_gain``, ``norm_bound``, and at checks ``surrogate``
        (:math:`L + \tfrac{\alpha}{2}s_k^2`).  Status ``"stalled"`` where the new atom gives no
        decrease (only round-off separates the iterate from the optimum of the lifted problem).
    """

    method = "conditional-gradient"
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(1000, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "local_search": Param(True, ["boolean"]),
        "local_search_iter": Param(30, [Interval(Integral, 1, None, closed="left")]),
        "svd_solver": Param("auto", [Options("auto", "full", "arpack")]),
        "random_state": Param(None, ["random_state"]),
        "warm_start": Param(None, [None, Result, np.ndarray]),
    }

    def __init__(self, relaxation=None, *, problem: OmegaRegularized | None = None, **params):
        super().__init__(relaxation, **params)
        if relaxation is not None and problem is not None:
            raise TypeError("give a relaxation or a problem, not both: a relaxation states its own problem")
        if problem is None:
            if relaxation is None or not hasattr(relaxation, "omega_problem"):
                raise ValueError("conditional-gradient needs a relaxation with omega_problem() or a problem")
            problem = relaxation.omega_problem()
        elif not isinstance(problem, OmegaRegularized):
            raise ValueError(f"problem must be an OmegaRegularized, got {type(problem).__name__}")
        self.problem = problem
        start = problem.start
        if self.warm_start is not None:
            X = self.warm_start.X if isinstance(self.warm_start, Result) else self.warm_start
            start = problem.point(problem.from_primary(np.asarray(X, dtype=float)), "warm_start")
        T = np.zeros(problem.shape) if start is None else start
        if not np.isfinite(problem.loss(T)):
            name = "warm_start" if self.warm_start is not None else "the start point"
            raise ValueError(f"the loss is not finite at {name}; start inside its domain")
        self._start_point = T

    def size(self):
        return self.problem.shape[0]

    def _evaluate_at(self, T):
        """Loss, linear-oracle atom, objective and lower bound at T (module docstring)."""
        p = self.problem
        L_val = float(p.loss(T))
        G = p.loss_grad(T)
        direction, dual = omega_dual_subgradient(G, p.n_clusters, domain=p.domain, svd_solver=self.svd_solver,
                                                 random_state=self.random_state, return_value=True)
        objective = L_val + 0.5 * p.alpha * omega(T, p.n_clusters, domain=p.domain) ** 2
        lower = L_val - float(np.vdot(G, T)) - dual**2 / (2 * p.alpha)
        return Evaluation(loss=L_val, direction=direction, objective=objective, lower=lower)

    def init_state(self):
        p, T = self.problem, self._start_point.copy()
        s = 0.0 if p.start is None and self.warm_start is None else omega(T, p.n_clusters, domain=p.domain)
        evaluation = self._evaluate_at(T)
        # the bound at T_0 joins the first check's
        return ConditionalGradientState(T=T, s=s, evaluation=evaluation, start_bound=evaluation.lower)

    def step(self, state, iteration):
        p = self.problem
        if state.evaluation is None:
            state.evaluation = self._evaluate_at(state.T)
        S = -state.evaluation.direction  # the minimiser of <grad L(T_k), S> over the unit ball of Omega
        a, b, value = line_search(p.loss, p.loss_grad, state.T, S, state.s, p.alpha, loss_hvp=p.loss_hvp)
        if b == 0.0 and a == 1.0 and np.any(state.T):
            self.stall("the new atom gives no decrease: only round-off separates the iterate from the optimum")
            return {"a": a, "b": b}
        state.T, state.s = a * state.T + b * S, a * state.s + b
        state.evaluation = None
        gain = 0.0
        if self.local_search:
            T_new, value_new = local_search_step(p.loss, p.loss_grad, state.T, p.n_clusters, p.alpha,
                                                 domain=p.domain, max_iter=self.local_search_iter)
            gain = value - value_new
            state.T = T_new
            state.s = omega(state.T, p.n_clusters, domain=p.domain)  # T / Omega(T) is one unit atom
        return {"a": a, "b": b, "local_search_gain": gain, "norm_bound": state.s}

    def certify(self, state, bound, final=False):
        if state.evaluation is None:
            state.evaluation = self._evaluate_at(state.T)
        e = state.evaluation
        lower = max(e.lower, state.start_bound)
        state.start_bound = -np.inf
        figures = {"surrogate": e.loss + 0.5 * self.problem.alpha * state.s**2}
        if self.relaxation is None:
            return Certificate(state.T, lower, e.objective, {}, figures)
        # the relaxation's own objective of its variable; the problem has no constraints besides
        # dom L, so the solver's residuals are none and the core confirms with the relaxation's
        return Certificate(self.problem.to_primary(state.T), lower, None, {}, figures)

    def extras(self, state):
        return {"norm_bound": float(state.s)}


def conditional_gradient(loss, loss_grad, shape, n_clusters, alpha, *, domain="M2", loss_hvp=None, T0=None,
                         **options) -> Result:
    r"""Minimise :math:`P(T) = L(T) + \tfrac{\alpha}{2}\Omega^2(T)` by Algorithm 1 (with local search).

    Parameters
    ----------
    loss, loss_grad, shape, n_clusters, alpha, domain, loss_hvp
        The problem (:class:`OmegaRegularized`).
    T0 : ndarray, optional
        Starting point (``OmegaRegularized.start``); Algorithm 1's ``T_0 = 0`` if None.
    **options
        The parameters of :class:`ConditionalGradient` (``tol``, ``max_iter``, ``time_limit``,
        ``local_search``, ...; not ``warm_start``: give ``T0``).

    Returns
    -------
    Result
        ``X`` = T, ``objective`` = :math:`P(T)`, ``dual_bound`` = the certified lower bound,
        ``residuals`` empty (the problem has no constraints besides dom L), ``extras``:
        ``norm_bound``.

    Raises
    ------
    ValueError
        On bad parameters, or if L is not finite at the start point.
    """
    if "warm_start" in options:
        raise TypeError("conditional_gradient() got an unexpected keyword argument 'warm_start'; give T0")
    problem = OmegaRegularized(loss, loss_grad, shape, n_clusters, alpha, domain=domain, loss_hvp=loss_hvp)
    if T0 is not None:
        problem = dataclasses.replace(problem, start=problem.point(T0, "T0"))
    return ConditionalGradient(problem=problem, **options).run()
