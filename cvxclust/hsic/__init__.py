r"""The structured HSIC problem and its relaxations, shared by the CLUHSIC and CLUHSICAL families.

With an input kernel K (m x m, centred), an output kernel A (c x c) on the clusters and a
(normalized) partition matrix P (m x c), both families maximize

.. math:: \operatorname{tr}(K P A P^\top)

over partitions: CLUHSIC directly (its objectives (2.3)-(2.4)), CLUHSICAL through the output
kernel equivalent to its structured loss.  This package holds what the two share: the
objectives, the heuristics (greedy local search, spectral and CCCP relaxations, NMF), the SDP
relaxation (5.23) with its certified ADMM and the bound it gives a partition, the low-rank SDP
(5.30), and the roundings of Section 5.3.  :mod:`cvxclust.cluhsic` re-exports all of it
beside its estimator.  What both families call on inputs they have already checked (the trace
itself, a partition matrix from labels or a matrix) is in a private core module.

Reference: W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the
CLUHSIC Algorithm", SIAM International Conference on Data Mining (SDM), 2010; equation numbers
in the docstrings are that paper's.
"""

from ._admm import ADMM, admm
from ._certificate import PartitionCertificate, certify_partition
from ._factor import lowrank_objective, lowrank_residuals
from ._heuristics import cccp, greedy, nmf, spectral
from ._lowrank import LowRank, lowrank
from ._objectives import hsic, objective, partition_matrix
from ._refine import align_clusters, refine
from ._rounding import alternating_projection, round_best, round_lowrank, round_sdp
from ._sdp import CLUHSICSDP, cluhsic_sdp_problem, lift

__all__ = [
    "ADMM",
    "CLUHSICSDP",
    "LowRank",
    "PartitionCertificate",
    "admm",
    "align_clusters",
    "alternating_projection",
    "cccp",
    "certify_partition",
    "cluhsic_sdp_problem",
    "greedy",
    "hsic",
    "lift",
    "lowrank",
    "lowrank_objective",
    "lowrank_residuals",
    "nmf",
    "objective",
    "partition_matrix",
    "refine",
    "round_best",
    "round_lowrank",
    "round_sdp",
    "spectral",
]
