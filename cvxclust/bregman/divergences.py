r"""Bregman divergences: the generators F, their transfers f = grad F and conjugates F*.

Section 2 of H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013.

For a strictly convex, differentiable F with transfer (gradient) f = grad F, the Bregman
divergence is (3)

.. math::

    D_F(x, y) = F(x) - F(y) - \langle x - y, f(y) \rangle \ \ge 0,

with equality iff x = y. Its conjugate F* has gradient grad F* = f^{-1}, the Fenchel-Young
equality F(x) + F*(f(x)) = <x, f(x)> holds, and hence (Section 2, below (3))

.. math::

    D_F(x, y) = D_{F^*}(f(y), f(x)).

These give the two forms of the conditional likelihood of Section 2: (6)
``exp(-D_F(X, Y Gamma))`` and (7) ``exp(-D_{F*}(Y B, f(X)))``, both summed over the rows of the
t x n data matrix X. The relaxation (10) minimizes D_F(X, M X) over normalized equivalence
matrices M, which is convex in M only when D_F is convex in its second argument; (15)-(17) work
instead with L(T) = D_{F*}(T, f(X)), convex in T for every F.

Joint convexity
---------------
For a separable F = sum_j phi(x_j) with phi'' > 0, D_F is jointly convex in (x, y) iff
1 / phi'' is concave (Bauschke & Borwein, "Joint and separate convexity of the Bregman
distance", 2001):

=================  ==============================  ===============  ================
divergence         phi(x)                          1 / phi''(x)     jointly convex
=================  ==============================  ===============  ================
squared Euclidean  x^2 / 2                         1                yes
Mahalanobis        x' W x / 2 (not separable)      --               yes (a quadratic)
generalized KL     x log x - x                     x                yes
Bernoulli          x log x + (1-x) log(1-x)        x (1 - x)        yes
Itakura-Saito      -log x                          x^2              **no**
=================  ==============================  ===============  ================

The paper lists Itakura-Saito among the jointly convex divergences (Section 3.1); it is not:
for x > 0 fixed, ``D(x, y) = x/y - log(x/y) - 1`` has second derivative ``(2x - y) / y^3 < 0``
in y for y > 2x, so it is not even convex in its second argument. It gets no cvxpy expression and
is handled by the conditional relaxation (15)/(17). The Bernoulli (logistic, "sigmoid transfer")
divergence *is* jointly convex: it is the binary relative entropy
``x log(x/y) + (1-x) log((1-x)/(1-y))``, a sum of two perspective functions, which cvxpy states
with ``rel_entr``.

Every method takes arrays of any shape (points along the last axis for Mahalanobis) and sums over
all entries unless its name says otherwise; inputs are checked and bad input raises
``ValueError`` naming the argument.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import scipy.linalg as sla
from scipy import special

from .._checks import check_square_matrix
from ._divergence import Divergence

__all__ = [
    "ALIASES",
    "DIVERGENCES",
    "Divergence",
    "GeneralizedKL",
    "ItakuraSaito",
    "Logistic",
    "Mahalanobis",
    "SquaredEuclidean",
    "get_divergence",
]


class SquaredEuclidean(Divergence):
    r"""Squared Euclidean distance: F(x) = ||x||^2 / 2, f(x) = x (the paper's "linear" transfer).

    F* = F, f^{-1}(y) = y, D_F(x, y) = ||x - y||^2 / 2; jointly convex (a convex quadratic in
    x - y). The conditional model (6) is then a Gaussian with identity covariance.
    """

    name = "euclidean"
    jointly_convex = True
    quadratic = True

    def _F(self, X):
        return 0.5 * np.sum(X * X)

    def _transfer(self, X):
        return X.copy()

    def _inverse_transfer(self, Y):
        return Y.copy()

    def _conjugate(self, Y):
        return 0.5 * np.sum(Y * Y)

    def _divergence_entries(self, X, Y):
        return 0.5 * (X - Y) ** 2

    def _gradient_second(self, X, Y):
        return Y - X

    def _cvxpy_divergence(self, X, Z):
        return 0.5 * cp.sum_squares(X - Z)

    def _whiten(self, X):
        return X


class Mahalanobis(Divergence):
    r"""Mahalanobis distance: F(x) = x' W x / 2 on each data row x (length n), W p.d.

    f(x) = W x (rowwise ``X @ W``), f^{-1}(y) = W^{-1} y, F*(y) = y' W^{-1} y / 2 and
    D_F(x, y) = (x - y)' W (x - y) / 2, jointly convex (a convex quadratic in x - y). The cvxpy
    expression is ``sum_squares((X - Z) @ L) / 2`` with the Cholesky factor W = L L'.

    Parameters
    ----------
    W : array_like of shape (n, n)
        Symmetric positive definite weight (inverse covariance) matrix.
    """

    name = "mahalanobis"
    jointly_convex = True
    quadratic = True

    def __init__(self, W):
        W = check_square_matrix(W, "W")
        try:
            self._L = np.linalg.cholesky(W)
        except np.linalg.LinAlgError:
            raise ValueError("W must be positive definite") from None
        self.W = W

    @property
    def n_features(self) -> int:
        return self.W.shape[0]

    def _check_shape(self, X, name):
        if X.shape[-1] != self.n_features:
            raise ValueError(
                f"{name} must have points of length {self.n_features} (the size of W) along its "
                f"last axis, got shape {X.shape}"
            )

    def _solve(self, Y):
        # W^{-1} y for every row y, via the Cholesky factor (no explicit inverse).
        return sla.cho_solve((self._L, True), Y.T, check_finite=False).T

    def _F(self, X):
        return 0.5 * np.sum((X @ self._L) ** 2)

    def _transfer(self, X):
        return X @ self.W

    def _inverse_transfer(self, Y):
        return self._solve(Y)

    def _conjugate(self, Y):
        return 0.5 * np.sum(Y * self._solve(Y))

    def _divergence_entries(self, X, Y):
        # Entries of (x - y)' L, whose squares sum (over the last axis) to the quadratic form.
        return 0.5 * ((X - Y) @ self._L) ** 2

    def _gradient_second(self, X, Y):
        return (Y - X) @ self.W

    def _cvxpy_divergence(self, X, Z):
        return 0.5 * cp.sum_squares((X - Z) @ self._L)

    def _whiten(self, X):
        return X @ self._L

    def __repr__(self) -> str:
        return f"Mahalanobis(W={np.array2string(self.W, precision=4, threshold=20)})"


class GeneralizedKL(Divergence):
    r"""Generalized Kullback-Leibler (Poisson / I-) divergence: F(x) = sum x log x - x, x >= 0.

    f(x) = log x, f^{-1}(y) = exp(y), F*(y) = sum exp(y) and
    D_F(x, y) = x log(x / y) - x + y (with 0 log 0 = 0; +inf where x > 0 = y), which is
    ``scipy.special.kl_div`` / ``cvxpy.kl_div``. Jointly convex: x log(x/y) is the perspective
    of -log, and 1/phi''(x) = x is concave. Data are counts or nonnegative features; zero entries
    are allowed (their transfer is -inf).
    """

    name = "kl"
    jointly_convex = True
    _domain_text = "nonnegative entries"

    def _in_domain(self, X):
        return X >= 0

    def _F(self, X):
        return np.sum(special.xlogy(X, X) - X)

    def _transfer(self, X):
        with np.errstate(divide="ignore"):
            return np.log(X)

    def _inverse_transfer(self, Y):
        return np.exp(Y)

    def _conjugate(self, Y):
        return np.sum(np.exp(Y))

    def _divergence_entries(self, X, Y):
        return special.kl_div(X, Y)

    def _gradient_second(self, X, Y):
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 - X / Y

    def _cvxpy_divergence(self, X, Z):
        return cp.sum(cp.kl_div(X, Z))


class Logistic(Divergence):
    r"""Bernoulli (logistic) divergence: F(x) = sum x log x + (1 - x) log(1 - x), 0 < x < 1.

    f(x) = log(x / (1 - x)) (the paper's sigmoid transfer, Section 2 and 6), f^{-1}(y) = the
    logistic sigmoid 1 / (1 + e^{-y}), F*(y) = sum log(1 + e^y) (softplus) and

    .. math::  D_F(x, y) = x \log\frac{x}{y} + (1 - x) \log\frac{1 - x}{1 - y},

    the binary relative entropy. It is jointly convex (a sum of two relative entropies, each the
    perspective of -log; equivalently 1/phi''(x) = x (1 - x) is concave), so cvxpy states it as
    ``rel_entr(X, Z) + rel_entr(1 - X, 1 - Z)``. Data must lie strictly inside (0, 1), where the
    transfer is finite.
    """

    name = "logistic"
    jointly_convex = True
    _domain_text = "entries strictly between 0 and 1"

    def _in_domain(self, X):
        return (X > 0) & (X < 1)

    def _F(self, X):
        return np.sum(special.xlogy(X, X) + special.xlogy(1 - X, 1 - X))

    def _transfer(self, X):
        return special.logit(X)

    def _inverse_transfer(self, Y):
        return special.expit(Y)

    def _conjugate(self, Y):
        return np.sum(np.logaddexp(0.0, Y))

    def _divergence_entries(self, X, Y):
        return special.rel_entr(X, Y) + special.rel_entr(1 - X, 1 - Y)

    def _gradient_second(self, X, Y):
        return (Y - X) / (Y * (1 - Y))

    def _cvxpy_divergence(self, X, Z):
        return cp.sum(cp.rel_entr(X, Z) + cp.rel_entr(1 - X, 1 - Z))


class ItakuraSaito(Divergence):
    r"""Itakura-Saito divergence: F(x) = -sum log x (Burg entropy), x > 0.

    f(x) = -1/x, f^{-1}(y) = -1/y on y < 0, F*(y) = sum -1 - log(-y) and
    D_F(x, y) = x/y - log(x/y) - 1. **Not** jointly convex: 1/phi''(x) = x^2 is not concave,
    and in y alone the second derivative ``(2x - y) / y^3`` is negative for y > 2x, so
    D_F(X, M X) is not convex in M. It has no cvxpy expression; use the conditional relaxation
    (15)/(17), whose loss :meth:`dual_divergence` is convex in its first argument.
    """

    name = "itakura-saito"
    jointly_convex = False
    _domain_text = "positive entries"
    _dual_domain_text = "negative entries"

    def _in_domain(self, X):
        return X > 0

    def in_dual_domain(self, Y):
        return Y < 0

    def _F(self, X):
        return -np.sum(np.log(X))

    def _transfer(self, X):
        return -1.0 / X

    def _inverse_transfer(self, Y):
        return -1.0 / Y

    def _conjugate(self, Y):
        return np.sum(-1.0 - np.log(-Y))

    def _divergence_entries(self, X, Y):
        # r - 1 - log r with r = x / y, through log1p to stay accurate for r near 1.
        u = X / Y - 1.0
        return u - np.log1p(u)

    def _gradient_second(self, X, Y):
        return (Y - X) / Y**2


DIVERGENCES: dict[str, type[Divergence]] = {
    cls.name: cls for cls in (SquaredEuclidean, Mahalanobis, GeneralizedKL, Logistic, ItakuraSaito)
}
# The paper's words for the same divergences (Section 6: "linear and sigmoid transfers").
ALIASES = {
    "linear": "euclidean",
    "sigmoid": "logistic",
    "bernoulli": "logistic",
    "poisson": "kl",
}


def get_divergence(divergence, *, W=None) -> Divergence:
    """The :class:`Divergence` named ``divergence``, or ``divergence`` itself if it is one.

    Parameters
    ----------
    divergence : str or Divergence
        One of ``"euclidean"``, ``"mahalanobis"``, ``"kl"``, ``"logistic"``, ``"itakura-saito"``
        (aliases: ``"linear"``, ``"sigmoid"``, ``"bernoulli"``, ``"poisson"``), or an instance.
    W : array_like, optional
        The p.d. weight matrix; required for ``"mahalanobis"`` and only for it.

    Raises
    ------
    ValueError
        ``"Unknown divergence ..."`` listing the valid names, or a missing / unexpected ``W``.
    """
    if isinstance(divergence, Divergence):
        if W is not None:
            raise ValueError("W must not be given together with a Divergence instance")
        return divergence
    valid = sorted(DIVERGENCES) + sorted(ALIASES)
    key = divergence.lower() if isinstance(divergence, str) else None
    key = ALIASES.get(key, key)
    if key not in DIVERGENCES:
        raise ValueError(f"Unknown divergence {divergence!r}; valid names are {valid} or a Divergence instance")
    if key == "mahalanobis":
        if W is None:
            raise ValueError("W (a positive definite n x n matrix) is required for the mahalanobis divergence")
        return Mahalanobis(W)
    if W is not None:
        raise ValueError(f"W is only used by the mahalanobis divergence, not {key!r}")
    return DIVERGENCES[key]()
