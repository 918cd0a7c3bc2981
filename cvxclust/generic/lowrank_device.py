r"""The low-rank method (:mod:`cvxclust.generic.lowrank`) on any array API device: the path of a
fixed diagonal alone (max-cut), ``cvxclust.solve(problem, method="lowrank", device=...)``.

What runs there, in the namespace ``xp`` of :func:`cvxclust._array_api.device_namespace` (PyTorch
on ``"cuda"`` or a ``torch.device``; any library of the Python array API standard through the
same :class:`~cvxclust._array_api.Arrays`):

* **the cost**, moved once (:class:`DeviceCost`): a dense part as an array, a low-rank part as its
  two factors, a ``scipy.sparse`` part as a PyTorch sparse CSR tensor (the only library with
  sparse products among those the package runs on: with another, a sparse cost is a TypeError);
* **the factor** V of shape ``(n, r)`` and the Riemannian Barzilai-Borwein descent on the product
  of spheres (:func:`device_descent`, the iteration of :mod:`cvxclust.generic.lowrank_oblique`
  with the same constants), each step one product ``C V`` on the device;
* **the certificate**: the diagonal multipliers ``w_i = (C V)_i . v_i / d_i``, the dual slack
  ``S = C - Diag(w)`` as products, and its smallest eigenvalue by thick-restart Lanczos with full
  reorthogonalization (:func:`device_lanczos`), whose basis stays on the device: only the
  projected matrix's entries (at most :data:`LANCZOS_STEPS` numbers a product) come to the host,
  where its small eigenproblem is solved.  The bound is that of
  :func:`~cvxclust.generic.lowrank_certificate.slack_bound`, exactly as rigorous: the Ritz value
  ``theta = u^T S u`` of the unit vector u, computed on the device, less the Ritz residual
  ``||S u - theta u||`` computed there too, less the rounding allowance ``8 n eps ||S||`` with
  ``eps`` the unit roundoff of the solve's dtype (:attr:`~cvxclust._array_api.Arrays.eps`): the
  allowance holds for float64 and is as wide as float32's unit roundoff makes it (about 5e8 times
  wider) in float32.  Orders up to
  :data:`~cvxclust.generic.lowrank_certificate.DENSE_ORDER` write S out from n products and take
  one ``eigh`` there, as the host does.

The other classes of the low-rank method (rows, ``X >= 0``, bounds on a diagonal that is not
fixed) run L-BFGS-B of SciPy and stay NumPy-only: on a device they are a ValueError that names
the part and the methods that run there.  Scalars (objective, gradient norm, step lengths, the
bound) come to the host as Python floats, a few per step; no n-vector or factor does inside the
iterations (random columns of a grown rank, and Lanczos's random start, are drawn on the host
and moved to the device, so that a solve there follows the NumPy one).
"""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from .._array_api import Arrays, check_device_memory, device_free_bytes, device_of, library, to_numpy
from .._memory import available_bytes
from ..solvers import Certificate
from .device import DEVICE_COPIES, DEVICE_METHODS, moved
from .lowrank_certificate import DENSE_ORDER
from .lowrank_form import lowrank_form
from .lowrank_oblique import LINE_SEARCH, ObliqueRun, oblique_rank

__all__ = ["LANCZOS_KEEP", "LANCZOS_STEPS", "DeviceCost", "DeviceOblique", "device_descent", "device_lanczos",
           "device_state", "lowrank_device_bytes", "lowrank_on_device", "refuse_on_device",
           "square_fits"]

_TINY = 1e-300
#: the line search of :mod:`cvxclust.generic.lowrank_oblique`: Armijo's fraction, the nonmonotone
#: average's weight, the backtracking factor and the backtracks at most
_ARMIJO, _ETA, _BACKTRACK, _MAX_BACKTRACKS = LINE_SEARCH
#: the Lanczos basis's length, the Ritz vectors a restart keeps, and the restarts at most
LANCZOS_STEPS, LANCZOS_KEEP, _RESTARTS = 100, 30, 30
#: the Ritz residual accepted as a fraction of |theta| (far from optimal, as on the host)
_FRACTION = 0.05


# ----------------------------------------------------------------------------------------------
# the cost
# ----------------------------------------------------------------------------------------------
def _sparse_tensor(S, arrays: Arrays):
    """The ``scipy.sparse`` matrix S as a PyTorch sparse CSR tensor on the device of ``arrays``."""
    import torch  # noqa: PLC0415 -- the library of the arrays

    S = S.tocsr()
    with warnings.catch_warnings():  # "in beta state": its products with dense matrices are what is used
        warnings.filterwarnings("ignore", "Sparse CSR tensor support is in beta", UserWarning)
        return torch.sparse_csr_tensor(torch.from_numpy(S.indptr.astype(np.int64)),
                                       torch.from_numpy(S.indices.astype(np.int64)),
                                       torch.from_numpy(np.asarray(S.data, dtype=np.float64)).to(arrays.dtype),
                                       size=S.shape, device=arrays.device, check_invariants=False)


def refuse_on_device(form, kind, arrays: Arrays) -> None:
    """A ValueError where the low-rank method cannot take ``form`` on the device of ``arrays``
    (anything but a fixed diagonal alone), a TypeError where its cost has a sparse part and the
    library is not PyTorch."""
    where = f"device={arrays.device!r} ({library(arrays.xp)})"
    parts = [part for part, present in (
        ("no fixed diagonal", kind.diagonal is None), (f"{form.m} constraint rows", form.m),
        ("X >= 0", kind.nonnegative), ("bounds on the diagonal", kind.box is not None)) if present]
    if parts:
        dense = [method for method in DEVICE_METHODS if method != "lowrank"]
        raise ValueError(f"method='lowrank' runs on {where} only where a fixed diagonal is the only constraint "
                         f"besides X >> 0 (max-cut); this problem has {' and '.join(parts)}, which the method holds "
                         f"by SciPy's L-BFGS-B on NumPy only: solve it without device=, or on the device with one of "
                         f"{dense}")
    if form.cost.sparse_part is not None and library(arrays.xp) != "torch":
        raise TypeError(f"method='lowrank' with {where}: the problem's cost is a scipy.sparse matrix, which only "
                        "PyTorch holds sparse on a device (pass device='cuda' or a torch.device, or state the cost "
                        "as a dense array)")


def lowrank_on_device(form, arrays: Arrays) -> bool:
    """Whether the low-rank method runs ``form`` on the device of ``arrays`` (:func:`refuse_on_device`)
    and fits there at its starting rank (:func:`oblique_rank`)."""
    try:
        refuse_on_device(form, lowrank_form(form), arrays)
        check_device_memory(lowrank_device_bytes(form, oblique_rank(form.n), arrays), "method='lowrank'", arrays, "")
    except (ValueError, TypeError):  # MemoryNeed is a ValueError
        return False
    return True


class DeviceCost:
    """The linear coefficient (:class:`~cvxclust.generic.cost.Cost`) on the device of ``arrays``:
    its products ``C @ V`` there (module docstring).

    Parameters
    ----------
    cost : Cost
        The host's coefficient (not modified).
    arrays : Arrays
        The namespace, device and dtype.
    """

    def __init__(self, cost, arrays: Arrays):
        self.xp, self.n, self.ones, self.error = arrays.xp, cost.n, cost.ones, cost.error
        self.dense = None if cost.dense_part is None else moved(cost.dense_part, arrays)
        self.sparse = None if cost.sparse_part is None else _sparse_tensor(cost.sparse_part, arrays)
        self.lowrank = None if cost.lowrank_part is None else tuple(moved(p, arrays) for p in cost.lowrank_part)

    def matmul(self, V):
        """``C @ V`` for V of shape ``(n, k)`` on the device."""
        xp = self.xp
        terms = [part @ V for part in (self.dense, self.sparse) if part is not None]
        if self.ones:
            terms.append(xp.broadcast_to(self.ones * xp.sum(V, axis=0)[None, :], V.shape))
        if self.lowrank is not None:
            U, values = self.lowrank
            terms.append(U @ (values[:, None] * (U.T @ V)))
        out = terms[0] if terms else xp.zeros_like(V)
        for term in terms[1:]:
            out = out + term
        return out

    __matmul__ = matmul


def lowrank_device_bytes(form, rank: int, arrays: Arrays) -> float:
    """Bytes the oblique path holds on the device at ``rank``: :data:`DEVICE_COPIES` ``["lowrank"]``
    copies of the ``n x rank`` factor, the Lanczos basis (:data:`LANCZOS_STEPS` n-vectors and a few
    more) and the cost's parts there."""
    n, size = form.n, np.dtype(str(arrays.dtype).rsplit(".", 1)[-1]).itemsize
    cost = form.cost
    held = (DEVICE_COPIES["lowrank"] * rank + LANCZOS_STEPS + 4) * n * size
    if cost.dense_part is not None:
        held += n * n * size
    if cost.sparse_part is not None:
        held += cost.sparse_part.nnz * (size + 8) + (n + 1) * 8
    if cost.lowrank_part is not None:
        held += cost.lowrank_part[0].size * size
    return float(held)


def square_fits(V) -> bool:
    """Whether ``V V^T`` takes at most a quarter of the free memory where V is (a CUDA device's,
    else the host's)."""
    n = V.shape[0]
    size = np.dtype(str(V.dtype).rsplit(".", 1)[-1]).itemsize
    free = device_free_bytes(device_of(V)) if not isinstance(V, np.ndarray) else None
    if free is None:
        free = available_bytes()
    return free is None or n * n * size <= free / 4


# ----------------------------------------------------------------------------------------------
# the descent and Lanczos
# ----------------------------------------------------------------------------------------------
def _retract(V, sqrt_d, xp):
    """V with each row scaled to the norm ``sqrt_d`` (a zero row stays zero)."""
    return V * (sqrt_d / xp.maximum(xp.sqrt(xp.sum(V * V, axis=1)), _TINY))[:, None]


def _gradient(V, CV, inv_d, xp):
    """``2 (C V - Diag(w) V)``, ``w_i = (C V)_i . v_i / d_i`` (0 where ``d_i = 0``)."""
    return 2.0 * (CV - (xp.sum(CV * V, axis=1) * inv_d)[:, None] * V)


def _dot(A, B, xp) -> float:
    return float(xp.sum(A * B))


def device_descent(matmul, V, sqrt_d, xp, *, gtol: float, max_iter: int, deadline: float = math.inf) -> ObliqueRun:
    """:func:`~cvxclust.generic.lowrank_oblique.oblique_descent` in the namespace ``xp`` (V and
    ``sqrt_d`` its arrays, ``matmul`` a product there): the same steps, lengths and tests."""
    d = sqrt_d * sqrt_d
    inv_d = xp.where(d > 0, 1.0 / xp.where(d > 0, d, 1.0), 0.0)
    V = _retract(V, sqrt_d, xp)
    CV = matmul(V)
    value = _dot(V, CV, xp)
    G = _gradient(V, CV, inv_d, xp)
    g2 = _dot(G, G, xp)
    products, iterations = 1, 0
    reference, weight = value, 1.0  # the nonmonotone average of the values and its weight
    step = 0.1 * math.sqrt(_dot(V, V, xp)) / max(math.sqrt(g2), _TINY)
    while iterations < max_iter and math.sqrt(g2) > gtol and time.perf_counter() < deadline:
        for _ in range(_MAX_BACKTRACKS):
            trial = _retract(V - step * G, sqrt_d, xp)
            C_trial = matmul(trial)
            products += 1
            trial_value = _dot(trial, C_trial, xp)
            if trial_value <= reference - _ARMIJO * step * g2:
                break
            step *= _BACKTRACK
        else:  # no decrease at a step near rounding: V is as stationary as the arithmetic allows
            break
        G_trial = _gradient(trial, C_trial, inv_d, xp)
        g2_trial = _dot(G_trial, G_trial, xp)
        s_, y_ = trial - V, G_trial - G
        ss, yy = _dot(s_, s_, xp), _dot(y_, y_, xp)
        sy = abs(_dot(trial, y_, xp) - _dot(V, y_, xp))
        iterations += 1
        V, CV, G, value, g2 = trial, C_trial, G_trial, trial_value, g2_trial
        if sy > 0:  # the two Barzilai-Borwein lengths in turn
            step = ss / sy if iterations % 2 else sy / max(yy, _TINY)
        reference = (_ETA * weight * reference + value) / (_ETA * weight + 1.0)
        weight = _ETA * weight + 1.0
    return ObliqueRun(V=V, value=value, grad_norm=math.sqrt(g2), iterations=iterations, products=products)


def _ritz(apply, u, xp) -> tuple[float, object, float]:
    """``(theta, u, ||S u - theta u||)`` for the unit vector u, computed from one product."""
    u = u / max(math.sqrt(_dot(u, u, xp)), _TINY)
    Su = apply(u[:, None])[:, 0]
    theta = _dot(u, Su, xp)
    r = Su - theta * u
    return theta, u, math.sqrt(_dot(r, r, xp))


def _on(values: np.ndarray, like, xp):
    """The NumPy array ``values`` in the namespace, device and dtype of the array ``like``."""
    return xp.asarray(np.asarray(values, dtype=np.float64), dtype=like.dtype, device=device_of(like))


def device_lanczos(apply, v0, xp, *, residual: float, fraction: float = _FRACTION, steps: int = LANCZOS_STEPS,
                   keep: int = LANCZOS_KEEP, restarts: int = _RESTARTS) -> tuple[float, object, float, int]:
    """``(theta, u, residual, products)``: a Ritz pair of the smallest eigenvalue of the symmetric
    operator ``apply`` (``X -> S X`` for X of shape ``(n, k)`` on the device), by the Lanczos process
    with full reorthogonalization (classical Gram-Schmidt, twice) from ``v0`` and thick restarts
    (K. Wu, H. Simon, "Thick-restart Lanczos method for large symmetric eigenvalue problems", SIAM
    Journal on Matrix Analysis and Applications 22(2), 2000): a basis of ``steps`` vectors is cut to
    its ``keep`` smallest Ritz vectors and the last direction; stopped where the Ritz residual's
    estimate ``beta |s_m|`` is at most ``max(residual, fraction |theta|)`` (far from optimal, the
    bound is then within 5% of the Ritz value's, as on the host).  The basis stays on the device; the
    projected matrix's entries (the Gram-Schmidt coefficients, at most ``steps`` numbers a product)
    come to the host, where its small eigenproblem is solved.  The residual returned is
    ``||S u - theta u||`` computed on the device, whatever the estimate."""
    n = v0.shape[0]
    steps = max(1, min(steps, n))
    keep = max(1, min(keep, steps - 2))
    products, kept = 0, 0
    # the basis as rows (each vector contiguous, as sparse products want it), written row by row
    Q = xp.zeros((steps, n), dtype=v0.dtype, device=device_of(v0))
    H = np.zeros((steps, steps))  # the projection Q S Q^T
    Q[0, :] = v0 / max(math.sqrt(_dot(v0, v0, xp)), _TINY)
    for _ in range(restarts):
        for j in range(kept, steps):
            w = apply(Q[j, :][:, None])[:, 0]
            products += 1
            h = Q[:j + 1, :] @ w
            w = w - Q[:j + 1, :].T @ h
            correction = Q[:j + 1, :] @ w  # the second pass, for rounding
            w = w - Q[:j + 1, :].T @ correction
            H[:j + 1, j] = H[j, :j + 1] = to_numpy(h + correction)
            beta = math.sqrt(_dot(w, w, xp))
            values, vectors = np.linalg.eigh(H[:j + 1, :j + 1])
            estimate = beta * abs(float(vectors[j, 0]))
            if estimate <= max(residual, fraction * abs(float(values[0]))) or beta <= _TINY or j + 1 == steps:
                break
            Q[j + 1, :] = w / beta
        m = j + 1
        theta, u, found = _ritz(apply, _on(vectors[:, 0], Q, xp) @ Q[:m, :], xp)
        products += 1
        if found <= max(residual, fraction * abs(theta)) or beta <= _TINY:
            break
        # the thick restart: the smallest Ritz vectors, then the last direction (orthogonal to them)
        kept = min(keep, m - 1)
        Q[:kept, :] = _on(vectors[:, :kept].T, Q, xp) @ Q[:m, :]
        Q[kept, :] = w / beta
        H[:] = 0.0
        H[:kept, :kept] = np.diag(values[:kept])
    return theta, u, found, products


def _smallest(apply, n: int, xp, arrays: Arrays, start, rng, residual: float) -> tuple[float, object, float, int]:
    """:func:`device_lanczos` from ``start`` perturbed (or a random vector), or, up to
    :data:`DENSE_ORDER`, the exact smallest eigenpair of S written out from n products."""
    if n <= DENSE_ORDER:
        M = apply(xp.eye(n, dtype=arrays.dtype, device=arrays.device))
        vectors = xp.linalg.eigh((M + M.T) / 2)[1]
        theta, u, found = _ritz(apply, vectors[:, 0], xp)
        return theta, u, found, n + 1
    noise = arrays.asarray(rng.standard_normal(n))
    v0 = noise if start is None else start + (1e-3 * noise)
    return device_lanczos(apply, v0, xp, residual=residual)


# ----------------------------------------------------------------------------------------------
# the method's state on the device
# ----------------------------------------------------------------------------------------------
class DeviceOblique:
    """The parts of :class:`~cvxclust.generic.lowrank.LowRank` that touch the factor, for a fixed
    diagonal alone on a device: its descent (:func:`device_descent`), the factor, its certificate
    and the growth of its rank.  The solver's schedule (gradient tolerances, checks, when to grow)
    is the host's."""

    def __init__(self, solver, form, kind, arrays: Arrays):
        self.solver, self.arrays, self.xp = solver, arrays, arrays.xp
        self.cost = DeviceCost(form.cost, arrays)
        self.d = moved(kind.diagonal, arrays)
        self.sqrt_d = moved(kind.sqrt_diagonal, arrays)

    def descent(self, matmul, W, sqrt_d, **options) -> ObliqueRun:
        """:func:`device_descent` (``sqrt_d`` the host's is replaced by the device's)."""
        return device_descent(matmul, W, self.sqrt_d, self.xp, **options)

    def factor(self, W):
        """V: W with its rows scaled to ``sqrt(d)``."""
        return _retract(W, self.sqrt_d, self.xp)

    def certify(self, state, final: bool) -> Certificate:
        """:meth:`~cvxclust.generic.lowrank_check.LowRankChecks.certify` on the device."""
        solver, kind, xp = self.solver, state.kind, self.xp
        V = self.factor(state.W)
        CV = self.cost.matmul(V)
        raw = _dot(V, CV, xp)
        state.value = abs(raw)
        w = xp.where(self.d > 0, xp.sum(CV * V, axis=1) / xp.where(self.d > 0, self.d, 1.0), 0.0)
        size = max(state.value, solver.gap_floor, _TINY)
        found = self._bound(state, w, aim=0.05 * solver.tol * size / kind.tau)
        state.lambda_min = found["lambda_min"]
        solver.next_gradient_tolerance(state, found["lambda_min"])
        state.start_vector = found["vector"]
        diagonal = xp.sum(V * V, axis=1)
        scale = max(float(xp.max(diagonal)), _TINY)
        bounds = float(xp.max(xp.abs(diagonal - self.d) / xp.maximum(self.d, scale)))
        return solver.factor_certificate(state, found, raw, {"symmetry": 0.0, "bounds": bounds, "psd": 0.0},
                                          V.shape[1], final)

    def _bound(self, state, w, aim: float) -> dict:
        """The bound ``d^T w + tau min(0, lambda) - tau error`` of the slack ``C - Diag(w)``
        (:func:`~cvxclust.generic.lowrank_certificate.slack_bound`, with this dtype's unit roundoff)."""
        xp, kind, n = self.xp, state.kind, state.form.n

        def apply(X):
            return self.cost.matmul(X) - w[:, None] * X

        theta, u, residual, products = _smallest(apply, n, xp, self.arrays, state.start_vector, state.rng, aim)
        norm = state.cost_norm + math.sqrt(_dot(w, w, xp))
        lam = theta - residual - 8.0 * n * self.arrays.eps * norm
        constant = _dot(self.d, w, xp)
        state.eigsh += 1
        state.lanczos_matvecs += products
        return {"bound": constant + kind.tau * min(0.0, lam) - kind.tau * self.cost.error, "lambda_min": lam,
                "vector": u, "products": products, "ritz_residual": residual}

    def grow(self, state, found, value, minimum) -> None:
        """The growth of :meth:`~cvxclust.generic.lowrank_check.LowRankChecks._grow_rank` on the
        device: the eigenvector and small random columns (drawn on the host), a quarter of the rank."""
        solver, xp = self.solver, self.xp
        rank = state.W.shape[1]
        if not solver.grows(state, found, value, minimum):
            return
        n = state.form.n
        extra = min(max(rank // 4 - 1, 0), state.max_rank - rank - 1)
        columns = [found["vector"][:, None]]
        if extra > 0:
            columns.append(self.arrays.asarray(state.rng.standard_normal((extra, n)).T / math.sqrt(n)))
        new = xp.concat(columns, axis=1)
        new = new * (1e-2 * math.sqrt(n) * xp.sqrt(xp.sum(state.W * state.W, axis=1)))[:, None]
        state.W = xp.concat([state.W, new], axis=1)


def device_state(solver, form, kind, rank: int, max_rank: int, arrays: Arrays) -> dict:
    """The fields of the state of :class:`~cvxclust.generic.lowrank.LowRank` on the device of
    ``arrays``: the device's parts, the random start (drawn on the host as NumPy's, moved once) and
    ``|<C, V V^T>|`` there.  Raises where the problem does not run there (:func:`refuse_on_device`)
    or does not fit (:class:`~cvxclust._memory.MemoryNeed`)."""
    refuse_on_device(form, kind, arrays)
    check_device_memory(lowrank_device_bytes(form, rank, arrays), f"method='lowrank' at rank {rank} on a problem of "
                        f"order {form.n}", arrays, "give a smaller rank")
    device = DeviceOblique(solver, form, kind, arrays)
    rng = np.random.default_rng(solver.random_state)
    W = arrays.asarray(rng.standard_normal((form.n, rank)))
    V = device.factor(W)
    return {"W": W, "rng": rng, "device": device, "matmul": device.cost.matmul, "descent": device.descent,
            "value": abs(_dot(V, device.cost.matmul(V), arrays.xp))}
