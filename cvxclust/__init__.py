"""cvxclust: convex relaxations of clustering in cvxpy, with scalable solvers validated against them."""

from . import cluhsic, kernels, metrics, rounding, ssc, structures
from .cluhsic import CLUHSIC
from ._relaxation import ConvergenceWarning, Relaxation, Result
from .ssc import SemidefiniteSpectralClustering
from .validation import validate

__all__ = [
    "CLUHSIC",
    "ConvergenceWarning",
    "Relaxation",
    "Result",
    "SemidefiniteSpectralClustering",
    "kernels",
    "metrics",
    "rounding",
    "ssc",
    "cluhsic",
    "structures",
    "validate",
]
__version__ = "0.1.0"
