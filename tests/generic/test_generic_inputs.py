"""The generic solver on inputs at the edge of its class, each against Clarabel: rows that
contradict each other, unbounded objectives, a Frobenius objective whose own minimiser is
feasible (no constraint at all), and warm starts that hold no finite point."""

from __future__ import annotations

import dataclasses
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.certificates import RECESSION_TOL

N = 4
K = np.array([[2.0, 1.0, 0.0, -1.0], [1.0, 3.0, 0.5, 0.0], [0.0, 0.5, 1.0, 0.2], [-1.0, 0.0, 0.2, 2.5]])
CLARABEL = {"solver": "CLARABEL"}


def clarabel(build):
    problem, _ = build()
    problem.solve(**CLARABEL)
    return problem.status, problem.value


# -- rows that contradict each other --------------------------------------------------------------
OBJECTIVES = {"none": lambda X: cp.Minimize(0), "linear": lambda X: cp.Maximize(cp.trace(K @ X)),
              "frobenius": lambda X: cp.Minimize(cp.sum_squares(X - K))}


def parallel(objective, psd, rows=lambda X: [X[0, 0] + X[1, 1] == 1, X[0, 0] + X[1, 1] == 2]):
    X = cp.Variable((N, N), symmetric=True)
    return cp.Problem(OBJECTIVES[objective](X), ([X >> 0] if psd else []) + rows(X)), X


@pytest.mark.parametrize("psd", [False, True])
@pytest.mark.parametrize("objective", list(OBJECTIVES))
def test_parallel_contradicting_rows_are_certified_infeasible(objective, psd):
    if objective == "none":  # with an objective Clarabel may report the dual's infeasibility first
        assert clarabel(lambda: parallel(objective, psd))[0] == cp.INFEASIBLE
    problem, X = parallel(objective, psd)
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        result = cvxclust.solve(problem)
    assert result.status == "infeasible" and result.iterations == 0
    certificate = result.extras["infeasibility"]
    assert certificate["bound"] == pytest.approx(1.0)
    form = CvxpyRelaxation(problem).standard_form()
    y = certificate["row_multipliers"]
    assert np.count_nonzero(y) == 2 and set(np.flatnonzero(y)) == set(certificate["rows"])
    assert np.abs(form.A.T @ y).max() == 0  # the rows cancel exactly: the bound is that of 0 <= -1
    assert np.all(np.isfinite(result.X))
    with pytest.warns(ConvergenceWarning):
        problem.solve(method="cvxclust")
    assert problem.status == cp.INFEASIBLE and X.value is None


@pytest.mark.parametrize("rows", [
    lambda X: [X[0, 0] + X[1, 1] <= 1, 2 * X[0, 0] + 2 * X[1, 1] >= 3],  # ranges, one row scaled
    lambda X: [-X[0, 0] - X[1, 1] >= -1, X[1, 1] + X[0, 0] >= 1.5],  # a negative pivot
])
def test_parallel_ranges_that_leave_no_value_are_certified_infeasible(rows):
    problem, _ = parallel("none", True, rows)
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        result = cvxclust.solve(problem)
    assert result.status == "infeasible" and result.extras["infeasibility"]["bound"] == pytest.approx(0.5)
    assert clarabel(lambda: parallel("none", True, rows))[0] == cp.INFEASIBLE


def test_parallel_rows_that_agree_solve_as_usual():
    rows = lambda X: [X[0, 0] + X[1, 1] == 1, 3 * X[0, 0] + 3 * X[1, 1] == 3, X[0, 0] + X[1, 1] <= 2]
    problem, _ = parallel("frobenius", True, rows)
    result = cvxclust.solve(problem)
    assert result.status == "optimal" and result.extras["infeasibility"] is None
    assert result.objective == pytest.approx(clarabel(lambda: parallel("frobenius", True, rows))[1], rel=1e-6)


# -- unbounded objectives -------------------------------------------------------------------------
_B = np.random.default_rng(5).standard_normal((N, N))
SHRINKING = (_B + _B.T) / 2
UNBOUNDED = {
    "trace over the cone": lambda X: (cp.Maximize(cp.trace(X)), [X >> 0]),
    "an indefinite cost over the cone": lambda X: (cp.Minimize(cp.trace(K @ X) - 4 * X[0, 0]), [X >> 0]),
    "no constraint": lambda X: (cp.Minimize(cp.trace(K @ X)), []),
    "a box and a row": lambda X: (cp.Maximize(cp.trace(X)), [X >> 0, X[0, 1] == 0, cp.sum(X[0, :]) == 1]),
    "nonnegative entries": lambda X: (cp.Maximize(cp.sum(X)), [X >= 0, X[0, 0] + X[1, 2] <= 3]),
    # the penalty shrinks and the iterates grow geometrically: their moves mix directions
    "the cone and nonnegative entries": lambda X: (cp.Minimize(cp.trace(SHRINKING @ X)), [X >> 0, X >= 0]),
}


def build(statement):
    X = cp.Variable((N, N), symmetric=True)
    objective, constraints = statement(X)
    return cp.Problem(objective, constraints), X


@pytest.mark.parametrize("name", list(UNBOUNDED))
def test_unbounded_objectives_are_certified_unbounded(name):
    status, value = clarabel(lambda: build(UNBOUNDED[name]))
    assert status == cp.UNBOUNDED
    problem, _ = build(UNBOUNDED[name])
    with pytest.warns(ConvergenceWarning, match="unbounded"):
        result = cvxclust.solve(problem)
    assert result.status == "unbounded" and result.iterations <= 500  # a few tests: far from max_iter
    assert result.objective == value  # +inf when maximising, -inf when minimising, as cvxpy says
    assert result.dual_bound is None and np.all(np.isfinite(result.X))
    certificate = result.extras["unboundedness"]
    form = CvxpyRelaxation(problem).standard_form()
    D = certificate["direction"]
    assert np.linalg.norm(D) == pytest.approx(1.0)
    # the slope is the change of the problem's own objective along D
    assert certificate["slope"] == pytest.approx(form.objective(D) - form.objective(np.zeros((N, N))))
    assert certificate["slope"] * value > 0
    assert max(certificate["residuals"].values()) <= RECESSION_TOL
    if form.psd:
        assert np.linalg.eigvalsh(D)[0] >= -RECESSION_TOL


BOUNDED = {
    "trace under a box": lambda X: (cp.Maximize(cp.trace(X)), [X >> 0, X <= 1]),
    "trace over the cone": lambda X: (cp.Minimize(cp.trace(X)), [X >> 0, X[0, 0] >= 1]),
    "a bounded diagonal": lambda X: (cp.Maximize(cp.trace(K @ X)), [X >> 0, cp.diag(X) <= 1]),
    "row sums at least one": lambda X: (cp.Maximize(-cp.trace(X)), [X >> 0, cp.sum(X, axis=1) >= 1]),
}


@pytest.mark.parametrize("name", list(BOUNDED))
def test_bounded_linear_objectives_carry_no_certificate_of_unboundedness(name):
    status, value = clarabel(lambda: build(BOUNDED[name]))
    assert status == cp.OPTIMAL
    result = cvxclust.solve(build(BOUNDED[name])[0])
    assert result.status == "optimal" and result.extras["unboundedness"] is None
    assert result.objective == pytest.approx(value, rel=1e-6, abs=1e-7)


# -- a Frobenius objective whose own minimiser meets the constraints --------------------------------
FEASIBLE_MINIMISER = {
    "no constraint": lambda X: [],
    "the cone": lambda X: [X >> 0],  # K is positive definite
    "a box": lambda X: [X <= 3, X >= -1],
    "a row": lambda X: [cp.trace(X) <= 10],
}


@pytest.mark.parametrize("name", list(FEASIBLE_MINIMISER))
def test_a_feasible_minimiser_of_the_objective_is_certified_optimal(name):
    assert np.linalg.eigvalsh(K)[0] > 0
    status, value = clarabel(lambda: build(lambda X: (cp.Minimize(cp.sum_squares(X - K)),
                                                      FEASIBLE_MINIMISER[name](X))))
    assert status == cp.OPTIMAL and abs(value) < 1e-7
    problem, _ = build(lambda X: (cp.Minimize(cp.sum_squares(X - K)), FEASIBLE_MINIMISER[name](X)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem)
    assert result.status == "optimal" and result.relative_gap <= 1e-6
    assert result.objective == 0.0 and np.array_equal(result.X, K)
    # maximising the negated objective: the same point, the bound on the other side
    problem, _ = build(lambda X: (cp.Maximize(-2 * cp.sum_squares(X - K) + 1), FEASIBLE_MINIMISER[name](X)))
    result = cvxclust.solve(problem)
    assert result.status == "optimal" and result.objective == 1.0 and result.dual_bound >= 1.0


@pytest.mark.parametrize("sign", [1, -1])
def test_a_frobenius_objective_under_equalities_alone(sign):
    # no copy of X is needed (no cone, no box, no range): the X-step solves the problem
    def statement(X):
        return cp.Minimize(cp.sum_squares(X - K)), [X[0, 0] + X[1, 1] == 1, cp.sum(X[0, :]) == 2 * sign]

    result = cvxclust.solve(build(statement)[0])
    assert result.status == "optimal"
    assert result.objective == pytest.approx(build(statement)[0].solve(**CLARABEL), rel=1e-6)


# -- warm starts that hold no finite point ----------------------------------------------------------
def _problem():
    X = cp.Variable((N, N), symmetric=True)
    return cp.Problem(cp.Minimize(cp.sum_squares(X - K)), [X >> 0, cp.trace(X) == 2, X >= 0])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_warm_start_that_is_not_finite_is_refused(bad):
    first = cvxclust.solve(_problem(), method="generic")  # the ADMM, whose result carries its multipliers
    X = first.X.copy()
    X[1, 2] = bad
    with pytest.raises(ValueError, match="warm_start has X with 1 NaN or infinite"):
        cvxclust.solve(_problem(), warm_start=dataclasses.replace(first, X=X))
    multipliers = first.extras["box_multiplier"].copy()
    multipliers[0, 0] = bad
    broken = dataclasses.replace(first, extras={**first.extras, "box_multiplier": multipliers})
    with pytest.raises(ValueError, match=r"warm_start has extras\['box_multiplier'\]"):
        cvxclust.solve(_problem(), warm_start=broken)
    with pytest.raises(ValueError, match=r"warm_start has extras\['rho'\]"):
        cvxclust.solve(_problem(), warm_start=dataclasses.replace(first, extras={**first.extras, "rho": bad}))


def test_the_record_of_a_failed_solve_is_refused_as_a_warm_start():
    # validate(errors="record") keeps a failed method as a Result whose X is all NaN
    class Failing(CvxpyRelaxation):
        pass

    @Failing.register_solver("failing")
    def _failing(relaxation, **options):
        raise RuntimeError("no result")

    report = cvxclust.validate(Failing(_problem()), methods=["failing"], errors="record")
    record = report.results["failing"]
    assert np.isnan(record.X).all()
    with pytest.raises(ValueError, match="warm_start has X with 16 NaN"):
        cvxclust.solve(_problem(), warm_start=record)


# -- data too large to square -----------------------------------------------------------------------
@pytest.mark.parametrize(("where", "statement"), [
    ("the objective", lambda X: (cp.Minimize(cp.trace(1e200 * K @ X)), [X >> 0, cp.trace(X) == 2])),
    ("the objective", lambda X: (cp.Minimize(cp.sum_squares(X - 1e200 * K)), [X >> 0])),
    ("the bounds on X", lambda X: (cp.Minimize(cp.trace(K @ X)), [X >> 0, X <= 1e200, cp.trace(X) == 1])),
    ("the constraints", lambda X: (cp.Minimize(cp.trace(K @ X)), [X >> 0, cp.sum(X[0, :]) <= 1e200,
                                                                  cp.trace(X) == 1])),
])
def test_data_too_large_to_square_are_refused_naming_where(where, statement):
    problem, _ = build(statement)
    with pytest.raises(ValueError, match=f"{where} has data of magnitude [0-9.]*e\\+200.*rescale the problem"):
        cvxclust.solve(problem)


def test_data_at_the_largest_magnitude_solve():
    problem, _ = build(lambda X: (cp.Minimize(cp.trace(1e149 * K @ X)), [X >> 0, cp.trace(X) == 2]))
    result = cvxclust.solve(problem)
    assert result.status == "optimal"
    assert result.objective == pytest.approx(2e149 * np.linalg.eigvalsh(K)[0], rel=1e-6)


# -- tiny data ------------------------------------------------------------------------------------
TINY = {
    "unbounded": lambda X, s: (cp.Minimize(cp.trace(s * K @ X)), []),
    "the cone and the trace": lambda X, s: (cp.Minimize(cp.trace(s * K @ X)), [X >> 0, cp.trace(X) == 2]),
    "row sums": lambda X, s: (cp.Minimize(cp.trace(s * K @ X)), [X >= 0, cp.sum(X, axis=1) == 1]),
}


@pytest.mark.parametrize("name", list(TINY))
def test_tiny_data_solve_as_at_scale_one(name):
    # Frobenius norms of entries below 1e-154 underflow to 0: a bound of 0 was taken for certified
    # on an unbounded problem, and the penalty started at 1e-300
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        one = cvxclust.solve(build(lambda X: TINY[name](X, 1.0))[0])
        tiny = cvxclust.solve(build(lambda X: TINY[name](X, 1e-200))[0])
    assert tiny.status == one.status == ("unbounded" if name == "unbounded" else "optimal")
    if one.status == "optimal":
        assert tiny.objective / 1e-200 == pytest.approx(one.objective, rel=1e-5)
        assert tiny.dual_bound / 1e-200 == pytest.approx(one.dual_bound, rel=1e-5)
    else:
        assert tiny.dual_bound is None


def test_the_split_of_a_standard_form_is_a_splitting_and_the_old_names_warn():
    # "structure" is the output structure of CLUHSIC and CLUHSICAL, never the split of a standard form
    import cvxclust.generic as generic

    assert "Splitting" in generic.__all__ and "split" in generic.__all__ and "structure" not in generic.__all__
    for old, new in [("Structure", "Splitting"), ("structure", "split")]:
        with pytest.warns(FutureWarning, match=rf"cvxclust.generic.{old} is renamed cvxclust.generic.{new}"):
            assert getattr(generic, old) is getattr(generic, new)
    X = cp.Variable((3, 3), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X)), [X >> 0, cp.sum(X, axis=1) == 1])
    assert isinstance(generic.split(generic.standard_form(problem)), generic.Splitting)
