"""The certified-solver core (cvxclust.solvers), the parameter tables (cvxclust.parameters) and
the frozen Result, on a toy relaxation and on the SSC ADMM registered on a subclass."""

from __future__ import annotations

import dataclasses
import pickle
import warnings
from numbers import Integral, Real

import cvxpy as cp
import matplotlib
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import Relaxation, Result
from cvxclust.kernels import rbf
from cvxclust.parameters import InvalidParameterError, Interval, Options, check_parameter, check_parameters
from cvxclust.result import relative_gap
from cvxclust._progress import Progress
from cvxclust.solvers import STOP_REASONS, Certificate, IterativeSolver, Param, polish_due
from cvxclust.ssc import FrobeniusPSD
from cvxclust.ssc._admm import ADMM

matplotlib.use("Agg")


class Box(Relaxation):
    """minimize or maximize <c, x> over the box 0 <= x <= 1 (x a 1 x n matrix named "X")."""

    name = "box"

    def __init__(self, c, sense="minimize"):
        self.c = np.asarray(c, dtype=float)
        self.sense = sense

    def problem(self):
        X = cp.Variable((1, self.c.size), name="X")
        objective = cp.sum(cp.multiply(self.c[None, :], X))
        goal = cp.Minimize(objective) if self.sense == "minimize" else cp.Maximize(objective)
        return cp.Problem(goal, [X >= 0, X <= 1])

    def objective(self, X):
        return float(np.sum(self.c * np.ravel(X)))

    def residuals(self, X):
        x = np.ravel(X)
        return {"box": float(max(0.0, -x.min(), x.max() - 1))}


class ProjectedGradient(IterativeSolver):
    """x <- clip(x -/+ step c) with the bound <c, x*> known in closed form after `exact_after`
    iterations (before that a deliberately weak bound): enough to exercise every path of the core."""

    method = "projected-gradient"
    parameters = IterativeSolver.parameters | {
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "step_size": Param(0.1, [Interval(Real, 0, None, closed="neither")]),
        "exact_after": Param(3, [Interval(Integral, 0, None, closed="left")]),
        "stall_at": Param(None, [Interval(Integral, 0, None, closed="left"), None]),
    }

    def init_state(self):
        return {"x": np.full(self.relaxation.c.size, 0.5), "iteration": -1}

    def step(self, state, iteration):
        sign = 1.0 if self.sense == "minimize" else -1.0
        state["x"] = np.clip(state["x"] - sign * self.step_size * self.relaxation.c, 0, 1)
        state["iteration"] = iteration
        if self.stall_at is not None and iteration >= self.stall_at:
            self.stall("test stall")
        return {"step_length": self.step_size}

    def certify(self, state, bound, final=False):
        c = self.relaxation.c
        exact = c.clip(max=0).sum() if self.sense == "minimize" else c.clip(min=0).sum()
        weak = exact - 10.0 if self.sense == "minimize" else exact + 10.0
        good = state["iteration"] + 1 >= self.exact_after
        return Certificate(state["x"][None, :], exact if good else weak)


Box.register_solver("pg", ProjectedGradient)


@pytest.mark.parametrize("sense", ["minimize", "maximize"])
def test_core_certifies_and_reports(sense):
    c = np.array([1.0, -2.0, 0.5, -0.6])
    box = Box(c, sense)
    result = box.solve("pg", step_size=1.0)
    reference = box.solve("reference")
    assert result.status == "optimal" and result.method == "pg"
    assert result.relative_gap <= 1e-6 and result.max_residual <= 1e-6
    assert result.objective == pytest.approx(reference.objective, abs=1e-7)
    # the bound lies on the right side of the reference
    if sense == "minimize":
        assert result.dual_bound <= reference.objective + 1e-7
    else:
        assert result.dual_bound >= reference.objective - 1e-7
    assert result.iterations == 3  # the bound is exact from the third iteration on
    for row in result.history:
        assert {"iteration", "time", "step_length", "objective", "dual_bound", "relative_gap",
                "max_residual"} <= set(row)
    assert [row["iteration"] for row in result.history] == [1, 2, 3]
    assert result.time >= result.history[-1]["time"]


def test_best_bound_is_kept_by_sense():
    c = np.array([1.0, -1.0])
    for sense, better in (("minimize", max), ("maximize", min)):
        result = Box(c, sense).solve("pg", step_size=1.0, exact_after=2)
        bounds = [row["dual_bound"] for row in result.history]
        assert bounds[-1] == better(bounds)


@pytest.mark.parametrize(("options", "status"), [({"max_iter": 2}, "max_iter"), ({"stall_at": 1}, "stalled"),
                                                  ({"time_limit": 1e-12}, "time_limit")])
def test_limits_warn_and_certify_the_point_returned(options, status):
    box = Box(np.array([1.0, -2.0]))
    with pytest.warns(ConvergenceWarning, match=STOP_REASONS[status]):
        result = box.solve("pg", step_size=0.01, exact_after=100, **options)
    assert result.status == status
    assert result.history[-1]["final"] is True
    assert {"objective", "dual_bound", "relative_gap", "max_residual"} <= set(result.history[-1])
    assert result.objective == box.objective(result.X)
    assert result.relative_gap > 1e-6


def test_certification_at_a_limit_can_certify():
    # at max_iter the final certification finds the point optimal: no warning, status optimal
    box = Box(np.array([1.0, -2.0]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = box.solve("pg", step_size=1.0, exact_after=2, max_iter=2, check_every=5)
    assert result.status == "optimal" and result.iterations == 2


def test_parameters_are_checked_at_the_door():
    box = Box(np.array([1.0]))
    with pytest.raises(InvalidParameterError, match="'tol' parameter of projected-gradient must be a float"):
        box.solve("pg", tol=-1)
    with pytest.raises(ValueError, match="max_iter"):
        box.solve("pg", max_iter=True)  # a bool is not an int
    with pytest.raises(TypeError, match="verbose"):
        box.solve("pg", verbose="yes")  # a string is not a flag
    with pytest.raises(TypeError, match="unexpected keyword arguments \\['gap_tol'\\]"):
        box.solve("pg", gap_tol=1e-3)
    assert box.solve("pg", step_size=1.0, time_limit=np.inf, max_iter=np.int64(5)).status == "optimal"


def test_a_parameter_may_not_hide_a_method():
    with pytest.raises(TypeError, match="would hide methods"):
        class Clash(ProjectedGradient):  # noqa: F841
            parameters = ProjectedGradient.parameters | {"step": Param(1.0, [])}


def test_signature_and_function_form():
    import inspect

    sig = inspect.signature(ProjectedGradient.as_function())
    assert list(sig.parameters)[:2] == ["relaxation", "tol"]
    assert sig.parameters["step_size"].default == 0.1
    assert cvxclust.ssc.admm.__name__ == "admm" and "rho" in inspect.signature(cvxclust.ssc.admm).parameters


# -- the subclass that adds a constraint the registered solver does not handle -----------------


class DiagonalBounds(FrobeniusPSD):
    """(7) with lo <= diag F <= hi: the SSC ADMM does not know the new constraint."""

    lo, hi = 0.2, 0.3

    def problem(self):
        prob = super().problem()
        X = self.primary_variable(prob)
        return cp.Problem(prob.objective, [*prob.constraints, cp.diag(X) >= self.lo, cp.diag(X) <= self.hi])

    def residuals(self, X):
        d = np.diag(X)
        return {**super().residuals(X), "diagonal": float(max(0.0, (self.lo - d).max(), (d - self.hi).max()))}


DiagonalBounds.register_solver("admm", ADMM)


def test_solver_registered_on_a_subclass_never_claims_optimal():
    from sklearn.datasets import load_iris

    K = rbf(load_iris().data[:30], 1.0)
    with pytest.warns(ConvergenceWarning, match="may not handle every constraint of DiagonalBounds"):
        result = DiagonalBounds(K).solve("admm")
    assert result.status == "stalled"
    assert result.residuals["diagonal"] > 0.1  # the violation is reported, not hidden
    assert result.max_residual == result.residuals["diagonal"]
    # the parent's reference bound is not inherited by a subclass that states its own problem
    assert DiagonalBounds.dual_bound_from_reference is Relaxation.dual_bound_from_reference
    assert DiagonalBounds(K).solve("reference").dual_bound is None
    assert FrobeniusPSD(K).solve("reference").dual_bound is not None


def test_validate_refuses_a_relaxation_without_solvers():
    class Bare(Box):
        pass

    with pytest.raises(ValueError, match="no registered scalable solver"):
        cvxclust.validate(Bare(np.array([1.0, -1.0])))
    with pytest.raises(TypeError, match="relaxation must be a cvxclust.Relaxation"):
        cvxclust.validate(None)
    with pytest.raises(ValueError, match="tol_objective"):
        cvxclust.validate(Box(np.array([1.0])), tol_objective=-1)


def test_validation_report_displays():
    report = cvxclust.validate(Box(np.array([1.0, -1.0])), method_options={"pg": {"step_size": 1.0}})
    assert report.passed
    assert "<table>" in report._repr_html_() and "| pg |" in report._repr_markdown_()
    assert "passed" in repr(report)


# -- parameters ----------------------------------------------------------------------------------


def test_parameter_messages_name_parameter_value_and_expectation():
    with pytest.raises(InvalidParameterError) as info:
        check_parameter("alpha", 2.0, [Interval(Real, 0, 2, closed="neither")], "admm")
    assert str(info.value) == ("The 'alpha' parameter of admm must be a float in the range (0, 2). "
                               "Got 2.0 instead.")
    assert check_parameter("n", np.int32(3), [Interval(Integral, 1, None)]) == 3
    assert type(check_parameter("x", np.float32(0.5), [Interval(Real, 0, 1)])) is float
    with pytest.raises(InvalidParameterError):
        check_parameter("x", float("nan"), [Interval(Real, None, None)])
    with pytest.raises(InvalidParameterError):
        check_parameter("x", np.inf, [Interval(Real, 0, None)])  # inf only where allowed
    assert check_parameter("method", "a", [Options("a", "b")]) == "a"
    with pytest.raises(InvalidParameterError, match="one of 'a', 'b'"):
        check_parameter("method", ["a"], [Options("a", "b")])
    with pytest.raises(InvalidParameterError):
        check_parameter("method", np.array(["a", "b"]), [Options("a", "b")])
    with pytest.raises(InvalidParameterError, match="random_state"):
        check_parameter("random_state", -1, ["random_state"])
    assert check_parameters({"a": ["boolean"]}, {"a": np.bool_(True)}) == {"a": True}
    with pytest.raises(TypeError, match="unexpected keyword argument 'b'"):
        check_parameters({"a": ["boolean"]}, {"b": 1})


# -- Result -------------------------------------------------------------------------------------


def test_relative_gap_definition():
    assert relative_gap(4.0, 3.0) == 0.25
    assert relative_gap(-4.0, -3.0) == 0.25
    assert relative_gap(0.0, 0.0) == 0.0
    assert relative_gap(1e-150, 2e-150) == 0.5  # scale invariant
    assert relative_gap(1.0, -np.inf) == np.inf
    assert relative_gap(1.0, None) is None


def test_result_is_frozen_readable_and_picklable(tmp_path):
    r = Result(X=np.ones((300, 300)), objective=2.0, status="optimal", method="m", iterations=2, time=0.1,
               residuals={"a": 1e-9}, dual_bound=1.999, history=[{"iteration": 1, "time": 0.0, "relative_gap": 1e-3},
                                                              {"iteration": 2, "time": 0.1, "relative_gap": 5e-4}],
               extras={"labels": np.zeros(3)})
    text = repr(r)
    assert len(text) < 400 and "array of shape 300x300" in text and "extras=labels" in text
    assert "<table>" in r._repr_html_() and "| status | optimal |" in r._repr_markdown_()
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.X = None
    with pytest.raises(TypeError):
        r.extras["more"] = 1
    copy = pickle.loads(pickle.dumps(r))
    assert copy.extras.keys() == r.extras.keys() and copy.history == r.history
    ax = r.plot()
    assert ax.get_yscale() == "log" and len(ax.lines) == 1
    ax.figure.savefig(tmp_path / "history.png")
    with pytest.raises(ValueError, match="no positive figures"):
        r.plot(keys="nothing")


def test_a_zero_optimum_is_certified_with_the_objective_scale():
    # K already doubly stochastic and p.s.d.: the optimum is 0 and objective and bound are both
    # rounding errors; the floor sqrt(eps) * objective_scale() certifies it at once
    from cvxclust.ssc import FrobeniusDS

    for cls in (FrobeniusDS, FrobeniusPSD):
        relaxation = cls(np.eye(5))
        assert relaxation.objective_scale() == pytest.approx(0.5 * np.sum((np.eye(5) - 0.2) ** 2))
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            result = relaxation.solve("admm")
        assert result.status == "optimal" and result.objective < 1e-20
        assert result.gap_floor == pytest.approx(np.sqrt(np.finfo(float).eps) * relaxation.objective_scale())
        assert result.relative_gap <= 1e-7
    # without a floor the same figures are not certified
    assert relative_gap(1e-32, -1e-17) == pytest.approx(1.0)
    assert relative_gap(1e-32, -1e-17, floor=1.0) == pytest.approx(1e-17)


def test_a_solver_instance_runs_again_from_scratch():
    solver = ProjectedGradient(Box(np.array([1.0, -2.0])), step_size=1.0)
    first, second = solver.run(), solver.run()
    assert first.status == second.status == "optimal"
    assert first.iterations == second.iterations and len(second.history) == second.iterations


def test_polish_due_follows_the_residual():
    """A polish is due once the iterate is within tol of the bound; after one, when its loss scaled
    by the residual's fall could finish the solve, or the residual fell tenfold; not otherwise."""
    tol = 1e-4
    assert not polish_due(2e-4, 1e-3, None, tol)  # the iterate itself is too far from the bound
    assert polish_due(5e-5, 1e-3, None, tol)  # the first polish
    last = (1e-3, 2e-4)  # lost 2e-4 at residual 1e-3
    assert not polish_due(5e-5, 9e-4, last, tol)  # 5e-5 + 2e-4 * 0.9 > tol
    assert polish_due(5e-5, 2e-4, last, tol)  # 5e-5 + 2e-4 * 0.2 <= tol
    assert not polish_due(-1e-3, 9.9e-4, (1e-3, 0.0), tol)  # finishing, but the residual hardly fell
    assert polish_due(9e-5, 1e-4, (1e-3, 1.0), tol)  # the residual fell tenfold: recalibrate


# -- the progress display ---------------------------------------------------------------------------
def test_verbose_shows_the_certified_gap_and_residual_against_their_tolerances(capsys):
    # certified at the fifth check: the display shows what the user waits for, never max_iter or an ETA
    box = Box(np.array([1.0, -2.0]))
    result = box.solve("pg", step_size=1.0, exact_after=5, verbose=True, time_limit=100.0)
    assert result.status == "optimal" and result.iterations == 5
    shown = capsys.readouterr().err
    assert "gap=" in shown and "/1e-06" in shown and "res=" in shown and "s/100s" in shown and "it=5" in shown
    assert "/10000" not in shown and "<" not in shown  # neither max_iter nor a remaining time
    assert "100%" in shown  # the bar is full once the gap and the residual are met
    quiet = box.solve("pg", step_size=1.0, exact_after=5)
    assert quiet.status == "optimal" and capsys.readouterr().err == ""


def test_progress_position_is_the_log_progress_of_the_gap_and_residual(capsys):
    progress = Progress("m", tol=1e-6, residual_tol=1e-8, time_limit=np.inf, enabled=True)
    progress.update(10, 1.0, gap=1e-2, residual=1e-9, check=True)
    assert progress.fraction() == 0.0  # the first gap is the start of the scale
    progress.update(20, 2.0, gap=1e-4, residual=1e-9, check=True)
    assert progress.fraction() == pytest.approx(0.5)  # halfway from 1e-2 to 1e-6 on a log scale
    progress.update(30, 3.0, gap=1e-4, residual=1e-4, check=True)
    assert progress.fraction() == 0.0  # the residual's first value above residual_tol: the lesser counts
    progress.update(40, 4.0, gap=1e-5, residual=1e-6, check=True)
    assert progress.fraction() == pytest.approx(0.5)  # residual 1e-4 -> 1e-6 of 1e-4 -> 1e-8
    progress.update(41, 4.1)  # between checks the last certified values are kept
    assert (progress.gap, progress.residual) == (1e-5, 1e-6)
    assert progress.figures(41, 4.1) == "gap=1.0e-05/1e-06 res=1.0e-06/1e-08 4.1s it=41"
    progress.update(50, 5.0, gap=None, residual=1e-9, check=True)  # a check without a finite bound
    assert progress.gap == 1e-5 and progress.fraction() == pytest.approx(0.75)
    progress.close()
    limited = Progress("m", tol=1e-6, residual_tol=1e-6, time_limit=300.0, enabled=False)
    limited.update(1, 1.0, gap=1.0, residual=1.0, check=True)  # disabled: nothing is kept or shown
    assert limited.gap is None and limited.figures(80, 12.34) == "12.3s/300s it=80"
    assert capsys.readouterr().err.count("gap=") >= 4


# -- one checking vocabulary ---------------------------------------------------------------------


def test_check_parameter_is_the_primary_name_and_validate_its_old_spelling():
    from cvxclust import parameters

    for old, new in [("validate_parameter", "check_parameter"), ("validate_parameters", "check_parameters")]:
        with pytest.warns(FutureWarning, match=rf"cvxclust.parameters.{old} is renamed cvxclust.parameters.{new}"):
            assert getattr(parameters, old) is getattr(parameters, new)
    with pytest.warns(FutureWarning):
        from cvxclust.parameters import validate_parameter
    assert validate_parameter("tol", np.float64(0.5), [Interval(Real, 0, 1)]) == 0.5
    with pytest.raises(InvalidParameterError, match=r"^The 'k' parameter of f must be an int"):
        parameters.check_parameters({"k": [Interval(Integral, 1, None)]}, {"k": 0}, "f")
    # a message of the caller's own wording, with the expected values in words
    with pytest.raises(InvalidParameterError, match=r"^k=0 is not an int in the range \[1, inf\)$"):
        parameters.check_parameter("k", 0, [Interval(Integral, 1, None)], message="{name}={value!r} is not {expected}")


@pytest.mark.parametrize(("check", "args", "message"), [
    ("check_positive", (0, "step"), "step must be a positive number, got 0"),
    ("check_positive", (np.inf, "step"), "step must be a positive number, got inf"),
    ("check_choice", ("c", "kind", ("b", "a")), "Unknown kind 'c'; valid values are ['a', 'b']"),
    ("check_choice", ("c", "kind", {"{x}": 1}), "Unknown kind 'c'; valid values are ['{x}']"),
    ("check_int_range", (2.0, "k", 1, 4), "k must be an integer, got 2.0"),
    ("check_int_range", (5, "k", 1, 4), "k must be between 1 and 4, got 5"),
    ("check_int_range", (0, "k", 1), "k must be >= 1, got 0"),
    ("check_n_clusters", (6, 5), "n_clusters must be between 2 and n_samples=5, got 6"),
    ("check_n_clusters", (True, 5), "n_clusters must be an integer, got True"),
    ("check_bool", (1, "flag"), "flag must be True or False, got 1"),
])
def test_scalar_checks_are_the_declarative_checks_worded_for_arguments(check, args, message):
    from cvxclust import _checks

    with pytest.raises(InvalidParameterError) as error:
        getattr(_checks, check)(*args)
    assert str(error.value) == message


def test_scalar_checks_return_python_values():
    from cvxclust._checks import check_bool, check_choice, check_int_range, check_n_clusters

    assert type(check_int_range(np.int32(4), "k", 1, 4)) is int and check_n_clusters(np.int64(3), 5) == 3
    assert check_bool(np.bool_(True), "flag") is True
    check_choice(np.str_("a"), "kind", ("a", "b"))  # a numpy string is the string it equals
    assert Options("a").accepts(np.str_("a")) and not Options(1).accepts(1.0) and not Options(1).accepts(True)
