"""The standard form's large parts held compactly: entrywise bounds and the rows of the linear map.

A problem of the class often bounds X by one number everywhere (``X >= 0``), or one off the
diagonal and another on it (``diag(X) == 1``), and states its row sums as n rows of ``2 n - 1``
entries each.  Held as they are written, these cost five copies of an ``n x n`` matrix; here:

* :class:`Bound` accumulates a bound while the problem is read, as two numbers until an entry is
  bounded on its own, and gives it as a read-only ``n x n`` array (:func:`constant_bound`: a
  strided view of ``2 n - 1`` numbers where two numbers describe it), so that every consumer
  reads it as an array and a write into it raises instead of changing the problem;
* :class:`Rows` holds the rows as blocks, sparse matrices and :class:`RowSumsBlock` (the
  symmetrised row sums as their indices and coefficients), applies them and their adjoint block
  by block, and writes them into one sparse matrix only when that is asked for.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["Bound", "RowSumsBlock", "Rows", "TotalBlock", "bound_sizes", "constant_bound", "finite_count",
           "first_crossing", "held_bytes", "off_and_diagonal", "off_diagonal_all", "row_sums_matrix", "stack_rows"]


def constant_bound(off: float, diagonal: float, n: int) -> np.ndarray:
    """The read-only ``n x n`` array with ``diagonal`` on the diagonal and ``off`` elsewhere, a
    view of ``2 n - 1`` numbers (entry ``(i, j)`` is number ``n - 1 - i + j``)."""
    buffer = np.full(2 * n - 1, float(off))
    buffer[n - 1] = diagonal
    step = buffer.itemsize
    return np.lib.stride_tricks.as_strided(buffer[n - 1:], shape=(n, n), strides=(-step, step), writeable=False)


def held_bytes(array: np.ndarray) -> int:
    """The bytes of the buffer ``array`` is a view of (its own where it owns its data)."""
    while array.base is not None:
        base = array.base
        array = base if isinstance(base, np.ndarray) else base.base  # as_strided's interface object
    return array.nbytes


def off_and_diagonal(M: np.ndarray) -> tuple[float, float] | None:
    """``(off, diagonal)`` of a :func:`constant_bound` view (the numbers off and on its diagonal),
    None for any other array."""
    n = M.shape[0]
    if M.ndim != 2 or n < 2 or M.strides != (-M.itemsize, M.itemsize) or M.flags.writeable:
        return None
    return float(M[0, 1]), float(M[0, 0])


def off_diagonal_all(test, *arrays: np.ndarray) -> bool:
    """Whether ``test(*entries)`` (elementwise) holds at every entry off the diagonal of the
    ``n x n`` ``arrays``, read from the two numbers of each where all are :func:`constant_bound`
    views (no ``n x n`` temporary), else from the arrays themselves."""
    parts = [off_and_diagonal(M) for M in arrays]
    if all(part is not None for part in parts):
        return bool(test(*(np.array(part[0]) for part in parts)))
    return bool(np.all(test(*arrays) | np.eye(arrays[0].shape[0], dtype=bool)))


def _finite_size(M: np.ndarray) -> np.ndarray:
    return np.where(np.isfinite(M), np.abs(M), 0.0)


def bound_sizes(L: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``max(|L|, |U|)`` over the finite bounds of each entry (0 where it has none): a
    :func:`constant_bound` view where L and U are both such views, computed from their numbers."""
    pairs = off_and_diagonal(L), off_and_diagonal(U)
    if None not in pairs:
        off, diagonal = np.maximum(_finite_size(np.array(pairs[0])), _finite_size(np.array(pairs[1])))
        return constant_bound(off, diagonal, L.shape[0])
    return np.maximum(_finite_size(L), _finite_size(U))


def finite_count(M: np.ndarray) -> int:
    """The number of finite entries of ``M`` (from its two numbers for a :func:`constant_bound` view)."""
    pair = off_and_diagonal(M)
    if pair is None:
        return int(np.isfinite(M).sum())
    n = M.shape[0]
    return int(np.isfinite(pair[0])) * n * (n - 1) + int(np.isfinite(pair[1])) * n


def first_crossing(L: np.ndarray, U: np.ndarray) -> tuple[int, int] | None:
    """The first entry ``(i, j)`` (in row-major order) where ``L > U``, None where there is none;
    from the two numbers of each where both are :func:`constant_bound` views."""
    pairs = off_and_diagonal(L), off_and_diagonal(U)
    if None not in pairs:
        (off_l, diagonal_l), (off_u, diagonal_u) = pairs
        if diagonal_l > diagonal_u:
            return 0, 0
        return (0, 1) if off_l > off_u else None
    crossing = np.argwhere(L > U)
    return tuple(int(k) for k in crossing[0]) if crossing.size else None


class Bound:
    """An entrywise bound of the symmetric X being read (lower with ``better=np.maximum``, upper
    with ``np.minimum``): ``off`` and ``diagonal`` while those two numbers describe it, a dense
    array from the first bound that they do not."""

    def __init__(self, n: int, value: float, better):
        self.n, self.better = n, better
        self.off = self.diagonal = float(value)
        self.dense: np.ndarray | None = None

    def _densify(self) -> np.ndarray:
        if self.dense is None:
            self.dense = np.array(constant_bound(self.off, self.diagonal, self.n))
        return self.dense

    def tighten(self, value) -> None:
        """Bound every entry by ``value`` (a number, or an array that broadcasts to ``(n, n)``)."""
        if self.dense is None and np.ndim(value) == 0:
            self.off, self.diagonal = (float(self.better(b, float(value))) for b in (self.off, self.diagonal))
            return
        dense = self._densify()
        self.better(dense, value, out=dense)

    def tighten_entries(self, i: np.ndarray, j: np.ndarray, values: np.ndarray) -> None:
        """Bound the entries ``(i, j)`` and their mirrors ``(j, i)`` by ``values``."""
        if self.dense is None and i.size >= self.n and np.all(i == j) and np.bincount(i, minlength=self.n).all() \
                and np.all(values == values[0]):  # the whole diagonal, by one number
            self.diagonal = float(self.better(self.diagonal, float(values[0])))
            return
        dense = self._densify()
        self.better.at(dense, (i, j), values)
        self.better.at(dense, (j, i), values)

    def array(self) -> np.ndarray:
        """The bound as a read-only ``(n, n)`` array."""
        if self.dense is None:
            return constant_bound(self.off, self.diagonal, self.n)
        self.dense.flags.writeable = False
        return self.dense


class RowSumsBlock:
    """The symmetrised rows ``coef_r (e_i 1^T + 1 e_i^T) / 2`` (``i = I_r``) on ``vec(X)``, held as
    ``(I, coef)``.  Each row has ``2 n - 1`` entries: ``coef_r`` at ``(i, i)``, ``coef_r / 2``
    elsewhere in row and column i."""

    def __init__(self, I: np.ndarray, coef: np.ndarray, n: int):
        self.I, self.coef, self.n = np.asarray(I, dtype=np.int64), np.asarray(coef, dtype=float), n
        self.width = 2 * n - 1
        self.shape = (len(self.I), n * n)
        self.nnz = len(self.I) * self.width

    def fill(self, data: np.ndarray, indices: np.ndarray) -> None:
        """Write the rows' values and column indices (each row sorted) into ``data`` and ``indices``."""
        n, width = self.n, self.width
        column = np.arange(n, dtype=indices.dtype) * n  # (k, i) is k n + i
        row = np.arange(n, dtype=indices.dtype)  # (i, k) is i n + k
        for r, i in enumerate(self.I):
            start = r * width
            indices[start:start + i] = column[:i] + i
            indices[start + i:start + i + n] = row + i * n
            indices[start + i + n:start + width] = column[i + 1:] + i
        data.reshape(-1, width)[...] = (self.coef / 2)[:, None]
        data[np.arange(len(self.I)) * width + 2 * self.I] = self.coef

    def __getitem__(self, rows) -> RowSumsBlock:
        return RowSumsBlock(self.I[rows], self.coef[rows], self.n)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """The rows' values at the ``n x n`` X: ``coef_r (X 1 + X^T 1)_i / 2``."""
        return self.coef * (X.sum(axis=1)[self.I] + X.sum(axis=0)[self.I]) / 2

    def add_adjoint(self, M: np.ndarray, y: np.ndarray) -> None:
        """``M += sum_r y_r A_r`` in place."""
        w = np.bincount(self.I, weights=y * self.coef, minlength=self.n)
        M += w[:, None] / 2
        M += w[None, :] / 2

    def row_norms(self) -> np.ndarray:
        """The rows' 1-norms, ``n |coef_r|``."""
        return self.n * np.abs(self.coef)

    def tocsr(self) -> sp.csr_matrix:
        return stack_rows([self], self.n)


class TotalBlock:
    """The rows ``coef_r <11^T, X>`` (``coef_r sum(X)``, the minimum bisection's ``sum(X) == 0``)
    on ``vec(X)``, held as ``coef``; each row has all ``n^2`` entries."""

    def __init__(self, coef: np.ndarray, n: int):
        self.coef, self.n = np.asarray(coef, dtype=float).ravel(), n
        self.width = n * n
        self.shape = (len(self.coef), n * n)
        self.nnz = len(self.coef) * self.width

    def fill(self, data: np.ndarray, indices: np.ndarray) -> None:
        """Write the rows' values and column indices into ``data`` and ``indices``."""
        indices.reshape(-1, self.width)[...] = np.arange(self.width, dtype=indices.dtype)
        data.reshape(-1, self.width)[...] = self.coef[:, None]

    def __getitem__(self, rows) -> TotalBlock:
        return TotalBlock(self.coef[rows], self.n)

    def apply(self, X: np.ndarray) -> np.ndarray:
        return self.coef * float(X.sum())

    def add_adjoint(self, M: np.ndarray, y: np.ndarray) -> None:
        """``M += sum_r y_r A_r`` in place."""
        M += float(y @ self.coef)

    def row_norms(self) -> np.ndarray:
        """The rows' 1-norms, ``n^2 |coef_r|``."""
        return self.width * np.abs(self.coef)


#: the blocks of rows held by their coefficients (each with fill, apply, add_adjoint, row_norms)
_COMPACT = (RowSumsBlock, TotalBlock)


def row_sums_matrix(I: np.ndarray, coef: np.ndarray, n: int) -> sp.csr_matrix:
    """:class:`RowSumsBlock` as a CSR matrix of shape ``(len(I), n^2)``."""
    return RowSumsBlock(I, coef, n).tocsr()


def stack_rows(blocks: list, n: int) -> sp.csr_matrix:
    """The blocks (sparse matrices, :class:`RowSumsBlock`) one above the other, written once into
    arrays of the final size."""
    if not blocks:
        return sp.csr_matrix((0, n * n))
    m, total = sum(b.shape[0] for b in blocks), sum(b.nnz for b in blocks)
    dtype = np.int32 if max(total, n * n) < 2**31 - 1 else np.int64
    data, indices = np.empty(total), np.empty(total, dtype=dtype)
    indptr = np.zeros(m + 1, dtype=dtype)
    row = offset = 0
    for block in blocks:
        rows, nnz = block.shape[0], block.nnz
        if isinstance(block, _COMPACT):
            block.fill(data[offset:offset + nnz], indices[offset:offset + nnz])
            ends = np.arange(1, rows + 1) * block.width
        else:
            block = sp.csr_matrix(block)
            data[offset:offset + nnz], indices[offset:offset + nnz] = block.data, block.indices
            ends = block.indptr[1:]
        indptr[row + 1:row + rows + 1] = ends + offset
        row, offset = row + rows, offset + nnz
    return sp.csr_matrix((data, indices, indptr), shape=(m, n * n))


class Rows:
    """The symmetrised rows of the linear map, ``(m, n^2)``, as blocks one above the other: CSR
    matrices, :class:`RowSumsBlock` and :class:`TotalBlock`; :meth:`tocsr` writes them into one
    CSR matrix."""

    def __init__(self, blocks: list, n: int):
        self.n = n
        self.blocks = [b if isinstance(b, _COMPACT) else sp.csr_matrix(b) for b in blocks if b.shape[0]]
        self.shape = (sum(b.shape[0] for b in self.blocks), n * n)
        self.nnz = sum(b.nnz for b in self.blocks)

    def tocsr(self) -> sp.csr_matrix:
        return stack_rows(self.blocks, self.n)

    def _starts(self):
        return np.cumsum([0] + [b.shape[0] for b in self.blocks])

    def select(self, keep: np.ndarray) -> Rows:
        """The rows where the boolean ``keep`` holds, in their order."""
        starts = self._starts()
        return Rows([b[keep[s:e]] for b, s, e in zip(self.blocks, starts[:-1], starts[1:])], self.n)

    def apply(self, X: np.ndarray) -> np.ndarray:
        """``A(X)`` for an ``n x n`` X."""
        parts = [b.apply(X) if isinstance(b, _COMPACT) else b @ X.ravel() for b in self.blocks]
        return np.concatenate(parts) if parts else np.zeros(0)

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """``A^*(y) = sum_r y_r A_r``, an ``n x n`` matrix."""
        n, starts = self.n, self._starts()
        M = np.zeros((n, n))
        for block, s, e in zip(self.blocks, starts[:-1], starts[1:]):
            if isinstance(block, _COMPACT):
                block.add_adjoint(M, y[s:e])
            else:
                M += (block.T @ y[s:e]).reshape(n, n)
        return M

    def row_norms(self) -> np.ndarray:
        """The 1-norms of the rows."""
        parts = [b.row_norms() if isinstance(b, _COMPACT) else np.asarray(abs(b).sum(axis=1)).ravel()
                 for b in self.blocks]
        return np.concatenate(parts) if parts else np.zeros(0)

    def sparse_part(self) -> tuple[sp.csr_matrix, np.ndarray]:
        """The rows of the blocks other than :class:`RowSumsBlock` as one CSR matrix (a
        :class:`TotalBlock`'s rows written with their ``n^2`` entries), and their indices among all
        rows."""
        starts = self._starts()
        sparse = [(b, s) for b, s in zip(self.blocks, starts) if not isinstance(b, RowSumsBlock)]
        if not sparse:
            return sp.csr_matrix((0, self.n * self.n)), np.zeros(0, dtype=np.int64)
        where = np.concatenate([np.arange(s, s + b.shape[0]) for b, s in sparse])
        return stack_rows([b for b, _ in sparse], self.n), where

    def row_sums(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(I, coef, where)`` of the rows of the :class:`RowSumsBlock` blocks: the index and the
        coefficient of each, and its index among all rows."""
        starts = self._starts()
        parts = [(b.I, b.coef, np.arange(s, s + b.shape[0])) for b, s in zip(self.blocks, starts)
                 if isinstance(b, RowSumsBlock)]
        if not parts:
            return np.zeros(0, dtype=np.int64), np.zeros(0), np.zeros(0, dtype=np.int64)
        return tuple(np.concatenate(column) for column in zip(*parts))

    @property
    def nbytes(self) -> int:
        """Bytes held by the blocks."""
        return sum(sum(a.nbytes for a in (b.coef, getattr(b, "I", None)) if a is not None) if isinstance(b, _COMPACT)
                   else b.data.nbytes + b.indices.nbytes + b.indptr.nbytes for b in self.blocks)

    def data(self) -> list:
        """The rows' coefficients, one array per block (for checks of their magnitude)."""
        return [b.coef if isinstance(b, _COMPACT) else b.data for b in self.blocks]
