"""Speed of the generic solver (``cvxclust.solve``) on relaxations read from their cvxpy
statements: the Peng-Wei SDP against cvxpy+SCS, and SSC (7) against its hand-written ADMM.

    python benchmarks/bench_generic.py                          # Peng-Wei n = 300, 500, 1000; SSC n = 500, 1000
    python benchmarks/bench_generic.py --pw-sizes 60 --ssc-sizes 100 --scs-max-n 60    # a quick check

* **Peng-Wei** (``maximize <K, X>`` over p.s.d., nonnegative X with unit row sums and trace k)
  on digits, linear kernel of the pixel intensities scaled to [0, 1], k = 10.  The generic
  solver stops at a certified relative gap ``tol`` (default 1e-6, residuals 1e-6); SCS runs at
  ``eps_abs = eps_rel = --scs-eps`` (default 1e-6).  SCS's ``eps`` bounds its own scaled
  residuals, not the relaxation's: its answer's worst residual, by the relaxation's own
  ``residuals()``, is larger; the row "generic (SCS's accuracy)" holds the generic solver to that
  residual and to the same certified gap (matched accuracy).  "error vs certified":
  the distance of a method's objective to the generic solver's certified interval
  [objective, bound], relative to the objective (0 inside it).
* **SSC (7)** on digits (rbf, median width): the generic solver on ``FrobeniusPSD.problem()``
  against the hand-written ``admm``, both at tol = residual_tol = 1e-7.

Each (problem, n, method) runs in its own process (:func:`_harness.run_case`: its peak resident
memory is its own; a run past ``--timeout`` is killed and reported).  "in eigh": wall time over
one full ``numpy.linalg.eigh`` of the same order timed in the same run.  Writes
``benchmarks/results/generic_speed.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from _harness import (RESULTS, eigh_seconds, environment, fmt, markdown_table, options_record, plot_times, run_case,
                      write_results)


def _digits(n: int) -> np.ndarray:
    from cvxclust.datasets import load_dataset

    X, _ = load_dataset("digits", n_samples=n)
    return X


def peng_wei_case(n: int, method: str, k: int, tol: float, scs_eps: float, residual_tol: float | None = None,
                  scs_time_limit: float | None = None, time_limit: float | None = None) -> dict:
    """One solve of the Peng-Wei SDP on n digits (``residual_tol``: the generic solver's, default ``tol``;
    ``scs_time_limit``: SCS's own ``time_limit_secs``, after which it returns its last iterate;
    ``time_limit``: the generic solver's)."""
    from cvxclust.ssc import PengWei

    X = _digits(n) / 16.0
    relaxation = PengWei(X @ X.T, k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method.startswith("generic"):
            limit = {} if time_limit is None else {"time_limit": time_limit}
            result = relaxation.solve("generic", tol=tol, residual_tol=tol if residual_tol is None else residual_tol,
                                      **limit)
        else:
            limit = {} if scs_time_limit is None else {"time_limit_secs": scs_time_limit}
            result = relaxation.solve("reference", solver="SCS", eps=scs_eps, **limit)
    return _row(result)


def ssc_case(n: int, method: str, tol: float) -> dict:
    """One solve of SSC (7) on n digits."""
    from cvxclust.kernels import rbf
    from cvxclust.ssc import FrobeniusPSD

    relaxation = FrobeniusPSD(rbf(_digits(n)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = relaxation.solve(method, tol=tol, residual_tol=tol)
    return _row(result)


def _row(result) -> dict:
    return {"time": result.time, "objective": result.objective, "dual_bound": result.dual_bound,
            "relative_gap": result.relative_gap, "max_residual": result.max_residual, "status": result.status,
            "iterations": result.iterations}


def compare(rows: list[dict], eigh: dict) -> None:
    """Time in eigh; for Peng-Wei the SCS time over the generic time and each objective's
    distance to the generic solver's certified interval; for SSC the time over admm's."""
    for r in rows:
        r["eigh_time"] = eigh.get(r["n"])
        if np.isfinite(r.get("time", np.nan)) and r["eigh_time"]:
            r["in_eigh"] = r["time"] / r["eigh_time"]
        same = {q["method"]: q for q in rows if q["problem"] == r["problem"] and q["n"] == r["n"] and "time" in q}
        generic = same.get("generic")
        if r["problem"] == "peng-wei" and generic and generic.get("dual_bound") is not None and "objective" in r:
            low, high = sorted((generic["objective"], generic["dual_bound"]))
            r["error_vs_certified"] = max(low - r["objective"], r["objective"] - high, 0.0) / abs(generic["objective"])
            # a speed-up only where the generic solver converged (not the ratio of two time limits)
            if r["method"].startswith("generic") and r.get("status") == "optimal" and "scs" in same \
                    and np.isfinite(same["scs"].get("time", np.nan)):
                r["scs_over_generic"] = same["scs"]["time"] / r["time"]
        if r["problem"] == "ssc" and r["method"] == "generic" and "admm" in same:
            r["generic_over_admm"] = r["time"] / same["admm"]["time"]


def markdown(rows: list[dict]) -> str:
    header = ["problem", "n", "method", "time (s)", "in eigh", "SCS time / generic time", "generic time / admm time",
              "objective", "certified gap", "error vs certified", "max residual", "iterations", "peak RSS (MB)",
              "status"]
    return markdown_table(header, [
        [r["problem"], r["n"], r["method"], fmt(r.get("time"), ".2f"), fmt(r.get("in_eigh"), ".0f"),
         fmt(r.get("scs_over_generic"), ".1f"), fmt(r.get("generic_over_admm"), ".2f"), fmt(r.get("objective"), ".8g"),
         fmt(r.get("relative_gap"), ".1e"), fmt(r.get("error_vs_certified"), ".1e"), fmt(r.get("max_residual"), ".1e"),
         r.get("iterations", "–"), fmt(r.get("peak_rss_mb"), ".0f"), r["status"]]
        for r in rows])


def plot(rows, path):
    import matplotlib.pyplot as plt

    panels = [(problem, title) for problem, title in [("peng-wei", "Peng-Wei SDP, digits"), ("ssc", "SSC (7), digits")]
              if any(r["problem"] == problem for r in rows)]  # a panel per problem measured
    fig, axes = plt.subplots(1, len(panels), figsize=(5 * len(panels), 4), squeeze=False)
    for ax, (problem, title) in zip(axes[0], panels):
        mine = [r for r in rows if r["problem"] == problem]
        plot_times(ax, mine, dict.fromkeys(r["method"] for r in mine), title)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pw-sizes", type=int, nargs="*", default=[300, 500, 1000])
    parser.add_argument("--ssc-sizes", type=int, nargs="*", default=[500, 1000])
    parser.add_argument("--k", type=int, default=10, help="clusters of the Peng-Wei SDP")
    parser.add_argument("--tol", type=float, default=1e-6, help="tol and residual_tol of the generic solver (Peng-Wei)")
    parser.add_argument("--scs-eps", type=float, default=1e-6)
    parser.add_argument("--scs-max-n", type=int, default=500, help="largest n for SCS")
    parser.add_argument("--scs-time-limit", type=float, default=None,
                        help="SCS's own time limit (time_limit_secs): it then returns its last iterate")
    parser.add_argument("--time-limit", type=float, default=None, help="time limit of the generic solver")
    parser.add_argument("--timeout", type=float, default=3600.0, help="kill a run after this many seconds")
    parser.add_argument("--name", default="generic_speed", help="results file name (without suffix)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of each run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)

    from tqdm import tqdm

    jobs = [("peng-wei", n, m) for n in args.pw_sizes for m in ("generic", "scs")
            if m == "generic" or n <= args.scs_max_n]
    jobs += [("ssc", n, m) for n in args.ssc_sizes for m in ("admm", "generic")]
    rows, done = [], 0
    for problem, n, method in tqdm(jobs, desc="bench generic"):
        row = {"problem": problem, "n": n, "method": method}
        if problem == "peng-wei":
            rows.append(run_case(__file__, "peng_wei_case", n, method, args.k, args.tol, args.scs_eps, None,
                                 args.scs_time_limit, args.time_limit, timeout=args.timeout, threads=args.threads,
                                 row=row))
            scs = rows[-1]
            if method == "scs" and np.isfinite(scs.get("max_residual", np.nan)):
                # matched accuracy: the generic solver held to the worst residual SCS reached (by the
                # relaxation's own residuals) and to the same certified gap tol
                matched = max(scs["max_residual"], args.tol)
                rows.append(run_case(__file__, "peng_wei_case", n, "generic (SCS's accuracy)", args.k, args.tol,
                                     args.scs_eps, matched, None, args.time_limit, timeout=args.timeout,
                                     threads=args.threads,
                                     row={"problem": problem, "n": n, "method": "generic (SCS's accuracy)",
                                          "residual_tol": matched}))
        else:
            rows.append(run_case(__file__, "ssc_case", n, method, 1e-7, timeout=args.timeout, threads=args.threads,
                                 row=row))
        for r in rows[done:]:
            tqdm.write(f"{problem} n={n} {r['method']}: {r['status']}  {fmt(r.get('time'), '.2f')} s")
        done = len(rows)
    eigh = {n: eigh_seconds(n, args.threads) for n in sorted({n for _, n, _ in jobs})}
    compare(rows, eigh)
    description = (
        f"The generic solver reads each problem from its cvxpy statement (cvxclust.solve). Peng-Wei SDP on digits "
        f"(linear kernel of the pixels scaled to [0, 1], k = {args.k}): generic at tol = residual_tol = {args.tol:g} "
        f"against cvxpy+SCS at eps = {args.scs_eps:g} (n <= {args.scs_max_n}); 'generic (SCS's accuracy)': the generic "
        f"solver at the same tol with residual_tol set to the worst residual SCS's answer has (matched accuracy; "
        f"its certified gap is still below tol); 'error vs certified': the distance of "
        "the objective to the generic solver's certified interval, relative. SSC (7) on digits (rbf, median width): "
        "generic against the hand-written ADMM, both at tol = residual_tol = 1e-7. Times are wall seconds of the "
        "solve (the generic time includes reading the problem; cvxpy: compilation + solver); 'in eigh': the time in "
        f"units of one full numpy.linalg.eigh of the same order, timed in the same run; {args.threads} BLAS thread(s) "
        "per run."
    )
    if args.scs_time_limit is not None:
        description += (f" SCS ran with its own time limit of {args.scs_time_limit:g} s: where it stopped there, its "
                        "answer is its last iterate (status optimal_inaccurate), and 'SCS time / generic time' "
                        "compares the time SCS took to reach its answer's accuracy with the generic solver's.")
    if args.time_limit is not None:
        description += f" The generic solver ran with a time limit of {args.time_limit:g} s."
    table = markdown(rows)
    write_results(args.out, args.name, "The generic solver: speed against cvxpy+SCS and a hand-written solver",
                  description, table, {"options": options_record(args), "eigh_seconds": eigh, "rows": rows}, env,
                  plot=lambda path: plot(rows, path))
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
