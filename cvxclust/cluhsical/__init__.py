"""CLUHSICAL: clustering with structured outputs and a structured loss.

Source: Zhong, Pan, Kwok & Tsang, "Incorporating the loss function into discriminative
clustering of structured outputs" (IEEE TNN 2010), ``../shared/papers/cluhsical_structured_loss.txt``;
equation numbers in the docstrings are that paper's.  CLUHSICAL's objective has CLUHSIC's form
with the loss-augmented partition matrix of (12), so this family reuses the optimizers of
:mod:`cvxclust.cluhsic` (the unnormalized objective is CLUHSIC's with output kernel ``L A L^T``).
"""

from ._baselines import LINKAGES, hierarchical_agglomerative, hierarchical_kernel_kmeans, kernel_distances
from ._estimator import CLUHSICAL
from ._greedy import greedy
from ._partition import (
    NORMALIZATIONS,
    column_norms,
    equivalent_output_kernel,
    l2_objective,
    labels_objective,
    loss_transform,
    objective,
    partition_matrix,
    relaxation_output_kernel,
)
from ._problem import krr_primal_problem
from ._theory import (
    FirstOrderApproximation,
    approximation_error,
    constraint_pairs,
    first_order_approximation,
    first_order_value,
    joint_kernel_matrices,
    krr_dual_value,
    lemma_objective,
    lemma_partition_matrix,
    proposition2_objective,
)

__all__ = [
    "CLUHSICAL",
    "FirstOrderApproximation",
    "LINKAGES",
    "NORMALIZATIONS",
    "approximation_error",
    "column_norms",
    "constraint_pairs",
    "equivalent_output_kernel",
    "first_order_approximation",
    "first_order_value",
    "greedy",
    "hierarchical_agglomerative",
    "hierarchical_kernel_kmeans",
    "joint_kernel_matrices",
    "kernel_distances",
    "krr_dual_value",
    "krr_primal_problem",
    "l2_objective",
    "labels_objective",
    "lemma_objective",
    "lemma_partition_matrix",
    "loss_transform",
    "objective",
    "partition_matrix",
    "proposition2_objective",
    "relaxation_output_kernel",
]
