"""The ``--ssc-sizes`` part of ``bench_lowrank.py``: ``SemidefiniteSpectralClustering(relaxation="peng-wei")``
of 10 Gaussian blobs in 10 dimensions (``make_blobs(n, centers=10, n_features=10)``, the default rbf
affinity), fitted with ``method="auto"`` (the low-rank method from n = 2000) and with the dense method
up to ``--dense-max-n``, each fit in its own process (``_harness.run_case``).

Each row holds the fit's time and peak memory, the solve's certified gap, residual and status, the
adjusted Rand index of the labels against the blobs, and where the time and the memory went: the
stages of the fit (:data:`STAGES`) timed by wrapping the functions that carry them, each with the
resident memory it left held and the process's peak when it ended.
"""

from __future__ import annotations

import functools
import gc
import math
import time
import warnings

from _harness import fmt, markdown_table, peak_rss_kb

#: the stages of a fit: (label, module, owner attribute or None, function name)
STAGES = (
    ("affinity", "cvxclust.ssc._estimator", "SemidefiniteSpectralClustering", "_affinity"),
    ("checks of K", "cvxclust.ssc._normalize", None, "check_matrix"),
    ("checks of K", "cvxclust.ssc._peng_wei", None, "check_matrix"),
    ("cvxpy statement", "cvxclust.ssc._peng_wei", "PengWei", "problem"),
    ("reading", "cvxclust.generic.entry", None, "standard_form"),
    ("objective scale", "cvxclust.generic.entry", "CvxpyRelaxation", "objective_scale"),
    ("compression attempt", "cvxclust.generic.lowrank", None, "compress_cost"),
    ("spectral start", "cvxclust.generic.lowrank", None, "spectral_factor"),
    ("spectral start", "cvxclust.generic.lowrank", None, "stationary_multipliers"),
    ("descent", "cvxclust.generic.lowrank", "LowRank", "step"),
    ("certificate", "cvxclust.generic.lowrank_check", "LowRankChecks", "certify"),
    ("judging the point", "cvxclust.ssc._peng_wei", "PengWei", "_judged"),
    ("spectral step", "cvxclust.ssc._estimator", "SemidefiniteSpectralClustering", "_spectral_step"),
)
GB = 2.0 ** 30


def _memory() -> tuple[float, float]:
    """(resident, peak) bytes of this process."""
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                values[line[:5]] = float(line.split()[1]) * 1024
    return values["VmRSS"], values["VmHWM"]


def _timed(stages: dict, label: str, func):
    """``func`` adding its seconds, the memory it left held and the peak at its end to ``stages[label]``
    (a call inside another timed call of the same label is not counted twice)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        entry = stages.setdefault(label, {"seconds": 0.0, "held_gb": 0.0, "peak_gb": 0.0, "calls": 0, "active": 0})
        if entry["active"]:
            return func(*args, **kwargs)
        entry["active"] += 1
        before, start = _memory()[0], time.perf_counter()
        try:
            return func(*args, **kwargs)
        finally:
            resident, peak = _memory()
            entry["active"] -= 1
            entry["calls"] += 1
            entry["seconds"] += time.perf_counter() - start
            entry["held_gb"] += (resident - before) / GB
            entry["peak_gb"] = max(entry["peak_gb"], peak / GB)
    return wrapper


def _instrument(stages: dict) -> None:
    import importlib

    for label, module, owner, name in STAGES:
        target = importlib.import_module(module)
        target = getattr(target, owner) if owner else target
        setattr(target, name, _timed(stages, label, getattr(target, name)))


def ssc_case(n: int, method: str, tol: float, time_limit: float, seed: int, reset_peak) -> dict:
    """One fit at order n with ``method``: its figures and its stages (module docstring)."""
    from sklearn.datasets import make_blobs
    from sklearn.metrics import adjusted_rand_score

    from cvxclust import SemidefiniteSpectralClustering

    stages: dict = {}
    _instrument(stages)
    X, blobs = make_blobs(n, centers=10, n_features=10, random_state=seed)
    gc.collect()
    held = reset_peak()
    est = SemidefiniteSpectralClustering(10, relaxation="peng-wei", method=method, random_state=seed,
                                         solver_options={"tol": tol, "residual_tol": tol, "time_limit": time_limit})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est.fit(X)
        fit_time = time.perf_counter() - start
    result = est.result_
    extras = result.extras
    for entry in stages.values():
        del entry["active"]
    return {"time": fit_time, "solve_time": result.time, "read_time": extras.get("read_time"),
            "objective": result.objective, "dual_bound": result.dual_bound, "relative_gap": result.relative_gap,
            "max_residual": result.max_residual, "status": result.status, "ran": result.method,
            "iterations": result.iterations, "rank": extras.get("rank"), "eigsh": extras.get("eigsh"),
            "lanczos_matvecs": extras.get("lanczos_matvecs"), "ari": float(adjusted_rand_score(blobs, est.labels_)),
            "solve_peak_mb": (peak_rss_kb() or math.nan) / 1024, "instance_mb": held, "stages": stages,
            "peak_from": "fit" if held is not None else "process"}


def ssc_markdown(rows: list[dict], eigh: dict, dense_method: str) -> str:
    """The table of the fits and, for each of the largest order's, the table of its stages."""
    for r in rows:
        equivalent = eigh["time"] * (r["n"] / eigh["n"]) ** 3
        r["in_eigh"] = r["time"] / equivalent if isinstance(r.get("time"), float) and math.isfinite(r["time"]) \
            else None
        base = next((s for s in rows if s["n"] == r["n"] and s["method"] == dense_method
                     and s.get("status") == "optimal"), None)
        if base is not None and base is not r and isinstance(r.get("objective"), float):
            r["dense_difference"] = abs(r["objective"] - base["objective"]) / max(abs(base["objective"]), 1e-300)
    header = ["n", "method", "ran", "fit (s)", "solve (s)", "in eigh", "peak (GB)", "rank", "eigsh", "Lanczos products",
              "objective", "certified gap", "max residual", "rel. diff from dense", "ARI", "status"]
    table = markdown_table(header, [
        [r["n"], r["method"], r.get("ran", "–"), fmt(r.get("time"), ".2f"), fmt(r.get("solve_time"), ".2f"),
         fmt(r.get("in_eigh"), ".2f"), fmt(r.get("solve_peak_mb", r.get("peak_rss_mb", math.nan)) / 1024, ".2f"),
         _count(r.get("rank")), _count(r.get("eigsh")), _count(r.get("lanczos_matvecs")),
         fmt(r.get("objective"), ".10g"),
         fmt(r.get("relative_gap"), ".1e"), fmt(r.get("max_residual"), ".1e"),
         "dense" if r["method"] == dense_method else fmt(r.get("dense_difference"), ".1e"), fmt(r.get("ari"), ".3f"),
         str(r["status"]).replace("|", "/")]
        for r in sorted(rows, key=lambda r: (r["n"], r["method"]))])
    parts = [table]
    largest = max((r["n"] for r in rows if r.get("stages")), default=None)
    for r in rows:
        if r["n"] == largest and r.get("stages"):
            title = f"#### Where the time and the memory went: n = {r['n']}, {r['method']}\n\n"
            parts.append(title + markdown_table(
                ["stage", "calls", "seconds", "share of the fit", "memory left held (GB)",
                 "process peak at its end (GB)"],
                [[label, s["calls"], fmt(s["seconds"], ".2f"), fmt(s["seconds"] / r["time"], ".0%"),
                  fmt(s["held_gb"], "+.2f"), fmt(s["peak_gb"], ".2f")] for label, s in r["stages"].items()]
                + [["the rest (forming X = F F^T among it)", "–", fmt(rest, ".2f"), fmt(rest / r["time"], ".0%"),
                    "–", "–"] for rest in [r["time"] - sum(s["seconds"] for s in r["stages"].values())]]))
    return "\n\n".join(parts)


def _count(value) -> str:
    return "–" if value is None else str(value)


def ssc_plot(rows: list[dict]):
    """Fit time and peak memory against n, log-log, one line per method."""
    def draw(path):
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
        for method in dict.fromkeys(r["method"] for r in rows):
            same = sorted((r for r in rows if r["method"] == method and isinstance(r.get("time"), float)
                           and math.isfinite(r["time"])), key=lambda r: r["n"])
            if same:
                axes[0].loglog([r["n"] for r in same], [r["time"] for r in same], "o-", label=method)
                axes[1].loglog([r["n"] for r in same], [r["solve_peak_mb"] / 1024 for r in same], "o-", label=method)
        for ax, label in zip(axes, ("fit time (s)", "peak memory of the fit (GB)")):
            ax.set_xlabel("n")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
            ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)

    return draw
