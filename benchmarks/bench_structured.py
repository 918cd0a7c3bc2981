"""Structured clustering on data whose structure is known: does each method find it?

    python benchmarks/bench_structured.py                      # the full grid (about 20 minutes)
    python benchmarks/bench_structured.py --sizes 200 --noises 1.0 --no-images   # a quick look

Synthetic data: :func:`cvxclust.datasets.structured_blobs` (Gaussian blobs of standard deviation
``noise`` on the structure's layout, neighbouring clusters 4 apart) for ``chain(10)``,
``ring(10)``, ``tree([3, 3])`` and ``kron(chain(3), chain(4))``, at each size and noise; image
sets: :func:`cvxclust.datasets.rotating_object` (``chain``, 5 clusters; ``ring``, 10) and
:func:`cvxclust.datasets.objects_by_pose` (``kron(flat(4), chain(3))``).  Input kernel: rbf with
the median width, centred.  Methods: the :class:`cvxclust.cluhsic.CLUHSIC` estimator with its
defaults (greedy + refinement), and each optimizer alone (``refine=False``: greedy, the low-rank
SDP with the rounding, NMF, spectral) and the low-rank SDP refined; the
:class:`cvxclust.cluhsical.CLUHSICAL` estimator with its defaults and its greedy alone; k-means
on the data and scikit-learn's SpectralClustering on the same rbf kernel.  The low-rank SDP and
NMF run up to ``--relaxation-max-m`` points (they take minutes beyond).

Scores: the objective (2.4) of each partition (CLUHSIC's normalized objective with the
structure's output kernel, whatever the method optimizes) relative to the ground truth's,
``(f - f_truth) / |f_truth|`` (>= 0: the partition scores at least the truth); the accuracy
and the structured loss (chain distance, ring 0/1/2, tree) under the best relabeling the structure
admits (:func:`cvxclust.structures.admissible_permutations`); the accuracy under any
relabeling (the partition alone, wherever its clusters sit); wall time of the fit.  Writes
``benchmarks/results/structured.{md,json,png}``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
from _harness import RESULTS, environment, fmt, limit_blas, markdown_table, options_record, write_results

SYNTHETIC = ("chain", "ring", "tree", "grid")
IMAGES = ("chain-images", "ring-images", "pose-images")
METHODS = ("CLUHSIC", "greedy", "lowrank", "lowrank+refine", "nmf", "spectral", "CLUHSICAL", "CLUHSICAL greedy",
           "KMeans", "SpectralClustering")
RELAXATIONS = ("lowrank", "lowrank+refine", "nmf")


def structure_of(name: str):
    from cvxclust.structures import chain, flat, kron, ring, tree
    return {"chain": chain(10), "ring": ring(10), "tree": tree([3, 3]), "grid": kron(chain(3), chain(4)),
            "chain-images": chain(5), "ring-images": ring(10), "pose-images": kron(flat(4), chain(3))}[name]


def dataset(name: str, m: int, noise: float, seed: int):
    from cvxclust.datasets import objects_by_pose, rotating_object, structured_blobs
    structure = structure_of(name)
    if name in SYNTHETIC:
        X, y = structured_blobs(structure, m, cluster_std=noise, random_state=seed)
    elif name == "pose-images":
        X, y, _, _ = objects_by_pose(random_state=seed)
    else:
        X, y, _ = rotating_object(name.split("-")[0], random_state=seed)
    return X, y, structure


def fit(method: str, X, structure, seed: int) -> np.ndarray:
    from sklearn.cluster import KMeans, SpectralClustering

    from cvxclust.cluhsic import CLUHSIC
    from cvxclust.cluhsical import CLUHSICAL
    from cvxclust.kernels import rbf
    c = len(structure.graph["clusters"])
    common = {"structure": structure, "random_state": seed}
    if method == "KMeans":
        return KMeans(c, n_init=10, random_state=seed).fit_predict(X)
    if method == "SpectralClustering":
        return SpectralClustering(c, affinity="precomputed", random_state=seed).fit_predict(rbf(X))
    if method.startswith("CLUHSICAL"):
        return CLUHSICAL(c, refine=method == "CLUHSICAL", **common).fit(X).labels_
    if method == "CLUHSIC":
        return CLUHSIC(c, certify=False, **common).fit(X).labels_
    name = method.split("+")[0]
    options = {"time_limit": 120.0} if name == "lowrank" else {}
    problem = {"greedy": {}, "nmf": {"method": "nmf"}}.get(name, {"relaxation": name})  # lowrank, spectral
    return CLUHSIC(c, refine=method.endswith("+refine"), certify=False, solver_options=options, **problem,
                   **common).fit(X).labels_


def score_cell(name: str, m: int, noise: float, seed: int, methods, relaxation_max_m: int) -> list[dict]:
    from cvxclust.cluhsic import objective, partition_matrix
    from cvxclust.kernels import center, rbf
    from cvxclust.metrics import accuracy, structured_loss
    from cvxclust.structures import admissible_permutations, loss_matrix, output_kernel
    X, y, structure = dataset(name, m, noise, seed)
    m = X.shape[0]
    K, A = center(rbf(X)), output_kernel(structure)
    c = A.shape[0]
    perms, loss = admissible_permutations(structure), loss_matrix(structure)
    truth = objective(K, A, partition_matrix(y, c, normalization="l2"))
    rows = []
    for method in methods:
        if method in RELAXATIONS and m > relaxation_max_m:
            continue
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # iteration limits of the methods alone: their partitions count
            labels = fit(method, X, structure, seed)
        seconds = time.perf_counter() - start
        value = objective(K, A, partition_matrix(labels, c, normalization="l2"))
        rows.append({"data": name, "m": m, "c": c, "noise": noise if name in SYNTHETIC else None, "method": method,
                     "objective": value, "truth_objective": truth,
                     "objective_vs_truth": (value - truth) / abs(truth),
                     "accuracy": accuracy(y, labels, perms), "partition_accuracy": accuracy(y, labels),
                     "structured_loss": structured_loss(y, labels, loss, perms),
                     "time": seconds})
        print(f"{name} m={m} noise={noise} {method}: {rows[-1]['objective_vs_truth']:+.2e} "
              f"acc {rows[-1]['accuracy']:.3f} {seconds:.1f} s", flush=True)
    return rows


def summary(rows: list[dict], methods) -> str:
    header = ["method", "cells", "reaches truth's objective", "median objective vs truth", "worst objective vs truth",
              "median accuracy", "median accuracy, any relabeling", "median loss", "median time (s)"]
    table = []
    for method in methods:
        mine = [r for r in rows if r["method"] == method]
        if not mine:
            continue
        gap = np.array([r["objective_vs_truth"] for r in mine])
        table.append([method, len(mine), f"{int(np.sum(gap >= -1e-9))}/{len(mine)}", fmt(np.median(gap), "+.1e"),
                      fmt(gap.min(), "+.1e"), fmt(np.median([r["accuracy"] for r in mine]), ".3f"),
                      fmt(np.median([r["partition_accuracy"] for r in mine]), ".3f"),
                      fmt(np.median([r["structured_loss"] for r in mine]), ".3f"),
                      fmt(np.median([r["time"] for r in mine]), ".2f")])
    return markdown_table(header, table)


def details(rows: list[dict]) -> str:
    header = ["data", "m", "noise", "method", "objective", "truth", "objective vs truth", "accuracy",
              "accuracy, any relabeling", "loss", "time (s)"]
    return markdown_table(header, [[r["data"], r["m"], fmt(r["noise"], ".1f"), r["method"], fmt(r["objective"], ".2f"),
                                    fmt(r["truth_objective"], ".2f"), fmt(r["objective_vs_truth"], "+.1e"),
                                    fmt(r["accuracy"], ".3f"), fmt(r["partition_accuracy"], ".3f"),
                                    fmt(r["structured_loss"], ".3f"),
                                    fmt(r["time"], ".2f")] for r in rows])


def plot(rows: list[dict], methods, path: Path) -> None:
    import matplotlib.pyplot as plt
    present = [m for m in methods if any(r["method"] == m for r in rows)]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8), constrained_layout=True)
    rng = np.random.default_rng(0)
    for ax, key, label in [(axes[0], "objective_vs_truth", "(f - f_truth) / |f_truth|  (objective (2.4))"),
                           (axes[1], "accuracy", "accuracy (best admissible relabeling)")]:
        for i, method in enumerate(present):
            values = np.array([r[key] for r in rows if r["method"] == method])
            ax.scatter(i + rng.uniform(-0.2, 0.2, values.size), values, s=14, alpha=0.7)
            ax.hlines(np.median(values), i - 0.3, i + 0.3, color="k")
        ax.set_xticks(range(len(present)), present, rotation=35, ha="right")
        ax.set_ylabel(label)
        ax.grid(axis="y", alpha=0.3)
    axes[0].axhline(0.0, color="tab:red", lw=1)
    axes[0].set_yscale("symlog", linthresh=1e-3)
    axes[0].set_title("objective relative to the ground truth (>= 0: reaches it)")
    axes[1].set_title("structure-respecting accuracy")
    axes[1].set_ylim(0, 1.02)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", nargs="+", default=list(SYNTHETIC), choices=SYNTHETIC)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 500, 2000])
    parser.add_argument("--noises", type=float, nargs="+", default=[1.0, 1.5], help="blob standard deviations")
    parser.add_argument("--no-images", action="store_true", help="skip the image sets")
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--relaxation-max-m", type=int, default=500, help="largest m for lowrank and nmf")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="BLAS threads (default 1)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv)
    rows = []
    with limit_blas(args.threads):
        for name in args.data:
            for noise in args.noises:
                for m in args.sizes:
                    rows += score_cell(name, m, noise, args.seed, args.methods, args.relaxation_max_m)
        if not args.no_images:
            for name in IMAGES:
                rows += score_cell(name, 0, 0.0, args.seed, args.methods, args.relaxation_max_m)
    description = (
        "Structured clustering on data whose structure is known (see the script's docstring): every method's "
        "partition scored by CLUHSIC's objective (2.4) relative to the ground truth's, the accuracy and the "
        "structured loss under the best relabeling the structure admits, and the wall time of the fit. "
        f"Synthetic blobs: {', '.join(args.data)} at m = {', '.join(map(str, args.sizes))} and noise "
        f"{', '.join(map(str, args.noises))}; lowrank and nmf up to m = {args.relaxation_max_m}. "
        "'CLUHSIC' and 'CLUHSICAL' are the estimators with their defaults (the refinement on); the other "
        "rows are the optimizers alone.")
    body = "## Summary over all cells\n\n" + summary(rows, args.methods) + "\n\n## Every cell\n\n" + details(rows)
    write_results(args.out, "structured", "Structured clustering: objective, accuracy and time against the truth",
                  description, body, {"options": options_record(args), "rows": rows}, env,
                  plot=lambda path: plot(rows, args.methods, path))


if __name__ == "__main__":
    main()
