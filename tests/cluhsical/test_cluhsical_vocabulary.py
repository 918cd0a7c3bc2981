"""``CLUHSICAL``'s vocabulary: ``relaxation`` and ``method``, ``refine_n_init``, ``n_clusters``
from the structure, and the old spellings that still work with a ``FutureWarning``."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import clone

from test_cluhsical_estimator import blobs_on_a_line, fit_quietly as fit

from cvxclust import CLUHSICAL
from cvxclust.structures import chain, tree


def blobs(c=3, per_cluster=5):
    return blobs_on_a_line(per_cluster=per_cluster, c=c)[0]


@pytest.mark.parametrize(("structure", "c"), [(chain(3), 3), (tree([2, 2]), 4), (None, 8)])
def test_n_clusters_comes_from_the_structure(structure, c):
    X = blobs(c=4, per_cluster=4)
    est = CLUHSICAL(structure=structure, n_init=2, random_state=0).fit(X)
    assert est.output_kernel_.shape == (c, c) and est.n_clusters is None
    np.testing.assert_array_equal(CLUHSICAL(c, structure=structure, n_init=2, random_state=0).fit(X).labels_,
                                  est.labels_)


@pytest.mark.parametrize(("relaxation", "method", "ran"), [
    ("sdp", "auto", "admm"), ("sdp", "admm", "admm"), ("lowrank", "auto", "lowrank"),
])
def test_relaxation_and_method_choose_what_runs(relaxation, method, ran):
    est = fit(CLUHSICAL(structure=chain(3), relaxation=relaxation, method=method, refine=False, random_state=0),
              blobs())
    assert est.relaxation_result_.method == ran and est.result_.method == "cluhsical-greedy"


@pytest.mark.parametrize("old", ["sdp", "lowrank"])
def test_old_method_spellings_warn_and_give_the_same_fit(old):
    X = blobs()
    expected = fit(CLUHSICAL(structure=chain(3), relaxation=old, random_state=0), X)
    with pytest.warns(FutureWarning, match=f"method='{old}' is the old spelling of relaxation='{old}'"):
        got = fit(CLUHSICAL(structure=chain(3), method=old, random_state=0), X)
    np.testing.assert_array_equal(got.labels_, expected.labels_)
    assert got.objective_ == expected.objective_


def test_refine_starts_warns_and_gives_the_same_fit():
    X = blobs()
    expected = CLUHSICAL(structure=chain(3), refine_n_init=2, n_init=2, random_state=0).fit(X)
    with pytest.warns(FutureWarning, match="refine_starts= is renamed refine_n_init="):
        got = CLUHSICAL(structure=chain(3), refine_starts=2, n_init=2, random_state=0).fit(X)
    np.testing.assert_array_equal(got.labels_, expected.labels_)
    with pytest.raises(TypeError, match="refine_n_init= alone"):
        CLUHSICAL(structure=chain(3), refine_starts=2, refine_n_init=3).fit(X)


def test_refine_starts_survives_get_params_clone_and_set_params():
    est = CLUHSICAL(structure=chain(3), refine_starts=2)
    assert clone(est).refine_starts == 2 and CLUHSICAL().get_params()["refine_starts"] == "deprecated"
    assert clone(est).set_params(refine_starts=1).refine_starts == 1


@pytest.mark.parametrize("key", ["n_clusters", "n_init", "random_state", "normalization", "known"])
def test_solver_options_may_not_set_what_the_estimator_sets(key):
    with pytest.raises(ValueError, match=f"sets '{key}', which the estimator sets itself"):
        CLUHSICAL(structure=chain(3), relaxation="lowrank", solver_options={key: 1}).fit(blobs())
