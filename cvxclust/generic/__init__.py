"""Prototype at scale: a certified solver for relaxations written in plain cvxpy.

:func:`solve` takes a ``cvxpy.Problem`` over one symmetric matrix (p.s.d. cone, entrywise
bounds, affine equalities and inequalities, a linear or squared-Frobenius objective) and solves
it on the matrix itself, with a certified bound; after ``import cvxclust`` the same is
``problem.solve(method="cvxclust")``.  Every :class:`~cvxclust.Relaxation` whose problem is of
this class also has it as its method ``"generic"``: the package registers it as a plug-in of
:class:`~cvxclust.Relaxation` (:meth:`~cvxclust.Relaxation.register_plugin`) at import, with
:func:`standard_form` as the reader of :meth:`~cvxclust.Relaxation.standard_form`.
"""

from .._deprecation import module_getattr
from .._progress import call_clock
from .._relaxation import Relaxation

from .alm import AugmentedLagrangian, alm_form
from .dual_newton import GenericDualNewton, nearest_point_form
from .entry import CvxpyRelaxation, choose_method, solve
from .lowrank import LowRank
from .lowrank_form import lowrank_reason
from .newton import EqualityDual, GenericNewton, equality_form
from .solver import GenericSolver
from .spectral_set import SpectralSet
from .standard_form import StandardForm, linear_map, standard_form
from .splitting import Splitting, split

__all__ = ["AugmentedLagrangian", "CvxpyRelaxation", "EqualityDual", "GenericDualNewton", "GenericNewton",
           "GenericSolver", "LowRank", "SpectralSet", "Splitting", "StandardForm", "alm_form", "choose_method",
           "equality_form", "linear_map", "lowrank_reason", "nearest_point_form", "solve", "split", "standard_form"]

# "structure" is the output structure of the structured estimators; the split of a standard form
# had that name before
__getattr__ = module_getattr(__name__, {"Structure": ("Splitting", Splitting), "structure": ("split", split)})


def _generic(relaxation, **options):
    """Method ``"generic"`` of a relaxation: :class:`GenericSolver` on its standard form."""
    with call_clock():  # reading the problem counts in the solve's time
        relaxation.generic_form()  # a ValueError naming what is outside the class
        return GenericSolver(relaxation, **options).run()


Relaxation.register_standard_form_reader(standard_form)
Relaxation.register_plugin("generic", _generic, Relaxation.has_standard_form)
