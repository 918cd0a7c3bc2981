"""Scikit-learn estimator for CLUHSICAL: CLUHSIC with a structured loss."""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import validate_data

from .._checks import check_choice, check_int_range, check_labels, check_positive
from ..cluhsic import CLUHSICSDP, lowrank, round_best
from ..kernels import affinity, center
from ..structures import LOSS_KINDS, as_structure, loss_matrix, n_clusters as structure_size, output_kernel
from ._greedy import greedy
from ._partition import check_normalization, labels_objective, relaxation_output_kernel

__all__ = ["CLUHSICAL"]

METHODS = ("greedy", "lowrank", "sdp")
KERNELS = ("rbf", "polynomial", "linear", "nearest_neighbors", "precomputed")


class CLUHSICAL(ClusterMixin, BaseEstimator):
    r"""Clustering with structured outputs and a structured loss (CLUHSICAL).

    With the centred input kernel K, the output kernel A of ``structure`` and the loss
    :math:`\Delta` between clusters, CLUHSICAL maximizes (13)

    .. math:: \max_{\Pi}\ \operatorname{tr}(K \Pi_1 A \Pi_1^\top),\qquad
              \Pi_1 = \tilde\Pi\,\operatorname{diag}(\|\tilde\Pi_{\cdot k}\|_1)^{-1},\quad
              \tilde\Pi = \Pi L,\ L = \operatorname{diag}(\Delta\mathbf 1) - \Delta\ \text{(12)},

    over hard assignments :math:`\Pi`; ``normalization="l2"`` maximizes (11),
    :math:`\tilde C\operatorname{tr}(K\Pi_2A\Pi_2^\top) - \frac{C}{m}\|\Pi_2\|_1` with unit-l2
    columns and :math:`\tilde C = 4C^2\gamma/m^2`; ``normalization=None`` the unnormalized
    :math:`\operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)`, which is CLUHSIC (2) with output kernel
    :math:`LAL^\top` (with the zero-one loss, the same partition as CLUHSIC: Corollary 1).

    Methods:

    * ``"greedy"`` (default): the paper's greedy local optimization from ``n_init`` random
      starts (:func:`cvxclust.cluhsical.greedy`);
    * ``"lowrank"`` / ``"sdp"``: cluhsic's low-rank SDP (5.30) / exact SDP (5.23) with the output
      kernel :func:`relaxation_output_kernel` (exact on balanced partitions; beyond the paper),
      rounded by :func:`cvxclust.cluhsic.round_best` and then polished by the greedy from the
      rounded labels, so that the result is a local optimum of the objective above.  ``"sdp"``
      forms an mc x mc matrix: small m only.

    Parameters
    ----------
    structure : structure
        A structure of :mod:`cvxclust.structures` (``chain(c)``, ``ring(c)``, ``tree(...)``,
        ``kron(...)``, ``flat(c)`` for A = I); A is its
        :func:`~cvxclust.structures.output_kernel` and ``c`` its number of clusters.
    loss : {"structure", "zero-one"} or array of shape (c, c), default="structure"
        :math:`\Delta`: the structure's own loss (chain distance, ring 0/1/2, tree height of the
        first common ancestor; :func:`~cvxclust.structures.loss_matrix`), the zero-one loss, or
        a user matrix (nonnegative, zero diagonal).
    normalization : {"l1", "l2", None}, default="l1"
    C : float, default=None
        (11) with ``"l2"``; ``None`` means ``0.1 m`` (Section IV-A-2).
    gamma : float, default=1.0
        The kernel scaling of Proposition 2, used by ``"l2"`` (Section IV-A-2 fixes 1).
    kernel : {"rbf", "polynomial", "linear", "nearest_neighbors", "precomputed"}, default="rbf"
        Input kernel (:func:`cvxclust.kernels.affinity`), centred (HKH) as Section II assumes.
    kernel_params : dict, default=None
    method : {"greedy", "lowrank", "sdp"}, default="greedy"
    n_init : int, default=10
        Random restarts of the greedy (the paper uses 10); the best objective is kept.
    solver_options : dict, default=None
        Extra options of the relaxation (``rank``, ``gamma``, ``tol``, ``time_limit``, ... of
        :func:`cvxclust.cluhsic.lowrank`; ``tol``, ``max_iter`` ... of the SDP's ADMM).
    random_state : int, RandomState or None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
    objective_ : float
        The objective of ``normalization`` at ``labels_``.
    output_kernel_, loss_ : ndarray of shape (c, c)
    result_ : the greedy's :class:`~cvxclust.cluhsic.HeuristicResult` (for the relaxations, the
        polishing run; the relaxation's own result is ``relaxation_result_``).

    Notes
    -----
    ``fit(X, y)`` takes ``y`` as known labels (-1 for unknown; Section 6 of the CLUHSIC paper):
    they fix rows of the partition in every method.  A ``y`` with no -1 is ignored, as
    scikit-learn's clusterers ignore ``y``.

    References
    ----------
    W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the loss function into
    discriminative clustering of structured outputs", IEEE TNN 21(10), 2010.
    """

    def __init__(
        self,
        structure=None,
        *,
        loss="structure",
        normalization="l1",
        C=None,
        gamma=1.0,
        kernel="rbf",
        kernel_params=None,
        method="greedy",
        n_init=10,
        solver_options=None,
        random_state=None,
    ):
        self.structure = structure
        self.loss = loss
        self.normalization = normalization
        self.C = C
        self.gamma = gamma
        self.kernel = kernel
        self.kernel_params = kernel_params
        self.method = method
        self.n_init = n_init
        self.solver_options = solver_options
        self.random_state = random_state

    def _check_params(self, n_samples: int):
        if self.structure is None:
            raise ValueError("structure is required (e.g. cvxclust.structures.ring(10), or flat(c) for A = I)")
        G = as_structure(self.structure)  # a copy: fit leaves the user's graph untouched
        c = structure_size(G)
        if not 2 <= c <= n_samples:
            raise ValueError(f"structure has {c} clusters; it needs between 2 and n_samples={n_samples}")
        check_choice(self.method, "method", METHODS)
        check_choice(self.kernel, "kernel", KERNELS)
        check_normalization(self.normalization)
        check_int_range(self.n_init, "n_init", 1)
        if self.C is not None:
            check_positive(self.C, "C")
        if isinstance(self.gamma, bool) or not isinstance(self.gamma, numbers.Real):
            raise ValueError(f"gamma must be a positive number, got {self.gamma!r}")
        check_positive(self.gamma, "gamma")
        if self.kernel_params is not None and not isinstance(self.kernel_params, dict):
            raise ValueError(f"kernel_params must be a dict or None, got {self.kernel_params!r}")
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise ValueError(f"solver_options must be a dict or None, got {self.solver_options!r}")
        if self.loss is None or isinstance(self.loss, str):  # name the estimator's argument, not loss_matrix's
            check_choice(self.loss, "loss", LOSS_KINDS)
        return output_kernel(G), loss_matrix(G, self.loss)

    def fit(self, X, y=None):
        """Cluster X (or the precomputed kernel X); ``y``: known labels, -1 for unknown."""
        X = validate_data(self, X, ensure_min_samples=2)
        m = X.shape[0]
        A, loss = self._check_params(m)
        c = A.shape[0]
        known = None
        if y is not None and np.any(np.asarray(y) == -1):  # a y without -1 is ignored (sklearn)
            known = check_labels(y, m, c, name="y", allow_unknown=True)
            if np.all(known < 0):
                known = None
        K = center(affinity(X, self.kernel, **(self.kernel_params or {})))
        rng = check_random_state(self.random_state)
        objective = {"normalization": self.normalization, "C": self.C, "gamma": self.gamma}
        init, n_init = None, self.n_init
        if self.method != "greedy":
            self.relaxation_result_, init = self._relax(K, A, loss, known, rng)
            n_init = 1
        self.result_ = greedy(K, A, loss, init=init, known=known, n_init=n_init, random_state=rng, **objective)
        self.labels_ = np.asarray(self.result_.labels, dtype=int)
        self.output_kernel_, self.loss_ = A, loss
        self.objective_ = labels_objective(K, A, self.labels_, loss, **objective)
        return self

    def _relax(self, K, A, loss, known, rng):
        """Solve cluhsic's relaxation with the balanced-partition kernel B and round it."""
        m = K.shape[0]
        B = relaxation_output_kernel(A, loss, self.normalization, n_samples=m)
        # B's entries scale like (c/m)^2 under the l1 norms: give it A's spectral norm, so that
        # the rank-one bias gamma of (5.30) weighs as it does in CLUHSIC
        B = B * (np.linalg.norm(A, 2) / max(np.linalg.norm(B, 2), 1e-300))
        options = dict(self.solver_options or {})
        if self.method == "sdp":
            result = CLUHSICSDP(K, B, known=known).solve("auto", **options)
            w, V = np.linalg.eigh(result.X)
            top = np.argsort(w)[::-1][:10]
            Y = V[:, top] * np.sqrt(np.maximum(w[top], 0.0))
        else:
            result = lowrank(K, B, known=known, random_state=rng, **options)
            Y = result.Y
        labels, _ = round_best(Y, K, B, known=known, random_state=rng)
        return result, labels

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags
