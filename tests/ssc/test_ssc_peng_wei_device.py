"""The Peng-Wei SDP with K given as a PyTorch tensor: solved on K's device through
cvxclust.solve, judged there, refused where no device applies."""

import numpy as np
import pytest
from array_namespaces import as_library, to_numpy

from cvxclust.problem_classes import blobs_kernel
from cvxclust.ssc import PengWei

torch = pytest.importorskip("torch")


@pytest.fixture(scope="module")
def kernel():
    return blobs_kernel(24, 3, random_state=0)


def test_a_torch_kernel_solves_on_its_device_as_numpy_does(kernel):
    reference = PengWei(kernel, 3).solve("generic", tol=1e-6, residual_tol=1e-6)
    K = as_library(kernel, "torch")
    result = PengWei(K, 3).solve(tol=1e-6, residual_tol=1e-6)
    assert result.status == reference.status == "optimal"
    assert isinstance(result.X, torch.Tensor) and result.X.device == K.device
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    np.testing.assert_allclose(to_numpy(result.X), reference.X, atol=1e-4)
    np.testing.assert_array_equal(to_numpy(K), kernel)  # the caller's K is not modified


def test_objective_and_residuals_of_a_device_point_are_numpy_s(kernel):
    X = np.full((24, 24), 1 / 24) + 0.01 * np.eye(24)
    on_host, on_device = PengWei(kernel, 3), PengWei(as_library(kernel, "torch"), 3)
    assert on_device.objective(as_library(X, "torch")) == pytest.approx(on_host.objective(X), rel=1e-12)
    expected = on_host.residuals(X)
    got = on_device.residuals(as_library(X, "torch"))
    assert got.keys() == expected.keys()
    for key in expected:
        assert got[key] == pytest.approx(expected[key], rel=1e-9, abs=1e-15)
    assert on_device.objective_scale() == pytest.approx(on_host.objective_scale(), rel=1e-12)


def test_refusals_name_the_argument_or_the_method(kernel):
    relaxation = PengWei(as_library(kernel, "torch"), 3)
    with pytest.raises(TypeError, match="X is an array of numpy and K one of torch"):
        relaxation.objective(np.eye(24))
    with pytest.raises(ValueError, match="method='reference' reads K on the host"):
        relaxation.solve("reference")
    with pytest.raises(ValueError, match=r"method='lowrank' runs on device=.* only where a fixed diagonal is"):
        relaxation.solve("lowrank")
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="PengWei K of array_api_strict"):
        PengWei(strict.asarray(kernel), 3).solve()


def test_a_float32_kernel_has_float32_s_gap_floor(kernel):
    # cvxclust.solve takes the dtype from K: the gap floor is sqrt(eps) of float32 times the scale
    reference = PengWei(as_library(kernel, "torch"), 3).solve(tol=1e-2, max_iter=50)
    result = PengWei(as_library(kernel, "torch", dtype="float32"), 3).solve(tol=1e-2, max_iter=50)
    assert result.X.dtype == torch.float32
    ratio = np.sqrt(np.finfo(np.float32).eps / np.finfo(np.float64).eps)
    assert result.gap_floor == pytest.approx(ratio * reference.gap_floor, rel=1e-6)
