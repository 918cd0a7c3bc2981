"""``cvxclust.bregman.omega``: Algorithm 2 and the dual norm of Theorem 3 against their cvxpy
statements (Clarabel), the closed forms at the ends of the d range, the eigenvalue problem (18)
solved directly, norm axioms and duality as hypothesis property tests, the subgradient oracle
(subgradient inequality, equality case, finite differences) and input checks."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cvxclust.bregman._omega import (
    omega,
    omega_dual,
    omega_dual_subgradient,
    omega_eigenvalues,
    omega_optimal_M,
    omega_squared_value,
)
from cvxclust.bregman._problem import omega_dual_problem, omega_dual_squared_problem, omega_squared_problem

SDP_RTOL = 1e-6


def solved(problem: cp.Problem, domain: str) -> cp.Problem:
    """Solve with Clarabel.  M2 has no strictly feasible point (M 1 = 1 puts the eigenvalue 1 of
    M on the boundary of M << I), so Clarabel may end "optimal_inaccurate" there; the value is
    still checked to SDP_RTOL by the caller."""
    with warnings.catch_warnings():
        if domain == "M2":
            warnings.filterwarnings("ignore", "Solution may be inaccurate", UserWarning)
        problem.solve(solver="CLARABEL")
    allowed = {"optimal"} if domain == "M3" else {"optimal", "optimal_inaccurate"}
    assert problem.status in allowed
    return problem
PROPERTY = settings(max_examples=60, deadline=None, database=None)


def random_matrix(t: int, n: int, rank: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.standard_normal((t, rank)) @ rng.standard_normal((rank, n))


def nuclear(A):
    return np.linalg.svd(A, compute_uv=False).sum()


def check_in_set(M: np.ndarray, d: int, domain: str, atol: float) -> None:
    """M is symmetric with eigenvalues in [0, 1] and the trace / row-sum constraints of M3 or M2."""
    np.testing.assert_allclose(M, M.T, atol=atol)
    w = np.linalg.eigvalsh(M)
    assert w.min() >= -atol and w.max() <= 1 + atol
    if domain == "M3":
        assert np.trace(M) <= d - 1 + atol
    else:
        assert np.trace(M) <= d + atol
        np.testing.assert_allclose(M @ np.ones(len(M)), np.ones(len(M)), atol=atol)


# (t, n, rank, d, domain): tall, wide, square; full rank, rank < d - 1, rank 1; d = 2 .. t
SDP_CASES = [
    (5, 3, 3, 2, "M3"),
    (6, 6, 6, 3, "M3"),
    (6, 4, 2, 4, "M3"),
    (4, 7, 4, 3, "M3"),
    (7, 5, 1, 3, "M3"),
    (6, 5, 5, 6, "M3"),
    (8, 3, 3, 5, "M3"),
    (7, 5, 5, 3, "M2"),
    (5, 7, 5, 5, "M2"),
    (6, 4, 2, 4, "M2"),
    (6, 3, 3, 2, "M2"),
]


# -- Algorithm 2 against the matrix-fractional SDP ------------------------------------------------


@pytest.mark.parametrize("t, n, rank, d, domain", SDP_CASES)
def test_algorithm2_matches_the_sdp(t, n, rank, d, domain):
    T = random_matrix(t, n, rank, seed=100 * t + 10 * n + d)
    problem = solved(omega_squared_problem(T, d, domain=domain), domain)
    value = omega(T, d, domain=domain) ** 2
    assert abs(problem.value - value) <= SDP_RTOL * value
    # the SDP's own M is feasible for the stated set
    M_sdp = next(v for v in problem.variables() if v.name() == "M").value
    check_in_set(M_sdp, d, domain, atol=1e-6)
    # the closed-form minimiser lies in the set, covers Im(T) and attains the value
    M = omega_optimal_M(T, d, domain=domain)
    check_in_set(M, d, domain, atol=1e-10)
    Mp = np.linalg.pinv(M, rcond=1e-10, hermitian=True)
    np.testing.assert_allclose(M @ Mp @ T, T, atol=1e-9 * np.abs(T).max())
    assert np.trace(T.T @ Mp @ T) == pytest.approx(value, rel=1e-9)


def test_sdp_parameter_resolves_with_new_data():
    T1, T2 = random_matrix(5, 4, 4, 1), random_matrix(5, 4, 2, 2)
    problem = omega_squared_problem(T1, 3)
    problem.solve(solver="CLARABEL")
    assert problem.value == pytest.approx(omega(T1, 3) ** 2, rel=SDP_RTOL)
    next(p for p in problem.parameters() if p.name() == "T").value = T2
    problem.solve(solver="CLARABEL")
    assert problem.value == pytest.approx(omega(T2, 3) ** 2, rel=SDP_RTOL)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("d", [2, 3, 5, 9])
def test_algorithm2_solves_the_eigenvalue_problem_18(seed, d):
    """f(s) of Algorithm 2 equals min sum s_i^2 / sigma_i over sigma in [0,1], sum <= d-1, and
    omega_eigenvalues returns a feasible sigma attaining it (ties and zeros included)."""
    rng = np.random.default_rng(seed)
    s = rng.exponential(size=7)
    if seed % 2:
        s[rng.integers(0, 7, 3)] = 0.0  # zeros
    if seed % 3 == 0:
        s[1:4] = s[0]  # ties
    sigma = cp.Variable(len(s))
    objective = sum(cp.quad_over_lin(si, sigma[i]) for i, si in enumerate(s) if si > 0)
    problem = cp.Problem(cp.Minimize(objective), [sigma >= 0, sigma <= 1, cp.sum(sigma) <= d - 1])
    problem.solve(solver="CLARABEL")
    value = omega_squared_value(s, d)
    assert value == pytest.approx(problem.value, rel=SDP_RTOL)
    w = omega_eigenvalues(s, d)
    assert w.min() >= 0 and w.max() <= 1 and w.sum() <= d - 1 + 1e-12
    assert np.all(w[s > 0] > 0)
    assert np.sum(s[s > 0] ** 2 / w[s > 0]) == pytest.approx(value, rel=1e-12)
    # order of s does not matter; sigma follows its entries
    perm = rng.permutation(len(s))
    assert omega_squared_value(s[perm], d) == pytest.approx(value, rel=1e-14)
    np.testing.assert_allclose(omega_eigenvalues(s[perm], d), w[perm], rtol=1e-14)


# -- closed forms ---------------------------------------------------------------------------------


@pytest.mark.parametrize("domain", ["M3", "M2"])
def test_ends_of_the_d_range(domain):
    """d = 2: Omega is the nuclear norm and Omega_* the spectral norm; d - 1 >= rank: Omega is
    the Frobenius norm; d - 1 >= min(t, n): Omega_* is too (on H T and J T for M2)."""
    T = random_matrix(8, 5, 5, 3)
    if domain == "M3":
        H, J = np.eye(8), np.zeros((8, 8))
    else:
        J = np.full((8, 8), 1 / 8)
        H = np.eye(8) - J
    frob_J = np.linalg.norm(J @ T) ** 2
    assert omega(T, 2, domain=domain) == pytest.approx(np.sqrt(nuclear(H @ T) ** 2 + frob_J), rel=1e-12)
    assert omega_dual(T, 2, domain=domain) == pytest.approx(
        np.sqrt(np.linalg.norm(H @ T, 2) ** 2 + frob_J), rel=1e-12)
    assert omega(T, 6, domain=domain) == pytest.approx(np.linalg.norm(T), rel=1e-12)
    assert omega_dual(T, 8, domain=domain) == pytest.approx(np.linalg.norm(T), rel=1e-12)
    low = random_matrix(8, 5, 2, 4)
    assert omega(low, 3, domain="M3") == pytest.approx(np.linalg.norm(low), rel=1e-12)


def test_omega_decreases_and_dual_increases_with_d():
    T = random_matrix(9, 6, 6, 5)
    values = [omega(T, d) for d in range(2, 10)]
    duals = [omega_dual(T, d) for d in range(2, 10)]
    assert np.all(np.diff(values) <= 1e-12) and np.all(np.diff(duals) >= -1e-12)
    assert values[0] > values[-1] and duals[0] < duals[-1]


# -- the dual norm against its two cvxpy statements -----------------------------------------------


@pytest.mark.parametrize("t, n, rank, d, domain", SDP_CASES)
def test_dual_norm_matches_the_sdps(t, n, rank, d, domain):
    R = random_matrix(t, n, rank, seed=7 + 100 * t + 10 * n + d)
    value = omega_dual(R, d, domain=domain)
    by_definition = solved(omega_dual_problem(R, d, domain=domain), domain)
    assert abs(by_definition.value - value) <= SDP_RTOL * value
    conjugate = solved(omega_dual_squared_problem(R, d, domain=domain), domain)
    assert abs(conjugate.value - value**2) <= SDP_RTOL * value**2


@pytest.mark.parametrize("domain", ["M3", "M2"])
def test_sdp_maximiser_is_the_subgradient(domain):
    """With a spectral gap r_{d-1} > r_d the maximiser of <R, T> over the unit ball is unique
    and equals omega_dual_subgradient(R).  The interior-point maximiser is accurate to about the
    square root of the solver tolerance (about 1e-5 here), far below the size of the entries
    of G (up to 0.45 for this R)."""
    R = random_matrix(6, 5, 5, 11)
    problem = solved(omega_dual_problem(R, 3, domain=domain), domain)
    T = next(v for v in problem.variables() if v.name() == "T").value
    np.testing.assert_allclose(T, omega_dual_subgradient(R, 3, domain=domain), atol=1e-4)


# -- norm axioms and duality (hypothesis) ---------------------------------------------------------


@st.composite
def matrices_and_d(draw, count=1, scale=10.0):
    t = draw(st.integers(2, 7))
    n = draw(st.integers(1, 6))
    d = draw(st.integers(2, t))
    elements = st.floats(-scale, scale, allow_nan=False, allow_subnormal=False)
    mats = [draw(arrays(np.float64, (t, n), elements=elements)) for _ in range(count)]
    return (*mats, d)


def orthogonal(k: int, seed: int) -> np.ndarray:
    Q, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((k, k)))
    return Q


def tol(*mats) -> float:
    return 1e-10 * max(1.0, *(nuclear(A) for A in mats))


NORMS = [
    pytest.param(lambda A, d: omega(A, d), id="omega-M3"),
    pytest.param(lambda A, d: omega(A, d, domain="M2"), id="omega-M2"),
    pytest.param(lambda A, d: omega_dual(A, d), id="dual-M3"),
    pytest.param(lambda A, d: omega_dual(A, d, domain="M2"), id="dual-M2"),
]


@pytest.mark.parametrize("norm", NORMS)
@PROPERTY
@given(data=matrices_and_d(count=2), a=st.floats(-5, 5, allow_nan=False))
def test_norm_axioms(norm, data, a):
    A, B, d = data
    e = tol(A, B)
    assert norm(a * A, d) == pytest.approx(abs(a) * norm(A, d), rel=1e-10, abs=e)  # homogeneity
    assert norm(A + B, d) <= norm(A, d) + norm(B, d) + e  # triangle inequality
    # definiteness, quantified: ||A||_2 <= Omega_*(A) <= ||A||_F <= Omega(A) <= ||A||_*
    value = norm(A, d)
    assert np.linalg.norm(A, 2) - e <= value <= nuclear(A) + e
    # zero exactly at A = 0 (not "np.linalg.norm(A) == 0": that underflows for entries ~1e-160)
    assert (value == 0) == (not np.any(A))
    assert norm(np.zeros_like(A), d) == 0.0


@PROPERTY
@given(data=matrices_and_d(), seed=st.integers(0, 2**32 - 1))
def test_unitary_invariance(data, seed):
    """M3: Omega(U A V) = Omega(A) for orthogonal U, V.  M2: U must fix the ones vector (a row
    permutation); any V on the right."""
    A, d = data
    t, n = A.shape
    U, V = orthogonal(t, seed), orthogonal(n, seed + 1)
    P = np.eye(t)[np.random.default_rng(seed).permutation(t)]
    e = tol(A)
    assert omega(U @ A @ V, d) == pytest.approx(omega(A, d), rel=1e-10, abs=e)
    assert omega_dual(U @ A @ V, d) == pytest.approx(omega_dual(A, d), rel=1e-10, abs=e)
    for norm in (omega, omega_dual):
        assert norm(P @ A @ V, d, domain="M2") == pytest.approx(norm(A, d, domain="M2"), rel=1e-10, abs=e)


@pytest.mark.parametrize("domain", ["M3", "M2"])
@PROPERTY
@given(data=matrices_and_d(count=2))
def test_duality_inequality(domain, data):
    """<R, T> <= Omega(T) Omega_*(R), with equality at T = omega_dual_subgradient(R)."""
    T, R, d = data
    e = tol(T, R) * max(1.0, nuclear(R), nuclear(T))
    assert np.sum(R * T) <= omega(T, d, domain=domain) * omega_dual(R, d, domain=domain) + e
    G, value = omega_dual_subgradient(R, d, domain=domain, return_value=True)
    assert np.sum(G * R) == pytest.approx(value, rel=1e-10, abs=e)
    if value > 0:
        assert omega(G, d, domain=domain) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("domain", ["M3", "M2"])
@pytest.mark.parametrize("scale", [1e-160, 1e-100, 1e100, 1e150])
def test_extreme_scales_by_homogeneity(domain, scale):
    """Squares of entries near 1e-160 underflow to subnormals: hypothesis found Omega(G) != 1 for
    R = 1e-160 * 1 (fixed by scaling to max |R| ~ 1 first, both norms being homogeneous)."""
    T = random_matrix(6, 4, 3, seed=5) + 2.0  # a large mean: the M2 path splits it off
    d = 3
    assert omega(scale * T, d, domain=domain) == pytest.approx(scale * omega(T, d, domain=domain), rel=1e-12)
    assert omega_dual(scale * T, d, domain=domain) == pytest.approx(scale * omega_dual(T, d, domain=domain),
                                                                     rel=1e-12)
    for R in (scale * T, scale * np.ones((2, 1))):
        G, value = omega_dual_subgradient(R, 2, domain=domain, return_value=True)
        assert value > 0 and np.sum(G * R) == pytest.approx(value, rel=1e-12)
        assert omega(G, 2, domain=domain) == pytest.approx(1.0, rel=1e-12)


# -- the subgradient oracle -----------------------------------------------------------------------


@pytest.mark.parametrize("domain", ["M3", "M2"])
@pytest.mark.parametrize("t, n, rank, d", [(6, 4, 4, 3), (5, 8, 5, 2), (9, 5, 2, 5), (7, 3, 3, 7)])
def test_subgradient_inequality(t, n, rank, d, domain):
    R = random_matrix(t, n, rank, seed=t * n + d)
    G, value = omega_dual_subgradient(R, d, domain=domain, return_value=True)
    assert value == pytest.approx(omega_dual(R, d, domain=domain), rel=1e-14)
    assert np.sum(G * R) == pytest.approx(value, rel=1e-12)
    assert omega(G, d, domain=domain) == pytest.approx(1.0, rel=1e-12)
    assert np.linalg.matrix_rank(G) <= (d - 1 if domain == "M3" else d)
    rng = np.random.default_rng(0)
    for scale in (1e-3, 1.0, 10.0):
        Q = R + scale * rng.standard_normal(R.shape)
        assert omega_dual(Q, d, domain=domain) >= value + np.sum(G * (Q - R)) - 1e-12 * (1 + scale)
    # -G is the conditional-gradient direction: it minimises <R, S> over the unit ball
    for _ in range(20):
        S = rng.standard_normal(R.shape)
        S /= omega(S, d, domain=domain)
        assert np.sum(R * S) >= np.sum(R * -G) - 1e-12 * value


def test_subgradient_at_zero_is_zero():
    G, value = omega_dual_subgradient(np.zeros((4, 3)), 3, return_value=True)
    assert value == 0.0 and np.array_equal(G, np.zeros((4, 3)))
    G2, value2 = omega_dual_subgradient(np.zeros((4, 3)), 3, domain="M2", return_value=True)
    assert value2 == 0.0 and np.array_equal(G2, np.zeros((4, 3)))


@pytest.mark.parametrize("domain", ["M3", "M2"])
@pytest.mark.parametrize("t, n, d", [(5, 4, 3), (6, 3, 2), (4, 6, 4), (5, 2, 5)])
def test_subgradient_is_the_gradient_by_finite_differences(t, n, d, domain):
    """Omega_* is differentiable where r_{d-1} > r_d (random R has a gap): central differences
    of every entry match G."""
    R = random_matrix(t, n, min(t, n), seed=3 * t + n + d)
    G = omega_dual_subgradient(R, d, domain=domain)
    h = 1e-6
    numeric = np.empty_like(R)
    for idx in np.ndindex(R.shape):
        E = np.zeros_like(R)
        E[idx] = h
        numeric[idx] = (omega_dual(R + E, d, domain=domain) - omega_dual(R - E, d, domain=domain)) / (2 * h)
    np.testing.assert_allclose(numeric, G, atol=1e-7)


def test_finite_differences_see_the_kink_without_a_gap():
    """Sanity check that the finite-difference test can fail: with r_{d-1} = r_d the one-sided
    slopes differ and G is only one subgradient."""
    R = np.diag([3.0, 1.0, 1.0, 0.5])
    h = 1e-6
    E = np.zeros((4, 4))
    E[2, 2] = h
    forward = (omega_dual(R + E, 3) - omega_dual(R, 3)) / h
    backward = (omega_dual(R, 3) - omega_dual(R - E, 3)) / h
    assert forward - backward > 0.1


def test_arpack_and_full_svd_agree():
    R = random_matrix(60, 40, 40, 5)
    G_full, v_full = omega_dual_subgradient(R, 5, svd_solver="full", return_value=True)
    G_arp, v_arp = omega_dual_subgradient(R, 5, svd_solver="arpack", random_state=0, return_value=True)
    assert v_arp == pytest.approx(v_full, rel=1e-12)
    np.testing.assert_allclose(G_arp, G_full, atol=1e-10)
    # d - 1 >= min(t, n): ARPACK cannot return them all and the dense SVD is used
    small = random_matrix(6, 3, 3, 6)
    assert omega_dual(small, 5, svd_solver="arpack") == pytest.approx(np.linalg.norm(small), rel=1e-12)
    # "auto" on a matrix large enough for ARPACK
    big = random_matrix(320, 300, 300, 8)
    assert omega_dual(big, 4, random_state=1) == pytest.approx(omega_dual(big, 4, svd_solver="full"), rel=1e-12)


@pytest.mark.parametrize("svd_solver", ["arpack", "full"])
def test_omega_dual_random_state_is_the_projects(svd_solver):
    """A Generator (documented) is accepted; True, a string or a negative seed raise naming
    random_state, whichever solver (sklearn's check_random_state took True as a seed and
    refused a Generator)."""
    R = random_matrix(60, 40, 40, 5)
    full = omega_dual(R, 5, svd_solver="full")
    assert omega_dual(R, 5, svd_solver=svd_solver, random_state=np.random.default_rng(0)) == pytest.approx(
        full, rel=1e-12)
    for bad in (True, "seed", -1, 1.5):
        for fn in (omega_dual, omega_dual_subgradient):
            with pytest.raises(ValueError, match="'random_state' parameter"):
                fn(R, 5, svd_solver=svd_solver, random_state=bad)


# -- bad input ------------------------------------------------------------------------------------


GOOD = np.arange(12.0).reshape(4, 3)

BAD_CALLS = [
    (lambda: omega(np.ones(4), 2), "T"),
    (lambda: omega(np.ones((2, 2, 2)), 2), "T"),
    (lambda: omega([[1.0, np.nan], [0.0, 1.0]], 2), "T"),
    (lambda: omega([["a", "b"]], 2), "T"),
    (lambda: omega(GOOD, 1), "n_clusters"),
    (lambda: omega(GOOD, 5), "n_clusters"),
    (lambda: omega(GOOD, 2.5), "n_clusters"),
    (lambda: omega(GOOD, True), "n_clusters"),
    (lambda: omega(GOOD, 2, domain="M1"), "domain"),
    (lambda: omega_optimal_M(GOOD, 7), "n_clusters"),
    (lambda: omega_dual(np.full((3, 2), np.inf), 2), "R"),
    (lambda: omega_dual(GOOD, 0), "n_clusters"),
    (lambda: omega_dual(GOOD, 2, svd_solver="lobpcg"), "svd_solver"),
    (lambda: omega_dual_subgradient(GOOD, 2, domain="M4"), "domain"),
    (lambda: omega_squared_value([1.0, -0.5], 2), "s"),
    (lambda: omega_squared_value([[1.0]], 2), "s"),
    (lambda: omega_squared_value([], 2), "s"),
    (lambda: omega_squared_value([1.0, np.nan], 2), "s"),
    (lambda: omega_squared_value([1.0], 1), "d"),
    (lambda: omega_eigenvalues([1.0], 2.0), "d"),
    (lambda: omega_squared_problem(GOOD, 5), "n_clusters"),
    (lambda: omega_dual_problem(np.ones(3), 2), "R"),
    (lambda: omega_dual_squared_problem(GOOD, 3, domain="M"), "domain"),
]


@pytest.mark.parametrize("call, name", BAD_CALLS)
def test_bad_input_raises_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=rf"\b{name}\b"):
        call()
