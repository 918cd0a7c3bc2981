"""The expression reader (:mod:`cvxclust.generic.expression_reader`) against cvxpy's coefficient
backend: for every atom it recognises, the standard form read from the expression tree equals the
one read through ``linear_map`` (the recogniser switched off), and what it does not recognise
falls back to that path."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from cvxclust.generic import expression_form, expression_reader, standard_form
from cvxclust.generic.expression_form import row_sums_matrix, stack_rows, symmetrize_in_place
from cvxclust.generic.expression_reader import read_affine

N = 6
RNG = np.random.default_rng(7)
B = RNG.standard_normal((N, N))  # not symmetric
K = (B + B.T) / 2
S = sp.random(N, N, density=0.3, random_state=3, format="csr") + sp.eye(N, format="csr")  # sparse, not symmetric
U = np.abs(B) + 1  # not symmetric: a bound on X[i, j] is one on X[j, i]
u = np.arange(1.0, N + 1)
v = RNG.standard_normal(N)

OBJECTIVES = {
    "trace(C X)": lambda X: cp.Minimize(cp.trace(B @ X)),
    "trace(X C)": lambda X: cp.Minimize(cp.trace(X @ B)),
    "sum multiply": lambda X: cp.Minimize(cp.sum(cp.multiply(B, X))),
    "vdot": lambda X: cp.Minimize(cp.vdot(B, X)),
    "sparse trace": lambda X: cp.Maximize(cp.trace(S @ X)),
    "sparse multiply": lambda X: cp.Minimize(cp.sum(cp.multiply(S, X))),
    "maximize trace": lambda X: cp.Maximize(cp.trace(K @ X)),
    "scalar multiples": lambda X: cp.Minimize(3 * cp.trace(B @ X) - cp.vdot(K, X) / 4 + 7),
    "negation": lambda X: cp.Maximize(-cp.sum(cp.multiply(B, X.T))),
    "sum and trace": lambda X: cp.Minimize(cp.sum(X) - 2 * cp.trace(X)),
    "diag and entries": lambda X: cp.Minimize(v @ cp.diag(X) + X[1, 2] - 3 * X[4, 0]),
    "slices": lambda X: cp.Minimize(cp.sum(X[1, :]) + cp.sum(X[0:3, 2:5]) - cp.sum(X[::2, 1])),
    "reversed slices": lambda X: cp.Minimize(cp.trace(X[:, ::-1]) + cp.sum(X[4:1:-2, 0:3]) - cp.sum(X[::-1, :][0])),
    "axis sums": lambda X: cp.Minimize(v @ cp.sum(X, axis=1) + cp.sum(cp.sum(X, axis=0)[1:4])),
    "row vector coefficient": lambda X: cp.Minimize(cp.sum(cp.multiply(v, X))),
    "sum_squares": lambda X: cp.Minimize(2 * cp.sum_squares(3 * X - K) + cp.trace(B @ X)),
    "fro squared": lambda X: cp.Minimize(cp.norm(X - B, "fro") ** 2),
    "sum_squares scalar offset": lambda X: cp.Minimize(cp.sum_squares(X - 1) / 2),
    "maximize with a norm": lambda X: cp.Maximize(cp.trace(K @ X) - 0.5 * cp.sum_squares(X.T + B) + 1),
}

CONSTRAINTS = {
    "psd": lambda X: [X >> 0],
    "scaled psd": lambda X: [cp.PSD(0.5 * X)],
    "nonneg": lambda X: [X >= 0],
    "upper matrix": lambda X: [X <= U],
    "scaled bounds": lambda X: [2 * X <= 4, -X <= 1],
    "coefficient matrix": lambda X: [cp.multiply(U, X) <= 1],
    "diag upper": lambda X: [cp.diag(X) <= u],
    "diag equal": lambda X: [cp.diag(X) == 1],
    "entry": lambda X: [X[0, 1] == 0.3, X[2, 2] >= -1],
    "row slice": lambda X: [X[1, :] >= -0.5, X[0:2, 3:5] <= 2],
    "reversed slice": lambda X: [X[::-1, 1] >= -0.5, X[3::-2, ::-1] <= 2],
    "row sums": lambda X: [cp.sum(X, axis=1) == 1],
    "column sums": lambda X: [cp.sum(X, axis=0) <= v],
    "keepdims sums": lambda X: [cp.sum(X, axis=1, keepdims=True) >= -1],
    "axis sums with offsets": lambda X: [cp.sum(X - 1, axis=0) <= v, cp.sum(2 * X - B, axis=1, keepdims=True) >= -1],
    "scaled row sums": lambda X: [cp.NonNeg(3 * cp.sum(X, axis=0) - 2)],
    "trace": lambda X: [cp.trace(X) == 2, cp.Zero(cp.trace(X) - 2)],
    "total": lambda X: [cp.sum(X) <= 4],
    "inner": lambda X: [cp.trace(B @ X) <= 1, cp.sum(cp.multiply(S, X)) >= -1],
    "mixed": lambda X: [X[0, 1] + X[2, 3] == 1, cp.sum(X, axis=1) + cp.diag(X) == 2, X[0, 1] + 2 * X[1, 0] <= 1],
    "off diagonal": lambda X: [cp.diag(X[1:, :-1]) >= -2],
    "sparse mask": lambda X: [cp.multiply(S, X) == 0],
    "peng-wei": lambda X: [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 2],
    "times a constant vector": lambda X: [X @ np.ones(N) == 1, np.full((1, N), 2.0) @ (X - B) <= 1,
                                          (X + 1) @ np.full((N, 1), -0.5) >= -3],
}

FALLBACKS = {  # atoms the recogniser leaves to the coefficient backend
    "reshape": lambda X: cp.reshape(X, (N * N,), order="C") <= 1,
    "matrix times an uneven vector": lambda X: X @ np.arange(N) == 1,
    "stack": lambda X: cp.hstack([X[0, :], X[1, :]]) >= 0,
    "fancy index": lambda X: X[[0, 1], [1, 2]] == 0.5,
    "axis sum of a slice": lambda X: cp.sum(X[:3, :], axis=1) <= 1,
    "axis sum of a weighted X": lambda X: cp.sum(cp.multiply(B, X), axis=0) <= 1,
}


def fallback_form(problem, monkeypatch):
    """The standard form read through the coefficient backend alone."""
    with monkeypatch.context() as m:
        m.setattr(expression_reader, "read_affine", lambda expr, X: None)
        return standard_form(problem)


def assert_same_form(new, old, rng):
    assert new.sense == old.sense and new.psd == old.psd
    assert new.c == pytest.approx(old.c, rel=1e-12, abs=1e-14)
    assert new.constant == pytest.approx(old.constant, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(new.C, old.C, rtol=1e-12, atol=1e-13)
    assert np.array_equal(new.C, new.C.T)
    np.testing.assert_array_equal(new.L, old.L)
    np.testing.assert_array_equal(new.U, old.U)
    assert new.m == old.m
    np.testing.assert_array_equal(new.lo, old.lo)
    np.testing.assert_array_equal(new.hi, old.hi)
    for _ in range(3):
        X = rng.standard_normal((new.n, new.n))
        X = X + X.T
        np.testing.assert_allclose(new.row_values(X), old.row_values(X), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(new.adjoint(np.arange(new.m) - 1.0), old.adjoint(np.arange(old.m) - 1.0),
                                   rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_objectives_read_as_the_coefficient_backend_reads_them(objective, monkeypatch):
    X = cp.Variable((N, N), symmetric=True)
    problem = cp.Problem(OBJECTIVES[objective](X))
    expr = problem.objective.expr
    for term in expr.args if isinstance(expr, cp.atoms.affine.add_expr.AddExpression) else [expr]:
        if term.is_affine():
            assert read_affine(term, X) is not None, term
    assert_same_form(standard_form(problem), fallback_form(problem, monkeypatch), np.random.default_rng(0))


@pytest.mark.parametrize("constraints", CONSTRAINTS)
def test_constraints_read_as_the_coefficient_backend_reads_them(constraints, monkeypatch):
    X = cp.Variable((N, N), symmetric=True)
    problem = cp.Problem(cp.Maximize(cp.trace(K @ X)), CONSTRAINTS[constraints](X))
    for constraint in problem.constraints:
        assert read_affine(constraint.args[0] if isinstance(constraint, cp.constraints.PSD) else constraint.expr,
                           X) is not None, constraint
    assert_same_form(standard_form(problem), fallback_form(problem, monkeypatch), np.random.default_rng(1))


@pytest.mark.parametrize("constraint", FALLBACKS)
def test_unrecognised_expressions_fall_back_and_read_the_same(constraint, monkeypatch):
    X = cp.Variable((N, N), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.vdot(B, X)), [FALLBACKS[constraint](X), cp.sum(X, axis=1) == 1])
    assert read_affine(problem.constraints[0].expr, X) is None
    assert_same_form(standard_form(problem), fallback_form(problem, monkeypatch), np.random.default_rng(2))


@pytest.mark.parametrize("seed", range(6))
def test_random_statements(seed, monkeypatch):
    """Random combinations of recognised objectives and constraints, on random orders n <= 8."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 9))
    C = rng.standard_normal((n, n))
    Cs = sp.random(n, n, density=0.4, random_state=seed, format="csr")
    X = cp.Variable((n, n), symmetric=True)
    a, b = rng.uniform(0.5, 2, size=2)
    i, j = rng.integers(0, n, size=2)
    objectives = [a * cp.trace(C @ X), -cp.vdot(C, X), cp.sum(cp.multiply(Cs, X)), b * cp.sum_squares(a * X - C),
                  cp.trace(X) - cp.sum(X[i, :])]
    chosen = [objectives[k] for k in rng.choice(len(objectives), size=2, replace=False)]
    sense = cp.Minimize if rng.random() < 0.5 else cp.Maximize
    expr = chosen[0] + chosen[1] if sense is cp.Minimize else -(chosen[0] + chosen[1])
    constraints = [X >> 0, X >= -a, cp.sum(X, axis=int(rng.integers(2))) == b, cp.trace(X) <= n * b,
                   cp.diag(X) <= 2 * b, X[i, j] == 0.1, b * cp.sum(X[: n // 2 + 1, :: 2]) >= -3]
    problem = cp.Problem(sense(expr), [constraints[k] for k in rng.permutation(len(constraints))[: 4]])
    assert_same_form(standard_form(problem), fallback_form(problem, monkeypatch), rng)


def test_peng_wei_is_read_without_the_coefficient_backend(monkeypatch):
    """The Peng-Wei statement, with a dense or sparse kernel, never reaches ``linear_map`` (whose
    cost is that of many eigendecompositions of the same order)."""
    import importlib

    from cvxclust.ssc import PengWei

    standard_form_module = importlib.import_module("cvxclust.generic.standard_form")

    def refuse(expr, X):
        raise AssertionError(f"linear_map called on {expr}")

    problem = PengWei(K @ K.T, 2).problem()
    old = fallback_form(problem, monkeypatch)
    monkeypatch.setattr(standard_form_module, "linear_map", refuse)
    assert_same_form(standard_form(problem), old, np.random.default_rng(3))
    X = cp.Variable((N, N), symmetric=True)
    standard_form(cp.Problem(cp.Maximize(cp.sum(cp.multiply(S, X))),
                             [X >> 0, X >= 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 2, cp.diag(X) <= 1]))


def test_row_sums_matrix_is_the_symmetrised_row_sums():
    n = 5
    I = np.array([3, 0, 4, 3])
    coef = np.array([1.0, -2.0, 0.5, 3.0])
    A = row_sums_matrix(I, coef, n)
    dense = np.zeros((len(I), n, n))
    for r, i in enumerate(I):
        dense[r, i, :] += coef[r] / 2
        dense[r, :, i] += coef[r] / 2
    np.testing.assert_array_equal(A.toarray(), dense.reshape(len(I), n * n))
    assert A.has_canonical_format and A.nnz == len(I) * (2 * n - 1)


def test_stack_rows_is_vstack_of_the_blocks():
    n = 4
    blocks = [sp.random(2, n * n, density=0.3, random_state=0, format="csr"),
              expression_form.RowSumsBlock(np.array([1, 3]), np.array([2.0, -1.0]), n),
              sp.csr_matrix((0, n * n)), sp.random(3, n * n, density=0.2, random_state=1, format="csr")]
    dense = [b.tocsr() for b in blocks]
    np.testing.assert_array_equal(stack_rows(blocks, n).toarray(), sp.vstack(dense).toarray())
    assert stack_rows([], n).shape == (0, n * n)


@pytest.mark.parametrize("n", [1, 5, 7])
def test_symmetrize_in_place_over_several_blocks(n, monkeypatch):
    monkeypatch.setattr(expression_form, "_BLOCK", 2)
    C = np.random.default_rng(n).standard_normal((n, n))
    expected = (C + C.T) / 2
    assert symmetrize_in_place(C) is C
    np.testing.assert_array_equal(C, expected)


def test_the_callers_data_is_not_modified():
    X = cp.Variable((N, N), symmetric=True)
    data = [B.copy(), U.copy(), S.copy()]
    standard_form(cp.Problem(cp.Maximize(cp.trace(B @ X) - cp.sum_squares(X - U) + cp.sum(cp.multiply(S, X))),
                             [X <= U, cp.sum(cp.multiply(S, X)) <= 1]))
    np.testing.assert_array_equal(B, data[0])
    np.testing.assert_array_equal(U, data[1])
    assert (S != data[2]).nnz == 0


def test_refusals_are_those_of_the_coefficient_backend():
    X = cp.Variable((N, N), symmetric=True)
    with pytest.raises(ValueError, match="NaN or infinite"):
        standard_form(cp.Problem(cp.Minimize(0), [cp.sum(X, axis=1) == np.nan]))
    with pytest.raises(ValueError, match="X >> 0 on the whole"):
        standard_form(cp.Problem(cp.Minimize(0), [-X >> 0]))
    with pytest.raises(ValueError, match="not of the form"):
        standard_form(cp.Problem(cp.Minimize(cp.sum_squares(X[0, :]))))
    with pytest.raises(ValueError, match="infeasible"):
        standard_form(cp.Problem(cp.Minimize(0), [X >= 1, X <= 0]))
