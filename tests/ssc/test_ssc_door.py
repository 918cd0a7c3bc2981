"""Inputs at the door of the ssc public API (property-based): bad matrices raise a ValueError or
TypeError naming the argument; float32, integer, boolean, read-only, Fortran-ordered, strided and
nested-list inputs give the same result as the float64 array of the same values; no input is
ever modified."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from sklearn.exceptions import ConvergenceWarning

from cvxclust.ssc import RELAXATIONS as RELAXATION_NAMES
from cvxclust.ssc import (
    FrobeniusDS,
    FrobeniusPSD,
    SemidefiniteSpectralClustering,
    admm,
    ld_ssc1,
    ld_ssc2,
    normalize,
    successive_projections,
)

RELAXATIONS = (FrobeniusDS, FrobeniusPSD)
ENTRIES = st.floats(-10, 10, allow_nan=False, allow_subnormal=False)
NONNEGATIVE = st.floats(0, 10, allow_nan=False, allow_subnormal=False)


@st.composite
def symmetric(draw, min_n=2, max_n=6, elements=ENTRIES):
    n = draw(st.integers(min_n, max_n))
    A = draw(arrays(np.float64, (n, n), elements=elements))
    return np.triu(A) + np.triu(A, 1).T


@st.composite
def bad_matrices(draw):
    """(what is wrong, the matrix): every way a square symmetric finite real matrix with n >= 2
    can fail to be one."""
    K = draw(symmetric())
    n = K.shape[0]
    case = draw(st.sampled_from(["scalar", "1-d", "3-d", "empty", "no rows", "1x1", "non-square", "nan", "inf",
                                 "non-symmetric", "complex", "strings", "ragged", "none"]))
    i, j = draw(st.integers(0, n - 1)), draw(st.integers(0, n - 1))
    if case == "scalar":
        return case, float(K[0, 0])
    if case == "1-d":
        return case, K[0]
    if case == "3-d":
        return case, K[None]
    if case == "empty":
        return case, np.zeros((0, 0))
    if case == "no rows":
        return case, np.zeros((0, n))
    if case == "1x1":
        return case, K[:1, :1]
    if case == "non-square":
        return case, K[:, : draw(st.integers(1, n - 1))]
    if case in ("nan", "inf"):
        K[i, j] = K[j, i] = np.nan if case == "nan" else draw(st.sampled_from([np.inf, -np.inf]))
        return case, K
    if case == "non-symmetric":
        j = (i + draw(st.integers(1, n - 1))) % n
        K[i, j] += draw(st.floats(1e-6, 1e3)) * max(1.0, np.abs(K).max())
        return case, K
    if case == "complex":
        return case, K + 1j * draw(st.floats(0, 1))
    if case == "strings":
        return case, K.astype(str)
    if case == "ragged":
        rows = K.tolist()
        rows[i] = rows[i][:-1]
        return case, rows
    return case, None


def assert_refused(call, name: str):
    with pytest.raises((ValueError, TypeError), match=rf"\b{name}\b"):
        call()


@settings(max_examples=60, deadline=None)
@given(bad_matrices())
def test_bad_K_is_refused_naming_K(bad):
    _, K = bad
    before = None if K is None or isinstance(K, (float, list)) else K.copy()
    for cls in RELAXATIONS:
        assert_refused(lambda: cls(K), "K")
    for relaxation in RELAXATION_NAMES:
        assert_refused(lambda: normalize(K, relaxation), "K")
    if before is not None:
        np.testing.assert_array_equal(K, before)


@settings(max_examples=40, deadline=None)
@given(bad_matrices())
def test_bad_precomputed_affinity_is_refused(bad):
    _, K = bad
    estimator = SemidefiniteSpectralClustering(2, affinity="precomputed")
    with pytest.raises((ValueError, TypeError)):
        estimator.fit(K)


@settings(max_examples=40, deadline=None)
@given(symmetric(), st.data())
def test_candidates_of_the_wrong_shape_or_not_finite_are_refused(K, data):
    n = K.shape[0]
    shape = data.draw(st.sampled_from([(n,), (n + 1, n + 1), (n - 1, n - 1), (n, n + 1), (n, n, 1), ()]))
    wrong = np.ones(shape)
    nan = np.eye(n)
    nan[data.draw(st.integers(0, n - 1)), data.draw(st.integers(0, n - 1))] = data.draw(
        st.sampled_from([np.nan, np.inf, -np.inf]))
    for cls in RELAXATIONS:
        relaxation = cls(K)
        for bad in (wrong, nan, nan.astype(complex), None):
            assert_refused(lambda: relaxation.objective(bad), "X")
            assert_refused(lambda: relaxation.residuals(bad), "X")
            assert_refused(lambda: relaxation.dual_value(bad), "Q")
            assert_refused(lambda: relaxation.restore(bad), "F")


@settings(max_examples=30, deadline=None)
@given(symmetric())
def test_restore_refuses_a_point_outside_its_precondition(K):
    """restore() needs F symmetric with unit row sums; K (in general) is neither."""
    n = K.shape[0]
    for cls in RELAXATIONS:
        relaxation = cls(K)
        far = np.full((n, n), 2.0 / n)  # symmetric, row sums 2
        assert not relaxation.restorable(far)
        assert_refused(lambda: relaxation.restore(far), "F")
        skew = np.full((n, n), 1.0 / n)
        skew[0, 1] += 0.1
        skew[0, 0] -= 0.1  # row sums 1, not symmetric
        assert not relaxation.restorable(skew)
        assert_refused(lambda: relaxation.restore(skew), "F")
        feasible = np.full((n, n), 1.0 / n)
        assert relaxation.restorable(feasible)
        np.testing.assert_array_equal(relaxation.restore(feasible), feasible)


def variants(K: np.ndarray) -> dict:
    """The same values in other containers and dtypes, each with the float64 array it stands for."""
    n = K.shape[0]
    readonly = K.copy()
    readonly.setflags(write=False)
    strided = np.zeros((n, 2 * n))
    strided[:, ::2] = K
    K32 = K.astype(np.float32)
    Kint = np.round(K).astype(np.int64)
    Kbool = K > 0
    return {
        "float32": (K32, K32.astype(float)),
        "int": (Kint, Kint.astype(float)),
        "bool": (Kbool, Kbool.astype(float)),
        "read-only": (readonly, K),
        "fortran": (np.asfortranarray(K), K),
        "strided": (strided[:, ::2], K),
        "list": (K.tolist(), K),
    }


@settings(max_examples=30, deadline=None)
@given(symmetric(elements=NONNEGATIVE))
def test_other_dtypes_and_layouts_give_the_float64_result_and_are_not_modified(K):
    for name, (value, as_float) in variants(K).items():
        before = np.array(value, copy=True)
        for cls in RELAXATIONS:
            relaxation = cls(value)
            assert relaxation.K.dtype == np.float64, name
            np.testing.assert_array_equal(relaxation.K, cls(as_float).K)
            assert relaxation.K.flags.writeable
        for method in ("none", "ratio-cut", "normalized-cut"):
            if method == "normalized-cut" and np.any(as_float.sum(axis=1) <= 0):
                assert_refused(lambda: normalize(value, method), "K")
                continue
            np.testing.assert_array_equal(normalize(value, method), normalize(as_float, method), err_msg=name)
        np.testing.assert_array_equal(np.asarray(value), before, err_msg=name)


@settings(max_examples=15, deadline=None)
@given(symmetric(max_n=5, elements=NONNEGATIVE))
def test_solvers_take_float32_and_read_only_affinities(K):
    K32 = K.astype(np.float32)
    K32.setflags(write=False)
    before = K32.copy()
    for method in ("frobenius", "frobenius-psd"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            a, ra = normalize(K32, method, return_result=True)
            b, rb = normalize(K32.astype(float), method, return_result=True)
        np.testing.assert_array_equal(a, b)
        assert ra.status == rb.status and ra.iterations == rb.iterations
        assert a.flags.writeable and np.all(np.isfinite(a))
    np.testing.assert_array_equal(K32, before)


@settings(max_examples=25, deadline=None)
@given(symmetric(max_n=5))
@example(np.eye(3))  # feasible: the optimum is K itself, at objective 0
@example(0.6 * np.eye(4) + 0.1)
def test_every_solver_certifies_a_correct_point_or_warns(K):
    """Any symmetric K: a finite point whose bound never exceeds the optimum; "optimal" only at
    the optimum (checked against Clarabel); any other status comes with a ConvergenceWarning.
    (A K that is itself feasible has optimum 0, where a relative gap is rounding noise and the
    solvers may run to their limits: the time limit keeps such examples short.)"""
    before = K.copy()
    for cls in RELAXATIONS:
        relaxation = cls(K)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            reference = relaxation.solve("reference")
        # the reference is accurate to ~1e-9 in absolute terms (at the scale of ||K||^2); where
        # Clarabel itself reports an inaccurate solution there is nothing to compare with
        optimum = reference.objective if reference.status == "optimal" else np.nan
        slack = 1e-6 * abs(optimum) + 1e-8 * max(1.0, float(np.sum(K * K)))
        for method in relaxation.methods()[1:]:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ConvergenceWarning)
                result = relaxation.solve(method, time_limit=5.0)
            assert np.all(np.isfinite(result.X)) and np.isfinite(result.objective)
            assert not result.dual_bound > optimum + slack, (method, result)
            if result.status == "optimal":
                assert not abs(result.objective - optimum) > slack, (method, result)
                assert result.max_residual <= 1e-6
            else:
                assert any(issubclass(w.category, ConvergenceWarning) for w in caught), (method, result)
    np.testing.assert_array_equal(K, before)


@pytest.mark.parametrize("solver", [admm, ld_ssc1, ld_ssc2, successive_projections])
@pytest.mark.parametrize("relaxation", [None, np.eye(3), "FrobeniusPSD"])
def test_solver_functions_refuse_what_is_not_their_relaxation(solver, relaxation):
    assert_refused(lambda: solver(relaxation), "relaxation")
    # each refuses the relaxation it does not solve, naming the one it does
    if solver in (ld_ssc1, ld_ssc2):
        assert_refused(lambda: solver(FrobeniusDS(np.eye(3))), "FrobeniusPSD")
    if solver is successive_projections:
        assert_refused(lambda: solver(FrobeniusPSD(np.eye(3))), "FrobeniusDS")


@pytest.mark.parametrize(("name", "value"), [("method", None), ("method", 3), ("method", "Frobenius"),
                                             ("return_result", "yes"), ("return_result", 1)])
def test_normalize_refuses_bad_parameters_naming_them(name, value):
    assert_refused(lambda: normalize(np.eye(3), **{name: value}), name)


@pytest.mark.parametrize(("name", "value"), [("iterate", "yes"), ("max_iter", 2.5), ("max_iter", True),
                                             ("tol", 0.0), ("tol", np.inf)])
def test_normalized_cut_refuses_bad_options_naming_them(name, value):
    assert_refused(lambda: normalize(np.eye(3) + 0.1, "normalized-cut", **{name: value}), name)


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_projector_and_dual_value_refuse_bad_flags(cls):
    relaxation = cls(np.eye(3))
    assert_refused(lambda: relaxation.projector(partial="no"), "partial")
    assert_refused(lambda: relaxation.dual_value(np.zeros((3, 3)), project="eig"), "project")
