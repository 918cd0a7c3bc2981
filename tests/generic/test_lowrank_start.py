"""The spectral start of the low-rank method (:mod:`cvxclust.generic.lowrank_start`): the factor
meets the k-means SDP's rows and trace exactly and is nonnegative, the multipliers leave it
stationary, a solve from it is certified and agrees with Clarabel, the option is checked.  The
solves hold ``X >= 0`` by the nonnegative factor (``nonnegative="factor"``), whose start this is
(with the dense multiplier in ``test_lowrank_multiplier.py``)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from clarabel_checks import REFERENCE_ACCURACY, check_bound_side, clarabel_solution
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic.factor_rows import FactorRows
from cvxclust.generic.lowrank_form import lowrank_form
from cvxclust.generic.lowrank_start import spectral_applies, spectral_factor, stationary_multipliers


def _form(problem):
    form = cvxclust.generic.CvxpyRelaxation(problem).standard_form()
    return form, lowrank_form(form)


def test_start_meets_the_rows_and_the_trace_and_is_nonnegative():
    problem = pc.kmeans_sdp(pc.blobs_kernel(40, 4, n_features=3, random_state=1), 4)
    form, kind = _form(problem)
    assert spectral_applies(kind)
    V = spectral_factor(form.cost.matmul, form.n, 4, np.random.default_rng(0))
    assert V.shape == (40, 4) and V.min() >= 0.0
    np.testing.assert_allclose(np.sum(V * V), 4.0, rtol=1e-14)
    np.testing.assert_allclose(V @ V.sum(axis=0), np.ones(40), rtol=1e-14)
    rows = FactorRows(form.rows)
    a = rows.apply(V)
    assert np.all(a >= form.lo - 1e-12 * np.maximum(np.abs(form.lo), 1)) and np.all(
        a <= form.hi + 1e-12 * np.maximum(np.abs(form.hi), 1))
    # one column a part: each index in exactly one
    assert np.array_equal(np.count_nonzero(V, axis=1), np.ones(40))


def test_multipliers_make_the_gradient_vanish_on_the_support():
    """At well separated blobs the clustering is the SDP's solution: its factor is stationary on
    its support for the least-squares multipliers (and not for zero multipliers)."""
    problem = pc.kmeans_sdp(pc.blobs_kernel(30, 3, random_state=5), 3)
    form, _ = _form(problem)
    rows = FactorRows(form.rows)
    V = spectral_factor(form.cost.matmul, form.n, 3, np.random.default_rng(0))
    y = stationary_multipliers(rows, form.cost.matmul, V)
    G = form.cost.matmul(V) - rows.adjoint_matmul(y, V)
    scale = np.abs(form.cost.matmul(V)).max()
    assert np.abs(G[V > 0]).max() <= 1e-8 * scale
    assert np.abs(form.cost.matmul(V)[V > 0]).max() >= 1e-2 * scale


@pytest.mark.parametrize("data", [(30, 3, 10, 5), (40, 4, 10, 1)])
def test_spectral_start_certifies_and_agrees_with_clarabel(data):
    n, k, features, seed = data
    problem = pc.kmeans_sdp(pc.blobs_kernel(n, k, n_features=features, random_state=seed), k)
    optimum, _ = clarabel_solution(problem)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", start="spectral", nonnegative="factor", tol=1e-7,
                                residual_tol=1e-9)
    assert result.status == "optimal" and result.relative_gap <= 1e-7
    assert abs(result.objective - optimum) <= (1e-7 + REFERENCE_ACCURACY) * max(abs(optimum), 1.0)
    check_bound_side(problem, result.dual_bound, optimum)


def test_start_option_is_checked():
    kmeans = pc.kmeans_sdp(pc.blobs_kernel(20, 2, random_state=0), 2)
    with pytest.raises(ValueError, match="start"):
        cvxclust.solve(kmeans, method="lowrank", start="kmeans")
    max_cut = pc.max_cut(pc.random_graph(20, 4, random_state=0))
    with pytest.raises(ValueError, match="start='spectral'"):
        cvxclust.solve(max_cut, method="lowrank", start="spectral")
    # the default takes the random start where the spectral one does not apply
    assert cvxclust.solve(max_cut, method="lowrank", tol=1e-6).status == "optimal"


@pytest.mark.parametrize("threshold, spectral", [(30, True), (31, False)])
def test_auto_start_is_spectral_from_the_threshold_order(monkeypatch, threshold, spectral):
    """``start="auto"`` takes the spectral start where n >= SPECTRAL_MIN_ORDER (n = 30 here, the
    threshold lowered to 30 and 31), the random one below."""
    from cvxclust.generic import lowrank

    calls = []
    real = lowrank.spectral_factor

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(lowrank, "SPECTRAL_MIN_ORDER", threshold)
    monkeypatch.setattr(lowrank, "spectral_factor", spy)
    problem = pc.kmeans_sdp(pc.blobs_kernel(30, 3, random_state=5), 3)
    result = cvxclust.solve(problem, method="lowrank", tol=1e-6)
    assert len(calls) == (1 if spectral else 0)
    assert result.status == "optimal"
    # where the spectral start does not apply (max-cut), auto takes the random one whatever the order
    calls.clear()
    cvxclust.solve(pc.max_cut(pc.random_graph(30, 4, random_state=0)), method="lowrank", tol=1e-4)
    assert not calls


def test_random_start_stalls_where_the_spectral_one_certifies():
    """Ten well separated blobs at n = 60: from a random factor the augmented Lagrangian heads for a
    local minimum of the factored problem (its gap still about 1 after six iterations, and 0.5 after
    thirty, the rank grown to 36), while the spectral start is the SDP's solution and is certified
    within four."""
    problem = pc.kmeans_sdp(pc.blobs_kernel(60, 10, n_features=10, random_state=1), 10)
    options = {"tol": 1e-6, "residual_tol": 1e-8, "max_iter": 6, "nonnegative": "factor"}
    spectral = cvxclust.solve(problem, method="lowrank", start="spectral", **options)
    assert spectral.status == "optimal" and spectral.relative_gap <= 1e-6
    with pytest.warns(ConvergenceWarning):
        random = cvxclust.solve(problem, method="lowrank", start="random", **options)
    assert random.status == "max_iter" and random.relative_gap > 0.1
    assert random.objective < spectral.objective - 1e-3 * abs(spectral.objective)


def test_a_first_check_that_certifies_runs_lanczos_once():
    """At the spectral start of well separated blobs the first check certifies: the slack there is
    singular (S V = 0), its computed smallest eigenvalue a rounding below zero, and the second
    Lanczos run after the multipliers' trace shift (for a clearly indefinite slack) is not made."""
    problem = pc.kmeans_sdp(pc.blobs_kernel(60, 4, n_features=10, random_state=2), 4)
    result = cvxclust.solve(problem, method="lowrank", start="spectral", nonnegative="factor", tol=1e-6,
                            residual_tol=1e-8)
    assert result.status == "optimal" and result.relative_gap <= 1e-6 and result.iterations == 1
    assert result.history[-1]["lambda_min"] < 0
    assert result.extras["eigsh"] == 1
