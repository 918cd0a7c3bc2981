"""Fuzz tests of the solve boundary: ``Relaxation.solve("reference", ...)`` options, ``Result``
and ``relative_gap``, ``cvxclust.validation.compare``, ``cvxclust.validate``, and
``cvxclust.solve`` on small problems at the edges of its class against Clarabel.

Bad options must be refused with a ``ValueError``/``TypeError`` naming them *before* any solver
runs (Clarabel's settings reach Rust, where a bad value can panic past ``except Exception``);
here a relaxation that counts how often its problem is built checks that nothing was solved.
"""

from __future__ import annotations

import math
import warnings

import cvxpy as cp
import matplotlib
import matplotlib.pyplot as plt
import numpy as np
import pytest
from fuzz_helpers import (
    FEW,
    FUZZ,
    SOLVES,
    arguments,
    assert_refused,
    assert_refused_naming_one_of,
    build_generic_problem,
    call,
    counts,
    flags,
    generic_problems,
    is_flag,
    is_int,
    is_positive,
    names,
    reals,
    refused,
    valid_counts,
)
from hypothesis import event, example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import cvxclust
from cvxclust import Relaxation, Result
from cvxclust.parameters import InvalidParameterError
from cvxclust.result import relative_gap
from cvxclust.validation import compare
from sklearn.exceptions import ConvergenceWarning


class TwoByTwo(Relaxation):
    r""":math:`\min \operatorname{tr}(CX)` over ``X >= 0`` with unit trace: the smallest eigenvalue of
    ``C = diag(1, 2)``, 1 at ``X = e_1 e_1^T``.  Counts the problems it builds."""

    name = "two-by-two"
    built = 0

    def __init__(self):
        self.C = np.diag([1.0, 2.0])

    def problem(self):
        type(self).built += 1
        X = cp.Variable((2, 2), symmetric=True, name="X")
        return cp.Problem(cp.Minimize(cp.trace(self.C @ X)), [X >> 0, cp.trace(X) == 1])

    def objective(self, X):
        return float(np.trace(self.C @ X))

    def residuals(self, X):
        X = np.asarray(X, dtype=float)
        return {"trace": abs(np.trace(X) - 1.0), "psd": max(0.0, -float(np.linalg.eigvalsh((X + X.T) / 2)[0]))}


@TwoByTwo.register_solver("exact")
def _exact(relaxation):
    return relaxation.make_result(np.diag([1.0, 0.0]), status="optimal", method="exact", iterations=0, time=0.0,
                                  dual_bound=1.0)


def is_tolerance(value) -> bool:
    return is_positive(value) and float(value) < 1




OWN_KEYWORDS = {"CLARABEL": {"tol_gap_abs": is_tolerance, "tol_gap_rel": is_tolerance, "tol_feas": is_tolerance,
                             "max_iter": lambda v: is_int(v) and 1 <= v < 2**32},
                "SCS": {"eps_abs": is_tolerance, "eps_rel": is_tolerance,
                        "max_iters": lambda v: is_int(v) and 1 <= v < 2**31}}


@st.composite
def solver_keywords(draw, valid=False):
    """Keywords for the reference's solver: ``valid``, the accuracy keyword of either solver
    in range (a keyword of the other solver is refused by it, naming it)."""
    if valid:
        key = draw(st.sampled_from(["tol_feas", "eps_abs", None]))
        return {} if key is None else {key: draw(st.sampled_from([1e-6, 1e-3]))}
    keys = draw(st.lists(st.sampled_from(["tol_feas", "max_iter", "eps_abs", "max_iters"]), max_size=2, unique=True))
    values = {"tol_feas": st.one_of(reals(), st.sampled_from([1e-6, 1e-3])),
              "eps_abs": st.one_of(reals(), st.sampled_from([1e-6, 1e-3])),
              "max_iter": st.one_of(counts(-1, 3), st.sampled_from([50, 2**32])),
              "max_iters": st.one_of(counts(-1, 3), st.sampled_from([500, 2**31]))}
    return {k: draw(values[k]) for k in keys}


@SOLVES
@given(arguments(
    solver=(st.sampled_from(["SCS", "CLARABEL", "scs", "Clarabel"]), names({"SCS", "CLARABEL"})),
    eps=(st.one_of(st.none(), st.sampled_from([1e-8, 1e-3, 0.5])), st.one_of(st.none(), reals())),
    verbose=(st.just(False), flags()),
    keywords=(solver_keywords(valid=True), solver_keywords())))
@example({"solver": "CLARABEL", "eps": -1, "verbose": False, "keywords": {}})  # reached Clarabel
@example({"solver": "CLARABEL", "eps": 1e300, "verbose": False, "keywords": {}})  # 'optimal' at the first iterate
@example({"solver": "CLARABEL", "eps": None, "verbose": False,
          "keywords": {"max_iter": -1}})  # an OverflowError in Clarabel's settings
@example({"solver": "SCS", "eps": None, "verbose": False,
          "keywords": {"max_iters": 2**70}})  # an OverflowError in SCS's settings
@example({"solver": "CLARABEL", "eps": None, "verbose": False,
          "keywords": {"max_iter": 2**70}})  # a TypeError from the parameter check itself
def test_reference_options(args):
    solver, eps, verbose, keywords = args["solver"], args["eps"], args["verbose"], args["keywords"]
    relaxation = TwoByTwo()
    before = TwoByTwo.built
    solver_name = solver.upper() if isinstance(solver, str) else None
    bad = [name for name, ok in (("solver", solver_name in ("SCS", "CLARABEL")),
                                 ("eps", eps is None or is_tolerance(eps)),
                                 ("verbose", is_flag(verbose))) if not ok]
    if not bad:
        own = OWN_KEYWORDS[solver_name]
        bad = [k for k, v in keywords.items() if k in own and not own[k](v)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = call(relaxation.solve, "reference", solver=solver, eps=eps, verbose=verbose, **keywords,
                   names=["solver", "eps", "verbose", *keywords])
    if bad:
        assert_refused(out)
        assert isinstance(out.error, InvalidParameterError), out.error
        assert any(repr(name) in str(out.error) for name in bad), out.error
        assert TwoByTwo.built == before, "a solver ran on refused options"
        return
    foreign = set(keywords) - set(OWN_KEYWORDS[solver_name])
    if refused(out):  # a keyword of the other solver: the solver names it
        assert foreign and any(k in str(out.error) for k in foreign), out.error
        return
    assert isinstance(out, Result) and out.method == f"reference-{solver_name.lower()}"
    assert out.X.shape == (2, 2) and np.all(np.isfinite(out.X)) and math.isfinite(out.objective)


def test_reference_refuses_eps_before_any_solver_runs():
    before = TwoByTwo.built
    for eps in (-1, 0.0, 1.0, float("nan"), float("inf"), True, "1e-6"):
        with pytest.raises(InvalidParameterError, match="'eps'"):
            TwoByTwo().solve("reference", eps=eps)
    assert TwoByTwo.built == before


# -- Result and relative_gap ----------------------------------------------------------------------


def result_fields():
    """Fields of a Result, at most one of them bad (NaN and infinite figures are valid: a record
    keeps what a solver found)."""
    return arguments(
        X=(st.sampled_from([np.eye(2), np.full((2, 2), np.nan)]), st.sampled_from([None, [[1.0]]])),
        objective=(st.one_of(st.floats(), st.just(np.array(1.5)), st.just(np.float32(2.0))), reals()),
        status=(st.sampled_from(["optimal", "max_iter", "stalled"]), st.sampled_from([None, 1, b"ok"])),
        method=(st.just("admm"), st.sampled_from([None, 3])),
        iterations=(st.one_of(valid_counts(0, 50), st.just(3.0)), st.one_of(counts(-1, 50),
                                                                              st.sampled_from([1.7, -0.0]))),
        time=(st.sampled_from([0.0, 0.25]), reals()),
        residuals=(st.dictionaries(st.sampled_from(["a", "b"]), st.floats(), max_size=2),
                   st.one_of(st.dictionaries(st.sampled_from(["a", "b"]), reals(), max_size=2),
                             st.sampled_from([None, 5, [("a", 1.0)], "ab"]))),
        dual_bound=(st.one_of(st.none(), st.floats()), st.one_of(st.none(), reals())),
        history=(st.sampled_from([(), [{"iteration": 1, "time": 0.0}]]), st.sampled_from([None, 5, "ab"])),
        extras=(st.sampled_from([{}, {"labels": np.zeros(2)}]), st.sampled_from([None, 5, [1]])),
    )


def is_real(value) -> bool:
    if isinstance(value, (bool, np.bool_, str, bytes)):
        return False
    try:
        float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


@FUZZ
@given(result_fields())
@example({"X": np.eye(2), "objective": "abc", "status": "optimal", "method": "m", "iterations": 1, "time": 0.1,
          "residuals": {}, "dual_bound": None, "history": (), "extras": {}})  # was a bare ValueError
@example({"X": np.eye(2), "objective": 1.0, "status": "optimal", "method": "m", "iterations": 1.7, "time": 0.1,
          "residuals": {}, "dual_bound": None, "history": (), "extras": {}})  # was truncated to 1
def test_result_fields(fields):
    out = call(Result, **fields, names=[f"Result.{k}" for k in fields])
    checks = {
        "status": isinstance(fields["status"], str), "method": isinstance(fields["method"], str),
        "objective": is_real(fields["objective"]),
        "iterations": is_real(fields["iterations"]) and float(fields["iterations"]).is_integer()
        and float(fields["iterations"]) >= 0,
        "time": is_real(fields["time"]) and 0 <= float(fields["time"]) < math.inf,
        "residuals": isinstance(fields["residuals"], dict) and all(is_real(v) for v in fields["residuals"].values()),
        "dual_bound": fields["dual_bound"] is None or is_real(fields["dual_bound"]),
        "history": isinstance(fields["history"], (tuple, list)),
        "extras": isinstance(fields["extras"], dict),
    }
    bad = [k for k, ok in checks.items() if not ok]
    if bad:
        assert_refused(out)
        assert any(f"Result.{k}" in str(out.error) for k in bad), out.error
        return
    assert not refused(out), out
    assert out.iterations == int(float(fields["iterations"])) and isinstance(out.objective, float)
    gap = out.relative_gap
    assert gap is None or (gap == math.inf or 0 <= gap <= 2)
    assert "Result(" in repr(out) and "<table>" in out._repr_html_() and out._repr_markdown_()
    with pytest.raises(TypeError):
        out.extras["new"] = 1


@FUZZ
@given(st.one_of(reals(), st.just(np.array(2.0))), st.one_of(st.none(), reals()))
def test_relative_gap(objective, bound):
    out = call(relative_gap, objective, bound, names=["objective", "bound"])
    if bound is None:
        assert out is None
        return
    if not (is_real(objective) and is_real(bound)):
        return assert_refused(out)
    f, b = float(objective), float(bound)
    if not (math.isfinite(f) and math.isfinite(b)):
        assert out == math.inf
        return
    assert 0 <= out <= 2 and out == relative_gap(b, f)


# -- compare and validate -------------------------------------------------------------------------


def results():
    return st.builds(
        lambda X, objective, residual, status: Result(X=X, objective=objective, status=status, method="m",
                                                      iterations=1, time=0.01, residuals={"r": residual}),
        st.one_of(arrays(np.float64, (2, 2), elements=st.floats(-2, 2)), st.just(np.full((2, 2), np.nan)),
                  st.just(np.zeros((3, 3))), st.just(np.zeros((2, 2)))),
        st.one_of(st.floats(-2, 2), st.sampled_from([math.nan, math.inf, 1e300])),
        st.one_of(st.floats(0, 1e-3), st.sampled_from([math.nan, math.inf, 0.0])),
        st.sampled_from(["optimal", "optimal_inaccurate", "max_iter"]),
    )


def tolerances():
    return st.one_of(st.sampled_from([1e-6, 1e-3, 1.0]), reals())


@FUZZ
@given(results(), results(), tolerances(), tolerances(), st.one_of(st.none(), tolerances()))
@example(Result(X=np.eye(2), objective=1.0, status="optimal", method="m", iterations=1, time=0.1,
                residuals={"r": math.nan}),
         Result(X=np.eye(2), objective=1.0, status="optimal", method="r", iterations=1, time=0.1), 1e-6, 1e-6, None)
def test_compare(result, reference, tol_objective, tol_residual, tol_solution):
    """A NaN residual or solution distance used to pass (NaN > tol is False)."""
    out = call(compare, result, reference, tol_objective=tol_objective, tol_residual=tol_residual,
               tol_solution=tol_solution, names=["tol_objective", "tol_residual", "tol_solution", "X"])
    bad = [name for name, value in (("tol_objective", tol_objective), ("tol_residual", tol_residual))
           if not is_positive(value)]
    if tol_solution is not None and not is_positive(tol_solution):
        bad.append("tol_solution")
    if bad:
        assert_refused_naming_one_of(out, bad)
        return
    if result.X.shape != reference.X.shape:
        return assert_refused(out, "result.X", "reference.X")
    assert not refused(out), out
    judged = [out.objective_gap, result.max_residual] + ([out.solution_distance] if tol_solution is not None else [])
    if not all(math.isfinite(v) for v in judged):
        assert not out.passed, out
    assert out.passed == (not out.failures)
    if out.passed:
        assert out.objective_gap <= tol_objective and result.max_residual <= tol_residual
        assert result.status in ("optimal", "optimal_inaccurate")


def validate_arguments():
    return arguments(
        methods=(st.sampled_from([None, "exact", ["exact"], ("exact",)]),
                 st.sampled_from([None, "exact", [], ["nope"], ["reference"], 5, [5]])),
        reference_solver=(st.sampled_from(["CLARABEL", "scs"]), names({"SCS", "CLARABEL"})),
        reference_options=(st.sampled_from([None, {}, {"eps": 1e-7}]),
                           st.sampled_from([None, {"eps": -1.0}, {"solver": "SCS"}, 5, "eps"])),
        method_options=(st.sampled_from([None, {}, {"exact": {}}]),
                        st.sampled_from([{"exact": 5}, {"nope": {}}, {"exact": {"foo": 1}}, [("exact", {})]])),
        tol_objective=(st.sampled_from([1e-6, 1e-3, 1.0]), tolerances()),
        name=(st.one_of(st.none(), st.text(max_size=3)), st.sampled_from([3, b"x", None])),
    )


def validate_case(methods=None, reference_solver="CLARABEL", reference_options=None, method_options=None,
                  tol_objective=1e-6, name=None):
    return dict(methods=methods, reference_solver=reference_solver, reference_options=reference_options,
                method_options=method_options, tol_objective=tol_objective, name=name)


@SOLVES
@given(validate_arguments())
@example(validate_case(reference_solver="MOSEK"))  # named 'solver' (validate's argument is reference_solver)
@example(validate_case(method_options={"exact": 5}))  # was a TypeError after the reference ran
@example(validate_case(methods=5))  # was a bare TypeError: 'int' object is not iterable
def test_validate(args):
    methods, reference_solver, reference_options = args["methods"], args["reference_solver"], args["reference_options"]
    method_options, tol_objective, name = args["method_options"], args["tol_objective"], args["name"]
    before = TwoByTwo.built
    out = call(cvxclust.validate, TwoByTwo(), methods, reference_solver=reference_solver,
               reference_options=reference_options, method_options=method_options, tol_objective=tol_objective,
               name=name, names=["methods", "method", "reference_solver", "reference_options", "method_options",
                                 "tol_objective", "name", "eps", "solver", "foo"])
    # by default every method that applies: the registered one, and "generic" (a 2 x 2 symmetric
    # problem is of its class)
    chosen = ["exact", "generic"] if methods is None else ["exact"] if methods == "exact" else methods
    bad = [arg for arg, ok in (
        ("methods", isinstance(chosen, (list, tuple)) and len(chosen) > 0
         and all(m in ("exact", "generic") for m in chosen)),
        ("reference_solver", isinstance(reference_solver, str) and reference_solver.upper() in ("SCS", "CLARABEL")),
        ("reference_options", reference_options is None or isinstance(reference_options, dict)),
        ("method_options", method_options is None or (isinstance(method_options, dict) and all(
            isinstance(chosen, (list, tuple)) and k in chosen and isinstance(v, dict)
            for k, v in method_options.items()))),
        ("tol_objective", is_positive(tol_objective)),
        ("name", name is None or isinstance(name, str))) if not ok]
    if bad:
        assert_refused(out)
        assert TwoByTwo.built == before, "the reference ran on refused arguments"
        return
    if refused(out):  # options refused by the reference or by the method, each naming them
        assert reference_options in ({"eps": -1.0}, {"solver": "SCS"}) or method_options == {"exact": {"foo": 1}}
        return
    assert out.passed == all(c.passed for c in out.comparisons)
    assert [c.method for c in out.comparisons] == list(chosen)
    assert out.name == (name or "two-by-two") and out.to_json()


@FEW
@given(st.lists(st.one_of(
    st.fixed_dictionaries({"iteration": st.integers(1, 9)},
                          optional={"relative_gap": reals(), "max_residual": st.sampled_from([1e-3, 0.0, None, "x"])}),
    st.sampled_from([{}, {"relative_gap": 0.1}, 5])), max_size=4),
       st.one_of(st.sampled_from(["relative_gap", ("relative_gap", "max_residual"), ["max_residual"]]),
                 st.sampled_from([5, None, [1], "nope", b"relative_gap"])),
       st.sampled_from([None, None, 5, "ax"]))
@example([{"iteration": 1, "relative_gap": "x"}], "relative_gap", None)  # was a TypeError from np.isfinite
@example([{"relative_gap": 0.1}], "relative_gap", None)  # was a KeyError
@example([{"iteration": 1, "relative_gap": 10**400}], "relative_gap", None)  # an OverflowError
@example([{"iteration": 1, "relative_gap": 0.1}], 5, None)  # was a bare TypeError: not iterable
@example([{"iteration": 1, "relative_gap": 0.1}], "relative_gap", 5)  # was an AttributeError
def test_result_plot(history, keys, ax):
    matplotlib.use("Agg")
    result = Result(X=np.eye(2), objective=1.0, status="optimal", method="m", iterations=len(history), time=0.0,
                    history=history)
    try:
        out = call(result.plot, keys, ax, names=["keys", "ax", "no positive figures"])
    finally:
        plt.close("all")
    names = (keys,) if isinstance(keys, str) else keys
    if not isinstance(names, (tuple, list)) or not all(isinstance(k, str) for k in names):
        return assert_refused(out, "keys")
    if ax is not None:
        return assert_refused(out, "ax")
    drawable = any(isinstance(row, dict) and "iteration" in row and is_real(row.get(k)) and 0 < float(row[k]) < math.inf
                   for row in history for k in names)
    if not drawable:
        return assert_refused(out, "no positive figures")
    assert not refused(out), out


def _spec(objective="none", maximize=False, parts=(), scale=1.0, warm=None, n=3, seed=0):
    return {"n": n, "seed": seed, "scale": scale, "objective": objective, "maximize": maximize,
            "parts": set(parts), "warm": warm}


#: statuses a reference solver may give for a problem that no point meets, or that improves without limit
_NO_OPTIMUM = (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE, cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE)


@settings(SOLVES, max_examples=max(1, 2 * SOLVES.max_examples // 3))
@given(generic_problems())
@example(_spec(parts={"contradiction"}))  # ran to max_iter
@example(_spec(parts={"contradiction", "psd"}, objective="frobenius"))  # ran to max_iter
@example(_spec(objective="linear", maximize=True, parts={"psd"}))  # 'max_iter' at an objective of 1e10
@example(_spec(objective="frobenius"))  # optimum 0, never certified
@example(_spec(objective="frobenius", parts={"psd"}, warm="nan"))  # a LinAlgError
@example(_spec(objective="linear", parts={"psd", "trace"}, scale=1e100))
@example(_spec(objective="frobenius", parts={"nonneg", "row_sums"}, scale=0.0))
@example(_spec(objective="linear", parts={"psd", "nonneg"}, n=4, seed=5))  # moves of geometric growth
@example(_spec(objective="linear", parts={"trace", "trace_max"}, n=4, seed=5))  # Clarabel: 'optimal' at -6e15
def test_generic_solve_answers_every_problem_honestly(spec):
    """No exception but a ValueError naming the warm start, the data or the contradiction, no NaN,
    no limit without a ConvergenceWarning, and every status one the references do not contradict
    (their verdicts of infeasible and unbounded reached, not a limit)."""
    problem, warm = build_generic_problem(spec)

    def solve(problem, warm_start):  # call() silences warnings: record them inside it
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = cvxclust.solve(problem, warm_start=warm_start, max_iter=1500, time_limit=3.0)
        return result, caught

    out = call(solve, problem, warm_start=warm, names=["warm_start", "infeasible", "problem"])
    out, caught = (out, []) if refused(out) else out
    if not problem.variables():  # no objective and no constraint: nothing to solve for
        return assert_refused(out, "problem must have exactly one variable")
    if spec["scale"] > 1e150 and spec["objective"] != "none":
        return assert_refused(out, "the objective has data of magnitude", "rescale the problem")
    if spec["warm"] in ("nan", "inf", "shape"):
        return assert_refused(out, "warm_start")
    if refused(out):  # constraints that contradict outright (structure's checks)
        assert_refused(out, "infeasible")
        verdict = _reference_verdict(spec, "CLARABEL")
        assert verdict is None or verdict[0] in _NO_OPTIMUM
        return
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert out.status in ("optimal", "infeasible", "unbounded", "max_iter", "time_limit", "stalled")
    assert warned == (out.status not in ("optimal", "converged")), (out.status, [str(w.message) for w in caught])
    assert np.all(np.isfinite(out.X)), "a NaN or infinite point"
    if out.status == "unbounded":
        assert out.objective == (math.inf if spec["maximize"] else -math.inf)
        assert out.extras["unboundedness"]["slope"] * out.objective > 0
    else:
        assert not math.isnan(out.objective), "a NaN objective"
    if out.status == "infeasible":
        assert out.extras["infeasibility"]["bound"] > 0
    # Clarabel's verdict, or where it disagrees SCS's (Clarabel calls some unbounded linear
    # objectives optimal at a value near -1e16), must not contradict the status
    verdicts = [_reference_verdict(spec, "CLARABEL")]
    if not _agrees(out, verdicts[0], 1e-4):
        verdicts.append(_reference_verdict(spec, "SCS"))
        assert _agrees(out, verdicts[1], 1e-3), f"{out.status} {out.objective} where the references say {verdicts}"
    event(f"status {out.status}, references {[v if v is None else v[0] for v in verdicts]}")


def _reference_verdict(spec, solver):
    """``(status, value)`` of ``solver`` on the problem of ``spec`` where it gives a verdict (a
    status of optimality, infeasibility or unboundedness), at the scales its absolute tolerances
    fit (at 1e-8 Clarabel calls an unbounded linear objective optimal, at 1e100 it stops at its
    iteration limit); None otherwise."""
    if spec["scale"] not in (0.0, 1.0):
        return None
    problem = build_generic_problem(spec)[0]
    try:
        problem.solve(solver=solver)
    except cp.SolverError:
        return None
    return (problem.status, problem.value) if problem.status in (cp.OPTIMAL, *_NO_OPTIMUM) else None


def _agrees(result, verdict, rtol) -> bool:
    """Whether a reference's ``verdict`` leaves ``result`` possible: its verdicts of infeasible and
    unboundedness reached (both may hold where rows contradict), an optimal value matched by an
    'optimal' result, and a limit for any finite optimum."""
    if verdict is None:
        return True
    status, value = verdict
    if status in (cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE):
        return result.status == "infeasible"
    if status in (cp.UNBOUNDED, cp.UNBOUNDED_INACCURATE):
        return result.status in ("unbounded", "infeasible")
    if result.status != "optimal":
        return result.status in ("max_iter", "time_limit", "stalled")
    return abs(result.objective - value) <= rtol * max(abs(result.objective), abs(value)) + 1e-7 * max(
        1.0, result.gap_floor)
