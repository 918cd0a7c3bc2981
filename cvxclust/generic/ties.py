r"""Entries of X held equal by equality rows (``X[i, j] == X[i, i]``, a must-link row), taken
into the generic solver's box block.

A row ``a (X_e - X_f) = 0`` between two entries ``e``, ``f`` of the symmetric X (each entry its
pair of mirrored positions off the diagonal) ties them.  The ties group the entries (the
connected components of the graph whose edges are the rows), and the set

.. math::

    B = \{L \le X \le U,\ X_e = X_f \text{ for every tie}\}

keeps the projection of a box: each group takes one value ``t``, the mean of the projected
point over the group's positions clipped to the group's tightest bounds, every other entry is
clipped.  Its support function is as cheap: ``min_{W in B} <Lambda, W>`` sums
``Lambda_kl`` times the nearer bound over the free entries and, for each group, the group's sum
of ``Lambda`` times its lower (sum positive) or upper (negative) bound.

Left among the ADMM's rows, a handful of such rows beside the ``n^2`` entries of the box forms a
third block that the consensus splitting balances poorly against the other two: its residual
decays slowly long after the gap is certified.  In the box block they are enforced exactly at
every iteration, and the splitting keeps its two blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

__all__ = ["TiedEntries", "tied_rows"]

#: relative accuracy at which two coefficients are the same number
_SAME = 1e-10


@dataclass
class TiedEntries:
    """Groups of entries held equal (see the module docstring).

    Attributes
    ----------
    positions : ndarray of int
        Flat indices into ``X.ravel()`` of every tied position (both mirrored positions of an
        off-diagonal entry).
    group : ndarray of int
        The group of each position.
    count : ndarray of int
        Positions per group.
    low, high : ndarray
        The tightest bounds of each group (``-inf``/``+inf`` where none).
    """

    positions: np.ndarray
    group: np.ndarray
    count: np.ndarray
    low: np.ndarray
    high: np.ndarray

    def project(self, M: np.ndarray, L: np.ndarray, U: np.ndarray) -> np.ndarray:
        """The projection of the symmetric ``M`` onto the box ``L <= X <= U`` with the ties."""
        W = np.clip(M, L, U)
        t = np.bincount(self.group, M.reshape(-1)[self.positions], minlength=self.count.size) / self.count
        W.reshape(-1)[self.positions] = np.clip(t, self.low, self.high)[self.group]
        return W

    def support(self, Lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(Lam', terms)`` for the support term of the certified bound: ``Lam'`` is ``Lam`` on
        the tied positions where the group's sum has a finite bound on its side (0 on the whole
        group elsewhere), 0 on every other position (the caller clips those as for a box);
        ``terms``, per group, the minimum of ``t`` times the group's sum over its bounds."""
        flat = Lam.reshape(-1)[self.positions]
        total = np.bincount(self.group, flat, minlength=self.count.size)
        unbounded = ((total > 0) & ~np.isfinite(self.low)) | ((total < 0) & ~np.isfinite(self.high))
        total[unbounded] = 0.0
        tied = np.zeros(Lam.size)
        tied[self.positions] = np.where(unbounded[self.group], 0.0, flat)
        terms = np.where(total > 0, total * np.where(np.isfinite(self.low), self.low, 0.0), 0.0) \
            + np.where(total < 0, total * np.where(np.isfinite(self.high), self.high, 0.0), 0.0)
        return tied.reshape(Lam.shape), terms

    def mask(self, n: int) -> np.ndarray:
        """The tied positions, as a boolean ``n x n`` matrix."""
        tied = np.zeros(n * n, dtype=bool)
        tied[self.positions] = True
        return tied.reshape(n, n)


def tied_rows(A: sp.csr_matrix, lo: np.ndarray, hi: np.ndarray, candidates: np.ndarray, L: np.ndarray,
              U: np.ndarray) -> tuple[np.ndarray, TiedEntries | None]:
    """The rows among ``candidates`` (indices into A's rows) that tie two entries
    (``a (X_e - X_f) = 0``), and their :class:`TiedEntries`; ``(empty, None)`` where there are
    none, or where a group's bounds leave no common value (the rows then stay rows)."""
    n = L.shape[0]
    rows, edges = [], []
    count = np.diff(A.indptr)[candidates]
    candidates = candidates[(lo[candidates] == 0) & (hi[candidates] == 0) & (count >= 2) & (count <= 4)]
    for r in candidates:
        start, stop = A.indptr[r], A.indptr[r + 1]
        cols, data = A.indices[start:stop], A.data[start:stop]
        i, j = np.divmod(cols, n)
        entries = np.minimum(i, j) * n + np.maximum(i, j)  # each entry by its upper position
        keys, inverse = np.unique(entries, return_inverse=True)
        if keys.size != 2:
            continue
        coefficient = np.bincount(inverse, data)
        scale = np.abs(coefficient).max()
        if abs(coefficient[0] + coefficient[1]) > _SAME * scale:
            continue
        # a symmetrised row holds the same coefficient at both mirrored positions
        if np.any(np.abs(data - np.where(i == j, 1.0, 0.5) * coefficient[inverse]) > _SAME * scale):
            continue
        rows.append(r)
        edges.append(keys)
    if not rows:
        return np.empty(0, dtype=int), None
    edges = np.asarray(edges)
    entries, index = np.unique(edges, return_inverse=True)
    index = index.reshape(edges.shape)
    graph = sp.coo_matrix((np.ones(len(rows)), (index[:, 0], index[:, 1])), shape=(entries.size,) * 2)
    n_groups, label = connected_components(graph, directed=False)
    i, j = np.divmod(entries, n)
    positions = np.r_[entries, (j * n + i)[i != j]]
    group = np.r_[label, label[i != j]]
    low = np.full(n_groups, -np.inf)
    high = np.full(n_groups, np.inf)
    np.maximum.at(low, group, L.reshape(-1)[positions])
    np.minimum.at(high, group, U.reshape(-1)[positions])
    if np.any(low > high):
        return np.empty(0, dtype=int), None
    return np.asarray(rows), TiedEntries(positions, group, np.bincount(group, minlength=n_groups), low, high)
