"""Speed of the CLUHSIC solvers: the exact SDP (5.23) by ADMM against cvxpy+SCS/Clarabel on the
same instance, and the low-rank SDP (5.30) alone on large problems.

    python benchmarks/bench_cluhsic.py                 # SDP at m = 40 (c = 4); low-rank at m = 500, 1000, 2000 (c = 10)
    python benchmarks/bench_cluhsic.py --sdp-sizes 40 --lowrank-sizes 500   # a quicker run
    python benchmarks/bench_cluhsic.py --sdp-sizes 20 30 40 50 60 80 --sdp-methods admm admm-plain scs \
        --lowrank-sizes --name cluhsic_sdp_order      # the SDP's cost against its order m c
    python benchmarks/bench_cluhsic.py --structure ring --sdp-methods admm admm-plain scs \
        --lowrank-sizes --name cluhsic_speed_ring     # another structure, another symmetry

SDP instances: the first 4 clusters of the rotating-object chain
(:func:`cvxclust.datasets.rotating_object`), m / 4 images each, centred rbf kernel with the median
width, output kernel of ``chain(4)`` (``--structure``: ``ring(4)`` or ``flat(4)``).  "admm-plain"
is the ADMM without the symmetry reduction of its p.s.d. projection (``symmetry=False``): the
relabelings that keep the output kernel split it into blocks, two of order 2m for a chain.
SCS's ``eps`` bounds its own residuals, not the relaxation's, so SCS runs at its default (1e-4)
and at tighter settings, to find the first one whose worst residual matches the ADMM's.  "in
eigh": the time in units of one full ``numpy.linalg.eigh`` of the mc x mc variable, timed in the
same run.  The figure follows the
ADMM's certified gap and worst residual through its checks, beside where each SCS run ended.

Low-rank instances: digits (m images, 10 classes), centred rbf kernel, ``chain(10)`` (the digits
do not form a chain: these rows measure speed only); rank 10, ``bias`` 0.1 (the paper's gamma), the
default start (the rounded spectral relaxation aligned to A, whose objective and NMI are
reported beside), followed by the rounding of Section 5.3; at the largest size also with
``restore_stall=5e-3``, which stops sooner.  Every run is a process of its own
(:func:`_harness.run_case`).  Writes ``benchmarks/results/cluhsic_speed.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _harness import RESULTS, eigh_seconds, environment, fmt, markdown_table, options_record, run_case, write_results

# scs: eps 1e-4 (its default); scs-<eps>: tighter; clarabel: eps 1e-8
SDP_METHODS = ("admm", "admm-plain", "scs", "scs-1e-5", "scs-5e-6", "scs-3e-6", "scs-1e-6", "clarabel")


def sdp_instance(m: int, structure: str = "chain"):
    from cvxclust import structures
    from cvxclust.datasets import rotating_object
    from cvxclust.kernels import center, rbf

    X, y, _ = rotating_object("chain")
    keep = np.concatenate([np.flatnonzero(y == k)[: m // 4] for k in range(4)])
    return center(rbf(X[keep])), structures.output_kernel(getattr(structures, structure)(4)), y[keep]


def sdp_case(m: int, method: str, time_limit: float, structure: str = "chain") -> dict:
    from cvxclust.cluhsic import CLUHSICSDP

    K, A, _ = sdp_instance(m, structure)
    relaxation = CLUHSICSDP(K, A)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method.startswith("admm"):
            result = relaxation.solve("admm", time_limit=time_limit, symmetry=method == "admm")
        else:
            solver, eps = ("CLARABEL", 1e-8) if method == "clarabel" else ("SCS", float(method[4:] or 1e-4))
            result = relaxation.solve("reference", solver=solver, eps=eps)
    row = {"time": result.time, "objective": result.objective, "dual_bound": result.dual_bound,
           "relative_gap": result.relative_gap, "max_residual": result.max_residual,
           "iterations": result.iterations, "status": result.status}
    if method.startswith("admm"):
        row["psd_blocks"] = result.extras["psd_blocks"]
    if method == "admm":  # the checks' (time, certified gap, worst residual), for the figure
        row["trace"] = [(h["time"], h["relative_gap"], h["max_residual"]) for h in result.history
                        if h.get("relative_gap") is not None]
    return row


def lowrank_case(m: int, time_limit: float, options: dict) -> dict:
    from cvxclust.cluhsic import lowrank, objective, partition_matrix, round_lowrank
    from cvxclust.datasets import load_dataset
    from cvxclust.kernels import center, rbf
    from cvxclust.metrics import nmi
    from cvxclust.structures import chain, output_kernel

    X, y = load_dataset("digits", n_samples=m)
    K, A = center(rbf(X)), output_kernel(chain(10))
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = lowrank(K, A, rank=10, bias=0.1, time_limit=time_limit, random_state=0, **options)
    labels, _ = round_lowrank(result.X, m, 10)  # X is the factor Y
    total = time.perf_counter() - start
    start_labels = result.extras["start_labels"]  # the rounded spectral relaxation, aligned to A
    return {
        "time": total, "solve_time": result.time, "objective": result.objective,
        "max_residual": result.max_residual, "iterations": result.iterations,
        "inner_iterations": result.extras["inner_iterations"], "status": result.status, "nmi": nmi(y, labels),
        "rounded_objective": objective(K, A, partition_matrix(labels, 10, normalization="l2")),
        "start_objective": objective(K, A, partition_matrix(start_labels, 10, normalization="l2")),
        "start_nmi": nmi(y, start_labels),
    }


def compare(rows: list[dict], eigh: dict) -> None:
    """Below the best certified bound, gap to Clarabel, time / ADMM time, time in eigh."""
    for r in rows:
        group = [q for q in rows if q["m"] == r["m"]]
        # the smallest certified upper bound of the run bounds every method's suboptimality
        bounds = [q["dual_bound"] for q in group if q.get("dual_bound") is not None]
        if bounds and "objective" in r:
            r["gap_bound"] = (min(bounds) - r["objective"]) / abs(min(bounds))
        ref = {meth: next((q for q in group if q["method"] == meth and "objective" in q), None)
               for meth in ("admm", "clarabel")}
        if ref["clarabel"] is not None and "objective" in r:
            r["gap_clarabel"] = abs(r["objective"] - ref["clarabel"]["objective"]) / abs(ref["clarabel"]["objective"])
        if ref["admm"] is not None and "objective" in r:
            r["slowdown"] = r["time"] / ref["admm"]["time"]
        r["eigh_time"] = eigh.get(r["m"])
        if r["eigh_time"] and np.isfinite(r.get("time", np.nan)):
            r["in_eigh"] = r["time"] / r["eigh_time"]


def plot(sdp_rows, path, structure: str) -> None:
    """Per m: the ADMM's certified gap and worst residual at its checks against time, and where
    each SCS run ended (its certified gap and worst residual), with the ADMM's two targets."""
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullFormatter

    sizes = sorted({r["m"] for r in sdp_rows if r.get("trace")})
    columns = min(len(sizes), 3)
    rows = -(-len(sizes) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(5.5 * columns, 4.2 * rows), squeeze=False)
    for ax in axes.ravel()[len(sizes):]:
        ax.set_visible(False)
    for ax, m in zip(axes.ravel(), sizes):
        group = [r for r in sdp_rows if r["m"] == m]
        admm = next(r for r in group if r.get("trace"))
        t, gap, residual = (np.array(v, dtype=float) for v in zip(*admm["trace"]))
        ax.semilogy(t, gap, "C0-", label="ADMM certified gap")
        ax.semilogy(t, residual, "C1-", label="ADMM worst residual")
        scs = [r for r in group if r["method"].startswith("scs") and np.isfinite(r.get("time", np.nan))]
        for k, r in enumerate(scs):
            eps = r["method"][4:] or "1e-4 (default)"
            ax.semilogy(r["time"], r["relative_gap"], "C0o", mfc="none")
            ax.semilogy(r["time"], r["max_residual"], "C1s", mfc="none")
            # runs that end close together get their labels above and below in turn
            ax.annotate(f"SCS {eps}", (r["time"], r["max_residual"]), textcoords="offset points",
                        xytext=(4, 4 if k % 2 == 0 else -11), fontsize=7)
        ax.axhline(1e-4, color="C0", ls=":", lw=1, label="tol (gap)")
        ax.axhline(1e-5, color="C1", ls=":", lw=1, label="residual_tol")
        ax.plot([], [], "ko", mfc="none", label="SCS: gap (o), residual (s)")
        ax.set_xscale("log")
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("wall time (s)")
        ax.set_title(f"SDP (5.23), m = {m}, c = 4, {structure}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def markdown(sdp_rows, lowrank_rows) -> str:
    sdp = markdown_table(
        ["m", "c", "method", "time (s)", "in eigh", "time / ADMM time", "rel. gap to Clarabel", "below best bound",
         "certified gap", "max residual", "iterations", "p.s.d. blocks", "peak RSS (MB)", "status"],
        [[r["m"], 4, r["method"], fmt(r.get("time"), ".2f"), fmt(r.get("in_eigh"), ".1f"),
          fmt(r.get("slowdown"), ".1f"), fmt(r.get("gap_clarabel"), ".1e"), fmt(r.get("gap_bound"), ".1e"),
          fmt(r.get("relative_gap"), ".1e"), fmt(r.get("max_residual"), ".1e"), r.get("iterations", "–"),
          " + ".join(map(str, r["psd_blocks"])) if r.get("psd_blocks") else "–",
          fmt(r.get("peak_rss_mb"), ".0f"), r["status"]] for r in sdp_rows])
    low = markdown_table(
        ["m", "c", "method", "time incl. rounding (s)", "solve (s)", "objective tr((A kron K) YY^T)", "max residual",
         "outer / inner iterations", "rounded partition (2.4)", "its start (2.4)", "NMI rounded / start (digits)",
         "peak RSS (MB)", "status"],
        [[r["m"], 10, r["method"], fmt(r.get("time"), ".1f"), fmt(r.get("solve_time"), ".1f"),
          fmt(r.get("objective"), ".4g"), fmt(r.get("max_residual"), ".1e"),
          f"{r.get('iterations', '–')} / {r.get('inner_iterations', '–')}", fmt(r.get("rounded_objective"), ".4g"),
          fmt(r.get("start_objective"), ".4g"), f"{fmt(r.get('nmi'), '.3f')} / {fmt(r.get('start_nmi'), '.3f')}",
          fmt(r.get("peak_rss_mb"), ".0f"), r["status"]] for r in lowrank_rows])
    sections = [("SDP (5.23)", sdp, sdp_rows), ("Low-rank SDP (5.30)", low, lowrank_rows)]
    return "\n\n".join(f"### {title}\n\n{table}" for title, table, rows in sections if rows)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sdp-sizes", type=int, nargs="*", default=[40],
                        help="m of the SDP instances (c = 4: at most 80, the images of the first 4 clusters)")
    parser.add_argument("--sdp-methods", nargs="+", choices=SDP_METHODS, default=list(SDP_METHODS),
                        help="methods of the SDP rows")
    parser.add_argument("--structure", choices=("chain", "ring", "flat"), default="chain",
                        help="the output structure of the SDP rows (on 4 clusters)")
    parser.add_argument("--lowrank-sizes", type=int, nargs="*", default=[500, 1000, 2000])
    parser.add_argument("--clarabel-max-m", type=int, default=0,
                        help="largest m for Clarabel (an interior-point method on an mc x mc variable: "
                             "its memory outgrows a workstation from m = 40 on)")
    parser.add_argument("--time-limit", type=float, default=120.0, help="time limit of the SDP ADMM (s)")
    parser.add_argument("--lowrank-time-limit", type=float, default=300.0,
                        help="time limit of the low-rank solver (s): long enough to see when it converges")
    parser.add_argument("--timeout", type=float, default=900.0, help="kill a run after this many seconds")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads of each run (default: the library's)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--name", default="cluhsic_speed", help="results file name (without extension)")
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)
    from tqdm import tqdm

    if any(not 4 <= m <= 80 for m in args.sdp_sizes):
        parser.error(f"--sdp-sizes must lie in [4, 80], got {args.sdp_sizes}")
    jobs = [(m, meth) for m in args.sdp_sizes for meth in args.sdp_methods
            if not (meth == "clarabel" and m > args.clarabel_max_m)]
    sdp_rows = []
    for m, meth in tqdm(jobs, desc="SDP (5.23)"):
        sdp_rows.append(run_case(__file__, "sdp_case", m, meth, args.time_limit, args.structure, timeout=args.timeout,
                                 threads=args.threads, row={"m": m, "method": meth}))
        tqdm.write(f"m={m} {meth}: {sdp_rows[-1]['status']} {fmt(sdp_rows[-1].get('time'), '.2f')} s")
    compare(sdp_rows, {m: eigh_seconds(4 * m, args.threads) for m in args.sdp_sizes})
    lowrank_rows = []
    jobs = [(m, {}) for m in args.lowrank_sizes]
    if args.lowrank_sizes:
        jobs.append((max(args.lowrank_sizes), {"restore_stall": 5e-3}))
    for m, options in tqdm(jobs, desc="low-rank (5.30)"):
        name = " ".join(["lowrank r=10"] + [f"{k}={v}" for k, v in options.items()])
        lowrank_rows.append(run_case(__file__, "lowrank_case", m, args.lowrank_time_limit, options,
                                     timeout=args.timeout, threads=args.threads, row={"m": m, "method": name}))
        tqdm.write(f"m={m} {name}: {lowrank_rows[-1]['status']} {fmt(lowrank_rows[-1].get('time'), '.1f')} s")
    description = (
        f"SDP (5.23): rotating-object chain, first 4 clusters, centred rbf, A = {args.structure}(4); 'admm-plain': "
        "the ADMM without the symmetry reduction of its p.s.d. projection; SCS at eps = 1e-4 (its "
        "default) down to 1e-6, Clarabel eps = 1e-8; 'below best bound': (smallest certified upper bound of "
        "the run - objective) / bound; ADMM defaults (certified relative gap <= 1e-4, residuals <= 1e-5), time "
        f"limit {args.time_limit:g} s; 'in eigh': time / one full eigh of the mc x mc variable. Low-rank (5.30), "
        f"time limit {args.lowrank_time_limit:g} s: digits, centred rbf, A = chain(10), rank 10, bias 0.1, "
        "then the rounding of Section 5.3."
    )
    table = markdown(sdp_rows, lowrank_rows)
    write_results(args.out, args.name, "CLUHSIC: the SDP (5.23) and the low-rank SDP (5.30)", description,
                  table, {"options": options_record(args), "sdp": sdp_rows, "lowrank": lowrank_rows}, env,
                  plot=((lambda path: plot(sdp_rows, path, args.structure))
                        if any(r.get("trace") for r in sdp_rows) else None))
    print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
