r"""Five ways to normalize an affinity matrix before spectral clustering, and the SDP behind
semidefinite spectral clustering (Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral
Clustering via Lagrange Duality", IEEE Transactions on Image Processing, 2014).

Spectral clustering builds an affinity ``K`` (here Gaussian, ``K_ij = exp(-||a_i - a_j||^2 /
delta^2)``), *normalizes* it to ``K_hat``, and clusters the rows of the top-``k`` eigenvectors of
``K_hat`` (here by Yu & Shi's multiclass discretization).  Kernel k-means would instead want the
matrix ``F = W W^T`` of a partition (``F_ij = 1/n_r`` when i, j share cluster r), which is
symmetric, nonnegative, doubly stochastic and p.s.d.  Each normalization is a nearest such
matrix under some error measure (Zass & Shashua 2006)::

    NO   (none)            K_hat = K
    RC   (ratio-cut)       K_hat = K - D + I,          D = diag(K 1)      (L1 error)
    NC   (normalized-cut)  K_hat = D^-1/2 K D^-1/2                       (relative entropy, one step)
    FSC  (frobenius)       K_hat = argmin_F 1/2 ||F - K||_F^2
                                   s.t. F >= 0, F 1 = 1, F = F^T         (QP (6))
    SSC  (frobenius-psd)   the same with F >> 0 added                    (SDP (7))

SSC adds the constraint every partition matrix satisfies, F p.s.d.; the problem becomes a
semidefinite program.  ``cvxclust`` solves it with a scalable ADMM whose multiplier ``Q >= 0`` of
``F >= 0`` gives a *certified* lower bound ``g(Q) <= optimum`` (the Lagrange dual (12)), so every
solve reports ``objective - dual_bound``: a proof of how close to optimal the answer is.

The script takes four digit classes of scikit-learn's ``digits`` (8x8 images, sorted by label),
prints the error rate of every normalization, the SSC solve's objective, dual bound and
certified gap, and saves a figure like the paper's Fig. 5: the affinity matrix and the
normalized matrices as heat maps (diagonal hidden, darker = more similar).

Run::

    python examples/ssc_normalizations.py [--out ssc_normalizations.png] [--n-samples 160]
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
    blue-red scale centred at 0 with ``diverging=True``; class blocks outlined."""
    A = np.array(A, dtype=float)
    np.fill_diagonal(A, np.nan)  # the diagonal dwarfs the rest for NO/RC/FSC/SSC
    off = A[~np.isnan(A)]
    if diverging:
        v = max(np.percentile(np.abs(off), 99.5), 1e-12)
        ax.imshow(A, cmap="RdBu_r", vmin=-v, vmax=v, interpolation="nearest")
    else:
        lo, hi = np.percentile(off, [1, 99])
        ax.imshow(A, cmap="gray_r", vmin=lo, vmax=max(hi, lo + 1e-12), interpolation="nearest")
    edges = np.flatnonzero(np.diff(y)) + 0.5
    for e in edges:
        ax.axhline(e, color="tab:green", lw=0.6)
        ax.axvline(e, color="tab:green", lw=0.6)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("ssc_normalizations.png"), help="figure path")
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
    threadpool_limits(limits=1)
    start = time.perf_counter()

    X, y = load_digits_subset(args.digits, args.n_samples, args.seed)
    k = len(args.digits)
    delta = args.delta_factor * kernels.median_distance(X)
    K = kernels.rbf(X, delta)
    print(f"digits {args.digits}: {X.shape[0]} images of {X.shape[1]} pixels, k = {k} clusters")
    print(f"Gaussian kernel, delta = {args.delta_factor:g} x median distance = {delta:.3f}\n")

    print(f"{'normalization':<22} {'error rate':>10} {'time (s)':>9}  solver")
    matrices, errors, results = {}, {}, {}
    for label, method in NORMALIZATIONS:
        t0 = time.perf_counter()
        K_hat, result = normalize(K, method, return_result=True)
        elapsed = time.perf_counter() - t0
        labels = discretize(K_hat, k, n_init=10, random_state=args.seed)
        matrices[label], results[label] = K_hat, result
        errors[label] = error_rate(y, labels)
        solver = "closed form" if result is None else f"{result.method}, {result.status}, {result.iterations} it"
        print(f"{label + ' (' + method + ')':<22} {errors[label]:>10.4f} {elapsed:>9.2f}  {solver}")

    ssc, fsc = results["SSC"], results["FSC"]
    print("\nSSC, the SDP (7): minimize 1/2 ||F - K||_F^2 s.t. F >= 0, F 1 = 1, F = F^T, F >> 0")
    print(f"  objective                {ssc.objective:.8g}")
    print(f"  dual bound g(Q)          {ssc.dual_bound:.8g}   (certified lower bound: no feasible F has a smaller objective)")
    print(f"  certified gap            {ssc.duality_gap:.2e} absolute, {ssc.relative_gap:.2e} relative")
    print(f"  worst residual           {ssc.max_residual:.2e}   ({', '.join(f'{name}={v:.1e}' for name, v in ssc.residuals.items())})")
    print(f"  solve time               {ssc.time:.2f} s, {ssc.iterations} ADMM iterations, status {ssc.status!r}")
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

    fig, axes = plt.subplots(1, 7, figsize=(19.5, 3.4), gridspec_kw={"width_ratios": [0.55, 1, 1, 1, 1, 1, 1]})
    # one sample image per class, stacked, as in the paper's Fig. 5
    images = [X[np.flatnonzero(y == d)[0]].reshape(8, 8) for d in args.digits]
    axes[0].imshow(np.vstack(images), cmap="gray_r", interpolation="nearest")
    axes[0].set_title("a sample per class", fontsize=9)
    axes[0].set_xticks([])
    axes[0].set_yticks(4 + 8 * np.arange(k), [str(d) for d in args.digits])
    titles = {"NO": "affinity K (NO)", "RC": "RC: K - D + I", "NC": "NC: D^-1/2 K D^-1/2",
              "FSC": "FSC: QP (6)", "SSC": "SSC: SDP (7)"}
    for ax, (label, _) in zip(axes[1:], NORMALIZATIONS):
        heatmap(ax, matrices[label], y, f"{titles[label]}\nerror rate {errors[label]:.3f}")
    heatmap(axes[6], matrices["SSC"] - matrices["FSC"], y,
            f"SSC - FSC (red > 0, blue < 0)\nrelative size {diff:.3g}", diverging=True)
    fig.suptitle(f"digits {args.digits}, n = {len(y)}, delta = {args.delta_factor:g} x median distance "
                 "(diagonal hidden; darker = more similar; lines separate the classes)", fontsize=10)
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"\nsaved {args.out} (total {time.perf_counter() - start:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
