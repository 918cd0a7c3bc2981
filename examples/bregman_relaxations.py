r"""
Relaxing Bregman hard clustering: the exact set M versus M1 versus M2
=====================================================================

Two convex relaxations of Bregman hard clustering compared with the exact, non-convex problem on
30 Iris flowers: the optimal values are ordered as the sets are nested, and the relaxed matrices
show how close each relaxation stays to a partition.  The relaxations are those of H. Cheng,
X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence Clustering", Conference on
Uncertainty in Artificial Intelligence (UAI), 2013, Section 3.1.

Bregman hard clustering (6) minimises :math:`D_F(X, Y\Gamma)` over assignments :math:`Y` and
centres :math:`\Gamma`.  The optimal centres are the cluster means, so with the normalized
equivalence matrix (9)

.. math::

    M = Y (Y^\top Y)^{+} Y^\top, \qquad
    M_{ij} = \begin{cases} 1/n_k & \text{if } i \text{ and } j \text{ share cluster } k, \\
                           0 & \text{otherwise,} \end{cases}

it reads :math:`\min_{M \in \mathcal{M}} D_F(X, MX)`: :math:`MX` replaces each point by its
cluster mean.  The set :math:`\mathcal{M}` of these matrices is not convex; the paper relaxes it
to

.. math::

    \mathcal{M}_1 &= \{M : 0 \preceq M \preceq I, \ \operatorname{tr} M \le d,
                     \ M \mathbf{1} = \mathbf{1}, \ M \ge 0 \text{ entrywise}\} \qquad \text{(10)} \\
    \mathcal{M}_2 &= \{M : 0 \preceq M \preceq I, \ \operatorname{tr} M \le d,
                     \ M \mathbf{1} = \mathbf{1}\} \qquad (\mathcal{M}_1 \text{ without } M \ge 0)

so :math:`\mathcal{M} \subset \mathcal{M}_1 \subset \mathcal{M}_2` and the optimal values are
ordered: :math:`\min_{\mathcal{M}_2} \le \min_{\mathcal{M}_1} \le \min_{\mathcal{M}}`.  With the
squared Euclidean divergence, :math:`D_F(X, MX) = \|X - MX\|^2 / 2` and the exact problem is
k-means (objective = inertia / 2).

The script takes 10 flowers of each Iris class (:math:`t = 30`, features standardized) and
solves

- over :math:`\mathcal{M}_2`: the cvxpy statement :math:`\min \|X - MX\|^2 / 2` with
  ``constraints_M2`` (Clarabel);
- over :math:`\mathcal{M}_1`: ``ConditionalJC(X, "euclidean", 3).solve("reference")`` (the cvxpy
  statement of (10), Clarabel), and its certified scalable solver (Davis-Yin splitting) for
  comparison;
- over :math:`\mathcal{M}`: :math:`t = 30` points have :math:`3^{30} / 3!` assignments, too many
  to enumerate, so the "exact" value is the best of 300 random restarts of Bregman hard
  clustering (Lloyd) polished by single-point moves: an upper bound on the exact optimum, and in
  practice the optimum for this small set.

It prints the three objectives (checking :math:`\mathcal{M}_2 \le \mathcal{M}_1 \le` exact),
rounds each relaxed :math:`M` by spectral clustering (10 repeats) and re-optimises from the
rounding, and draws the three matrices as heat maps, points sorted by true class.  The colour
scale is centred at zero: the negative entries that :math:`\mathcal{M}_2` allows show in blue.

Run::

    python examples/bregman_relaxations.py [--out cvxclust_figures/bregman_relaxations.png] [--per-class 10]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import cvxpy as cp  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import TwoSlopeNorm  # noqa: E402
from sklearn.preprocessing import StandardScaler  # noqa: E402

from cvxclust.bregman import ConditionalJC, bregman_hard_clustering, round_equivalence  # noqa: E402
from cvxclust.bregman.divergences import get_divergence  # noqa: E402
from cvxclust.bregman.sets import constraints_M2, equivalence_matrix, residuals_M1, residuals_M2  # noqa: E402
from cvxclust.datasets import load_dataset  # noqa: E402
from cvxclust.metrics import accuracy  # noqa: E402


def solve_over_M2(X: np.ndarray, divergence, n_clusters: int) -> np.ndarray:
    """``min_{M in M2} D_F(X, M X)`` stated in cvxpy (M1's statement without ``M >= 0``)."""
    t = X.shape[0]
    M = cp.Variable((t, t), symmetric=True)
    problem = cp.Problem(cp.Minimize(divergence.cvxpy_divergence(X, M @ X)), constraints_M2(M, n_clusters))
    problem.solve(solver="CLARABEL")
    if problem.status != "optimal":
        raise RuntimeError(f"the M2 problem ended with status {problem.status!r}")
    return (M.value + M.value.T) / 2


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("cvxclust_figures/bregman_relaxations.png"),
                        help="figure path (its folders are created)")
    parser.add_argument("--per-class", type=int, default=10, help="Iris flowers per class (t = 3 x this)")
    parser.add_argument("--restarts", type=int, default=300, help="hard-clustering restarts for the exact M")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X, y = load_dataset("iris", 3 * args.per_class, random_state=args.seed)
    X = StandardScaler().fit_transform(X)
    t, d = X.shape[0], 3
    div = get_divergence("euclidean")

    start = time.perf_counter()
    M2 = solve_over_M2(X, div, d)
    time_m2 = time.perf_counter() - start
    relaxation = ConditionalJC(X, div, d)
    ref = relaxation.solve("reference", solver="CLARABEL")
    scalable = relaxation.solve(tol=1e-4, residual_tol=1e-4)  # Davis-Yin for this quadratic divergence
    start = time.perf_counter()
    exact = bregman_hard_clustering(X, div, d, n_init=args.restarts, refine=True, random_state=args.seed)
    time_exact = time.perf_counter() - start
    M_exact = equivalence_matrix(exact.X, d)

    f = relaxation.objective  # D_F(X, M X) for any t x t matrix
    rows = [("M2 (cvxpy, Clarabel)", M2, time_m2, residuals_M2(M2, d)),
            ("M1 (cvxpy, Clarabel)", ref.X, ref.time, residuals_M1(ref.X, d)),
            (f"M1 (certified {scalable.method})", scalable.X, scalable.time, residuals_M1(scalable.X, d)),
            (f"M  (best of {args.restarts} restarts)", M_exact, time_exact, residuals_M1(M_exact, d))]
    print(f"Iris, {args.per_class} flowers per class (t = {t}), standardized, squared Euclidean divergence\n")
    print(f"{'set':<30} {'D_F(X, MX)':>11} {'time s':>7} {'worst residual':>15} {'min entry':>10} {'trace':>6}")
    for name, M, seconds, res in rows:
        print(f"{name:<30} {f(M):11.5f} {seconds:7.2f} {max(res.values()):15.1e} {M.min():10.4f} {np.trace(M):6.3f}")
    print(f"\n{scalable.method}: status {scalable.status}, {scalable.iterations} iterations, certified lower "
          f"bound {scalable.dual_bound:.5f} (relative gap {scalable.relative_gap:.1e})")
    f2, f1, fe = f(M2), f(ref.X), f(M_exact)
    slack = 1e-6 * max(abs(fe), 1.0)  # interior-point accuracy
    ordered = f2 <= f1 + slack and f1 <= fe + slack
    print(f"ordering M2 <= M1 <= exact: {f2:.5f} <= {f1:.5f} <= {fe:.5f}  ->  {'holds' if ordered else 'VIOLATED'}")
    if not ordered:
        raise RuntimeError("the relaxations' values are not ordered: a solver failed")

    print(f"\n{'rounded from':<30} {'accuracy':>9} {'D_F(X, Y Gamma)':>16} {'after re-opt':>13} {'accuracy':>9}")
    for name, M, _, _ in rows:
        labels = round_equivalence(M, d, n_init=10, random_state=args.seed).X
        local = bregman_hard_clustering(X, div, d, init=labels)
        print(f"{name:<30} {accuracy(y, labels):9.3f} {f(equivalence_matrix(labels, d)):16.5f} "
              f"{local.objective:13.5f} {accuracy(y, local.X):9.3f}")

    # heat maps; points are sorted by true class (load_dataset sorts), so blocks show the classes
    fig, axes = plt.subplots(1, 3, figsize=(12, 4.4), layout="constrained")
    norm = TwoSlopeNorm(vcenter=0.0, vmin=min(M2.min(), -1e-3), vmax=max(M2.max(), ref.X.max(), M_exact.max()))
    def smallest(M):  # rounding noise of an interior-point solution must not print as "-0.000"
        return f"{M.min():.3f}".replace("-0.000", "0.000")

    titles = [f"$\\mathcal{{M}}_2$ relaxation\nD = {f2:.3f}, smallest entry {smallest(M2)}",
              f"$\\mathcal{{M}}_1$ relaxation (10)\nD = {f1:.3f}, smallest entry {smallest(ref.X)}",
              f"exact $\\mathcal{{M}}$ (best hard clustering)\nD = {fe:.3f}"]
    for ax, M, title in zip(axes, (M2, ref.X, M_exact), titles):
        image = ax.imshow(M, cmap="RdBu_r", norm=norm, interpolation="nearest")
        for boundary in np.flatnonzero(np.diff(y)) + 0.5:
            ax.axhline(boundary, color="k", lw=0.6)
            ax.axvline(boundary, color="k", lw=0.6)
        ax.set_title(title, fontsize=11)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.colorbar(image, ax=axes, shrink=0.85, label="$M_{ij}$")
    fig.suptitle(f"Normalized equivalence matrices on Iris (t = {t}, points sorted by class, "
                 "lines separate the classes)", fontsize=12)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"\nfigure written to {args.out}")


if __name__ == "__main__":
    main()
