"""Scikit-learn estimator for semidefinite spectral clustering."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin

from .._array_api import is_foreign, namespace_of, to_numpy
from .._array_ops import top_eigenvectors
from .._checks import check_random_state, check_X, refuse_array_X
from .._deprecation import DEPRECATED, renamed_parameter
from .._kernel_estimators import check_array_X
from ..kernels import affinity, median_distance
from ..linalg import blas_threads
from ..parameters import Interval, Options, check_parameter, check_parameters
from ..rounding import factor_embedding, round_embedding, round_labels
from ._normalize import RELAXATION_CLASSES, RELAXATIONS, check_method, normalize

__all__ = ["SemidefiniteSpectralClustering"]

#: ``solver_options`` keys that the estimator sets itself (from its own parameters)
OWN_KEYS = ("relaxation", "method", "n_clusters", "random_state", "return_result")


class SemidefiniteSpectralClustering(ClusterMixin, BaseEstimator):
    r"""Spectral clustering with the affinity normalized to the nearest doubly stochastic
    p.s.d. matrix (semidefinite spectral clustering, SSC), or one of the classic normalizations.

    Three steps (the paper's Fig. 1): build the affinity K; normalize it,

    .. math::  \hat K = \arg\min_F \tfrac12 \|F - K\|_F^2
               \ \text{s.t.}\ F \ge 0,\ F 1 = 1,\ F = F^T,\ F \succeq 0   \qquad (7)

    and cluster the rows of the top ``n_clusters`` eigenvectors of :math:`\hat K` (the
    spectral step (4)) by Yu-Shi discretization or k-means.

    Parameters
    ----------
    n_clusters : int, default=8
        Number of clusters, at most n_samples.  ``n_clusters=1`` puts every point in one
        cluster without normalizing.
    affinity : {"rbf", "polynomial", "nearest_neighbors", "precomputed"}, default="rbf"
        ``"rbf"``: ``exp(-gamma ||a - b||^2)``; ``"polynomial"``: ``(a.b + 1)^degree``;
        ``"nearest_neighbors"``: symmetric kNN connectivity (:func:`cvxclust.kernels.knn_affinity`);
        ``"precomputed"``: X is the affinity K (square and symmetric).
    gamma : float > 0, default=None
        Coefficient of the rbf affinity; None uses the median heuristic
        ``gamma = 1 / median_distance**2`` (a typical pair of points has affinity ``exp(-1)``).
        Ignored by the other affinities.
    degree : int, default=2
        Degree of the polynomial affinity.
    n_neighbors : int, default=10
        Neighbours of the kNN affinity, at most n_samples - 1.
    relaxation : {"frobenius-psd", "frobenius", "peng-wei", "normalized-cut", "ratio-cut", "none"}
        The normalization of the affinity (default ``"frobenius-psd"``), see
        :func:`cvxclust.ssc.normalize`.  ``"peng-wei"`` is
        the Peng-Wei SDP relaxation of kernel k-means with k = ``n_clusters``
        (:class:`cvxclust.ssc.PengWei`), solved from its cvxpy statement by :func:`cvxclust.solve`
        with ``method="auto"`` (see "Large n" below).
    method : str, default="auto"
        The method that solves the relaxation: ``"auto"`` (its default) or any method of
        :class:`FrobeniusPSD` (``"frobenius-psd"``), :class:`FrobeniusDS` (``"frobenius"``) or
        :class:`PengWei` (``"peng-wei"``), ``"reference"`` and ``"generic"`` included.  The
        closed-form normalizations (``"none"``, ``"ratio-cut"``, ``"normalized-cut"``) have no
        method: with them ``method`` must stay ``"auto"``, and any other value raises a
        ``ValueError`` naming ``method`` and ``relaxation`` at fit rather than being ignored.
    solver_options : dict, default=None
        Options of that method (``tol``, ``residual_tol``, ``max_iter``, ``time_limit``, ...),
        or of ``"normalized-cut"`` (``iterate``, ``max_iter``, ``tol``).  A key the estimator
        sets itself (``relaxation``, ``method``, ``n_clusters``, ``random_state``,
        ``return_result``, and ``solver`` except for the cvxpy solver of ``method="reference"``)
        raises a ``ValueError`` naming it.
    assign_labels : {"discretize", "kmeans"}, default="discretize"
        Spectral step: Yu-Shi multiclass discretization or k-means, each restarted ``n_init``
        times keeping the best objective.
    n_init : int, default=10
        Restarts of the spectral step.
    random_state : int, RandomState, Generator or None
        Seed of the spectral step's restarts.
    normalization : str
        The old spelling of ``relaxation``: it still works, with a ``FutureWarning``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each point (a NumPy array, whatever the library of X).
    affinity_matrix_ : ndarray of shape (n_samples, n_samples)
        The affinity K (an array of X's library, on its device, for such an X).
    normalized_affinity_ : ndarray of shape (n_samples, n_samples) or None
        The normalized affinity; None when ``n_clusters=1``, and where the method returned the
        solution only as a factor (``result_.extras["factor"]``, see "Large n").
    result_ : Result or None
        The solver's result for the normalizations solved as relaxations (objective, dual bound,
        history);
        None for the closed forms and for ``n_clusters=1``.
    n_iter_ : int
        Iterations of the solver (0 where there was no solve).
    objective_ : float or None
        The relaxation's objective (``1/2 ||K_hat - K||_F^2`` for the Frobenius normalizations,
        ``<K, K_hat>`` for Peng-Wei), None for the closed forms.
    n_features_in_ : int
        Number of features seen in fit.

    Notes
    -----
    **Large n.**  The affinity K is dense: at n = 10,000 it takes 800 MB, held by the estimator
    (``affinity_matrix_``).  With ``relaxation="peng-wei"`` and ``method="auto"``,
    :func:`cvxclust.solve` chooses the method by the size of the instance (from n = 2000 the low-rank
    method, started from a spectral clustering of K); while it solves, K is also held by the cvxpy
    statement (cvxpy's constants are copies) and as the solver's cost, three copies in all.  A method
    that returns
    the solution as a factor F (``X = F F^T``, in ``result_.extras["factor"]``) may leave
    ``result_.X`` unformed where an n x n matrix would not fit, and ``normalized_affinity_`` is
    then None.  Wherever a factor is returned, the spectral step takes the top eigenvectors of X
    from the thin singular value decomposition of F (:func:`cvxclust.rounding.factor_embedding`:
    O(n r^2) operations for an n x r factor) instead of decomposing an n x n matrix, which at
    n = 10,000 would take minutes.

    **Arrays on a device.**  X (or the precomputed affinity X) may be an array of another library
    of the Python array API standard, a PyTorch tensor on a GPU say: the affinity (``"rbf"``,
    ``"polynomial"`` or ``"precomputed"``) is computed on X's device, the normalization runs there
    (the closed forms, the methods of ``"frobenius"`` and ``"frobenius-psd"`` that run on any
    array library, :meth:`FrobeniusPSD.array_api_methods`, and ``"peng-wei"`` on a PyTorch device
    through :func:`cvxclust.solve`), and so does the eigendecomposition of the spectral step, whose
    ``n x n_clusters`` embedding alone goes to the host for the rounding (scikit-learn's k-means
    and the discretization run on NumPy arrays).  ``affinity_matrix_``, ``normalized_affinity_``
    and ``result_.X`` stay in X's library and on its device; ``labels_`` is a NumPy array, as
    scikit-learn's labels are.  ``affinity="nearest_neighbors"`` and the methods that run on NumPy
    arrays only are refused with a TypeError naming them (pass X as a NumPy array).

    References
    ----------
    Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral Clustering via Lagrange Duality",
    IEEE Transactions on Image Processing, 2014.
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "affinity": [Options("rbf", "polynomial", "nearest_neighbors", "precomputed")],
        "gamma": [Interval(Real, 0, None, closed="neither"), None],
        "degree": [Interval(Integral, 1, None, closed="left")],
        "n_neighbors": [Interval(Integral, 1, None, closed="left")],
        "relaxation": [Options(*RELAXATIONS)],
        "method": [str],
        "solver_options": ["dict", None],
        "assign_labels": [Options("discretize", "kmeans")],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
        "normalization": [Options(*RELAXATIONS)],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        affinity="rbf",
        gamma=None,
        degree=2,
        n_neighbors=10,
        relaxation="frobenius-psd",
        method="auto",
        solver_options=None,
        assign_labels="discretize",
        n_init=10,
        random_state=None,
        normalization=DEPRECATED,
    ):
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.gamma = gamma
        self.degree = degree
        self.n_neighbors = n_neighbors
        self.relaxation = relaxation
        self.method = method
        self.solver_options = solver_options
        self.assign_labels = assign_labels
        self.n_init = n_init
        self.random_state = random_state
        self.normalization = normalization

    def _checked_params(self) -> dict:
        name = type(self).__name__
        params = self.get_params(deep=False)
        old = params.pop("normalization")
        params = check_parameters(self._parameter_constraints, params, name)
        if not (isinstance(old, str) and old == DEPRECATED):
            old = check_parameter("normalization", old, self._parameter_constraints["normalization"], name)
        params["relaxation"] = renamed_parameter(name, "normalization", old, "relaxation", params["relaxation"],
                                                 new_default="frobenius-psd", stacklevel=5)
        params["method"] = check_method(params["method"], params["relaxation"], name)
        # solver is the cvxpy solver of the reference; elsewhere it would be the old spelling of method
        own = set(OWN_KEYS) | ({"solver"} if params["method"] != "reference" else set())
        own = sorted(set(params["solver_options"] or ()) & own)
        if own:
            raise ValueError(f"solver_options of {name} must not hold {own}: the estimator sets them from its "
                             "own parameters; pass them to it instead")
        return params

    def _affinity(self, X, params) -> np.ndarray:
        kind = params["affinity"]
        if kind == "rbf":
            gamma = params["gamma"]
            if gamma is None:
                width = median_distance(X)
                if width == 0:
                    raise ValueError("gamma=None uses the median pairwise distance of X, which is 0 (more than "
                                     "half of the samples coincide); pass gamma explicitly")
            else:
                width = gamma ** -0.5  # kernels.rbf takes the width delta, exp(-||a - b||^2 / delta^2)
            return affinity(X, "rbf", delta=width)
        options = {"polynomial": {"degree": params["degree"]},
                   "nearest_neighbors": {"n_neighbors": params["n_neighbors"]}}.get(kind, {})
        return affinity(X, kind, **options)

    def fit(self, X, y=None):
        """Cluster X (or the precomputed affinity X). ``y`` is ignored.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) if
            ``affinity="precomputed"``
            Data, or the symmetric affinity matrix.
        y : None
            Ignored.

        Returns
        -------
        self
        """
        params = self._checked_params()
        X = self._array_X(X, params) if is_foreign(X) else check_X(self, X, ensure_min_samples=2)
        n = X.shape[0]
        n_clusters = check_parameter("n_clusters", params["n_clusters"],
                                        [Interval(Integral, 1, n, closed="both")], type(self).__name__)
        with blas_threads(n):
            self.affinity_matrix_ = self._affinity(X, params)
            self.result_, self.normalized_affinity_ = None, None
            if n_clusters == 1:
                self.labels_ = np.zeros(n, dtype=int)
            else:
                options = dict(params["solver_options"] or {})
                if params["relaxation"] == "peng-wei":
                    options["n_clusters"] = n_clusters
                self.normalized_affinity_, self.result_ = normalize(
                    self.affinity_matrix_, params["relaxation"], params["method"], return_result=True, **options)
                self.labels_ = self._spectral_step(n_clusters, params)
        self.n_iter_ = 0 if self.result_ is None else self.result_.iterations
        self.objective_ = None if self.result_ is None else self.result_.objective
        return self

    def _array_X(self, X, params):
        """An X of another array API library, checked on its device where the settings run there,
        refused with a TypeError naming the setting where they do not."""
        if params["affinity"] == "nearest_neighbors":
            refuse_array_X(self, X, "affinity='nearest_neighbors'")
        cls = RELAXATION_CLASSES.get(params["relaxation"])
        on_device = getattr(cls, "array_api_methods", None)  # PengWei checks its K's library itself
        if on_device is not None and params["method"] not in ("auto", *on_device()):
            refuse_array_X(self, X, f"method={params['method']!r} of relaxation={params['relaxation']!r}")
        return check_array_X(self, X)

    def _spectral_step(self, n_clusters: int, params) -> np.ndarray:
        """Labels from the top ``n_clusters`` eigenvectors of the normalized affinity, taken from
        the factor F of a solution given as ``X = F F^T`` (``result_.extras["factor"]``) where there
        is one, so that no n x n matrix is formed or decomposed."""
        rounding = {"method": params["assign_labels"], "n_init": params["n_init"],
                    "random_state": check_random_state(params["random_state"])}
        factor = None if self.result_ is None else self.result_.extras.get("factor")
        if factor is not None:  # an n x r factor: to the host, for its thin SVD
            return round_embedding(factor_embedding(to_numpy(factor), n_clusters), n_clusters, **rounding)
        K_hat = self.normalized_affinity_
        if K_hat is None:
            raise RuntimeError(f"the method {self.result_.method!r} returned neither the normalized affinity nor "
                               "a factor of it")
        if is_foreign(K_hat):  # decomposed on its device: the n x n_clusters embedding alone goes to the host
            V = to_numpy(top_eigenvectors(K_hat, n_clusters, namespace_of(K_hat)))
            return round_embedding(V, n_clusters, **rounding)
        return round_labels(K_hat, n_clusters, **rounding)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags
