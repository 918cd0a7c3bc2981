"""The contract of every relaxation the package ships, checked for each registered method: a
method is tested the moment it is registered (pymanopt's pattern).

For each (relaxation, method): the default solve is certified and its bound lies on the right
side of the cvxpy reference; ``max_iter`` and ``time_limit`` give a ConvergenceWarning, the
matching status and a valid Result; history rows carry the core's keys; the Result reports the
registered name.
"""

from __future__ import annotations

import inspect
import warnings

import cvxpy
import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import Relaxation, Result
from cvxclust.bregman import Conditional, ConditionalJC, Discriminative, Joint
from cvxclust.cluhsic import CLUHSICSDP
from cvxclust.kernels import center, rbf
from cvxclust.generic import CvxpyRelaxation
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD, PengWei

STATUSES = {"optimal", "converged", "max_iter", "time_limit", "stalled", "infeasible", "unbounded"}


def _iris(n):
    X = load_iris().data
    return X[np.random.default_rng(0).permutation(len(X))[:n]]


def _chain(c):
    return np.eye(c) + np.eye(c, k=1) + np.eye(c, k=-1)


#: a small instance of every relaxation the package ships
INSTANCES = {
    FrobeniusDS: lambda: FrobeniusDS(rbf(_iris(24), 1.0)),
    FrobeniusPSD: lambda: FrobeniusPSD(rbf(_iris(24), 1.0)),
    CLUHSICSDP: lambda: CLUHSICSDP(center(rbf(_iris(8), 1.0)), _chain(2)),
    ConditionalJC: lambda: ConditionalJC(_iris(15), "euclidean", 3),
    Conditional: lambda: Conditional(_iris(12), "euclidean", 2),
    Discriminative: lambda: Discriminative(_iris(12), 2),
    Joint: lambda: Joint(_iris(12), "euclidean", 2),
    PengWei: lambda: PengWei(rbf(_iris(20), 1.0), 3),
    CvxpyRelaxation: lambda: CvxpyRelaxation(_plain_problem()),
}


def _plain_problem():
    """A relaxation the package does not ship, in plain cvxpy: the nearest p.s.d. matrix with unit
    diagonal bounded below by 0.1 off the diagonal, and a bound on a block's sum."""
    K = rbf(_iris(10), 1.0)
    X = cvxpy.Variable((10, 10), symmetric=True)
    constraints = [X >> 0, cvxpy.diag(X) == 1, X >= 0.1, cvxpy.sum(X[:5, :5]) <= 20]
    return cvxpy.Problem(cvxpy.Minimize(cvxpy.sum_squares(X - 2 * K)), constraints)


def _shipped_relaxations():
    found, todo = [], [Relaxation]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            todo.append(sub)
            if sub.__module__.startswith("cvxclust.") and not sub.__name__.startswith("_") \
                    and not inspect.isabstract(sub):
                found.append(sub)
    return found


# every method that applies to the instance: the registered ones, and "generic" where the
# problem is of its class
CASES = [(cls, m) for cls in INSTANCES for m in INSTANCES[cls]().scalable_methods()]
IDS = [f"{cls.__name__}-{m}" for cls, m in CASES]


@pytest.fixture(scope="module")
def references():
    cache = {}

    def get(cls):
        if cls not in cache:
            relaxation = INSTANCES[cls]()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                cache[cls] = relaxation, relaxation.solve("reference")
        return cache[cls]

    return get


def test_every_shipped_relaxation_has_an_instance_here():
    missing = sorted(c.__name__ for c in _shipped_relaxations() if c not in INSTANCES)
    assert not missing, f"add a small instance of {missing} to INSTANCES"


def check_history(result: Result):
    assert result.history, "a scalable method records a history"
    for row in result.history:
        assert {"iteration", "time"} <= set(row), sorted(row)
        if "dual_bound" in row:
            assert {"objective", "relative_gap", "max_residual"} <= set(row), sorted(row)
    iterations = [row["iteration"] for row in result.history]
    assert iterations == sorted(iterations) and iterations[-1] <= max(result.iterations, 1)


@pytest.mark.parametrize(("cls", "method"), CASES, ids=IDS)
def test_default_solve_is_certified_on_the_right_side(cls, method, references):
    relaxation, reference = references(cls)
    result = relaxation.solve(method)
    assert isinstance(result, Result) and result.method == method
    assert result.status in STATUSES
    assert result.objective == pytest.approx(relaxation.objective(result.X), rel=1e-12, abs=1e-12)
    assert dict(result.residuals) == pytest.approx(relaxation.residuals(result.X), rel=1e-9, abs=1e-12)
    check_history(result)
    if result.status == "optimal":
        assert result.relative_gap is not None
        assert result.dual_bound is not None
    if result.dual_bound is not None:
        slack = 1e-6 * max(1.0, abs(reference.objective))
        if relaxation.sense == "minimize":
            assert result.dual_bound <= reference.objective + slack
        else:
            assert result.dual_bound >= reference.objective - slack
    # the method's answer agrees with the reference where it claims to be certified
    if result.status == "optimal":
        assert result.objective == pytest.approx(reference.objective, rel=1e-3, abs=1e-6)


@pytest.mark.parametrize(("cls", "method"), CASES, ids=IDS)
@pytest.mark.parametrize("limit", [{"max_iter": 1}, {"time_limit": 1e-9}])
def test_limits_warn_and_return_a_valid_result(cls, method, limit, references):
    relaxation, _ = references(cls)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = relaxation.solve(method, **limit)
    status = "max_iter" if "max_iter" in limit else "time_limit"
    assert result.status in (status, "optimal", "converged")
    if result.status == status:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert result.method == method
    assert np.all(np.isfinite(result.X)) and np.isfinite(result.objective)
    assert all(np.isfinite(v) for v in result.residuals.values())
    assert result.iterations <= 1


def test_statuses_are_documented():
    doc = Result.__doc__
    for status in STATUSES:
        assert f'"{status}"' in doc
    assert set(cvxclust.solvers.STOP_REASONS) == STATUSES


# -- typed solver states ---------------------------------------------------------------------------


def _heuristic_runs():
    """The iterative solvers no relaxation registers: the HSIC heuristics, the low-rank SDP and
    the rounding by alternating projections."""
    from cvxclust import hsic

    K, A = center(rbf(_iris(12), 1.0)), np.eye(2) + 1.0
    return [lambda: hsic.cccp(K, A, n_init=1, max_iter=5, random_state=0),
            lambda: hsic.nmf(K, A, max_iter=5, random_state=0),
            lambda: hsic.greedy(K, A, max_iter=5, random_state=0),
            lambda: hsic.lowrank(K, A, max_iter=5, random_state=0),
            lambda: hsic.alternating_projection(np.abs(np.random.default_rng(0).standard_normal((12, 2))), max_iter=5)]


def test_every_solver_state_is_typed_and_declares_what_it_holds(monkeypatch):
    """Every iterative solver's state is a dataclass extending cvxclust.solvers.SolverState that
    declares every field its solver sets (no attribute appears that the class does not name)."""
    import dataclasses

    from cvxclust.solvers import IterativeSolver, SolverState

    seen = {}
    advance = IterativeSolver.advance

    def recording(self, state, figures):
        seen[f"{type(self).__module__}.{type(self).__qualname__}"] = state
        return advance(self, state, figures)

    monkeypatch.setattr(IterativeSolver, "advance", recording)
    runs = [lambda cls=cls, m=m: INSTANCES[cls]().solve(m, max_iter=5) for cls, m in CASES] + _heuristic_runs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for run in runs:
            run()
    modules = {name.rsplit(".", 1)[0] for name in seen}
    assert {"cvxclust.ssc._dual_newton", "cvxclust.generic.solver", "cvxclust.ssc._admm", "cvxclust.ssc._lagrange_dual",
            "cvxclust.ssc._successive_projections", "cvxclust.hsic._admm", "cvxclust.hsic._lowrank",
            "cvxclust.hsic._spectral", "cvxclust.hsic._nmf", "cvxclust.hsic._rounding", "cvxclust.hsic._greedy",
            "cvxclust.bregman._jc_admm", "cvxclust.bregman._davis_yin",
            "cvxclust.bregman._conditional_gradient"} <= modules, sorted(modules)
    for name, state in seen.items():
        assert isinstance(state, SolverState) and dataclasses.is_dataclass(state), name
        undeclared = set(vars(state)) - {f.name for f in dataclasses.fields(state)}
        assert not undeclared, f"{name} sets {sorted(undeclared)} outside its state's fields"
