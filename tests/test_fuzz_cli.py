"""Fuzz tests of the command line and of the fan-out entry points: ``cvxclust.cli.main``,
:func:`cvxclust.sweep`, :func:`cvxclust.sweeps.read_spec` (through ``cvxclust sweep``),
:func:`cvxclust.parallel.run_tasks` and :func:`cvxclust.datasets.objects_by_pose`.

The contract: a bad input gives exit status 2 and one line on stderr (the command), or a
``ValueError`` / ``TypeError`` naming the argument (Python); never another exception type, a
hang or a traceback.  Nothing is solved: the validation run, the fits of the command's sweeps
and the Dask client are stand-ins, so every example takes milliseconds.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import re
import uuid

import numpy as np
import pytest
from fuzz_helpers import FEW, FUZZ, call, counts, flags, is_int, random_states, refused
from hypothesis import assume, example, given
from hypothesis import strategies as st
from sklearn.base import BaseEstimator, ClusterMixin

from cvxclust import cli, sweeps
from cvxclust.datasets import objects_by_pose
from cvxclust.parallel import MAX_BLAS_THREADS, MAX_JOBS, run_tasks

PROBLEM = """\
name = "tiny"
relaxation = "ssc.FrobeniusDS"

[data]
dataset = "iris"
n_samples = 15

[kernel]
kind = "rbf"
"""

GOOD_SPEC = {"datasets": {"iris": {"n_samples": 15}},
             "estimators": {"greedy": {"class": "cluhsic.CLUHSIC", "params": {"method": "greedy"}}}}


class _NoScheduler:
    """Stands for ``dask.distributed.Client``: reads the address as Dask does, then finds no
    scheduler there (as Dask does when nothing listens, without the wait)."""

    def __init__(self, address, timeout=None, **kwargs):
        from distributed.comm.addressing import parse_address, parse_host_port
        from distributed.comm.registry import get_backend

        scheme, location = parse_address(address)
        get_backend(scheme)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
        raise OSError(f"Timed out trying to connect to {address} after {timeout} s")


def _fit_nothing(name, estimator, dataset, X, y, params):
    return {"estimator": name, "dataset": dataset, "params": sweeps._params_key(params),
            "n_samples": int(X.shape[0]), "n_clusters": params.get("n_clusters"), "error": ""}


@pytest.fixture(scope="module", autouse=True)
def stand_ins(tmp_path_factory):
    """The work folder (relative paths land in it) and the stand-ins for the solves and Dask."""
    folder = tmp_path_factory.mktemp("fuzz_cli")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setattr(cli, "_run", lambda instances, requested, out, args, started: 0)
        patch.setattr(sweeps, "_fit_cell", _fit_nothing)
        patch.setattr(sweeps, "run_tasks", lambda function, tasks, blas_threads: (function(*t) for t in tasks))
        try:
            import dask.distributed
            patch.setattr(dask.distributed, "Client", _NoScheduler)
        except ImportError:  # then --scheduler is the usage error "needs dask.distributed"
            pass
        (folder / "tiny.toml").write_text(PROBLEM)
        (folder / "good.toml").write_text(_toml(GOOD_SPEC))
        (folder / "latin.toml").write_bytes("[datasets]\n\u00e9 = {}\n".encode("latin-1"))
        (folder / "sub").mkdir()
        yield folder


# -- the command ----------------------------------------------------------------------------------

def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ("nan" if value != value else ("inf" if value > 0 else "-inf"))
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{json.dumps(k, ensure_ascii=False)} = {_toml_value(v)}" for k, v in value.items()) + "}"


def _toml(document: dict) -> str:
    return "".join(f"{json.dumps(k, ensure_ascii=False)} = {_toml_value(v)}\n" for k, v in document.items())


SCALARS = st.one_of(st.integers(-3, 300), st.floats(allow_nan=False, width=32), st.text(max_size=6), st.booleans())
JUNK = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                     st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                    max_leaves=6)
GRIDS = st.one_of(st.dictionaries(st.sampled_from(["gamma", "n_clusters", "refine", "nope"]),
                                  st.one_of(st.lists(st.integers(1, 4), max_size=3), JUNK), max_size=2), JUNK)
ESTIMATOR = st.fixed_dictionaries(
    {"class": st.one_of(st.sampled_from(["cluhsic.CLUHSIC", "ssc.SemidefiniteSpectralClustering", "nope.X",
                                         "ssc.Nothing", "ssc.__class__", "ssc", "bregman."]), JUNK)},
    optional={"params": st.one_of(st.just({"method": "greedy"}), JUNK), "grid": GRIDS, "extra": JUNK})
SPECS = st.fixed_dictionaries({}, optional={
    "datasets": st.one_of(st.dictionaries(st.one_of(st.sampled_from(["iris", "wine", "nope"]), st.text(max_size=4)),
                                          st.one_of(st.just({}), st.fixed_dictionaries({"n_samples": counts(-1, 200)})
                                                    .filter(lambda d: isinstance(d["n_samples"], int)), JUNK),
                                          max_size=2), JUNK),
    "estimators": st.one_of(st.dictionaries(st.text(min_size=1, max_size=4), st.one_of(ESTIMATOR, JUNK), max_size=2),
                            JUNK),
    "grid": GRIDS,
    "other": JUNK,
})
TEXT = st.text(max_size=10)
COUNTS = st.one_of(st.integers(-3, MAX_JOBS + 2).map(str), st.integers(0, 2 * MAX_BLAS_THREADS).map(str),
                   st.sampled_from(["x", "", "1e3", " 2", "2.0", str(10**30), "-1"]), TEXT)
ADDRESSES = st.one_of(st.sampled_from(["", " ", "garbage", "tcp://", "tcp://127.0.0.1:1", "127.0.0.1:8786",
                                       "tls://h:1", "foo://h:1", "tcp://[::1:1", "inproc://x", "ws://h:1"]), TEXT)
SAFE_PATHS = TEXT.filter(lambda t: ".." not in t and not t.startswith(("/", "-")))
SPEC_FILES = st.one_of(st.sampled_from(["good.toml", "latin.toml", "sub", "missing.toml", ""]), SAFE_PATHS)
OUT_FILES = st.one_of(st.sampled_from(["t.csv", "t.parquet", "t.txt", "missing/t.csv", "sub", "tiny.toml"]),
                      SAFE_PATHS.map(lambda t: t + ".csv"), SAFE_PATHS)


@st.composite
def command_lines(draw):
    """An argument list of ``cvxclust``: a command and its options, each present or not, in any
    order, as ``--opt value`` or ``--opt=value``, values from good ones to junk."""
    command = draw(st.sampled_from(["validate", "sweep", "nope", "--version", ""]))
    options = {"--jobs": COUNTS, "--scheduler": ADDRESSES, "--blas-threads": COUNTS, "-q": None,
               "--unknown": None}
    if command == "validate":
        options.update({"--out": SAFE_PATHS, "--methods": st.one_of(st.just("admm"), TEXT),
                        "--reference-solver": st.one_of(st.sampled_from(["scs", "CLARABEL"]), TEXT)})
        positional = draw(st.lists(st.one_of(st.sampled_from(["tiny.toml", "sub", "missing.toml"]), SAFE_PATHS),
                                   max_size=2))
    elif command == "sweep":
        options["--out"] = OUT_FILES
        positional = draw(st.lists(SPEC_FILES, min_size=0, max_size=2))
    else:
        positional = []
    argv = list(positional)
    for option, values in options.items():
        if not draw(st.integers(0, 3)):  # each option in about a quarter of the lines
            if values is None:
                argv.append(option)
            elif draw(st.booleans()):
                argv += [option, draw(values)]
            else:
                argv.append(f"{option}={draw(values)}")
    argv = draw(st.permutations(argv)) if draw(st.booleans()) else argv
    return [command, *argv] if command else argv


def run_command(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    return status, out.getvalue(), err.getvalue()


ONE_LINE = re.compile(r"cvxclust( validate| sweep)?: error: \S[^\n]*\n\Z")


def assert_usage_error_contract(argv, status, err):
    assert status in (0, 1, 2), (argv, status)
    if status == 2:
        assert ONE_LINE.match(err), f"{argv}: not one usage-error line: {err!r}"
        assert "Traceback" not in err


@FUZZ
@given(command_lines())
@example(["sweep", "good.toml", "--out", "t.csv", "--scheduler", "garbage"])  # was Dask's ValueError out of main
@example(["sweep", "good.toml", "--out", "t.csv", "--scheduler", ""])
@example(["validate", "tiny.toml", "--scheduler", "tcp://127.0.0.1:1"])  # was an OSError after 30 s
@example(["sweep", "latin.toml", "--out", "t.csv"])  # was UnicodeDecodeError's message, without the file
@example(["sweep", "good.toml", "--out", "t.csv", "--blas-threads", str(10**30)])  # was ctypes' OverflowError
@example([])  # was the whole help on stderr
def test_command_line(argv):
    status, _, err = run_command(argv)
    assert_usage_error_contract(argv, status, err)
    options = [a.split("=")[0] for a in argv if a.startswith("--")]
    if status == 2 and any(o in err for o in ("--scheduler", "--jobs", "--blas-threads")):
        assert any(o in options for o in ("--scheduler", "--jobs", "--blas-threads")), err


@FUZZ
@given(st.one_of(SPECS.map(_toml), st.binary(max_size=40), st.sampled_from([b"\xff\xfe", b"grid = 3\n"])),
       st.sampled_from([[], ["-q"], ["--jobs", "1"]]))
@example(_toml({**GOOD_SPEC, "grid": 3}), [])  # was a TypeError out of main
@example(_toml({**GOOD_SPEC, "grid": {"nope": [1]}}), [])  # was refused by sweep, without the file
@example(_toml(GOOD_SPEC), [])  # a good file: a table, exit 0
def test_sweep_files(text, options):
    name = f"spec-{uuid.uuid4().hex}.toml"
    with open(name, "wb") as f:
        f.write(text if isinstance(text, bytes) else text.encode("utf-8"))
    try:
        argv = ["sweep", name, "--out", f"{name}.csv", *options]
        status, out, err = run_command(argv)
    finally:
        os.remove(name)
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{name}.csv")
    assert_usage_error_contract(argv, status, err)
    if status == 2:
        assert err.startswith(f"cvxclust sweep: error: {name}: "), err  # names the file (then the key)
    else:
        assert status == 0 and "cells, 0 failed" in out


# -- sweep, run_tasks, objects_by_pose ------------------------------------------------------------

class Halves(ClusterMixin, BaseEstimator):
    """Two clusters by the median of the first feature."""

    def __init__(self, n_clusters=2, random_state=None):
        self.n_clusters, self.random_state = n_clusters, random_state

    def fit(self, X, y=None):
        X = np.asarray(X)
        self.labels_ = (X[:, 0] > np.median(X[:, 0])).astype(int)
        return self


def _blobs():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], 6)
    return rng.normal(size=(12, 2)) + 4.0 * y[:, None], y


BLOBS = _blobs()
SWEEP_ARGUMENTS = {
    "estimators": (st.just({"halves": Halves()}),
                   st.one_of(JUNK, st.just({}), st.just({"x": object()}), st.just([Halves()]), st.none())),
    "datasets": (st.sampled_from([{"blobs": BLOBS}, ["iris"], ("wine",)]),
                 st.one_of(JUNK, st.none(), st.sampled_from([[], {}, [3], ["nope"], "iris", {"d": np.ones(3)},
                                                             {"d": (np.ones((3, 2)), [0, 1])}, iter(["iris"]),
                                                             {"d": (["a", "b"], [0, 1])}, [None]]))),
    "grid": (st.sampled_from([None, {"n_clusters": [2, 3]}, {"halves": {"n_clusters": (2,)}}]),
             st.one_of(JUNK, st.sampled_from([{"n_clusters": 2}, {1: [2], "n_clusters": [2]}, {"nope": [1]},
                                              {"n_clusters": set([2])}, {"halves": {"n_clusters": []}}]))),
    "out": (st.sampled_from([None, "csv"]),
            st.one_of(st.integers(), st.floats(), TEXT, st.binary(max_size=4),
                      st.sampled_from(["t.txt", "missing/t.csv", "sub", "a\x00.csv", "tiny.toml"]))),
    "random_state": (st.sampled_from([0, 7, None]), random_states()),
    "blas_threads": (st.sampled_from([1, None, 2]), counts(-2, MAX_BLAS_THREADS + 2)),
    "progress": (st.just(False), flags()),
}


@st.composite
def one_bad_argument(draw, specs):
    """``(name, kwargs)``: every argument from its good strategy but at most one, ``name``
    (None: all good), from its bad strategy (which may also yield good values)."""
    bad = draw(st.sampled_from([None, *specs]))
    return bad, {name: draw(specs[name][1] if name == bad else specs[name][0]) for name in specs}


@FUZZ
@given(one_bad_argument(SWEEP_ARGUMENTS))
@example(("datasets", {"estimators": {"halves": Halves()}, "datasets": None, "grid": None, "out": None,
                       "random_state": 0, "blas_threads": 1, "progress": False}))  # was "'NoneType' ... iterable"
@example(("out", {"estimators": {"halves": Halves()}, "datasets": ["iris"], "grid": None, "out": 3,
                  "random_state": 0, "blas_threads": 1, "progress": False}))  # was Path's TypeError
def test_sweep_arguments(case):
    bad, kwargs = case
    if kwargs["out"] == "csv":
        kwargs["out"] = f"t-{uuid.uuid4().hex}.csv"
    result = call(sweeps.sweep, names=[bad] if bad else list(SWEEP_ARGUMENTS), **kwargs)
    if bad is None:
        assert not refused(result), result.error
    if not refused(result):
        assert set(sweeps.COLUMNS) <= set(result.columns) and len(result) >= 1
        assert (result["error"] == "").all(), list(result["error"])


def _count_arguments(*args):
    return len(args)


TASKS = st.lists(st.tuples(st.integers()), max_size=4)
RUN_TASKS_ARGUMENTS = {
    "function": (st.just(_count_arguments), st.one_of(JUNK, st.none(), st.just(len))),
    "tasks": (st.one_of(TASKS, TASKS.map(tuple), TASKS.map(lambda t: [list(x) for x in t])),
              st.one_of(JUNK, st.none(), st.binary(max_size=3), st.just(range(3)), st.just([(1,), 2]))),
    "blas_threads": (st.sampled_from([1, None, 2]), counts(-2, MAX_BLAS_THREADS + 2)),
}


@FUZZ
@given(one_bad_argument(RUN_TASKS_ARGUMENTS))
@example(("tasks", {"function": _count_arguments, "tasks": [1, 2], "blas_threads": 1}))  # was "'int' ... iterable"
def test_run_tasks_arguments(case):
    bad, kwargs = case
    if kwargs["function"] is len:  # a callable that fails on the tasks: its own error, raised when drawn
        assume(all(isinstance(t, (tuple, list)) and len(t) == 1 and hasattr(t[0], "__len__")
                   for t in kwargs["tasks"]) if isinstance(kwargs["tasks"], (list, tuple)) else True)
    function, tasks, blas_threads = kwargs["function"], kwargs["tasks"], kwargs["blas_threads"]
    result = call(lambda: list(run_tasks(function, tasks, blas_threads=blas_threads)),
                  names=[bad] if bad else list(RUN_TASKS_ARGUMENTS))
    if bad is None:
        assert result == [len(t) for t in tasks]
    elif not refused(result) and function is _count_arguments:
        assert result == [len(t) for t in tasks]


DEFAULT_POSES = {"n_objects": 4, "n_poses": 24, "n_pose_clusters": 3, "size": 32}


def _valid_poses(n_objects, n_poses, n_pose_clusters, size) -> bool:
    return (all(is_int(v) for v in (n_objects, n_poses, n_pose_clusters, size)) and 1 <= n_objects <= 4
            and 1 <= n_pose_clusters <= n_poses and n_poses % n_pose_clusters == 0 and 8 <= size <= 512
            and n_objects * n_poses * size * size <= 2**28)


@FEW
@given(st.sampled_from(sorted(DEFAULT_POSES)), counts(-1, 60))
@example("n_pose_clusters", 30)  # was "n_poses must be >= 30, got 24"
@example("n_pose_clusters", 10**30)
def test_objects_by_pose_names_the_argument_passed(name, value):
    """One keyword passed, the others at their defaults: a refusal names that keyword."""
    assume(not _valid_poses(**{**DEFAULT_POSES, name: value}))  # a valid call renders images (slow)
    result = call(objects_by_pose, names=[name], **{name: value})
    assert refused(result)
