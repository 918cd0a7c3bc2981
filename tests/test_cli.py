"""The ``cvxclust`` command: ``cvxclust validate`` exit statuses, outputs and options."""

from __future__ import annotations

import dataclasses
import json
import sys
import types
from pathlib import Path

import pytest

import cvxclust
import cvxclust.cli as cli_module
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


# --------------------------------------------------------------------------- usage errors: one line, exit 2

SPEC = """\
[datasets]
iris = { n_samples = 15 }

[estimators.greedy]
class = "cluhsic.CLUHSIC"
params = { method = "greedy" }
"""


def one_line_error(capsys, prefix: str) -> str:
    """The one line the command wrote on stderr, which must start with ``prefix``."""
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(prefix), err
    return err


def spec(tmp_path, text=SPEC) -> str:
    path = tmp_path / "spec.toml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return str(path)


@pytest.mark.parametrize("command", ["validate", "sweep"])
@pytest.mark.parametrize(("address", "says"), [
    ("garbage", "is not the address of a Dask scheduler"),  # was Dask's ValueError out of main
    ("", "must be the address of a Dask scheduler"),
    ("tcp://[::1:1", "is not the address of a Dask scheduler"),
    ("foo://host:1", "is not the address of a Dask scheduler"),
])
def test_a_bad_scheduler_address_is_a_usage_error(tmp_path, capsys, command, address, says):
    argv = ["validate", str(tiny(tmp_path))] if command == "validate" else ["sweep", spec(tmp_path), "--out",
                                                                              str(tmp_path / "t.csv")]
    assert main([*argv, "--scheduler", address]) == 2
    err = one_line_error(capsys, f"cvxclust {command}: error: --scheduler: ")
    assert says in err and repr(address) in err
    assert not (tmp_path / "t.csv").exists()


def test_an_unreachable_scheduler_fails_fast_saying_what_to_do(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask.distributed")
    import socket

    from cvxclust import parallel

    with socket.socket() as sock:  # a port of this machine where nothing listens
        sock.bind(("127.0.0.1", 0))
        address = "tcp://127.0.0.1:%d" % sock.getsockname()[1]
    monkeypatch.setattr(parallel, "CONNECT_TIMEOUT", 0.5)  # was Dask's OSError, after 30 s
    assert main(["sweep", spec(tmp_path), "--out", str(tmp_path / "t.csv"), "--scheduler", address]) == 2
    err = one_line_error(capsys, "cvxclust sweep: error: --scheduler: ")
    assert f"no Dask scheduler answered at '{address}' within 0.5 s" in err and "dask scheduler" in err


@pytest.mark.parametrize(("argv", "prefix", "says"), [
    (["validate", "--jobs", "x"], "cvxclust validate: error: argument --jobs: ", "invalid int value"),
    (["validate", "--jobs", "2", "--scheduler", "tcp://h:1"], "cvxclust validate: error: --jobs, --scheduler: ",
     "not both"),
    (["validate", "--jobs", "100000000"], "cvxclust validate: error: --jobs: ", "got 100000000"),
    (["validate", "--blas-threads", str(10**30)], "cvxclust validate: error: --blas-threads: ", "from 1 to 1024"),
    (["sweep", "s.toml"], "cvxclust sweep: error: ", "required: --out"),
    (["sweep", "s.toml", "--out", "t.txt"], "cvxclust sweep: error: --out: ", ".csv or .parquet"),
    (["nope"], "cvxclust: error: argument COMMAND: ", "invalid choice"),
    ([], "cvxclust: error: ", "choose a command"),  # was the whole help on stderr
])
def test_usage_errors_are_one_line_naming_the_option(capsys, argv, prefix, says):
    assert main(argv) == 2
    assert says in one_line_error(capsys, prefix)


@pytest.mark.parametrize(("text", "says"), [
    (b"\xff\xfe[datasets]\n", "not a UTF-8 text file"),  # was UnicodeDecodeError's message without the file
    ("grid = 3\n" + SPEC, "grid must be a table"),  # was a TypeError out of main
    (SPEC + "grid = 3\n", "estimators.greedy.grid must be a table"),
    (SPEC + "grid = { nope = [1.0] }\n", "estimators.greedy.grid.nope: 'nope' is not a parameter of CLUHSIC"),
    ("[grid]\nn_clusters = 3\n" + SPEC, "grid.n_clusters must be a non-empty list"),
    (SPEC.replace('{ method = "greedy" }', "3"), "estimators.greedy.params must be a table"),
    (SPEC.replace('"cluhsic.CLUHSIC"', "3"), "estimators.greedy.class must be '<family>.<Class>'"),
    (SPEC.replace("iris = { n_samples = 15 }", "iris = 15"), "datasets.iris must be a table"),
])
def test_a_bad_sweep_file_is_one_line_naming_the_file_and_key(tmp_path, capsys, text, says):
    path = spec(tmp_path, text)
    assert main(["sweep", path, "--out", str(tmp_path / "t.csv")]) == 2
    err = one_line_error(capsys, f"cvxclust sweep: error: {path}: ")
    assert says in err


def test_a_sweep_file_that_cannot_be_read(tmp_path, capsys):
    assert main(["sweep", str(tmp_path), "--out", str(tmp_path / "t.csv")]) == 2
    assert "cannot read the sweep file" in one_line_error(capsys, f"cvxclust sweep: error: {tmp_path}: ")


@pytest.mark.parametrize("argv", ["validate", [1, 2], ("validate", None)])
def test_main_argv_must_be_a_list_of_str(argv):
    with pytest.raises(TypeError, match="argv must be a list of str"):
        main(argv)


def test_validate_out_folder_that_is_read_only(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(cli_module.os, "access", lambda path, mode: False)  # as a read-only folder (root writes all)
    assert main(["validate", str(tiny(tmp_path)), "--out", str(tmp_path / "out")]) == 2  # was a PermissionError
    assert "is read-only" in one_line_error(capsys, "cvxclust validate: error: --out: ")
