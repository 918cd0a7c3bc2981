"""cvxclust: convex relaxations of clustering in cvxpy, with scalable solvers validated against them."""

from ._relaxation import ConvergenceWarning, Relaxation, Result
from .validation import validate

__all__ = ["ConvergenceWarning", "Relaxation", "Result", "validate"]
__version__ = "0.1.0"
