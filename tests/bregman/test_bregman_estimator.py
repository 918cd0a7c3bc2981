"""``BregmanClustering``: scikit-learn compatibility, recovery by every relaxation, re-optimisation,
the hard objectives, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import parametrize_with_checks
from threadpoolctl import threadpool_info, threadpool_limits

from cvxclust.bregman import _estimator, bregman_hard_clustering, soft_bregman_em

from cvxclust.bregman._conditional import Conditional
from cvxclust.bregman._conditional_jc import ConditionalJC
from cvxclust.bregman._discriminative import Discriminative
from cvxclust.bregman._estimator import BregmanClustering, hard_objective
from cvxclust.bregman._joint import Joint
from cvxclust.bregman.divergences import Mahalanobis
from cvxclust.metrics import accuracy

RELAXATION_NAMES = ("conditional-jc", "conditional", "discriminative", "joint")
RELAXATIONS = {"conditional-jc": ConditionalJC, "conditional": Conditional, "discriminative": Discriminative,
               "joint": Joint}


def blobs(per_cluster=10, seed=0, spread=0.6):
    """Three well-separated 2-D blobs, as (euclidean data, KL data, logistic data, labels):
    shifted nonnegative for KL, scaled into (0, 1) for the logistic divergence."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    X = np.concatenate([rng.normal(c, spread, size=(per_cluster, 2)) for c in centres])
    y = np.repeat(np.arange(3), per_cluster)
    X_kl = X - X.min(axis=0)
    X_log = (X - X.min(axis=0) + 0.5) / (np.ptp(X, axis=0) + 1.0)
    return {"euclidean": X, "kl": X_kl, "logistic": X_log}, y


def fit_quietly(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X)


# --------------------------------------------------------------------------- scikit-learn checks

# Every relaxation, built with its defaults (n_clusters=8), passes every check: no expected failure.
@parametrize_with_checks([BregmanClustering()] + [BregmanClustering(relaxation=m) for m in RELAXATION_NAMES[1:]])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        check(estimator)


def test_kl_fails_only_the_check_that_standardizes_its_data(fails_only_check_clustering):
    # check_clustering (and its read-only-memmap variant, same name) standardizes make_blobs data
    # whatever the positive_only tag says; the KL divergence rejects the negative entries
    fails_only_check_clustering(BregmanClustering(relaxation="conditional", divergence="kl"),
                                "Negative values in data passed to X")


def test_defaults_and_one_cluster():
    est = BregmanClustering()
    assert est.n_clusters == 8 and est.relaxation == "conditional-jc" and est.method == "auto"
    assert est.solver_options is None
    X = blobs()[0]["euclidean"]
    one = BregmanClustering(1).fit(X)
    np.testing.assert_array_equal(one.labels_, np.zeros(len(X)))
    assert one.result_ is None and one.relaxation_ is None and one.reoptimization_ is None
    assert one.n_iter_ == 0
    # (6) of one cluster: half the total squared distance to the mean
    assert one.objective_ == pytest.approx(0.5 * np.sum((X - X.mean(axis=0)) ** 2), rel=1e-12)
    for relaxation in RELAXATION_NAMES:
        one = BregmanClustering(1, relaxation=relaxation, divergence="kl").fit(blobs()[0]["kl"])
        expected = hard_objective(blobs()[0]["kl"], "kl", one.labels_, 1, relaxation=relaxation)
        assert one.objective_ == pytest.approx(expected)
    # a single sample is one cluster too
    np.testing.assert_array_equal(BregmanClustering(1).fit(X[:1]).labels_, [0])


def test_fit_runs_with_one_blas_thread(monkeypatch):
    # cvxclust.linalg.blas_threads: one thread for small problems, whatever the caller allows
    seen, original = [], _estimator.round_equivalence

    def rounding(*args, **kwargs):
        seen.append(max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"))
        return original(*args, **kwargs)

    monkeypatch.setattr(_estimator, "round_equivalence", rounding)
    with threadpool_limits(limits=2, user_api="blas"):
        assert max(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas") == 2
        BregmanClustering(3, random_state=0).fit(blobs()[0]["euclidean"])
    assert seen == [1]


def test_kl_carries_the_positive_only_tag():
    assert BregmanClustering(divergence="kl").__sklearn_tags__().input_tags.positive_only
    assert BregmanClustering(divergence="poisson").__sklearn_tags__().input_tags.positive_only
    assert not BregmanClustering().__sklearn_tags__().input_tags.positive_only
    assert not BregmanClustering(divergence="no such").__sklearn_tags__().input_tags.positive_only


# --------------------------------------------------------------------------- recovery

@pytest.mark.parametrize("divergence", ["euclidean", "kl", "logistic"])
@pytest.mark.parametrize("relaxation", RELAXATION_NAMES)
def test_every_relaxation_recovers_well_separated_blobs(relaxation, divergence):
    data, y = blobs()
    est = BregmanClustering(3, relaxation=relaxation, divergence=divergence, random_state=0).fit(data[divergence])
    assert accuracy(y, est.labels_) == 1.0
    assert est.labels_.shape == (30,) and est.labels_.dtype.kind == "i"
    assert isinstance(est.relaxation_, RELAXATIONS[relaxation])
    assert est.M_.shape == (30, 30)
    assert est.n_iter_ == est.result_.iterations >= 1
    assert est.result_.status == "optimal"
    # the certified bound of the relaxation's solver holds at its returned point
    assert est.result_.dual_bound <= est.result_.objective + 1e-9
    assert est.reoptimization_.status == "converged"
    assert est.n_features_in_ == 2


@pytest.mark.parametrize("relaxation", RELAXATION_NAMES)
def test_relaxation_bounds_the_hard_objective_for_conditional_jc(relaxation):
    # (10) over M1 contains the exact set: its optimum is a lower bound on D_F(X, Y Gamma) of every
    # partition, in particular of the estimator's; the other relaxations state other objectives
    data, _ = blobs(seed=1, spread=1.2)
    est = BregmanClustering(3, relaxation=relaxation, random_state=0).fit(data["euclidean"])
    if relaxation == "conditional-jc":
        assert est.result_.dual_bound <= est.objective_ + 1e-9
    assert np.isfinite(est.objective_)


# --------------------------------------------------------------------------- re-optimisation

@pytest.mark.parametrize("divergence", ["euclidean", "kl"])
@pytest.mark.parametrize("relaxation", RELAXATION_NAMES)
def test_reoptimize_never_worsens_the_rounded_labels(relaxation, divergence):
    data, _ = blobs(seed=3, spread=1.6)  # overlapping: rounding and local optimum can differ
    X = data[divergence]
    kwargs = dict(relaxation=relaxation, divergence=divergence, random_state=5)
    est = BregmanClustering(3, **kwargs).fit(X)
    raw = BregmanClustering(3, reoptimize=False, **kwargs).fit(X)
    assert est.objective_ <= est.rounded_objective_ * (1 + 1e-12) + 1e-12
    # the same seed gives the same relaxation and rounding; without reoptimize it is the answer
    np.testing.assert_array_equal(raw.rounded_labels_, est.rounded_labels_)
    np.testing.assert_array_equal(raw.labels_, raw.rounded_labels_)
    assert raw.objective_ == raw.rounded_objective_ == est.rounded_objective_
    assert raw.reoptimization_ is None
    # the reported objectives are those of the local method
    assert est.objective_ == pytest.approx(est.reoptimization_.objective, rel=1e-12)
    np.testing.assert_array_equal(est.labels_, est.reoptimization_.X)
    assert est.reoptimization_.extras["initial_objective"] == pytest.approx(est.rounded_objective_, rel=1e-10)


def test_reoptimize_improves_a_rounding_that_is_not_a_local_optimum():
    # the conditional relaxation with KL rounds these blobs imperfectly; the local
    # re-optimisation of (14) then finds the planted partition (a strict improvement)
    data, y = blobs(seed=1)
    est = BregmanClustering(3, relaxation="conditional", divergence="kl", random_state=0).fit(data["kl"])
    assert accuracy(y, est.rounded_labels_) < 1.0
    assert accuracy(y, est.labels_) == 1.0
    assert est.objective_ < est.rounded_objective_ - 1e-6


# --------------------------------------------------------------------------- hard objectives

def test_hard_objective_of_conditional_jc_is_half_the_kmeans_inertia():
    data, _ = blobs(seed=2, spread=1.5)
    X = data["euclidean"]
    km = KMeans(3, n_init=5, random_state=0).fit(X)
    assert hard_objective(X, "euclidean", km.labels_, 3) == pytest.approx(km.inertia_ / 2, rel=1e-10)


@pytest.mark.parametrize("relaxation", RELAXATION_NAMES)
def test_hard_objective_matches_the_local_methods(relaxation):
    data, _ = blobs(seed=4, spread=1.4)
    X = data["kl"]
    est = BregmanClustering(3, relaxation=relaxation, divergence="kl", alpha=0.05, random_state=1).fit(X)
    assert hard_objective(X, "kl", est.labels_, 3, relaxation=relaxation, alpha=0.05) == pytest.approx(
        est.reoptimization_.objective, rel=1e-10)


def test_hard_objective_joint_adds_the_entropy_of_the_sizes():
    X = np.array([[0.0], [1.0], [5.0], [6.0], [7.0]])
    labels = np.array([0, 0, 1, 1, 1])
    within = 0.5 * (0.25 + 0.25) + 0.5 * (1.0 + 0.0 + 1.0)  # D_F = ||x - mu||^2 / 2
    entropy = -(2 * np.log(2 / 5) + 3 * np.log(3 / 5))
    assert hard_objective(X, "euclidean", labels, 2) == pytest.approx(within)
    assert hard_objective(X, "euclidean", labels, 2, relaxation="joint") == pytest.approx(within + entropy)
    # an empty cluster contributes nothing to either term
    assert hard_objective(X, "euclidean", labels, 3, relaxation="joint") == pytest.approx(within + entropy)


@pytest.mark.parametrize("kwargs, name", [({"relaxation": "kmeans"}, "relaxation"), ({"alpha": 0.0}, "alpha"),
                                          ({"n_clusters": 0}, "n_clusters"), ({"n_clusters": 6}, "n_clusters")])
def test_hard_objective_bad_parameters_name_them(kwargs, name):
    X = np.array([[0.0], [1.0], [5.0], [6.0], [7.0]])
    kwargs = {"n_clusters": 2, **kwargs}
    with pytest.raises(ValueError, match=name):
        hard_objective(X, "euclidean", np.zeros(5, int), kwargs.pop("n_clusters"), **kwargs)


# --------------------------------------------------------------------------- options

def test_mahalanobis_instance_with_identity_weight_equals_euclidean():
    data, _ = blobs(seed=2, spread=1.5)
    X = data["euclidean"]
    a = BregmanClustering(3, relaxation="conditional", random_state=0).fit(X)
    b = BregmanClustering(3, relaxation="conditional", divergence=Mahalanobis(np.eye(2)), random_state=0).fit(X)
    np.testing.assert_array_equal(a.labels_, b.labels_)
    assert b.objective_ == pytest.approx(a.objective_, rel=1e-8)
    c = clone(b).fit(X)  # the Divergence instance survives clone
    np.testing.assert_array_equal(c.labels_, b.labels_)


def test_same_random_state_same_result_and_fit_predict():
    data, _ = blobs(seed=3, spread=1.6)
    X = data["euclidean"]
    est = BregmanClustering(3, relaxation="joint", random_state=7)
    np.testing.assert_array_equal(est.fit_predict(X), clone(est).fit(X).labels_)


def test_solver_limit_gives_convergence_warning_and_honest_status():
    data, y = blobs()
    with pytest.warns(ConvergenceWarning):
        est = BregmanClustering(3, solver_options={"max_iter": 3}, random_state=0).fit(data["euclidean"])
    assert est.result_.status == "max_iter"
    assert est.n_iter_ == 3
    assert est.labels_.shape == y.shape  # a feasible M is still rounded


def test_solver_options_override_the_estimator_defaults():
    data, _ = blobs()
    X = data["euclidean"]
    loose = BregmanClustering(3, random_state=0).fit(X)
    tight = BregmanClustering(3, solver_options={"tol": 1e-4, "residual_tol": 1e-4}, random_state=0).fit(X)
    assert tight.result_.relative_gap <= 1e-4
    assert tight.n_iter_ > loose.n_iter_
    # the method is a parameter of its own
    admm = BregmanClustering(3, method="admm", random_state=0).fit(X)
    assert admm.result_.method == "admm" and loose.result_.method != "admm"
    np.testing.assert_array_equal(admm.labels_, loose.labels_)


# --------------------------------------------------------------------------- bad input

X_OK = blobs()[0]["euclidean"]


@pytest.mark.parametrize(
    "params, name",
    [
        ({"n_clusters": 0}, "n_clusters"),
        ({"n_clusters": 31}, "n_clusters"),
        ({"n_clusters": 2.5}, "n_clusters"),
        ({"n_clusters": True}, "n_clusters"),
        ({"divergence": "hellinger"}, "divergence"),
        ({"divergence": "mahalanobis"}, "divergence"),
        ({"divergence": "itakura-saito"}, "divergence"),  # conditional-jc needs joint convexity
        ({"method": "kmeans"}, "method"),
        ({"relaxation": "kmeans"}, "relaxation"),
        ({"relaxation": "conditional", "method": "admm"}, "method"),
        ({"rounding": "yu-shi"}, "rounding"),
        ({"alpha": 0.0, "relaxation": "conditional"}, "alpha"),
        ({"beta": -1.0, "relaxation": "joint"}, "beta"),
        ({"alpha": float("nan"), "relaxation": "discriminative"}, "alpha"),
        ({"alpha": float("inf")}, "alpha"),
        ({"random_state": "seed"}, "random_state"),
        ({"n_init": 0}, "n_init"),
        ({"reoptimize": "yes"}, "reoptimize"),
        ({"solver_options": [("tol", 1e-3)]}, "solver_options"),
    ],
)
def test_bad_parameters_raise_value_error_naming_them(params, name):
    with pytest.raises(ValueError, match=name):
        BregmanClustering(**{"n_clusters": 3, **params}).fit(X_OK)


@pytest.mark.parametrize(
    "divergence, X",
    [
        ("kl", X_OK),  # negative counts
        ("logistic", X_OK - X_OK.min() + 0.5),  # outside (0, 1)
        ("logistic", np.clip(blobs()[0]["logistic"], 0.0, 0.5) * 2.0),  # the closed ends 0 and 1
        ("itakura-saito", blobs()[0]["kl"]),  # zeros are outside (0, inf)
    ],
    ids=["kl-negative", "logistic-above-one", "logistic-endpoints", "itakura-saito-zero"],
)
def test_data_outside_the_domain_raises_naming_X(divergence, X):
    with pytest.raises(ValueError, match="X"):
        BregmanClustering(3, relaxation="conditional", divergence=divergence).fit(X)


@pytest.mark.parametrize("relaxation", RELAXATION_NAMES)
def test_data_too_large_to_square_raises_naming_X(relaxation):
    """X * 1e200 overflowed inside the solvers ("A contains NaN or infinite entries", an
    OverflowError, a LinAlgError): the squares of the data do not fit in a double."""
    with pytest.raises(ValueError, match=r"^X has entries of magnitude up to \S*e\+200, which overflow the "
                                         r"computations .* rescale X"):
        BregmanClustering(2, relaxation=relaxation).fit(X_OK * 1e200)


def test_data_whose_transfer_is_too_large_raises_naming_X():
    """Itakura-Saito's transfer -1/x of tiny data overflows the conditional relaxations' squares."""
    for relaxation in ("conditional", "joint"):
        with pytest.raises(ValueError, match=r"^X's transfer f\(X\) has entries .* rescale X"):
            BregmanClustering(3, relaxation=relaxation, divergence="itakura-saito").fit(
                (blobs()[0]["kl"] + 1.0) * 1e-200)


def test_large_data_that_can_be_squared_is_still_clustered():
    data, y = blobs()
    est = BregmanClustering(3, random_state=0).fit(data["euclidean"] * 1e100)
    assert accuracy(y, est.labels_) == 1.0


@pytest.mark.parametrize("build", [
    lambda X: ConditionalJC(X, "euclidean", 2), lambda X: Conditional(X, "euclidean", 2),
    lambda X: Joint(X, "kl", 2), lambda X: Discriminative(X, 2),
    lambda X: hard_objective(X, "euclidean", np.arange(len(X)) % 2, 2),
    lambda X: bregman_hard_clustering(X, "euclidean", 2), lambda X: soft_bregman_em(X, "euclidean", 2),
], ids=["ConditionalJC", "Conditional", "Joint", "Discriminative", "hard_objective", "bregman_hard_clustering",
        "soft_bregman_em"])
def test_every_entry_point_refuses_data_too_large_to_square(build):
    with pytest.raises(ValueError, match=r"^X has entries of magnitude .* rescale X"):
        build(np.abs(X_OK) * 1e200)


@pytest.mark.parametrize("relaxation", ["conditional-jc", "conditional"])
def test_a_generator_seeds_the_estimator(relaxation):
    """The parameter table accepts a Generator; sklearn's check_random_state then refused it."""
    data, y = blobs()
    est = BregmanClustering(3, relaxation=relaxation, random_state=np.random.default_rng(0)).fit(data["euclidean"])
    assert accuracy(y, est.labels_) == 1.0


def test_itakura_saito_works_with_the_conditional_method():
    data, y = blobs()
    est = BregmanClustering(3, relaxation="conditional", divergence="itakura-saito", random_state=0)
    est.fit(data["kl"] + 1.0)
    assert accuracy(y, est.labels_) == 1.0


@pytest.mark.parametrize("X", [np.array([[np.nan, 1.0], [2.0, 3.0], [1.0, 1.0]]), np.ones((1, 2)), np.ones(5)],
                         ids=["nan", "one-sample", "1-d"])
def test_bad_data_raises_value_error(X):
    with pytest.raises(ValueError):
        BregmanClustering(2).fit(X)


def test_estimator_is_exported():
    import cvxclust
    from cvxclust.bregman import BregmanClustering as FromFamily

    assert cvxclust.BregmanClustering is FromFamily
