r"""Prototype a relaxation the package does not ship: state it in plain cvxpy, check the generic
solver against the exact SDP on a small instance, then solve it at scale.

The relaxation: semidefinite spectral clustering (the nearest doubly stochastic p.s.d. matrix to
the affinity K) with a minimum cluster size.  The partition matrix of a clustering,
``X = sum_c 1_c 1_c^T / |c|``, has the diagonal ``1/|c|`` on cluster c, so bounding the diagonal
by ``1/s`` excludes the partitions with a cluster smaller than s:

    minimize    1/2 ||X - K||_F^2
    subject to  X >> 0,  X >= 0,  X 1 = 1,  diag(X) <= 1/s.

No solver of the package was written for it.  ``cvxclust.validate(problem)`` compares the
generic solver (``cvxclust.solve``, which reads the cvxpy statement and iterates on the matrix
with a certified bound) with Clarabel on a small instance; the same statement is then solved at
a size where cvxpy's conic solvers cannot go (to a looser tolerance: a splitting method's last
digits are its slowest), and the certified gap says how good the answer is.

Run::

    python examples/prototype_relaxation.py [--n-small 60] [--n-large 2000] [--tol 1e-4] [--out prototype.png]
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


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-small", type=int, default=60, help="size of the validation against Clarabel")
    parser.add_argument("--n-large", type=int, default=2000, help="size of the solve at scale (digits)")
    parser.add_argument("--tol", type=float, default=1e-4,
                        help="certified relative gap and worst residual of the solve at scale")
    parser.add_argument("--out", default="prototype.png")
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
    print(f"n = {args.n_large}: {result.status} after {result.iterations} iterations in {result.time:.1f} s, "
          f"objective {result.objective:.6f}, certified relative gap {result.relative_gap:.1e}, worst residual "
          f"{result.max_residual:.1e}; error rate of the rounded partition {error_rate(y, labels):.3f}")

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    rows = [r for r in result.history if r.get("relative_gap") is not None]
    axes[0].semilogy([r["iteration"] for r in rows], [r["relative_gap"] for r in rows], "o-", ms=3,
                     label="certified relative gap")
    axes[0].semilogy([r["iteration"] for r in rows], [max(r["max_residual"], 1e-16) for r in rows], "s-", ms=3,
                     label="worst residual of the returned point")
    axes[0].set_xlabel("iteration")
    axes[0].set_title(f"generic solver, n = {args.n_large}")
    axes[0].grid(True, which="both", alpha=0.3)
    axes[0].legend()
    order = np.argsort(y, kind="stable")
    image = axes[1].imshow(result.X[np.ix_(order, order)], cmap="viridis", interpolation="nearest")
    axes[1].set_title("solution X, points sorted by digit")
    axes[1].set_axis_off()
    fig.colorbar(image, ax=axes[1], fraction=0.046, pad=0.04)
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"figure written to {args.out}")
    return 0 if report.passed and result.status == "optimal" else 1


if __name__ == "__main__":
    raise SystemExit(main())
