"""The estimators and the input kernels on arrays of another array API library: the same fit as
NumPy's on the array's device (labels as NumPy arrays, the matrices in the input's library), and a
TypeError naming the estimator and the setting where a step runs on NumPy arrays only."""

import numpy as np
import pytest
from array_namespaces import FOREIGN, as_library, to_numpy
from sklearn.metrics import adjusted_rand_score

from cvxclust import CLUHSIC, CLUHSICAL, BregmanClustering, SemidefiniteSpectralClustering, kernels
from cvxclust._array_api import namespace_of
from cvxclust.hsic import certify_partition
from cvxclust.structures import chain, output_kernel


def blobs(n_per=8, centres=(0.0, 4.0, 8.0), seed=0):
    rng = np.random.RandomState(seed)
    return np.vstack([rng.randn(n_per, 2) + [c, 0.0] for c in centres])


def same_library(x, library):
    return namespace_of(x).__name__.endswith(library)


@pytest.mark.parametrize("library", FOREIGN)
def test_kernels_run_in_the_library_and_agree_with_numpy(library):
    X = blobs() * 3.0
    Xf = as_library(X, library)
    pairs = [(kernels.rbf(Xf), kernels.rbf(X)), (kernels.rbf(Xf, 0.7), kernels.rbf(X, 0.7)),
             (kernels.polynomial(Xf, 3), kernels.polynomial(X, 3)), (kernels.linear(Xf), kernels.linear(X)),
             (kernels.center(kernels.linear(Xf)), kernels.center(kernels.linear(X)))]
    for device, host in pairs:
        assert same_library(device, library)
        np.testing.assert_allclose(to_numpy(device), host, rtol=1e-12, atol=1e-12 * np.abs(host).max())
        assert np.array_equal(to_numpy(device), to_numpy(device).T)
    assert kernels.median_distance(Xf) == pytest.approx(kernels.median_distance(X), rel=1e-12)
    np.testing.assert_array_equal(to_numpy(Xf), X)  # the caller's array is not modified
    with pytest.raises(TypeError, match="knn_affinity.*NumPy arrays only"):
        kernels.knn_affinity(Xf, 3)


@pytest.mark.parametrize("library", FOREIGN)
@pytest.mark.parametrize("settings", [{}, {"method": "admm"}, {"relaxation": "normalized-cut"},
                                      {"affinity": "polynomial", "relaxation": "ratio-cut"}])
def test_ssc_fits_on_the_arrays_device(library, settings):
    X = blobs()
    Xf = as_library(X, library)
    host = SemidefiniteSpectralClustering(3, random_state=0, **settings).fit(X)
    device = SemidefiniteSpectralClustering(3, random_state=0, **settings).fit(Xf)
    assert isinstance(device.labels_, np.ndarray)
    assert adjusted_rand_score(host.labels_, device.labels_) == 1.0
    assert same_library(device.affinity_matrix_, library) and same_library(device.normalized_affinity_, library)
    np.testing.assert_allclose(to_numpy(device.normalized_affinity_), host.normalized_affinity_, atol=1e-6)
    assert device.n_features_in_ == 2
    if host.result_ is not None:
        assert device.result_.status == host.result_.status == "optimal"
        assert device.objective_ == pytest.approx(host.objective_, rel=1e-6)
        assert same_library(device.result_.X, library)
    np.testing.assert_array_equal(to_numpy(Xf), X)


@pytest.mark.parametrize("library", FOREIGN)
def test_ssc_takes_a_precomputed_affinity_of_the_library(library):
    K = kernels.rbf(blobs())
    host = SemidefiniteSpectralClustering(3, affinity="precomputed", random_state=0).fit(K)
    device = SemidefiniteSpectralClustering(3, affinity="precomputed", random_state=0).fit(as_library(K, library))
    assert adjusted_rand_score(host.labels_, device.labels_) == 1.0
    assert device.objective_ == pytest.approx(host.objective_, rel=1e-6)
    assert device.n_features_in_ == K.shape[0]


@pytest.mark.parametrize("library", FOREIGN)
def test_cluhsic_solves_the_sdp_on_the_arrays_device(library):
    X = blobs(n_per=4)
    Xf = as_library(X, library)
    # the certificate's second SDP on array-api-strict (slow by design) adds nothing to torch's
    settings = {"relaxation": "sdp", "certify": library == "torch", "random_state": 0, "structure": chain(3),
                "refine": False, "solver_options": {"tol": 1e-4}}
    host = CLUHSIC(3, **settings).fit(X)
    device = CLUHSIC(3, **settings).fit(Xf)
    assert isinstance(device.labels_, np.ndarray) and isinstance(device.output_kernel_, np.ndarray)
    assert adjusted_rand_score(host.labels_, device.labels_) == 1.0
    assert device.objective_ == pytest.approx(host.objective_, rel=1e-9)
    assert same_library(device.result_.X, library)
    assert device.result_.status == host.result_.status
    assert device.result_.objective == pytest.approx(host.result_.objective, rel=1e-6)
    assert device.certificate_.available == host.certificate_.available
    if device.certificate_.available:
        assert device.certificate_.gap == pytest.approx(host.certificate_.gap, abs=1e-6)
    np.testing.assert_array_equal(to_numpy(Xf), X)


@pytest.mark.parametrize("library", FOREIGN)
def test_certify_partition_solves_on_the_kernels_device(library):
    K = kernels.center(kernels.rbf(blobs(n_per=5)))
    A, labels = output_kernel(chain(3)), np.repeat([0, 1, 2], 5)
    host = certify_partition(K, A, labels)
    device = certify_partition(as_library(K, library), A, labels)
    assert device.objective == pytest.approx(host.objective, rel=1e-12)
    assert device.upper_bound == pytest.approx(host.upper_bound, rel=1e-6)


@pytest.mark.parametrize("library", FOREIGN)
@pytest.mark.parametrize("estimator, setting", [
    (SemidefiniteSpectralClustering(3, affinity="nearest_neighbors"), "affinity='nearest_neighbors'"),
    (SemidefiniteSpectralClustering(3, method="ld-ssc1"), "method='ld-ssc1'"),
    (CLUHSIC(3), "relaxation=None"),
    (CLUHSIC(3, relaxation="sdp", affinity="nearest_neighbors"), "affinity='nearest_neighbors'"),
    (CLUHSICAL(3), "fit"),
    (BregmanClustering(3), "fit"),
])
def test_a_step_that_runs_on_numpy_only_is_refused_naming_it(library, estimator, setting):
    name = type(estimator).__name__
    with pytest.raises(TypeError, match=rf"^{name}: {setting}.* runs on NumPy arrays only"):
        estimator.fit(as_library(blobs(), library))


@pytest.mark.parametrize("library", FOREIGN)
@pytest.mark.parametrize("dtype", ["float16", "int64"])
def test_an_x_of_a_dtype_the_solvers_refuse_is_refused_naming_x(library, dtype):
    if library == "array_api_strict" and dtype == "float16":
        pytest.skip("array-api-strict has no float16")
    X = as_library(np.round(blobs()), library, dtype=dtype)
    with pytest.raises(TypeError, match=f"X has dtype {dtype}"):
        SemidefiniteSpectralClustering(3).fit(X)
    with pytest.raises(TypeError, match=f"X has dtype {dtype}"):
        CLUHSIC(3, relaxation="sdp").fit(X)


@pytest.mark.parametrize("library", FOREIGN)
def test_non_finite_x_is_refused_naming_x(library):
    X = blobs()
    X[3, 1] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        SemidefiniteSpectralClustering(3).fit(as_library(X, library))


@pytest.mark.parametrize("library", FOREIGN)
def test_cluhsic_takes_known_labels_of_the_library(library):
    X = blobs(n_per=4)
    y = np.full(X.shape[0], -1)
    y[[0, 4]] = [0, 1]
    settings = {"relaxation": "sdp", "refine": False, "random_state": 0, "solver_options": {"tol": 1e-3}}
    host = CLUHSIC(3, **settings).fit(X, y)
    device = CLUHSIC(3, **settings).fit(as_library(X, library), as_library(y, library, dtype="int64"))
    np.testing.assert_array_equal(device.labels_[[0, 4]], [0, 1])
    assert device.objective_ == pytest.approx(host.objective_, rel=1e-9)
