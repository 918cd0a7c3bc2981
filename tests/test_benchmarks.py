"""The benchmark harness: cases in their own processes, the environment record, the results
files, and the tables that benchmarks/README.md quotes from them."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
import _harness as harness  # noqa: E402

CASES = """\
import os


def ok(n):
    return {"n": n, "threads": os.environ.get("OPENBLAS_NUM_THREADS")}


def big(megabytes):
    block = bytearray(megabytes * 2**20)
    block[::4096] = b"x" * len(block[::4096])
    return {"size": len(block)}


def fails():
    raise ValueError("no luck")


def sleeps():
    import time

    time.sleep(60)
"""


@pytest.fixture
def cases(tmp_path):
    path = tmp_path / "cases.py"
    path.write_text(CASES)
    return path


def test_run_case_returns_the_row_and_sets_the_threads(cases):
    row = harness.run_case(cases, "ok", 7, timeout=60, threads=1, row={"case": "a"})
    assert row["case"] == "a" and row["n"] == 7 and row["threads"] == "1"
    assert row["wall"] > 0 and row["peak_rss_mb"] >= row["base_rss_mb"] > 0


def test_peak_memory_is_the_case_own(cases):
    """Neither the parent's memory (which ru_maxrss would carry across exec) nor another case's."""
    parent = bytearray(300 * 2**20)
    parent[::4096] = b"x" * len(parent[::4096])
    small = harness.run_case(cases, "big", 1, timeout=60)
    large = harness.run_case(cases, "big", 200, timeout=60)
    assert small["peak_rss_mb"] < 150
    assert large["peak_rss_mb"] - small["peak_rss_mb"] > 150
    del parent


def test_a_failing_case_is_reported_not_raised(cases):
    row = harness.run_case(cases, "fails", timeout=60, row={"case": "b"})
    assert row["case"] == "b" and row["status"] == "failed: ValueError: no luck" and math.isnan(row["time"])


def test_a_case_past_its_timeout_is_killed(cases):
    row = harness.run_case(cases, "sleeps", timeout=1)
    assert row["status"] == "killed after 1 s" and row["wall"] < 30


def test_eigh_seconds():
    assert 0 < harness.eigh_seconds(50, threads=1) < 10


def test_environment_record(tmp_path):
    env = harness.environment(BENCHMARKS / "bench_ssc.py", ["--out", str(tmp_path / "x"), "--sizes", "30"], 1)
    assert env["command"] == "python benchmarks/bench_ssc.py --out x --sizes 30"
    assert set(env["packages"]) == {"cvxclust", "numpy", "scipy", "cvxpy", "scs", "clarabel", "sklearn",
                                    "array_api_compat", "torch"}
    assert env["packages"]["numpy"] and env["python"] and env["cpu"] and env["worker_blas_threads"] == 1
    assert env["cvxclust_origin"] == "this checkout"
    assert env["blas"] and all("/" not in pool["file"] for pool in env["blas"])
    assert str(Path.home()) not in json.dumps(env) and "/tmp" not in json.dumps(env)


def test_write_results(tmp_path):
    env = harness.environment(BENCHMARKS / "bench_ssc.py", [])
    table = harness.markdown_table(["a", "b"], [[1, harness.fmt(float("nan"), ".2f")], [2, harness.fmt(0.5, ".2f")]])
    md = harness.write_results(tmp_path, "demo", "A title", "What it is.", table,
                               {"rows": [{"x": float("nan")}, {"x": 1.0}]}, env, plot=lambda p: p.write_bytes(b"png"))
    text = md.read_text()
    assert text.startswith("# A title\n\nWhat it is.\n\n| a | b |") and "| 1 | – |" in text
    assert "## Environment" in text and "`python benchmarks/bench_ssc.py`" in text
    data = json.loads((tmp_path / "demo.json").read_text())
    assert data["rows"] == [{"x": None}, {"x": 1.0}] and data["environment"]["command"] == env["command"]
    assert (tmp_path / "demo.png").read_bytes() == b"png"


def test_tables_take_the_heading_above_them():
    text = "# T\n\n### first\n\n| a |\n|---|\n| 1 |\n\nprose\n\n| b |\n|---|\n"
    assert harness.tables(text) == ["### first\n\n| a |\n|---|\n| 1 |", "| b |\n|---|"]


def test_readme_quotes(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "r.md").write_text("| a |\n|---|\n| 1 |\n\n| b |\n|---|\n| 2 |\n")
    readme = tmp_path / "README.md"
    readme.write_text("x\n<!-- quote results/r.md table 2 -->\nstale\n<!-- end quote -->\ny\n")
    assert harness.readme_drift(readme) == ["results/r.md"]
    assert harness.update_readme(readme)
    assert readme.read_text() == ("x\n<!-- quote results/r.md table 2 -->\n| b |\n|---|\n| 2 |\n\n"
                                  "<sub>Source: `results/r.md`.</sub>\n<!-- end quote -->\ny\n")
    assert harness.readme_drift(readme) == [] and not harness.update_readme(readme)
    readme.write_text("<!-- quote results/r.md table 3 -->\n<!-- end quote -->\n")
    with pytest.raises(ValueError, match="has 2 tables"):
        harness.update_readme(readme)


def test_a_quote_of_a_results_file_not_written_yet_says_so(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text("<!-- quote results/new.md table 1 -->\n<!-- end quote -->\n")
    assert harness.update_readme(readme) and harness.readme_drift(readme) == []
    assert "Not run yet: `results/new.md`" in readme.read_text()
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "new.md").write_text("| a |\n|---|\n| 1 |\n")
    assert harness.readme_drift(readme) == ["results/new.md"]  # once written, the quote is stale until refilled


def test_benchmarks_readme_matches_the_results_files():
    """Every table benchmarks/README.md shows is the one in its results file: after a benchmark
    re-runs, `python benchmarks/_harness.py --update-readme` refreshes them."""
    assert harness.readme_drift() == []
    assert len(list(harness.QUOTE.finditer(harness.README.read_text()))) >= 8


def test_burer_monteiro_anchor_is_certified():
    """The max-cut anchor of bench_classes.py: an exactly feasible point, a bound no better than
    the optimum Clarabel finds, and a gap below tol."""
    import cvxpy as cp

    from cvxclust.problem_classes import laplacian, max_cut, random_graph

    import bench_classes

    W = random_graph(30, 6, random_state=1)
    row = bench_classes.burer_monteiro(laplacian(W), 1e-7)
    problem = max_cut(W)
    problem.solve(solver=cp.CLARABEL)
    assert row["status"] == "optimal" and row["relative_gap"] <= 1e-7 and row["max_residual"] < 1e-12
    assert row["objective"] <= problem.value + 1e-6 and row["dual_bound"] >= problem.value - 1e-6
    assert abs(row["objective"] - problem.value) <= 1e-6 * problem.value


def _lowrank_row(name, n, method, **figures):
    return {"class": name, "n": n, "method": method, "status": "optimal", "relative_gap": 5e-5, "time": 100.0,
            "max_residual": 1e-6, "solve_peak_mb": 1024.0, "peak_rss_mb": 9e9} | figures


def test_lowrank_targets_are_read_from_the_rows():
    """bench_lowrank.py: each target met or not from the measured figures, the solve's peak memory
    (not the process's) against the limit, and the agreement with the dense method."""
    import bench_lowrank as bench

    rows = [_lowrank_row("peng-wei", 10_000, "lowrank", time=500.0, solve_peak_mb=15 * 1024.0),
            _lowrank_row("peng-wei", 20_000, "lowrank", solve_peak_mb=25 * 1024.0),
            _lowrank_row("max-cut", 100_000, "lowrank", relative_gap=2e-4),
            _lowrank_row("peng-wei", 1000, "lowrank", objective=100.0 + 1e-3),
            _lowrank_row("peng-wei", 1000, "generic", objective=100.0),
            _lowrank_row("max-cut", 1000, "lowrank", objective=10.0, status="time_limit"),
            _lowrank_row("max-cut", 1000, "alm", objective=10.0)]
    dense = {"peng-wei": "generic", "max-cut": "alm"}
    bench.compare(rows, dense, memory_limit_gb=16.0)
    assert [r["over"] for r in rows[:2]] == [False, True]
    assert rows[3]["dense_difference"] == pytest.approx(1e-5) and "dense_difference" not in rows[4]
    table = bench.targets(rows, "lowrank", dense, 1e-4, 3000)
    assert [row[2] for row in table] == ["yes", "no", "no", "–", "yes", "no"]
    assert table[3][1] == "not run" and "15.00 GB" in table[0][1] and "gap 2.0e-04" in table[2][1]
    rows[0]["time"] = 700.0  # past 10 minutes
    assert bench.targets(rows, "lowrank", dense, 1e-4, 3000)[0][2] == "no"


def test_lowrank_plan_keeps_the_size_limits():
    import argparse

    import bench_lowrank as bench

    args = argparse.Namespace(methods=["lowrank", "dense", "scs", "clarabel", "auto"], dense_max_n=3000,
                              scs_max_n=200, clarabel_max_n=0)
    assert bench.plan(args, 200, "alm") == ["lowrank", "alm", "scs", "auto"]
    assert bench.plan(args, 10_000, "generic") == ["lowrank", "auto"]


def test_lowrank_ssc_tables_extrapolate_eigh_and_compare_with_the_dense_fit():
    """bench_lowrank.py --ssc-sizes: eigh-equivalents from one eigh as n^3, the objective's difference
    from the dense fit at the same n, and the stages of the largest fit with the rest of its time."""
    import _lowrank_ssc as ssc

    stage = {"seconds": 3.0, "held_gb": 0.75, "peak_gb": 2.0, "calls": 1}
    rows = [{"n": 2000, "method": "auto", "status": "optimal", "time": 4.0, "objective": 100.0 + 1e-3,
             "solve_peak_mb": 512.0, "stages": {"affinity": stage}},
            {"n": 2000, "method": "generic", "status": "optimal", "time": 400.0, "objective": 100.0,
             "solve_peak_mb": 1024.0},
            {"n": 4000, "method": "auto", "status": "optimal", "time": 10.0, "objective": 7.0,
             "solve_peak_mb": 2048.0, "stages": {"affinity": stage | {"seconds": 4.0}}}]
    text = ssc.ssc_markdown(rows, {"n": 1000, "time": 2.0}, "generic")
    assert rows[0]["in_eigh"] == pytest.approx(4.0 / 16.0) and rows[2]["in_eigh"] == pytest.approx(10.0 / 128.0)
    assert rows[0]["dense_difference"] == pytest.approx(1e-5) and "dense_difference" not in rows[2]
    assert "n = 4000, auto" in text and "n = 2000, auto" not in text
    assert "| affinity | 1 | 4.00 | 40% | +0.75 | 2.00 |" in text and "| 6.00 | 60% |" in text
