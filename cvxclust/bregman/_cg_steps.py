r"""The two inner steps of Algorithm 1 (:mod:`cvxclust.bregman._conditional_gradient`).

The line search (step 2)
------------------------
:math:`\min_{a, b \ge 0} \varphi(a, b) := L(aT_k + bS_k) + \tfrac{\alpha}{2}(a s_k + b)^2` is a
smooth convex problem in two bounded variables, solved by a projected Newton method
(:func:`line_search`): the quadratic model of :math:`\varphi` is minimised exactly over the
orthant (enumerating its four faces), then an Armijo backtracking along the segment towards that
point, which also keeps the iterate inside dom L (where L is ``inf``). Its gradient and Hessian
need only :math:`\nabla L` and two Hessian-vector products at :math:`aT_k + bS_k`:

.. math::

    \nabla\varphi = \begin{pmatrix} \langle \nabla L, T_k\rangle + \alpha s_k (a s_k + b) \\
                                    \langle \nabla L, S_k\rangle + \alpha (a s_k + b) \end{pmatrix},\quad
    \nabla^2\varphi = \begin{pmatrix} \langle T_k, \nabla^2 L\, T_k\rangle + \alpha s_k^2 &
                                      \langle T_k, \nabla^2 L\, S_k\rangle + \alpha s_k \\
                                      \cdot & \langle S_k, \nabla^2 L\, S_k\rangle + \alpha \end{pmatrix}.

The local search (the acceleration of Laue 2012 / Zhang et al. 2012)
--------------------------------------------------------------------
It rests on the variational form of Omega. For any M in the domain (M3, or M2) with
:math:`\mathrm{Im}(T) \subseteq \mathrm{Im}(M)`,
:math:`\Omega^2(T) \le \mathrm{tr}(T^\top M^\dagger T)`, with equality at
:math:`M^\star = U\,\mathrm{diag}(\sigma)\,U^\top` =
:func:`~cvxclust.bregman._omega.omega_optimal_M` (U: the r eigenvectors with
:math:`\sigma_i > 0`; :func:`~cvxclust.bregman._omega.variational_basis`). Fixing
:math:`M^\star` and writing :math:`T = U\,\mathrm{diag}(\sqrt\sigma)\,D` (D of size r x n) gives
the smooth, unconstrained, strongly convex problem

.. math::

    \min_D\ \psi(D) = L\big(U\,\mathrm{diag}(\sqrt\sigma)\,D\big) + \tfrac{\alpha}{2}\|D\|_F^2,
    \qquad \psi(D_0) = L(T_k) + \tfrac{\alpha}{2}\Omega^2(T_k)
    \ \text{ at }\ D_0 = \mathrm{diag}(\sqrt\sigma)^{-1}U^\top T_k,

a descent in the factored form :math:`T = (U\sqrt\sigma) D` within the current subspace (the
scaling by :math:`\sqrt\sigma` makes the regulariser isotropic). A few L-BFGS iterations
(:func:`scipy.optimize.minimize`) give D with :math:`\psi(D) < \psi(D_0)`, hence
:math:`L(T') + \tfrac{\alpha}{2}\Omega^2(T') \le \psi(D) <` the objective at T_k; the step is
kept only if it decreases the objective (:func:`local_search_step`, which first tries L-BFGS on
T itself with the gradient of :func:`~cvxclust.bregman._omega.omega_squared_gradient`). This is
block-coordinate descent on the jointly convex (16) (M fixed, then M re-optimised in closed
form), alternated with the conditional-gradient step that adds new directions.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from scipy import optimize

from ._omega import omega, omega_squared_gradient, variational_basis

__all__ = ["line_search", "local_search_step"]


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
