"""Fan-out: the validation catalogue and a parameter sweep on 1 and 2 workers, and on a Dask cluster.

    python benchmarks/bench_parallel.py                 # catalogue and sweep, 2 repetitions each
    python benchmarks/bench_parallel.py --repetitions 1 --no-dask

Cases, each in a process of its own (:func:`_harness.run_case`), each worker with one BLAS thread:

* ``catalogue``: ``cvxclust validate problems/ -q`` with ``--jobs 1`` and ``--jobs 2``, and on a
  ``dask.distributed.LocalCluster`` of 2 single-threaded worker processes (``--scheduler``;
  the cluster's start is not timed);
* ``sweep``: :func:`cvxclust.sweep` of :class:`cvxclust.ssc.SemidefiniteSpectralClustering` over
  12 kernel widths x 2 normalizations on iris and wine (48 cells), under
  ``joblib.parallel_config(n_jobs=1)`` and ``(n_jobs=2)``.

Every configuration gives the same tables (tests/test_parallel.py checks it); the figure here is
the wall time and the speed-up of 2 workers over 1.  Writes
``benchmarks/results/parallel.{md,json}``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _harness import RESULTS, environment, fmt, markdown_table, options_record, run_case, write_results

ROOT = Path(__file__).resolve().parents[1]


def catalogue_case(backend: str) -> dict:
    """``cvxclust validate problems/`` on ``backend``: "jobs=1", "jobs=2" or "dask=2"."""
    from cvxclust.cli import main
    argv = ["validate", str(ROOT / "problems"), "-q"]
    kind, workers = backend.split("=")
    if kind == "dask":
        from dask.distributed import LocalCluster
        with LocalCluster(n_workers=int(workers), threads_per_worker=1, processes=True,
                          dashboard_address=None) as cluster:
            start = time.perf_counter()
            status = main([*argv, "--scheduler", cluster.scheduler_address])
            seconds = time.perf_counter() - start
    else:
        start = time.perf_counter()
        status = main([*argv, "--jobs", workers])
        seconds = time.perf_counter() - start
    return {"time": seconds, "exit_status": status}


def sweep_case(jobs: int) -> dict:
    """The sweep of the module docstring under ``joblib.parallel_config(n_jobs=jobs)``."""
    import joblib

    from cvxclust import sweep
    from cvxclust.ssc import SemidefiniteSpectralClustering
    grid = {"gamma": list(np.geomspace(0.05, 5.0, 12)), "relaxation": ["frobenius", "frobenius-psd"]}
    # tol = residual_tol = 1e-7: the solvers' default of the published runs
    estimator = SemidefiniteSpectralClustering(solver_options={"tol": 1e-7, "residual_tol": 1e-7})
    start = time.perf_counter()
    with joblib.parallel_config(n_jobs=jobs):
        table = sweep({"ssc": estimator}, ["iris", "wine"], grid, progress=False)
    return {"time": time.perf_counter() - start, "cells": len(table), "failed": int((table["error"] != "").sum())}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repetitions", type=int, default=2)
    parser.add_argument("--no-dask", action="store_true", help="skip the Dask cluster runs")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, 1)
    rows = []
    backends = ["jobs=1", "jobs=2"] + ([] if args.no_dask else ["dask=2"])
    for rep in range(args.repetitions):
        for backend in backends:
            rows.append(run_case(__file__, "catalogue_case", backend, timeout=args.timeout, threads=1,
                                 row={"workload": "catalogue", "backend": backend, "repetition": rep}))
            print(rows[-1], flush=True)
        for jobs in (1, 2):
            rows.append(run_case(__file__, "sweep_case", jobs, timeout=args.timeout, threads=1,
                                 row={"workload": "sweep", "backend": f"jobs={jobs}", "repetition": rep}))
            print(rows[-1], flush=True)
    table = []
    for workload in ("catalogue", "sweep"):
        serial = [r["time"] for r in rows if r["workload"] == workload and r["backend"] == "jobs=1" and "time" in r]
        for backend in dict.fromkeys(r["backend"] for r in rows if r["workload"] == workload):
            times = [r["time"] for r in rows if r["workload"] == workload and r["backend"] == backend and "time" in r]
            best = min(times) if times else None
            table.append([workload, backend, len(times), " / ".join(fmt(t, ".1f") for t in times), fmt(best, ".1f"),
                          fmt(min(serial) / best if serial and best else None, ".2f")])
    body = markdown_table(["workload", "backend", "runs", "wall times (s)", "best (s)", "speed-up over jobs=1 (best)"],
                          table)
    description = ("The validation catalogue (`cvxclust validate problems/`) and a 48-cell sweep on 1 and 2 local "
                   "workers (joblib's processes) and on a Dask LocalCluster of 2 worker processes, one BLAS thread "
                   "each; every case in a fresh process. The results are the same whatever the backend; the "
                   "figures are wall times and the speed-up of the best run over the best serial run.")
    write_results(args.out, "parallel", "Fan-out: 1 and 2 workers, and Dask", description, body,
                  {"options": options_record(args), "rows": rows}, env)


if __name__ == "__main__":
    main()
