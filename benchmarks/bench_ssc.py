"""Speed of the SSC solvers on the same K: default ADMM vs LD-SSC1/LD-SSC2 vs cvxpy+SCS vs
cvxpy+Clarabel (digits, rbf with the median width).

    python benchmarks/bench_ssc.py                      # n = 100, 200, 300, 500 (+ 1000, 2000 ADMM alone)
    python benchmarks/bench_ssc.py --sizes 100 200 --big      # a quicker run

Each (n, method) runs in a fresh subprocess so that its peak resident memory (ru_maxrss) is
its own; a run that exceeds ``--timeout`` is killed and reported as such.  Writes
``benchmarks/results/ssc_speed.{md,json,png}``.  Digits has 1797 images; n = 2000 adds
one-pixel-shifted copies (see :func:`cvxclust.datasets.load_dataset`).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _tables import fmt

METHODS = {
    "admm": {"method": "admm"},
    "ld-ssc1": {"method": "ld-ssc1"},
    "ld-ssc2": {"method": "ld-ssc2"},
    "scs": {"method": "reference", "solver": "SCS", "eps": 1e-7},
    "clarabel": {"method": "reference", "solver": "CLARABEL"},
}


def worker(n: int, name: str, time_limit: float, save: str | None) -> dict:
    import warnings

    from cvxclust.datasets import load_dataset
    from cvxclust.kernels import rbf
    from cvxclust.ssc import FrobeniusPSD

    X, _ = load_dataset("digits", n_samples=n)
    relaxation = FrobeniusPSD(rbf(X))
    options = dict(METHODS[name])
    method = options.pop("method")
    if method != "reference":
        options["time_limit"] = time_limit
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = relaxation.solve(method, **options)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if save:
        np.save(save, result.X)
    return {
        "n": n,
        "method": name,
        "time": result.time,
        "objective": result.objective,
        "dual_bound": result.dual_bound,
        "relative_gap": result.relative_gap,
        "max_residual": result.max_residual,
        "status": result.status,
        "iterations": result.iterations,
        "peak_rss_mb": peak / 1024,
        "extra_rss_mb": (peak - base_rss) / 1024,
    }


def run(n: int, name: str, time_limit: float, timeout: float, save: str | None) -> dict:
    cmd = [sys.executable, __file__, "--worker", json.dumps([n, name, time_limit, save])]
    start = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        return {"n": n, "method": name, "status": f"killed after {timeout:.0f} s", "time": float("nan")}
    except subprocess.CalledProcessError as err:
        tail = (err.stderr or "").strip().splitlines()[-1:]
        return {"n": n, "method": name, "status": f"failed: {' '.join(tail)[:80]}", "time": float("nan"),
                "wall": time.perf_counter() - start}


def markdown(rows: list[dict]) -> str:
    lines = [
        "| n | method | time (s) | SCS time / time | rel. gap to SCS | rel. gap to Clarabel | certified gap | "
        "max residual | iterations | peak RSS (MB) | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['n']} | {r['method']} | {fmt(r.get('time'), '.2f')} | {fmt(r.get('speedup'), '.1f')} | "
            f"{fmt(r.get('gap_scs'), '.1e')} | {fmt(r.get('gap_clarabel'), '.1e')} | {fmt(r.get('relative_gap'), '.1e')} | "
            f"{fmt(r.get('max_residual'), '.1e')} | {r.get('iterations', '–')} | {fmt(r.get('peak_rss_mb'), '.0f')} | "
            f"{r['status']} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 300, 500])
    parser.add_argument("--big", type=int, nargs="*", default=[1000, 2000], help="sizes for ADMM alone")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--time-limit", type=float, default=120.0, help="time limit of the scalable solvers (s)")
    parser.add_argument("--timeout", type=float, default=1200.0, help="kill a run after this many seconds")
    parser.add_argument("--clarabel-max-n", type=int, default=100, help="largest n for Clarabel (memory: 1.6 GB at n = 100)")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*json.loads(args.worker))))
        return 0

    from tqdm import tqdm

    jobs = [(n, m) for n in args.sizes for m in args.methods if not (m == "clarabel" and n > args.clarabel_max_n)]
    jobs += [(n, "admm") for n in args.big]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, name in tqdm(jobs, desc="bench ssc"):
            tqdm.write(f"n={n} {name} ...")
            save = os.path.join(tmp, f"{n}_{name}.npy") if n <= max(args.sizes) else None
            rows.append(run(n, name, args.time_limit, args.timeout, save))
            tqdm.write(f"   {rows[-1]['status']}  {fmt(rows[-1].get('time'), '.2f')} s")
        for r in rows:
            ref = {m: next((q for q in rows if q["n"] == r["n"] and q["method"] == m and "objective" in q), None)
                   for m in ("scs", "clarabel")}
            for m, q in ref.items():
                if q is not None and "objective" in r:
                    r[f"gap_{m}"] = abs(r["objective"] - q["objective"]) / abs(q["objective"])
            if ref["scs"] is not None and np.isfinite(r.get("time", np.nan)):
                r["speedup"] = ref["scs"]["time"] / r["time"]
            path_scs, path_r = (os.path.join(tmp, f"{r['n']}_{m}.npy") for m in ("scs", r["method"]))
            if os.path.exists(path_scs) and os.path.exists(path_r):
                X_scs, X_r = np.load(path_scs), np.load(path_r)
                r["distance_scs"] = float(np.linalg.norm(X_r - X_scs) / np.linalg.norm(X_scs))
    args.out.mkdir(parents=True, exist_ok=True)
    table = markdown(rows)
    header = (
        "Frobenius-PSD (7) on digits, rbf with the median width; times are wall seconds of the solve "
        "(cvxpy: compilation + solver) on this 2-core machine; SCS eps = 1e-7, Clarabel default "
        f"tolerances 1e-9; scalable solvers tol = 1e-7, time limit {args.time_limit:.0f} s.\n\n"
    )
    (args.out / "ssc_speed.md").write_text(header + table + "\n")
    (args.out / "ssc_speed.json").write_text(json.dumps(rows, indent=2))
    plot(rows, args.out / "ssc_speed.png")
    print(header + table)
    return 0


def plot(rows, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name in METHODS:
        pts = sorted((r["n"], r["time"]) for r in rows if r["method"] == name and np.isfinite(r.get("time", np.nan)))
        if pts:
            ax.loglog(*zip(*pts), "o-", label=name)
    ax.set_xlabel("n")
    ax.set_ylabel("wall time (s)")
    ax.set_title("SSC (7): solve time on digits, rbf")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    sys.exit(main())
