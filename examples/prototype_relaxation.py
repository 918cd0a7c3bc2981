r"""
Prototyping a relaxation in cvxpy, then solving it at scale
===========================================================

A relaxation the package does not ship is stated in plain cvxpy, the generic solver is checked
against the exact semidefinite program on a small instance, and the same statement is then
solved at a size that cvxpy's conic solvers cannot reach, with a certified gap.

The relaxation: semidefinite spectral clustering (the nearest doubly stochastic positive
semidefinite matrix to the affinity :math:`K`) with a minimum cluster size.  The partition
matrix of a clustering, :math:`X = \sum_c \mathbf{1}_c \mathbf{1}_c^\top / |c|`, has the
diagonal :math:`1/|c|` on cluster :math:`c`, so bounding the diagonal by :math:`1/s` excludes
the partitions with a cluster smaller than :math:`s`:

.. math::

    \begin{array}{ll}
    \text{minimize}   & \tfrac12 \|X - K\|_F^2 \\
    \text{subject to} & X \succeq 0, \quad X \ge 0, \quad X \mathbf{1} = \mathbf{1},
                        \quad \operatorname{diag}(X) \le 1/s.
    \end{array}

No solver of the package was written for it.  ``cvxclust.validate(problem)`` compares the
generic solver (``cvxclust.solve``, which reads the cvxpy statement and iterates on the matrix
with a certified bound) with Clarabel on a small instance.  The same statement is then solved
at a larger size (to a looser tolerance: a splitting method's last digits are its slowest), and
the certified gap says how good the answer is.  The figure shows the certified relative gap
along the iterations, with the worst residual of the returned point, and the solution with the
points sorted by digit.

Run::

    python examples/prototype_relaxation.py [--n-small 60] [--n-large 2000] [--tol 1e-4] \
        [--out cvxclust_figures/prototype_relaxation.png]

The default ``--n-large 2000`` takes several minutes; ``--n-large 200`` runs in seconds.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cvxpy as cp
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import cvxclust  # noqa: E402
from cvxclust.datasets import load_dataset  # noqa: E402
from cvxclust.kernels import rbf  # noqa: E402
from cvxclust.metrics import error_rate  # noqa: E402
from cvxclust.rounding import discretize  # noqa: E402


def relaxation(K: np.ndarray, smallest: int) -> cp.Problem:
    """SSC (7) with clusters of at least ``smallest`` points, in plain cvxpy."""
    n = K.shape[0]
    X = cp.Variable((n, n), symmetric=True)
    constraints = [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.diag(X) <= 1.0 / smallest]
    return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - K)), constraints)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("cvxclust_figures/prototype_relaxation.png"),
                        help="figure path (its folders are created)")
    parser.add_argument("--n-small", type=int, default=60, help="size of the validation against Clarabel")
    parser.add_argument("--n-large", type=int, default=2000, help="size of the solve at scale (digits)")
    parser.add_argument("--tol", type=float, default=1e-4,
                        help="certified relative gap and worst residual of the solve at scale")
    args = parser.parse_args(argv)

    # 1. validate on a small instance: the generic solver against the exact SDP (Clarabel)
    X, y = load_dataset("digits", n_samples=args.n_small)
    k = len(np.unique(y))
    small = relaxation(rbf(X), smallest=max(1, args.n_small // (2 * k)))
    report = cvxclust.validate(small, reference_solver="CLARABEL")
    print(report.to_markdown())

    # 2. the same statement at scale: only the generic solver goes there
    X, y = load_dataset("digits", n_samples=args.n_large)
    k = len(np.unique(y))
    large = relaxation(rbf(X), smallest=args.n_large // (2 * k))
    result = cvxclust.solve(large, tol=args.tol, residual_tol=args.tol, verbose=True)
    labels = discretize(result.X, k, random_state=0)
    error = error_rate(y, labels)
    print(f"n = {args.n_large}: {result.status} after {result.iterations} iterations in {result.time:.1f} s, "
          f"objective {result.objective:.6f}, certified relative gap {result.relative_gap:.1e}, worst residual "
          f"{result.max_residual:.1e}; error rate of the rounded partition {error:.3f}")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    rows = [r for r in result.history if r.get("relative_gap") is not None]
    iterations = [r["iteration"] for r in rows]
    gaps = np.array([r["relative_gap"] for r in rows])
    residuals = np.array([r["max_residual"] for r in rows])
    axes[0].semilogy(iterations, gaps, "o-", ms=3, label="certified relative gap")
    axes[0].axhline(args.tol, color="0.4", ls="--", lw=1, label=f"tolerance {args.tol:g}")
    # the residuals may sit near machine precision, many decades below the gap: plot them only
    # where they do not squash the gap's curve, and state their size otherwise
    floor = min(args.tol, gaps.min()) / 20
    if residuals.max() >= floor:
        axes[0].semilogy(iterations, residuals, "s-", ms=3, label="worst residual of the returned point")
    else:
        axes[0].text(0.98, 0.04, f"worst residual of the returned point\nat most {residuals.max():.1e} at every check",
                     transform=axes[0].transAxes, ha="right", va="bottom", fontsize=9)
        axes[0].set_ylim(bottom=floor)
    axes[0].set(xlabel="iteration", ylabel="relative gap", title=f"generic solver, n = {args.n_large}")
    axes[0].grid(True, which="both", alpha=0.3)
    axes[0].legend()
    order = np.argsort(y, kind="stable")
    image = axes[1].imshow(result.X[np.ix_(order, order)], cmap="viridis", interpolation="nearest")
    axes[1].set_title(f"solution X, points sorted by digit\nerror rate of the rounded partition {error:.3f}")
    axes[1].set_xticks([])
    axes[1].set_yticks([])
    fig.colorbar(image, ax=axes[1], shrink=0.9, label="$X_{ij}$")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    plt.close(fig)
    print(f"figure written to {args.out}")
    if not report.passed:
        raise RuntimeError("the generic solver did not reproduce the cvxpy reference on the small instance")
    if result.status != "optimal":
        raise RuntimeError(f"the solve at scale ended with status {result.status!r}, not a certified optimum")


if __name__ == "__main__":
    main()
