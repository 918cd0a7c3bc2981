"""cvxclust: convex relaxations of clustering in cvxpy, with scalable solvers validated against them."""

from . import bregman, cluhsic, cluhsical, kernels, metrics, rounding, ssc, structures
from .bregman import BregmanClustering
from .cluhsic import CLUHSIC
from .cluhsical import CLUHSICAL
from ._relaxation import ConvergenceWarning, Relaxation, Result
from .ssc import SemidefiniteSpectralClustering
from .validation import validate

__all__ = [
    "BregmanClustering",
    "CLUHSIC",
    "CLUHSICAL",
    "ConvergenceWarning",
    "Relaxation",
    "Result",
    "SemidefiniteSpectralClustering",
    "kernels",
    "metrics",
    "rounding",
    "ssc",
    "bregman",
    "cluhsic",
    "cluhsical",
    "structures",
    "validate",
]
__version__ = "0.1.0"
