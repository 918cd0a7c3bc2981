"""CLUHSICAL: clustering with structured outputs and a structured loss.

Source: W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010;
equation numbers in the docstrings are that paper's.  CLUHSICAL's objective has CLUHSIC's form
with the loss-augmented partition matrix of (12), so this family reuses the optimizers of the
HSIC problem, :mod:`cvxclust.hsic` (the unnormalized objective is CLUHSIC's with output kernel
``L A L^T``).
"""

from ._baselines import LINKAGES, hierarchical_agglomerative, hierarchical_kernel_kmeans, kernel_distances
from ._estimator import CLUHSICAL
from ._first_order import (
    FirstOrderApproximation,
    approximation_error,
    first_order_approximation,
    first_order_value,
    proposition2_objective,
)
from ._greedy import greedy
from ._krr import constraint_pairs, joint_kernel_matrices, krr_dual_value
from ._lemmas import lemma_objective, lemma_partition_matrix
from ._output_kernels import equivalent_output_kernel, relaxation_output_kernel
from ._partition import (
    NORMALIZATIONS,
    column_norms,
    l2_objective,
    labels_objective,
    loss_transform,
    objective,
    partition_matrix,
)
from ._problem import krr_primal_problem

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
