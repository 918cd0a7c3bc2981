"""Scikit-learn estimator for CLUHSIC with every optimizer of the family."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import networkx as nx
from sklearn.utils import check_random_state

from .._kernel_estimators import (
    KERNEL_PARAMETERS,
    RANDOM_STATE,
    ArrayLike,
    KernelClusterMixin,
    check_objective,
    check_psd_kernel,
    input_kernel,
    known_labels,
    resolve_structure,
    top_factor,
)
from .._local_search import best_refinement
from ..linalg import blas_threads
from ..parameters import Interval, Options
from ..structures import check_output_kernel, output_kernel
from ..hsic import (
    CLUHSICSDP,
    PartitionCertificate,
    cccp,
    certify_partition,
    greedy,
    lowrank,
    nmf,
    objective,
    partition_matrix,
    refine,
    round_best,
    spectral,
)

__all__ = ["CLUHSIC"]

#: Largest order m c of the SDP (5.23) that ``certify="auto"`` solves.
AFFORDABLE_ORDER = 200

METHODS = ("greedy", "lowrank", "sdp", "spectral", "cccp", "nmf")
HEURISTICS = {"greedy": greedy, "spectral": spectral, "cccp": cccp, "nmf": nmf}


class CLUHSIC(KernelClusterMixin):
    r"""Clustering by maximizing HSIC between the data and structured cluster labels.

    With the centred input kernel K (m x m) and an output kernel A (c x c) that encodes the
    structure among clusters (a chain, a ring, a tree, ...), CLUHSIC solves (2.4)

    .. math::  \max_{P = \Pi D}\ \operatorname{tr}(K P A P^\top),
               \quad \Pi \in \{0,1\}^{m\times c},\ \Pi 1 = 1,\ D = (\Pi^\top\Pi)^{-1/2}

    (or the unnormalized (2.3) with ``normalized=False``) by one of the family's optimizers:

    * ``"greedy"`` (default, the fastest): the local search of Song et al. (the paper's
      baseline), from ``solver_options["n_init"]`` random starts (default 1);
    * ``"lowrank"``: the low-rank SDP (5.30), ``Y Y^T`` with Y >= 0 of rank ``rank`` and the
      rank-one bias weighted by ``bias``, solved by an augmented Lagrangian, then the rounding
      of Section 5.3; its default start is the spectral relaxation, which needs a positive
      semidefinite kernel;
    * ``"sdp"``: the exact SDP (5.23) (:class:`CLUHSICSDP`, mc x mc: small m only) and the same
      rounding;
    * ``"spectral"`` / ``"cccp"``: Proposition 2 / (4.16)-(4.17); both equal the spectral
      relaxation of k-means and so ignore A (Section 4); they need a positive semidefinite
      kernel;
    * ``"nmf"``: the nonnegative-matrix baseline of Table 1.

    With ``refine=True`` (default) the method's partition is then refined
    (:func:`cvxclust.hsic.refine`): its clusters are placed on the structure by a quadratic
    assignment over the c x c cluster kernel, then the greedy local search moves single points,
    in turn until neither raises the objective; the same refinement runs from ``refine_starts``
    structure-free starts (k-means runs on the kernel-PCA embedding of K, placed on the
    structure the same way), and the partition with the largest objective is returned.  A
    partition can be right as a set of groups and wrong in where it puts them (a chain read in a
    scrambled order): single-point moves alone cannot repair that.

    Parameters
    ----------
    n_clusters : int, default=8
        Number ``c`` of clusters.  Without ``structure`` and ``output_kernel`` the clusters are
        unrelated, ``flat(n_clusters)`` (A = I); with either, it must equal their number of
        clusters.  ``n_clusters=1`` puts every point in one cluster (nothing is solved).
    structure : networkx graph, default=None
        A structure of :mod:`cvxclust.structures` (``chain(c)``, ``ring(c)``, ``tree(...)``,
        ``kron(...)``) or a plain graph; its :func:`~cvxclust.structures.output_kernel` is A.
    output_kernel : array of shape (c, c), default=None
        A p.s.d. output kernel given directly (exclusive with ``structure``).
    affinity : {"rbf", "polynomial", "linear", "nearest_neighbors", "precomputed"}, default="rbf"
        Input kernel: ``exp(-gamma ||a - b||^2)``, ``(a.b + 1)^degree``, ``a.b``, the symmetric
        kNN connectivity (:func:`cvxclust.kernels.knn_affinity`), or X itself is the kernel.
        It is centred (HKH) as (2.2) assumes.
    gamma : float, default=None
        Coefficient of the rbf kernel; None takes the median heuristic
        ``1 / median_distance**2`` (:func:`cvxclust.kernels.median_distance`).
    degree : int, default=2
        Degree of the polynomial kernel.
    n_neighbors : int, default=10
        Neighbours of the kNN affinity.
    normalized : bool, default=True
        (2.4) rather than (2.3); the SDP relaxations exist for (2.4) only.
    method : {"greedy", "lowrank", "sdp", "spectral", "cccp", "nmf"}, default="greedy"
    rank : int, default=10
        Rank of Y in (5.30) (the paper's value), and the number of top eigenpairs of the SDP
        solution handed to the rounding.
    bias : float, default=0.1
        Weight of the rank-one bias in (5.30) (the paper's gamma, 0.1).
    solver_options : dict, default=None
        Options of the chosen optimizer (:func:`greedy`, :func:`lowrank`, the SDP's solver,
        ...), e.g. ``tol``, ``residual_tol``, ``max_iter``, ``time_limit``, ``n_init``.
    refine : bool, default=True
        Refine the method's partition and the structure-free starts as described above; False
        returns the method's partition as it is (the paper's pipelines).
    refine_starts : int, default=5
        Number of structure-free starts of the refinement.
    certify : {"auto", True, False}, default="auto"
        Bound the returned partition's distance to the best one by the SDP (5.23)'s certified
        upper bound (:func:`cvxclust.hsic.certify_partition`): always (True; the SDP has order
        m c, and its cost grows steeply with it), never (False), or when ``m c <= 200`` ("auto").
        Normalized objective (2.4) only.
    random_state : int, RandomState or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    objective_ : float
        ``tr(K P A P^T)`` of the returned partition (normalized or not as fitted).
    output_kernel_ : ndarray of shape (c, c)
    result_ : Result or None
        The optimizer's result (for ``"lowrank"`` and ``"sdp"`` the relaxation's, before the
        rounding); None for ``n_clusters=1``.
    method_objective_ : float
        The objective of the method's own partition, before the refinement.
    certificate_ : PartitionCertificate
        ``upper_bound`` and ``gap`` when a certificate was computed; otherwise ``available`` is
        False and ``reason`` says why.
    n_iter_ : int
        Iterations of the optimizer (``result_.iterations``; 0 for ``n_clusters=1``).

    Notes
    -----
    ``fit(X, y)`` takes ``y`` as *known labels* (Section 6): an integer array with -1 for the
    unknown points; the known ones fix rows of the partition in ``"greedy"``, ``"sdp"``,
    ``"lowrank"`` and ``"nmf"`` (``"spectral"``/``"cccp"`` cannot take them: ValueError).  A ``y``
    with no -1 entry is ignored, as scikit-learn's clusterers ignore ``y``.

    The relaxed solutions are rounded by :func:`round_best`: Section 5.3's rounding of the top
    eigenvector and of other vectors of the top eigenspace, keeping the best objective (the
    paper's alone fails when symmetric solutions, e.g. a chain read both ways, are tied).

    References
    ----------
    W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
    Algorithm", SIAM International Conference on Data Mining (SDM), 2010.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "structure": [nx.Graph, None],
        "output_kernel": [ArrayLike(), None],
        **KERNEL_PARAMETERS,
        "normalized": ["boolean"],
        "method": [Options(*METHODS)],
        "rank": [Interval(Integral, 1, None, closed="left")],
        "bias": [Interval(Real, 0, None, closed="left")],
        "solver_options": ["dict", None],
        "refine": ["boolean"],
        "refine_starts": [Interval(Integral, 0, None, closed="left")],
        "certify": [Options("auto"), "boolean"],
        "random_state": RANDOM_STATE,
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        structure=None,
        output_kernel=None,
        affinity="rbf",
        gamma=None,
        degree=2,
        n_neighbors=10,
        normalized=True,
        method="greedy",
        rank=10,
        bias=0.1,
        solver_options=None,
        refine=True,
        refine_starts=5,
        certify="auto",
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.structure = structure
        self.output_kernel = output_kernel
        self.affinity = affinity
        self.gamma = gamma
        self.degree = degree
        self.n_neighbors = n_neighbors
        self.normalized = normalized
        self.method = method
        self.rank = rank
        self.bias = bias
        self.solver_options = solver_options
        self.refine = refine
        self.refine_starts = refine_starts
        self.certify = certify
        self.random_state = random_state

    def _output_kernel(self) -> np.ndarray:
        if self.structure is not None and self.output_kernel is not None:
            raise ValueError("give either structure or output_kernel, not both")
        if self.output_kernel is None:
            G = resolve_structure(self.n_clusters, self.structure)
            return np.ones((1, 1)) if G is None else output_kernel(G)
        A = check_output_kernel(self.output_kernel, name="output_kernel")
        if A.shape[0] != self.n_clusters:
            raise ValueError(f"n_clusters={self.n_clusters} disagrees with the {A.shape[0]} clusters of "
                             f"output_kernel: pass n_clusters={A.shape[0]}")
        return A

    def fit(self, X, y=None):
        """Cluster X (or the precomputed kernel X); ``y``: known labels, -1 for unknown.

        Raises
        ------
        ValueError or TypeError
            Naming the parameter, ``X`` or ``y``.
        """
        X = self._validated_data(X)
        if not self.normalized and self.method in ("lowrank", "sdp"):
            raise ValueError(f"method={self.method!r} relaxes the normalized objective (2.4): use normalized=True")
        m = X.shape[0]
        A = self._output_kernel()
        c = A.shape[0]
        known = known_labels(y, m, c)
        if known is not None and self.method in ("spectral", "cccp"):
            raise ValueError(f"method={self.method!r} cannot take known labels y; use greedy, sdp or lowrank")
        with blas_threads(m):
            K = input_kernel(X, self.affinity, self.gamma, self.degree, self.n_neighbors)
            rng = check_random_state(self.random_state)
            if c == 1:
                self.result_, labels = None, np.zeros(m, dtype=int)
            else:
                self.result_, labels = self._solve(K, A, known, rng)
            labels = np.asarray(labels, dtype=int)
            self.method_objective_ = self.objective_ = check_objective(
                objective(K, A, partition_matrix(labels, c, normalized=self.normalized)))
            if c > 1 and self.refine:
                labels = self._refined(K, A, labels, known, rng)
                self.objective_ = check_objective(objective(K, A, partition_matrix(labels, c,
                                                                                   normalized=self.normalized)))
            self.labels_ = labels
            self.certificate_ = self._certificate(K, A, known)
        self.output_kernel_ = A
        self.n_iter_ = 0 if self.result_ is None else self.result_.iterations
        return self

    def _refined(self, K, A, labels, known, rng):
        """The best refinement of the method's partition and of the structure-free starts."""
        def refine_one(start):
            return refine(K, A, start, normalized=self.normalized, known=known, rng=rng.randint(2**32))[:2]

        return best_refinement(refine_one, labels, K, A.shape[0], self.refine_starts, known=known,
                               rng=rng.randint(2**32))

    def _certificate(self, K, A, known) -> PartitionCertificate:
        m, c = K.shape[0], A.shape[0]
        if c == 1:
            return PartitionCertificate(True, self.objective_, self.objective_, 0.0)  # the only partition
        if not self.normalized:
            return PartitionCertificate(False, self.objective_,
                                        reason="the SDP (5.23) relaxes the normalized objective (2.4) only")
        if self.certify == "auto" and m * c > AFFORDABLE_ORDER:
            return PartitionCertificate(False, self.objective_, reason=(
                f"the SDP (5.23) has order m c = {m * c} > {AFFORDABLE_ORDER}: pass certify=True to solve it anyway"))
        if not self.certify:
            return PartitionCertificate(False, self.objective_, reason="certify=False")
        return certify_partition(K, A, self.labels_, known=known)

    def _solve(self, K, A, known, rng):
        """The optimizer's result and the labels."""
        options = dict(self.solver_options or {})
        check_psd_kernel(K, self.affinity, self.method, options)
        if self.method == "sdp":
            result = CLUHSICSDP(K, A, known=known).solve("auto", **options)
            return result, round_best(top_factor(result.X, self.rank), K, A, known=known, random_state=rng)[0]
        if self.method == "lowrank":
            result = lowrank(K, A, rank=self.rank, bias=self.bias, known=known, random_state=rng, **options)
            return result, round_best(result.X, K, A, known=known, random_state=rng)[0]
        if known is not None:
            options["known"] = known
        result = HEURISTICS[self.method](K, A, normalized=self.normalized, random_state=rng, **options)
        return result, result.extras["labels"]
