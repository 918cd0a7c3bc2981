r"""``BregmanClustering``: the scikit-learn estimator of the bregman family (Section 6).

The estimator runs the paper's experimental pipeline (Section 6) for one of the four relaxations:

1. solve the convex relaxation (its ``"auto"`` solver, with ``solver_options``);
2. round the relaxed normalized equivalence matrix M by spectral clustering
   (:func:`~cvxclust.bregman._local.round_equivalence`, ``n_init`` repeats, 10 in the paper);
3. (``reoptimize=True``) re-optimise the *original hard objective* locally, starting from the
   rounded labels, with the matching alternating method of :mod:`cvxclust.bregman._local`.

=================  ==========================================  ====================================
``model``          relaxation (paper)                          hard objective re-optimised
=================  ==========================================  ====================================
conditional-jc     :class:`ConditionalJC` (10) over M1         (6) :math:`D_F(X, Y\Gamma)`,
                                                               Bregman hard clustering
conditional        :class:`Conditional` (15)-(17) over M2      (14) :math:`D_{F^*}(YB, f(X))
                                                               + \frac{\alpha}{2}\|YB\|_F^2`
discriminative     :class:`Discriminative` (28)/(29) over M2   (6) with ``divergence`` (Section 6.3
                                                               re-optimises :math:`D_F(X, Y\Gamma)`
                                                               with the sigmoid transfer)
joint              :class:`Joint` (32)/(33) over M2            the joint likelihood of Section 5:
                                                               :math:`D_F(X, Y\Gamma)
                                                               - \sum_j n_j\log(n_j/t)`
=================  ==========================================  ====================================

The objectives are those of :mod:`cvxclust.bregman._local` (constants such as
:math:`\sum_i F(x_i)` kept as there); :func:`hard_objective` evaluates them for given labels.
"""

from __future__ import annotations

import numbers

import numpy as np
from scipy.special import xlogy
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_non_negative, validate_data

from .._checks import check_bool, check_choice, check_int_range, check_labels, check_n_clusters, check_positive
from ._conditional import Conditional
from ._conditional_jc import ConditionalJC
from ._discriminative import Discriminative
from ._joint import Joint
from ._local import (
    bregman_hard_clustering,
    conditional_centres,
    conditional_hard_clustering,
    joint_hard_clustering,
    round_equivalence,
)
from .divergences import Divergence, GeneralizedKL, get_divergence

__all__ = ["BregmanClustering", "hard_objective"]

MODELS = ("conditional-jc", "conditional", "discriminative", "joint")
ROUNDINGS = ("spectral",)

#: Solver options the estimator uses unless ``solver_options`` overrides them.  The solvers
#: default to a certified relative gap of 1e-6, which the estimator does not need: it only uses
#: M through its rounding.  Measured (one thread; since then the Euclidean default became
#: Davis-Yin splitting, 2-3x faster): the ADMM of ConditionalJC on 50 blobs took
#: 5000 iterations (16 s) without reaching 1e-6, 2400 (10 s) for 1e-4 and 600 (2 s) for 1e-3,
#: with the same rounded partition at every tolerance; the conditional gradient of Joint on
#: structureless uniform data (40 x 10, d = 2) hit 1000 iterations (30 s) at 1e-6, needed 82
#: (2.7 s) for 1e-4 and 3 (0.1 s) for 1e-3.
DEFAULT_SOLVER_OPTIONS = {
    "conditional-jc": {"tol": 1e-3, "residual_tol": 1e-3},
    "conditional": {"tol": 1e-4},
    "discriminative": {"tol": 1e-4},
    "joint": {"tol": 1e-4},
}


def _cluster_means(X: np.ndarray, labels: np.ndarray, n_clusters: int) -> tuple[np.ndarray, np.ndarray]:
    counts = np.bincount(labels, minlength=n_clusters)
    sums = np.zeros((n_clusters, X.shape[1]))
    np.add.at(sums, labels, X)
    means = np.tile(X.mean(axis=0), (n_clusters, 1))  # empty clusters: unused placeholder in the domain
    nonempty = counts > 0
    means[nonempty] = sums[nonempty] / counts[nonempty, None]
    return means, counts


def hard_objective(X, divergence, labels, n_clusters: int, *, model: str = "conditional-jc",
                   alpha: float = 1e-2) -> float:
    r"""The hard objective that ``model`` re-optimises, at the partition ``labels``.

    With :math:`\Gamma` the cluster means (optimal for every Bregman divergence, Banerjee et al.
    2005) and :math:`n_j` the cluster sizes:

    * ``"conditional-jc"``, ``"discriminative"``: (6) :math:`D_F(X, Y\Gamma)`;
    * ``"conditional"``: (14) :math:`\min_B D_{F^*}(YB, f(X)) + \frac{\alpha}{2}\|YB\|_F^2`, with
      the rows of B from :func:`~cvxclust.bregman._local.conditional_centres`
      (:math:`f^{-1}(b_j) + \alpha b_j = \bar x_j`);
    * ``"joint"``: :math:`D_F(X, Y\Gamma) - \sum_j n_j \log(n_j / t)` (Section 5 with the profile
      prior :math:`w_j = \log(n_j/t)`; empty clusters contribute 0).

    These are the ``objective`` values of the :class:`~cvxclust.bregman._local.LocalResult` of
    the matching local method, evaluated without optimising Y.

    Parameters
    ----------
    X : array-like of shape (t, n)
        Data in the domain of the divergence.
    divergence : str or Divergence
    labels : array-like of int, shape (t,)
        Cluster indices in ``0 .. n_clusters - 1`` (empty clusters allowed).
    n_clusters : int
        d, between 2 and t.
    model : {"conditional-jc", "conditional", "discriminative", "joint"}
    alpha : float > 0
        The weight of (14); used by ``"conditional"`` only.

    Returns
    -------
    float
    """
    div = get_divergence(divergence)
    X = div.check_domain(np.asarray(X, dtype=float), "X")
    if X.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n_samples, n_features), got {X.ndim}-D")
    d = check_n_clusters(n_clusters, X.shape[0])
    labels = check_labels(labels, X.shape[0], d)
    check_choice(model, "model", MODELS)
    means, counts = _cluster_means(X, labels, d)
    if model == "conditional":
        check_positive(alpha, "alpha")
        YB = conditional_centres(means, div, float(alpha))[labels]
        return float(div.dual_divergence(YB, X) + 0.5 * alpha * np.sum(YB * YB))
    value = div.divergence(X, means[labels])
    if model == "joint":
        value -= float(np.sum(xlogy(counts, counts / X.shape[0])))
    return float(value)


class BregmanClustering(ClusterMixin, BaseEstimator):
    r"""Clustering by a convex relaxation of Bregman-divergence clustering, rounding and local
    re-optimisation (Section 6 of "Convex relaxations of Bregman divergence clustering").

    Hard Bregman clustering (6) minimises :math:`D_F(X, Y\Gamma)` over assignments Y and centres
    :math:`\Gamma`; with :math:`M = Y(Y^\top Y)^\dagger Y^\top` (9) it is
    :math:`\min_{M \in \mathcal{M}} D_F(X, MX)`, and the relaxations replace the set
    :math:`\mathcal{M}` of normalized equivalence matrices by a convex superset:

    * ``"conditional-jc"`` (default): (10) :math:`\min_{M \in \mathcal{M}_1} D_F(X, MX)`, for a
      jointly convex divergence, by the certified ADMM of Section 3.1.1;
    * ``"conditional"``: (17) :math:`\min_T D_{F^*}(T, f(X)) + \frac{\alpha}{2}\Omega^2(T)` over
      :math:`\mathcal{M}_2`, any divergence, by the conditional gradient of Algorithm 1;
    * ``"discriminative"``: (29) with the softmax transfer and weight ``gamma``;
    * ``"joint"``: (33), the generative model with a cluster prior, weights ``alpha``, ``beta``.

    The relaxed M is rounded by spectral clustering (``n_init`` repeats; the repeat whose
    equivalence matrix is nearest M in Frobenius norm is kept), then, with ``reoptimize=True``,
    the hard objective of the model (see :func:`hard_objective`) is re-optimised by the matching
    alternating method started at the rounded labels; that method never increases its objective,
    so ``objective_ <= rounded_objective_``.

    Parameters
    ----------
    n_clusters : int, default=2
        d, between 2 and n_samples.
    divergence : str or Divergence, default="euclidean"
        ``"euclidean"``, ``"kl"``, ``"logistic"``, ``"itakura-saito"`` (aliases ``"linear"``,
        ``"poisson"``, ``"sigmoid"``, ``"bernoulli"``) or a
        :class:`~cvxclust.bregman.divergences.Divergence` instance (``Mahalanobis(W)``).
        ``"conditional-jc"`` needs a jointly convex one (not Itakura-Saito).  For
        ``"discriminative"`` the relaxation uses the softmax transfer whatever this is; the
        divergence defines the hard objective re-optimised afterwards.
    model : {"conditional-jc", "conditional", "discriminative", "joint"}, default="conditional-jc"
    alpha : float, default=1e-2
        Weight of the value regulariser of (14)/(17) and of T in (33) (> 0); used by
        ``"conditional"`` and ``"joint"``.
    beta : float, default=1e-2
        Weight of the prior regulariser of (33) (> 0); ``"joint"`` only.
    gamma : float, default=1e-2
        Weight of :math:`\frac{\gamma}{2}\Omega^2(V)` in (29) (> 0); ``"discriminative"`` only.
    rounding : {"spectral"}, default="spectral"
        Spectral-clustering rounding of M (Section 6).
    reoptimize : bool, default=True
        Re-optimise the hard objective from the rounded labels.
    n_init : int, default=10
        Repeats of the spectral rounding (10 in the paper).
    solver_options : dict, default=None
        Options of the relaxation's ``"auto"`` solver (``tol``, ``max_iter``, ``time_limit``,
        ...); they update :data:`DEFAULT_SOLVER_OPTIONS` (``tol=1e-3``, ``residual_tol=1e-3`` for
        the ADMM of ``"conditional-jc"``, ``tol=1e-4`` for the conditional-gradient models:
        the rounding does not need the solvers' default certified gap of 1e-6).
    random_state : int, RandomState instance or None, default=None
        Seeds the rounding repeats and the randomised SVDs of the conditional gradient.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The final partition (re-optimised, or the rounded one with ``reoptimize=False``).
    objective_ : float
        The model's hard objective (:func:`hard_objective`) of ``labels_``.
    rounded_labels_ : ndarray of shape (n_samples,)
        The spectral rounding of ``M_``.
    rounded_objective_ : float
        The hard objective of ``rounded_labels_``.
    relaxation_ : Relaxation
        The :class:`ConditionalJC`, :class:`Conditional`, :class:`Discriminative` or
        :class:`Joint` instance that was solved.
    relaxation_result_ : Result
        Its result (status, certified ``dual_bound``, history).
    M_ : ndarray of shape (n_samples, n_samples)
        The relaxed normalized equivalence matrix (``result.X`` for ConditionalJC, the recovered
        ``result.M`` for the others).
    n_iter_ : int
        Iterations of the relaxation's solver.
    reoptimization_ : LocalResult or None
        The local re-optimisation (None when ``reoptimize=False``).
    n_features_in_ : int

    Notes
    -----
    **Defaults of alpha, beta, gamma.**  The paper uses 1e-5 to 1e-9 to approximate the
    unregularised objectives; such values make (17) and (33) ill-conditioned (the
    conditional-gradient iterations grow: on 30 blobs, ``"joint"`` with KL took 49 iterations at
    1e-3 against 2 at 1e-2) and, with KL, ``"conditional"`` stalled at 1e-5.  On the same blobs
    the rounded partitions were identical for alpha from 1e-1 to 1e-5 (Euclidean, logistic), so
    we default to 1e-2, the relaxations' own default.  For ``gamma`` the scores
    :math:`XV^\top/t` scale like :math:`1/(\gamma t^3)`; 1e-2 and 1e-1 rounded best on those blobs
    (1e-5 rounded badly), hence 1e-2.  Both are data dependent: scale the features (the paper
    scales them to unit variance) or tune them.

    **Data outside the divergence's domain** (negative values for KL, values outside (0, 1) for
    the logistic divergence, nonpositive values for Itakura-Saito) raise ``ValueError`` naming
    ``X``; nothing is shifted or rescaled silently.  With ``"kl"`` the estimator carries
    scikit-learn's ``positive_only`` input tag (and its message for negative input); the
    logistic and Itakura-Saito divergences have domains that no scikit-learn tag describes.
    """

    def __init__(
        self,
        n_clusters=2,
        *,
        divergence="euclidean",
        model="conditional-jc",
        alpha=1e-2,
        beta=1e-2,
        gamma=1e-2,
        rounding="spectral",
        reoptimize=True,
        n_init=10,
        solver_options=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.divergence = divergence
        self.model = model
        self.alpha = alpha
        self.beta = beta
        self.gamma = gamma
        self.rounding = rounding
        self.reoptimize = reoptimize
        self.n_init = n_init
        self.solver_options = solver_options
        self.random_state = random_state

    # -- checks ---------------------------------------------------------------------------------
    def _divergence(self) -> Divergence:
        if isinstance(self.divergence, str) and self.divergence.lower() == "mahalanobis":
            raise ValueError("divergence='mahalanobis' needs its weight matrix: pass Mahalanobis(W) instead")
        div = get_divergence(self.divergence)  # "Unknown divergence ..." listing the valid names
        if self.model == "conditional-jc" and not div.jointly_convex:
            raise ValueError(
                f"divergence {div.name!r} is not jointly convex, so model='conditional-jc' (10) is not a "
                "convex problem; use model='conditional'"
            )
        return div

    def _check_params(self) -> Divergence:
        check_choice(self.model, "model", MODELS)
        check_choice(self.rounding, "rounding", ROUNDINGS)
        check_bool(self.reoptimize, "reoptimize")
        check_int_range(self.n_init, "n_init", 1)
        for name in ("alpha", "beta", "gamma"):
            check_positive(getattr(self, name), name)
        if self.solver_options is not None and not isinstance(self.solver_options, dict):
            raise ValueError(f"solver_options must be a dict or None, got {self.solver_options!r}")
        if isinstance(self.n_clusters, bool) or not isinstance(self.n_clusters, numbers.Integral):
            raise ValueError(f"n_clusters must be an integer, got {self.n_clusters!r}")
        return self._divergence()

    # -- the pipeline ---------------------------------------------------------------------------
    def _relaxation(self, X: np.ndarray, div: Divergence, d: int):
        if self.model == "conditional-jc":
            return ConditionalJC(X, div, d)
        if self.model == "conditional":
            return Conditional(X, div, d, alpha=self.alpha)
        if self.model == "discriminative":
            return Discriminative(X, d, gamma=self.gamma)
        return Joint(X, div, d, alpha=self.alpha, beta=self.beta)

    def _reoptimize(self, X: np.ndarray, div: Divergence, d: int, init: np.ndarray):
        if self.model == "conditional":
            return conditional_hard_clustering(X, div, d, alpha=self.alpha, init=init)
        if self.model == "joint":
            return joint_hard_clustering(X, div, d, init=init)
        return bregman_hard_clustering(X, div, d, init=init)  # (6): conditional-jc, discriminative

    def fit(self, X, y=None):
        """Solve the relaxation on X, round its M and (optionally) re-optimise; ``y`` is ignored.

        Raises
        ------
        ValueError
            Naming ``n_clusters``, ``divergence``, ``model``, ``rounding``, ``alpha``, ``beta``,
            ``gamma``, ``n_init``, ``reoptimize`` or ``solver_options`` for bad parameters, and
            ``X`` for data that is not a finite 2-D array with at least 2 samples or lies outside
            the divergence's domain.
        """
        div = self._check_params()
        X = validate_data(self, X, dtype=np.float64, ensure_min_samples=2)
        if isinstance(div, GeneralizedKL):
            check_non_negative(X, f"X (the {div.name} divergence needs nonnegative data)")
        X = div.check_domain(X, "X")
        d = check_n_clusters(self.n_clusters, X.shape[0])
        rng = check_random_state(self.random_state)

        relaxation = self._relaxation(X, div, d)
        options = {**DEFAULT_SOLVER_OPTIONS.get(self.model, {}), **(self.solver_options or {})}
        if self.model != "conditional-jc":  # the conditional-gradient solvers draw random SVD starts
            options.setdefault("random_state", rng.randint(np.iinfo(np.int32).max))
        result = relaxation.solve("auto", **options)
        M = result.X if self.model == "conditional-jc" else result.M

        rounded = round_equivalence(M, d, n_init=self.n_init, random_state=rng).labels
        self.rounded_objective_ = hard_objective(X, div, rounded, d, model=self.model, alpha=self.alpha)
        if self.reoptimize:
            self.reoptimization_ = self._reoptimize(X, div, d, rounded)
            labels, objective = self.reoptimization_.labels, self.reoptimization_.objective
        else:
            self.reoptimization_ = None
            labels, objective = rounded, self.rounded_objective_

        self.relaxation_ = relaxation
        self.relaxation_result_ = result
        self.M_ = M
        self.n_iter_ = int(result.iterations)
        self.rounded_labels_ = np.asarray(rounded, dtype=np.intp)
        self.labels_ = np.asarray(labels, dtype=np.intp)
        self.objective_ = float(objective)
        return self

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            tags.input_tags.positive_only = isinstance(get_divergence(self.divergence), GeneralizedKL)
        except (ValueError, TypeError, AttributeError):  # a bad name is reported by fit, not by the tags
            pass
        return tags
