"""Bad input raises ValueError naming the argument; limits stop every solver with a readable
status and a ConvergenceWarning (parametrised over the solver registry)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning
from ssc_helpers import RELAXATIONS, SCALABLE, kernel

import cvxclust
from cvxclust.ssc import FrobeniusPSD


@pytest.fixture(scope="module")
def K():
    return kernel("iris", 20, 1.0)


def bad_matrices():
    nan = np.eye(3)
    nan[1, 2] = nan[2, 1] = np.nan
    inf = np.eye(3)
    inf[0, 0] = -np.inf
    asym = np.eye(3)
    asym[0, 2] = 0.3
    return {
        "non-square": np.ones((3, 2)),
        "vector": np.ones(4),
        "scalar": 1.0,
        "1x1": np.ones((1, 1)),
        "empty": np.ones((0, 0)),
        "non-symmetric": asym,
        "nan": nan,
        "inf": inf,
        "object": np.array([[None, 1], [1, None]]),
    }


@pytest.mark.parametrize("case", sorted(bad_matrices()))
@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_bad_K_raises_value_error_naming_K(cls, case):
    with pytest.raises(ValueError, match=r"\bK\b"):
        cls(bad_matrices()[case])


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_K_is_validated_and_symmetrised(cls):
    K = np.array([[1.0, 0.5], [0.5 + 1e-14, 1.0]])  # asymmetric at rounding level only
    relaxation = cls(K.tolist())
    assert relaxation.K.dtype == float
    np.testing.assert_array_equal(relaxation.K, relaxation.K.T)
    assert relaxation.n == 2


@pytest.mark.parametrize("where", [(0, 1), (1, 0), (299, 2), (2, 299), (150, 280), (299, 298)])
def test_an_asymmetry_anywhere_is_found_and_an_exactly_symmetric_K_is_held(where):
    """The exact symmetry test compares K with its transpose panel by panel: an entry off by
    rounding in any panel, above or below the diagonal, gets K symmetrised into a new array (the
    caller's untouched); an exactly symmetric K is held as it is, not copied."""
    from cvxclust.ssc import PengWei

    rng = np.random.default_rng(0)
    A = rng.standard_normal((300, 300))
    K = A + A.T
    assert PengWei(K, 3).K is K
    K[where] += 1e-13
    before = K.copy()
    held = PengWei(K, 3).K
    assert held is not K and np.array_equal(held, held.T)
    np.testing.assert_array_equal(K, before)


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
@pytest.mark.parametrize("method", ["nope", "Admm", "", None, 3, ("admm",)])
def test_unknown_method_lists_valid_methods(cls, K, method):
    with pytest.raises(ValueError, match="Unknown method") as info:
        cls(K).solve(method)
    message = str(info.value)
    for valid in ["auto", *cls.methods()]:
        assert repr(valid) in message


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_unknown_reference_solver(cls, K):
    with pytest.raises(ValueError, match="XYZ") as info:
        cls(K).solve("reference", solver="XYZ")
    assert "SCS" in str(info.value) and "CLARABEL" in str(info.value)
    # names are case-insensitive
    assert cls(K).solve("reference", solver="scs").method == "reference-scs"


@pytest.mark.parametrize(("cls", "method"), SCALABLE)
def test_max_iter_stops_with_warning(cls, method, K):
    with pytest.warns(ConvergenceWarning, match=method):
        result = cls(K).solve(method, max_iter=3)
    assert result.status == "max_iter"
    assert result.iterations == 3
    assert result.method == method
    assert np.isfinite(result.objective) and result.X.shape == K.shape
    assert result.objective == pytest.approx(0.5 * np.sum((result.X - K) ** 2))
    assert 1 <= len(result.history) <= 3
    # a lower bound is still certified where the method yields one
    if result.dual_bound is not None:
        optimum = cls(K).solve("reference").objective
        assert result.dual_bound <= optimum + 1e-9 * abs(optimum)


@pytest.mark.parametrize(("cls", "method"), SCALABLE)
def test_time_limit_stops_with_warning(cls, method, K):
    with pytest.warns(ConvergenceWarning, match="time limit"):
        result = cls(K).solve(method, time_limit=1e-9)
    assert result.status == "time_limit"
    assert result.method == method
    assert result.X.shape == K.shape and np.all(np.isfinite(result.X))
    assert np.isfinite(result.objective)


@pytest.mark.parametrize(("cls", "method"), SCALABLE)
def test_converged_solve_does_not_warn(cls, method, K):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = cls(K).solve(method)
    assert result.status == "optimal"


@pytest.mark.parametrize(("cls", "method"), SCALABLE)
@pytest.mark.parametrize("name", ["tol", "residual_tol", "max_iter", "time_limit", "check_every"])
@pytest.mark.parametrize("value", [0, -1.0, np.nan, "1e-3", True, None])
def test_bad_limits(cls, method, K, name, value):
    with pytest.raises(ValueError, match=name):
        cls(K).solve(method, **{name: value})


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
@pytest.mark.parametrize("value", [0.0, -0.5, np.nan, np.inf])
def test_bad_rho(cls, K, value):
    with pytest.raises(ValueError, match="rho"):
        cls(K).solve("admm", rho=value)


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
@pytest.mark.parametrize("value", [0.0, 2.0, -1.0, 2.5, np.nan])
def test_bad_alpha(cls, K, value):
    with pytest.raises(ValueError, match="alpha"):
        cls(K).solve("admm", alpha=value)


@pytest.mark.parametrize("alpha", [1.0, 1.9])
@pytest.mark.parametrize("rho", [0.1, 10.0])
def test_admm_converges_for_other_alpha_and_rho(K, alpha, rho):
    """Plain ADMM (alpha = 1), strong over-relaxation and other initial penalties reach the
    same certified optimum."""
    relaxation = FrobeniusPSD(K)
    result = relaxation.solve("admm", alpha=alpha, rho=rho)
    default = relaxation.solve("admm")
    assert result.status == "optimal"
    assert result.relative_gap <= 1e-6
    assert result.objective == pytest.approx(default.objective, rel=1e-6)


@pytest.mark.parametrize(("cls", "method"), SCALABLE)
def test_unknown_solver_option_is_an_error(cls, method, K):
    with pytest.raises(TypeError, match="nope"):
        cls(K).solve(method, nope=1)


@pytest.mark.parametrize("name", ["bound_every", "check_every", "adapt_every"])
def test_admm_bad_periods(K, name):
    with pytest.raises(ValueError, match=name):
        FrobeniusPSD(K).solve("admm", **{name: 0})


@pytest.mark.parametrize(("name", "value"), [("memory", 0), ("restarts", -1)])
@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_ld_ssc2_bad_options(K, name, value):
    with pytest.raises(ValueError, match=name):
        FrobeniusPSD(K).solve("ld-ssc2", **{name: value})


def test_convergence_warning_is_sklearns():
    assert cvxclust.ConvergenceWarning is ConvergenceWarning
