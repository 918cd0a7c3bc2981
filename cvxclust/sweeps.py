"""Sweeps: estimators x data sets x parameter grids, fanned out, into one tidy table.

The common research loop (which relaxation, on which data, with which kernel width or method)
as one call::

    from cvxclust import sweep
    from cvxclust.ssc import SemidefiniteSpectralClustering

    table = sweep({"ssc": SemidefiniteSpectralClustering()}, ["iris", "wine"],
                  {"gamma": [0.1, 0.5, 1.0], "relaxation": ["frobenius", "frobenius-psd"]},
                  out="sweep.csv")

Every cell (an estimator, a data set, one point of the grid) is a fit, scored against the data
set's labels.  The cells run through :func:`cvxclust.parallel.run_tasks`: in this process, on
``n`` local workers under ``joblib.parallel_config(n_jobs=n)``, or on a Dask cluster under
``joblib.parallel_config(backend="dask")``, with the same rows whatever the backend (every
estimator gets the same ``random_state``).  With ``out``, the table is written after every cell
and a later call with the same ``out`` only computes the cells it lacks (and those that
failed): an interrupted sweep resumes.  A cell that raises is reported in its row (``error``)
and does not stop the others.

The module is ``cvxclust.sweeps`` and the package's name ``cvxclust.sweep`` is its function
:func:`sweep`: ``cvxclust.sweep(...)`` and ``from cvxclust import sweep`` call the function,
``import cvxclust.sweeps`` and ``from cvxclust.sweeps import read_spec, COLUMNS`` reach the
module.  The module was once named ``cvxclust.sweep``, which the function hid (``import
cvxclust.sweep as m`` gave the function); ``from cvxclust.sweep import read_spec`` keeps working
for one release, with a ``FutureWarning``.
"""

from __future__ import annotations

import importlib
import json
import os
import time
import tomllib
from collections.abc import Iterable, Mapping
from numbers import Integral
from pathlib import Path

import numpy as np
from sklearn.base import clone
from sklearn.metrics import adjusted_rand_score
from sklearn.model_selection import ParameterGrid

from .datasets import load_dataset
from .metrics import accuracy, nmi
from .parallel import check_blas_threads, run_tasks
from .parameters import check_parameter

__all__ = ["sweep", "read_spec", "COLUMNS"]

#: The columns of a sweep's table besides one column per grid parameter.
COLUMNS = ("estimator", "dataset", "params", "n_samples", "n_clusters", "status", "objective", "relative_gap",
           "max_residual", "iterations", "time", "accuracy", "nmi", "ari", "error")

_KEY = ("estimator", "dataset", "params")
_CHECKPOINT_SECONDS = 5.0  # least time between two writes of the table during a sweep


def _params_key(params: Mapping) -> str:
    return json.dumps({k: params[k] for k in sorted(params)}, sort_keys=True, default=repr)


def _fit_cell(name: str, estimator, dataset: str, X, y, params: dict) -> dict:
    """Fit one cell; a failure becomes the row's ``error``."""
    row = {"estimator": name, "dataset": dataset, "params": _params_key(params), "n_samples": int(X.shape[0]),
           "n_clusters": params.get("n_clusters"), "error": ""}
    start = time.perf_counter()
    try:
        model = clone(estimator).set_params(**params)
        model.fit(X)
        labels = np.asarray(model.labels_)
    except Exception as exc:  # one cell's failure is reported in its row, not raised
        row.update(time=time.perf_counter() - start, error=f"{type(exc).__name__}: {exc}")
        return row
    row["time"] = time.perf_counter() - start
    result = getattr(model, "result_", None)
    row["status"] = None if result is None else result.status
    row["objective"] = getattr(model, "objective_", None if result is None else result.objective)
    row["relative_gap"] = None if result is None else result.relative_gap
    row["max_residual"] = None if result is None else result.max_residual
    row["iterations"] = getattr(model, "n_iter_", None)
    row.update(accuracy=accuracy(y, labels), nmi=nmi(y, labels), ari=adjusted_rand_score(y, labels))
    return row


def _datasets(datasets) -> dict:
    if isinstance(datasets, Mapping):
        if not datasets:
            raise ValueError("datasets must hold at least one data set, got an empty mapping")
        out = {}
        for name, data in datasets.items():
            if not (isinstance(data, tuple) and len(data) == 2):
                raise TypeError(f"datasets[{name!r}] must be a tuple (X, y), got {type(data).__name__}")
            try:
                X, y = np.asarray(data[0], dtype=float), np.asarray(data[1])
            except (TypeError, ValueError) as exc:
                raise ValueError(f"datasets[{name!r}]: X must be a 2-D array of numbers ({exc})") from None
            if X.ndim != 2 or y.shape != (X.shape[0],):
                raise ValueError(f"datasets[{name!r}]: X must be 2-D and y hold one label per row of X, got "
                                 f"shapes {X.shape} and {y.shape}")
            out[str(name)] = (X, y)
        return out
    if isinstance(datasets, (str, bytes)) or not isinstance(datasets, Iterable):
        raise TypeError(f"datasets must be a list of data set names or a mapping name -> (X, y), "
                        f"got {type(datasets).__name__} {datasets!r:.80}")
    datasets = list(datasets)
    if not datasets:
        raise ValueError("datasets must name at least one data set, got an empty list")
    out = {}
    for i, name in enumerate(datasets):
        if not isinstance(name, str):
            raise TypeError(f"datasets[{i}] must be the name of a data set (a str), got {type(name).__name__}")
        try:
            out[name] = load_dataset(name)
        except ValueError as exc:
            raise ValueError(f"datasets[{i}]: {exc}") from None
    return out


def _grid_values(values, where: str) -> list:
    """The values of one grid parameter as a list: a non-empty list, tuple, range or 1-D array
    (a single value, a string or a set, whose order is arbitrary, is not one).  numpy scalars
    become Python ones, which the JSON of a cell's parameters holds as numbers."""
    if isinstance(values, (list, tuple, range)) or (isinstance(values, np.ndarray) and values.ndim == 1):
        if len(values):
            return [v.item() if isinstance(v, np.generic) else v for v in values]
    raise ValueError(f"{where} must be a non-empty list of values, got {values!r} "
                     f"(a single value goes in a list of one)")


def _grids(grid, estimators: dict) -> dict:
    """The grid of each estimator: ``grid`` for all, or ``grid[name]`` per estimator."""
    if grid is None:
        return {name: {} for name in estimators}
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid must be a mapping, got {type(grid).__name__}")
    if set(grid) and set(grid) <= set(estimators) and all(isinstance(g, Mapping) for g in grid.values()):
        return {name: {key: _grid_values(values, f"grid[{name!r}][{key!r}]")
                       for key, values in grid.get(name, {}).items()} for name in estimators}
    common = {key: _grid_values(values, f"grid[{key!r}]") for key, values in grid.items()}
    return {name: dict(common) for name in estimators}


def _cells(estimators: dict, data: dict, grids: dict, random_state) -> list[tuple]:
    cells = []
    for name, estimator in estimators.items():
        accepted = estimator.get_params(deep=False)
        unknown = sorted(set(grids[name]) - set(accepted), key=repr)
        if unknown:
            raise ValueError(f"grid parameters {unknown} are not parameters of estimator {name!r} "
                             f"({type(estimator).__name__}); it has {sorted(accepted)}")
        for dataset, (X, y) in data.items():
            for point in ParameterGrid(grids[name]):
                params = dict(point)
                if "n_clusters" in accepted and "n_clusters" not in params:
                    params["n_clusters"] = int(np.unique(y).size)  # the data set's number of classes
                if "random_state" in accepted and "random_state" not in params:
                    params["random_state"] = random_state
                cells.append((name, estimator, dataset, X, y, params))
    return cells


def _check_out(out) -> Path:
    """``out`` as a path to a ``.csv`` or ``.parquet`` file that can be written: its directory
    exists and may be written, it is not itself a directory, and for Parquet a Parquet engine is
    installed."""
    if not isinstance(out, (str, os.PathLike)) or not isinstance(os.fspath(out), str):
        raise TypeError(f"out must be the path (str or Path) of a .csv or .parquet file, got "
                        f"{type(out).__name__} {out!r:.80}")
    if "\x00" in os.fspath(out):
        raise ValueError(f"out must be a path without NUL characters, got {out!r:.80}")
    out = Path(out)
    if out.suffix not in (".csv", ".parquet"):
        raise ValueError(f"out must be a .csv or .parquet file, got {str(out)!r}")
    if out.suffix == ".parquet":
        try:
            import pyarrow  # noqa: F401  (pandas' Parquet engine; fastparquet is the other)
        except ImportError:
            try:
                import fastparquet  # noqa: F401
            except ImportError:
                raise ValueError(f"out {str(out)!r}: a .parquet table needs pyarrow (pip install pyarrow); "
                                 f"or give a .csv file") from None
    if not out.parent.is_dir():
        raise ValueError(f"out must be a file in an existing directory, got {str(out)!r} "
                         f"({str(out.parent)!r} is not a directory)")
    if out.exists() and not out.is_file():
        raise ValueError(f"out must be a file, got {str(out)!r}, which is not one")
    if not os.access(out if out.exists() else out.parent, os.W_OK):
        raise ValueError(f"out must be a file this process may write, got {str(out)!r} "
                         f"({str(out if out.exists() else out.parent)!r} is read-only)")
    return out


def _read(out: Path):
    """The table of an earlier sweep at ``out`` (None if there is no file), with every column
    of :data:`COLUMNS`."""
    import pandas as pd
    if not out.is_file():
        return None
    try:
        table = pd.read_parquet(out) if out.suffix == ".parquet" else pd.read_csv(out, keep_default_na=False,
                                                                                    na_values=[""])
    except (OSError, ValueError) as exc:  # not a table, or not one pandas reads
        raise ValueError(f"out {str(out)!r} exists but is not a sweep table: {exc}") from None
    missing = [c for c in COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"out {str(out)!r} exists but is not a sweep table: it lacks the columns {missing}; "
                         f"give another file, or remove this one to start afresh")
    return table


def _write(table, out: Path) -> None:
    tmp = out.with_name(out.name + ".part")
    if out.suffix == ".parquet":
        table.to_parquet(tmp, index=False)
    else:
        table.to_csv(tmp, index=False)
    tmp.replace(out)  # a sweep killed while writing leaves the previous table whole


def sweep(estimators, datasets, grid=None, *, out=None, random_state=0, blas_threads: int | None = 1,
          progress: bool = True):
    """Fit every estimator on every data set at every point of its parameter grid.

    Parameters
    ----------
    estimators : dict of str to estimator
        Unfitted scikit-learn-compatible clusterers (``fit(X)``, ``labels_``; the cvxclust
        estimators also give ``objective_``, ``n_iter_`` and ``result_``), by name.
    datasets : list of str, or dict of str to (X, y)
        Names of :func:`cvxclust.datasets.load_dataset`, or arrays with their labels.
    grid : dict, optional
        Parameter name to a list of values, for every estimator (a scikit-learn
        ``ParameterGrid``); or estimator name to such a dict.  An estimator with an
        ``n_clusters`` parameter that the grid leaves out gets the data set's number of classes;
        one with ``random_state`` gets ``random_state``.
    out : str or Path, optional
        ``.csv`` or ``.parquet`` file of the table, written as cells finish (every few
        seconds) and at the end; the cells already in it without an error are
        not computed again.
    random_state : int or None
        Seed given to every estimator (the same whatever the backend).
    blas_threads : int or None
        BLAS threads of each fit (None: the library's default).
    progress : bool
        A progress bar on stderr.

    Returns
    -------
    pandas.DataFrame
        One row per cell, in the order estimators x data sets x grid: :data:`COLUMNS` (``params``
        is the JSON of the cell's parameters; ``status``, ``relative_gap``, ``max_residual``
        from the estimator's ``result_``; ``accuracy`` under the best relabeling, ``nmi``,
        ``ari`` against the labels; ``time``, seconds of the fit; ``error`` empty unless the
        cell raised) and one column per grid parameter.

    Raises
    ------
    ValueError or TypeError
        Naming the argument: no estimator, ``datasets`` that is neither a list of names nor a
        mapping (or is empty), an unknown data set, grid parameters that an estimator does not
        take or whose values are not a non-empty list, an ``out`` that is not a str or Path or is
        neither CSV nor Parquet, lies in a directory that does not exist, or is an existing file
        that is not a sweep table (one lacking columns of :data:`COLUMNS`), a ``random_state``
        that is no int seed, ``blas_threads`` out of 1..
        :data:`cvxclust.parallel.MAX_BLAS_THREADS`, a ``progress`` that is not a bool.  All
        are raised before any cell is fitted.
    """
    import pandas as pd
    from tqdm.auto import tqdm

    if not isinstance(estimators, Mapping) or not estimators:
        raise TypeError("estimators must be a non-empty mapping name -> estimator")
    for name, estimator in estimators.items():
        if not (hasattr(estimator, "fit") and hasattr(estimator, "get_params")):
            raise TypeError(f"estimators[{name!r}] must be a scikit-learn estimator, got {type(estimator).__name__}")
    if random_state is not None and (isinstance(random_state, bool) or not isinstance(random_state, Integral)):
        raise TypeError(f"random_state must be an int seed or None (the same for every cell), got {random_state!r}")
    blas_threads = check_blas_threads(blas_threads, "sweep")
    progress = check_parameter("progress", progress, ["boolean"], "sweep")
    if out is not None:
        out = _check_out(out)
    estimators = {str(k): v for k, v in estimators.items()}
    data = _datasets(datasets)
    grids = _grids(grid, estimators)
    cells = _cells(estimators, data, grids, random_state)
    keys = [(c[0], c[2], _params_key(c[5])) for c in cells]

    done = {}
    previous = _read(out) if out is not None else None
    if previous is not None:
        for _, row in previous.iterrows():
            if not isinstance(row["error"], str) or not row["error"]:
                done[tuple(row[k] for k in _KEY)] = row.to_dict()
    todo = [i for i, key in enumerate(keys) if key not in done]
    rows = {i: done[key] for i, key in enumerate(keys) if key in done}
    parameters = sorted({p for g in grids.values() for p in g})

    def table():
        frame = pd.DataFrame([rows[i] for i in sorted(rows)], columns=list(COLUMNS))
        frame["error"] = [e if isinstance(e, str) else "" for e in frame["error"]]  # CSV reads "" as NaN
        for p in parameters:
            frame[p] = [json.loads(s).get(p) for s in frame["params"]]
        return frame

    bar = tqdm(total=len(cells), initial=len(cells) - len(todo), desc="sweep", unit="cell", disable=not progress)
    written = time.monotonic()
    for i, row in zip(todo, run_tasks(_fit_cell, [cells[i] for i in todo], blas_threads=blas_threads)):
        rows[i] = {c: row.get(c) for c in COLUMNS}
        bar.update()
        # rewriting the table after every cell would cost O(cells^2) on a large sweep; every few
        # seconds, a sweep that is killed loses at most the cells of the last few seconds
        if out is not None and time.monotonic() - written >= _CHECKPOINT_SECONDS:
            _write(table(), out)
            written = time.monotonic()
    bar.close()
    frame = table()
    if out is not None:
        _write(frame, out)
    return frame


_FAMILIES = ("ssc", "cluhsic", "cluhsical", "bregman")


def read_spec(path) -> tuple[dict, dict, dict]:
    """The estimators, data sets and grids of a sweep file (TOML), for :func:`sweep`::

        [datasets]                      # load_dataset names, with its options
        iris = {}
        digits = { n_samples = 300 }

        [estimators.ssc]                # a name of your choice
        class = "ssc.SemidefiniteSpectralClustering"   # cvxclust.<family>.<Class>
        params = { relaxation = "frobenius-psd" }   # fixed parameters (optional)
        grid = { gamma = [0.1, 0.5, 1.0] }             # this estimator's grid (optional)

        [grid]                          # a grid for every estimator (optional)
        random_state = [0, 1]

    Returns ``(estimators, datasets, grids)``: the estimators built with their ``params``, the
    data sets loaded, and each estimator's grid (the common one updated by its own).

    Raises
    ------
    ValueError
        For a file that cannot be read, is not UTF-8 or not TOML, or whose content is wrong (an
        unknown key, a value that is not a table where one is expected, an unknown data set or
        class, a grid parameter the estimator does not take, grid values that are not a
        non-empty list), naming the file and the key.
    TypeError
        For a ``path`` that is not a str or a Path.
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be the path (str or Path) of a sweep file, got {type(path).__name__} {path!r:.80}")
    path = Path(path)
    spec = _load_toml(path)
    unknown = set(spec) - {"datasets", "estimators", "grid"}
    if unknown:
        raise ValueError(f"{path}: unknown top-level keys {sorted(unknown)}; expected datasets, estimators, grid")
    if not isinstance(spec.get("datasets"), dict) or not spec["datasets"]:
        raise ValueError(f"{path}: [datasets] must name at least one data set")
    if not isinstance(spec.get("estimators"), dict) or not spec["estimators"]:
        raise ValueError(f"{path}: [estimators.<name>] must define at least one estimator")
    common = _table(spec.get("grid", {}), f"{path}: grid", "a table of parameter = [values]")
    datasets = {}
    for name, options in spec["datasets"].items():
        options = _table(options, f"{path}: datasets.{name}", "a table of load_dataset options")
        try:
            datasets[name] = load_dataset(name, **options)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{path}: datasets.{name}: {exc}") from None
    estimators, grids = {}, {}
    for name, table in spec["estimators"].items():
        where = f"{path}: estimators.{name}"
        if not isinstance(table, dict) or set(table) - {"class", "params", "grid"} or "class" not in table:
            raise ValueError(f"{where} must be a table with 'class' and optional 'params' and 'grid'")
        estimator = _build_estimator(table, where)
        own = _table(table.get("grid", {}), f"{where}.grid", "a table of parameter = [values]")
        accepted = estimator.get_params(deep=False)
        grid = {}
        for key, values in {**common, **own}.items():
            key_where = f"{where}.grid.{key}" if key in own else f"{path}: grid.{key}"
            if key not in accepted:
                raise ValueError(f"{key_where}: {key!r} is not a parameter of {type(estimator).__name__}; "
                                 f"it has {sorted(accepted)}")
            grid[key] = _grid_values(values, key_where)
            for i, value in enumerate(grid[key]):
                _check_value(estimator, key, value, f"{key_where}[{i}]")
        estimators[name], grids[name] = estimator, grid
    return estimators, datasets, grids


def _load_toml(path: Path) -> dict:
    """The TOML document at ``path``, or a ValueError naming the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        raise ValueError(f"{path}: cannot read the sweep file ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a UTF-8 text file (byte {exc.start}: {exc.reason}); "
                         f"a sweep file is TOML, which is UTF-8") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from None


def _table(value, where: str, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{where} must be {what}, got {value!r:.80}")
    return value


def _build_estimator(table: dict, where: str):
    """The estimator of the ``[estimators.<name>]`` table ``table``."""
    family, _, cls = str(table["class"]).partition(".")
    if not isinstance(table["class"], str) or family not in _FAMILIES or not cls:
        raise ValueError(f"{where}.class must be '<family>.<Class>' with a family of {list(_FAMILIES)}, "
                         f"got {table['class']!r}")
    estimator_class = getattr(importlib.import_module(f"cvxclust.{family}"), cls, None)
    if not (isinstance(estimator_class, type) and hasattr(estimator_class, "fit")
            and hasattr(estimator_class, "get_params")):
        raise ValueError(f"{where}.class: cvxclust.{family} has no estimator {cls!r}")
    params = _table(table.get("params", {}), f"{where}.params", "a table of the estimator's parameters")
    try:
        estimator = estimator_class(**params)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{where}.params: {exc}") from None
    for key, value in params.items():
        _check_value(estimator, key, value, f"{where}.params.{key}")
    return estimator


def _check_value(estimator, key: str, value, where: str) -> None:
    """Check ``value`` of parameter ``key`` against the estimator's own table of constraints
    (``_parameter_constraints``, which its ``fit`` checks), so that a wrong value in the file is
    refused naming the key rather than failing every cell."""
    table = getattr(estimator, "_parameter_constraints", None)
    if isinstance(table, Mapping) and key in table:
        try:
            check_parameter(key, value, table[key], type(estimator).__name__)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: {exc}") from None
