"""NumPy on the CPU against a baseline revision: the same solves by two checkouts of the package,
alternated in one run, so that a change of the solvers' code (the array API port) shows whether
it slowed NumPy down.

Usage::

    python benchmarks/bench_numpy_speed.py --baseline <revision> [--repeat 3] [--threads 1]

The baseline is checked out into a temporary git worktree (removed at the end).  Each case runs
in its own process (the harness's ``run_case``), with the checkout's folder first on
``sys.path``; the two checkouts alternate, ``--repeat`` times each, and the table gives the best
time of each and their ratio (this checkout over the baseline: above 1 is slower).  Cases:

* SSC (7), ``FrobeniusPSD(K).solve(method)``, rbf kernel (median width) of 8 Gaussian blobs in
  the plane, methods ``dual-newton`` and ``admm``, ``tol = 1e-6``;
* the Peng-Wei SDP by ``cvxclust.solve(method="generic")``,
  ``kmeans_sdp(blobs_kernel(n, 10, random_state=0), 10)``, ``tol = residual_tol = 1e-4``;
* the nearest correlation matrix by ``cvxclust.solve(method="dual-newton")``,
  ``perturbed_correlation(n, random_state=0)``, ``tol = 1e-6``;
* the CLUHSIC SDP (5.23) by its ADMM, the instance of ``bench_cluhsic.py``.

Writes ``results/<name>.{md,json}``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from _harness import REPOSITORY, RESULTS, environment, fmt, markdown_table, options_record, run_case, write_results

CASES = (("SSC (7) dual-newton", 1000), ("SSC (7) admm", 1000), ("Peng-Wei generic", 400),
         ("nearest correlation dual-newton", 500), ("CLUHSIC SDP admm", 40))


def _import_from(root: str):
    """cvxclust imported from the checkout at ``root``."""
    sys.path.insert(0, root)
    import cvxclust

    if not Path(cvxclust.__file__).resolve().is_relative_to(Path(root).resolve()):
        raise RuntimeError(f"cvxclust came from {cvxclust.__file__}, not from {root}")
    return cvxclust


def _row(result) -> dict:
    return {"time": result.time, "objective": result.objective, "status": result.status,
            "iterations": result.iterations}


def case(root: str, name: str, n: int) -> dict:
    """One solve of case ``name`` at size n by the package of the checkout at ``root``."""
    cvxclust = _import_from(root)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if name.startswith("SSC"):
            from sklearn.datasets import make_blobs

            from cvxclust.kernels import rbf
            from cvxclust.ssc import FrobeniusPSD

            relaxation = FrobeniusPSD(rbf(make_blobs(n, centers=8, random_state=0)[0]))
            return _row(relaxation.solve(method=name.split()[-1], tol=1e-6))
        if name.startswith("CLUHSIC"):
            sys.path.insert(0, str(Path(__file__).parent))
            from bench_cluhsic import sdp_instance

            from cvxclust.cluhsic import CLUHSICSDP

            K, A, _ = sdp_instance(n)
            return _row(CLUHSICSDP(K, A).solve("admm"))
        from cvxclust import problem_classes as pc

        if name.startswith("Peng-Wei"):
            problem = pc.kmeans_sdp(pc.blobs_kernel(n, 10, random_state=0), 10)
            return _row(cvxclust.solve(problem, method="generic", tol=1e-4, residual_tol=1e-4))
        problem = pc.nearest_correlation(pc.perturbed_correlation(n, random_state=0))
        return _row(cvxclust.solve(problem, method="dual-newton", tol=1e-6))


def markdown(rows: list[dict]) -> str:
    header = ["case", "n", "baseline (s)", "this (s)", "this / baseline", "objective rel. diff", "statuses"]
    return markdown_table(header, [
        [r["case"], r["n"], fmt(r.get("baseline"), ".3f"), fmt(r.get("this"), ".3f"), fmt(r.get("ratio"), ".2f"),
         fmt(r.get("objective_difference"), ".1e"), r["statuses"]] for r in rows])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--baseline", required=True, help="the git revision to compare with")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case by each checkout")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of each run")
    parser.add_argument("--timeout", type=float, default=600.0)
    parser.add_argument("--name", default="numpy_speed", help="results file name (without suffix)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)
    baseline = subprocess.run(["git", "rev-parse", "--short=12", args.baseline], cwd=REPOSITORY, check=True,
                              capture_output=True, text=True).stdout.strip()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        where = str(Path(folder) / "baseline")
        subprocess.run(["git", "worktree", "add", "--detach", where, baseline], cwd=REPOSITORY, check=True,
                       capture_output=True)
        try:
            for name, n in CASES:
                runs = {"baseline": [], "this": []}
                for _ in range(args.repeat):
                    for label, root in (("baseline", where), ("this", str(REPOSITORY))):
                        runs[label].append(run_case(__file__, "case", root, name, n, timeout=args.timeout,
                                                    threads=args.threads))
                row = {"case": name, "n": n, "runs": runs,
                       "statuses": ", ".join(sorted({str(r["status"]) for rs in runs.values() for r in rs}))}
                for label, results in runs.items():
                    times = [r["time"] for r in results if r.get("status") == "optimal"]
                    row[label] = min(times) if len(times) == len(results) else None
                if row["baseline"] and row["this"]:
                    row["ratio"] = row["this"] / row["baseline"]
                    base, this = runs["baseline"][0]["objective"], runs["this"][0]["objective"]
                    row["objective_difference"] = abs(this - base) / max(abs(base), 1e-300)
                print(f"{name} n={n}: {fmt(row['baseline'], '.3f')} -> {fmt(row['this'], '.3f')} s", file=sys.stderr,
                      flush=True)
                rows.append(row)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", where], cwd=REPOSITORY, capture_output=True)
    description = (__doc__.split("\n\n", 3)[3].split("Writes")[0].strip()
                   + f"\n\nBaseline: revision `{baseline}`; {args.repeat} runs of each case by each checkout; "
                   f"{args.threads} BLAS thread(s).  Times: `Result.time` of the best run (a case with a run not "
                   "certified optimal has none).")
    write_results(args.out, args.name, "NumPy on the CPU against a baseline revision", description,
                  markdown(rows), {"options": options_record(args), "baseline": baseline, "rows": rows}, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
