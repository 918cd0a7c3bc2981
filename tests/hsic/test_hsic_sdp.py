"""Tests of the SDP relaxation (5.23) of CLUHSIC and its ADMM solver (cvxclust.hsic._sdp)."""

from __future__ import annotations

import itertools
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

from cvxclust.hsic._admm import ADMM
from cvxclust.hsic._objectives import objective, partition_matrix
from cvxclust.hsic._operator import AffineOperator
from cvxclust.hsic._sdp import CLUHSICSDP, cluhsic_sdp_problem, lift
from cvxclust.kernels import center, rbf
from cvxclust.structures import kernel_automorphisms

REFERENCE = {"solver": "CLARABEL", "eps": 1e-8}


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    # thousands of small eigendecompositions: threads only add overhead at these sizes
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def chain(c: int) -> np.ndarray:
    """Chain structure: 2 I + adjacency of the path on c clusters."""
    return 2.0 * np.eye(c) + np.eye(c, k=1) + np.eye(c, k=-1)


def ring(c: int) -> np.ndarray:
    """Ring structure: 2 I + adjacency of the cycle on c clusters."""
    return chain(c) + np.eye(c, k=c - 1) + np.eye(c, k=1 - c)


def instance(m: int, c: int, structure: str = "chain", seed: int = 0):
    """A centred rbf kernel of m points drawn around c centres, and the output kernel A."""
    rng = np.random.default_rng(seed)
    centres = 3.0 * rng.standard_normal((c, 2))
    X = centres[np.arange(m) % c] + rng.standard_normal((m, 2))
    K = center(rbf(X))
    A = {"chain": chain, "ring": ring}.get(structure, np.eye)(c)
    return K, A


def random_labels(m: int, c: int, rng) -> np.ndarray:
    labels = np.concatenate([np.arange(c), rng.integers(0, c, m - c)])
    return rng.permutation(labels)


# -- the statement ---------------------------------------------------------------------------------
def test_lifted_partition_is_feasible_and_keeps_the_objective():
    """For a hard normalized P, Q = vec(P) vec(P)^T satisfies (5.23) and tr((A kron K) Q) equals
    tr(K P A P^T) (5.18), with bdiag(Q) = P P^T (5.21) and odiag(Q) = P^T P (5.22)."""
    rng = np.random.default_rng(0)
    m, c = 9, 3
    K, A = instance(m, c)
    labels = random_labels(m, c, rng)
    P = partition_matrix(labels, c, normalization="l2")
    Q = lift(P)
    relaxation = CLUHSICSDP(K, A, known=np.where(rng.random(m) < 0.5, labels, -1))
    assert max(relaxation.residuals(Q).values()) < 1e-12
    assert relaxation.objective(Q) == pytest.approx(objective(K, A, P), rel=1e-12)
    blocks = Q.reshape(c, m, c, m)
    assert np.allclose(sum(blocks[i, :, i, :] for i in range(c)), P @ P.T)
    assert np.allclose(np.einsum("ipjp->ij", blocks), P.T @ P)
    # the cvxpy statement agrees with objective() and sees Q as feasible
    problem = relaxation.problem()
    X = relaxation.primary_variable(problem)
    X.value = Q
    assert problem.objective.value == pytest.approx(relaxation.objective(Q), rel=1e-12)
    assert all(np.max(np.atleast_1d(con.violation())) < 1e-9 for con in problem.constraints)


def test_residuals_detect_each_violation():
    m, c = 6, 2
    K, A = instance(m, c)
    P = partition_matrix([0, 0, 0, 1, 1, 1], c, normalization="l2")
    Q = lift(P)
    relaxation = CLUHSICSDP(K, A, known=[0, -1, -1, -1, -1, 1])
    bad = Q.copy()
    bad[0, 1] = bad[1, 0] = -0.1
    assert relaxation.residuals(bad)["nonnegativity"] > 0.1
    assert relaxation.residuals(2 * Q)["odiag"] == pytest.approx(1.0)
    assert relaxation.residuals(2 * Q)["bdiag"] == pytest.approx(1.0)
    v = P.ravel(order="F")
    assert relaxation.residuals(Q - 2 * np.outer(v, v))["psd"] > 0.5
    asym = Q.copy()
    asym[0, 1] += 0.1
    assert relaxation.residuals(asym)["symmetry"] > 0.01
    # cluster 1 holding point 0 violates known[0] = 0
    swapped = lift(partition_matrix([1, 0, 0, 0, 1, 1], c, normalization="l2"))
    assert relaxation.residuals(swapped)["known"] > 0.5


# -- the affine operator ----------------------------------------------------------------------------
@pytest.mark.parametrize("known", [None, [0, -1, 1, -1, -1, 2, 0], [0, 1, 2, 0, 1, 2, 0]])
def test_affine_operator_adjoint_and_gram(known):
    """<A(X), y> = <X, A*(y)> and the closed-form Gram matrix equals A A* column by column."""
    rng = np.random.default_rng(0)
    m, c = 7, 3
    K, A = instance(m, c)
    op = CLUHSICSDP(K, A, known=known).operator
    X = rng.standard_normal((op.n, op.n))
    X = X + X.T
    y = rng.standard_normal(op.b.size)
    assert op.apply(X) @ y == pytest.approx(np.sum(op.adjoint(y) * X), rel=1e-12)
    gram = np.column_stack([op.apply(op.adjoint(e)) for e in np.eye(op.b.size)])
    assert np.allclose(gram, op.gram, atol=1e-13)


@pytest.mark.parametrize("known", [None, [1, -1, 0, -1, -1, 1, -1]])
def test_affine_projection_matches_cvxpy(known):
    """The closed form W - A*((A A*)^+ (A(W) - b)) is the projection cvxpy finds onto the
    affine constraints of (5.23), stated independently with bdiag/odiag slices."""
    rng = np.random.default_rng(0)
    m, c = 7, 2
    K, A = instance(m, c)
    relaxation = CLUHSICSDP(K, A, known=known)
    op = relaxation.operator
    W = rng.standard_normal((m * c, m * c))
    W = (W + W.T) / 2
    # cvxpy: nearest point in the affine constraints of the statement (2, 3 and the known rows)
    statement = cluhsic_sdp_problem(relaxation.K, relaxation.A, relaxation.known)
    X = statement.variables()[0]
    affine = statement.constraints[2:]
    cp.Problem(cp.Minimize(cp.sum_squares(X - W)), affine).solve(solver="CLARABEL")
    idx = op.index
    mine = relaxation.embed(op.project(W[np.ix_(idx, idx)]))
    assert np.allclose(mine, X.value, atol=1e-6)
    assert max(relaxation.residuals(mine)[k] for k in ("odiag", "bdiag")) < 1e-12


def test_solver_system_fixes_the_cross_entries():
    """The solver's equivalent system (zero_cross): on Q >= 0, tr Q_[ij] = 0 (i != j) holds iff
    every entry ((i, p), (j, p)) is zero; its projection matches cvxpy's onto the affine
    constraints with those entries fixed explicitly, and satisfies the paper's constraints."""
    rng = np.random.default_rng(1)
    m, c = 6, 3
    K, A = instance(m, c)
    relaxation = CLUHSICSDP(K, A, known=[0, -1, 2, -1, -1, -1])
    op = AffineOperator(m, c, relaxation.free, zero_cross=True)
    idx = op.index
    W = rng.standard_normal((m * c, m * c))
    W = (W + W.T) / 2
    statement = cluhsic_sdp_problem(relaxation.K, relaxation.A, relaxation.known)
    X = statement.variables()[0]
    cross = [X[i * m + p, j * m + p] == 0 for i in range(c) for j in range(c) if i != j for p in range(m)]
    cp.Problem(cp.Minimize(cp.sum_squares(X - W)), statement.constraints[2:] + cross).solve(solver="CLARABEL")
    mine = relaxation.embed(op.project(W[np.ix_(idx, idx)]))
    assert np.allclose(mine, X.value, atol=1e-6)
    assert max(relaxation.residuals(mine)[k] for k in ("odiag", "bdiag", "known")) < 1e-12


# -- solvers against the reference ------------------------------------------------------------------
CASES = [
    (8, 2, "chain", None),
    (12, 3, "chain", None),
    (10, 2, "identity", None),
    (12, 3, "identity", None),
    (12, 3, "chain", "known"),
    (12, 4, "ring", None),
]
#: cases whose optimum is not unique: both solvers' points are optimal yet far apart
NON_UNIQUE = [(12, 3, "chain", None), (12, 3, "identity", None), (12, 4, "ring", None)]


@pytest.fixture(scope="module")
def solved():
    """Reference and ADMM results per case, computed once."""
    out = {}
    for m, c, structure, known in CASES:
        K, A = instance(m, c, structure)
        labels = None
        if known:
            labels = -np.ones(m, dtype=int)
            labels[[0, 1, 2, 5]] = [0, 1, 2, 1]
        relaxation = CLUHSICSDP(K, A, known=labels)
        with warnings.catch_warnings():
            # Clarabel may call 1e-8 "inaccurate"; its accuracy is checked explicitly instead
            warnings.simplefilter("ignore")
            reference = relaxation.solve("reference", **REFERENCE)
        out[(m, c, structure, known)] = (relaxation, reference, relaxation.solve("admm"))
    return out


@pytest.mark.parametrize("case", CASES, ids=[f"m{m}-c{c}-{s}-{k or 'unsup'}" for m, c, s, k in CASES])
def test_admm_matches_reference(solved, case):
    _, reference, result = solved[case]
    assert reference.max_residual < 1e-7
    assert result.status == "optimal"
    assert result.method == "admm"
    gap = abs(result.objective - reference.objective) / abs(reference.objective)
    assert gap <= 1e-4
    assert result.max_residual <= 1e-5
    distance = np.linalg.norm(result.X - reference.X) / np.linalg.norm(reference.X)
    if case not in NON_UNIQUE:
        assert distance < 2e-2
    # else: the optimal set of (5.23) is not a singleton (both points are feasible and optimal
    # to the tolerances above, yet far apart): the interior-point reference lands in its
    # relative interior, the ADMM anywhere on it, and their distance says nothing
    # the certificate: relative gap below the default tol = 1e-4, worst residual below the
    # default residual_tol = 1e-5, and the bound on the right side of the objective
    assert result.relative_gap <= 1e-4
    assert result.dual_bound >= result.objective
    assert set(result.extras) == {"rho", "scale", "psd_blocks"} and result.extras["rho"] > 0


#: the orders of the p.s.d. projection's blocks: the relabelings that keep A split it (the
#: reversal of a chain, all of them for the identity, the dihedral group of a ring); known labels
#: fix clusters, so that case keeps one block of the free indices
PSD_BLOCKS = {(8, 2, "chain", None): [8, 8], (12, 3, "chain", None): [24, 12], (10, 2, "identity", None): [10, 10],
              (12, 3, "identity", None): [12, 12, 12], (12, 3, "chain", "known"): [28],
              (12, 4, "ring", None): [12, 12, 12, 12]}


@pytest.mark.parametrize("case", CASES, ids=[f"m{m}-c{c}-{s}-{k or 'unsup'}" for m, c, s, k in CASES])
def test_symmetry_splits_the_projection_without_changing_the_solve(solved, case):
    relaxation, _, result = solved[case]
    assert sorted(result.extras["psd_blocks"]) == sorted(PSD_BLOCKS[case])
    plain = relaxation.solve("admm", symmetry=False)
    assert plain.extras["psd_blocks"] == [relaxation.operator.n]
    assert plain.status == result.status == "optimal"
    # the same iteration up to rounding (the iterates are invariant and the blocks project them
    # exactly), which over the 1,300 iterations of the slowest case moves the end by about 1e-7
    assert result.objective == pytest.approx(plain.objective, rel=1e-6)
    assert result.dual_bound == pytest.approx(plain.dual_bound, rel=1e-6)
    assert abs(result.iterations - plain.iterations) <= 0.05 * plain.iterations
    if case[3] is None:  # the solution is invariant under the relabelings
        m, c = relaxation.m, relaxation.c
        for perm in kernel_automorphisms(relaxation.A):
            P = np.kron(np.eye(c)[perm], np.eye(m))
            np.testing.assert_allclose(P @ result.X @ P.T, result.X, atol=1e-10)


@pytest.mark.parametrize("case", CASES, ids=[f"m{m}-c{c}-{s}-{k or 'unsup'}" for m, c, s, k in CASES])
def test_bounds_are_valid_upper_bounds(solved, case):
    """The ADMM's certified bound and the bound from cvxpy's duals are >= the reference optimum
    (a maximization), and the reference's bound is tight."""
    _, reference, result = solved[case]
    optimum = reference.objective
    assert result.dual_bound >= optimum - 1e-7 * abs(optimum)
    assert reference.dual_bound >= optimum - 1e-7 * abs(optimum)
    assert reference.dual_bound <= optimum + 1e-6 * abs(optimum)


def test_known_labels_are_respected(solved):
    relaxation, reference, result = solved[(12, 3, "chain", "known")]
    m, c = relaxation.m, relaxation.c
    blocks = result.X.reshape(c, m, c, m)
    for p, label in enumerate(relaxation.known):
        if label >= 0:
            for cluster in set(range(c)) - {label}:
                assert not np.any(blocks[cluster, p]) and not np.any(blocks[:, :, cluster, p])
            # the point's mass sits in its own cluster: bdiag row sum 1 from block (label, label)
            assert blocks[label, p, label].sum() == pytest.approx(1.0, abs=1e-9)
    assert result.residuals["known"] == 0.0
    assert reference.residuals["known"] < 1e-8


def test_relaxation_bounds_every_hard_partition():
    """(5.23) relaxes (2.4): with m = 6, c = 2 every partition's lifted Q has objective below the
    SDP optimum, and so below the certified bound."""
    m, c = 6, 2
    K, A = instance(m, c, "chain", seed=1)
    relaxation = CLUHSICSDP(K, A)
    result = relaxation.solve("admm")
    reference = relaxation.solve("reference", **REFERENCE)
    best = -np.inf
    for labels in itertools.product(range(c), repeat=m):
        if len(set(labels)) < c:
            continue
        P = partition_matrix(np.array(labels), c, normalization="l2")
        value = objective(K, A, P)
        assert relaxation.objective(lift(P)) == pytest.approx(value, rel=1e-12, abs=1e-12)
        best = max(best, value)
    assert result.dual_bound >= best
    assert reference.objective >= best - 1e-8 * abs(best)
    assert result.dual_bound >= reference.objective - 1e-7 * abs(reference.objective)


def test_objective_scale_bounds_every_feasible_objective():
    """c ||A||_2 ||K||_2 bounds |tr((A kron K) Q)| over the feasible set: the lifted partitions and
    the SDP optimum stay within it."""
    rng = np.random.default_rng(3)
    m, c = 8, 3
    K, A = instance(m, c, "ring")
    relaxation = CLUHSICSDP(K, A)
    scale = relaxation.objective_scale()
    assert scale == pytest.approx(c * np.abs(np.linalg.eigvalsh(A)).max() * np.abs(np.linalg.eigvalsh(K)).max())
    for _ in range(20):
        P = partition_matrix(random_labels(m, c, rng), c, normalization="l2")
        assert abs(relaxation.objective(lift(P))) <= scale
    assert abs(relaxation.solve("reference", **REFERENCE).objective) <= scale


@pytest.mark.parametrize("known", [None, "all"])
def test_one_cluster_is_certified_at_its_only_feasible_point(known):
    """With c = 1 the feasible set is the single point 11^T/m, of objective 0 for a centred K: no
    relative gap of two rounding errors is small, and the gap's floor (objective_scale) certifies
    it."""
    m = 12
    K, _ = instance(m, 2)
    relaxation = CLUHSICSDP(K, np.ones((1, 1)), known=None if known is None else np.zeros(m, dtype=int))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = relaxation.solve("admm")
    assert result.status == "optimal"
    assert result.iterations < 200
    assert result.relative_gap <= 1e-4
    np.testing.assert_allclose(result.X, np.full((m, m), 1.0 / m), atol=1e-6)
    assert abs(result.objective) <= 1e-8 * relaxation.objective_scale()


def test_dual_value_is_an_upper_bound_for_any_multiplier():
    """b^T y + c lambda_max(C - A*(y) + Z) bounds every feasible point, whatever y and Z >= 0."""
    rng = np.random.default_rng(0)
    m, c = 6, 2
    K, A = instance(m, c)
    relaxation = CLUHSICSDP(K, A)
    n = relaxation.operator.n
    hard = [relaxation.objective(lift(partition_matrix(rng.permutation([0, 0, 0, 1, 1, 1]), c, normalization="l2")))
            for _ in range(10)]
    for _ in range(5):
        y = rng.standard_normal(relaxation.operator.b.size)
        Z = np.abs(rng.standard_normal((n, n)))
        assert relaxation.dual_value(y, Z) >= max(hard)
    with pytest.raises(ValueError, match="Z"):
        relaxation.dual_value(y, -Z)


@pytest.mark.parametrize("arguments,name", [
    (lambda y, Z: (y[:-1], Z), "y"), (lambda y, Z: (y.astype(complex), Z), "y"), (lambda y, Z: (y * np.nan, Z), "y"),
    (lambda y, Z: (y, Z[:-1]), "Z"), (lambda y, Z: (y, Z + 0j), "Z"),
    (lambda y, Z: (y, np.where(Z > 1, np.inf, Z)), "Z"),
])
def test_dual_value_refuses_multipliers_it_cannot_use(arguments, name):
    """A multiplier of the wrong length or shape, complex or not finite would give a wrong or NaN
    bound (complex parts dropped with a warning, a short y broadcast): a ValueError naming it."""
    K, A = instance(6, 2)
    relaxation = CLUHSICSDP(K, A)
    n = relaxation.operator.n
    y, Z = np.ones(relaxation.operator.b.size), np.full((n, n), 2.0)
    with pytest.raises(ValueError, match=name):
        relaxation.dual_value(*arguments(y, Z))
    with pytest.raises(ValueError, match="cross"):
        relaxation.dual_value(y, Z, cross=np.zeros((n + 1, n + 1)))


# -- stopping and inputs ----------------------------------------------------------------------------
def test_admm_warns_at_max_iter():
    K, A = instance(10, 2)
    relaxation = CLUHSICSDP(K, A)
    with pytest.warns(ConvergenceWarning, match="admm"):
        result = relaxation.solve("admm", max_iter=3)
    assert result.status == "max_iter"
    assert result.iterations == 3
    assert result.dual_bound is not None and np.isfinite(result.dual_bound)
    assert result.X.shape == (20, 20)


@pytest.mark.parametrize("gap_in_tol, residual_in_tol, expected", [
    (1.5, 0.9, 0.5),  # above tol, the gap aims at tol / 4: 6 against 0.9, rho halves
    (0.5, 0.9, 1.0),  # certified below tol, it aims at tol: 0.5 against 0.9, within mu, rho stays
    (0.5, 2.0, 2.0),  # 0.5 against 2: the residuals get the penalty (aimed at tol / 4, rho would stay)
    (0.02, 0.9, 2.0),  # far below tol: rho doubles for the residuals
    (1.1, 2.0, 0.5),  # just above tol: 4.4 against 2, rho halves
])
def test_admm_balancing_aims_the_gap_at_a_quarter_of_tol_until_it_is_certified(gap_in_tol, residual_in_tol, expected):
    """The gap's target is tol / 4 while the certified gap is above tol (the bound, kept for good,
    settles while rho is small), tol once it is below; mu = 2."""
    solver = ADMM(CLUHSICSDP(*instance(8, 2)), mu=2.0, adapt_every=10)
    state = solver.init_state()
    solver.step(state, 0)
    state.checked, state.gap = True, gap_in_tol * solver.tol
    state.worst = residual_in_tol * solver.residual_tol
    solver._advance(state, 10)
    assert state.rho == expected * solver.rho


@pytest.mark.parametrize("start, gap_in_tol, residual_in_tol", [(1e-6, 10.0, 0.9), (1e6, 0.01, 100.0)])
def test_admm_penalty_stays_within_its_range(start, gap_in_tol, residual_in_tol):
    """At the ends of RHO_RANGE the balancing stops: a gap that cannot reach its target would
    otherwise halve rho until C / rho overflows (without them, tol = 1e-6 on a 90 x 90 digits
    instance takes rho to 2e-16 and ends with a residual of 30)."""
    solver = ADMM(CLUHSICSDP(*instance(8, 2)), mu=2.0, adapt_every=10)
    state = solver.init_state()
    solver.step(state, 0)
    state.rho = start * solver.rho
    state.checked, state.gap = True, gap_in_tol * solver.tol
    state.worst = residual_in_tol * solver.residual_tol
    solver._advance(state, 10)
    assert state.rho == start * solver.rho and state.rescale == 1.0
    state.rho = solver.rho  # away from the ends the same figures move it
    state.checked = True
    solver._advance(state, 10)
    assert state.rho != solver.rho


def test_auto_dispatches_to_admm():
    K, A = instance(8, 2)
    relaxation = CLUHSICSDP(K, A)
    assert "admm" in CLUHSICSDP.methods()
    assert relaxation.solve().method == "admm"
    with pytest.raises(ValueError, match="Unknown method"):
        relaxation.solve("newton")


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"K": np.triu(np.ones((6, 6)))}, "K"),
        ({"K": np.full((6, 6), np.nan)}, "K"),
        ({"K": np.ones((6, 5))}, "K"),
        ({"K": [["a"] * 6] * 6}, "K"),
        ({"A": np.array([[1.0, 2.0], [0.0, 1.0]])}, "A"),
        ({"A": np.ones((2, 3))}, "A"),
        ({"A": np.eye(7)}, "A"),
        ({"A": np.array([[0.0, 1.0], [1.0, 0.0]])}, "A"),  # an output kernel is p.s.d.
        ({"known": [0, 1, 2]}, "known"),
        ({"known": [0, 1, 5, -1, -1, -1]}, "known"),
        ({"known": [0, 0, 0, 0, 0, -2]}, "known"),
        ({"known": [0, 0, 0, 0, 0, 0]}, "known"),
        ({"known": [0.5, 0, 0, 0, 0, 0]}, "known"),
        ({"K": None}, "K"),
        ({"A": None}, "A"),
        ({"K": np.ones((6, 6)) * 1j}, "K"),
        ({"A": np.ones((3, 2))}, "A"),
    ],
)
@pytest.mark.parametrize("build", [CLUHSICSDP, cluhsic_sdp_problem])
def test_bad_inputs_name_the_argument(kwargs, name, build):
    """The relaxation and its cvxpy statement check K, A and known alike (the statement once
    built with no check on K=None, a 3 x 2 A, a non-square or NaN K)."""
    K, A = instance(6, 2)
    args = {"K": K, "A": A, "known": None, **kwargs}
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        build(**args)


@pytest.mark.parametrize("P", [None, "ab", np.full((3, 2), np.nan), np.ones((3, 2)) * (1 + 1j), np.ones((2, 2, 2)),
                               np.ones(4), [[1.0, 2.0], [3.0]]])
def test_lift_refuses_what_is_not_a_finite_real_matrix(P):
    """lift(None) was [[nan]], a NaN P gave a NaN Q and a complex P lost its imaginary part."""
    with pytest.raises(ValueError, match=r"^P\b"):
        lift(P)


@pytest.mark.parametrize("Q", [np.full((12, 12), np.nan), np.full((12, 12), np.inf), np.ones((12, 12)) * (1 + 1j),
                               np.ones((12, 11)), np.ones((6, 6)), None, np.ones((12, 12, 1)), [["a"] * 12] * 12])
@pytest.mark.parametrize("method", ["objective", "residuals"])
def test_objective_and_residuals_refuse_what_is_not_a_finite_real_Q(Q, method):
    """A NaN Q gave a NaN objective (and a LinAlgError in residuals), as no other relaxation does."""
    K, A = instance(6, 2)
    with pytest.raises(ValueError, match=r"^Q\b"):
        getattr(CLUHSICSDP(K, A), method)(Q)


def test_admm_time_limit_before_the_first_iteration():
    """A time limit spent by the set-up still gives a valid Result: the projected start, its
    residuals, a certified bound from the start's multipliers, and a warning."""
    K, A = instance(10, 2)
    relaxation = CLUHSICSDP(K, A)
    with pytest.warns(ConvergenceWarning, match="time limit"):
        result = relaxation.solve("admm", time_limit=1e-9)
    assert result.status == "time_limit" and result.method == "admm"
    assert result.iterations == 0
    assert result.X.shape == (20, 20) and np.all(np.isfinite(result.X))
    assert result.residuals["odiag"] < 1e-12 and result.residuals["bdiag"] < 1e-12  # the affine start
    assert result.objective == pytest.approx(relaxation.objective(result.X), rel=1e-12)
    optimum = relaxation.solve("reference", **REFERENCE).objective
    assert np.isfinite(result.dual_bound) and result.dual_bound >= optimum - 1e-7 * abs(optimum)


def test_admm_leaves_its_inputs_unchanged():
    K, A = instance(8, 2)
    known = np.array([0, -1, -1, -1, -1, -1, -1, 1])
    copies = K.copy(), A.copy(), known.copy()
    relaxation = CLUHSICSDP(K, A, known=known)
    with pytest.warns(ConvergenceWarning):
        relaxation.solve("admm", max_iter=30)
    for original, copy in zip((K, A, known), copies):
        np.testing.assert_array_equal(original, copy)


def test_float32_kernel_is_accepted():
    """A float32 kernel symmetric to its own rounding is not refused by a float64 tolerance, and
    gives the float64 kernel's answer to the solver's accuracy."""
    K, A = instance(8, 2)
    K32 = K.astype(np.float32)
    K32[0, 1] = np.nextafter(K32[0, 1], np.float32(np.inf))  # asymmetric by one float32 ulp
    relaxation = CLUHSICSDP(K32, A)
    assert relaxation.K.dtype == np.float64 and np.array_equal(relaxation.K, relaxation.K.T)
    result = relaxation.solve("admm")
    assert result.status == "optimal"
    assert result.objective == pytest.approx(CLUHSICSDP(K, A).solve("admm").objective, rel=1e-4)


@pytest.mark.parametrize(
    "option, value",
    [("tol", 0.0), ("residual_tol", -1.0), ("max_iter", 0), ("rho", -1.0), ("alpha", 2.0), ("mu", 0.5),
     ("anderson", -1), ("safeguard", 0.0), ("partial_eig", "yes"), ("verbose", 1),
     ("check_every", 0), ("adapt_every", 1.5), ("time_limit", -1.0)],
)
def test_bad_solver_options_name_the_option(option, value):
    K, A = instance(6, 2)
    with pytest.raises(ValueError, match=option):
        CLUHSICSDP(K, A).solve("admm", **{option: value})


def test_old_option_names_are_refused():
    """The gap tolerance is ``tol`` and the residual tolerance ``residual_tol``: ``gap_tol`` is
    no option of the solver any more."""
    K, A = instance(6, 2)
    with pytest.raises(TypeError, match="gap_tol"):
        CLUHSICSDP(K, A).solve("admm", gap_tol=1e-4)


def test_proposition_3_rank_one_feasible_points_are_exactly_the_lifted_partitions():
    """Proposition 3 via Lemmas 2-3: a rank-one Q = vec(P) vec(P)^T is feasible for (5.23) iff P
    is a normalized partition matrix (up to sign); each way of breaking the partition structure
    breaks one constraint, and the optimum of (5.25) over all partitions is that of (2.4)."""
    rng = np.random.default_rng(0)
    m, c = 6, 2
    K = rng.standard_normal((m, 3))
    K = K @ K.T
    A = np.array([[2.0, 1.0], [1.0, 2.0]])
    relaxation = CLUHSICSDP(K, A)

    def worst(P):
        return max(relaxation.residuals(lift(P)).values())

    best = -np.inf
    for labels in itertools.product(range(c), repeat=m):
        if len(set(labels)) < c:
            continue
        P = partition_matrix(np.array(labels), c, normalization="l2")
        assert worst(P) < 1e-12 and worst(-P) < 1e-12  # Lemma 2: P >= 0 or P <= 0
        best = max(best, relaxation.objective(lift(P)))
        assert relaxation.objective(lift(P)) == pytest.approx(objective(K, A, P))
    assert best == pytest.approx(max(objective(K, A, partition_matrix(np.array(lab), c, normalization="l2"))
                                     for lab in itertools.product(range(c), repeat=m) if len(set(lab)) == c))
    P = partition_matrix(np.array([0, 0, 0, 1, 1, 1]), c, normalization="l2")
    mixed = P.copy()
    mixed[0, 0] *= -1  # mixed signs: Q >= 0 fails (Lemma 2)
    assert relaxation.residuals(lift(mixed))["nonnegativity"] > 0.1
    unequal = P.copy()
    unequal[:3, 0] = np.array([2.0, 1.0, 1.0]) / np.sqrt(6.0)  # unit column, unequal entries: (5.24) fails (Lemma 3)
    res = relaxation.residuals(lift(unequal))
    assert res["odiag"] < 1e-12 and res["bdiag"] > 0.1
    shared = P.copy()
    shared[0, 1] = 0.5  # a row with two nonzeros: columns no longer orthonormal (Lemma 2)
    assert relaxation.residuals(lift(shared))["odiag"] > 0.1
