r"""The Newton solve of :mod:`cvxclust.dual_newton` without the cone: semismooth Newton on the
multipliers of the row sums and the trace of a nearest-point problem over a box
(:func:`newton_multipliers`), with its generalized Hessian (:func:`generalized_hessian`); the
method, its dual function and its reference are in the docstring of :mod:`cvxclust.dual_newton`.

Both run on the arrays of any library of the Python array API standard, on their device; NumPy
keeps the pattern of the Hessian in single precision and its in-place updates.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.sparse.linalg import LinearOperator

from ._array_api import add_to_diagonal, check_arrays, diagonal
from ._array_ops import clip_in_place, conjugate_gradients, inner

__all__ = ["NewtonResult", "generalized_hessian", "newton_multipliers"]


class NewtonResult(NamedTuple):
    """What :func:`newton_multipliers` returns."""

    #: ``clip(T + u 1^T + 1 u^T + v I, L, U)`` at the last (u, v), in T's namespace and on its device
    F: np.ndarray
    u: np.ndarray | None
    v: float
    #: ``theta`` at (u, v) without S (the target T is the shifted one)
    value: float
    iterations: int
    #: ``"converged"``, ``"max_iter"`` or ``"line_search"`` (no step decreased -theta: rounding)
    status: str


def newton_multipliers(T: np.ndarray, *, row_sum: float | None = None, trace: float | None = None,
                       lower=0.0, upper=None, u: np.ndarray | None = None, v: float | None = None,
                       tol: float = 1e-12, max_iter: int = 50) -> NewtonResult:
    r"""Maximise ``theta(u, v)`` of the module docstring (with S = 0) by semismooth Newton.

    At the maximum ``F`` is the nearest point to T in the box with row sums ``row_sum`` and
    trace ``trace`` (each constraint only when given).

    Parameters
    ----------
    T : (n, n) array
        Symmetric target (trusted: callers check it), of NumPy or of any array API library; F
        and u come back in its namespace and on its device.
    row_sum, trace : float, optional
        beta and t; None leaves the constraint (and its multiplier) out.
    lower, upper : float or (n, n) array
        The box (arrays of T's library, device and dtype); ``upper=None`` for none above.
    u, v : optional
        Start (e.g. the previous solution); by default the solution without the box.
    tol : float
        Stop when ``max(max_i |(F 1)_i - beta|, |tr F - t| / 2) <= tol``, or below the rounding
        error of the sums, ``n eps (max|T| + 2 max|u| + |v|)`` with the ``eps`` of T's dtype, if
        that is larger.
    max_iter : int
        Newton steps at most.

    Raises
    ------
    TypeError, ValueError
        Naming ``T``, ``lower``, ``upper`` or ``u`` where they mix libraries, devices or dtypes
        (:func:`cvxclust._array_api.check_arrays`).
    """
    arrays = check_arrays(T=T, lower=lower, upper=upper, u=u)
    xp, numpy = arrays.xp, arrays.numpy
    n = T.shape[0]
    rows, traced = row_sum is not None, trace is not None
    if rows and u is None:
        r = row_sum - xp.sum(T, axis=1)
        u = (r - xp.sum(r) / (2 * n)) / n  # F 1 = beta 1 where no entry is clipped
    if not rows:
        u = None
    if v is None:  # tr F = t where no entry is clipped
        v = (trace - float(xp.sum(diagonal(T, xp))) - 2.0 * (float(xp.sum(u)) if rows else 0.0)) / n if traced else 0.0
    F, trial = (np.empty_like(T), np.empty_like(T)) if numpy else (None, None)
    norm_T = inner(T, T, xp)
    size = max(float(xp.max(T)), -float(xp.min(T)))

    def evaluate(u, v, out):
        """``F(u, v)`` (into ``out`` in NumPy); returns it, ``-theta`` (minimised) and the residual vector."""
        if numpy:
            if rows:
                np.add(u[:, None], u[None, :], out=out)  # u_i + u_j: exactly symmetric, hence F too
                out += T
            else:
                out[...] = T
        else:
            out = u[:, None] + u[None, :] if rows else xp.zeros_like(T)
            out += T  # in place (the standard's +=): one n x n array
        if traced:
            out = add_to_diagonal(out, v, xp)
        out = clip_in_place(out, lower, upper, xp)
        sums, tr = xp.sum(out, axis=1), float(xp.sum(diagonal(out, xp)))
        FF, FT = inner(out, out, xp), inner(out, T, xp)
        inner_value = 0.5 * (FF - 2.0 * FT + norm_T)
        parts = []
        if rows:
            inner_value -= 2.0 * float(xp.sum(u * sums)) - 2.0 * row_sum * float(xp.sum(u))
            parts.append(sums - row_sum)
        if traced:
            inner_value -= v * tr - v * trace
            parts.append(arrays.asarray([0.5 * (tr - trace)]) if not numpy else np.array([0.5 * (tr - trace)]))
        residual = (np.concatenate(parts) if numpy else xp.concat(parts)) if parts else arrays.asarray(np.empty(0))
        return out, -inner_value, residual

    def largest(x) -> float:
        return float(xp.max(xp.abs(x))) if x.shape[0] else 0.0

    F, psi, r = evaluate(u, v, F)
    mask = np.empty(T.shape, dtype=np.float32) if numpy else None
    iteration = 0
    while True:
        worst = largest(r)
        floor = n * arrays.eps * (size + 2.0 * (largest(u) if rows else 0.0) + abs(v))
        if worst <= max(tol, floor):
            return NewtonResult(F, u, v, -psi, iteration, "converged")
        if iteration == max_iter:
            return NewtonResult(F, u, v, -psi, iteration, "max_iter")
        # the regularisation of the Hessian, in the units of T: a row whose entries are all at a
        # bound has no curvature, and its step (about r / eps) must be able to span T's range
        norm_r = float(xp.linalg.vector_norm(r))
        eps = min(1e-2, norm_r) / max(1.0, size)
        hessian, preconditioner = generalized_hessian(F, lower=lower, upper=upper, rows=rows, traced=traced,
                                                      shift=eps, out=mask)
        step = conjugate_gradients(hessian.matvec, -r, preconditioner, rtol=min(0.1, norm_r), maxiter=100, xp=xp)
        del hessian  # the pattern (n x n) is not needed in the line search
        slope = 2.0 * float(xp.sum(r * step))
        t = 1.0
        for _ in range(30):
            u_new = u + t * step[:n] if rows else None
            v_new = v + t * float(step[-1]) if traced else v
            candidate_F, candidate, r_new = evaluate(u_new, v_new, trial)
            # Armijo; near the optimum the decrease drowns in rounding, so a halved residual also passes
            if candidate <= psi + 1e-4 * t * slope or largest(r_new) <= 0.5 * worst:
                break
            t *= 0.5
        else:
            return NewtonResult(F, u, v, -psi, iteration, "line_search")
        u, v, r = u_new, v_new, r_new
        F, trial, psi = candidate_F, F if numpy else None, candidate
        iteration += 1


class _Operator:
    """A symmetric linear operator off NumPy: ``matvec`` and ``@`` on vectors of its namespace."""

    def __init__(self, shape, matvec):
        self.shape, self.matvec = shape, matvec

    def __matmul__(self, x):
        return self.matvec(x)


def generalized_hessian(F: np.ndarray, *, lower=0.0, upper=None, rows: bool = True, traced: bool = False,
                        shift: float = 0.0, out: np.ndarray | None = None):
    r"""Half an element of the generalized Hessian of ``-theta`` in (u, v) at ``F = F(u, v)``.

    With ``P`` the 0/1 pattern of the entries of F strictly inside the box and ``d = diag(P)``,

    .. math::

        \tfrac12 H = \begin{pmatrix} \operatorname{Diag}(P\mathbf 1) + P & d \\ d^T & \tfrac12
        \mathbf 1^T d\end{pmatrix} + \text{shift}\cdot I,

    the (u, u) block when ``rows``, the (v, v) entry when ``traced``.  Returns it as an operator
    with ``matvec`` and ``@`` (a SciPy ``LinearOperator`` for NumPy, whose products with P run in
    single precision: ``out``, an n x n float32 buffer, holds P; elsewhere P has F's dtype and
    stays on F's device) and its diagonal, for a Jacobi preconditioner.
    """
    arrays = check_arrays(F=F, lower=lower, upper=upper)
    xp, numpy = arrays.xp, arrays.numpy
    n = F.shape[0]
    if numpy:
        mask = np.empty(F.shape, dtype=np.float32) if out is None else out
        if upper is None:
            np.greater(F, lower, out=mask, casting="unsafe")
        else:
            np.logical_and(F > lower, F < upper, out=mask, casting="unsafe")
        degree = mask.sum(axis=1, dtype=float)
        on_diagonal = np.diagonal(mask).astype(float)

        def times_mask(a):
            return mask @ a.astype(np.float32)
    else:
        inside = F > lower if upper is None else xp.logical_and(F > lower, F < upper)
        mask = xp.astype(inside, F.dtype)
        del inside
        degree = xp.sum(mask, axis=1)
        on_diagonal = diagonal(mask, xp)

        def times_mask(a):
            return mask @ a
    parts = ([degree + on_diagonal] if rows else []) + ([0.5 * xp.sum(on_diagonal, keepdims=True)] if traced else [])
    diagonal_of = (np.concatenate(parts) if numpy else xp.concat(parts)) if parts else arrays.asarray(np.empty(0))

    def product(x):
        parts = []
        if rows:
            a = x[:n]
            top = shift * a + degree * a + times_mask(a)
            if traced:
                top = top + on_diagonal * x[n]
            parts.append(top)
        if traced:
            last = (shift + diagonal_of[-1]) * x[-1:]
            if rows:
                last = last + xp.sum(on_diagonal * x[:n], keepdims=True)
            parts.append(last)
        return (np.concatenate(parts) if numpy else xp.concat(parts)) if parts else x * shift

    m = diagonal_of.shape[0]
    operator = LinearOperator((m, m), matvec=product, dtype=float) if numpy else _Operator((m, m), product)
    return operator, diagonal_of + shift
