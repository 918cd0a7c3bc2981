r"""The low-rank SDP (5.30) by an augmented Lagrangian (Burer & Monteiro, 2003).

Replacing the variable of the SDP (5.23) by ``Q = Y Y^T`` with ``Y`` in
:math:`\mathbb{R}^{mc \times r}`, ``Y >= 0`` (5.26), and adding the term of (5.30) that favours a
large projection of ``Q`` on ``1 1^T`` gives

.. math::

    \max_{Y \ge 0}\; f(Y) + \gamma\, g(Y)
    \quad\text{s.t.}\quad h(Y) = b,

    f(Y) = \operatorname{tr}(Y^\top (A \otimes K) Y),\qquad
    g(Y) = \operatorname{tr}(Y^\top \mathbf 1 \mathbf 1^\top Y) = \|\mathbf 1^\top Y\|^2,

where ``h(Y) = b`` collects the constraints (5.27) ``odiag(Y Y^T) = I`` and (5.29)
``bdiag(Y Y^T) 1 = 1`` (Lemmas 4 and 5).  Block ``i`` of ``Y`` (rows ``i m .. (i+1) m``) is
the ``m x r`` matrix ``Y_i`` of cluster ``i`` (``vec(P)`` stacks the columns of ``P``), and
every quantity is computed from the blocks, never from an ``mc x mc`` matrix (Section 5.2.2):

* ``f(Y) = sum_ij A_ij <Y_i, K Y_j>``: one product ``K [Y_1 .. Y_c]`` (``m x cr``), then
  the ``c x c`` mixing by ``A``; ``grad_{Y_i} f = 2 sum_j A_ij K Y_j`` (A, K symmetric);
* ``g(Y) = ||s||^2`` with ``s = Y^T 1``; ``grad g = 2 * 1 s^T``;
* (5.27) ``odiag(Y Y^T)_ij = <Y_i, Y_j> = delta_ij`` for ``i <= j`` (the ``c(c+1)/2``
  symmetric constraints of footnote 3);
* (5.29) ``bdiag(Y Y^T) 1 = sum_i Y_i (Y_i^T 1) = 1`` (``m`` constraints).

The augmented Lagrangian, minimized over ``Y >= 0`` by L-BFGS-B for fixed multipliers ``y`` and
penalty ``sigma``, is

.. math::

    L_\sigma(Y; y) = -\frac{f(Y) + \gamma g(Y)}{s}
                     - y^\top (h(Y) - b) + \frac{\sigma}{2} \|h(Y) - b\|^2,

with a fixed scale ``s = ||A||_inf ||K||_inf + gamma m c`` (a bound on the spectral norm of
the objective's matrix ``A kron K + gamma 1 1^T``) that makes one ``sigma`` fit every data
scale.  After each inner solve the multipliers take the first-order step
``y <- y - sigma (h - b)``, and ``sigma`` is multiplied by ``penalty_growth`` whenever the
infeasibility ``||h - b||_inf`` has not dropped below ``decrease`` times its previous value (the
classic rule of Conn, Gould & Toint / Burer & Monteiro), judged only after inner solves that
finished: one cut by ``inner_max_iter`` says nothing about sigma, and raising sigma after each
(measured with 500-iteration inner solves) froze the iterate at poorer points (the Table 1
pose set: accuracy 40% against 48%).  The outer loop stops when
``||h - b||_inf <= tol``.

Two further departures from the plain method make it scale:

* **Feasibility restoration.**  With ``Y >= 0`` the off-diagonal constraints of (5.27) are
  complementarity constraints (``<Y_i, Y_j> = 0`` iff no entry is positive in both blocks), at
  which the augmented Lagrangian converges slowly: on 500 digits it reached infeasibility
  5e-4 in 4 outer iterations (28 s) and needed 8 more (77 s) for 1e-6, with sigma up to 1e9,
  while the objective no longer moved.  Once an outer iterate is within ``restore_below``
  (1e-2) of feasible and its objective has moved by at most ``restore_stall`` (1e-3,
  relative) since the previous outer iteration, :func:`_restore` gives every entry to the
  block where it is largest and takes Gauss-Newton steps on that face to ``1e-3 tol``; the
  restored factor is returned (restored from the 4th iterate above: objective 249.05 against
  249.03 for the full run).  When a limit stops the loop, the restoration is tried once more,
  so that the factor returned is feasible whenever it can be; the status stays
  ``"max_iter"``/``"time_limit"``.
* **Working set.**  Each inner solve optimizes only the entries that are positive or whose
  partial derivative would raise them from 0 by more than the inner tolerance; the others
  stay at 0 until the next outer iteration.  Most entries sit at their bound (each row
  belongs mostly to one block), and L-BFGS-B's own work grows with its variable count.

``status == "optimal"`` means what it always meant here: the returned factor satisfies the
constraints to ``tol``.  As for every local method on (5.30), it does not certify a maximum.

The start is nonnegative with disjoint block supports (each entry ``(l, a)`` belongs to one
cluster), so (5.27)'s off-diagonal constraints hold from the start, scaled to be nearly feasible
(see ``_initial_factor``).  With ``init="random"`` (the paper's start) each entry's cluster is
random; with ``init="spectral"`` (the default, a departure from the paper) every row belongs to
the cluster of its point in the rounded spectral relaxation (Proposition 2), so ``Y Y^T`` starts
near the lift of a good partition.  On 500 digits (chain of 10, r = 10) the random start ends
at tr((A kron K) Y Y^T) = 12 and near-chance labels, the spectral start at 193 (the spectral
partition itself scores 185).  Inner tolerances are relative to the projected
gradient at the start, since gradients shrink with the entries of ``Y`` as m grows.

Cost per L-BFGS-B iteration: one ``K [Y_1 .. Y_c]`` product, O(m^2 c r) (Section 5.2.2), plus
L-BFGS-B's own O(m c r) work.  This is a local method on a nonconvex problem: different seeds
can give different local solutions, and with rank 1 it usually stops at a poor one (Section
6.1.3, Figure 3).

Semi-supervised use (Section 6): a point ``l`` with known label ``k`` has rows ``l`` of every
block ``Y_i``, ``i != k``, fixed to 0 through the bounds of L-BFGS-B.

``Y Y^T`` is p.s.d. and entrywise nonnegative by construction and satisfies the equality
constraints of (5.23) to ``tol``, so ``f(Y)`` is (up to ``tol``) a lower bound of the optimum of
the SDP (5.23); it equals it when the SDP has an optimal solution of rank <= r that this local
method finds.

References
----------
S. Burer and R. Monteiro, "A nonlinear programming algorithm for solving semidefinite programs
via low-rank factorization", Mathematical Programming 95(2), 2003.
"""

from __future__ import annotations

import numbers
import time
from dataclasses import dataclass, field

import numpy as np
from scipy.optimize import Bounds, linear_sum_assignment, minimize, quadratic_assignment
from scipy.sparse.linalg import LinearOperator, cg
from sklearn.utils import check_random_state

from .._checks import check_choice, check_int_range, check_positive, check_square_matrix
from .._stopping import IterationMonitor
from ..linalg import scipy_blas_threads, with_blas_threads
from ._heuristics import spectral
from ._objectives import check_labels, partition_matrix

__all__ = ["LowRankResult", "lowrank", "lowrank_objective", "lowrank_residuals"]


@dataclass
class LowRankResult:
    """Outcome of :func:`lowrank`.

    Attributes
    ----------
    Y : ndarray of shape (m * c, r)
        The nonnegative factor; ``Q = Y Y^T`` is the relaxed solution of (5.23).
    objective : float
        ``f(Y) = tr(Y^T (A kron K) Y) = tr((A kron K) Y Y^T)``, without the gamma term.
    penalized_objective : float
        ``f(Y) + gamma g(Y)``, the objective of (5.30).
    status : str
        ``"optimal"`` (``||h - b||_inf <= tol``), ``"max_iter"`` or ``"time_limit"``.
    iterations : int
        Outer (multiplier) iterations.
    inner_iterations : int
        L-BFGS-B iterations summed over the outer iterations.
    time : float
        Wall seconds.
    residuals : dict of str to float
        ``"odiag"``: ``max_{i<=j} |<Y_i, Y_j> - delta_ij|``; ``"bdiag"``:
        ``max_l |(sum_i Y_i Y_i^T 1)_l - 1|``; ``"nonnegativity"``: ``max(-min(Y), 0)``.
    multipliers : dict of str to ndarray
        Final multipliers of the odiag (``c x c``, symmetric) and bdiag (``m``) constraints, in the
        units of the scaled objective ``(f + gamma g) / scale``.
    sigma : float
        Final penalty.
    scale : float
        The objective scale ``s``.
    method : str
        ``"lowrank"``.
    history : list of dict
        One row per outer iteration (objective, infeasibility, sigma, inner iterations, ...).
    """

    Y: np.ndarray
    objective: float
    penalized_objective: float
    status: str
    iterations: int
    inner_iterations: int
    time: float
    residuals: dict[str, float]
    multipliers: dict[str, np.ndarray]
    sigma: float
    scale: float
    method: str = "lowrank"
    history: list[dict] = field(default_factory=list)

    @property
    def max_residual(self) -> float:
        """The worst feasibility violation."""
        return max(self.residuals.values(), default=0.0)

    @property
    def Q(self) -> np.ndarray:
        """``Y Y^T`` (dense ``mc x mc``: for small instances only)."""
        return self.Y @ self.Y.T


class _AugmentedLagrangian:
    """Objective, constraints and augmented Lagrangian of (5.30) on the blocks of Y.

    ``Y`` is handled as an array of shape ``(c, m, r)`` (``Y.reshape(c, m, r)`` of the
    ``mc x r`` factor: block ``i`` is ``[i]``).
    """

    def __init__(self, K: np.ndarray, A: np.ndarray, rank: int, gamma: float):
        self.K, self.A, self.gamma = K, A, float(gamma)
        self.m, self.c, self.r = K.shape[0], A.shape[0], rank
        # bound on ||A kron K + gamma 1 1^T||_2 (infinity norms of symmetric matrices)
        self.scale = max(np.abs(A).sum(axis=1).max() * np.abs(K).sum(axis=1).max() + self.gamma * self.m * self.c,
                         1e-12)
        self.upper = np.triu_indices(self.c)
        self.n_odiag = len(self.upper[0])

    # -- pieces --------------------------------------------------------------------------
    def objective_terms(self, Y3: np.ndarray):
        """``f``, ``grad f``, ``g``, ``grad g`` (``grad g`` as the r-vector ``2 s``)."""
        c, m, r = Y3.shape
        KY = (self.K @ Y3.transpose(1, 0, 2).reshape(m, c * r)).reshape(m, c, r).transpose(1, 0, 2)
        AKY = np.tensordot(self.A, KY, axes=(1, 0))  # block i: sum_j A_ij K Y_j
        f = float(np.vdot(Y3, AKY))
        s = Y3.sum(axis=(0, 1))
        return f, 2.0 * AKY, float(s @ s), 2.0 * s

    def constraints(self, Y3: np.ndarray):
        """``h(Y) - b`` split into odiag (``c(c+1)/2``, upper triangle) and bdiag (``m``), and
        the block sums ``t_i = Y_i^T 1`` reused by the gradient."""
        c = Y3.shape[0]
        Y2 = Y3.reshape(c, -1)
        G = Y2 @ Y2.T - np.eye(c)
        t = Y3.sum(axis=1)  # (c, r)
        u = np.einsum("imr,ir->m", Y3, t) - 1.0
        return G[self.upper], u, t

    def constraint_vjp(self, Y3: np.ndarray, w_odiag: np.ndarray, w_bdiag: np.ndarray, t=None) -> np.ndarray:
        """``sum_k w_k grad h_k(Y)`` as a ``(c, m, r)`` array.

        odiag: ``grad <Y_i, Y_j> = (Y_j at block i) + (Y_i at block j)``, so the sum is
        ``2 Omega Y`` (blockwise) with Omega symmetric, ``Omega_ii = w_ii``,
        ``Omega_ij = w_ij / 2``.  bdiag: ``grad_{Y_i} v^T Y_i Y_i^T 1 = v t_i^T + 1 (Y_i^T v)^T``.
        """
        c = Y3.shape[0]
        if t is None:
            t = Y3.sum(axis=1)
        Omega = np.zeros((c, c))
        Omega[self.upper] = w_odiag
        Omega = (Omega + Omega.T) / 2  # off-diagonals halved, diagonal kept
        grad = 2.0 * np.tensordot(Omega, Y3, axes=(1, 0))
        grad += w_bdiag[None, :, None] * t[:, None, :]
        grad += np.einsum("imr,m->ir", Y3, w_bdiag)[:, None, :]
        return grad

    def constraint_jvp(self, Y3: np.ndarray, D: np.ndarray, t: np.ndarray):
        """The directional derivative ``h'(Y)[D]`` (odiag upper triangle, bdiag), ``t = Y^T 1`` blockwise:
        ``d<Y_i, Y_j> = <D_i, Y_j> + <Y_i, D_j>`` and ``d(Y_i t_i) = D_i t_i + Y_i (D_i^T 1)``."""
        c = Y3.shape[0]
        M = Y3.reshape(c, -1) @ D.reshape(c, -1).T
        return (M + M.T)[self.upper], np.einsum("imr,ir->m", D, t) + np.einsum("imr,ir->m", Y3, D.sum(axis=1))

    def value_and_grad(self, Y3: np.ndarray, y_odiag, y_bdiag, sigma: float):
        """``L_sigma(Y; y)`` and its gradient (same shape as ``Y3``)."""
        f, grad_f, g, grad_g = self.objective_terms(Y3)
        h_o, h_b, t = self.constraints(Y3)
        w_o, w_b = sigma * h_o - y_odiag, sigma * h_b - y_bdiag
        value = (-(f + self.gamma * g) / self.scale - y_odiag @ h_o - y_bdiag @ h_b
                 + 0.5 * sigma * (h_o @ h_o + h_b @ h_b))
        grad = self.constraint_vjp(Y3, w_o, w_b, t)
        grad -= grad_f / self.scale
        grad -= (self.gamma / self.scale) * grad_g[None, None, :]
        return value, grad


def _check_factor(Y, m: int, c: int, name: str = "Y") -> np.ndarray:
    try:
        Y = np.asarray(Y, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric matrix") from None
    if Y.ndim == 1:
        Y = Y[:, None]
    if Y.ndim != 2 or Y.shape[0] != m * c or Y.shape[1] < 1:
        raise ValueError(f"{name} must have shape (m * c, r) = ({m * c}, r), got {Y.shape}")
    if not np.all(np.isfinite(Y)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return Y


def lowrank_objective(K, A, Y) -> float:
    """``f(Y) = tr(Y^T (A kron K) Y) = sum_ij A_ij <Y_i, K Y_j>``, the objective of (5.23) at
    ``Q = Y Y^T``, computed blockwise."""
    K = check_square_matrix(K, "K")
    A = check_square_matrix(A, "A")
    m, c = K.shape[0], A.shape[0]
    Y = _check_factor(Y, m, c)
    return _AugmentedLagrangian(K, A, Y.shape[1], 0.0).objective_terms(Y.reshape(c, m, -1))[0]


def lowrank_residuals(Y, m: int, c: int) -> dict[str, float]:
    """Feasibility violations of ``Q = Y Y^T`` for (5.23), computed blockwise.

    Returns ``{"odiag": max_{i<=j} |<Y_i, Y_j> - delta_ij|, "bdiag": max_l |(sum_i Y_i Y_i^T 1)_l - 1|,
    "nonnegativity": max(-min(Y), 0)}`` (absolute: the right-hand sides are 0 and 1).
    """
    m = check_int_range(m, "m", 1)
    c = check_int_range(c, "c", 1)
    Y = _check_factor(Y, m, c)
    Y3 = Y.reshape(c, m, -1)
    Y2 = Y3.reshape(c, -1)
    G = Y2 @ Y2.T - np.eye(c)
    u = np.einsum("imr,ir->m", Y3, Y3.sum(axis=1)) - 1.0
    return {
        "odiag": float(np.abs(G[np.triu_indices(c)]).max()),
        "bdiag": float(np.abs(u).max()),
        "nonnegativity": float(max(-Y.min(), 0.0)),
    }


def _restore(ev: _AugmentedLagrangian, Y3: np.ndarray, tol: float, max_steps: int = 30):
    r"""Feasibility restoration on one face of (5.30): the nearest-step Gauss-Newton projection onto
    ``h(Y) = b`` with the support of ``Y`` fixed.

    With ``Y >= 0``, ``<Y_i, Y_j> = 0`` (i != j) holds iff no entry ``(l, a)`` is positive in two
    blocks: a complementarity constraint, at which the constraint gradients are degenerate and
    the augmented Lagrangian converges slowly (on 500 digits, 4 outer iterations reach
    infeasibility 5e-4 and 8 more are needed for 1e-6).  Giving each entry to the block where it
    is largest (zeroing it elsewhere) makes those constraints hold exactly; on that face the
    rest, ``||Y_i||^2 = 1`` and (5.29), have well-conditioned gradients, and Gauss-Newton steps
    ``D = J^T lambda`` with ``J J^T lambda = -(h - b)`` (J restricted to the positive entries,
    solved by conjugate gradients with the products of :meth:`constraint_vjp` and
    :meth:`constraint_jvp`) converge to ``tol`` in a few steps, each shortened so that no entry
    loses more than half its value (nonnegativity).  Known-label zeros stay zero.

    Returns the restored ``Y3`` and its infeasibility ``||h - b||_inf`` (check it against ``tol``).
    """
    c, m, r = Y3.shape
    owner = Y3.argmax(axis=0)
    Y3 = np.where(np.arange(c)[:, None, None] == owner[None], Y3, 0.0)
    n_odiag = ev.n_odiag
    size = n_odiag + m
    infeasibility = np.inf
    for step in range(max_steps + 1):
        h_o, h_b, t = ev.constraints(Y3)
        infeasibility = float(max(np.abs(h_o).max(), np.abs(h_b).max()))
        if infeasibility <= tol or step == max_steps:
            break
        positive = Y3 > 0

        def normal_product(lam, Y3=Y3, t=t, positive=positive):  # J J^T lambda on the positive entries
            D = positive * ev.constraint_vjp(Y3, lam[:n_odiag], lam[n_odiag:], t)
            return np.concatenate(ev.constraint_jvp(Y3, D, t))

        lam, _ = cg(LinearOperator((size, size), matvec=normal_product), -np.concatenate([h_o, h_b]),
                    rtol=1e-8, maxiter=10 * size)
        D = positive * ev.constraint_vjp(Y3, lam[:n_odiag], lam[n_odiag:], t)
        shrink = float((-D / np.where(positive, Y3, np.inf)).max())
        Y3 = np.maximum(Y3 + min(1.0, 0.5 / max(shrink, 1e-300)) * D, 0.0)
    return Y3, infeasibility


def _initial_factor(rng, c: int, m: int, r: int, known: np.ndarray | None, ev: _AugmentedLagrangian,
                    labels: np.ndarray | None = None) -> np.ndarray:
    """``Y >= 0`` with disjoint block supports, scaled to be nearly feasible.

    Every entry ``(l, a)`` (point ``l``, column ``a``) is given to one cluster ``i`` (the known
    one for a labelled point; ``labels[l]`` for every column if ``labels`` is given, else a
    random cluster per entry) with a value drawn uniformly in [0.5, 1], so that the
    off-diagonal constraints ``<Y_i, Y_j> = 0`` (5.27) hold exactly from the start: a dense
    start violates them so much that the first L-BFGS-B steps clip whole blocks to zero, a
    stationary point of the penalty that no multiplier update leaves (seen for m = 2000).
    A random start is then multiplied by ``alpha`` minimizing ``||h(alpha Y) - b||^2 =
    ||alpha^2 h(Y) - b||^2``: ``alpha^2 = <h(Y), b> / ||h(Y)||^2``.  A start from labels has each
    block scaled to unit norm instead (the diagonal of (5.27) exactly), which leaves (5.29) off
    only by ``1 - E[u]^2 / E[u^2]`` (about 4%) for the uniform entries.
    """
    if labels is None:
        owner = rng.randint(0, c, size=(m, r))
    else:
        owner = np.repeat(labels[:, None], r, axis=1)
    if known is not None:
        labelled = known >= 0
        owner[labelled] = known[labelled, None]
    Y3 = np.zeros((c, m, r))
    rows, cols = np.meshgrid(np.arange(m), np.arange(r), indexing="ij")
    Y3[owner, rows, cols] = rng.uniform(0.5, 1.0, size=(m, r))
    if labels is not None:
        norms = np.linalg.norm(Y3.reshape(c, -1), axis=1)
        return Y3 / np.where(norms > 0, norms, 1.0)[:, None, None]
    h_o, h_b, _ = ev.constraints(Y3)
    b_o = np.eye(c)[ev.upper]
    h_o, h_b = h_o + b_o, h_b + 1.0  # h(Y) itself
    alpha2 = (h_o @ b_o + h_b.sum()) / (h_o @ h_o + h_b @ h_b)
    return Y3 * np.sqrt(alpha2)


def _initial_labels(init, K: np.ndarray, A: np.ndarray, rng, known: np.ndarray | None) -> np.ndarray | None:
    """The labels a start is built from: None for the random start."""
    if isinstance(init, str):
        check_choice(init, "init", ("spectral", "random"))
        if init == "random":
            return None
        return _align_to_structure(spectral(K, A, normalized=True, random_state=rng).labels, K, A, rng, known)
    return check_labels(init, K.shape[0], A.shape[0], name="init")


def _align_to_structure(labels: np.ndarray, K: np.ndarray, A: np.ndarray, rng, known: np.ndarray | None = None,
                        n_init: int = 50) -> np.ndarray:
    """Relabel the clusters of a partition to fit the output kernel.

    The spectral relaxation ignores ``A`` (Proposition 2: ``P P^T = U_c U_c^T``), so its rounded
    clusters come in arbitrary order, and a local method started from them keeps a wrong chain
    order.  The best relabeling ``sigma`` maximizes ``sum_kl S_kl A_{sigma(k) sigma(l)}`` with
    ``S = P^T K P`` (P normalized, (2.4)): a quadratic assignment problem, approximated by
    SciPy's 2-opt from ``n_init`` random starts (on a chain of 5 or 10 blobs one start in four
    reaches the best relabeling; SciPy's FAQ did worse).  Known labels (``-1`` = free) come
    first: the clusters holding labelled points are matched to those labels (Hungarian, on the
    counts) and kept fixed in the assignment.
    """
    c = A.shape[0]
    P = partition_matrix(labels, c, normalized=True)
    S = P.T @ K @ P
    fixed = np.empty((0, 2), dtype=int)
    if known is not None and np.any(known >= 0):
        labelled = known >= 0
        counts = np.zeros((c, c))
        np.add.at(counts, (labels[labelled], known[labelled]), 1.0)
        rows, cols = linear_sum_assignment(counts, maximize=True)
        keep = counts[rows, cols] > 0
        fixed = np.c_[rows[keep], cols[keep]]
    generator = np.random.default_rng(rng.randint(2**31))
    best = None
    for _ in range(n_init):
        res = quadratic_assignment(S, A, method="2opt",
                                   options={"maximize": True, "partial_match": fixed, "rng": generator})
        if best is None or res.fun > best.fun:
            best = res
    return best.col_ind[labels]


# one BLAS thread below m = 1500: 2.5x the iterations per second at m = 500 (bad K is reported later)
@with_blas_threads(lambda K: np.shape(K)[0] if np.ndim(K) else 0)
def lowrank(
    K,
    A,
    *,
    rank: int = 10,
    gamma: float = 0.1,
    known=None,
    tol: float = 1e-6,
    max_iter: int = 100,
    time_limit: float = np.inf,
    random_state=None,
    verbose: bool = False,
    sigma: float = 10.0,
    penalty_growth: float = 10.0,
    decrease: float = 0.25,
    inner_max_iter: int = 500,
    init="spectral",
    Y0=None,
    restore_below: float = 1e-2,
    restore_stall: float = 1e-3,
) -> LowRankResult:
    r"""Maximize the low-rank SDP (5.30) over ``Y >= 0`` by an augmented Lagrangian.

    .. math::

        \max_{Y \in \mathbb{R}^{mc \times r},\ Y \ge 0}\;
            \operatorname{tr}(Y^\top (A \otimes K) Y) + \gamma \operatorname{tr}(Y^\top \mathbf 1 \mathbf 1^\top Y)
        \quad\text{s.t.}\quad \operatorname{odiag}(YY^\top) = I\ (5.27),\quad
            \operatorname{bdiag}(YY^\top)\mathbf 1 = \mathbf 1\ (5.29).

    See the module docstring for the algorithm.

    Parameters
    ----------
    K : array-like of shape (m, m)
        Symmetric input kernel (centred, as in (2.2)).
    A : array-like of shape (c, c)
        Symmetric output kernel on the ``c`` clusters, ``2 <= c <= m``.
    rank : int
        ``r``, the number of columns of ``Y`` (the paper uses 10; 1 is the exact rank of a
        partition, Proposition 3).
    gamma : float >= 0
        Weight of ``tr(Y^T 1 1^T Y)`` in (5.30) (the paper fixes 0.1).
    known : array-like of shape (m,), optional
        Known labels in ``0..c-1``, ``-1`` for unknown (semi-supervised use, Section 6).
    tol : float
        Stop when ``||h(Y) - b||_inf <= tol``.
    max_iter, time_limit : int, float
        Limits on the outer iterations and on the wall time (checked inside L-BFGS-B too);
        hitting one gives a ConvergenceWarning and the status ``"max_iter"``/``"time_limit"``.
    random_state : int, RandomState, Generator or None
        Seed of the random nonnegative initialization.
    verbose : bool
        Progress bar over the outer iterations.
    sigma : float
        Initial penalty (in the units of the scaled objective).
    penalty_growth, decrease : float
        ``sigma *= penalty_growth`` when the infeasibility is not below ``decrease`` times the
        previous one.
    inner_max_iter : int
        L-BFGS-B iterations per outer iteration.
    init : {"spectral", "random"} or array-like of int of shape (m,)
        Start (see the module docstring): ``"spectral"`` rounds the spectral relaxation of
        Proposition 2 (known labels override it), ``"random"`` is the paper's random start, an
        array gives the starting labels.  Ignored when ``Y0`` is given.
    Y0 : array-like of shape (m * c, r), optional
        Nonnegative starting factor (overrides ``rank`` and ``init``); known-label zeros are
        applied to it.
    restore_below, restore_stall : float
        Once the infeasibility of an outer iterate is at most ``restore_below`` and its
        objective has changed by at most ``restore_stall`` (relative) since the previous outer
        iterate, try the feasibility restoration of :func:`_restore` (Gauss-Newton on the
        iterate's face); ``restore_below=0`` disables it.  A larger ``restore_stall`` stops
        sooner at a lower objective (digits, m = 2000: 5e-3 gave 1.2% less in 30 s instead of
        93 s, ``benchmarks/results/cluhsic_speed.md``).

    Returns
    -------
    LowRankResult
    """
    start = time.perf_counter()
    K = check_square_matrix(K, "K", min_size=2)
    A = check_square_matrix(A, "A")
    m, c = K.shape[0], A.shape[0]
    if not 2 <= c <= m:
        raise ValueError(f"A must be c x c with 2 <= c <= m = {m} (the number of clusters), got c = {c}")
    rank = check_int_range(rank, "rank", 1)
    if isinstance(gamma, bool) or not isinstance(gamma, numbers.Real) or not np.isfinite(gamma) or gamma < 0:
        raise ValueError(f"gamma must be a finite number >= 0, got {gamma!r}")
    check_positive(sigma, "sigma")
    check_positive(penalty_growth, "penalty_growth")
    if penalty_growth <= 1:
        raise ValueError(f"penalty_growth must be > 1, got {penalty_growth!r}")
    check_positive(decrease, "decrease")
    if decrease >= 1:
        raise ValueError(f"decrease must lie in (0, 1), got {decrease!r}")
    inner_max_iter = check_int_range(inner_max_iter, "inner_max_iter", 1)
    for value, name in [(restore_below, "restore_below"), (restore_stall, "restore_stall")]:
        if isinstance(value, bool) or not isinstance(value, numbers.Real) or not value >= 0:
            raise ValueError(f"{name} must be a number >= 0, got {value!r}")
    fixed = None
    if known is not None:
        known = check_labels(known, m, c, name="known", allow_unknown=True)
        labelled = np.flatnonzero(known >= 0)
        fixed = np.zeros((c, m, 1), dtype=bool)
        fixed[:, labelled, 0] = True
        fixed[known[labelled], labelled, 0] = False  # the block of the known label stays free
    rng = check_random_state(random_state)
    monitor = IterationMonitor("lowrank", tol=tol, max_iter=max_iter, time_limit=time_limit, verbose=verbose)

    if Y0 is not None:
        Y0 = _check_factor(Y0, m, c, "Y0")
        if Y0.min() < 0:
            raise ValueError("Y0 must be entrywise nonnegative")
        rank = Y0.shape[1]
    ev = _AugmentedLagrangian(K, A, rank, gamma)
    if fixed is not None:
        fixed = np.broadcast_to(fixed, (c, m, rank))
    if Y0 is None:
        Y3 = _initial_factor(rng, c, m, rank, known, ev, _initial_labels(init, K, A, rng, known))
    else:
        Y3 = Y0.reshape(c, m, rank).copy()
        if fixed is not None:
            Y3[fixed] = 0.0
    upper = np.zeros((c, m, rank)) + np.inf
    if fixed is not None:
        upper[fixed] = 0.0
    shape = (c, m, rank)

    y_o, y_b = np.zeros(ev.n_odiag), np.zeros(m)
    h_o, h_b, _ = ev.constraints(Y3)
    infeasibility = float(max(np.abs(h_o).max(), np.abs(h_b).max()))
    reference = infeasibility  # infeasibility at the last penalty decision
    f_previous = np.inf
    inner_total = 0

    def stop_on_time(intermediate_result):
        # the time limit applies inside an inner solve too: one L-BFGS-B run may be long
        if monitor.elapsed > time_limit:
            raise StopIteration

    # gradients shrink with the entries of Y (about 1 / sqrt(m / c)): the inner tolerances are
    # relative to the projected gradient at the start, or L-BFGS-B stops at once for large m
    _, grad0 = ev.value_and_grad(Y3, y_o, y_b, sigma)
    movable = (upper > 0) & ((Y3 > 0) | (grad0 < 0))
    grad_scale = max(float(np.abs(grad0[movable]).max(initial=0.0)), 1e-300)
    for it in monitor:
        # inner accuracy follows the infeasibility: early inner solves need not be exact, late
        # ones must be to reach tol
        gtol = grad_scale * float(np.clip(0.01 * infeasibility, 1e-3 * tol, 1e-3))

        # working set: the entries that are positive or that the Lagrangian would raise from 0;
        # the others stay at 0 for this inner solve (L-BFGS-B's own work grows with its variables,
        # and most entries sit at their bound: each row belongs mostly to one block)
        _, grad = ev.value_and_grad(Y3, y_o, y_b, sigma)
        work = np.flatnonzero((upper > 0) & ((Y3 > 0) | (grad < -gtol)))
        full = np.zeros(Y3.size)

        def fun(x, y_o=y_o, y_b=y_b, sigma=sigma, work=work, full=full):
            full[work] = x
            value, grad = ev.value_and_grad(full.reshape(shape), y_o, y_b, sigma)
            return value, grad.ravel()[work]

        # L-BFGS-B's BLAS (SciPy's own OpenBLAS) does vector work only: with two threads its
        # spinning pool halved the speed of NumPy's K @ Y at m = 2000 (see scipy_blas_threads)
        with scipy_blas_threads(1):
            res = minimize(fun, Y3.ravel()[work], jac=True, method="L-BFGS-B",
                           bounds=Bounds(np.zeros(work.size), upper.ravel()[work]),
                           callback=stop_on_time,
                           options={"maxiter": inner_max_iter, "maxfun": 2 * inner_max_iter,
                                    "gtol": gtol, "ftol": 1e-15, "maxcor": 10})
        timed_out = monitor.elapsed > time_limit  # a cut inner solve has not settled: no restoration yet
        # L-BFGS-B keeps its iterates inside the bounds; clip guards the last rounding ulp
        Y3 = np.zeros(Y3.size)
        Y3[work] = np.maximum(res.x, 0.0)
        Y3 = Y3.reshape(shape)
        inner_total += int(res.nit)
        h_o, h_b, _ = ev.constraints(Y3)
        infeasibility = float(max(np.abs(h_o).max(), np.abs(h_b).max()))
        restored = None
        f, _, g, _ = ev.objective_terms(Y3)
        stalled = abs(f - f_previous) <= restore_stall * abs(f)
        f_previous = f
        if tol < infeasibility <= restore_below and stalled and not timed_out:
            candidate, candidate_infeasibility = _restore(ev, Y3, 1e-3 * tol)
            if candidate_infeasibility <= tol:
                restored, infeasibility = candidate, candidate_infeasibility
                f, _, g, _ = ev.objective_terms(restored)
        monitor.record(objective=f, penalized_objective=f + gamma * g, infeasibility=infeasibility,
                       sigma=float(sigma), inner_iterations=int(res.nit), inner_evaluations=int(res.nfev),
                       inner_gtol=gtol, inner_message=str(res.message), restored=restored is not None,
                       working_set=work.size / Y3.size)
        if restored is not None:
            Y3 = restored
        if infeasibility <= tol:
            monitor.converged()
            break
        # first-order multiplier step (Hestenes-Powell), then the classic penalty rule
        y_o = y_o - sigma * h_o
        y_b = y_b - sigma * h_b
        if res.nit < inner_max_iter:  # an unfinished inner solve says nothing about sigma
            if infeasibility > decrease * reference:
                sigma *= penalty_growth
            reference = min(reference, infeasibility)
    if monitor.status != "optimal" and restore_below > 0:
        # stopped by a limit: return a feasible factor if one is at hand (the status stays)
        candidate, candidate_infeasibility = _restore(ev, Y3, 1e-3 * tol)
        if candidate_infeasibility <= tol:
            Y3 = candidate

    Y = Y3.reshape(m * c, rank)
    f, _, g, _ = ev.objective_terms(Y3)
    multipliers = np.zeros((c, c))
    multipliers[ev.upper] = y_o
    multipliers = multipliers + np.triu(multipliers, 1).T
    return LowRankResult(
        Y=Y,
        objective=f,
        penalized_objective=f + gamma * g,
        status=monitor.status,
        iterations=monitor.iterations,
        inner_iterations=inner_total,
        time=time.perf_counter() - start,
        residuals=lowrank_residuals(Y, m, c),
        multipliers={"odiag": multipliers, "bdiag": y_b},
        sigma=float(sigma),
        scale=ev.scale,
        history=monitor.history,
    )
