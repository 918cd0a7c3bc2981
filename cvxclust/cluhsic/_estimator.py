"""Scikit-learn estimator for CLUHSIC with every optimizer of the family."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import networkx as nx
from sklearn.utils import check_random_state

from .._array_api import is_foreign, to_numpy
from .._checks import refuse_array_X
from .._deprecation import DEPRECATED, renamed_parameter
from .._kernel_keywords import (
    check_solver_options,
    cluster_count,
    relaxation_and_method,
)

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

#: the relaxations of ``relaxation`` (None: the partition problem (2.3)/(2.4) itself)
RELAXATIONS = (None, "spectral", "sdp", "lowrank")
#: the methods of each relaxation ("auto" picks the first one listed after it; for "sdp",
#: :meth:`CLUHSICSDP.solve`'s own choice)
METHODS = {None: ("auto", "greedy", "nmf"), "spectral": ("auto", "spectral", "cccp"),
           "sdp": ("auto", *CLUHSICSDP.methods()), "lowrank": ("auto", "lowrank")}
#: the old ``method=`` spellings of a relaxation: their ``(relaxation, method)``
OLD_METHODS = {"sdp": ("sdp", "auto"), "lowrank": ("lowrank", "auto"), "spectral": ("spectral", "auto"),
               "cccp": ("spectral", "cccp")}
#: the normalizations CLUHSIC's optimizers handle: (2.3) and (2.4)
NORMALIZATIONS = (None, "l2")
# the functions of the methods of the partition problem and of the spectral relaxation
_FUNCTIONS = {"greedy": greedy, "nmf": nmf, "spectral": spectral, "cccp": cccp}
# what solver_options may not set: the estimator's parameters and what fit passes itself
_RESERVED = ("n_clusters", "normalization", "normalized", "relaxation", "method", "rank", "bias", "known",
             "random_state", "rng", "K", "A")


class CLUHSIC(KernelClusterMixin):
    r"""Clustering by maximizing HSIC between the data and structured cluster labels.

    With the centred input kernel K (m x m) and an output kernel A (c x c) that encodes the
    structure among clusters (a chain, a ring, a tree, ...), CLUHSIC solves (2.4)

    .. math::  \max_{P = \Pi D}\ \operatorname{tr}(K P A P^\top),
               \quad \Pi \in \{0,1\}^{m\times c},\ \Pi 1 = 1,\ D = (\Pi^\top\Pi)^{-1/2}

    (or the unnormalized (2.3), :math:`D = I`, with ``normalization=None``).  ``relaxation``
    picks the problem solved and ``method`` the algorithm that solves it (``"auto"``: the first
    one listed):

    * ``relaxation=None`` (default), the partition problem itself: ``"greedy"`` (the fastest),
      the local search of Song et al. (the paper's baseline), from ``solver_options["n_init"]``
      random starts (default 1); ``"nmf"``, the nonnegative-matrix baseline of Table 1;
    * ``"spectral"``, the spectral relaxation (4.13), rounded by k-means: ``"spectral"`` solves
      it by Proposition 2, ``"cccp"`` by the concave-convex procedure (4.16)-(4.17), which
      reaches the same solution (Section 4.2).  It equals the spectral relaxation of k-means
      and so ignores A (Section 4), and it needs a positive semidefinite kernel;
    * ``"sdp"``, the exact SDP (5.23) (:class:`CLUHSICSDP`, mc x mc: small m only), with any of
      its methods (``"auto"``, ``"admm"``, ``"generic"``, ``"reference"``: see
      :meth:`CLUHSICSDP.solve`), rounded by Section 5.3;
    * ``"lowrank"``, the low-rank SDP (5.30), ``Y Y^T`` with Y >= 0 of rank ``rank`` and the
      rank-one bias weighted by ``bias``, solved by an augmented Lagrangian (``"lowrank"``:
      :func:`cvxclust.hsic.lowrank`), then the same rounding; its default start is the spectral
      relaxation, which needs a positive semidefinite kernel.

    With ``refine=True`` (default) the method's partition is then refined
    (:func:`cvxclust.hsic.refine`): its clusters are placed on the structure by a quadratic
    assignment over the c x c cluster kernel, then the greedy local search moves single points,
    in turn until neither raises the objective; the same refinement runs from ``refine_n_init``
    structure-free starts (k-means runs on the kernel-PCA embedding of K, placed on the
    structure the same way), and the partition with the largest objective is returned.  A
    partition can be right as a set of groups and wrong in where it puts them (a chain read in a
    scrambled order): single-point moves alone cannot repair that.

    Parameters
    ----------
    n_clusters : int, default=None
        Number ``c`` of clusters.  None takes the number of clusters of ``structure`` or
        ``output_kernel`` (``tree([2, 2])`` has 4), or 8 without either; a number that disagrees
        with them is a ValueError.  Without ``structure`` and ``output_kernel`` the clusters are
        unrelated, ``flat(n_clusters)`` (A = I).  ``n_clusters=1`` puts every point in one
        cluster (nothing is solved).
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
    normalization : {"l2", None}, default="l2"
        The partition matrix :math:`P = \Pi D`: ``"l2"``, :math:`D = (\Pi^\top\Pi)^{-1/2}`, the
        objective (2.4); None, :math:`D = I`, (2.3).  The SDP relaxations exist for (2.4) only;
        ``"l1"`` (CLUHSICAL's) is not an objective of CLUHSIC's optimizers: ValueError.
    relaxation : {None, "spectral", "sdp", "lowrank"}, default=None
        The problem solved, as listed above.
    method : str, default="auto"
        The algorithm that solves ``relaxation``, as listed above; a method of another
        relaxation is a ValueError that lists the valid ones.  The old spellings
        ``method="spectral"``, ``"cccp"``, ``"sdp"``, ``"lowrank"`` (without ``relaxation``)
        mean the relaxation (``"cccp"``: ``relaxation="spectral", method="cccp"``) and give a
        ``FutureWarning``.
    rank : int, default=10
        Rank of Y in (5.30) (the paper's value), and the number of top eigenpairs of the SDP
        solution handed to the rounding.
    bias : float, default=0.1
        Weight of the rank-one bias in (5.30) (the paper's gamma, 0.1).
    solver_options : dict, default=None
        Options of the method (:func:`~cvxclust.hsic.greedy`, :func:`~cvxclust.hsic.lowrank`,
        :meth:`CLUHSICSDP.solve`, ...), e.g. ``tol``, ``residual_tol``, ``max_iter``,
        ``time_limit``, ``n_init``.  A key the estimator sets itself (``n_clusters``,
        ``normalization``, ``method``, ``rank``, ``bias``, ``known``, ``random_state``, ...) is
        a ValueError naming it.
    refine : bool, default=True
        Refine the method's partition and the structure-free starts as described above; False
        returns the method's partition as it is (the paper's pipelines).
    refine_n_init : int, default=5
        Number of structure-free starts of the refinement.
    certify : {"auto", True, False}, default="auto"
        Bound the returned partition's distance to the best one by the SDP (5.23)'s certified
        upper bound (:func:`cvxclust.hsic.certify_partition`): always (True; the SDP has order
        m c, and its cost grows steeply with it), never (False), or when ``m c <= 200`` ("auto").
        Objective (2.4) (``normalization="l2"``) only.
    random_state : int, RandomState or None
    normalized : bool
        Old spelling of ``normalization`` (True: ``"l2"``, False: None); gives a
        ``FutureWarning``.
    refine_starts : int
        Old spelling of ``refine_n_init``; gives a ``FutureWarning``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    objective_ : float
        ``tr(K P A P^T)`` of the returned partition (of ``normalization`` as fitted).
    output_kernel_ : ndarray of shape (c, c)
    result_ : Result or None
        The method's result (for ``"lowrank"`` and ``"sdp"`` the relaxation's, before the
        rounding); ``result_.method`` names the method that ran.  None for ``n_clusters=1``.
    method_objective_ : float
        The objective of the method's own partition, before the refinement.
    certificate_ : PartitionCertificate
        ``upper_bound`` and ``gap`` when a certificate was computed; otherwise ``available`` is
        False and ``reason`` says why.
    n_iter_ : int
        Iterations of the method (``result_.iterations``; 0 for ``n_clusters=1``).

    Notes
    -----
    ``fit(X, y)`` takes ``y`` as *known labels* (Section 6): an integer array with -1 for the
    unknown points; the known ones fix rows of the partition in the partition problem's methods,
    ``"sdp"`` and ``"lowrank"`` (``relaxation="spectral"`` cannot take them: ValueError).  A ``y``
    with no -1 entry is ignored, as scikit-learn's clusterers ignore ``y``.

    The relaxed solutions are rounded by :func:`round_best`: Section 5.3's rounding of the top
    eigenvector and of other vectors of the top eigenspace, keeping the best objective (the
    paper's alone fails when symmetric solutions, e.g. a chain read both ways, are tied).

    **Arrays on a device.**  X (or the precomputed kernel X) may be an array of another library of
    the Python array API standard, a PyTorch tensor on a GPU say, with ``relaxation="sdp"`` and
    method ``"auto"`` or ``"admm"``: the kernel is computed and centred on X's device (affinity
    ``"rbf"``, ``"polynomial"``, ``"linear"`` or ``"precomputed"``), the SDP (5.23) is solved
    there, and so is the certificate; ``result_.X`` stays there.  The rounding, the refinement and
    the objective run on the host, on NumPy arrays: they take the top ``rank`` eigenvectors of the
    solution (an ``m c x rank`` factor) and one copy of the centred ``m x m`` kernel, never an
    ``m c x m c`` array.  ``labels_`` and ``output_kernel_`` are NumPy arrays, as scikit-learn's
    labels are.  Every other relaxation or method, and ``affinity="nearest_neighbors"``, runs on
    NumPy arrays only and is refused with a TypeError naming it (pass X as a NumPy array).

    References
    ----------
    W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
    Algorithm", SIAM International Conference on Data Mining (SDM), 2010.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "structure": [nx.Graph, None],
        "output_kernel": [ArrayLike(), None],
        **KERNEL_PARAMETERS,
        "normalization": [Options(None, "l1", "l2")],
        "relaxation": [Options(*RELAXATIONS)],
        "method": [str],
        "rank": [Interval(Integral, 1, None, closed="left")],
        "bias": [Interval(Real, 0, None, closed="left")],
        "solver_options": ["dict", None],
        "refine": ["boolean"],
        "refine_n_init": [Interval(Integral, 0, None, closed="left")],
        "certify": [Options("auto"), "boolean"],
        "random_state": RANDOM_STATE,
        "normalized": ["boolean", Options(DEPRECATED)],
        "refine_starts": [Interval(Integral, 0, None, closed="left"), Options(DEPRECATED)],
    }

    def __init__(
        self,
        n_clusters=None,
        *,
        structure=None,
        output_kernel=None,
        affinity="rbf",
        gamma=None,
        degree=2,
        n_neighbors=10,
        normalization="l2",
        relaxation=None,
        method="auto",
        rank=10,
        bias=0.1,
        solver_options=None,
        refine=True,
        refine_n_init=5,
        certify="auto",
        random_state=None,
        normalized=DEPRECATED,
        refine_starts=DEPRECATED,
    ):
        self.n_clusters = n_clusters
        self.structure = structure
        self.output_kernel = output_kernel
        self.affinity = affinity
        self.gamma = gamma
        self.degree = degree
        self.n_neighbors = n_neighbors
        self.normalization = normalization
        self.relaxation = relaxation
        self.method = method
        self.rank = rank
        self.bias = bias
        self.solver_options = solver_options
        self.refine = refine
        self.refine_n_init = refine_n_init
        self.certify = certify
        self.random_state = random_state
        self.normalized = normalized
        self.refine_starts = refine_starts

    def _output_kernel(self, c: int) -> np.ndarray:
        if self.output_kernel is None:
            G = resolve_structure(c, self.structure)
            return np.ones((1, 1)) if G is None else output_kernel(G)
        return check_output_kernel(self.output_kernel, name="output_kernel")

    def _cluster_count(self) -> int:
        return cluster_count(self.n_clusters, self.structure, self.output_kernel)

    def _settings(self) -> tuple:
        """The checked relaxation, method, normalization and number of refinement starts (the
        old spellings resolved, with a ``FutureWarning``)."""
        relaxation, method = relaxation_and_method("CLUHSIC", self.relaxation, self.method, METHODS, OLD_METHODS,
                                                   stacklevel=5)
        old = self.normalized
        old = old if old is DEPRECATED else ("l2" if old else None)
        normalization = renamed_parameter("CLUHSIC", "normalized", old, "normalization", self.normalization,
                                          new_default="l2", stacklevel=5)
        if normalization not in NORMALIZATIONS:
            raise ValueError(f"CLUHSIC: normalization={normalization!r} is not supported; use 'l2' (the objective "
                             f"(2.4)) or None ((2.3))")
        if normalization is None and relaxation in ("lowrank", "sdp"):
            raise ValueError(f"relaxation={relaxation!r} relaxes the objective (2.4): use normalization='l2'")
        refine_n_init = renamed_parameter("CLUHSIC", "refine_starts", self.refine_starts,
                                          "refine_n_init", self.refine_n_init, new_default=5, stacklevel=5)
        return relaxation, method, normalization, refine_n_init

    def fit(self, X, y=None):
        """Cluster X (or the precomputed kernel X); ``y``: known labels, -1 for unknown.

        Raises
        ------
        ValueError or TypeError
            Naming the parameter, ``X`` or ``y``.
        """
        X = self._validated_data(X, on_device=True)
        relaxation, method, normalization, refine_n_init = self._settings()
        if is_foreign(X):
            if relaxation != "sdp" or method not in ("auto", "admm"):
                refuse_array_X(self, X, f"relaxation={relaxation!r} with method={method!r}")
            if self.affinity == "nearest_neighbors":
                refuse_array_X(self, X, "affinity='nearest_neighbors'")
            y = to_numpy(y)  # the labels, on the host with the rounding
        options = check_solver_options("CLUHSIC", self.solver_options, _RESERVED)
        m = X.shape[0]
        A = self._output_kernel(self._cluster_count())
        c = A.shape[0]
        known = known_labels(y, m, c)
        if known is not None and relaxation == "spectral":
            raise ValueError("relaxation='spectral' cannot take known labels y; use relaxation=None, 'sdp' or "
                             "'lowrank'")
        with blas_threads(m):
            device_K = input_kernel(X, self.affinity, self.gamma, self.degree, self.n_neighbors)
            K = to_numpy(device_K)  # the rounding, refinement and objective run on the host (NumPy: K itself)
            rng = check_random_state(self.random_state)
            if c == 1:
                self.result_, labels = None, np.zeros(m, dtype=int)
            else:
                self.result_, labels = self._solve(K, A, known, rng, relaxation, method, normalization, options,
                                                   device_K)
            labels = np.asarray(labels, dtype=int)
            self.method_objective_ = self.objective_ = check_objective(
                objective(K, A, partition_matrix(labels, c, normalization=normalization)))
            if c > 1 and self.refine:
                labels = self._refined(K, A, labels, known, rng, normalization, refine_n_init)
                self.objective_ = check_objective(objective(K, A, partition_matrix(labels, c,
                                                                                   normalization=normalization)))
            self.labels_ = labels
            self.certificate_ = self._certificate(device_K, A, known, normalization)
        self.output_kernel_ = A
        self.n_iter_ = 0 if self.result_ is None else self.result_.iterations
        return self

    def _refined(self, K, A, labels, known, rng, normalization, n_init):
        """The best refinement of the method's partition and of the structure-free starts."""
        def refine_one(start):
            return refine(K, A, start, normalization=normalization, known=known,
                          random_state=rng.randint(2**32))[:2]

        return best_refinement(refine_one, labels, K, A.shape[0], n_init, known=known, rng=rng.randint(2**32))

    def _certificate(self, K, A, known, normalization) -> PartitionCertificate:
        m, c = K.shape[0], A.shape[0]
        if c == 1:
            return PartitionCertificate(True, self.objective_, self.objective_, 0.0)  # the only partition
        if normalization != "l2":
            return PartitionCertificate(False, self.objective_,
                                        reason="the SDP (5.23) relaxes the objective (2.4) (normalization='l2') only")
        if self.certify == "auto" and m * c > AFFORDABLE_ORDER:
            return PartitionCertificate(False, self.objective_, reason=(
                f"the SDP (5.23) has order m c = {m * c} > {AFFORDABLE_ORDER}: pass certify=True to solve it anyway"))
        if not self.certify:
            return PartitionCertificate(False, self.objective_, reason="certify=False")
        return certify_partition(K, A, self.labels_, known=known)

    def _solve(self, K, A, known, rng, relaxation, method, normalization, options, device_K):
        """The method's result and the labels (the SDP solved with ``device_K``, the kernel on X's
        device, which is K itself for a NumPy X)."""
        check_psd_kernel(K, self.affinity, relaxation, options)
        if relaxation == "sdp":
            result = CLUHSICSDP(device_K, A, known=known).solve(method, **options)
            return result, round_best(top_factor(result.X, self.rank), K, A, known=known, random_state=rng)[0]
        if relaxation == "lowrank":
            result = lowrank(K, A, rank=self.rank, bias=self.bias, known=known, random_state=rng, **options)
            return result, round_best(result.X, K, A, known=known, random_state=rng)[0]
        if method == "auto":
            method = "greedy" if relaxation is None else "spectral"
        if known is not None:
            options["known"] = known
        result = _FUNCTIONS[method](K, A, normalization=normalization, random_state=rng, **options)
        return result, result.extras["labels"]
