"""Tests of the array API core (cvxclust._array_api): one namespace, device and dtype per solve,
the refusals naming the arguments, the device helpers, and the p.s.d. projection of a foreign
array."""

from __future__ import annotations

import types

import numpy as np
import pytest
from array_namespaces import FOREIGN, as_library, to_numpy

import cvxclust._array_api as array_api
from cvxclust._array_api import (
    Arrays,
    add_to_diagonal,
    check_arrays,
    check_device_memory,
    check_square,
    device_namespace,
    diagonal,
    eigh,
    is_foreign,
    is_numpy,
    library,
    namespace_of,
    unit_roundoff,
)
from cvxclust._checks import check_kernel, check_square_matrix
from cvxclust._memory import MemoryNeed
from cvxclust.linalg import PSDProjector


def symmetric(n: int = 6, seed: int = 0) -> np.ndarray:
    M = np.random.default_rng(seed).standard_normal((n, n))
    return M + M.T


# -- check_arrays --------------------------------------------------------------------------------------
@pytest.mark.parametrize("library_name", FOREIGN)
def test_check_arrays_gives_the_one_namespace_device_and_dtype(library_name):
    x, y = as_library(np.eye(3), library_name), as_library(np.ones(3), library_name)
    arrays = check_arrays(x=x, y=y, none=None, number=2.0, scalar=np.float64(1.0))
    assert arrays.xp is namespace_of(x) and not arrays.numpy and library(arrays.xp) == library_name
    assert arrays.device == array_api._compat().device(x)
    assert arrays.eps == pytest.approx(np.finfo(np.float64).eps)
    assert "Arrays(" in repr(arrays)
    moved = arrays.asarray(np.arange(3.0))
    assert namespace_of(moved) is arrays.xp and moved.dtype == x.dtype
    np.testing.assert_array_equal(to_numpy(moved), np.arange(3.0))


def test_check_arrays_takes_numpy_integers_and_float32_as_float64():
    arrays = check_arrays(a=np.arange(3), b=np.ones(3, dtype=np.float32))
    assert arrays.numpy and arrays.dtype == np.float64 and arrays.device == "cpu"
    assert check_arrays().numpy and check_arrays(a=None, b=3).dtype == np.float64


def test_check_arrays_refuses_two_libraries_naming_both():
    torch = pytest.importorskip("torch")
    strict = pytest.importorskip("array_api_strict")
    with pytest.raises(TypeError, match="cost is an array of array_api_strict and bounds one of torch"):
        check_arrays(bounds=torch.zeros(2, dtype=torch.float64), cost=strict.zeros(2))
    with pytest.raises(TypeError, match="cost is an array of numpy and bounds one of torch"):
        check_arrays(bounds=torch.zeros(2, dtype=torch.float64), cost=np.zeros(2))


def test_check_arrays_refuses_two_devices_naming_both():
    strict = pytest.importorskip("array_api_strict")
    here, there = strict.zeros(2), strict.zeros(2, device=strict.Device("device1"))
    with pytest.raises(ValueError, match="cost is on device .*device1.* and bounds on .*: move them to one device"):
        check_arrays(bounds=here, cost=there)


@pytest.mark.parametrize("library_name", FOREIGN)
def test_check_arrays_refuses_two_floating_dtypes(library_name):
    x32, x64 = as_library(np.ones(2), library_name, "float32"), as_library(np.ones(2), library_name)
    with pytest.raises(ValueError, match="cost has dtype float32 and bounds float64: pass one floating dtype"):
        check_arrays(bounds=x64, cost=x32)
    assert check_arrays(cost=x32).eps == pytest.approx(np.finfo(np.float32).eps)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_check_arrays_refuses_half_precision(dtype):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=f"K has dtype {dtype}: the solvers need float32 or float64"):
        check_arrays(K=torch.zeros(2, dtype=getattr(torch, dtype)))


@pytest.mark.parametrize("dtype", ["int64", "bool"])
def test_check_arrays_refuses_a_foreign_integer_or_boolean_array(dtype):
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=f"K has dtype {dtype}: arrays of torch must be float32 or float64"):
        check_arrays(K=torch.zeros(2, dtype=getattr(torch, dtype)))


def test_check_arrays_refuses_what_is_not_an_array():
    with pytest.raises(TypeError, match="K must be an array of NumPy or of a library of the Python array API"):
        check_arrays(K=[[1.0, 2.0]])


def test_check_arrays_refuses_a_library_without_linalg_eigh(monkeypatch):
    torch = pytest.importorskip("torch")
    real = namespace_of(torch.zeros(1))
    fake = types.ModuleType("fakelib")  # a namespace whose linalg extension lacks eigh
    fake.isdtype, fake.linalg = real.isdtype, types.SimpleNamespace()
    monkeypatch.setattr(array_api, "namespace_of", lambda x: fake)
    with pytest.raises(TypeError, match="K is an array of fakelib, which has no linalg.eigh"):
        check_arrays(K=torch.zeros(2, dtype=torch.float64))


@pytest.mark.parametrize("value", [np.array([1.0 + 1.0j]), np.array(["a"])])
def test_check_arrays_refuses_complex_and_string_numpy_arrays(value):
    with pytest.raises(TypeError, match="K has dtype"):
        check_arrays(K=value)


# -- device_namespace ----------------------------------------------------------------------------------
@pytest.mark.parametrize("device", [None, "cpu"])
def test_device_namespace_cpu_is_numpy(device):
    arrays = device_namespace(device)
    assert arrays.numpy and arrays.dtype == np.float64 and arrays.device == "cpu"
    assert device_namespace(device, "float32").dtype == (np.float64 if device is None else np.float32)


def test_device_namespace_names_a_bad_device_or_dtype():
    pytest.importorskip("torch")
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda', 'cuda:<index>' or a torch.device, got 'tpu9'"):
        device_namespace("tpu9")
    with pytest.raises(TypeError, match="dtype must be 'float32' or 'float64', got 'float16'"):
        device_namespace("cpu", "float16")


def test_device_namespace_cuda_without_cuda_is_refused():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is available here")
    with pytest.raises(ValueError, match="device='cuda': PyTorch sees no CUDA device here"):
        device_namespace("cuda")


def test_device_namespace_a_torch_cpu_device_is_torch():
    torch = pytest.importorskip("torch")
    arrays = device_namespace(torch.device("cpu"), "float32")
    assert library(arrays.xp) == "torch" and arrays.dtype == torch.float32
    assert arrays.asarray(np.ones(2)).dtype == torch.float32


def test_device_namespace_takes_numpy_scalar_types():
    assert device_namespace("cpu", np.float32).dtype == np.float32


# -- diagonal helpers, conversions ---------------------------------------------------------------------
def test_add_to_diagonal_is_in_place_in_numpy():
    A = np.eye(3)
    out = add_to_diagonal(A, np.arange(3.0))
    assert out is A
    np.testing.assert_array_equal(A, np.diag([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(diagonal(A), [1.0, 2.0, 3.0])


@pytest.mark.parametrize("value", [2.0, np.arange(3.0)], ids=["number", "vector"])
@pytest.mark.parametrize("library_name", FOREIGN)
def test_add_to_diagonal_and_diagonal_on_each_library(library_name, value):
    A = as_library(np.ones((3, 3)), library_name)
    added = value if isinstance(value, float) else as_library(value, library_name)
    out = add_to_diagonal(A, added)
    expected = np.ones((3, 3)) + np.diag(np.broadcast_to(value, (3,)))
    np.testing.assert_array_equal(to_numpy(out), expected)
    np.testing.assert_array_equal(to_numpy(diagonal(out)), np.diag(expected))
    if library_name == "torch":
        assert out is A  # in place, as in NumPy
    else:  # array-api-strict has no in-place diagonal: a new array, the argument unchanged
        assert out is not A
        np.testing.assert_array_equal(to_numpy(A), np.ones((3, 3)))


@pytest.mark.parametrize("library_name", FOREIGN)
def test_to_numpy_and_eigh_on_each_library(library_name):
    M = symmetric()
    x = as_library(M, library_name)
    assert is_foreign(x) and not is_foreign(M) and not is_foreign([1.0])
    assert isinstance(to_numpy(x), np.ndarray)
    np.testing.assert_array_equal(to_numpy(x), M)
    w, V = eigh(x)
    np.testing.assert_allclose(to_numpy(w), np.linalg.eigvalsh(M), atol=1e-12)
    np.testing.assert_allclose(to_numpy(V) * to_numpy(w)[None, :] @ to_numpy(V).T, M, atol=1e-12)
    assert to_numpy(None) is None and to_numpy(2.0) == 2.0


def test_to_numpy_from_another_device():
    strict = pytest.importorskip("array_api_strict")
    x = strict.asarray(np.eye(2), device=strict.Device("device1"))
    np.testing.assert_array_equal(to_numpy(x), np.eye(2))


def test_unit_roundoff_and_is_numpy():
    xp = namespace_of(np.zeros(1))
    assert is_numpy(xp) and is_numpy(np)
    assert unit_roundoff(xp, np.float32) == np.finfo(np.float32).eps
    assert Arrays(xp, "cpu", np.dtype(np.float64)).eps == np.finfo(float).eps


# -- device memory ---------------------------------------------------------------------------------------
def test_check_device_memory_names_the_need(monkeypatch):
    arrays = check_arrays()
    check_device_memory(1e30, "the solve", arrays, "use less")  # the host: the device check does not apply
    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: 1024)
    with pytest.raises(MemoryNeed, match="the solve needs 2 KiB on cpu and 1 KiB is free there: use less"):
        check_device_memory(2048, "the solve", arrays, "use less")
    check_device_memory(512, "the solve", arrays, "use less")


# -- check_square -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("library_name", FOREIGN)
def test_check_square_symmetrises_on_the_library_without_modifying(library_name):
    M = symmetric()
    M[0, 1] += 1e-12
    x = as_library(M, library_name)
    out = check_square(x, "K")
    assert namespace_of(out) is namespace_of(x)
    np.testing.assert_array_equal(to_numpy(out), (M + M.T) / 2)
    np.testing.assert_array_equal(to_numpy(x), M)
    assert namespace_of(check_square_matrix(x, "K")) is namespace_of(x)


@pytest.mark.parametrize("library_name", FOREIGN)
def test_check_square_takes_float32_rounding_as_symmetric(library_name):
    M = symmetric().astype(np.float32)
    M[0, 1] = np.nextafter(M[0, 1], np.float32(np.inf))  # one unit in the last place off
    assert to_numpy(check_square(as_library(M, library_name, dtype="float32"), "K")).dtype == np.float32
    M = M.astype(np.float64)  # the same difference is no rounding of float64
    with pytest.raises(ValueError, match="K must be symmetric"):
        check_square(as_library(M, library_name), "K")


@pytest.mark.parametrize("library_name", FOREIGN)
@pytest.mark.parametrize("value, kwargs, message", [
    (np.ones((2, 3)), {}, r"K must be a square matrix, got shape \(2, 3\)"),
    (np.ones((1, 1)), {"min_size": 2}, r"K must be at least 2 x 2, got \(1, 1\)"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), {}, "K contains NaN or infinite entries"),
    (np.array([[1.0, 2.0], [0.0, 1.0]]), {}, "K must be symmetric"),
    (np.array([[1.0, -2.0], [-2.0, 1.0]]), {"nonnegative": True}, "K must have nonnegative entries"),
])
def test_check_square_refusals_name_the_argument(library_name, value, kwargs, message):
    with pytest.raises(ValueError, match=message):
        check_square(as_library(value, library_name), "K", **kwargs)


@pytest.mark.parametrize("library_name", FOREIGN)
def test_check_kernel_keeps_a_foreign_kernel_on_its_device(library_name):
    x = as_library(symmetric(), library_name)
    assert namespace_of(check_kernel(x, "K")) is namespace_of(x)


# -- the p.s.d. projection -------------------------------------------------------------------------------
@pytest.mark.parametrize("n_negative", [1, 5], ids=["few-negative", "many-negative"])
@pytest.mark.parametrize("library_name", FOREIGN)
def test_psd_projector_on_a_foreign_array_is_numpy_s(library_name, n_negative):
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.standard_normal((6, 6)))[0]
    w = np.concatenate([-np.arange(1.0, n_negative + 1), np.arange(1.0, 7 - n_negative)])
    M = (V * w) @ V.T
    M = (M + M.T) / 2
    x = as_library(M, library_name)
    projector = PSDProjector(6)
    out = projector(x)
    assert namespace_of(out) is namespace_of(x)
    np.testing.assert_allclose(to_numpy(out), PSDProjector(6)(M), atol=1e-12)
    assert projector.n_positive == 6 - n_negative and projector.full_calls == 1
    np.testing.assert_array_equal(to_numpy(x), M)
    with pytest.raises(ValueError, match=r"A must be 6 x 6 for this PSDProjector\(n=6\)"):
        projector(as_library(np.eye(3), library_name))


@pytest.mark.parametrize("library_name", ["numpy", *FOREIGN])
def test_frobenius_neither_underflows_nor_overflows(library_name):
    from cvxclust._array_ops import frobenius

    for value in (1e-160, 1e160, 1.0):
        M = np.full((3, 3), value)
        A = M if library_name == "numpy" else as_library(M, library_name)
        with np.errstate(over="ignore"):  # NumPy's sum of squares overflows before the scaled one
            assert frobenius(A) == pytest.approx(3 * value, rel=1e-14)
    assert frobenius(np.zeros((0, 0))) == 0.0 and frobenius(np.array([[np.inf, 1.0]])) == np.inf
