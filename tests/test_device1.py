"""Nothing goes to the host: every solver that runs on any array API library, run once on
array-api-strict's fake ``device1``, from which ``numpy.asarray`` cannot read (an implicit
conversion of an iterate fails there), agrees with the same solve on NumPy and returns its point
on that device."""

import cvxpy as cp
import numpy as np
import pytest
from array_namespaces import on_device1, to_numpy

import cvxclust
import cvxclust.generic.device as device_module
from cvxclust import CLUHSIC, SemidefiniteSpectralClustering
from cvxclust._array_api import check_arrays
from cvxclust.hsic import CLUHSICSDP
from cvxclust.kernels import center, rbf
from cvxclust.ssc import FrobeniusDS, FrobeniusPSD

strict = pytest.importorskip("array_api_strict")


def points(n=16, seed=3):
    rng = np.random.default_rng(seed)
    return np.vstack([rng.normal(c, 0.5, (n // 2, 2)) for c in (0.0, 3.0)])


def on_device(x) -> bool:
    return x.device == strict.Device("device1")


def test_numpy_cannot_read_device1():
    with pytest.raises(RuntimeError):
        np.asarray(on_device1(np.eye(2)))


@pytest.mark.parametrize("relaxation", [FrobeniusDS, FrobeniusPSD], ids=["ssc6", "ssc7"])
@pytest.mark.parametrize("method", ["dual-newton", "admm"])
def test_ssc_relaxations(relaxation, method):
    K = rbf(points())
    reference = relaxation(K).solve(method)
    result = relaxation(on_device1(K)).solve(method)
    assert on_device(result.X)
    assert result.status == reference.status == "optimal"
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    assert np.abs(to_numpy(result.X) - reference.X).max() <= 1e-5


def test_cluhsic_sdp_admm():
    K = center(rbf(points(n=8)))
    A = 2.0 * np.eye(2) + np.eye(2, k=1) + np.eye(2, k=-1)
    reference = CLUHSICSDP(K, A).solve("admm", tol=1e-4)
    result = CLUHSICSDP(on_device1(K), A).solve("admm", tol=1e-4)
    assert on_device(result.X)
    assert result.status == reference.status == "optimal"
    assert result.objective == pytest.approx(reference.objective, rel=1e-4)


@pytest.mark.parametrize("method", ["generic", "dual-newton"])
def test_generic_solve(monkeypatch, method):
    # device= has no spelling for array-api-strict: its resolution is pointed at device1
    arrays = check_arrays(X=on_device1(np.zeros((2, 2))))
    real = device_module.device_namespace
    monkeypatch.setattr(device_module, "device_namespace",
                        lambda device, dtype: arrays if device == "device1" else real(device, dtype))
    K = rbf(points())
    X = cp.Variable(K.shape, symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - K)), [X >> 0, X >= 0, cp.sum(X, axis=1) == 1])
    reference = cvxclust.solve(problem, method=method)
    result = cvxclust.solve(problem, method=method, device="device1")
    assert on_device(result.X)
    assert result.status == reference.status == "optimal"
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)


@pytest.mark.parametrize("method", ["dual-newton", "admm"])
def test_ssc_estimator(method):
    X = points()
    reference = SemidefiniteSpectralClustering(2, method=method, random_state=0).fit(X)
    fitted = SemidefiniteSpectralClustering(2, method=method, random_state=0).fit(on_device1(X))
    assert on_device(fitted.normalized_affinity_)
    assert fitted.objective_ == pytest.approx(reference.objective_, rel=1e-6)
    assert sorted(np.bincount(fitted.labels_)) == sorted(np.bincount(reference.labels_))


def test_cluhsic_estimator():
    X = np.vstack([points(n=6, seed=1), points(n=6, seed=2) + 6.0])
    settings = {"relaxation": "sdp", "refine": False, "certify": False, "random_state": 0,
                "solver_options": {"tol": 1e-3}}
    reference = CLUHSIC(2, **settings).fit(X)
    fitted = CLUHSIC(2, **settings).fit(on_device1(X))
    assert on_device(fitted.result_.X)
    assert fitted.objective_ == pytest.approx(reference.objective_, rel=1e-9)


def test_lowrank_max_cut(monkeypatch):
    # the path of a fixed diagonal alone, its certificate by Lanczos (not S written out) on device1
    import cvxclust.generic.lowrank_device as lowrank_device

    arrays = check_arrays(X=on_device1(np.zeros((2, 2))))
    real = device_module.device_namespace
    monkeypatch.setattr(device_module, "device_namespace",
                        lambda device, dtype: arrays if device == "device1" else real(device, dtype))
    monkeypatch.setattr(lowrank_device, "DENSE_ORDER", 0)
    rng = np.random.default_rng(1)
    W = np.triu((rng.random((30, 30)) < 0.3) * rng.random((30, 30)), 1)
    laplacian = np.diag((W + W.T).sum(1)) - (W + W.T)
    X = cp.Variable(laplacian.shape, symmetric=True)
    problem = cp.Problem(cp.Maximize(cp.trace(laplacian @ X) / 4), [X >> 0, cp.diag(X) == 1])
    reference = cvxclust.solve(problem, method="lowrank")
    result = cvxclust.solve(problem, method="lowrank", device="device1")
    assert on_device(result.X) and on_device(result.extras["factor"])
    assert result.status == reference.status == "optimal"
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    assert result.extras["lanczos_matvecs"] > 0
