"""The vocabulary of the ssc family: ``relaxation`` is which problem, ``method`` which algorithm;
the old spellings (``normalization=``, ``normalize(K, method=<relaxation>)``, ``solver=``,
``NORMALIZATIONS``) still work with a ``FutureWarning``; one ``tol`` default for the solvers."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from ssc_helpers import data, kernel

import cvxclust.ssc
from cvxclust import SemidefiniteSpectralClustering
from cvxclust.ssc import RELAXATIONS, FrobeniusDS, FrobeniusPSD, PengWei, normalize
from cvxclust.ssc._admm import ADMM
from cvxclust.ssc._dual_newton import DualNewton
from cvxclust.ssc._lagrange_dual import LDSSC1, LDSSC2
from cvxclust.ssc._successive_projections import SuccessiveProjections

SOLVED = {"frobenius": FrobeniusDS, "frobenius-psd": FrobeniusPSD, "peng-wei": PengWei}


@pytest.fixture(scope="module")
def X():
    return data("iris", 30)[0]


def labels_and_objective(est):
    return est.labels_, None if est.result_ is None else est.result_.objective


def test_relaxation_and_method_names_do_not_overlap():
    """A relaxation's name passed as ``method`` is unambiguously the old spelling."""
    for cls in SOLVED.values():
        assert not set(RELAXATIONS) & {"auto", *cls.methods()}


@pytest.mark.parametrize("relaxation", ["frobenius", "none"])
def test_normalization_is_the_old_spelling_of_relaxation(X, relaxation):
    new = SemidefiniteSpectralClustering(3, relaxation=relaxation, random_state=0)
    old = SemidefiniteSpectralClustering(3, normalization=relaxation, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        new.fit(X)
    with pytest.warns(FutureWarning, match=r"normalization= is renamed relaxation="):
        old.fit(X)
    np.testing.assert_array_equal(old.labels_, new.labels_)
    assert labels_and_objective(old)[1] == labels_and_objective(new)[1]


def test_old_keyword_survives_get_params_clone_and_set_params(X):
    est = SemidefiniteSpectralClustering(3, normalization="frobenius", random_state=0)
    assert est.get_params()["normalization"] == "frobenius"
    copy = clone(est)
    assert copy.normalization == "frobenius" and copy.relaxation == "frobenius-psd"
    with pytest.warns(FutureWarning, match="relaxation="):
        copy.fit(X)
    assert copy.result_.method == "dual-newton" and "psd" not in copy.result_.residuals
    default = SemidefiniteSpectralClustering()
    assert clone(default).get_params()["normalization"] == default.normalization
    with pytest.warns(FutureWarning, match="relaxation="):
        SemidefiniteSpectralClustering(3, random_state=0).set_params(normalization="none").fit(X)


def test_old_and_new_keyword_together_is_a_type_error(X):
    est = SemidefiniteSpectralClustering(3, relaxation="frobenius", normalization="frobenius-psd")
    with pytest.raises(TypeError, match="relaxation"):
        est.fit(X)


@pytest.mark.parametrize(("params", "name"), [({"normalization": "sinkhorn"}, "normalization"),
                                              ({"relaxation": "sinkhorn"}, "relaxation"),
                                              ({"relaxation": "none", "method": "admm"}, "method")])
def test_bad_values_name_the_parameter(X, params, name):
    with pytest.raises(ValueError, match=rf"'{name}' parameter"):
        SemidefiniteSpectralClustering(3, **params).fit(X)


@pytest.mark.parametrize(("params", "key"), [
    ({"relaxation": "peng-wei", "solver_options": {"n_clusters": 2}}, "n_clusters"),
    ({"solver_options": {"random_state": 0}}, "random_state"),
    ({"solver_options": {"method": "admm"}}, "method"),
    ({"solver_options": {"relaxation": "frobenius"}}, "relaxation"),
    ({"solver_options": {"return_result": False}}, "return_result"),
    ({"solver_options": {"solver": "admm"}}, "solver"),
])
def test_solver_options_the_estimator_sets_are_refused(X, params, key):
    """``n_clusters`` in solver_options was overridden by the estimator's without a word."""
    with pytest.raises(ValueError, match=rf"solver_options.*'{key}'"):
        SemidefiniteSpectralClustering(3, **params).fit(X)


def test_the_reference_takes_its_cvxpy_solver_in_solver_options():
    X = data("iris", 12)[0]
    est = SemidefiniteSpectralClustering(3, relaxation="frobenius", method="reference",
                                         solver_options={"solver": "CLARABEL"}, random_state=0).fit(X)
    assert est.result_.method.startswith("reference")


@pytest.mark.parametrize("method", FrobeniusDS.methods())
def test_the_estimator_can_choose_every_method_of_its_relaxation(method):
    X = data("iris", 12)[0]
    est = SemidefiniteSpectralClustering(3, relaxation="frobenius", method=method, random_state=0).fit(X)
    assert est.result_.method.startswith(method)
    assert est.result_.max_residual <= 1e-5


def test_normalize_method_is_the_solver_and_the_old_spellings_warn():
    K = kernel("iris", 20, 1.0)
    new = normalize(K, relaxation="frobenius", method="successive-projections")
    with pytest.warns(FutureWarning, match=r"method= is renamed relaxation="):
        old = normalize(K, method="frobenius")
    np.testing.assert_array_equal(old, normalize(K, "frobenius"))
    with pytest.warns(FutureWarning, match=r"solver= is renamed method="):
        old = normalize(K, "frobenius", solver="successive-projections")
    np.testing.assert_array_equal(old, new)
    with pytest.raises(TypeError, match="relaxation"):
        normalize(K, relaxation="frobenius", method="ratio-cut")
    with pytest.raises(TypeError, match="method"):
        normalize(K, "frobenius", "admm", solver="successive-projections")
    with pytest.raises(ValueError, match=r"'method' parameter.*relaxation='none'"):
        normalize(K, "none", "admm")
    with pytest.raises(ValueError, match=r"'method' parameter of normalize"):
        normalize(K, "frobenius", "ld-ssc1")  # a method of (7), not of (6)


def test_normalizations_is_the_old_name_of_relaxations():
    assert "NORMALIZATIONS" not in cvxclust.ssc.__all__
    with pytest.warns(FutureWarning, match=r"cvxclust.ssc.NORMALIZATIONS is renamed cvxclust.ssc.RELAXATIONS"):
        assert cvxclust.ssc.NORMALIZATIONS == RELAXATIONS
    with pytest.warns(FutureWarning):
        from cvxclust.ssc import NORMALIZATIONS  # noqa: F401
    with pytest.raises(AttributeError):
        cvxclust.ssc.NOT_A_NAME  # noqa: B018


@pytest.mark.parametrize("solver", [DualNewton, ADMM, LDSSC1, LDSSC2, SuccessiveProjections])
def test_certified_solvers_default_to_the_common_tolerances(solver):
    """One default per word: tol = residual_tol = 1e-6 (the dual Newton had 1e-7)."""
    assert solver.parameters["tol"].default == 1e-6
    assert solver.parameters["residual_tol"].default == 1e-6
