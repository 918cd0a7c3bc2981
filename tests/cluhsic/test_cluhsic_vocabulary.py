"""``CLUHSIC``'s vocabulary: ``relaxation`` (the problem) and ``method`` (the algorithm),
``normalization``, ``refine_n_init``, ``n_clusters`` from the structure, and the old spellings
(``method=`` naming a relaxation, ``normalized``, ``refine_starts``) that still work with a
``FutureWarning``."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning

from cvxclust import CLUHSIC
from cvxclust.structures import chain, output_kernel, tree


def blobs(c=3, per_cluster=5, seed=0):
    rng = np.random.default_rng(seed)
    return np.concatenate([rng.normal(10.0 * k, 0.5, size=(per_cluster, 2)) for k in range(c)])


def fit(est, X):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return est.fit(X)


@pytest.mark.parametrize(("params", "c"), [
    ({"structure": chain(3)}, 3),
    ({"structure": tree([2, 2])}, 4),  # the user need not count the leaves
    ({"output_kernel": output_kernel(chain(3))}, 3),
    ({}, 8),
])
def test_n_clusters_comes_from_the_structure(params, c):
    X = blobs(c=4, per_cluster=4)
    est = CLUHSIC(refine=False, certify=False, random_state=0, **params).fit(X)
    assert est.output_kernel_.shape == (c, c) and est.n_clusters is None
    assert set(est.labels_) <= set(range(c))
    given = CLUHSIC(c, refine=False, certify=False, random_state=0, **params).fit(X)
    np.testing.assert_array_equal(given.labels_, est.labels_)


@pytest.mark.parametrize(("relaxation", "method", "ran"), [
    (None, "auto", "greedy"), (None, "greedy", "greedy"), (None, "nmf", "nmf"),
    ("spectral", "auto", "spectral"), ("spectral", "spectral", "spectral"), ("spectral", "cccp", "cccp"),
    ("sdp", "auto", "admm"), ("sdp", "admm", "admm"), ("lowrank", "auto", "lowrank"),
])
def test_relaxation_and_method_choose_what_runs(relaxation, method, ran):
    est = fit(CLUHSIC(structure=chain(3), relaxation=relaxation, method=method, refine=False, random_state=0),
              blobs())
    assert est.result_.method == ran


@pytest.mark.parametrize(("old", "new"), [
    ("sdp", {"relaxation": "sdp"}), ("lowrank", {"relaxation": "lowrank"}),
    ("spectral", {"relaxation": "spectral"}), ("cccp", {"relaxation": "spectral", "method": "cccp"}),
])
def test_old_method_spellings_warn_and_give_the_same_fit(old, new):
    X = blobs()
    expected = fit(CLUHSIC(structure=chain(3), random_state=0, **new), X)
    with pytest.warns(FutureWarning, match=f"method='{old}' is the old spelling of relaxation="):
        got = fit(CLUHSIC(structure=chain(3), method=old, random_state=0), X)
    np.testing.assert_array_equal(got.labels_, expected.labels_)
    assert got.objective_ == expected.objective_ and got.result_.method == expected.result_.method


@pytest.mark.parametrize(("old", "new"), [
    ({"normalized": False}, {"normalization": None}),
    ({"normalized": True}, {"normalization": "l2"}),
    ({"refine_starts": 2}, {"refine_n_init": 2}),
])
def test_renamed_keywords_warn_and_give_the_same_fit(old, new):
    X = blobs()
    expected = CLUHSIC(structure=chain(3), random_state=0, **new).fit(X)
    with pytest.warns(FutureWarning, match=f"{next(iter(old))}= is renamed {next(iter(new))}="):
        got = CLUHSIC(structure=chain(3), random_state=0, **old).fit(X)
    np.testing.assert_array_equal(got.labels_, expected.labels_)
    assert got.objective_ == expected.objective_


@pytest.mark.parametrize("params", [
    {"normalized": True, "normalization": None},
    {"refine_starts": 2, "refine_n_init": 3},
])
def test_old_and_new_spelling_together_is_a_type_error(params):
    with pytest.raises(TypeError, match="alone"):
        CLUHSIC(structure=chain(3), **params).fit(blobs())


def test_old_keywords_survive_get_params_clone_and_set_params():
    est = CLUHSIC(structure=chain(3), normalized=False, refine_starts=2)
    assert est.get_params()["normalized"] is False and est.get_params()["refine_starts"] == 2
    copy = clone(est)
    assert copy.normalized is False and copy.refine_starts == 2
    assert clone(CLUHSIC()).get_params()["normalized"] == "deprecated"
    copy.set_params(refine_starts=3, normalized=True)
    assert copy.refine_starts == 3 and copy.normalized is True
    with pytest.warns(FutureWarning):
        copy.fit(blobs())


def test_fit_leaves_its_parameters_as_given():
    est = CLUHSIC(structure=chain(3), method="sdp", normalized=True, random_state=0)
    with pytest.warns(FutureWarning):
        fit(est, blobs())
    assert est.method == "sdp" and est.relaxation is None and est.normalized is True and est.n_clusters is None


def test_counting_the_clusters_leaves_the_structure_untouched():
    """networkx caches views in a graph on first use: n_clusters=None counts the clusters of a
    copy, so fit does not change the user's parameter."""
    import joblib

    G = tree([2, 2])
    before = joblib.hash(G)
    CLUHSIC(structure=G, refine=False, random_state=0).fit(blobs(c=4, per_cluster=3))
    assert joblib.hash(G) == before
