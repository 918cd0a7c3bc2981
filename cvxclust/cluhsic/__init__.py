"""CLUHSIC: clustering by maximizing HSIC with structured outputs, and its relaxations.

Source: W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
Algorithm", SIAM International Conference on Data Mining (SDM), 2010; equation numbers in the
docstrings are that paper's.

The family holds the estimator :class:`CLUHSIC` and the special cases DIFFRAC and DisKmeans
(Section 3); the objectives, heuristics, relaxations and roundings it re-exports live in
:mod:`cvxclust.hsic`, which CLUHSICAL shares.
"""

from ..hsic import (
    ADMM,
    CLUHSICSDP,
    LowRank,
    PartitionCertificate,
    admm,
    align_clusters,
    alternating_projection,
    cccp,
    certify_partition,
    cluhsic_sdp_problem,
    greedy,
    hsic,
    lift,
    lowrank,
    lowrank_objective,
    lowrank_residuals,
    nmf,
    objective,
    partition_matrix,
    refine,
    round_best,
    round_lowrank,
    round_sdp,
    spectral,
)
from ._estimator import CLUHSIC
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
