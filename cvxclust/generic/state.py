"""The state of the generic solver (:class:`cvxclust.generic.GenericSolver`), every field declared."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..acceleration import AndersonAccelerator
from ..penalty import ResidualBalancing
from ..solvers import SolverState
from .spectral_set import SpectralSet
from .standard_form import StandardForm
from .splitting import Splitting

__all__ = ["GenericState"]


@dataclass(kw_only=True, eq=False)
class GenericState(SolverState):
    """The state of :class:`~cvxclust.generic.GenericSolver` (see its module).

    :meth:`~cvxclust.generic.GenericSolver.init_state` fills the fields after the first four in
    turn; ``checks`` counts the certifications, for the test of infeasibility.
    """

    form: StandardForm
    #: the namespace, device and dtype of the iteration's arrays (:mod:`cvxclust.generic.device`)
    arrays: object = None
    #: the splitting of the form, the spectral set of its eigendecomposition, the row multipliers
    split: Splitting
    spectral: SpectralSet
    lam: np.ndarray
    #: the box: whether there is one, its finite bounds (0 elsewhere) and where they are finite
    boxed: bool = False
    L0: np.ndarray | None = None
    U0: np.ndarray | None = None
    finite_L: np.ndarray | None = None
    finite_U: np.ndarray | None = None
    #: the norm of the start (at least 1): the scale of the residuals' floors
    scale: float = 1.0
    rho: float = np.nan
    penalty: ResidualBalancing | None = None
    r_primal: float = np.nan
    r_dual: float = np.nan
    #: whether only the box is left beside the spectral set; the copies of X (``"S"``, ``"B"``);
    #: the number of range rows (their slack is the last block of S)
    two_block: bool = False
    copies: list[str] = field(default_factory=list)
    m_in: int = 0
    #: the fixed-point variable, its image under the iteration (None before a step) and the
    #: Anderson acceleration of the map
    S: np.ndarray | None = None
    image: np.ndarray | None = None
    accelerator: AndersonAccelerator | None = None
    fixed_point_residual: float = np.nan
    #: the rows' Gram matrix, the key ``(rho, h)`` of its factor and the solve with it
    gram: object = None
    factor_key: tuple | None = None
    solve: Callable[[np.ndarray], np.ndarray] | None = None
    #: the last X-step's point, the point in S, the copies' values of the last step and the box's
    #: scaled multiplier
    X: np.ndarray | None = None
    Z: np.ndarray | None = None
    previous: dict | None = None
    U_box: np.ndarray | None = None
    #: ``(X, objective)``: the best exactly feasible point of the checks
    feasible: tuple | None = None
    #: ``(primal residual, relative loss against the iterate)`` of the last polish
    last_polish: tuple | None = None
    cone_free_iterations: int = 0
    #: the starting point; the minimiser of the objective alone where it meets every constraint
    start: np.ndarray | None = None
    optimum: np.ndarray | None = None
    #: the multipliers at the last test of infeasibility, and the certificate where one was found
    last_multipliers: tuple | None = None
    infeasibility: dict | None = None
    #: the iterate at the last test of unboundedness, the direction that test found, and the
    #: certificate where two tests in a row agree (cvxclust.generic.certificates)
    last_Z: np.ndarray | None = None
    recession_candidate: dict | None = None
    unboundedness: dict | None = None
