"""cvxclust: convex relaxations of clustering in cvxpy, with scalable solvers validated against them."""

from . import (bregman, cluhsic, cluhsical, generic, hsic, kernels, metrics, parameters, rounding, solvers, ssc,
               structures)
from .bregman import BregmanClustering
from .cluhsic import CLUHSIC
from .cluhsical import CLUHSICAL
from .generic import solve
from ._relaxation import ConvergenceWarning, Relaxation
from .result import Result
from .ssc import SemidefiniteSpectralClustering
from .sweep import sweep
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
    "parameters",
    "rounding",
    "solvers",
    "ssc",
    "bregman",
    "cluhsic",
    "cluhsical",
    "generic",
    "hsic",
    "solve",
    "structures",
    "sweep",
    "validate",
]
__version__ = "0.1.0"
