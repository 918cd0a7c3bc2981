"""Speed of the bregman relaxations' scalable solvers against cvxpy+SCS on the same instance, and
of the scalable solvers alone on large instances (issue 5, part 8).

    python benchmarks/bench_bregman.py                       # t = 50, 100, 200, 300 (+ 1000, 2000 alone)
    python benchmarks/bench_bregman.py --sizes 50 100 --big 1000 --scs-timeout 120   # quicker

Relaxations (:mod:`cvxclust.bregman`):

* ``conditional-jc``: :class:`ConditionalJC` (10) over M1, solved by its default method (certified
  relative gap ``--tol``, default 1e-4, the issue's criterion): Davis-Yin splitting for the
  squared Euclidean divergence, the ADMM of Section 3.1.1 for KL; the Euclidean rows add the ADMM
  as a second scalable row (``--no-admm`` skips it);
* ``conditional``: :class:`Conditional` (15)-(17) over M2, Algorithm 1 with local search
  (``alpha`` = ``--alpha``);
* ``discriminative`` / ``joint``: :class:`Discriminative` (29) and :class:`Joint` (33), each
  only if its module imports (``--models`` selects; by default they are included when their
  modules exist: run their tests first, the script does not).

Instance: Digits (:func:`cvxclust.datasets.load_dataset`, t points subsampled stratified by
class, seed 0; t = 2000 adds one-pixel-shifted copies), d = 10 clusters, features shifted to be
nonnegative (minus the column minimum) and scaled to unit variance as in Section 6 of the paper
(constant pixels, zero variance, are dropped: 61 of 64 features remain at t >= 100).  Divergence:
squared Euclidean (linear transfer); ``--divergences euclidean kl`` adds the generalized KL rows
(the shifted data are nonnegative, the KL domain).

For every (t, model) the script runs, each in a fresh subprocess (so that its peak RSS,
``ru_maxrss``, is its own) killed after ``--timeout`` / ``--scs-timeout`` seconds:

* the scalable solver (time limit ``--time-limit``, default 120 s);
* cvxpy + SCS at ``eps = --scs-eps`` (default 1e-6: tight enough that SCS's objective agrees with
  a certified relative gap of 1e-4; the table reports the measured gap to our certified bound);
* cvxpy + SCS at its default ``eps = 1e-4``.

Reported: wall time of the solve (for cvxpy: compilation + solver), objective (each recomputed
by the relaxation's own ``objective``, so the rows are comparable), the scalable solver's
certified relative gap ``(objective - dual_bound) / |objective|``, the relative objective gap of
each row to the best certified lower bound of the (t, model) group ("above bound"), the worst
residual, iterations, status, peak RSS, and SCS time / our time.  Writes
``benchmarks/results/bregman_speed.{md,json}`` (the JSON after every job, so a partial run keeps
what it measured).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from _tables import fmt

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
    if model == "conditional-jc":
        from cvxclust.bregman._conditional_jc import ConditionalJC

        return ConditionalJC(X, divergence, d)
    if model == "conditional":
        from cvxclust.bregman._conditional import Conditional

        return Conditional(X, divergence, d, alpha=opts["alpha"])
    if model == "discriminative":
        from cvxclust.bregman._discriminative import Discriminative

        return Discriminative(X, d, gamma=opts["gamma"])
    from cvxclust.bregman._joint import Joint

    return Joint(X, divergence, d, alpha=opts["alpha"], beta=opts["beta"])


def worker(t: int, model: str, divergence: str, method: str, opts: dict) -> dict:
    import warnings

    X, _ = load_features(t)
    relaxation = make_relaxation(model, X, divergence, opts["n_clusters"], opts)
    base_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method in SCALABLE:
            result = relaxation.solve(SCALABLE[method], tol=opts["tol"], time_limit=opts["time_limit"])
        else:
            eps = opts["scs_eps"] if method == "scs" else 1e-4
            result = relaxation.solve("reference", solver="SCS", eps=eps)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "t": t, "model": model, "divergence": divergence, "method": method,
        "solver": result.method, "time": result.time, "objective": result.objective,
        "dual_bound": result.dual_bound, "relative_gap": result.relative_gap,
        "max_residual": result.max_residual, "iterations": result.iterations, "status": result.status,
        "peak_rss_mb": peak / 1024, "extra_rss_mb": (peak - base_rss) / 1024,
    }


def run(t: int, model: str, divergence: str, method: str, opts: dict, timeout: float) -> dict:
    cmd = [sys.executable, __file__, "--worker", json.dumps([t, model, divergence, method, opts])]
    row = {"t": t, "model": model, "divergence": divergence, "method": method, "time": float("nan")}
    start = time.perf_counter()
    try:
        # one thread for every BLAS in the worker (ours and SCS alike), as the header says
        env = os.environ | {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True, env=env)
        return json.loads(out.stdout.strip().splitlines()[-1])
    except subprocess.TimeoutExpired:
        row["status"] = f"killed after {timeout:.0f} s"
    except subprocess.CalledProcessError as err:
        tail = (err.stderr or "").strip().splitlines()[-1:]
        row["status"] = f"failed: {' '.join(tail)[:100]}"
    row["wall"] = time.perf_counter() - start
    return row


def compare(rows: list[dict]) -> None:
    """Fill in 'above bound' (to the best certified bound of the group) and the SCS speed ratios."""
    groups = {}
    for r in rows:
        groups.setdefault((r["t"], r["model"], r["divergence"]), []).append(r)
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
    lines = [
        "| t | model | div. | method | time (s) | SCS(tight) / ours | SCS(default) / ours | objective | "
        "certified gap | above best bound | gap to ours | max residual | iterations | peak RSS (MB) | status |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ours = r["method"] in SCALABLE
        if ours:
            name = f"ours ({r.get('solver', SCALABLE[r['method']])})"
        else:
            name = {"scs": "cvxpy+SCS tight", "scs-default": "cvxpy+SCS eps 1e-4"}[r["method"]]
        lines.append(
            f"| {r['t']} | {r['model']} | {r['divergence']} | {name} | {fmt(r.get('time'), '.2f')} | "
            f"{ratio(r, 'scs') if ours else ''} | "
            f"{ratio(r, 'scs-default') if ours else ''} | {fmt(r.get('objective'), '.6g')} | "
            f"{fmt(r.get('relative_gap'), '.1e')} | {fmt(r.get('above_bound'), '.1e')} | "
            f"{fmt(r.get('gap_to_ours'), '.1e')} | {fmt(r.get('max_residual'), '.1e')} | {r.get('iterations', '–')} | "
            f"{fmt(r.get('peak_rss_mb'), '.0f')} | {r['status']} |"
        )
    return "\n".join(lines)


def available_models(requested: list[str]) -> list[str]:
    import importlib

    keep = []
    for m in requested:
        mod = {"conditional-jc": "_conditional_jc", "conditional": "_conditional",
               "discriminative": "_discriminative", "joint": "_joint"}[m]
        try:
            importlib.import_module(f"cvxclust.bregman.{mod}")
        except ImportError as err:
            print(f"skipping {m}: {err}", file=sys.stderr)
            continue
        keep.append(m)
    return keep


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
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*json.loads(args.worker))))
        return 0

    models = available_models(args.models)
    opts = {"n_clusters": args.n_clusters, "alpha": args.alpha, "beta": args.beta, "gamma": args.gamma,
            "tol": args.tol, "time_limit": args.time_limit, "scs_eps": args.scs_eps}
    scs = [m for m in ("scs", "scs-default") if m in args.methods and not (m == "scs-default" and args.no_scs_default)]
    jobs = []
    for div in args.divergences:
        for model in models:
            if model == "discriminative" and div != args.divergences[0]:
                continue  # no divergence in (29): one row set is enough
            ours = [m for m in ("ours", "ours-admm") if m in args.methods and (m == "ours" or (
                model == "conditional-jc" and div == "euclidean" and not args.no_admm))]
            for t in args.sizes:
                jobs += [(t, model, div, m) for m in ours + scs]
            jobs += [(t, model, div, m) for t in args.big for m in ours]
    args.out.mkdir(parents=True, exist_ok=True)
    header = (
        f"Bregman relaxations on Digits (d = {args.n_clusters}; t points stratified; features shifted "
        "nonnegative and scaled to unit variance, constant pixels dropped). Times are wall seconds of the "
        "solve (cvxpy: compilation + SCS) on a 2-core machine shared with other jobs, one BLAS thread "
        f"(OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1). Scalable solvers: certified relative gap tol = {args.tol:g}, "
        f"time limit {args.time_limit:.0f} s; Conditional/Joint alpha = {args.alpha:g}, Joint beta = {args.beta:g}, "
        f"Discriminative gamma = {args.gamma:g}. SCS tight: eps = {args.scs_eps:g}; SCS default: eps = 1e-4; "
        f"SCS runs killed after {args.scs_timeout:.0f} s ('> r' = our speed-up is at least r). "
        "'above best bound': (objective - best certified lower bound of the group) / |objective| "
        "(negative = the point is infeasible by that much in objective terms, e.g. SCS's residuals); "
        "'gap to ours': relative objective difference to the scalable solver's.\n\n"
    )
    rows = []
    for i, (t, model, div, method) in enumerate(jobs, 1):
        timeout = args.scs_timeout if method.startswith("scs") else args.timeout
        print(f"[{i}/{len(jobs)}] t={t} {model} {div} {method} ...", file=sys.stderr, flush=True)
        rows.append(run(t, model, div, method, opts, timeout))
        print(f"    {rows[-1]['status']}  {fmt(rows[-1].get('time'), '.2f')} s", file=sys.stderr, flush=True)
        compare(rows)
        (args.out / "bregman_speed.json").write_text(json.dumps({"options": vars(args) | {"out": str(args.out)},
                                                                 "rows": rows}, indent=2))
        (args.out / "bregman_speed.md").write_text(header + markdown(rows) + "\n")
    print(header + markdown(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
