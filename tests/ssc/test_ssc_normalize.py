"""``cvxclust.ssc.normalize``: the paper's NO / RC / NC / FSC / SSC normalizations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from ssc_helpers import kernel, reference

from cvxclust import Result
from cvxclust.ssc import RELAXATIONS, FrobeniusDS, FrobeniusPSD, PengWei, normalize

INSTANCE = ("iris", 40, 1.0)  # the DS solution is not p.s.d. here: (7) differs from (6)


@pytest.fixture
def K():
    return np.array(kernel(*INSTANCE))


def assert_doubly_stochastic(F, atol=1e-6):
    n = F.shape[0]
    np.testing.assert_allclose(F, F.T, atol=1e-12)
    np.testing.assert_allclose(F @ np.ones(n), np.ones(n), atol=atol)
    assert F.min() >= -atol


def test_normalizations_are_the_five_of_the_paper_and_peng_wei():
    assert set(RELAXATIONS) == {"none", "ratio-cut", "normalized-cut", "frobenius", "frobenius-psd", "peng-wei"}


def test_peng_wei_needs_the_number_of_clusters(K):
    with pytest.raises(TypeError, match="n_clusters"):
        normalize(K, "peng-wei")


def test_peng_wei_is_a_doubly_stochastic_psd_matrix_of_trace_k_and_agrees_with_clarabel(K):
    K_hat, result = normalize(K, "peng-wei", n_clusters=3, return_result=True)
    assert result.method == "generic" and result.status == "optimal"
    assert np.trace(K_hat) == pytest.approx(3.0, abs=1e-9)
    assert result.max_residual <= 1e-6  # certified: nonnegative up to residual_tol
    assert np.linalg.eigvalsh(K_hat)[0] >= -1e-9 and K_hat.min() >= -1e-6 * np.abs(K_hat).max()
    np.testing.assert_allclose(K_hat @ np.ones(len(K)), 1.0, atol=1e-9)
    reference = PengWei(K, 3).solve("reference")
    assert result.objective == pytest.approx(reference.objective, rel=1e-6)
    assert result.dual_bound >= reference.objective - 1e-7 * abs(reference.objective)


@pytest.mark.parametrize("relaxation", RELAXATIONS)
def test_every_relaxation_returns_a_symmetric_matrix(K, relaxation):
    K_before = K.copy()
    options = {"n_clusters": 3} if relaxation == "peng-wei" else {}
    K_hat, result = normalize(K, relaxation, return_result=True, **options)
    assert K_hat.shape == K.shape
    assert np.all(np.isfinite(K_hat))
    np.testing.assert_allclose(K_hat, K_hat.T, atol=1e-12)
    np.testing.assert_array_equal(K, K_before)  # input untouched
    if relaxation in ("frobenius", "frobenius-psd", "peng-wei"):
        assert isinstance(result, Result) and result.status == "optimal"
        np.testing.assert_array_equal(result.X, K_hat)
    else:
        assert result is None
    # the default return is the matrix alone, the same one
    np.testing.assert_allclose(normalize(K, relaxation, **options), K_hat, atol=1e-12)


def test_default_relaxation_is_frobenius_psd(K):
    F = normalize(K)
    assert np.linalg.eigvalsh(F)[0] >= -1e-9
    np.testing.assert_allclose(F, normalize(K, "frobenius-psd"), atol=1e-12)


def test_none_returns_K(K):
    K_hat = normalize(K, "none")
    np.testing.assert_array_equal(K_hat, K)
    K_hat[0, 0] = -5.0  # a copy, not a view of the input
    assert K[0, 0] == 1.0


def test_ratio_cut_is_K_minus_D_plus_I(K):
    K_hat = normalize(K, "ratio-cut")
    np.testing.assert_allclose(K_hat, K - np.diag(K.sum(axis=1)) + np.eye(len(K)), atol=1e-14)
    np.testing.assert_allclose(K_hat.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(K_hat.sum(axis=0), 1.0, atol=1e-12)
    # off-diagonal entries untouched
    off = ~np.eye(len(K), dtype=bool)
    np.testing.assert_array_equal(K_hat[off], K[off])


def test_normalized_cut_is_D_half_K_D_half(K):
    d = K.sum(axis=1)
    expected = K / np.sqrt(np.outer(d, d))
    np.testing.assert_allclose(normalize(K, "normalized-cut"), expected, rtol=1e-13)
    # the largest eigenvalue of D^-1/2 K D^-1/2 is 1, eigenvector D^1/2 1
    w, V = np.linalg.eigh(expected)
    assert w[-1] == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(expected @ np.sqrt(d), np.sqrt(d), rtol=1e-12)


def test_normalized_cut_iterated_is_doubly_stochastic(K):
    """Repeated symmetric scaling (symmetric Sinkhorn) converges to the doubly stochastic
    matrix D K D of the same pattern, nearest in relative entropy."""
    single = normalize(K, "normalized-cut")
    assert np.abs(single.sum(axis=1) - 1).max() > 1e-2  # one step is not enough ...
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        K_hat = normalize(K, "normalized-cut", iterate=True)
    assert_doubly_stochastic(K_hat, atol=1e-9)  # ... iterating is
    # it is a diagonal scaling of K: K_hat = diag(s) K diag(s), s > 0
    s = np.sqrt(np.diag(K_hat) / np.diag(K))
    np.testing.assert_allclose(K_hat, s[:, None] * K * s[None, :], rtol=1e-8)
    # a tolerance that cannot be met in the given iterations warns
    with pytest.warns(ConvergenceWarning):
        normalize(K, "normalized-cut", iterate=True, max_iter=2, tol=1e-14)


@pytest.mark.parametrize("option", [{"max_iter": 0}, {"tol": -1.0}])
def test_normalized_cut_bad_options(K, option):
    with pytest.raises(ValueError, match=next(iter(option))):
        normalize(K, "normalized-cut", iterate=True, **option)


@pytest.mark.parametrize(("relaxation", "cls"), [("frobenius", FrobeniusDS), ("frobenius-psd", FrobeniusPSD)])
def test_frobenius_normalizations_match_the_reference(K, relaxation, cls):
    # a certified relative gap g puts X within sqrt(2 g f) of the optimum (the objective is
    # 1-strongly convex): 1e-7, below the default 1e-6, for the distance checked below
    K_hat, result = normalize(K, relaxation, return_result=True, tol=1e-7, residual_tol=1e-7)
    ref = reference(cls.name, *INSTANCE)
    assert_doubly_stochastic(K_hat)
    if relaxation == "frobenius-psd":
        assert np.linalg.eigvalsh(K_hat)[0] >= -1e-10
    assert result.method == "dual-newton"  # method="auto"
    assert abs(result.objective - ref.objective) <= 1e-6 * abs(ref.objective)
    assert np.linalg.norm(K_hat - ref.X) <= 1e-3 * np.linalg.norm(ref.X)
    assert result.objective == pytest.approx(0.5 * np.sum((K_hat - K) ** 2), rel=1e-12)


@pytest.mark.parametrize(("relaxation", "method"), [("frobenius", "successive-projections"),
                                                    ("frobenius-psd", "ld-ssc2"), ("frobenius-psd", "reference")])
def test_frobenius_normalizations_pass_method_and_options(K, relaxation, method):
    tight = {"tol": 1e-7, "residual_tol": 1e-7}  # for the distance checked (the default is 1e-6)
    K_hat, result = normalize(K, relaxation, method, return_result=True, **({} if method == "reference" else tight))
    assert result.method.startswith(method)
    auto = normalize(K, relaxation, **tight)
    assert np.linalg.norm(K_hat - auto) <= 1e-3 * np.linalg.norm(auto)
    if method != "reference":
        with pytest.warns(ConvergenceWarning):
            _, result = normalize(K, relaxation, method=method, return_result=True, max_iter=2)
        assert result.status == "max_iter" and result.iterations == 2


def test_psd_objective_is_above_ds_objective(K):
    """(7) adds F >> 0 to (6): a smaller feasible set, so a larger optimum; strictly larger
    here because the DS solution has a negative eigenvalue."""
    F_ds, ds = normalize(K, "frobenius", return_result=True)
    F_psd, psd = normalize(K, "frobenius-psd", return_result=True)
    assert np.linalg.eigvalsh(F_ds)[0] < -1e-4
    assert psd.objective >= ds.objective - 1e-6 * abs(ds.objective)
    assert psd.objective - ds.objective > 1e-5 * abs(ds.objective)
    # certified: the lower bound on the optimum of (7) exceeds the value reached on (6)
    assert psd.dual_bound > ds.objective


@pytest.mark.parametrize("relaxation", [m for m in RELAXATIONS if m != "peng-wei"])
def test_frobenius_is_identity_on_doubly_stochastic_psd(relaxation):
    """A doubly stochastic p.s.d. matrix is already normalized by RC, NC, FSC and SSC (Peng-Wei
    maximises <K, X> instead: no identity)."""
    n = 12
    F = 0.6 * np.eye(n) + 0.4 / n
    np.testing.assert_allclose(normalize(F, relaxation), F, atol=1e-6)


def test_unknown_relaxation():
    with pytest.raises(ValueError, match="relaxation") as info:
        normalize(np.eye(3), "sinkhorn")
    assert "sinkhorn" in str(info.value)
    for name in RELAXATIONS:
        assert name in str(info.value)


def test_normalized_cut_rejects_negative_entries():
    K = np.array([[1.0, -0.2, 0.1], [-0.2, 1.0, 0.3], [0.1, 0.3, 1.0]])
    with pytest.raises(ValueError, match="K") as info:
        normalize(K, "normalized-cut")
    assert "nonnegative" in str(info.value)
    # the other normalizations accept signed affinities
    for relaxation in ("none", "ratio-cut", "frobenius", "frobenius-psd"):
        normalize(K, relaxation)


def test_normalized_cut_rejects_zero_degree():
    K = np.array([[0.0, 0.0], [0.0, 1.0]])
    with pytest.raises(ValueError, match="K"):
        normalize(K, "normalized-cut")


def bad_K():
    ok = np.eye(3)
    nan, inf = ok.copy(), ok.copy()
    nan[0, 1] = nan[1, 0] = np.nan
    inf[2, 2] = np.inf
    asym = ok.copy()
    asym[0, 1] = 0.5
    return {
        "non-square": np.ones((3, 4)),
        "1-d": np.ones(3),
        "3-d": np.ones((2, 2, 2)),
        "1x1": np.ones((1, 1)),
        "non-symmetric": asym,
        "nan": nan,
        "inf": inf,
        "strings": [["a", "b"], ["c", "d"]],
    }


@pytest.mark.parametrize("relaxation", RELAXATIONS)
@pytest.mark.parametrize("case", sorted(bad_K()))
def test_bad_K(relaxation, case):
    with pytest.raises(ValueError, match=r"\bK\b"):
        normalize(bad_K()[case], relaxation)


@pytest.mark.parametrize("relaxation", ["none", "ratio-cut"])
def test_closed_forms_reject_options(relaxation):
    with pytest.raises(ValueError, match="option"):
        normalize(np.eye(3), relaxation, tol=1e-3)


def test_accepts_lists_and_integer_matrices():
    K = [[2, 1, 0], [1, 2, 1], [0, 1, 2]]
    np.testing.assert_allclose(normalize(K, "ratio-cut"), np.array(K) - np.diag([3, 4, 3]) + np.eye(3))
    assert normalize(K, "none").dtype == float
