"""Speed of the SSC solvers on the same K: the default dual Newton solver and the ADMM against
LD-SSC1/LD-SSC2, cvxpy+SCS and cvxpy+Clarabel (digits, rbf with the median width).

    python benchmarks/bench_ssc.py                      # n = 100, 200, 300, 500 (+ 1000, 2000 scalable alone)
    python benchmarks/bench_ssc.py --sizes 100 200 --big      # a quicker run
    python benchmarks/bench_ssc.py --data blobs --sizes --big 2000 --tol 1e-6 --name ssc_speed_blobs_2000
    python benchmarks/bench_ssc.py --data blobs --sizes 500 --methods dual-newton admm scs \
        --big 1000 2000 5000 10000 --tol 1e-4 --name ssc_scaling_blobs
    python benchmarks/bench_ssc.py --statement --sizes 500 1000 --tol 1e-6      # cvxpy statement vs own solver

Each (n, method) runs in its own process (:func:`_harness.run_case`: its peak resident memory
is its own; a run that exceeds ``--timeout`` is killed and reported as such).  Beside every size
the script times one full ``numpy.linalg.eigh`` of an n x n matrix in the same run: "in eigh"
is a solve time in units of that eigendecomposition.  Writes
``benchmarks/results/ssc_speed.{md,json,png}`` (``--name`` for another name).  Digits has 1797
images; n = 2000 adds one-pixel-shifted copies (see :func:`cvxclust.datasets.load_dataset`).
``--data blobs`` draws n points from 8 isotropic Gaussian blobs in the plane
(``sklearn.datasets.make_blobs(n, centers=8, random_state=0)``) instead.

``--statement`` runs another case, "cvxpy statement vs own solver" (:func:`statement_case`), on
blobs and digits: ``cvxclust.solve(FrobeniusPSD(K).problem())`` against ``FrobeniusPSD(K).solve()``
with the same ``tol``, in the same process; writes ``benchmarks/results/ssc_statement.{md,json}``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np
from _harness import (RESULTS, eigh_seconds, environment, fmt, markdown_table, options_record, plot_times, run_case,
                      write_results)

METHODS = {
    "dual-newton": {"method": "dual-newton"},
    "admm": {"method": "admm"},
    "ld-ssc1": {"method": "ld-ssc1"},
    "ld-ssc2": {"method": "ld-ssc2"},
    "scs": {"method": "reference", "solver": "SCS", "eps": 1e-7},
    "clarabel": {"method": "reference", "solver": "CLARABEL"},
}


def points(data: str, n: int) -> np.ndarray:
    """n points of ``data``: "digits" or "blobs" (see the module docstring)."""
    from sklearn.datasets import make_blobs

    from cvxclust.datasets import load_dataset

    if data == "blobs":
        return make_blobs(n, centers=8, random_state=0)[0]
    return load_dataset(data, n_samples=n)[0]


def solve_case(n: int, name: str, time_limit: float, save: str | None, data: str = "digits",
               tol: float | None = None) -> dict:
    """One solve of (7) on n points of ``data``; the solution is saved to ``save`` to compare
    solutions; ``tol``: tol and residual_tol of the scalable solvers (default: theirs)."""
    from cvxclust.kernels import rbf
    from cvxclust.ssc import FrobeniusPSD

    relaxation = FrobeniusPSD(rbf(points(data, n)))
    options = dict(METHODS[name])
    method = options.pop("method")
    if method != "reference":
        options["time_limit"] = time_limit
        if tol is not None:
            options |= {"tol": tol, "residual_tol": tol}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = relaxation.solve(method, **options)
    if save:
        np.save(save, result.X)
    return {"time": result.time, "objective": result.objective, "dual_bound": result.dual_bound,
            "relative_gap": result.relative_gap, "max_residual": result.max_residual, "status": result.status,
            "iterations": result.iterations}


def _count_eigendecompositions() -> dict:
    """Count the calls of every eigendecomposition routine the solvers use (numpy's and scipy's)
    from now on in this process: full, partial (by index) and eigenvalues alone alike."""
    import scipy.linalg

    counts = {"eigh": 0}
    for module, name in ((np.linalg, "eigh"), (np.linalg, "eigvalsh"), (scipy.linalg, "eigh")):
        def counted(*args, _original=getattr(module, name), **kwargs):
            counts["eigh"] += 1
            return _original(*args, **kwargs)

        setattr(module, name, counted)
    return counts


def statement_case(n: int, data: str, tol: float, repeat: int) -> dict:
    """SSC (7) on n points of ``data``, stated in cvxpy and solved by ``cvxclust.solve`` (method
    ``"auto"``), against ``FrobeniusPSD(K).solve()``, both with ``tol = residual_tol = tol``: the
    least wall time of ``repeat`` runs of each, in turn, the problem and the relaxation built
    before the clock; then one more run of the statement timed by stage (reading, the method's
    choice with the split it reads, the solve, which ends with the final checks), and one of
    each counting the eigendecompositions (:func:`_count_eigendecompositions`)."""
    import time

    import cvxclust
    from cvxclust.generic import CvxpyRelaxation, choose_method
    from cvxclust.kernels import rbf
    from cvxclust.ssc import FrobeniusPSD

    K = rbf(points(data, n))
    relaxation, problem = FrobeniusPSD(K), FrobeniusPSD(K).problem()
    options = {"tol": tol, "residual_tol": tol}
    best = {"own": np.inf, "statement": np.inf}
    runs = {"own": lambda: relaxation.solve(**options), "statement": lambda: cvxclust.solve(problem, **options)}
    results = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(repeat):
            for name, run in runs.items():
                start = time.perf_counter()
                results[name] = run()
                best[name] = min(best[name], time.perf_counter() - start)
        stages, start = {}, time.perf_counter()
        generic = CvxpyRelaxation(problem)
        stages["read"] = time.perf_counter() - start
        method, _ = choose_method(generic.standard_form())
        stages["choice"] = time.perf_counter() - start - stages["read"]
        generic.solve(method, **options)
        stages["solve"] = time.perf_counter() - start - stages["read"] - stages["choice"]
        counts, eigh = _count_eigendecompositions(), {}
        for name, run in runs.items():
            counts["eigh"] = 0
            run()
            eigh[name] = counts["eigh"]
    own, statement = results["own"], results["statement"]
    return {"own_time": best["own"], "statement_time": best["statement"], "ratio": best["statement"] / best["own"],
            "read_time": stages["read"], "choice_time": stages["choice"], "solve_time": stages["solve"],
            "method": statement.method, "own_iterations": own.iterations, "statement_iterations": statement.iterations,
            "own_newton": own.extras.get("newton_iterations"),
            "statement_newton": statement.extras.get("newton_iterations"),
            "own_eigh": eigh["own"], "statement_eigh": eigh["statement"],
            "objective_difference": abs(statement.objective - own.objective) / abs(own.objective),
            "distance": float(np.linalg.norm(statement.X - own.X) / np.linalg.norm(own.X)),
            "status": f"{own.status} / {statement.status}"}


def statement_markdown(rows: list[dict]) -> str:
    header = ["n", "data", "own solve (s)", "statement (s)", "statement / own", "read (s)", "choice (s)",
              "solve (s)", "iterations own / statement", "Newton steps", "eigendecompositions", "rel. objective diff.",
              "rel. distance of X", "status own / statement"]
    return markdown_table(header, [
        [r["n"], r["data"], fmt(r.get("own_time"), ".2f"), fmt(r.get("statement_time"), ".2f"),
         fmt(r.get("ratio"), ".2f"), fmt(r.get("read_time"), ".3f"), fmt(r.get("choice_time"), ".3f"),
         fmt(r.get("solve_time"), ".2f"),
         f"{r.get('own_iterations', '–')} / {r.get('statement_iterations', '–')}",
         f"{r.get('own_newton', '–')} / {r.get('statement_newton', '–')}",
         f"{r.get('own_eigh', '–')} / {r.get('statement_eigh', '–')}", fmt(r.get("objective_difference"), ".1e"),
         fmt(r.get("distance"), ".1e"), r["status"]] for r in rows])


def statement_main(args, env) -> int:
    """``--statement``: :func:`statement_case` for every size, on blobs and digits."""
    rows = []
    for data in ("blobs", "digits"):
        for n in args.sizes:
            rows.append(run_case(__file__, "statement_case", n, data, args.tol, args.repeat, timeout=args.timeout,
                                 threads=args.threads, row={"n": n, "data": data}))
            print(f"n={n} {data}: {fmt(rows[-1].get('ratio'), '.2f')} x, {rows[-1]['status']}", file=sys.stderr,
                  flush=True)
    description = (
        "SSC (7) stated in cvxpy (``FrobeniusPSD(K).problem()``) and solved by ``cvxclust.solve`` (method "
        "``\"auto\"``, which runs the dual Newton method), against the package's own solver "
        f"``FrobeniusPSD(K).solve()``, both with tol = residual_tol = {args.tol:g}, on the rbf kernel (median "
        "width) of n points of 8 Gaussian blobs in the plane or of digits; "
        f"{'one BLAS thread' if args.threads == 1 else f'BLAS threads: {args.threads}'}. Both run in the same "
        f"process, in turn, {args.repeat} times each; the times are the least (wall seconds of the call, the "
        "problem and the relaxation built before). 'read', 'choice', 'solve': one more run of the statement timed "
        "by stage (reading it into the standard form; choosing the method, with the split of the form it reads; "
        "the solve, its final checks included). 'eigendecompositions': the calls of numpy's and scipy's "
        "eigendecomposition routines (full, partial, eigenvalues alone) in one more run of each. 'rel. objective "
        "diff.' and 'rel. distance of X': between the two results."
    )
    table = statement_markdown(rows)
    write_results(args.out, args.name or "ssc_statement", "SSC (7): the cvxpy statement against the package's own "
                  "solver", description, table, {"options": options_record(args), "rows": rows}, env)
    print(table)
    return 0


def compare(rows: list[dict], eigh: dict, saved: str) -> None:
    """Gaps to the SCS and Clarabel objectives, SCS time / time, time in eigh, distance to SCS's X."""
    for r in rows:
        r["eigh_time"] = eigh.get(r["n"])
        if np.isfinite(r.get("time", np.nan)) and r["eigh_time"]:
            r["in_eigh"] = r["time"] / r["eigh_time"]
        ref = {m: next((q for q in rows if q["n"] == r["n"] and q["method"] == m and "objective" in q), None)
               for m in ("scs", "clarabel")}
        for m, q in ref.items():
            if q is not None and "objective" in r:
                r[f"gap_{m}"] = abs(r["objective"] - q["objective"]) / abs(q["objective"])
        if ref["scs"] is not None and np.isfinite(r.get("time", np.nan)):
            r["speedup"] = ref["scs"]["time"] / r["time"]
        path_scs, path_r = (os.path.join(saved, f"{r['n']}_{m}.npy") for m in ("scs", r["method"]))
        if os.path.exists(path_scs) and os.path.exists(path_r):
            X_scs, X_r = np.load(path_scs), np.load(path_r)
            r["distance_scs"] = float(np.linalg.norm(X_r - X_scs) / np.linalg.norm(X_scs))


def markdown(rows: list[dict]) -> str:
    header = ["n", "method", "time (s)", "in eigh", "SCS time / time", "rel. gap to SCS", "rel. gap to Clarabel",
              "certified gap", "max residual", "iterations", "peak RSS (MB)", "status"]
    return markdown_table(header, [
        [r["n"], r["method"], fmt(r.get("time"), ".2f"), fmt(r.get("in_eigh"), ".1f"), fmt(r.get("speedup"), ".1f"),
         fmt(r.get("gap_scs"), ".1e"), fmt(r.get("gap_clarabel"), ".1e"), fmt(r.get("relative_gap"), ".1e"),
         fmt(r.get("max_residual"), ".1e"), r.get("iterations", "–"), fmt(r.get("peak_rss_mb"), ".0f"), r["status"]]
        for r in rows])


def plot(rows, path, data):
    import matplotlib.pyplot as plt

    fig, (ax, ax_eigh) = plt.subplots(1, 2, figsize=(11, 4))
    plot_times(ax, rows, METHODS, f"SSC (7): solve time on {data}, rbf")
    for name in METHODS:
        points = sorted((r["n"], r["in_eigh"]) for r in rows if r["method"] == name and "in_eigh" in r)
        if points:
            ax_eigh.loglog(*zip(*points), "o-", label=name)
    ax_eigh.set_xlabel("n")
    ax_eigh.set_ylabel("time / one full eigh of the same size")
    ax_eigh.set_title("the same in eigendecomposition-equivalents")
    ax_eigh.grid(True, which="both", alpha=0.3)
    ax_eigh.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[100, 200, 300, 500])
    parser.add_argument("--big", type=int, nargs="*", default=[1000, 2000],
                        help="sizes for the scalable solvers alone (dual-newton, admm)")
    parser.add_argument("--admm-max-n", type=int, default=None, help="largest n for the ADMM among --big")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--time-limit", type=float, default=120.0, help="time limit of the scalable solvers (s)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="kill a run after this many seconds")
    parser.add_argument("--clarabel-max-n", type=int, default=100,
                        help="largest n for Clarabel (an interior-point method: its memory grows fastest)")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads of each run (default: the library's)")
    parser.add_argument("--data", choices=["digits", "blobs"], default="digits")
    parser.add_argument("--tol", type=float, default=1e-7,
                        help="tol and residual_tol of the scalable solvers (default 1e-7, that of the published runs)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default=None,
                        help="results file name (without suffix; default ssc_speed, ssc_statement with --statement)")
    parser.add_argument("--statement", action="store_true",
                        help="the case 'cvxpy statement vs own solver' on blobs and digits, instead of the methods")
    parser.add_argument("--repeat", type=int, default=2, help="runs of each solve with --statement (the least counts)")
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)
    if args.statement:
        return statement_main(args, env)
    args.name = args.name or "ssc_speed"

    from tqdm import tqdm

    jobs = [(n, m) for n in args.sizes for m in args.methods if not (m == "clarabel" and n > args.clarabel_max_n)]
    jobs += [(n, m) for n in args.big for m in ("dual-newton", "admm")
             if m in args.methods and not (m == "admm" and args.admm_max_n is not None and n > args.admm_max_n)]
    rows = []
    with tempfile.TemporaryDirectory() as saved:
        for n, name in tqdm(jobs, desc="bench ssc"):
            save = os.path.join(saved, f"{n}_{name}.npy") if n <= max(args.sizes, default=0) else None
            rows.append(run_case(__file__, "solve_case", n, name, args.time_limit, save, args.data, args.tol,
                                 timeout=args.timeout,
                                 threads=args.threads, row={"n": n, "method": name}))
            tqdm.write(f"n={n} {name}: {rows[-1]['status']}  {fmt(rows[-1].get('time'), '.2f')} s")
        eigh = {n: eigh_seconds(n, args.threads) for n in sorted({n for n, _ in jobs})}
        compare(rows, eigh, saved)
    data = "digits" if args.data == "digits" else "8 Gaussian blobs in the plane (make_blobs, random_state=0)"
    tolerance = f"tol = residual_tol = {args.tol:g}"
    description = (
        f"Frobenius-PSD (7) on {data}, rbf with the median width, the same K for every method. Times are "
        "wall seconds of the solve (cvxpy: compilation + solver); 'in eigh': the time in units of one full "
        "numpy.linalg.eigh of the same size, timed in the same run. SCS eps = 1e-7, Clarabel's default "
        f"tolerances (1e-9); scalable solvers {tolerance}, time limit {args.time_limit:g} s. 'rel. gap to SCS': "
        "|objective - SCS's| / |SCS's|. 'certified gap': the relative gap of the method's own dual bound."
    )
    table = markdown(rows)
    title = f"SSC (7) on {'digits' if args.data == 'digits' else 'Gaussian blobs'}: solve time against cvxpy"
    write_results(args.out, args.name, title, description, table,
                  {"options": options_record(args), "eigh_seconds": eigh, "rows": rows}, env,
                  plot=lambda path: plot(rows, path, args.data))
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
