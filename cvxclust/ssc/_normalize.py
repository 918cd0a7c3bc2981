r"""The normalizations of the affinity matrix compared in the paper (Section II, Table II).

Each one maps the affinity K to a (nearly) doubly stochastic matrix under a different error
measure [Zass & Shashua 2006]:

=====================  ==========================================================================
``"none"`` (NO)        K itself
``"ratio-cut"`` (RC)   ``K - D + I`` with ``D = diag(K 1)``: the nearest doubly stochastic matrix
                       in L1 (Ratio-cut)
``"normalized-cut"``   ``D^{-1/2} K D^{-1/2}`` (Normalized-cut); with ``iterate=True`` the scaling
(NC)                   is repeated, ``K_{t+1} = D_t^{-1/2} K_t D_t^{-1/2}``, which converges to the
                       nearest doubly stochastic matrix in relative entropy (symmetric Sinkhorn)
``"frobenius"`` (FSC)  the QP (6): nearest doubly stochastic matrix in Frobenius norm
``"frobenius-psd"``    the SDP (7): nearest doubly stochastic **p.s.d.** matrix in Frobenius norm
(SSC)                  (semidefinite spectral clustering)
``"peng-wei"``         the doubly stochastic p.s.d. matrix of trace k maximising ``<K, X>``: the
                       Peng-Wei SDP relaxation of kernel k-means (:class:`PengWei`)
=====================  ==========================================================================

References: R. Zass, A. Shashua, "Doubly Stochastic Normalization for Spectral Clustering",
Advances in Neural Information Processing Systems (NIPS), 2006; Y. Yan, C. Shen, H. Wang,
"Efficient Semidefinite Spectral Clustering via Lagrange Duality", IEEE Transactions on Image
Processing, 2014; J. Peng, Y. Wei, "Approximating K-means-type Clustering via Semidefinite
Programming", SIAM Journal on Optimization, 2007.
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
from sklearn.exceptions import ConvergenceWarning

from ..parameters import Interval, Options, validate_parameter, validate_parameters
from ._peng_wei import PengWei
from ._relaxations import FrobeniusDS, FrobeniusPSD, check_matrix

__all__ = ["normalize", "NORMALIZATIONS"]

NORMALIZATIONS = ("none", "ratio-cut", "normalized-cut", "frobenius", "frobenius-psd", "peng-wei")
#: the normalizations solved as relaxations (the others are closed forms)
RELAXATIONS = {"frobenius": FrobeniusDS, "frobenius-psd": FrobeniusPSD, "peng-wei": PengWei}
#: the options of the iterated normalized cut
_NORMALIZED_CUT = {
    "iterate": ["boolean"],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="neither")],
}


def normalize(K, method: str = "frobenius-psd", *, return_result: bool = False, **options):
    """Normalize the affinity matrix K.

    Parameters
    ----------
    K : (n, n) array_like
        Symmetric finite affinity matrix, n >= 2 (nonnegative for ``"normalized-cut"``); it is
        never modified.
    method : {"none", "ratio-cut", "normalized-cut", "frobenius", "frobenius-psd", "peng-wei"}
        See the module docstring.
    return_result : bool
        Also return the solver's :class:`~cvxclust.Result` (None for the closed forms).
    **options
        ``"normalized-cut"``: ``iterate=False``, ``max_iter=1000``, ``tol=1e-10``.
        ``"frobenius"``/``"frobenius-psd"``/``"peng-wei"``: ``solver="auto"`` (any method of
        :class:`FrobeniusDS`/:class:`FrobeniusPSD`/:class:`PengWei`) and that solver's options;
        ``"peng-wei"`` also takes ``n_clusters`` (required).

    Returns
    -------
    K_hat : ndarray, or (K_hat, Result or None) with ``return_result=True``
        A new array.
    """
    method = validate_parameter("method", method, [Options(*NORMALIZATIONS)], "normalize")
    return_result = validate_parameter("return_result", return_result, ["boolean"], "normalize")
    K = check_matrix(K, "K", min_size=2)
    result = None
    if method in ("none", "ratio-cut") and options:
        raise ValueError(f"method={method!r} takes no options, got {sorted(options)}")
    if method == "none":
        K_hat = K.copy()
    elif method == "ratio-cut":
        K_hat = K - np.diag(K.sum(axis=1)) + np.eye(len(K))
    elif method == "normalized-cut":
        K_hat = _normalized_cut(K, **validate_parameters(_NORMALIZED_CUT, options, "normalize"))
    else:
        solver = options.pop("solver", "auto")
        if method == "peng-wei":
            if "n_clusters" not in options:
                raise TypeError("method='peng-wei' needs the number of clusters: pass n_clusters")
            relaxation = PengWei(K, options.pop("n_clusters"))
        else:
            relaxation = RELAXATIONS[method](K)
        result = relaxation.solve(solver, **options)
        K_hat = result.X
    return (K_hat, result) if return_result else K_hat


def _normalized_cut(K, *, iterate: bool = False, max_iter: int = 1000, tol: float = 1e-10):
    if K.min() < 0:
        raise ValueError(f"K must have nonnegative entries for method='normalized-cut' (min {K.min():.3g})")
    for _ in range(max_iter if iterate else 1):
        d = K.sum(axis=1)
        if np.any(d <= 0):
            raise ValueError("K has a row summing to zero; method='normalized-cut' needs positive degrees")
        s = 1.0 / np.sqrt(d)
        K = s[:, None] * K * s[None, :]
        if iterate and np.abs(K.sum(axis=1) - 1).max() < tol:
            return K
    if iterate:
        warnings.warn(f"normalized-cut scaling did not reach tol={tol:g} in {max_iter} iterations",
                      ConvergenceWarning, stacklevel=3)
    return K
