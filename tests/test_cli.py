"""The ``cvxclust`` command: ``cvxclust validate`` exit statuses, outputs and options."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from pathlib import Path

import pytest

import cvxclust
from cvxclust.cli import load_instance, main, plot_convergence
from cvxclust.ssc import FrobeniusDS

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
SMALL = PROBLEMS / "fsc_iris.toml"  # the quickest shipped instance (a QP on 60 points)

TINY = """\
name = "{name}"
relaxation = "{relaxation}"

[data]
dataset = "iris"
n_samples = 15

[kernel]
kind = "rbf"

[validate]
methods = ["admm"]
tol_objective = {tol}
"""


def tiny(tmp_path, *, name="tiny", relaxation="ssc.FrobeniusDS", tol="1e-6", file=None) -> Path:
    path = tmp_path / (file or f"{name}.toml")
    path.write_text(TINY.format(name=name, relaxation=relaxation, tol=tol), encoding="utf-8")
    return path


def test_validate_small_problem_writes_reports(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["validate", str(SMALL), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    name = load_instance(SMALL).name
    assert f"### {name}" in captured.out and "| admm |" in captured.out
    assert "1 instances, 0 checks failed" in captured.out
    assert f"{name} | admm: optimal" in captured.err  # per-method progress lines
    assert f"{name} | {name}" not in captured.err  # the instance is named once per line

    report = (out / "report.md").read_text()
    assert f"### {name}" in report and "| method |" in report
    data = json.loads((out / "report.json").read_text())
    assert isinstance(data, list) and len(data) == 1
    assert data[0]["name"] == name and data[0]["passed"] is True
    assert {c["method"] for c in data[0]["comparisons"]} >= {"admm"}
    png = out / f"{name}.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_impossible_tolerance_fails_with_status_1(tmp_path, capsys):
    path = tiny(tmp_path, tol="1e-30")
    assert main(["validate", str(path)]) == 1
    captured = capsys.readouterr()
    assert "FAIL: objective gap" in captured.out
    assert "1 instances, 1 checks failed" in captured.out


def test_folder_runs_every_file_sorted(tmp_path, capsys):
    tiny(tmp_path, name="second", file="b.toml")
    tiny(tmp_path, name="first", file="a.toml", tol="1e-30")
    (tmp_path / "notes.txt").write_text("not a problem")
    assert main(["validate", str(tmp_path), "--quiet", "--out", str(tmp_path / "out")]) == 1
    captured = capsys.readouterr()
    assert "###" not in captured.out  # --quiet: no tables ...
    assert "2 instances, 1 checks failed" in captured.out  # ... but the summary
    assert "first | admm: FAIL" in captured.err
    data = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [d["name"] for d in data] == ["first", "second"]
    assert [d["passed"] for d in data] == [False, True]


def test_methods_and_reference_solver_options(tmp_path, capsys):
    path = tiny(tmp_path)
    path.write_text(path.read_text().replace('methods = ["admm"]', "methods = []"))
    others = [m for m in FrobeniusDS.methods() if m not in ("reference", "admm")]
    assert main(["validate", str(path), "--methods", "admm", "--reference-solver", "scs", "--out", str(tmp_path)]) == 0
    data = json.loads((tmp_path / "report.json").read_text())[0]
    assert [c["method"] for c in data["comparisons"]] == ["admm"]
    assert data["reference"]["method"] == "reference-scs"
    out = capsys.readouterr().out
    assert all(f"| {m} |" not in out for m in others)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["validate", "no/such/file.toml"], "no such file"),
        (["validate", "--methods", "nope"], "unknown method"),
        (["validate", "--reference-solver", "MOSEK"], "invalid choice"),
        (["validate", "--blas-threads", "-1"], "--blas-threads"),
        ([], "choose a command"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capsys, argv, message):
    if "--methods" in argv or "--blas-threads" in argv:
        argv = [*argv, str(tiny(tmp_path))]
    assert main(argv) == 2
    assert message in capsys.readouterr().err


def test_bad_problem_file_exits_2(tmp_path, capsys):
    bad = tiny(tmp_path, relaxation="ssc.Nope")
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "key 'relaxation'" in err

    broken = tmp_path / "broken.toml"
    broken.write_text("name = \n")
    assert main(["validate", str(broken)]) == 2
    assert "invalid TOML" in capsys.readouterr().err


def test_default_path_is_problems_in_the_current_folder(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 2
    assert "problems" in capsys.readouterr().err
    (tmp_path / "problems").mkdir()
    tiny(tmp_path / "problems")
    assert main(["validate", "-q"]) == 0


def test_repeated_names_exit_2(tmp_path, capsys):
    tiny(tmp_path, file="a.toml")
    tiny(tmp_path, file="b.toml")
    assert main(["validate", str(tmp_path)]) == 2
    assert "unique" in capsys.readouterr().err


def test_version(capsys):
    assert main(["--version"]) == 0
    assert cvxclust.__version__ in capsys.readouterr().out


def test_a_method_that_raises_fails_its_check_only(tmp_path, monkeypatch, capsys):
    class Broken(FrobeniusDS):
        pass

    def explode(relaxation, **options):
        raise FloatingPointError("boom")

    Broken.register_solver("admm", FrobeniusDS._solvers["admm"])
    Broken.register_solver("explode", explode)
    module = types.ModuleType("cvxclust.fakecli")
    module.Broken = Broken
    monkeypatch.setitem(sys.modules, "cvxclust.fakecli", module)
    path = tiny(tmp_path, relaxation="fakecli.Broken")
    path.write_text(path.read_text().replace('methods = ["admm"]', 'methods = ["admm", "explode"]'))
    assert main(["validate", str(path), "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "| admm |" in captured.out and "pass |" in captured.out
    assert "FloatingPointError: boom" in captured.out and "FloatingPointError: boom" in captured.err
    def no_constants(name):
        raise AssertionError(f"report.json holds {name}, which is not standard JSON")

    data = json.loads((tmp_path / "report.json").read_text(), parse_constant=no_constants)
    assert [c["passed"] for c in data[0]["comparisons"]] == [True, False]


def test_plot_without_history(tmp_path):
    inst = load_instance(tiny(tmp_path))
    report = inst.run()
    report.results.update({m: dataclasses.replace(r, history=()) for m, r in report.results.items()})
    plot_convergence(report, tmp_path / "empty.png")
    assert (tmp_path / "empty.png").stat().st_size > 0


def test_console_script_entry_point():
    from importlib.metadata import entry_points

    (script,) = entry_points(group="console_scripts", name="cvxclust")
    assert script.load() is main
