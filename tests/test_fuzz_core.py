"""Fuzz tests of the numerical core: ``cvxclust.kernels``, ``cvxclust.rounding``,
``cvxclust.linalg`` (but the simplex projections) and ``cvxclust.datasets``.

Each public function gets bad and edge inputs (wrong shapes, NaN/inf, empty, strings, complex,
ragged lists, scalars at 1e-150..1e150, duplicate points, read-only and float32 arrays, lists,
wrong counts, booleans and truthy strings for flags, bad seeds) and must either raise a
``ValueError``/``TypeError`` naming the offending argument or return a correct result (finite,
of the right shape, with the function's defining properties), never changing its input; see
``fuzz_helpers.call``.
"""

from __future__ import annotations

import numpy as np
import pytest
from fuzz_helpers import (
    FEW,
    arguments,
    FUZZ,
    as_float32,
    assert_finite,
    assert_refused,
    assert_refused_naming_one_of,
    bad_arrays,
    call,
    counts,
    finite_matrices,
    flags,
    is_flag,
    is_int,
    is_positive,
    is_random_state,
    names,
    psd_matrices,
    random_states,
    reals,
    refused,
    symmetric_matrices,
    valid_counts,
    valid_flags,
    valid_random_states,
    variants,
)
from hypothesis import assume, example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.spatial.distance import pdist
from sklearn.base import BaseEstimator, ClusterMixin
from threadpoolctl import threadpool_limits

from cvxclust import datasets, kernels, linalg, rounding
from cvxclust._checks import check_X
from cvxclust._image_sets import OBJECTS


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def valid_matrix(X, min_rows=1, square=False, symmetric=False) -> bool:
    """Whether ``X`` is what a matrix argument accepts (numeric, 2-D, finite, large enough)."""
    try:
        A = np.asarray(X)
        if A.dtype.kind in "USc":
            return False
        A = A.astype(float)
    except (TypeError, ValueError):
        return False
    if A.ndim != 2 or A.shape[0] < min_rows or A.shape[1] < 1 or not np.all(np.isfinite(A)):
        return False
    if square and A.shape[0] != A.shape[1]:
        return False
    return not symmetric or np.abs(A - A.T).max() <= 1e-10 * max(np.abs(A).max(), 1e-300)


def with_variants(strategy):
    """``strategy``'s matrices, each also as a read-only array, a list, Fortran order or a strided view."""
    keys = st.sampled_from([None, "read-only", "list", "fortran", "strided"])
    return st.tuples(strategy, keys).map(lambda t: t[0] if t[1] is None else variants(t[0])[t[1]])


def data_inputs(min_rows=2):
    """Data matrices ``X``: valid ones at every scale (and as variants), and bad ones."""
    finite = finite_matrices(min_rows=min_rows)
    return st.one_of(with_variants(finite), bad_arrays(), finite_matrices(min_rows=0, max_rows=1),
                     finite.map(lambda X: np.where(np.arange(X.size).reshape(X.shape) == 0, np.nan, X)))


def data(min_rows=2):
    """``(valid, bad)`` strategies of a data matrix, for ``arguments``."""
    return with_variants(finite_matrices(min_rows=min_rows)), data_inputs(min_rows)


def square_inputs(strategy):
    return st.one_of(with_variants(strategy), bad_arrays(), finite_matrices(min_rows=2, max_rows=5, min_cols=1))


def mostly_valid(valid, bad):
    """``valid`` two draws in three, else ``bad``: for a function of one argument."""
    return st.one_of(valid, valid, bad)


def square(strategy):
    """``(valid, bad)`` strategies of a square matrix drawn from ``strategy``, for ``arguments``."""
    return with_variants(strategy), square_inputs(strategy)


def max_abs(X) -> float:
    return float(np.abs(np.asarray(X, dtype=float)).max(initial=0.0))


#: powers of two: rescaling by them is exact, so a scale-invariant result must not change at all
POWERS = [2.0**-500, 2.0**-300, 2.0**300, 2.0**500]


def grid_matrices(min_rows=2, max_rows=7, max_cols=3):
    """Finite matrices on a grid of 1/8: no subnormals when rescaled by ``POWERS``."""
    return st.integers(min_rows, max_rows).flatmap(lambda n: st.integers(1, max_cols).flatmap(
        lambda d: arrays(np.float64, (n, d), elements=st.integers(-40, 40).map(lambda k: k / 8))))


# -- kernels --------------------------------------------------------------------------------------


def check_kernel_shape(K, n):
    assert isinstance(K, np.ndarray) and K.shape == (n, n) and K.dtype == np.float64
    assert_finite(K)
    np.testing.assert_array_equal(K, K.T)


@FUZZ
@given(mostly_valid(*data()))
def test_median_distance(X):
    out = call(kernels.median_distance, X, names=["X"])
    if not valid_matrix(X, min_rows=2):
        return assert_refused(out, "X")
    assert not refused(out), out
    assert isinstance(out, float) and np.isfinite(out) and out >= 0
    A = np.asarray(X, dtype=float)
    expected = np.median(pdist(A / max_abs(A))) * max_abs(A) if max_abs(A) > 0 else 0.0
    np.testing.assert_allclose(out, expected, rtol=1e-12)


@FUZZ
@given(arguments(X=data(), delta=(st.one_of(st.none(), st.floats(1e-3, 1e3), st.integers(1, 5)),
                                  st.one_of(st.none(), reals()))))
@example({"X": np.array([[0.0], [1e160], [2e160]]), "delta": None})  # squared distances overflow: was NaN
@example({"X": np.array([[0.0], [1e-170], [3e-170]]), "delta": None})  # they underflow: was refused
@example({"X": np.array([[0.0], [1e160]]), "delta": 1e160})  # delta ** 2 overflows: was an OverflowError
@example({"X": np.array([[0.0], [1e-170]]), "delta": 1e-170})  # was NaN
@example({"X": np.array([[0.0], [1.0]]), "delta": 10**400})  # was a TypeError from np.isnan
def test_rbf(args):
    X, delta = args["X"], args["delta"]
    out = call(kernels.rbf, X, delta, names=["X", "delta"])
    delta_ok = delta is None or is_positive(delta)
    if not valid_matrix(X, min_rows=2) or not delta_ok:
        return assert_refused(out)
    A = np.asarray(X, dtype=float)
    if delta is None and np.median(pdist(A / max_abs(A) if max_abs(A) else A)) == 0:
        return assert_refused(out, "delta")  # half the pairs coincide: no median width
    assert not refused(out), out
    check_kernel_shape(out, A.shape[0])
    assert np.all(np.diag(out) == 1) and out.min() >= 0 and out.max() <= 1


@FEW
@given(grid_matrices(), st.sampled_from(POWERS), st.one_of(st.none(), st.sampled_from([0.5, 1.0, 3.0])))
def test_rbf_median_and_knn_are_exact_under_rescaling(X, scale, delta):
    """A rescaling by a power of two is exact: the median-width rbf kernel, the knn graph, and
    the rbf kernel with delta rescaled alike must not change by one bit (NaN or a refusal before)."""
    assume(np.median(pdist(X)) > 0)
    scaled_delta = None if delta is None else delta * scale
    np.testing.assert_array_equal(kernels.rbf(X * scale, scaled_delta), kernels.rbf(X, delta))
    assert kernels.median_distance(X * scale) == kernels.median_distance(X) * scale
    k = min(3, len(X) - 1)
    np.testing.assert_array_equal(kernels.knn_affinity(X * scale, k), kernels.knn_affinity(X, k))


@FUZZ
@given(arguments(X=data(), degree=(valid_counts(1, 6), counts(-1, 6))))
def test_polynomial(args):
    X, degree = args["X"], args["degree"]
    out = call(kernels.polynomial, X, degree, names=["X", "degree"])
    if not valid_matrix(X, min_rows=2) or not (is_int(degree) and degree >= 1):
        return assert_refused(out)
    A = np.asarray(X, dtype=float)
    # log10 of a bound on |x.y + 1| ** degree: below 1e300 the kernel must be computed
    log_bound = degree * np.log10(A.shape[1] * max_abs(A) ** 2 + 1)
    if refused(out):
        assert log_bound > 300, out.error
        return assert_refused(out, "X", "overflow")
    check_kernel_shape(out, A.shape[0])


@FUZZ
@given(mostly_valid(*data()))
def test_linear(X):
    out = call(kernels.linear, X, names=["X"])
    if not valid_matrix(X, min_rows=2):
        return assert_refused(out, "X")
    A = np.asarray(X, dtype=float)
    if refused(out):
        assert A.shape[1] * max_abs(A) ** 2 > 1e300, out.error
        return assert_refused(out, "X", "overflow")
    check_kernel_shape(out, A.shape[0])


@FUZZ
@given(arguments(X=data(), n_neighbors=(valid_counts(1, 3), counts(-1, 8))))
@example({"X": np.zeros((6, 2)), "n_neighbors": 3})  # all points coincide
@example({"X": np.repeat(np.arange(3.0), 2)[:, None], "n_neighbors": 2})  # duplicates: was a 0 on the diagonal
def test_knn_affinity(args):
    X, n_neighbors = args["X"], args["n_neighbors"]
    out = call(kernels.knn_affinity, X, n_neighbors, names=["X", "n_neighbors"])
    if not valid_matrix(X, min_rows=2):
        return assert_refused(out)
    n = np.shape(np.asarray(X, dtype=float))[0]
    if not (is_int(n_neighbors) and 1 <= n_neighbors <= n - 1):
        return assert_refused(out, "n_neighbors")
    assert not refused(out), out
    check_kernel_shape(out, n)
    assert np.all(np.diag(out) == 1), "each point is its own neighbour"
    assert set(np.unique(out)) <= {0.0, 0.5, 1.0}
    assert out.sum() == n * n_neighbors  # k ones in each row of A, and W = (A + A^T) / 2


@FUZZ
@given(mostly_valid(*square(st.one_of(symmetric_matrices(), st.integers(1, 5).flatmap(
    lambda n: finite_matrices(min_rows=n, max_rows=n, min_cols=n, max_cols=n))))))
def test_center(K):
    out = call(kernels.center, K, names=["K"])
    if not valid_matrix(K, square=True):
        return assert_refused(out, "K")
    assert not refused(out), out
    A = np.asarray(K, dtype=float)
    n = A.shape[0]
    assert out.shape == (n, n)
    assert_finite(out)
    H = np.eye(n) - 1.0 / n
    np.testing.assert_allclose(out, H @ A @ H, atol=1e-12 * max(max_abs(A), 1e-300) * n)
    if np.array_equal(A, A.T):
        np.testing.assert_array_equal(out, out.T)


@st.composite
def affinity_params(draw, valid=False):
    """Keyword parameters of a kernel; ``valid``: at most one, in range (it may not be the chosen
    kernel's)."""
    if valid:
        values = {"delta": st.floats(0.1, 10), "degree": valid_counts(1, 3), "n_neighbors": valid_counts(1, 2)}
        keys = draw(st.lists(st.sampled_from(sorted(values)), max_size=1))
    else:
        values = {"delta": st.one_of(st.none(), reals()), "degree": counts(-1, 4), "n_neighbors": counts(-1, 6),
                  "gamma": reals()}
        keys = draw(st.lists(st.sampled_from(sorted(values)), max_size=2, unique=True))
    return {k: draw(values[k]) for k in keys}


@FUZZ
@given(arguments(X=(st.one_of(with_variants(finite_matrices()), with_variants(symmetric_matrices(min_n=2))),
                    st.one_of(data_inputs(), square_inputs(symmetric_matrices(min_n=2)))),
                 kind=(st.sampled_from(sorted(kernels.AFFINITIES)), names(kernels.AFFINITIES)),
                 params=(affinity_params(valid=True), affinity_params())))
def test_affinity(args):
    X, kind, params = args["X"], args["kind"], args["params"]
    # a kernel's default parameter may not fit X (n_neighbors=10 for 5 points): it is named too
    out = call(kernels.affinity, X, kind, **params, names=["X", "kind", "n_neighbors", *params])
    if not (isinstance(kind, str) and kind in kernels.AFFINITIES):
        return assert_refused(out, "kind")
    func = kernels.AFFINITIES[kind]
    accepted = {"rbf": {"delta"}, "polynomial": {"degree"}, "nearest_neighbors": {"n_neighbors"}}.get(kind, set())
    unknown = set(params) - accepted
    if unknown:
        return assert_refused(out, *sorted(unknown))
    direct = call(func, X, **params, names=["X", "n_neighbors", *params])
    if refused(direct):
        return assert_refused(out, str(direct.error))
    assert not refused(out), out
    np.testing.assert_array_equal(out, direct)
    if kind == "precomputed":
        assert valid_matrix(X, min_rows=2, square=True, symmetric=True)


@FEW
@given(grid_matrices(min_rows=3, max_rows=6).map(lambda X: X + 0.01 * np.arange(X.size).reshape(X.shape)),
       st.sampled_from(["rbf", "linear", "polynomial", "nearest_neighbors"]))
def test_kernels_of_float32_and_variants(X, kind):
    """float32 data give the float64 kernel of the float32 values, close to that of the float64
    data for a continuous kernel; read-only arrays, lists and views give the same kernel as the
    array."""
    params = {"n_neighbors": 2} if kind == "nearest_neighbors" else {}
    X32 = as_float32(X)
    K = kernels.affinity(X, kind, **params)
    K32 = kernels.affinity(X32, kind, **params)
    np.testing.assert_array_equal(K32, kernels.affinity(X32.astype(np.float64), kind, **params))
    if kind != "nearest_neighbors":  # rounding to float32 may break a tie between two neighbours
        np.testing.assert_allclose(K32, K, rtol=1e-5, atol=1e-6)
    for variant in variants(X).values():
        np.testing.assert_array_equal(kernels.affinity(variant, kind, **params), K)


@FEW
@given(arguments(K=square(psd_matrices()), n_clusters=(valid_counts(2, 2), counts(-1, 7)),
                 n_init=(valid_counts(1, 2), counts(-1, 3, huge=False)),
                 random_state=(valid_random_states(), random_states())))
@example({"K": np.zeros((3, 3)), "n_clusters": 2, "n_init": 1, "random_state": 0})  # no positive eigenvalue
@example({"K": np.eye(3), "n_clusters": 2, "n_init": 1, "random_state": True})  # was seeded with 1
@example({"K": np.eye(3), "n_clusters": 2, "n_init": 1,
          "random_state": np.random.default_rng(0)})  # was refused without naming random_state
def test_kernel_kmeans(args):
    K, n_clusters, n_init, random_state = args["K"], args["n_clusters"], args["n_init"], args["random_state"]
    out = call(kernels.kernel_kmeans, K, n_clusters, n_init=n_init, random_state=random_state,
               names=["K", "n_clusters", "n_init", "random_state"])
    if not valid_matrix(K, min_rows=2, square=True, symmetric=True):
        return assert_refused(out)
    n = np.shape(np.asarray(K, dtype=float))[0]
    bad = [name for name, ok in (("n_clusters", is_int(n_clusters) and 2 <= n_clusters <= n),
                                 ("n_init", is_int(n_init) and n_init >= 1),
                                 ("random_state", is_random_state(random_state))) if not ok]
    if bad:
        assert_refused_naming_one_of(out, bad)
        return
    if np.linalg.eigvalsh(np.asarray(K, dtype=float))[-1] <= 0:
        return assert_refused(out, "K", "positive eigenvalue")
    assert not refused(out), out
    assert out.shape == (n,) and np.issubdtype(out.dtype, np.integer)
    assert out.min() >= 0 and out.max() < n_clusters


# -- rounding -------------------------------------------------------------------------------------


def check_rounding(out, A, n_clusters, options, bad=()):
    """A rounding's outcome: refused naming ``A`` or one of the bad arguments (``bad`` adds
    some), or labels in ``0 .. n_clusters - 1``, one per row of ``A``."""
    if not valid_matrix(A, square=True, symmetric=True):
        return assert_refused(out, "A")
    bad = rounding_args_bad(A, n_clusters, options) + list(bad)
    if bad:
        return assert_refused_naming_one_of(out, bad)
    assert not refused(out), out
    labels = out[0] if options.get("return_objective") else out
    assert labels.shape == (np.shape(np.asarray(A))[0],) and labels.min() >= 0 and labels.max() < n_clusters


def rounding_args_bad(A, n_clusters, options) -> list[str]:
    n = np.shape(np.asarray(A, dtype=float))[0]
    bad = [] if is_int(n_clusters) and 2 <= n_clusters <= n else ["n_clusters"]
    for name, value in options.items():
        ok = {"n_init": lambda v: is_int(v) and v >= 1, "max_iter": lambda v: is_int(v) and v >= 1,
              "random_state": is_random_state, "return_objective": is_flag}[name](value)
        if not ok:
            bad.append(name)
    return bad


@FUZZ
@given(arguments(A=square(symmetric_matrices()), n_components=(valid_counts(1, 1), counts(-1, 7))))
def test_spectral_embedding(args):
    A, n_components = args["A"], args["n_components"]
    out = call(rounding.spectral_embedding, A, n_components, names=["A", "n_components"])
    if not valid_matrix(A, square=True, symmetric=True):
        return assert_refused(out, "A")
    n = np.shape(np.asarray(A, dtype=float))[0]
    if not (is_int(n_components) and 1 <= n_components <= n):
        return assert_refused(out, "n_components")
    assert not refused(out), out
    assert out.shape == (n, n_components)
    assert_finite(out)
    np.testing.assert_allclose(out.T @ out, np.eye(n_components), atol=1e-10)


@st.composite
def rounding_options(draw, keys=("n_init", "random_state"), valid=False):
    chosen = draw(st.lists(st.sampled_from(keys), unique=True))
    if valid:
        values = {"n_init": valid_counts(1, 3), "max_iter": valid_counts(1, 5), "random_state": valid_random_states(),
                  "return_objective": valid_flags()}
    else:
        values = {"n_init": counts(-1, 3, huge=False), "max_iter": counts(-1, 5, huge=False),
                  "random_state": random_states(), "return_objective": flags()}
    return {k: draw(values[k]) for k in chosen}


def options(keys):
    """``(valid, bad)`` strategies of rounding options, for ``arguments``."""
    return rounding_options(keys, valid=True), rounding_options(keys)


@FEW
@given(arguments(A=square(symmetric_matrices(min_n=2)), n_clusters=(valid_counts(2, 2), counts(-1, 7)),
                 options=options(("n_init", "random_state"))))
def test_kmeans_rounding(args):
    A, n_clusters, options = args["A"], args["n_clusters"], args["options"]
    out = call(rounding.kmeans_rounding, A, n_clusters, **options, names=["A", "n_clusters", *options])
    check_rounding(out, A, n_clusters, options)


@FUZZ
@given(arguments(A=square(symmetric_matrices(min_n=2)), n_clusters=(valid_counts(2, 2), counts(-1, 7)),
                 options=options(("n_init", "max_iter", "random_state", "return_objective"))))
@example({"A": np.eye(3), "n_clusters": 2, "options": {"return_objective": "no"}})  # a truthy string: True
@example({"A": np.eye(3), "n_clusters": 2, "options": {"random_state": True}})  # was taken for the seed 1
def test_discretize(args):
    A, n_clusters, options = args["A"], args["n_clusters"], args["options"]
    out = call(rounding.discretize, A, n_clusters, **options, names=["A", "n_clusters", *options])
    check_rounding(out, A, n_clusters, options)
    if not refused(out) and options.get("return_objective"):
        assert np.isfinite(out[1]) and 0 <= out[1] <= len(out[0]) + 1e-9


@FEW
@given(arguments(A=square(symmetric_matrices(min_n=2)), n_clusters=(valid_counts(2, 2), counts(-1, 5)),
                 method=(st.sampled_from(sorted(rounding.ROUNDINGS)), names(rounding.ROUNDINGS)),
                 options=options(("n_init", "random_state", "max_iter"))))
def test_round_labels(args):
    A, n_clusters, method, options = args["A"], args["n_clusters"], args["method"], args["options"]
    out = call(rounding.round_labels, A, n_clusters, method, **options,
               names=["A", "n_clusters", "method", *options])
    if not (isinstance(method, str) and method in rounding.ROUNDINGS):
        return assert_refused(out, "method")
    # max_iter is not an option of k-means rounding
    check_rounding(out, A, n_clusters, options,
                   bad=["max_iter"] if method == "kmeans" and "max_iter" in options else [])


# -- linalg (the p.s.d. projections and BLAS threads) ---------------------------------------------


@FUZZ
@given(mostly_valid(*square(symmetric_matrices())))
@example(np.full((3, 3), np.nan))  # was a LinAlgError
@example(np.ones(3))  # was a LinAlgError
@example(np.array([[0.0, 1.0], [0.0, 0.0]]))  # not symmetric: the lower triangle was used silently
def test_project_psd(A):
    out = call(linalg.project_psd, A, names=["A"])
    if not valid_matrix(A, square=True, symmetric=True):
        return assert_refused(out, "A")
    assert not refused(out), out
    S = np.asarray(A, dtype=float)
    scale = max(max_abs(S), 1e-300)
    assert out.shape == S.shape
    assert_finite(out)
    np.testing.assert_allclose(out, out.T, atol=1e-12 * scale)
    assert np.linalg.eigvalsh(out / scale)[0] >= -1e-10
    w, V = np.linalg.eigh(S / scale)
    np.testing.assert_allclose(out / scale, (V * np.maximum(w, 0)) @ V.T, atol=1e-10)


@FUZZ
@given(arguments(n=(valid_counts(1, 3), counts(-1, 6)), partial=(valid_flags(), flags()),
                 switch_fraction=(st.sampled_from([0.0, 0.25, 1.0]), st.one_of(reals(), st.just(0.5))),
                 min_partial_size=(st.one_of(st.none(), valid_counts(1, 2)), st.one_of(st.none(), counts(-1, 4))),
                 A=(st.integers(1, 3).flatmap(lambda n: symmetric_matrices(min_n=n, max_n=n)),
                    square_inputs(symmetric_matrices(min_n=1, max_n=6)))))
@example({"n": 3, "partial": True, "switch_fraction": 0.25, "min_partial_size": None,
          "A": np.eye(4)})  # wrong order: was projected as a 4 x 4
@example({"n": "3", "partial": True, "switch_fraction": 0.25, "min_partial_size": None,
          "A": np.eye(3)})  # was a bare TypeError from a comparison
def test_psd_projector(args):
    n, partial, switch_fraction = args["n"], args["partial"], args["switch_fraction"]
    min_partial_size, A = args["min_partial_size"], args["A"]
    made = call(linalg.PSDProjector, n, partial=partial, switch_fraction=switch_fraction,
                min_partial_size=min_partial_size, names=["n", "partial", "switch_fraction", "min_partial_size"])
    fraction_ok = (isinstance(switch_fraction, (int, float, np.floating)) and not isinstance(switch_fraction, bool)
                   and 0 <= switch_fraction <= 1)
    bad = [name for name, ok in (("n", is_int(n) and n >= 1), ("partial", is_flag(partial)),
                                 ("switch_fraction", fraction_ok),
                                 ("min_partial_size", min_partial_size is None
                                  or (is_int(min_partial_size) and min_partial_size >= 1))) if not ok]
    if bad:
        assert_refused_naming_one_of(made, bad)
        return
    assert not refused(made), made
    for _ in range(2):  # the second call may use the partial decomposition
        out = call(made, A, names=["A"])
        S = np.asarray(A, dtype=float) if valid_matrix(A) else None
        if S is None or S.shape != (n, n) or not valid_matrix(A, symmetric=True):
            return assert_refused(out, "A")
        assert not refused(out), out
        scale = max(max_abs(S), 1e-300)
        np.testing.assert_allclose(out / scale, linalg.project_psd(S) / scale, atol=1e-9)


@FUZZ
@given(st.one_of(counts(-2, 3), st.sampled_from([1499, 1500, 10**6])))
def test_blas_threads(n):
    out = call(linalg.blas_threads, n, names=["n"])
    if not (is_int(n) and n >= 0):
        return assert_refused(out, "n")
    with out:
        pass
    def enter(n_threads):  # a generator-based context manager checks its argument on entry
        with linalg.scipy_blas_threads(n_threads):
            pass

    threads = call(enter, n, names=["n_threads"])
    if n < 1:
        assert_refused(threads, "n_threads")


@pytest.mark.parametrize("order", [None, 3, "n"])
def test_with_blas_threads_needs_a_callable(order):
    assert_refused(call(linalg.with_blas_threads, order, names=["order"]), "order")


# -- datasets -------------------------------------------------------------------------------------


@FUZZ
@given(arguments(name=(st.sampled_from(sorted(datasets.DATASETS)), names(datasets.DATASETS)),
                 n_samples=(st.one_of(st.none(), valid_counts(2, 100)), st.one_of(st.none(), counts(-2, 200))),
                 random_state=(valid_random_states(), random_states())))
@example({"name": "iris", "n_samples": 10, "random_state": True})  # was seeded with 1
@example({"name": "iris", "n_samples": 10, "random_state": np.random.default_rng(0)})  # refused, random_state unnamed
@example({"name": "iris", "n_samples": 10, "random_state": "seed"})  # was refused without naming random_state
def test_load_dataset(args):
    name, n_samples, random_state = args["name"], args["n_samples"], args["random_state"]
    out = call(datasets.load_dataset, name, n_samples, random_state=random_state,
               names=["name", "dataset", "n_samples", "random_state"])
    if not (isinstance(name, str) and name in datasets.DATASETS):
        return assert_refused(out, "dataset name")
    n_max = {"iris": 150, "wine": 178, "digits": 1797 * 5, "breast_cancer": 569}[name]
    bad = [arg for arg, ok in (("n_samples", n_samples is None or (is_int(n_samples) and 2 <= n_samples <= n_max)),
                               ("random_state", is_random_state(random_state))) if not ok]
    if bad:
        assert_refused_naming_one_of(out, bad)
        return
    assert not refused(out), out
    X, y = out
    n = X.shape[0]
    assert n == (n_samples or n) and y.shape == (n,) and X.ndim == 2
    assert_finite(X)
    assert np.all(np.diff(y) >= 0)


@FEW
@given(st.one_of(st.sampled_from(["chain", "ring"]), names({"chain", "ring"})),
       st.one_of(st.just("coffee"), names(OBJECTS)),
       st.one_of(st.just(8), counts(-1, 10), st.sampled_from([513, 8.0])), random_states())
@example("chain", "coffee", 8, True)  # was seeded with 1
def test_rotating_object_arguments(kind, image, size, random_state):
    """Only bad arguments (a valid call renders images, which is slow): each is named."""
    bad = [arg for arg, ok in (("kind", isinstance(kind, str) and kind in ("chain", "ring")),
                               ("image", isinstance(image, str) and image in OBJECTS),
                               ("size", is_int(size) and 8 <= size <= 512),
                               ("random_state", is_random_state(random_state))) if not ok]
    assume(bad)
    out = call(datasets.rotating_object, kind, image=image, size=size, random_state=random_state,
               names=["kind", "image", "size", "random_state"])
    assert_refused_naming_one_of(out, bad)


@FEW
@given(counts(-1, 5, huge=False), counts(-1, 5, huge=False), counts(-1, 4, huge=False),
       st.one_of(st.just(8), counts(-1, 9)), random_states())
def test_objects_by_pose_arguments(n_objects, n_poses, n_pose_clusters, size, random_state):
    """Only bad arguments (a valid call renders images, which is slow): each is named."""
    clusters_ok = is_int(n_pose_clusters) and n_pose_clusters >= 1
    bad = [arg for arg, ok in (
        ("n_objects", is_int(n_objects) and 1 <= n_objects <= 4),
        ("n_pose_clusters", clusters_ok),
        ("n_poses", is_int(n_poses) and (not clusters_ok or (n_poses >= n_pose_clusters
                                                             and n_poses % n_pose_clusters == 0))),
        ("size", is_int(size) and 8 <= size <= 512),
        ("random_state", is_random_state(random_state))) if not ok]
    assume(bad)
    out = call(datasets.objects_by_pose, n_objects=n_objects, n_poses=n_poses, n_pose_clusters=n_pose_clusters,
               size=size, random_state=random_state,
               names=["n_objects", "n_poses", "n_pose_clusters", "size", "random_state"])
    assert_refused_naming_one_of(out, bad)


def test_rotating_object_accepts_every_kind_of_seed():
    X0 = datasets.rotating_object(size=8, random_state=np.random.RandomState(0))[0]
    np.testing.assert_array_equal(datasets.rotating_object(size=8, random_state=0)[0], X0)
    X1 = datasets.rotating_object(size=8, random_state=np.random.default_rng(0))[0]
    assert X1.shape == X0.shape and np.all((X1 >= 0) & (X1 <= 1))


# -- the data check of the estimators -------------------------------------------------------------


class _Clusterer(ClusterMixin, BaseEstimator):
    """The smallest estimator that checks its data with ``check_X``."""

    def fit(self, X, y=None):
        X = check_X(self, X, ensure_min_samples=2)
        self.labels_ = np.zeros(len(X), dtype=int)
        return self


@FUZZ
@given(mostly_valid(*data()))
def test_validate_X_names_X(X):
    """scikit-learn's validate_data says "Expected 2D array" or "Found array with 1 sample(s)"
    without naming X; check_X names it and keeps the message."""
    out = call(lambda X: _Clusterer().fit(X), X, names=["X"])
    if not valid_matrix(X, min_rows=2):
        assert_refused(out, "X")
        assert not str(out.error).startswith("X: X"), out.error
        return
    assert not refused(out), out
    assert out.labels_.shape == (np.shape(np.asarray(X))[0],)


# -- every matrix function: float32, read-only, lists, views ---------------------------------------


MATRIX_FUNCTIONS = {
    "center": kernels.center,
    "precomputed": lambda A: kernels.affinity(A, "precomputed"),
    "kernel_kmeans": lambda A: kernels.kernel_kmeans(A + 3 * np.eye(len(A)), 2, n_init=1, random_state=0),
    "project_psd": linalg.project_psd,
    "spectral_embedding": lambda A: rounding.spectral_embedding(A, 1),
    "discretize": lambda A: rounding.discretize(A, 2, n_init=2, random_state=0),
    "kmeans_rounding": lambda A: rounding.kmeans_rounding(A, 2, n_init=1, random_state=0),
}


@FEW
@given(st.integers(2, 5).flatmap(lambda n: arrays(np.float64, (n, n), elements=st.integers(-8, 8).map(
    lambda k: k / 4))).map(lambda A: A + A.T + 0.01 * np.diag(np.arange(len(A)))),
       st.sampled_from(sorted(MATRIX_FUNCTIONS)))
def test_matrix_functions_of_float32_and_variants(A, name):
    """A float32 matrix gives the result of its float64 values; a read-only array, a list, a
    Fortran-ordered array or a strided view gives the result of the array, which is not changed."""
    func = MATRIX_FUNCTIONS[name]
    expected = call(func, A, names=["A", "K", "X"])
    if refused(expected):  # e.g. no positive eigenvalue
        return
    A32 = A.astype(np.float32)
    np.testing.assert_array_equal(call(func, A32, names=[]), func(A32.astype(np.float64)))
    for variant in variants(A).values():
        np.testing.assert_array_equal(call(func, variant, names=[]), expected)
