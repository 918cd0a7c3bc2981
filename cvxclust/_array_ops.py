"""Small kernels of the solvers written against the Python array API standard
(:mod:`cvxclust._array_api`): inner products and norms without an n x n temporary, a clip in place
where the library allows it, and preconditioned conjugate gradients, all in the namespace and on
the device of their arrays (NumPy keeps its BLAS calls)."""

from __future__ import annotations

import math

import numpy as np

from ._array_api import is_numpy, namespace_of

__all__ = ["clip_in_place", "conjugate_gradients", "frobenius", "inner", "top_eigenvectors"]


def inner(A, B, xp) -> float:
    """``<A, B>`` of two arrays of one shape, without a temporary of their size (a BLAS dot)."""
    if is_numpy(xp):
        return float(np.vdot(A, B))
    return float(xp.tensordot(A, B, axes=A.ndim))


def clip_in_place(A, lower, upper, xp):
    """``clip(A, lower, upper)`` (``upper`` None: none above), in place where the library allows it
    (NumPy, PyTorch); returns the result, which the caller must use."""
    if is_numpy(xp):
        return np.maximum(A, lower, out=A) if upper is None else np.clip(A, lower, upper, out=A)
    if hasattr(A, "clamp_"):  # PyTorch: an n x n temporary less
        import torch  # noqa: PLC0415 -- A is a torch tensor

        for bound, side, keep in ((lower, "min", torch.maximum), (upper, "max", torch.minimum)):
            if isinstance(bound, torch.Tensor):
                keep(A, bound, out=A)
            elif bound is not None:
                A.clamp_(**{side: bound})
        return A
    return xp.maximum(A, lower) if upper is None else xp.clip(A, lower, upper)


def conjugate_gradients(matvec, b, preconditioner, *, rtol: float, maxiter: int, xp):
    """Solve ``A x = b`` for the symmetric positive definite ``A`` (given by ``matvec``) by
    conjugate gradients with the diagonal preconditioner ``preconditioner`` (a vector, A's
    diagonal), from 0, until ``||r|| < rtol ||b||`` or ``maxiter`` steps; in ``b``'s namespace and
    on its device (three scalars per step reach the host).  The iteration of SciPy's ``cg``."""
    x = xp.zeros_like(b)
    norm_b = float(xp.linalg.vector_norm(b))
    if norm_b == 0.0:
        return x
    floor = rtol * norm_b
    r = b
    p = rho_prev = None
    for _ in range(maxiter):
        if float(xp.linalg.vector_norm(r)) < floor:
            break
        z = r / preconditioner
        rho = float(xp.sum(r * z))
        p = z if p is None else z + (rho / rho_prev) * p
        q = matvec(p)
        alpha = rho / float(xp.sum(p * q))
        x = x + alpha * p
        r = r - alpha * q
        rho_prev = rho
    return x


# float64's smallest norm whose squared entries cannot underflow enough to matter (sqrt(tiny) / eps)
_SAFE_FLOAT64 = math.sqrt(np.finfo(np.float64).tiny) / np.finfo(np.float64).eps


def frobenius(A, xp=None) -> float:
    """``||A||_F`` (``||A||_2`` of a vector), without a temporary of A's size, and without
    underflow or overflow: the sum of squares loses entries below about 1e-154 (float64; 1e-19 in
    float32) and overflows above 1e154, so a norm below ``sqrt(tiny) / eps`` or not finite is
    computed again from ``A / max|A|`` (a part along a recession direction is then not taken for
    rounding).  ``xp`` is A's namespace (found when None); NumPy keeps its BLAS call."""
    if xp is None:
        xp = namespace_of(A)
    if is_numpy(xp):  # NumPy's call as it was: an overflow (data beyond 1e154) also warns
        value, safe = float(np.linalg.norm(A)), _SAFE_FLOAT64
    else:
        finfo = xp.finfo(A.dtype)
        with np.errstate(over="ignore"):  # a library on NumPy (array-api-strict): computed again below
            value = math.sqrt(max(inner(A, A, xp), 0.0))
        safe = math.sqrt(float(finfo.smallest_normal)) / float(finfo.eps)
    if safe < value < math.inf or math.prod(getattr(A, "shape", ())) == 0 and value == 0.0:
        return value
    largest = float(xp.max(xp.abs(A)))
    if not 0.0 < largest < math.inf:  # 0, inf or NaN
        return largest
    B = A / largest
    return largest * (float(np.linalg.norm(B)) if is_numpy(xp) else math.sqrt(max(inner(B, B, xp), 0.0)))


def top_eigenvectors(A, k: int, xp):
    """The eigenvectors of the ``k`` largest eigenvalues of the symmetric ``A``, by decreasing
    eigenvalue, each column's entry of largest magnitude made positive (the convention of
    :func:`cvxclust.rounding.spectral_embedding`), from one eigendecomposition on A's device."""
    n = A.shape[0]
    V = xp.flip(xp.linalg.eigh(A)[1][:, n - k:], axis=1)
    positive = xp.max(V, axis=0) >= -xp.min(V, axis=0)
    return V * (2.0 * xp.astype(positive, V.dtype) - 1.0)[None, :]
