r"""Products of a sparse matrix with a tall factor, ``C @ V`` for C of order n and V of shape
``(n, r)``, in contiguous row blocks over a small pool of threads.

SciPy's compressed-sparse-row product is a loop in C++ that releases the GIL, so blocks of rows
run in threads at once, each writing its rows of one preallocated output.  Row i of ``C @ V`` is
the sum over row i's nonzeros in their stored order, whichever block computes it: the threaded
product equals the serial one bit for bit.  The blocks hold about equal numbers of nonzeros.

The dense arithmetic on ``(n, r)`` arrays of a step runs over the same threads by chunks of
rows (:class:`RowBlocks`), whose NumPy ufuncs release the GIL too.  One pool, as large as the
most threads asked for, is shared by every caller in turn (a task run in it must not map over
blocks itself); the BLAS of the threads' own small reductions is held to one thread while they
run.

:data:`PRODUCT_THREADS` is the number of threads, read at each solve.  The products and the
chunks' reductions do not depend on it, so neither do the iterates: one thread gives the same
numbers, serially.  In processes that already share the cores (several joblib workers), set it
to 1; :func:`cvxclust.parallel.run_tasks` holds it to each task's BLAS threads
(:func:`limited_product_threads`).
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from numbers import Integral
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp

from ..linalg import blas_threads
from ..parameters import Interval, check_parameter

try:  # SciPy's kernel ``Y += A X`` into a given output; the public product allocates its own
    from scipy.sparse._sparsetools import csr_matvec, csr_matvecs
except ImportError:  # pragma: no cover - a SciPy without it: the public product, copied
    csr_matvec = csr_matvecs = None

__all__ = ["PRODUCT_THREADS", "RowBlocks", "SparseProduct", "available_threads", "cost_product",
           "limited_product_threads",
           "product_threads"]


_THREADS = Interval(Integral, 1, None, closed="left")


def available_threads() -> int:
    """The cores this process may run on (its CPU affinity where the system tells it, else
    :func:`os.cpu_count`)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - systems without affinity
        return max(1, os.cpu_count() or 1)


#: The threads (row blocks) of the low-rank method's products with a sparse cost and of its
#: Riemannian steps' arithmetic: the cores available by default; 1 runs everything serially.
PRODUCT_THREADS = available_threads()



#: the most threads in the current context (:func:`limited_product_threads`), None: no limit
_limit: contextvars.ContextVar = contextvars.ContextVar("product_threads_limit", default=None)


def product_threads() -> int:
    """:data:`PRODUCT_THREADS` as it is set now, checked (a ValueError names it unless it is an
    int >= 1), at most the limit of :func:`limited_product_threads` where one holds."""
    threads = int(check_parameter("PRODUCT_THREADS", PRODUCT_THREADS, [_THREADS], "cvxclust.generic.sparse_product"))
    limit = _limit.get()
    return threads if limit is None else min(threads, limit)


@contextlib.contextmanager
def limited_product_threads(limit: int | None):
    """A context in which :func:`product_threads` is at most ``limit`` (None: no limit), in this
    thread and context only (a context variable: tasks run side by side in threads each hold
    their own); the module's :data:`PRODUCT_THREADS` is left as it is."""
    if limit is not None:
        limit = int(check_parameter("limit", limit, [_THREADS], "limited_product_threads"))
    token = _limit.set(limit)
    try:
        yield
    finally:
        _limit.reset(token)


_pool: ThreadPoolExecutor | None = None
_pool_size = 0


def _shared_pool(threads: int) -> ThreadPoolExecutor:
    """The one pool of the module, rebuilt larger where more threads are asked for."""
    global _pool, _pool_size
    if _pool is None or _pool_size < threads:
        if _pool is not None:
            _pool.shutdown(wait=True)
        _pool, _pool_size = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="cvxclust-rows"), threads
    return _pool


class RowBlocks:
    """A partition of the rows ``0..n-1`` into contiguous chunks, run in contiguous groups, one
    group per thread.

    Parameters
    ----------
    n : int
        The number of rows.
    threads : int
        The number of groups, each run by a thread (1: all in the calling thread).
    rows : int or None
        The most rows of a chunk (chunks of equal size but the last); None: one chunk per thread.
        The chunks then do not depend on ``threads``, nor does anything computed from them chunk
        by chunk, and a chunk small enough for the cache makes the passes of several ufuncs over
        its rows run from the cache.
    indptr : ndarray of shape (n + 1,), optional
        A CSR matrix's row pointers: where ``rows`` is None the chunks then hold about equal
        numbers of nonzeros (otherwise about equal numbers of rows).
    """

    def __init__(self, n: int, threads: int = 1, *, rows: int | None = None, indptr: np.ndarray | None = None):
        threads = check_parameter("threads", threads, [_THREADS], "RowBlocks")
        self.n = int(n)
        if rows is not None:
            edges = np.append(np.arange(0, self.n, max(1, int(rows))), self.n)
        elif indptr is None or threads == 1:
            edges = np.linspace(0, self.n, min(int(threads), max(self.n, 1)) + 1).round().astype(int)
        else:
            edges = np.searchsorted(indptr, np.linspace(0, indptr[-1], min(int(threads), self.n) + 1), side="left")
            edges[0], edges[-1] = 0, self.n
            edges = np.maximum.accumulate(edges)
        self.slices = [slice(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:]) if b > a] or [slice(0, 0)]
        count = min(int(threads), len(self.slices))
        cuts = np.linspace(0, len(self.slices), count + 1).round().astype(int)
        self.groups = [self.slices[a:b] for a, b in zip(cuts[:-1], cuts[1:])]

    @property
    def threads(self) -> int:
        return len(self.groups)

    def map(self, function) -> list:
        """``[function(rows) for rows in self.slices]``, each group of chunks in a thread of its own
        where there are several."""
        if len(self.groups) == 1:
            return [function(rows) for rows in self.slices]
        parts = _shared_pool(len(self.groups)).map(lambda group: [function(rows) for rows in group], self.groups)
        return [value for part in parts for value in part]

    def sum(self, function) -> float:
        """The sum of ``function(rows)`` over the chunks in their order (one chunk: its value)."""
        parts = self.map(function)
        return parts[0] if len(parts) == 1 else float(sum(parts))

    def serial_blas(self):
        """A context that holds the BLAS to one thread while the groups run in threads (a no-op for
        one group)."""
        return blas_threads(0) if len(self.groups) > 1 else contextlib.nullcontext()


class SparseProduct:
    """``V -> C @ V`` for a sparse C, in row blocks over threads (module docstring).

    Parameters
    ----------
    matrix : scipy.sparse matrix of shape (n, n)
        C (held as CSR; not copied where it already is).
    threads : int
        The number of row blocks (:class:`RowBlocks`).
    """

    def __init__(self, matrix, threads: int = 1):
        self.matrix = sp.csr_matrix(matrix)
        if not self.matrix.has_sorted_indices:
            self.matrix = self.matrix.sorted_indices()
        self.shape = self.matrix.shape
        self.blocks = RowBlocks(self.shape[0], threads, indptr=self.matrix.indptr)
        # each block's rows as a CSR matrix of its own (views of C's arrays but the row pointers)
        self._parts = {rows.start: self._rows(rows) for rows in self.blocks.slices}

    def _rows(self, rows: slice) -> tuple:
        C = self.matrix
        start, stop = C.indptr[rows.start], C.indptr[rows.stop]
        return (C.indptr[rows.start:rows.stop + 1] - start, C.indices[start:stop], C.data[start:stop])

    def __call__(self, V: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """``C @ V`` for V of shape ``(n, r)`` or ``(n,)``, into ``out`` where given."""
        V = np.ascontiguousarray(V, dtype=np.result_type(V.dtype, self.matrix.dtype))
        if V.shape[0] != self.shape[1] or V.ndim > 2:
            raise ValueError(f"V must have {self.shape[1]} rows and at most two axes, got shape {V.shape}")
        if out is None:
            out = np.empty(V.shape, dtype=V.dtype)
        if csr_matvecs is None or V.dtype != self.matrix.dtype or not out.flags.c_contiguous:
            self.blocks.map(lambda rows: np.copyto(out[rows], self.matrix[rows] @ V))
            return out
        self.blocks.map(lambda rows: self._block(V, out, rows))
        return out

    def _block(self, V, out, rows: slice) -> None:
        indptr, indices, data = self._parts[rows.start]
        block = out[rows]
        block.fill(0.0)
        if V.ndim == 1:
            csr_matvec(rows.stop - rows.start, self.shape[1], indptr, indices, data, V, block)
        else:
            csr_matvecs(rows.stop - rows.start, self.shape[1], V.shape[1], indptr, indices, data, V.ravel(),
                        block.ravel())

    __matmul__ = __call__


def cost_product(cost, threads: int = 1):
    """``V -> C @ V`` for a :class:`~cvxclust.generic.cost.Cost`: a :class:`SparseProduct` of its
    sparse part where C is only that (no copy to add into), its own ``matmul`` otherwise (also for
    another operator with a ``matmul`` and no sparse part)."""
    if getattr(cost, "sparse_part", None) is not None and cost.dense_part is None and cost.ones == 0.0 \
            and cost.lowrank_part is None:
        return SparseProduct(cost.sparse_part, threads)
    return cost.matmul
