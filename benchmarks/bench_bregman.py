"""Speed of the bregman relaxations' scalable solvers against cvxpy+SCS on the same instance, and
of the scalable solvers alone on large instances.

    python benchmarks/bench_bregman.py                       # t = 50, 100, 200, 300 (+ 1000, 2000 alone)
    python benchmarks/bench_bregman.py --sizes 50 100 --big 1000 --scs-timeout 120   # quicker

Relaxations (:mod:`cvxclust.bregman`):

* ``conditional-jc``: :class:`ConditionalJC` (10) over M1, solved by its default method (certified
  relative gap ``--tol``, default 1e-4): Davis-Yin splitting for the squared Euclidean
  divergence, the ADMM of Section 3.1.1 for KL; the Euclidean rows add the ADMM as a second
  scalable row (``--no-admm`` skips it);
* ``conditional``: :class:`Conditional` (15)-(17) over M2, Algorithm 1 with local search
  (``alpha`` = ``--alpha``);
* ``discriminative`` / ``joint``: :class:`Discriminative` (29) and :class:`Joint` (33).

Instance: Digits (:func:`cvxclust.datasets.load_dataset`, t points subsampled stratified by
class, seed 0; t = 2000 adds one-pixel-shifted copies), d = 10 clusters, features shifted to be
nonnegative (minus the column minimum) and scaled to unit variance as in Section 6 of the paper
(constant pixels, zero variance, are dropped).  Divergence: squared Euclidean (linear transfer);
``--divergences euclidean kl`` adds the generalized KL rows (the shifted data are nonnegative,
the KL domain).

For every (t, model) the script runs, each in its own process with one BLAS thread
(:func:`_harness.run_case`: its peak memory is its own), killed after ``--timeout`` /
``--scs-timeout`` seconds:

* the scalable solver (time limit ``--time-limit``, default 120 s);
* cvxpy + SCS at ``eps = --scs-eps`` (default 1e-6: tight enough that SCS's objective agrees with
  a certified relative gap of 1e-4; the table reports its gap to the certified bound);
* cvxpy + SCS at its default ``eps = 1e-4``.

Reported: wall time of the solve (for cvxpy: compilation + solver), the time in units of one full
``numpy.linalg.eigh`` of a t x t matrix timed in the same run ("in eigh"), objective (each
recomputed by the relaxation's own ``objective``, so the rows are comparable), the scalable
solver's certified relative gap, the relative objective gap of each row to the best certified
lower bound of the (t, model) group ("above bound"), the worst residual, iterations, status,
peak RSS, and SCS time / the scalable solver's time.  Writes
``benchmarks/results/bregman_speed.{md,json}`` after every run, so a partial run keeps what it
measured.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from _harness import RESULTS, eigh_seconds, environment, fmt, markdown_table, options_record, run_case, write_results

MODELS = ("conditional-jc", "conditional", "discriminative", "joint")
SCALABLE = {"ours": "auto", "ours-admm": "admm"}  # row method -> solve(method): the default, and the ADMM


def load_features(t: int, random_state: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Digits, t points stratified, shifted nonnegative and scaled to unit variance (Section 6)."""
    from cvxclust.datasets import load_dataset

    X, y = load_dataset("digits", n_samples=t, random_state=random_state)
    X = X - X.min(axis=0)
    std = X.std(axis=0)
    keep = std > 0  # a constant pixel has no variance to scale
    return X[:, keep] / std[keep], y


def make_relaxation(model: str, X: np.ndarray, divergence: str, d: int, opts: dict):
    from cvxclust import bregman

    if model == "conditional-jc":
        return bregman.ConditionalJC(X, divergence, d)
    if model == "conditional":
        return bregman.Conditional(X, divergence, d, alpha=opts["alpha"])
    if model == "discriminative":
        return bregman.Discriminative(X, d, alpha=opts["gamma"])
    return bregman.Joint(X, divergence, d, alpha=opts["alpha"], beta=opts["beta"])


def solve_case(t: int, model: str, divergence: str, method: str, opts: dict) -> dict:
    X, _ = load_features(t)
    relaxation = make_relaxation(model, X, divergence, opts["n_clusters"], opts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in SCALABLE:
            result = relaxation.solve(SCALABLE[method], tol=opts["tol"], time_limit=opts["time_limit"])
        else:
            eps = opts["scs_eps"] if method == "scs" else 1e-4
            result = relaxation.solve("reference", solver="SCS", eps=eps)
    return {"solver": result.method, "time": result.time, "objective": result.objective,
            "dual_bound": result.dual_bound, "relative_gap": result.relative_gap,
            "max_residual": result.max_residual, "iterations": result.iterations, "status": result.status}


def compare(rows: list[dict], eigh: dict) -> None:
    """Fill in 'above bound' (to the best certified bound of the group), the SCS speed ratios and
    the time in eigh."""
    groups = {}
    for r in rows:
        groups.setdefault((r["t"], r["model"], r["divergence"]), []).append(r)
        r["eigh_time"] = eigh.get(r["t"])
        if r["eigh_time"] and np.isfinite(r.get("time", np.nan)):
            r["in_eigh"] = r["time"] / r["eigh_time"]
    for group in groups.values():
        bounds = [q["dual_bound"] for q in group if q.get("dual_bound") is not None and np.isfinite(q["dual_bound"])]
        ours = next((q for q in group if q["method"] == "ours" and "objective" in q), None)
        for r in group:
            if bounds and "objective" in r and np.isfinite(r["objective"]):
                r["above_bound"] = (r["objective"] - max(bounds)) / max(abs(r["objective"]), 1e-12)
            if ours is not None and "objective" in r and r is not ours:
                r["gap_to_ours"] = abs(r["objective"] - ours["objective"]) / max(abs(ours["objective"]), 1e-12)
        for r in group:
            if r["method"] not in SCALABLE or "objective" not in r:
                continue
            for m in ("scs", "scs-default"):
                q = next((q for q in group if q["method"] == m), None)
                if q is None:
                    continue
                if "objective" in q:
                    r[f"speedup_{m}"] = q["time"] / r["time"]
                elif q.get("status", "").startswith("killed"):
                    # a lower bound on the ratio: SCS did not finish within its timeout
                    r[f"speedup_{m}_min"] = float(q["status"].split()[2]) / r["time"]


def ratio(r, m):
    if f"speedup_{m}" in r:
        return fmt(r[f"speedup_{m}"], ".1f")
    if f"speedup_{m}_min" in r:
        return "> " + fmt(r[f"speedup_{m}_min"], ".1f")
    return "–"


def markdown(rows: list[dict]) -> str:
    header = ["t", "model", "div.", "method", "time (s)", "in eigh", "SCS(tight) / ours", "SCS(default) / ours",
              "objective", "certified gap", "above best bound", "gap to ours", "max residual", "iterations",
              "peak RSS (MB)", "status"]
    lines = []
    for r in rows:
        ours = r["method"] in SCALABLE
        if ours:
            name = f"ours ({r.get('solver', SCALABLE[r['method']])})"
        else:
            name = {"scs": "cvxpy+SCS tight", "scs-default": "cvxpy+SCS eps 1e-4"}[r["method"]]
        lines.append([r["t"], r["model"], r["divergence"], name,
                      fmt(r.get("time"), ".2f"), fmt(r.get("in_eigh"), ".1f"),
                      ratio(r, "scs") if ours else "", ratio(r, "scs-default") if ours else "",
                      fmt(r.get("objective"), ".6g"), fmt(r.get("relative_gap"), ".1e"),
                      fmt(r.get("above_bound"), ".1e"), fmt(r.get("gap_to_ours"), ".1e"),
                      fmt(r.get("max_residual"), ".1e"), r.get("iterations", "–"), fmt(r.get("peak_rss_mb"), ".0f"),
                      r["status"]])
    return markdown_table(header, lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[50, 100, 200, 300])
    parser.add_argument("--big", type=int, nargs="*", default=[1000, 2000], help="sizes for the scalable solvers alone")
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument("--divergences", nargs="+", default=["euclidean"], choices=["euclidean", "kl"])
    parser.add_argument("--n-clusters", type=int, default=10)
    parser.add_argument("--alpha", type=float, default=1e-2, help="alpha of Conditional and Joint")
    parser.add_argument("--beta", type=float, default=1e-2, help="beta of Joint")
    parser.add_argument("--gamma", type=float, default=1e-3, help="gamma of Discriminative")
    parser.add_argument("--tol", type=float, default=1e-4, help="certified relative gap of the scalable solvers")
    parser.add_argument("--time-limit", type=float, default=120.0, help="time limit of the scalable solvers (s)")
    parser.add_argument("--timeout", type=float, default=300.0, help="kill a scalable run after this many s")
    parser.add_argument("--scs-eps", type=float, default=1e-6, help="tight SCS eps_abs = eps_rel")
    parser.add_argument("--scs-timeout", type=float, default=600.0, help="kill an SCS run after this many s")
    parser.add_argument("--no-scs-default", action="store_true", help="skip SCS at its default eps 1e-4")
    parser.add_argument("--no-admm", action="store_true", help="skip the ADMM rows of conditional-jc (euclidean)")
    parser.add_argument("--methods", nargs="+", default=["ours", "ours-admm", "scs", "scs-default"],
                        choices=["ours", "ours-admm", "scs", "scs-default"], help="rows to run (e.g. only ours-admm)")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of each run (default 1)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)

    opts = {"n_clusters": args.n_clusters, "alpha": args.alpha, "beta": args.beta, "gamma": args.gamma,
            "tol": args.tol, "time_limit": args.time_limit, "scs_eps": args.scs_eps}
    scs = [m for m in ("scs", "scs-default") if m in args.methods and not (m == "scs-default" and args.no_scs_default)]
    jobs = []
    for div in args.divergences:
        for model in args.models:
            if model == "discriminative" and div != args.divergences[0]:
                continue  # no divergence in (29): one row set is enough
            ours = [m for m in ("ours", "ours-admm") if m in args.methods and (m == "ours" or (
                model == "conditional-jc" and div == "euclidean" and not args.no_admm))]
            for t in args.sizes:
                jobs += [(t, model, div, m) for m in ours + scs]
            jobs += [(t, model, div, m) for t in args.big for m in ours]
    eigh = {t: eigh_seconds(t, args.threads) for t in sorted({job[0] for job in jobs})}
    description = (
        f"Bregman relaxations on Digits (d = {args.n_clusters}; t points stratified; features shifted "
        "nonnegative and scaled to unit variance, constant pixels dropped). Times are wall seconds of the "
        f"solve (cvxpy: compilation + SCS); 'in eigh': the time in units of one full eigh of a t x t matrix. "
        f"Scalable solvers: certified relative gap tol = {args.tol:g}, time limit {args.time_limit:g} s; "
        f"Conditional/Joint alpha = {args.alpha:g}, Joint beta = {args.beta:g}, Discriminative gamma = "
        f"{args.gamma:g}. SCS tight: eps = {args.scs_eps:g}; SCS default: eps = 1e-4; SCS runs killed after "
        f"{args.scs_timeout:g} s ('> r' = the speed-up is at least r). 'above best bound': (objective - best "
        "certified lower bound of the group) / |objective| (negative: the point is infeasible by that much in "
        "objective terms, e.g. SCS's residuals); 'gap to ours': relative objective difference to the scalable "
        "solver's."
    )
    rows = []
    for i, (t, model, div, method) in enumerate(jobs, 1):
        timeout = args.scs_timeout if method.startswith("scs") else args.timeout
        print(f"[{i}/{len(jobs)}] t={t} {model} {div} {method} ...", file=sys.stderr, flush=True)
        rows.append(run_case(__file__, "solve_case", t, model, div, method, opts, timeout=timeout,
                             threads=args.threads, row={"t": t, "model": model, "divergence": div, "method": method}))
        print(f"    {rows[-1]['status']}  {fmt(rows[-1].get('time'), '.2f')} s", file=sys.stderr, flush=True)
        compare(rows, eigh)
        write_results(args.out, "bregman_speed", "Bregman relaxations: scalable solvers against cvxpy+SCS",
                      description, markdown(rows),
                      {"options": options_record(args), "eigh_seconds": eigh, "rows": rows}, env)
    print(markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
