"""CLUHSIC: clustering by maximizing HSIC with structured outputs, and its relaxations.

Source: Yang, Kwok & Lu, "Spectral and semidefinite relaxations of the CLUHSIC algorithm"
(SDM 2010), ``../shared/papers/cluhsic_spectral_sdp_relaxations.txt``; equation numbers in the
docstrings are that paper's.
"""

from ._heuristics import HeuristicResult, cccp, greedy, nmf, spectral
from ._estimator import CLUHSIC
from ._lowrank import LowRankResult, lowrank, lowrank_objective, lowrank_residuals
from ._objectives import hsic, objective, partition_matrix
from ._rounding import alternating_projection, round_best, round_lowrank, round_sdp
from ._sdp import CLUHSICSDP, cluhsic_sdp_problem, lift
from ._special_cases import diffrac_cost, diffrac_kernel, diskmeans_criterion, diskmeans_kernel

__all__ = [
    "CLUHSIC",
    "CLUHSICSDP",
    "HeuristicResult",
    "LowRankResult",
    "alternating_projection",
    "lowrank",
    "lowrank_objective",
    "lowrank_residuals",
    "round_best",
    "round_lowrank",
    "round_sdp",
    "cccp",
    "cluhsic_sdp_problem",
    "diffrac_cost",
    "diffrac_kernel",
    "diskmeans_criterion",
    "diskmeans_kernel",
    "greedy",
    "hsic",
    "lift",
    "nmf",
    "objective",
    "partition_matrix",
    "spectral",
]
