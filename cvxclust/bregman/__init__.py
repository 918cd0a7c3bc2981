"""Convex relaxations of Bregman-divergence clustering.

Source: H. Cheng, X. Zhang, D. Schuurmans, "Convex Relaxations of Bregman Divergence
Clustering", Conference on Uncertainty in Artificial Intelligence (UAI), 2013; equation numbers
in the docstrings are that paper's, and what its appendices hold is derived in the docstrings.

* :mod:`~cvxclust.bregman.divergences`: the divergences (F, transfer, conjugate, domain, joint
  convexity, cvxpy forms);
* :mod:`~cvxclust.bregman.sets`: normalized equivalence matrices M and the relaxations M1, M2,
  M3, with closed-form M2/M3 projections (Lemma 1, (13));
* :func:`omega`, :func:`omega_dual`: the norm of Theorem 3 (Algorithm 2) and its dual;
* the relaxations, each a :class:`~cvxclust.Relaxation` with a cvxpy statement and a scalable
  solver: :class:`ConditionalJC` (10) (ADMM, Davis-Yin splitting), :class:`Conditional` (15)-(17),
  :class:`Discriminative` (28)-(29) and :class:`Joint` (32)-(33) (generalized conditional
  gradient, Algorithm 1);
* rounding and local re-optimisation (Section 6): :func:`round_equivalence`,
  :func:`bregman_hard_clustering`, :func:`conditional_hard_clustering`,
  :func:`joint_hard_clustering`, :func:`soft_bregman_em`;
* the estimator :class:`BregmanClustering` (relaxation, spectral rounding, re-optimisation).
"""

from . import divergences, sets
from ._conditional import Conditional
from ._conditional_jc import ConditionalJC
from . import _davis_yin, _jc_admm  # noqa: F401  (register ConditionalJC's "davis-yin" and "admm")
from ._discriminative import Discriminative
from ._estimator import BregmanClustering
from ._joint import Joint
from ._local import bregman_hard_clustering, conditional_hard_clustering, joint_hard_clustering
from ._soft_em import soft_bregman_em
from ._spectral_rounding import round_equivalence
from ._omega import omega, omega_dual, omega_dual_subgradient, omega_optimal_M
from .divergences import DIVERGENCES, Divergence, get_divergence
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
    "BregmanClustering",
    "DIVERGENCES",
    "Conditional",
    "ConditionalJC",
    "Discriminative",
    "Divergence",
    "Joint",
    "M2Projector",
    "bregman_hard_clustering",
    "conditional_hard_clustering",
    "constraints_M1",
    "constraints_M2",
    "constraints_M3",
    "divergences",
    "equivalence_matrix",
    "get_divergence",
    "joint_hard_clustering",
    "omega",
    "omega_dual",
    "omega_dual_subgradient",
    "omega_optimal_M",
    "project_M2",
    "project_M3",
    "round_equivalence",
    "sets",
    "soft_bregman_em",
]
