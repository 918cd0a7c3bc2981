r"""``Conditional``: the conditional relaxation (15)-(17) for any Bregman divergence.

With the loss :math:`L(T) = D_{F^*}(T, f(X)) = F^*(T) + F(X) - \langle X, T\rangle` of (7)
(:meth:`~cvxclust.bregman.divergences.Divergence.dual_divergence`, convex in T for every F), the
value-regularised hard clustering (14) becomes, by the representer theorem and the change of
variable T = M A (Proposition 2),

.. math::

    \min_{M \in \mathcal{M}_2}\ \min_{T:\ \mathrm{Im}(T) \subseteq \mathrm{Im}(M)}
        L(T) + \frac{\alpha}{2}\mathrm{tr}(T^\top M^\dagger T)             \qquad (16)
    \;=\; \min_T\ L(T) + \frac{\alpha}{2}\Omega^2(T)                          \qquad (17)

(the experiments of Section 6 relax M to :math:`\mathcal{M}_2`; ``domain="M3"`` gives the
statement with (12)). The matrix-fractional form of (16) is the SDP

.. math::

    \min_{T, M, S}\ L(T) + \frac{\alpha}{2}\mathrm{tr}(S)
    \quad\text{s.t.}\quad \begin{pmatrix} M & T \\ T^\top & S\end{pmatrix} \succeq 0,\ M \in \mathcal{M}_2,

(:func:`conditional_problem`), the block constraint encoding both
:math:`S \succeq T^\top M^\dagger T` and :math:`\mathrm{Im}(T) \subseteq \mathrm{Im}(M)`.

Primary variable
----------------
**T** (t x n), for every method: (17) is a problem in T alone, its objective is computable
exactly from T (:math:`\Omega` by one thin SVD, Algorithm 2), and M is a function of the optimal
T (footnote 2: M is *minimised* jointly, so :math:`M^\star =` ``omega_optimal_M(T*)`` is optimal
for (16)). :meth:`Conditional.solve` attaches that M to every result as ``result.M``, recovered
the same way for the reference and the scalable solver (the reference's own M variable may be a
different optimal M when the optimum is not unique).
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
from scipy import special

from .._checks import check_choice, check_data_matrix, check_n_clusters, check_positive
from .._relaxation import Relaxation, Result
from ._conditional_gradient import conditional_gradient
from ._problem import conditional_problem, cvxpy_conjugate
from ._omega import omega, omega_dual, omega_optimal_M
from .divergences import (
    Divergence,
    GeneralizedKL,
    ItakuraSaito,
    Logistic,
    Mahalanobis,
    SquaredEuclidean,
    get_divergence,
)
from .sets import residuals_M2, residuals_M3

__all__ = ["Conditional", "conditional_problem", "cvxpy_conjugate", "conditional_gradient_solver"]

_DOMAINS = ("M2", "M3")


def _hessian_vector(divergence: Divergence, Z: np.ndarray, V: np.ndarray) -> np.ndarray | None:
    r"""``Hess L(Z)[V] = Hess F*(Z)[V]``, the derivative of :math:`f^{-1}` along V, in closed form
    for the built-in divergences (None for others: the engine then differences the gradient)."""
    if isinstance(divergence, (SquaredEuclidean, Mahalanobis)):
        return divergence.inverse_transfer(V)  # f^{-1} is linear
    if isinstance(divergence, GeneralizedKL):
        return np.exp(Z) * V
    if isinstance(divergence, Logistic):
        p = special.expit(Z)
        return p * (1.0 - p) * V
    if isinstance(divergence, ItakuraSaito):
        return V / Z**2
    return None


def _set_data(relaxation, X, divergence, n_clusters, alpha, domain, W) -> None:
    """Check and set what the conditional and joint relaxations share: ``divergence``, the data
    ``X`` in its domain (``t``, ``n``), ``n_clusters``, ``alpha`` and ``domain``."""
    relaxation.divergence = get_divergence(divergence, W=W)
    relaxation.X = relaxation.divergence.check_domain(check_data_matrix(X, "X"), "X")
    relaxation.t, relaxation.n = relaxation.X.shape
    relaxation.n_clusters = check_n_clusters(n_clusters, relaxation.t)
    check_positive(alpha, "alpha")
    relaxation.alpha = float(alpha)
    check_choice(domain, "domain", _DOMAINS)
    relaxation.domain = domain


class Conditional(Relaxation):
    r"""The conditional relaxation (15)-(17) for an arbitrary Bregman divergence.

    .. math::

        \min_T\ D_{F^*}(T, f(X)) + \frac{\alpha}{2}\Omega^2(T)
        \;=\; \min_{M \in \mathcal{M}_2,\ T} L(T) + \frac{\alpha}{2}\mathrm{tr}(T^\top M^\dagger T)

    Methods: ``"reference"`` (cvxpy, :func:`conditional_problem`), ``"conditional-gradient"``
    (default; Algorithm 1 with local search, :mod:`cvxclust.bregman._conditional_gradient`).
    Every result holds T in ``result.X`` and the recovered M in ``result.M``; every method reports
    the certified lower bound :meth:`lower_bound` of its T.

    Parameters
    ----------
    X : array_like of shape (t, n)
        Data, in the domain of F (nonnegative for ``"kl"``, in (0, 1) for ``"logistic"``,
        positive for ``"itakura-saito"``).
    divergence : str or Divergence
        Any divergence of :func:`~cvxclust.bregman.divergences.get_divergence` (Itakura-Saito
        included: joint convexity is not needed here).
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha : float, default=1e-2
        Weight of the value regulariser of (14), > 0. The paper uses small values
        (1e-5, 1e-9, Section 6) to approximate the unregularised objective; smaller values make
        the problem more ill-conditioned and the solvers slower.
    domain : {"M2", "M3"}, default="M2"
        The relaxation of M (Section 6 uses M2).
    W : array_like, optional
        The p.d. weight matrix of the ``"mahalanobis"`` divergence.
    """

    name = "Conditional"
    primary_name = "T"
    default_method = "conditional-gradient"

    def __init__(self, X, divergence, n_clusters: int, *, alpha: float = 1e-2,
                 domain: str = "M2", W=None):
        _set_data(self, X, divergence, n_clusters, alpha, domain, W)

    # -- the statement ----------------------------------------------------------------------
    def problem(self) -> cp.Problem:
        return conditional_problem(self.X, self.divergence, self.n_clusters, self.alpha, domain=self.domain)

    # -- the loss and its derivatives ----------------------------------------------------------
    def _check_T(self, T) -> np.ndarray:
        T = np.asarray(T, dtype=float)
        if T.shape != (self.t, self.n):
            raise ValueError(f"T must have shape {(self.t, self.n)}, got {T.shape}")
        return T

    def loss(self, T) -> float:
        r"""L(T) = D_{F*}(T, f(X)); ``inf`` where T leaves the domain of F* (or F* overflows)."""
        T = self._check_T(T)
        if not np.all(self.divergence._in_dual_domain(T)) or not np.all(np.isfinite(T)):
            return np.inf
        with np.errstate(over="ignore"):
            value = self.divergence.dual_divergence(T, self.X)
        return value if np.isfinite(value) else np.inf

    def loss_grad(self, T) -> np.ndarray:
        r""":math:`\nabla L(T) = f^{-1}(T) - X`."""
        return self.divergence.dual_divergence_grad(self._check_T(T), self.X)

    def loss_hvp(self, T, V) -> np.ndarray:
        r""":math:`\nabla^2 L(T)[V]` (closed form for the built-in divergences, else a difference)."""
        T, V = self._check_T(T), self._check_T(V)
        out = _hessian_vector(self.divergence, T, V)
        if out is None:
            h = 1e-7 * max(1.0, np.abs(T).max()) / max(np.abs(V).max(), 1e-300)
            out = (self.loss_grad(T + h * V) - self.loss_grad(T)) / h
        return out

    # -- the contract --------------------------------------------------------------------------
    def objective(self, X) -> float:
        r""":math:`L(T) + \tfrac{\alpha}{2}\Omega^2(T)` of (17) for the candidate ``T`` (= ``X``),
        ``inf`` outside dom L; the optimal value of :func:`conditional_problem` at the same T."""
        T = self._check_T(X)
        return float(self.loss(T) + 0.5 * self.alpha * omega(T, self.n_clusters, domain=self.domain) ** 2)

    def recover_M(self, T) -> np.ndarray:
        r"""The M of (16) for T: ``omega_optimal_M(T)``, attaining :math:`\Omega^2(T)` in the domain."""
        return omega_optimal_M(self._check_T(T), self.n_clusters, domain=self.domain)

    def residuals(self, X) -> dict[str, float]:
        r"""Violations for the candidate ``T`` (= ``X``) and its recovered M (:meth:`recover_M`).

        ``domain``: the fraction of entries of T outside the domain of F* (Itakura-Saito:
        T < 0; 0 for the others); the keys of
        :func:`~cvxclust.bregman.sets.residuals_M2` (or ``residuals_M3``) for M; and ``range``:
        :math:`\|T - MM^\dagger T\|_F / \|T\|_F`, the violation of Im(T) in Im(M) of (16).
        """
        T = self._check_T(X)
        M = self.recover_M(T)
        res = (residuals_M2 if self.domain == "M2" else residuals_M3)(M, self.n_clusters)
        res["domain"] = float(np.mean(~np.broadcast_to(self.divergence._in_dual_domain(T), T.shape)))
        # least squares onto Im(M): M M^+ T
        proj = M @ np.linalg.lstsq(M, T, rcond=None)[0]
        res["range"] = float(np.linalg.norm(T - proj) / max(np.linalg.norm(T), 1e-300))
        return res

    def lower_bound(self, T) -> float:
        r"""A certified lower bound on the optimal value of (17) from any T in dom L:

        .. math::  L(T) - \langle \nabla L(T), T\rangle - \frac{\Omega_*(\nabla L(T))^2}{2\alpha}

        (Fenchel duality with :math:`h^* = \Omega_*^2/(2\alpha)`; see
        :mod:`cvxclust.bregman._conditional_gradient`). ``-inf`` outside dom L.
        """
        T = self._check_T(T)
        value = self.loss(T)
        if not np.isfinite(value):
            return -np.inf
        G = self.loss_grad(T)
        dual = omega_dual(G, self.n_clusters, domain=self.domain)
        return float(value - np.vdot(G, T) - dual**2 / (2 * self.alpha))

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        T = self.primary_variable(problem).value
        return None if T is None else self.lower_bound(np.asarray(T, dtype=float))

    def initial_point(self) -> np.ndarray | None:
        r"""Start of Algorithm 1: ``None`` (T_0 = 0) when L(0) is finite; otherwise (0 outside the
        domain of F*, as for Itakura-Saito) the one-cluster point :math:`\mathbf{1} f(\bar x)^\top`,
        :math:`\bar x` the mean data row (in dom F, so its transfer is in dom F*)."""
        if np.isfinite(self.loss(np.zeros((self.t, self.n)))):
            return None
        centre = self.divergence.transfer(self.X.mean(axis=0, keepdims=True))
        return np.repeat(centre, self.t, axis=0)

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve (see :class:`Conditional`); the result also carries ``M``, recovered from T."""
        result = super().solve(method, **options)
        result.M = self.recover_M(result.X)
        return result


@Conditional.register_solver("conditional-gradient")
def conditional_gradient_solver(relaxation: Conditional, *, tol: float = 1e-6, max_iter: int = 1000,
                                time_limit: float = np.inf, local_search: bool = True,
                                local_search_iter: int = 30, svd_solver: str = "auto", random_state=None,
                                verbose: bool = False) -> Result:
    r"""Solve (17) by Algorithm 1 with local search; see
    :func:`~cvxclust.bregman._conditional_gradient.conditional_gradient`.

    Parameters
    ----------
    tol : float, default=1e-6
        Certified relative gap at which to stop.
    max_iter, time_limit : int, float
        Limits (status ``"max_iter"`` / ``"time_limit"`` with a ConvergenceWarning).
    local_search : bool, default=True
        The factored local search after each step.
    local_search_iter : int, default=30
        L-BFGS iterations per local search.
    svd_solver, random_state
        For the linear oracle (top ``d - 1`` singular triplets of the gradient).
    verbose : bool
        Progress bar.

    Returns
    -------
    Result
        ``X`` = T, ``dual_bound`` = the certified lower bound, ``history`` per iteration.
    """
    r = relaxation
    out = conditional_gradient(
        r.loss, r.loss_grad, (r.t, r.n), r.n_clusters, r.alpha, domain=r.domain, loss_hvp=r.loss_hvp,
        T0=r.initial_point(), local_search=local_search, local_search_iter=local_search_iter, tol=tol,
        max_iter=max_iter, time_limit=time_limit, svd_solver=svd_solver, random_state=random_state,
        verbose=verbose,
    )
    return r.make_result(out.T, status=out.status, method="conditional-gradient", iterations=out.iterations,
                         time=out.time, dual_bound=out.lower_bound, history=out.history)
