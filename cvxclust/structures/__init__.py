r"""Output structures on the clusters: chains, rings, trees, products and general graphs.

CLUHSIC (Yang, Kwok & Lu, Section 2) maximizes the dependence between the input kernel ``K`` and
the output kernel ``L = Pi A Pi^T`` on the labels,

.. math:: \max_{\Pi}\ \operatorname{tr}(K \Pi A \Pi^\top) \quad (2.3), \qquad
          \max_{P = \Pi D}\ \operatorname{tr}(K P A P^\top) \quad (2.4),

where the ``c x c`` output kernel ``A`` encodes how the clusters are related (Figure 1: chain,
ring, tree).  CLUHSICAL (Zhong, Pan, Kwok & Tsang) adds a loss :math:`\Delta(y, u)` between
clusters (tree loss, ring loss).  This package holds what both families need about the structure:

* a *structure* is a networkx graph with graph attributes ``G.graph["kind"]`` (one of
  :data:`KINDS`) and ``G.graph["clusters"]``, the ordered list of the ``c`` nodes that are the
  output clusters: label ``k`` is ``clusters[k]``.  Build one with :func:`chain`, :func:`ring`,
  :func:`flat`, :func:`tree`, :func:`kron`, or pass a plain graph / rooted tree to
  :func:`as_structure`;
* :func:`output_kernel` -- the ``A`` of (2.3)/(2.4);
* :func:`loss_matrix` -- the structured loss :math:`\Delta` (CLUHSICAL (11)-(12); evaluation
  losses of Section 6.1.2);
* :func:`admissible_permutations` -- the relabelings that keep the structure (the automorphisms
  of ``A``).  Section 5.3: a solution whose clusters are a *reversed* chain is as right as the
  original, a solution with the clusters in the wrong order is wrong, although unrestricted
  (Hungarian) matching scores both perfect.  Pass the result to
  ``cvxclust.metrics.accuracy(y_true, y_pred, permutations=...)``;
* :func:`kernel_automorphisms` -- the same for an output kernel given as a matrix, or a set that
  generates them.

Conventions: a permutation is an int array ``perm`` with ``perm[k]`` the new label of cluster
``k`` (so ``perm[y_pred]`` relabels a prediction), as ``cvxclust.metrics`` expects
(``p[cluster] = class``).  Kernel automorphisms satisfy ``A[perm][:, perm] == A``.

References
----------
W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
Algorithm", SIAM International Conference on Data Mining (SDM), 2010.

W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
"""

from __future__ import annotations

from ._builders import chain, flat, kron, ring, tree
from ._graphs import KINDS, as_structure, n_clusters
from ._kernels import check_output_kernel, output_kernel
from ._losses import LOSS_KINDS, check_loss_matrix, loss_matrix
from ._permutations import admissible_permutations, kernel_automorphisms

__all__ = [
    "KINDS",
    "LOSS_KINDS",
    "chain",
    "ring",
    "flat",
    "tree",
    "kron",
    "as_structure",
    "n_clusters",
    "output_kernel",
    "check_output_kernel",
    "loss_matrix",
    "check_loss_matrix",
    "admissible_permutations",
    "kernel_automorphisms",
]
