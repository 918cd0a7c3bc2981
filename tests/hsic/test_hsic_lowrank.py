"""The low-rank SDP (5.30) by augmented Lagrangian: gradients, feasibility, bound vs the SDP (5.23),
the Result it returns, limits and inputs."""

from __future__ import annotations

import functools
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from cvxclust.hsic._factor import AugmentedLagrangian, lowrank_objective, lowrank_residuals, restore_feasibility
from cvxclust.hsic._lowrank import lowrank
from cvxclust.hsic import CLUHSICSDP, align_clusters, partition_matrix
from cvxclust.hsic import objective as cluhsic_objective
from cvxclust import Result
from cvxclust.kernels import center, rbf


def chain_kernel(c: int) -> np.ndarray:
    """Output kernel of a c-chain: 2 I + adjacency (Section 6.1.1)."""
    return 2 * np.eye(c) + np.diag(np.ones(c - 1), 1) + np.diag(np.ones(c - 1), -1)


def random_instance(m: int, c: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, 3))
    return center(rbf(X)), chain_kernel(c)


def blob_instance(m: int, c: int, seed: int = 0):
    """c tight blobs along a line, in chain order."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(c), m // c)
    X = np.column_stack([4.0 * y, np.zeros(m)]) + 0.3 * rng.normal(size=(m, 2))
    return center(rbf(X)), chain_kernel(c), y


def sdp_optimum(K: np.ndarray, A: np.ndarray) -> float:
    """Optimum of the SDP (5.23) by cvxpy: max tr((A kron K) Q), Q psd, Q >= 0, odiag = I, bdiag 1 = 1."""
    m, c = K.shape[0], A.shape[0]
    Q = cp.Variable((m * c, m * c), symmetric=True)
    block = lambda i, j: Q[i * m:(i + 1) * m, j * m:(j + 1) * m]
    constraints = [Q >> 0, Q >= 0, sum(block(i, i) for i in range(c)) @ np.ones(m) == 1]
    constraints += [cp.trace(block(i, j)) == float(i == j) for i in range(c) for j in range(i, c)]
    problem = cp.Problem(cp.Maximize(cp.trace(np.kron(A, K) @ Q)), constraints)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "inaccurate": handled just below
        problem.solve(solver="CLARABEL")
    if problem.status != cp.OPTIMAL:
        # Clarabel stalls short of its 1e-8 gap on some degenerate instances; SCS then certifies
        problem.solve(solver="SCS", eps=1e-9, max_iters=200_000)
    assert problem.status == cp.OPTIMAL
    return float(problem.value)


@functools.cache
def cached_optimum(kind: str, m: int, c: int) -> float:
    K, A = random_instance(m, c)[:2] if kind == "random" else blob_instance(m, c)[:2]
    return sdp_optimum(K, A)


# -- gradients against finite differences ------------------------------------------------

def _central_difference(func, Y3, D, eps=1e-6):
    return (func(Y3 + eps * D) - func(Y3 - eps * D)) / (2 * eps)


@pytest.mark.parametrize("m, c, r", [(7, 2, 1), (6, 3, 4)])
def test_objective_gradients_match_finite_differences(m, c, r):
    rng = np.random.default_rng(0)
    K, A = random_instance(m, c)
    A = A + 0.3 * rng.normal(size=(c, c))
    A = (A + A.T) / 2  # any symmetric output kernel
    ev = AugmentedLagrangian(K, A, r, bias=0.1)
    Y3 = rng.uniform(size=(c, m, r))
    f, grad_f, g, grad_g = ev.objective_terms(Y3)
    Y = Y3.reshape(m * c, r)
    assert f == pytest.approx(np.trace(Y.T @ np.kron(A, K) @ Y), rel=1e-12)
    assert g == pytest.approx(np.sum(Y.sum(axis=0) ** 2), rel=1e-12)
    for _ in range(3):
        D = rng.normal(size=Y3.shape)
        fd_f = _central_difference(lambda Z: ev.objective_terms(Z)[0], Y3, D)
        fd_g = _central_difference(lambda Z: ev.objective_terms(Z)[2], Y3, D)
        assert np.vdot(grad_f, D) == pytest.approx(fd_f, rel=1e-7, abs=1e-8)
        assert np.vdot(np.broadcast_to(grad_g, Y3.shape), D) == pytest.approx(fd_g, rel=1e-7, abs=1e-8)


@pytest.mark.parametrize("m, c, r", [(7, 2, 1), (6, 3, 4)])
def test_constraint_gradients_match_finite_differences(m, c, r):
    rng = np.random.default_rng(1)
    K, A = random_instance(m, c)
    ev = AugmentedLagrangian(K, A, r, bias=0.1)
    Y3 = rng.uniform(size=(c, m, r))
    h_o, h_b, _ = ev.constraints(Y3)
    # the constraints themselves, against the dense operators of Lemmas 4-5
    Q = Y3.reshape(m * c, r) @ Y3.reshape(m * c, r).T
    odiag = np.array([[np.trace(Q[i * m:(i + 1) * m, j * m:(j + 1) * m]) for j in range(c)] for i in range(c)])
    bdiag = sum(Q[i * m:(i + 1) * m, i * m:(i + 1) * m] for i in range(c)) @ np.ones(m)
    np.testing.assert_allclose(h_o, (odiag - np.eye(c))[np.triu_indices(c)], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h_b, bdiag - 1, rtol=1e-12, atol=1e-12)
    # each single constraint's gradient (weights = unit vectors), and a random combination
    weights = [(np.eye(len(h_o))[k], np.zeros(m)) for k in range(len(h_o))]
    weights += [(np.zeros(len(h_o)), np.eye(m)[k]) for k in (0, m - 1)]
    weights += [(rng.normal(size=len(h_o)), rng.normal(size=m))]
    for w_o, w_b in weights:
        grad = ev.constraint_vjp(Y3, w_o, w_b)

        def weighted(Z, w_o=w_o, w_b=w_b):
            z_o, z_b, _ = ev.constraints(Z)
            return w_o @ z_o + w_b @ z_b

        for _ in range(2):
            D = rng.normal(size=Y3.shape)
            assert np.vdot(grad, D) == pytest.approx(_central_difference(weighted, Y3, D), rel=1e-7, abs=1e-8)
    # the directional derivative used by the restoration, and its adjointness with the vjp
    _, _, t = ev.constraints(Y3)
    D = rng.normal(size=Y3.shape)
    d_o, d_b = ev.constraint_jvp(Y3, D, t)
    for k in range(len(h_o)):
        fd = _central_difference(lambda Z, k=k: ev.constraints(Z)[0][k], Y3, D)
        assert d_o[k] == pytest.approx(fd, rel=1e-7, abs=1e-8)
    for k in range(m):
        fd = _central_difference(lambda Z, k=k: ev.constraints(Z)[1][k], Y3, D)
        assert d_b[k] == pytest.approx(fd, rel=1e-7, abs=1e-8)
    w_o, w_b = rng.normal(size=len(h_o)), rng.normal(size=m)
    assert w_o @ d_o + w_b @ d_b == pytest.approx(np.vdot(ev.constraint_vjp(Y3, w_o, w_b, t), D), rel=1e-10)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_restoration_reaches_the_constraints_near_a_perturbed_partition(seed):
    """Gauss-Newton on the face: from a partition's lift (rank r, disjoint supports) perturbed by
    noise, also in the entries another block owns, it returns a nonnegative factor with disjoint
    block supports, feasible to 1e-12, a short distance away."""
    rng = np.random.default_rng(seed)
    m, c, r = 12, 3, 2
    K, A = random_instance(m, c)
    ev = AugmentedLagrangian(K, A, r, bias=0.1)
    labels = np.arange(m) % c
    Y3 = np.zeros((c, m, r))
    Y3[labels, np.arange(m), :] = 1.0 / np.sqrt(m / c * r)  # feasible: the lift of the partition
    assert max(np.abs(np.concatenate(ev.constraints(Y3)[:2]))) < 1e-12
    noise = 1e-3 * rng.normal(size=Y3.shape)
    start = np.abs(Y3 + noise)
    assert max(np.abs(np.concatenate(ev.constraints(start)[:2]))) > 1e-4
    restored, infeasibility = restore_feasibility(ev, start, tol=1e-12)
    h_o, h_b, _ = ev.constraints(restored)
    assert infeasibility <= 1e-12 and max(np.abs(h_o).max(), np.abs(h_b).max()) <= 1e-12
    assert restored.min() >= 0
    assert np.all(np.count_nonzero(restored > 0, axis=0) <= 1)  # each entry in at most one block
    assert np.linalg.norm(restored - start) < 3 * np.linalg.norm(noise)


def test_restoration_shortens_the_solve_without_losing_the_objective():
    """The same instance with and without the restoration: both feasible to tol, the
    restoration in fewer inner iterations, objectives within 1% (different local solutions of
    a nonconvex problem may differ slightly)."""
    K, A, _ = blob_instance(60, 4)
    plain = lowrank(K, A, random_state=0, restore_below=0.0)
    fast = lowrank(K, A, random_state=0)
    assert plain.status == fast.status == "converged"
    assert fast.max_residual <= 1e-6 and plain.max_residual <= 1e-6
    assert any(row["restored"] for row in fast.history) and not any(row["restored"] for row in plain.history)
    assert fast.extras["inner_iterations"] < plain.extras["inner_iterations"]
    assert fast.objective == pytest.approx(plain.objective, rel=1e-2)


def test_augmented_lagrangian_gradient_matches_finite_differences():
    rng = np.random.default_rng(2)
    m, c, r = 6, 3, 2
    K, A = random_instance(m, c)
    ev = AugmentedLagrangian(K, A, r, bias=0.3)
    Y3 = rng.uniform(size=(c, m, r))
    y_o, y_b, sigma = rng.normal(size=ev.n_odiag), rng.normal(size=m), 7.0
    value, grad = ev.value_and_grad(Y3, y_o, y_b, sigma)
    f, _, g, _ = ev.objective_terms(Y3)
    h_o, h_b, _ = ev.constraints(Y3)
    h = np.concatenate([h_o, h_b])
    expected = -(f + 0.3 * g) / ev.scale - np.concatenate([y_o, y_b]) @ h + sigma / 2 * h @ h
    assert value == pytest.approx(expected, rel=1e-12)
    for _ in range(3):
        D = rng.normal(size=Y3.shape)
        fd = _central_difference(lambda Z: ev.value_and_grad(Z, y_o, y_b, sigma)[0], Y3, D)
        assert np.vdot(grad, D) == pytest.approx(fd, rel=1e-6, abs=1e-8)
    # and entrywise, on a few coordinates
    for index in [(0, 0, 0), (1, 3, 1), (2, 5, 0)]:
        E = np.zeros_like(Y3)
        E[index] = 1.0
        fd = _central_difference(lambda Z: ev.value_and_grad(Z, y_o, y_b, sigma)[0], Y3, E)
        assert grad[index] == pytest.approx(fd, rel=1e-6, abs=1e-8)


def test_objective_and_residuals_of_a_partition():
    """Y = vec(P) of a normalized partition is feasible and f(Y) = tr(K P A P^T) (Lemma 1)."""
    m, c = 9, 3
    K, A = random_instance(m, c)
    labels = np.array([0, 2, 1, 1, 0, 2, 2, 1, 0])
    P = partition_matrix(labels, c, normalization="l2")
    Y = P.T.reshape(-1, 1)  # vec stacks the columns
    assert lowrank_objective(K, A, Y) == pytest.approx(cluhsic_objective(K, A, P), rel=1e-12)
    res = lowrank_residuals(Y, m, c)
    assert max(res.values()) < 1e-14
    assert lowrank_residuals(2 * Y, m, c)["odiag"] == pytest.approx(3.0)


# -- the solver on tiny problems ------------------------------------------------------------

@pytest.mark.parametrize("kind, m, c, rank", [
    ("random", 8, 2, 3), ("random", 10, 3, 3), ("random", 12, 3, 10), ("blobs", 12, 3, 2), ("blobs", 9, 3, 1),
])
def test_feasible_and_below_sdp_optimum(kind, m, c, rank):
    K, A = random_instance(m, c)[:2] if kind == "random" else blob_instance(m, c)[:2]
    res = lowrank(K, A, rank=rank, random_state=0)
    assert isinstance(res, Result) and res.method == "lowrank"
    # no certified bound: the method's own rule met, never "optimal"
    assert res.status == "converged" and res.dual_bound is None and res.relative_gap is None
    assert res.X.shape == (m * c, rank)
    assert res.X.min() >= 0.0
    assert res.residuals["odiag"] <= 1e-6 and res.residuals["bdiag"] <= 1e-6
    assert res.max_residual <= 1e-6
    assert res.residuals == lowrank_residuals(res.X, m, c)
    # f is the objective of (5.23) at Q = Y Y^T, computed without the bias term
    Q = res.X @ res.X.T
    assert res.objective == pytest.approx(np.trace(np.kron(A, K) @ Q), rel=1e-10)
    assert res.extras["penalized_objective"] == pytest.approx(res.objective + 0.1 * Q.sum(), rel=1e-10)
    assert np.linalg.eigvalsh(Q).min() >= -1e-10 and Q.min() >= 0
    # Q is a feasible point of the SDP (5.23) itself, to its own residuals
    assert max(CLUHSICSDP(K, A).residuals(Q).values()) <= 1e-5
    # a feasible point of (5.23): its objective is a lower bound of the SDP optimum
    optimum = cached_optimum(kind, m, c)
    assert res.objective <= optimum + 1e-6 * abs(optimum)
    assert res.history[-1]["infeasibility"] <= 1e-6 and len(res.history) == res.iterations
    assert res.extras["inner_iterations"] >= res.iterations
    assert set(res.extras) == {"penalized_objective", "inner_iterations", "multipliers", "sigma", "scale",
                                "start_labels"}
    assert res.extras["multipliers"]["odiag"].shape == (c, c) and res.extras["multipliers"]["bdiag"].shape == (m,)
    np.testing.assert_array_equal(res.extras["multipliers"]["odiag"], res.extras["multipliers"]["odiag"].T)


@pytest.mark.parametrize("seed", range(3))
def test_blobs_lowrank_reaches_sdp_optimum(seed):
    """With bias = 0 and rank 10 the local solutions found on these blobs attain the SDP optimum
    (which exceeds every partition's objective: the relaxation (5.23) is not tight here).  With a
    smaller rank a seed can stop below it: a local solution of the nonconvex (5.26)."""
    K, A, y = blob_instance(12, 3)
    optimum = cached_optimum("blobs", 12, 3)
    res = lowrank(K, A, rank=10, bias=0.0, random_state=seed)
    assert res.objective == pytest.approx(optimum, rel=1e-5)
    assert res.objective > 1.2 * cluhsic_objective(K, A, partition_matrix(y, 3, normalization="l2"))


def test_reproducible_with_seed():
    K, A = random_instance(8, 2)
    a = lowrank(K, A, rank=2, random_state=3)
    b = lowrank(K, A, rank=2, random_state=3)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.objective == b.objective


def test_rank_one():
    K, A, _y = blob_instance(9, 3)
    res = lowrank(K, A, rank=1, random_state=1)
    assert res.status == "converged" and res.X.shape == (27, 1)
    assert res.max_residual <= 1e-6


def test_known_labels_fix_rows_to_zero():
    m, c = 12, 3
    K, A, _y = blob_instance(m, c)
    known = np.full(m, -1)
    known[[0, 5, 11]] = [2, 1, 0]  # against the data's chain order for points 0 and 11
    res = lowrank(K, A, rank=3, known=known, random_state=0)
    assert res.status == "converged" and res.max_residual <= 1e-6
    Y3 = res.X.reshape(c, m, -1)
    for point in (0, 5, 11):
        others = [i for i in range(c) if i != known[point]]
        assert np.all(Y3[others, point, :] == 0.0)
        assert np.linalg.norm(Y3[known[point], point]) > 0


def test_status_and_warning_when_a_limit_is_hit():
    K, A = random_instance(10, 3)
    with pytest.warns(ConvergenceWarning, match="lowrank"):
        res = lowrank(K, A, rank=3, max_iter=1, residual_tol=1e-12, random_state=0, restore_below=0.0)
    assert res.status == "max_iter" and res.iterations == 1
    assert res.max_residual > 1e-12
    # by default a limit still returns a feasible factor when the restoration reaches one
    with pytest.warns(ConvergenceWarning, match="lowrank"):
        restored = lowrank(K, A, rank=3, max_iter=1, residual_tol=1e-9, random_state=0)
    assert restored.status == "max_iter" and restored.max_residual <= 1e-9
    with pytest.warns(ConvergenceWarning, match="time limit"):
        res = lowrank(K, A, rank=3, time_limit=1e-9, random_state=0)
    assert res.status == "time_limit" and res.iterations == 0
    assert res.X.shape == (30, 3) and np.all(np.isfinite(res.X)) and res.X.min() >= 0


def test_starting_point():
    m, c = 9, 3
    K, A, y = blob_instance(m, c)
    Y0 = partition_matrix(y, c, normalization="l2").T.reshape(-1, 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = lowrank(K, A, Y0=Y0, bias=0.0)
    assert res.X.shape == (m * c, 1) and res.max_residual <= 1e-6
    with pytest.raises(ValueError, match="Y0"):
        lowrank(K, A, Y0=-Y0)
    with pytest.raises(ValueError, match="Y0"):
        lowrank(K, A, Y0=Y0[:-1])


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_the_result_names_the_labels_of_its_start():
    """``extras["start_labels"]``: the spectral start's labels (easy blobs in chain order: the
    blobs, up to the reversal the chain admits), ``init`` itself, or None for a random start or
    a given factor."""
    m, c = 12, 3
    K, A, y = blob_instance(m, c)
    spectral = lowrank(K, A, max_iter=2, random_state=0).extras["start_labels"]
    assert spectral.shape == (m,) and (np.array_equal(spectral, y) or np.array_equal(spectral, c - 1 - y))
    given = np.roll(y, 1)
    np.testing.assert_array_equal(lowrank(K, A, init=given, max_iter=2).extras["start_labels"], given)
    assert lowrank(K, A, init="random", max_iter=2, random_state=0).extras["start_labels"] is None
    Y0 = partition_matrix(y, c, normalization="l2").T.reshape(-1, 1)
    assert lowrank(K, A, Y0=Y0, max_iter=2).extras["start_labels"] is None


@pytest.mark.parametrize("kwargs, match", [
    ({"K": np.ones((3, 4))}, "K"),
    ({"K": np.triu(np.ones((6, 6)))}, "K"),
    ({"K": np.full((6, 6), np.nan)}, "K"),
    ({"A": np.ones((2, 3))}, "A"),
    ({"A": np.eye(7)}, "A"),
    ({"A": np.eye(1)}, "A"),
    ({"rank": 0}, "rank"),
    ({"rank": 2.5}, "rank"),
    ({"K": [["a"] * 6] * 6}, "K"),
    ({"bias": -0.1}, "bias"),
    ({"bias": np.inf}, "bias"),
    ({"bias": True}, "bias"),
    ({"known": np.zeros(5, dtype=int)}, "known"),
    ({"known": np.array([0, 1, 2, 3, -1, -1])}, "known"),
    ({"residual_tol": 0.0}, "residual_tol"),
    ({"random_state": "seed"}, "random_state"),
    ({"Y0": np.full((18, 2), np.nan)}, "Y0"),
    ({"max_iter": 0}, "max_iter"),
    ({"time_limit": -1.0}, "time_limit"),
    ({"sigma": 0.0}, "sigma"),
    ({"penalty_growth": 1.0}, "penalty_growth"),
    ({"decrease": 1.5}, "decrease"),
    ({"inner_max_iter": 0}, "inner_max_iter"),
    ({"restore_below": -1e-3}, "restore_below"),
    ({"restore_below": "yes"}, "restore_below"),
    ({"restore_stall": np.nan}, "restore_stall"),
    ({"init": "kmeans"}, "init"),
    ({"init": np.array([0, 1, 2, 3, 0, 1])}, "init"),
    ({"rank": 10**6}, "^rank must be at most"),  # hung
    ({"rank": 18 * 19 // 2 + 1}, "^rank must be at most"),
    ({"Y0": np.ones((18, 18 * 19 // 2 + 1))}, "^Y0 must have at most"),
    ({"Y0": np.ones((18, 2)) * (1 + 1j)}, "^Y0 must be real"),  # was cast to real with a ComplexWarning
    ({"random_state": True}, "'random_state'"),
])
def test_bad_input(kwargs, match):
    K, A = random_instance(6, 3)
    args = {"K": K, "A": A, **kwargs}
    with pytest.raises(ValueError, match=match):
        lowrank(args.pop("K"), args.pop("A"), **args)


def test_residual_helpers_check_input():
    with pytest.raises(ValueError, match="Y"):
        lowrank_residuals(np.ones((5, 2)), 3, 2)
    with pytest.raises(ValueError, match="c"):
        lowrank_residuals(np.ones((6, 2)), 3, 0)
    with pytest.raises(ValueError, match="Y"):
        lowrank_objective(np.eye(3), np.eye(2), np.full((6, 1), np.nan))
    # complex factors were cast to real with a ComplexWarning
    with pytest.raises(ValueError, match="^Y must be real"):
        lowrank_residuals(np.ones((6, 2)) * (1 + 1j), 3, 2)
    with pytest.raises(ValueError, match="^Y must be real"):
        lowrank_objective(np.eye(3), np.eye(2), np.ones((6, 1)) * (1 + 1j))


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_rank_up_to_the_bound_and_a_generator_are_accepted():
    """Every Y Y^T with Y >= 0 has a factor of m c (m c + 1) / 2 columns, so that rank is still
    accepted (the default 10 always is: m c >= 4); a Generator seeds the start, as documented
    (it was refused), equal generators giving equal runs."""
    K, A = random_instance(6, 3)
    res = lowrank(K, A, rank=18 * 19 // 2, max_iter=1, random_state=0)
    assert res.X.shape == (18, 171) and np.all(np.isfinite(res.X))
    K2, A2 = random_instance(2, 2)
    assert lowrank(K2, A2, max_iter=1, random_state=0).X.shape == (4, 10)
    first, second = (lowrank(K, A, max_iter=2, random_state=np.random.default_rng(7)) for _ in range(2))
    np.testing.assert_array_equal(first.X, second.X)


def test_alignment_restores_the_chain_order():
    """The spectral partition's clusters come in arbitrary order; the quadratic-assignment
    relabeling puts them back in chain order (up to the chain's reversal)."""
    m, c = 30, 5
    K, A, y = blob_instance(m, c)
    scrambled = np.array([3, 0, 4, 1, 2])[y]
    aligned = align_clusters(K, A, scrambled, random_state=0)
    assert (np.array_equal(aligned, y) or np.array_equal(aligned, c - 1 - y))
    P = lambda labels: partition_matrix(labels, c, normalization="l2")
    assert cluhsic_objective(K, A, P(aligned)) > cluhsic_objective(K, A, P(scrambled))


@pytest.mark.parametrize("init", ["spectral", "random"])
def test_starts_give_feasible_points(init):
    m, c = 30, 5
    K, A, y = blob_instance(m, c)
    res = lowrank(K, A, rank=5, init=init, random_state=0)
    assert res.status == "converged" and res.max_residual <= 1e-6


def test_spectral_start_beats_random_start_on_blobs():
    """On well-separated blobs along a chain the spectral start recovers the chain; the start
    is a labelling, so init=labels gives the same start."""
    m, c = 30, 5
    K, A, y = blob_instance(m, c)
    spectral_start = lowrank(K, A, rank=5, random_state=0)
    truth = lowrank(K, A, rank=5, init=y, random_state=0)
    np.testing.assert_allclose(spectral_start.objective, truth.objective, rtol=1e-4)
    exact = cluhsic_objective(K, A, partition_matrix(y, c, normalization="l2"))
    assert spectral_start.objective >= exact * (1 - 1e-4)


def test_old_option_names_are_refused():
    """The infeasibility tolerance is ``residual_tol``; with no certified bound there is no gap
    tolerance, so ``tol`` is refused, and the bias weight is ``bias``."""
    K, A = random_instance(6, 3)
    with pytest.raises(TypeError, match="tol"):
        lowrank(K, A, tol=1e-6)
    with pytest.raises(TypeError, match="gamma"):
        lowrank(K, A, gamma=0.1)


def test_inputs_are_not_modified():
    m, c = 12, 3
    K, A, y = blob_instance(m, c)
    known = np.full(m, -1)
    known[[0, 5]] = [2, 1]
    Y0 = partition_matrix(y, c, normalization="l2").T.reshape(-1, 1) + 0.01
    arguments = (K, A, known, Y0, y)
    copies = [a.copy() for a in arguments]
    lowrank(K, A, known=known, Y0=Y0, random_state=0)
    lowrank(K, A, known=known, init=y, rank=2, random_state=0)
    for original, copy in zip(arguments, copies):
        np.testing.assert_array_equal(original, copy)


def test_float32_kernel_gives_the_float64_answer():
    """A float32 kernel, symmetric only to its own rounding, is accepted and gives the same
    local solution as the float64 kernel it rounds, to float32 accuracy."""
    K, A, _ = blob_instance(12, 3)
    K32 = K.astype(np.float32)
    K32[0, 1] = np.nextafter(K32[0, 1], np.float32(np.inf))
    res32 = lowrank(K32, A, rank=3, random_state=0)
    res64 = lowrank(K, A, rank=3, random_state=0)
    assert res32.status == "converged"
    assert res32.objective == pytest.approx(res64.objective, rel=1e-5)
