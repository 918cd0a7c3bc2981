"""Tests for cvxclust.bregman.divergences: the identities of Section 2 of the Bregman paper,
the cvxpy statements of D_F(X, M X), joint convexity, domain checks and the name factory."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cvxclust.bregman.divergences import (
    DIVERGENCES,
    Divergence,
    GeneralizedKL,
    ItakuraSaito,
    Logistic,
    Mahalanobis,
    SquaredEuclidean,
    get_divergence,
)

W_TEST = np.array([[2.0, 0.5, 0.1], [0.5, 1.5, -0.3], [0.1, -0.3, 1.0]])  # p.d., eigenvalues > 0.6
SHAPE = (4, 3)

# Name -> (instance, interval inside the domain of F to sample from).
CASES = {
    "euclidean": (SquaredEuclidean(), (-5.0, 5.0)),
    "mahalanobis": (Mahalanobis(W_TEST), (-5.0, 5.0)),
    "kl": (GeneralizedKL(), (0.05, 10.0)),
    "logistic": (Logistic(), (0.02, 0.98)),
    "itakura-saito": (ItakuraSaito(), (0.1, 10.0)),
}
NAMES = list(CASES)
JOINTLY_CONVEX = [n for n in NAMES if CASES[n][0].jointly_convex]
SEPARABLE = ["euclidean", "kl", "logistic", "itakura-saito"]
PROPS = settings(max_examples=40, deadline=None)


def points(name):
    lo, hi = CASES[name][1]
    return arrays(np.float64, SHAPE, elements=st.floats(lo, hi, allow_nan=False, allow_infinity=False))


def random_points(name, rng, shape=SHAPE):
    lo, hi = CASES[name][1]
    return rng.uniform(lo, hi, size=shape)


def numerical_gradient(fun, X, rel_step=1e-6):
    """Central finite differences of the scalar ``fun`` at every entry of ``X``."""
    G = np.zeros_like(X)
    for idx in np.ndindex(X.shape):
        h = rel_step * max(1.0, abs(X[idx]))
        Xp, Xm = X.copy(), X.copy()
        Xp[idx] += h
        Xm[idx] -= h
        G[idx] = (fun(Xp) - fun(Xm)) / (2 * h)
    return G


# ----- calculus: transfers are gradients ------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_transfer_is_gradient_of_F(name):
    div = CASES[name][0]
    X = random_points(name, np.random.default_rng(0))
    np.testing.assert_allclose(div.transfer(X), numerical_gradient(div.F, X), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_inverse_transfer_is_gradient_of_conjugate(name):
    div = CASES[name][0]
    Y = div.transfer(random_points(name, np.random.default_rng(1)))
    np.testing.assert_allclose(div.inverse_transfer(Y), numerical_gradient(div.conjugate, Y), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_gradient_second_matches_finite_differences(name):
    div = CASES[name][0]
    rng = np.random.default_rng(2)
    X, Y = random_points(name, rng), random_points(name, rng)
    G = numerical_gradient(lambda Z: div.divergence(X, Z), Y)
    np.testing.assert_allclose(div.gradient_second(X, Y), G, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", NAMES)
def test_dual_divergence_gradient_matches_finite_differences(name):
    div = CASES[name][0]
    rng = np.random.default_rng(3)
    X = random_points(name, rng)
    Z = div.transfer(random_points(name, rng))
    G = numerical_gradient(lambda T: div.dual_divergence(T, X), Z)
    np.testing.assert_allclose(div.dual_divergence_grad(Z, X), G, rtol=1e-6, atol=1e-7)


# ----- identities (property tests) ------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_inverse_transfer_inverts_transfer(name, data):
    div = CASES[name][0]
    X = data.draw(points(name))
    np.testing.assert_allclose(div.inverse_transfer(div.transfer(X)), X, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_fenchel_young_equality(name, data):
    div = CASES[name][0]
    X = data.draw(points(name))
    fX = div.transfer(X)
    lhs = div.F(X) + div.conjugate(fX)
    rhs = float(np.sum(X * fX))
    assert lhs == pytest.approx(rhs, rel=1e-10, abs=1e-9 * (1 + abs(div.F(X)) + abs(rhs)))


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_divergence_matches_definition(name, data):
    # The closed forms against (3) assembled from F and the transfer.
    div = CASES[name][0]
    X, Y = data.draw(points(name)), data.draw(points(name))
    definition = div.F(X) - div.F(Y) - float(np.sum((X - Y) * div.transfer(Y)))
    scale = 1 + abs(div.F(X)) + abs(div.F(Y))
    assert div.divergence(X, Y) == pytest.approx(definition, rel=1e-9, abs=1e-10 * scale)
    rows = div.divergence_rows(X, Y)
    assert rows.shape == (SHAPE[0],)
    assert rows.sum() == pytest.approx(div.divergence(X, Y), rel=1e-12, abs=1e-14)
    for i in range(SHAPE[0]):
        assert rows[i] == pytest.approx(div.divergence(X[i], Y[i]), rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_divergence_nonnegative_and_zero_iff_equal(name, data):
    div = CASES[name][0]
    X, Y = data.draw(points(name)), data.draw(points(name))
    assert div.divergence(X, X) == pytest.approx(0.0, abs=1e-12)
    assert np.all(div.divergence_rows(X, Y) >= -1e-12)
    assume(np.max(np.abs(X - Y)) > 1e-3)
    assert div.divergence(X, Y) > 0


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_duality_identity(name, data):
    # D_F(x, y) = D_{F*}(f(y), f(x)), Section 2.
    div = CASES[name][0]
    X, Y = data.draw(points(name)), data.draw(points(name))
    d = div.divergence(X, Y)
    dual = div.conjugate_divergence(div.transfer(Y), div.transfer(X))
    scale = 1 + abs(div.conjugate(div.transfer(X))) + abs(div.conjugate(div.transfer(Y)))
    assert dual == pytest.approx(d, rel=1e-8, abs=1e-10 * scale)


@pytest.mark.parametrize("name", NAMES)
@PROPS
@given(data=st.data())
def test_dual_divergence_is_conjugate_divergence_to_transfer(name, data):
    # L(Z) = D_{F*}(Z, f(X)) of (7)/(15), computed through Fenchel-Young without f(X).
    div = CASES[name][0]
    X = data.draw(points(name))
    Z = div.transfer(data.draw(points(name)))
    expected = div.conjugate_divergence(Z, div.transfer(X))
    scale = 1 + abs(div.conjugate(Z)) + abs(div.F(X))
    assert div.dual_divergence(Z, X) == pytest.approx(expected, rel=1e-8, abs=1e-10 * scale)
    assert div.dual_divergence(div.transfer(X), X) == pytest.approx(0.0, abs=1e-10 * scale)


def test_kl_allows_zero_counts_and_extends_by_continuity():
    div = GeneralizedKL()
    X = np.array([[0.0, 2.0], [3.0, 0.0]])
    Y = np.array([[0.5, 2.0], [3.0, 0.0]])
    # x log(x/y) - x + y with 0 log 0 = 0: only the (0, 0.5) entry contributes y = 0.5.
    assert div.divergence(X, Y) == pytest.approx(0.5)
    assert div.divergence(Y, X) == np.inf  # x > 0 = y
    # The conditional loss stays finite at zero counts: D_{F*}(z, f(0)) = e^z.
    Z = np.log(np.array([[0.5, 2.0], [3.0, 1.0]]))
    assert div.dual_divergence(Z, X) == pytest.approx(0.5 + 1.0)


# ----- cvxpy statements ------------------------------------------------------------------------


def row_stochastic(rng, t):
    M = rng.uniform(0.0, 1.0, size=(t, t)) + 2 * np.eye(t)
    return M / M.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("name", JOINTLY_CONVEX)
def test_cvxpy_divergence_value_and_dcp(name):
    div = CASES[name][0]
    rng = np.random.default_rng(4)
    X = random_points(name, rng, shape=(6, 3))
    M = cp.Variable((6, 6))
    expr = div.cvxpy_divergence(X, M @ X)
    assert expr.is_dcp() and expr.is_convex() and expr.shape == ()
    for _ in range(3):
        M.value = row_stochastic(rng, 6)
        assert expr.value == pytest.approx(div.divergence(X, M.value @ X), rel=1e-8, abs=1e-10)
    # A constant second argument is accepted too.
    Y = random_points(name, rng, shape=(6, 3))
    assert div.cvxpy_divergence(X, Y).value == pytest.approx(div.divergence(X, Y), rel=1e-8, abs=1e-10)


@pytest.mark.parametrize("name", JOINTLY_CONVEX)
def test_cvxpy_divergence_solves_relaxation_over_row_stochastic_M(name):
    # min D_F(X, M X) over row-stochastic M with a zero diagonal (no point explains itself):
    # the solver's optimum, re-evaluated by divergence(), is consistent and beats uniform M.
    div = CASES[name][0]
    rng = np.random.default_rng(5)
    t = 6
    X = random_points(name, rng, shape=(t, 3))
    M = cp.Variable((t, t))
    problem = cp.Problem(
        cp.Minimize(div.cvxpy_divergence(X, M @ X)),
        [M >= 0, cp.sum(M, axis=1) == 1, cp.diag(M) == 0],
    )
    assert problem.is_dcp()
    problem.solve(solver="CLARABEL")
    assert problem.status == "optimal"
    Mv = np.clip(M.value, 0.0, None)
    np.fill_diagonal(Mv, 0.0)
    Mv /= Mv.sum(axis=1, keepdims=True)
    assert div.divergence(X, Mv @ X) == pytest.approx(problem.value, rel=1e-5, abs=1e-7)
    uniform = (np.ones((t, t)) - np.eye(t)) / (t - 1)
    assert problem.value <= div.divergence(X, uniform @ X) + 1e-8


def test_cvxpy_divergence_rejects_not_jointly_convex_and_bad_shapes():
    X = random_points("itakura-saito", np.random.default_rng(6))
    M = cp.Variable((SHAPE[0], SHAPE[0]))
    with pytest.raises(ValueError, match="not jointly convex"):
        ItakuraSaito().cvxpy_divergence(X, M @ X)
    with pytest.raises(ValueError, match="MX_expr"):
        SquaredEuclidean().cvxpy_divergence(X, cp.Variable((SHAPE[0], 2)))
    with pytest.raises(ValueError, match="X"):
        GeneralizedKL().cvxpy_divergence(-X, M @ X)


# ----- joint convexity, checked numerically ------------------------------------------------------


def midpoint_violation(div, name, rng, n_pairs=2000):
    """Largest D(mid x, mid y) - mean(D(x1, y1), D(x2, y2)) over random pairs of one-point pairs
    (relative to the scale of the divergences); > 0 means a convexity counterexample."""
    lo, hi = CASES[name][1]
    shape = (n_pairs, 3)
    x1, x2, y1, y2 = (rng.uniform(lo, hi, size=shape) for _ in range(4))
    d1, d2 = div.divergence_rows(x1, y1), div.divergence_rows(x2, y2)
    dm = div.divergence_rows((x1 + x2) / 2, (y1 + y2) / 2)
    gap = dm - (d1 + d2) / 2
    return np.max(gap / (1e-12 + (d1 + d2) / 2))


@pytest.mark.parametrize("name", JOINTLY_CONVEX)
def test_jointly_convex_flag_midpoint_convexity_holds(name):
    div = CASES[name][0]
    assert midpoint_violation(div, name, np.random.default_rng(7)) <= 1e-9


def test_itakura_saito_counterexample_to_joint_convexity():
    div = ItakuraSaito()
    assert not div.jointly_convex
    assert midpoint_violation(div, "itakura-saito", np.random.default_rng(8)) > 1e-3
    # The documented one: x = 1, y in {3, 5} (not convex in y beyond y = 2x).
    x = np.ones(1)
    assert div.divergence(x, [4.0]) > (div.divergence(x, [3.0]) + div.divergence(x, [5.0])) / 2


@pytest.mark.parametrize("name", SEPARABLE)
def test_joint_convexity_flag_matches_bauschke_borwein_criterion(name):
    # Separable F: D_F jointly convex iff 1/phi'' is concave; phi'' from differences of the transfer.
    div = CASES[name][0]
    lo, hi = CASES[name][1]
    x = np.linspace(lo, hi, 200)
    h = 1e-5 * np.maximum(1.0, x)
    inv_second = 2 * h / (div.transfer(x + h) - div.transfer(x - h))
    second_diff = inv_second[:-2] - 2 * inv_second[1:-1] + inv_second[2:]
    concave = np.all(second_diff <= 1e-6 * np.max(np.abs(inv_second)))
    assert concave == div.jointly_convex


# ----- input checks ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "div, bad",
    [
        (GeneralizedKL(), [[1.0, -0.5]]),
        (Logistic(), [[0.5, 0.0]]),
        (Logistic(), [[0.5, 1.0]]),
        (Logistic(), [[1.2, 0.5]]),
        (ItakuraSaito(), [[1.0, 0.0]]),
        (ItakuraSaito(), [[-1.0, 2.0]]),
        (SquaredEuclidean(), [[np.nan, 1.0]]),
        (SquaredEuclidean(), [["a", 1.0]]),
        (SquaredEuclidean(), 3.0),
    ],
)
def test_domain_errors_name_the_argument(div, bad):
    good = np.full((1, 2), 0.5)
    with pytest.raises(ValueError, match=r"^X "):
        div.check_domain(bad, "X")
    with pytest.raises(ValueError, match=r"^X "):
        div.F(bad)
    with pytest.raises(ValueError, match=r"^Y "):
        div.divergence(good, bad)
    with pytest.raises(ValueError, match=r"^X "):
        div.dual_divergence(div.transfer(good), bad)


def test_domain_error_messages_say_what_is_expected():
    with pytest.raises(ValueError, match="nonnegative"):
        GeneralizedKL().check_domain([[-1.0]], "counts")
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        Logistic().check_domain([[1.5]], "X")
    with pytest.raises(ValueError, match="positive"):
        ItakuraSaito().check_domain([[0.0]], "X")


def test_dual_domain_and_shape_errors():
    with pytest.raises(ValueError, match=r"^Y .*negative"):
        ItakuraSaito().inverse_transfer([[-1.0, 0.0]])
    with pytest.raises(ValueError, match=r"^Z "):
        ItakuraSaito().dual_divergence([[1.0]], [[1.0]])
    with pytest.raises(ValueError, match=r"^Y must have the shape of X"):
        SquaredEuclidean().divergence(np.ones((2, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"^X must have points of length 3"):
        Mahalanobis(W_TEST).F(np.ones((2, 2)))


@pytest.mark.parametrize(
    "W, match",
    [
        (np.array([[1.0, 2.0], [2.0, 1.0]]), "positive definite"),
        (np.array([[1.0, 0.3], [0.0, 1.0]]), "symmetric"),
        (np.ones(3), "square"),
        (np.array([[1.0, np.inf], [np.inf, 1.0]]), "NaN or infinite"),
    ],
)
def test_mahalanobis_rejects_bad_W(W, match):
    with pytest.raises(ValueError, match=rf"^W .*{match}"):
        Mahalanobis(W)


def test_mahalanobis_is_euclidean_for_identity_W():
    rng = np.random.default_rng(9)
    X, Y = rng.normal(size=(5, 3)), rng.normal(size=(5, 3))
    assert Mahalanobis(np.eye(3)).divergence(X, Y) == pytest.approx(SquaredEuclidean().divergence(X, Y))
    expected = 0.5 * np.einsum("ij,jk,ik->i", X - Y, W_TEST, X - Y)
    np.testing.assert_allclose(Mahalanobis(W_TEST).divergence_rows(X, Y), expected, rtol=1e-12)


# ----- factory ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, cls",
    [
        ("euclidean", SquaredEuclidean),
        ("kl", GeneralizedKL),
        ("logistic", Logistic),
        ("itakura-saito", ItakuraSaito),
        ("Itakura-Saito", ItakuraSaito),
        ("linear", SquaredEuclidean),
        ("sigmoid", Logistic),
        ("bernoulli", Logistic),
        ("poisson", GeneralizedKL),
    ],
)
def test_get_divergence_by_name(name, cls):
    div = get_divergence(name)
    assert type(div) is cls and isinstance(div, Divergence)


def test_get_divergence_mahalanobis_and_instances():
    div = get_divergence("mahalanobis", W=W_TEST)
    assert isinstance(div, Mahalanobis) and np.array_equal(div.W, W_TEST)
    inst = Logistic()
    assert get_divergence(inst) is inst
    assert set(DIVERGENCES) == {"euclidean", "mahalanobis", "kl", "logistic", "itakura-saito"}
    assert all(DIVERGENCES[n].name == n for n in DIVERGENCES)


@pytest.mark.parametrize("bad", ["hellinger", "", 3, None, ["kl"]])
def test_get_divergence_unknown_name_lists_valid_names(bad):
    with pytest.raises(ValueError, match=r"Unknown divergence .*euclidean.*itakura-saito.*kl.*logistic.*mahalanobis"):
        get_divergence(bad)


def test_get_divergence_W_errors():
    with pytest.raises(ValueError, match=r"^W .*required"):
        get_divergence("mahalanobis")
    with pytest.raises(ValueError, match=r"^W .*only used"):
        get_divergence("kl", W=W_TEST)
    with pytest.raises(ValueError, match=r"^W must not be given"):
        get_divergence(SquaredEuclidean(), W=W_TEST)


@pytest.mark.parametrize("name", NAMES)
def test_quadratic_divergences_whiten_to_half_squared_distances(name):
    """``quadratic`` is set exactly for D_F(x, y) = ||(x - y) R||^2 / 2, and whiten multiplies by R."""
    div = CASES[name][0]
    rng = np.random.default_rng(11)
    X, Y = random_points(name, rng), random_points(name, rng)
    assert div.quadratic == (name in ("euclidean", "mahalanobis"))
    if div.quadratic:
        rows = 0.5 * np.sum((div.whiten(X) - div.whiten(Y)) ** 2, axis=1)
        np.testing.assert_allclose(rows, div.divergence_rows(X, Y), rtol=1e-12)
    else:
        with pytest.raises(ValueError, match="not a quadratic"):
            div.whiten(X)


def test_whiten_checks_its_input():
    with pytest.raises(ValueError, match="X"):
        SquaredEuclidean().whiten(np.array([[1.0, np.inf]]))
    with pytest.raises(ValueError, match="X"):
        Mahalanobis(W_TEST).whiten(np.ones((4, 2)))


# ----- every public method at the door: bad arrays, float32, read-only, no mutation ----------

def _calls(div, X, Y, Z, W):
    """Every public method with its arguments, as (method, argument names, arguments)."""
    return [
        ("check_domain", ("X",), (X,)),
        ("F", ("X",), (X,)),
        ("transfer", ("X",), (X,)),
        ("inverse_transfer", ("Y",), (Z,)),
        ("conjugate", ("Y",), (Z,)),
        ("divergence", ("X", "Y"), (X, Y)),
        ("divergence_rows", ("X", "Y"), (X, Y)),
        ("gradient_second", ("X", "Y"), (X, Y)),
        ("conjugate_divergence", ("Z", "W"), (Z, W)),
        ("dual_divergence", ("Z", "X"), (Z, X)),
        ("dual_divergence_grad", ("Z", "X"), (Z, X)),
    ]


def _arguments(name, rng):
    div = CASES[name][0]
    X, Y = random_points(name, rng), random_points(name, rng)
    return div, X, Y, div.transfer(Y), div.transfer(X)


BAD_ARRAYS = {
    "nan": lambda A: np.where(np.arange(A.size).reshape(A.shape) == 1, np.nan, A),
    "inf": lambda A: np.where(np.arange(A.size).reshape(A.shape) == 2, np.inf, A),
    "empty": lambda A: np.empty((0, A.shape[1])),
    "complex": lambda A: A + 1j,
    "text": lambda A: np.full(A.shape, "a"),
}


@pytest.mark.parametrize("bad", sorted(BAD_ARRAYS))
@pytest.mark.parametrize("name", NAMES)
def test_every_method_refuses_bad_arrays_naming_the_argument(name, bad):
    rng = np.random.default_rng(0)
    div, *good = _arguments(name, rng)
    for method, names, args in _calls(div, *good):
        for k in range(len(args)):
            spoiled = list(args)
            spoiled[k] = BAD_ARRAYS[bad](np.asarray(args[k]))
            with pytest.raises(ValueError, match=rf"^{names[k]} "):
                getattr(div, method)(*spoiled)


@pytest.mark.parametrize("name", ["kl", "logistic", "itakura-saito"])
def test_every_method_refuses_points_outside_the_domain_naming_the_argument(name):
    rng = np.random.default_rng(1)
    div, X, Y, Z, W = _arguments(name, rng)
    outside = {"kl": -1.0, "logistic": 1.5, "itakura-saito": 0.0}[name]
    outside_dual = {"itakura-saito": 0.5}.get(name)  # F* of KL and logistic is finite everywhere
    for method, names, args in _calls(div, X, Y, Z, W):
        for k, arg_name in enumerate(names):
            spoiled = list(args)
            if arg_name in ("X", "Y") and method not in ("inverse_transfer", "conjugate"):
                spoiled[k] = np.where(np.eye(*X.shape, dtype=bool), outside, args[k])
            elif outside_dual is not None:
                spoiled[k] = np.where(np.eye(*X.shape, dtype=bool), outside_dual, args[k])
            else:
                continue
            with pytest.raises(ValueError, match=rf"^{arg_name} must have"):
                getattr(div, method)(*spoiled)


@given(data=st.data())
@settings(max_examples=15, deadline=None)
@pytest.mark.parametrize("name", NAMES)
def test_float32_read_only_inputs_work_and_no_input_is_modified(name, data):
    seed = data.draw(st.integers(0, 2**32 - 1))
    div, *args64 = _arguments(name, np.random.default_rng(seed))
    args32 = [np.asarray(a, dtype=np.float32) for a in args64]
    for a in args32:
        a.flags.writeable = False
    kept = [a.copy() for a in args32]
    for (method, _, exact), (_, _, single) in zip(_calls(div, *[a.astype(np.float64) for a in args32]),
                                                   _calls(div, *args32)):
        try:
            expected = getattr(div, method)(*exact)
        except ValueError:  # float32 rounding may put a point on the boundary of the domain
            with pytest.raises(ValueError):
                getattr(div, method)(*single)
            continue
        np.testing.assert_array_equal(getattr(div, method)(*single), expected)
    for a, b in zip(args32, kept):
        np.testing.assert_array_equal(a, b)


@given(data=st.data())
@settings(max_examples=15, deadline=None)
@pytest.mark.parametrize("name", NAMES)
def test_no_method_modifies_its_inputs(name, data):
    X = data.draw(points(name))
    Y = data.draw(points(name))
    div = CASES[name][0]
    args = [X, Y, div.transfer(Y), div.transfer(X)]
    kept = [a.copy() for a in args]
    for method, _, call_args in _calls(div, *args):
        out = getattr(div, method)(*call_args)
        if isinstance(out, np.ndarray) and method != "check_domain":  # that one returns its input
            out[...] = 0.0  # a computed array is the caller's: writing to it leaves the inputs alone
        for a, b in zip(args, kept):
            np.testing.assert_array_equal(a, b)
