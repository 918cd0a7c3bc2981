r"""``BregmanClustering``: the scikit-learn estimator of the bregman family (Section 6).

The estimator runs the paper's experimental pipeline (Section 6) for one of the four relaxations:

1. solve the convex relaxation (with ``method``, ``"auto"`` by default, and ``solver_options``);
2. round the relaxed normalized equivalence matrix M by spectral clustering
   (:func:`~cvxclust.bregman.round_equivalence`, ``n_init`` repeats, 10 in the paper);
3. (``reoptimize=True``) re-optimise the *original hard objective* locally, starting from the
   rounded labels, with the matching alternating method of :mod:`cvxclust.bregman._local`.

=================  ==========================================  ====================================
``relaxation``     relaxation (paper)                          hard objective re-optimised
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

The objectives are those of :mod:`cvxclust.bregman._hard_models` (constants such as
:math:`\sum_i F(x_i)` kept as there); :func:`hard_objective` evaluates them for given labels.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin
from sklearn.utils.validation import check_non_negative

from .._checks import check_labels, check_random_state, check_X
from .._deprecation import DEPRECATED, renamed_parameter, warn_deprecated
from ..linalg import blas_threads
from ..parameters import Interval, Options, check_parameter, check_parameters
from ..solvers import POSITIVE
from ._conditional import Conditional
from ._conditional_jc import ConditionalJC
from ._discriminative import Discriminative
from ._hard_models import ConditionalModel, HardModel, JointModel
from ._joint import Joint
from ._local import bregman_hard_clustering, conditional_hard_clustering, joint_hard_clustering
from ._spectral_rounding import round_equivalence
from .divergences import ALIASES, DIVERGENCES, Divergence, GeneralizedKL, get_divergence

__all__ = ["BregmanClustering", "hard_objective"]

#: the relaxations of the estimator, with their classes
RELAXATION_CLASSES = {"conditional-jc": ConditionalJC, "conditional": Conditional, "discriminative": Discriminative,
                      "joint": Joint}
RELAXATIONS = tuple(RELAXATION_CLASSES)
#: ``solver_options`` keys that the estimator sets itself (from its own parameters)
OWN_KEYS = ("relaxation", "n_clusters", "random_state")
#: the divergences an estimator takes by name (Mahalanobis needs its matrix: pass an instance)
DIVERGENCE_NAMES = tuple(name for name in (*DIVERGENCES, *ALIASES) if name != "mahalanobis")

#: Options of the scalable methods (all but ``"reference"``) that the estimator uses unless
#: ``solver_options`` overrides them: the methods' own defaults (a certified relative gap and
#: residuals of 1e-6) except for ``"conditional-jc"``, which stops at 1e-3.  The estimator uses M
#: only through its rounding, and the rounded partitions are the same at 1e-3 and at 1e-6, while
#: the iterations to certify 1e-6 grow more than a hundredfold: on standardized Iris (t = 150,
#: d = 3) Davis-Yin splitting certifies 1e-3 in 91 iterations, 1e-4 in 301, and has not reached
#: 1e-5 after 2361 nor 1e-6 after 20000 (minutes).  The conditional-gradient methods certify 1e-6
#: in as many iterations as a looser gap there.
DEFAULT_SOLVER_OPTIONS = {
    "conditional-jc": {"tol": 1e-3, "residual_tol": 1e-3},
    "conditional": {},
    "discriminative": {},
    "joint": {},
}


def _renamed(message: str, new: str, params: dict, value, new_default) -> None:
    """Set ``params[new] = value`` from an old spelling described by ``message``, with a
    ``FutureWarning``; a ``TypeError`` if ``params[new]`` was given as well."""
    if params[new] != new_default:
        raise TypeError(f"{message}; pass {new}= alone, not both")
    warn_deprecated(f"{message}: pass {new}={value!r}", stacklevel=5)
    params[new] = value


def _hard_model(relaxation: str, X: np.ndarray, div: Divergence, n_clusters: int, alpha: float) -> HardModel:
    if relaxation == "conditional":
        return ConditionalModel(X, div, n_clusters, alpha)
    if relaxation == "joint":
        return JointModel(X, div, n_clusters)
    return HardModel(X, div, n_clusters)  # (6): conditional-jc, discriminative


def hard_objective(X, divergence, labels, n_clusters: int, *, relaxation: str = "conditional-jc",
                   alpha: float = 1e-2, method=DEPRECATED) -> float:
    r"""The hard objective that the estimator re-optimises after ``relaxation``, at the partition
    ``labels``.

    With :math:`\Gamma` the cluster means (optimal for every Bregman divergence, Banerjee et al.
    2005) and :math:`n_j` the cluster sizes:

    * ``"conditional-jc"``, ``"discriminative"``: (6) :math:`D_F(X, Y\Gamma)`;
    * ``"conditional"``: (14) :math:`\min_B D_{F^*}(YB, f(X)) + \frac{\alpha}{2}\|YB\|_F^2`, with
      the rows of B from :func:`~cvxclust.bregman._hard_models.conditional_centres`
      (:math:`f^{-1}(b_j) + \alpha b_j = \bar x_j`);
    * ``"joint"``: :math:`D_F(X, Y\Gamma) - \sum_j n_j \log(n_j / t)` (Section 5 with the profile
      prior :math:`w_j = \log(n_j/t)`; empty clusters contribute 0).

    These are the ``objective`` values of the :class:`~cvxclust.Result` of the matching local
    method, evaluated without optimising Y.

    Parameters
    ----------
    X : array-like of shape (t, n)
        Data in the domain of the divergence.
    divergence : str or Divergence
    labels : array-like of int, shape (t,)
        Cluster indices in ``0 .. n_clusters - 1`` (empty clusters allowed).
    n_clusters : int
        d, between 1 and t.
    relaxation : {"conditional-jc", "conditional", "discriminative", "joint"}
    alpha : float > 0
        The weight of (14); used by ``"conditional"`` only.
    method : str
        The old spelling of ``relaxation``: it still works, with a ``FutureWarning``.

    Returns
    -------
    float
    """
    relaxation = renamed_parameter("hard_objective", "method", method, "relaxation", relaxation,
                                   new_default="conditional-jc")
    check_parameters({"n_clusters": [Interval(Integral, 1, None, closed="left")],
                         "relaxation": [Options(*RELAXATIONS)], "alpha": POSITIVE},
                        {"n_clusters": n_clusters, "relaxation": relaxation, "alpha": alpha}, "hard_objective")
    div = get_divergence(divergence)
    X = div.check_data(X, min_samples=1)
    if n_clusters > X.shape[0]:
        raise ValueError(f"n_clusters must be at most n_samples={X.shape[0]}, got {n_clusters}")
    labels = check_labels(labels, X.shape[0], n_clusters)
    model = _hard_model(relaxation, X, div, int(n_clusters), float(alpha))
    return float(model.objective(labels, model.refit(labels)))


class BregmanClustering(ClusterMixin, BaseEstimator):
    r"""Clustering by a convex relaxation of Bregman-divergence clustering, rounding and local
    re-optimisation (Section 6 of H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of
    Bregman Divergence Clustering", UAI 2013).

    Hard Bregman clustering (6) minimises :math:`D_F(X, Y\Gamma)` over assignments Y and centres
    :math:`\Gamma`; with :math:`M = Y(Y^\top Y)^\dagger Y^\top` (9) it is
    :math:`\min_{M \in \mathcal{M}} D_F(X, MX)`, and the relaxations replace the set
    :math:`\mathcal{M}` of normalized equivalence matrices by a convex superset:

    * ``"conditional-jc"`` (default): (10) :math:`\min_{M \in \mathcal{M}_1} D_F(X, MX)`, for a
      jointly convex divergence, by the certified ADMM of Section 3.1.1;
    * ``"conditional"``: (17) :math:`\min_T D_{F^*}(T, f(X)) + \frac{\alpha}{2}\Omega^2(T)` over
      :math:`\mathcal{M}_2`, any divergence, by the conditional gradient of Algorithm 1;
    * ``"discriminative"``: (29), :math:`\min_V \frac{\alpha}{2}\Omega^2(V) + \ell(V, \tau)`, with
      the softmax transfer;
    * ``"joint"``: (33), the generative model with a cluster prior, weights ``alpha``, ``beta``.

    The relaxed M is rounded by spectral clustering (``n_init`` repeats; the repeat whose
    equivalence matrix is nearest M in Frobenius norm is kept), then, with ``reoptimize=True``,
    the hard objective of the relaxation (see :func:`hard_objective`) is re-optimised by the
    matching alternating method started at the rounded labels; that method never increases its
    objective, so ``objective_ <= rounded_objective_``.

    Parameters
    ----------
    n_clusters : int, default=8
        d, between 1 and n_samples.  With 1 every point is in one cluster and nothing is solved.
    divergence : str or Divergence, default="euclidean"
        ``"euclidean"``, ``"kl"``, ``"logistic"``, ``"itakura-saito"`` (aliases ``"linear"``,
        ``"poisson"``, ``"sigmoid"``, ``"bernoulli"``) or a
        :class:`~cvxclust.bregman.divergences.Divergence` instance (``Mahalanobis(W)``).
        ``"conditional-jc"`` needs a jointly convex one (not Itakura-Saito).  For
        ``"discriminative"`` the relaxation uses the softmax transfer whatever this is; the
        divergence defines the hard objective re-optimised afterwards.
    relaxation : {"conditional-jc", "conditional", "discriminative", "joint"}, default="conditional-jc"
        The relaxation solved.
    method : str, default="auto"
        The method that solves it: ``"auto"`` (the relaxation's default: Davis-Yin splitting for
        ``"conditional-jc"`` with a quadratic divergence, its ADMM otherwise, the conditional
        gradient for the others) or any method of the relaxation's class, ``"reference"`` (cvxpy)
        and ``"generic"`` (:func:`cvxclust.solve`) included.  ``result_.method`` names the one
        that ran.  A relaxation's name here is the old spelling of ``relaxation`` (a
        ``FutureWarning``; no method bears such a name).
    alpha : float, default=1e-2
        Weight (> 0) of the value regulariser :math:`\frac{\alpha}{2}\Omega^2`: of T in
        (14)/(17) and (33), of V in (29) (the paper's :math:`\gamma` there); unused by
        ``"conditional-jc"``.
    beta : float, default=1e-2
        Weight of the prior regulariser of (33) (> 0); ``"joint"`` only.
    rounding : {"spectral"}, default="spectral"
        Spectral-clustering rounding of M (Section 6).
    reoptimize : bool, default=True
        Re-optimise the hard objective from the rounded labels.
    n_init : int, default=10
        Repeats of the spectral rounding (10 in the paper).
    solver_options : dict, default=None
        Options of ``method``: ``tol``, ``residual_tol``, ``max_iter``, ``time_limit``, ...;
        they update :data:`DEFAULT_SOLVER_OPTIONS` (see the Notes on ``tol``).  A key the
        estimator sets itself (``relaxation``, ``n_clusters``, ``random_state``) raises a
        ``ValueError`` naming it; ``"method"`` is the old spelling of ``method`` (a
        ``FutureWarning``).
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the rounding repeats and the randomised SVDs of the conditional gradient.

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        The final partition (re-optimised, or the rounded one with ``reoptimize=False``).
    objective_ : float
        The relaxation's hard objective (:func:`hard_objective`) of ``labels_``.
    result_ : Result or None
        The relaxation's :class:`~cvxclust.Result` (status, certified ``dual_bound``, history);
        None when ``n_clusters=1``.
    n_iter_ : int
        Iterations of the relaxation's solver (0 when ``n_clusters=1``).
    rounded_labels_ : ndarray of shape (n_samples,)
        The spectral rounding of ``M_``.
    rounded_objective_ : float
        The hard objective of ``rounded_labels_``.
    relaxation_ : Relaxation or None
        The :class:`ConditionalJC`, :class:`Conditional`, :class:`Discriminative` or
        :class:`Joint` instance that was solved.
    M_ : ndarray of shape (n_samples, n_samples) or None
        The relaxed normalized equivalence matrix (``result_.X`` for ConditionalJC,
        ``result_.extras["M"]``, recovered from the solution, for the others).
    reoptimization_ : Result or None
        The local re-optimisation (None when ``reoptimize=False`` or ``n_clusters=1``).
    n_features_in_ : int

    Notes
    -----
    **Defaults of alpha and beta.**  The paper uses 1e-5 to 1e-9 to approximate the
    unregularised objectives; such values make (17), (29) and (33) ill-conditioned (the
    conditional-gradient iterations grow, and with KL ``"conditional"`` can stall), while on
    well-separated data the rounded partitions stay the same from 1e-1 down to 1e-5, so the
    default is 1e-2, the relaxations' own.  For ``"discriminative"`` the scores
    :math:`XV^\top/t` scale like :math:`1/(\alpha t^3)` and values far below 1e-2 round badly.
    The best value is data dependent: scale the features (the paper scales them to unit
    variance) or tune it.

    **Default tolerances.**  The methods stop at their own defaults, a certified relative gap
    ``tol`` and residuals ``residual_tol`` of 1e-6, except for ``relaxation="conditional-jc"``,
    whose methods stop at 1e-3 (:data:`DEFAULT_SOLVER_OPTIONS`): the labels are rounded from the
    relaxed M, and they are the same at both gaps on standardized Iris, while Davis-Yin splitting
    needs 91 iterations to certify 1e-3 there and more than 20000 for 1e-6.  A status
    ``"optimal"`` then means optimal to within 1e-3; pass ``solver_options={"tol": ...,
    "residual_tol": ...}`` for a tighter certificate.

    **Data outside the divergence's domain** (negative values for KL, values outside (0, 1) for
    the logistic divergence, nonpositive values for Itakura-Saito) raise ``ValueError`` naming
    ``X``; nothing is shifted or rescaled silently.  With ``"kl"`` the estimator carries
    scikit-learn's ``positive_only`` input tag (and its message for negative input); the
    logistic and Itakura-Saito divergences have domains that no scikit-learn tag describes.
    """

    _parameter_constraints = {
        "n_clusters": [Interval(Integral, 1, None, closed="left")],
        "divergence": [Options(*DIVERGENCE_NAMES), Divergence],
        "relaxation": [Options(*RELAXATIONS)],
        "method": [str],
        "alpha": POSITIVE,
        "beta": POSITIVE,
        "rounding": [Options("spectral")],
        "reoptimize": ["boolean"],
        "n_init": [Interval(Integral, 1, None, closed="left")],
        "solver_options": ["dict", None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_clusters=8,
        *,
        divergence="euclidean",
        relaxation="conditional-jc",
        method="auto",
        alpha=1e-2,
        beta=1e-2,
        rounding="spectral",
        reoptimize=True,
        n_init=10,
        solver_options=None,
        random_state=None,
    ):
        self.n_clusters = n_clusters
        self.divergence = divergence
        self.relaxation = relaxation
        self.method = method
        self.alpha = alpha
        self.beta = beta
        self.rounding = rounding
        self.reoptimize = reoptimize
        self.n_init = n_init
        self.solver_options = solver_options
        self.random_state = random_state

    # -- the parameters -------------------------------------------------------------------------
    def _checked_params(self) -> dict:
        """The checked parameters, the old spellings resolved: ``method=<a relaxation>`` and
        ``solver_options={"method": ...}``; ``solver_options`` becomes a new dict."""
        name = type(self).__name__
        params = check_parameters(self._parameter_constraints, self.get_params(deep=False), name)
        params["solver_options"] = options = dict(params["solver_options"] or {})
        if params["method"] in RELAXATIONS:  # no method bears a relaxation's name
            _renamed(f"{name}: method={params['method']!r} names a relaxation", "relaxation", params,
                     params["method"], "conditional-jc")
            params["method"] = "auto"
        if "method" in options:
            _renamed(f"{name}: solver_options={{'method': ...}} is the estimator's method", "method", params,
                     options.pop("method"), "auto")
        cls = RELAXATION_CLASSES[params["relaxation"]]
        check_parameter("method", params["method"], [Options("auto", *cls.methods())], name)
        own = sorted(set(options) & set(OWN_KEYS))
        if own:
            raise ValueError(f"solver_options of {name} must not hold {own}: the estimator sets them from its "
                             "own parameters; pass them to it instead")
        return params

    # -- the pipeline ---------------------------------------------------------------------------
    def _relaxation(self, relaxation: str, X: np.ndarray, div: Divergence, d: int):
        if relaxation == "conditional-jc":
            return ConditionalJC(X, div, d)
        if relaxation == "conditional":
            return Conditional(X, div, d, alpha=self.alpha)
        if relaxation == "discriminative":
            return Discriminative(X, d, alpha=self.alpha)
        return Joint(X, div, d, alpha=self.alpha, beta=self.beta)

    def _reoptimize(self, relaxation: str, X: np.ndarray, div: Divergence, d: int, init: np.ndarray):
        if relaxation == "conditional":
            return conditional_hard_clustering(X, div, d, alpha=self.alpha, init=init)
        if relaxation == "joint":
            return joint_hard_clustering(X, div, d, init=init)
        return bregman_hard_clustering(X, div, d, init=init)  # (6): conditional-jc, discriminative

    def fit(self, X, y=None):
        """Solve the relaxation on X, round its M and (optionally) re-optimise; ``y`` is ignored.

        Raises
        ------
        ValueError
            Naming the parameter for bad parameters (``divergence`` also for a divergence that
            is not jointly convex with ``relaxation="conditional-jc"``, ``method`` for a name
            that is not a method of the relaxation, ``solver_options`` for a key the estimator
            sets itself), ``n_clusters`` when it exceeds the number of samples, and ``X`` for
            data that is not a finite 2-D array or lies outside the divergence's domain.
        TypeError
            For a parameter given in both its old and its new spelling.
        """
        params = self._checked_params()
        relaxation = params["relaxation"]
        div = get_divergence(self.divergence)
        if relaxation == "conditional-jc" and not div.jointly_convex:
            raise ValueError(
                f"divergence {div.name!r} is not jointly convex, so relaxation='conditional-jc' (10) is not a "
                "convex problem; use relaxation='conditional'"
            )
        X = check_X(self, X, dtype=np.float64)
        if isinstance(div, GeneralizedKL):
            check_non_negative(X, f"X (the {div.name} divergence needs nonnegative data)")
        # the relaxations of (17), (29), (33) divide by alpha, those of (17), (33) square the transfer
        X = div.check_data(X, min_samples=1, weight=1.0 if relaxation == "conditional-jc" else 1.0 / self.alpha,
                           transfer=relaxation in ("conditional", "joint"))
        t, d = X.shape[0], self.n_clusters
        if d > t:
            raise ValueError(f"n_clusters must be at most n_samples={t}, got {d}")
        with blas_threads(t):
            self._fit(X, div, d, params)
        return self

    def _fit(self, X: np.ndarray, div: Divergence, d: int, params: dict) -> None:
        relaxation_name = params["relaxation"]
        if d == 1:  # one cluster: nothing to solve
            labels = np.zeros(X.shape[0], dtype=np.intp)
            self.relaxation_ = self.result_ = self.M_ = self.reoptimization_ = None
            self.n_iter_ = 0
            self.rounded_labels_ = self.labels_ = labels
            self.rounded_objective_ = self.objective_ = hard_objective(X, div, labels, 1, relaxation=relaxation_name,
                                                                       alpha=self.alpha)
            return
        rng = check_random_state(self.random_state)
        relaxation = self._relaxation(relaxation_name, X, div, d)
        method = relaxation.default_method if params["method"] == "auto" else params["method"]
        # the estimator's looser tolerances apply to the scalable methods (the reference has its own)
        defaults = DEFAULT_SOLVER_OPTIONS[relaxation_name] if method != "reference" else {}
        options = {**defaults, **params["solver_options"]}
        if method == "conditional-gradient":  # it draws random SVD starts
            options["random_state"] = rng.randint(np.iinfo(np.int32).max)
        result = relaxation.solve(method, **options)
        M = result.X if relaxation_name == "conditional-jc" else result.extras["M"]

        rounded = round_equivalence(M, d, n_init=self.n_init, random_state=rng).X
        self.rounded_objective_ = hard_objective(X, div, rounded, d, relaxation=relaxation_name, alpha=self.alpha)
        if self.reoptimize:
            self.reoptimization_ = self._reoptimize(relaxation_name, X, div, d, rounded)
            labels, objective = self.reoptimization_.X, self.reoptimization_.objective
        else:
            self.reoptimization_ = None
            labels, objective = rounded, self.rounded_objective_

        self.relaxation_ = relaxation
        self.result_ = result
        self.M_ = M
        self.n_iter_ = int(result.iterations)
        self.rounded_labels_ = np.asarray(rounded, dtype=np.intp)
        self.labels_ = np.asarray(labels, dtype=np.intp)
        self.objective_ = float(objective)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        try:
            tags.input_tags.positive_only = isinstance(get_divergence(self.divergence), GeneralizedKL)
        except (ValueError, TypeError, AttributeError):  # a bad name is reported by fit, not by the tags
            pass
        return tags
