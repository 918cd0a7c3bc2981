"""CLUHSIC: clustering by maximizing HSIC with structured outputs, and its relaxations.

Source: W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
Algorithm", SIAM International Conference on Data Mining (SDM), 2010; equation numbers in the
docstrings are that paper's.
"""

from ._admm import ADMM, admm
from ._certificate import PartitionCertificate, certify_partition
from ._estimator import CLUHSIC
from ._factor import lowrank_objective, lowrank_residuals
from ._heuristics import cccp, greedy, nmf, spectral
from ._lowrank import LowRank, lowrank
from ._objectives import hsic, objective, partition_matrix
from ._refine import align_clusters, refine
from ._rounding import alternating_projection, round_best, round_lowrank, round_sdp
from ._sdp import CLUHSICSDP, cluhsic_sdp_problem, lift
from ._special_cases import diffrac_cost, diffrac_kernel, diskmeans_criterion, diskmeans_kernel

__all__ = [
    "ADMM",
    "CLUHSIC",
    "CLUHSICSDP",
    "LowRank",
    "PartitionCertificate",
    "admm",
    "align_clusters",
    "alternating_projection",
    "cccp",
    "certify_partition",
    "cluhsic_sdp_problem",
    "diffrac_cost",
    "diffrac_kernel",
    "diskmeans_criterion",
    "diskmeans_kernel",
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
