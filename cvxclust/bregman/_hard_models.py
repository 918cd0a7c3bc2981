r"""The three hard clustering objectives of the paper as small models for one alternation engine.

With ``Y`` the t x d assignment matrix of the labels, ``n_j`` the size of cluster j and
``xbar_j`` its mean:

Hard conditional clustering (6), Banerjee et al. (2005), Algorithm 1 (:class:`HardModel`)
    .. math:: \min_{Y, \Gamma} D_F(X, Y\Gamma),
    for fixed Y the minimiser is ``Gamma = (Y'Y)^+ Y'X`` (the cluster means, Section 3.1); for
    fixed Gamma each point goes to the centre of least ``D_F(x_i, mu_j)``.

Regularised conditional clustering (14) (:class:`ConditionalModel`)
    .. math:: \min_{Y, B} D_{F^*}(YB, f(X)) + \frac{\alpha}{2}\|YB\|_F^2
              = \sum_i D_{F^*}(b_{y_i}, f(x_i)) + \frac{\alpha}{2}\|b_{y_i}\|^2 .
    *B-step.*  With ``D_{F*}(b, f(x)) = F*(b) + F(x) - <x, b>`` (Fenchel-Young), the terms of
    cluster j are ``n_j (F*(b) - <xbar_j, b> + alpha/2 ||b||^2) + sum_{i in j} F(x_i)``, strictly
    convex in b for alpha > 0; setting the gradient to zero (grad F* = f^{-1}),

    .. math:: f^{-1}(b_j) + \alpha\, b_j = \bar x_j .                         \qquad (\ast)

    Closed forms: Euclidean ``b = xbar / (1 + alpha)``; Mahalanobis
    ``(I + alpha W) b = W xbar``; Itakura-Saito (f^{-1}(b) = -1/b, b < 0) the negative root of
    ``alpha b^2 - xbar b - 1 = 0``, ``b = -2 / (xbar + sqrt(xbar^2 + 4 alpha))`` (written
    without cancellation).  Generalized KL (``e^b + alpha b = xbar``, a Lambert-W equation whose
    closed form overflows for the paper's alpha = 1e-5) and the logistic transfer
    (``sigmoid(b) + alpha b = xbar``) are solved entrywise by bracketing and bisection to machine
    precision: the left side of (*) is strictly increasing.  As alpha -> 0, b -> f(xbar) and
    (14) becomes (6); alpha must be positive here (use the hard model (6) for 0).
    *Y-step.*  ``y_i = argmin_j F*(b_j) + alpha/2 ||b_j||^2 - <x_i, b_j>`` (F(x_i) is common).

Joint hard clustering (Section 5, the re-optimisation of Section 6.4) (:class:`JointModel`)
    .. math:: \min_{Y, \mathbf w, B} -\mathbf 1'Y\mathbf w + t\, g(\mathbf w) + L(YB),
              \qquad g(\mathbf w) = \log\textstyle\sum_j e^{w_j},\quad L(Z) = D_{F^*}(Z, f(X)).
    For fixed Y, B decouples as in (6) (B = f(Gamma), L(YB) = D_F(X, YGamma)) and the w-terms
    ``-sum_j n_j w_j + t g(w)`` are minimised by ``w_j = log(n_j / t)`` (softmax(w) = n / t),
    giving the profile objective ``D_F(X, Y Gamma) - sum_j n_j log(n_j / t)``: hard clustering
    plus the entropy of the cluster sizes.  For fixed (w, Gamma) the Y-step is
    ``y_i = argmin_j D_F(x_i, mu_j) - w_j``.  A cluster that empties gets w_j = -inf and stays
    empty under the Y-step: a smaller model is a legitimate (lower) optimum of the joint
    likelihood.  The regularisers beta, alpha and h of (30) are *not* part of this objective:
    Section 6.4 re-optimises the plain joint likelihood (the paper does not specify h).

For Hartigan's single-point moves every model also gives the exact cost of a cluster S,

.. math:: \text{cost}(S) = \sum_{i\in S} F(x_i) + |S|\,\varphi(\bar x_S) + \psi(|S|),

with ``phi(m) = -F(m)`` for (6) and the joint model (Bregman information: the linear terms vanish
at the mean), ``phi(m) = F*(b) - <m, b> + alpha/2 ||b||^2`` at the b of (*) for (14), and
``psi(n) = -n log(n / t)`` for the joint model (0 otherwise).

References
----------
A. Banerjee, S. Merugu, I. Dhillon and J. Ghosh, "Clustering with Bregman divergences", JMLR 6,
2005 (Algorithm 1).  H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from .._checks import check_n_clusters, check_positive, check_random_state
from .divergences import Divergence, ItakuraSaito, Mahalanobis, SquaredEuclidean, get_divergence

__all__ = ["ConditionalModel", "HardModel", "JointModel", "conditional_centres", "random_partition"]


# --------------------------------------------------------------------------------------------
# the B-step of (14)
# --------------------------------------------------------------------------------------------

def _solve_increasing(g, target: np.ndarray, max_iter: int = 400) -> np.ndarray:
    """Entrywise root of the strictly increasing, continuous ``g(b) = target`` on the real line,
    by doubling brackets then bisection to relative machine precision."""
    lo = np.full(target.shape, -1.0)
    hi = np.full(target.shape, 1.0)
    for _ in range(1100):  # brackets up to +-2^1100 would overflow: stops far earlier in practice
        low_bad = g(lo) > target
        high_bad = g(hi) < target
        if not (low_bad.any() or high_bad.any()):
            break
        lo = np.where(low_bad, 2.0 * lo, lo)
        hi = np.where(high_bad, 2.0 * hi, hi)
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        # converged to relative machine precision (absolute 1e-300 near zero)
        done = hi - lo <= 2 * np.finfo(float).eps * np.maximum(np.maximum(np.abs(lo), np.abs(hi)), 1e-300)
        if done.all():
            break
        below = g(mid) < target
        lo = np.where(below & ~done, mid, lo)
        hi = np.where(~below & ~done, mid, hi)
    # of the two adjacent floats, the one with the smaller residual
    return np.where(np.abs(g(lo) - target) <= np.abs(g(hi) - target), lo, hi)


def conditional_centres(means, divergence, alpha: float) -> np.ndarray:
    r"""The minimisers b_j of the B-step of (14): ``f^{-1}(b_j) + alpha b_j = xbar_j`` (*).

    See the module docstring for the derivation and the closed forms.

    Parameters
    ----------
    means : array-like of shape (k, n)
        Cluster means, in the domain of F.
    divergence : str or Divergence
    alpha : float > 0

    Returns
    -------
    B : ndarray of shape (k, n)
        In the domain of F* (the range of f).
    """
    div = get_divergence(divergence)
    check_positive(alpha, "alpha")
    m = div.check_domain(means, "means")
    if isinstance(div, SquaredEuclidean):
        return m / (1.0 + alpha)
    if isinstance(div, Mahalanobis):
        A = np.eye(div.n_features) + alpha * div.W
        return np.linalg.solve(A, (m @ div.W).T).T  # W symmetric: rows of W m, solved with (I + aW)
    if isinstance(div, ItakuraSaito):
        return -2.0 / (m + np.sqrt(m * m + 4.0 * alpha))
    # separable F whose conjugate is finite on the whole line (generalized KL, logistic)
    return _solve_increasing(lambda b: div.inverse_transfer(b) + alpha * b, m)


# --------------------------------------------------------------------------------------------
# the three hard objectives
# --------------------------------------------------------------------------------------------

class HardModel:
    """(6): centres are the cluster means; cost D_F(x_i, mu_j).

    Every model gives ``refit(labels) -> params`` (the exact parameter step), ``costs(params)``
    (t x d: the Y-step minimises each row), ``objective(labels, params)``, ``point_losses`` (the
    terms of the objective per point), and ``phi``, ``psi`` (the cluster cost of the module
    docstring); ``relocate`` says whether empty clusters are refilled.
    """

    relocate = True

    def __init__(self, X: np.ndarray, div: Divergence, k: int):
        self.X, self.div, self.k = X, div, k
        self.t = X.shape[0]

    def means(self, labels: np.ndarray) -> np.ndarray:
        counts = np.bincount(labels, minlength=self.k)
        sums = np.zeros((self.k, self.X.shape[1]))
        np.add.at(sums, labels, self.X)
        mu = np.tile(self.X.mean(axis=0), (self.k, 1))  # empty clusters: a placeholder in the domain
        nonempty = counts > 0
        mu[nonempty] = sums[nonempty] / counts[nonempty, None]
        return mu

    def refit(self, labels):
        return {"centres": self.means(labels), "counts": np.bincount(labels, minlength=self.k)}

    def costs(self, params) -> np.ndarray:
        C = np.empty((self.t, self.k))
        for j, mu in enumerate(params["centres"]):
            C[:, j] = self.div.divergence_rows(self.X, np.broadcast_to(mu, self.X.shape))
        C[:, params["counts"] == 0] = np.inf
        return C

    def point_losses(self, C: np.ndarray, labels: np.ndarray) -> np.ndarray:
        return C[np.arange(self.t), labels]

    def objective(self, labels, params) -> float:
        return self.div.divergence(self.X, params["centres"][labels])

    def phi(self, m: np.ndarray) -> float:
        return -self.div.F(m)

    def psi(self, n: int) -> float:
        return 0.0

    def extras(self, params) -> dict:
        """The fitted parameters a result reports."""
        return {"centres": params["centres"]}


class ConditionalModel(HardModel):
    """(14): centres b_j from (*); cost F*(b_j) + alpha/2 ||b_j||^2 - <x_i, b_j> (+ F(x_i))."""

    def __init__(self, X, div, k, alpha: float):
        super().__init__(X, div, k)
        self.alpha = alpha
        self._Fx = None

    def refit(self, labels):
        counts = np.bincount(labels, minlength=self.k)
        return {"centres": conditional_centres(self.means(labels), self.div, self.alpha), "counts": counts}

    def _offsets(self, B):
        return np.array([self.div.conjugate(b) for b in B]) + 0.5 * self.alpha * np.sum(B * B, axis=1)

    def costs(self, params):
        B = params["centres"]
        C = self._offsets(B)[None, :] - self.X @ B.T
        C[:, params["counts"] == 0] = np.inf
        return C

    def point_losses(self, C, labels):
        if self._Fx is None:
            self._Fx = np.array([self.div.F(x) for x in self.X])
        return C[np.arange(self.t), labels] + self._Fx

    def objective(self, labels, params):
        YB = params["centres"][labels]
        return self.div.dual_divergence(YB, self.X) + 0.5 * self.alpha * float(np.sum(YB * YB))

    def phi(self, m):
        b = conditional_centres(m[None, :], self.div, self.alpha)[0]
        return self.div.conjugate(b) - float(m @ b) + 0.5 * self.alpha * float(b @ b)


class JointModel(HardModel):
    """Section 5 with the profile prior w_j = log(n_j / t): cost D_F(x_i, mu_j) - w_j."""

    relocate = False

    def refit(self, labels):
        params = super().refit(labels)
        with np.errstate(divide="ignore"):
            params["log_prior"] = np.log(params["counts"] / self.t)
        return params

    def costs(self, params):
        return super().costs(params) - params["log_prior"][None, :]

    def objective(self, labels, params):
        counts = params["counts"]
        return super().objective(labels, params) - float(np.sum(xlogy(counts, counts / self.t)))

    def psi(self, n):
        return -float(xlogy(n, n / self.t))

    def extras(self, params) -> dict:
        return {"centres": params["centres"], "prior": np.exp(params["log_prior"])}


def random_partition(n_samples: int, n_clusters: int, random_state=None) -> np.ndarray:
    """A uniformly random assignment with every cluster non-empty and sizes within one of each
    other (a random permutation of ``0, 1, ..., d-1, 0, 1, ...``): the paper's random Y."""
    n_clusters = check_n_clusters(n_clusters, n_samples)
    rng = check_random_state(random_state)
    return rng.permutation(np.arange(n_samples) % n_clusters).astype(np.intp)
