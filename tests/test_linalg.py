"""``cvxclust.linalg``: the p.s.d. projection ``project_psd`` and the stateful ``PSDProjector``
(full and partial eigendecompositions), against each other and against eigen-truncation, with
property tests (result p.s.d., idempotence, Moreau decomposition A = A_+ - (-A)_+, optimality)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from threadpoolctl import threadpool_limits

from cvxclust import linalg
from cvxclust.linalg import PSDProjector, project_psd

SETTINGS = settings(max_examples=60, deadline=None, database=None)
LARGE = settings(max_examples=25, deadline=None, database=None)


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def truncate(A: np.ndarray) -> np.ndarray:
    """Reference: eigendecomposition with the negative eigenvalues set to zero."""
    w, V = np.linalg.eigh(A)
    return (V * np.maximum(w, 0)) @ V.T


def tol(A: np.ndarray) -> float:
    return 1e-10 * max(1.0, np.abs(A).sum(axis=1).max())


@st.composite
def symmetric_matrices(draw, max_n=8, scale=100.0):
    n = draw(st.integers(1, max_n))
    A = draw(arrays(np.float64, (n, n), elements=st.floats(-scale, scale, allow_nan=False, allow_subnormal=False)))
    return (A + A.T) / 2


def spectrum_matrix(n: int, n_negative: int, seed: int, gap: float = 0.1) -> np.ndarray:
    """Symmetric matrix with exactly ``n_negative`` negative eigenvalues, all |lambda| in [gap, 1]."""
    rng = np.random.default_rng(seed)
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = rng.uniform(gap, 1.0, n)
    w[:n_negative] *= -1
    A = (V * w) @ V.T
    return (A + A.T) / 2


def perturbation(n: int, seed: int, size: float) -> np.ndarray:
    """Symmetric matrix of spectral norm ``size``."""
    E = np.random.default_rng(seed).standard_normal((n, n))
    E = (E + E.T) / 2
    return size * E / np.linalg.norm(E, 2)


# -- project_psd -------------------------------------------------------------------------------


@SETTINGS
@given(symmetric_matrices())
def test_project_psd_properties(A):
    P = project_psd(A)
    t = tol(A)
    np.testing.assert_allclose(P, truncate(A), atol=t)
    np.testing.assert_allclose(P, P.T, atol=t)
    assert np.linalg.eigvalsh(P)[0] >= -t  # p.s.d.
    np.testing.assert_allclose(project_psd(P), P, atol=t)  # idempotent
    np.testing.assert_allclose(A, P - project_psd(-A), atol=t)  # Moreau: A = A_+ - (-A)_+
    assert abs(np.sum(P * (P - A))) <= t * max(1.0, np.linalg.norm(A)) * A.shape[0]  # A_+ _|_ A_-


@SETTINGS
@given(symmetric_matrices(max_n=6), st.integers(0, 2**32 - 1))
def test_project_psd_is_the_nearest_psd_matrix(A, seed):
    """<A - A_+, B - A_+> <= 0 for every p.s.d. B, so ||A - A_+|| <= ||A - B||."""
    n = A.shape[0]
    P = project_psd(A)
    G = np.random.default_rng(seed).standard_normal((n, n))
    for B in (G @ G.T, np.zeros((n, n)), np.eye(n) * np.abs(A).max()):
        assert np.sum((A - P) * (B - P)) <= tol(A) * max(1.0, np.linalg.norm(B)) * n
        assert np.linalg.norm(A - P) <= np.linalg.norm(A - B) + tol(A)


def test_project_psd_simple_cases():
    np.testing.assert_allclose(project_psd(np.diag([3.0, -2.0, 0.0])), np.diag([3.0, 0.0, 0.0]), atol=1e-15)
    G = np.random.default_rng(0).standard_normal((5, 3))
    psd = G @ G.T
    np.testing.assert_allclose(project_psd(psd), psd, atol=1e-12)
    np.testing.assert_allclose(project_psd(-psd), 0.0, atol=1e-12)
    A = np.array([[0.0, 1.0], [1.0, 0.0]])  # eigenvalues -1, 1
    np.testing.assert_allclose(project_psd(A), 0.5 * np.ones((2, 2)), atol=1e-15)


# -- PSDProjector ------------------------------------------------------------------------------


@SETTINGS
@given(st.lists(symmetric_matrices(max_n=6), min_size=1, max_size=4), st.booleans())
def test_projector_matches_project_psd_small(As, partial):
    n = As[0].shape[0]
    As = [A for A in As if A.shape[0] == n] or As[:1]
    projector = PSDProjector(n, partial=partial, min_partial_size=64)
    assert not projector.partial  # the partial path needs n >= 100
    for A in As:
        np.testing.assert_allclose(projector(A), project_psd(A), atol=tol(A))
    assert projector.full_calls == len(As) and projector.partial_calls == 0


@LARGE
@given(
    n=st.integers(100, 130),
    n_small=st.integers(1, 15),
    negative_side=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
    size=st.floats(0.0, 0.05),
    steps=st.integers(2, 4),
)
def test_projector_partial_path_on_nearby_matrices(n, n_small, negative_side, seed, size, steps):
    """Few negative (or few positive) eigenvalues, all at least 0.1 away from zero, and
    perturbations of spectral norm <= 0.05: the split never moves, so after the first (full)
    call every call takes the partial path, and each result is the exact projection."""
    n_negative = n_small if negative_side else n - n_small
    A0 = spectrum_matrix(n, n_negative, seed)
    projector = PSDProjector(n, partial=True, min_partial_size=64)
    assert projector.partial
    for k in range(steps):
        A = A0 + perturbation(n, seed + k + 1, size)
        P = projector(A)
        np.testing.assert_allclose(P, truncate(A), atol=tol(A))
        assert projector.n_positive == n - n_negative
    assert projector.full_calls == 1
    assert projector.partial_calls == steps - 1


@LARGE
@given(n=st.integers(100, 120), counts=st.lists(st.integers(0, 120), min_size=2, max_size=5),
       seed=st.integers(0, 2**32 - 1))
def test_projector_is_exact_whatever_the_sequence(n, counts, seed):
    """Arbitrary jumps of the spectral split: the partial path either applies or falls back to
    the full decomposition, and the result is always the projection."""
    projector = PSDProjector(n, partial=True, min_partial_size=64)
    for k, count in enumerate(counts):
        A = spectrum_matrix(n, min(count, n), seed + k, gap=1e-3)
        np.testing.assert_allclose(projector(A), truncate(A), atol=tol(A))
    assert projector.full_calls + projector.partial_calls == len(counts)
    assert projector.full_calls >= 1


def test_projector_partial_false_always_full():
    n = 110
    projector = PSDProjector(n, partial=False)
    A = spectrum_matrix(n, 4, 0)
    for k in range(3):
        B = A + perturbation(n, k, 0.01)
        np.testing.assert_allclose(projector(B), project_psd(B), atol=tol(B))
    assert projector.full_calls == 3 and projector.partial_calls == 0


def test_projector_fallback_when_split_moves():
    n = 120
    projector = PSDProjector(n, partial=True, min_partial_size=64)
    projector(spectrum_matrix(n, 3, 0))  # full; next block holds 3 + 8 = 11 eigenpairs
    A = spectrum_matrix(n, 20, 1)  # 20 negative: the block does not reach zero
    np.testing.assert_allclose(projector(A), truncate(A), atol=tol(A))
    assert projector.full_calls == 2 and projector.partial_calls == 0
    assert projector.n_positive == n - 20


def test_projector_semidefinite_inputs():
    n = 100
    G = np.random.default_rng(1).standard_normal((n, 10))
    psd = G @ G.T  # rank 10: 90 zero eigenvalues computed as +-1e-15
    projector = PSDProjector(n, partial=True, min_partial_size=64)
    for _ in range(3):
        np.testing.assert_allclose(projector(psd), psd, atol=tol(psd))
        np.testing.assert_allclose(projector(-psd), 0.0, atol=tol(psd))


@pytest.mark.skipif(not hasattr(linalg, "project_simplex"), reason="no project_simplex in this version")
@SETTINGS
@given(arrays(np.float64, st.integers(1, 12), elements=st.floats(-10, 10, allow_subnormal=False)))
def test_project_simplex(v):
    x = linalg.project_simplex(v)
    assert x.min() >= 0 and x.sum() == pytest.approx(1.0, abs=1e-12)
    # optimality: x = max(v - theta, 0) for one threshold theta
    support = x > 0
    theta = (v - x)[support]
    assert np.ptp(theta) <= 1e-9 * max(1.0, np.abs(v).max())
    assert np.all(v[~support] <= theta[0] + 1e-9 * max(1.0, np.abs(v).max()))
    np.testing.assert_allclose(linalg.project_simplex(x), x, atol=1e-12)  # idempotent


def test_project_simplex_rows_matches_the_vector_projection():
    from cvxclust.linalg import project_simplex, project_simplex_rows

    V = np.random.default_rng(3).normal(size=(7, 5))
    np.testing.assert_allclose(project_simplex_rows(V), np.array([project_simplex(v) for v in V]), atol=1e-14)


@SETTINGS
@given(st.integers(1, 30), st.integers(1, 40), st.sampled_from([1e-6, 1.0, 1e3]),
       st.sampled_from([1e-12, 1e-3, 10.0]), st.integers(0, 2**31 - 1))
def test_project_simplex_rows_warm_start_gives_the_same_projection(rows, cols, scale, shift, seed):
    """From the thresholds of a nearby matrix, or from arbitrary ones (above max(v), far below),
    the warm-started Newton method lands on the same projection, and returns thresholds that
    generate it."""
    from cvxclust.linalg import project_simplex, project_simplex_rows

    rng = np.random.default_rng(seed)
    V = scale * rng.normal(size=(rows, cols))
    _, theta = project_simplex_rows(V, return_thresholds=True)
    V2 = V + shift * scale * rng.normal(size=V.shape)
    expected = np.array([project_simplex(v) for v in V2])
    starts = [theta, np.full(rows, V2.max() + 1.0), np.full(rows, V2.min() - 1e3 * scale),
              scale * rng.normal(size=rows)]
    for start in starts:
        P, th = project_simplex_rows(V2, start=start, return_thresholds=True)
        np.testing.assert_allclose(P, expected, atol=1e-12 * max(1.0, scale))
        np.testing.assert_array_equal(P, np.maximum(V2 - th[:, None], 0.0))


@SETTINGS
@given(st.integers(1, 40), st.integers(1, 60), st.sampled_from([1e-6, 1e-2, 1.0, 1e3]),
       st.integers(0, 2**31 - 1), st.booleans())
def test_project_simplex_rows_newton_matches_the_sort(rows, cols, scale, seed, ties):
    """Newton's method on the threshold against the sort-based projection (and its fallback)."""
    from cvxclust.linalg import project_simplex, project_simplex_rows

    rng = np.random.default_rng(seed)
    V = scale * rng.normal(size=(rows, cols))
    if ties:  # repeated values and near-simplex rows, as in an M-step
        V = np.round(V, 1) if scale >= 1 else np.abs(V) / np.abs(V).sum(axis=1, keepdims=True) + V
    expected = np.array([project_simplex(v) for v in V])
    for max_newton in (30, 1):  # 1: most rows take the sort-based fallback
        P = project_simplex_rows(V, max_newton=max_newton)
        np.testing.assert_allclose(P, expected, atol=1e-12 * max(scale, 1.0))
        assert P.min() >= 0
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)


def test_scipy_blas_threads_limits_only_scipys_own_blas_and_restores():
    import os

    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS)
    from threadpoolctl import ThreadpoolController

    def counts():
        return {lib.filepath: lib.num_threads for lib in ThreadpoolController().lib_controllers
                if lib.user_api == "blas"}

    def is_scipys(path):
        return os.path.basename(os.path.dirname(path)).startswith("scipy")

    with threadpool_limits(limits=2, user_api="blas"):
        before = counts()
        with linalg.scipy_blas_threads(1):
            inside = counts()
        assert counts() == before
    for path, n in inside.items():
        assert n == (min(1, before[path]) if is_scipys(path) else before[path])


def test_alternating_projections_reach_the_intersection():
    """Between a hyperplane and the nonnegative orthant: the start comes first, every point is in
    the first set, the violation of the second vanishes, and no point of the intersection gets
    farther (Fejer monotone), for the relaxed and the plain rounds alike."""
    rng = np.random.default_rng(0)
    a = rng.uniform(0.5, 1.5, 8)

    def hyperplane(x):
        return x - (a @ x - 1.0) / (a @ a) * a

    start = hyperplane(rng.standard_normal(8))
    inside = np.full(8, 1.0 / a.sum())  # in both sets
    for relaxation in (1.0, 1.9):
        points = list(itertools.islice(linalg.alternating_projections(start, hyperplane, lambda x: np.maximum(x, 0.0),
                                                                      relaxation), 60))
        assert points[0] is start
        assert all(abs(a @ x - 1.0) <= 1e-12 for x in points)
        distances = [np.linalg.norm(x - inside) for x in points]
        assert all(b <= c + 1e-12 for c, b in zip(distances, distances[1:]))
        assert -points[-1].min() <= 1e-8 < -points[0].min()
