"""The generic certified solver (:func:`cvxclust.solve`, method ``"generic"``) against Clarabel:
random problems of the class, the package's own relaxations stated in cvxpy, the in-place
``problem.solve(method="cvxclust")``, warm starts, ``cvxclust.validate`` on a plain problem, the
reference's choice of solver by size, and the caller's arrays left untouched."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust._relaxation import reference_solver_for
from cvxclust.cluhsic import CLUHSICSDP
from cvxclust.kernels import center, rbf
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD, PengWei

ACCURATE = {"tol": 1e-7, "residual_tol": 1e-7, "max_iter": 100_000}
CLARABEL = {"solver": "CLARABEL"}
FORMS = ("psd", "nonneg", "row_sums", "trace", "diagonal", "inequality", "upper")


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def symmetric(rng, n):
    A = rng.standard_normal((n, n))
    return (A + A.T) / 2


# -- (a) random problems of the class against Clarabel ---------------------------------------------
def instance(n, seed, forms, sense, weight, spelling):
    """A problem of the class, feasible and bounded by construction: every constraint holds at
    ``X0 = (1 - t) 11^T/n + t I`` (p.s.d., nonnegative, unit row sums, trace k), and a Frobenius
    term, the p.s.d. cone with a fixed trace, or a full box bounds it."""
    rng = np.random.default_rng(seed)
    k = float(rng.integers(1, n)) if rng.integers(2) else float(rng.uniform(1, n - 1))
    t = (k - 1) / (n - 1)
    X0 = (1 - t) * np.ones((n, n)) / n + t * np.eye(n)
    if not (weight > 0 or {"psd", "trace"} <= forms or {"nonneg", "upper"} <= forms):
        forms = forms | {"nonneg", "upper"}
    X = cp.Variable((n, n), symmetric=True, name="X")
    R = symmetric(rng, n)
    U = X0 + rng.uniform(0.05, 1.0, (n, n))
    make = {"psd": lambda: X >> 0, "nonneg": lambda: X >= 0, "row_sums": lambda: cp.sum(X, axis=1) == 1,
            "trace": lambda: cp.trace(X) == k, "diagonal": lambda: cp.diag(X) <= np.diag(X0) + rng.uniform(0, 0.5, n),
            "inequality": lambda: cp.sum(cp.multiply(R, X)) <= float(np.sum(R * X0)) + rng.uniform(0, 1),
            "upper": lambda: X <= (U + U.T) / 2}
    constraints = [make[form]() for form in FORMS if form in forms]
    K = symmetric(rng, n)
    square = {"sum_squares": lambda: cp.sum_squares(X - K), "fro": lambda: cp.norm(X - K, "fro") ** 2,
              "square": lambda: cp.sum(cp.square(X - K))}[spelling]
    linear = cp.trace(symmetric(rng, n) @ X)
    if sense == "minimize":
        objective = cp.Minimize(linear + weight * square() if weight else linear)
    else:
        objective = cp.Maximize(linear - weight * square() if weight else linear)
    return cp.Problem(objective, constraints)


@st.composite
def instances(draw):
    """:func:`instance` with drawn arguments (noted, so that a failure can be replayed)."""
    arguments = dict(n=draw(st.integers(4, 10)), seed=draw(st.integers(0, 2**32 - 1)),
                     forms={form for form in FORMS if draw(st.booleans())},
                     sense=draw(st.sampled_from(["minimize", "maximize"])),
                     weight=draw(st.sampled_from([0.0, 0.1, 1.0, 3.0])),
                     spelling=draw(st.sampled_from(["sum_squares", "fro", "square"])))
    note(f"instance(**{arguments})")
    return instance(**arguments)


@settings(max_examples=20, deadline=None)
@given(problem=instances())
def test_random_problems_agree_with_clarabel(problem):
    assert_agrees_with_clarabel(problem)


def assert_agrees_with_clarabel(problem):
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, **ACCURATE)
    reference = problem.solve(**CLARABEL)
    assert problem.status == cp.OPTIMAL
    scale = max(abs(reference), 1.0)
    assert abs(result.objective - reference) <= 1e-5 * scale
    slack = 1e-7 * scale
    if isinstance(problem.objective, cp.Minimize):
        assert result.dual_bound <= reference + slack
    else:
        assert result.dual_bound >= reference - slack
    assert result.status == "optimal"
    assert max(result.residuals.values()) <= ACCURATE["residual_tol"]


# instances each of which once broke the solver: a crash on an antisymmetric part grown from
# rounding, linear programs over a box left without a bound, an extrapolation that threw a box
# multiplier far along its normal cone
SEEN = [
    dict(n=4, seed=8180, forms={"row_sums", "upper", "inequality", "psd", "nonneg"}, sense="minimize", weight=0.1,
         spelling="sum_squares"),
    dict(n=10, seed=15, forms={"nonneg", "upper"}, sense="minimize", weight=0.0, spelling="fro"),
    dict(n=11, seed=67, forms={"nonneg", "diagonal", "inequality", "upper"}, sense="minimize", weight=0.0,
         spelling="fro"),
    dict(n=5, seed=3958, forms={"upper", "nonneg", "trace"}, sense="minimize", weight=0.1, spelling="sum_squares"),
]


@pytest.mark.parametrize("arguments", SEEN, ids=lambda a: f"n{a['n']}-seed{a['seed']}")
def test_instances_seen_to_fail(arguments):
    assert_agrees_with_clarabel(instance(**arguments))


def test_a_linear_program_under_a_trace_cap_is_certified():
    rng = np.random.default_rng(1)
    C = symmetric(rng, 6)
    for sense in (cp.Minimize, cp.Maximize):
        X = cp.Variable((6, 6), symmetric=True)
        problem = cp.Problem(sense(cp.trace(C @ X)), [X >= -1, X <= 1, cp.trace(X) <= 2])
        result = cvxclust.solve(problem, tol=1e-8, residual_tol=1e-8)
        assert result.status == "optimal"
        assert result.objective == pytest.approx(problem.solve(**CLARABEL), rel=1e-6)


@pytest.mark.parametrize("arguments, options", [
    (dict(n=4, seed=8180, forms={"nonneg", "row_sums", "inequality", "upper"}, sense="minimize", weight=0.1,
          spelling="sum_squares"), {"max_iter": 12000}),
    (dict(n=7, seed=1393320221, forms={"nonneg", "row_sums", "upper"}, sense="maximize", weight=0.1, spelling="fro"),
     {"max_iter": 3000, "adapt_every": 10**9}),
], ids=["antisymmetric-multiplier", "runaway-multiplier"])
def test_the_bound_holds_wherever_the_iteration_stops(arguments, options):
    problem = instance(**arguments)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        result = cvxclust.solve(problem, tol=1e-7, residual_tol=1e-7, **options)
    optimum = problem.solve(**CLARABEL)
    slack = 1e-7 * max(abs(optimum), 1.0)
    if arguments["sense"] == "minimize":
        assert result.dual_bound <= optimum + slack
    else:
        assert result.dual_bound >= optimum - slack


# -- (b) the package's relaxations through their cvxpy statement -----------------------------------
def chain(c):
    return 2.0 * np.eye(c) + np.eye(c, k=1) + np.eye(c, k=-1)


def relaxations():
    rng = np.random.default_rng(0)
    K = symmetric(rng, 10)  # not p.s.d.: the cone is active in (7)
    points = np.r_[rng.standard_normal((4, 2)), rng.standard_normal((4, 2)) + 3]
    return {
        "FrobeniusPSD": FrobeniusPSD(K), "FrobeniusDS": FrobeniusDS(K), "PengWei-random": PengWei(K, 3),
        "PengWei-rbf": PengWei(rbf(points), 2), "CLUHSICSDP-2": CLUHSICSDP(center(rbf(points)), chain(2)),
        "CLUHSICSDP-3": CLUHSICSDP(center(rbf(points[:6])), chain(3)),
    }


@pytest.mark.parametrize("name", list(relaxations()))
def test_relaxations_agree_with_reference_and_own_solver(name):
    relaxation = relaxations()[name]
    assert relaxation.has_generic() and "generic" in relaxation.scalable_methods()
    result = relaxation.solve("generic", tol=1e-8, residual_tol=1e-8)
    reference = relaxation.solve("reference", eps=1e-8)
    assert reference.status == "optimal"
    assert result.status == "optimal" and result.method == "generic"
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    slack = 1e-7 * abs(reference.objective)
    if relaxation.sense == "minimize":
        assert result.dual_bound <= reference.objective + slack
    else:
        assert result.dual_bound >= reference.objective - slack
    assert max(result.residuals.values()) <= 1e-8
    if isinstance(relaxation, (FrobeniusPSD, PengWei)):
        # two blocks: the point is restored with the centre, feasible up to rounding
        assert result.residuals["nonnegativity"] == 0.0
        assert max(result.residuals.values()) <= 1e-12
    if "admm" in relaxation.methods():
        own = relaxation.solve("admm", tol=1e-8, residual_tol=1e-8)
        assert result.objective == pytest.approx(own.objective, rel=1e-6)


# -- (c) problem.solve(method="cvxclust") ----------------------------------------------------------
def frobenius_problem(k=None, extra=()):
    """The nearest doubly stochastic p.s.d. matrix to an rbf kernel, with further constraints."""
    rng = np.random.default_rng(3)
    K = rbf(np.r_[rng.standard_normal((5, 2)), rng.standard_normal((5, 2)) + 3])
    X = cp.Variable((10, 10), symmetric=True, name="X")
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, *(c(X) for c in extra)]
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - K)), constraints), X


def test_solve_in_place_fills_the_problem():
    problem, X = frobenius_problem()
    value = problem.solve(method="cvxclust", tol=1e-8, residual_tol=1e-8)
    assert problem.status == cp.OPTIMAL and value == problem.value
    result = problem.cvxclust_result
    assert result.status == "optimal" and np.array_equal(X.value, result.X)
    assert value == pytest.approx(problem.objective.value, rel=1e-12)  # the value at X.value
    assert value == pytest.approx(problem.solve(**CLARABEL), rel=1e-6)


@pytest.mark.parametrize("limit", [{"max_iter": 3}, {"time_limit": 1e-9}])
def test_a_limit_is_a_user_limit(limit):
    # a trace bound: method="auto" runs the generic solver (the nearest-point problem alone goes to dual-newton)
    problem, X = frobenius_problem(extra=(lambda X: cp.trace(X) <= 5,))
    with pytest.warns(ConvergenceWarning, match="generic stopped"):
        value = problem.solve(method="cvxclust", **limit)
    assert problem.status == cp.USER_LIMIT and problem.status == "user_limit"
    assert problem.cvxclust_result.status == next(iter(limit)) != "optimal"
    assert value == problem.value and X.value is not None
    with pytest.warns(ConvergenceWarning):
        assert cvxclust.solve(problem, **limit).status != "optimal"


def _clustering_problem(extra, sense=cp.Maximize, n=20):
    """Peng-Wei on rbf(blobs) with ``extra(X)`` added."""
    rng = np.random.default_rng(4)
    points = np.repeat(rng.standard_normal((4, 2)) * 3, n // 4, axis=0) + rng.standard_normal((n, 2))
    X = cp.Variable((n, n), symmetric=True)
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 4] + extra(X)
    return cp.Problem(sense(cp.trace(rbf(points) @ X)), constraints), X


#: constraints that no X of the Peng-Wei set meets, each by a different route
UNMEETABLE = {
    # X >= 0 with unit row sums keeps a 5 x 5 block's sum at most 5 (a row left over)
    "block sum": lambda X: [cp.sum(X[:5, :5]) >= 30],
    # an entry above 1/2 (a box bound), where X_01 <= sqrt(X_00 X_11) and X_00 + X_01 <= 1
    "an entry": lambda X: [X[0, 1] >= 0.6],
    # the diagonal sums to the trace 4 (a row against the trace in the structure)
    "diagonal": lambda X: [cp.sum(cp.diag(X)[:10]) >= 4.5],
}


@pytest.mark.parametrize("sense", [cp.Maximize, cp.Minimize])
@pytest.mark.parametrize("name", list(UNMEETABLE))
def test_infeasible_constraints_are_certified_infeasible(name, sense):
    problem, _ = _clustering_problem(UNMEETABLE[name], sense)
    reference, _ = _clustering_problem(UNMEETABLE[name], sense)
    reference.solve(**CLARABEL)
    assert reference.status == cp.INFEASIBLE
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        result = cvxclust.solve(problem)
    assert result.status == "infeasible"
    assert result.iterations < 2000  # well before max_iter
    certificate = result.extras["infeasibility"]
    assert certificate["bound"] > 0
    assert certificate["row_multipliers"] is not None
    # in place, as cvxpy reports an infeasible problem
    problem, X = _clustering_problem(UNMEETABLE[name], sense)
    with pytest.warns(ConvergenceWarning):
        value = problem.solve(method="cvxclust")
    assert problem.status == cp.INFEASIBLE and X.value is None
    assert value == problem.value == (np.inf if sense is cp.Minimize else -np.inf)


def test_feasible_problems_carry_no_certificate_of_infeasibility():
    # feasible only on their boundary (points 0-4 a cluster of their own; X_01 <= sqrt(X_00 X_11)
    # and X_00 + X_01 <= 1 keep X_01 at most 1/2): no direction of the multipliers certifies anything
    for extra in (lambda X: [cp.sum(X[:5, :5]) >= 5], lambda X: [X[0, 1] >= 0.5]):
        reference, _ = _clustering_problem(extra)
        reference.solve(**CLARABEL)
        assert reference.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE)
        problem, _ = _clustering_problem(extra)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            result = cvxclust.solve(problem, max_iter=3000)
        assert result.status != "infeasible" and result.extras["infeasibility"] is None


# -- (d) warm start ---------------------------------------------------------------------------------
def test_warm_start_after_adding_a_trace_bound():
    first = cvxclust.solve(frobenius_problem()[0], tol=1e-8, residual_tol=1e-8)
    changed, _ = frobenius_problem(extra=[lambda X: cp.trace(X) <= 2])
    cold = cvxclust.solve(changed, tol=1e-8, residual_tol=1e-8)
    X_before = first.X.copy()
    warm = cvxclust.solve(changed, tol=1e-8, residual_tol=1e-8, warm_start=first)
    assert cold.status == warm.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=1e-7)
    assert warm.objective == pytest.approx(changed.solve(**CLARABEL), rel=1e-6)
    assert warm.iterations < cold.iterations
    assert np.array_equal(first.X, X_before)  # the previous result is read, not changed


def test_warm_start_after_changing_the_trace():
    rng = np.random.default_rng(0)
    K = rbf(np.r_[rng.standard_normal((5, 2)), rng.standard_normal((5, 2)) + 3])

    def peng_wei(k):
        X = cp.Variable((10, 10), symmetric=True)
        return cp.Problem(cp.Maximize(cp.trace(K @ X)), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == k])

    first = cvxclust.solve(peng_wei(2), tol=1e-8, residual_tol=1e-8)
    warm = cvxclust.solve(peng_wei(3), tol=1e-8, residual_tol=1e-8, warm_start=first)
    cold = cvxclust.solve(peng_wei(3), tol=1e-8, residual_tol=1e-8)
    assert warm.status == cold.status == "optimal"
    assert warm.objective == pytest.approx(cold.objective, rel=1e-7)
    assert warm.objective == pytest.approx(PengWei(K, 3).solve("reference").objective, rel=1e-6)


def test_warm_start_of_another_shape_is_refused():
    first = cvxclust.solve(frobenius_problem()[0])
    X = cp.Variable((4, 4), symmetric=True)
    with pytest.raises(ValueError, match="warm_start"):
        cvxclust.solve(cp.Problem(cp.Minimize(cp.sum_squares(X)), [cp.trace(X) == 1]), warm_start=first)


# -- (e) validate on a plain problem ---------------------------------------------------------------
def test_validate_a_plain_problem():
    report = cvxclust.validate(frobenius_problem(extra=[lambda X: cp.trace(X) <= 2])[0])
    assert [c.method for c in report.comparisons] == ["generic"]
    assert report.passed and report.reference.method == "reference-clarabel"


# -- (f) the reference's solver by size -------------------------------------------------------------
@pytest.mark.parametrize("psd_variable", [False, True])
def test_reference_solver_by_size(psd_variable):
    def problem(n):
        X = cp.Variable((n, n), PSD=True) if psd_variable else cp.Variable((n, n), symmetric=True)
        return cp.Problem(cp.Minimize(cp.trace(X)), [cp.trace(X) == 1] + ([] if psd_variable else [X >> 0]))

    assert reference_solver_for(problem(10)) == ("CLARABEL", None)
    solver, message = reference_solver_for(problem(150))  # (150 * 151 / 2)^2 * 56 bytes: about 7 GB
    assert solver == "SCS" and "about 7 GB" in message and "SCS may" not in message
    solver, message = reference_solver_for(problem(500))
    assert solver == "SCS" and "GB" in message and "SCS may itself take many minutes" in message


# -- (g) the caller's arrays --------------------------------------------------------------------------
def test_inputs_are_not_modified():
    rng = np.random.default_rng(5)
    K, C = symmetric(rng, 8), symmetric(rng, 8)
    for array in (K, C):
        array.setflags(write=False)  # a write would raise
    copies = K.copy(), C.copy()
    X = cp.Variable((8, 8), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(C @ X) + cp.sum_squares(X - K)), [X >> 0, X >= 0, cp.trace(X) <= 3])
    cvxclust.solve(problem)
    problem.solve(method="cvxclust")
    for relaxation in (FrobeniusPSD(K), FrobeniusDS(K), PengWei(K, 2)):
        relaxation.solve("generic")
    CLUHSICSDP(center(rbf(rng.standard_normal((5, 2)))), chain(2)).solve("generic")
    assert np.array_equal(K, copies[0]) and np.array_equal(C, copies[1])


@pytest.mark.parametrize("scale", [1e-20, 0.0])
def test_a_tiny_or_zero_objective_is_certified_like_its_unit_scale(scale):
    """The certificate is scale-invariant: the bound's eigenvalue is computed in the objective's
    units (no absolute term in the deflation), so ``s C`` is certified as ``C`` is, and a zero
    objective (every feasible point optimal) at once."""
    X = cp.Variable((4, 4), symmetric=True)
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1]
    C = np.diag([1.0, 2.0, 3.0, 4.0])
    unit = cvxclust.solve(cp.Problem(cp.Maximize(cp.trace(C @ X)), constraints))
    scaled = cvxclust.solve(cp.Problem(cp.Maximize(cp.trace(scale * C @ X)), constraints))
    assert unit.status == scaled.status == "optimal"
    if scale:
        assert scaled.iterations == unit.iterations
        assert scaled.relative_gap == pytest.approx(unit.relative_gap, rel=1e-6)
        assert scaled.objective == pytest.approx(scale * unit.objective, rel=1e-12)
    else:
        assert scaled.objective == 0.0 and scaled.dual_bound == 0.0


def test_the_gap_floor_does_not_vanish_where_the_objective_cancels_at_the_centre():
    """min <L, X> over X >> 0, diag(X) = 1 for a graph Laplacian L: the centre is 11^T, where
    the objective is 0 by cancellation; the floor comes from the size of the objective's terms
    there, so the zero optimum (objective and bound rounding errors) is certified at a gap within
    the floor's reach, not run to the iteration limit."""
    rng = np.random.default_rng(0)
    n = 12
    W = rng.random((n, n))
    W = (W + W.T) / 2
    np.fill_diagonal(W, 0.0)
    L = np.diag(W.sum(axis=1)) - W
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(L @ X)), [X >> 0, cp.diag(X) == 1])
    relaxation = cvxclust.generic.CvxpyRelaxation(problem)
    assert relaxation.objective_scale() == pytest.approx(np.linalg.norm(L) * n)  # ||L|| ||11^T||
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, tol=1e-4, max_iter=500)
    assert result.status == "optimal" and abs(result.objective) <= 1e-12 and result.dual_bound <= 0.0
    assert result.gap_floor == pytest.approx(np.sqrt(np.finfo(float).eps) * relaxation.objective_scale())


N_INFEASIBLE = 6
INFEASIBLE = {
    "negative diagonal": (lambda X: [X >> 0, cp.diag(X) == -1], r"X >> 0 needs X\[0, 0\] >= 0"),
    "negative row sums": (lambda X: [X >> 0, cp.sum(X, axis=1) == -1], "X >> 0 needs 1\\^T X 1 >= 0"),
    "trace above n beta": (lambda X: [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 2 * N_INFEASIBLE],
                           "tr X = 12, .*at most 6"),
    "trace below beta": (lambda X: [X >> 0, cp.sum(X, axis=1) == 3, cp.trace(X) == 1], "tr X = 1, .*at least 3"),
    "trace below the diagonal": (lambda X: [X >> 0, cp.diag(X) >= 1, cp.trace(X) <= 2], "tr X <= 2, .*at least 6"),
}


@pytest.mark.parametrize("case", INFEASIBLE)
def test_constraints_that_contradict_outright_are_named(case):
    """Constraints the structure reads that contradict each other (a typo such as ``diag(X) ==
    -1`` under ``X >> 0``) raise a ValueError naming them, instead of running to the iteration
    limit."""
    constraints, message = INFEASIBLE[case]
    X = cp.Variable((N_INFEASIBLE, N_INFEASIBLE), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - np.eye(N_INFEASIBLE))), constraints(X))
    with pytest.raises(ValueError, match="infeasible: .*" + message):
        cvxclust.solve(problem, max_iter=50)


@pytest.mark.parametrize("k", [1, N_INFEASIBLE])
def test_constraints_feasible_only_on_their_boundary_are_solved(k):
    """k = 1 (``11^T / n``: trace = beta) and k = n (``I``: trace = n beta) are feasible."""
    n = N_INFEASIBLE
    X = cp.Variable((n, n), symmetric=True)
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == k, cp.diag(X) >= 1 / n]
    result = cvxclust.solve(cp.Problem(cp.Maximize(cp.trace(np.diag(np.arange(n)) @ X)), constraints))
    assert result.status == "optimal"


def test_polishing_certifies_an_exactly_feasible_point_sooner():
    """Peng-Wei on digits: the centre's entries are about 1/n, so restoring the iterate by mixing
    costs about n times its negativity, and without polishing the solve ends on the unrestored
    iterate (residuals at residual_tol).  Polishing certifies an exactly feasible point of the
    same objective (Clarabel's) in fewer iterations."""
    from cvxclust.datasets import load_dataset

    X = load_dataset("digits", n_samples=40)[0] / 16.0
    relaxation = PengWei(X @ X.T, 10)
    plain = relaxation.solve("generic", tol=1e-6, residual_tol=1e-6, polish_rounds=0)
    polished = relaxation.solve("generic", tol=1e-6, residual_tol=1e-6)
    reference = relaxation.solve("reference", eps=1e-8)
    assert plain.status == polished.status == reference.status == "optimal"
    assert polished.iterations < plain.iterations
    assert max(polished.residuals.values()) <= 1e-12 < max(plain.residuals.values())
    assert any(np.isfinite(row.get("polished_objective", np.nan)) for row in polished.history)
    assert not any("polished_objective" in row for row in plain.history)
    assert polished.objective == pytest.approx(reference.objective, rel=2e-6)
    assert polished.objective <= reference.objective + 1e-9 * abs(reference.objective)  # feasible: below the max
    assert polished.dual_bound >= reference.objective - 1e-7 * abs(reference.objective)
