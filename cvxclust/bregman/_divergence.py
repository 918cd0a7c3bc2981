r"""The base class of the Bregman divergences: checks at the door, then the pieces a subclass gives.

The divergences themselves, and the theory (conjugates, duality, joint convexity), are in
:mod:`cvxclust.bregman.divergences`.
"""

from __future__ import annotations

import abc
import math

import cvxpy as cp
import numpy as np

from .._checks import as_finite_array, check_data_matrix

__all__ = ["Divergence", "check_magnitude"]

#: How far below the largest double the sum of the squared data, times the solver's weight, must
#: stay: the solvers add several such terms, multiply them by constants and take norms of
#: products (spectral norms, Gram matrices) that can exceed the sum of squares by such factors.
_OVERFLOW_MARGIN = 1e6


def check_magnitude(A: np.ndarray, name: str = "X", *, weight: float = 1.0, weight_name: str = "1/alpha",
                    what: str = "", computations: str = "the solvers' computations") -> None:
    r"""Raise unless the finite entries of ``A`` are small enough to be squared: the Bregman
    solvers form Gram matrices, squared norms and quadratic divergences of the data (and of its
    transfer), sum them over the entries and multiply them by weights such as ``1 / alpha``, so
    ``max |a|^2 * A.size * weight`` must stay a factor 1e6 below the largest double.

    ``what`` names the array checked when it is not ``name`` itself (``"transfer f(X)"``); the
    message names ``name`` either way, ``computations`` (whose computations overflow) and
    ``weight_name`` (what ``weight`` is, when above 1).
    """
    finite = np.abs(A[np.isfinite(A)])
    if finite.size == 0:
        return
    largest = float(finite.max())
    weight = max(float(weight), 1.0)
    limit = math.sqrt(np.finfo(float).max / (A.size * weight * _OVERFLOW_MARGIN))
    if largest > limit:
        subject = f"{name}'s {what}" if what else name
        times = f" times {weight_name} = {weight:.3g}" if weight > 1.0 else ""
        raise ValueError(
            f"{subject} has entries of magnitude up to {largest:.3g}, which overflow {computations}: they "
            f"square the entries and sum the squares over the {' x '.join(map(str, A.shape))} data{times}, "
            f"which double precision cannot hold beyond {limit:.3g}; rescale {name} (e.g. to unit variance)")


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

    def in_dual_domain(self, Y: np.ndarray) -> np.ndarray | bool:
        return True

    def _check_shape(self, X: np.ndarray, name: str) -> None:
        """Hook for divergences that constrain the shape (Mahalanobis: the last axis)."""

    # ----- checks ---------------------------------------------------------------------------
    def check_domain(self, X, name: str = "X") -> np.ndarray:
        """Return ``X`` as a float array after checking it lies in the domain of F (``X`` itself,
        not a copy, when it already is a float64 array).

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

    def check_data(self, X, name: str = "X", *, min_samples: int = 2, weight: float = 1.0,
                   transfer: bool = False) -> np.ndarray:
        """``X`` as data a solver can take: a finite 2-D float array with at least
        ``min_samples`` rows (:func:`~cvxclust._checks.check_data_matrix`), in the domain of F
        (:meth:`check_domain`) and small enough to square (:func:`check_magnitude` with
        ``weight``; with ``transfer``, its transfer f(X) too, where finite, for the relaxations
        whose variable lives in the range of f).  ``X`` itself when it already is a float64
        array."""
        X = self.check_domain(check_data_matrix(X, name, min_samples=min_samples), name)
        computations = f"the computations of the {self.name} divergence"
        check_magnitude(X, name, weight=weight, computations=computations)
        if transfer:
            with np.errstate(divide="ignore", over="ignore"):
                check_magnitude(self._transfer(X), name, weight=weight, what="transfer f(X)",
                                computations=computations)
        return X

    def check_dual_domain(self, Y, name: str = "Y") -> np.ndarray:
        """Return ``Y`` as a float array after checking it lies in the domain of F* (the range
        of the transfer f), where :meth:`inverse_transfer` and :meth:`conjugate` are defined."""
        return self._check_inside(Y, name, self.in_dual_domain,
                                  f"{self._dual_domain_text} (the domain of the conjugate F*)")

    def _check_inside(self, X, name: str, inside, what: str) -> np.ndarray:
        """``X`` as a finite float array of the right shape whose entries all pass ``inside``."""
        X = as_finite_array(X, name)
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
        X = as_finite_array(X, "X")
        self._check_shape(X, "X")
        return self._whiten(X)

    def _whiten(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError  # pragma: no cover - only reached for quadratic subclasses

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
