#!/usr/bin/env python
r"""Reproduce Table II of Yan, Shen & Wang, "Efficient semidefinite spectral clustering via
Lagrange duality" (IEEE TIP 2014) on the two UCI sets that ship offline: Iris and Wine.

The paper's protocol (Sec. IV-B):

* Gaussian kernel ``K_ij = exp(-||a_i - a_j||^2 / delta^2)`` on the raw UCI features;
* a sweep over the width ``delta``; the paper does not state its grid, so here ``delta`` runs
  over ``--n-deltas`` values log-spaced between ``--min-factor`` and ``--max-factor`` times the
  median pairwise distance of the data set (defaults: 13 values, 0.1x .. 3x);
* each normalization of the *same* K -- NO (``"none"``), RC (``"ratio-cut"``), NC
  (``"normalized-cut"``), FSC (``"frobenius"``, the QP (6)) and SSC (``"frobenius-psd"``, the
  SDP (7), the paper's LD-SSC) -- followed by the Yu-Shi multiclass discretization with 10
  random initialisations keeping the best objective (fixed seed);
* the error rate under the best one-to-one relabeling; the table gives the lowest and the mean
  error rate over the sweep.

Wine's raw features span five orders of magnitude (proline ~1e3, hue ~1), so a Gaussian kernel
on them is essentially a kernel on proline alone.  The main table uses the raw features, as
the paper does; a second, clearly labelled table repeats Wine with standardized features.

Usage::

    python benchmarks/reproduce_table2.py [--out benchmarks/results] [--jobs 2 | --scheduler ADDRESS]

writes ``table2.md``, ``table2.json`` and ``table2.png`` into ``--out`` and prints the tables.
Besides the table the report gives every width's error rates, the FSC/SSC solve statistics, how
far the SSC matrix is from the FSC one, whether the top-k eigenspace is degenerate (then the
clustering is decided by tie-breaking), and the same summary over the wider kernels only
(``--subgrid-min``, a post-hoc diagnostic of the grid's influence).  The (width, normalization)
cells are independent: ``--jobs N`` solves N at a time on local worker processes, ``--scheduler ADDRESS``
on a Dask cluster (:mod:`cvxclust.parallel`); the tables are the same.

The BLAS thread pool is limited to ``--threads`` (default 1): the matrices are small, so more
threads add synchronisation rather than speed, and one thread makes the run bit-reproducible.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.linalg as sla
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from tqdm.auto import tqdm

from _harness import RESULTS, environment, limit_blas, options_record, write_results
from cvxclust import kernels
from cvxclust.datasets import load_dataset
from cvxclust.metrics import error_rate
from cvxclust.parallel import parallel_backend, run_tasks
from cvxclust.rounding import discretize
from cvxclust.ssc import normalize

#: (column label, cvxclust normalization name), in the paper's column order.
METHODS = [
    ("NO", "none"),
    ("RC", "ratio-cut"),
    ("NC", "normalized-cut"),
    ("FSC", "frobenius"),
    ("SSC", "frobenius-psd"),
]
FROBENIUS = ("frobenius", "frobenius-psd")
#: tol and residual_tol of the Frobenius normalizations' method ("auto": the dual Newton)
SOLVER_TOL = 1e-7

#: Table II of the paper (SSC = LD-SSC).
PAPER = {
    "iris": {
        "lowest": {"NO": 0.0933, "RC": 0.1467, "NC": 0.1067, "FSC": 0.0933, "SSC": 0.0867},
        "mean": {"NO": 0.1117, "RC": 0.3467, "NC": 0.1129, "FSC": 0.1108, "SSC": 0.0928},
    },
    "wine": {
        "lowest": {"NO": 0.2753, "RC": 0.3146, "NC": 0.4213, "FSC": 0.3427, "SSC": 0.2697},
        "mean": {"NO": 0.3379, "RC": 0.4438, "NC": 0.4398, "FSC": 0.3903, "SSC": 0.3383},
    },
}

#: The data sets run: key -> (loader name, standardize?, label in the tables, paper key or None).
DATASETS = {
    "iris": ("iris", False, "Iris (150, 3), raw features", "iris"),
    "wine": ("wine", False, "Wine (178, 3), raw features", "wine"),
    "wine-standardized": ("wine", True, "Wine (178, 3), standardized features [extra]", None),
}
MAIN = ("iris", "wine")
EXTRA = ("wine-standardized",)
#: A top-k eigenspace of the normalized matrix whose gap (lambda_k - lambda_{k+1}) / |lambda_1| is
#: below this is called degenerate: its basis, hence the clustering, is then decided by round-off.
DEGENERATE_GAP = 1e-5


# ----------------------------------------------------------------------------------------------
# the experiment
# ----------------------------------------------------------------------------------------------
def run_one(K: np.ndarray, y: np.ndarray, n_clusters: int, method: str, seed: int) -> dict:
    """Normalize K with ``method``, discretize, score.  Never raises on a failed normalization:
    the error rate is then NaN and ``note`` says why."""
    rec: dict = {"error": float("nan"), "objective": float("nan"), "n_clusters_found": None,
                 "eigengap": float("nan"), "note": None}
    # the tolerance of every published run (the solvers' default before it became 1e-6)
    options = {"tol": SOLVER_TOL, "residual_tol": SOLVER_TOL} if method in FROBENIUS else {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        try:
            K_hat, result = normalize(K, method, return_result=True, **options)
        except ValueError as exc:  # e.g. NC on a kernel with a zero row
            rec["note"] = f"normalize raised ValueError: {exc}"
            return rec
    rec["warnings"] = sorted({str(w.message) for w in caught})
    if result is not None:
        rec["solve"] = {
            "method": result.method,
            "status": result.status,
            "iterations": result.iterations,
            "time": result.time,
            "objective": result.objective,
            "dual_bound": result.dual_bound,
            "relative_gap": result.relative_gap,
            "max_residual": result.max_residual,
        }
    try:
        labels, objective = discretize(K_hat, n_clusters, n_init=10, random_state=seed, return_objective=True)
    except (ValueError, np.linalg.LinAlgError) as exc:
        rec["note"] = f"discretize raised {type(exc).__name__}: {exc}"
        return rec
    n = K_hat.shape[0]
    w = sla.eigvalsh(K_hat, subset_by_index=[n - n_clusters - 1, n - 1])[::-1]
    rec["eigengap"] = float((w[n_clusters - 1] - w[n_clusters]) / max(abs(w[0]), 1e-300))
    rec["error"] = float(error_rate(y, labels))
    rec["objective"] = float(objective)
    rec["n_clusters_found"] = int(np.unique(labels).size)
    rec["_K_hat"] = K_hat  # dropped before saving
    return rec


def run_dataset(key: str, factors: np.ndarray, seed: int, bar, threads: int | None = 1) -> dict:
    name, standardize, label, _ = DATASETS[key]
    X, y = load_dataset(name)
    if standardize:
        X = StandardScaler().fit_transform(X)
    n_clusters = int(np.unique(y).size)
    median = kernels.median_distance(X)
    deltas = factors * median
    out = {
        "label": label,
        "n_samples": int(X.shape[0]),
        "n_features": int(X.shape[1]),
        "n_clusters": n_clusters,
        "standardized": standardize,
        "median_distance": median,
        "delta_factors": factors.tolist(),
        "deltas": deltas.tolist(),
        "kernel": [],
        "runs": {m: [] for m, _ in METHODS},
        "fsc_vs_ssc": [],
    }
    kernels_by_width = [kernels.rbf(X, delta) for delta in deltas]
    tasks = [(K, y, n_clusters, method, seed) for K in kernels_by_width for _, method in METHODS]
    # every (width, normalization) is independent: run_tasks fans them out under --jobs/--scheduler
    records = iter(run_tasks(run_one, tasks, blas_threads=threads))
    for factor, delta, K in zip(factors, deltas, kernels_by_width):
        off = K[~np.eye(len(K), dtype=bool)]
        out["kernel"].append(
            {
                "delta": float(delta),
                "mean_offdiag": float(off.mean()),
                "frac_offdiag_below_1e-12": float(np.mean(off < 1e-12)),
                "min_row_sum": float(K.sum(axis=1).min()),
            }
        )
        K_hats = {}
        bar.set_postfix_str(f"{key} delta={factor:.3g}x median", refresh=False)
        for col, _ in METHODS:
            rec = next(records)
            K_hats[col] = rec.pop("_K_hat", None)
            out["runs"][col].append(rec)
        # how far apart the FSC and SSC matrices are (SSC = FSC when FSC's answer is already p.s.d.)
        F, S = K_hats["FSC"], K_hats["SSC"]
        if F is not None and S is not None:
            w = np.linalg.eigvalsh(F)
            out["fsc_vs_ssc"].append(
                {
                    "fsc_lambda_min_over_lambda_max": float(w[0] / w[-1]),
                    "relative_difference": float(np.linalg.norm(F - S) / np.linalg.norm(F)),
                }
            )
        else:
            out["fsc_vs_ssc"].append(None)
        bar.update(1)
    out["summary"] = summarize(out)
    return out


def summarize(ds: dict, min_factor: float = 0.0) -> dict:
    """Lowest and mean error over the widths with ``delta / median >= min_factor``."""
    summary = {}
    factors = np.asarray(ds["delta_factors"])
    keep = factors >= min_factor - 1e-12
    factors = factors[keep]
    for col, _ in METHODS:
        errs = np.array([r["error"] for r in ds["runs"][col]], dtype=float)[keep]
        valid = ~np.isnan(errs)
        lowest = float(np.min(errs[valid])) if valid.any() else float("nan")
        summary[col] = {
            "lowest": lowest,
            "mean": float(np.mean(errs[valid])) if valid.any() else float("nan"),
            "n_valid": int(valid.sum()),
            "n_nan": int((~valid).sum()),
            "argmin_factors": factors[valid][errs[valid] == lowest].tolist() if valid.any() else [],
            "n_degenerate": int(sum(r["eigengap"] < DEGENERATE_GAP for r, k in zip(ds["runs"][col], keep) if k)),
        }
    fsc = np.array([r["error"] for r in ds["runs"]["FSC"]], dtype=float)[keep]
    ssc = np.array([r["error"] for r in ds["runs"]["SSC"]], dtype=float)[keep]
    gaps = np.array([[r["eigengap"] for r in ds["runs"][c]] for c in ("FSC", "SSC")], dtype=float)[:, keep]
    both = ~np.isnan(fsc) & ~np.isnan(ssc)
    tol = 1e-12
    for name, mask in (("per_delta_ssc_vs_fsc", both),
                       ("per_delta_ssc_vs_fsc_nondegenerate", both & np.all(gaps >= DEGENERATE_GAP, axis=0))):
        summary[name] = {
            "ssc_better": int(np.sum(ssc[mask] < fsc[mask] - tol)),
            "equal": int(np.sum(np.abs(ssc[mask] - fsc[mask]) <= tol)),
            "ssc_worse": int(np.sum(ssc[mask] > fsc[mask] + tol)),
            "n_widths": int(mask.sum()),
        }
    return summary


def direction_checks(ds: dict) -> list[tuple[str, bool]]:
    s = ds["summary"]
    others = [c for c, _ in METHODS if c != "SSC"]
    checks = []
    for stat in ("lowest", "mean"):
        checks.append((f"SSC {stat} <= FSC {stat}", s["SSC"][stat] <= s["FSC"][stat] + 1e-12))
        best = min(s[c][stat] for c in others)
        checks.append((f"SSC {stat} is the best of the five (ties count)", s["SSC"][stat] <= best + 1e-12))
    return checks


# ----------------------------------------------------------------------------------------------
# reporting
# ----------------------------------------------------------------------------------------------
def _fmt(x) -> str:
    return "NaN" if x is None or (isinstance(x, float) and np.isnan(x)) else f"{x:.4f}"


def _row(cells: list[str], values: list[float]) -> str:
    """Markdown row with the smallest value(s) in bold."""
    finite = [v for v in values if not np.isnan(v)]
    best = min(finite) if finite else None
    shown = [f"**{_fmt(v)}**" if best is not None and abs(v - best) <= 1e-12 else _fmt(v) for v in values]
    return "| " + " | ".join(cells + shown) + " |"


def results_table(results: dict, keys, with_paper: bool, summary: str = "summary") -> str:
    cols = [c for c, _ in METHODS]
    head = ("| data (n, k) | statistic | source | "
            + " | ".join(c if c != "SSC" else "SSC (= LD-SSC)" for c in cols) + " |")
    lines = [head, "|" + "---|" * (3 + len(cols))]
    for key in keys:
        ds = results[key]
        paper_key = DATASETS[key][3]
        for stat in ("lowest", "mean"):
            ours = [ds[summary][c][stat] for c in cols]
            lines.append(_row([ds["label"], stat, "this run"], ours))
            if with_paper and paper_key is not None:
                lines.append(_row(["", "", "paper"], [PAPER[paper_key][stat][c] for c in cols]))
    return "\n".join(lines)


def per_delta_table(ds: dict) -> str:
    cols = [c for c, _ in METHODS]
    lines = [
        "| delta / median | delta | " + " | ".join(cols)
        + " | SSC solve | FSC lambda_min/lambda_max | ‖SSC-FSC‖/‖FSC‖ | eigengap FSC / SSC |",
        "|" + "---|" * (2 + len(cols) + 4),
    ]
    for i, (f, d) in enumerate(zip(ds["delta_factors"], ds["deltas"])):
        errs = [ds["runs"][c][i]["error"] for c in cols]
        solve = ds["runs"]["SSC"][i].get("solve")
        solve_txt = (
            f"{solve['status']}, {solve['iterations']} it, {solve['time']:.2f} s, gap {solve['relative_gap']:.1e}"
            if solve
            else "n/a"
        )
        cmp_ = ds["fsc_vs_ssc"][i]
        extra = ([f"{cmp_['fsc_lambda_min_over_lambda_max']:.2e}", f"{cmp_['relative_difference']:.2e}"]
                 if cmp_ else ["n/a", "n/a"])
        gaps = [ds["runs"][c][i]["eigengap"] for c in ("FSC", "SSC")]
        extra.append(" / ".join("NaN" if np.isnan(g) else f"{g:.1e}" + ("*" if g < DEGENERATE_GAP else "")
                                for g in gaps))
        lines.append(_row([f"{f:.3g}", f"{d:.4g}"], errs)[:-1].rstrip() + f" | {solve_txt} | "
                     + " | ".join(extra) + " |")
    return "\n".join(lines)


def solve_report(results: dict) -> tuple[str, list[str]]:
    """Summary of every Frobenius solve; returns (text, list of non-optimal solves)."""
    bad, lines = [], []
    for key, ds in results.items():
        for col, method in METHODS:
            if method not in FROBENIUS:
                continue
            statuses, times, iters, gaps = [], [], [], []
            for f, rec in zip(ds["delta_factors"], ds["runs"][col]):
                solve = rec.get("solve")
                if solve is None:
                    bad.append(f"{key} {col} delta={f:.3g}x median: no solve ({rec['note']})")
                    continue
                statuses.append(solve["status"])
                times.append(solve["time"])
                iters.append(solve["iterations"])
                gaps.append(solve["relative_gap"] if solve["relative_gap"] is not None else np.nan)
                if solve["status"] != "optimal":
                    bad.append(f"{key} {col} delta={f:.3g}x median: status {solve['status']!r}")
            counts = {s: statuses.count(s) for s in sorted(set(statuses))}
            lines.append(
                f"| {ds['label']} | {col} ({method}) | {counts} | {min(iters)}-{max(iters)} | "
                f"{np.sum(times):.1f} (max {np.max(times):.2f}) | {np.nanmax(gaps):.1e} |"
            )
    head = (
        "| data | normalization | statuses over the sweep | iterations | solve time, s (total, max) | "
        "worst certified relative gap |\n"
        "|---|---|---|---|---|---|"
    )
    return head + "\n" + "\n".join(lines), bad


def nan_report(results: dict) -> list[str]:
    notes = []
    for key, ds in results.items():
        for col, _ in METHODS:
            for f, rec in zip(ds["delta_factors"], ds["runs"][col]):
                if np.isnan(rec["error"]):
                    notes.append(f"{key} {col} delta={f:.3g}x median: recorded NaN ({rec['note']})")
    return notes


def max_nondegenerate_difference(results: dict) -> dict:
    """Largest |#errors(SSC) - #errors(FSC)| over the widths where neither eigenspace is degenerate."""
    out = {}
    for key, ds in results.items():
        n, worst = ds["n_samples"], 0
        for f, s in zip(ds["runs"]["FSC"], ds["runs"]["SSC"]):
            if min(f["eigengap"], s["eigengap"]) >= DEGENERATE_GAP:
                worst = max(worst, int(round(abs(f["error"] - s["error"]) * n)))
        out[key] = worst
    return out


def markdown(results: dict, config: dict) -> str:
    """The report, from the tables to the per-width results."""
    factors = config["delta_factors"]
    solves, bad = solve_report(results)
    nans = nan_report(results)
    parts = [
        f"Total run time {config['wall_time']:.0f} s with {config['threads']} BLAS thread(s).",
        "",
        "**Protocol.** Gaussian kernel `K_ij = exp(-||a_i - a_j||^2 / delta^2)`; every normalization is "
        "applied to the same K; spectral step = Yu-Shi multiclass discretization "
        f"(`cvxclust.rounding.discretize`, `n_init=10`, best objective kept, `random_state={config['seed']}`); "
        "error rate under the best one-to-one relabeling (Hungarian). FSC and SSC are solved with "
        "`solver=\"auto\"` (ADMM, certified duality gap). Data: scikit-learn's copies of the UCI sets.",
        "",
        f"**Kernel-width grid** (the paper does not give its grid): {len(factors)} values of "
        f"`delta / median pairwise distance`, log-spaced from {factors[0]:g} to {factors[-1]:g}: "
        + ", ".join(f"{f:.3g}" for f in factors)
        + ". Median distances: "
        + "; ".join(f"{k} {results[k]['median_distance']:.4g}" for k in results)
        + ".",
        "",
        "## Table II: lowest / mean error rate over the sweep (raw features, as in the paper)",
        "",
        "Best of each row in bold. `paper` rows are the published Table II (LD-SSC column).",
        "",
        results_table(results, [k for k in MAIN if k in results], with_paper=True),
        "",
    ]
    extra_keys = [k for k in EXTRA if k in results]
    if extra_keys:
        parts += [
            "## Extra (not in the paper): Wine with standardized features",
            "",
            "Each feature scaled to zero mean and unit variance before the kernel; same grid relative "
            "to the (new) median distance. The paper has no figures for this setting.",
            "",
            results_table(results, extra_keys, with_paper=False),
            "",
        ]
    sub = config["subgrid_min"]
    n_sub = sum(f >= sub - 1e-12 for f in factors)
    parts += [
        f"## Sensitivity to the grid (post hoc): only the widths delta >= {sub:g} x median",
        "",
        f"The same runs, summarised over the {n_sub} widest kernels of the grid only. This restriction "
        "was chosen after looking at the per-width results below (the Frobenius normalizations break "
        "down at small widths), so it is a diagnostic of how much the paper's unknown grid matters, "
        "not a second reproduction.",
        "",
        results_table(results, [k for k in MAIN if k in results], with_paper=True, summary="summary_subgrid"),
        "",
        "## Direction of the paper's claims (full grid)",
        "",
    ]
    for key, ds in results.items():
        pd = ds["summary"]["per_delta_ssc_vs_fsc"]
        nd = ds["summary"]["per_delta_ssc_vs_fsc_nondegenerate"]
        checks = "; ".join(f"{name}: {'yes' if ok else 'NO'}" for name, ok in direction_checks(ds))
        parts.append(
            f"- {ds['label']}: {checks}. Per width, SSC vs FSC: better at {pd['ssc_better']}, "
            f"equal at {pd['equal']}, worse at {pd['ssc_worse']} of {pd['n_widths']} widths; counting only "
            f"the {nd['n_widths']} widths where neither top-k eigenspace is degenerate: better at "
            f"{nd['ssc_better']}, equal at {nd['equal']}, worse at {nd['ssc_worse']}."
        )
    degenerate = "; ".join(
        f"{key}: " + ", ".join(f"{c} {ds['summary'][c]['n_degenerate']}" for c, _ in METHODS)
        for key, ds in results.items()
    )
    parts += [
        "",
        f"Widths at which the top-k eigenspace of the normalized matrix is degenerate (relative eigengap "
        f"(lambda_k - lambda_(k+1)) / |lambda_1| < {DEGENERATE_GAP:g}; the spectral step's answer there "
        f"depends on how the eigensolver breaks the tie, i.e. on round-off and solver tolerance): {degenerate}.",
        "",
        "For reference, the paper's own Table II has SSC best on both statistics for Iris and on the "
        "lowest error for Wine, but not on Wine's mean error (NO 0.3379 < SSC 0.3383).",
        "",
        "## Frobenius solves (FSC = QP (6), SSC = SDP (7))",
        "",
        solves,
        "",
    ]
    if bad:
        parts += ["**Not every solve reached `optimal`:**", ""] + [f"- {b}" for b in bad] + [""]
    else:
        parts += ["Every FSC and SSC solve of the sweep reached status `optimal` (ADMM's own stopping rule "
                  f"at tol = {SOLVER_TOL:g}, which requires a certified relative duality gap below tol).", ""]
    if nans:
        parts += ["**NaN entries** (excluded from lowest/mean):", ""] + [f"- {n}" for n in nans] + [""]
    else:
        smallest = "; ".join(
            f"{k}: mean off-diagonal entry {ds['kernel'][0]['mean_offdiag']:.2e}, "
            f"{100 * ds['kernel'][0]['frac_offdiag_below_1e-12']:.0f}% of off-diagonal entries below 1e-12"
            for k, ds in results.items()
        )
        parts += ["No normalization or discretization failed: no NaN entries. An rbf kernel has a unit "
                  "diagonal, so no row of K sums to zero and NC is defined even at the smallest width, "
                  f"where K is close to the identity ({smallest}).", ""]
    parts += [
        "## Caveats on comparability",
        "",
        "- Grid: the paper does not give its widths; the mean over the sweep depends strongly on how many "
        "small widths the grid holds (see the post-hoc table above).",
        f"- Solver: SSC here is the SDP (7) solved to a certified relative gap below {SOLVER_TOL:g}; the paper's "
        "LD-SSC figures come from L-BFGS-B on the dual, stopped at its own tolerance. The paper's Table IV "
        "already shows the exact (CVX) solution clustering differently from LD-SSC at a fixed width "
        "(Iris: CVX-SSC 0.1133 vs LD-SSC 0.0867).",
        "- Ties: where the top-k eigenspace is degenerate (`*` below), the clustering depends on round-off "
        "and solver tolerance, so those entries are not reproducible across solvers or machines. Where "
        "neither FSC's nor SSC's eigenspace is degenerate, their error counts differ by at most "
        + "; ".join(f"{n} sample(s) on {k}" for k, n in max_nondegenerate_difference(results).items())
        + " (one sample = 1/n: 0.0067 on Iris, 0.0056 on Wine).",
        "- Data: scikit-learn's Iris follows Fisher's paper and differs from the UCI file in two setosa "
        "samples (35 and 38); scikit-learn's Wine is the UCI copy.",
        "",
        "## Error rate at each kernel width",
        "",
        "`FSC lambda_min/lambda_max`: spectrum of the FSC answer (negative: the p.s.d. constraint of SSC is "
        "active). `‖SSC-FSC‖/‖FSC‖`: how far apart the two normalized matrices are. `eigengap`: relative gap "
        f"(lambda_k - lambda_(k+1)) / |lambda_1| of the normalized matrix, `*` when below {DEGENERATE_GAP:g} "
        "(degenerate: the clustering at that width is decided by tie-breaking).",
        "",
    ]
    for key, ds in results.items():
        parts += [f"### {ds['label']}", "", per_delta_table(ds), ""]
    parts += ["Figure: `table2.png` (error rate vs delta / median distance, one panel per data set, "
              "like the paper's Fig. 3).", ""]
    return "\n".join(parts)


def plot(results: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {"NO": ("k", "o"), "RC": ("tab:orange", "s"), "NC": ("tab:green", "^"),
              "FSC": ("tab:blue", "D"), "SSC": ("tab:red", "*")}
    fig, axes = plt.subplots(1, len(results), figsize=(4.6 * len(results), 3.8), sharey=True, squeeze=False)
    for ax, (key, ds) in zip(axes[0], results.items()):
        for col, _ in METHODS:
            errs = [r["error"] for r in ds["runs"][col]]
            color, marker = styles[col]
            ax.plot(ds["delta_factors"], errs, color=color, marker=marker, ms=7 if col == "SSC" else 5,
                    lw=2 if col == "SSC" else 1.2, label=col if col != "SSC" else "SSC (LD-SSC)",
                    alpha=0.9, zorder=3 if col == "SSC" else 2)
        degenerate = [(f, r["error"]) for c in ("FSC", "SSC") for f, r in zip(ds["delta_factors"], ds["runs"][c])
                      if r["eigengap"] < DEGENERATE_GAP]
        if degenerate:
            ax.scatter(*zip(*degenerate), s=160, facecolors="none", edgecolors="0.45", lw=1.0, zorder=4,
                       label="FSC/SSC: degenerate eigenspace")
        ax.set_xscale("log")
        ax.set_xlabel(f"delta / median distance (median = {ds['median_distance']:.3g})")
        ax.set_title(ds["label"], fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][0].set_ylabel("error rate")
    axes[0][0].legend(fontsize=7, loc="center right")
    fig.suptitle("Error rate vs Gaussian kernel width (cf. Fig. 3 of Yan, Shen & Wang 2014)", fontsize=11)
    fig.tight_layout()
    fig.savefig(path, dpi=130)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=RESULTS, help="output directory (default: benchmarks/results)")
    parser.add_argument("--n-deltas", type=int, default=13, help="number of kernel widths (default 13)")
    parser.add_argument("--min-factor", type=float, default=0.1, help="smallest delta / median distance")
    parser.add_argument("--max-factor", type=float, default=3.0, help="largest delta / median distance")
    parser.add_argument("--seed", type=int, default=0, help="seed of the discretization restarts")
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1, see the docstring)")
    parser.add_argument("--jobs", type=int, default=None, help="solve N (width, normalization) cells at a time")
    parser.add_argument("--scheduler", default=None, help="solve the cells on this Dask scheduler")
    parser.add_argument("--no-extra", action="store_true", help="skip the standardized-Wine extra table")
    parser.add_argument("--subgrid-min", type=float, default=0.5,
                        help="also summarise over delta / median >= this (grid-sensitivity table; default 0.5)")
    args = parser.parse_args(argv)
    if args.n_deltas < 2 or not 0 < args.min_factor < args.max_factor:
        parser.error("need --n-deltas >= 2 and 0 < --min-factor < --max-factor")
    env = environment(__file__, argv, args.threads)

    factors = np.geomspace(args.min_factor, args.max_factor, args.n_deltas)
    keys = list(MAIN) + ([] if args.no_extra else list(EXTRA))
    start = time.perf_counter()
    results = {}
    with limit_blas(args.threads), parallel_backend(args.jobs, args.scheduler):
        with tqdm(total=len(keys) * len(factors), desc="Table II sweep", unit="width") as bar:
            for key in keys:
                results[key] = run_dataset(key, factors, args.seed, bar, args.threads)
    wall = time.perf_counter() - start
    for ds in results.values():
        ds["summary_subgrid"] = summarize(ds, args.subgrid_min)
    config = {
        "delta_factors": factors.tolist(),
        "seed": args.seed,
        "threads": args.threads,
        "n_init": 10,
        "solver": "auto",
        "wall_time": wall,
        "subgrid_min": args.subgrid_min,
        "degenerate_eigengap": DEGENERATE_GAP,
    }
    text = markdown(results, config)
    md = write_results(
        args.out, "table2", "Table II of Yan, Shen & Wang (2014), reproduced on Iris and Wine",
        "Y. Yan, C. Shen, H. Wang, \"Efficient Semidefinite Spectral Clustering via Lagrange Duality\", IEEE "
        "Transactions on Image Processing, 2014: the error rates of five normalizations of a Gaussian kernel "
        "over a sweep of kernel widths (Sec. IV-B).", text,
        {"options": options_record(args), "config": config, "paper": PAPER, "datasets": results,
         "direction_checks": {k: dict(direction_checks(ds)) for k, ds in results.items()}},
        env, plot=lambda path: plot(results, path))

    # print the tables (everything up to the per-delta section)
    print(text.split("## Error rate at each kernel width")[0].rstrip())
    print(f"\nwrote {md.parent / 'table2'}.{{md,json,png}} in {wall:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
