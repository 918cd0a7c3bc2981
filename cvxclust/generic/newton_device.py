r"""The dual of :mod:`cvxclust.generic.newton` on a device of any array API library (``device=``
of :func:`cvxclust.solve` with ``method="newton"`` or ``"alm"``).

:class:`DeviceEqualityDual` is :class:`~cvxclust.generic.EqualityDual` with its arrays on the
device: the target ``T``, the multipliers, the full eigendecomposition of ``W(y)`` (one
``xp.linalg.eigh`` per evaluation of ``theta``), the products of the generalized Jacobian
``J(H) = Q (Omega o (Q^T H Q)) Q^T`` on the smaller side of the spectrum, Qi and Sun's diagonal
preconditioner, the conjugate gradients (:func:`cvxclust._array_ops.conjugate_gradients`, three
numbers per iteration to the host) and the restoration ``D^{-1/2} X D^{-1/2}``.  Only Python
floats reach the host inside the iteration.

The rows are held without their ``m x n^2`` sparse matrix (:class:`DeviceRows`): common row sums
(their indices and coefficients), the total sum, rows over diagonal entries only (the trace; an
``r x n`` array), and the entries fixed by ``L == U`` as index arrays.  Other rows are refused on
a device with a ValueError that names them.  Their adjoint adds values at indices
(:func:`scatter_add`): ``index_add_`` in PyTorch, ``cupyx.scatter_add`` in CuPy, and elsewhere
(array-api-strict, which the standard leaves without a scatter) a product with the ``k x size``
indicator of the indices, meant for small problems.

NumPy-only: the ``scipy.sparse`` rows of other shapes, SciPy's ``cg`` with its ``LinearOperator``
(NumPy keeps it, and its sparse product for fixed entries only, in :class:`EqualityDual`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .._array_api import Arrays, add_to_diagonal, diagonal
from .._array_ops import conjugate_gradients, frobenius, inner
from .compact import RowSumsBlock, TotalBlock
from .device import DeviceForm, moved
from .newton import DualPoint, EqualityDual
from .restoration import scale_to_diagonal
from .spectral_set import centred

__all__ = ["DeviceEqualityDual", "DeviceRows", "scatter_add"]


def _index(values: np.ndarray, arrays: Arrays):
    """A NumPy integer array as an int64 index array on the device of ``arrays``."""
    return arrays.xp.asarray(np.array(values, dtype=np.int64), device=arrays.device)  # a copy: torch writes


def scatter_add(index, values, size: int, arrays: Arrays):
    """A vector of ``size`` zeros with ``values`` added at ``index`` (repeated indices add up), on
    the device of ``arrays``."""
    xp = arrays.xp
    out = xp.zeros(size, dtype=arrays.dtype, device=arrays.device)
    if hasattr(out, "index_add_"):  # PyTorch
        return out.index_add_(0, index, values)
    if type(out).__module__.startswith("cupy"):
        import cupyx  # noqa: PLC0415 -- out is a CuPy array

        cupyx.scatter_add(out, index, values)
        return out
    # no scatter in the standard: the indicator of the indices, k x size
    hits = xp.astype(index[:, None] == xp.arange(size, device=arrays.device)[None, :], arrays.dtype)
    return values @ hits


class DeviceRows:
    """The rows of a :class:`~cvxclust.generic.compact.Rows` on a device: ``A(X)``, ``A^*(y)`` and
    the rows' squared coefficients against an ``n x n`` M (``sum_kl (A_r)_kl^2 M_kl``).

    Parameters
    ----------
    rows : Rows
        The host's rows.
    arrays : Arrays
        The namespace, device and dtype.
    method : str
        The method, for the ValueError that refuses a row of another shape.
    """

    def __init__(self, rows, arrays: Arrays, method: str):
        n = rows.n
        self.n, self.arrays, self.xp = n, arrays, arrays.xp
        self.parts, squares = [], []
        start = 0
        for block in rows.blocks:
            if isinstance(block, RowSumsBlock):
                self.parts.append(("sums", _index(block.I, arrays), moved(block.coef, arrays)))
                squares.append(block.coef ** 2 * (n + 1) / 2)  # coef^2 at (i, i), coef^2 / 4 at 2 n - 2 others
            elif isinstance(block, TotalBlock):
                self.parts.append(("total", moved(block.coef, arrays)))
                squares.append(block.coef ** 2 * n * n)
            else:
                block = sp.csr_matrix(block)
                off = np.flatnonzero(block.indices % (n + 1))
                if off.size:
                    row = start + int(np.searchsorted(block.indptr, off[0], side="right")) - 1
                    raise ValueError(f"method={method!r} runs on a device only where the rows are common row sums, "
                                     "sums of diagonal entries (the trace), the total sum and fixed entries; "
                                     f"row {row} of the standard form has an entry off the diagonal: pass NumPy "
                                     "arrays (device=None)")
                D = np.asarray(sp.csr_matrix((block.data, block.indices // (n + 1), block.indptr),
                                             shape=(block.shape[0], n)).todense())
                self.parts.append(("diagonal", moved(D, arrays)))
                squares.append((D ** 2).sum(axis=1))
            start += block.shape[0]
        #: each row's squared coefficients summed, on the host
        self.square_sums = np.concatenate(squares) if squares else np.zeros(0)

    def apply(self, X) -> list:
        """``A(X)`` for the symmetric ``n x n`` X, as a list of vectors (one per block)."""
        return self._per_row(X, squared=False)

    def adjoint(self, y, M):
        """``M + A^*(y)`` (``M`` an ``n x n`` array or None: zeros); the result, which the caller must use."""
        xp, arrays, n = self.xp, self.arrays, self.n
        if M is None:
            M = xp.zeros((n, n), dtype=arrays.dtype, device=arrays.device)
        start = 0
        for kind, *data in self.parts:
            stop = start + data[-1].shape[0]
            part = y[start:stop]
            if kind == "sums":
                w = scatter_add(data[0], part * data[1], n, arrays)
                M = M + (w[:, None] + w[None, :]) / 2
            elif kind == "total":
                M = M + xp.sum(part * data[0])
            else:
                M = add_to_diagonal(M, part @ data[0], xp)
            start = stop
        return M

    def squares(self, M) -> list:
        """``sum_kl (A_r)_kl^2 M_kl`` for each row, as a list of vectors (one per block)."""
        return self._per_row(M, squared=True)

    def _per_row(self, M, squared: bool) -> list:
        """``sum_kl (A_r)_kl M_kl`` (``squared``: of the squared coefficients) for each row."""
        xp = self.xp
        values = []
        for kind, *data in self.parts:
            weight = data[-1] * data[-1] if squared else data[-1]
            if kind == "sums":  # coef at (i, i), coef / 2 elsewhere in row and column i
                sums = xp.take(xp.sum(M, axis=1), data[0]) + xp.take(xp.sum(M, axis=0), data[0])
                values.append(weight * (xp.take(diagonal(M, xp), data[0]) / 2 + sums / 4) if squared
                              else weight * sums / 2)
            elif kind == "total":
                values.append(weight * xp.sum(M))
            else:
                values.append(weight @ diagonal(M, xp))
        return values


class DeviceEqualityDual(EqualityDual):
    """:class:`~cvxclust.generic.EqualityDual` on the device of ``arrays`` (module docstring).

    Parameters
    ----------
    form : DeviceForm
        The standard form's parts on the device (:func:`~cvxclust.generic.device.device_form`).
    arrays : Arrays
        The namespace, device and dtype.
    method : str
        The method, for the ValueError that refuses rows the device does not hold.
    """

    def __init__(self, form: DeviceForm, arrays: Arrays, method: str):  # noqa: PLW0231 -- no host rows
        host, xp = form.host, arrays.xp
        n = host.n
        self.form, self.arrays, self.xp = form, arrays, xp
        self.n, self.c, self.psd, self.constant = n, host.c, host.psd, host.constant
        self.T = -form.C / (2.0 * host.c) if host.c > 0 else xp.zeros((n, n), dtype=arrays.dtype, device=arrays.device)
        self.rows = DeviceRows(host.rows, arrays, method)
        self.m = host.m
        self.i, self.j = np.nonzero(np.triu(np.isfinite(host.L) & (host.L == host.U)))
        self._i, self._j = _index(self.i, arrays), _index(self.j, arrays)
        self._flat = _index(self.i * n + self.j, arrays)
        self._pairs = _index(np.r_[self.i * n + self.j, self.j * n + self.i], arrays)
        self._diagonal_only = bool(np.all(self.i == self.j))
        weight = np.where(self.i == self.j, 1.0, 0.5)
        self._size = host.m + self.i.size
        self.b = moved(np.concatenate([host.lo, host.L[self.i, self.j]]), arrays)
        self.entry_weight = moved(weight, arrays)
        self.square_sums = moved(np.concatenate([self.rows.square_sums, weight]), arrays)
        self.eigh_count = 0
        self.deflate = False

    @property
    def size(self) -> int:
        return self._size

    def _vector(self, parts):
        xp, arrays = self.xp, self.arrays
        return xp.concat(parts) if parts else xp.zeros(0, dtype=arrays.dtype, device=arrays.device)

    def apply(self, X):
        """``A(X)`` for a symmetric X: the rows, then the fixed entries."""
        xp = self.xp
        return self._vector([*self.rows.apply(X), xp.take(xp.reshape(X, (-1,)), self._flat)])

    def adjoint(self, y):
        """``A^*(y)``, a symmetric matrix (a new array)."""
        xp, n, m = self.xp, self.n, self.m
        if self._diagonal_only:  # a fixed diagonal: y on it
            M = add_to_diagonal(xp.zeros((n, n), dtype=self.arrays.dtype, device=self.arrays.device),
                                scatter_add(self._i, y[m:], n, self.arrays), xp)
        else:  # half of each multiplier at (i, j) and at (j, i)
            half = 0.5 * y[m:]
            M = xp.reshape(scatter_add(self._pairs, xp.concat([half, half]), n * n, self.arrays), (n, n))
        return self.rows.adjoint(y[:m], M) if m else M

    def start(self):
        """The multiplier of the solution without the cone (:meth:`EqualityDual.start`), by the
        conjugate gradients of the device."""
        rhs = 2.0 * self.c * (self.b - self.apply(self.T))
        if not self.m:
            return rhs / self.square_sums
        return conjugate_gradients(lambda d: self.apply(self.adjoint(d)), rhs, self.square_sums, rtol=1e-10,
                                   maxiter=500, xp=self.xp)

    def evaluate(self, y) -> DualPoint:
        """``theta``, its gradient and ``Pi_+(W(y))`` at y (one eigendecomposition with the cone)."""
        xp, n = self.xp, self.n
        W = self.adjoint(y) * (1.0 / (2.0 * self.c)) + self.T
        if self.deflate:
            W = centred(W)
        w = Q = positive = None
        if self.psd:
            w, Q = xp.linalg.eigh(W)
            self.eigh_count += 1
            positive = int(xp.sum(xp.astype(w > 0, xp.int64)))  # the last ones: w ascends
            if positive <= n // 2:
                V = Q[:, n - positive:] * xp.sqrt(w[n - positive:])[None, :]
                X = V @ V.T
            else:
                V = Q[:, :n - positive] * xp.sqrt(-w[:n - positive])[None, :]
                X = W + V @ V.T
        else:
            X = W
        value = self.dot(self.b, y) - self.c * inner(X, X, xp) + self.constant
        return DualPoint(y, value, self.b - self.apply(X), X, w, Q, positive)

    def hessian(self, point: DualPoint):
        """``d -> A(J(A^* d)) / (2c)`` (:meth:`EqualityDual.hessian`) as a function of d."""
        xp, n, scale = self.xp, self.n, 1.0 / (2.0 * self.c)
        if not self.psd:
            return lambda d: scale * self.apply(self.adjoint(d))
        w, Q, p = point.w, point.Q, point.positive
        complement = p > n // 2
        if complement:  # S the non-positive side, first in Q; 1 - Omega between S and the rest
            k = n - p
            QS, ordered = Q[:, :k], Q
            ws, wo = w[:k], w[k:]
            omega = -ws[:, None] / (wo[None, :] - ws[:, None])
        else:  # S the positive side, the last in Q
            k = p
            QS, ordered = Q[:, n - k:], xp.concat([Q[:, n - k:], Q[:, :n - k]], axis=1)
            ws, wo = w[n - k:], w[:n - k]
            omega = ws[:, None] / (ws[:, None] - wo[None, :])

        def product(d):
            H = self.adjoint(d)
            if self.deflate:
                H = centred(H)
            B = (QS.T @ H) @ ordered
            U = xp.concat([0.5 * B[:, :k], omega * B[:, k:]], axis=1)
            Y = QS @ (U @ ordered.T)  # J (or H - J) = Y + Y^T
            J = Y + Y.T
            return scale * self.apply(H - J if complement else J)

        return product

    def preconditioner(self, point: DualPoint):
        """Qi and Sun's diagonal preconditioner (:meth:`EqualityDual.preconditioner`)."""
        xp, n = self.xp, self.n
        if not self.psd:
            return self.square_sums / (2.0 * self.c)
        p, w = point.positive, point.w
        Q2 = point.Q * point.Q
        P2, N2 = Q2[:, n - p:], Q2[:, :n - p]
        wp, wn = w[n - p:], w[:n - p]
        s = xp.sum(P2, axis=1)
        K = P2 @ (wp[:, None] / (wp[:, None] - wn[None, :]))  # M_ij = s_i s_j + K_i . N2_j + K_j . N2_i
        si, sj = xp.take(s, self._i), xp.take(s, self._j)
        cross = xp.sum(xp.take(K, self._i, axis=0) * xp.take(N2, self._j, axis=0), axis=1) + \
            xp.sum(xp.take(K, self._j, axis=0) * xp.take(N2, self._i, axis=0), axis=1)
        rows = []
        if self.m:
            KN = K @ N2.T
            rows = self.rows.squares(s[:, None] * s[None, :] + KN + KN.T)
        return self._vector([*rows, self.entry_weight * (si * sj + cross)]) / (2.0 * self.c)

    def direction(self, point: DualPoint, rtol: float, maxiter: int, norm: float):
        """:meth:`EqualityDual.direction` by the conjugate gradients of the device."""
        hessian = self.hessian(point)
        diagonal_ = self.preconditioner(point)
        shift = min(1e-4, norm) * max(float(self.xp.mean(diagonal_)), 1e-300) if self.size else 0.0
        counter = [0]

        def system(d):
            counter[0] += 1
            return hessian(d) + shift * d

        direction = conjugate_gradients(system, point.gradient, diagonal_ + shift, rtol=rtol, maxiter=maxiter,
                                        xp=self.xp)
        return direction, counter[0]

    def norm(self, v) -> float:
        return frobenius(v, self.xp)

    def dot(self, a, b) -> float:
        return float(self.xp.sum(a * b))

    def entry_part(self, y):
        xp = self.xp
        return xp.concat([xp.zeros(self.m, dtype=y.dtype, device=self.arrays.device), y[self.m:]])

    def restore(self, X):
        """``D^{-1/2} X D^{-1/2}`` on the device (:func:`~cvxclust.generic.restoration.scale_to_diagonal`)."""
        return scale_to_diagonal(self.form, X)
