"""Semidefinite spectral clustering (ssc): Frobenius normalizations with and without the
p.s.d. constraint, their solvers, and the classic normalizations they are compared to.

Source: Y. Yan, C. Shen, H. Wang, "Efficient semidefinite spectral clustering via Lagrange
duality", IEEE TIP 2014 (equation numbers in docstrings are that paper's).
"""

from . import _lagrange_dual  # noqa: F401  (registers LD-SSC1/2 and successive projections)
from ._admm import admm
from ._estimator import SemidefiniteSpectralClustering
from ._normalize import NORMALIZATIONS, normalize
from ._relaxations import FrobeniusDS, FrobeniusPSD

__all__ = ["admm", "FrobeniusDS", "FrobeniusPSD", "NORMALIZATIONS", "SemidefiniteSpectralClustering", "normalize"]
