r"""The inner solver of :mod:`cvxclust.generic.lowrank` where a fixed diagonal is the only
constraint besides ``X >> 0`` (max-cut): a Riemannian gradient method on the factor's manifold.

With ``diag(V V^T) = d`` and no rows, the factor lives on a product of spheres (the oblique
manifold, row i of V on the sphere of radius ``sqrt(d_i)``) and no augmented Lagrangian is
needed.  The Riemannian gradient of ``f(V) = <C, V V^T>`` is the Euclidean one ``2 C V`` with
each row's radial part removed,

.. math::

    \operatorname{grad} f(V) = 2\,(C - \operatorname{Diag}(w))\,V,\qquad
    w_i = (C V)_i \cdot v_i / d_i,

which is ``2 S V`` for the dual slack S of the certificate
(:mod:`cvxclust.generic.lowrank_certificate`) at the same w.  A step moves against it and
scales the rows back to their radii (the retraction); its length is the Barzilai-Borwein one
(alternating the two), accepted by the nonmonotone Armijo test of Zhang and Hager, as Wen and Yin
do on manifolds of orthogonality constraints.  A step costs one product with C, whose result is
kept for the next gradient.

References: Z. Wen, W. Yin, "A feasible method for optimization with orthogonality constraints",
Mathematical Programming 142, 2013; H. Zhang, W. W. Hager, "A nonmonotone line search technique
and its application to unconstrained optimization", SIAM Journal on Optimization 14(4), 2004;
N. Boumal, V. Voroninski, A. S. Bandeira, "The non-convex Burer-Monteiro approach works on
smooth semidefinite programs", NeurIPS 2016.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .sparse_product import RowBlocks, SparseProduct

__all__ = ["LINE_SEARCH", "OBLIQUE_RANK_FACTOR", "ObliqueRun", "oblique_descent", "oblique_rank", "retract"]

_TINY = 1e-300
#: the Armijo test's slope fraction, the nonmonotone average's weight, the backtracking factor
_ARMIJO, _ETA, _BACKTRACK = 1e-4, 0.85, 0.5
_MAX_BACKTRACKS = 30
#: the bytes of one array's rows in a chunk of a step's arithmetic (passes over a chunk run from the cache)
CHUNK_BYTES = 1 << 19
#: the line search's constants, for the same descent on an array API device (:mod:`cvxclust.generic.lowrank_device`)
LINE_SEARCH = (_ARMIJO, _ETA, _BACKTRACK, _MAX_BACKTRACKS)
#: the starting rank for a fixed diagonal alone is this times ``n^(1/3)``: a little above the numerical rank
#: of max-cut's solutions on sparse random graphs (measured about 45, 70 at n = 10,000, 30,000), which the
#: Riemannian gradient reaches in a third to a quarter of the steps a rank below it takes
OBLIQUE_RANK_FACTOR = 2.5


def oblique_rank(n: int, factor: float = OBLIQUE_RANK_FACTOR) -> int:
    """The starting rank of a fixed diagonal alone: ``min(n, max(8, ceil(factor n^(1/3))))``."""
    return min(n, max(8, math.ceil(factor * n ** (1 / 3))))


@dataclass
class ObliqueRun:
    """What :func:`oblique_descent` returns.

    Attributes
    ----------
    V : ndarray of shape (n, r)
        The last factor (rows of norm ``sqrt(d_i)``).
    value : float
        ``<C, V V^T>`` there.
    grad_norm : float
        The Frobenius norm of the Riemannian gradient there.
    iterations : int
        The steps taken.
    products : int
        The products with C spent.
    """

    V: np.ndarray
    value: float
    grad_norm: float
    iterations: int
    products: int


def retract(V: np.ndarray, sqrt_d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """V with each row scaled to the norm ``sqrt_d`` (a zero row stays zero), into ``out`` where
    given (which may be V itself)."""
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    return np.multiply(V, (sqrt_d / np.maximum(norms, _TINY))[:, None], out=out)


def _gradient(V: np.ndarray, CV: np.ndarray, inv_d: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``2 (C V - Diag(w) V)``, ``w_i = (C V)_i . v_i / d_i`` (0 where ``d_i = 0``), into ``out``
    where given."""
    w = np.einsum("ij,ij->i", CV, V) * inv_d
    out = np.multiply(V, w[:, None], out=out)
    np.subtract(CV, out, out=out)
    out *= 2.0
    return out


def oblique_descent(matmul, V: np.ndarray, sqrt_d: np.ndarray, *, gtol: float, max_iter: int,
                    deadline: float = np.inf, threads: int = 1, objective=None) -> ObliqueRun:
    """Minimize ``<C, V V^T>`` over rows of V of norms ``sqrt_d`` from V (module docstring).

    Parameters
    ----------
    matmul : callable
        ``V -> C @ V`` (threaded itself where it can be, such as
        :class:`~cvxclust.generic.sparse_product.SparseProduct`).
    V : ndarray of shape (n, r)
        The start (its rows are scaled to ``sqrt_d`` first; not modified).
    sqrt_d : ndarray of shape (n,)
        The rows' norms, the square roots of the fixed diagonal.
    gtol : float
        Stop where the Riemannian gradient's Frobenius norm is at most this.
    max_iter : int
        Steps at most.
    deadline : float
        A :func:`time.perf_counter` time past which no step is begun.
    threads : int
        The threads over which a step's arithmetic on ``(n, r)`` arrays runs, in chunks of rows
        of :data:`CHUNK_BYTES` per array (:class:`~cvxclust.generic.sparse_product.RowBlocks`);
        1 (the default) runs it in the calling thread.  The chunks, and the sums of their inner
        products, do not depend on the threads: nor do the iterates, given a product that does
        not (:class:`~cvxclust.generic.sparse_product.SparseProduct`).
    objective : callable or None
        ``V -> (f(V), M V)`` for another smooth ``f`` whose Euclidean gradient is ``2 M V``
        (``matmul`` is then unused); None: ``f(V) = <C, V V^T>``, ``M = C``.

    Returns
    -------
    ObliqueRun

    Notes
    -----
    The iterates and gradients live in two pairs of buffers swapped at each step, with one more
    for ``s = V_+ - V`` and then ``y = G_+ - G``; no array of the factor's size is allocated
    within the loop but the products, and not those where ``matmul`` is a
    :class:`~cvxclust.generic.sparse_product.SparseProduct` (two buffers take turns: a fresh
    array's first writes cost page faults, about a tenth of a product at n = 100,000).
    """
    d = sqrt_d ** 2
    inv_d = np.divide(1.0, d, out=np.zeros_like(d), where=d > 0)
    V = retract(np.asarray(V, dtype=float), sqrt_d)
    blocks = RowBlocks(V.shape[0], threads, rows=max(1, CHUNK_BYTES // (V.itemsize * max(V.shape[1], 1))))
    with blocks.serial_blas():
        return _descend(matmul, objective, V, sqrt_d, inv_d, blocks, gtol, max_iter, deadline)


def _descend(matmul, objective, V, sqrt_d, inv_d, blocks, gtol, max_iter, deadline) -> ObliqueRun:
    """The loop of :func:`oblique_descent` from the retracted V, the passes over ``(n, r)`` arrays
    chunk by chunk of rows (the reductions summed over the chunks in order)."""
    trial, G_trial, work = np.empty_like(V), np.empty_like(V), np.empty_like(V)
    # a SparseProduct writes into a given output: two buffers for C V take turns
    into = objective is None and isinstance(matmul, SparseProduct)

    def evaluate(U, out):  # (f(U), M U)
        if objective is not None:
            return objective(U)
        CU = matmul(U, out=out) if into else matmul(U)
        return blocks.sum(lambda rows: float(np.vdot(U[rows], CU[rows]))), CU

    value, CV = evaluate(V, None)
    spare = np.empty_like(V) if into else None
    G = np.empty_like(V)
    g2 = blocks.sum(lambda rows: _gradient_norm2(V, CV, inv_d, G, rows))
    products, iterations = 1, 0
    reference, weight = value, 1.0  # the nonmonotone average of the values and its weight
    step = 0.1 * float(np.linalg.norm(V)) / max(np.sqrt(g2), _TINY)
    while iterations < max_iter and np.sqrt(g2) > gtol and time.perf_counter() < deadline:
        for _ in range(_MAX_BACKTRACKS):
            blocks.map(lambda rows: _move(V, G, -step, sqrt_d, trial, rows))
            trial_value, C_trial = evaluate(trial, spare)
            products += 1
            if trial_value <= reference - _ARMIJO * step * g2:
                break
            step *= _BACKTRACK
        else:  # no decrease at a step near rounding: V is as stationary as the arithmetic allows
            break
        # g.g at the trial, and s.s, s.y, y.y with s = trial - V, y = G_trial - G
        sums = blocks.map(lambda rows: _pair(V, G, trial, C_trial, inv_d, G_trial, work, rows))
        g2_trial, ss, tv, vv, yy = sums[0] if len(sums) == 1 else (float(sum(part)) for part in zip(*sums))
        sy = abs(tv - vv)
        iterations += 1
        spare = CV if into else None
        V, trial, CV, G, G_trial, value, g2 = trial, V, C_trial, G_trial, G, trial_value, g2_trial
        if sy > 0:  # the two Barzilai-Borwein lengths in turn
            step = ss / sy if iterations % 2 else sy / max(yy, _TINY)
        reference = (_ETA * weight * reference + value) / (_ETA * weight + 1.0)
        weight = _ETA * weight + 1.0
    return ObliqueRun(V=V, value=value, grad_norm=float(np.sqrt(g2)), iterations=iterations, products=products)


def _gradient_norm2(V, CV, inv_d, G, rows) -> float:
    """The rows ``rows`` of the gradient (:func:`_gradient`) into G, and their squared norm."""
    block = _gradient(V[rows], CV[rows], inv_d[rows], out=G[rows])
    return float(np.vdot(block, block))


def _move(V, G, step, sqrt_d, trial, rows) -> None:
    """The rows ``rows`` of the retraction of ``V + step G`` into trial."""
    block = np.multiply(G[rows], step, out=trial[rows])
    block += V[rows]
    retract(block, sqrt_d[rows], out=block)


def _pair(V, G, trial, C_trial, inv_d, G_trial, work, rows) -> tuple:
    """On the rows ``rows``: the gradient at the trial into ``G_trial``, and the parts of
    ``(g.g, s.s, trial.y, V.y, y.y)`` with ``s = trial - V``, ``y = G_trial - G`` (each written in
    turn into ``work``)."""
    g2 = _gradient_norm2(trial, C_trial, inv_d, G_trial, rows)
    s_ = np.subtract(trial[rows], V[rows], out=work[rows])
    ss = float(np.vdot(s_, s_))
    y_ = np.subtract(G_trial[rows], G[rows], out=work[rows])
    return g2, ss, float(np.vdot(trial[rows], y_)), float(np.vdot(V[rows], y_)), float(np.vdot(y_, y_))
