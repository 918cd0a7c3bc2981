r"""Bregman divergences: the generators F, their transfers f = grad F and conjugates F*.

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

import abc

import cvxpy as cp
import numpy as np
import scipy.linalg as sla
from scipy import special

from .._checks import check_square_matrix

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


def _as_finite_array(X, name: str) -> np.ndarray:
    """``X`` as a float array of at least one dimension, finite, or ``ValueError`` naming it."""
    try:
        X = np.asarray(X, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array") from None
    if X.ndim == 0 or X.size == 0:
        raise ValueError(f"{name} must be a non-empty array of at least one dimension, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return X


def _check_same_shape(X: np.ndarray, Y, x_name: str, y_name: str) -> None:
    if tuple(Y.shape) != X.shape:
        raise ValueError(f"{y_name} must have the shape of {x_name} {X.shape}, got {tuple(Y.shape)}")


class Divergence(abc.ABC):
    r"""A Bregman divergence D_F given by its generator F (3).

    Subclasses implement the elementwise (or, for Mahalanobis, rowwise) pieces; this base class
    checks the inputs and assembles the divergences from them.

    Attributes
    ----------
    name : str
        The name :func:`get_divergence` knows it by.
    jointly_convex : bool
        Whether D_F(x, y) is jointly convex in (x, y); then D_F(X, M X) is convex in M and
        :meth:`cvxpy_divergence` gives a DCP expression for the relaxation (10).
    quadratic : bool
        Whether ``D_F(x, y) = ||(x - y) R||^2 / 2`` for a fixed matrix R (:meth:`whiten` multiplies
        by it); then ``M -> D_F(X, M X)`` is a quadratic whose gradient is Lipschitz with a
        constant known in closed form.
    """

    name: str = ""
    jointly_convex: bool = False
    quadratic: bool = False
    _domain_text: str = "any finite real values"
    _dual_domain_text: str = "any finite real values"

    # ----- the pieces a subclass defines (inputs already checked) --------------------------
    @abc.abstractmethod
    def _F(self, X: np.ndarray) -> float: ...

    @abc.abstractmethod
    def _transfer(self, X: np.ndarray) -> np.ndarray: ...

    @abc.abstractmethod
    def _inverse_transfer(self, Y: np.ndarray) -> np.ndarray: ...

    @abc.abstractmethod
    def _conjugate(self, Y: np.ndarray) -> float: ...

    @abc.abstractmethod
    def _divergence_entries(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray:
        """D_F(X, Y) before summation over the last axis (elementwise for separable F)."""

    @abc.abstractmethod
    def _gradient_second(self, X: np.ndarray, Y: np.ndarray) -> np.ndarray: ...

    def _in_domain(self, X: np.ndarray) -> np.ndarray | bool:
        return True

    def _in_dual_domain(self, Y: np.ndarray) -> np.ndarray | bool:
        return True

    def _check_shape(self, X: np.ndarray, name: str) -> None:
        """Hook for divergences that constrain the shape (Mahalanobis: the last axis)."""

    # ----- checks ---------------------------------------------------------------------------
    def check_domain(self, X, name: str = "X") -> np.ndarray:
        """Return ``X`` as a float array after checking it lies in the domain of F.

        Parameters
        ----------
        X : array_like
            Points (data, centres, or the second argument of D_F).
        name : str
            The argument name used in the error message.

        Raises
        ------
        ValueError
            If ``X`` is not numeric, not finite, has the wrong shape, or leaves the domain
            (negative entries for generalized KL, entries outside (0, 1) for the logistic
            divergence, nonpositive entries for Itakura-Saito).
        """
        return self._check_inside(X, name, self._in_domain, self._domain_text)

    def check_dual_domain(self, Y, name: str = "Y") -> np.ndarray:
        """Return ``Y`` as a float array after checking it lies in the domain of F* (the range
        of the transfer f), where :meth:`inverse_transfer` and :meth:`conjugate` are defined."""
        return self._check_inside(Y, name, self._in_dual_domain,
                                  f"{self._dual_domain_text} (the domain of the conjugate F*)")

    def _check_inside(self, X, name: str, inside, what: str) -> np.ndarray:
        """``X`` as a finite float array of the right shape whose entries all pass ``inside``."""
        X = _as_finite_array(X, name)
        self._check_shape(X, name)
        ok = inside(X)
        if not np.all(ok):
            bad = X[~np.broadcast_to(ok, X.shape)]
            raise ValueError(f"{name} must have {what} for the {self.name} divergence; "
                             f"{bad.size} entries are outside (e.g. {bad.flat[0]:.6g})")
        return X

    # ----- public API -----------------------------------------------------------------------
    def F(self, X) -> float:
        """The generator F(X), summed over all entries (over all rows for Mahalanobis)."""
        return float(self._F(self.check_domain(X, "X")))

    def transfer(self, X) -> np.ndarray:
        """The transfer f(X) = grad F(X), elementwise (rowwise ``X W`` for Mahalanobis)."""
        return self._transfer(self.check_domain(X, "X"))

    def inverse_transfer(self, Y) -> np.ndarray:
        """The inverse transfer f^{-1}(Y) = grad F*(Y), with ``Y`` in the range of f."""
        return self._inverse_transfer(self.check_dual_domain(Y, "Y"))

    def conjugate(self, Y) -> float:
        r"""The Fenchel conjugate F*(Y) = sup_X <X, Y> - F(X), summed over all entries."""
        return float(self._conjugate(self.check_dual_domain(Y, "Y")))

    def divergence(self, X, Y) -> float:
        r"""D_F(X, Y) = F(X) - F(Y) - <X - Y, f(Y)> (3), summed over all rows and entries.

        Computed in a cancellation-free closed form per divergence, so that it is accurate for
        Y close to X. With X the t x n data and Y = Y Gamma or M X this is the negative
        log-likelihood (6) up to a constant.
        """
        X = self.check_domain(X, "X")
        Y = self.check_domain(Y, "Y")
        _check_same_shape(X, Y, "X", "Y")
        return float(np.sum(self._divergence_entries(X, Y)))

    def divergence_rows(self, X, Y) -> np.ndarray:
        """D_F(X_i, Y_i) for each row (point) i: the summands of D_F(X, Y) in (6).

        ``X`` and ``Y`` have shape (t, n) (or (n,) for one point, giving a 0-d array)."""
        X = self.check_domain(X, "X")
        Y = self.check_domain(Y, "Y")
        _check_same_shape(X, Y, "X", "Y")
        return np.sum(self._divergence_entries(X, Y), axis=-1)

    def gradient_second(self, X, Y) -> np.ndarray:
        r"""Gradient of D_F(X, Y) in its second argument: ``-Hess F(Y) (X - Y)``.

        Elementwise ``-phi''(Y) (X - Y)`` for separable F, ``(Y - X) W`` for Mahalanobis. By the
        chain rule the gradient of M -> D_F(X, M X) is ``gradient_second(X, M X) @ X.T``
        (the M-step of the ADMM of Section 3.1.1).
        """
        X = self.check_domain(X, "X")
        Y = self.check_domain(Y, "Y")
        _check_same_shape(X, Y, "X", "Y")
        return self._gradient_second(X, Y)

    def conjugate_divergence(self, Z, W) -> float:
        r"""D_{F*}(Z, W) = F*(Z) - F*(W) - <Z - W, f^{-1}(W)>, summed, by definition (3) for F*.

        By the duality of Section 2, ``D_F(x, y) = D_{F*}(f(y), f(x))``.
        """
        Z = self.check_dual_domain(Z, "Z")
        W = self.check_dual_domain(W, "W")
        _check_same_shape(Z, W, "Z", "W")
        return float(self._conjugate(Z) - self._conjugate(W) - np.sum((Z - W) * self._inverse_transfer(W)))

    def dual_divergence(self, Z, X) -> float:
        r"""The conditional loss L(Z) = D_{F*}(Z, f(X)) of (7), (15)-(17).

        Computed by the Fenchel-Young equality ``F*(f(X)) = <X, f(X)> - F(X)`` as

        .. math::  D_{F^*}(Z, f(X)) = F^*(Z) + F(X) - \langle X, Z \rangle,

        which never forms f(X) (finite even where f(X) is not, e.g. zero counts for KL). It is
        convex in Z for every F, and ``Z = M A`` (or T in (16)-(17)).
        """
        Z = self.check_dual_domain(Z, "Z")
        X = self.check_domain(X, "X")
        _check_same_shape(X, Z, "X", "Z")
        return float(self._conjugate(Z) + self._F(X) - np.sum(X * Z))

    def dual_divergence_grad(self, Z, X) -> np.ndarray:
        r"""Gradient in Z of :meth:`dual_divergence`: ``grad L(Z) = f^{-1}(Z) - X``."""
        Z = self.check_dual_domain(Z, "Z")
        X = self.check_domain(X, "X")
        _check_same_shape(X, Z, "X", "Z")
        return self._inverse_transfer(Z) - X

    def cvxpy_divergence(self, X, MX_expr) -> cp.Expression:
        r"""A DCP cvxpy expression of D_F(X, Z) for constant data ``X`` and an affine ``Z``.

        Used by the relaxation (10), ``min_{M in M1} D_F(X, M X)``, with ``Z = M @ X``. Only
        jointly convex divergences have one (``jointly_convex`` is True); the value equals
        :meth:`divergence` at the same point, and the atoms' domains keep Z in the domain of F.

        Parameters
        ----------
        X : array_like
            The data, in the domain of F.
        MX_expr : cvxpy.Expression or array_like
            The second argument, of the shape of ``X``.

        Raises
        ------
        ValueError
            If the divergence is not jointly convex, or on bad ``X`` / ``MX_expr``.
        """
        if not self.jointly_convex:
            raise ValueError(
                f"divergence {self.name!r} is not jointly convex, so D_F(X, M X) is not convex in M "
                "and has no DCP expression; use the conditional relaxation (15)/(17) instead"
            )
        X = self.check_domain(X, "X")
        if not isinstance(MX_expr, cp.Expression):
            MX_expr = cp.Constant(self.check_domain(MX_expr, "MX_expr"))
        _check_same_shape(X, MX_expr, "X", "MX_expr")
        return self._cvxpy_divergence(X, MX_expr)

    def _cvxpy_divergence(self, X: np.ndarray, Z: cp.Expression) -> cp.Expression:
        raise NotImplementedError  # pragma: no cover - only reached for jointly convex subclasses

    def whiten(self, X) -> np.ndarray:
        """``X R`` for a quadratic divergence ``D_F(x, y) = ||(x - y) R||^2 / 2`` (rows of X are points).

        Raises
        ------
        ValueError
            If the divergence is not a quadratic (``quadratic`` is False).
        """
        if not self.quadratic:
            raise ValueError(f"divergence {self.name!r} is not a quadratic D_F(x, y) = ||(x - y) R||^2 / 2")
        X = _as_finite_array(X, "X")
        self._check_shape(X, "X")
        return self._whiten(X)

    def _whiten(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - only reached for quadratic subclasses

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


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

    def _in_dual_domain(self, Y):
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
