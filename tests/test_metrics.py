import numpy as np
import pytest

from cvxclust import metrics


def test_error_rate_perfect_up_to_permutation():
    y = [0, 0, 1, 1, 2, 2]
    pred = [2, 2, 0, 0, 1, 1]
    assert metrics.error_rate(y, pred) == 0.0
    assert metrics.accuracy(y, pred) == 1.0
    assert metrics.best_mapping(y, pred) == {2: 0, 0: 1, 1: 2}


def test_error_rate_known_example():
    y = [0, 0, 0, 1, 1, 1]
    pred = [1, 1, 0, 0, 0, 0]  # best map 1->0, 0->1: 5 of 6 correct
    assert metrics.error_rate(y, pred) == pytest.approx(1 / 6)
    assert metrics.best_mapping(y, pred) == {1: 0, 0: 1}


def test_string_labels_and_more_clusters_than_classes():
    y = ["a", "a", "b", "b", "b"]
    pred = [0, 1, 2, 2, 2]
    mapping = metrics.best_mapping(y, pred)
    assert mapping[2] == "b"
    assert sorted(k for k, v in mapping.items() if v is None) in ([0], [1])
    assert mapping[0] == "a" or mapping[1] == "a"
    assert metrics.accuracy(y, pred) == pytest.approx(4 / 5)


def test_fewer_clusters_than_classes():
    y = [0, 0, 1, 1, 2, 2]
    pred = [0, 0, 0, 0, 1, 1]
    assert metrics.accuracy(y, pred) == pytest.approx(4 / 6)
    assert metrics.best_mapping(y, pred)[1] == 2


def test_hungarian_beats_greedy():
    # greedy majority relabeling would send both clusters to class 0
    y = [0, 0, 0, 0, 1, 1, 0, 0, 0]
    pred = [0, 0, 0, 0, 0, 0, 1, 1, 1]
    assert metrics.best_mapping(y, pred) == {0: 1, 1: 0}
    assert metrics.accuracy(y, pred) == pytest.approx(5 / 9)


def test_restricted_permutations_differ_from_hungarian():
    y = [0, 0, 1, 1, 2, 2]
    pred = [1, 1, 0, 0, 2, 2]
    assert metrics.accuracy(y, pred) == 1.0
    identity = np.arange(3)
    assert metrics.accuracy(y, pred, permutations=[identity]) == pytest.approx(1 / 3)
    assert metrics.error_rate(y, pred, permutations=[identity]) == pytest.approx(2 / 3)
    # a cyclic (ring rotation) permutation group does not contain the swap 0<->1
    rotations = [np.roll(identity, s) for s in range(3)]
    assert metrics.accuracy(y, pred, permutations=rotations) == pytest.approx(1 / 3)
    swap = np.array([1, 0, 2])
    assert metrics.accuracy(y, pred, permutations=rotations + [swap]) == 1.0
    assert metrics.best_mapping(y, pred, permutations=rotations + [swap]) == {0: 1, 1: 0, 2: 2}
    # a generator works as well as a list
    assert metrics.accuracy(y, pred, permutations=(p for p in [identity, swap])) == 1.0


def test_restricted_with_all_permutations_equals_hungarian():
    from itertools import permutations

    rng = np.random.RandomState(0)
    y = rng.randint(3, size=40)
    pred = rng.randint(3, size=40)
    perms = [np.array(p) for p in permutations(range(3))]
    assert metrics.accuracy(y, pred, permutations=perms) == pytest.approx(metrics.accuracy(y, pred))


def test_nmi():
    assert metrics.nmi([0, 0, 1, 1], [1, 1, 0, 0]) == pytest.approx(1.0)
    assert metrics.nmi([0, 0, 1, 1], [0, 1, 0, 1]) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("func", [metrics.accuracy, metrics.error_rate, metrics.best_mapping, metrics.nmi])
@pytest.mark.parametrize(
    "y_true, y_pred, match",
    [
        ([0, 1, 1], [0, 1], "same length"),
        ([], [], "y_true must not be empty"),
        ([[0, 1]], [0, 1], "y_true must be a 1-D"),
        ([0, 1], [[0, 1]], "y_pred must be a 1-D"),
    ],
)
def test_label_errors(func, y_true, y_pred, match):
    with pytest.raises(ValueError, match=match):
        func(y_true, y_pred)


@pytest.mark.parametrize(
    "y_pred, perms, match",
    [
        ([0, 1, 2], [], "at least one permutation"),
        ([0, 1, 3], [np.arange(3)], "permutations"),
        ([0, 1, -1], [np.arange(3)], "permutations"),
        ([0.0, 1.0, 2.0], [np.arange(3)], "permutations"),
        ([0, 1, 2], [np.zeros((3, 3))], "permutations"),
    ],
)
def test_permutation_errors(y_pred, perms, match):
    with pytest.raises(ValueError, match=match):
        metrics.accuracy([0, 1, 2], y_pred, permutations=perms)


@pytest.mark.parametrize("func", [metrics.accuracy, metrics.error_rate, metrics.best_mapping])
@pytest.mark.parametrize(
    "perm",
    [[0.5, 1.0], [0, 0], [1, 2], [-1, 0], [0.0, 1.0], [True, False], [0, 1, 1], [[0], [1, 2]]],
)
def test_permutations_must_be_permutations(func, perm):
    """An entry that is not a permutation of 0..len(p)-1 (fractional, repeated, out of range,
    float, boolean, ragged) is refused, even after a valid one, instead of scoring a relabeling
    that is not one-to-one."""
    for perms in ([perm], [[1, 0], perm]):
        with pytest.raises(ValueError, match="permutations must hold"):
            func([0, 0, 1, 1], [0, 0, 1, 1], permutations=perms)


def test_structured_loss_uses_the_admissible_relabeling():
    """Section 5.3 of the CLUHSIC paper: on a 3-chain, the reversed solution (b) costs 0, the
    misordered (d) costs the chain distance of its swapped clusters, though both have
    accuracy 1 under unrestricted matching."""
    from cvxclust.metrics import structured_loss

    chain_loss = np.abs(np.subtract.outer(np.arange(3), np.arange(3))).astype(float)
    keep = [np.array([0, 1, 2]), np.array([2, 1, 0])]
    y = np.array([0, 0, 1, 1, 2, 2])
    assert structured_loss(y, [2, 2, 1, 1, 0, 0], chain_loss, keep) == 0.0
    assert structured_loss(y, [0, 0, 2, 2, 1, 1], chain_loss, keep) == pytest.approx(4 / 6)
    assert structured_loss(y, [0, 0, 2, 2, 1, 1], chain_loss) == 0.0  # Hungarian: any relabeling
    # an unmatched extra cluster costs the largest loss
    assert structured_loss(y, [0, 0, 1, 1, 2, 3], chain_loss) == pytest.approx(2 / 6)
    with pytest.raises(ValueError, match="loss"):
        structured_loss(y, y, np.ones((2, 2)))
