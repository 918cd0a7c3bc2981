"""Greedy local optimization of CLUHSICAL (cvxclust.cluhsical._greedy)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from cvxclust import Result, structures
from cvxclust.cluhsic import greedy as cluhsic_greedy
from cvxclust.cluhsical import equivalent_output_kernel, greedy, labels_objective, partition_matrix
from cvxclust.cluhsical._greedy import NormalizedObjective
from cvxclust.kernels import center, rbf

NORMALIZATIONS = ["l1", "l2", None]

ASYMMETRIC = np.array([[0.0, 1.0, 4.0, 2.5],
                       [0.5, 0.0, 3.0, 0.0],
                       [2.0, 1.5, 0.0, 1.0],
                       [0.0, 2.0, 0.5, 0.0]])


def instance(m: int = 24, seed: int = 0, loss_kind: str = "tree"):
    """Four noisy blobs (a 2 x 2 hierarchy of clusters), centred rbf kernel, tree kernel A."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 0.0], [1.5, 0.0], [6.0, 0.0], [7.5, 0.0]])
    X = centres[np.arange(m) % 4] + 0.9 * rng.standard_normal((m, 2))
    S = structures.tree([2, 2])
    loss = (ASYMMETRIC if loss_kind == "user"
            else structures.loss_matrix(S, "zero-one" if loss_kind == "zero-one" else "structure"))
    return center(rbf(X)), structures.output_kernel(S), loss


def single_moves(K, A, loss, labels, free, normalization, C=None, gamma=1.0):
    """Objective change of every single move of a free point, by full recomputation."""
    c = A.shape[0]
    f = labels_objective(K, A, labels, loss, normalization, C=C, gamma=gamma)
    gains = []
    for i in free:
        for b in range(c):
            if b != labels[i]:
                moved = labels.copy()
                moved[i] = b
                gains.append(labels_objective(K, A, moved, loss, normalization, C=C, gamma=gamma) - f)
    return f, np.array(gains)


@pytest.mark.parametrize("normalization", ["l1", "l2"])
@pytest.mark.parametrize("loss_kind", ["tree", "user"])
def test_candidate_scores_match_full_recomputation(normalization, loss_kind):
    """The O(c^3) scores from S = Pi^T K Pi equal the objective recomputed from scratch after
    moving the point, for every point and target, including moves that empty a cluster."""
    K, A, loss = instance(10, 1, loss_kind)
    m, c = 10, 4
    C, gamma = 3.0, 0.7
    model = NormalizedObjective(A, loss, normalization, m, C, gamma)
    labels = np.array([0, 0, 1, 1, 1, 2, 2, 2, 3, 0])  # cluster 3 has a single point
    Pi = np.eye(c)[labels]
    S, KPi, sizes = Pi.T @ K @ Pi, K @ Pi, np.bincount(labels, minlength=c)
    assert model.value(S, sizes) == pytest.approx(
        labels_objective(K, A, labels, loss, normalization, C=C, gamma=gamma), rel=1e-12)
    for i in range(m):
        scores = model.candidates(S, sizes, KPi[i], K[i, i], labels[i])
        for b in range(c):
            moved = labels.copy()
            moved[i] = b
            expected = labels_objective(K, A, moved, loss, normalization, C=C, gamma=gamma)
            assert scores[b] == pytest.approx(expected, rel=1e-10, abs=1e-12)


@pytest.mark.parametrize("normalization", NORMALIZATIONS)
@pytest.mark.parametrize("seed", range(3))
def test_objective_monotone_and_local_optimum(normalization, seed):
    """The objective never decreases over the sweeps and no single move of the result improves
    it (brute force over every point and cluster)."""
    K, A, loss = instance(20, seed)
    result = greedy(K, A, loss, normalization=normalization, random_state=seed)
    assert isinstance(result, Result)
    assert result.method == "cluhsical-greedy" and result.status == "converged"
    assert result.dual_bound is None
    values = np.array([result.history[0]["start_objective"], *(row["objective"] for row in result.history)])
    assert len(values) == result.iterations + 1
    assert np.all(np.diff(values) >= -1e-12 * np.abs(values).max())
    assert result.history[-1]["moves"] == 0 and values[-1] > values[0]
    f, gains = single_moves(K, A, loss, result.extras["labels"], range(20), normalization)
    assert result.objective == pytest.approx(f, rel=1e-12, abs=1e-14)
    assert gains.max() <= 1e-9 * max(abs(f), 1.0)
    np.testing.assert_array_equal(result.X, partition_matrix(result.extras["labels"], loss, normalization))


def test_l2_with_other_C_and_gamma_is_a_local_optimum():
    K, A, loss = instance(18, 3, "user")
    C, gamma = 5.0, 0.2
    result = greedy(K, A, loss, normalization="l2", C=C, gamma=gamma, random_state=0)
    f, gains = single_moves(K, A, loss, result.extras["labels"], range(18), "l2", C=C, gamma=gamma)
    assert result.objective == pytest.approx(f, rel=1e-12)
    assert gains.max() <= 1e-9 * max(abs(f), 1.0)


@pytest.mark.parametrize("normalization", NORMALIZATIONS)
def test_known_labels_never_move(normalization):
    K, A, loss = instance(20, 4)
    rng = np.random.default_rng(0)
    truth = np.arange(20) % 4
    known = np.where(rng.random(20) < 0.4, (truth + 1) % 4, -1)  # deliberately "wrong" labels
    result = greedy(K, A, loss, normalization=normalization, known=known, n_init=3, random_state=1)
    fixed = known >= 0
    assert np.array_equal(result.extras["labels"][fixed], known[fixed])
    f, gains = single_moves(K, A, loss, result.extras["labels"], np.flatnonzero(~fixed), normalization)
    assert gains.max() <= 1e-9 * max(abs(f), 1.0)
    # init is overwritten on the known points
    init = np.zeros(20, dtype=int)
    result = greedy(K, A, loss, normalization=normalization, known=known, init=init, random_state=0)
    assert np.array_equal(result.extras["labels"][fixed], known[fixed])


@pytest.mark.parametrize("seed", range(3))
def test_unnormalized_is_cluhsic_greedy_on_L_A_L(seed):
    """normalization=None runs CLUHSIC's greedy with A' = L A L^T: same labels and objective
    from the same start and seed, and that objective is the unnormalized CLUHSICAL one."""
    K, A, loss = instance(20, seed, "user")
    init = np.random.default_rng(seed).integers(0, 4, 20)
    ours = greedy(K, A, loss, normalization=None, init=init, random_state=seed)
    theirs = cluhsic_greedy(K, equivalent_output_kernel(A, loss), normalization=None, init=init, random_state=seed)
    assert np.array_equal(ours.extras["labels"], theirs.extras["labels"])
    assert ours.objective == pytest.approx(theirs.objective, rel=1e-12)
    assert ours.objective == pytest.approx(labels_objective(K, A, ours.extras["labels"], loss), rel=1e-12)
    assert ours.iterations == theirs.iterations
    np.testing.assert_array_equal(ours.X, partition_matrix(ours.extras["labels"], loss))


@pytest.mark.parametrize("normalization", NORMALIZATIONS)
def test_reproducible_and_restarts_keep_the_best(normalization):
    K, A, loss = instance(20, 5)
    a = greedy(K, A, loss, normalization=normalization, n_init=4, random_state=7)
    b = greedy(K, A, loss, normalization=normalization, n_init=4, random_state=7)
    assert np.array_equal(a.extras["labels"], b.extras["labels"]) and a.objective == b.objective
    singles = [greedy(K, A, loss, normalization=normalization, random_state=s).objective for s in range(4)]
    assert a.objective >= min(singles) - 1e-12


def test_max_iter_gives_status_and_warning():
    K, A, loss = instance(24, 6)
    init = np.zeros(24, dtype=int)
    with pytest.warns(ConvergenceWarning, match="cluhsical-greedy"):
        result = greedy(K, A, loss, init=init, max_iter=1, random_state=0)
    assert result.status == "max_iter" and result.iterations == 1
    assert result.history[-1]["moves"] > 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        assert greedy(K, A, loss, init=init, random_state=0).status == "converged"


def test_structured_loss_recovers_separated_blobs():
    """A sanity check on well-separated blobs (noise 0.3): the l1 greedy with restarts finds the
    planted partition up to an admissible relabeling of the tree, at least as good as it."""
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [2.0, 0.0], [8.0, 0.0], [10.0, 0.0]])
    truth = np.arange(24) % 4
    K = center(rbf(centres[truth] + 0.3 * rng.standard_normal((24, 2))))
    S = structures.tree([2, 2])
    A, loss = structures.output_kernel(S), structures.loss_matrix(S)
    result = greedy(K, A, loss, normalization="l1", n_init=5, random_state=0)
    perms = structures.admissible_permutations(S)
    assert max(np.mean(p[result.extras["labels"]] == truth) for p in perms) == 1.0
    assert result.objective >= labels_objective(K, A, truth, loss, "l1") - 1e-12


@pytest.mark.parametrize("kwargs, match", [
    ({"normalization": "l3"}, "normalization"),
    ({"loss": np.ones((4, 4))}, "loss"),
    ({"loss": 1.0 - np.eye(3)}, "loss"),
    ({"loss": -ASYMMETRIC}, "loss"),
    ({"C": 0.0, "normalization": "l2"}, "C"),
    ({"gamma": -1.0, "normalization": "l2"}, "gamma"),
    ({"init": np.zeros(24, dtype=int), "n_init": 2}, "n_init"),
    ({"init": np.full(24, 4)}, "init"),
    ({"known": np.full(24, 5)}, "known"),
    ({"known": np.full(23, -1)}, "known"),
    ({"max_iter": 0}, "max_iter"),
    ({"n_init": 0}, "n_init"),
    ({"tol": -1.0}, "tol"),
    ({"A": np.eye(30)}, "A"),
    ({"K": np.ones((24, 23))}, "K"),
])
def test_bad_input(kwargs, match):
    K, A, loss = instance(24, 0)
    args = {"K": K, "A": A, "loss": loss, **kwargs}
    with pytest.raises(ValueError, match=match):
        greedy(args.pop("K"), args.pop("A"), args.pop("loss"), **args)
