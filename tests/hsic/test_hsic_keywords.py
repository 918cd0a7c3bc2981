"""The keywords of :mod:`cvxclust.hsic`'s public functions: ``normalization`` (None, ``"l2"``;
``"l1"`` for ``partition_matrix`` only), ``random_state``, ``n_init``, and the old spellings
``normalized``, ``rng``, ``n_starts`` that still work with a ``FutureWarning``."""

from __future__ import annotations

import numpy as np
import pytest

from cvxclust.hsic import align_clusters, cccp, greedy, nmf, partition_matrix, refine, round_best, spectral
from cvxclust.kernels import center, rbf
from cvxclust.structures import chain, output_kernel

A3 = output_kernel(chain(3))


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(4.0 * k, 1.0, size=(6, 2)) for k in range(3)])
    return center(rbf(X)), np.repeat(np.arange(3), 6)


def relaxed_factor(K, y):
    return partition_matrix(y, 3, normalization="l2").T.reshape(-1, 1) + 0.01


CALLS = {
    "greedy": lambda K, y, **kw: greedy(K, A3, random_state=0, **kw).extras["labels"],
    "nmf": lambda K, y, **kw: nmf(K, A3, random_state=0, **kw).objective,
    "spectral": lambda K, y, **kw: spectral(K, A3, random_state=0, **kw).objective,
    "cccp": lambda K, y, **kw: cccp(K, A3, random_state=0, **kw).objective,
    "round_best": lambda K, y, **kw: round_best(relaxed_factor(K, y), K, A3, random_state=0, **kw)[0],
    "refine": lambda K, y, **kw: refine(K, A3, (y + 1) % 3, random_state=0, **kw)[1],
    "align_clusters": lambda K, y, **kw: align_clusters(K, A3, (y + 1) % 3, random_state=0, **kw),
}


@pytest.mark.parametrize("name", CALLS)
@pytest.mark.parametrize(("old", "new"), [(True, "l2"), (False, None)])
def test_normalized_warns_and_means_its_normalization(problem, name, old, new):
    K, y = problem
    expected = CALLS[name](K, y, normalization=new)
    with pytest.warns(FutureWarning, match=f"{name}: normalized= is renamed normalization="):
        got = CALLS[name](K, y, normalized=old)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", CALLS)
def test_normalization_is_checked(problem, name):
    K, y = problem
    with pytest.raises(ValueError, match="normalization='l1' is not supported; use one of None, 'l2'"):
        CALLS[name](K, y, normalization="l1")
    with pytest.raises(ValueError, match="'normalization' parameter"):
        CALLS[name](K, y, normalization=True)
    with pytest.raises(TypeError, match="pass normalization= alone"):
        CALLS[name](K, y, normalization=None, normalized=True)
    with pytest.raises(TypeError, match="unexpected keyword argument 'normalise'"):
        CALLS[name](K, y, normalise=True)


@pytest.mark.parametrize("function", [refine, align_clusters])
def test_rng_and_n_starts_are_renamed(problem, function):
    K, y = problem
    start = (y + 1) % 3
    expected = function(K, A3, start, n_init=3, random_state=5)
    with pytest.warns(FutureWarning) as caught:
        got = function(K, A3, start, n_starts=3, rng=5)
    assert {str(w.message).split(" (")[0] for w in caught} == {
        f"{function.__name__}: n_starts= is renamed n_init=", f"{function.__name__}: rng= is renamed random_state="}
    assert caught[0].filename == __file__  # the warning points at the caller
    if function is refine:
        np.testing.assert_array_equal(got[0], expected[0])
    else:
        np.testing.assert_array_equal(got, expected)
    with pytest.raises(TypeError, match="pass random_state= alone"):
        function(K, A3, start, rng=1, random_state=2)
    with pytest.raises(TypeError, match="pass n_init= alone"):
        function(K, A3, start, n_starts=1, n_init=2)


@pytest.mark.parametrize(("normalization", "column_sums", "column_norms"), [
    (None, [2, 1, 3], [np.sqrt(2), 1, np.sqrt(3)]),
    ("l1", [1, 1, 1], [1 / np.sqrt(2), 1, 1 / np.sqrt(3)]),
    ("l2", [np.sqrt(2), 1, np.sqrt(3)], [1, 1, 1]),
])
def test_partition_matrix_normalizations(normalization, column_sums, column_norms):
    P = partition_matrix([0, 0, 1, 2, 2, 2], 3, normalization=normalization)
    np.testing.assert_allclose(P.sum(axis=0), column_sums)
    np.testing.assert_allclose(np.linalg.norm(P, axis=0), column_norms)
    with pytest.raises(ValueError, match="'normalization' parameter"):
        partition_matrix([0, 1], 2, normalization="l3")
