"""The prototyping story of the ``Relaxation`` contract, on a toy relaxation written here:
the nearest point of the probability simplex to a vector v,

    minimize 1/2 ||X - v||^2   s.t.   X >= 0,  X 1 = 1       (X a 1 x n matrix named "X"),

with a tiny projected-gradient solver registered beside it.  Also: the solver registry's
scoping, ``Result`` and ``solve_reference``; the solver is written on ``cvxclust.solvers.IterativeSolver``.
"""

from __future__ import annotations

import dataclasses
from numbers import Integral, Real
import warnings

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from threadpoolctl import threadpool_limits

import cvxclust
from cvxclust import Relaxation, Result
from cvxclust.parameters import Interval
from cvxclust.solvers import Certificate, IterativeSolver, Param
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


# -- the toy relaxation, as a user would write it ------------------------------------------------


def project_simplex(y: np.ndarray) -> tuple[np.ndarray, float]:
    """Euclidean projection onto {x >= 0, sum x = 1}: x = max(y - tau, 0); returns (x, tau)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.nonzero(u - css / np.arange(1, len(y) + 1) > 0)[0][-1]
    tau = css[k] / (k + 1)
    return np.maximum(y - tau, 0.0), tau


class NearestSimplexPoint(Relaxation):
    """minimize 1/2 ||X - v||^2 s.t. X >= 0, sum(X) = 1, X of shape (1, n)."""

    name = "NearestSimplexPoint"
    default_method = "projected-gradient"

    def __init__(self, v):
        self.v = np.asarray(v, dtype=float).reshape(1, -1)

    def problem(self) -> cp.Problem:
        X = cp.Variable(self.v.shape, name="X")
        return cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X - self.v)), [X >= 0, cp.sum(X) == 1])

    def objective(self, X) -> float:
        return 0.5 * float(np.sum((np.asarray(X) - self.v) ** 2))

    def residuals(self, X) -> dict[str, float]:
        X = np.asarray(X)
        return {"sum": float(abs(X.sum() - 1.0)),
                "nonnegativity": float(max(0.0, -X.min()) / max(np.abs(X).max(), 1e-300))}

    def dual_value(self, tau: float) -> float:
        """g(tau) = min_{X >= 0} 1/2||X - v||^2 + tau (sum X - 1): a lower bound for every tau."""
        X = np.maximum(self.v - tau, 0.0)
        return 0.5 * float(np.sum((X - self.v) ** 2)) + tau * (X.sum() - 1.0)

    def dual_bound_from_reference(self, problem):
        nu = problem.constraints[1].dual_value
        return None if nu is None else self.dual_value(float(nu))


@NearestSimplexPoint.register_solver("projected-gradient")
class ProjectedGradient(IterativeSolver):
    """X <- Pi(X - step (X - v)); the threshold tau of the last projection certifies g(tau / step)."""

    method = "projected-gradient"
    parameters = IterativeSolver.parameters | {
        "tol": Param(1e-14, [Interval(Real, 0, None, closed="neither")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        "step_size": Param(0.5, [Interval(Real, 0, 1, closed="right")]),
    }

    def init_state(self):
        return {"X": np.full(self.relaxation.v.shape, 1.0 / self.relaxation.v.size), "tau": 0.0}

    def step(self, state, iteration):
        X = state["X"]
        X_new, state["tau"] = project_simplex((X - self.step_size * (X - self.relaxation.v)).ravel())
        state["X"] = X_new.reshape(X.shape)
        return {"change": float(np.linalg.norm(state["X"] - X))}

    def certify(self, state, bound, final=False):
        # at the fixed point X = max(v - tau / step, 0): the multiplier of sum X = 1 is tau / step
        return Certificate(state["X"], self.relaxation.dual_value(state["tau"] / self.step_size))


projected_gradient = ProjectedGradient.as_function()


@pytest.fixture
def toy():
    return NearestSimplexPoint(np.random.default_rng(0).standard_normal(25))


def test_simplex_projection_helper_is_right():
    # the helper the toy relies on, against cvxpy
    y = np.random.default_rng(1).standard_normal(12)
    x, _ = project_simplex(y)
    var = cp.Variable(12)
    cp.Problem(cp.Minimize(cp.sum_squares(var - y)), [var >= 0, cp.sum(var) == 1]).solve(solver="CLARABEL")
    np.testing.assert_allclose(x, var.value, atol=1e-6)


# -- the prototyping story -----------------------------------------------------------------------


def test_registered_solver_appears_in_methods(toy):
    assert NearestSimplexPoint.methods() == ["reference", "projected-gradient", "generic"]
    # the generic solver takes one symmetric matrix: it does not apply to a vector problem
    assert not toy.has_generic() and toy.scalable_methods() == ["projected-gradient"]
    with pytest.raises(ValueError, match="'generic' does not apply.*square matrix"):
        toy.solve("generic")
    # the decorator returns the function unchanged
    assert callable(projected_gradient) and projected_gradient.__name__ == "projected_gradient"


def test_solve_auto_uses_the_registered_default(toy):
    result = toy.solve("auto")
    assert isinstance(result, Result)
    assert result.method == "projected-gradient" and result.status == "optimal"
    ref = toy.solve("reference")
    assert ref.method == "reference-clarabel" and ref.status == "optimal"
    assert result.X.shape == ref.X.shape == (1, 25)
    assert result.objective == pytest.approx(ref.objective, rel=1e-8)
    np.testing.assert_allclose(result.X, ref.X, atol=1e-6)
    assert result.max_residual <= 1e-12
    # certified bounds from both: the solver's threshold and the reference's dual value
    assert result.dual_bound <= ref.objective + 1e-9
    assert result.relative_gap <= 1e-8
    assert ref.dual_bound == pytest.approx(ref.objective, rel=1e-7)
    assert result.history and {"iteration", "time", "objective", "change"} <= set(result.history[-1])


def test_validate_works_for_free(toy):
    report = cvxclust.validate(toy)
    assert report.name == "NearestSimplexPoint"
    assert report.passed
    [comparison] = report.comparisons
    assert comparison.method == "projected-gradient"
    assert comparison.objective_gap <= 1e-8
    assert comparison.solution_distance <= 1e-6
    assert "| projected-gradient | optimal |" in report.to_markdown()
    # and it fails when the solver is stopped early
    with pytest.warns(ConvergenceWarning):
        early = cvxclust.validate(toy, method_options={"projected-gradient": {"max_iter": 2}})
    assert not early.passed
    assert "status max_iter" in early.comparisons[0].failures


def test_reference_with_scs(toy):
    result = toy.solve("reference", solver="SCS", eps=1e-9)
    assert result.method == "reference-scs"
    assert result.objective == pytest.approx(toy.solve("auto").objective, rel=1e-6)


@pytest.mark.filterwarnings("ignore:Solution may be inaccurate:UserWarning")
def test_reference_not_optimal_warns(toy):
    with pytest.warns(ConvergenceWarning, match="CLARABEL"):
        result = toy.solve("reference", max_iter=1)
    assert result.status != "optimal"


def test_unknown_method_lists_the_toys_methods(toy):
    with pytest.raises(ValueError, match="Unknown method 'admm'") as info:
        toy.solve("admm")
    assert "'projected-gradient'" in str(info.value) and "'auto'" in str(info.value)


def test_solver_options_are_passed(toy):
    with pytest.warns(ConvergenceWarning, match="projected-gradient stopped after 3 iterations"):
        result = toy.solve("projected-gradient", max_iter=3)
    assert result.status == "max_iter" and result.iterations == 3
    fast = toy.solve("projected-gradient", step_size=1.0)  # step 1 is the projection itself: certified at once
    assert fast.iterations == 1 and fast.status == "optimal"


def test_primary_variable_must_be_named_X():
    class Unnamed(NearestSimplexPoint):
        def problem(self):
            X = cp.Variable(self.v.shape)
            return cp.Problem(cp.Minimize(cp.sum_squares(X - self.v)), [cp.sum(X) == 1])

    with pytest.raises(ValueError, match="'X'"):
        Unnamed([0.2, 0.8]).solve("reference")


def test_relaxation_is_abstract():
    with pytest.raises(TypeError):
        Relaxation()

    class Incomplete(Relaxation):
        def problem(self):
            return None

    with pytest.raises(TypeError):
        Incomplete()


# -- registry scoping ----------------------------------------------------------------------------


def dummy_solver(relaxation, **options):
    X = np.full(relaxation.v.shape, 1.0 / relaxation.v.size)
    return relaxation.make_result(X, status="optimal", method="dummy", iterations=1, time=0.0)


def test_registering_on_a_subclass_does_not_leak():
    class Base(NearestSimplexPoint):
        pass

    class Left(Base):
        pass

    class Right(Base):
        pass

    others = (Relaxation, NearestSimplexPoint, Base, Right, FrobeniusPSD, FrobeniusDS)
    before = {cls: cls.methods() for cls in others}
    left_before = Left.methods()
    Left.register_solver("dummy", dummy_solver)
    assert Left.methods() == [*left_before[:-1], "dummy", "generic"]
    for cls, methods in before.items():
        assert cls.methods() == methods, cls
        assert "dummy" not in cls.methods()
    assert Left([0.3, 0.7]).solve("dummy").method == "dummy"
    with pytest.raises(ValueError, match="Unknown method 'dummy'"):
        Right([0.3, 0.7]).solve("dummy")
    with pytest.raises(ValueError, match="Unknown method 'dummy'"):
        NearestSimplexPoint([0.3, 0.7]).solve("dummy")


def test_registering_on_a_subclass_of_a_family_relaxation_does_not_leak():
    ds_before, psd_before = FrobeniusDS.methods(), FrobeniusPSD.methods()

    class MyPSD(FrobeniusPSD):
        pass

    @MyPSD.register_solver("uniform")
    def uniform(relaxation, **options):
        n = relaxation.n
        return relaxation.make_result(np.full((n, n), 1.0 / n), status="optimal", method="uniform",
                                      iterations=1, time=0.0)

    assert "uniform" in MyPSD.methods()
    assert FrobeniusPSD.methods() == psd_before and FrobeniusDS.methods() == ds_before
    K = np.array([[1.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.0]])
    result = MyPSD(K).solve("uniform")
    assert result.max_residual <= 1e-15  # 11^T / n is feasible
    assert result.objective == pytest.approx(0.5 * np.sum((np.full((3, 3), 1 / 3) - K) ** 2))
    with pytest.raises(ValueError, match="Unknown method 'uniform'"):
        FrobeniusPSD(K).solve("uniform")


def test_registering_replaces_a_method_of_the_same_name():
    class Local(NearestSimplexPoint):
        pass

    Local.register_solver("projected-gradient", dummy_solver)
    result = Local([0.3, 0.7]).solve("auto")
    # the solver that answers is the one registered last, reported by the name it was called by
    assert result.method == "projected-gradient" and result.iterations == 1
    assert NearestSimplexPoint([0.3, 0.7]).solve("auto").method == "projected-gradient"


@pytest.mark.parametrize("name", ["auto", "reference"])
def test_reserved_names_are_rejected(name):
    class Local(NearestSimplexPoint):
        pass

    with pytest.raises(ValueError, match=name):
        Local.register_solver(name, dummy_solver)
    with pytest.raises(ValueError, match="reserved"):
        Local.register_solver(name)(dummy_solver)
    assert Local.methods().count("reference") == 1 and "auto" not in Local.methods()
    assert Local([0.3, 0.7]).solve("reference").method == "reference-clarabel"  # still cvxpy


# -- Result --------------------------------------------------------------------------------------


def test_result_properties():
    r = Result(X=np.zeros((2, 2)), objective=4.0, status="optimal", method="m", iterations=3, time=0.5,
               residuals={"a": 1e-3, "b": 2e-3}, dual_bound=3.0)
    assert r.duality_gap == 1.0
    assert r.relative_gap == 0.25
    assert r.max_residual == 2e-3
    assert r.history == ()
    text = repr(r)
    assert "method='m'" in text and "status='optimal'" in text and "2.50e-01" in text
    bare = Result(X=np.zeros(1), objective=0.0, status="max_iter", method="m", iterations=0, time=0.0, residuals={})
    assert bare.duality_gap is None and bare.relative_gap is None
    assert bare.max_residual == 0.0
    assert "relative_gap=n/a" in repr(bare)
    # a Result is frozen: its fields, residuals and extras cannot change
    with pytest.raises(dataclasses.FrozenInstanceError):
        bare.status = "optimal"
    with pytest.raises(TypeError):
        r.residuals["a"] = 0.0


def test_make_result_recomputes_objective_and_residuals(toy):
    X = np.full((1, 25), 1.0 / 25)
    r = toy.make_result(X, status="optimal", method="mine", iterations=2.0, time=1, dual_bound=np.float64(-1.0))
    assert r.objective == toy.objective(X)
    assert r.residuals == toy.residuals(X)
    assert isinstance(r.iterations, int) and isinstance(r.time, float) and type(r.dual_bound) is float
    assert r.history == ()




# -- plug-in methods ---------------------------------------------------------------------------


def test_the_core_does_not_import_the_generic_solver():
    # the generic solver is a plug-in: the relaxation module knows no particular solver
    import ast
    from pathlib import Path

    import cvxclust._relaxation as core

    tree = ast.parse(Path(core.__file__).read_text())
    imported = [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert not [name for name in imported if "generic" in name], imported
    assert "generic" in core._PLUGINS  # registered by cvxclust.generic at import


def test_a_plug_in_is_offered_to_every_relaxation_it_applies_to(monkeypatch, toy):
    from cvxclust import _relaxation

    def everywhere(relaxation, **options):
        X = np.full((1, relaxation.v.size), 1.0 / relaxation.v.size)
        return relaxation.make_result(X, status="optimal", method="mine", iterations=1, time=0.0)

    monkeypatch.setattr(_relaxation, "_PLUGINS", dict(_relaxation._PLUGINS))
    Relaxation.register_plugin("everywhere", everywhere, lambda r: isinstance(r, NearestSimplexPoint))
    # listed by every class after its own solvers, applied where it applies, called by its name
    assert NearestSimplexPoint.methods() == ["reference", "projected-gradient", "generic", "everywhere"]
    assert "everywhere" in FrobeniusPSD.methods()
    assert toy.scalable_methods() == ["projected-gradient", "everywhere"]
    assert "everywhere" not in FrobeniusPSD(np.eye(4)).scalable_methods()
    result = toy.solve("everywhere")
    assert result.method == "everywhere" and result.objective == toy.objective(np.full((1, 25), 1 / 25))
    # a solver a class registers under the same name takes precedence for that class only
    class Own(NearestSimplexPoint):
        pass

    Own.register_solver("everywhere", dummy_solver)
    assert Own.methods() == ["reference", "everywhere", "generic"]
    assert Own(toy.v).solve("everywhere").objective == toy.objective(np.full((1, 25), 1 / 25))
    assert Own.methods().count("everywhere") == 1


def test_plug_ins_are_registered_on_relaxation_itself():
    with pytest.raises(TypeError, match="register_solver"):
        NearestSimplexPoint.register_plugin("x", dummy_solver, lambda r: True)
    with pytest.raises(ValueError, match="reserved"):
        Relaxation.register_plugin("reference", dummy_solver, lambda r: True)
    with pytest.raises(TypeError, match="applies must be a callable"):
        Relaxation.register_plugin("x", dummy_solver, True)


def test_the_standard_form_is_one_cached_method(toy):
    import cvxclust.generic.standard_form as module

    assert not hasattr(module, "form_of")  # the one way is Relaxation.standard_form()
    relaxation = FrobeniusPSD(np.eye(4) + 0.5)
    form = relaxation.standard_form()
    assert isinstance(form, cvxclust.generic.StandardForm) and relaxation.standard_form() is form
    assert relaxation.generic_form() is form and relaxation.has_standard_form() and relaxation.has_generic()
    plain = cvxclust.generic.CvxpyRelaxation(relaxation.problem())
    assert isinstance(plain.standard_form(), cvxclust.generic.StandardForm)
    # outside the class: the reader's message, kept (read once)
    with pytest.raises(ValueError, match="square matrix") as error:
        toy.standard_form()
    assert "generic" not in str(error.value) and not toy.has_standard_form()
    with pytest.raises(ValueError, match="method 'generic' does not apply to NearestSimplexPoint"):
        toy.generic_form()
