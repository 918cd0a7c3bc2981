"""Scikit-learn estimator for semidefinite spectral clustering."""

from __future__ import annotations

import numbers

from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .._checks import check_choice, check_n_clusters
from ..kernels import affinity
from ..rounding import round_labels
from ._normalize import NORMALIZATIONS, normalize
from ._relaxations import FrobeniusDS, FrobeniusPSD

__all__ = ["SemidefiniteSpectralClustering"]

AFFINITIES = ("rbf", "polynomial", "nearest_neighbors", "precomputed")
ASSIGN_LABELS = ("discretize", "kmeans")


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
    n_clusters : int, default=2
        Number of clusters, ``2 <= n_clusters <= n_samples``.
    affinity : {"rbf", "polynomial", "nearest_neighbors", "precomputed"}, default="rbf"
        ``"rbf"``: ``exp(-||a - b||^2 / delta^2)``; ``"polynomial"``: ``(a.b + 1)^degree``;
        ``"nearest_neighbors"``: symmetric kNN connectivity; ``"precomputed"``: X is K.
    delta : float, default=None
        rbf width; None uses the median pairwise distance.
    degree : int, default=2
        Polynomial degree.
    n_neighbors : int, default=10
        Neighbours of the kNN affinity.
    normalization : {"frobenius-psd", "frobenius", "normalized-cut", "ratio-cut", "none"}
        See :func:`cvxclust.ssc.normalize`.
    solver : str, default="auto"
        Method for the Frobenius normalizations (see :class:`FrobeniusPSD`).
    solver_options : dict, default=None
        Options for that solver (``tol``, ``max_iter``, ``time_limit``, ...).
    assign_labels : {"discretize", "kmeans"}, default="discretize"
        Spectral step: Yu-Shi multiclass discretization or k-means, each restarted ``n_init``
        times keeping the best objective.
    n_init : int, default=10
        Restarts of the spectral step.
    random_state : int, RandomState or None
        Seed of the spectral step's restarts.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    affinity_matrix_ : ndarray of shape (n_samples, n_samples)
    normalized_affinity_ : ndarray of shape (n_samples, n_samples)
    result_ : Result or None
        The solver's result for the Frobenius normalizations (objective, dual bound, history).
    """

    def __init__(
        self,
        n_clusters=2,
        *,
        affinity="rbf",
        delta=None,
        degree=2,
        n_neighbors=10,
        normalization="frobenius-psd",
        solver="auto",
        solver_options=None,
        assign_labels="discretize",
        n_init=10,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.affinity = affinity
        self.delta = delta
        self.degree = degree
        self.n_neighbors = n_neighbors
        self.normalization = normalization
        self.solver = solver
        self.solver_options = solver_options
        self.assign_labels = assign_labels
        self.n_init = n_init
        self.random_state = random_state

    def fit(self, X, y=None):
        """Cluster X (or the precomputed affinity X). ``y`` is ignored."""
        check_choice(self.affinity, "affinity", AFFINITIES)
        check_choice(self.normalization, "normalization", NORMALIZATIONS)
        check_choice(self.assign_labels, "assign_labels", ASSIGN_LABELS)
        if isinstance(self.n_init, bool) or not isinstance(self.n_init, numbers.Integral) or self.n_init < 1:
            raise ValueError(f"n_init must be a positive integer, got {self.n_init!r}")
        X = validate_data(self, X, ensure_min_samples=2)
        n_clusters = check_n_clusters(self.n_clusters, X.shape[0])
        params = {
            "rbf": {"delta": self.delta},
            "polynomial": {"degree": self.degree},
            "nearest_neighbors": {"n_neighbors": self.n_neighbors},
            "precomputed": {},
        }[self.affinity]
        self.affinity_matrix_ = affinity(X, self.affinity, **params)
        options = {}
        if self.normalization in ("frobenius", "frobenius-psd"):
            relaxation = FrobeniusPSD if self.normalization == "frobenius-psd" else FrobeniusDS
            check_choice(self.solver, "solver", ["auto", *relaxation.methods()])
            options = {"solver": self.solver, **(self.solver_options or {})}
        elif self.solver_options:
            options = dict(self.solver_options)
        self.normalized_affinity_, self.result_ = normalize(
            self.affinity_matrix_, self.normalization, return_result=True, **options
        )
        self.labels_ = round_labels(
            self.normalized_affinity_,
            n_clusters,
            method=self.assign_labels,
            n_init=self.n_init,
            random_state=check_random_state(self.random_state),
        )
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags
