"""Beyond n = 10,000: the low-rank method of ``cvxclust.solve`` against the dense second-order path
and the cvxpy solvers, in time and peak memory.

    python benchmarks/bench_lowrank.py                                   # the full run (hours)
    python benchmarks/bench_lowrank.py --pw-sizes 60 --mc-sizes 80 --methods auto generic alm scs   # a quick check
    python benchmarks/bench_lowrank.py --pw-sizes --mc-sizes --ssc-sizes 2000 5000 10000 --threads 2  # the estimator

The classes (seed ``--seed``), stated in plain cvxpy by :mod:`cvxclust.problem_classes`: the
Peng-Wei k-means SDP ``kmeans_sdp(blobs_kernel(n, 10), 10)`` (10 Gaussian blobs in 10 dimensions,
a dense kernel) at n in ``--pw-sizes``, and the max-cut SDP ``max_cut(random_graph(n, 10))`` of a
sparse random graph of average degree 10 (a ``scipy.sparse`` cost) at n in ``--mc-sizes``.

The methods (``--methods``), each (class, n, method) in its own process
(:func:`_harness.run_case`), at ``tol = residual_tol = --tol`` and the class's time limit:
``lowrank`` and ``auto`` by name at every size; ``dense``, the method ``method="auto"`` chooses for
the class where the problem is held dense (:func:`cvxclust.generic.choose_method`, read on a small
instance of the class), and any other method of ``cvxclust.solve`` named, up to ``--dense-max-n``;
SCS (``eps_abs = eps_rel = --tol``) and Clarabel (its default tolerances) through cvxpy up to
``--scs-max-n`` and ``--clarabel-max-n``.  Writes ``benchmarks/results/lowrank.{md,json,png}``.

With ``--ssc-sizes``, the estimator ``SemidefiniteSpectralClustering(relaxation="peng-wei")`` on the
same blobs with its default rbf affinity, by ``method="auto"`` and by ``--ssc-dense-method`` up to
``--dense-max-n`` (:mod:`_lowrank_ssc`), written to ``results/<--ssc-name>.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import sys
import warnings
from pathlib import Path

import numpy as np
import _lowrank_ssc
from _harness import (RESULTS, eigh_case, eigh_seconds, environment, fmt, markdown_table, options_record, peak_rss_kb,
                      run_case, write_results)

CLASSES = ("peng-wei", "max-cut")
REFERENCES = ("scs", "clarabel")
#: methods run at every size (the others stop at --dense-max-n, --scs-max-n, --clarabel-max-n)
UNLIMITED = ("lowrank", "auto")
#: the targets' certified relative gap
TARGET_GAP = 1e-4
GB = 1024.0  # MB in a GB (the harness reports MB of 2**20 bytes)


# ----------------------------------------------------------------------------------------------
# the cases, each in its own process
# ----------------------------------------------------------------------------------------------
def instance(name: str, n: int, seed: int):
    """The cvxpy problem of class ``name`` at order n."""
    from cvxclust import problem_classes as pc

    if name == "peng-wei":
        return pc.kmeans_sdp(pc.blobs_kernel(n, 10, random_state=seed), 10)
    if name == "max-cut":
        return pc.max_cut(pc.random_graph(n, 10, random_state=seed))
    raise ValueError(f"name must be one of {CLASSES}, got {name!r}")


def dense_case(name: str, seed: int) -> dict:
    """The method ``method="auto"`` chooses for class ``name`` held dense (at n = 60), and why."""
    from cvxclust.generic import CvxpyRelaxation, choose_method

    method, reason = choose_method(CvxpyRelaxation(instance(name, 60, seed)).standard_form())
    return {"method": method, "reason": reason, "status": "ok"}


def _reset_peak() -> float | None:
    """Reset this process's peak resident memory to its current one (``/proc/self/clear_refs``)
    and return that, in MB; None where the kernel does not allow it (the peak then counts from the
    start of the process)."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        with open("/proc/self/status") as f:
            return next(float(line.split()[1]) / 1024 for line in f if line.startswith("VmRSS:"))
    except (OSError, StopIteration):
        return None


def case(name: str, n: int, method: str, tol: float, time_limit: float, seed: int, eigh_max_n: int,
         product_threads: int = 1) -> dict:
    """One solve of class ``name`` at order n by ``method``: the result's figures, the peak memory
    of the solve and, for n <= ``eigh_max_n``, the time of one full eigh of order n.  The low-rank
    method's products with a sparse cost and its Riemannian steps run in ``product_threads``
    threads (:data:`cvxclust.generic.sparse_product.PRODUCT_THREADS`)."""
    from cvxclust.generic import sparse_product

    sparse_product.PRODUCT_THREADS = product_threads
    problem = instance(name, n, seed)
    gc.collect()
    generation_peak = (peak_rss_kb() or math.nan) / 1024
    held = _reset_peak()  # the generation's temporaries are not the solve's; the instance held is
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in REFERENCES:
            from bench_classes import _reference

            row = _reference(problem, method, tol, time_limit)
        else:
            import cvxclust

            result = cvxclust.solve(problem, method=method, tol=tol, residual_tol=tol, time_limit=time_limit)
            extras = result.extras
            row = {"time": result.time, "read_time": extras.get("read_time"), "objective": result.objective,
                   "dual_bound": result.dual_bound, "relative_gap": result.relative_gap,
                   "max_residual": result.max_residual, "status": result.status, "iterations": result.iterations,
                   "ran": result.method, "rank": extras.get("rank"), "eigsh": extras.get("eigsh"),
                   "eigh": extras.get("eigh"), "formed": result.X is not None}
            del result, extras
    solve_peak = (peak_rss_kb() or math.nan) / 1024
    row |= {"solve_peak_mb": solve_peak, "instance_mb": held, "generation_peak_mb": generation_peak,
            "process_peak_mb": float(np.fmax(generation_peak, solve_peak)),
            "peak_from": "solve" if held is not None else "process"}
    del problem
    gc.collect()
    if n <= eigh_max_n:  # after the solve's peak is read: its n x n arrays are not the solve's
        row["eigh_time"] = eigh_case(n)["time"]
    return row


def ssc_case(n: int, method: str, tol: float, time_limit: float, seed: int) -> dict:
    """One fit of the estimator (:func:`_lowrank_ssc.ssc_case`), its peak counted from the data held."""
    return _lowrank_ssc.ssc_case(n, method, tol, time_limit, seed, _reset_peak)


def run_ssc(args, env: dict) -> None:
    """The estimator's fits at ``--ssc-sizes`` and one eigh of order ``--ssc-eigh-n``, written to
    ``results/<--ssc-name>``."""
    eigh = {"n": args.ssc_eigh_n, "time": eigh_seconds(args.ssc_eigh_n, threads=args.threads)}
    rows = []
    for n in args.ssc_sizes:
        for method in ["auto"] + ([args.ssc_dense_method] if n <= args.dense_max_n else []):
            limit = args.pw_time_limit if method == "auto" else args.ssc_dense_time_limit or args.pw_time_limit
            row = run_case(__file__, "ssc_case", n, method, args.tol, limit, args.seed,
                           timeout=2.0 * limit + 300.0, threads=args.threads,
                           row={"n": n, "method": method})
            print(f"ssc n={n} {method} ({row.get('ran', '-')}): {row['status']} {fmt(row.get('time'), '.2f')} s",
                  file=sys.stderr, flush=True)
            rows.append(row)
    body = _lowrank_ssc.ssc_markdown(rows, eigh, args.ssc_dense_method)
    threads = args.threads or "the libraries' default"
    description = (
        _lowrank_ssc.__doc__.split("\n\n", 1)[0].replace("``", "`")
        + f"\n\n`tol = residual_tol = {args.tol:g}`, time limit {args.pw_time_limit:g} s (the dense method's "
        f"{args.ssc_dense_time_limit or args.pw_time_limit:g} s), BLAS threads "
        f"{threads}.  'fit': the wall time of `fit`, the affinity and the "
        "spectral step included; 'solve': `Result.time` (from the call of `cvxclust.solve`, reading the statement "
        f"included); 'in eigh': the fit's time over that of one full numpy.linalg.eigh of the same order, "
        f"extrapolated as n^3 from one eigh of order {eigh['n']} timed in the same run "
        f"({eigh['time']:.2f} s, in its own process); 'peak': the peak resident memory of the fit's process from "
        "the moment the data are held; 'Lanczos products': the products with the dual slack of the certificate's "
        "smallest-eigenvalue computations ('eigsh' of them); 'rel. diff from dense': the objective's relative "
        "difference from the dense method's at the same n; 'ARI': the adjusted Rand index of the labels against "
        "the blobs.  The stages table times the functions that carry each stage (nested calls counted once); "
        "'memory left held' is the resident memory after the stage less that before it."
    )
    write_results(args.out, args.ssc_name, "SemidefiniteSpectralClustering(relaxation=\"peng-wei\") at large n",
                  description, body, {"options": options_record(args), "eigh": eigh, "rows": rows}, env,
                  plot=_lowrank_ssc.ssc_plot(rows))
    print(body)


# ----------------------------------------------------------------------------------------------
# the tables
# ----------------------------------------------------------------------------------------------
def _finite(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def peak_mb(row: dict) -> float | None:
    """The run's peak memory: the solve's (the instance held included) where measured, else the
    process's (a case killed at its timeout, or one that failed)."""
    for key in ("solve_peak_mb", "peak_rss_mb"):
        if _finite(row.get(key)):
            return row[key]
    return None


def finished(row: dict) -> bool:
    """Whether the run ended certified optimal (cvxclust) or optimal (SCS, Clarabel)."""
    return row.get("status") == "optimal"


def compare(rows: list[dict], dense: dict, memory_limit_gb: float) -> None:
    """Time in eigh, memory over the limit, and each objective's relative difference from the
    dense method's at the same (class, n) where that finished."""
    for r in rows:
        r["in_eigh"] = r["time"] / r["eigh_time"] if _finite(r.get("time")) and _finite(r.get("eigh_time")) else None
        r["peak_mb"] = peak_mb(r)
        r["over"] = r["peak_mb"] is not None and r["peak_mb"] > memory_limit_gb * GB
        base = next((s for s in rows if s["class"] == r["class"] and s["n"] == r["n"]
                     and s["method"] == dense.get(r["class"]) and finished(s)), None)
        if base is not None and base is not r and _finite(r.get("objective")):
            r["dense_difference"] = abs(r["objective"] - base["objective"]) / max(abs(base["objective"]), 1e-300)


def _row(rows: list[dict], name: str, n: int, method: str) -> dict | None:
    return next((r for r in rows if r["class"] == name and r["n"] == n and r["method"] == method), None)


def _measured(r: dict) -> str:
    return (f"gap {fmt(r.get('relative_gap'), '.1e')}, residual {fmt(r.get('max_residual'), '.1e')}, "
            f"{fmt(r.get('time'), '.1f')} s, {fmt(_gb(r.get('peak_mb')), '.2f')} GB, {r['status']}")


def _count(value) -> str:
    return "–" if value is None else str(value)


def _gb(mb) -> float | None:
    return mb / GB if _finite(mb) else None


def targets(rows: list[dict], method: str, dense: dict, tol: float, dense_max_n: int) -> list[list]:
    """The targets, each [target, measured, met], read from the rows of ``method``."""
    goals = [("peng-wei", 10_000, 600.0, 16.0), ("peng-wei", 20_000, None, 24.0), ("max-cut", 100_000, 300.0, None)]
    table = []
    for name, n, seconds, gigabytes in goals:
        target = f"{name} n = {n:,}: certified gap <= {TARGET_GAP:g} and feasible"
        target += (f" within {seconds / 60:g} min" if seconds else "") + (f" and {gigabytes:g} GB" if gigabytes else "")
        r = _row(rows, name, n, method)
        if r is None:
            table.append([target, "not run", "–"])
            continue
        met = finished(r) and _finite(r.get("relative_gap")) and r["relative_gap"] <= TARGET_GAP \
            and (seconds is None or (_finite(r.get("time")) and r["time"] <= seconds)) \
            and (gigabytes is None or (r["peak_mb"] is not None and r["peak_mb"] <= gigabytes * GB))
        table.append([target, _measured(r), "yes" if met else "no"])
    r = _row(rows, "max-cut", 1_000_000, method)
    table.append(["max-cut n = 1,000,000: measured", "not run" if r is None else _measured(r), "–"])
    for name in CLASSES:
        pairs = [(r, _row(rows, name, r["n"], dense.get(name))) for r in rows
                 if r["class"] == name and r["method"] == method and r["n"] <= dense_max_n]
        pairs = [(r, d) for r, d in pairs if d is not None]
        target = f"{name}: {method} agrees with {dense.get(name) or 'the dense method'} at n <= {dense_max_n} " \
                 "(rel. diff <= 2 tol)"
        if not pairs:
            table.append([target, "no size run by both", "–"])
            continue
        met = all(finished(r) and finished(d) and _finite(r.get("dense_difference"))
                  and r["dense_difference"] <= 2 * tol for r, d in pairs)
        measured = ", ".join(f"n = {r['n']}: {fmt(r.get('dense_difference'), '.1e')}" for r, _ in pairs)
        table.append([target, measured, "yes" if met else "no"])
    return table


def markdown(rows: list[dict], args, dense: dict) -> str:
    header = ["n", "method", "ran", "time (s)", "reading (s)", "in eigh", "peak (GB)", "process peak (GB)",
              "iterations", "rank",
              "eigsh", "eigh", "objective", "certified gap", "max residual", "rel. diff from dense", "status"]
    parts = ["### Targets\n\n" + markdown_table(["target", f"measured ({args.target_method})", "met"],
                                                 targets(rows, args.target_method, dense, args.tol, args.dense_max_n))]
    for name in CLASSES:
        same = sorted((r for r in rows if r["class"] == name), key=lambda r: r["n"])
        if same:
            parts.append(f"### {name}\n\n" + markdown_table(header, [
                [r["n"], r["method"], r.get("ran", "–"), fmt(r.get("time"), ".2f"), fmt(r.get("read_time"), ".2f"),
                 fmt(r.get("in_eigh"), ".1f"), fmt(_gb(r["peak_mb"]), ".2f") + (" over" if r["over"] else ""),
                 fmt(_gb(r.get("process_peak_mb", r.get("peak_rss_mb"))), ".2f"), r.get("iterations", "–"),
                 _count(r.get("rank")), _count(r.get("eigsh")), _count(r.get("eigh")),
                 fmt(r.get("objective"), ".10g"), fmt(r.get("relative_gap"), ".1e"), fmt(r.get("max_residual"), ".1e"),
                 "dense" if r["method"] == dense.get(name) else fmt(r.get("dense_difference"), ".1e"),
                 r["status"].replace("|", "/")]
                for r in same]))
    return "\n\n".join(parts)


def plot(rows: list[dict]):
    """Time and peak memory against n, log-log, one line per (class, method); a run that did not
    finish certified is a hollow square at the time it took (its limit, or when it failed)."""
    def draw(path):
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        series = list(dict.fromkeys((r["class"], r["method"]) for r in rows))
        for color, (name, method) in enumerate(series):
            same = sorted((r for r in rows if r["class"] == name and r["method"] == method), key=lambda r: r["n"])
            for ax, value in zip(axes, (lambda r: r.get("time") if _finite(r.get("time")) else r.get("wall"),
                                        lambda r: _gb(r["peak_mb"]))):
                done = [(r["n"], value(r)) for r in same if finished(r) and _finite(value(r))]
                other = [(r["n"], value(r)) for r in same if not finished(r) and _finite(value(r))]
                style = {"color": f"C{color % 10}", "linestyle": "-" if name == "peng-wei" else "--"}
                if done:
                    ax.loglog(*zip(*done), marker="o", label=f"{name}: {method}", **style)
                if other:
                    ax.loglog(*zip(*other), marker="s", markerfacecolor="none", linestyle="none",
                              color=style["color"], label=f"{name}: {method}, not finished" if not done else None)
        for ax, label in zip(axes, ("wall time (s)", "peak memory (GB)")):
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].set_title("time (hollow squares: time limit or failure)")
        axes[1].set_title("peak memory of the solve")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)

    return draw


# ----------------------------------------------------------------------------------------------
# the run
# ----------------------------------------------------------------------------------------------
def plan(args, n: int, dense_method: str) -> list[str]:
    """The methods run at order n (``dense`` resolved to the class's dense method)."""
    methods = []
    for method in args.methods:
        method = dense_method if method == "dense" else method
        largest = {"scs": args.scs_max_n, "clarabel": args.clarabel_max_n}.get(method, args.dense_max_n)
        if (method in UNLIMITED or n <= largest) and method not in methods:
            methods.append(method)
    return methods


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pw-sizes", type=int, nargs="*", default=[1000, 2000, 5000, 10000, 20000])
    parser.add_argument("--mc-sizes", type=int, nargs="*", default=[1000, 10000, 100000, 1000000])
    parser.add_argument("--methods", nargs="+", default=["lowrank", "dense", "scs", "clarabel"],
                        help="'lowrank', 'auto', 'dense' (auto's dense choice), another method of cvxclust.solve, "
                             "'scs', 'clarabel'")
    parser.add_argument("--dense-max-n", type=int, default=3000, help="largest n of the methods other than "
                        "lowrank, auto, SCS and Clarabel")
    parser.add_argument("--scs-max-n", type=int, default=200)
    parser.add_argument("--clarabel-max-n", type=int, default=0)
    parser.add_argument("--eigh-max-n", type=int, default=5000, help="largest n at which one eigh is timed")
    parser.add_argument("--tol", type=float, default=1e-4, help="tol and residual_tol (SCS: eps_abs, eps_rel)")
    parser.add_argument("--pw-time-limit", type=float, default=600.0, help="time limit (s) of a Peng-Wei solve")
    parser.add_argument("--mc-time-limit", type=float, default=300.0, help="time limit (s) of a max-cut solve")
    parser.add_argument("--memory-limit-gb", type=float, default=16.0,
                        help="a run whose peak exceeds it is marked 'over' (recorded, not enforced)")
    parser.add_argument("--target-method", default="lowrank", help="the method whose rows the targets read")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads of each run (default: libraries')")
    parser.add_argument("--product-threads", type=int, default=None,
                        help="threads of the low-rank method's sparse products and Riemannian steps "
                             "(default: the package's, the cores available)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ssc-sizes", type=int, nargs="*", default=[],
                        help="orders of the estimator SemidefiniteSpectralClustering(relaxation='peng-wei') fitted")
    parser.add_argument("--ssc-dense-method", default="generic", help="the estimator's dense method (n <= "
                        "--dense-max-n)")
    parser.add_argument("--ssc-dense-time-limit", type=float, default=None,
                        help="time limit (s) of the estimator's dense method (default: --pw-time-limit)")
    parser.add_argument("--ssc-eigh-n", type=int, default=4000, help="order of the eigh timed for the estimator's "
                        "eigh-equivalents (n^3 extrapolation)")
    parser.add_argument("--ssc-name", default="ssc_peng_wei_10k", help="the estimator's results file name")
    parser.add_argument("--name", default="lowrank", help="results file name (without suffix)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    if args.product_threads is None:  # recorded in the options as resolved
        from cvxclust.generic.sparse_product import PRODUCT_THREADS

        args.product_threads = PRODUCT_THREADS
    env = environment(__file__, argv, args.threads)
    if args.ssc_sizes:
        run_ssc(args, env)
    if not (args.pw_sizes or args.mc_sizes):
        return 0
    sizes = {"peng-wei": args.pw_sizes, "max-cut": args.mc_sizes}
    limits = {"peng-wei": args.pw_time_limit, "max-cut": args.mc_time_limit}
    chosen = {name: run_case(__file__, "dense_case", name, args.seed, timeout=600.0, threads=args.threads)
              for name in CLASSES if sizes[name]}
    dense = {name: row.get("method", "generic") for name, row in chosen.items()}
    slack = 300.0  # seconds of a case beyond its solver's limit: the instance, imports, the eigh
    rows = []
    for name in CLASSES:
        for n in sizes[name]:
            for method in plan(args, n, dense[name]):
                row = run_case(__file__, "case", name, n, method, args.tol, limits[name], args.seed, args.eigh_max_n,
                               args.product_threads, timeout=2.0 * limits[name] + slack, threads=args.threads,
                               row={"class": name, "n": n, "method": method})
                print(f"{name} n={n} {method} ({row.get('ran', '-')}): {row['status']} {fmt(row.get('time'), '.2f')} s "
                      f"{fmt(_gb(peak_mb(row)), '.2f')} GB", file=sys.stderr, flush=True)
                rows.append(row)
    compare(rows, dense, args.memory_limit_gb)
    blas = args.threads or "the libraries' default"
    description = (
        re.sub(r":\w+:`", "`", __doc__.split("\n\n", 2)[2].split("  Writes")[0])
        + f"\n\n`tol = residual_tol = {args.tol:g}`; time limits {args.pw_time_limit:g} s (Peng-Wei), "
        f"{args.mc_time_limit:g} s (max-cut); the low-rank method's sparse products and Riemannian steps in "
        f"{args.product_threads} thread(s) (`--product-threads`), BLAS in {blas} thread(s) (`--threads`); "
        "the dense method: "
        + ", ".join(f"{name} `{method}` ({chosen[name].get('reason', chosen[name]['status'])})"
                    for name, method in dense.items())
        + ".  'time': `Result.time`, from the call, reading the statement included ('reading': "
        "`extras['read_time']`); 'in eigh': time over one full numpy.linalg.eigh of the same order timed in the "
        f"same process after the solve (n <= {args.eigh_max_n}; above, '–'); 'peak': the peak resident memory "
        "(VmHWM) of the process from the moment the instance is built to the end of the solve, the instance held "
        "included and its generation's temporaries not (a run killed at its timeout or failed: the process's peak); "
        "'process peak': that of the whole process, the generation of the instance included; "
        f"'over': above {args.memory_limit_gb:g} GB (recorded, not enforced); 'rank', 'eigsh', 'eigh': "
        "`extras['rank']`, the sparse eigensolver calls and the full eigendecompositions the method reports; "
        "'rel. diff from dense': the objective's relative difference from the dense method's at the same n where "
        "that finished certified optimal.  The targets are read from the rows, never typed; the agreement "
        "holds where both are certified optimal with objectives within 2 tol of each other (each within tol of "
        "the optimum).  The plot draws a run with no `Result.time` (killed at its timeout, or failed) at its "
        "process's wall time."
    )
    body = markdown(rows, args, dense)
    write_results(args.out, args.name, "The low-rank path: time and memory against n", description, body,
                  {"options": options_record(args), "dense_method": chosen, "rows": rows}, env, plot=plot(rows))
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
