r"""``ConditionalJC``: the relaxation (10) over M1 for a jointly convex divergence (Section 3.1).

The problem
-----------
With X the t x n data (rows = points) and d clusters,

.. math::

    \min_{M \in \mathcal{M}_1} f(M) := D_F(X, M X) = \sum_i D_F(X_{i:}, M_{i:} X),
    \qquad
    \mathcal{M}_1 = \{M : 0 \preceq M \preceq I,\ \mathrm{tr}(M) \le d,\ M_{i:} \in \Delta_t\}.

On the exact set M of normalized equivalence matrices (9), ``M X`` replaces each point by the
mean of its cluster, and Banerjee et al. (2005) show the mean is the optimal centre for every
Bregman divergence, so (10) on M is Bregman hard clustering ``min_{Y, Gamma} D_F(X, Y Gamma)``.

The solvers split the constraints into the row-wise simplex constraints
``S = {M : M_{i:} in Delta_t}`` (non-spectral) and the spectral set M2 (so that
``M1 = S ∩ M2``): the ADMM of Section 3.1.1 (:mod:`cvxclust.bregman._jc_admm`) and, for the
quadratic divergences, Davis-Yin splitting (:mod:`cvxclust.bregman._davis_yin`).  Both certify
their points with the dual bound below and return an exactly feasible point
(:mod:`cvxclust.bregman._feasible`).

The dual bound
--------------
With multiplier Y of ``M = Z`` (M in S, Z in M2) the Lagrange dual function is

.. math::

    g(Y) = \underbrace{\min_{M \in S} f(M) + \langle Y, M\rangle}_{g_1(Y)}
         \;+\; \underbrace{\min_{Z \in \mathcal{M}_2} -\langle Y, Z\rangle}_{g_2(Y)}
         \;\le\; p^\star

for every Y (weak duality).  ``g_2`` is exact: by Lemma 1, ``Z = H S H + J`` with ``S`` in
M3 and ``J = 11'/t``, so with ``Y_s = (Y + Y')/2``

.. math::

    g_2(Y) = -\frac{1}{t}\mathbf{1}'Y\mathbf{1}
             - \sum_{i=1}^{d-1} \max(\lambda_i(H Y_s H), 0)

(top d - 1 eigenvalues: ``max <A, S>`` over ``0 <= S <= I, tr S <= d - 1`` is a linear
program in the eigenvalues of S, by von Neumann's trace inequality).  ``g_1`` has no closed
form, but for any ``M̂`` in S convexity of ``phi(M) = f(M) + <Y, M>`` gives the certified
lower bound (a Frank-Wolfe gap; the linear minimisation over a product of simplices picks
the smallest entry of each row)

.. math::

    g_1(Y) \ge \phi(\hat M) + \sum_i \big(\min_j G_{ij} - \langle G_{i:}, \hat M_{i:}\rangle\big),
    \qquad G = \nabla f(\hat M) + Y,\quad \nabla f(M) = \nabla_2 D_F(X, M X)\, X'.

The solvers evaluate it at their S iterate for two multipliers, each exact on one side: one
for which their Z-step makes Z exactly optimal in ``g_2`` (no eigenvalues needed), one for
which their M-step makes M exactly optimal in ``g_1`` (the Frank-Wolfe term vanishes).  The
bound is certified (up to floating point) for every multiplier, not an estimate.

Feasible output
---------------
``Z`` is in M2 (symmetric, ``0 <= Z <= I``, ``tr Z <= d``, ``Z 1 = 1``) but may have small
negative entries.  ``J = 11'/t`` lies in M1 and M1, M2 are convex, so
``(1 - s) Z + s J`` stays in M2 for every s in [0, 1] and is entrywise nonnegative for
``s = t n / (1 + t n)``, ``n = max(0, -min Z)``: an exactly feasible point of M1
(:meth:`ConditionalJC.restore`) at an objective change of order ``t n``.

Reference: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from .._checks import check_n_clusters
from .._relaxation import Relaxation
from ..kernels import center
from ._problem import conditional_jc_problem
from .divergences import Divergence, GeneralizedKL, get_divergence
from .sets import residuals_M1

__all__ = ["ConditionalJC"]


class ConditionalJC(Relaxation):
    r"""The convex relaxation (10) of Bregman hard clustering over M1 (Section 3.1)::

        minimize    D_F(X, M X) = sum_i D_F(X_{i:}, M_{i:} X)
        subject to  M in M1 = {M : 0 <= M <= I, tr(M) <= d, M_{i:} in Delta_t}

    for a divergence D_F that is jointly convex (so the objective is convex in M).  On a
    normalized equivalence matrix (9) ``M = Y (Y'Y)^+ Y'`` the objective is the Bregman
    hard-clustering objective ``D_F(X, Y Gamma)`` with ``Gamma = (Y'Y)^+ Y'X`` the cluster
    means, so the optimum of (10) over M1 is a lower bound on the best hard clustering.

    Methods: ``"reference"`` (cvxpy; Clarabel or SCS), ``"admm"`` (the ADMM of Section 3.1.1
    with a certified dual bound, its M-step linearised by default, see
    :mod:`cvxclust.bregman._jc_admm`; the default for the non-quadratic divergences) and
    ``"davis-yin"`` (three-operator splitting of the same problem with one gradient step per
    iteration and a global step size, for the quadratic divergences, where it is the default;
    see :mod:`cvxclust.bregman._davis_yin`).

    Parameters
    ----------
    X : array_like, shape (t, n)
        Data, one point per row, in the domain of the divergence (nonnegative for ``"kl"``,
        strictly inside (0, 1) for ``"logistic"``).  Copied.
    divergence : str or Divergence
        A jointly convex divergence: ``"euclidean"``, ``"kl"``, ``"logistic"`` (aliases
        ``"linear"``, ``"poisson"``, ``"sigmoid"``, ``"bernoulli"``) or a
        :class:`~cvxclust.bregman.divergences.Divergence` instance (e.g. ``Mahalanobis(W)``).
    n_clusters : int
        d, ``2 <= d <= t``.

    Raises
    ------
    ValueError
        Naming ``divergence`` if it is unknown or not jointly convex (use the conditional
        relaxation (15)/(17) for those), ``X`` if it is not a finite matrix in the divergence's
        domain, ``n_clusters`` if out of range.
    """

    name = "ConditionalJC"

    @classmethod
    def from_catalogue(cls, K, X, y, table):
        """Build from a catalogue file (``cvxclust validate``): the data of its ``[data]`` table
        and the top-level keys ``divergence`` and ``n_clusters``; a kernel, if the file gives one,
        is not used."""
        for key in ("divergence", "n_clusters"):
            if key not in table:
                raise ValueError(f"{key} is required (a top-level key of the file)")
        return cls(X, table["divergence"], table["n_clusters"])

    def __init__(self, X, divergence, n_clusters):
        if isinstance(divergence, str) and divergence.lower() == "mahalanobis":
            raise ValueError("divergence='mahalanobis' needs its weight matrix: pass Mahalanobis(W) instead")
        self.divergence: Divergence = get_divergence(divergence)
        if not self.divergence.jointly_convex:
            raise ValueError(
                f"divergence {self.divergence.name!r} is not jointly convex, so D_F(X, M X) is not convex "
                "in M and (10) is not a convex problem; use the conditional relaxation (15)/(17)"
            )
        self.X = self.divergence.check_data(X).copy()
        self.t, self.n = self.X.shape
        self.n_clusters = check_n_clusters(n_clusters, self.t)

    @property
    def default_method(self) -> str:
        """``"davis-yin"`` for a quadratic divergence (its gradient is Lipschitz), else ``"admm"``."""
        return "davis-yin" if self.divergence.quadratic else "admm"

    # -- the statement -------------------------------------------------------------------
    def problem(self):
        """The cvxpy statement (10) over M1; see
        :func:`~cvxclust.bregman._problem.conditional_jc_problem`."""
        return conditional_jc_problem(self.X, self.divergence, self.n_clusters)

    def objective(self, M) -> float:
        """``D_F(X, M X)``; ``inf`` where ``M X`` leaves the domain of F (as in the cvxpy atoms)."""
        M = self._check_M(M)
        try:
            return self.divergence.divergence(self.X, M @ self.X)
        except ValueError:
            return float("inf")

    def objective_scale(self) -> float:
        """``D_F(X, 11^T X / t)``, the loss of one cluster: the order of magnitude of the objective."""
        mean = np.broadcast_to(self.X.mean(axis=0), self.X.shape)
        try:
            return float(self.divergence.divergence(self.X, mean))
        except ValueError:
            return 0.0

    def residuals(self, M) -> dict[str, float]:
        """Violations of M1 (:func:`~cvxclust.bregman.sets.residuals_M1`): ``symmetry``,
        ``psd``, ``upper``, ``trace``, ``row_sums``, ``nonnegativity``; all absolute, as the
        set is scale-free."""
        return residuals_M1(self._check_M(M), self.n_clusters)

    def _check_M(self, M, name: str = "M") -> np.ndarray:
        try:
            M = np.asarray(M, dtype=float)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a numeric matrix") from None
        if M.shape != (self.t, self.t):
            raise ValueError(f"{name} must have shape {(self.t, self.t)}, got {M.shape}")
        if not np.all(np.isfinite(M)):
            raise ValueError(f"{name} contains NaN or infinite entries")
        return M

    # -- pieces of the solvers -----------------------------------------------------------
    def gradient(self, M) -> np.ndarray:
        r"""``grad f(M) = grad_2 D_F(X, M X) X'`` (chain rule; t x t), for M with M X in the domain.

        For the generalized KL divergence, entries with ``x = (M X) = 0`` get the one-sided
        derivative 1 of ``y -> kl_div(0, y) = y`` at 0+ (``gradient_second`` gives 0/0 there).

        Raises
        ------
        ValueError
            Naming ``M`` if it is not a finite t x t matrix or ``M X`` leaves the domain.
        """
        M = self._check_M(M)
        MX = M @ self.X
        try:
            self.divergence.check_domain(MX, "M X")
        except ValueError as error:
            raise ValueError(f"M must map the data into the domain of the divergence: {error}") from None
        return self.gradient_from(MX)

    def gradient_from(self, MX: np.ndarray) -> np.ndarray:
        """:meth:`gradient` from the product ``M X`` (unchecked: the solvers' inner loop)."""
        G = self.divergence.gradient_second(self.X, MX)
        if isinstance(self.divergence, GeneralizedKL):
            G = np.where((self.X == 0) & (MX == 0), 1.0, G)
        return G @ self.X.T

    def row_objectives(self, MX: np.ndarray) -> np.ndarray:
        """``D_F(X_{i:}, (M X)_{i:})`` for every row i, from the product ``M X`` (unchecked)."""
        return self.divergence.divergence_rows(self.X, MX)

    def restore(self, Z) -> np.ndarray:
        """An exactly feasible point of M1 from ``Z`` in M2: ``(1 - s) Z + s 11'/t`` with the
        smallest s making it nonnegative (see the module docstring).  ``Z`` is not modified."""
        Z = self._check_M(Z, "Z")
        Z = (Z + Z.T) / 2
        neg = max(0.0, -float(Z.min()))
        if neg == 0.0:
            return Z
        s = self.t * neg / (1.0 + self.t * neg)
        return (1.0 - s) * Z + s / self.t

    def dual_value(self, Y, M_hat, Z=None) -> float:
        r"""The certified lower bound ``g_1`` (Frank-Wolfe bound at ``M_hat`` in S) ``+ g_2``
        (exact) on the optimum of (10) over M1, for any multiplier ``Y`` of ``M = Z`` (module
        docstring).  ``M_hat`` must have rows in the simplex.

        ``g_2`` takes a partial eigendecomposition of ``H Y H``, unless ``Z`` is given: a
        minimiser of ``-<Y, Z>`` over M2, i.e. ``Y`` in the normal cone of M2 at ``Z``, as for
        ``Z = P_M2(V)`` and ``Y = c (V - Z)`` with ``c > 0`` (the Z-steps of the solvers).  Then
        ``g_2 = -<Y, Z>`` needs no eigenvalues.  The bound is valid only for such a ``Z``; the
        caller vouches for it.

        Raises
        ------
        ValueError
            Naming ``Y``, ``M_hat`` or ``Z`` if not finite t x t matrices, ``M_hat`` if its rows
            are not in the simplex (to 1e-10) or ``M_hat X`` leaves the domain.
        """
        Y, M_hat = self._check_M(Y, "Y"), self._check_M(M_hat, "M_hat")
        Z = None if Z is None else self._check_M(Z, "Z")
        if M_hat.min() < -1e-10 or np.abs(M_hat.sum(axis=1) - 1.0).max() > 1e-10:
            raise ValueError("M_hat must have its rows in the simplex (nonnegative, summing to 1)")
        try:
            self.divergence.check_domain(M_hat @ self.X, "M_hat X")
        except ValueError as error:
            raise ValueError(f"M_hat must map the data into the domain of the divergence: {error}") from None
        return self.best_dual_value(M_hat, [(Y, Z)])

    def best_dual_value(self, M_hat: np.ndarray, multipliers) -> float:
        """The best :meth:`dual_value` over ``(Y, Z)`` pairs at one ``M_hat`` (f and its
        gradient at ``M_hat`` are computed once; unchecked: the solvers' checks)."""
        MX = M_hat @ self.X
        grad, f = self.gradient_from(MX), self.row_objectives(MX).sum()
        return max(self._g1(grad, f, Y, M_hat) + self._g2(Y, Z) for Y, Z in multipliers)

    @staticmethod
    def _g1(grad: np.ndarray, f: float, Y: np.ndarray, M_hat: np.ndarray) -> float:
        G = grad + Y
        phi = f + float(np.sum(Y * M_hat))
        return phi + float(np.sum(G.min(axis=1)) - np.sum(G * M_hat))

    def _g2(self, Y: np.ndarray, Z: np.ndarray | None) -> float:
        if Z is not None:
            return -float(np.sum(Y * Z))
        t, d = self.t, self.n_clusters
        C = center((Y + Y.T) / 2)  # H Y_s H
        try:
            # bisection (syevx): only the d - 1 largest values are needed, usually a few
            top = sla.eigh(C, eigvals_only=True, subset_by_index=(t - d + 1, t - 1), driver="evx",
                           check_finite=False)
        except np.linalg.LinAlgError:
            # LAPACK's partial drivers can fail on tight eigenvalue clusters; the full symmetric
            # QR algorithm does not
            top = np.linalg.eigvalsh(C)[t - d + 1:]
        return -float(Y.sum()) / t - float(np.maximum(top, 0.0).sum())
