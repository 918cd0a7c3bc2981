"""Cost of reading a cvxpy statement into the generic solver's standard form
(:func:`cvxclust.generic.standard_form`): the expression reader against cvxpy's coefficient backend.

    python benchmarks/bench_reader.py                            # n = 500, 1000, 2000, 4000
    python benchmarks/bench_reader.py --sizes 100 200 --old-max-n 200      # a quick check

The statement is the Peng-Wei SDP (``maximize trace(K @ X)``, or ``sum(multiply(K, X))``, over
``X >> 0``, ``X >= 0``, ``sum(X, axis=1) == 1``, ``trace(X) == k``) for a linear kernel ``K = Z
Z^T`` of n Gaussian points in 20 dimensions (seeded), k = 10.  "reader" reads it from the
expression tree (:mod:`cvxclust.generic.expression_reader`); "coefficient backend" reads every
affine expression through ``linear_map`` (the recogniser switched off), up to ``--old-max-n``.

Each (n, spelling, method) runs in its own process (:func:`_harness.run_case`) and first reads a
small statement, so that imports are not timed.  "time": wall seconds of ``standard_form(problem)``;
"in eigh": that time over one full ``numpy.linalg.eigh`` of the same order timed in the same run.
"above inputs": the peak resident memory during the read (the high-water mark reset just before
it, ``/proc/self/clear_refs``) less the memory held once the kernel and the problem are built, in
MB and in copies of an n x n float matrix (8 n^2 bytes); "output": the memory the standard form
read holds (``StandardForm.nbytes``: C, the bounds, the rows as they are kept, the row sums as
their indices), in the same copies.  Writes
``benchmarks/results/reader.{md,json}``.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import sys
import time
from pathlib import Path

from _harness import (RESULTS, eigh_seconds, environment, fmt, markdown_table, options_record, run_case,
                      write_results)

METHODS = ("reader", "coefficient backend")


def _statement(n: int, spelling: str, k: int):
    import cvxpy as cp
    import numpy as np

    Z = np.random.default_rng(0).standard_normal((n, 20))
    K = Z @ Z.T
    X = cp.Variable((n, n), symmetric=True, name="X")
    objective = cp.trace(K @ X) if spelling == "trace" else cp.sum(cp.multiply(K, X))
    return cp.Problem(cp.Maximize(objective), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == k])


def _memory_kb(field: str) -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return float(line.split()[1])
    return float("nan")


def read_case(n: int, spelling: str, method: str, k: int) -> dict:
    """One read of the Peng-Wei statement of order n by ``method``."""
    from cvxclust.generic import standard_form

    if method == "coefficient backend":
        reader = importlib.import_module("cvxclust.generic.expression_reader")
        reader.read_affine = lambda expr, X: None
    standard_form(_statement(12, spelling, 2))  # imports and first calls, not timed
    problem = _statement(n, spelling, k)
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:  # reset the high-water mark to the current memory
            f.write("5")
        reset = True
    except OSError:
        reset = False
    before = _memory_kb("VmRSS")
    start = time.perf_counter()
    form = standard_form(problem)
    seconds = time.perf_counter() - start
    above = (_memory_kb("VmHWM") - before) / 1024 if reset else float("nan")
    matrix = 8.0 * n * n
    return {"time": seconds, "above_inputs_mb": above, "above_inputs_copies": above * 2**20 / matrix,
            "output_copies": form.nbytes / matrix, "rows": form.m, "nnz": form.rows.nnz, "status": "ok"}


def markdown(rows: list[dict]) -> str:
    header = ["n", "objective", "method", "time (s)", "in eigh", "old time / reader time", "above inputs (MB)",
              "above inputs (n x n copies)", "output (n x n copies)", "rows", "status"]
    return markdown_table(header, [
        [r["n"], r["spelling"], r["method"], fmt(r.get("time"), ".3f"), fmt(r.get("in_eigh"), ".2f"),
         fmt(r.get("speedup"), ".0f"), fmt(r.get("above_inputs_mb"), ".0f"), fmt(r.get("above_inputs_copies"), ".1f"),
         fmt(r.get("output_copies"), ".1f"), r.get("rows", "–"), r["status"]] for r in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[500, 1000, 2000, 4000])
    parser.add_argument("--old-max-n", type=int, default=2000, help="largest n read by the coefficient backend")
    parser.add_argument("--k", type=int, default=10, help="clusters of the Peng-Wei SDP")
    parser.add_argument("--timeout", type=float, default=300.0, help="kill a read after this many seconds")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of each run")
    parser.add_argument("--name", default="reader", help="results file name (without suffix)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)

    rows, eigh = [], {}
    for n in args.sizes:
        eigh[n] = eigh_seconds(n, threads=args.threads)
        for spelling in ("trace", "multiply"):
            for method in METHODS:
                if method == "coefficient backend" and (n > args.old_max_n or spelling != "trace"):
                    continue
                row = run_case(__file__, "read_case", n, spelling, method, args.k, timeout=args.timeout,
                               threads=args.threads, row={"n": n, "spelling": spelling, "method": method})
                row["eigh_time"] = eigh[n]
                if row.get("time") == row.get("time") and row.get("time") is not None:
                    row["in_eigh"] = row["time"] / eigh[n]
                rows.append(row)
                print(f"n={n} {spelling} {method}: {fmt(row.get('time'), '.3f')} s, "
                      f"{fmt(row.get('in_eigh'), '.2f')} eigh, {row['status']}", file=sys.stderr, flush=True)
    for r in rows:
        old = [q for q in rows if q["n"] == r["n"] and q["spelling"] == "trace" and q["method"] == METHODS[1]
               and q.get("in_eigh") is not None]
        if r["method"] == METHODS[0] and old and r.get("time"):
            r["speedup"] = old[0]["time"] / r["time"]
    description = __doc__.split("\n\n", 2)[2]
    write_results(args.out, args.name, "Reading a cvxpy statement into the standard form", description, markdown(rows),
                  {"options": options_record(args), "eigh_seconds": eigh, "rows": rows}, env)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
