"""Semidefinite spectral clustering (ssc): Frobenius normalizations with and without the
p.s.d. constraint, their solvers, and the classic normalizations they are compared to.

Source: Y. Yan, C. Shen, H. Wang, "Efficient Semidefinite Spectral Clustering via Lagrange
Duality", IEEE Transactions on Image Processing, 2014 (equation numbers in docstrings are that
paper's).
"""

from .._deprecation import module_getattr
from ._admm import admm
from ._dual_newton import dual_newton
from ._estimator import SemidefiniteSpectralClustering
from ._lagrange_dual import ld_ssc1, ld_ssc2
from ._normalize import RELAXATIONS, normalize
from ._peng_wei import PengWei
from ._relaxations import FrobeniusDS, FrobeniusPSD
from ._successive_projections import successive_projections

__all__ = ["admm", "dual_newton", "FrobeniusDS", "FrobeniusPSD", "ld_ssc1", "ld_ssc2", "PengWei", "RELAXATIONS",
           "SemidefiniteSpectralClustering", "normalize", "successive_projections"]

# NORMALIZATIONS, the old name of RELAXATIONS, is served with a FutureWarning
__getattr__ = module_getattr(__name__, {"NORMALIZATIONS": ("RELAXATIONS", RELAXATIONS)})
