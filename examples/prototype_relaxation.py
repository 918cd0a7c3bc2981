r"""Prototype a new relaxation in ~40 lines and validate its fast solver for free.

The prototyping story of cvxclust: subclass a relaxation, state the problem in cvxpy, register
a scalable solver, and ``cvxclust.validate`` compares the two on the same instance.

Here we add the constraint ``tr F = k`` to semidefinite spectral clustering (7).  A partition
matrix ``F = W W^T`` with ``k`` clusters has trace exactly ``k`` (it is a projection of rank k),
so the new problem

    minimize 1/2 ||F - K||_F^2   s.t.  F >= 0,  F 1 = 1,  F = F^T,  F >> 0,  tr F = k

is a tighter relaxation of kernel k-means (the Peng-Wei set, with a Frobenius objective).  The
package's ADMM needs the projection onto ``C1 = {F >> 0, F 1 = 1, tr F = k}`` and a way to turn
an iterate with tiny negative entries into an exactly feasible point (``restore``).  Writing
``F = e e^T + B G B^T`` with ``B`` an orthonormal basis of ``e^perp`` (``e = 1/sqrt(n)``),
``G >> 0`` and ``tr G = k - 1``, the projection keeps the eigenvectors of ``B^T Y B`` and
projects its eigenvalues onto the simplex ``{lambda >= 0, sum lambda = k - 1}``.

Validation is what tells you how good a new solver is: on this relaxation the ADMM needs
several times more iterations than on (7) (the trace constraint makes the problem more
degenerate), and on some widths and sizes it reaches its iteration limit with a tiny certified
gap but entries still slightly negative.  The report says so.

Run::

    python examples/prototype_relaxation.py [--n-samples 45] [--delta-factor 0.5] [--out prototype.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cvxpy as cp
import matplotlib
import numpy as np
import scipy.linalg as sla

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import cvxclust  # noqa: E402
from cvxclust.datasets import load_dataset  # noqa: E402
from cvxclust.kernels import median_distance, rbf  # noqa: E402
from cvxclust.linalg import project_simplex  # noqa: E402
from cvxclust.metrics import error_rate  # noqa: E402
from cvxclust.rounding import discretize  # noqa: E402
from cvxclust.ssc import FrobeniusPSD, admm  # noqa: E402


class TraceConstrainedPSD(FrobeniusPSD):
    """SSC (7) with ``tr F = n_clusters`` added."""

    name = "TraceConstrainedPSD"

    def __init__(self, K, n_clusters: int):
        super().__init__(K)
        self.n_clusters = n_clusters

    def problem(self) -> cp.Problem:  # the statement: the parent's, plus one constraint
        parent = super().problem()
        F = self.primary_variable(parent)
        return cp.Problem(parent.objective, parent.constraints + [cp.trace(F) == self.n_clusters])

    def residuals(self, X) -> dict[str, float]:
        return {**super().residuals(X), "trace": abs(np.trace(X) - self.n_clusters) / self.n_clusters}

    def projector(self, partial: bool = True):  # what the ADMM needs: Pi_C1
        n = self.n
        B = sla.null_space(np.ones((1, n)))  # orthonormal basis of e^perp

        def project(Y):
            w, V = np.linalg.eigh(B.T @ Y @ B)
            w = project_simplex(w, total=self.n_clusters - 1)
            BV = B @ V
            return (BV * w) @ BV.T + 1.0 / n

        return project

    def restore(self, F):  # an exactly feasible point near F (the parent's breaks tr F = k)
        # P = e e^T + (k-1)/(n-1) J is strictly feasible (positive entries, trace k), so the
        # smallest t with (1 - t) F + t P >= 0 gives a point of the set
        n, k = self.n, self.n_clusters
        P = (k - 1) / (n - 1) * (np.eye(n) - 1.0 / n) + 1.0 / n
        N = np.maximum(-F, 0.0)
        t = float(np.max(N / (N + P)))
        return (1.0 - t) * F + t * P


# the package's ADMM works for any nearest-doubly-stochastic relaxation that supplies
# projector() and restore()
TraceConstrainedPSD.register_solver("admm", admm)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n-samples", type=int, default=45)
    parser.add_argument("--delta-factor", type=float, default=0.5, help="rbf width / median distance")
    parser.add_argument("--out", default="prototype.png")
    args = parser.parse_args(argv)

    X, y = load_dataset("iris", n_samples=args.n_samples)
    K = rbf(X, args.delta_factor * median_distance(X))
    relaxation = TraceConstrainedPSD(K, n_clusters=3)
    report = cvxclust.validate(relaxation, reference_solver="CLARABEL")
    print(report.to_markdown())

    plain = FrobeniusPSD(K).solve()
    traced = report.results["admm"]
    for name, result in [("SSC (7)", plain), ("SSC + tr F = k", traced)]:
        labels = discretize(result.X, 3, random_state=0)
        print(f"{name:16s} objective {result.objective:.6f}  trace {np.trace(result.X):.3f}  "
              f"error rate {error_rate(y, labels):.4f}")

    fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
    for ax, M, title in zip(axes, [K, plain.X, traced.X], ["affinity K", "SSC (7)", "SSC + tr F = 3"]):
        ax.imshow(M, cmap="viridis")
        ax.set_title(title)
        ax.set_axis_off()
    fig.tight_layout()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=100)
    print(f"figure written to {args.out}")
    return 0 if report.passed else 1


if __name__ == "__main__":
    raise SystemExit(main())
