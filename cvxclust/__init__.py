"""cvxclust: convex relaxations of clustering in cvxpy, with scalable solvers validated against them.

``cvxclust.sweep`` is the function :func:`cvxclust.sweeps.sweep`; its module is
:mod:`cvxclust.sweeps` (``import cvxclust.sweeps``, ``from cvxclust.sweeps import read_spec``).
"""

from . import (acceleration, bregman, catalogue, cluhsic, cluhsical, datasets, dual_newton, generic, hsic, kernels,
               linalg, metrics, parallel, parameters, result, rounding, solvers, ssc, structures, sweeps, validation)
from . import sweep as _former_sweep_module  # noqa: F401  (registered before the function takes the name)
from .bregman import BregmanClustering
from .cluhsic import CLUHSIC
from .cluhsical import CLUHSICAL
from .generic import solve
from ._relaxation import ConvergenceWarning, Relaxation
from .result import Result
from .ssc import SemidefiniteSpectralClustering
from .sweeps import sweep
from .validation import validate

__all__ = [
    "BregmanClustering",
    "CLUHSIC",
    "CLUHSICAL",
    "ConvergenceWarning",
    "Relaxation",
    "Result",
    "SemidefiniteSpectralClustering",
    "acceleration",
    "catalogue",
    "datasets",
    "dual_newton",
    "kernels",
    "linalg",
    "metrics",
    "parallel",
    "parameters",
    "result",
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
    "sweeps",
    "validate",
    "validation",
]
__version__ = "0.1.0"
