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

A K of another library of the Python array API standard (a PyTorch tensor on a GPU) is normalized
in its namespace and on its device by the closed forms and by the methods of ``"frobenius"`` and
``"frobenius-psd"`` that run there (:meth:`FrobeniusPSD.array_api_methods`).
"""

from __future__ import annotations

import warnings
from numbers import Integral, Real

from sklearn.exceptions import ConvergenceWarning

from .._array_api import add_to_diagonal, namespace_of
from .._deprecation import renamed_parameter
from ..parameters import Interval, InvalidParameterError, Options, check_parameter, check_parameters
from ._peng_wei import PengWei
from ._relaxations import FrobeniusDS, FrobeniusPSD, check_matrix

__all__ = ["normalize", "RELAXATIONS"]

#: the names of the normalizations (the relaxations of :func:`normalize` and of
#: :class:`~cvxclust.ssc.SemidefiniteSpectralClustering`)
RELAXATIONS = ("none", "ratio-cut", "normalized-cut", "frobenius", "frobenius-psd", "peng-wei")
#: the normalizations solved as relaxations by an iterative method, with their classes (the
#: others are closed forms)
RELAXATION_CLASSES = {"frobenius": FrobeniusDS, "frobenius-psd": FrobeniusPSD, "peng-wei": PengWei}
#: the options of the iterated normalized cut
_NORMALIZED_CUT = {
    "iterate": ["boolean"],
    "max_iter": [Interval(Integral, 1, None, closed="left")],
    "tol": [Interval(Real, 0, None, closed="neither")],
}


def check_method(method, relaxation: str, owner: str) -> str:
    """``method`` checked for ``relaxation``: ``"auto"`` or a method of its class (those registered
    now: the registry can grow); ``"auto"`` alone for a closed form, which has no method to choose
    (a name given there would be silently unused).  An :class:`InvalidParameterError` names
    ``method`` and ``relaxation``."""
    cls = RELAXATION_CLASSES.get(relaxation)
    if cls is not None:
        return check_parameter("method", method, [Options("auto", *cls.methods())], owner)
    if method != "auto":
        raise InvalidParameterError(
            f"The 'method' parameter of {owner} chooses the method of the relaxations solved iteratively "
            f"({', '.join(map(repr, RELAXATION_CLASSES))}); relaxation={relaxation!r} is a closed form with no "
            f"method, so method must be 'auto'. Got method={method!r} instead.")
    return method


def normalize(K, relaxation: str = "frobenius-psd", method: str = "auto", *, return_result: bool = False,
              **options):
    """Normalize the affinity matrix K.

    Parameters
    ----------
    K : (n, n) array_like
        Symmetric finite affinity matrix, n >= 2 (nonnegative for ``"normalized-cut"``); it is
        never modified.
    relaxation : {"none", "ratio-cut", "normalized-cut", "frobenius", "frobenius-psd", "peng-wei"}
        The normalization; see the module docstring.
    method : str, default="auto"
        The method that solves ``"frobenius"``, ``"frobenius-psd"`` and ``"peng-wei"``: ``"auto"``
        (the relaxation's default) or any method of :class:`FrobeniusDS`, :class:`FrobeniusPSD`
        or :class:`PengWei` (``"reference"`` and ``"generic"`` included).  The closed forms have
        none: with them it must stay ``"auto"``.  A relaxation's name here is the old spelling of
        ``relaxation`` (a ``FutureWarning``; no method bears such a name).
    return_result : bool
        Also return the method's :class:`~cvxclust.Result` (None for the closed forms).
    **options
        ``"normalized-cut"``: ``iterate=False``, ``max_iter=1000``, ``tol=1e-10``.
        ``"frobenius"``/``"frobenius-psd"``/``"peng-wei"``: the options of ``method``;
        ``"peng-wei"`` also takes ``n_clusters`` (required).  ``solver=<a method>`` is the old
        spelling of ``method`` (a ``FutureWarning``), except with ``method="reference"``, where
        ``solver`` is the cvxpy solver.

    Returns
    -------
    K_hat : ndarray, or (K_hat, Result or None) with ``return_result=True``
        A new array; None where the method returned the solution only as a factor F (``X = F F^T``
        in ``Result.extras["factor"]``, ``Result.X`` unformed because an n x n matrix would not
        fit), which ``return_result=True`` gives.
    """
    if isinstance(method, str) and method in RELAXATIONS:  # the old normalize(K, method=<relaxation>)
        relaxation = renamed_parameter("normalize", "method", method, "relaxation", relaxation,
                                       new_default="frobenius-psd")
        method = "auto"
    if "solver" in options and method != "reference":  # the old normalize(K, relaxation, solver=<method>)
        method = renamed_parameter("normalize", "solver", options.pop("solver"), "method", method,
                                   new_default="auto")
    relaxation = check_parameter("relaxation", relaxation, [Options(*RELAXATIONS)], "normalize")
    method = check_method(method, relaxation, "normalize")
    return_result = check_parameter("return_result", return_result, ["boolean"], "normalize")
    K = check_matrix(K, "K", min_size=2)
    result = None
    if relaxation in ("none", "ratio-cut") and options:
        raise ValueError(f"relaxation={relaxation!r} takes no options, got {sorted(options)}")
    xp = namespace_of(K)
    if relaxation == "none":
        K_hat = xp.asarray(K, copy=True)
    elif relaxation == "ratio-cut":  # K - Diag(K 1) + I
        K_hat = add_to_diagonal(xp.asarray(K, copy=True), -xp.sum(K, axis=1), xp)
        K_hat = add_to_diagonal(K_hat, 1.0, xp)
    elif relaxation == "normalized-cut":
        K_hat = _normalized_cut(K, **check_parameters(_NORMALIZED_CUT, options, "normalize"))
    else:
        if relaxation == "peng-wei":
            if "n_clusters" not in options:
                raise TypeError("relaxation='peng-wei' needs the number of clusters: pass n_clusters")
            solved = PengWei(K, options.pop("n_clusters"))
        else:
            solved = RELAXATION_CLASSES[relaxation](K)
        result = solved.solve(method, **options)
        K_hat = result.X
    return (K_hat, result) if return_result else K_hat


def _normalized_cut(K, *, iterate: bool = False, max_iter: int = 1000, tol: float = 1e-10):
    xp = namespace_of(K)
    low = float(xp.min(K))
    if low < 0:
        raise ValueError(f"K must have nonnegative entries for relaxation='normalized-cut' (min {low:.3g})")
    for _ in range(max_iter if iterate else 1):
        d = xp.sum(K, axis=1)
        if bool(xp.any(d <= 0)):
            raise ValueError("K has a row summing to zero; relaxation='normalized-cut' needs positive degrees")
        s = 1.0 / xp.sqrt(d)
        K = s[:, None] * K * s[None, :]
        if iterate and float(xp.max(xp.abs(xp.sum(K, axis=1) - 1))) < tol:
            return K
    if iterate:
        warnings.warn(f"normalized-cut scaling did not reach tol={tol:g} in {max_iter} iterations",
                      ConvergenceWarning, stacklevel=3)
    return K
