"""Rounding, local re-optimisation and the alternating baselines (cvxclust.bregman._local,
_hard_models, _soft_em, _spectral_rounding)."""

import numpy as np
import pytest
from scipy.special import xlogy
from sklearn.cluster import KMeans
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from cvxclust import Result
from cvxclust.bregman import (
    bregman_hard_clustering,
    conditional_hard_clustering,
    joint_hard_clustering,
    round_equivalence,
    soft_bregman_em,
)
from cvxclust.bregman._hard_models import conditional_centres, random_partition
from cvxclust.bregman.divergences import Mahalanobis, get_divergence
from cvxclust.bregman.sets import equivalence_matrix, project_M2

ALPHA = 1e-3


def _data(name, seed=0, t_per=6, n=3, spread=0.25):
    """Three overlapping groups in the domain of ``name`` (so that alternation has work to do)."""
    rng = np.random.RandomState(seed)
    centres = np.array([0.25, 0.5, 0.75])
    X = np.vstack([c + spread * (rng.rand(t_per, n) - 0.5) for c in centres])
    if name == "logistic":
        return np.clip(X, 0.02, 0.98)
    if name == "kl":
        X[rng.rand(*X.shape) < 0.1] = 0.0  # zero counts are in the KL domain
        return 4 * X
    return 4 * X


def _means(X, labels, k):
    return np.array([X[labels == j].mean(axis=0) for j in range(k)])


# independent statements of the three objectives (exact re-fit of the continuous parameters)
def _hard_obj(X, labels, k, div):
    return div.divergence(X, _means(X, labels, k)[labels])


def _cond_obj(X, labels, k, div, alpha=ALPHA):
    B = conditional_centres(_means(X, labels, k), div, alpha)[labels]
    return div.dual_divergence(B, X) + 0.5 * alpha * np.sum(B * B)


def _joint_obj(X, labels, k, div):
    counts = np.bincount(labels, minlength=k)
    mu = np.ones((k, X.shape[1])) / 2  # empty clusters' rows are never used
    for j in np.flatnonzero(counts):
        mu[j] = X[labels == j].mean(axis=0)
    return div.divergence(X, mu[labels]) - np.sum(xlogy(counts, counts / len(labels)))


MODELS = {
    "hard": (lambda X, d, k, **kw: bregman_hard_clustering(X, d, k, **kw), _hard_obj),
    "conditional": (lambda X, d, k, **kw: conditional_hard_clustering(X, d, k, alpha=ALPHA, **kw), _cond_obj),
    "joint": (lambda X, d, k, **kw: joint_hard_clustering(X, d, k, **kw), _joint_obj),
}
DIVS = ["euclidean", "kl", "logistic", "itakura-saito"]


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("name", DIVS)
def test_objective_monotone_and_reported_value(model, name):
    run, objective = MODELS[model]
    X, div, k = _data(name, seed=1), get_divergence(name), 3
    for refine in (False, True):
        res = run(X, name, k, n_init=1, random_state=3, refine=refine)
        h = np.asarray([res.extras["initial_objective"]] + [row["objective"] for row in res.history])
        assert isinstance(res, Result)
        assert res.status == "converged"  # a fixed point: a local method has no certificate
        assert res.dual_bound is None and res.iterations == len(res.history)
        assert res.history[-1]["moves"] == 0 and all(row["moves"] > 0 for row in res.history[:-1])
        assert np.all(np.diff(h) <= 1e-12 * np.abs(h[:-1]).max())
        assert res.objective == pytest.approx(objective(X, res.X, k, div), rel=1e-12, abs=1e-12)
        assert res.objective == pytest.approx(h[-1])


@pytest.mark.parametrize("model", sorted(MODELS))
@pytest.mark.parametrize("name", DIVS)
def test_refined_fixed_point_no_single_move_improves(model, name):
    """Brute force: every single reassignment, with the parameters re-fitted exactly."""
    run, objective = MODELS[model]
    X, div, k = _data(name, seed=2), get_divergence(name), 3
    res = run(X, name, k, n_init=3, random_state=0, refine=True)
    counts = np.bincount(res.X, minlength=k)
    for i in range(X.shape[0]):
        for b in range(k):
            a = res.X[i]
            if b == a or (counts[a] == 1 and model != "joint"):
                continue
            moved = res.X.copy()
            moved[i] = b
            assert objective(X, moved, k, div) >= res.objective - 1e-10 * abs(res.objective)


@pytest.mark.parametrize("name", DIVS)
def test_unrefined_run_is_a_block_coordinate_minimum(name):
    """Without refine the alternation's fixed point: each point is at its best centre and the
    centres are the means."""
    X, div, k = _data(name, seed=4), get_divergence(name), 3
    res = bregman_hard_clustering(X, name, k, n_init=2, random_state=1)
    assert np.allclose(res.extras["centres"], _means(X, res.X, k))
    C = np.column_stack([div.divergence_rows(X, np.broadcast_to(mu, X.shape)) for mu in res.extras["centres"]])
    assert np.all(C[np.arange(len(X)), res.X] <= C.min(axis=1) + 1e-12)


def _separated(name, seed=0):
    rng = np.random.RandomState(seed)
    truth = np.repeat(np.arange(3), 10)
    if name == "euclidean":
        X = 10.0 * np.eye(3)[truth] + rng.randn(30, 3)
    elif name == "kl":
        X = rng.poisson(np.array([[40.0, 2, 2, 2], [2, 40, 2, 2], [2, 2, 40, 40]])[truth]).astype(float)
    else:  # logistic, 20 features
        p = np.array([0.1, 0.5, 0.9])[truth][:, None] + 0.05 * (rng.rand(30, 20) - 0.5)
        X = p
    perm = rng.permutation(30)
    return X[perm], truth[perm]


@pytest.mark.parametrize("name", ["euclidean", "kl", "logistic"])
def test_all_methods_recover_separated_partition(name):
    X, truth = _separated(name)
    results = [
        bregman_hard_clustering(X, name, 3, n_init=5, random_state=0).X,
        conditional_hard_clustering(X, name, 3, alpha=1e-5, n_init=5, random_state=0).X,
        joint_hard_clustering(X, name, 3, n_init=5, random_state=0).X,
        soft_bregman_em(X, name, 3, n_init=5, random_state=0).extras["labels"],
    ]
    for labels in results:
        assert adjusted_rand_score(truth, labels) == 1.0
    # and re-optimisation from the truth stays there
    assert adjusted_rand_score(truth, bregman_hard_clustering(X, name, 3, init=truth).X) == 1.0


def test_euclidean_hard_clustering_equals_sklearn_lloyd():
    rng = np.random.RandomState(0)
    X = np.vstack([rng.randn(15, 2) + c for c in ([0, 0], [2.5, 0], [1, 2.5])])
    for seed in range(3):
        init = random_partition(len(X), 3, seed)
        res = bregman_hard_clustering(X, "euclidean", 3, init=init)
        km = KMeans(3, init=_means(X, init, 3), n_init=1, algorithm="lloyd", tol=0.0, max_iter=300).fit(X)
        assert res.iterations > 2  # the comparison exercised several alternations
        np.testing.assert_array_equal(res.X, km.labels_)
        assert res.objective == pytest.approx(km.inertia_ / 2, rel=1e-10)
        np.testing.assert_allclose(res.extras["centres"], km.cluster_centers_, atol=1e-12)


def test_conditional_tends_to_hard_as_alpha_vanishes():
    for name in ["euclidean", "logistic", "itakura-saito"]:
        X = _data(name, seed=5)
        init = random_partition(len(X), 3, 0)
        hard = bregman_hard_clustering(X, name, 3, init=init)
        cond = conditional_hard_clustering(X, name, 3, alpha=1e-9, init=init)
        np.testing.assert_array_equal(hard.X, cond.X)
        # D_{F*}(f(mu), f(x)) = D_F(x, mu) (Section 2)
        assert cond.objective == pytest.approx(hard.objective, rel=1e-6)


@pytest.mark.parametrize("name", DIVS + ["mahalanobis"])
def test_conditional_centres_solve_the_optimality_condition(name):
    rng = np.random.RandomState(0)
    if name == "mahalanobis":
        A = rng.randn(3, 3)
        div = Mahalanobis(A @ A.T + np.eye(3))
        m = rng.randn(4, 3)
    else:
        div = get_divergence(name)
        m = np.clip(rng.rand(4, 3), 0.05, 0.95)
        if name == "kl":
            m[0, 0] = 0.0
    for alpha in (1e-5, 0.3):
        B = conditional_centres(m, div, alpha)
        np.testing.assert_allclose(div.inverse_transfer(B) + alpha * B, m, atol=1e-12)
        # the stationary point is the minimiser of the strictly convex B-step objective
        obj = lambda b, a=alpha: div.conjugate(b) - np.sum(m[1] * b) + 0.5 * a * np.sum(b * b)
        for _ in range(5):
            step = 1e-3 * rng.randn(3)
            try:
                assert obj(B[1] + step) >= obj(B[1])
            except ValueError:  # left the domain of F* (Itakura-Saito: b < 0)
                pass


def test_joint_prior_and_objective():
    X, truth = _separated("euclidean", seed=1)
    res = joint_hard_clustering(X, "euclidean", 3, init=truth)
    counts = np.bincount(res.X, minlength=3)
    np.testing.assert_allclose(res.extras["prior"], counts / len(X))
    assert res.objective == pytest.approx(_joint_obj(X, res.X, 3, get_divergence("euclidean")))
    assert "prior" not in bregman_hard_clustering(X, "euclidean", 3, init=truth).extras


def test_soft_em_log_likelihood_increases():
    for name in ["euclidean", "kl", "logistic"]:
        X = _data(name, seed=6, t_per=10)
        res = soft_bregman_em(X, name, 3, n_init=3, random_state=0)
        h = np.asarray([row["objective"] for row in res.history])
        assert len(h) > 2 and res.status == "converged" and res.iterations == len(h)
        assert np.all(np.diff(h) >= -1e-10 * np.abs(h).max())
        assert res.objective == pytest.approx(h[-1])
        assert res.objective == pytest.approx(res.extras["restart_log_likelihoods"].max())
        np.testing.assert_allclose(res.X.sum(axis=1), 1.0)  # the responsibilities
        np.testing.assert_array_equal(res.extras["labels"], np.argmax(res.X, axis=1))
        assert res.extras["prior"].sum() == pytest.approx(1.0)


def test_restarts_keep_the_best_run():
    X = _data("euclidean", seed=7, t_per=10)
    res = bregman_hard_clustering(X, "euclidean", 3, n_init=6, random_state=0)
    assert res.extras["restart_objectives"].shape == (6,)
    assert res.objective == pytest.approx(res.extras["restart_objectives"].min())
    # the kept run is the first of the best, replayed alone from its seed-drawn start
    rng = np.random.RandomState(0)
    starts = [random_partition(len(X), 3, rng) for _ in range(6)]
    best = int(np.argmin(res.extras["restart_objectives"]))
    alone = bregman_hard_clustering(X, "euclidean", 3, init=starts[best])
    np.testing.assert_array_equal(alone.X, res.X)
    assert alone.iterations == res.iterations
    assert res.time > 0


def test_empty_cluster_in_init_is_filled():
    X = _data("euclidean", seed=8)
    init = np.zeros(len(X), dtype=int)
    init[:5] = 1  # cluster 2 empty
    for res in (bregman_hard_clustering(X, "euclidean", 3, init=init),
                conditional_hard_clustering(X, "euclidean", 3, alpha=ALPHA, init=init)):
        assert np.bincount(res.X, minlength=3).min() > 0
        h = [res.extras["initial_objective"]] + [row["objective"] for row in res.history]
        assert np.all(np.diff(h) <= 1e-12)


def test_rounding_exact_equivalence_matrix_returns_its_partition():
    rng = np.random.RandomState(0)
    truth = rng.permutation(np.repeat(np.arange(4), [3, 5, 7, 9]))
    M = equivalence_matrix(truth, 4)
    out = round_equivalence(M, 4, random_state=0)
    assert isinstance(out, Result) and out.status == "converged" and out.iterations == 10
    assert out.extras["all_labels"].shape == (10, len(truth))
    assert out.extras["scores"].shape == (10,)
    for labels in out.extras["all_labels"]:
        assert adjusted_rand_score(truth, labels) == 1.0
    assert out.extras["scores"][out.extras["best"]] == pytest.approx(0.0, abs=1e-18)
    assert out.objective == out.extras["scores"][out.extras["best"]]
    np.testing.assert_array_equal(out.X, out.extras["all_labels"][out.extras["best"]])


def test_rounding_of_a_noisy_relaxed_matrix_and_custom_score():
    rng = np.random.RandomState(1)
    truth = np.repeat(np.arange(3), 8)
    E = equivalence_matrix(truth, 3)
    noise = 0.05 * rng.randn(24, 24)
    M = project_M2(E + (noise + noise.T) / 2, 3)  # negative entries are possible in M2
    out = round_equivalence(M, 3, n_init=4, random_state=0)
    assert adjusted_rand_score(truth, out.X) == 1.0
    calls = []
    out = round_equivalence(M, 3, n_init=3, random_state=0, score=lambda l: calls.append(1) or -len(calls))
    assert out.extras["best"] == 2 and len(calls) == 3 and out.objective == -3


def test_limit_hit_warns_and_reports_status():
    X = _data("euclidean", seed=9, t_per=20)
    init = random_partition(len(X), 3, 0)
    assert bregman_hard_clustering(X, "euclidean", 3, init=init).iterations > 1
    with pytest.warns(ConvergenceWarning):
        res = bregman_hard_clustering(X, "euclidean", 3, init=init, max_iter=1)
    assert res.status == "max_iter"
    with pytest.warns(ConvergenceWarning):
        res = soft_bregman_em(X, "euclidean", 3, n_init=1, max_iter=1, random_state=0)
    assert res.status == "max_iter"


@pytest.mark.parametrize("fn", [
    lambda X, **kw: bregman_hard_clustering(X, **kw),
    lambda X, **kw: conditional_hard_clustering(X, alpha=0.1, **kw),
    lambda X, **kw: joint_hard_clustering(X, **kw),
    lambda X, **kw: soft_bregman_em(X, n_init=1, **kw),
])
def test_bad_input_raises_value_error_naming_the_argument(fn):
    X = np.abs(_data("euclidean"))
    with pytest.raises(ValueError, match="X"):
        fn(-X, divergence="kl", n_clusters=2)
    with pytest.raises(ValueError, match="X"):
        fn(X + 1.0, divergence="logistic", n_clusters=2)
    with pytest.raises(ValueError, match="n_clusters"):
        fn(X, divergence="euclidean", n_clusters=1)
    with pytest.raises(ValueError, match="n_clusters"):
        fn(X, divergence="euclidean", n_clusters=len(X) + 1)
    with pytest.raises(ValueError, match="Unknown divergence"):
        fn(X, divergence="hellinger", n_clusters=2)
    with pytest.raises(ValueError, match="X"):
        fn(X[:, :, None], divergence="euclidean", n_clusters=2)


def test_bad_options_raise_value_error():
    X = _data("euclidean")
    with pytest.raises(ValueError, match="init"):
        bregman_hard_clustering(X, "euclidean", 3, init=np.zeros(len(X) - 1, int))
    with pytest.raises(ValueError, match="init"):
        bregman_hard_clustering(X, "euclidean", 3, init=np.full(len(X), 3))
    with pytest.raises(ValueError, match="n_init"):
        bregman_hard_clustering(X, "euclidean", 3, init=np.zeros(len(X), int), n_init=2)
    with pytest.raises(ValueError, match="alpha"):
        conditional_hard_clustering(X, "euclidean", 3, alpha=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        joint_hard_clustering(X, "euclidean", 3, max_iter=0)
    with pytest.raises(ValueError, match="refine"):
        bregman_hard_clustering(X, "euclidean", 3, refine="yes")
    with pytest.raises(ValueError, match="means"):
        conditional_centres(-np.ones((2, 2)), "kl", 0.1)
    with pytest.raises(ValueError, match="M"):
        round_equivalence(np.ones((3, 4)), 2)
    with pytest.raises(ValueError, match="n_clusters"):
        round_equivalence(np.eye(4), 5)
    with pytest.raises(ValueError, match="n_init"):
        round_equivalence(np.eye(4), 2, n_init=0)
    with pytest.raises(ValueError, match="score"):
        round_equivalence(np.eye(4), 2, score=3)


@pytest.mark.parametrize("fn", [
    lambda X, **kw: bregman_hard_clustering(X, "euclidean", 3, **kw),
    lambda X, **kw: conditional_hard_clustering(X, "euclidean", 3, alpha=0.1, **kw),
    lambda X, **kw: joint_hard_clustering(X, "euclidean", 3, **kw),
    lambda X, **kw: soft_bregman_em(X, "euclidean", 3, n_init=2, **kw),
    lambda X, **kw: round_equivalence(equivalence_matrix(np.arange(len(X)) % 3, 3), 3, **kw),
], ids=["bregman_hard_clustering", "conditional_hard_clustering", "joint_hard_clustering", "soft_bregman_em",
        "round_equivalence"])
def test_random_state_is_checked_by_the_project(fn):
    """A Generator is accepted (it was refused by sklearn's check_random_state) and draws the
    same as a RandomState on its bit generator; True is no seed."""
    X = _data("euclidean")
    def labels(result):
        return result.X if isinstance(result, Result) and result.X.ndim == 1 else result.extras.get("labels", result.X)
    assert np.array_equal(labels(fn(X, random_state=np.random.default_rng(5))),
                          labels(fn(X, random_state=np.random.RandomState(np.random.default_rng(5).bit_generator))))
    with pytest.raises(ValueError, match="'random_state' parameter"):
        fn(X, random_state=True)


def test_refine_escapes_a_lloyd_fixed_point():
    """A 1-D set where Lloyd stops at a fixed point that one re-fitted move improves."""
    X = np.array([[1.668], [2.881], [0.0], [1.209], [0.587], [0.369]])
    init = np.array([1, 0, 1, 0, 1, 0])
    div = get_divergence("euclidean")
    plain = bregman_hard_clustering(X, "euclidean", 2, init=init)
    gains = []
    for i in range(6):
        moved = plain.X.copy()
        moved[i] = 1 - moved[i]
        gains.append(_hard_obj(X, moved, 2, div) - plain.objective)
    assert min(gains) < -1e-3  # not Hartigan-optimal
    refined = bregman_hard_clustering(X, "euclidean", 2, init=init, refine=True)
    assert refined.objective < plain.objective - 1e-3
