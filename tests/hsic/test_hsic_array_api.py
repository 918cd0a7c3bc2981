"""The CLUHSIC SDP (5.23) and its ADMM on arrays of other array API libraries (array-api-strict,
PyTorch on the CPU): the same solve as NumPy, Q back in the library, refusals naming the argument
or the method."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from array_namespaces import FOREIGN, as_library, to_numpy
from sklearn.exceptions import ConvergenceWarning

import cvxclust._array_api as array_api
from cvxclust._array_api import check_arrays, namespace_of
from cvxclust._memory import MemoryNeed
from cvxclust.hsic import CLUHSICSDP, certify_partition, greedy, lowrank, refine, spectral
from cvxclust.hsic._operator import AffineOperator, DeviceAffineOperator
from cvxclust.hsic._sdp import certified_lambda_max
from cvxclust.kernels import center, rbf


def instance(m: int, c: int, seed: int = 0):
    """A centred rbf kernel of m points around c centres and the chain output kernel."""
    rng = np.random.default_rng(seed)
    X = 3.0 * rng.standard_normal((c, 2))[np.arange(m) % c] + rng.standard_normal((m, 2))
    return center(rbf(X)), 2.0 * np.eye(c) + np.eye(c, k=1) + np.eye(c, k=-1)


KNOWN = np.array([0, 1, 2, -1, -1, 1, -1, -1, -1, -1])
#: (m, c, known): the chain's symmetry splits the projection; known labels fix clusters and rows
CASES = [(8, 2, None), (10, 3, KNOWN)]


@pytest.fixture(scope="module")
def numpy_results():
    return {m: CLUHSICSDP(*instance(m, c), known=known).solve("admm") for m, c, known in CASES}


@pytest.mark.parametrize("library", FOREIGN)
@pytest.mark.parametrize("m, c, known", CASES, ids=["chain", "known-labels"])
def test_admm_on_a_foreign_kernel_is_the_numpy_solve(library, m, c, known, numpy_results):
    K, A = instance(m, c)
    K_lib = as_library(K, library)
    before = to_numpy(K_lib).copy()
    labels = None if known is None else as_library(known, library, "int64")  # small, taken to the host
    result = CLUHSICSDP(K_lib, A, known=labels).solve("admm")
    reference = numpy_results[m]
    assert result.status == reference.status == "optimal"
    # the same iteration up to rounding: the same iterations, objective, bound and point
    assert result.iterations == reference.iterations
    assert result.objective == pytest.approx(reference.objective, rel=1e-9)
    assert result.dual_bound == pytest.approx(reference.dual_bound, rel=1e-9)
    assert result.dual_bound >= result.objective
    assert namespace_of(result.X) is namespace_of(K_lib)
    assert tuple(result.X.shape) == (m * c, m * c)
    np.testing.assert_allclose(to_numpy(result.X), reference.X, atol=1e-9)
    assert set(result.residuals) == set(reference.residuals)
    assert all(isinstance(v, float) for v in result.residuals.values())
    np.testing.assert_array_equal(to_numpy(K_lib), before)  # the caller's array is not modified


@pytest.mark.parametrize("library", FOREIGN)
def test_objective_residuals_and_embed_on_the_device_are_numpy_s(library):
    m, c = 10, 3
    K, A = instance(m, c)
    host, device = CLUHSICSDP(K, A, known=KNOWN), CLUHSICSDP(as_library(K, library), A, known=KNOWN)
    rng = np.random.default_rng(1)
    n = host.operator.n
    X = rng.standard_normal((n, n))
    X = X + X.T
    Q = host.embed(X)
    Q_lib = device.embed(as_library(X, library))
    assert namespace_of(Q_lib) is namespace_of(device.K)
    np.testing.assert_array_equal(to_numpy(Q_lib), Q)
    assert device.objective(Q_lib) == pytest.approx(host.objective(Q), rel=1e-12)
    mine, theirs = device.residuals(Q_lib), host.residuals(Q)
    assert set(mine) == set(theirs) and "known" in mine
    for key in theirs:
        assert mine[key] == pytest.approx(theirs[key], rel=1e-10, abs=1e-14)
    assert device.objective_scale() == pytest.approx(host.objective_scale(), rel=1e-12)
    # a NumPy Q is taken onto the device: the same figures
    assert device.objective(Q) == pytest.approx(host.objective(Q), rel=1e-12)


@pytest.mark.parametrize("library", FOREIGN)
def test_device_affine_operator_is_the_index_operator(library):
    m, c = 7, 3
    free = np.ones((c, m), dtype=bool)
    free[[0, 2], 1] = False
    free[[1, 2], 4] = False
    op = AffineOperator(m, c, free, zero_cross=True)
    rng = np.random.default_rng(0)
    W = rng.standard_normal((op.n, op.n))
    W = W + W.T
    y = rng.standard_normal(op.b.size)
    W_lib = as_library(W, library)
    device = DeviceAffineOperator(op, check_arrays(W=W_lib))
    np.testing.assert_allclose(to_numpy(device.apply(W_lib)), op.apply(W), atol=1e-12)
    np.testing.assert_allclose(to_numpy(device.plus_adjoint(W_lib, as_library(y, library), -2.0)),
                               op.plus_adjoint(W.copy(), y, -2.0), atol=1e-12)
    np.testing.assert_allclose(to_numpy(device.project(W_lib)), op.project(W), atol=1e-12)
    np.testing.assert_allclose(to_numpy(device.least_squares(W_lib)), op.least_squares(W), atol=1e-12)
    with pytest.raises(ValueError, match="zero_cross=True"):
        DeviceAffineOperator(AffineOperator(m, c, free), check_arrays(W=W_lib))


def test_float32_tensor_solves_with_a_looser_certificate():
    torch = pytest.importorskip("torch")
    K, A = instance(8, 2)
    result = CLUHSICSDP(torch.asarray(K, dtype=torch.float32), A).solve("admm", tol=1e-3, residual_tol=1e-4)
    assert result.X.dtype == torch.float32
    assert result.status == "optimal"
    reference = CLUHSICSDP(K, A).solve("admm", tol=1e-8, residual_tol=1e-8)
    assert result.objective == pytest.approx(reference.objective, rel=2e-3)
    assert result.dual_bound >= reference.objective


def test_certified_lambda_max_bounds_the_exact_eigenvalue_in_float32():
    """float32's eigensolver misses the largest eigenvalue of this matrix from below; the
    allowance ``n eps ||M||`` brings the value above it (computed in float64 from the same entries)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    M = rng.standard_normal((40, 40)).astype(np.float32)
    M = (M + M.T) / 2
    exact = float(np.linalg.eigvalsh(M.astype(np.float64))[-1])
    M_lib = torch.asarray(M)
    assert float(torch.linalg.eigvalsh(M_lib)[-1]) < exact  # the rounding the allowance covers
    eps = float(np.finfo(np.float32).eps)
    bound = certified_lambda_max(M_lib, namespace_of(M_lib), eps)
    assert exact < bound <= exact + 40 * eps * float(np.abs(np.linalg.eigvalsh(M.astype(np.float64))).max()) * 1.01


def test_dual_value_allowance_keeps_float64_bounds_tight():
    K, A = instance(8, 2)
    relaxation = CLUHSICSDP(K, A)
    result = relaxation.solve("admm")
    assert result.dual_bound - result.objective <= 1e-4 * abs(result.objective)
    eps = np.finfo(float).eps
    M = np.diag(np.arange(1.0, 5.0))
    assert certified_lambda_max(M, np, eps) == pytest.approx(4.0 + 4 * eps * np.linalg.norm(M), rel=1e-15)


# -- refusals ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["reference", "generic"])
def test_methods_on_numpy_only_are_refused_on_a_foreign_kernel(method):
    K, A = instance(8, 2)
    relaxation = CLUHSICSDP(as_library(K, "array_api_strict"), A)
    with pytest.raises(TypeError, match=f"method='{method}'.*array_api_strict.*method='admm'"):
        relaxation.solve(method)
    with pytest.raises(TypeError, match="cvxpy statement of \\(5.23\\) needs K as a NumPy array"):
        relaxation.problem()


@pytest.mark.parametrize("call, method", [
    (lambda K, A: greedy(K, A), "greedy"),
    (lambda K, A: spectral(K, A), "spectral"),
    (lambda K, A: refine(K, A, np.arange(8) % 2), "refine"),
    (lambda K, A: lowrank(K, A), "lowrank"),
])
def test_scipy_only_methods_refuse_a_foreign_kernel_naming_the_method(call, method):
    K, A = instance(8, 2)
    with pytest.raises(TypeError, match=f"^{method} runs on NumPy arrays only .* K is an array of array_api_strict"):
        call(as_library(K, "array_api_strict"), A)


def test_mixed_inputs_are_refused_naming_the_arguments():
    torch = pytest.importorskip("torch")
    strict = pytest.importorskip("array_api_strict")
    K, A = instance(8, 2)
    with pytest.raises(TypeError, match="A is an array of array_api_strict and K one of torch"):
        CLUHSICSDP(torch.asarray(K), strict.asarray(A))
    with pytest.raises(TypeError, match="A is an array of torch and K one of numpy"):
        CLUHSICSDP(K, torch.asarray(A))
    with pytest.raises(ValueError, match="A has dtype float64 and K float32"):
        CLUHSICSDP(torch.asarray(K, dtype=torch.float32), torch.asarray(A))
    with pytest.raises(ValueError, match="A is on device .*device1.* and K on"):
        CLUHSICSDP(strict.asarray(K), strict.asarray(A, device=strict.Device("device1")))
    with pytest.raises(TypeError, match="K has dtype float16"):
        CLUHSICSDP(torch.asarray(K, dtype=torch.float16), A)
    with pytest.raises(TypeError, match="K has dtype int64: arrays of torch must be float32 or float64"):
        CLUHSICSDP(torch.asarray(np.eye(8, dtype=np.int64)), A)
    relaxation = CLUHSICSDP(torch.asarray(K), A)
    with pytest.raises(TypeError, match="Q is an array of array_api_strict and K one of torch"):
        relaxation.residuals(strict.asarray(np.zeros((16, 16))))
    with pytest.raises(ValueError, match=r"Q must have shape \(16, 16\)"):
        relaxation.objective(torch.zeros((4, 4), dtype=torch.float64))


def test_a_foreign_kernel_is_checked_on_its_device():
    K, _ = instance(8, 2)
    K[0, 1] += 1e-3
    with pytest.raises(ValueError, match="K must be symmetric"):
        CLUHSICSDP(as_library(K, "array_api_strict"), np.eye(2))
    K[0, 1] = np.nan
    with pytest.raises(ValueError, match="K contains NaN"):
        CLUHSICSDP(as_library(K, "array_api_strict"), np.eye(2))


def test_device_memory_need_is_stated(monkeypatch):
    K, A = instance(8, 2)
    relaxation = CLUHSICSDP(as_library(K, "array_api_strict"), A)
    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: 1000)
    with pytest.raises(MemoryNeed, match=r"CLUHSIC SDP ADMM of order 16 \(anderson=10\) needs .* and 1000 B is free"):
        relaxation.solve("admm")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        with pytest.raises(MemoryNeed, match="lower anderson"):
            relaxation.solve("admm", anderson=0, max_iter=2)
