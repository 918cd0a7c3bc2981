r"""``Discriminative``: the discriminative relaxation (25)/(28)/(29) with the softmax transfer.

The model (Section 4)
---------------------
For :math:`F(x) = g(x) = \log\sum_j e^{x_j}` (transfer f = softmax, :math:`F^*` = negative
entropy on the simplex) the paper relaxes value-regularised multinomial-logistic clustering to

.. math::

    \min_{M}\ \max_{\Omega:\ \Omega_{i:} \in \Delta,\ \Omega^\top\mathbf{1} = \mathbf{1}}
        -\frac{1}{t}F^*(\Omega) - \frac{1}{2\gamma' t^2}\|X^\top(I - \Omega)M\|^2   \qquad (25)

and dualises the inner maximum back (Lemma 4) into the unconstrained primal

.. math::

    \min_{M, \tau, \Upsilon}\ \frac{1}{t}\sum_i \Big[F\big(\tfrac{1}{t}X_{i:}\Upsilon^\top M + \tau^\top\big)
        - \big(\tfrac{1}{t}X_{i:}\Upsilon^\top M_{:i} + \tau_i\big)\Big]
        + \frac{\gamma}{2}\mathrm{tr}(\Upsilon^\top M\Upsilon)                      \qquad (28)

then, with :math:`V = M\Upsilon` and M in :math:`\mathcal{M}_3` (or :math:`\mathcal{M}_2`),

.. math::

    \min_{V, \tau}\ \frac{\gamma}{2}\Omega^2(V) + \ell(V, \tau),\qquad
    \ell(V, \tau) = \frac{1}{t}\sum_i \big[g(Z_{i:}) - Z_{ii}\big],\quad
    Z = \tfrac{1}{t}XV^\top + \mathbf{1}\tau^\top.                                   \qquad (29)

Row i of Z, :math:`Z_{ij} = X_{i:}V_{j:}^\top/t + \tau_j`, scores example i against example j:
the loss of example i is the soft max of its row minus its own (diagonal) entry, a max-margin
style loss in which each example is its own "class" and M ties examples into clusters.

Derivation of (28) from (25) (the paper's Lemma 4 step, written out)
--------------------------------------------------------------------
Fix M in :math:`\mathcal{M}` (so :math:`M^2 = M = MM^\dagger M`) and write :math:`\Psi = I - \Omega`,
:math:`B = X^\top\Psi M/t`. Because :math:`\mathrm{Im}(B^\top) \subseteq \mathrm{Im}(M)`,

.. math::

    \frac{1}{2\gamma'}\mathrm{tr}(BM^\dagger B^\top) = \sup_{\Upsilon \in \mathbb{R}^{t\times n}}
        \mathrm{tr}(B\Upsilon) - \frac{\gamma'}{2}\mathrm{tr}(\Upsilon^\top M\Upsilon)

(maximiser :math:`\Upsilon = M^\dagger B^\top/\gamma'`), and :math:`\mathrm{tr}(BM^\dagger B^\top) =
\|X^\top\Psi M\|^2/t^2` because :math:`M^2 = M` (footnote 3: putting :math:`M^\dagger` here is
what makes the change of variable V = M Upsilon possible). The inner problem of (25) is concave
in :math:`\Omega` over a compact convex set and the bracket is convex in :math:`\Upsilon`, so the
max and the inf swap (Sion). For fixed :math:`\Upsilon` the :math:`\Omega` part is
:math:`\frac1t\big[-F^*(\Omega) + \langle\Omega, X\Upsilon^\top M\rangle\big] - \frac1t\mathrm{tr}(X\Upsilon^\top M)`;
the coupling constraint :math:`\Omega^\top\mathbf{1} = \mathbf{1}` gets the multiplier
:math:`\tau/t` (this is the offset :math:`\tau` of (26): one per example, because the constraint
is one per column of :math:`\Omega`), after which the rows separate and Fenchel's identity
:math:`\max_{\omega\in\Delta}\ \omega^\top z - F^*(\omega) = g(z)` gives

.. math::

    (25)_{\text{inner}} = \min_{\Upsilon,\tau}\ \frac1t\sum_i\Big[g\big(X_{i:}\Upsilon^\top M + \tau^\top\big)
        - \big(X_{i:}\Upsilon^\top M_{:i} + \tau_i\big)\Big] + \frac{\gamma'}{2}\mathrm{tr}(\Upsilon^\top M\Upsilon).

Substituting :math:`\Upsilon \to \Upsilon/t` gives exactly (28) with :math:`\gamma = \gamma'/t^2`:
the paper's (25) and (28) are the same relaxation up to this rescaling of the weight (the
parameter ``alpha`` of :class:`Discriminative` is the :math:`\gamma` of (28)/(29)). Without the
offsets :math:`\tau` the dual would drop the constraint :math:`\Omega^\top\mathbf{1} = \mathbf{1}`
(the balancing that rules out the trivial one-cluster solution), so it is :math:`\tau` that makes
(28) the relaxation of (25).
Finally :math:`\mathrm{tr}(\Upsilon^\top M\Upsilon) = \mathrm{tr}(V^\top M^\dagger V)` with
:math:`\mathrm{Im}(V) \subseteq \mathrm{Im}(M)`, and minimising over M gives :math:`\Omega^2(V)` (17).

Minimising :math:`\tau` out (the solver)
----------------------------------------
:math:`\ell` is jointly convex in :math:`(V, \tau)` (log-sum-exp of an affine map minus a linear
term), so :math:`L(V) = \min_\tau \ell(V, \tau)` is convex in V (partial minimisation), and (29)
is :math:`\min_V L(V) + \frac{\gamma}{2}\Omega^2(V)`: the shape the conditional-gradient solver
(:class:`~cvxclust.bregman._conditional_gradient.ConditionalGradient`) solves. With
:math:`A = XV^\top/t` and :math:`P_{i:} = \mathrm{softmax}(A_{i:} + \tau^\top)`,

.. math::

    \nabla_\tau\,\ell = \frac1t\big(P^\top\mathbf{1} - \mathbf{1}\big),

so the optimal :math:`\tau` makes P doubly stochastic: :math:`P = D_1 e^{A} D_2` is the Sinkhorn
scaling of the positive matrix :math:`e^{A}`, which exists and is unique (Sinkhorn 1964; :math:`\tau`
is unique up to a constant, to which :math:`\ell` is invariant). It is computed by log-domain
Sinkhorn steps :math:`\tau \leftarrow \tau - \log(P^\top\mathbf{1})` followed by Newton steps
(damped while the error exceeds 1e-6) on :math:`\tau \mapsto \sum_i g(A_{i:} + \tau^\top) - \mathbf{1}^\top\tau`
(Hessian :math:`\mathrm{Diag}(P^\top\mathbf{1}) - P^\top P`, singular only along :math:`\mathbf{1}`), warm
started, until :math:`\|P^\top\mathbf{1} - \mathbf{1}\|_\infty \le 10^{-12}`.  Where the scores
are so large that the softmax rows saturate (one entry 1, the others 0 to the precision of a
double), the Hessian becomes singular in floating point: Newton then takes the least-squares
step, and the offsets may stop short of the tolerance (the achieved value is reported).

By the envelope theorem (Danskin; the minimiser is unique up to the invariant shift),

.. math::

    \nabla L(V) = \nabla_V\,\ell(V, \tau^\star) = \frac{1}{t^2}(P - I)^\top X.

The Hessian-vector product of the reduced function along W accounts for the motion of
:math:`\tau^\star` (implicit function theorem): with :math:`dA = XW^\top/t`,
:math:`h_i = \mathrm{Diag}(p_i) - p_ip_i^\top` (:math:`p_i = P_{i:}^\top`),

.. math::

    \Big(\sum_i h_i\Big)\,d\tau = -\sum_i h_i\,dA_{i:}^\top,\qquad
    dP_{i:} = \big(h_i(dA_{i:}^\top + d\tau)\big)^\top,\qquad
    \nabla^2 L(V)[W] = \frac{1}{t^2}\,dP^\top X,

solved with :math:`\sum_i h_i + \mathbf{1}\mathbf{1}^\top/t` (the right-hand side is orthogonal to
:math:`\mathbf{1}`, the kernel of :math:`\sum_i h_i = \mathrm{Diag}(P^\top\mathbf{1}) - P^\top P`,
which is simple because :math:`P^\top P` is a positive doubly stochastic matrix).

The engine's certified bound :math:`L(V) - \langle\nabla L(V), V\rangle - \Omega_*(\nabla L(V))^2/(2\gamma)`
needs the exact gradient of L; it holds to the accuracy of the :math:`\tau` solve (column sums
of P within 1e-12 of one; the report ``residuals()["offsets"]`` gives the achieved value).

The optimal M is ``omega_optimal_M(V*)`` (footnote 2: M is minimised jointly with V, so the M
attaining :math:`\Omega^2(V^\star)` is optimal for (28)).

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import dataclasses

import cvxpy as cp
import numpy as np
from scipy import special

from .._checks import (
    check_choice,
    check_data_matrix,
    check_int_range,
    check_n_clusters,
    check_positive,
    check_square_matrix,
)
from .._relaxation import Relaxation, Result
from ._conditional import check_point
from ._divergence import check_magnitude
from ._conditional_gradient import ConditionalGradient, OmegaRegularized
from ._omega import omega, omega_dual, omega_optimal_M
from ._problem import discriminative_problem
from .sets import residuals_M2, residuals_M3

__all__ = ["Discriminative", "discriminative_problem", "optimal_offsets"]

_DOMAINS = ("M2", "M3")
_OFFSET_TOL = 1e-12


def optimal_offsets(A, tau0=None, *, tol: float = _OFFSET_TOL, max_iter: int = 200):
    r"""The offsets :math:`\tau^\star = \arg\min_\tau \sum_i g(A_{i:} + \tau^\top) - \mathbf{1}^\top\tau`.

    Equivalently the Sinkhorn scaling of :math:`e^{A}`: :math:`P_{i:} = \mathrm{softmax}(A_{i:} + \tau^\top)`
    is doubly stochastic at the optimum (see the module notes). Log-domain Sinkhorn steps while
    far, then Newton steps with backtracking; :math:`\tau` is normalised to mean zero.

    Parameters
    ----------
    A : array_like of shape (t, t)
        Finite scores.
    tau0 : array_like of shape (t,), optional
        Warm start (finite).
    tol : float
        Stop when :math:`\|P^\top\mathbf{1} - \mathbf{1}\|_\infty \le` ``tol``.
    max_iter : int
        Newton iterations.

    Returns
    -------
    tau : ndarray of shape (t,)
    P : ndarray of shape (t, t)
        The row-softmax of :math:`A + \mathbf{1}\tau^\top`.
    error : float
        :math:`\|P^\top\mathbf{1} - \mathbf{1}\|_\infty` achieved.
    """
    A = check_square_matrix(A, "A", symmetric=False)
    t = A.shape[0]
    tau = np.zeros(t) if tau0 is None else check_point(tau0, (t,), "tau0").copy()
    check_positive(tol, "tol")
    check_int_range(max_iter, "max_iter", 1)
    return _optimal_offsets(A, tau, tol, max_iter)


def _optimal_offsets(A, tau, tol, max_iter):
    t = A.shape[0]

    def state(tau):
        Z = A + tau[None, :]
        lse = special.logsumexp(Z, axis=1)
        P = np.exp(Z - lse[:, None])
        return P, float(lse.sum() - tau.sum())

    P, value = state(tau)
    col = P.sum(axis=0)
    # Sinkhorn (the exact column normalisation; rows are normalised by the softmax)
    for _ in range(50):
        if np.abs(col - 1.0).max() <= 1e-3:
            break
        tau = tau - np.log(np.maximum(col, np.finfo(float).tiny))  # a column may underflow to 0
        tau -= tau.mean()
        P, value = state(tau)
        col = P.sum(axis=0)
    ones = np.full((t, t), 1.0 / t)
    for _ in range(max_iter):
        grad = col - 1.0
        if np.abs(grad).max() <= tol:
            break
        H = np.diag(col) - P.T @ P + ones
        step = -_solve_semidefinite(H, grad)
        step -= step.mean()
        if np.abs(grad).max() <= 1e-6:
            # quadratic convergence region: the value is flat to round-off, so judge the full
            # Newton step by the column-sum error and stop when it no longer decreases
            P_new, value_new = state(tau + step)
            col_new = P_new.sum(axis=0)
            if np.abs(col_new - 1.0).max() >= np.abs(grad).max():
                break
            tau, P, value, col = tau + step, P_new, value_new, col_new
            continue
        slope = float(grad @ step)
        s = 1.0
        for _ in range(40):
            P_new, value_new = state(tau + s * step)
            if value_new <= value + 1e-4 * s * slope:
                break
            s *= 0.5
        else:
            break  # no representable decrease: at the optimum to round-off
        tau, P, value = tau + s * step, P_new, value_new
        col = P.sum(axis=0)
    return tau, P, float(np.abs(col - 1.0).max())


def _solve_semidefinite(H: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``H^{-1} b`` for the positive semidefinite Hessians of the offsets; the least-squares
    solution where H is singular in floating point (saturated softmax rows)."""
    try:
        x = np.linalg.solve(H, b)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, b, rcond=None)[0]
    return x if np.all(np.isfinite(x)) else np.linalg.lstsq(H, b, rcond=None)[0]


class Discriminative(Relaxation):
    r"""The discriminative relaxation (28)/(29) with the softmax transfer :math:`F = g = \log\sum\exp`.

    .. math::

        \min_{V, \tau}\ \frac{\alpha}{2}\Omega^2(V) + \frac{1}{t}\sum_i
            \Big[g\big(\tfrac1t X_{i:}V^\top + \tau^\top\big) - \big(\tfrac1t X_{i:}V_{i:}^\top + \tau_i\big)\Big]
        \;=\; \min_V\ L(V) + \frac{\alpha}{2}\Omega^2(V),\quad L(V) = \min_\tau \ell(V,\tau)

    (module notes: the derivation from (25), the offsets minimised out exactly by Sinkhorn/Newton,
    the envelope-theorem gradient). Methods: ``"reference"`` (cvxpy,
    :func:`discriminative_problem`) and ``"conditional-gradient"`` (default; Algorithm 1 with
    local search on L). Every result holds V in ``result.X``, the optimal offsets in
    ``result.extras["tau"]`` and the recovered M in ``result.extras["M"]``.

    Parameters
    ----------
    X : array_like of shape (t, n)
        Features (the paper shifts them nonnegative and scales them to unit variance).  Copied.
    n_clusters : int
        d, ``2 <= d <= t``.
    alpha : float, default=1e-3
        Weight of :math:`\tfrac{\alpha}{2}\Omega^2(V)` (the paper's :math:`\gamma`), > 0, as the
        ``alpha`` of :class:`~cvxclust.bregman.Conditional`. The scores :math:`XV^\top/t` are of
        order :math:`\|X\|^2/(\alpha t^3)`, so meaningful values shrink like :math:`1/t^2` and
        with the square of the scale of X; smaller values make the problem worse conditioned.
    domain : {"M2", "M3"}, default="M2"
        The relaxation of M (Section 6.3 uses M2).
    """

    name = "Discriminative"
    primary_name = "V"
    default_method = "conditional-gradient"

    def __init__(self, X, n_clusters: int, *, alpha: float = 1e-3, domain: str = "M2"):
        self.X = check_data_matrix(X, "X").copy()
        self.t, self.n = self.X.shape
        self.n_clusters = check_n_clusters(n_clusters, self.t)
        check_positive(alpha, "alpha")
        self.alpha = float(alpha)
        check_magnitude(self.X, "X", weight=1.0 / self.alpha,
                        computations="the computations of the discriminative relaxation")
        check_choice(domain, "domain", _DOMAINS)
        self.domain = domain
        self._cache: tuple | None = None  # (V, tau, P, error) of the last offset solve

    # -- the statement ----------------------------------------------------------------------
    def problem(self) -> cp.Problem:
        return discriminative_problem(self.X, self.n_clusters, self.alpha, domain=self.domain)

    # -- the reduced loss L(V) = min_tau l(V, tau) and its derivatives --------------------------
    def _check_V(self, V, name: str = "V") -> np.ndarray:
        return check_point(V, (self.t, self.n), name)

    def _offsets(self, V: np.ndarray):
        """(tau*, P, error) at V, reusing the last solve for the same V and warm starting (the
        warm start changes tau* only within the tolerance of the solve)."""
        if self._cache is not None and np.array_equal(self._cache[0], V):
            return self._cache[1:]
        A = self.X @ V.T / self.t
        tau0 = np.zeros(self.t) if self._cache is None else self._cache[1].copy()
        tau, P, error = _optimal_offsets(A, tau0, _OFFSET_TOL, 200)
        self._cache = (V.copy(), tau, P, error)
        return tau, P, error

    def offsets(self, V) -> np.ndarray:
        r"""The optimal offsets :math:`\tau^\star(V)` (mean zero; :math:`\ell` is shift invariant)."""
        return self._offsets(self._check_V(V))[0].copy()

    def loss(self, V) -> float:
        r""":math:`L(V) = \min_\tau \frac1t\sum_i [g(Z_{i:}) - Z_{ii}]`, :math:`Z = XV^\top/t + \mathbf{1}\tau^\top`."""
        return self._loss(self._check_V(V))

    def loss_grad(self, V) -> np.ndarray:
        r""":math:`\nabla L(V) = (P - I)^\top X / t^2` at the optimal offsets (envelope theorem)."""
        return self._loss_grad(self._check_V(V))

    def loss_hvp(self, V, W) -> np.ndarray:
        r""":math:`\nabla^2 L(V)[W]`, including the implicit motion of :math:`\tau^\star` (module notes)."""
        return self._loss_hvp(self._check_V(V), self._check_V(W, "W"))

    # unchecked, for the solver's inner loops; L is finite everywhere, so a non-finite V (which
    # no finite step produces) is still an error
    def _loss(self, V: np.ndarray) -> float:
        tau, _, _ = self._offsets(V)
        Z = self.X @ V.T / self.t + tau[None, :]
        return float((special.logsumexp(Z, axis=1).sum() - np.trace(Z)) / self.t)

    def _loss_grad(self, V: np.ndarray) -> np.ndarray:
        _, P, _ = self._offsets(V)
        G = P.T @ self.X
        G -= self.X
        return G / self.t**2

    def _loss_hvp(self, V: np.ndarray, W: np.ndarray) -> np.ndarray:
        _, P, _ = self._offsets(V)
        t = self.t

        def h(D):  # rows h_i D_i: = p_i * D_i - p_i (p_i . D_i)
            PD = P * D
            return PD - P * PD.sum(axis=1, keepdims=True)

        dA = self.X @ W.T / t
        rhs = -h(dA).sum(axis=0)
        H = np.diag(P.sum(axis=0)) - P.T @ P + np.full((t, t), 1.0 / t)
        dtau = _solve_semidefinite(H, rhs)
        dP = h(dA + dtau[None, :])
        return dP.T @ self.X / t**2

    def omega_problem(self) -> OmegaRegularized:
        r"""(29) as the problem of the conditional-gradient solver: :math:`L(V) +
        \tfrac{\alpha}{2}\Omega^2(V)` from V = 0."""
        return OmegaRegularized(self._loss, self._loss_grad, (self.t, self.n), self.n_clusters, self.alpha,
                                domain=self.domain, loss_hvp=self._loss_hvp)

    # -- the contract --------------------------------------------------------------------------
    def objective(self, X) -> float:
        r""":math:`L(V) + \tfrac{\alpha}{2}\Omega^2(V)` of (29) for the candidate ``V`` (= ``X``), with
        the offsets minimised out: the optimal value of :func:`discriminative_problem` at that V."""
        V = self._check_V(X, "X")
        return float(self._loss(V) + 0.5 * self.alpha * omega(V, self.n_clusters, domain=self.domain) ** 2)

    def recover_M(self, V) -> np.ndarray:
        r"""The M of (28) for V: ``omega_optimal_M(V)``, attaining :math:`\Omega^2(V)` in the domain."""
        return omega_optimal_M(self._check_V(V), self.n_clusters, domain=self.domain)

    def residuals(self, X) -> dict[str, float]:
        r"""Violations for the candidate ``V`` (= ``X``) and its recovered M.

        The keys of :func:`~cvxclust.bregman.sets.residuals_M2` (or ``residuals_M3``) for M;
        ``range``: :math:`\|V - MM^\dagger V\|_F/\|V\|_F` (Im(V) in Im(M), the change of variable
        V = M Upsilon); ``offsets``: :math:`\|P^\top\mathbf{1} - \mathbf{1}\|_\infty` achieved by the
        offset solve (the constraint :math:`\Omega^\top\mathbf{1} = \mathbf{1}` of (25)).
        """
        V = self._check_V(X, "X")
        M = self.recover_M(V)
        res = (residuals_M2 if self.domain == "M2" else residuals_M3)(M, self.n_clusters)
        proj = M @ np.linalg.lstsq(M, V, rcond=None)[0]
        res["range"] = float(np.linalg.norm(V - proj) / max(np.linalg.norm(V), 1e-300))
        res["offsets"] = float(self._offsets(V)[2])
        return res

    def lower_bound(self, V) -> float:
        r"""A certified lower bound on the optimal value of (29) from any V (to the accuracy of
        the offset solve):

        .. math::  L(V) - \langle \nabla L(V), V\rangle - \frac{\Omega_*(\nabla L(V))^2}{2\alpha}.
        """
        V = self._check_V(V)
        G = self._loss_grad(V)
        dual = omega_dual(G, self.n_clusters, domain=self.domain)
        return float(self._loss(V) - np.vdot(G, V) - dual**2 / (2 * self.alpha))

    def dual_bound_from_reference(self, problem: cp.Problem) -> float | None:
        V = self.primary_variable(problem).value
        return None if V is None else self.lower_bound(np.asarray(V, dtype=float))

    def solve(self, method: str = "auto", **options) -> Result:
        """Solve (see :class:`Discriminative`); ``extras`` of the result: ``M`` (recovered from V,
        :meth:`recover_M`) and ``tau`` (the optimal offsets, :meth:`offsets`)."""
        result = super().solve(method, **options)
        extras = {**result.extras, "M": self.recover_M(result.X), "tau": self.offsets(result.X)}
        return dataclasses.replace(result, extras=extras)


Discriminative.register_solver("conditional-gradient", ConditionalGradient)
