r"""
Five normalizations of an affinity matrix, and semidefinite spectral clustering
===============================================================================

Spectral clustering normalizes its affinity matrix before taking eigenvectors.  This example
compares five normalizations on four digit classes of scikit-learn's ``digits``, the last of
them the semidefinite program of Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral
Clustering via Lagrange Duality", IEEE Transactions on Image Processing, 2014, solved with a
certified gap.

Spectral clustering builds an affinity :math:`K` (here Gaussian,
:math:`K_{ij} = \exp(-\|a_i - a_j\|^2 / \delta^2)`), *normalizes* it to :math:`\hat K`, and
clusters the rows of the top-:math:`k` eigenvectors of :math:`\hat K` (here by the multiclass
discretization of S. X. Yu, J. Shi, "Multiclass Spectral Clustering", IEEE International
Conference on Computer Vision (ICCV), 2003).  Kernel k-means would instead want the matrix
:math:`F = W W^\top` of a partition (:math:`F_{ij} = 1/n_r` when :math:`i` and :math:`j` share
cluster :math:`r`, else 0), which is symmetric, nonnegative, doubly stochastic and positive
semidefinite.  Each normalization is a nearest such matrix under some error measure (R. Zass,
A. Shashua, "Doubly Stochastic Normalization for Spectral Clustering", Advances in Neural
Information Processing Systems (NIPS), 2006):

.. list-table::
   :header-rows: 1
   :widths: 8 20 42 30

   * - name
     - ``method``
     - :math:`\hat K`
     - error measure
   * - NO
     - ``"none"``
     - :math:`K`
     - none
   * - RC
     - ``"ratio-cut"``
     - :math:`K - D + I`, with :math:`D = \operatorname{diag}(K \mathbf{1})`
     - :math:`L_1` error
   * - NC
     - ``"normalized-cut"``
     - :math:`D^{-1/2} K D^{-1/2}`
     - relative entropy, one step
   * - FSC
     - ``"frobenius"``
     - the QP (6) below
     - Frobenius norm
   * - SSC
     - ``"frobenius-psd"``
     - the SDP (7): the QP (6) with :math:`F \succeq 0` added
     - Frobenius norm

.. math::

    \hat K = \mathop{\mathrm{arg\,min}}_F \ \tfrac12 \|F - K\|_F^2
    \quad \text{subject to} \quad F \ge 0, \quad F \mathbf{1} = \mathbf{1}, \quad F = F^\top.
    \qquad \text{(6)}

SSC adds the constraint every partition matrix satisfies, :math:`F \succeq 0`, and the problem
becomes a semidefinite program.  ``cvxclust`` solves it on its Lagrange dual: Newton's method
on the multipliers of the row sums, a projected gradient on the multiplier :math:`S \succeq 0`
of :math:`F \succeq 0`.  Every pair of multipliers gives a *certified* lower bound on the
optimum (weak duality), so every solve reports ``objective - dual_bound``: a proof of how close
to optimal the answer is.

The script takes four digit classes of ``digits`` (8x8 images, sorted by label), prints the
error rate of every normalization and the SSC solve's objective, dual bound and certified gap,
and draws a figure like the paper's Fig. 5: the affinity matrix and the normalized matrices as
heat maps (diagonal hidden, darker = more similar), and the difference between the SSC and FSC
answers, nonzero when the constraint :math:`F \succeq 0` is active.

Run::

    python examples/ssc_normalizations.py [--out cvxclust_figures/ssc_normalizations.png] [--n-samples 160]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

from cvxclust import kernels  # noqa: E402
from cvxclust.datasets import load_dataset  # noqa: E402
from cvxclust.metrics import error_rate  # noqa: E402
from cvxclust.rounding import discretize  # noqa: E402
from cvxclust.ssc import normalize  # noqa: E402

NORMALIZATIONS = [
    ("NO", "none"),
    ("RC", "ratio-cut"),
    ("NC", "normalized-cut"),
    ("FSC", "frobenius"),
    ("SSC", "frobenius-psd"),
]


def load_digits_subset(digits, n_samples: int, seed: int = 0):
    """``n_samples // len(digits)`` random images of each of ``digits``, sorted by label."""
    X, y = load_dataset("digits")  # all 1797 images, sorted by label
    per_class = n_samples // len(digits)
    rng = np.random.default_rng(seed)
    idx = np.concatenate([np.sort(rng.choice(np.flatnonzero(y == d), per_class, replace=False)) for d in digits])
    return X[idx], y[idx]


def heatmap(ax, A, y, title, diverging=False):
    """Off-diagonal entries of A in gray levels (darker = larger; 1st-99th percentile), or in a
    blue-red scale centred at 0 with ``diverging=True``; class blocks outlined, colour bar added."""
    A = np.array(A, dtype=float)
    np.fill_diagonal(A, np.nan)  # the diagonal dwarfs the rest for NO/RC/FSC/SSC
    off = A[~np.isnan(A)]
    if diverging:
        v = max(np.percentile(np.abs(off), 99.5), 1e-12)
        image = ax.imshow(A, cmap="RdBu_r", vmin=-v, vmax=v, interpolation="nearest")
    else:
        lo, hi = np.percentile(off, [1, 99])
        image = ax.imshow(A, cmap="gray_r", vmin=lo, vmax=max(hi, lo + 1e-12), interpolation="nearest")
    for e in np.flatnonzero(np.diff(y)) + 0.5:
        ax.axhline(e, color="tab:green", lw=0.8)
        ax.axvline(e, color="tab:green", lw=0.8)
    ax.set_title(title, fontsize=10)
    ax.set_xticks([])
    ax.set_yticks([])
    colorbar = ax.figure.colorbar(image, ax=ax, shrink=0.85, pad=0.02)
    colorbar.ax.tick_params(labelsize=8)
    colorbar.formatter.set_powerlimits((-2, 3))  # small entries as "x 1e-3", not long decimals


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("cvxclust_figures/ssc_normalizations.png"),
                        help="figure path (its folders are created)")
    parser.add_argument("--n-samples", type=int, default=160, help="number of images (default 160)")
    parser.add_argument("--digits", type=int, nargs="+", default=[3, 5, 8, 9], help="digit classes (default 3 5 8 9)")
    parser.add_argument("--delta-factor", type=float, default=2.0,
                        help="kernel width as a multiple of the median pairwise distance (default 2, a width "
                             "at which the p.s.d. constraint is active for the default digits)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the subset and the discretization")
    args = parser.parse_args(argv)
    if args.n_samples < 2 * len(args.digits):
        parser.error(f"--n-samples must be at least {2 * len(args.digits)}")

    # The matrices are small: one BLAS thread avoids oversubscription on a busy machine.
    with threadpool_limits(limits=1):
        run(args)


def run(args) -> None:
    """Normalize, cluster, print the comparison and draw the figure."""
    start = time.perf_counter()

    X, y = load_digits_subset(args.digits, args.n_samples, args.seed)
    k = len(args.digits)
    delta = args.delta_factor * kernels.median_distance(X)
    K = kernels.rbf(X, delta)
    print(f"digits {args.digits}: {X.shape[0]} images of {X.shape[1]} pixels, k = {k} clusters")
    print(f"Gaussian kernel, delta = {args.delta_factor:g} x median distance = {delta:.3f}\n")

    print(f"{'normalization':<22} {'error rate':>10} {'time (s)':>9}  solver")
    matrices, errors, results = {}, {}, {}
    for label, relaxation in NORMALIZATIONS:
        t0 = time.perf_counter()
        K_hat, result = normalize(K, relaxation, return_result=True)
        elapsed = time.perf_counter() - t0
        labels = discretize(K_hat, k, n_init=10, random_state=args.seed)
        matrices[label], results[label] = K_hat, result
        errors[label] = error_rate(y, labels)
        solver = "closed form" if result is None else f"{result.method}, {result.status}, {result.iterations} it"
        print(f"{label + ' (' + relaxation + ')':<22} {errors[label]:>10.4f} {elapsed:>9.2f}  {solver}")

    ssc, fsc = results["SSC"], results["FSC"]
    print("\nSSC, the SDP (7): minimize 1/2 ||F - K||_F^2 s.t. F >= 0, F 1 = 1, F = F^T, F >> 0")
    print(f"  objective                {ssc.objective:.8g}")
    print(f"  dual bound               {ssc.dual_bound:.8g}   "
          "(certified lower bound: no feasible F has a smaller objective)")
    print(f"  certified gap            {ssc.duality_gap:.2e} absolute, {ssc.relative_gap:.2e} relative")
    print(f"  worst residual           {ssc.max_residual:.2e}   "
          f"({', '.join(f'{name}={v:.1e}' for name, v in ssc.residuals.items())})")
    print(f"  solve time               {ssc.time:.2f} s, {ssc.iterations} iterations of {ssc.method!r}, "
          f"status {ssc.status!r}")
    w = np.linalg.eigvalsh(matrices["FSC"])
    diff = np.linalg.norm(matrices["SSC"] - matrices["FSC"]) / np.linalg.norm(matrices["FSC"])
    print(f"\nFSC objective {fsc.objective:.8g} <= SSC objective {ssc.objective:.8g} (SSC has one constraint more).")
    print(f"Smallest eigenvalue of the FSC answer: {w[0]:.3g} (largest {w[-1]:.3g}); "
          f"||F_SSC - F_FSC|| / ||F_FSC|| = {diff:.3g}.")
    if w[0] < -1e-9 * w[-1]:
        print("FSC's answer is not p.s.d., so the constraint F >> 0 is active and SSC differs from FSC;\n"
              "whether that changes the clustering depends on the data and the width (compare the errors).")
    else:
        print("FSC's answer is already p.s.d. here, so the constraint F >> 0 is inactive and SSC = FSC\n"
              "(common for small widths: a unit-diagonal, near-identity K gives a diagonally dominant F).")

    fig, axes = plt.subplot_mosaic([["sample", "NO", "RC", "NC"], ["sample", "FSC", "SSC", "diff"]],
                                   figsize=(13, 6.6), width_ratios=[0.35, 1, 1, 1], layout="constrained")
    # one sample image per class, stacked, as in the paper's Fig. 5
    images = [X[np.flatnonzero(y == d)[0]].reshape(8, 8) for d in args.digits]
    axes["sample"].imshow(np.vstack(images), cmap="gray_r", interpolation="nearest")
    axes["sample"].set_title("a sample\nper class", fontsize=10)
    axes["sample"].set_xticks([])
    axes["sample"].set_yticks(3.5 + 8 * np.arange(k), [str(d) for d in args.digits], fontsize=11)
    titles = {"NO": "affinity $K$ (NO)", "RC": "RC: $K - D + I$", "NC": "NC: $D^{-1/2} K D^{-1/2}$",
              "FSC": "FSC: QP (6)", "SSC": "SSC: SDP (7)"}
    for label, _ in NORMALIZATIONS:
        heatmap(axes[label], matrices[label], y, f"{titles[label]}\nerror rate {errors[label]:.3f}")
    heatmap(axes["diff"], matrices["SSC"] - matrices["FSC"], y,
            f"SSC $-$ FSC (red > 0, blue < 0)\nrelative size {diff:.3g}", diverging=True)
    fig.suptitle(f"Digits {', '.join(map(str, args.digits))}: n = {len(y)}, "
                 f"$\\delta$ = {args.delta_factor:g} x median distance; diagonal hidden, darker = more similar, "
                 "green lines separate the classes", fontsize=11)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"\nsaved {args.out} (total {time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
