"""Scikit-learn estimator for CLUHSIC with every optimizer of the family."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .._checks import check_bool, check_choice, check_int_range
from ..kernels import affinity, center
from ..structures import as_structure, check_output_kernel, output_kernel
from ._heuristics import cccp, greedy, nmf, spectral
from ._lowrank import lowrank
from ._objectives import check_labels, objective, partition_matrix
from ._rounding import round_best
from ._sdp import CLUHSICSDP

__all__ = ["CLUHSIC"]

METHODS = ("lowrank", "sdp", "greedy", "spectral", "cccp", "nmf")
KERNELS = ("rbf", "polynomial", "linear", "nearest_neighbors", "precomputed")


class CLUHSIC(ClusterMixin, BaseEstimator):
    r"""Clustering by maximizing HSIC between the data and structured cluster labels.

    With the centred input kernel K (m x m) and an output kernel A (c x c) that encodes the
    structure among clusters (a chain, a ring, a tree, ...), CLUHSIC solves (2.4)

    .. math::  \max_{P = \Pi D}\ \operatorname{tr}(K P A P^\top),
               \quad \Pi \in \{0,1\}^{m\times c},\ \Pi 1 = 1,\ D = (\Pi^\top\Pi)^{-1/2}

    (or the unnormalized (2.3) with ``normalized=False``) by one of the family's optimizers:

    * ``"lowrank"`` (default): the low-rank SDP (5.30), ``Y Y^T`` with Y >= 0 of rank ``rank``
      and the bias ``gamma`` towards rank one, solved by an augmented Lagrangian, then the
      rounding of Section 5.3;
    * ``"sdp"``: the exact SDP (5.23) (:class:`CLUHSICSDP`, mc x mc: small m only) and the same
      rounding;
    * ``"greedy"``: the local search of Song et al. (the paper's baseline);
    * ``"spectral"`` / ``"cccp"``: Proposition 2 / (4.16)-(4.17); both equal the spectral
      relaxation of k-means and so ignore A (Section 4);
    * ``"nmf"``: the nonnegative-matrix baseline of Table 1.

    Parameters
    ----------
    n_clusters : int, default=None
        Number of clusters; taken from ``structure`` / ``output_kernel`` when those are given
        (it must then agree), required otherwise (A = I, no structure).
    structure : networkx graph, default=None
        A structure of :mod:`cvxclust.structures` (``chain(c)``, ``ring(c)``, ``tree(...)``,
        ``kron(...)``) or a plain graph; its :func:`~cvxclust.structures.output_kernel` is A.
    output_kernel : array of shape (c, c), default=None
        A p.s.d. output kernel given directly (exclusive with ``structure``).
    kernel : {"rbf", "polynomial", "linear", "nearest_neighbors", "precomputed"}, default="rbf"
        Input kernel (:func:`cvxclust.kernels.affinity`); it is centred (HKH) as (2.2) assumes.
    kernel_params : dict, default=None
        Parameters of the kernel (``delta`` for rbf: default the median distance; ``degree``; ...).
    normalized : bool, default=True
        (2.4) rather than (2.3); the SDP relaxations exist for (2.4) only.
    method : {"lowrank", "sdp", "greedy", "spectral", "cccp", "nmf"}, default="lowrank"
    rank, gamma : int, float, default=10, 0.1
        Rank of Y and weight of the rank-one bias in (5.30) (the paper's values).
    solver_options : dict, default=None
        Extra options of the chosen optimizer (``tol``, ``max_iter``, ``time_limit``, ...).
    random_state : int, RandomState or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    objective_ : float
        ``tr(K P A P^T)`` of the returned partition (normalized or not as fitted).
    output_kernel_ : ndarray of shape (c, c)
    result_ : the optimizer's result (a :class:`cvxclust.Result` for ``"sdp"``, the low-rank
        result for ``"lowrank"``, a :class:`HeuristicResult` otherwise).

    Notes
    -----
    ``fit(X, y)`` takes ``y`` as *known labels* (Section 6): an integer array with -1 for the
    unknown points; the known ones fix rows of the partition in ``"greedy"``, ``"sdp"``,
    ``"lowrank"`` and ``"nmf"`` (``"spectral"``/``"cccp"`` cannot take them: ValueError).  A ``y``
    with no -1 entry is ignored, as scikit-learn's clusterers ignore ``y``.

    The relaxed solutions are rounded by :func:`round_best`: Section 5.3's rounding of the top
    eigenvector and of other vectors of the top eigenspace, keeping the best objective (the
    paper's alone fails when symmetric solutions, e.g. a chain read both ways, are tied).
    """

    def __init__(
        self,
        n_clusters=None,
        *,
        structure=None,
        output_kernel=None,
        kernel="rbf",
        kernel_params=None,
        normalized=True,
        method="lowrank",
        rank=10,
        gamma=0.1,
        solver_options=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.structure = structure
        self.output_kernel = output_kernel
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.normalized = normalized
        self.method = method
        self.rank = rank
        self.gamma = gamma
        self.solver_options = solver_options
        self.random_state = random_state

    def _output_kernel(self, n_samples: int) -> np.ndarray:
        if self.structure is not None and self.output_kernel is not None:
            raise ValueError("give either structure or output_kernel, not both")
        if self.structure is not None:
            A = output_kernel(as_structure(self.structure))
        elif self.output_kernel is not None:
            A = check_output_kernel(self.output_kernel)
        else:
            if self.n_clusters is None:
                raise ValueError("n_clusters is required when neither structure nor output_kernel is given")
            A = np.eye(check_int_range(self.n_clusters, "n_clusters", 2))
        c = A.shape[0]
        if self.n_clusters is not None and check_int_range(self.n_clusters, "n_clusters", 1) != c:
            source = "structure" if self.structure is not None else "output_kernel"
            raise ValueError(f"n_clusters={self.n_clusters} disagrees with the {c} clusters of {source}")
        if not 2 <= c <= n_samples:
            raise ValueError(f"the number of clusters must be between 2 and n_samples={n_samples}, got {c}")
        return A

    def fit(self, X, y=None):
        """Cluster X (or the precomputed kernel X); ``y``: known labels, -1 for unknown."""
        check_choice(self.method, "method", METHODS)
        check_choice(self.kernel, "kernel", KERNELS)
        check_bool(self.normalized, "normalized")
        if not self.normalized and self.method in ("lowrank", "sdp"):
            raise ValueError(f"method={self.method!r} relaxes the normalized objective (2.4): use normalized=True")
        check_int_range(self.rank, "rank", 1)
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, numbers.Real) or self.gamma < 0:
            raise ValueError(f"gamma must be a nonnegative number, got {self.gamma!r}")
        if self.kernel_params is not None and not isinstance(self.kernel_params, dict):
            raise ValueError(f"kernel_params must be a dict or None, got {self.kernel_params!r}")
        X = validate_data(self, X, ensure_min_samples=2)
        m = X.shape[0]
        A = self._output_kernel(m)
        c = A.shape[0]
        known = None
        if y is not None and np.any(np.asarray(y) == -1):  # a y without -1 is ignored (sklearn)
            known = check_labels(y, m, c, name="y", allow_unknown=True)
            if np.all(known < 0):
                known = None
            elif self.method in ("spectral", "cccp"):
                raise ValueError(f"method={self.method!r} cannot take known labels y; use greedy, sdp or lowrank")
        K = center(affinity(X, self.kernel, **(self.kernel_params or {})))
        rng = check_random_state(self.random_state)
        options = dict(self.solver_options or {})
        if self.method == "sdp":
            self.result_ = CLUHSICSDP(K, A, known=known).solve("auto", **options)
            w, V = np.linalg.eigh(self.result_.X)
            top = np.argsort(w)[::-1][: max(self.rank, 1)]
            Y = V[:, top] * np.sqrt(np.maximum(w[top], 0.0))
            labels, _ = round_best(Y, K, A, known=known, random_state=rng)
        elif self.method == "lowrank":
            self.result_ = lowrank(K, A, rank=self.rank, gamma=self.gamma, known=known, random_state=rng, **options)
            labels, _ = round_best(self.result_.Y, K, A, known=known, random_state=rng)
        else:
            func = {"greedy": greedy, "spectral": spectral, "cccp": cccp, "nmf": nmf}[self.method]
            if known is not None:
                options["known"] = known
            self.result_ = func(K, A, normalized=self.normalized, random_state=rng, **options)
            labels = self.result_.labels
        self.labels_ = np.asarray(labels, dtype=int)
        self.output_kernel_ = A
        self.objective_ = objective(K, A, partition_matrix(self.labels_, c, normalized=self.normalized))
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
