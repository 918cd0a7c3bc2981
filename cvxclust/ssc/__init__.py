"""Semidefinite spectral clustering (ssc): Frobenius normalizations with and without the
p.s.d. constraint, their solvers, and the classic normalizations they are compared to."""

from . import _admm  # noqa: F401  (registers the solver)
from ._relaxations import FrobeniusDS, FrobeniusPSD

__all__ = ["FrobeniusDS", "FrobeniusPSD"]
