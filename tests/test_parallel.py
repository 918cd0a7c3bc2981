"""Fan-out: validation and sweeps give the same results serially, on local workers and on a real
Dask cluster; a failing cell is reported in its row; an interrupted sweep resumes."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import joblib
import numpy as np
import pandas as pd
import pytest
from sklearn.base import BaseEstimator, ClusterMixin

from cvxclust import sweep
from cvxclust.cli import main
from cvxclust.cluhsic import CLUHSIC
from cvxclust.parallel import parallel_backend, run_tasks
from cvxclust.ssc import SemidefiniteSpectralClustering
from cvxclust.sweeps import COLUMNS, read_spec

PROBLEMS = Path(__file__).resolve().parents[1] / "problems"
TIMING = {"time", "speedup", "seconds"}


def _untimed(obj):
    """``obj`` without the wall-clock figures, which differ from run to run."""
    if isinstance(obj, dict):
        return {k: _untimed(v) for k, v in obj.items() if k not in TIMING}
    if isinstance(obj, list):
        return [_untimed(v) for v in obj]
    return obj


def _blas_threads(x):
    from threadpoolctl import threadpool_info
    return x, max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"), default=None)


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        yield cluster


# --------------------------------------------------------------------------- run_tasks


def test_tasks_come_back_in_order_with_one_blas_thread():
    tasks = [(i,) for i in range(7)]
    serial = list(run_tasks(_blas_threads, tasks))
    with joblib.parallel_config(n_jobs=2):
        fanned = list(run_tasks(_blas_threads, tasks))
    assert [x for x, _ in serial] == [x for x, _ in fanned] == list(range(7))
    assert {t for _, t in serial + fanned} <= {1, None}


def _product_threads(x):
    from cvxclust.generic.sparse_product import product_threads
    return x, product_threads()


@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_tasks_hold_the_product_threads_to_their_blas_threads(monkeypatch, backend):
    """The low-rank method's product threads follow ``blas_threads`` in each task, and only there
    (a context variable, so tasks in threads side by side each hold their own)."""
    from cvxclust.generic import sparse_product

    monkeypatch.setattr(sparse_product, "PRODUCT_THREADS", 3)
    with joblib.parallel_config(backend=backend, n_jobs=2):
        assert list(run_tasks(_product_threads, [(0,), (1,)], blas_threads=1)) == [(0, 1), (1, 1)]
        assert list(run_tasks(_product_threads, [(0,)], blas_threads=None)) == [(0, 3)]
    assert sparse_product.product_threads() == 3


@pytest.mark.parametrize(("kwargs", "match"), [({"jobs": 0}, "jobs"), ({"jobs": True}, "jobs"),
                                               ({"jobs": 2, "scheduler": "tcp://x:1"}, "not both")])
def test_backend_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        with parallel_backend(**kwargs):
            pass


def _double(x):
    return 2 * x


@pytest.mark.parametrize(("function", "tasks", "kwargs", "error", "match"), [
    (_double, 3, {}, TypeError, r"^tasks must be an iterable of argument tuples"),  # was "'int' ... not iterable"
    (_double, "ab", {}, TypeError, r"^tasks must be an iterable"),
    (_double, [(1,), 2], {}, TypeError, r"^tasks\[1\] must be a tuple \(or list\) of the arguments"),
    (_double, [None], {}, TypeError, r"^tasks\[0\] must be a tuple"),
    (3, [(1,)], {}, TypeError, r"'function' parameter of run_tasks must be a callable"),
    (_double, [(1,)], {"blas_threads": 0}, ValueError, "'blas_threads' parameter of run_tasks"),
    (_double, [(1,)], {"blas_threads": 10**30}, ValueError, "'blas_threads' parameter of run_tasks"),  # was ctypes'
    (_double, [(1,)], {"blas_threads": "2"}, TypeError, "'blas_threads' parameter of run_tasks"),
])
def test_run_tasks_bad_input_is_refused_at_the_call(function, tasks, kwargs, error, match):
    with pytest.raises(error, match=match):
        run_tasks(function, tasks, **kwargs)  # raised by the call, not when the results are drawn


def test_run_tasks_takes_lists_and_generators_of_tasks():
    assert list(run_tasks(_double, [[1], (2,)])) == [2, 4]
    assert list(run_tasks(_double, ((i,) for i in range(3)))) == [0, 2, 4]


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"scheduler": ""}, ValueError, "^scheduler must be the address of a Dask scheduler"),
    ({"scheduler": "  "}, ValueError, "^scheduler must be the address"),
    ({"scheduler": 8786}, TypeError, "^scheduler must be the address of a Dask scheduler .a str"),
    ({"jobs": 10**9}, ValueError, "^jobs must be -1 .one worker per core. or an int from 1 to"),
    ({"jobs": 2.0}, ValueError, "^jobs must be"),
    ({"connect_timeout": 0}, ValueError, "'connect_timeout' parameter of parallel_backend"),
])
def test_backend_bad_arguments_name_them(kwargs, error, match):
    with pytest.raises(error, match=match):
        with parallel_backend(**kwargs):
            pass


@pytest.mark.parametrize("address", ["garbage", "tcp://", "foo://host:1"])
def test_backend_scheduler_that_is_no_address(address):
    pytest.importorskip("dask.distributed")
    with pytest.raises(ValueError, match=f"^scheduler '{re.escape(address)}' is not the address of a Dask scheduler"):
        with parallel_backend(scheduler=address):
            pass


# --------------------------------------------------------------------------- validation


def test_validate_jobs_gives_the_serial_reports(tmp_path):
    files = [str(PROBLEMS / "fsc_iris.toml"), str(PROBLEMS / "bregman_cjc_iris_euclidean.toml")]
    assert main(["validate", *files, "--out", str(tmp_path / "serial"), "-q"]) == 0
    assert main(["validate", *files, "--out", str(tmp_path / "jobs"), "-q", "--jobs", "2"]) == 0
    serial = json.loads((tmp_path / "serial" / "report.json").read_text())
    fanned = json.loads((tmp_path / "jobs" / "report.json").read_text())
    assert _untimed(serial) == _untimed(fanned)


def test_validate_on_a_dask_scheduler(tmp_path, dask_cluster):
    files = [str(PROBLEMS / "fsc_iris.toml"), str(PROBLEMS / "ssc_psd_iris.toml")]
    assert main(["validate", *files, "--out", str(tmp_path / "serial"), "-q"]) == 0
    assert main(["validate", *files, "--out", str(tmp_path / "dask"), "-q",
                 "--scheduler", dask_cluster.scheduler_address]) == 0
    serial = json.loads((tmp_path / "serial" / "report.json").read_text())
    on_dask = json.loads((tmp_path / "dask" / "report.json").read_text())
    assert _untimed(serial) == _untimed(on_dask)


def test_the_whole_catalogue_passes():
    assert main(["validate", str(PROBLEMS), "-q", "--jobs", "2"]) == 0


@pytest.mark.parametrize(("argv", "message"), [(["--jobs", "0"], "--jobs"),
                                                (["--jobs", "2", "--scheduler", "tcp://x:1"], "not both")])
def test_validate_fanout_usage_errors(argv, message, capsys):
    assert main(["validate", str(PROBLEMS / "fsc_iris.toml"), *argv]) == 2
    assert message in capsys.readouterr().err


# --------------------------------------------------------------------------- sweeps

FITS = []


class Flaky(ClusterMixin, BaseEstimator):
    """Two clusters by the sign of the first feature; raises when ``fail``."""

    def __init__(self, n_clusters=2, fail=False, random_state=None):
        self.n_clusters, self.fail, self.random_state = n_clusters, fail, random_state

    def fit(self, X, y=None):
        FITS.append(self.fail)
        if self.fail:
            raise FloatingPointError("no luck")
        self.labels_ = (np.asarray(X)[:, 0] > np.median(X[:, 0])).astype(int)
        return self


def _two_blobs(seed=0):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], 15)
    return rng.normal(size=(30, 2)) + 4.0 * y[:, None], y


def test_a_failing_cell_is_reported_and_the_sweep_resumes(tmp_path):
    out = tmp_path / "table.csv"
    FITS.clear()
    table = sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, {"fail": [False, True]}, out=out, progress=False)
    assert list(table["error"]) == ["", "FloatingPointError: no luck"]
    assert table.loc[0, "accuracy"] == 1.0 and table.loc[0, "n_clusters"] == 2
    assert FITS == [False, True]
    # resumed: the finished cell is not fitted again, the failed one is
    FITS.clear()
    again = sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, {"fail": [False, True]}, out=out, progress=False)
    assert FITS == [True]
    assert list(again["error"]) == list(table["error"]) and again.loc[0, "accuracy"] == 1.0


class Interrupted(Flaky):
    """Stops the whole sweep (as a user's Ctrl-C does) when ``fail``."""

    def fit(self, X, y=None):
        if self.fail:
            raise KeyboardInterrupt
        return super().fit(X, y)


def test_an_interrupted_sweep_keeps_its_checkpoint_and_resumes(tmp_path, monkeypatch):
    sweep_module = importlib.import_module("cvxclust.sweeps")
    monkeypatch.setattr(sweep_module, "_CHECKPOINT_SECONDS", 0.0)
    out = tmp_path / "table.csv"
    grid = {"n_clusters": [2, 3], "fail": [False, True]}  # cells (False, 2), (False, 3), then an interruption
    with pytest.raises(KeyboardInterrupt):
        sweep({"x": Interrupted()}, {"blobs": _two_blobs()}, grid, out=out, progress=False)
    assert sorted(pd.read_csv(out)["n_clusters"]) == [2, 3]  # the cells finished before the interruption
    FITS.clear()
    table = sweep({"x": Interrupted()}, {"blobs": _two_blobs()}, {"n_clusters": [2, 3, 4], "fail": [False]},
                  out=out, progress=False)
    assert FITS == [False] and len(table) == 3  # only the cell not in the checkpoint is fitted


def test_the_table_is_not_rewritten_after_every_cell(tmp_path, monkeypatch):
    sweep_module = importlib.import_module("cvxclust.sweeps")
    monkeypatch.setattr(sweep_module, "_CHECKPOINT_SECONDS", 1e9)
    writes = []
    write = sweep_module._write
    monkeypatch.setattr(sweep_module, "_write", lambda table, out: (writes.append(len(table)), write(table, out)))
    table = sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, {"n_clusters": [2, 3, 4]}, out=tmp_path / "t.csv",
                  progress=False)
    assert writes == [3] and len(pd.read_csv(tmp_path / "t.csv")) == len(table) == 3


def test_sweep_is_the_same_on_every_backend(tmp_path, dask_cluster):
    estimators = {"ssc": SemidefiniteSpectralClustering(), "cluhsic": CLUHSIC(method="greedy")}
    data = {"blobs": _two_blobs(1)}
    grid = {"ssc": {"gamma": [0.5, 2.0]}, "cluhsic": {"refine": [True, False]}}
    columns = ["estimator", "dataset", "params", "status", "objective", "accuracy", "nmi", "ari", "error"]
    serial = sweep(estimators, data, grid, progress=False)[columns]
    with joblib.parallel_config(n_jobs=2):
        local = sweep(estimators, data, grid, progress=False)[columns]
    with dask_cluster.get_client() if hasattr(dask_cluster, "get_client") else _client(dask_cluster):
        with joblib.parallel_config(backend="dask"):
            on_dask = sweep(estimators, data, grid, progress=False)[columns]
    assert serial.equals(local) and serial.equals(on_dask)
    assert len(serial) == 4 and (serial["error"] == "").all()


def _client(cluster):
    from dask.distributed import Client
    return Client(cluster)


def test_sweep_parquet_table_resumes(tmp_path):
    pytest.importorskip("pyarrow")
    out = tmp_path / "t.parquet"
    FITS.clear()
    table = sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=out, progress=False)
    again = sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=out, progress=False)
    assert FITS == [False] and len(table) == 1
    assert again.loc[0, "accuracy"] == table.loc[0, "accuracy"] == 1.0


@pytest.mark.parametrize(("args", "kwargs", "error", "match"), [
    (({}, ["iris"]), {}, TypeError, "estimators"),
    (({"x": object()}, ["iris"]), {}, TypeError, "estimators"),
    (({"flaky": Flaky()}, "iris"), {}, TypeError, "datasets"),
    (({"flaky": Flaky()}, {"d": np.ones(3)}), {}, TypeError, "datasets"),
    (({"flaky": Flaky()}, ["iris"]), {"grid": {"gamma": [1.0]}}, ValueError, "not parameters"),
    (({"flaky": Flaky()}, ["iris"]), {"out": "t.txt"}, ValueError, "out"),
    (({"flaky": Flaky()}, ["iris"]), {"random_state": np.random.RandomState(0)}, TypeError, "random_state"),
    (({"flaky": Flaky()}, ["iris"]), {"blas_threads": 0}, ValueError, "blas_threads"),
    (({"flaky": Flaky()}, None), {}, TypeError, r"^datasets must be a list of data set names or a mapping"),
    (({"flaky": Flaky()}, 3), {}, TypeError, r"^datasets must be a list"),
    (({"flaky": Flaky()}, []), {}, ValueError, r"^datasets must name at least one data set"),
    (({"flaky": Flaky()}, {}), {}, ValueError, r"^datasets must hold at least one data set"),
    (({"flaky": Flaky()}, [3]), {}, TypeError, r"^datasets\[0\] must be the name of a data set"),
    (({"flaky": Flaky()}, ["iris", "nope"]), {}, ValueError, r"^datasets\[1\]: .*'nope'"),
    (({"flaky": Flaky()}, {"d": (["a", "b"], [0, 1])}), {}, ValueError, r"^datasets\['d'\]: X must be"),
    (({"flaky": Flaky()}, ["iris"]), {"out": 3}, TypeError, r"^out must be the path \(str or Path\)"),
    (({"flaky": Flaky()}, ["iris"]), {"grid": {1: [2], "x": [2]}}, ValueError,
     r"^grid parameters \['x', 1\] are not parameters"),  # was "'<' not supported between ..."
    (({"flaky": Flaky()}, ["iris"]), {"blas_threads": 10**30}, ValueError, "blas_threads"),
])
def test_sweep_bad_input(args, kwargs, error, match):
    with pytest.raises(error, match=match):
        sweep(*args, **kwargs)


@pytest.mark.parametrize(("grid", "match"), [
    ({"n_clusters": 2}, r"grid\['n_clusters'\] must be a non-empty list"),  # was "'int' object is not iterable"
    ({"n_clusters": "23"}, r"grid\['n_clusters'\] must be a non-empty list"),
    ({"n_clusters": []}, r"grid\['n_clusters'\] must be a non-empty list"),
    ({"n_clusters": {2, 3}}, r"grid\['n_clusters'\] must be a non-empty list"),
    ({"flaky": {"n_clusters": 2.0}}, r"grid\['flaky'\]\['n_clusters'\] must be a non-empty list"),
])
def test_sweep_grid_values_must_be_lists(grid, match):
    FITS.clear()
    with pytest.raises(ValueError, match=match):
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, grid, progress=False)
    assert FITS == []


def test_sweep_grid_values_as_tuples_ranges_and_arrays():
    tables = [sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, {"n_clusters": values}, progress=False)
              for values in ([2, 3], (2, 3), range(2, 4), np.array([2, 3]))]
    for table in tables[1:]:  # numpy ints are numbers in the JSON of the parameters, not "np.int64(2)"
        assert table[["params", "n_clusters", "accuracy"]].equals(tables[0][["params", "n_clusters", "accuracy"]])


@pytest.mark.parametrize("progress", [1, 0, "yes", None])
def test_sweep_progress_must_be_a_bool(progress):
    with pytest.raises(ValueError, match="'progress' parameter of sweep must be a bool"):
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, progress=progress)


@pytest.mark.parametrize(("content", "missing"), [
    ("a,b\n1,2\n", r"it lacks the columns \['estimator', .*'error'\]"),  # was KeyError: 'error'
    ("", ""),
    (",".join(c for c in COLUMNS if c != "ari") + "\n", r"it lacks the columns \['ari'\]"),
])
def test_sweep_out_that_is_not_a_sweep_table(tmp_path, content, missing):
    out = tmp_path / "b.csv"
    out.write_text(content)
    FITS.clear()
    with pytest.raises(ValueError, match=r"^out '.*b\.csv' exists but is not a sweep table: " + missing):
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=out, progress=False)
    assert FITS == [] and out.read_text() == content  # refused before any fit, the file untouched


def test_sweep_parquet_without_an_engine_is_refused_before_any_fit(tmp_path, monkeypatch):
    for engine in ("pyarrow", "fastparquet"):
        monkeypatch.setitem(sys.modules, engine, None)  # import fails as when not installed
    FITS.clear()
    with pytest.raises(ValueError, match=r"^out '.*t\.parquet': a \.parquet table needs pyarrow"):  # was after the fits
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=tmp_path / "t.parquet", progress=False)
    assert FITS == [] and not (tmp_path / "t.parquet").exists()


def test_sweep_out_that_cannot_be_written_is_refused_before_any_fit(tmp_path, monkeypatch):
    sweep_module = importlib.import_module("cvxclust.sweeps")
    monkeypatch.setattr(sweep_module.os, "access", lambda path, mode: False)  # a read-only folder (root writes all)
    FITS.clear()
    with pytest.raises(ValueError, match=r"^out must be a file this process may write.*is read-only"):
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=tmp_path / "t.csv", progress=False)
    assert FITS == []  # was: every cell fitted, then a PermissionError


def test_sweep_out_in_a_missing_directory_is_refused_before_any_fit(tmp_path):
    FITS.clear()
    with pytest.raises(ValueError, match="out must be a file in an existing directory"):  # was pandas' OSError
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=tmp_path / "nope" / "t.csv", progress=False)
    (tmp_path / "d.csv").mkdir()
    with pytest.raises(ValueError, match="out must be a file"):
        sweep({"flaky": Flaky()}, {"blobs": _two_blobs()}, out=tmp_path / "d.csv", progress=False)
    assert FITS == []


SPEC = """
[datasets]
iris = { n_samples = 45 }

[estimators.ssc]
class = "ssc.SemidefiniteSpectralClustering"
grid = { gamma = [0.5, 1.0] }

[estimators.greedy]
class = "cluhsic.CLUHSIC"
params = { method = "greedy" }
"""


def test_sweep_command(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    out = tmp_path / "table.csv"
    assert main(["sweep", str(spec), "--out", str(out), "-q"]) == 0
    assert "3 cells, 0 failed" in capsys.readouterr().out
    import pandas as pd
    table = pd.read_csv(out)
    assert list(table["estimator"]) == ["ssc", "ssc", "greedy"] and list(table["n_samples"]) == [45] * 3
    assert main(["sweep", str(spec), "--out", str(tmp_path / "t.txt")]) == 2
    assert main(["sweep", str(spec), "--out", str(out), "--jobs", "0"]) == 2


@pytest.mark.parametrize(("text", "match"), [
    ("[datasets]\niris = {}\n", "estimators"),
    ("[estimators.a]\nclass = 'ssc.SemidefiniteSpectralClustering'\n", "datasets"),
    (SPEC.replace("ssc.Semi", "nope.Semi"), "family"),
    (SPEC.replace("SemidefiniteSpectralClustering", "Nothing"), "no estimator"),
    (SPEC.replace("[0.5, 1.0]", "0.5"), "list"),
    ("surprise = 1\n" + SPEC, "unknown"),
    (SPEC.replace("n_samples = 45", "n_samples = 1"), "datasets.iris"),
    ("grid = 3\n" + SPEC, r"spec\.toml: grid must be a table"),  # was TypeError: 'int' object is not a mapping
    (SPEC.replace("grid = { gamma = [0.5, 1.0] }", "grid = [1]"), r"spec\.toml: estimators\.ssc\.grid must be a table"),
    (SPEC.replace("gamma = [", "nope = ["), r"estimators\.ssc\.grid\.nope: 'nope' is not a parameter"),
    ("[grid]\nnope = [1]\n" + SPEC, r"spec\.toml: grid\.nope: 'nope' is not a parameter"),
    (SPEC.replace('{ method = "greedy" }', "[1]"), r"estimators\.greedy\.params must be a table"),
    (SPEC.replace('"cluhsic.CLUHSIC"', "1"), r"estimators\.greedy\.class must be"),
    (SPEC.replace('"cluhsic.CLUHSIC"', '"cluhsic.__class__"'), "no estimator"),
    # was accepted, then every cell of the estimator failed
    (SPEC.replace('method = "greedy"', 'method = "greedy", relaxation = "nope"'),
     r"estimators\.greedy\.params\.relaxation: The 'relaxation' parameter of CLUHSIC must be one of"),
    (SPEC.replace("[0.5, 1.0]", '[0.5, "x"]'), r"estimators\.ssc\.grid\.gamma\[1\]: The 'gamma' parameter"),
])
def test_spec_errors_name_the_key(tmp_path, text, match):
    spec = tmp_path / "spec.toml"
    spec.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_spec(spec)


def test_spec_that_is_not_utf8_or_not_a_path(tmp_path):
    spec = tmp_path / "latin.toml"
    spec.write_bytes(SPEC.replace("ssc", "\u00e9").encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin\.toml: not a UTF-8 text file"):  # was UnicodeDecodeError
        read_spec(spec)
    with pytest.raises(TypeError, match="^path must be the path"):
        read_spec(3)


# --------------------------------------------------------------------------- the module's names

def test_sweeps_module_and_sweep_function_in_every_import_form():
    import cvxclust
    import cvxclust.sweeps
    import cvxclust.sweeps as module
    from cvxclust import sweeps

    assert module is sweeps is cvxclust.sweeps is importlib.import_module("cvxclust.sweeps")
    assert module.read_spec is read_spec and module.COLUMNS is COLUMNS
    assert cvxclust.sweep is sweep is sweeps.sweep and callable(sweep)  # the function keeps its name
    assert {"sweep", "sweeps", "datasets", "parallel"} <= set(cvxclust.__all__)
    namespace = {}
    exec("from cvxclust import *", namespace)
    assert namespace["sweeps"] is sweeps and namespace["sweep"] is sweep


def test_the_former_module_name_warns_and_leaves_the_function_in_place():
    """In a fresh interpreter: importing from the former module works with a FutureWarning and
    does not rebind ``cvxclust.sweep`` to a module."""
    code = """if True:
        import warnings, cvxclust, cvxclust.sweeps
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            from cvxclust.sweep import read_spec
        assert read_spec is cvxclust.sweeps.read_spec
        assert [w.category for w in caught] == [FutureWarning], caught
        assert "cvxclust.sweeps" in str(caught[0].message)
        import cvxclust.sweep
        assert cvxclust.sweep is cvxclust.sweeps.sweep, cvxclust.sweep
        """
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
