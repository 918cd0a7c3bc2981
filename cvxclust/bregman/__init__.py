"""Convex relaxations of Bregman-divergence clustering (work in progress: the foundations).

Source: ``../shared/papers/bregman_convex_relaxations.txt``; equation numbers in the docstrings
are that paper's.  Built so far: the divergences (:mod:`~cvxclust.bregman.divergences`), the sets
of normalized equivalence matrices M, M1, M2, M3 with the closed-form M2/M3 projections
(:mod:`~cvxclust.bregman.sets`), and the norm Omega of Theorem 3 with its dual
(:func:`~cvxclust.bregman.omega`, :func:`~cvxclust.bregman.omega_dual`).  The relaxations and the estimator are the open part of the
issue.
"""

from . import divergences, sets
from .divergences import DIVERGENCES, Divergence, get_divergence
from ._omega import omega, omega_dual, omega_dual_subgradient, omega_optimal_M
from .sets import (
    M2Projector,
    constraints_M1,
    constraints_M2,
    constraints_M3,
    equivalence_matrix,
    project_M2,
    project_M3,
)

__all__ = [
    "DIVERGENCES",
    "Divergence",
    "M2Projector",
    "constraints_M1",
    "constraints_M2",
    "constraints_M3",
    "divergences",
    "equivalence_matrix",
    "get_divergence",
    "omega",
    "omega_dual",
    "omega_dual_subgradient",
    "omega_optimal_M",
    "project_M2",
    "project_M3",
    "sets",
]
