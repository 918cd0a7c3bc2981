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
for (16)). :meth:`Conditional.solve` puts that M in every result as ``result.extras["M"]``,
recovered the same way for the reference and the scalable solver (the reference's own M variable
may be a different optimal M when the optimum is not unique).

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import dataclasses

import cvxpy as cp
import numpy as np
from scipy import special

from .._checks import check_choice, check_n_clusters, check_positive
from .._relaxation import Relaxation, Result
from ._conditional_gradient import ConditionalGradient, OmegaRegularized
from ._omega import omega, omega_dual, omega_optimal_M
from ._problem import conditional_problem, cvxpy_conjugate
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

__all__ = ["Conditional", "check_point", "conditional_problem", "conjugate_hessian_vector", "cvxpy_conjugate",
           "set_data"]

_DOMAINS = ("M2", "M3")


def conjugate_hessian_vector(divergence: Divergence, Z: np.ndarray, V: np.ndarray) -> np.ndarray | None:
    r"""``Hess L(Z)[V] = Hess F*(Z)[V]``, the derivative of :math:`f^{-1}` along V, in closed form
    for the built-in divergences (None for others: the callers then difference the gradient)."""
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


def set_data(relaxation, X, divergence, n_clusters, alpha, domain, W) -> None:
    """Check and set what the conditional and joint relaxations share: ``divergence``, the data
    ``X`` in its domain (a copy; ``t``, ``n``), ``n_clusters``, ``alpha`` and ``domain``."""
    relaxation.divergence = get_divergence(divergence, W=W)
    check_positive(alpha, "alpha")
    relaxation.alpha = float(alpha)
    # the variable T lives in the range of the transfer and the bound divides by alpha
    relaxation.X = relaxation.divergence.check_data(X, weight=1.0 / relaxation.alpha, transfer=True).copy()
    relaxation.t, relaxation.n = relaxation.X.shape
    relaxation.n_clusters = check_n_clusters(n_clusters, relaxation.t)
    check_choice(domain, "domain", _DOMAINS)
    relaxation.domain = domain


def check_point(A, shape: tuple[int, int], name: str) -> np.ndarray:
    """``A`` as a finite float array of ``shape``, or a ValueError naming ``name``."""
    try:
        A = np.asarray(A, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array") from None
    if A.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {A.shape}")
    if not np.all(np.isfinite(A)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return A


class Conditional(Relaxation):
    r"""The conditional relaxation (15)-(17) for an arbitrary Bregman divergence.

    .. math::

        \min_T\ D_{F^*}(T, f(X)) + \frac{\alpha}{2}\Omega^2(T)
        \;=\; \min_{M \in \mathcal{M}_2,\ T} L(T) + \frac{\alpha}{2}\mathrm{tr}(T^\top M^\dagger T)

    Methods: ``"reference"`` (cvxpy, :func:`conditional_problem`), ``"conditional-gradient"``
    (default; Algorithm 1 with local search,
    :class:`~cvxclust.bregman._conditional_gradient.ConditionalGradient`).  Every result holds T
    in ``result.X`` and the recovered M in ``result.extras["M"]``; every method reports the
    certified lower bound :meth:`lower_bound` of its T.

    Parameters
    ----------
    X : array_like of shape (t, n)
        Data, in the domain of F (nonnegative for ``"kl"``, in (0, 1) for ``"logistic"``,
        positive for ``"itakura-saito"``).  Copied.
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
        set_data(self, X, divergence, n_clusters, alpha, domain, W)

    # -- the statement ----------------------------------------------------------------------
    def problem(self) -> cp.Problem:
        return conditional_problem(self.X, self.divergence, self.n_clusters, self.alpha, domain=self.domain)

    # -- the loss and its derivatives ----------------------------------------------------------
    def _check_T(self, T, name: str = "T") -> np.ndarray:
        return check_point(T, (self.t, self.n), name)

    def loss(self, T) -> float:
        r"""L(T) = D_{F*}(T, f(X)); ``inf`` where T leaves the domain of F* (or F* overflows)."""
        return self._loss(self._check_T(T))

    def loss_grad(self, T) -> np.ndarray:
        r""":math:`\nabla L(T) = f^{-1}(T) - X`, for T in the domain of F*."""
        return self._loss_grad(self.divergence.check_dual_domain(self._check_T(T), "T"))

    def loss_hvp(self, T, V) -> np.ndarray:
        r""":math:`\nabla^2 L(T)[V]` (closed form for the built-in divergences, else a difference),
        for T in the domain of F*."""
        T = self.divergence.check_dual_domain(self._check_T(T), "T")
        return self._loss_hvp(T, self._check_T(V, "V"))

    # unchecked, for the solver's inner loops (which may probe points outside dom L)
    def _loss(self, T: np.ndarray) -> float:
        if not np.all(np.isfinite(T)) or not np.all(self.divergence.in_dual_domain(T)):
            return np.inf
        with np.errstate(over="ignore"):
            value = self.divergence.dual_divergence(T, self.X)
        return value if np.isfinite(value) else np.inf

    def _loss_grad(self, T: np.ndarray) -> np.ndarray:
        return self.divergence.dual_divergence_grad(T, self.X)

    def _loss_hvp(self, T: np.ndarray, V: np.ndarray) -> np.ndarray:
        out = conjugate_hessian_vector(self.divergence, T, V)
        if out is None:
            h = 1e-7 * max(1.0, np.abs(T).max()) / max(np.abs(V).max(), 1e-300)
            out = (self._loss_grad(T + h * V) - self._loss_grad(T)) / h
        return out

    def omega_problem(self) -> OmegaRegularized:
        r"""(17) as the problem of the conditional-gradient solver: :math:`L(T) +
        \tfrac{\alpha}{2}\Omega^2(T)` from :meth:`initial_point`."""
        return OmegaRegularized(self._loss, self._loss_grad, (self.t, self.n), self.n_clusters, self.alpha,
                                domain=self.domain, loss_hvp=self._loss_hvp, start=self.initial_point())

    # -- the contract --------------------------------------------------------------------------
    def objective(self, X) -> float:
        r""":math:`L(T) + \tfrac{\alpha}{2}\Omega^2(T)` of (17) for the candidate ``T`` (= ``X``),
        ``inf`` outside dom L; the optimal value of :func:`conditional_problem` at the same T."""
        T = self._check_T(X, "X")
        return float(self._loss(T) + 0.5 * self.alpha * omega(T, self.n_clusters, domain=self.domain) ** 2)

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
        T = self._check_T(X, "X")
        M = self.recover_M(T)
        res = (residuals_M2 if self.domain == "M2" else residuals_M3)(M, self.n_clusters)
        res["domain"] = float(np.mean(~np.broadcast_to(self.divergence.in_dual_domain(T), T.shape)))
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
        value = self._loss(T)
        if not np.isfinite(value):
            return -np.inf
        G = self._loss_grad(T)
        dual = omega_dual(G, self.n_clusters, domain=self.domain)
        return float(value - np.vdot(G, T) - dual**2 / (2 * self.alpha))

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        T = self.primary_variable(problem).value
        return None if T is None else self.lower_bound(np.asarray(T, dtype=float))

    def initial_point(self) -> np.ndarray | None:
        r"""Start of Algorithm 1: ``None`` (T_0 = 0) when L(0) is finite; otherwise (0 outside the
        domain of F*, as for Itakura-Saito) the one-cluster point :math:`\mathbf{1} f(\bar x)^\top`,
        :math:`\bar x` the mean data row (in dom F, so its transfer is in dom F*)."""
        if np.isfinite(self._loss(np.zeros((self.t, self.n)))):
            return None
        centre = self.divergence.transfer(self.X.mean(axis=0, keepdims=True))
        return np.repeat(centre, self.t, axis=0)

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve (see :class:`Conditional`); ``extras["M"]`` of the result is the M recovered from
        T (:meth:`recover_M`)."""
        result = super().solve(method, **options)
        return dataclasses.replace(result, extras={**result.extras, "M": self.recover_M(result.X)})


Conditional.register_solver("conditional-gradient", ConditionalGradient)

