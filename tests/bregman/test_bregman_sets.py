"""The sets M, M1, M2, M3 of the bregman paper (Section 3.1), their closed-form projections
(Lemma 1, (13)) against cvxpy, and the M1 != conv(M) certificate (Appendix A)."""

import itertools
import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import linprog
from scipy.special import stirling2

from cvxclust.linalg import project_simplex, project_simplex_rows

from cvxclust.bregman.sets import (
    M2Projector,
    constraints_M1,
    constraints_M2,
    constraints_M3,
    enumerate_equivalence_matrices,
    equivalence_matrix,
    is_equivalence_matrix,
    m1_not_convex_hull_example,
    project_M2,
    project_M3,
    residuals_M1,
    residuals_M2,
    residuals_M3,
    spectral_threshold,
)

CLARABEL_TIGHT = {"solver": "CLARABEL", "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                  "tol_ktratio": 1e-10, "max_iter": 500}


def solve_tight(problem):
    """Solve with Clarabel at tolerance 1e-10, or looser (1e-9, 1e-8) when a tighter one ends
    'optimal_inaccurate' (interior-point round-off on some SDPs); the status must end 'optimal'.
    The callers then compare with the closed forms at 1e-6."""
    for tol in (1e-10, 1e-9, 1e-8):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # cvxpy's "may be inaccurate"
            problem.solve(**{**CLARABEL_TIGHT, "tol_gap_abs": tol, "tol_gap_rel": tol, "tol_feas": tol})
        if problem.status == "optimal":
            break
    assert problem.status == "optimal"
    return problem.value


def random_symmetric(rng, t, scale=1.0):
    A = rng.standard_normal((t, t)) * scale
    return (A + A.T) / 2


def random_M3_point(rng, t, d):
    """A member of M3 built from its definition: random eigenvectors, eigenvalues in [0, 1]
    summing to at most d - 1."""
    Q, _ = np.linalg.qr(rng.standard_normal((t, t)))
    mu = rng.uniform(0, 1, t)
    mu *= min(1.0, (d - 1) / mu.sum()) * rng.uniform(0.5, 1.0)
    return (Q * mu) @ Q.T


def random_M2_point(rng, t, d):
    """A member of M2 built from its definition (not through Lemma 1): eigenvector 1/sqrt(t)
    with eigenvalue 1, the others orthogonal to 1 with eigenvalues in [0, 1] summing to <= d - 1."""
    basis = np.linalg.qr(np.column_stack([np.ones(t), rng.standard_normal((t, t - 1))]))[0]
    Q = basis[:, 1:]  # orthonormal basis of 1-perp
    mu = rng.uniform(0, 1, t - 1)
    mu *= min(1.0, (d - 1) / mu.sum()) * rng.uniform(0.5, 1.0)
    return (Q * mu) @ Q.T + np.ones((t, t)) / t


def cvxpy_projection(A, d, constraints):
    t = A.shape[0]
    M = cp.Variable((t, t), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(M - A)), constraints(M, d))
    solve_tight(problem)
    return M.value


def max_violation(res):
    return max(res.values())


# ------------------------------------------------------------------------------------------
# the exact set M
# ------------------------------------------------------------------------------------------

def test_equivalence_matrix_is_Y_pinv_YtY_Yt():
    labels = np.array([0, 2, 2, 0, 0, 2])  # cluster 1 empty
    Y = np.eye(3)[labels]
    M = equivalence_matrix(labels, 3)
    np.testing.assert_allclose(M, Y @ np.linalg.pinv(Y.T @ Y) @ Y.T, atol=1e-14)
    np.testing.assert_allclose(M @ M, M, atol=1e-14)
    np.testing.assert_allclose(M.sum(axis=1), 1.0)
    assert np.trace(M) == pytest.approx(2.0)
    assert is_equivalence_matrix(M) and is_equivalence_matrix(M, 2)


def test_is_equivalence_matrix_rejects_non_members():
    rng = np.random.default_rng(0)
    labels = np.array([0, 1, 2, 1, 0, 2, 2])
    M = equivalence_matrix(labels, 3)
    assert is_equivalence_matrix(M, 3)
    assert not is_equivalence_matrix(M, 2)  # three blocks, at most two allowed
    assert not is_equivalence_matrix(M + 1e-4 * random_symmetric(rng, 7))
    assert not is_equivalence_matrix(np.eye(7) * 0.5 + 0.5 / 7)  # a member of M2, not of M
    assert not is_equivalence_matrix(m1_not_convex_hull_example()["point"])
    N = M.copy()
    N[0, 1] += 1e-3  # not symmetric
    assert not is_equivalence_matrix(N)
    assert is_equivalence_matrix(np.eye(4)) and not is_equivalence_matrix(np.eye(4), 3)


@pytest.mark.parametrize("t,d", [(4, 2), (5, 3), (6, 4), (6, 6)])
def test_enumeration_lists_each_partition_once(t, d):
    items = list(enumerate_equivalence_matrices(t, d))
    assert len(items) == round(sum(stirling2(t, k, exact=True) for k in range(1, d + 1)))
    keys = {np.round(M, 12).tobytes() for _, M in items}
    assert len(keys) == len(items)
    # compare with brute force over all labelings
    brute = {np.round(equivalence_matrix(np.array(lab), d), 12).tobytes()
             for lab in itertools.product(range(d), repeat=t)}
    assert keys == brute
    for _, M in items:
        assert is_equivalence_matrix(M, d)
        assert max_violation(residuals_M1(M, d)) < 1e-12  # M is a subset of M1


# ------------------------------------------------------------------------------------------
# membership, Lemma 1
# ------------------------------------------------------------------------------------------

def test_residuals_report_each_violation():
    t, d = 6, 2
    M = equivalence_matrix([0, 0, 1, 1, 1, 0], d)
    assert max_violation(residuals_M1(M, d)) < 1e-12
    res = residuals_M1(M, d)
    assert set(res) == {"symmetry", "psd", "upper", "trace", "row_sums", "nonnegativity"}
    assert set(residuals_M2(M, d)) == {"symmetry", "psd", "upper", "trace", "row_sums"}
    assert set(residuals_M3(M, d)) == {"symmetry", "psd", "upper", "trace"}
    # M itself has trace 2 > d - 1 = 1 and is not in M3; its double centring is
    H = np.eye(t) - 1 / t
    assert residuals_M3(M, d)["trace"] == pytest.approx(1.0)
    assert max_violation(residuals_M3(H @ M @ H, d)) < 1e-12
    assert residuals_M1(np.eye(t), d)["trace"] == pytest.approx(t - d)
    assert residuals_M2(2 * M, d)["upper"] == pytest.approx(1.0)
    assert residuals_M2(2 * M, d)["row_sums"] == pytest.approx(1.0)
    assert residuals_M2(-M, d)["psd"] == pytest.approx(1.0)
    N = M.copy()
    N[0, 1] += 0.25
    assert residuals_M2(N, d)["symmetry"] == pytest.approx(0.25)
    P = M + 0.1 * (np.eye(t) - 1 / t)  # same row sums, negative off-block entries
    assert residuals_M1(P, 3)["nonnegativity"] == pytest.approx(0.1 / t)
    assert "nonnegativity" not in residuals_M2(P, 3)


@pytest.mark.parametrize("seed", range(4))
def test_lemma1_maps_M3_onto_M2(seed):
    rng = np.random.default_rng(seed)
    t, d = 7, 3
    H = np.eye(t) - np.ones((t, t)) / t
    J = np.ones((t, t)) / t
    S = random_M3_point(rng, t, d)
    assert max_violation(residuals_M3(S, d)) < 1e-12
    assert max_violation(residuals_M2(H @ S @ H + J, d)) < 1e-12
    Z = random_M2_point(rng, t, d)
    assert max_violation(residuals_M2(Z, d)) < 1e-12
    assert max_violation(residuals_M3(Z - J, d)) < 1e-12  # the proof's converse


# ------------------------------------------------------------------------------------------
# projections vs cvxpy
# ------------------------------------------------------------------------------------------

CASES = [(5, 2), (6, 3), (8, 2), (8, 5), (10, 3), (12, 4), (12, 12)]


@pytest.mark.parametrize("t,d", CASES)
@pytest.mark.parametrize("scale", [0.3, 5.0])
def test_project_M2_matches_cvxpy(t, d, scale):
    rng = np.random.default_rng(100 * t + d)
    A = random_symmetric(rng, t, scale) + rng.uniform(0, 1) * np.ones((t, t)) / t
    P = project_M2(A, d)
    Q = cvxpy_projection(A, d, constraints_M2)
    np.testing.assert_allclose(P, Q, atol=1e-6)
    assert max_violation(residuals_M2(P, d)) < 1e-10


@pytest.mark.parametrize("t,d", CASES)
@pytest.mark.parametrize("scale", [0.3, 5.0])
def test_project_M3_matches_cvxpy(t, d, scale):
    rng = np.random.default_rng(200 * t + d)
    A = random_symmetric(rng, t, scale) + scale * np.eye(t) * rng.uniform(0, 1)
    P = project_M3(A, d)
    Q = cvxpy_projection(A, d, constraints_M3)
    np.testing.assert_allclose(P, Q, atol=1e-6)
    assert max_violation(residuals_M3(P, d)) < 1e-10


def test_constraint_builders_symmetrise_plain_variables():
    rng = np.random.default_rng(3)
    t, d = 6, 2
    A = random_symmetric(rng, t) + 0.3 * rng.standard_normal((t, t))  # not symmetric
    X = cp.Variable((t, t))  # not declared symmetric
    constraints = constraints_M2(X, d)
    assert len(constraints) == 5 and len(constraints_M2(cp.Variable((t, t), symmetric=True), d)) == 4
    solve_tight(cp.Problem(cp.Minimize(cp.sum_squares(X - A)), constraints))
    # the projection of A onto symmetric matrices is its symmetric part
    np.testing.assert_allclose(X.value, project_M2((A + A.T) / 2, d), atol=1e-6)


@pytest.mark.parametrize("t,d", [(5, 2), (9, 3), (12, 5)])
def test_projection_of_M1_constraints_lies_in_M1(t, d):
    rng = np.random.default_rng(t)
    A = random_symmetric(rng, t, 2.0)
    Q = cvxpy_projection(A, d, constraints_M1)
    assert max_violation(residuals_M1(Q, d)) < 1e-7
    # M1 is a subset of M2, so the M2 projection is at least as close
    assert np.linalg.norm(project_M2(A, d) - A) <= np.linalg.norm(Q - A) + 1e-7


@pytest.mark.parametrize("seed", range(6))
def test_members_are_fixed_points(seed):
    rng = np.random.default_rng(seed)
    t = int(rng.integers(5, 13))
    d = int(rng.integers(2, t + 1))
    Z = random_M2_point(rng, t, d)
    np.testing.assert_allclose(project_M2(Z, d), Z, atol=1e-10)
    S = random_M3_point(rng, t, d)
    np.testing.assert_allclose(project_M3(S, d), S, atol=1e-10)
    labels = rng.integers(0, d, t)
    E = equivalence_matrix(labels, d)
    np.testing.assert_allclose(project_M2(E, d), E, atol=1e-10)


@pytest.mark.parametrize("seed", range(6))
def test_idempotence_and_variational_inequality(seed):
    rng = np.random.default_rng(50 + seed)
    t = int(rng.integers(5, 13))
    d = int(rng.integers(2, min(t, 6) + 1))
    A = random_symmetric(rng, t, 3.0)
    for project, random_point in ((project_M2, random_M2_point), (project_M3, random_M3_point)):
        P = project(A, d)
        np.testing.assert_allclose(project(P, d), P, atol=1e-10)
        # <A - P, Z - P> <= 0 for every Z of the (convex) set
        for _ in range(20):
            Z = random_point(rng, t, d)
            assert np.sum((A - P) * (Z - P)) <= 1e-9
        if project is project_M2:
            for labels in rng.integers(0, d, (10, t)):
                Z = equivalence_matrix(labels, d)
                assert np.sum((A - P) * (Z - P)) <= 1e-9


def test_spectral_threshold_solves_13():
    rng = np.random.default_rng(7)
    for _ in range(20):
        sigma = rng.normal(0.3, 1.0, 9)
        bound = float(rng.integers(1, 5))
        theta = spectral_threshold(sigma, bound)
        mu = np.clip(sigma - theta, 0, 1)
        assert theta >= 0 and mu.sum() <= bound + 1e-12
        if theta > 0:
            assert mu.sum() == pytest.approx(bound, abs=1e-12)  # complementary slackness
        m = cp.Variable(9)
        solve_tight(cp.Problem(cp.Minimize(cp.sum_squares(m - sigma)),
                               [m >= 0, m <= 1, cp.sum(m) <= bound]))
        np.testing.assert_allclose(mu, m.value, atol=1e-6)


def test_m2_projector_partial_matches_full():
    rng = np.random.default_rng(11)
    t, d = 80, 4
    proj = M2Projector(t, d, min_partial_size=0, switch_fraction=0.5)
    full = M2Projector(t, d, partial=False)
    labels = rng.integers(0, d, t)
    E = equivalence_matrix(labels, d)
    for k in range(8):
        # ADMM-like inputs: a near-low-rank target plus shrinking noise, and one far target
        A = E + (0.5 / (k + 1)) * random_symmetric(rng, t) / np.sqrt(t)
        if k == 5:
            A = random_symmetric(rng, t, 3.0)
        P = proj(A)
        np.testing.assert_allclose(P, project_M2(A, d), atol=1e-9)
        np.testing.assert_allclose(full(A), P, atol=1e-9)
    assert proj.partial_calls > 0 and proj.full_calls >= 1
    assert full.partial_calls == 0
    with pytest.raises(ValueError, match="A"):
        proj(np.eye(t - 1))


def test_m2_projector_approximate_is_in_M2_and_tracks_the_projection():
    """The warm-started Rayleigh-Ritz step: exact on a repeated matrix, a point of M2 always, and
    after a small change an error that is a small fraction of the change."""
    rng = np.random.default_rng(12)
    t, d = 90, 4
    E = equivalence_matrix(rng.integers(0, d, t), d)
    proj = M2Projector(t, d, min_partial_size=0, switch_fraction=0.5)
    A = E + 0.3 * random_symmetric(rng, t) / np.sqrt(t)
    np.testing.assert_allclose(proj.approximate(A), project_M2(A, d), atol=1e-10)  # no basis yet: exact
    assert proj.approximate_calls == 0 and proj.full_calls == 1
    np.testing.assert_allclose(proj.approximate(A), project_M2(A, d), atol=1e-9)  # basis = eigenvectors of A
    assert proj.approximate_calls == 1
    for k in range(6):
        B = A + 1e-3 * random_symmetric(rng, t) / np.sqrt(t)
        B[0, 1] += 1e-3  # not symmetric: the projection acts on (B + B')/2
        Z, Z_exact = proj.approximate(B), project_M2((B + B.T) / 2, d)
        assert max(residuals_M2(Z, d).values()) <= 1e-12
        # 0.10-0.18 on such random changes, with no drift over the steps
        assert np.linalg.norm(Z - Z_exact) <= 0.25 * np.linalg.norm(Z_exact - project_M2((A + A.T) / 2, d))
        A = B
    assert proj.approximate_calls == 7
    with pytest.raises(ValueError, match="A"):
        proj.approximate(np.eye(t - 1))


def test_m2_projector_approximate_stays_in_M2_when_the_block_reaches_the_eigenvector_1():
    """With fewer positive eigenvalues than the block, the block of H A H holds the eigenvalue 0,
    whose eigenvectors include 1; the warm start must still give a point of M2 (row sums 1)."""
    rng = np.random.default_rng(14)
    t, d = 60, 3
    B = rng.standard_normal((t, t))
    u = rng.standard_normal((t, 2))
    A = -(B @ B.T) / t + 3 * u @ u.T  # two positive eigenvalues, a block of 10
    proj = M2Projector(t, d, min_partial_size=0, switch_fraction=0.6)
    proj(A)
    for _ in range(3):
        A = A + 1e-3 * random_symmetric(rng, t) / np.sqrt(t)
        Z = proj.approximate(A)
        assert max(residuals_M2(Z, d).values()) <= 1e-12
        np.testing.assert_allclose(Z, project_M2(A, d), atol=1e-6)
    assert proj.approximate_calls == 3


def test_m2_projector_approximate_falls_back_to_the_exact_projection():
    """A block of 11 from a matrix with 3 active eigenvalues cannot hold the 39 active ones of
    the next matrix: the smallest Ritz value exceeds the threshold, and the exact projection is
    returned.  Without a partial spectrum there is no basis, so the projection is always exact."""
    rng = np.random.default_rng(13)
    t, d = 60, 3
    proj = M2Projector(t, d, min_partial_size=0, switch_fraction=0.6)
    proj(equivalence_matrix(rng.integers(0, d, t), d) - 0.5 * np.eye(t))
    assert proj.n_active == 3 and proj._basis.shape == (t, 11)
    Q = np.linalg.qr(rng.standard_normal((t, 40)))[0]
    A = 3 * Q @ Q.T + 0.01 * random_symmetric(rng, t) / np.sqrt(t)
    np.testing.assert_allclose(proj.approximate(A), project_M2(A, d), atol=1e-9)
    assert proj.approximate_calls == 0 and proj.full_calls == 2 and proj.n_active == 39
    full = M2Projector(t, d, partial=False)
    full(A)
    np.testing.assert_allclose(full.approximate(A + 0.1), project_M2(A + 0.1, d), atol=1e-9)
    assert full.approximate_calls == 0


# ------------------------------------------------------------------------------------------
# Appendix A: M1 is not the convex hull of M
# ------------------------------------------------------------------------------------------

def test_m1_is_not_convex_hull_of_M():
    cert = m1_not_convex_hull_example()
    C, P, d = cert["C"], cert["point"], cert["n_clusters"]
    t = P.shape[0]
    # P is in M1, checked from the definition
    w = np.linalg.eigvalsh(P)
    assert np.allclose(P, P.T) and P.min() >= 0 and np.allclose(P.sum(axis=1), 1)
    assert w[0] >= -1e-12 and w[-1] <= 1 + 1e-12 and np.trace(P) <= d
    assert max_violation(cert["residuals_M1"]) < 1e-12
    # max of <C, M> over M by brute force over all labelings, with the pinv formula (9)
    hard = []
    for lab in itertools.product(range(d), repeat=t):
        Y = np.eye(d)[list(lab)]
        hard.append(Y @ np.linalg.pinv(Y.T @ Y) @ Y.T)
    best = max(np.sum(C * M) for M in hard)
    assert cert["max_over_M"] == pytest.approx(best)
    assert cert["value_point"] == pytest.approx(np.sum(C * P))
    assert cert["gap"] == pytest.approx(np.sum(C * P) - best) and cert["gap"] > 0.5
    # P is not a convex combination of the elements of M (LP infeasible) ...
    A_eq = np.vstack([np.column_stack([M.ravel() for M in hard]), np.ones(len(hard))])
    b_eq = np.concatenate([P.ravel(), [1.0]])
    lp = linprog(np.zeros(len(hard)), A_eq=A_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    assert lp.status == 2  # infeasible
    # ... while the linear functional is maximised over M1 (cvxpy) above the hard maximum
    X = cp.Variable((t, t), symmetric=True)
    problem = cp.Problem(cp.Maximize(cp.trace(C @ X)), constraints_M1(X, d))
    solve_tight(problem)
    assert problem.value >= cert["value_point"] - 1e-7 > best


def test_convex_hull_of_M_is_inside_M1_for_symmetric_point():
    # the symmetric point I/2 + J/6 (t = 3, d = 2) is the mean of the three 2-block partitions
    M = np.eye(3) / 2 + np.ones((3, 3)) / 6
    hard = [E for lab, E in enumerate_equivalence_matrices(3, 2) if lab.max() == 1]
    np.testing.assert_allclose(np.mean(hard, axis=0), M, atol=1e-14)
    assert max_violation(residuals_M1(M, 2)) < 1e-12


# ------------------------------------------------------------------------------------------
# bad input
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("func", [project_M2, project_M3])
def test_projection_bad_input(func):
    A = np.eye(5)
    with pytest.raises(ValueError, match="A must be a square"):
        func(np.ones((4, 5)), 2)
    with pytest.raises(ValueError, match="A must be symmetric"):
        func(np.triu(np.ones((5, 5))), 2)
    bad = A.copy()
    bad[1, 1] = np.nan
    with pytest.raises(ValueError, match="A contains NaN"):
        func(bad, 2)
    bad[1, 1] = np.inf
    with pytest.raises(ValueError, match="A contains NaN"):
        func(bad, 2)
    for d in (0, 1, 6, 2.5, True, "2"):
        with pytest.raises(ValueError, match="n_clusters"):
            func(A, d)


def test_other_bad_input():
    M = cp.Variable((4, 4), symmetric=True)
    for builder in (constraints_M1, constraints_M2, constraints_M3):
        with pytest.raises(ValueError, match="n_clusters"):
            builder(M, 5)
        with pytest.raises(ValueError, match="n_clusters"):
            builder(M, 1)
        with pytest.raises(ValueError, match="M must be a cvxpy"):
            builder(np.eye(4), 2)
        with pytest.raises(ValueError, match="M must be a square"):
            builder(cp.Variable((4, 3)), 2)
    for residuals in (residuals_M1, residuals_M2, residuals_M3):
        with pytest.raises(ValueError, match="M must be a square"):
            residuals(np.ones((3, 4)), 2)
        with pytest.raises(ValueError, match="M contains NaN"):
            residuals(np.full((3, 3), np.nan), 2)
        with pytest.raises(ValueError, match="n_clusters"):
            residuals(np.eye(3), 4)
    with pytest.raises(ValueError, match="n_clusters"):
        equivalence_matrix([0, 1, 1], 4)
    with pytest.raises(ValueError, match="labels"):
        equivalence_matrix([0, 1, 3], 3)
    with pytest.raises(ValueError, match="labels"):
        equivalence_matrix([[0, 1], [1, 0]], 2)
    with pytest.raises(ValueError, match="M must be a square"):
        is_equivalence_matrix(np.ones((2, 3)))
    with pytest.raises(ValueError, match="n_clusters"):
        is_equivalence_matrix(np.eye(3), 0)
    with pytest.raises(ValueError, match="n_samples"):
        list(enumerate_equivalence_matrices(1, 2))
    with pytest.raises(ValueError, match="n_clusters"):
        list(enumerate_equivalence_matrices(3, 4))
    with pytest.raises(ValueError, match="n_clusters"):
        M2Projector(10, 11)
    with pytest.raises(ValueError, match="n_samples"):
        M2Projector(1.5, 2)


def test_spectral_threshold_and_projector_bad_input():
    for sigma in (np.array([np.nan, 1.0]), np.array([np.inf, 1.0]), np.ones((2, 2)), "abc", np.array([1j, 0])):
        with pytest.raises(ValueError, match="^sigma "):
            spectral_threshold(sigma, 1.0)
    for bound in (0.0, -1.0, np.nan, np.inf, True, "1"):
        with pytest.raises(ValueError, match="bound"):
            spectral_threshold(np.array([0.5, 2.0]), bound)
    P = M2Projector(4, 2)
    for A in (np.full((4, 4), np.nan), np.ones((3, 3)), "abc", np.eye(4) * 1j):
        for call in (P, P.approximate, lambda A: P(A, check=True)):
            with pytest.raises(ValueError, match="^A "):
                call(A)


# ------------------------------------------------------------------------------------------
# the simplex projections (cvxclust.linalg) of the M1 solvers: at the door, and correct
# ------------------------------------------------------------------------------------------

def _simplex_kkt(v, x, total, atol=1e-9):
    """x = max(v - theta, 0) with sum x = total: the optimality conditions of the projection."""
    assert np.all(x >= 0) and x.sum() == pytest.approx(total, abs=atol * max(1.0, total))
    active = x > 0
    theta = np.mean(v[active] - x[active])
    np.testing.assert_allclose(x[active], v[active] - theta, atol=atol * (1 + np.abs(v).max()))
    assert np.all(v[~active] <= theta + atol * (1 + np.abs(v).max()))


VECTORS = arrays(np.float64, st.integers(1, 12), elements=st.floats(-1e3, 1e3, allow_nan=False))


@given(v=VECTORS, total=st.floats(1e-3, 1e3))
@settings(max_examples=60, deadline=None)
def test_project_simplex_is_the_projection(v, total):
    kept = v.copy()
    _simplex_kkt(v, project_simplex(v, total), total)
    np.testing.assert_array_equal(v, kept)


@given(V=arrays(np.float64, st.tuples(st.integers(1, 6), st.integers(1, 9)),
                elements=st.floats(-1e3, 1e3, allow_nan=False)),
       max_newton=st.integers(0, 30))
@settings(max_examples=60, deadline=None)
def test_project_simplex_rows_projects_every_row(V, max_newton):
    kept = V.copy()
    P, theta = project_simplex_rows(V, max_newton, return_thresholds=True)
    for v, x in zip(V, P):
        _simplex_kkt(v, x, 1.0)
        np.testing.assert_allclose(x, project_simplex(v), atol=1e-9 * (1 + np.abs(v).max()))
    # warm started from its own thresholds (or any others), the same projection
    np.testing.assert_allclose(project_simplex_rows(V, start=theta + 1.0), P, atol=1e-9 * (1 + np.abs(V).max()))
    np.testing.assert_array_equal(V, kept)


def test_simplex_projections_take_float32_and_read_only_input():
    rng = np.random.default_rng(0)
    V = rng.normal(size=(5, 7)).astype(np.float32)
    V.flags.writeable = False
    np.testing.assert_array_equal(project_simplex_rows(V), project_simplex_rows(V.astype(np.float64)))
    np.testing.assert_array_equal(project_simplex(V[0], 2.0), project_simplex(V[0].astype(np.float64), 2.0))
    np.testing.assert_array_equal(project_simplex_rows(np.empty((0, 3))), np.empty((0, 3)))


@pytest.mark.parametrize("v", [np.array([]), np.array([np.nan, 1.0]), np.array([1.0, np.inf]), np.array([-np.inf, 1.0]),
                               np.ones((2, 2)), 1.0, "abc", np.array([None, 1.0]), np.array([1j, 0.0])],
                         ids=["empty", "nan", "inf", "-inf", "2-d", "scalar", "text", "none", "complex"])
def test_project_simplex_bad_vector_names_v(v):
    with pytest.raises(ValueError, match="^v "):
        project_simplex(v)


@pytest.mark.parametrize("total", [0, -1.0, np.nan, np.inf, True, "1", None])
def test_project_simplex_bad_total_names_total(total):
    with pytest.raises(ValueError, match="^total "):
        project_simplex(np.ones(3), total)


@pytest.mark.parametrize("V", [np.empty((3, 0)), np.ones(3), np.ones((2, 2, 2)), np.array([[np.nan, 1.0]]),
                               np.array([[1.0, np.inf]]), np.array([[-np.inf, 1.0]]), "abc", np.array([[1j, 0.0]])],
                         ids=["no-columns", "1-d", "3-d", "nan", "inf", "-inf", "text", "complex"])
def test_project_simplex_rows_bad_matrix_names_V(V):
    with pytest.raises(ValueError, match="^V "):
        project_simplex_rows(V)


def test_project_simplex_rows_bad_start_and_max_newton():
    V = np.ones((3, 4))
    for start in (np.zeros(2), np.array([0.0, np.nan, 0.0]), "abc"):
        with pytest.raises(ValueError, match="^start "):
            project_simplex_rows(V, start=start)
    for max_newton in (-1, 2.5, True):
        with pytest.raises(ValueError, match="^max_newton "):
            project_simplex_rows(V, max_newton)


def test_projections_onto_M2_M3_take_float32_read_only_input_and_leave_it():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(6, 6))
    A = ((B + B.T) / 2).astype(np.float32)
    A.flags.writeable = False
    kept = A.copy()
    A64 = A.astype(np.float64)
    np.testing.assert_array_equal(project_M2(A, 2), project_M2(A64, 2))
    np.testing.assert_array_equal(project_M3(A, 2), project_M3(A64, 2))
    np.testing.assert_allclose(M2Projector(6, 2)(A), project_M2(A64, 2), atol=1e-12)
    np.testing.assert_array_equal(A, kept)
