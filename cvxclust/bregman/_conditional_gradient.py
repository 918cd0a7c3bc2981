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

The line search (step 2) is a smooth convex problem in two bounded variables, solved by a
projected Newton method: the quadratic model of :math:`\varphi` is minimised exactly over the
orthant (enumerating its four faces), then an Armijo backtracking along the segment towards that
point, which also keeps the iterate inside dom L (where L is ``inf``). Its gradient and Hessian
need only :math:`\nabla L` and two Hessian-vector products at :math:`aT_k + bS_k`:

.. math::

    \nabla\varphi = \begin{pmatrix} \langle \nabla L, T_k\rangle + \alpha s_k (a s_k + b) \\
                                    \langle \nabla L, S_k\rangle + \alpha (a s_k + b) \end{pmatrix},\quad
    \nabla^2\varphi = \begin{pmatrix} \langle T_k, \nabla^2 L\, T_k\rangle + \alpha s_k^2 &
                                      \langle T_k, \nabla^2 L\, S_k\rangle + \alpha s_k \\
                                      \cdot & \langle S_k, \nabla^2 L\, S_k\rangle + \alpha \end{pmatrix}.

Local search (the acceleration of Laue 2012 / Zhang et al. 2012)
-----------------------------------------------------------------
The paper's Appendix C is not in our copy; we use the variational form of Omega. For any M in
the domain (M3, or M2) with :math:`\mathrm{Im}(T) \subseteq \mathrm{Im}(M)`,
:math:`\Omega^2(T) \le \mathrm{tr}(T^\top M^\dagger T)`, with equality at
:math:`M^\star = U\,\mathrm{diag}(\sigma)\,U^\top` =
:func:`~cvxclust.bregman._omega.omega_optimal_M` (U: the r eigenvectors with
:math:`\sigma_i > 0`). Fixing :math:`M^\star` and writing :math:`T = U\,\mathrm{diag}(\sqrt\sigma)\,D`
(D of size r x n) gives the smooth, unconstrained, strongly convex problem

.. math::

    \min_D\ \psi(D) = L\big(U\,\mathrm{diag}(\sqrt\sigma)\,D\big) + \tfrac{\alpha}{2}\|D\|_F^2,
    \qquad \psi(D_0) = L(T_k) + \tfrac{\alpha}{2}\Omega^2(T_k)\ \text{ at }\ D_0 = \mathrm{diag}(\sqrt\sigma)^{-1}U^\top T_k,

a descent in the factored form :math:`T = (U\sqrt\sigma) D` within the current subspace (the
scaling by :math:`\sqrt\sigma` makes the regulariser isotropic). A few L-BFGS iterations
(:func:`scipy.optimize.minimize`) give D with :math:`\psi(D) < \psi(D_0)`, hence
:math:`L(T') + \tfrac{\alpha}{2}\Omega^2(T') \le \psi(D) <` the objective at T_k; the step is
kept only if it decreases the objective. Then :math:`s_k` is reset to the exact
:math:`\Omega(T_k)` (T_k divided by its norm is itself a unit atom), so with ``local_search``
the surrogate equals the objective, every iteration is at least as good as Algorithm 1's step
from the same point, and the O(1/k) guarantee is kept. This is block-coordinate descent on the
jointly convex (16) (M fixed, then M re-optimised in closed form), alternated with the
conditional-gradient step that adds new directions.

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
The engine keeps the best bound so far and stops when
:math:`(P(T_k) - \max_{j \le k}\mathrm{LB}_j) / |P(T_k)| \le` ``tol``, with
:math:`P(T) = L(T) + \tfrac{\alpha}{2}\Omega^2(T)` evaluated exactly (one thin SVD of the
t x n matrix T).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from scipy import optimize

from .._checks import check_bool, check_choice, check_int_range, check_n_clusters, check_positive
from .._stopping import IterationMonitor
from ._omega import omega, omega_dual_subgradient, omega_eigenvalues

__all__ = ["ConditionalGradientResult", "conditional_gradient", "line_search", "local_search_step",
           "omega_squared_gradient", "variational_basis"]

_DOMAINS = ("M3", "M2")


@dataclass
class ConditionalGradientResult:
    """Outcome of :func:`conditional_gradient`.

    Attributes
    ----------
    T : ndarray of shape (t, n)
        The last iterate.
    norm_bound : float
        :math:`s_k \\ge \\Omega(T)` (equal to it with ``local_search``).
    objective : float
        :math:`L(T) + \\tfrac{\\alpha}{2}\\Omega^2(T)`, exact.
    lower_bound : float
        The best certified lower bound on the optimal value.
    status : str
        ``"optimal"`` (relative gap <= tol), ``"max_iter"``, ``"time_limit"`` or ``"stalled"``.
    iterations : int
    time : float
        Wall seconds.
    history : list of dict
        Per iteration: ``objective``, ``surrogate`` (:math:`L + \\tfrac{\\alpha}{2}s_k^2`),
        ``lower_bound``, ``relative_gap``, ``a``, ``b``, ``local_search_gain``.
    """

    T: np.ndarray
    norm_bound: float
    objective: float
    lower_bound: float
    status: str
    iterations: int
    time: float
    history: list[dict] = field(default_factory=list)

    @property
    def relative_gap(self) -> float:
        return (self.objective - self.lower_bound) / max(abs(self.objective), 1e-300)


# -- the line search (Algorithm 1, step 4) -----------------------------------------------------


def _fd_hvp(loss_grad: Callable, Z: np.ndarray, V: np.ndarray) -> np.ndarray:
    """Forward difference of the gradient along V (used when no Hessian-vector product is given)."""
    scale = max(np.abs(V).max(), 1e-300)
    h = 1e-7 * max(1.0, np.abs(Z).max()) / scale
    return (loss_grad(Z + h * V) - loss_grad(Z)) / h


def _min_quadratic_orthant(g: np.ndarray, H: np.ndarray, x: np.ndarray) -> np.ndarray:
    """The minimiser over ``p >= 0`` of ``g'(p - x) + (p - x)' H (p - x) / 2`` for 2-vectors,
    H positive definite: the unconstrained minimiser on each face of the orthant, kept if it is
    feasible, the best of those (the true minimiser lies on one face and is feasible)."""
    best, best_q = x.copy(), 0.0
    for free in ([0, 1], [0], [1], []):
        p = np.zeros(2)
        if free:
            fixed = [i for i in (0, 1) if i not in free]
            # on the face p_fixed = 0: H_ff (p_f - x_f) = -(g_f + H_f,fixed (0 - x_fixed))
            rhs = -(g[free] - H[np.ix_(free, fixed)] @ x[fixed]) if fixed else -g[free]
            p[free] = x[free] + np.linalg.solve(H[np.ix_(free, free)], rhs)
            if np.any(p[free] < 0):
                continue
        step = p - x
        q = float(g @ step + 0.5 * step @ H @ step)
        if q < best_q:
            best, best_q = p, q
    return best


def line_search(loss: Callable, loss_grad: Callable, T: np.ndarray, S: np.ndarray, s: float, alpha: float,
                *, loss_hvp: Callable | None = None, tol: float = 1e-12, max_iter: int = 50):
    r"""Step 4 of Algorithm 1: :math:`\min_{a, b \ge 0} L(aT + bS) + \tfrac{\alpha}{2}(a s + b)^2`.

    Projected Newton (see the module notes), started at ``(a, b) = (1, 0)``; with ``T = 0``
    (the first iteration) a is irrelevant and only b is optimised (``a = 0`` is returned).

    Parameters
    ----------
    loss, loss_grad : callables
        ``L(Z) -> float`` (``inf`` outside dom L) and ``grad L(Z) -> ndarray``.
    T, S : ndarray of shape (t, n)
        Current iterate (in dom L) and the new atom.
    s : float
        The norm bound :math:`s_k` of T.
    alpha : float
        Weight of :math:`\tfrac12\Omega^2`.
    loss_hvp : callable, optional
        ``(Z, V) -> Hess L(Z)[V]``; forward differences of ``loss_grad`` if None.
    tol : float
        Stop when the model decrease is below ``tol * max(1, |phi|)``.
    max_iter : int
        Newton iterations.

    Returns
    -------
    a, b : float
    value : float
        :math:`\varphi(a, b)`.
    """
    hvp = loss_hvp if loss_hvp is not None else (lambda Z, V: _fd_hvp(loss_grad, Z, V))
    zero_T = not np.any(T)

    def phi(x):
        return loss(x[0] * T + x[1] * S) + 0.5 * alpha * (x[0] * s + x[1]) ** 2

    x = np.array([0.0 if zero_T else 1.0, 0.0])
    value = phi(x)
    if not np.isfinite(value):
        raise ValueError("T must lie in the domain of the loss (L(T) is not finite)")
    for _ in range(max_iter):
        Z = x[0] * T + x[1] * S
        G = loss_grad(Z)
        w = alpha * (x[0] * s + x[1])
        HS = hvp(Z, S)
        if zero_T:
            g = np.array([0.0, np.vdot(G, S) + w])
            H = np.diag([1.0, np.vdot(S, HS) + alpha])
        else:
            HT = hvp(Z, T)
            g = np.array([np.vdot(G, T) + w * s, np.vdot(G, S) + w])
            H = np.array([[np.vdot(T, HT) + alpha * s * s, np.vdot(T, HS) + alpha * s],
                          [np.vdot(S, HT) + alpha * s, np.vdot(S, HS) + alpha]])
            H = (H + H.T) / 2
        # tiny ridge: H is singular only when T and S are parallel and L is flat along them
        H += 1e-12 * max(np.trace(H), 1e-300) * np.eye(2)
        p = _min_quadratic_orthant(g, H, x)
        step = p - x
        model = float(g @ step + 0.5 * step @ H @ step)
        if model >= -tol * max(1.0, abs(value)):
            break
        slope = float(g @ step)
        t_step = 1.0
        for _ in range(60):
            trial = x + t_step * step
            trial_value = phi(trial)
            if np.isfinite(trial_value) and trial_value <= value + 1e-4 * t_step * slope:
                break
            t_step *= 0.5
        else:
            break  # no decrease representable in floating point: x is optimal to round-off
        x, value = np.maximum(trial, 0.0), trial_value
    return float(x[0]), float(x[1]), float(value)


# -- the local search --------------------------------------------------------------------------


def variational_basis(T: np.ndarray, d: int, domain: str = "M2") -> tuple[np.ndarray, np.ndarray]:
    r"""``(U, sigma)`` with :math:`M^\star = U\,\mathrm{diag}(\sigma)\,U^\top` the matrix attaining
    :math:`\Omega^2(T)` (as :func:`~cvxclust.bregman._omega.omega_optimal_M`), restricted to
    :math:`\sigma > 0`: U has orthonormal columns spanning Im(M*) and
    :math:`\mathrm{tr}(T^\top M^{\star\dagger} T) = \sum_i \|U_{:i}^\top T\|^2/\sigma_i = \Omega^2(T)`.

    For ``domain="M2"`` the column :math:`\mathbf{1}/\sqrt t` (eigenvalue 1 of :math:`M = P + J`)
    is appended to the M3 basis of :math:`HT`.
    """
    t = T.shape[0]
    A = T - T.mean(axis=0) if domain == "M2" else T
    U, sv, _ = np.linalg.svd(A, full_matrices=False)
    sv = np.where(sv > sv.max(initial=0.0) * max(T.shape) * np.finfo(float).eps, sv, 0.0)
    if domain == "M2":
        # HT's singular vectors for nonzero singular values are orthogonal to 1; near-null ones
        # (singular values of round-off size that passed the threshold) mix with 1, and with a
        # tiny sigma they blow tr(T' M^+ T) up through the 1'T part (joint model: 1.6e6 for 35)
        sv = np.where(np.abs(U.sum(axis=0)) <= 1e-8 * np.sqrt(t), sv, 0.0)
    sigma = omega_eigenvalues(sv, d)
    keep = sigma > 0
    U, sigma = U[:, keep], sigma[keep]
    if domain == "M2":
        U = np.column_stack([U, np.full(t, 1.0 / np.sqrt(t))])
        sigma = np.append(sigma, 1.0)
    return U, sigma


def omega_squared_gradient(T: np.ndarray, d: int, domain: str = "M2") -> tuple[float, np.ndarray]:
    r"""``(Omega^2(T), 2 M^+ T)`` with ``M = U diag(sigma) U^T`` from :func:`variational_basis`.

    :math:`\Omega^2` is the spectral function :math:`f(s(T))` of (18); f is differentiable at every
    s > 0 with :math:`\partial f/\partial s_i = 2 s_i/\sigma_i` (envelope theorem: the minimising
    :math:`\sigma` of (18) is unique there), so by Lewis' theorem on spectral functions
    :math:`\nabla\Omega^2(T) = 2U\mathrm{diag}(s/\sigma)V^\top = 2M^{\star\dagger}T` wherever T has
    no zero singular value (for M2: HT, with the JT part contributing 2JT). Elsewhere it is a
    subgradient: the value of the variational bound :math:`\mathrm{tr}(T^\top M^\dagger T)`
    at fixed :math:`M = M^\star` has this gradient and touches :math:`\Omega^2` at T.
    """
    U, sigma = variational_basis(T, d, domain)
    C = U.T @ T
    value = float(np.sum(C * C / sigma[:, None]))
    return value, 2.0 * U @ (C / sigma[:, None])


def local_search_step(loss: Callable, loss_grad: Callable, T: np.ndarray, d: int, alpha: float, *,
                      domain: str = "M2", max_iter: int = 30):
    r"""One local search: L-BFGS on :math:`P(T) = L(T) + \tfrac{\alpha}{2}\Omega^2(T)` from T.

    The gradient is :math:`\nabla L(T) + \alpha M^{\star\dagger} T`
    (:func:`omega_squared_gradient`), exact wherever T has full column rank (where P is
    smooth), a subgradient elsewhere; a descent heuristic there, so the result is kept only if
    P decreased.

    Returns
    -------
    T_new : ndarray
        The L-BFGS point if it decreased P, else ``T`` itself.
    value : float
        P at the returned point.
    """
    shape = T.shape

    def fun(x):
        Z = x.reshape(shape)
        value = loss(Z)
        if not np.isfinite(value):
            return np.inf, np.zeros_like(x)
        om2, om2_grad = omega_squared_gradient(Z, d, domain)
        return value + 0.5 * alpha * om2, (loss_grad(Z) + 0.5 * alpha * om2_grad).ravel()

    def exact(Z):  # P with Omega by Algorithm 2: candidates are judged by it alone
        value = loss(Z)
        return value + 0.5 * alpha * omega(Z, d, domain=domain) ** 2 if np.isfinite(value) else np.inf

    start = exact(T)
    with np.errstate(over="ignore", invalid="ignore"):
        res = optimize.minimize(fun, T.ravel(), jac=True, method="L-BFGS-B",
                                options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-14})
    candidate = exact(res.x.reshape(shape)) if np.isfinite(res.fun) else np.inf
    if candidate < start:
        T, start = res.x.reshape(shape), float(candidate)
    # then the smooth problem in the subspace of the directions with sigma_i > 1e-6 max sigma
    # (factored form, fixed basis): where the optimum is rank deficient P has a kink that stalls
    # L-BFGS on T, and the step above leaves spurious tiny singular values that this one drops
    U, sigma = variational_basis(T, d, domain)
    keep = sigma > 1e-6 * sigma.max()
    B = U[:, keep] * np.sqrt(sigma[keep])
    r = B.shape[1]

    def fun_sub(x):
        Dm = x.reshape(r, shape[1])
        Z = B @ Dm
        value = loss(Z)
        if not np.isfinite(value):
            return np.inf, np.zeros_like(x)
        return value + 0.5 * alpha * float(np.sum(Dm * Dm)), (B.T @ loss_grad(Z) + alpha * Dm).ravel()

    D0 = (U[:, keep].T @ T) / np.sqrt(sigma[keep])[:, None]
    with np.errstate(over="ignore", invalid="ignore"):
        res = optimize.minimize(fun_sub, D0.ravel(), jac=True, method="L-BFGS-B",
                                options={"maxiter": max_iter, "ftol": 1e-15, "gtol": 1e-14})
    T_sub = B @ res.x.reshape(r, shape[1])
    sub_value = exact(T_sub)
    if np.isfinite(sub_value) and sub_value < start:
        return T_sub, float(sub_value)
    return T, float(start)


# -- Algorithm 1 -------------------------------------------------------------------------------


def conditional_gradient(
    loss: Callable[[np.ndarray], float],
    loss_grad: Callable[[np.ndarray], np.ndarray],
    shape: tuple[int, int],
    n_clusters: int,
    alpha: float,
    *,
    domain: str = "M2",
    loss_hvp: Callable | None = None,
    T0: np.ndarray | None = None,
    local_search: bool = True,
    local_search_iter: int = 30,
    tol: float = 1e-5,
    max_iter: int = 1000,
    time_limit: float = np.inf,
    svd_solver: str = "auto",
    random_state=None,
    verbose: bool = False,
    method: str = "conditional-gradient",
) -> ConditionalGradientResult:
    r"""Minimise :math:`P(T) = L(T) + \tfrac{\alpha}{2}\Omega^2(T)` by Algorithm 1 (with local search).

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
    T0 : ndarray, optional
        Starting point; Algorithm 1's ``T_0 = 0`` if None. Give one when 0 is outside dom L
        (then :math:`s_0 = \Omega(T_0)`).
    local_search : bool, default=True
        Alternate each conditional-gradient step with the factored local search (module notes).
    local_search_iter : int, default=30
        L-BFGS iterations per local search.
    tol : float, default=1e-5
        Stop when the certified relative gap :math:`(P(T_k) - \mathrm{LB}) / |P(T_k)|` is <= tol.
    max_iter, time_limit : int, float
        Limits; reaching one gives that status and a ``ConvergenceWarning``.
    svd_solver, random_state
        Passed to :func:`~cvxclust.bregman._omega.omega_dual_subgradient` (the linear oracle).
    verbose : bool
        Progress bar.
    method : str
        Name used in warnings.

    Returns
    -------
    ConditionalGradientResult

    Raises
    ------
    ValueError
        On bad parameters, or if L is not finite at the start point.
    """
    try:
        t, n = (int(v) for v in shape)
    except (TypeError, ValueError):
        raise ValueError(f"shape must be a pair of integers (t, n), got {shape!r}") from None
    check_int_range(t, "shape[0]", 1)
    check_int_range(n, "shape[1]", 1)
    d = check_n_clusters(n_clusters, t)
    check_positive(alpha, "alpha")
    check_choice(domain, "domain", _DOMAINS)
    local_search = check_bool(local_search, "local_search")
    check_int_range(local_search_iter, "local_search_iter", 1)
    if not callable(loss) or not callable(loss_grad):
        raise ValueError("loss and loss_grad must be callables")
    if loss_hvp is not None and not callable(loss_hvp):
        raise ValueError("loss_hvp must be a callable or None")
    monitor = IterationMonitor(method, tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)
    start = time.perf_counter()

    if T0 is None:
        T, s = np.zeros((t, n)), 0.0
    else:
        T = np.array(T0, dtype=float)
        if T.shape != (t, n) or not np.all(np.isfinite(T)):
            raise ValueError(f"T0 must be a finite array of shape {(t, n)}, got shape {T.shape}")
        s = omega(T, d, domain=domain)
    if not np.isfinite(loss(T)):
        raise ValueError("the loss is not finite at the start point; pass a T0 inside its domain")

    best_lower = -np.inf
    a = b = gain = np.nan

    def evaluate(T, s):
        L_val = float(loss(T))
        G = loss_grad(T)
        direction, dual = omega_dual_subgradient(G, d, domain=domain, svd_solver=svd_solver,
                                                 random_state=random_state, return_value=True)
        objective = L_val + 0.5 * alpha * omega(T, d, domain=domain) ** 2
        lower = L_val - float(np.vdot(G, T)) - dual**2 / (2 * alpha)
        return L_val, direction, objective, lower

    for _ in monitor:
        L_val, G_sub, objective, lower = evaluate(T, s)
        best_lower = max(best_lower, lower)
        rel_gap = (objective - best_lower) / max(abs(objective), 1e-300)
        monitor.record(objective=objective, surrogate=L_val + 0.5 * alpha * s * s, lower_bound=best_lower,
                       relative_gap=rel_gap, norm_bound=s, a=a, b=b, local_search_gain=gain)
        if rel_gap <= tol:
            monitor.converged()
            break
        S = -G_sub  # the minimiser of <grad L(T_k), S> over the unit ball of Omega
        a, b, value = line_search(loss, loss_grad, T, S, s, alpha, loss_hvp=loss_hvp)
        if b == 0.0 and a == 1.0 and np.any(T):
            # the new atom gives no decrease: only round-off separates T_k from the optimum of
            # the lifted problem, and the gap cannot be closed further in floating point
            monitor.stalled()
            break
        T, s = a * T + b * S, a * s + b
        gain = 0.0
        if local_search:
            T_new, value_new = local_search_step(loss, loss_grad, T, d, alpha, domain=domain,
                                                 max_iter=local_search_iter)
            gain = value - value_new
            T = T_new
            s = omega(T, d, domain=domain)  # T / Omega(T) is one unit atom: s may shrink to Omega(T)
    if monitor.status != "optimal":
        # the loop ended on a limit after an update: certify the returned point itself
        _, _, objective, lower = evaluate(T, s)
        best_lower = max(best_lower, lower)
    return ConditionalGradientResult(
        T=T, norm_bound=float(s), objective=float(objective), lower_bound=float(best_lower),
        status=monitor.status, iterations=monitor.iterations, time=time.perf_counter() - start,
        history=monitor.history,
    )
