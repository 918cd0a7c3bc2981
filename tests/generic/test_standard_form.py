"""The reader of :mod:`cvxclust.generic.standard_form` against hand computations: the objective's
coefficients for every spelling, bounds, general rows, residuals, and a ValueError (TypeError for
a non-problem) naming every part of a problem outside the class."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from cvxclust.generic import standard_form

N = 5


def symmetric(rng, n=N):
    A = rng.standard_normal((n, n))
    return (A + A.T) / 2


@pytest.fixture
def data():
    rng = np.random.default_rng(0)
    B = rng.standard_normal((N, N))  # not symmetric: only its symmetric part acts on X
    return B, (B + B.T) / 2, symmetric(rng), rng


# each spelling: (objective of X, B, K), and (B, sym(B), K) -> (c, C, constant) of the minimisation it
# is read as (a maximisation negated); e.g. ||2X - B||^2 = 4||X||^2 - 4<sym(B), X> + ||B||^2
SPELLINGS = {
    "trace": (lambda X, B, K: cp.Minimize(cp.trace(B @ X)), lambda B, S, K: (0.0, S, 0.0)),
    "multiply": (lambda X, B, K: cp.Minimize(cp.sum(cp.multiply(B, X))), lambda B, S, K: (0.0, S, 0.0)),
    "vdot": (lambda X, B, K: cp.Minimize(cp.vdot(B, X)), lambda B, S, K: (0.0, S, 0.0)),
    "weighted sum_squares": (lambda X, B, K: cp.Minimize(3 * cp.sum_squares(X - K)),
                             lambda B, S, K: (3.0, -6 * K, 3 * np.sum(K**2))),
    "fro squared": (lambda X, B, K: cp.Minimize(cp.norm(X - K, "fro") ** 2),
                    lambda B, S, K: (1.0, -2 * K, np.sum(K**2))),
    "sum square": (lambda X, B, K: cp.Minimize(cp.sum(cp.square(2 * X - B))),
                   lambda B, S, K: (4.0, -4 * S, np.sum(B**2))),
    "quad_over_lin": (lambda X, B, K: cp.Minimize(cp.quad_over_lin(X - K, 4)),
                      lambda B, S, K: (0.25, -0.5 * K, 0.25 * np.sum(K**2))),
    "divided": (lambda X, B, K: cp.Minimize(cp.sum_squares(X - K) / 4),
                lambda B, S, K: (0.25, -0.5 * K, 0.25 * np.sum(K**2))),
    "sum of terms": (lambda X, B, K: cp.Minimize(cp.trace(B @ X) + 0.5 * cp.sum_squares(X - K) + 7),
                     lambda B, S, K: (0.5, S - K, 7 + 0.5 * np.sum(K**2))),
    "maximize": (lambda X, B, K: cp.Maximize(cp.trace(B @ X) - 2 * cp.sum_squares(X - K) + 3),
                 lambda B, S, K: (2.0, -S - 4 * K, 2 * np.sum(K**2) - 3)),
    "maximize negated": (lambda X, B, K: cp.Maximize(-cp.sum_squares(X) * 0.5 - cp.vdot(B, X)),
                         lambda B, S, K: (0.5, S, 0.0)),
}


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_objective_coefficients_by_hand(data, spelling):
    B, S, K, _ = data
    X = cp.Variable((N, N), symmetric=True)
    objective, expected = SPELLINGS[spelling]
    form = standard_form(cp.Problem(objective(X, B, K)))
    c, C, constant = expected(B, S, K)
    assert form.sense == ("maximize" if spelling.startswith("maximize") else "minimize")
    assert form.c == pytest.approx(c, rel=1e-12)
    np.testing.assert_allclose(form.C, C, rtol=1e-12, atol=1e-12)
    assert form.constant == pytest.approx(constant, rel=1e-12)
    assert np.array_equal(form.C, form.C.T)
    assert form.m == 0 and not form.psd
    assert np.all(form.L == -np.inf) and np.all(form.U == np.inf)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_objective_is_the_cvxpy_value_at_symmetric_points(data, spelling):
    B, _, K, rng = data
    X = cp.Variable((N, N), symmetric=True)
    problem = cp.Problem(SPELLINGS[spelling][0](X, B, K))
    form = standard_form(problem)
    for _ in range(3):
        X.value = 3 * symmetric(rng)
        assert form.objective(X.value) == pytest.approx(problem.objective.value, rel=1e-12, abs=1e-12)


def read(*constraints, **attributes):
    X = cp.Variable((N, N), **(attributes or {"symmetric": True}))
    return standard_form(cp.Problem(cp.Minimize(cp.trace(X)), [c(X) for c in constraints]))


def test_bounds_by_hand():
    inf, off = np.inf, ~np.eye(N, dtype=bool)
    form = read(lambda X: X >= 0)
    assert np.all(form.L == 0) and np.all(form.U == inf) and form.m == 0
    u = np.arange(1.0, N + 1)
    form = read(lambda X: cp.diag(X) <= u)
    assert np.array_equal(np.diag(form.U), u) and np.all(form.U[off] == inf) and np.all(form.L == -inf)
    form = read(lambda X: X[0, 1] == 0.3)
    assert form.L[0, 1] == form.L[1, 0] == form.U[0, 1] == form.U[1, 0] == 0.3
    assert np.isinf(np.delete(form.L.ravel(), [1, N])).all() and form.m == 0
    # a coefficient divides the bound, a negative one swaps its side; bounds intersect
    form = read(lambda X: 2 * X <= 4, lambda X: -X <= 1, lambda X: X >= -3)
    assert np.all(form.U == 2) and np.all(form.L == -1) and form.m == 0
    L = symmetric(np.random.default_rng(1))
    form = read(lambda X: X >= L)
    assert np.array_equal(form.L, L)


def test_variable_attributes():
    form = read(nonneg=True, symmetric=True)
    assert np.all(form.L == 0) and np.all(form.U == np.inf) and not form.psd
    form = read(PSD=True)
    assert form.psd and form.m == 0 and np.all(form.L == -np.inf)
    form = read(symmetric=True, bounds=[-1, 2])
    assert np.all(form.L == -1) and np.all(form.U == 2)
    for psd in (lambda X: X >> 0, lambda X: 0 << X, lambda X: X >> np.zeros((N, N))):
        form = read(psd)
        assert form.psd and form.m == 0


@pytest.mark.parametrize("psd", [lambda X: 2 * X >> 0, lambda X: X / 3 >> 0, lambda X: -X << 0,
                                 lambda X: cp.PSD(0.5 * X)], ids=["2X", "X/3", "-X<<0", "PSD(X/2)"])
def test_a_positive_multiple_of_x_in_the_cone_is_x_in_the_cone(psd):
    form = read(psd)
    assert form.psd and form.m == 0


def test_a_negative_multiple_of_x_in_the_cone_is_not_x_in_the_cone():
    with pytest.raises(ValueError, match="constraint 0.*X >> 0 on the whole"):
        read(lambda X: -2 * X >> 0)


def rows_as_matrices(form):
    return [form.A[r].toarray().reshape(N, N) for r in range(form.m)]


def test_general_rows_by_hand():
    ones = np.ones(N)
    form = read(lambda X: cp.sum(X, axis=1) == 1)
    assert form.m == N and np.all(form.lo == 1) and np.all(form.hi == 1)
    for r, row in enumerate(rows_as_matrices(form)):
        e = np.eye(N)[r]
        np.testing.assert_allclose(row, (np.outer(e, ones) + np.outer(ones, e)) / 2, atol=1e-15)
    form = read(lambda X: cp.trace(X) == 3)
    assert form.m == 1 and form.lo[0] == form.hi[0] == 3
    np.testing.assert_allclose(rows_as_matrices(form)[0], np.eye(N))
    block = np.zeros((N, N))
    block[:2, :2] = 1
    form = read(lambda X: cp.sum(X[:2, :2]) >= -1, lambda X: cp.sum(X[:2, :2]) <= 3)
    assert form.m == 2
    for row, lo, hi, (low, high) in zip(rows_as_matrices(form), form.lo, form.hi, [(-1, np.inf), (-np.inf, 3)]):
        sign = np.sign(row[0, 0])  # a row may be stored negated, with its range
        np.testing.assert_allclose(sign * row, block)
        assert (lo, hi) == ((low, high) if sign > 0 else (-high, -low))
    # on a symmetric X, X[0, 1] + 2 X[1, 0] is 3 X[0, 1]: a bound; two different entries make a row
    form = read(lambda X: X[0, 1] + 2 * X[1, 0] <= 1)
    assert form.m == 0 and form.U[0, 1] == form.U[1, 0] == pytest.approx(1 / 3)
    form = read(lambda X: X[0, 1] + 2 * X[0, 2] <= 1)
    assert form.m == 1 and np.all(form.U == np.inf)
    np.testing.assert_allclose(rows_as_matrices(form)[0][0, 1:3], [0.5, 1.0])


def test_rows_define_the_same_set_as_cvxpy():
    rng = np.random.default_rng(2)
    R = symmetric(rng)
    X = cp.Variable((N, N), symmetric=True)
    constraints = [cp.sum(X, axis=0) <= 2, cp.sum(cp.multiply(R, X)) >= -1, cp.trace(X[1:, 1:]) == 1,
                   X[0, :] + X[:, 2] <= 1]
    form = standard_form(cp.Problem(cp.Minimize(0), constraints))
    agree = 0
    for _ in range(200):
        X.value = symmetric(rng) / 2
        holds = all(np.all(np.atleast_1d(c.violation()) <= 1e-12) for c in constraints)
        values = form.row_values(X.value)
        ours = np.all(values >= form.lo - 1e-12) and np.all(values <= form.hi + 1e-12)
        agree += holds == ours
    assert agree == 200


def test_residuals_zero_when_feasible_positive_otherwise():
    n, k = N, 2.0
    X = cp.Variable((n, n), symmetric=True)
    form = standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X)), [
        X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == k, cp.diag(X) <= 0.9]))
    t = (k - 1) / (n - 1)
    centre = (1 - t) * np.ones((n, n)) / n + t * np.eye(n)
    residuals = form.residuals(centre)
    assert set(residuals) == {"symmetry", "bounds", "rows", "psd"}
    assert max(residuals.values()) <= 1e-15
    bad = centre.copy()
    bad[0, 1] = bad[1, 0] = -0.1
    assert form.residuals(bad)["bounds"] > 0.05 and form.residuals(bad)["rows"] > 0
    assert form.residuals(centre + 0.1 * np.eye(n))["rows"] > 0  # trace and row sums off
    assert form.residuals(np.ones((n, n)) * 2 / n - np.eye(n) / n)["psd"] > 0
    skew = centre.copy()
    skew[0, 1] += 0.01
    assert form.residuals(skew)["symmetry"] > 0
    assert "psd" not in form.residuals(bad, spectrum=False)


def test_a_bound_violation_is_relative_to_the_bound_as_a_row_violation_is():
    """A violated bound counts over ``max(|bound|, max |X|)``, as a row over ``max(|bound|,
    ||A_r||_1 max |X|)``: at ``X = 0`` the violation of ``diag(X) == -1`` is 1, the same as that
    of the row ``X_00 + X_11 == -2`` (not a division by a zero X)."""
    X = cp.Variable((N, N), symmetric=True)
    bounds = standard_form(cp.Problem(cp.Minimize(0), [X >> 0, cp.diag(X) == -1]))
    rows = standard_form(cp.Problem(cp.Minimize(0), [X >> 0, X[0, 0] + X[1, 1] == -2]))
    zero = np.zeros((N, N))
    assert bounds.residuals(zero)["bounds"] == pytest.approx(1.0)
    assert rows.residuals(zero)["rows"] == pytest.approx(1.0)
    small = np.full((N, N), 0.01)
    assert bounds.residuals(small)["bounds"] == pytest.approx(1.01)
    # where X is larger than the bound, its size still sets the scale (X >= 0 at a negative entry)
    nonneg = standard_form(cp.Problem(cp.Minimize(0), [X >= 0]))
    bad = np.eye(N) * 2.0
    bad[0, 1] = bad[1, 0] = -0.5
    assert nonneg.residuals(bad)["bounds"] == pytest.approx(0.25)


def problem(objective=None, constraints=(), **attributes):
    X = cp.Variable((N, N), **(attributes or {"symmetric": True}))
    return cp.Problem(objective(X) if objective else cp.Minimize(cp.trace(X)), [c(X) for c in constraints])


W = np.arange(N * N, dtype=float).reshape(N, N)
BAD = {
    "two variables": (lambda: cp.Problem(cp.Minimize(cp.trace(cp.Variable((N, N), symmetric=True))
                                                     + cp.trace(cp.Variable((N, N), symmetric=True)))),
                      "exactly one variable"),
    "not square": (lambda: cp.Problem(cp.Minimize(cp.sum(cp.Variable((N, 3))))), "square matrix"),
    "not symmetric": (lambda: problem(nonneg=True), "must be symmetric"),
    "integer": (lambda: problem(symmetric=True, integer=True), "attributes.*integer"),
    "parameter": (lambda: cp.Problem(cp.Minimize(cp.trace(cp.Parameter((N, N)) @ cp.Variable((N, N), symmetric=True)))),
                  "parameters"),
    "concave in a minimization": (lambda: problem(lambda X: cp.Minimize(cp.trace(X) - cp.sum_squares(X))),
                                  "objective term.*wrong sign"),
    "convex in a maximization": (lambda: problem(lambda X: cp.Maximize(cp.sum_squares(X - 1))), "wrong sign"),
    "partial norm": (lambda: problem(lambda X: cp.Minimize(cp.sum_squares(cp.diag(X)))), "squared norm.*diag"),
    "weighted norm": (lambda: problem(lambda X: cp.Minimize(cp.sum_squares(cp.multiply(W, X)))), "squared norm in"),
    "norm1": (lambda: problem(lambda X: cp.Minimize(cp.norm1(X))), "objective term norm1"),
    "lambda_max": (lambda: problem(lambda X: cp.Minimize(cp.lambda_max(X))), "objective term lambda_max"),
    "SOC": (lambda: problem(constraints=[lambda X: cp.SOC(X[0, 0], X[1, :])]), "constraint 0.*SOC"),
    "norm constraint": (lambda: problem(constraints=[lambda X: X >= 0, lambda X: cp.norm(X[1, :]) <= X[0, 0]]),
                        "constraint 1.*not affine"),
    "exponential cone": (lambda: problem(constraints=[lambda X: cp.ExpCone(X[0, 0], X[0, 1], X[1, 1])]),
                         "constraint 0.*ExpCone"),
    "X >> M": (lambda: problem(constraints=[lambda X: X >> np.ones((N, N))]), "constraint 0.*X >> 0 on the whole"),
    "PSD sub-block": (lambda: problem(constraints=[lambda X: X[:2, :2] >> 0]), "constraint 0.*X >> 0 on the whole"),
    "infeasible constant": (lambda: problem(constraints=[lambda X: X >= 0, lambda X: 0 * cp.sum(X) == 1]),
                            "constraint 1.*does not hold"),
    "contradictory bounds": (lambda: problem(constraints=[lambda X: X >= 1, lambda X: X[2, 3] <= 0.5]),
                             r"X\[2, 3\] are infeasible"),
    "NaN bound": (lambda: problem(constraints=[lambda X: X >> 0, lambda X: X <= np.full((N, N), np.nan)]),
                  "constraint 1.*NaN or infinite data"),
    "NaN right-hand side": (lambda: problem(constraints=[lambda X: cp.trace(X) == np.nan]),
                            "constraint 0.*NaN or infinite data"),
    "infinite equality": (lambda: problem(constraints=[lambda X: cp.sum(X) == np.inf]),
                          "constraint 0.*NaN or infinite data"),
    "NaN row coefficient": (lambda: problem(constraints=[lambda X: cp.sum(cp.multiply(np.where(W > 3, np.nan, 1.0),
                                                                                       X)) <= 1]),
                            "constraint 0.*NaN or infinite data"),
    "NaN objective": (lambda: problem(lambda X: cp.Minimize(cp.trace(np.where(W > 3, np.nan, 1.0) @ X))),
                      "objective has NaN or infinite data"),
    "complex objective": (lambda: problem(lambda X: cp.Maximize(cp.real(cp.trace((np.eye(N) + 1j) @ X)))),
                          "objective has complex data"),
    "complex constraint": (lambda: problem(constraints=[lambda X: cp.real(cp.trace((np.eye(N) + 1j) @ X)) == 1]),
                           "constraint 0.*complex data"),
}


@pytest.mark.parametrize("case", BAD)
def test_outside_the_class_is_named(case):
    build, message = BAD[case]
    with pytest.raises(ValueError, match="(?s)" + message):
        standard_form(build())


@pytest.mark.parametrize("build", [
    lambda X, K: cp.Problem(cp.Minimize(cp.norm1(X - K))),
    lambda X, K: cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(K, X)))),
    lambda X, K: cp.Problem(cp.Maximize(cp.trace(K @ X)), [X << K]),
    lambda X, K: cp.Problem(cp.Maximize(cp.trace(X)), [cp.abs(X - K) <= 1]),
], ids=["term", "squared norm", "semidefinite", "not affine"])
def test_an_error_names_a_large_expression_on_one_line(build):
    """cvxpy prints a matrix constant over many lines: the message keeps it on one, so that the
    part outside the class stays readable."""
    X = cp.Variable((20, 20), symmetric=True)
    with pytest.raises(ValueError) as error:
        standard_form(build(X, np.arange(400.0).reshape(20, 20) / 400))
    assert "\n" not in str(error.value) and "  " not in str(error.value)


def test_a_zero_weighted_nonlinear_term_is_read():
    form = standard_form(problem(lambda X: cp.Minimize(0 * cp.sum_squares(X) + cp.trace(X))))
    assert form.c == 0 and np.array_equal(form.C, np.eye(N))


@pytest.mark.parametrize("not_a_problem", [None, 3, "problem", cp.Minimize(0)])
def test_not_a_problem_is_a_type_error(not_a_problem):
    with pytest.raises(TypeError, match="cvxpy.Problem"):
        standard_form(not_a_problem)
