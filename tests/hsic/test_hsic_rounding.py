"""Rounding of Section 5.3: nearest rank-one matrix, alternating Stiefel/nonnegative projections."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from cvxclust.hsic._lowrank import lowrank
from cvxclust.hsic._objectives import partition_matrix
from cvxclust.hsic._rounding import (
    _stiefel,
    alternating_projection,
    round_best,
    round_lowrank,
    round_sdp,
)
from cvxclust.kernels import center, rbf
from cvxclust.metrics import accuracy

#: the relabelings a 3-chain admits: identity and reversal (Section 5.3, solutions (a) and (b))
CHAIN3 = [[0, 1, 2], [2, 1, 0]]


def chain_kernel(c: int) -> np.ndarray:
    return 2 * np.eye(c) + np.diag(np.ones(c - 1), 1) + np.diag(np.ones(c - 1), -1)


def blobs(m: int, seed: int = 0):
    """3 tight blobs along a line (in chain order), centred rbf kernel, 3-chain output kernel."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(3), m // 3)
    X = np.column_stack([4.0 * y, np.zeros(m)]) + 0.3 * rng.normal(size=(m, 2))
    return center(rbf(X)), chain_kernel(3), y


def vec(P: np.ndarray) -> np.ndarray:
    return P.T.reshape(-1)  # stacks the columns of P


@pytest.mark.parametrize("seed", range(4))
def test_exact_partition_is_recovered_exactly(seed):
    rng = np.random.default_rng(seed)
    m, c = 11, 4
    labels = np.concatenate([np.arange(c), rng.integers(0, c, size=m - c)])
    rng.shuffle(labels)
    P = partition_matrix(labels, c, normalization="l2")
    y = vec(P)
    for Y in (y[:, None], y, -y[:, None]):  # r = 1, as a vector, and with the opposite sign
        got, P_out = round_lowrank(Y, m, c)
        np.testing.assert_array_equal(got, labels)
        np.testing.assert_allclose(P_out, P, atol=1e-12)
    # the same Q from a factor of rank 2: Y = vec(P) (cos t, sin t)
    got, _ = round_lowrank(np.outer(y, [np.cos(0.7), np.sin(0.7)]), m, c)
    np.testing.assert_array_equal(got, labels)
    got, P_out = round_sdp(np.outer(y, y), m, c)
    np.testing.assert_array_equal(got, labels)
    np.testing.assert_allclose(P_out, P, atol=1e-10)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # slow projections on random Y
def test_lowrank_and_sdp_rounding_agree():
    """round_lowrank (top singular vector of Y) and round_sdp (top eigenvector of Y Y^T) agree."""
    rng = np.random.default_rng(0)
    m, c = 10, 3
    for _ in range(5):
        Y = rng.uniform(size=(m * c, 4)) ** 3
        a, Pa = round_lowrank(Y, m, c)
        b, Pb = round_sdp(Y @ Y.T, m, c)
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(Pa, Pb, atol=1e-8)


def test_alternating_projection_output():
    """From a perturbed partition the iteration ends at a fixed point: a nonnegative matrix with
    orthonormal columns (so disjoint supports) whose row maxima give the partition back.  The
    convergence is linear and slow near the limit, hence the larger iteration limit."""
    rng = np.random.default_rng(1)
    labels = np.concatenate([np.arange(3), rng.integers(0, 3, size=9)])
    Pi0 = np.abs(partition_matrix(labels, 3, normalization="l2") + 0.05 * rng.normal(size=(12, 3)))
    Pi, iterations = alternating_projection(Pi0, max_iter=2000)
    assert Pi.min() >= 0 and 1 < iterations < 2000
    np.testing.assert_allclose(Pi.T @ Pi, np.eye(3), atol=1e-8)
    np.testing.assert_array_equal(np.argmax(Pi, axis=1), labels)
    np.testing.assert_allclose(np.maximum(_stiefel(Pi), 0), Pi, atol=1e-9)


def test_alternating_projection_warns_at_the_iteration_limit():
    rng = np.random.default_rng(2)
    with pytest.warns(ConvergenceWarning, match="alternating projection"):
        alternating_projection(rng.normal(size=(15, 4)), max_iter=1, tol=1e-14)


@pytest.mark.parametrize("m", [12, 30])
@pytest.mark.parametrize("seed", range(3))
def test_blobs_recovered_up_to_chain_reversal(m, seed):
    K, A, y = blobs(m)
    # the relaxation (5.23) is not tight on these blobs (the SDP optimum exceeds every
    # partition's objective) and the local solution depends on the start: with the paper's
    # bias = 0.1, or with rank 3, some seeds give a wrong chain order; bias = 1 (a stronger
    # bias towards a rank-one Q) with rank 10 recovers the chain for every (m, seed) here
    res = lowrank(K, A, rank=10, bias=1.0, random_state=seed)
    assert res.status == "converged"
    labels, P = round_lowrank(res.X, m, 3)
    assert accuracy(y, labels, CHAIN3) == 1.0
    assert P.shape == (m, 3) and P.min() >= 0


def test_sdp_rounding_of_a_chain_of_points():
    """round_sdp on the exact SDP (5.23) of a well-separated chain of blobs (with a bias term,
    as in (5.30), tr((A kron K + bias 11^T) Q))."""
    m, c = 9, 3
    K, A, y = blobs(m)
    Q = cp.Variable((m * c, m * c), symmetric=True)
    block = lambda i, j: Q[i * m:(i + 1) * m, j * m:(j + 1) * m]
    constraints = [Q >> 0, Q >= 0, sum(block(i, i) for i in range(c)) @ np.ones(m) == 1]
    constraints += [cp.trace(block(i, j)) == float(i == j) for i in range(c) for j in range(i, c)]
    objective = cp.trace((np.kron(A, K) + 1.0 * np.ones((m * c, m * c))) @ Q)
    problem = cp.Problem(cp.Maximize(objective), constraints)
    problem.solve(solver="SCS", eps=1e-8)
    assert problem.status == cp.OPTIMAL
    labels, _ = round_sdp(Q.value, m, c)
    assert accuracy(y, labels, CHAIN3) == 1.0


# labels against the data can leave the projections short of tol=1e-10 after 100 iterations
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("enforce", ["lowrank", "rounding"])
def test_known_labels_are_respected(enforce):
    m, c = 12, 3
    K, A, _y = blobs(m)
    known = np.full(m, -1)
    # points 0 and 11 (far ends) and point 5: two of them against the data's order
    known[[0, 5, 11]] = [2, 1, 0]
    res = lowrank(K, A, rank=3, bias=1.0, known=known if enforce == "lowrank" else None, random_state=0)
    labels, P = round_lowrank(res.X, m, c, known=known)
    labelled = known >= 0
    np.testing.assert_array_equal(labels[labelled], known[labelled])
    # the rows of labelled points are zero outside their known column
    for point in np.flatnonzero(labelled):
        assert np.all(np.delete(P[point], known[point]) == 0)
    labels_sdp, _ = round_sdp(res.X @ res.X.T, m, c, known=known)
    np.testing.assert_array_equal(labels_sdp[labelled], known[labelled])


def test_known_labels_orient_the_chain():
    """Known labels consistent with the data fix the reversal: the labels then equal y."""
    m = 12
    K, A, y = blobs(m)
    known = np.full(m, -1)
    known[[0, 11]] = [0, 2]
    res = lowrank(K, A, rank=10, bias=1.0, known=known, random_state=0)
    labels, _ = round_lowrank(res.X, m, 3, known=known)
    np.testing.assert_array_equal(labels, y)


@pytest.mark.parametrize("args, kwargs, match", [
    ((np.ones((8, 2)), 3, 3), {}, "Y"),
    ((np.ones((9, 2)), 3, 1), {}, "c"),
    ((np.ones((9, 2)), 3, 4), {}, "c"),
    ((np.ones((9, 2)), 2.5, 3), {}, "m"),
    ((np.full((9, 2), np.nan), 3, 3), {}, "Y"),
    ((np.zeros((9, 2)), 3, 3), {}, "Y"),
    ((np.ones((9, 2)), 3, 3), {"max_iter": 0}, "max_iter"),
    ((np.ones((9, 2)), 3, 3), {"tol": -1.0}, "tol"),
    ((np.ones((9, 2)), 3, 3), {"known": [0, 1, 5]}, "known"),
    ((np.ones((9, 2)), 3, 3), {"known": [0, 1]}, "known"),
    ((np.ones((9, 2)) * (1 + 1j), 3, 3), {}, "^Y must be real"),  # was cast to real with a ComplexWarning
])
def test_round_lowrank_bad_input(args, kwargs, match):
    with pytest.raises(ValueError, match=match):
        round_lowrank(*args, **kwargs)


@pytest.mark.parametrize("Q, m, c, match", [
    (np.eye(8), 3, 3, "Q"),
    (np.triu(np.ones((9, 9))), 3, 3, "Q"),
    (np.ones((9, 8)), 3, 3, "Q"),
    (-np.eye(9), 3, 3, "Q"),
    (np.eye(9), 3, 1, "c"),
])
def test_round_sdp_bad_input(Q, m, c, match):
    with pytest.raises(ValueError, match=match):
        round_sdp(Q, m, c)


def test_round_best_checks_kernels_and_keeps_inputs():
    m, c = 12, 3
    K, A, y = blobs(m)
    Y = vec(partition_matrix(y, c, normalization="l2"))[:, None] + 0.01
    copies = K.copy(), A.copy(), Y.copy()
    labels, _ = round_best(Y, K, A, random_state=0)
    assert accuracy(y, labels, CHAIN3) == 1.0
    for original, copy in zip((K, A, Y), copies):
        np.testing.assert_array_equal(original, copy)
    bad = K.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="K"):
        round_best(Y, bad, A)
    with pytest.raises(ValueError, match="A"):
        round_best(Y, K, np.full((3, 3), np.inf))


def test_alternating_projection_leaves_its_start_unchanged():
    rng = np.random.default_rng(3)
    Pi0 = rng.normal(size=(10, 3))
    copy = Pi0.copy()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        alternating_projection(Pi0, known=np.r_[0, -np.ones(9, dtype=int)])
    np.testing.assert_array_equal(Pi0, copy)


@pytest.mark.parametrize("kwargs, match", [
    ({"Y": np.ones((12, 2)) * (1 + 1j)}, "^Y must be real"),  # was cast to real with a ComplexWarning
    ({"normalized": "no"}, "^normalized"),  # was read as True
    ({"normalized": None}, "^normalized"),
    ({"random_state": True}, "'random_state'"),  # was the seed 1
    ({"random_state": -1}, "'random_state'"),
    ({"random_state": 2.5}, "'random_state'"),
])
def test_round_best_bad_input_names_the_argument(kwargs, match):
    K, A, y = blobs(12)
    args = {"Y": vec(partition_matrix(y, 3, normalization="l2"))[:, None] + 0.01, "K": K, "A": A, **kwargs}
    with pytest.raises((ValueError, TypeError), match=match):
        round_best(args.pop("Y"), args.pop("K"), args.pop("A"), **args)


def test_round_best_takes_a_generator():
    """As documented (it was refused): equal generators give equal candidates."""
    K, A, y = blobs(12)
    Y = np.abs(np.random.default_rng(0).normal(size=(36, 3)))
    first, second = (round_best(Y, K, A, random_state=np.random.default_rng(4)) for _ in range(2))
    np.testing.assert_array_equal(first[0], second[0])
    np.testing.assert_array_equal(first[1], second[1])


def test_alternating_projection_refuses_a_complex_start():
    """A complex start was cast to real with a ComplexWarning."""
    with pytest.raises(ValueError, match="^Pi0 must be real"):
        alternating_projection(np.ones((6, 2)) * (1 + 1j))
