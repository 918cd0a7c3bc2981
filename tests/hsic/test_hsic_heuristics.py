"""Greedy local search, the spectral relaxation (Proposition 2), CCCP (4.16)-(4.17) and the NMF
baseline: monotonicity, optimality certificates checked by brute force or by independent
eigendecompositions, semi-supervised known labels, the Result they return, limits and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import adjusted_rand_score

from cvxclust import Result
from cvxclust._local_search import labeling_statistics as _statistics
from cvxclust.hsic._greedy import move_gains
from cvxclust.hsic._heuristics import cccp, greedy, nmf, spectral
import cvxclust.cluhsic
from cvxclust.hsic._objectives import hsic, objective, partition_matrix
from cvxclust.kernels import center, rbf

CHAIN3 = np.array([[2.0, 1, 0], [1, 2, 1], [0, 1, 2]])  # p.d., eigenvalues 2 + sqrt2, 2, 2 - sqrt2


@pytest.fixture(scope="module")
def blobs():
    """Three well separated blobs along a line (a chain), 8 points each; centred rbf kernel."""
    rng = np.random.default_rng(0)
    y = np.repeat(np.arange(3), 8)
    X = np.column_stack([4.0 * y, np.zeros(24)]) + 0.5 * rng.standard_normal((24, 2))
    return center(rbf(X, 2.0)), y


def spectrum_kernel(m=12, top=(10.0, 6.0, 3.0), seed=0):
    """A p.s.d. (uncentred) kernel with prescribed, well separated top eigenvalues."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
    ev = np.concatenate([top, np.linspace(1.0, 0.0, m - len(top))])
    return (Q * ev) @ Q.T


def top_projector(K, c):
    w, U = np.linalg.eigh(K)
    assert w[-c] - w[-c - 1] > 1e-3  # the top-c subspace is well defined
    return U[:, -c:] @ U[:, -c:].T


def prop2_value(K, A):
    c = A.shape[0]
    lam = np.sort(np.linalg.eigvalsh(K))[::-1][:c]
    mu = np.sort(np.linalg.eigvalsh(A))[::-1]
    return float(lam @ mu)


def labels_value(K, A, labels, normalized=True):
    return objective(K, A, partition_matrix(labels, A.shape[0], normalization="l2" if normalized else None))


# ------------------------------------------------------------------------------------ greedy


@pytest.mark.parametrize("normalized", [True, False])
def test_move_gains_match_brute_force(normalized):
    rng = np.random.default_rng(0)
    m, c = 10, 4
    K = center(rbf(rng.standard_normal((m, 2))))
    A = rng.standard_normal((c, c))
    A = A @ A.T
    # cluster 3 empty, cluster 2 a singleton: moves that empty or fill a cluster are covered
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 2, 0, 1])
    KPi, S, sizes = _statistics(K, labels, c)
    for i in range(m):
        a = labels[i]
        gains = move_gains(A, S, sizes, KPi[i], K[i, i], a, normalized)
        before = labels_value(K, A, labels, normalized)
        for b in range(c):
            moved = labels.copy()
            moved[i] = b
            assert gains[b] - gains[a] == pytest.approx(labels_value(K, A, moved, normalized) - before, abs=1e-12)


@pytest.mark.parametrize("normalized", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_greedy_monotone_and_locally_optimal(blobs, normalized, seed):
    K, _ = blobs
    m, c = K.shape[0], 3
    normalization = "l2" if normalized else None
    res = greedy(K, CHAIN3, normalization=normalization, random_state=seed)
    assert isinstance(res, Result) and res.status == "converged" and res.method == "greedy"
    assert res.dual_bound is None
    labels = res.extras["labels"]
    f = np.array([res.history[0]["start_objective"]] + [row["objective"] for row in res.history])
    assert len(res.history) == res.iterations and res.history[-1]["moves"] == 0
    assert np.all(np.diff(f) >= -1e-12 * np.abs(f).max())
    assert f[-1] == pytest.approx(res.objective, abs=1e-12)
    assert res.objective == pytest.approx(labels_value(K, CHAIN3, labels, normalized), abs=1e-10)
    np.testing.assert_array_equal(res.X, partition_matrix(labels, c, normalization=normalization))
    assert res.extras["P"] is res.X and res.extras["relaxed_objective"] is None
    # no single move improves it (brute force over all m (c - 1) moves)
    for i in range(m):
        for b in range(c):
            moved = labels.copy()
            moved[i] = b
            assert labels_value(K, CHAIN3, moved, normalized) <= res.objective + 1e-10


def test_greedy_known_labels_stay_fixed(blobs):
    K, y = blobs
    m, c = K.shape[0], 3
    known = np.full(m, -1)
    known[[0, 8, 16]] = [2, 1, 0]  # one point per blob, the chain reversed
    known[5] = 0  # and a second point of blob 0, pinned to another cluster than point 0
    res = greedy(K, CHAIN3, known=known, random_state=0, n_init=3)
    pinned = known >= 0
    np.testing.assert_array_equal(res.extras["labels"][pinned], known[pinned])
    # a local optimum over the free points only
    for i in np.flatnonzero(~pinned):
        for b in range(c):
            moved = res.extras["labels"].copy()
            moved[i] = b
            assert labels_value(K, CHAIN3, moved) <= res.objective + 1e-10
    # starting from the truth relabelled, the pins hold too
    res = greedy(K, CHAIN3, init=2 - y, known=known, random_state=0)
    np.testing.assert_array_equal(res.extras["labels"][pinned], known[pinned])


def test_greedy_reproducible_and_n_init(blobs):
    K, _ = blobs
    first = greedy(K, CHAIN3, random_state=3, n_init=4)
    again = greedy(K, CHAIN3, random_state=3, n_init=4)
    np.testing.assert_array_equal(first.extras["labels"], again.extras["labels"])
    assert first.objective == again.objective
    singles = [greedy(K, CHAIN3, random_state=s).objective for s in range(3)]
    assert first.objective >= min(singles) - 1e-12


def test_greedy_iteration_limit_warns(blobs):
    K, _ = blobs
    with pytest.warns(ConvergenceWarning, match="greedy"):
        res = greedy(K, CHAIN3, max_iter=1, random_state=0)
    assert res.status == "max_iter" and res.iterations == 1


# ------------------------------------------------------------------------------------ spectral


@pytest.mark.parametrize("A", [CHAIN3, np.diag([3.0, 1.0, 0.0]), np.eye(3)], ids=["chain", "psd-singular", "I"])
def test_spectral_proposition2(A):
    K = spectrum_kernel()
    res = spectral(K, A, random_state=0)
    assert res.status == "converged" and res.iterations == 1 and res.dual_bound is None
    P = res.extras["P"]
    np.testing.assert_allclose(P.T @ P, np.eye(3), atol=1e-12)
    value = prop2_value(K, A)
    assert objective(K, A, P) == pytest.approx(value, abs=1e-10)
    assert res.extras["relaxed_objective"] == pytest.approx(value, abs=1e-10)
    np.testing.assert_array_equal(res.X, partition_matrix(res.extras["labels"], 3, normalization="l2"))
    assert res.objective == pytest.approx(objective(K, A, res.X), abs=1e-12)
    rng = np.random.default_rng(0)
    for _ in range(200):
        Q = np.linalg.qr(rng.standard_normal((K.shape[0], 3)))[0]
        assert objective(K, A, Q) <= value + 1e-10
    # P* P*^T = U_c U_c^T, the solution of the k-means relaxation (4.15)
    np.testing.assert_allclose(P @ P.T, top_projector(K, 3), atol=1e-10)


def test_spectral_ignores_A_and_recovers_blobs(blobs):
    K, y = blobs
    with_structure = spectral(K, CHAIN3, random_state=0)
    without = spectral(K, np.eye(3), random_state=0)
    P, P_without = with_structure.extras["P"], without.extras["P"]
    np.testing.assert_allclose(P @ P.T, P_without @ P_without.T, atol=1e-10)
    labels = with_structure.extras["labels"]
    np.testing.assert_array_equal(labels, without.extras["labels"])
    assert adjusted_rand_score(y, labels) == 1.0
    assert with_structure.objective == pytest.approx(labels_value(K, CHAIN3, labels), abs=1e-12)


# ------------------------------------------------------------------------------------ CCCP


@pytest.mark.parametrize("seed", [0, 1])
def test_cccp_monotone_and_reaches_the_spectral_relaxation(seed):
    K = spectrum_kernel(seed=seed)
    res = cccp(K, CHAIN3, random_state=seed)
    assert res.status == "converged" and res.method == "cccp" and res.dual_bound is None
    f = np.array([res.history[0]["start_objective"]] + [row["objective"] for row in res.history])
    assert np.all(np.diff(f) >= -1e-12 * np.abs(f).max())
    assert res.history[-1]["step"] <= 1e-10 < res.history[-2]["step"]  # stopped by its own rule
    value = prop2_value(K, CHAIN3)
    P = res.extras["P"]
    assert res.extras["relaxed_objective"] == pytest.approx(value, abs=1e-8)
    assert res.extras["relaxed_objective"] == res.history[-1]["objective"]
    np.testing.assert_allclose(P.T @ P, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(P @ P.T, top_projector(K, 3), atol=1e-9)
    np.testing.assert_array_equal(res.X, partition_matrix(res.extras["labels"], 3, normalization="l2"))
    assert res.objective == pytest.approx(objective(K, CHAIN3, res.X), abs=1e-12)


def test_cccp_from_a_partition_gives_the_spectral_labels(blobs):
    K, y = blobs
    bad_start = np.arange(K.shape[0]) % 3  # a partition unrelated to the blobs
    # lambda_1 and lambda_2 are close here: aligning P with V inside the top subspace is slow,
    # hence the larger iteration limit
    res = cccp(K, CHAIN3, init=bad_start, max_iter=10_000, random_state=0)
    assert res.status == "converged"
    f = np.array([res.history[0]["start_objective"]] + [row["objective"] for row in res.history])
    assert np.all(np.diff(f) >= -1e-12 * np.abs(f).max())
    assert res.extras["relaxed_objective"] == pytest.approx(prop2_value(K, CHAIN3), rel=1e-8)
    assert adjusted_rand_score(y, res.extras["labels"]) == 1.0


def test_cccp_iteration_limit_warns():
    with pytest.warns(ConvergenceWarning, match="cccp"):
        res = cccp(spectrum_kernel(), CHAIN3, max_iter=2, random_state=0)
    assert res.status == "max_iter" and res.iterations == 2


# ------------------------------------------------------------------------------------ NMF


@pytest.mark.parametrize("init", [None, "partition"])
def test_nmf_nonnegative_fixed_point_valid_labels(blobs, init):
    K, y = blobs
    m, c = K.shape[0], 3
    start = None if init is None else np.random.default_rng(1).integers(c, size=m)
    res = nmf(K, CHAIN3, init=start, random_state=0)
    assert res.status == "converged" and res.method == "nmf" and res.dual_bound is None
    assert res.history[-1]["step"] < 1e-6  # stopped by its own rule
    P = res.extras["P"]
    assert np.all(P >= 0)
    shifted = K - K.min()
    assert res.extras["relaxed_objective"] == pytest.approx(objective(shifted, CHAIN3, P), rel=1e-12)
    # the shifted objective rises over the run once the overlap of the start is gone
    # (not at every step: see the docstring)
    f = np.array([res.history[0]["start_objective"]] + [row["objective"] for row in res.history])
    assert f[-1] > f[1] * 1.2
    # near the constraint P^T P = I, at a fixed point of the update: P o (K+ P A - P P^T K+ P A) = 0
    assert res.history[-1]["orthogonality"] < 0.1 < res.history[0]["start_orthogonality"]
    gradient = shifted @ P @ CHAIN3
    kkt = np.abs(P * (gradient - P @ (P.T @ gradient))).max() / np.abs(P * gradient).max()
    assert kkt < 1e-4
    labels = res.extras["labels"]
    assert labels.shape == (m,) and np.issubdtype(labels.dtype, np.integer)
    assert labels.min() >= 0 and labels.max() < c
    np.testing.assert_array_equal(labels, np.argmax(P, axis=1))
    assert res.objective == pytest.approx(labels_value(K, CHAIN3, labels), abs=1e-12)
    np.testing.assert_array_equal(res.X, partition_matrix(labels, c, normalization="l2"))
    assert adjusted_rand_score(y, labels) == 1.0  # well separated blobs


def test_nmf_known_labels_stay_fixed(blobs):
    K, _ = blobs
    m = K.shape[0]
    known = np.full(m, -1)
    known[[0, 8, 16, 5]] = [2, 1, 0, 1]
    res = nmf(K, CHAIN3, known=known, random_state=0)
    assert res.status == "converged"
    pinned = np.flatnonzero(known >= 0)
    np.testing.assert_array_equal(res.extras["labels"][pinned], known[pinned])
    P = res.extras["P"]
    mask = np.ones_like(P, dtype=bool)
    mask[pinned, known[pinned]] = False
    assert np.all(P[pinned][mask[pinned]] == 0)
    assert np.all(P[pinned, known[pinned]] > 0)


def test_nmf_iteration_limit_warns(blobs):
    K, _ = blobs
    with pytest.warns(ConvergenceWarning, match="nmf"):
        res = nmf(K, CHAIN3, max_iter=3, random_state=0)
    assert res.status == "max_iter" and res.iterations == 3 and np.all(res.extras["P"] >= 0)


# ------------------------------------------------------------------------------------ bad input


@pytest.mark.parametrize("method", [greedy, spectral, cccp, nmf])
def test_bad_kernels(method, blobs):
    K, _ = blobs
    asym = K.copy()
    asym[0, 1] += 1.0
    with pytest.raises(ValueError, match="K"):
        method(asym, CHAIN3)
    nan = K.copy()
    nan[2, 2] = np.nan
    with pytest.raises(ValueError, match="K"):
        method(nan, CHAIN3)
    with pytest.raises(ValueError, match="A"):
        method(K, np.ones((1, 1)))
    with pytest.raises(ValueError, match="A"):
        method(K, np.ones((3, 2)))
    with pytest.raises(ValueError, match="normalization"):
        method(K, CHAIN3, normalization="yes")
    with pytest.raises(ValueError, match="normalized"):
        method(K, CHAIN3, normalized="yes")


@pytest.mark.parametrize("method", [spectral, cccp])
def test_psd_required(method, blobs):
    K, _ = blobs
    with pytest.raises(ValueError, match="A"):
        method(K, np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]]))
    with pytest.raises(ValueError, match="K"):
        method(-K, CHAIN3)


@pytest.mark.parametrize("method", [greedy, nmf])
def test_bad_known(method, blobs):
    K, _ = blobs
    m = K.shape[0]
    for known in (np.full(m, 3), np.full(m, -2), np.zeros(m - 1, dtype=int), np.full(m, 0.5)):
        with pytest.raises(ValueError, match="known"):
            method(K, CHAIN3, known=known)


def test_other_bad_arguments(blobs):
    K, _ = blobs
    m = K.shape[0]
    with pytest.raises(ValueError, match="n_init"):
        greedy(K, CHAIN3, init=np.zeros(m, dtype=int), n_init=2)
    with pytest.raises(ValueError, match="init"):
        greedy(K, CHAIN3, init=np.full(m, 5))
    with pytest.raises(ValueError, match="init"):
        cccp(K, CHAIN3, init=np.ones((m, 2)))
    with pytest.raises(ValueError, match="max_iter"):
        greedy(K, CHAIN3, max_iter=0)
    with pytest.raises(ValueError, match="A"):
        nmf(K, CHAIN3 - 1.5)  # negative entries: the multiplicative update needs A >= 0


def test_cccp_time_limit_before_the_first_update():
    K = spectrum_kernel()
    with pytest.warns(ConvergenceWarning, match="time limit"):
        res = cccp(K, CHAIN3, time_limit=1e-9, random_state=0)
    assert res.status == "time_limit" and res.iterations == 0
    np.testing.assert_allclose(res.extras["P"].T @ res.extras["P"], np.eye(3), atol=1e-12)  # the start
    assert res.objective == pytest.approx(labels_value(K, CHAIN3, res.extras["labels"]), abs=1e-12)


# ------------------------------------------------------------------------------------ inputs


def rounded_psd_kernel(m=30, seed=0):
    """A centred p.s.d. kernel moved by twice the float32 precision along its null vector 1, then
    rounded to float32: indefinite by far more than a float64 tolerance, as float32 data are."""
    X = np.random.default_rng(seed).standard_normal((m, 2))
    K = center(rbf(X))
    top = np.linalg.eigvalsh(K)[-1]
    K32 = (K - 2 * np.finfo(np.float32).eps * top * np.ones((m, m)) / m).astype(np.float32)
    w = np.linalg.eigvalsh(K32.astype(float))
    assert -1e-6 * w[-1] < w[0] < -1e-10 * w[-1]
    return K, K32


@pytest.mark.parametrize("method", [spectral, cccp])
def test_float32_psd_kernel_is_accepted(method):
    """p.s.d. to float32 precision is p.s.d. for a float32 kernel, and the answer is that of the
    float64 kernel; an indefinite one is still refused."""
    K, K32 = rounded_psd_kernel()
    res32, res64 = method(K32, CHAIN3, random_state=0), method(K, CHAIN3, random_state=0)
    assert adjusted_rand_score(res64.extras["labels"], res32.extras["labels"]) == 1.0
    assert res32.extras["relaxed_objective"] == pytest.approx(res64.extras["relaxed_objective"], rel=1e-5)
    with pytest.raises(ValueError, match="K"):
        method((K - 1e-3 * np.abs(K).max() * np.eye(K.shape[0])).astype(np.float32), CHAIN3)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # the inputs are what matters
@pytest.mark.parametrize("method", [greedy, spectral, cccp, nmf])
def test_inputs_are_not_modified(method, blobs):
    K, y = blobs
    m = K.shape[0]
    A = CHAIN3.copy()
    kwargs = {"random_state": 0}
    if method in (greedy, nmf):
        kwargs["known"] = np.where(np.arange(m) % 5 == 0, y, -1)
    if method is not spectral:
        kwargs["init"] = (y + 1) % 3
    arrays = [K, A, *(v for v in kwargs.values() if isinstance(v, np.ndarray))]
    copies = [a.copy() for a in arrays]
    method(K, A, **kwargs)
    for original, copy in zip(arrays, copies):
        np.testing.assert_array_equal(original, copy)


def test_objective_checks_its_inputs(blobs):
    K, y = blobs
    P = partition_matrix(y, 3, normalization="l2")
    for bad, name in [(dict(K=np.where(np.eye(K.shape[0]) > 0, np.nan, K)), "K"),
                      (dict(A=np.full((3, 3), np.nan)), "A"),
                      (dict(P=np.full_like(P, np.inf)), "P"),
                      (dict(P=P * (1 + 1j)), "P"),  # was cast to real with a ComplexWarning
                      (dict(P=P[:, :2]), "P"),
                      (dict(K=K[:-1, :-1]), "P"),
                      (dict(K=np.triu(K)), "K")]:
        args = {"K": K, "A": CHAIN3, "P": P, **bad}
        with pytest.raises(ValueError, match=name):
            objective(args["K"], args["A"], args["P"])
    assert objective(K.astype(np.float32), CHAIN3, P) == pytest.approx(objective(K, CHAIN3, P), rel=1e-6)


@pytest.mark.parametrize("method", [greedy, spectral, cccp, nmf])
@pytest.mark.parametrize("seed", [True, -1, 2.5, 2**32, "0", [0]])
def test_bad_random_state_is_refused_naming_it(method, seed, blobs):
    """``True`` was accepted as the seed 1, and ``-1`` or ``2.5`` gave numpy's messages."""
    K, _ = blobs
    with pytest.raises((ValueError, TypeError), match="'random_state'"):
        method(K, CHAIN3, random_state=seed)


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("method", [greedy, spectral, cccp, nmf])
def test_random_state_takes_a_seed_a_random_state_or_a_generator(method, blobs):
    """A Generator, as documented, was refused; it now draws from its bit generator, so equal
    generators give equal runs, and a seed and ``RandomState(seed)`` give the same run."""
    K, _ = blobs
    runs = [method(K, CHAIN3, random_state=rng) for rng in
            (np.random.default_rng(3), np.random.default_rng(3), 5, np.random.RandomState(5))]
    for first, second in (runs[:2], runs[2:]):
        np.testing.assert_array_equal(first.extras["labels"], second.extras["labels"])
        assert first.objective == second.objective


@pytest.mark.parametrize("flag", ["no", "", 1, 0, None, np.array([True])])
def test_flags_are_booleans_not_truthy_values(flag, blobs):
    """``normalized="no"`` gave the normalized matrix and ``centered="no"`` skipped the centring."""
    K, y = blobs
    with pytest.raises(ValueError, match="^normalized"):
        partition_matrix(y, 3, normalized=flag)
    with pytest.raises(ValueError, match="^centered"):
        hsic(K, K, centered=flag)
    with pytest.warns(FutureWarning, match="normalized= is renamed normalization="):
        old = partition_matrix(y, 3, normalized=np.True_)
    np.testing.assert_array_equal(old, partition_matrix(y, 3, normalization="l2"))
    assert hsic(K, K, centered=np.False_) == hsic(K, K, centered=False)


def test_the_unchecked_trace_is_not_exported():
    """``trace_objective`` trusts its inputs (NaN in, NaN out; a 3-D P accepted): the package
    and the family export the checked :func:`objective` only."""
    for module in (cvxclust.hsic, cvxclust.cluhsic):
        assert "trace_objective" not in module.__all__
        assert not hasattr(module, "trace_objective")
