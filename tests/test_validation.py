"""``cvxclust.validate`` / ``compare`` / ``ValidationReport`` (scalable solver vs cvxpy
reference), and the input checks of ``cvxclust._checks`` that every module relies on."""

from __future__ import annotations

import json

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust import Result
from cvxclust._checks import (
    check_choice,
    check_data_matrix,
    check_int_range,
    check_n_clusters,
    check_positive,
    check_square_matrix,
)
from cvxclust.datasets import load_dataset
from cvxclust.kernels import rbf
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD
from cvxclust.validation import Comparison, ValidationReport, compare


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(scope="module")
def K():
    X, _ = load_dataset("iris", n_samples=24)
    return rbf(X)


def make(X, objective, *, status="optimal", residuals=None, time=1.0, dual_bound=None, method="m"):
    return Result(X=np.asarray(X, dtype=float), objective=objective, status=status, method=method, iterations=7,
                  time=time, residuals=residuals or {"r": 0.0}, dual_bound=dual_bound)


# -- compare ---------------------------------------------------------------------------------


def test_compare_passing():
    ref = make(np.eye(2), 10.0, time=4.0, method="reference-clarabel")
    res = make(np.eye(2) * (1 + 1e-8), 10.0 + 1e-6, time=0.5, dual_bound=10.0 - 1e-6)
    c = compare(res, ref)
    assert isinstance(c, Comparison)
    assert c.passed and c.failures == []
    assert c.objective_gap == pytest.approx(1e-7)
    assert c.solution_distance == pytest.approx(1e-8)
    assert c.relative_duality_gap == pytest.approx(2e-6 / (10.0 + 1e-6))
    assert c.speedup == pytest.approx(8.0)
    assert c.iterations == 7 and c.method == "m" and c.status == "optimal"


@pytest.mark.parametrize(
    ("change", "failure"),
    [
        ({"objective": 10.1}, "objective gap"),
        ({"objective": np.nan}, "objective gap"),
        ({"objective": np.inf}, "objective gap"),
        ({"residuals": {"row_sums": 1e-3, "other": 0.0}}, "residual"),
        ({"status": "max_iter"}, "status max_iter"),
        ({"status": "stalled"}, "status stalled"),
    ],
)
def test_compare_failures(change, failure):
    ref = make(np.eye(2), 10.0)
    kwargs = {"objective": 10.0, **change}
    res = make(np.eye(2), kwargs.pop("objective"), **kwargs)
    c = compare(res, ref)
    assert not c.passed
    assert len(c.failures) == 1 and c.failures[0].startswith(failure)


def test_compare_tolerances_and_solution_distance():
    ref = make(np.eye(2), 10.0)
    res = make(np.eye(2) + 0.01, 10.0 + 1e-4)  # relative gap 1e-5
    assert not compare(res, ref).passed  # 1e-6 default on the objective
    assert compare(res, ref, objective_tol=2e-5).passed
    c = compare(res, ref, objective_tol=2e-5, solution_tol=1e-3)
    assert not c.passed and c.failures[0].startswith("solution distance")
    assert c.solution_distance == pytest.approx(np.linalg.norm(np.full((2, 2), 0.01)) / np.sqrt(2))
    assert compare(res, ref, objective_tol=2e-5, solution_tol=1e-1).passed
    # residual tolerance
    bad = make(np.eye(2), 10.0, residuals={"a": 1e-5})
    assert not compare(bad, ref).passed and compare(bad, ref, residual_tol=1e-4).passed
    # optimal_inaccurate is an acceptable status (cvxpy's)
    assert compare(make(np.eye(2), 10.0, status="optimal_inaccurate"), ref).passed


def test_compare_with_zero_reference_objective():
    ref = make(np.zeros((2, 2)), 0.0)
    c = compare(make(np.zeros((2, 2)), 1e-19), ref)  # gap measured against max(|f_ref|, 1e-12)
    assert np.isfinite(c.objective_gap) and np.isfinite(c.solution_distance)
    assert c.passed
    assert not compare(make(np.zeros((2, 2)), 1e-3), ref).passed


# -- validate --------------------------------------------------------------------------------


def test_validate_all_methods_by_default(K):
    report = cvxclust.validate(FrobeniusDS(K))
    assert isinstance(report, ValidationReport)
    assert report.name == "FrobeniusDS"
    assert [c.method for c in report.comparisons] == [m for m in FrobeniusDS.methods() if m != "reference"]
    assert report.passed
    ref = report.reference
    assert ref.method == "reference-clarabel" and ref.status == "optimal"
    for m, res in report.results.items():
        assert res.method == m
        assert abs(res.objective - ref.objective) <= 1e-6 * abs(ref.objective)


def test_validate_subset_options_and_scs(K):
    report = cvxclust.validate(
        FrobeniusPSD(K),
        methods=["admm"],
        reference_solver="SCS",
        reference_options={"eps": 1e-9},
        method_options={"admm": {"tol": 1e-9}},
        solution_tol=1e-3,
        name="iris24",
    )
    assert report.name == "iris24"
    assert report.reference.method == "reference-scs"
    [c] = report.comparisons
    assert c.method == "admm" and c.passed
    assert c.objective_gap <= 1e-8


def test_validate_can_fail(K):
    with pytest.warns(ConvergenceWarning):
        report = cvxclust.validate(FrobeniusPSD(K), methods=["admm", "ld-ssc2"],
                                   method_options={"ld-ssc2": {"max_iter": 2}})
    assert not report.passed
    by_method = {c.method: c for c in report.comparisons}
    assert by_method["admm"].passed
    assert not by_method["ld-ssc2"].passed
    assert "status max_iter" in by_method["ld-ssc2"].failures
    # a tolerance tighter than any solver achieves fails everyone
    strict = cvxclust.validate(FrobeniusDS(K), methods=["admm"], objective_tol=1e-16, residual_tol=1e-20)
    assert not strict.passed


class _Exploding(FrobeniusDS):
    """FrobeniusDS with a second solver that raises."""


def _explode(relaxation, **options):
    raise FloatingPointError("boom")


_Exploding.register_solver("admm", FrobeniusDS._solvers["admm"])
_Exploding.register_solver("explode", _explode)


def test_validate_errors_and_callback(K):
    relaxation = _Exploding(K)
    with pytest.raises(FloatingPointError, match="boom"):  # errors="raise", the default
        cvxclust.validate(relaxation, methods=["explode", "admm"])
    seen = []
    report = cvxclust.validate(relaxation, methods=["explode", "admm"], errors="record",
                               callback=lambda method, result: seen.append((method, result.status)))
    # the reference first, then each method in order, the one that raised included
    assert [m for m, _ in seen] == ["reference", "explode", "admm"]
    assert seen[1][1] == "error: FloatingPointError: boom" and seen[2][1] == "optimal"
    by_method = {c.method: c for c in report.comparisons}
    assert by_method["admm"].passed and not by_method["explode"].passed
    assert "status error: FloatingPointError: boom" in by_method["explode"].failures
    failed = report.results["explode"]
    assert failed.X.shape == report.reference.X.shape and np.isnan(failed.objective)
    assert "FloatingPointError" in failed.extras["traceback"]
    for key, value in (("errors", "ignore"), ("callback", 3)):
        with pytest.raises(ValueError, match=f"'{key}' parameter of validate"):
            cvxclust.validate(relaxation, methods=["admm"], **{key: value})


def test_validate_rejects_unknown_methods(K):
    with pytest.raises(ValueError, match="'ld-ssc2'") as info:
        cvxclust.validate(FrobeniusDS(K), methods=["admm", "ld-ssc2"])
    assert "successive-projections" in str(info.value)
    with pytest.raises(ValueError, match="'reference_solver' parameter of validate must be one of 'SCS', 'CLARABEL'"):
        cvxclust.validate(FrobeniusDS(K), reference_solver="MOSEK2")


def test_report_serialisations(K):
    report = cvxclust.validate(FrobeniusDS(K), name="ds")
    d = report.to_dict()
    assert d["name"] == "ds" and d["passed"] is True
    assert set(d["reference"]) == {"method", "status", "inaccurate", "objective", "max_residual",
                                   "relative_duality_gap", "time"}
    assert d["tolerances"] == {"objective_tol": 1e-6, "residual_tol": 1e-6, "solution_tol": None}
    assert len(d["comparisons"]) == len(report.comparisons)
    fields = {"method", "status", "objective", "objective_gap", "solution_distance", "max_residual",
              "relative_duality_gap", "time", "speedup", "iterations", "passed", "failures", "reference_inaccurate"}
    assert all(set(c) == fields for c in d["comparisons"])
    # JSON round trip: same content, plain JSON types
    back = json.loads(report.to_json())
    assert back == json.loads(json.dumps(d))
    assert back["comparisons"][0]["objective"] == pytest.approx(report.comparisons[0].objective, rel=1e-15)
    assert "NaN" not in report.to_json() and "Infinity" not in report.to_json()
    # markdown: heading, reference line, header, separator and one row per method
    md = report.to_markdown().splitlines()
    assert md[0] == "### ds"
    assert md[2].startswith("reference `reference-clarabel`")
    rows = [line for line in md if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + len(report.comparisons)
    for c in report.comparisons:
        assert any(row.startswith(f"| {c.method} | optimal |") and row.endswith("| pass |") for row in rows)


def test_old_tolerance_keywords_warn_and_still_work(K):
    ref = make(np.eye(2), 10.0)
    res = make(np.eye(2) + 0.01, 10.0 + 1e-4, residuals={"r": 1e-5})  # objective gap 1e-5
    for old, new, value in (("tol_objective", "objective_tol", 2e-5), ("tol_residual", "residual_tol", 1e-4)):
        with pytest.warns(FutureWarning, match=f"{old}= is renamed {new}="):
            c = compare(res, ref, **{old: value})
        assert c.failures == compare(res, ref, **{new: value}).failures and len(c.failures) == 1
    with pytest.warns(FutureWarning, match="tol_solution= is renamed solution_tol="):
        assert not compare(res, ref, objective_tol=1, residual_tol=1, tol_solution=1e-3).passed
    with pytest.raises(TypeError, match="pass objective_tol= alone"):
        compare(res, ref, objective_tol=1e-3, tol_objective=1e-3)
    with pytest.raises(TypeError, match="unexpected keyword argument 'tol_everything'"):
        compare(res, ref, tol_everything=1e-3)
    with pytest.warns(FutureWarning), pytest.raises(ValueError, match="'tol_objective' parameter of validate"):
        cvxclust.validate(FrobeniusDS(K), tol_objective=-1.0)  # named as the caller spelt it
    with pytest.warns(FutureWarning, match="validate: tol_residual= is renamed residual_tol="):
        report = cvxclust.validate(FrobeniusDS(K), methods=["admm"], tol_residual=1e-30)
    assert report.residual_tol == 1e-30 and not report.passed


def _plain_problem(feasible: bool, name: str = "Q"):
    C = np.array([[2.0, -1.0, 0.5], [-1.0, 1.0, 0.0], [0.5, 0.0, 3.0]])
    Q = cp.Variable((3, 3), symmetric=True, name=name)
    constraints = [Q >> 0, cp.diag(Q) == 1] + ([] if feasible else [Q[0, 1] == 2])  # |Q01| <= 1 under Q >> 0
    return cp.Problem(cp.Minimize(cp.trace(C @ Q)), constraints)


def test_plain_problem_report_is_named_after_its_variable():
    assert cvxclust.validate(_plain_problem(True, name="Gram")).name == "Gram"
    assert cvxclust.validate(_plain_problem(True), name="mine").name == "mine"


def test_infeasible_plain_problem_reports_both_statuses():
    """The reference used to raise ``RuntimeError: cvxpy/CLARABEL returned no solution``."""
    with pytest.warns(ConvergenceWarning):
        report = cvxclust.validate(_plain_problem(False), methods=["generic"])
    ref = report.reference
    assert ref.status == "infeasible" and np.isnan(ref.X).all() and ref.objective == np.inf
    [c] = report.comparisons
    assert c.status == "infeasible" and report.results["generic"].extras["infeasibility"] is not None
    assert c.passed and np.isnan(c.objective_gap) and np.isnan(c.solution_distance)
    md = report.to_markdown()
    assert "status infeasible, no point" in md and "| generic | infeasible | n/a | n/a |" in md
    assert "pass when the method's status is the reference's (infeasible)" in md
    assert "NaN" not in report.to_json() and "Infinity" not in report.to_json()
    # a method that finds a point where the reference certifies none fails, and the reverse
    point = make(np.eye(3), 1.0)
    assert compare(point, ref).failures == ["status optimal, the reference's is infeasible"]
    assert "status infeasible" in compare(make(np.eye(3), np.inf, status="infeasible"), point).failures


def test_inaccurate_reference_is_flagged():
    ref = make(np.eye(2), 10.0, status="optimal_inaccurate", method="reference-clarabel")
    res = make(np.eye(2), 10.0, method="admm")
    c = compare(res, ref)
    assert c.passed and c.reference_inaccurate and c.check() == "pass (inaccurate reference)"
    assert not compare(res, make(np.eye(2), 10.0)).reference_inaccurate
    report = ValidationReport("flagged", ref, [c], {"admm": res})
    assert report.reference_inaccurate and report.to_dict()["reference"]["inaccurate"] is True
    md = report.to_markdown()
    assert "status optimal_inaccurate, max residual 0.0e+00, time 1.000 s; **inaccurate reference**" in md
    assert "| admm | optimal |" in md and md.count("| pass (inaccurate reference) |") == 1
    assert "(inaccurate reference)" in report._repr_html_()


def test_markdown_legend_says_what_each_column_means(K):
    report = cvxclust.validate(FrobeniusDS(K), methods=["admm"], objective_tol=1e-5, solution_tol=1e-2)
    legend = report.to_markdown().split("| pass |\n\n")[1]
    for column in ("*objective gap*", "*solution distance*", "*max residual*", "*certified gap*", "*speed-up*"):
        assert column in legend
    assert "without the reference" in legend  # the certified gap is the method's own
    assert "objective gap <= 1e-05, max residual <= 1e-06, solution distance <= 0.01" in legend


def test_report_plot(K, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    report = cvxclust.validate(FrobeniusPSD(K), methods=["admm", "dual-newton"], objective_tol=1e-5)
    fig = report.plot(path=tmp_path / "report.png")
    assert (tmp_path / "report.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    gap, res = fig.axes[:2]
    assert gap.get_xlabel() == res.get_xlabel() == "time (s)" and gap.get_yscale() == "log"
    horizontal = {ax: [line.get_ydata()[0] for line in ax.lines if list(line.get_ydata()) == [line.get_ydata()[0]] * 2
                       and list(line.get_xdata()) == [0, 1]] for ax in (gap, res)}
    assert horizontal[gap] == [1e-5] and horizontal[res] == [1e-6]  # the tolerances
    vertical = [line for line in gap.lines if list(line.get_xdata()) == [report.reference.time] * 2]
    assert vertical and "objective" in vertical[0].get_label()  # the reference's time and objective
    # each method's history: its last certified gap drawn at its time
    admm = report.results["admm"]
    drawn = [line for line in gap.lines if line.get_label() == "admm"]
    assert drawn and drawn[0].get_xdata()[-1] == pytest.approx(admm.time)
    assert drawn[0].get_ydata()[-1] == pytest.approx(max(admm.relative_gap, 1e-16))
    fig2, axes = plt.subplots(1, 2)
    assert report.plot(ax=axes) is fig2
    plt.close(fig2)
    with pytest.raises(TypeError, match="ax must be a pair of matplotlib Axes"):
        report.plot(ax=axes[0])


# -- input checks ----------------------------------------------------------------------------


@pytest.mark.parametrize("value", [1, 0.5, 1e-12, np.float32(2.0), np.int64(3)])
def test_check_positive_accepts(value):
    check_positive(value, "x")


@pytest.mark.parametrize("value", [0, -1, -0.5, np.nan, np.inf, True, "1", None, [1.0], 1j])
def test_check_positive_rejects(value):
    with pytest.raises(ValueError, match="my_param"):
        check_positive(value, "my_param")


def test_check_positive_allow_inf():
    check_positive(np.inf, "t", allow_inf=True)
    with pytest.raises(ValueError, match="t"):
        check_positive(-np.inf, "t", allow_inf=True)


def test_check_choice():
    check_choice("b", "kind", ("a", "b"))
    with pytest.raises(ValueError, match=r"Unknown kind 'c'; valid values are \['a', 'b'\]"):
        check_choice("c", "kind", ("b", "a"))
    with pytest.raises(ValueError, match="kind"):
        check_choice(["a"], "kind", ("a", "b"))


def test_check_choice_unhashable_value_with_dict_choices():
    with pytest.raises(ValueError, match="kind"):
        check_choice(["a"], "kind", {"a": 1})


def test_check_square_matrix():
    A = check_square_matrix([[1, 2], [2, 1]], "A")
    assert A.dtype == float
    np.testing.assert_array_equal(A, [[1.0, 2.0], [2.0, 1.0]])
    B = check_square_matrix(np.array([[1.0, 2.0], [2.0 + 1e-13, 1.0]]), "B")
    np.testing.assert_array_equal(B, B.T)  # rounding-level asymmetry is symmetrised exactly
    check_square_matrix([[1.0, 3.0], [0.0, 1.0]], "C", symmetric=False)
    for bad, pattern in [
        ([[1.0, 3.0], [0.0, 1.0]], "symmetric"),
        (np.ones((2, 3)), "square"),
        (np.ones(3), "square"),
        ([[np.nan, 0.0], [0.0, 1.0]], "NaN"),
        ([["a", "b"], ["c", "d"]], "numeric"),
        (np.ones((1, 1)), "at least 2"),
    ]:
        with pytest.raises(ValueError, match=f"M.*{pattern}|{pattern}.*M"):
            check_square_matrix(bad, "M", min_size=2)
    with pytest.raises(ValueError, match="nonnegative"):
        check_square_matrix([[1.0, -1.0], [-1.0, 1.0]], "M", nonnegative=True)


def test_check_n_clusters():
    assert check_n_clusters(np.int64(3), 5) == 3
    assert check_n_clusters(5, 5) == 5
    for bad in [1, 0, 6, 2.0, True, "2"]:
        with pytest.raises(ValueError, match="n_clusters"):
            check_n_clusters(bad, 5)


def test_check_data_matrix():
    X = check_data_matrix([[1, 2], [3, 4]])
    assert X.dtype == float and X.shape == (2, 2)
    for bad in [np.ones(3), np.ones((1, 2)), np.ones((3, 0)), [[1.0, np.inf], [0.0, 0.0]], [["a"], ["b"]]]:
        with pytest.raises(ValueError, match="Xdata"):
            check_data_matrix(bad, "Xdata")


def test_check_int_range():
    assert check_int_range(np.int32(4), "k", 1, 4) == 4
    assert check_int_range(10**6, "k", 1) == 10**6
    for bad in [0, 5, 2.0, True, None]:
        with pytest.raises(ValueError, match="k must"):
            check_int_range(bad, "k", 1, 4)
