"""The generic solver's arrays on a device of any array API library (``device=`` of
:func:`cvxclust.solve`).

The reader (cvxpy to :class:`~cvxclust.generic.StandardForm`) and the splitting's linear
programs stay NumPy on the host; what the two-block ADMM iterates on is moved once, at the start,
to the device (:func:`device_form`): the dense cost, the entrywise bounds (a bound that is one
number off the diagonal and one on it stays two numbers, :class:`DeviceBound`), the centres of
the splitting, and the rows' values for the residuals.  The iteration, its eigendecompositions,
its certificates and the returned point then stay there; scalar figures come back as Python
floats.  NumPy-only: the consensus path (a factored Gram matrix of ``scipy.sparse`` rows), tied
entries, the partial eigendecomposition by index (SciPy's LAPACK driver).  The Newton methods
(``"newton"``, ``"alm"``) take the same device form and splitting, and hold their rows there
themselves (:mod:`cvxclust.generic.newton_device`).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._array_api import Arrays, check_device_memory, device_namespace, device_of, diagonal, library
from .._array_ops import frobenius, inner
from .compact import RowSumsBlock, TotalBlock, bound_sizes, off_and_diagonal

__all__ = ["DEVICE_COPIES", "DEVICE_METHODS", "DeviceBound", "DeviceForm", "arrays_for",
           "check_device_fits", "check_device_options", "device_form", "device_key", "device_split", "moved",
           "set_diagonal", "shared_device_form"]

#: the methods of :func:`cvxclust.solve` that run on a device (the others are NumPy-only); ``"lowrank"``
#: for a fixed diagonal alone (max-cut, :mod:`cvxclust.generic.lowrank_device`)
DEVICE_METHODS = ("generic", "dual-newton", "newton", "alm", "lowrank")
#: the dense ``n x n`` arrays each of them holds on the device, counted (not measured): the
#: generic ADMM's cost, state, image and copies (about 6), Anderson's differences (2 x 5), the
#: eigendecomposition's input, vectors and workspace (about 4), the kept point and temporaries,
#: with a margin; the dual Newton method's as on the host.  Newton's method: the cost and target
#: (2), the current and the trial point's X and eigenvectors (4), ``W`` and the
#: eigendecomposition's workspace (3), a Jacobian product's ``H``, ``Q^T H Q`` and its pieces, ``Y``
#: and ``J`` (about 5), the preconditioner's squares and products (about 4): 18, with a margin 20.
#: The augmented Lagrangian method: Newton's, plus the box multiplier and its extrapolation (2),
#: the proximal centre and the one before (2), the target (1), the bound's ``A^* y + Lambda``,
#: ``G`` and projection (3), dense bounds where they are not one number off the diagonal and one
#: on it (up to 4): 32, with a margin 34.  The low-rank method holds no ``n x n`` array but the cost
#: as the statement holds it: its figure counts ``n x r`` arrays of its factor of rank r, the
#: descent's iterate, trial, their products with the cost and gradients, the step's differences and
#: the temporaries of the retraction and the gradient (about 12), with a margin 16
#: (:func:`~cvxclust.generic.lowrank_device.lowrank_device_bytes` adds the Lanczos basis and the cost)
DEVICE_COPIES = {"generic": 32, "dual-newton": 16, "newton": 20, "alm": 34, "lowrank": 16}


def arrays_for(device, dtype) -> Arrays:
    """The namespace, device and dtype of ``device=`` and ``dtype=``
    (:func:`cvxclust._array_api.device_namespace`: None or ``"cpu"`` is NumPy)."""
    return device_namespace(device, dtype)


def moved(M, arrays: Arrays):
    """A copy of the NumPy array ``M`` on the device of ``arrays`` (never a view of it: an array
    of the CPU may share the host's memory, which the iteration updates in place)."""
    return arrays.asarray(np.array(M, dtype=float))


def set_diagonal(A, d, xp):
    """``A`` with its diagonal replaced by ``d`` (in place in PyTorch, elsewhere through an ``n x n``
    mask); returns the result, which the caller must use."""
    if hasattr(A, "diagonal") and hasattr(A, "copy_"):  # torch
        A.diagonal().copy_(d)
        return A
    n = A.shape[0]
    eye = xp.eye(n, dtype=xp.bool, device=device_of(A))
    return xp.where(eye, d[:, None], A)


class DeviceBound:
    """An entrywise bound of the ``n x n`` X on a device: two numbers (``off`` the diagonal and
    on it) where the host's bound is a :func:`~cvxclust.generic.compact.constant_bound` view,
    else an ``n x n`` array moved once.

    Parameters
    ----------
    M : ndarray of shape (n, n)
        The host's bound.
    arrays : Arrays
        The namespace, device and dtype.
    """

    def __init__(self, M: np.ndarray, arrays: Arrays):
        self.pair = off_and_diagonal(M)
        self.array = moved(M, arrays) if self.pair is None else None
        self.xp, self.arrays, self.n = arrays.xp, arrays, M.shape[0]
        self.finite = bool(np.isfinite(self.pair).any()) if self.pair is not None else bool(np.isfinite(M).any())

    def entries(self, f, M, *others):
        """``f(*M, bound, *other bounds)`` entrywise for an ``n x n`` array ``M`` or a tuple of
        them (``f`` takes numbers or arrays as the bounds), without an ``n x n`` array of a
        compact bound."""
        bounds, Ms = (self, *others), (M if isinstance(M, tuple) else (M,))
        if all(b.pair is not None for b in bounds):
            xp = self.xp
            out = f(*Ms, *(b.pair[0] for b in bounds))
            if any(out is A for A in Ms):  # its diagonal is written next: never into an argument
                out = xp.asarray(out, copy=True)
            return set_diagonal(out, f(*(diagonal(A, xp) for A in Ms), *(b.pair[1] for b in bounds)), xp)
        return f(*Ms, *(b.dense() for b in bounds))

    def dense(self):
        """The bound as an ``n x n`` array (formed once where it is compact)."""
        if self.array is None:  # a compact bound beside a dense one: formed once
            xp, arrays, (off, on) = self.xp, self.arrays, self.pair
            full = xp.full((self.n, self.n), off, dtype=arrays.dtype, device=arrays.device)
            self.array = set_diagonal(full, xp.full((self.n,), on, dtype=arrays.dtype, device=arrays.device), xp)
        return self.array

    def map(self, f) -> DeviceBound:
        """The bound ``f(bound, xp)`` (``f`` entrywise, with ``xp`` NumPy for the two numbers)."""
        out = object.__new__(DeviceBound)
        out.xp, out.arrays, out.n, out.finite = self.xp, self.arrays, self.n, self.finite
        out.pair = None if self.pair is None else tuple(float(f(np.float64(v), np)) for v in self.pair)
        out.array = None if self.array is None else f(self.array, self.xp)
        return out


@dataclasses.dataclass(eq=False)
class DeviceForm:
    """The parts of a :class:`~cvxclust.generic.StandardForm` the two-block ADMM reads, on the
    device of ``arrays`` (:func:`device_form`); ``host`` is the form itself."""

    host: object
    arrays: Arrays
    C: object
    L: DeviceBound
    U: DeviceBound

    def __getattr__(self, name):  # n, c, sense, constant, psd, m, rows, lo, hi, cost ...: the host's
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.host, name)

    @property
    def xp(self):
        return self.arrays.xp

    def clip(self, M):
        """The projection of ``M`` onto the box."""
        xp = self.xp
        return self.L.entries(lambda X, low, high: xp.clip(X, low, high), M, self.U)

    def objective(self, X) -> float:
        """:meth:`StandardForm.objective <cvxclust.generic.StandardForm.objective>` on the device."""
        xp = self.xp
        value = self.c * inner(X, X, xp) + inner(self.C, X, xp) + self.constant
        return value if self.sense == "minimize" else -value

    def row_values(self, X):
        """``A(X)`` on the device."""
        xp = self.xp
        if not hasattr(self, "_rows"):
            self._rows = [_device_block(block, self.arrays) for block in self.rows.blocks]
        if not self._rows:
            return xp.zeros(0, dtype=self.arrays.dtype, device=self.arrays.device)
        return xp.concat([block(X) for block in self._rows])

    def residuals(self, X, *, spectrum: bool = True) -> dict[str, float]:
        """:meth:`StandardForm.residuals <cvxclust.generic.StandardForm.residuals>` on the device."""
        xp, arrays = self.xp, self.arrays
        scale = max(float(xp.max(xp.abs(X))), 1e-300)
        res = {"symmetry": frobenius(X - X.T, xp) / max(frobenius(X, xp), 1e-300)}
        S = (X + X.T) / 2
        if self.L.finite or self.U.finite:
            if not hasattr(self, "_sizes"):
                self._sizes = DeviceBound(bound_sizes(self.host.L, self.host.U), arrays)
            violation = self.L.entries(lambda Y, low, high, size: xp.maximum(low - Y, Y - high) / (
                max(size, scale) if isinstance(size, float) else xp.maximum(size, scale)), S, self.U, self._sizes)
            res["bounds"] = max(float(xp.max(violation)), 0.0)
        if self.m:
            if not hasattr(self, "_row_sizes"):
                lo, hi = self.lo, self.hi
                size = np.maximum(np.where(np.isfinite(lo), np.abs(lo), 0), np.where(np.isfinite(hi), np.abs(hi), 0))
                self._row_sizes = tuple(moved(v, arrays) for v in (lo, hi, size, self.row_norms))
            lo, hi, size, row_norms = self._row_sizes
            values = self.row_values(S)
            worst = xp.maximum(lo - values, values - hi) / xp.maximum(xp.maximum(size, row_norms * scale), 1e-300)
            res["rows"] = max(float(xp.max(worst)), 0.0)
        if self.psd and spectrum:
            w = xp.linalg.eigvalsh(S)
            res["psd"] = float(max(0.0, -float(w[0])) / max(float(xp.max(xp.abs(w))), 1e-300))
        return res


def _device_block(block, arrays: Arrays):
    """``X -> block(X)`` on the device for a block of :class:`~cvxclust.generic.compact.Rows`."""
    xp = arrays.xp
    if isinstance(block, RowSumsBlock):
        index = xp.asarray(np.array(block.I, dtype=np.int64), device=arrays.device)
        coef = moved(block.coef, arrays)
        return lambda X: coef * (xp.take(xp.sum(X, axis=1), index) + xp.take(xp.sum(X, axis=0), index)) / 2
    if isinstance(block, TotalBlock):
        coef = moved(block.coef, arrays)
        return lambda X: coef * xp.sum(X)
    # a sparse block: its entries of X gathered, then summed row by row through a cumulative sum
    indices = xp.asarray(block.indices.astype(np.int64), device=arrays.device)
    data = moved(block.data, arrays)
    ends = xp.asarray(block.indptr[1:].astype(np.int64), device=arrays.device)
    empty = moved(np.diff(block.indptr) == 0, arrays)

    def apply(X):
        terms = xp.take(xp.reshape(X, (-1,)), indices) * data
        total = xp.concat([xp.zeros(1, dtype=terms.dtype, device=arrays.device), xp.cumulative_sum(terms)])
        sums = xp.take(total, ends) - xp.take(total, xp.concat([xp.zeros(1, dtype=ends.dtype, device=arrays.device),
                                                                ends[:-1]]))
        return sums * (1.0 - empty)

    return apply


def check_device_fits(n: int, method: str, copies: int, arrays: Arrays) -> None:
    """A :class:`~cvxclust._memory.MemoryNeed` (a ValueError) where ``copies`` dense ``n x n``
    arrays of ``method`` would not fit in the free memory of the device of ``arrays``."""
    check_device_memory(copies * n * n * np.dtype(str(arrays.dtype).rsplit(".", 1)[-1]).itemsize,
                        f"method={method!r} on a problem of order {n} (about {copies} dense {n} x {n} arrays)",
                        arrays, "use a smaller problem, or method='lowrank' on the host")


def device_key(arrays: Arrays) -> tuple[str, str, str]:
    """The library, device and dtype of ``arrays`` as strings, a key for the parts moved there
    (``device_namespace`` and the arrays themselves name a CUDA device by its index)."""
    return library(arrays.xp), str(arrays.device), str(arrays.dtype)


def device_form(form, arrays: Arrays) -> DeviceForm:
    """``form``'s dense cost and bounds on the device of ``arrays`` (the cost densified once on
    the host where it has a sparse part: the callers check first that it fits,
    :func:`check_device_fits`)."""
    return DeviceForm(form, arrays, moved(form.C, arrays), DeviceBound(form.L, arrays), DeviceBound(form.U, arrays))


def device_split(split, arrays: Arrays, method: str = "generic"):
    """The splitting (read with ``project_centre=False``) with its centres moved to the device and
    projected onto the spectral set there; a ValueError where rows tie entries, or, for
    ``method="generic"``, where rows are left beside the spectral set (the consensus path): those
    run on NumPy only (the other methods dualise those rows)."""
    rows_left = method == "generic" and split.A.shape[0]
    if rows_left or split.ties is not None:
        what = (f"{split.A.shape[0]} constraint rows are neither bounds, common row sums nor the trace"
                if rows_left else "constraint rows tie entries of X to each other")
        raise ValueError(f"method={method!r} runs on a device only where the rows are bounds, common row sums and "
                         f"the trace; here {what}: pass NumPy arrays (device=None)")
    spectral = split.spectral

    def move(M):
        if M is None:
            return None
        return moved(M, arrays) if spectral.trivial else spectral.project(moved(M, arrays))

    return dataclasses.replace(split, centre=move(split.centre), psd_centre=move(split.psd_centre))


def shared_device_form(relaxation, arrays: Arrays) -> DeviceForm:
    """The device form of ``relaxation``'s standard form on the device of ``arrays``: the
    relaxation's own copy where it keeps one (``relaxation.device_form``), else :func:`device_form`."""
    shared = getattr(relaxation, "device_form", None)
    return shared(arrays) if shared is not None else device_form(relaxation.standard_form(), arrays)


def check_device_options(method: str, arrays: Arrays) -> None:
    """A ValueError where ``method`` does not run on the device of ``arrays``."""
    if not arrays.numpy and method not in DEVICE_METHODS:
        raise ValueError(f"method={method!r} runs on NumPy only; on device={arrays.device!r} use one of "
                         f"{list(DEVICE_METHODS)} (or 'auto', which picks among them)")

