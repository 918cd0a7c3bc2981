"""``cvxclust.solve(..., method="lowrank", device=...)``: the low-rank method's path of a fixed
diagonal alone (max-cut) on another array API library (PyTorch on the CPU, and array-api-strict
through the namespace that ``device=`` resolves to), against the same solve on NumPy; its Lanczos
against ``eigh``; the refusals of the other classes and of a sparse cost off PyTorch."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from array_namespaces import FOREIGN, as_library, to_numpy
from test_generic_array_api import on  # noqa: F401 -- a fixture

import cvxclust
import cvxclust._array_api as array_api
import cvxclust.generic.entry as entry
import cvxclust.generic.lowrank_device as lowrank_device
from cvxclust import problem_classes as pc
from cvxclust._array_api import check_arrays, library, namespace_of
from cvxclust.generic.cost import Cost


def max_cut(n=40, seed=1, sparse=False):
    """The max-cut SDP of a random weighted graph, its Laplacian dense or ``scipy.sparse``."""
    rng = np.random.default_rng(seed)
    W = np.triu((rng.random((n, n)) < 0.3) * rng.random((n, n)), 1)
    W = W + W.T
    laplacian = np.diag(W.sum(1)) - W
    cost = sp.csr_matrix(laplacian) if sparse else laplacian
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Maximize(cp.trace(cost @ X) / 4), [X >> 0, cp.diag(X) == 1]), laplacian


def lanczos_everywhere(monkeypatch):
    """The certificate by Lanczos at every order (not S written out up to DENSE_ORDER)."""
    monkeypatch.setattr(lowrank_device, "DENSE_ORDER", 0)


CASES = [pytest.param("array_api_strict", False, id="array-api-strict"),
         pytest.param("torch", False, id="torch"), pytest.param("torch", True, id="torch-sparse")]


@pytest.mark.parametrize(("name", "sparse"), CASES)
@pytest.mark.parametrize("lanczos", [False, True], ids=["eigh", "lanczos"])
def test_a_solve_on_a_device_agrees_with_numpy(on, monkeypatch, name, sparse, lanczos):
    problem, laplacian = max_cut(n=60 if lanczos else 40, sparse=sparse)
    kept = laplacian.copy()
    reference = cvxclust.solve(problem, method="lowrank")
    if lanczos:
        lanczos_everywhere(monkeypatch)
    result = cvxclust.solve(problem, method="lowrank", device=on(name))
    assert reference.status == "optimal" and result.status == "optimal", result.status
    assert library(namespace_of(result.X)) == name and library(namespace_of(result.extras["factor"])) == name
    scale = abs(reference.objective)
    assert abs(result.objective - reference.objective) <= 1e-6 * scale
    assert abs(result.dual_bound - reference.dual_bound) <= 1e-6 * scale
    assert result.relative_gap <= 1e-6 and result.max_residual <= 1e-6
    assert result.dual_bound >= result.objective  # a maximum: the bound is above the point's value
    V = to_numpy(result.extras["factor"])
    assert np.allclose(to_numpy(result.X), V @ V.T, atol=1e-12)
    assert np.abs(np.einsum("ij,ij->i", V, V) - 1.0).max() <= 1e-12
    assert result.extras["eigsh"] >= 1 and result.extras["lanczos_matvecs"] > 0
    assert np.array_equal(laplacian, kept)  # the caller's data are untouched


@pytest.mark.parametrize("name", FOREIGN)
def test_the_rank_grows_on_a_device_as_on_numpy(on, name):
    problem, _ = max_cut(n=40)
    reference = cvxclust.solve(problem, method="lowrank", rank=2)
    result = cvxclust.solve(problem, method="lowrank", rank=2, device=on(name))
    assert reference.extras["rank"] > 2 and result.extras["rank"] == reference.extras["rank"]
    assert result.status == reference.status == "optimal"
    assert abs(result.objective - reference.objective) <= 1e-6 * abs(reference.objective)
    assert tuple(result.extras["factor"].shape) == (40, result.extras["rank"])


@pytest.mark.parametrize(("name", "sparse"), CASES)
def test_the_device_cost_is_the_host_cost(name, sparse):
    n = 12
    rng = np.random.default_rng(2)
    D = rng.normal(size=(n, n))
    U = rng.normal(size=(n, 2))
    parts = {"sparse": sp.random(n, n, density=0.3, random_state=3)} if sparse else {"dense": D + D.T}
    cost = Cost(n, ones=0.5, lowrank=(U, np.array([1.0, -2.0])), **parts)
    arrays = check_arrays(V=as_library(np.zeros((1, 1)), name))
    V = rng.normal(size=(n, 3))
    product = lowrank_device.DeviceCost(cost, arrays).matmul(arrays.asarray(V))
    assert library(namespace_of(product)) == name
    assert np.allclose(to_numpy(product), cost.matmul(V), rtol=1e-12, atol=1e-12)
    assert np.allclose(to_numpy(lowrank_device.DeviceCost(Cost(n), arrays).matmul(arrays.asarray(V))), 0.0)


@pytest.mark.parametrize("name", FOREIGN)
@pytest.mark.parametrize(("steps", "keep"), [(100, 30), (12, 4), (12, 1)], ids=["one-basis", "thick", "one-kept"])
def test_device_lanczos_brackets_the_smallest_eigenvalue(name, steps, keep):
    n = 50
    rng = np.random.default_rng(0)
    Q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    spectrum = np.linspace(-1.0, 4.0, n)
    A = (Q * spectrum) @ Q.T
    A = (A + A.T) / 2
    arrays = check_arrays(A=as_library(A, name))
    xp, M = arrays.xp, arrays.asarray(A)
    theta, u, residual, products = lowrank_device.device_lanczos(
        lambda X: M @ X, arrays.asarray(rng.normal(size=n)), xp, residual=1e-8, fraction=0.0, steps=steps, keep=keep,
        restarts=200)
    assert library(namespace_of(u)) == name
    u = to_numpy(u)
    assert abs(np.linalg.norm(u) - 1.0) <= 1e-12
    # the residual returned is the explicit one, and the eigenvalue lies within it of theta
    assert residual == pytest.approx(np.linalg.norm(A @ u - theta * u), rel=1e-6, abs=1e-14)
    assert theta - residual <= spectrum[0] + 1e-12 and theta >= spectrum[0] - 1e-12
    assert residual <= 1e-8


def test_float32_on_torch(on):
    # the rounding allowance scales with float32's unit roundoff: certified to 1e-3 here
    problem, _ = max_cut(n=30)
    reference = cvxclust.solve(problem, method="lowrank")
    result = cvxclust.solve(problem, method="lowrank", device=on("torch"), dtype="float32", tol=1e-3,
                            residual_tol=1e-5)
    assert str(result.X.dtype) == "torch.float32" and str(result.extras["factor"].dtype) == "torch.float32"
    assert result.status == "optimal"
    assert abs(result.objective - reference.objective) <= 1e-3 * abs(reference.objective)
    assert result.dual_bound >= reference.objective  # a maximum: still a valid bound in float32


def bisection(n=16):
    _, laplacian = max_cut(n)
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Minimize(cp.trace(laplacian @ X)), [X >> 0, cp.diag(X) == 1, cp.sum(X) == 0])


@pytest.mark.parametrize("name", FOREIGN)
@pytest.mark.parametrize(("make", "part"), [
    (bisection, "1 constraint rows"),
    (lambda: pc.kmeans_sdp(np.eye(6) + 0.1, 2), "no fixed diagonal and 7 constraint rows and X >= 0"),
    (lambda: pc.correlation_clustering(pc.signed_graph(8, 2, flip=0.0, random_state=0)), "X >= 0")],
    ids=["rows", "k-means", "correlation-clustering"])
def test_other_classes_are_refused_on_a_device(on, name, make, part):
    problem = make()
    assert cvxclust.solve(problem, method="lowrank").status in ("optimal", "stalled", "max_iter")  # NumPy takes it
    with pytest.raises(ValueError, match=rf"method='lowrank' runs on device=.* only where a fixed diagonal is the "
                                         rf"only constraint .* this problem has {part}.*'generic'"):
        cvxclust.solve(problem, method="lowrank", device=on(name))


def test_a_sparse_cost_off_torch_is_refused(on):
    problem, _ = max_cut(n=20, sparse=True)
    with pytest.raises(TypeError, match=r"device=.*array_api_strict.*scipy.sparse.*only PyTorch"):
        cvxclust.solve(problem, method="lowrank", device=on("array_api_strict"))


@pytest.mark.parametrize(("dtype", "error"), [("float16", TypeError), ("int64", TypeError)])
def test_bad_dtypes_are_refused(on, dtype, error):
    problem, _ = max_cut(n=12)
    with pytest.raises(error, match=f"dtype must be 'float32' or 'float64', got '{dtype}'"):
        cvxclust.solve(problem, method="lowrank", device=on("torch"), dtype=dtype)


def test_a_bad_device_is_refused(on):
    on("torch")  # skipped without PyTorch, which resolves device=
    problem, _ = max_cut(n=12)
    with pytest.raises(ValueError, match="device must be 'cpu', 'cuda', 'cuda:<index>' or a torch.device, got 'gpu0'"):
        cvxclust.solve(problem, method="lowrank", device="gpu0")


def test_device_memory_counts_the_factor(on, monkeypatch):
    problem, _ = max_cut(n=40)
    rank, size = 8, 8
    need = (16 * rank + lowrank_device.LANCZOS_STEPS + 4) * 40 * size + 40 * 40 * size
    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: need)
    assert cvxclust.solve(problem, method="lowrank", device=on("torch"), rank=rank, form_X=False).X is None
    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: need - 1)
    with pytest.raises(ValueError, match=r"method='lowrank' at rank 8 on a problem of order 40 needs .* give a "
                                         r"smaller rank"):
        cvxclust.solve(problem, method="lowrank", device=on("torch"), rank=rank)


def test_auto_on_a_device_picks_lowrank_where_the_host_would(on, monkeypatch):
    monkeypatch.setattr(entry, "LOWRANK_MIN_N", 20)
    problem, _ = max_cut(n=30)
    assert cvxclust.solve(problem).method == "lowrank"
    result = cvxclust.solve(problem, device=on("torch"))
    assert result.method == "lowrank" and "device" in result.extras["auto"] and result.status == "optimal"
    torch_arrays = check_arrays(X=as_library(np.eye(2), "torch"))
    # a class the host's low-rank method takes but the device's does not: a dense method there
    monkeypatch.setattr(entry, "LOWRANK_NONNEGATIVE_MIN_N", 10)
    kmeans = entry.CvxpyRelaxation(pc.kmeans_sdp(pc.blobs_kernel(24, 2, random_state=0), 2)).standard_form()
    assert entry.choose_method(kmeans)[0] == "lowrank"
    assert entry.choose_device_method(kmeans, torch_arrays)[0] != "lowrank"
    # nor where the factor would not fit the device's free memory
    monkeypatch.setattr(array_api, "device_free_bytes", lambda device: 1000)
    form = entry.CvxpyRelaxation(problem).standard_form()
    assert entry.choose_device_method(form, torch_arrays)[0] != "lowrank"
