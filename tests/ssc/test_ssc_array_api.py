"""FrobeniusDS (6) and FrobeniusPSD (7) on arrays of other array API libraries (array-api-strict,
PyTorch on the CPU): the same solves as NumPy, X in K's library, K untouched, float32 with its own
rounding allowance, and the refusals of what runs on NumPy only or mixes libraries, devices and
dtypes."""

from __future__ import annotations

import array_api_compat
import numpy as np
import pytest
from array_namespaces import FOREIGN, as_library, to_numpy
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel

from cvxclust.ssc import FrobeniusDS, FrobeniusPSD

N = 30


def kernel(seed=0, gamma=0.5):
    X, _ = make_blobs(n_samples=N, centers=3, random_state=seed)
    return rbf_kernel(X, gamma=gamma)


def library_of(x) -> str:
    return array_api_compat.array_namespace(x).__name__.removeprefix("array_api_compat.")


@pytest.mark.parametrize("library", FOREIGN)
@pytest.mark.parametrize("relaxation, method", [(FrobeniusDS, "dual-newton"), (FrobeniusDS, "admm"),
                                                (FrobeniusDS, "successive-projections"),
                                                (FrobeniusPSD, "dual-newton"), (FrobeniusPSD, "admm")])
def test_a_foreign_k_is_solved_on_its_library_as_numpy_solves_it(library, relaxation, method):
    K = kernel()
    expected = relaxation(K).solve(method)
    K_foreign = as_library(K, library)
    before = to_numpy(K_foreign).copy()
    result = relaxation(K_foreign).solve(method)
    assert expected.status == result.status == "optimal"
    assert result.objective == pytest.approx(expected.objective, rel=1e-6)
    assert result.dual_bound == pytest.approx(expected.dual_bound, rel=1e-6)
    assert library_of(result.X) == library
    assert all(isinstance(value, float) for value in result.residuals.values())
    np.testing.assert_allclose(to_numpy(result.X), expected.X, atol=1e-6)
    np.testing.assert_array_equal(to_numpy(K_foreign), before)  # the caller's K is not modified


@pytest.mark.parametrize("library", FOREIGN)
def test_the_relaxation_measures_foreign_points_as_numpy_does(library):
    K = kernel(1)
    relaxation, foreign = FrobeniusPSD(K), FrobeniusPSD(as_library(K, library))
    F = relaxation.projector(partial=False)(K)  # p.s.d. with unit row sums, some entries negative
    assert F.min() < 0
    F_foreign = as_library(F, library)
    assert foreign.objective(F_foreign) == pytest.approx(relaxation.objective(F), rel=1e-12)
    expected = relaxation.residuals(F)
    assert foreign.residuals(F_foreign) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    assert foreign.objective_scale() == pytest.approx(relaxation.objective_scale(), rel=1e-12)
    np.testing.assert_allclose(to_numpy(foreign.projector()(as_library(K, library))), F, atol=1e-12)
    assert foreign.restorable(F_foreign)
    X = foreign.restore(F_foreign)
    assert library_of(X) == library
    np.testing.assert_allclose(to_numpy(X), relaxation.restore(F), atol=1e-14)
    Q = np.maximum(-F, 0.0)
    assert foreign.dual_value(as_library(Q, library)) == pytest.approx(relaxation.dual_value(Q), rel=1e-10)


def test_a_float32_torch_k_is_solved_in_float32_to_a_looser_tolerance():
    torch = pytest.importorskip("torch")
    K = kernel()
    expected = FrobeniusPSD(K).solve()
    result = FrobeniusPSD(torch.asarray(K, dtype=torch.float32)).solve(residual_tol=1e-5)
    assert result.status == "optimal"
    assert result.X.dtype == torch.float32
    assert result.objective == pytest.approx(expected.objective, rel=1e-4)


def test_the_rounding_allowance_of_restore_is_that_of_k_s_dtype():
    torch = pytest.importorskip("torch")
    K = kernel()
    F = FrobeniusPSD(K).projector(partial=False)(K)
    # row sums off by 1e-6: beyond float64 rounding (n 1e-9 here), within float32's (n 10 eps max|K|)
    E = np.zeros((N, N))
    E[0, 0] = 1e-6
    for dtype, restorable in ((torch.float64, False), (torch.float32, True)):
        relaxation = FrobeniusPSD(torch.asarray(K, dtype=dtype))
        assert relaxation.restorable(torch.asarray(F + E, dtype=dtype)) is restorable


@pytest.mark.parametrize("library", FOREIGN)
def test_numpy_only_methods_are_refused_on_a_foreign_k_naming_those_that_run(library):
    K = as_library(kernel(), library)
    for method in ("ld-ssc1", "ld-ssc2"):
        with pytest.raises(TypeError, match=f"method '{method}' runs on NumPy arrays only.*'dual-newton'"):
            FrobeniusPSD(K).solve(method)
    for method in ("reference", "generic"):
        with pytest.raises(ValueError, match="takes NumPy arrays.*'admm', 'dual-newton'"):
            FrobeniusPSD(K).solve(method)
    assert FrobeniusPSD(K).scalable_methods() == ["admm", "dual-newton"]
    assert FrobeniusDS(K).scalable_methods() == ["admm", "dual-newton", "successive-projections"]


def test_mixed_libraries_devices_and_dtypes_are_refused_naming_the_arguments():
    torch = pytest.importorskip("torch")
    strict = pytest.importorskip("array_api_strict")
    K = kernel()
    relaxation = FrobeniusPSD(torch.asarray(K))
    with pytest.raises(TypeError, match="X is an array of numpy and K one of torch"):
        relaxation.objective(K)
    with pytest.raises(TypeError, match="F is an array of torch and K one of numpy"):
        FrobeniusPSD(K).restore(torch.asarray(K))
    with pytest.raises(ValueError, match="X has dtype float32 and K float64"):
        relaxation.residuals(torch.asarray(K, dtype=torch.float32))
    with pytest.raises(TypeError, match="K has dtype float16"):
        FrobeniusPSD(torch.asarray(K, dtype=torch.float16))
    with pytest.raises(TypeError, match="K has dtype int64"):
        FrobeniusPSD(torch.ones((N, N), dtype=torch.int64))
    elsewhere = strict.asarray(K, device=strict.Device("device1"))
    with pytest.raises(ValueError, match="X is on device .*device1.* and K on"):
        FrobeniusPSD(strict.asarray(K)).objective(elsewhere)


@pytest.mark.parametrize("method, count", [("dual-newton", 7), ("admm", 8)])
def test_a_device_without_the_memory_is_refused_naming_the_need(monkeypatch, method, count):
    torch = pytest.importorskip("torch")
    import cvxclust._array_api as array_api

    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: 1000)  # a pretend device, 1 kB free
    with pytest.raises(ValueError, match=f"at order {N} \\({count} n x n arrays beside [KT]\\) needs"):
        FrobeniusPSD(torch.asarray(kernel())).solve(method)


@pytest.mark.parametrize("library", FOREIGN)
@pytest.mark.parametrize("relaxation, options", [("none", {}), ("ratio-cut", {}), ("normalized-cut", {}),
                                                 ("normalized-cut", {"iterate": True}), ("frobenius-psd", {})])
def test_normalize_keeps_a_foreign_k_in_its_library(library, relaxation, options):
    from cvxclust.ssc import normalize

    K = kernel(2)
    K_foreign = as_library(K, library)
    K_hat = normalize(K_foreign, relaxation, **options)
    assert library_of(K_hat) == library
    np.testing.assert_allclose(to_numpy(K_hat), normalize(K, relaxation, **options), atol=1e-10)
    np.testing.assert_array_equal(to_numpy(K_foreign), K)


@pytest.mark.parametrize("library", FOREIGN)
def test_the_gap_floor_is_scaled_by_the_unit_roundoff_of_the_solves_dtype(library):
    # a doubly stochastic p.s.d. K, perturbed: the optimum is about 1e-6 of the instance's scale,
    # where a float32 objective is rounding noise; float64's floor would leave it uncertified
    n = 20
    K = np.kron(np.eye(2), np.full((n // 2, n // 2), 2.0 / n))
    noise = 1e-4 * np.random.default_rng(0).standard_normal((n, n))
    K += (noise + noise.T) / 2
    relaxation = FrobeniusDS(as_library(K, library, dtype="float32"))
    result = relaxation.solve("dual-newton", tol=1e-2, max_iter=200)
    assert result.gap_floor == pytest.approx(np.sqrt(np.finfo(np.float32).eps) * relaxation.objective_scale())
    assert result.status == "optimal" and result.relative_gap <= 1e-2
    float64 = FrobeniusDS(K).solve("dual-newton", tol=1e-2)
    assert float64.gap_floor == pytest.approx(np.sqrt(np.finfo(np.float64).eps) * FrobeniusDS(K).objective_scale())
    assert result.objective == pytest.approx(float64.objective, abs=1e-6 * relaxation.objective_scale())
