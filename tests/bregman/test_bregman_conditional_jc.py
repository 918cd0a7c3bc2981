"""ConditionalJC: the relaxation (10) over M1, its ADMM (Section 3.1.1) and Davis-Yin splitting,
against cvxpy."""

import itertools

import warnings

import numpy as np
import pytest

from cvxclust._relaxation import ConvergenceWarning
from cvxclust.bregman._conditional_jc import ConditionalJC
from cvxclust.bregman.sets import enumerate_equivalence_matrices, equivalence_matrix
from cvxclust.linalg import alternating_projections, project_simplex_rows


def clustered_data(divergence, t, n, d, seed):
    """t points around d centres, in the divergence's domain."""
    rng = np.random.default_rng(seed)
    centres = rng.uniform(0.2, 0.8, (d, n))
    labels = np.arange(t) % d
    X = centres[labels] + 0.1 * rng.standard_normal((t, n))
    if divergence == "kl":
        X = 5.0 * np.abs(X)
    if divergence == "logistic":
        X = np.clip(X, 0.02, 0.98)
    return X, labels


CASES = [("euclidean", 16, 2, 2, 0), ("kl", 18, 3, 3, 1), ("logistic", 15, 4, 3, 2), ("euclidean", 12, 3, 4, 3)]


SOLVER_CASES = [(*case, method) for case in CASES for method in ("admm", "davis-yin")
                if method == "admm" or case[0] == "euclidean"]


@pytest.mark.parametrize("divergence,t,n,d,seed,method", SOLVER_CASES)
def test_solvers_match_reference(divergence, t, n, d, seed, method, reference):
    X, _ = clustered_data(divergence, t, n, d, seed)
    relax = ConditionalJC(X, divergence, d)
    ref = reference(relax)
    assert ref.max_residual <= 1e-6
    res = relax.solve(method, tol=1e-5, max_iter=5000)
    assert res.method == method and res.status == "optimal"
    # the returned point is exactly feasible and certified within tol of the optimum
    assert res.max_residual <= 1e-10
    assert res.relative_gap <= 1e-5
    assert abs(res.objective - ref.objective) / abs(ref.objective) <= 1e-4
    # the certified bound is below the reference optimum (to the reference's own accuracy)
    assert res.dual_bound <= ref.objective + 1e-7 * abs(ref.objective)
    assert res.dual_bound <= res.objective
    # M X is unique at the optimum (D_F is strictly convex in its second argument)
    scale = np.abs(ref.X @ X).max()
    assert np.abs(res.X @ X - ref.X @ X).max() <= 2e-3 * scale
    # history carries the figures for plots
    assert {"objective", "iterate_objective", "primal_residual",
            "rho" if method == "admm" else "step"} <= set(res.history[0])
    assert {"relative_gap", "dual_residual"} <= set(res.history[-1])


@pytest.mark.parametrize("divergence,expected", [("euclidean", "davis-yin"), ("kl", "admm"), ("logistic", "admm")])
def test_default_method_follows_the_divergence(divergence, expected):
    X, _ = clustered_data(divergence, 10, 2, 2, 0)
    relax = ConditionalJC(X, divergence, 2)
    assert relax.default_method == expected
    assert relax.solve("auto", tol=1e-3).method == expected


def test_davis_yin_needs_a_quadratic_divergence():
    X, _ = clustered_data("kl", 10, 2, 2, 0)
    with pytest.raises(ValueError, match="quadratic divergence.*'kl'"):
        ConditionalJC(X, "kl", 2).solve("davis-yin")


def test_gradient_lipschitz_constant_holds_on_row_sum_one_and_is_attained():
    """The constant of grad f on {M 1 = 1} (centred data): the descent lemma holds with it for
    M, M' in S and in M2 alike, and no smaller constant works along its top direction."""
    from cvxclust.bregman._davis_yin import gradient_lipschitz
    from cvxclust.bregman.divergences import Mahalanobis
    from cvxclust.bregman.sets import project_M2

    rng = np.random.default_rng(3)
    t, d = 12, 3
    X, _ = clustered_data("euclidean", t, 2, d, 6)
    for divergence in ("euclidean", Mahalanobis(np.array([[2.0, 0.5], [0.5, 1.0]]))):
        relax = ConditionalJC(X, divergence, d)
        L = gradient_lipschitz(relax)
        uncentred = float(np.linalg.norm(relax.divergence.whiten(X), 2) ** 2)
        assert L < 0.5 * uncentred  # the mean direction is what centring removes
        for _ in range(20):
            A, B = (project_simplex_rows(rng.standard_normal((t, t))) for _ in range(2))
            A2 = project_M2((A + A.T) / 2 + 0.3 * np.eye(t), d)  # a point of M2 (M 1 = 1 too)
            for P, Q in [(A, B), (A, A2)]:
                gap = relax.objective(Q) - relax.objective(P) - np.sum(relax.gradient(P) * (Q - P))
                assert -1e-12 <= gap <= L / 2 * np.sum((Q - P) ** 2) * (1 + 1e-10) + 1e-12
        # f along the top right singular vector u of the centred whitened data, as a row-sum-zero step
        XcR = relax.divergence.whiten(X) - relax.divergence.whiten(X).mean(axis=0)
        U, _, _ = np.linalg.svd(XcR)
        E = np.outer(np.ones(t) / np.sqrt(t), U[:, 0])  # E 1 = 0 as U[:, 0] is orthogonal to 1
        P = np.full((t, t), 1.0 / t)
        gap = relax.objective(P + E) - relax.objective(P) - np.sum(relax.gradient(P) * E)
        assert gap == pytest.approx(L / 2 * np.sum(E**2), rel=1e-9)


def test_dual_value_from_the_z_step_equals_the_eigenvalue_bound():
    """For Y = (V - Z) / gamma with Z = P_M2(V), g_2(Y) = -<Y, Z> (Z minimises -<Y, .> over M2)."""
    from cvxclust.bregman.sets import project_M2

    rng = np.random.default_rng(7)
    t, d = 20, 3
    X, _ = clustered_data("euclidean", t, 2, d, 2)
    relax = ConditionalJC(X, "euclidean", d)
    for _ in range(5):
        V = rng.standard_normal((t, t)) + 2 * np.eye(t) / d  # not symmetric, as in the solvers
        Z = project_M2((V + V.T) / 2, d)
        Y = (V - Z) / 0.37
        M = project_simplex_rows(rng.standard_normal((t, t)))
        assert relax.dual_value(Y, M, Z=Z) == pytest.approx(relax.dual_value(Y, M), rel=1e-10, abs=1e-10)


@pytest.mark.parametrize("divergence", ["euclidean", "kl"])
def test_dual_value_is_a_lower_bound_for_every_multiplier(divergence, reference):
    """Weak duality: g_1 (Frank-Wolfe bound at any M in S) + g_2 (top d - 1 eigenvalues, LAPACK
    bisection) is below the optimum for every Y, and g_2 agrees with a full eigendecomposition."""
    from cvxclust.kernels import center

    rng = np.random.default_rng(11)
    t, d = 14, 3
    X, _ = clustered_data(divergence, t, 2, d, 8)
    relax = ConditionalJC(X, divergence, d)
    ref = reference(relax)
    for scale in (0.1, 1.0, 10.0):
        Y = scale * rng.standard_normal((t, t))
        M = project_simplex_rows(rng.uniform(size=(t, t)))
        value = relax.dual_value(Y, M)
        assert value <= ref.objective + 1e-7 * abs(ref.objective)
        G = relax.gradient(M) + Y
        g1 = relax.objective(M) + np.sum(Y * M) + np.sum(G.min(axis=1)) - np.sum(G * M)
        top = np.linalg.eigvalsh(center((Y + Y.T) / 2))[t - d + 1:]
        g2 = -Y.sum() / t - np.maximum(top, 0.0).sum()
        assert value == pytest.approx(g1 + g2, rel=1e-10, abs=1e-10)


def test_davis_yin_m_multiplier_makes_the_frank_wolfe_term_vanish():
    """Davis-Yin's second multiplier Y_M = (V - M) / gamma, with M = P_S(W) and
    V = 2 M - W - gamma grad f(M): M minimises f + <Y_M, .> over S (Frank-Wolfe gap 0)."""
    rng = np.random.default_rng(12)
    t, d, gamma = 15, 3, 0.3
    X, _ = clustered_data("euclidean", t, 2, d, 9)
    relax = ConditionalJC(X, "euclidean", d)
    W = rng.standard_normal((t, t)) / 3
    M = project_simplex_rows(W)
    V = 2 * M - W - gamma * relax.gradient(M)
    G = relax.gradient(M) + (V - M) / gamma
    assert np.sum(G * M) - np.sum(G.min(axis=1)) <= 1e-12 * (1.0 + np.abs(G).max())


@pytest.mark.parametrize("divergence", ["euclidean", "kl", "logistic"])
def test_gradient_matches_finite_differences(divergence):
    X, _ = clustered_data(divergence, 8, 3, 2, 4)
    relax = ConditionalJC(X, divergence, 2)
    rng = np.random.default_rng(5)
    M = project_simplex_rows(rng.uniform(0, 1, (8, 8)) / 4)
    M = 0.5 * M + 0.5 / 8  # interior: every entry positive, so M +- h E stays in the domain
    G = relax.gradient(M)
    h = 1e-6
    for _ in range(10):
        E = rng.standard_normal((8, 8))
        fd = (relax.objective(M + h * E) - relax.objective(M - h * E)) / (2 * h)
        assert fd == pytest.approx(np.sum(G * E), rel=1e-5, abs=1e-8)


def test_kl_gradient_at_zero_counts_is_finite():
    X = np.array([[0.0, 2.0], [0.0, 1.0], [3.0, 0.0], [1.0, 1.0]])
    relax = ConditionalJC(X, "kl", 2)
    M = equivalence_matrix([0, 0, 1, 1], 2)  # (M X)_{i0} = 0 where x_{i0} = 0 for rows 0, 1
    assert np.all(np.isfinite(relax.gradient(M)))
    assert np.isfinite(relax.objective(M))


@pytest.mark.parametrize("divergence", ["euclidean", "kl", "logistic"])
def test_exact_partitions_give_hard_objective_and_bound_relaxation(divergence, reference):
    t, d = 6, 2
    X, _ = clustered_data(divergence, t, 2, d, 6)
    relax = ConditionalJC(X, divergence, d)
    hard = []
    for labels, M in enumerate_equivalence_matrices(t, d):
        assert max(relax.residuals(M).values()) <= 1e-12  # M is in M1
        # Banerjee et al.: the optimal centres of a partition are its means
        means = np.array([X[labels == k].mean(axis=0) if np.any(labels == k) else np.zeros(X.shape[1])
                          for k in range(d)])
        banerjee = relax.divergence.divergence(X, means[labels])
        assert relax.objective(M) == pytest.approx(banerjee, rel=1e-12, abs=1e-14)
        hard.append(banerjee)
    ref = reference(relax)
    assert ref.objective <= min(hard) + 1e-7
    res = relax.solve("admm", tol=1e-6, max_iter=20000)
    assert res.objective <= min(hard) + 1e-6 * abs(min(hard))
    assert res.dual_bound <= ref.objective + 1e-7


def test_problem_statement():
    X, labels = clustered_data("euclidean", 10, 2, 2, 7)
    relax = ConditionalJC(X, "linear", 2)
    problem = relax.problem()
    var = relax.primary_variable(problem)
    M = equivalence_matrix(labels, 2)
    var.value = M
    assert problem.objective.value == pytest.approx(relax.objective(M), rel=1e-12)
    assert all(c.violation().max() <= 1e-12 for c in problem.constraints)


def test_alternating_projections_approach_M1():
    """From a point of S, the relaxed alternating projections stay in M2, draw nearer to S, and
    are Fejer monotone: no point of M1 (here J = 11'/t and a partition matrix) gets farther, so
    less is left for restore() to mix away.  With warm-started projections the rounds stay in M2."""
    from cvxclust.bregman.sets import M2Projector, project_M2, residuals_M1, residuals_M2

    rng = np.random.default_rng(4)
    t, d = 30, 3
    E = np.kron(np.eye(d), np.ones((t // d, t // d)))
    M = project_simplex_rows(rng.standard_normal((t, t)) + 3 * E)
    in_M1 = [np.full((t, t), 1.0 / t), E / (t // d)]
    distances, to_M1 = [], []
    exact = M2Projector(t, d)
    for W in itertools.islice(alternating_projections(exact(M), exact.approximate, project_simplex_rows), 7):
        np.testing.assert_allclose(W, project_M2(W, d), atol=1e-10)  # W is in M2
        distances.append(np.linalg.norm(W - project_simplex_rows(W)))
        to_M1.append([np.linalg.norm(W - P) for P in in_M1])
    assert all(b <= a + 1e-12 for a, b in zip(np.ravel(to_M1[:-1]), np.ravel(to_M1[1:])))
    assert distances[-1] < 0.5 * distances[0]
    relax = ConditionalJC(np.random.default_rng(0).uniform(0.1, 0.9, (t, 2)), "euclidean", d)
    assert max(residuals_M1(relax.restore(W), d).values()) <= 1e-10
    warm = M2Projector(t, d, min_partial_size=0, switch_fraction=0.6)
    for W in itertools.islice(alternating_projections(warm(M), warm.approximate, project_simplex_rows), 7):
        assert max(residuals_M2(W, d).values()) <= 1e-12
    assert warm.approximate_calls > 0


@pytest.mark.parametrize("divergence,t,n,d,seed,method", [(*CASES[0], "admm"), (*CASES[1], "admm"),
                                                          (*CASES[0], "davis-yin"), (*CASES[3], "davis-yin")])
def test_polishing_on_and_off_reach_the_same_certified_optimum(divergence, t, n, d, seed, method):
    X, _ = clustered_data(divergence, t, n, d, seed)
    relax = ConditionalJC(X, divergence, d)
    runs = {k: relax.solve(method, tol=1e-5, max_iter=5000, polish_rounds=k) for k in (0, 10)}
    for res in runs.values():
        assert res.status == "optimal" and res.max_residual <= 1e-10 and res.relative_gap <= 1e-5
    assert abs(runs[0].objective - runs[10].objective) <= 2e-5 * abs(runs[0].objective)
    assert runs[10].iterations <= runs[0].iterations
    assert any("polished_objective" in row for row in runs[10].history)
    assert not any("polished_objective" in row for row in runs[0].history)


@pytest.mark.parametrize("method", ["admm", "davis-yin"])
def test_iteration_limit_warns_and_reports_honestly(method, reference):
    X, _ = clustered_data("euclidean", 14, 2, 2, 9)
    relax = ConditionalJC(X, "euclidean", 2)
    with pytest.warns(ConvergenceWarning, match=method):
        res = relax.solve(method, tol=1e-9, max_iter=7)
    assert res.status == "max_iter" and res.iterations == 7
    assert res.max_residual <= 1e-10  # still the exactly feasible restoration
    ref = reference(relax)
    assert res.dual_bound <= ref.objective + 1e-7 * abs(ref.objective)
    assert res.objective >= ref.objective - 1e-7 * abs(ref.objective)


@pytest.fixture
def counted_approximations(monkeypatch):
    """Partial spectra from the smallest sizes on and up to 60% of the spectrum (so that small
    instances take the warm-started Z-steps too), and a list of the projectors created, to count
    their calls."""
    from cvxclust.bregman import sets

    projectors = []
    original = sets.M2Projector.__init__

    def init(self, *args, **kwargs):
        original(self, *args, **{"switch_fraction": 0.6, **kwargs})
        projectors.append(self)

    monkeypatch.setattr(sets.M2Projector, "min_partial_size", 0)
    monkeypatch.setattr(sets.M2Projector, "__init__", init)
    return projectors


@pytest.mark.parametrize("divergence,method", [("euclidean", "davis-yin"), ("euclidean", "admm"), ("kl", "admm")])
def test_approximate_z_steps_reach_the_reference_optimum(divergence, method, reference, counted_approximations):
    """With the Z-step approximated between checks the solvers reach the same certified optimum,
    to the same accuracy, and the returned point is still exactly feasible."""
    X, _ = clustered_data(divergence, 36, 3, 3, 5)
    relax = ConditionalJC(X, divergence, 3)
    ref = reference(relax)
    runs = {a: relax.solve(method, tol=1e-5, max_iter=5000, approximate_projections=a) for a in (True, False)}
    assert sum(p.approximate_calls for p in counted_approximations) > 0
    for res in runs.values():
        assert res.status == "optimal" and res.max_residual <= 1e-10 and res.relative_gap <= 1e-5
        assert abs(res.objective - ref.objective) <= 1e-4 * abs(ref.objective)
        assert res.dual_bound <= ref.objective + 1e-7 * abs(ref.objective)


@pytest.mark.parametrize("method", ["admm", "davis-yin"])
def test_limit_after_an_approximate_z_step_keeps_the_bound_certified(method, reference, counted_approximations):
    """Stopped right after an approximate Z-step (not a minimiser of -<Y, Z> over M2), the last
    bound must come from the eigenvalues, not from that Z."""
    X, _ = clustered_data("euclidean", 36, 3, 3, 6)
    relax = ConditionalJC(X, "euclidean", 3)
    with pytest.warns(ConvergenceWarning):
        res = relax.solve(method, tol=1e-9, max_iter=13, check_every=10)
    assert sum(p.approximate_calls for p in counted_approximations) > 0
    ref = reference(relax)
    assert res.status == "max_iter" and res.max_residual <= 1e-10
    assert res.dual_bound <= ref.objective + 1e-7 * abs(ref.objective)


@pytest.mark.parametrize("divergence,seed", [("euclidean", 0), ("kl", 1), ("logistic", 2)])
def test_linearized_m_step_is_the_proximal_step_and_backtracks(divergence, seed):
    """One linearised M-step: rows in the simplex, the descent lemma holds row by row with the
    weights it used, and the step is the closed form argmin of (linearised f) + prox terms over S,
    against cvxpy with those weights.  Started from tiny weights, the rows backtrack.  The
    multiplier it returns makes the step exactly optimal (the bound's Frank-Wolfe term is 0)."""
    import cvxpy as cp

    from cvxclust.bregman._m_steps import linearized_m_step

    rng = np.random.default_rng(seed)
    t, d = 9, 3
    X, _ = clustered_data(divergence, t, 3, d, seed)
    relax = ConditionalJC(X, divergence, d)
    M = project_simplex_rows(rng.uniform(size=(t, t)) + 2 * np.eye(t))
    V = rng.standard_normal((t, t)) / t
    rho = 0.7
    ell0 = np.full(t, 1e-4)
    ell = ell0.copy()
    scale = relax.row_objectives(np.full((t, t), 1.0 / t) @ X).mean()
    M_new, MX_new, thresholds, Y = linearized_m_step(relax, M, M @ X, V, rho, ell, None, scale, multiplier=True)
    assert np.all(ell > ell0)  # every row backtracked from the tiny weight (so none shrank after)
    ell_used = ell
    np.testing.assert_allclose(M_new.sum(axis=1), 1.0, atol=1e-12)
    assert M_new.min() >= 0.0
    np.testing.assert_allclose(MX_new, M_new @ X, atol=1e-12)
    np.testing.assert_allclose(M_new, project_simplex_rows(M_new + 0.0), atol=1e-12)
    G = relax.gradient(M)
    D = M_new - M
    f_rows, f_new = relax.row_objectives(M @ X), relax.row_objectives(M_new @ X)
    model = f_rows + np.sum(G * D, axis=1) + 0.5 * ell_used * np.sum(D * D, axis=1)
    assert np.all(f_new <= model + 1e-12 * (np.abs(f_rows) + scale))
    # the closed form against cvxpy
    P = cp.Variable((t, t))
    objective = cp.sum(cp.multiply(G, P)) + 0.5 * cp.sum(cp.multiply(ell_used[:, None], cp.square(P - M))) \
        + 0.5 * rho * cp.sum_squares(P - V)
    cp.Problem(cp.Minimize(objective), [P >= 0, cp.sum(P, axis=1) == 1]).solve(solver="CLARABEL")
    np.testing.assert_allclose(M_new, P.value, atol=1e-6)
    # M+ minimises f + <Y, .> over S: the Frank-Wolfe gap of that function vanishes at M+
    G_Y = relax.gradient(M_new) + Y
    assert np.sum(G_Y * M_new) - np.sum(G_Y.min(axis=1)) <= 1e-10 * (1.0 + np.abs(G_Y).max())
    # a second call from the returned thresholds gives the same step as a cold one
    again = linearized_m_step(relax, M, M @ X, V, rho, ell_used.copy(), thresholds, scale)[0]
    cold = linearized_m_step(relax, M, M @ X, V, rho, ell_used.copy(), None, scale)[0]
    np.testing.assert_allclose(again, cold, atol=1e-12)


@pytest.mark.parametrize("divergence,t,n,d,seed", [CASES[0], CASES[1], CASES[2]])
def test_exact_m_step_reaches_the_reference_optimum(divergence, t, n, d, seed, reference):
    """The paper's ADMM as stated, each M-step solved to its inner tolerance (``m_step="exact"``),
    reaches the optimum the linearised default reaches."""
    X, _ = clustered_data(divergence, t, n, d, seed)
    relax = ConditionalJC(X, divergence, d)
    ref = reference(relax)
    runs = {m: relax.solve("admm", tol=1e-5, max_iter=5000, m_step=m) for m in ("exact", "linearized")}
    for res in runs.values():
        assert res.status == "optimal" and res.max_residual <= 1e-10 and res.relative_gap <= 1e-5
        assert abs(res.objective - ref.objective) <= 1e-4 * abs(ref.objective)
        assert res.dual_bound <= ref.objective + 1e-7 * abs(ref.objective)
    inner = [row["inner_iterations"] for row in runs["exact"].history if "inner_iterations" in row]
    assert max(inner) > 1 and {row["inner_iterations"] for row in runs["linearized"].history
                               if "inner_iterations" in row} == {1}


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"divergence": "itakura-saito"}, "divergence"),
        ({"divergence": "no-such"}, "divergence"),
        ({"divergence": "mahalanobis"}, "divergence"),
        ({"divergence": "kl", "X": -np.ones((5, 2))}, "X"),
        ({"divergence": "logistic", "X": np.full((5, 2), 1.0)}, "X"),
        ({"X": np.ones(5)}, "X"),
        ({"X": np.array([[1.0, np.nan], [0.0, 1.0], [1.0, 1.0]])}, "X"),
        ({"n_clusters": 1}, "n_clusters"),
        ({"n_clusters": 6}, "n_clusters"),
        ({"n_clusters": 2.5}, "n_clusters"),
    ],
)
def test_bad_input(kwargs, match):
    args = {"X": np.random.default_rng(0).uniform(0.1, 0.9, (5, 2)), "divergence": "euclidean", "n_clusters": 2}
    args.update(kwargs)
    with pytest.raises(ValueError, match=match):
        ConditionalJC(args["X"], args["divergence"], args["n_clusters"])


def test_bad_solver_options():
    relax = ConditionalJC(np.random.default_rng(0).uniform(0.1, 0.9, (6, 2)), "euclidean", 2)
    with pytest.raises(ValueError, match="Unknown method"):
        relax.solve("nope")
    with pytest.raises(ValueError, match="alpha"):
        relax.solve("admm", alpha=2.5)
    with pytest.raises(ValueError, match="tol"):
        relax.solve("admm", tol=-1.0)
    with pytest.raises(ValueError, match="polish_rounds"):
        relax.solve("admm", polish_rounds=-1)
    with pytest.raises(ValueError, match="m_step"):
        relax.solve("admm", m_step="newton")
    for options, name in [({"step_size": 2.0}, "step_size"), ({"step_size": 0.0}, "step_size"),
                          ({"relaxation_factor": 1.9}, "relaxation_factor"),
                          ({"step_size": 1.0, "relaxation_factor": 1.6}, "relaxation_factor"),
                          ({"check_every": 0}, "check_every"),
                          ({"polish_rounds": 1.5}, "polish_rounds"), ({"tol": 0.0}, "tol")]:
        with pytest.raises(ValueError, match=name):
            relax.solve("davis-yin", **options)
    with pytest.raises(ValueError, match="M"):
        relax.objective(np.eye(3))


def test_mahalanobis_instance_matches_reference(reference):
    from cvxclust.bregman.divergences import Mahalanobis

    X, _ = clustered_data("euclidean", 12, 2, 2, 10)
    relax = ConditionalJC(X, Mahalanobis(np.array([[2.0, 0.5], [0.5, 1.0]])), 2)
    ref = reference(relax)
    for method in ("admm", "davis-yin"):
        res = relax.solve(method, tol=1e-5, max_iter=5000)
        assert res.status == "optimal" and res.max_residual <= 1e-10
        assert abs(res.objective - ref.objective) / abs(ref.objective) <= 1e-4
        assert res.dual_bound <= ref.objective + 1e-7 * abs(ref.objective)


def test_kl_with_duplicated_points_stays_finite():
    """Regression: two distinct points, ten copies each, KL.  The optimum is 0 (the partition of
    the copies), every row of the linearised M-step is then fitted to the rounding level, and a
    descent test with a slack relative to the row's value alone doubled its weight without end
    (inf, then NaN: "Y contains NaN or infinite entries").  The zero optimum is certified
    through the gap's floor (``objective_scale``, the one-cluster loss)."""
    X = np.repeat(np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]]), 10, axis=0)
    relax = ConditionalJC(X, "kl", 2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = relax.solve("admm", max_iter=1000)
    assert res.status == "optimal" and res.relative_gap <= 1e-6 and res.gap_floor > 0
    assert np.isfinite(res.objective) and abs(res.objective) <= 1e-10
    assert res.dual_bound <= res.objective + 1e-12 and res.dual_bound >= -1e-8
    assert res.max_residual <= 1e-10


def test_linearized_m_step_weights_stay_finite_on_exactly_fitted_rows():
    """Rows whose objective is at the rounding level (a point fitted exactly): many steps from
    there never grow the proximal weights without bound, and the step stays in S."""
    from cvxclust.bregman._m_steps import linearized_m_step

    X = np.repeat(np.array([[1.0, 1.0], [2.0, 3.0]]), 5, axis=0)
    t = X.shape[0]
    relax = ConditionalJC(X, "kl", 2)
    M = equivalence_matrix(np.arange(t) // 5, 2)  # M X = X: every row fitted
    scale = relax.row_objectives(np.full((t, t), 1.0 / t) @ X).mean()
    ell = np.full(t, 50.0)
    MX, thresholds = M @ X, None
    for _ in range(200):
        M, MX, thresholds, _ = linearized_m_step(relax, M, MX, M, 10.0, ell, thresholds, scale)
    assert np.all(np.isfinite(ell)) and ell.max() <= 1e6
    assert np.all(np.isfinite(M)) and M.min() >= 0.0
    np.testing.assert_allclose(M.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("method", ["admm", "davis-yin"])
def test_solver_options_are_checked_at_the_door(method):
    from cvxclust.parameters import InvalidParameterError

    relax = ConditionalJC(np.random.default_rng(0).uniform(0.1, 0.9, (6, 2)), "euclidean", 2)
    for options, name in [({"max_iter": True}, "max_iter"), ({"max_iter": 0}, "max_iter"),
                          ({"tol": "1e-3"}, "tol"), ({"residual_tol": np.nan}, "residual_tol"),
                          ({"time_limit": -1.0}, "time_limit"), ({"verbose": "yes"}, "verbose"),
                          ({"approximate_projections": 1}, "approximate_projections"),
                          ({"partial_eig": None}, "partial_eig")]:
        with pytest.raises(InvalidParameterError, match=name):
            relax.solve(method, **options)
    with pytest.raises(TypeError, match="gap_tol"):
        relax.solve(method, gap_tol=1e-3)
    if method == "admm":
        for options, name in [({"rho": 0.0}, "rho"), ({"mu": -1.0}, "mu"), ({"adapt_every": 0}, "adapt_every"),
                              ({"inner_factor": 0.0}, "inner_factor"), ({"inner_max_iter": 2.0}, "inner_max_iter")]:
            with pytest.raises(ValueError, match=name):
                relax.solve(method, **options)
    else:
        with pytest.raises(TypeError, match="step"):
            relax.solve(method, step=0.4)  # the option is step_size


def test_solvers_need_a_conditional_jc():
    from cvxclust.bregman import Conditional
    from cvxclust.bregman._davis_yin import DavisYin, gradient_lipschitz
    from cvxclust.bregman._jc_admm import ADMM

    other = Conditional(np.random.default_rng(0).uniform(0.1, 0.9, (6, 2)), "euclidean", 2)
    for solver in (ADMM, DavisYin):
        with pytest.raises(ValueError, match="ConditionalJC"):
            solver(other)
    with pytest.raises(ValueError, match="ConditionalJC"):
        gradient_lipschitz(other)


def test_methods_check_their_matrices_and_leave_them_unchanged():
    rng = np.random.default_rng(1)
    X, _ = clustered_data("kl", 8, 2, 2, 3)
    X_copy = X.copy()
    relax = ConditionalJC(X, "kl", 2)
    X[0, 0] = 99.0  # the relaxation holds its own copy
    assert relax.X[0, 0] == X_copy[0, 0]
    good = project_simplex_rows(rng.uniform(size=(8, 8)))
    bad_nan = good.copy()
    bad_nan[1, 2] = np.nan
    for call, name in [(lambda M: relax.objective(M), "M"), (lambda M: relax.residuals(M), "M"),
                       (lambda M: relax.gradient(M), "M"), (lambda Z: relax.restore(Z), "Z"),
                       (lambda Y: relax.dual_value(Y, good), "Y"), (lambda M: relax.dual_value(good, M), "M_hat"),
                       (lambda Z: relax.dual_value(good, good, Z=Z), "Z")]:
        for bad in (bad_nan, np.ones((3, 3)), "M"):
            with pytest.raises(ValueError, match=name):
                call(bad)
    with pytest.raises(ValueError, match="M_hat must have its rows in the simplex"):
        relax.dual_value(good, 2.0 * good)
    with pytest.raises(ValueError, match="M must map the data into the domain"):
        relax.gradient(good - 0.5)
    Y, Z = rng.standard_normal((8, 8)), rng.standard_normal((8, 8))
    before = [A.copy() for A in (Y, good, Z)]
    relax.dual_value(Y, good)
    relax.restore(Z)
    for A, B in zip((Y, good, Z), before):
        np.testing.assert_array_equal(A, B)
