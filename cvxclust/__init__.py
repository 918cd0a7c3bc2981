"""cvxclust: convex relaxations of clustering in cvxpy, with scalable solvers validated against them."""

from . import kernels, metrics, rounding, ssc
from ._relaxation import ConvergenceWarning, Relaxation, Result
from .ssc import SemidefiniteSpectralClustering
from .validation import validate

__all__ = [
    "ConvergenceWarning",
    "Relaxation",
    "Result",
    "SemidefiniteSpectralClustering",
    "kernels",
    "metrics",
    "rounding",
    "ssc",
    "validate",
]
__version__ = "0.1.0"
