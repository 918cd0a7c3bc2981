r"""A dense cost of numerically low rank replaced by a low-rank part, with a rigorous error bound.

Kernels and distance matrices of points in low dimension are numerically of low rank: the
Peng-Wei cost ``K = Z Z^T`` of centred points in ``p`` dimensions has rank ``p``.  The low-rank
method needs only products ``C V`` with thin V, and a dense ``D`` costs ``n^2 r`` flops in each
where a low-rank part ``Q M Q^T`` (Q of shape ``(n, k)``) costs ``O(n k r)``.
:func:`compress_cost` finds it once, where the method starts:

1. **The range** of D by the adaptive randomized range finder of N. Halko, P.-G. Martinsson,
   J. A. Tropp, "Finding structure with randomness: probabilistic algorithms for constructing
   approximate matrix decompositions", SIAM Review 53(2), 2011 (Algorithm 4.2): Gaussian blocks
   of doubling width, each one's part outside the range found so far both the test (the
   estimate ``10 sqrt(2/pi) max_i ||(I - P) D w_i||`` of their section 4.3) and the next
   directions.  It stops when the estimate is below ``rtol ||D||_F``, when the rank would pass
   ``max_rank`` (default ``min(n / 8, 200)``), or when, from a width of 32 on, a doubling of the
   width did not lower the estimate tenfold (a spectrum that decays too slowly to reach ``rtol``
   within the cap): a cost whose spectrum decays slowly costs products with 64 columns and is
   kept dense.
2. **The part**: ``M = Q^T D Q = W diag(s) W^T`` and ``U = Q W``, the eigenvalues of M whose
   squares sum to at most a tenth of the allowance dropped.
3. **The bound**, exact rather than estimated: with ``P = Q Q^T``,
   ``D - P D P = D (I - P) + (I - P) D P``, so (D symmetric)
   ``||D - P D P||_F <= 2 ||D (I - P)||_F``, computed in blocks of rows (``O(n^2 k)`` flops, no
   ``n x n`` temporary), plus the dropped eigenvalues' norm and a rounding allowance
   ``16 n eps ||D||_F`` (for the products of the bound itself and of the part).  The Frobenius
   norm bounds the spectral norm.  The compression is accepted only where this bound is at most
   ``rtol ||D||_F`` (by default ``1e-10``: far below any solver tolerance); otherwise D is kept.

The bound is kept as :attr:`Cost.error <cvxclust.generic.cost.Cost.error>`: for a feasible X,
``|<E, X>| <= ||E||_2 tr X <= error * tau``, so the certificate
(:func:`~cvxclust.generic.lowrank_certificate.slack_bound`) lowers its bound by ``error * tau``
and stays valid for the exact cost; the objective reported is that of the compressed cost, within
the same allowance ``error * tr X`` of the exact one.
"""

from __future__ import annotations

import math

import numpy as np

from .cost import Cost

__all__ = ["RTOL", "compress_cost", "low_rank_part"]

#: the largest error bound accepted, relative to ||D||_F
RTOL = 1e-10
_EPS = np.finfo(float).eps
#: Halko, Martinsson and Tropp's factor of the posterior estimate (failure probability 10^-width)
_ESTIMATE = 10.0 * math.sqrt(2.0 / math.pi)
#: the width of the range from which a doubling must lower the estimate tenfold
_SLOW_FROM = 32
#: rows per block in the exact bound (a block of 8 n bytes times this)
_BLOCK_BYTES = 64 * 2 ** 20


def _orthonormal_complement(Y: np.ndarray, Q: np.ndarray) -> np.ndarray:
    """Y less its part in the range of Q (orthonormal columns), twice (for rounding)."""
    for _ in range(2):
        if Q.shape[1]:
            Y = Y - Q @ (Q.T @ Y)
    return Y


def _range(D: np.ndarray, rtol: float, max_rank: int, norm: float, rng) -> np.ndarray | None:
    """Orthonormal Q of at most ``max_rank`` columns with ``||(I - QQ^T) D||`` estimated below
    ``rtol * norm`` (step 1 of the module docstring); None where the test fails."""
    n = D.shape[0]
    Q = np.zeros((n, 0))
    width, last = min(16, max_rank), np.inf
    while True:
        R = _orthonormal_complement(D @ rng.standard_normal((n, width)), Q)
        estimate = _ESTIMATE * float(np.linalg.norm(R, axis=0).max())
        if estimate <= rtol * norm:
            return Q
        if Q.shape[1] + width > max_rank or (Q.shape[1] >= _SLOW_FROM and estimate > 0.1 * last):
            return None
        last = estimate
        Qb = np.linalg.qr(_orthonormal_complement(np.linalg.qr(R)[0], Q))[0]
        Q = np.column_stack([Q, Qb])
        width = min(Q.shape[1], max_rank - Q.shape[1]) or 1


def _residual_norm(D: np.ndarray, Q: np.ndarray) -> tuple[float, np.ndarray]:
    """``(||D (I - QQ^T)||_F, D Q)``, exactly, by blocks of rows."""
    n = D.shape[0]
    rows = max(1, _BLOCK_BYTES // (8 * n))
    DQ = np.empty((n, Q.shape[1]))
    total = 0.0
    for start in range(0, n, rows):
        block = D[start:start + rows]
        DQ[start:start + rows] = block @ Q
        rest = block - DQ[start:start + rows] @ Q.T
        total += float(np.vdot(rest, rest))
    return math.sqrt(total), DQ


def low_rank_part(D: np.ndarray, *, rtol: float = RTOL, max_rank: int | None = None,
                  random_state=0) -> tuple[np.ndarray, np.ndarray, float] | None:
    """``(U, s, error)`` with ``||D - U diag(s) U^T||_2 <= error <= rtol ||D||_F``, or None where
    D is not numerically of low rank (module docstring).

    Parameters
    ----------
    D : ndarray of shape (n, n)
        Symmetric (not copied, not changed).
    rtol : float
        The largest error accepted, relative to ``||D||_F``.
    max_rank : int or None
        The largest rank of the range tried (None: ``min(n // 8, 200)``, at least 1).
    random_state : int, Generator or None
        The Gaussian test blocks.

    Returns
    -------
    tuple or None
        U of shape ``(n, r)`` with orthonormal columns, s of shape ``(r,)``, and the bound.
    """
    n = D.shape[0]
    max_rank = max(1, min(n // 8, 200)) if max_rank is None else int(max_rank)
    norm = float(np.linalg.norm(D))
    if norm == 0.0:
        return np.zeros((n, 0)), np.zeros(0), 0.0
    if not np.isfinite(norm):
        return None
    Q = _range(D, rtol, max_rank, norm, np.random.default_rng(random_state))
    if Q is None:
        return None
    residual, DQ = _residual_norm(D, Q)
    M = Q.T @ DQ
    values, W = np.linalg.eigh((M + M.T) / 2.0)
    allowance = rtol * norm
    error = 2.0 * residual + 16.0 * n * _EPS * norm
    # the eigenvalues of least magnitude dropped while their norm stays within a tenth of the allowance
    order = np.argsort(np.abs(values))
    dropped = np.sqrt(np.cumsum(values[order] ** 2))
    drop = int(np.searchsorted(dropped, 0.1 * allowance, side="right"))
    if drop:
        error += float(dropped[drop - 1])
    if error > allowance:
        return None
    keep = np.sort(order[drop:])
    return Q @ W[:, keep], values[keep], float(error)


def compress_cost(cost: Cost, *, rtol: float = RTOL, max_rank: int | None = None, random_state=0) -> Cost:
    """The cost with its dense part replaced by a low-rank one where :func:`low_rank_part`
    finds one (the bound added to ``error``), otherwise ``cost`` itself."""
    if cost.dense_part is None or cost.lowrank_part is not None:
        return cost
    found = low_rank_part(cost.dense_part, rtol=rtol, max_rank=max_rank, random_state=random_state)
    if found is None:
        return cost
    U, values, error = found
    return Cost(cost.n, sparse=cost.sparse_part, ones=cost.ones, lowrank=(U, values), error=cost.error + error)
