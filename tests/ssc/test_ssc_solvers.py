"""Every registered scalable solver of FrobeniusPSD (SDP (7)) and FrobeniusDS (QP (6)) against
the cvxpy reference (Clarabel), parametrised over the registry: a solver is tested the moment
it is registered (pymanopt style)."""

from __future__ import annotations

import inspect
import json
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from ssc_helpers import (
    INSTANCES,
    RELAXATIONS,
    SCALABLE,
    data,
    instance_id,
    kernel,
    reference,
)

import cvxclust
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD
from cvxclust.ssc._admm import ADMM, _step
from cvxclust.ssc._relaxations import project_row_sums

TOL = 1e-6


def relative(a: float, b: float) -> float:
    return abs(a - b) / max(abs(b), 1e-12)


CHECK_KEYS = {"objective", "dual_bound", "relative_gap", "max_residual"}


def check_history(result):
    """History rows carry the core's keys and the solver's figures; every check row carries
    the objective, the best bound, the relative gap and the worst residual, and the last
    check row is the returned point's."""
    assert result.history, "history must not be empty"
    for row in result.history:
        assert {"iteration", "time"} <= set(row), sorted(row)
        if CHECK_KEYS & set(row):
            assert CHECK_KEYS <= set(row), sorted(row)
            assert np.isfinite(row["objective"]) and np.isfinite(row["max_residual"])
            assert row["relative_gap"] == pytest.approx(cvxclust.result.relative_gap(row["objective"],
                                                                                     row["dual_bound"]))
    iterations = [row["iteration"] for row in result.history]
    assert iterations == sorted(iterations)
    assert iterations[-1] <= result.iterations
    checks = [row for row in result.history if "dual_bound" in row]
    assert checks, "no dual bound recorded in the history"
    # the best bound never gets worse (minimisation: it only rises)
    bounds = [row["dual_bound"] for row in checks]
    assert bounds == sorted(bounds)
    assert checks[-1]["objective"] == pytest.approx(result.objective, rel=1e-12)
    assert checks[-1]["dual_bound"] == pytest.approx(result.dual_bound, rel=1e-15)
    assert checks[-1]["max_residual"] == pytest.approx(result.max_residual, rel=1e-12, abs=1e-300)


def check_against_reference(result, ref, method: str, psd: bool, K):
    assert result.status == "optimal", result
    assert result.method == method
    assert result.iterations >= 1
    assert result.time >= 0
    n = ref.X.shape[0]
    assert result.X.shape == (n, n)
    expected = {"row_sums", "symmetry", "nonnegativity"} | ({"psd"} if psd else set())
    assert set(result.residuals) == expected
    for key, value in result.residuals.items():
        assert value <= TOL, f"residual {key} = {value:.2e}"
    assert relative(result.objective, ref.objective) <= TOL
    # the reported objective is 1/2 ||X - K||_F^2 of the returned point
    assert result.objective == pytest.approx(0.5 * np.sum((result.X - K) ** 2), rel=1e-12)
    # certified lower bound: never above the optimum (up to the reference's accuracy) ...
    assert result.dual_bound is not None
    assert result.dual_bound <= ref.objective + TOL * abs(ref.objective)
    # ... and tight
    assert result.relative_gap is not None and result.relative_gap <= TOL
    assert result.duality_gap == pytest.approx(abs(result.objective - result.dual_bound))
    # same point as the reference: the objective is 1-strongly convex, so a gap of
    # ~1e-8 |f| allows a distance of ~1e-4 ||X|| at most
    assert np.linalg.norm(result.X - ref.X) <= 1e-3 * np.linalg.norm(ref.X)
    check_history(result)


@pytest.mark.parametrize("instance", INSTANCES, ids=instance_id)
@pytest.mark.parametrize(("cls", "method"), SCALABLE)
def test_scalable_solver_matches_reference(cls, method, instance):
    K = kernel(*instance)
    ref = reference(cls.name, *instance)
    assert ref.status == "optimal"
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)  # the other defaults must converge
        # the distance to the reference checked needs a gap of 1e-7 (the default is 1e-6)
        result = cls(K).solve(method, tol=1e-7, residual_tol=1e-7)
    check_against_reference(result, ref, method, psd=cls.psd, K=K)


@pytest.mark.parametrize("instance", INSTANCES, ids=instance_id)
@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_reference_is_feasible_with_tight_dual_bound(cls, instance):
    ref = reference(cls.name, *instance)
    assert ref.method == "reference-clarabel"
    assert ref.max_residual <= 1e-8
    assert ref.dual_bound is not None
    # dual_bound_from_reference: the dual values of F >= 0 certify the objective
    assert relative(ref.dual_bound, ref.objective) <= TOL
    assert ref.dual_bound <= ref.objective + 1e-8 * abs(ref.objective)


@pytest.mark.parametrize("instance", INSTANCES, ids=instance_id)
def test_psd_optimum_is_above_ds_optimum(instance):
    """(7) has the smaller feasible set, so its optimum is >= that of (6); for positive
    semidefinite K the QP solution is often p.s.d. already and the two coincide."""
    psd, ds = reference("FrobeniusPSD", *instance), reference("FrobeniusDS", *instance)
    assert psd.objective >= ds.objective - 1e-7 * abs(ds.objective)
    # the DS solution is p.s.d. exactly when both optima coincide
    lam_min = np.linalg.eigvalsh(ds.X)[0]
    if lam_min < -1e-6:
        assert psd.objective > ds.objective * (1 + 1e-8)


def test_auto_is_dual_newton_for_both_relaxations():
    K = kernel("iris", 40, 1.0)
    for cls in RELAXATIONS:
        assert cls.default_method in cls.methods()
        assert cls(K).solve("auto").method == cls.default_method == "dual-newton"


def test_methods_lists_reference_first_and_the_paper_solvers():
    assert FrobeniusPSD.methods()[0] == FrobeniusDS.methods()[0] == "reference"
    assert {"admm", "dual-newton", "ld-ssc1", "ld-ssc2"} <= set(FrobeniusPSD.methods())
    assert {"admm", "dual-newton", "successive-projections"} <= set(FrobeniusDS.methods())
    # the dual solvers of (15) need the p.s.d. cone; successive projections are for (6)
    assert "successive-projections" not in FrobeniusPSD.methods()
    assert "ld-ssc2" not in FrobeniusDS.methods()


@pytest.mark.parametrize("instance", INSTANCES[:2] + INSTANCES[4:5], ids=instance_id)
def test_plain_successive_projections_is_feasible_but_not_optimal(instance):
    """Zass-Shashua's alternation without Dykstra's correction converges to *a* doubly
    stochastic matrix, in general not the nearest one; with the correction it is the nearest."""
    K = kernel(*instance)
    ref = reference("FrobeniusDS", *instance)
    relaxation = FrobeniusDS(K)
    plain = relaxation.solve("successive-projections", dykstra=False)
    # the alternation met its own stopping rule; without a bound it is never "optimal"
    assert plain.status == "converged"
    assert plain.max_residual <= TOL  # to a feasible doubly stochastic matrix
    np.testing.assert_allclose(plain.X.sum(axis=1), 1.0, atol=1e-10)
    np.testing.assert_allclose(plain.X, plain.X.T, atol=1e-12)
    assert plain.X.min() >= -TOL * plain.X.max()
    # feasible, so never below the optimum; and clearly above it on these instances
    assert plain.objective >= ref.objective - TOL * abs(ref.objective)
    assert relative(plain.objective, ref.objective) > 1e-5
    assert plain.dual_bound is None  # no multiplier without the correction

    corrected = relaxation.solve("successive-projections", dykstra=True)
    assert corrected.status == "optimal"
    assert relative(corrected.objective, ref.objective) <= TOL
    assert corrected.max_residual <= TOL
    assert corrected.dual_bound <= ref.objective + TOL * abs(ref.objective)
    assert corrected.objective < plain.objective


def test_ld_ssc2_matches_clarabel_at_n60():
    """At n = 60 LD-SSC2's residual_tol = 1e-7 on the recovered primal F = -P_- is at the
    edge of what L-BFGS-B resolves in double precision: depending on SciPy's L-BFGS-B it is
    certified, or the search stops on 'relative reduction of f <= eps' with the negative entries
    of F just above it and the solver says "stalled" with a warning. Either way the answer is
    honest and its bound valid; the default 1e-6 is certified."""
    instance = ("iris", 60, 1.0)
    ref = reference("FrobeniusPSD", *instance)
    K = kernel(*instance)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        default = FrobeniusPSD(K).solve("ld-ssc2", tol=1e-7, residual_tol=1e-7)
    stall_warnings = [w for w in caught if issubclass(w.category, ConvergenceWarning)
                      and "no further progress" in str(w.message)]
    if default.status == "optimal":
        assert not stall_warnings and default.relative_gap <= 1e-7 and default.max_residual <= 1e-7
        check_against_reference(default, ref, "ld-ssc2", psd=True, K=K)
    else:
        assert default.status == "stalled" and stall_warnings and default.max_residual > 1e-7
    assert default.dual_bound <= ref.objective + TOL * abs(ref.objective)  # a valid bound
    result = FrobeniusPSD(K).solve("ld-ssc2")
    check_against_reference(result, ref, "ld-ssc2", psd=True, K=K)


def test_iris_full_n150_auto_and_ld_ssc2():
    """The whole of Iris (n = 150).  Clarabel's interior point method is slow on the 150 x 150
    SDP (a dense KKT system of order n^2), so the reference here is SCS at eps = 1e-9, itself
    checked by its own dual certificate."""
    instance = ("iris", None, 1.0)
    K = kernel(*instance)
    assert K.shape == (150, 150)
    ref = reference("FrobeniusPSD", *instance, solver="SCS", eps=1e-9)
    assert ref.status == "optimal" and ref.method == "reference-scs"
    assert ref.max_residual <= 1e-8
    assert relative(ref.dual_bound, ref.objective) <= 1e-8
    relaxation = FrobeniusPSD(K)
    auto = relaxation.solve("auto", tol=1e-7, residual_tol=1e-7)  # for the distance checked
    check_against_reference(auto, ref, "dual-newton", psd=True, K=K)
    # LD-SSC2 reaches a certified 1e-6, its default (1e-7 on the recovered primal is at the
    # floating-point floor of the dual at this size)
    ld = relaxation.solve("ld-ssc2")
    check_against_reference(ld, ref, "ld-ssc2", psd=True, K=K)
    # both certificates bracket the same optimum
    assert max(auto.dual_bound, ld.dual_bound) <= min(auto.objective, ld.objective) + TOL * abs(ref.objective)


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_validate_reports_every_registered_method(cls):
    instance = ("wine", 30, 1.0)
    relaxation = cls(kernel(*instance))
    report = cvxclust.validate(relaxation, name=f"{cls.name} wine30")
    methods = [m for m in cls.methods() if m != "reference"]
    assert [c.method for c in report.comparisons] == methods
    assert set(report.results) == set(methods)
    assert report.passed, report.to_markdown()
    assert report.reference.method == "reference-clarabel"
    for c in report.comparisons:
        assert c.passed and not c.failures
        assert c.status == "optimal"
        assert c.objective_gap <= TOL
        assert c.max_residual <= TOL
        assert c.solution_distance <= 1e-3
        assert c.relative_duality_gap is not None and c.relative_duality_gap <= TOL
        assert c.speedup > 0
    md = report.to_markdown()
    assert md.startswith(f"### {cls.name} wine30")
    for m in methods:
        assert f"| {m} | optimal |" in md
    assert "FAIL" not in md
    payload = json.loads(report.to_json())
    assert payload == json.loads(json.dumps(report.to_dict()))
    assert payload["passed"] is True
    assert payload["name"] == f"{cls.name} wine30"
    assert [c["method"] for c in payload["comparisons"]] == methods
    assert payload["reference"]["objective"] == pytest.approx(report.reference.objective, rel=1e-15)


def test_validate_fails_plain_successive_projections():
    """validate() must be able to fail: the plain alternation misses the optimum."""
    relaxation = FrobeniusDS(kernel("iris", 40, 0.5))
    report = cvxclust.validate(
        relaxation,
        methods=["successive-projections", "admm"],
        method_options={"successive-projections": {"dykstra": False}},
    )
    assert not report.passed
    by_method = {c.method: c for c in report.comparisons}
    assert not by_method["successive-projections"].passed
    assert any("objective gap" in f for f in by_method["successive-projections"].failures)
    assert by_method["admm"].passed
    assert "FAIL: objective gap" in report.to_markdown()
    assert json.loads(report.to_json())["passed"] is False


def test_validate_rejects_unknown_method():
    with pytest.raises(ValueError, match="nope"):
        cvxclust.validate(FrobeniusDS(kernel("iris", 40, 1.0)), methods=["nope"])
    with pytest.raises(ValueError, match="reference"):
        # the reference is run anyway; it is not a scalable method to validate
        cvxclust.validate(FrobeniusDS(kernel("iris", 40, 1.0)), methods=["reference"])


def test_scs_and_clarabel_references_agree():
    instance = ("iris", 40, 1.0)
    clarabel = reference("FrobeniusPSD", *instance)
    scs = reference("FrobeniusPSD", *instance, solver="SCS", eps=1e-9)
    assert scs.method == "reference-scs"
    assert relative(scs.objective, clarabel.objective) <= 1e-8
    assert np.linalg.norm(scs.X - clarabel.X) <= 1e-5 * np.linalg.norm(clarabel.X)


def polynomial_kernel():
    """(a.b + 1)^2 on standardized Iris (n = 60): entries up to ~137, optimum ~6.6e5."""
    X = StandardScaler().fit_transform(data("iris", 60)[0])
    return cvxclust.kernels.affinity(X, "polynomial", degree=2)


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_admm_with_mu_10_converges_on_a_polynomial_kernel(cls):
    K = polynomial_kernel()
    result = cls(K).solve("admm", mu=10.0)
    ref = cls(K).solve("reference")
    assert result.status == "optimal"
    assert relative(result.objective, ref.objective) <= TOL and result.max_residual <= TOL


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_default_admm_converges_on_a_polynomial_kernel(cls):
    result = cls(polynomial_kernel()).solve("admm")
    assert result.status == "optimal"


def test_solutions_are_reproducible():
    K = kernel("iris", 30, 0.5)
    for cls in RELAXATIONS:
        for method in cls.methods()[1:]:
            a, b = cls(K).solve(method), cls(K).solve(method)
            np.testing.assert_array_equal(a.X, b.X)
            assert a.iterations == b.iterations


def test_solver_does_not_modify_K():
    K = np.array(kernel("iris", 40, 0.5))  # writable copy
    before = K.copy()
    for cls in RELAXATIONS:
        relaxation = cls(K)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            for method in cls.methods()[1:]:
                relaxation.solve(method, max_iter=5)
        np.testing.assert_array_equal(relaxation.K, before)
    np.testing.assert_array_equal(K, before)



@pytest.mark.parametrize("instance", INSTANCES[::2], ids=instance_id)
@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_admm_returns_an_exactly_feasible_point(cls, instance):
    """"optimal" means exactly feasible (to rounding) with a certified gap below tol."""
    relaxation = cls(kernel(*instance))
    result = relaxation.solve("admm", tol=1e-7)
    assert result.status == "optimal"
    assert max(relaxation.residuals(result.X).values()) <= 1e-12
    assert result.X.min() >= 0.0
    # the bound may exceed the objective by rounding where the first iteration is optimal
    assert -1e-12 <= (result.objective - result.dual_bound) / result.objective < 1e-7


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_restore_makes_an_admm_iterate_exactly_feasible_at_a_small_cost(cls):
    """restore() on ADMM iterates F (exactly symmetric, unit row sums, p.s.d. for (7), a few
    negative entries): exactly feasible, and it moves the objective less than mixing in the
    barycentre 11^T/n, the simple remedy."""
    relaxation = cls(kernel("digits", 50, 1.0))
    n, project = relaxation.n, relaxation.projector()
    G, U = np.maximum(project(relaxation.K + 0.0), 0.0), np.zeros((n, n))
    for it in range(60):
        F, G, U, _, _ = _step(relaxation.K, G, U, 1.0, 1.6, project)
        if it % 20 != 19:
            continue
        assert F.min() < 0
        X = relaxation.restore(F)
        assert max(relaxation.residuals(X).values()) <= 1e-12 and X.min() >= 0.0
        m = -F.min()
        t = m / (m + 1.0 / n)
        barycentre = (1.0 - t) * F + t / n
        change = abs(relaxation.objective(X) - relaxation.objective(F))
        assert change < 0.5 * abs(relaxation.objective(barycentre) - relaxation.objective(F))
        np.testing.assert_array_equal(relaxation.restore(X), X)  # feasible points are kept


@pytest.mark.parametrize(("cls", "method"), [p for p in SCALABLE if p.values[1] != "generic"])
def test_registered_solvers_are_public_functions(cls, method):
    """Each method of the family is also a public function of cvxclust.ssc, with the signature of
    its parameter table, that gives the same result (the package-wide "generic" is
    cvxclust.solve)."""
    name = method.replace("-", "_")
    assert name in cvxclust.ssc.__all__
    function = getattr(cvxclust.ssc, name)
    assert list(inspect.signature(function).parameters)[:2] == ["relaxation", "tol"]
    relaxation = cls(kernel("iris", 20, 1.0))
    a, b = function(relaxation), relaxation.solve(method)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.iterations == b.iterations and a.method == b.method == method


def test_admm_warm_start_is_the_optimum_of_6_and_a_fixed_point_of_its_iteration():
    """The ADMM for (7) starts from (6)'s optimum (Newton on the row-sum multipliers) and the
    multiplier of F >= 0: the reference solution of (6), and unmoved by the iteration for (6)."""

    K = kernel("digits", 60, 1.0)
    state = ADMM(FrobeniusPSD(K), rho=3.0).init_state()
    assert state.warm_iterations >= 1
    six = FrobeniusDS(K)
    reference = six.solve("reference")  # an interior point: its entries are accurate to ~1e-5
    assert max(six.residuals(state.G).values()) < 1e-12
    assert six.objective(state.G) == pytest.approx(reference.objective, rel=1e-9)
    assert np.abs(state.G - reference.X).max() < 1e-4
    assert state.U.max() <= 0.0 and np.abs(state.U * state.G).max() == 0.0  # complementary
    _, G, U, r_primal, r_dual = _step(K, state.G, state.U, state.rho, 1.6, project_row_sums)
    assert r_primal < 1e-12 and r_dual < 1e-12
    np.testing.assert_allclose(G, state.G, atol=1e-12)
    np.testing.assert_allclose(U, state.U, atol=1e-12)


@pytest.mark.parametrize("method", ["dual-newton", "admm"])
def test_kernels_of_huge_entries_end_in_an_honest_status(method):
    """Entries of K up to 1e10 (X's lie in [0, 1]) strain double precision: a solver either
    certifies the point or stops with a warning and a status that says it did not, never with
    an error from its own machinery (the ADMM's restoration refuses an iterate whose row sums
    drifted past rounding: the ADMM then stalls)."""
    K = kernel("digits", 12, 1.0)
    for scale in (1e8, 1e9, 1e10):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = FrobeniusPSD(K * scale).solve(method, max_iter=200, tol=1e-7, residual_tol=1e-7)
        if result.status == "optimal":
            assert result.max_residual <= 1e-7 and result.relative_gap <= 1e-7
        else:
            assert result.status in ("stalled", "max_iter")
            assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
