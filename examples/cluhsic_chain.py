r"""Clustering along a chain: why the spectral relaxation of CLUHSIC ignores the structure and
the SDP does not (W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the
CLUHSIC Algorithm", SIAM International Conference on Data Mining (SDM), 2010, Sections 4-5).

CLUHSIC clusters m points into c clusters *placed on a structure*: with the centred input kernel
K and an output kernel A on the clusters (for a chain, ``A = 2I + adjacency``: neighbours on the
chain are similar), it maximizes ``tr(K P A P^T)`` over normalized partition matrices P (2.4).
The labels then mean something: cluster 0 is next to cluster 1, which is next to cluster 2, ...

* The **spectral relaxation** (P^T P = I only) has the solution ``P* = [u_1..u_c] V^T``
  (Proposition 2): the top-c eigenvectors of K times an orthogonal matrix. Its cluster
  assignment is therefore that of the spectral relaxation of k-means, *whatever A is*: it finds
  the groups but puts them in an arbitrary order along the chain.
* The **SDP relaxation** (5.23) lifts Q = vec(P) vec(P)^T, and its objective tr((A kron K) Q)
  still sees A; solved here by the low-rank method (5.30) and rounded (Section 5.3), it keeps
  neighbouring images in neighbouring clusters.
* The **greedy** local search of Song et al. optimizes the true objective but from a random
  start it stops at a local optimum.

The data: an object cut from a scikit-image photograph and rotated from 1 to 180 degrees, 100
images in 5 clusters of 20 (:func:`cvxclust.datasets.rotating_object`). Scores: accuracy and
chain loss (mean distance along the chain between the true and predicted cluster) under the
best relabeling the chain *admits* (the identity or the reversal), and NMI, which ignores the
order. The figure plots the predicted cluster of every image against its angle: a staircase
(up or down) is a correct chain.

Run::

    python examples/cluhsic_chain.py [--out cluhsic_chain.png]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from cvxclust import CLUHSIC  # noqa: E402
from cvxclust.datasets import rotating_object  # noqa: E402
from cvxclust.metrics import accuracy, nmi, structured_loss  # noqa: E402
from cvxclust.structures import admissible_permutations, chain, loss_matrix  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("cluhsic_chain.png"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    X, y, angles = rotating_object("chain", random_state=args.seed)
    structure = chain(5)
    perms, loss = admissible_permutations(structure), loss_matrix(structure)
    runs = {
        "greedy": CLUHSIC(5, structure=structure, method="greedy", random_state=args.seed),
        "spectral (A = chain)": CLUHSIC(5, structure=structure, method="spectral", random_state=args.seed),
        "spectral (A = I)": CLUHSIC(5, method="spectral", random_state=args.seed),
        "SDP, low rank r = 10": CLUHSIC(5, structure=structure, method="lowrank", random_state=args.seed),
    }
    fig, axes = plt.subplots(1, len(runs), figsize=(4 * len(runs), 3.4), sharey=True)
    print(f"{'method':24s} {'accuracy':>9s} {'chain loss':>11s} {'NMI':>6s}")
    labels = {}
    for ax, (name, model) in zip(axes, runs.items()):
        labels[name] = model.fit_predict(X)
        acc, chain_loss = accuracy(y, labels[name], perms), structured_loss(y, labels[name], loss, perms)
        print(f"{name:24s} {acc:9.2f} {chain_loss:11.2f} {nmi(y, labels[name]):6.2f}")
        ax.scatter(angles, labels[name], c=y, cmap="viridis", s=12)
        ax.set(title=f"{name}\nacc {acc:.2f}, chain loss {chain_loss:.2f}", xlabel="rotation angle (degrees)")
    axes[0].set_ylabel("predicted cluster")
    same = np.array_equal(labels["spectral (A = chain)"], labels["spectral (A = I)"])
    print(f"spectral labels identical with A = chain and A = I: {same} (Section 4.1)")
    fig.suptitle("CLUHSIC on a chain of 5 clusters (colour: true cluster)")
    fig.tight_layout()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, dpi=110)
    print(f"figure written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
