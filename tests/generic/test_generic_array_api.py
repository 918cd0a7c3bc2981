"""``cvxclust.solve(..., device=...)``: the generic ADMM's two-block path on another array API
library (PyTorch on the CPU through ``device=torch.device("cpu")``; array-api-strict through the
namespace that ``device=`` resolves to), against the same solve on NumPy; the refusals of the
methods and paths that run on NumPy only, and of bad ``device`` and ``dtype`` values."""

from __future__ import annotations

import dataclasses

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from array_namespaces import FOREIGN, as_library, to_numpy

import cvxclust
import cvxclust.generic.device as device_module
from cvxclust._array_api import check_arrays, library, namespace_of
from cvxclust.generic import CvxpyRelaxation


@pytest.fixture
def on(monkeypatch):
    """``on(library)``: the ``device=`` value that runs a solve on ``library`` (array-api-strict
    has no ``device=`` spelling: the option's resolution is pointed at its namespace)."""
    def resolve(name: str):
        if name == "torch":
            torch = pytest.importorskip("torch")
            return torch.device("cpu")
        strict = check_arrays(X=as_library(np.zeros((2, 2)), name))
        real = device_module.device_namespace
        monkeypatch.setattr(device_module, "device_namespace",
                            lambda device, dtype: strict if device == "strict-device" else real(device, dtype))
        return "strict-device"

    return resolve


def peng_wei(n=24, k=3, seed=0):
    rng = np.random.default_rng(seed)
    P = np.vstack([rng.normal(c, 0.3, (n // k, 2)) for c in ([0, 0], [3, 0], [0, 3])])
    D = ((P[:, None] - P[None]) ** 2).sum(-1)
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Minimize(cp.trace(D @ X)), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == k]), D


def max_cut(n=20, seed=1):
    rng = np.random.default_rng(seed)
    W = np.triu((rng.random((n, n)) < 0.3) * rng.random((n, n)), 1)
    W = W + W.T
    laplacian = sp.csr_matrix(np.diag(W.sum(1)) - W)  # a sparse cost: densified once on the device
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Maximize(cp.trace(laplacian @ X) / 4), [X >> 0, cp.diag(X) == 1]), laplacian


def nearest(n=16, seed=3):
    """SSC (7) stated in cvxpy: a Frobenius objective (the cone-free start), row sums without a
    trace (the restoration that moves violations onto the diagonal)."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(n, 3))
    K = np.exp(-((P[:, None] - P[None]) ** 2).sum(-1))
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Minimize(cp.sum_squares(X - K)), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1]), K


def assert_agrees(result, reference, name):
    assert reference.status == "optimal"
    assert result.status == "optimal", result.status
    assert library(namespace_of(result.X)) == name
    assert abs(result.objective - reference.objective) <= 1e-6 * abs(reference.objective)
    assert abs(result.dual_bound - reference.dual_bound) <= 1e-6 * abs(reference.objective)
    assert result.relative_gap <= 1e-6 and result.max_residual <= 1e-6
    assert np.abs(to_numpy(result.X) - reference.X).max() <= 1e-6


@pytest.mark.parametrize("name", FOREIGN)
@pytest.mark.parametrize("make", [peng_wei, max_cut, nearest], ids=["peng-wei", "max-cut", "ssc7"])
def test_a_solve_on_a_device_agrees_with_numpy(on, name, make):
    problem, data = make()
    kept = data.copy()
    reference = cvxclust.solve(problem, method="generic")
    result = cvxclust.solve(problem, method="generic", device=on(name))
    assert_agrees(result, reference, name)
    assert result.extras["eigendecompositions"] == reference.extras["eigendecompositions"]
    assert (abs(data - kept)).max() == 0  # the caller's cost is untouched


@pytest.mark.parametrize("name", FOREIGN)
def test_objective_and_residuals_of_a_device_point(on, name):
    problem, _ = peng_wei(n=12)
    relaxation = CvxpyRelaxation(problem)
    X = np.full((12, 12), 1.0 / 12) + 0.01 * np.eye(12)
    X[0, 1] = X[1, 0] = -0.02  # a bound and the row sums violated
    on(name)
    Xd = as_library(X, name)
    assert relaxation.objective(Xd) == pytest.approx(relaxation.objective(X), rel=1e-12)
    expected, got = relaxation.residuals(X), relaxation.residuals(Xd)
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == pytest.approx(expected[key], rel=1e-9, abs=1e-15), key


def test_auto_on_a_device_picks_a_method_that_runs_there(on):
    problem, _ = peng_wei(n=12)
    result = cvxclust.solve(problem, device=on("torch"))
    assert result.method == "generic" and "device" in result.extras["auto"]
    assert result.status == "optimal"


def test_float32_on_torch(on):
    # the bound's rounding allowance scales with float32's unit roundoff: certified to about 1e-3 here
    torch_device = on("torch")
    problem, _ = peng_wei(n=12)
    reference = cvxclust.solve(problem, method="generic")
    result = cvxclust.solve(problem, method="generic", device=torch_device, dtype="float32", tol=1e-2,
                            residual_tol=1e-4)
    assert str(result.X.dtype) == "torch.float32"
    assert result.status == "optimal"
    assert reference.objective - 1e-2 * abs(reference.objective) <= result.dual_bound <= reference.objective
    assert abs(result.objective - reference.objective) <= 1e-2 * abs(reference.objective)


@pytest.mark.parametrize("method", ["reference"])
def test_methods_that_run_on_numpy_only_refuse_a_device(on, method):
    problem, _ = peng_wei(n=12)
    with pytest.raises(ValueError, match=rf"method='{method}' runs on NumPy only.*"
                                         r"\['generic', 'dual-newton', 'newton', 'alm', 'lowrank'\]"):
        cvxclust.solve(problem, method=method, device=on("torch"))


def test_rows_left_beside_the_spectral_set_refuse_a_device(on):
    n = 10
    X = cp.Variable((n, n), symmetric=True)
    constraints = [X >> 0, X >= 0, cp.trace(X) == 2, X[0, 1] + X[2, 3] <= 0.1]
    problem = cp.Problem(cp.Minimize(cp.trace(np.eye(n) @ X)), constraints)
    with pytest.raises(ValueError, match="runs on a device only where the rows are bounds"):
        cvxclust.solve(problem, method="generic", device=on("torch"))


def test_bad_device_and_dtype_are_refused():
    pytest.importorskip("torch")
    problem, _ = peng_wei(n=12)
    with pytest.raises(ValueError, match="device must be"):
        cvxclust.solve(problem, method="generic", device="no-such-device")
    with pytest.raises(TypeError, match="dtype must be 'float32' or 'float64'"):
        cvxclust.solve(problem, method="generic", device="cpu", dtype="float16")


def test_float32_without_a_device_is_refused():
    problem, _ = peng_wei(n=12)
    with pytest.raises(ValueError, match="dtype='float32' needs a device"):
        cvxclust.solve(problem, method="generic", dtype="float32")


def test_device_cpu_is_numpy():
    problem, _ = peng_wei(n=12)
    result = cvxclust.solve(problem, method="generic", device="cpu")
    assert isinstance(result.X, np.ndarray) and result.status == "optimal"


def test_a_point_of_a_refused_dtype_is_named():
    torch = pytest.importorskip("torch")
    problem, _ = peng_wei(n=6)
    relaxation = CvxpyRelaxation(problem)
    with pytest.raises(TypeError, match="X has dtype float16"):
        relaxation.objective(torch.ones((6, 6), dtype=torch.float16))
    with pytest.raises(TypeError, match="X has dtype int64"):
        relaxation.residuals(torch.ones((6, 6), dtype=torch.int64))


@pytest.mark.parametrize("name", FOREIGN)
def test_dual_newton_on_a_device(on, name):
    rng = np.random.default_rng(3)
    n = 12
    K = rng.standard_normal((n, n))
    K = K @ K.T / n
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - K)), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1])
    reference = cvxclust.solve(problem, method="dual-newton")
    result = cvxclust.solve(problem, method="dual-newton", device=on(name))
    assert result.status == "optimal" and library(namespace_of(result.X)) == name
    assert abs(result.objective - reference.objective) <= 1e-6 * abs(reference.objective)


def test_a_device_without_the_memory_is_refused_before_the_solve(on, monkeypatch):
    import cvxclust._array_api as core

    torch_device = on("torch")
    monkeypatch.setattr(core, "device_free_bytes", lambda device: 1000)
    problem, _ = peng_wei(n=12)
    with pytest.raises(ValueError, match=r"method='generic' on a problem of order 12 .* needs .* 1000 B"):
        cvxclust.solve(problem, device=torch_device)


@pytest.mark.parametrize("name", FOREIGN)
def test_a_warm_start_on_the_device_of_the_solve(on, name):
    problem, _ = peng_wei(n=12)
    first = cvxclust.solve(problem, method="generic", device=on(name), tol=1e-3)
    again = cvxclust.solve(problem, method="generic", device=on(name), warm_start=first)
    assert again.status == "optimal" and library(namespace_of(again.X)) == name
    with pytest.raises(TypeError, match=f"warm_start has an X of {name}, and this solve runs on numpy"):
        cvxclust.solve(problem, method="generic", warm_start=first)


def test_a_warm_start_on_another_device_is_refused(on):
    strict = pytest.importorskip("array_api_strict")
    problem, _ = peng_wei(n=12)
    first = cvxclust.solve(problem, method="generic", device=on("array_api_strict"), tol=1e-3)
    elsewhere = strict.asarray(to_numpy(first.X), device=strict.Device("device1"))
    moved = dataclasses.replace(first, X=elsewhere, extras={**first.extras, "box_multiplier": None})
    with pytest.raises(ValueError, match="warm_start has an X on device .*device1.*, and this solve runs on"):
        cvxclust.solve(problem, method="generic", device="strict-device", warm_start=moved)


def test_problem_solve_in_place_gives_cvxpy_a_numpy_value(on):
    problem, _ = peng_wei(n=12)
    value = problem.solve(method="cvxclust", device=on("torch"))
    assert isinstance(problem.variables()[0].value, np.ndarray)
    assert library(namespace_of(problem.cvxclust_result.X)) == "torch"
    assert value == pytest.approx(problem.cvxclust_result.objective)
