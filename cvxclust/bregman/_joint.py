r"""``Joint``: the joint generative relaxation (30)-(33) with a learned cluster prior.

The model (Section 5)
---------------------
With a multinomial cluster prior :math:`p(y = j) = \exp(w_j - g(\mathbf{w}))`,
:math:`g = \log\sum\exp`, the regularised negative log joint likelihood (30) is relaxed, treating
the prior as a discriminative model from a constant input (Section 4, offsets ignored) and the
likelihood as in the conditional model (14)-(15), into

.. math::

    \min_{A, M, \mathbf{s}}\ \frac{\beta}{2}\mathbf{s}^\top M\mathbf{s} - \frac1t\mathbf{1}^\top M\mathbf{s}
        + g\big(\tfrac1t M\mathbf{s}\big) + \frac1t L(MA) + \frac{\alpha}{2}\mathrm{tr}(A^\top MA)   \qquad (32)

with :math:`L(T) = D_{F^*}(T, f(X))` (:meth:`~cvxclust.bregman.divergences.Divergence.dual_divergence`).
The change of variables :math:`\mathbf{u} = M\mathbf{s}`, :math:`T = MA` (Proposition 2 applied to the
stacked :math:`[\mathbf{u}, T] = M[\mathbf{s}, A]`) gives, for M in :math:`\mathcal{M}_3`,

.. math::

    \min_{\mathbf{u}, T}\ g\big(\tfrac{\mathbf{u}}{t}\big) - \frac1t\mathbf{1}^\top\mathbf{u} + \frac1t L(T)
        + \min_{M}\ \tfrac12\mathrm{tr}\big([\sqrt\beta\mathbf{u}, \sqrt\alpha T]^\top M^\dagger
          [\sqrt\beta\mathbf{u}, \sqrt\alpha T]\big)
    = \min_{\mathbf{u}, T}\ \ldots + \frac12\Omega^2\big([\sqrt\beta\,\mathbf{u}, \sqrt\alpha\,T]\big)   \qquad (33)

(:math:`\frac{\beta}{2}\mathbf{u}^\top M^\dagger\mathbf{u} + \frac{\alpha}{2}\mathrm{tr}(T^\top M^\dagger T)`
is :math:`\frac12\mathrm{tr}(W^\top M^\dagger W)` for the stacked :math:`W`; the range condition
:math:`\mathrm{Im}(W) \subseteq \mathrm{Im}(M)` is that of both blocks). The paper's Section 6.4
uses :math:`\mathcal{M}_2`; ``domain="M3"`` is the statement above.

The solver: a change of variables
---------------------------------
In the scaled variable :math:`W = [\mathbf{w}_0, W_1] = [\sqrt\beta\,\mathbf{u}, \sqrt\alpha\,T]`
(t x (1 + n)), (33) is :math:`\min_W \Lambda(W) + \frac12\Omega^2(W)` with

.. math::

    \Lambda(W) = g\Big(\frac{\mathbf{w}_0}{\sqrt\beta\,t}\Big) - \frac{\mathbf{1}^\top\mathbf{w}_0}{\sqrt\beta\,t}
        + \frac1t L\Big(\frac{W_1}{\sqrt\alpha}\Big),

convex and smooth on its domain, which is exactly the shape
:class:`~cvxclust.bregman._conditional_gradient.ConditionalGradient` solves (weight 1). Its
derivatives, with :math:`\mathbf{p} = \mathrm{softmax}(\mathbf{u}/t)`:

.. math::

    \nabla_{\mathbf{w}_0}\Lambda = \frac{\mathbf{p} - \mathbf{1}}{\sqrt\beta\,t},\qquad
    \nabla_{W_1}\Lambda = \frac{f^{-1}(T) - X}{\sqrt\alpha\,t},

    \nabla^2_{\mathbf{w}_0}\Lambda\,[\mathbf{v}]
    = \frac{\mathrm{Diag}(\mathbf{p})\mathbf{v} - \mathbf{p}\,(\mathbf{p}^\top\mathbf{v})}{\beta t^2},\qquad
    \nabla^2_{W_1}\Lambda\,[V] = \frac{\nabla^2F^*(T)[V]}{\alpha t}.

The certified bound of the solver (Fenchel duality with :math:`h = \frac12\Omega^2`) is a bound on
(33) itself, the change of variables being a bijection. The prior part is bounded below:
:math:`g(\mathbf{u}/t) \ge \max_i u_i/t`, so :math:`g - \mathbf{1}^\top\mathbf{u}/t \ge -\|\mathbf{u}\|_1/t`,
dominated by :math:`\frac{\beta}{2}\Omega^2 \ge \frac{\beta}{2}\|\mathbf{u}\|^2` (Omega dominates the
Frobenius norm), so the optimum is attained.

Primary variable and recovery
-----------------------------
The primary variable is the unscaled stacked matrix :math:`[\mathbf{u}, T]` (t x (1 + n)): column 0
is u, the others T. M is recovered as ``omega_optimal_M(W*)`` (footnote 2). The paper gives no
recipe for the prior w from a relaxed solution; its relaxed prior term
:math:`g(\mathbf{u}/t)` is the log-partition of a distribution over the examples,
:math:`\mathrm{softmax}(\mathbf{u}/t)`, so given a partition (after rounding) the relaxation reports the mass it
puts on each cluster, :math:`q_j = \sum_{i \in C_j}\mathrm{softmax}(\mathbf{u}/t)_i`
(:meth:`Joint.cluster_prior`). This reading is not the paper's; for an exact M and
:math:`\mathbf{u} = Y\mathbf{w}` it is :math:`q_j \propto n_j e^{w_j/t}`.

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import dataclasses

import cvxpy as cp
import numpy as np
from scipy import special

from .._checks import check_labels, check_positive
from .._relaxation import Relaxation, Result
from ._conditional import check_point, conjugate_hessian_vector, set_data
from ._conditional_gradient import ConditionalGradient, OmegaRegularized
from ._omega import omega, omega_dual, omega_optimal_M
from ._problem import joint_problem
from .sets import residuals_M2, residuals_M3

__all__ = ["Joint", "joint_problem"]


class Joint(Relaxation):
    r"""The joint generative relaxation (32)/(33) for any Bregman divergence, with a cluster prior.

    .. math::

        \min_{\mathbf{u}, T}\ g\big(\tfrac{\mathbf{u}}{t}\big) - \frac1t\mathbf{1}^\top\mathbf{u}
            + \frac1t D_{F^*}(T, f(X)) + \frac12\Omega^2\big([\sqrt\beta\,\mathbf{u}, \sqrt\alpha\,T]\big)

    Methods: ``"reference"`` (cvxpy, :func:`joint_problem`) and ``"conditional-gradient"``
    (default; Algorithm 1 with local search on the scaled variable, see the module notes). Every
    result holds ``[u, T]`` in ``result.X``, and in ``result.extras``: ``u``, ``T``, the
    recovered ``M`` and the example prior ``example_prior`` = softmax(u / t).

    Parameters
    ----------
    X : array_like of shape (t, n)
        Data in the domain of F.  Copied.
    divergence : str or Divergence
        Any divergence of :func:`~cvxclust.bregman.divergences.get_divergence`.
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha : float, default=1e-2
        Weight of the regulariser of T (as in (14)), > 0.
    beta : float, default=1e-2
        Weight of the regulariser of the prior parameters u, > 0.
    domain : {"M2", "M3"}, default="M2"
    W : array_like, optional
        The weight matrix of the ``"mahalanobis"`` divergence.
    """

    name = "Joint"
    primary_name = "Z"
    default_method = "conditional-gradient"

    def __init__(self, X, divergence, n_clusters: int, *, alpha: float = 1e-2, beta: float = 1e-2,
                 domain: str = "M2", W=None):
        set_data(self, X, divergence, n_clusters, alpha, domain, W)
        check_positive(beta, "beta")
        self.beta = float(beta)
        # W = Z * scale (columnwise): [sqrt(beta) u, sqrt(alpha) T]
        self._scale = np.r_[np.sqrt(self.beta), np.full(self.n, np.sqrt(self.alpha))]

    # -- the statement ----------------------------------------------------------------------
    def problem(self) -> cp.Problem:
        return joint_problem(self.X, self.divergence, self.n_clusters, self.alpha, self.beta,
                             domain=self.domain, W=getattr(self.divergence, "W", None))

    # -- the loss in the unscaled variable Z = [u, T] ----------------------------------------
    def _check_Z(self, Z, name: str = "Z") -> np.ndarray:
        try:
            return check_point(Z, (self.t, self.n + 1), name)
        except ValueError as error:
            raise ValueError(f"{error} ({name} is the stacked [u, T])") from None

    def loss(self, Z) -> float:
        r""":math:`g(\mathbf{u}/t) - \mathbf{1}^\top\mathbf{u}/t + L(T)/t`; ``inf`` outside dom L."""
        return self._loss(self._check_Z(Z))

    def loss_grad(self, Z) -> np.ndarray:
        r"""Gradient in :math:`[\mathbf{u}, T]`:
        :math:`[(\mathrm{softmax}(\mathbf{u}/t) - \mathbf{1})/t,\ (f^{-1}(T) - X)/t]`, for T in the domain of F*."""
        Z = self._check_Z(Z)
        self.divergence.check_dual_domain(Z[:, 1:], "T")
        return self._loss_grad(Z)

    def loss_hvp(self, Z, V) -> np.ndarray:
        r"""Hessian-vector product in :math:`[\mathbf{u}, T]` (block diagonal, see the module notes),
        for T in the domain of F*."""
        Z = self._check_Z(Z)
        self.divergence.check_dual_domain(Z[:, 1:], "T")
        return self._loss_hvp(Z, self._check_Z(V, "V"))

    # unchecked, for the solver's inner loops (which may probe points outside dom L)
    def _loss(self, Z: np.ndarray) -> float:
        u, T = Z[:, 0], Z[:, 1:]
        if not np.all(np.isfinite(Z)) or not np.all(self.divergence.in_dual_domain(T)):
            return np.inf
        with np.errstate(over="ignore"):
            L = self.divergence.dual_divergence(T, self.X)
        if not np.isfinite(L):
            return np.inf
        return float(special.logsumexp(u / self.t) - u.sum() / self.t + L / self.t)

    def _loss_grad(self, Z: np.ndarray) -> np.ndarray:
        u, T = Z[:, 0], Z[:, 1:]
        out = np.empty_like(Z)
        out[:, 0] = (special.softmax(u / self.t) - 1.0) / self.t
        out[:, 1:] = self.divergence.dual_divergence_grad(T, self.X) / self.t
        return out

    def _loss_hvp(self, Z: np.ndarray, V: np.ndarray) -> np.ndarray:
        p = special.softmax(Z[:, 0] / self.t)
        out = np.empty_like(Z)
        out[:, 0] = (p * V[:, 0] - p * (p @ V[:, 0])) / self.t**2
        HT = conjugate_hessian_vector(self.divergence, Z[:, 1:], V[:, 1:])
        if HT is None:
            h = 1e-7 * max(1.0, np.abs(Z[:, 1:]).max()) / max(np.abs(V[:, 1:]).max(), 1e-300)
            Th = Z[:, 1:] + h * V[:, 1:]
            HT = (self.divergence.dual_divergence_grad(Th, self.X)
                  - self.divergence.dual_divergence_grad(Z[:, 1:], self.X)) / h
        out[:, 1:] = HT / self.t
        return out

    def omega_problem(self) -> OmegaRegularized:
        r"""(33) as the problem of the conditional-gradient solver, in the scaled variable
        :math:`W = [\sqrt\beta\,\mathbf{u}, \sqrt\alpha\,T]` (weight 1; ``scale`` maps it to
        ``[u, T]``), from :meth:`initial_point`."""
        scale = self._scale

        def loss(Wm):
            return self._loss(Wm / scale)

        def grad(Wm):
            return self._loss_grad(Wm / scale) / scale

        def hvp(Wm, V):
            return self._loss_hvp(Wm / scale, V / scale) / scale

        Z0 = self.initial_point()
        return OmegaRegularized(loss, grad, (self.t, self.n + 1), self.n_clusters, 1.0, domain=self.domain,
                                loss_hvp=hvp, start=None if Z0 is None else Z0 * scale, scale=scale)

    def scaled(self, Z) -> np.ndarray:
        r"""The variable of Omega: :math:`[\sqrt\beta\,\mathbf{u}, \sqrt\alpha\,T]`."""
        return self._check_Z(Z) * self._scale

    # -- the contract --------------------------------------------------------------------------
    def objective(self, X) -> float:
        r"""The objective of (33) at the candidate ``[u, T]`` (= ``X``); ``inf`` outside dom L."""
        Z = self._check_Z(X, "X")
        return float(self._loss(Z) + 0.5 * omega(Z * self._scale, self.n_clusters, domain=self.domain) ** 2)

    def recover_M(self, Z) -> np.ndarray:
        r"""The M of (32): ``omega_optimal_M([sqrt(beta) u, sqrt(alpha) T])``."""
        return omega_optimal_M(self.scaled(Z), self.n_clusters, domain=self.domain)

    def residuals(self, X) -> dict[str, float]:
        r"""Violations for the candidate ``[u, T]`` (= ``X``) and its recovered M: the keys of
        :func:`~cvxclust.bregman.sets.residuals_M2` (or ``residuals_M3``), ``domain`` (fraction of
        entries of T outside dom F*) and ``range`` (:math:`\|W - MM^\dagger W\|_F/\|W\|_F` for the
        scaled W, the condition Im(W) in Im(M) of (32))."""
        Z = self._check_Z(X, "X")
        Wm = self.scaled(Z)
        M = self.recover_M(Z)
        res = (residuals_M2 if self.domain == "M2" else residuals_M3)(M, self.n_clusters)
        T = Z[:, 1:]
        res["domain"] = float(np.mean(~np.broadcast_to(self.divergence.in_dual_domain(T), T.shape)))
        proj = M @ np.linalg.lstsq(M, Wm, rcond=None)[0]
        res["range"] = float(np.linalg.norm(Wm - proj) / max(np.linalg.norm(Wm), 1e-300))
        return res

    def lower_bound(self, Z) -> float:
        r"""A certified lower bound on the optimal value of (33) from any ``[u, T]`` in dom L:
        :math:`\Lambda(W) - \langle\nabla\Lambda(W), W\rangle - \Omega_*(\nabla\Lambda(W))^2/2` in the
        scaled variable (module notes); ``-inf`` outside dom L."""
        Z = self._check_Z(Z)
        value = self._loss(Z)
        if not np.isfinite(value):
            return -np.inf
        G = self._loss_grad(Z) / self._scale  # gradient in W
        dual = omega_dual(G, self.n_clusters, domain=self.domain)
        return float(value - np.vdot(G, self.scaled(Z)) - 0.5 * dual**2)

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        Z = self.primary_variable(problem).value
        return None if Z is None else self.lower_bound(np.asarray(Z, dtype=float))

    def initial_point(self) -> np.ndarray | None:
        r"""``None`` (start at 0) when L(0) is finite; otherwise (Itakura-Saito) u = 0 and the
        one-cluster :math:`T = \mathbf{1}f(\bar x)^\top`, :math:`\bar x` the mean data row."""
        if np.isfinite(self._loss(np.zeros((self.t, self.n + 1)))):
            return None
        Z = np.zeros((self.t, self.n + 1))
        Z[:, 1:] = self.divergence.transfer(self.X.mean(axis=0, keepdims=True))
        return Z

    def cluster_prior(self, labels, u) -> np.ndarray:
        r"""The cluster prior :math:`q_j = \sum_{i: y_i = j}\mathrm{softmax}(\mathbf{u}/t)_i` of a
        partition (a reading of the relaxed prior, see the module notes).

        Parameters
        ----------
        labels : array_like of shape (t,)
            Cluster labels in ``0 .. n_clusters - 1`` (e.g. from rounding ``result.extras["M"]``).
        u : Result or array_like of shape (t,)
            The prior parameters: a result of :meth:`solve` (its ``extras["u"]``) or the vector.

        Returns
        -------
        ndarray of shape (n_clusters,)
            Nonnegative, summing to one.
        """
        labels = check_labels(labels, self.t, self.n_clusters)
        if isinstance(u, Result):
            if "u" not in u.extras:
                raise ValueError("u must be a result of Joint.solve (with extras['u']) or a vector")
            u = u.extras["u"]
        try:
            u = np.asarray(u, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"u must be a finite vector of length {self.t}") from None
        if u.shape != (self.t,) or not np.all(np.isfinite(u)):
            raise ValueError(f"u must be a finite vector of length {self.t}")
        return np.bincount(labels, weights=special.softmax(u / self.t), minlength=self.n_clusters)

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve (see :class:`Joint`); ``extras`` of the result: ``u`` and ``T`` (the columns of
        ``X``), ``M`` (recovered, :meth:`recover_M`) and ``example_prior`` (softmax(u / t))."""
        result = super().solve(method, **options)
        u, T = result.X[:, 0].copy(), result.X[:, 1:].copy()
        extras = {**result.extras, "u": u, "T": T, "M": self.recover_M(result.X),
                  "example_prior": special.softmax(u / self.t)}
        return dataclasses.replace(result, extras=extras)


Joint.register_solver("conditional-gradient", ConditionalGradient)
