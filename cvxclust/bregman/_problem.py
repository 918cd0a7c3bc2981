r"""cvxpy statements of the Bregman-clustering relaxations (paper: "Convex relaxations of Bregman
divergence clustering"; equation numbers are that paper's).  Builds problems; never solves them.

Each function returns a ``cvxpy.Problem`` whose primary variable is named ``"X"`` (the
:class:`~cvxclust.Relaxation` contract), whatever the paper calls it (M here).
"""

from __future__ import annotations

import cvxpy as cp

from .divergences import Divergence
from .sets import constraints_M1


def conditional_jc_problem(X, divergence: Divergence, n_clusters: int) -> cp.Problem:
    r"""The relaxation (10) over M1 for a jointly convex divergence (Section 3.1)::

        minimize    D_F(X, M X)
        subject to  M in M1 = {M : 0 <= M <= I, tr(M) <= d, M_{i:} in Delta_t}

    ``D_F(X, M X) = sum_i D_F(X_{i:}, M_{i:} X)`` (rows = points); it is convex in M exactly
    when D_F is convex in its second argument, which :meth:`Divergence.cvxpy_divergence`
    requires (it raises ``ValueError`` otherwise).

    The variable ``M`` is a symmetric ``t x t`` cvxpy variable named ``"X"``; the constraints are
    those of :func:`~cvxclust.bregman.sets.constraints_M1`, in its order::

        [M >> 0,  I - M >> 0,  tr(M) <= d,  M 1 == 1,  M >= 0]

    Parameters
    ----------
    X : ndarray, shape (t, n)
        The data, already checked against the divergence's domain.
    divergence : Divergence
        A jointly convex divergence.
    n_clusters : int
        d, ``2 <= d <= t``.
    """
    t = X.shape[0]
    M = cp.Variable((t, t), symmetric=True, name="X")
    objective = divergence.cvxpy_divergence(X, M @ X)
    return cp.Problem(cp.Minimize(objective), constraints_M1(M, n_clusters))
