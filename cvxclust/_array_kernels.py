r"""The input kernels of :mod:`cvxclust.kernels` for data of any library of the Python array API
standard (:mod:`cvxclust._array_api`), computed in its namespace and on its device: the rbf, the
polynomial and the linear kernel, the median distance of the rbf's median heuristic, and the
double centering.  :mod:`cvxclust.kernels` calls them for such data; the k-nearest-neighbour
affinity (scikit-learn's neighbour search) runs on NumPy arrays only.

The squared distances come from the Gram matrix, :math:`\|a\|^2 + \|b\|^2 - 2 a^\top b` (clipped
at 0), as scikit-learn's ``euclidean_distances`` computes them, after an exact scaling of the data
by a power of two against overflow and underflow; NumPy's ``pdist`` of the host path subtracts
first, so the two agree to the rounding of the Gram matrix.
"""

from __future__ import annotations

import math

import numpy as np

from ._array_api import Arrays, check_arrays, device_of

__all__ = ["center", "check_data", "linear", "median_distance", "polynomial", "rbf"]


def check_data(X, name: str = "X", *, min_samples: int = 2) -> Arrays:
    """The namespace, device and dtype of the data ``X`` (:func:`~cvxclust._array_api.check_arrays`),
    after checking that it is a finite 2-D array of at least ``min_samples`` rows and one column;
    a ValueError or TypeError names ``name`` otherwise."""
    arrays = check_arrays(**{name: X})
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got {X.ndim}-D")
    if X.shape[0] < min_samples or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least {min_samples} rows and 1 column, got shape {tuple(X.shape)}")
    xp = arrays.xp
    if not bool(xp.all(xp.isfinite(X))):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return arrays


def _unit_scaled(X, xp) -> tuple:
    """``(X / 2**e, e)`` with the largest ``|entry|`` of the result in ``[1/2, 1)`` (exact)."""
    top = float(xp.max(xp.abs(X)))
    if top == 0:
        return X, 0
    e = math.frexp(top)[1]
    return X * math.ldexp(1.0, -e), e


def _squared_distances(X, xp):
    """The symmetric matrix of squared distances between the rows of ``X``, 0 on the diagonal."""
    squares = xp.sum(X * X, axis=1)
    S = squares[:, None] + squares[None, :] - 2.0 * (X @ X.T)
    S = xp.maximum((S + S.T) / 2, 0.0)
    n = X.shape[0]
    return xp.where(xp.eye(n, dtype=xp.bool, device=device_of(X)), 0.0, S)


def _finite(K, xp, kernel: str):
    if not bool(xp.all(xp.isfinite(K))):
        raise ValueError(f"the {kernel} of X overflows {K.dtype}: the entries of X are too large; rescale X")
    return K


def median_distance(X) -> float:
    r"""The median of the distances ``||a_i - a_j||`` over the pairs ``i < j`` of the rows of ``X``
    (:func:`cvxclust.kernels.median_distance`): the off-diagonal entries of the distance matrix
    hold each pair twice, so their median is the pairs' median."""
    xp = check_data(X).xp
    X, e = _unit_scaled(X, xp)
    n = X.shape[0]
    values = xp.sort(xp.reshape(_squared_distances(X, xp), (n * n,)))
    # the n smallest are the diagonal's zeros; the middle pair of the other n (n - 1) entries
    middle = n + (n * (n - 1)) // 2
    median = (math.sqrt(float(values[middle - 1])) + math.sqrt(float(values[middle]))) / 2
    return math.ldexp(median, e)


def rbf(X, delta: float):
    r""":math:`K_{ij} = \exp(-\|a_i - a_j\|^2 / \delta^2)` (:func:`cvxclust.kernels.rbf`) for a width
    ``delta > 0`` checked by the caller; coincident points have affinity 1."""
    xp = check_data(X).xp
    X, e = _unit_scaled(X, xp)
    S = _squared_distances(X, xp)
    with np.errstate(over="ignore", under="ignore"):
        width = float(np.ldexp(np.float64(delta), -e) ** 2)  # in the units of the scaled X; may be 0 or inf
    if width == 0.0:  # only coincident points keep an affinity
        return xp.astype(S == 0, S.dtype)
    return xp.exp(-(S / width))


def polynomial(X, degree: int):
    r""":math:`K_{ij} = (a_i^\top a_j + 1)^d` (:func:`cvxclust.kernels.polynomial`)."""
    xp = check_data(X).xp
    G = X @ X.T
    K = (G + G.T) / 2 + 1.0
    return _finite(K ** degree, xp, f"polynomial kernel of degree {degree}")


def linear(X):
    r""":math:`K = X X^\top` (:func:`cvxclust.kernels.linear`)."""
    xp = check_data(X).xp
    G = X @ X.T
    return _finite((G + G.T) / 2, xp, "linear kernel")


def center(K):
    r""":math:`H K H` with :math:`H = I - \tfrac1n \mathbf 1 \mathbf 1^\top` for a checked square ``K``
    (:func:`cvxclust.kernels.center`); a symmetric K gives an exactly symmetric result."""
    xp = check_arrays(K=K).xp
    columns, rows = xp.mean(K, axis=0), xp.mean(K, axis=1)
    Kc = K - columns[None, :] - rows[:, None] + xp.mean(rows)
    Kc = _finite(Kc, xp, "centering")
    return (Kc + Kc.T) / 2 if bool(xp.all(K == K.T)) else Kc
