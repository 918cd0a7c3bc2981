"""The core dual Newton method (cvxclust.dual_newton) on arrays of other array API libraries
(array-api-strict, PyTorch on the CPU): the Newton solve, the generalized Hessian, the conjugate
gradients and the solver with the cone and array bounds agree with NumPy; mixed libraries,
devices and dtypes of the target and the bounds are refused naming them."""

from __future__ import annotations

import array_api_compat
import numpy as np
import pytest
from array_namespaces import FOREIGN, as_library, to_numpy

from cvxclust import Relaxation
from cvxclust._array_ops import conjugate_gradients
from cvxclust.dual_newton import DualNewtonSolver, NearestPoint, generalized_hessian, newton_multipliers

N, ROW_SUM, TRACE = 12, 1.0, 3.0


def target(seed=0):
    A = np.random.default_rng(seed).standard_normal((N, N))
    return 0.3 * (A + A.T) + 0.2


def upper_bounds(seed=3):
    """An entrywise upper bound, symmetric, between 0.3 and 0.6."""
    B = np.random.default_rng(seed).uniform(0.3, 0.6, (N, N))
    return (B + B.T) / 2


@pytest.mark.parametrize("library", FOREIGN)
def test_newton_on_a_foreign_target_agrees_with_numpy(library):
    T, U = target(), upper_bounds()
    expected = newton_multipliers(T, row_sum=ROW_SUM, trace=TRACE, lower=0.0, upper=U)
    result = newton_multipliers(as_library(T, library), row_sum=ROW_SUM, trace=TRACE, lower=0.0,
                                upper=as_library(U, library))
    assert expected.status == result.status == "converged"
    assert result.value == pytest.approx(expected.value, rel=1e-10)
    np.testing.assert_allclose(to_numpy(result.F), expected.F, atol=1e-10)
    np.testing.assert_allclose(to_numpy(result.u), expected.u, atol=1e-9)
    assert array_api_compat.array_namespace(result.F) is array_api_compat.array_namespace(as_library(T, library))


@pytest.mark.parametrize("library", FOREIGN)
def test_the_generalized_hessian_and_conjugate_gradients_agree_with_numpy(library):
    T, U = target(1), upper_bounds()
    F = newton_multipliers(T, row_sum=ROW_SUM, trace=TRACE, lower=0.0, upper=U, max_iter=0).F
    half, diagonal = generalized_hessian(F, lower=0.0, upper=U, rows=True, traced=True, shift=1e-3)
    foreign, foreign_diagonal = generalized_hessian(as_library(F, library), lower=0.0, upper=as_library(U, library),
                                                    rows=True, traced=True, shift=1e-3)
    np.testing.assert_allclose(to_numpy(foreign_diagonal), diagonal, rtol=1e-12)
    H = np.column_stack([half @ e for e in np.eye(N + 1)])
    H_foreign = np.column_stack([to_numpy(foreign @ as_library(e, library)) for e in np.eye(N + 1)])
    np.testing.assert_allclose(H_foreign, H, atol=1e-6)  # NumPy's products with the pattern are in float32
    b = np.random.default_rng(2).standard_normal(N + 1)
    xp = array_api_compat.array_namespace(as_library(b, library))
    x = conjugate_gradients(foreign.matvec, as_library(b, library), foreign_diagonal, rtol=1e-12, maxiter=100, xp=xp)
    np.testing.assert_allclose(to_numpy(x), np.linalg.solve(H_foreign, b), rtol=1e-8)


class _Nearest(Relaxation):
    """min 1/2 ||X - T||^2 over 0 <= X <= U, X 1 = 1, tr X = 3, X >> 0, in T's namespace."""

    name = "nearest"

    def __init__(self, T, U):
        self.T, self.U = T, U
        self.xp = array_api_compat.array_namespace(T)

    def problem(self):
        raise NotImplementedError

    def objective(self, X):
        return 0.5 * float(self.xp.sum((X - self.T) ** 2))

    def residuals(self, X):
        xp = self.xp
        return {"row_sums": float(xp.max(xp.abs(xp.sum(X, axis=1) - ROW_SUM))),
                "trace": abs(float(xp.sum(xp.linalg.diagonal(X))) - TRACE),
                "box": max(0.0, -float(xp.min(X)), float(xp.max(X - self.U))),
                "psd": max(0.0, -float(xp.linalg.eigvalsh(X)[0]))}


class _Solver(DualNewtonSolver):
    def nearest_point(self):
        b = 2.0 / 11.0  # the centre a 11^T + b I with 12 a + b = 1 and 12 (a + b) = 3
        return NearestPoint(T=self.relaxation.T, weight=0.5, lower=0.0, upper=self.relaxation.U, row_sum=ROW_SUM,
                            trace=TRACE, psd=True, centre=((1.0 - b) / 12.0, b))


@pytest.mark.parametrize("library", FOREIGN)
def test_the_solver_with_the_cone_and_array_bounds_agrees_with_numpy(library):
    T, U = target(), upper_bounds()
    expected = _Solver(_Nearest(T, U), residual_tol=1e-8).run()
    T_foreign = as_library(T, library)
    result = _Solver(_Nearest(T_foreign, as_library(U, library)), residual_tol=1e-8).run()
    assert expected.status == result.status == "optimal"
    assert result.objective == pytest.approx(expected.objective, rel=1e-6)
    assert result.extras["lambda_min_eigs"] >= 1
    X = result.X
    assert array_api_compat.array_namespace(X) is array_api_compat.array_namespace(T_foreign)
    np.testing.assert_allclose(to_numpy(X), expected.X, atol=1e-5)
    np.testing.assert_array_equal(to_numpy(T_foreign), T)


def test_mixed_targets_and_bounds_are_refused_naming_them():
    torch = pytest.importorskip("torch")
    strict = pytest.importorskip("array_api_strict")
    T, U = target(), upper_bounds()
    with pytest.raises(TypeError, match="upper is an array of numpy and T one of torch"):
        NearestPoint(T=torch.asarray(T), weight=0.5, upper=U)
    with pytest.raises(ValueError, match="lower has dtype float32 and T float64"):
        NearestPoint(T=torch.asarray(T), weight=0.5, lower=torch.zeros((N, N), dtype=torch.float32))
    with pytest.raises(ValueError, match="upper is on device .*device1.* and T on"):
        NearestPoint(T=strict.asarray(T), weight=0.5, upper=strict.asarray(U, device=strict.Device("device1")))
    with pytest.raises(TypeError, match="T has dtype float16"):
        newton_multipliers(torch.asarray(T, dtype=torch.float16), row_sum=ROW_SUM)
    with pytest.raises(TypeError, match="u is an array of numpy and T one of torch"):
        newton_multipliers(torch.asarray(T), row_sum=ROW_SUM, u=np.zeros(N))


def test_a_device_without_the_memory_is_refused_before_the_first_iteration(monkeypatch):
    """Off NumPy the solver checks the device's free memory for the n x n arrays it will hold
    (here a pretend device with 1 kB free: PyTorch's CPU device has no such figure)."""
    torch = pytest.importorskip("torch")
    import cvxclust._array_api as array_api

    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: 1000)
    T = torch.asarray(target())
    with pytest.raises(ValueError, match=f"the dual Newton at order {N} \\(7 n x n arrays beside T\\) needs"):
        _Solver(_Nearest(T, torch.asarray(upper_bounds()))).run()
