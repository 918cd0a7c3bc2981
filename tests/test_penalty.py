"""The one penalty schedule of the package's ADMMs (:mod:`cvxclust.penalty`): residual balancing,
its period, its ratio and its range, and the four ADMMs that use it."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from cvxclust.bregman import ConditionalJC
from cvxclust.bregman._jc_admm import ADMM as BregmanADMM
from cvxclust.cluhsic import CLUHSICSDP
from cvxclust.generic import CvxpyRelaxation, GenericSolver
from cvxclust.kernels import center, rbf
from cvxclust.parameters import InvalidParameterError
from cvxclust.penalty import PENALTY_RANGE, ResidualBalancing
from cvxclust.hsic._admm import ADMM as HSICADMM
from cvxclust.ssc import FrobeniusPSD
from cvxclust.ssc._admm import ADMM as SSCADMM


def test_the_penalty_doubles_for_the_primal_figure_and_halves_for_the_dual_one():
    schedule = ResidualBalancing(1.0, mu=10.0, every=5)
    assert schedule.change(5, 1.0, 1e-2, 1e-4) == 2.0  # primal ahead by more than mu
    assert schedule.change(10, 1.0, 1e-4, 1e-2) == 0.5  # dual ahead
    assert schedule.change(5, 1.0, 1e-2, 2e-3) == 1.0  # within mu of each other
    assert schedule.change(5, 1.0, 1e-3, 0.0) == 2.0  # a zero figure: the other is ahead
    assert schedule.change(5, 1.0, 0.0, 0.0) == 1.0


def test_the_penalty_changes_only_on_its_period_and_with_figures():
    schedule = ResidualBalancing(1.0, mu=2.0, every=5)
    assert [schedule.change(k, 1.0, 1.0, 1e-3) for k in range(1, 11)] == [1.0] * 4 + [2.0] + [1.0] * 4 + [2.0]
    # the figures of no iteration yet are NaN: no change
    assert schedule.change(0, 1.0, np.nan, np.nan) == 1.0 and schedule.change(5, 1.0, 1.0, np.nan) == 1.0


@pytest.mark.parametrize("start", [1e-3, 1.0, 250.0])
def test_the_penalty_stays_within_its_range_of_the_start(start):
    schedule = ResidualBalancing(start, mu=2.0, every=1)
    low, high = PENALTY_RANGE
    assert schedule.change(1, start * high, 1.0, 1e-6) == 1.0  # doubling would leave the range
    assert schedule.change(1, start * high / 2, 1.0, 1e-6) == 2.0  # to its end exactly
    assert schedule.change(1, start * low, 1e-6, 1.0) == 1.0
    assert schedule.change(1, start * low * 2, 1e-6, 1.0) == 0.5


def _instances():
    rng = np.random.default_rng(0)
    K = rbf(rng.standard_normal((12, 2)), 1.0)
    X = cp.Variable((8, 8), symmetric=True)
    plain = cp.Problem(cp.Minimize(cp.sum_squares(X - K[:8, :8])), [X >> 0, cp.diag(X) == 1, cp.sum(X[:3, :3]) <= 5])
    return {"ssc": (FrobeniusPSD(K), SSCADMM, "admm"),
            "hsic": (CLUHSICSDP(center(K[:6, :6]), np.eye(2) * 2 + 1), HSICADMM, "admm"),
            "bregman": (ConditionalJC(rng.uniform(0.2, 0.8, (10, 2)), "euclidean", 2), BregmanADMM, "admm"),
            "generic": (CvxpyRelaxation(plain), GenericSolver, "generic")}


@pytest.mark.parametrize("family", ["ssc", "hsic", "bregman", "generic"])
def test_every_admm_balances_with_the_one_schedule(family):
    relaxation, cls, method = _instances()[family]
    solver = cls(relaxation, mu=3.0, adapt_every=7)
    state = solver.init_state()
    assert state.penalty == ResidualBalancing(state.rho, 3.0, 7)
    # one constraint on the ratio for all: below 1 both sides would call for a change
    with pytest.raises(InvalidParameterError, match="'mu' parameter.*range \\[1, inf\\)"):
        relaxation.solve(method, mu=0.5)


def test_the_old_balancing_function_warns_and_balances_alike():
    from cvxclust.solvers import balance_penalty

    U = np.ones((2, 2))
    with pytest.warns(FutureWarning, match="ResidualBalancing"):
        rho, V = balance_penalty(10, 1.0, U, 1e-2, 1e-4, 10.0, 5)
    assert rho == 2.0 and np.array_equal(V, U / 2) and np.array_equal(U, np.ones((2, 2)))
