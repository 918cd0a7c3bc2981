"""Scikit-learn estimator for CLUHSICAL: CLUHSIC with a structured loss."""

from __future__ import annotations

from numbers import Integral, Real

import networkx as nx
import numpy as np
from sklearn.utils import check_random_state

from .._deprecation import DEPRECATED, renamed_parameter
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
from .._kernel_keywords import (
    check_solver_options,
    cluster_count,
    relaxation_and_method,
)
from .._local_search import best_refinement
from ..hsic import CLUHSICSDP, lowrank, round_best
from ..linalg import blas_threads
from ..parameters import Interval, Options, check_parameters
from ..structures import LOSS_KINDS, check_loss_matrix, loss_matrix, output_kernel
from ._greedy import LocalSearch, search
from ._output_kernels import relaxation_output_kernel
from ._partition import check_C, evaluate
from ._refine import refine

__all__ = ["CLUHSICAL"]

#: the relaxations of ``relaxation`` (None: the partition problem itself)
RELAXATIONS = (None, "sdp", "lowrank")
#: the methods of each relaxation ("auto": the first one listed after it; for "sdp",
#: :meth:`cvxclust.hsic.CLUHSICSDP.solve`'s own choice)
METHODS = {None: ("auto", "greedy"), "sdp": ("auto", *CLUHSICSDP.methods()), "lowrank": ("auto", "lowrank")}
#: the old ``method=`` spellings of a relaxation: their ``(relaxation, method)``
OLD_METHODS = {"sdp": ("sdp", "auto"), "lowrank": ("lowrank", "auto")}
# what solver_options may not set: the estimator's parameters and what fit passes itself
_RESERVED = ("n_clusters", "loss", "normalization", "C", "joint_kernel_scale", "gamma", "relaxation", "method",
             "n_init", "init", "known", "random_state", "rng", "K", "A")
# eigenpairs of the SDP solution handed to the rounding (the rank of the low-rank solver's factor)
_SDP_RANK = 10
# the options of the greedy that solver_options may set
_GREEDY_OPTIONS = {name: LocalSearch.parameters[name].constraints for name in ("tol", "max_iter", "time_limit")}


class CLUHSICAL(KernelClusterMixin):
    r"""Clustering with structured outputs and a structured loss (CLUHSICAL).

    With the centred input kernel K, the output kernel A of ``structure`` and the loss
    :math:`\Delta` between clusters, CLUHSICAL maximizes (13)

    .. math:: \max_{\Pi}\ \operatorname{tr}(K \Pi_1 A \Pi_1^\top),\qquad
              \Pi_1 = \tilde\Pi\,\operatorname{diag}(\|\tilde\Pi_{\cdot k}\|_1)^{-1},\quad
              \tilde\Pi = \Pi L,\ L = \operatorname{diag}(\Delta\mathbf 1) - \Delta\ \text{(12)},

    over hard assignments :math:`\Pi`; ``normalization="l2"`` maximizes (11),
    :math:`\tilde C\operatorname{tr}(K\Pi_2A\Pi_2^\top) - \frac{C}{m}\|\Pi_2\|_1` with unit-l2
    columns and :math:`\tilde C = 4C^2\gamma/m^2` (:math:`\gamma` = ``joint_kernel_scale``);
    ``normalization=None`` the unnormalized :math:`\operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)`,
    which is CLUHSIC (2) with output kernel :math:`LAL^\top` (with the zero-one loss, the same
    partition as CLUHSIC: Corollary 1).

    ``relaxation`` picks the problem solved and ``method`` the algorithm (``"auto"``: the first
    one listed):

    * ``relaxation=None`` (default), the partition problem itself: ``"greedy"``, the paper's
      greedy local optimization from ``n_init`` random starts (:func:`cvxclust.cluhsical.greedy`);
    * ``"lowrank"`` / ``"sdp"``: CLUHSIC's low-rank SDP (5.30) (method ``"lowrank"``,
      :func:`cvxclust.hsic.lowrank`) / exact SDP (5.23) (any method of
      :meth:`cvxclust.hsic.CLUHSICSDP.solve`: ``"auto"``, ``"admm"``, ``"generic"``,
      ``"reference"``) with the output kernel :func:`relaxation_output_kernel` (exact on
      balanced partitions; beyond the paper), rounded by :func:`cvxclust.hsic.round_best` and
      then polished by the greedy from the rounded labels, so that the result is a local optimum
      of the objective above.  ``"sdp"`` forms an mc x mc matrix: small m only.

    With ``refine=True`` (default) the method's partition is then refined: whole clusters are
    relabelled by the best swaps of labels (on the c x c statistics of the partition), then the
    greedy moves single points, in turn until neither raises the objective; the
    same refinement runs from ``refine_n_init`` structure-free starts (k-means runs on the
    kernel-PCA embedding of K), and the partition with the largest objective is returned.  The
    greedy alone moves one point at a time: it cannot empty a cluster into another, and stops
    with clusters merged, split or left empty.

    Parameters
    ----------
    n_clusters : int, default=None
        Number ``c`` of clusters.  None takes the number of clusters of ``structure``
        (``tree([2, 2])`` has 4), or 8 without it; a number that disagrees with it is a
        ValueError.  Without ``structure`` the clusters are unrelated, ``flat(n_clusters)``
        (A = I, the zero-one loss).  ``n_clusters=1`` puts every point in one cluster (nothing
        is solved).
    structure : networkx graph, default=None
        A structure of :mod:`cvxclust.structures` (``chain(c)``, ``ring(c)``, ``tree(...)``,
        ``kron(...)``, ``flat(c)``); A is its :func:`~cvxclust.structures.output_kernel`.
    loss : {"structure", "zero-one"} or array of shape (c, c), default="structure"
        :math:`\Delta`: the structure's own loss (chain distance, ring 0/1/2, tree height of the
        first common ancestor; :func:`~cvxclust.structures.loss_matrix`), the zero-one loss, or
        a user matrix (nonnegative, zero diagonal).
    normalization : {"l1", "l2", None}, default="l1"
    C : float, default=None
        (11) with ``"l2"``; ``None`` means ``0.1 m`` (Section IV-A-2).
    joint_kernel_scale : float, default=1.0
        The scale :math:`\gamma` of the joint kernel in Proposition 2, used by ``"l2"``
        (Section IV-A-2 fixes 1).
    affinity : {"rbf", "polynomial", "linear", "nearest_neighbors", "precomputed"}, default="rbf"
        Input kernel: ``exp(-gamma ||a - b||^2)``, ``(a.b + 1)^degree``, ``a.b``, the symmetric
        kNN connectivity (:func:`cvxclust.kernels.knn_affinity`), or X itself is the kernel.
        It is centred (HKH) as Section II assumes.
    gamma : float, default=None
        Coefficient of the rbf kernel; None takes the median heuristic
        ``1 / median_distance**2`` (:func:`cvxclust.kernels.median_distance`).
    degree : int, default=2
        Degree of the polynomial kernel.
    n_neighbors : int, default=10
        Neighbours of the kNN affinity.
    relaxation : {None, "sdp", "lowrank"}, default=None
        The problem solved, as listed above.
    method : str, default="auto"
        The algorithm that solves ``relaxation``, as listed above; a method of another
        relaxation is a ValueError that lists the valid ones.  The old spellings
        ``method="sdp"`` and ``"lowrank"`` (without ``relaxation``) mean the relaxation and give
        a ``FutureWarning``.
    n_init : int, default=10
        Random restarts of the greedy (the paper uses 10); the best objective is kept.
    solver_options : dict, default=None
        Options of the method: for ``relaxation=None`` those of :func:`cvxclust.cluhsical.greedy`
        (``tol``, ``max_iter``, ``time_limit``); for the relaxations those of
        :func:`cvxclust.hsic.lowrank` (``rank``, ``bias``, ``residual_tol``, ...) or of the
        SDP's solver (``tol``, ``residual_tol``, ``max_iter``, ...).  A key the estimator sets
        itself (``n_clusters``, ``normalization``, ``method``, ``n_init``, ``known``,
        ``random_state``, ...) is a ValueError naming it.
    refine : bool, default=True
        Refine the method's partition and the structure-free starts as described above; False
        returns the method's partition as it is (the paper's pipeline).
    refine_n_init : int, default=5
        Number of structure-free starts of the refinement.
    random_state : int, RandomState or None
    refine_starts : int
        Old spelling of ``refine_n_init``; gives a ``FutureWarning``.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    objective_ : float
        The objective of ``normalization`` at ``labels_``.
    output_kernel_, loss_ : ndarray of shape (c, c)
    result_ : Result or None
        The greedy's result (for the relaxations, the polishing run); None for
        ``n_clusters=1``.
    method_objective_ : float
        The objective of the method's own partition, before the refinement.
    relaxation_result_ : Result or None
        For ``relaxation="lowrank"`` and ``"sdp"``: the relaxation's result
        (``relaxation_result_.method`` names the method that ran).
    n_iter_ : int
        Sweeps of the greedy (``result_.iterations``; 0 for ``n_clusters=1``).

    Notes
    -----
    ``fit(X, y)`` takes ``y`` as known labels (-1 for unknown; Section 6 of the CLUHSIC paper):
    they fix rows of the partition in every method.  A ``y`` with no -1 is ignored, as
    scikit-learn's clusterers ignore ``y``.

    References
    ----------
    W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
    Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "structure": [nx.Graph, None],
        "loss": [Options(*LOSS_KINDS), ArrayLike()],
        "normalization": [Options("l1", "l2", None)],
        "C": [Interval(Real, 0, None, closed="neither"), None],
        "joint_kernel_scale": [Interval(Real, 0, None, closed="neither")],
        **KERNEL_PARAMETERS,
        "relaxation": [Options(*RELAXATIONS)],
        "method": [str],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "solver_options": ["dict", None],
        "refine": ["boolean"],
        "refine_n_init": [Interval(Integral, 0, None, closed="left")],
        "random_state": RANDOM_STATE,
        "refine_starts": [Interval(Integral, 0, None, closed="left"), Options(DEPRECATED)],
    }

    def __init__(
        self,
        n_clusters=None,
        *,
        structure=None,
        loss="structure",
        normalization="l1",
        C=None,
        joint_kernel_scale=1.0,
        affinity="rbf",
        gamma=None,
        degree=2,
        n_neighbors=10,
        relaxation=None,
        method="auto",
        n_init=10,
        solver_options=None,
        refine=True,
        refine_n_init=5,
        random_state=None,
        refine_starts=DEPRECATED,
    ):
        self.n_clusters = n_clusters
        self.structure = structure
        self.loss = loss
        self.normalization = normalization
        self.C = C
        self.joint_kernel_scale = joint_kernel_scale
        self.affinity = affinity
        self.gamma = gamma
        self.degree = degree
        self.n_neighbors = n_neighbors
        self.relaxation = relaxation
        self.method = method
        self.n_init = n_init
        self.solver_options = solver_options
        self.refine = refine
        self.refine_n_init = refine_n_init
        self.random_state = random_state
        self.refine_starts = refine_starts

    def _cluster_count(self) -> int:
        return cluster_count(self.n_clusters, self.structure)

    def _kernels(self):
        """A and the loss of the structure (one cluster: 1 x 1)."""
        G = resolve_structure(self._cluster_count(), self.structure)
        if G is None:
            loss = np.zeros((1, 1)) if isinstance(self.loss, str) else check_loss_matrix(self.loss, 1)
            return np.ones((1, 1)), loss
        return output_kernel(G), loss_matrix(G, self.loss)

    def fit(self, X, y=None):
        """Cluster X (or the precomputed kernel X); ``y``: known labels, -1 for unknown.

        Raises
        ------
        ValueError or TypeError
            Naming the parameter, ``X`` or ``y``.
        """
        X = self._validated_data(X)
        relaxation, method = relaxation_and_method("CLUHSICAL", self.relaxation, self.method, METHODS, OLD_METHODS)
        refine_n_init = renamed_parameter("CLUHSICAL", "refine_starts", self.refine_starts,
                                          "refine_n_init", self.refine_n_init, new_default=5)
        options = check_solver_options("CLUHSICAL", self.solver_options, _RESERVED)
        if relaxation is None:
            options = check_parameters(_GREEDY_OPTIONS, options, "greedy")
        m = X.shape[0]
        A, loss = self._kernels()
        c = A.shape[0]
        known = known_labels(y, m, c)
        C = check_C(self.C, m)
        with blas_threads(m):
            K = input_kernel(X, self.affinity, self.gamma, self.degree, self.n_neighbors)
            if c == 1:
                self.result_, labels = None, np.zeros(m, dtype=int)
                if relaxation is not None:
                    self.relaxation_result_ = None
            else:
                rng = check_random_state(self.random_state)
                init, n_init = None, self.n_init
                if relaxation is not None:
                    self.relaxation_result_, init = self._relax(K, A, loss, known, rng, relaxation, method, options)
                    n_init, options = 1, {}
                known = np.full(m, -1) if known is None else known
                self.result_ = search(K, A, loss, self.normalization, C, float(self.joint_kernel_scale), init=init,
                                      known=known, n_init=n_init, rng=rng, **options)
                labels = self.result_.extras["labels"]
            gamma = float(self.joint_kernel_scale)
            labels = np.asarray(labels, dtype=int)
            self.method_objective_ = self.objective_ = check_objective(
                evaluate(K, A, labels, loss, self.normalization, C, gamma))
            if c > 1 and self.refine:
                greedy_options = options if relaxation is None else {}

                def refine_one(start):
                    return refine(K, A, loss, self.normalization, C, gamma, start, known=known, rng=rng,
                                  **greedy_options)

                labels = best_refinement(refine_one, labels, K, c, refine_n_init, known=known,
                                         rng=rng.randint(2**32))
                self.objective_ = check_objective(evaluate(K, A, labels, loss, self.normalization, C, gamma))
            self.labels_ = labels
        self.output_kernel_, self.loss_ = A, loss
        self.n_iter_ = 0 if self.result_ is None else self.result_.iterations
        return self

    def _relax(self, K, A, loss, known, rng, relaxation, method, options):
        """Solve CLUHSIC's relaxation with the balanced-partition kernel B and round it."""
        m = K.shape[0]
        check_psd_kernel(K, self.affinity, relaxation, options)
        B = relaxation_output_kernel(A, loss, self.normalization, n_samples=m)
        # B's entries scale like (c/m)^2 under the l1 norms: give it A's spectral norm, so that
        # the rank-one bias of (5.30) weighs as it does in CLUHSIC
        B = B * (np.linalg.norm(A, 2) / max(np.linalg.norm(B, 2), 1e-300))
        if relaxation == "sdp":
            result = CLUHSICSDP(K, B, known=known).solve(method, **options)
            Y = top_factor(result.X, _SDP_RANK)
        else:
            result = lowrank(K, B, known=known, random_state=rng, **options)
            Y = result.X
        labels, _ = round_best(Y, K, B, known=known, random_state=rng)
        return result, labels
