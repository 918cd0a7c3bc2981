"""Speed of the CLUHSIC solvers: the exact SDP (5.23) by ADMM against cvxpy+SCS/Clarabel on the
same instance, and the low-rank SDP (5.30) alone on large problems.

    python benchmarks/bench_cluhsic.py                 # SDP at m = 40 (c = 4); low-rank at m = 500, 1000, 2000 (c = 10)
    python benchmarks/bench_cluhsic.py --sdp-sizes 40 --lowrank-sizes 500   # a quicker run

SDP instances: the first 4 clusters of the rotating-object chain
(:func:`cvxclust.datasets.rotating_object`), m / 4 images each, centred rbf kernel with the median
width, output kernel of ``chain(4)``.  Low-rank instances: digits (m images, 10 classes), centred
rbf kernel, ``chain(10)`` (the digits do not form a chain: these rows measure speed only); rank 10,
gamma 0.1 as in the paper, the default start (the rounded spectral relaxation aligned to A, whose
objective and NMI are reported beside), followed by the rounding of Section 5.3.  Each SDP run is a fresh
subprocess (its peak memory is its own).  Writes ``benchmarks/results/cluhsic_speed.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _tables import fmt

# scs: eps 1e-4 (its default); scs-<eps>: tighter, to find where SCS matches the ADMM's accuracy
# (every residual <= 1e-5); clarabel: eps 1e-8
SDP_METHODS = ("admm", "scs", "scs-1e-5", "scs-5e-6", "scs-3e-6", "scs-1e-6", "clarabel")


def sdp_instance(m: int):
    from cvxclust.datasets import rotating_object
    from cvxclust.kernels import center, rbf
    from cvxclust.structures import chain, output_kernel

    X, y, _ = rotating_object("chain")
    keep = np.concatenate([np.flatnonzero(y == k)[: m // 4] for k in range(4)])
    return center(rbf(X[keep])), output_kernel(chain(4)), y[keep]


def sdp_worker(m: int, method: str, time_limit: float) -> dict:
    import warnings

    from cvxclust.cluhsic import CLUHSICSDP

    K, A, _ = sdp_instance(m)
    relaxation = CLUHSICSDP(K, A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "admm":
            result = relaxation.solve("admm", time_limit=time_limit)
        else:
            # "scs" is SCS at its default eps 1e-4, "scs-<eps>" at a tighter one; Clarabel at 1e-8
            solver, eps = ("CLARABEL", 1e-8) if method == "clarabel" else ("SCS", float(method[4:] or 1e-4))
            result = relaxation.solve("reference", solver=solver, eps=eps)
    return {
        "m": m, "method": method, "time": result.time, "objective": result.objective,
        "dual_bound": result.dual_bound, "relative_gap": result.relative_gap,
        "max_residual": result.max_residual, "iterations": result.iterations, "status": result.status,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_sdp(m: int, method: str, time_limit: float, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--worker", json.dumps([m, method, time_limit])]
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"m": m, "method": method, "status": f"killed after {timeout:.0f} s", "time": float("nan")}
    except subprocess.CalledProcessError as err:
        tail = (err.stderr or "").strip().splitlines()[-1:]
        return {"m": m, "method": method, "status": f"failed: {' '.join(tail)[:80]}", "time": float("nan")}


def lowrank_row(m: int, time_limit: float, **options) -> dict:
    from cvxclust.cluhsic import lowrank, objective, partition_matrix, round_lowrank
    from cvxclust.cluhsic._lowrank import _initial_labels
    from cvxclust.datasets import load_dataset
    from cvxclust.kernels import center, rbf
    from cvxclust.metrics import nmi
    from cvxclust.structures import chain, output_kernel

    X, y = load_dataset("digits", n_samples=m)
    K, A = center(rbf(X)), output_kernel(chain(10))
    start = time.perf_counter()
    result = lowrank(K, A, rank=10, gamma=0.1, time_limit=time_limit, random_state=0, **options)
    labels, _ = round_lowrank(result.Y, m, 10)
    total = time.perf_counter() - start
    # the start lowrank() built (same seed, same draws): the rounded spectral relaxation, aligned to A
    start_labels = _initial_labels("spectral", K, A, np.random.RandomState(0), None)
    return {
        "m": m, "method": " ".join(["lowrank r=10"] + [f"{k}={v}" for k, v in options.items()]), "time": total, "solve_time": result.time,
        "objective": result.objective, "max_residual": result.max_residual,
        "iterations": result.iterations, "inner_iterations": result.inner_iterations,
        "status": result.status, "nmi": nmi(y, labels),
        "rounded_objective": objective(K, A, partition_matrix(labels, 10, normalized=True)),
        "start_objective": objective(K, A, partition_matrix(start_labels, 10, normalized=True)),
        "start_nmi": nmi(y, start_labels),
    }


def markdown(sdp_rows, lowrank_rows) -> str:
    lines = [
        "| m | c | method | time (s) | time / ADMM time | rel. gap to Clarabel | below best bound | certified gap | "
        "max residual | iterations | peak RSS (MB) | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in sdp_rows:
        lines.append(
            f"| {r['m']} | 4 | {r['method']} | {fmt(r.get('time'), '.2f')} | {fmt(r.get('speedup'), '.1f')} | "
            f"{fmt(r.get('gap_clarabel'), '.1e')} | {fmt(r.get('gap_bound'), '.1e')} | {fmt(r.get('relative_gap'), '.1e')} | {fmt(r.get('max_residual'), '.1e')} | "
            f"{r.get('iterations', '–')} | {fmt(r.get('peak_rss_mb'), '.0f')} | {r['status']} |"
        )
    lines += [
        "",
        "| m | c | method | time incl. rounding (s) | solve (s) | objective tr((A kron K) YY^T) | max residual | "
        "outer / inner iterations | rounded partition (2.4) | its start (2.4) | NMI rounded / start (digits) | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in lowrank_rows:
        lines.append(
            f"| {r['m']} | 10 | {r['method']} | {fmt(r['time'], '.1f')} | {fmt(r['solve_time'], '.1f')} | "
            f"{fmt(r['objective'], '.4g')} | {fmt(r['max_residual'], '.1e')} | {r['iterations']} / {r['inner_iterations']} | "
            f"{fmt(r.get('rounded_objective'), '.4g')} | {fmt(r.get('start_objective'), '.4g')} | "
            f"{fmt(r['nmi'], '.3f')} / {fmt(r.get('start_nmi'), '.3f')} | {r['status']} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdp-sizes", type=int, nargs="*", default=[40])
    parser.add_argument("--lowrank-sizes", type=int, nargs="*", default=[500, 1000, 2000])
    parser.add_argument("--clarabel-max-m", type=int, default=0,
                        help="largest m for Clarabel (at m = 40 it passed 9 GB and was stopped)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="time limit of the SDP ADMM (s)")
    parser.add_argument("--lowrank-time-limit", type=float, default=300.0,
                        help="time limit of the low-rank solver (s): long enough to see when it converges")
    parser.add_argument("--timeout", type=float, default=900.0)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(sdp_worker(*json.loads(args.worker))))
        return 0
    from threadpoolctl import threadpool_limits
    from tqdm import tqdm

    jobs = [(m, meth) for m in args.sdp_sizes for meth in SDP_METHODS
            if not (meth == "clarabel" and m > args.clarabel_max_m)]
    sdp_rows = []
    for m, meth in tqdm(jobs, desc="SDP (5.23)"):
        sdp_rows.append(run_sdp(m, meth, args.time_limit, args.timeout))
        tqdm.write(f"m={m} {meth}: {sdp_rows[-1]['status']} {fmt(sdp_rows[-1].get('time'), '.2f')} s")
    for r in sdp_rows:
        # the smallest certified upper bound of the run bounds every method's suboptimality
        bounds = [q["dual_bound"] for q in sdp_rows if q["m"] == r["m"] and q.get("dual_bound") is not None]
        if bounds and "objective" in r:
            r["gap_bound"] = (min(bounds) - r["objective"]) / abs(min(bounds))
        ref = {meth: next((q for q in sdp_rows if q["m"] == r["m"] and q["method"] == meth and "objective" in q), None)
               for meth in ("admm", "clarabel")}
        if ref["clarabel"] is not None and "objective" in r:
            r["gap_clarabel"] = abs(r["objective"] - ref["clarabel"]["objective"]) / abs(ref["clarabel"]["objective"])
        if ref["admm"] is not None and "objective" in r:
            r["speedup"] = r["time"] / ref["admm"]["time"]
    lowrank_rows = []
    with threadpool_limits(limits=None):
        # the default, and at the largest size also the faster restore_stall = 5e-3 (stops sooner)
        jobs = [(m, {}) for m in args.lowrank_sizes] + [(max(args.lowrank_sizes), {"restore_stall": 5e-3})]
        for m, options in tqdm(jobs if args.lowrank_sizes else [], desc="low-rank (5.30)"):
            lowrank_rows.append(lowrank_row(m, args.lowrank_time_limit, **options))
            tqdm.write(f"m={m} lowrank: {lowrank_rows[-1]['status']} {lowrank_rows[-1]['time']:.1f} s")
    header = (
        "CLUHSIC on this 2-core machine. SDP (5.23): rotating-object chain, first 4 clusters, centred rbf, "
        "A = chain(4); SCS at eps = 1e-4 (its default) down to 1e-6, Clarabel eps = 1e-8; 'below best bound': "
        "(smallest certified upper bound of the run - objective) / bound; ADMM defaults (certified relative "
        f"gap <= 1e-4, residuals <= 1e-5); time limit {args.time_limit:.0f} s. Low-rank (5.30), time limit "
        f"{args.lowrank_time_limit:.0f} s: digits, "
        "centred rbf, A = chain(10), rank 10, gamma 0.1, then the rounding of Section 5.3.\n\n"
    )
    table = markdown(sdp_rows, lowrank_rows)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "cluhsic_speed.md").write_text(header + table + "\n")
    (args.out / "cluhsic_speed.json").write_text(json.dumps({"sdp": sdp_rows, "lowrank": lowrank_rows}, indent=2))
    print(header + table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
