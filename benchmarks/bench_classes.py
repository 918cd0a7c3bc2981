"""``cvxclust.solve`` on every problem class of :mod:`cvxclust.problem_classes`, stated in plain
cvxpy, against anchors written from the papers and timed in the same run.

    python benchmarks/bench_classes.py                                   # n = 500, 1000, 2000
    python benchmarks/bench_classes.py --all-methods                     # every scalable method too
    python benchmarks/bench_classes.py --sizes 60 --time-limit 60 --clarabel-max-n 0   # a quick check

The classes (seed ``--seed``): the nearest correlation matrix to ``perturbed_correlation(n)``;
max-cut and the minimum bisection of ``random_graph(n, 10)`` (average degree 10); correlation
clustering of ``signed_graph(n, 4)``; the Peng-Wei k-means SDP of ``blobs_kernel(n, 10)`` with
k = 10, and the same with 5 must-link rows (each of 5 points spread over the indices linked to
its nearest neighbour in the kernel's distance, a point of its own blob) and ``min_size`` half the
smallest blob; SSC (7) from its cvxpy statement ``FrobeniusPSD(K).problem()``, K the rbf
affinity of the package's default (median width) on n points of 10 Gaussian blobs in 10
dimensions.

The methods, each (class, n, method) in its own process (:func:`_harness.run_case`), at
``tol = residual_tol = --tol`` and ``time_limit = --time-limit``: ``cvxclust.solve`` with
``method="auto"`` (what ran and why: ``result.method``, ``extras["auto"]``) and, with
``--all-methods``, every method of ``CvxpyRelaxation(problem).scalable_methods()`` (the ADMM
``generic`` up to ``--admm-max-n``); the anchors: the semismooth Newton method of Qi and Sun for
the nearest correlation matrix (:func:`bench_newton.qi_sun`), the Burer-Monteiro method with an
eigenvalue certificate for max-cut (:func:`burer_monteiro`), the package's own
``FrobeniusPSD(K).solve()`` for SSC (7); SCS and Clarabel through cvxpy up to ``--scs-max-n`` and
``--clarabel-max-n``, with their own time limit.  The reading of a Peng-Wei statement alone is
:func:`bench_reader.read_case`.  Writes ``benchmarks/results/classes.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from _harness import (RESULTS, eigh_seconds, environment, fmt, markdown_table, options_record, plot_times,
                      run_case, write_results)

HERE = Path(__file__).resolve().parent
CLASSES = ("nearest-correlation", "max-cut", "min-bisection", "correlation-clustering", "peng-wei",
           "peng-wei-constrained", "ssc")
#: the anchor of each class that has one, written from its paper (or the package's own solver of SSC (7))
ANCHORS = {"nearest-correlation": "qi-sun", "max-cut": "burer-monteiro", "ssc": "FrobeniusPSD.solve"}
REFERENCES = ("scs", "clarabel")
#: the targets: class -> (statement, the row's figure measured, whether it is met); "auto"'s row
ANCHOR_RATIO, EIGH_TARGET = 1.5, {"nearest-correlation": 15, "max-cut": 30, "min-bisection": 30,
                                  "correlation-clustering": 30, "peng-wei": 100}


# ----------------------------------------------------------------------------------------------
# the anchor of max-cut
# ----------------------------------------------------------------------------------------------
def _unit_rows(U: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    norms = np.maximum(np.linalg.norm(U, axis=1), 1e-300)
    return U / norms[:, None], norms


def _max_cut_bound(M, V: np.ndarray) -> float:
    """``sum(y) + n min(lambda, 0)``: a lower bound on ``min <M, X>`` over ``diag(X) = 1``,
    ``X >> 0``, with ``y = diag(M V V^T)`` and lambda the smallest eigenvalue of the dual slack
    ``M - Diag(y)`` (the Lanczos estimate less its residual's norm)."""
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    n = len(V)
    y = np.einsum("ij,ij->i", M @ V, V)
    S = LinearOperator((n, n), matvec=lambda x: M @ x - y * x, dtype=float)
    try:
        values, vectors = eigsh(S, k=1, which="SA", tol=1e-10, ncv=min(n, 40), maxiter=100 * n)
    except ArpackNoConvergence as error:  # the estimate so far, with its residual
        values, vectors = error.eigenvalues, error.eigenvectors
        if len(values) == 0:
            return -math.inf
    x = vectors[:, 0]
    value = float(values[0]) - float(np.linalg.norm(S @ x - values[0] * x))
    return float(y.sum()) + n * min(value, 0.0)


def burer_monteiro(L, tol: float, *, seed: int = 0, max_rounds: int = 8, time_limit: float = math.inf) -> dict:
    """The max-cut SDP ``max <L/4, X>`` s.t. ``diag(X) = 1``, ``X >> 0`` by the method of S. Burer,
    R. D. C. Monteiro, "A nonlinear programming algorithm for solving semidefinite programs via
    low-rank factorization", Mathematical Programming 95(2), 2003, to a certified relative gap ``tol``.

    ``X = V V^T``, V of shape (n, p) with ``p = ceil(sqrt(2 n))`` (second-order critical points are
    then optimal for generic costs: N. Boumal, V. Voroninski, A. S. Bandeira, NeurIPS 2016); the
    unit rows are kept by ``V = Diag(1 / ||u_i||) U`` and U found by L-BFGS, as Burer and Monteiro
    do.  After each run of L-BFGS, the certificate of :func:`_max_cut_bound` (one sparse
    ``eigsh``); while the gap exceeds ``tol``, L-BFGS goes on with a 100 times smaller gradient
    tolerance.  The point is exactly feasible (unit rows).
    """
    import scipy.sparse as sp
    from scipy.optimize import minimize

    start = time.perf_counter()
    M = -0.25 * sp.csr_matrix(L, dtype=float)
    n = M.shape[0]
    p = math.ceil(math.sqrt(2 * n))
    V = _unit_rows(np.random.default_rng(seed).standard_normal((n, p)))[0]

    def cost(u):
        W, norms = _unit_rows(u.reshape(n, p))
        MW = M @ W
        G = 2.0 * MW - 2.0 * np.einsum("ij,ij->i", MW, W)[:, None] * W  # tangent to the unit rows
        return float(np.vdot(W, MW)), (G / norms[:, None]).ravel()

    iterations, certificates, gtol, status = 0, 0, 1e-4, "max_iter"
    for _ in range(max_rounds):
        out = minimize(cost, V.ravel(), jac=True, method="L-BFGS-B",
                       options={"maxiter": 5000, "gtol": gtol, "ftol": 0.0, "maxcor": 20})
        V, iterations = _unit_rows(out.x.reshape(n, p))[0], iterations + int(out.nit)
        value, bound = float(np.vdot(V, M @ V)), _max_cut_bound(M, V)
        certificates += 1
        gap = (value - bound) / max(abs(value), abs(bound), 1e-300)
        if gap <= tol:
            status = "optimal"
            break
        if time.perf_counter() - start > time_limit:
            status = "time_limit"
            break
        gtol *= 0.01
    return {"time": time.perf_counter() - start, "objective": -value, "dual_bound": -bound, "relative_gap": gap,
            "iterations": iterations, "eigsh": certificates, "rank": p, "status": status,
            "max_residual": float(np.abs(np.linalg.norm(V, axis=1) ** 2 - 1.0).max())}


# ----------------------------------------------------------------------------------------------
# the instances and the cases
# ----------------------------------------------------------------------------------------------
def must_link(K: np.ndarray, count: int) -> list[tuple[int, int]]:
    """``count`` pairs (i, j): i spread over the indices, j its nearest neighbour in the distance
    ``K_ii + K_jj - 2 K_ij`` of the kernel."""
    pairs = []
    for i in np.linspace(0, len(K) - 1, count).astype(int):
        distance = K[i, i] + np.diag(K) - 2.0 * K[i]
        distance[i] = np.inf
        pairs.append((int(i), int(np.argmin(distance))))
    return pairs


def instance(name: str, n: int, seed: int):
    """The cvxpy problem of class ``name`` at order n, and the data its anchor takes."""
    from cvxclust import problem_classes as pc

    if name == "nearest-correlation":
        G = pc.perturbed_correlation(n, random_state=seed)
        return pc.nearest_correlation(G), G
    if name in ("max-cut", "min-bisection"):
        W = pc.random_graph(n, 10, random_state=seed)
        return (pc.max_cut if name == "max-cut" else pc.min_bisection)(W), pc.laplacian(W)
    if name == "correlation-clustering":
        return pc.correlation_clustering(pc.signed_graph(n, 4, random_state=seed)), None
    if name in ("peng-wei", "peng-wei-constrained"):
        K = pc.blobs_kernel(n, 10, random_state=seed)
        if name == "peng-wei":
            return pc.kmeans_sdp(K, 10), None
        # make_blobs gives the blobs n // 10 or n // 10 + 1 points
        return pc.kmeans_sdp(K, 10, must_link=must_link(K, 5), min_size=(n // 10) / 2), None
    if name == "ssc":
        from sklearn.datasets import make_blobs

        from cvxclust.kernels import affinity, median_distance
        from cvxclust.ssc import FrobeniusPSD

        points = make_blobs(n, centers=10, n_features=10, random_state=seed)[0]
        relaxation = FrobeniusPSD(affinity(points, "rbf", delta=median_distance(points)))
        return relaxation.problem(), relaxation
    raise ValueError(f"name must be one of {CLASSES}, got {name!r}")


def methods_case(name: str, n: int, seed: int) -> dict:
    """``CvxpyRelaxation(problem).scalable_methods()`` of the instance."""
    from cvxclust.generic import CvxpyRelaxation

    return {"methods": CvxpyRelaxation(instance(name, n, seed)[0]).scalable_methods(), "status": "ok"}


def _result_row(result) -> dict:
    extras = result.extras
    return {"time": result.time, "objective": result.objective, "dual_bound": result.dual_bound,
            "relative_gap": result.relative_gap, "max_residual": result.max_residual, "status": result.status,
            "iterations": result.iterations, "ran": result.method, "eigh": extras.get("eigh"),
            "auto": extras.get("auto")}


def _reference(problem, solver: str, tol: float, time_limit: float) -> dict:
    """cvxpy with SCS (at ``eps_abs = eps_rel = tol``) or Clarabel (its default tolerances)."""
    from cvxclust.generic import CvxpyRelaxation

    options = {"eps_abs": tol, "eps_rel": tol, "time_limit_secs": time_limit} if solver == "scs" \
        else {"time_limit": time_limit}
    start = time.perf_counter()
    problem.solve(solver=solver.upper(), **options)
    seconds = time.perf_counter() - start
    X = problem.variables()[0].value
    residual = None if X is None else max(CvxpyRelaxation(problem).residuals(X).values())
    value = problem.value if X is not None else None
    return {"time": seconds, "objective": value, "max_residual": residual, "status": problem.status,
            "iterations": problem.solver_stats.num_iters}


def case(name: str, n: int, method: str, tol: float, time_limit: float, seed: int) -> dict:
    """One solve of the instance of class ``name`` at order n by ``method``."""
    problem, data = instance(name, n, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if method == "qi-sun":
            from bench_newton import qi_sun

            return qi_sun(data, tol)
        if method == "burer-monteiro":
            return burer_monteiro(data, tol, seed=seed, time_limit=time_limit)
        if method == "FrobeniusPSD.solve":
            return _result_row(data.solve(tol=tol, residual_tol=tol, time_limit=time_limit))
        if method in REFERENCES:
            return _reference(problem, method, tol, time_limit)
        import cvxclust

        return _result_row(cvxclust.solve(problem, method=method, tol=tol, residual_tol=tol, time_limit=time_limit))


# ----------------------------------------------------------------------------------------------
# the tables
# ----------------------------------------------------------------------------------------------
def _finite(value) -> bool:
    return isinstance(value, (int, float)) and math.isfinite(value)


def compare(rows: list[dict], eigh: dict) -> None:
    """Time in eigh, time over the anchor's, and each objective's relative difference from the
    most accurate finisher's: the certified optimal row of least ``max(gap, residual)``, else
    Clarabel's, else SCS's, where optimal."""
    for r in rows:
        r["eigh_time"] = eigh[r["n"]]
        r["in_eigh"] = r["time"] / eigh[r["n"]] if _finite(r.get("time")) else None
    for name in CLASSES:
        for n in eigh:
            same = [r for r in rows if r["class"] == name and r["n"] == n]
            anchor = next((r for r in same if r["method"] == ANCHORS.get(name)), None)
            certified = [r for r in same if r["status"] == "optimal" and _finite(r.get("relative_gap"))
                         and _finite(r.get("objective"))]
            best = min(certified, key=lambda r: max(r["relative_gap"], r.get("max_residual") or 0.0), default=None)
            for solver in ("clarabel", "scs"):
                best = best or next((r for r in same if r["method"] == solver and r["status"] == "optimal"), None)
            for r in same:
                if anchor is not None and _finite(anchor.get("time")) and _finite(r.get("time")):
                    r["over_anchor"] = r["time"] / anchor["time"]
                if best is not None and _finite(r.get("objective")):
                    r["most_accurate"] = best["method"]
                    r["objective_difference"] = abs(r["objective"] - best["objective"]) / max(abs(best["objective"]),
                                                                                              1e-300)


def targets(rows: list[dict], reading: list[dict], time_limit: float) -> list[list]:
    """The targets, read from ``"auto"``'s rows: [class, n, target, measured, met]."""
    table = []
    for r in (r for r in rows if r["method"] == "auto"):
        name, optimal = r["class"], r["status"] == "optimal"
        measured = f"{fmt(r.get('in_eigh'), '.1f')} eigh, {fmt(r.get('time'), '.2f')} s, {r['status']}"
        if name in ("nearest-correlation", "ssc"):
            anchor = ANCHORS[name]
            target = f"<= {ANCHOR_RATIO} x {anchor}" + (f", <= {EIGH_TARGET[name]} eigh" if name in EIGH_TARGET else "")
            met = optimal and _finite(r.get("over_anchor")) and r["over_anchor"] <= ANCHOR_RATIO \
                and (name not in EIGH_TARGET or r["in_eigh"] <= EIGH_TARGET[name])
            measured += f", {fmt(r.get('over_anchor'), '.2f')} x {anchor}"
        elif name in EIGH_TARGET:
            target = f"optimal at tol, <= {EIGH_TARGET[name]} eigh"
            met = optimal and r["in_eigh"] <= EIGH_TARGET[name]
        else:
            target = f"certified optimal and feasible within {time_limit:g} s"
            met = optimal and r["time"] <= time_limit
        table.append([name, r["n"], target, measured, "yes" if met else "no"])
    for r in reading:
        met = "–" if r["n"] < 1000 else ("yes" if _finite(r.get("in_eigh")) and r["in_eigh"] <= 1.0 else "no")
        table.append(["reading (Peng-Wei)", r["n"], "<= 1 eigh at n >= 1000", f"{fmt(r.get('in_eigh'), '.2f')} eigh",
                      met])
    return table


def _seconds(row: dict) -> float:
    """The row's time; infinite where the case did not finish."""
    return row["time"] if _finite(row.get("time")) else math.inf


def _eigh_cell(r: dict) -> str:
    if r.get("eigh") is not None:
        return str(r["eigh"])
    return f"{r['eigsh']} eigsh" if r.get("eigsh") else "–"


def markdown(rows: list[dict], reading: list[dict], time_limit: float) -> str:
    header = ["n", "method", "ran", "time (s)", "in eigh", "eigh", "/ anchor", "iterations", "objective",
              "certified gap", "max residual", "rel. diff", "status"]
    parts = ["### Targets\n\n" + markdown_table(["class", "n", "target", "measured (auto)", "met"],
                                                 targets(rows, reading, time_limit))]
    for name in CLASSES:
        same = [r for r in rows if r["class"] == name]
        if same:
            parts.append(f"### {name}\n\n" + markdown_table(header, [
                [r["n"], r["method"], r.get("ran", "–"), fmt(r.get("time"), ".2f"), fmt(r.get("in_eigh"), ".1f"),
                 _eigh_cell(r), fmt(r.get("over_anchor"), ".2f"),
                 r.get("iterations", "–"), fmt(r.get("objective"), ".10g"), fmt(r.get("relative_gap"), ".1e"),
                 fmt(r.get("max_residual"), ".1e"),
                 "ref" if r.get("most_accurate") == r["method"] else fmt(r.get("objective_difference"), ".1e"),
                 r["status"]] for r in same]))
    auto = [[r["class"], r["n"], r.get("ran", "–"), r.get("auto") or r["status"]]
            for r in rows if r["method"] == "auto"]
    parts.append("### What auto ran, and why\n\n" + markdown_table(["class", "n", "ran", "why"], auto))
    parts.append("### Reading the Peng-Wei statement alone\n\n" + markdown_table(
        ["n", "time (s)", "in eigh", "above inputs (n x n copies)", "status"],
        [[r["n"], fmt(r.get("time"), ".3f"), fmt(r.get("in_eigh"), ".2f"), fmt(r.get("above_inputs_copies"), ".1f"),
          r["status"]] for r in reading]))
    return "\n\n".join(parts)


def plot(rows: list[dict], reading: list[dict]):
    def draw(path):
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(2, 4, figsize=(20, 9))
        for ax, name in zip(axes.ravel(), CLASSES):
            same = [r | {"time": r["in_eigh"] if r.get("in_eigh") is not None else math.nan}
                    for r in rows if r["class"] == name]
            plot_times(ax, same, list(dict.fromkeys(r["method"] for r in same)), name)
            ax.set_ylabel("time in eigh")
        ax = axes.ravel()[-1]
        plot_times(ax, [r | {"method": "reader", "time": r.get("in_eigh") or math.nan} for r in reading], ["reader"],
                   "reading (Peng-Wei)")
        ax.set_ylabel("time in eigh")
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)

    return draw


# ----------------------------------------------------------------------------------------------
# the run
# ----------------------------------------------------------------------------------------------
def plan(args, name: str, n: int, scalable: list[str]) -> list[str]:
    """The methods run on class ``name`` at order n."""
    methods = ["auto"]
    if args.all_methods:
        methods += [m for m in scalable if m != "generic" or n <= args.admm_max_n]
    methods += [ANCHORS[name]] if name in ANCHORS else []
    methods += [m for m, largest in zip(REFERENCES, (args.scs_max_n, args.clarabel_max_n)) if n <= largest]
    return methods


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="*", default=[500, 1000, 2000])
    parser.add_argument("--classes", nargs="*", choices=CLASSES, default=list(CLASSES))
    parser.add_argument("--all-methods", action="store_true", help="every scalable method besides auto")
    parser.add_argument("--admm-max-n", type=int, default=1000, help="largest n of 'generic' with --all-methods")
    parser.add_argument("--scs-max-n", type=int, default=500)
    parser.add_argument("--clarabel-max-n", type=int, default=200)
    parser.add_argument("--tol", type=float, default=1e-6, help="tol and residual_tol")
    parser.add_argument("--time-limit", type=float, default=300.0, help="time_limit of every solve")
    parser.add_argument("--reference-time-limit", type=float, default=600.0, help="time limit of SCS and Clarabel")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each case; the fastest is reported")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads of each run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--name", default="classes", help="results file name (without suffix)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)
    slack = 120.0  # seconds of a case beyond its solver's limit: the instance, imports, the final checks
    scalable = {name: run_case(__file__, "methods_case", name, min(args.sizes), args.seed, timeout=600.0,
                               threads=args.threads).get("methods", ["generic"]) for name in args.classes}
    best: dict = {}
    for n in args.sizes:
        for name in args.classes:
            for _ in range(args.repeat):  # the methods in turn: a change of the machine's load spreads over all
                for method in plan(args, name, n, scalable[name]):
                    limit = args.reference_time_limit if method in REFERENCES else args.time_limit
                    row = run_case(__file__, "case", name, n, method, args.tol, limit, args.seed,
                                   timeout=2.0 * limit + slack, threads=args.threads,
                                   row={"class": name, "n": n, "method": method})
                    print(f"{name} n={n} {method} ({row.get('ran', '-')}): {row['status']} "
                          f"{fmt(row.get('time'), '.2f')} s", file=sys.stderr, flush=True)
                    kept = best.get((name, n, method))
                    if kept is None or _seconds(row) < _seconds(kept):
                        best[name, n, method] = row
    rows = list(best.values())
    eigh = {n: min(eigh_seconds(n, args.threads) for _ in range(args.repeat)) for n in args.sizes}
    reading = []
    for n in args.sizes:
        row = run_case(HERE / "bench_reader.py", "read_case", n, "trace", "reader", 10, timeout=600.0,
                       threads=args.threads, row={"n": n})
        reading.append(row | {"in_eigh": row["time"] / eigh[n] if _finite(row.get("time")) else None})
    compare(rows, eigh)
    description = (
        re.sub(r":\w+:`", "`", __doc__.split("\n\n", 2)[2].split("  Writes")[0])
        + f"\n\n`tol = residual_tol = {args.tol:g}`, "
        f"`time_limit = {args.time_limit:g}` s (SCS and Clarabel: {args.reference_time_limit:g} s), "
        f"{args.threads} BLAS thread(s) per run, the least time of {args.repeat} run(s).  'ran': the method "
        "cvxclust ran (auto's choice; FrobeniusPSD.solve's); 'in eigh': wall time over one full numpy.linalg.eigh "
        "of the same order timed in the same run; 'eigh': the full eigendecompositions a method reports "
        "(`extras['eigh']`, Qi-Sun's count; Burer-Monteiro's sparse eigsh calls); '/ anchor': time over the "
        "anchor's; 'certified gap': the relative gap "
        "to the method's certified bound (Burer-Monteiro's from a sparse eigsh of its dual slack, the iterations "
        "its L-BFGS steps); 'rel. diff': the objective's relative difference from that of the most accurate "
        "finisher ('ref': the certified optimal row of least gap and residual, else Clarabel's, else SCS's).  "
        "cvxclust's times count from the call, reading the cvxpy problem included.  The targets are read from "
        "auto's rows at every size run (the problem statement sets them at n = 2000; the reading's at n >= 1000)."
    )
    body = markdown(rows, reading, args.time_limit)
    write_results(args.out, args.name, "cvxclust.solve on every problem class, with the anchors", description, body,
                  {"options": options_record(args), "eigh_seconds": eigh, "scalable_methods": scalable,
                   "rows": rows, "reading": reading}, env, plot=plot(rows, reading))
    print(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
