r"""The certificate of :mod:`cvxclust.generic.lowrank`: a bound on the optimum from multipliers,
whose p.s.d. part needs only the smallest eigenvalue of the dual slack, computed from products.

For ``min <C, X>`` over ``X >> 0``, ``A(X) = b``, ``diag(X) = d`` (where fixed) and ``X >= 0``
(where bounded), with ``tr X <= tau`` on the feasible set (inequalities below), any multipliers ``y``, ``w`` and any
symmetric ``Z >= 0`` give, with the dual slack ``S = C - A^*(y) - Diag(w) - Z``,

.. math::

    \langle C, X\rangle = \langle S, X\rangle + b^\top y + d^\top w + \langle Z, X\rangle
    \ \ge\ b^\top y + d^\top w + \tau \min(0, \lambda_{\min}(S))

for every feasible X (weak duality: ``<Z, X> >= 0`` as both are entrywise nonnegative where Z
is nonzero, the diagonal of X being nonnegative under ``X >> 0``).  Where a row ``1^T X 1 = 0``
forces ``X 1 = 0``, every feasible X is ``J X J`` (``J = I - 11^T / n``) and S is replaced by
``J S J``.

Inequalities, ``lo <= A(X) <= hi`` and ``l <= diag(X) <= u`` on a diagonal that is not fixed:
take each multiplier with the sign of a finite side, ``y_r >= 0`` only where ``lo_r`` is finite,
``y_r <= 0`` only where ``hi_r`` is (either sign for an equality), and the same for ``w``.  Then
``y_r A_r(X) >= y_r lo_r`` if ``y_r >= 0`` and ``>= y_r hi_r`` if ``y_r <= 0`` for every feasible
X, so the identity above gives

.. math::

    \langle C, X\rangle \ \ge\ \sum_{y_r > 0} lo_r y_r + \sum_{y_r < 0} hi_r y_r
    + \sum_{w_i > 0} l_i w_i + \sum_{w_i < 0} u_i w_i + \tau \min(0, \lambda_{\min}(S))

with ``tau`` any bound on the trace of the feasible X (for ``diag(X) <= u`` alone, ``sum(u)``).
For ``diag(X) <= u`` with ``mu = -w >= 0``, the slack gains ``+ Diag(mu)`` and the bound
``- u^T mu``: weak duality for every ``mu >= 0``
(:func:`~cvxclust.generic.lowrank_check.signed_multipliers` and
:func:`~cvxclust.generic.lowrank_check.dual_constant`).

``lambda_min(S)`` comes from Lanczos (:func:`scipy.sparse.linalg.eigsh`) on a
:class:`~scipy.sparse.linalg.LinearOperator` of S: products with the cost, the rows' adjoint,
``Diag(w)`` and a low-rank ``Z = A P^T + P A^T`` (A, P of shape ``(n, r)``, both ``>= 0``), so
nothing ``n x n`` is formed.  The Ritz value ``theta`` of unit vector u is lowered by the Ritz
residual ``||S u - theta u||`` (an eigenvalue of S lies within it of ``theta``) and by a
rounding allowance ``8 n eps ||S||`` (``||S||`` bounded by the triangle inequality over the
parts), which covers the rounding of the products in floating point.  That the eigenvalue so
found is the smallest rests on the Lanczos iteration's convergence from a random start, as in
the low-rank methods it follows; orders up to :data:`DENSE_ORDER` are solved exactly instead
(S written column by column from the same products).

The multiplier Z of ``X >= 0`` comes from the factor's first-order conditions (module
:mod:`cvxclust.generic.lowrank`): with ``S_0 = C - A^*(y) - Diag(w)``, ``G = S_0 V`` is, at a
stationary nonnegative factor, nonnegative where V is zero and zero elsewhere.  A dual slack
with ``S V = 0`` and ``Z`` zero where ``X = V V^T`` is positive needs ``Z V = G``; with
``P = V (V^T V)^{-1}`` and ``A = G - P (G^T V + V^T G) / 4``, ``Z = A P^T + P A^T`` has exactly
``Z V = G`` when ``G^T V`` is symmetric (as it is at a stationary point), and it is zero on the
blocks where X is positive when the factor's columns have disjoint supports (a clustering).
Negative entries of A and P are dropped, which keeps ``Z >= 0`` (and the bound valid) always.

Its limit: P lies in the range of V, so ``u^T Z u = 2 (u^T A)(P^T u) = 0`` for every u orthogonal
to the factor's columns, and on those vectors S is ``C - A^*(y) - Diag(w)`` whatever Z.  Where the
true multiplier of ``X >= 0`` is needed there (correlation clustering, whose positive entries of
C between clusters it must cancel; a k-means SDP whose solution is no clustering), S stays
indefinite and the bound stalls although the point is optimal.  For the k-means SDP at a
clustering, :func:`~cvxclust.generic.lowrank_form.trace_shift` raises S on those vectors instead.
The dense multiplier of an augmented Lagrangian (``nonnegative="multiplier"`` of the low-rank
method, and :mod:`cvxclust.generic.lowrank_penalty`) has no such limit.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import ArpackError, ArpackNoConvergence, LinearOperator, eigsh

from .sparse_product import cost_product, product_threads

__all__ = ["DENSE_ORDER", "SlackOperator", "nonnegative_multiplier", "slack_bound", "smallest_eigenvalue"]

#: orders up to which the smallest eigenvalue is that of S written out (n products)
DENSE_ORDER = 64
_EPS = np.finfo(float).eps
#: Lanczos passes at most toward an aimed Ritz residual, and the fraction of |theta| accepted as one
_PASSES, _FRACTION = 4, 0.05


def nonnegative_multiplier(G: np.ndarray, V: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(A, P)``, both ``>= 0``, of the multiplier ``Z = A P^T + P A^T`` of ``X >= 0`` from the
    gradient ``G = S_0 V`` of a nonnegative factor V (module docstring)."""
    gram = V.T @ V
    P = np.linalg.lstsq(gram, V.T, rcond=1e-6)[0].T if V.shape[1] else V
    GV = G.T @ V
    A = np.maximum(G - P @ (GV + GV.T) / 4.0, 0.0)
    return A, np.maximum(P, 0.0)


class SlackOperator(LinearOperator):
    """``S = C - A^*(y) - Diag(w) - (A P^T + P A^T)`` (``J S J`` where ``deflate``) as products.

    Parameters
    ----------
    cost : Cost
        The linear coefficient C (:class:`~cvxclust.generic.cost.Cost`).
    rows : FactorRows
        The rows (:class:`~cvxclust.generic.factor_rows.FactorRows`).
    y, w : ndarray
        Multipliers of the rows and of the diagonal (zeros where none).
    Z : tuple of ndarray, ndarray or None
        The multiplier of ``X >= 0``: ``(A, P)`` of its low-rank form, or the symmetric ``n x n``
        array itself (:mod:`cvxclust.generic.lowrank_penalty`); None where none.
    deflate : bool
        Whether to project onto the complement of ``1``.
    threads : int or None
        The threads of the products with a sparse cost
        (:func:`~cvxclust.generic.sparse_product.cost_product`; None:
        :func:`~cvxclust.generic.sparse_product.product_threads`).
    """

    def __init__(self, cost, rows, y, w, Z=None, deflate=False, threads=None):
        n = cost.n
        super().__init__(dtype=float, shape=(n, n))
        self.cost, self.rows, self.y, self.w, self.Z, self.deflate = cost, rows, y, w, Z, deflate
        self._product = cost_product(cost, product_threads() if threads is None else threads)
        self.products = 0

    def _matmat(self, X):
        X = np.asarray(X, dtype=float)
        if self.deflate:
            X = X - X.mean(axis=0)
        out = self._product(X)
        out -= self.w[:, None] * X if X.ndim == 2 else self.w * X
        if self.rows.m:
            out -= self.rows.adjoint_matmul(self.y, X)
        if isinstance(self.Z, np.ndarray):
            out -= self.Z @ X
        elif self.Z is not None:
            A, P = self.Z
            out -= A @ (P.T @ X) + P @ (A.T @ X)
        if self.deflate:
            out -= out.mean(axis=0)
        self.products += 1 if X.ndim == 1 else X.shape[1]
        return out

    def _matvec(self, x):
        return self._matmat(np.ravel(x))

    def _adjoint(self):
        return self

    def norm_bound(self, cost_norm: float) -> float:
        """An upper bound on ``||S||_F`` from the parts (``cost_norm`` is ``||C||_F``)."""
        size = cost_norm + float(np.linalg.norm(self.w)) + (self.rows.adjoint_norm(self.y) if self.rows.m else 0.0)
        if isinstance(self.Z, np.ndarray):
            size += float(np.linalg.norm(self.Z))
        elif self.Z is not None:
            size += 2.0 * float(np.linalg.norm(self.Z[0])) * float(np.linalg.norm(self.Z[1]))
        return size


def smallest_eigenvalue(S: SlackOperator, *, tol: float = 1e-10, random_state=None,
                        start: np.ndarray | None = None, residual: float | None = None,
                        ) -> tuple[float, np.ndarray, float]:
    """``(theta, u, residual)``: a Ritz pair of the smallest eigenvalue of S (u of unit norm)
    and ``||S u - theta u||``; ``theta = -inf`` where Lanczos found no pair.

    Parameters
    ----------
    S : SlackOperator
        The dual slack.
    tol : float
        ARPACK's relative tolerance (a Ritz pair is accepted where its residual is at most
        ``tol |theta|``), used where ``residual`` is None.
    random_state : int, Generator or None
        Seed of the random start (or of the perturbation of ``start``).
    start : ndarray of shape (n,) or None
        A warm start, such as the last eigenvector (perturbed slightly at random, so that a start
        inside an invariant subspace does not hide the rest of the spectrum).
    residual : float or None
        The Ritz residual ``||S u - theta u||`` aimed at instead of ``tol``, or a twentieth of
        ``|theta|`` where larger and theta is negative (far from optimal, the bound is then within
        5% of the Ritz value's; a theta at or above zero is held to the aim itself, since a loose
        pair there may sit in the cluster of eigenvalues near zero that the factor's columns make,
        above a negative smallest one): ARPACK's relative tolerance is set from it and ``|theta|`` (the start's Rayleigh
        quotient where warm, a rough first pass where cold) and tightened from the pair found
        until the residual is met (a few passes, each warm started from the last pair).  The
        residual is subtracted from ``theta`` in the bound whatever it is, so this trades no
        rigour: it spends the matrix-vector products the bound needs and no more.  A theta at or
        above zero is confirmed by one more pass from a fresh random start at the aim, the smaller
        Ritz value kept.
    """
    n = S.shape[0]
    if n <= DENSE_ORDER:
        M = S @ np.eye(n)
        values, vectors = np.linalg.eigh((M + M.T) / 2)
        u = vectors[:, 0]
        theta = float(u @ (S @ u))
        return theta, u, float(np.linalg.norm(S @ u - theta * u))
    rng = np.random.default_rng(random_state)
    warm = start is not None and bool(np.any(start))
    v0 = start + 1e-3 * rng.standard_normal(n) if warm else rng.standard_normal(n)
    if residual is None:
        return _lanczos(S, v0, tol)
    # ARPACK accepts a pair of residual at most tol |theta|: the start's Rayleigh quotient guesses |theta|
    guess = abs(float(start @ (S @ start))) / float(start @ start) if warm else 0.0
    relative = max(residual / max(guess, residual), _FRACTION) if warm else _FRACTION
    found, confirmed = (-np.inf, np.zeros(n), np.inf), False
    for _ in range(_PASSES + 1):
        relative = float(np.clip(relative, 1e-12, 0.1))
        pass_found = _lanczos(S, v0, relative)
        if not np.isfinite(pass_found[0]):
            break
        if not confirmed or pass_found[0] < found[0]:
            found = pass_found
        # a twentieth of |theta| only below zero: a pair at or above zero (a p.s.d. slack claimed)
        # may lie in the cluster the factor's columns make near zero, above the smallest eigenvalue
        accepted = max(residual, _FRACTION * abs(found[0])) if found[0] < 0 else residual
        if found[0] >= 0 and not confirmed:
            # confirmed from a fresh random start at the aim itself: a start near an eigenvector
            # (the last pair) can hold Lanczos in its invariant subspace, away from a smaller one
            confirmed, v0 = True, rng.standard_normal(n)
            relative = residual / max(abs(found[0]), residual)
            continue
        if found[2] <= accepted or confirmed:
            break
        relative = min(accepted / max(abs(found[0]), residual), 0.5 * relative * accepted / found[2])
        v0 = found[1] + 1e-3 * rng.standard_normal(n) / np.sqrt(n)
    return found


def _lanczos(S, v0, tol) -> tuple[float, np.ndarray, float]:
    """One call of :func:`scipy.sparse.linalg.eigsh` from ``v0`` at ARPACK's relative ``tol``:
    :func:`smallest_eigenvalue`'s triple."""
    n = S.shape[0]
    try:
        values, vectors = eigsh(S, k=1, which="SA", tol=tol, ncv=min(n, 40), maxiter=50 * n, v0=v0)
    except ArpackNoConvergence as error:  # the estimate so far, with its residual
        values, vectors = error.eigenvalues, error.eigenvectors
    except ArpackError:
        values, vectors = np.zeros(0), np.zeros((n, 0))
    if len(values) == 0:
        return -np.inf, np.zeros(n), np.inf
    u = vectors[:, 0] / max(np.linalg.norm(vectors[:, 0]), 1e-300)
    theta = float(u @ (S @ u))
    return theta, u, float(np.linalg.norm(S @ u - theta * u))


def slack_bound(S: SlackOperator, constant: float, tau: float, cost_norm: float, **eigen) -> dict:
    """The bound ``constant + tau * min(0, lambda)`` (``constant = b.y + d.w``), with ``lambda``
    the Ritz value of :func:`smallest_eigenvalue` less its residual and the rounding allowance
    (module docstring), less ``tau * cost.error`` (a cost held compressed: ``|<E, X>| <= ||E||_2 tr X``).
    Returns the bound, ``lambda``, the Ritz vector and the products spent."""
    before = S.products
    theta, u, residual = smallest_eigenvalue(S, **eigen)
    allowance = 8.0 * S.shape[0] * _EPS * S.norm_bound(cost_norm)
    lam = theta - residual - allowance
    return {"bound": float(constant + tau * min(0.0, lam) - tau * S.cost.error), "lambda_min": lam, "vector": u,
            "products": S.products - before, "ritz_residual": residual}
