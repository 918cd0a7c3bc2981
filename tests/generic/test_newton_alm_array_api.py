"""``cvxclust.solve(..., method="newton" | "alm", device=...)``: the semismooth Newton-CG method
and the augmented Lagrangian method on another array API library (PyTorch on the CPU, and
array-api-strict through the namespace that ``device=`` resolves to), against the same solves on
NumPy; the rows the device holds, and the refusal of the others."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from array_namespaces import FOREIGN, to_numpy
from sklearn.exceptions import ConvergenceWarning
from test_generic_array_api import max_cut, nearest, on  # noqa: F401 -- on is a fixture

import cvxclust
from cvxclust._array_api import library, namespace_of
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.device import arrays_for
from cvxclust.generic.newton import EqualityDual
from cvxclust.generic.newton_device import DeviceRows


def nearest_correlation(n=20, seed=0):
    rng = np.random.default_rng(seed)
    G = rng.uniform(-1, 1, (n, n))
    G = (G + G.T) / 2
    np.fill_diagonal(G, 1.0)
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Minimize(cp.sum_squares(X - G)), [X >> 0, cp.diag(X) == 1]), G


def bisection(n=16, seed=2):
    """The minimum-bisection SDP: a fixed diagonal and the total sum (``X 1 = 0`` implied)."""
    _, laplacian = max_cut(n, seed)
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Minimize(cp.trace(laplacian @ X)), [X >> 0, cp.diag(X) == 1, cp.sum(X) == 0]), laplacian


def rows_and_trace(n=14, seed=4):
    """A Frobenius objective under common row sums, a trace and a weighted diagonal row: the rows
    of the device (row sums, diagonal rows) in Newton's Hessian and preconditioner."""
    G, _ = np.linalg.qr(np.random.default_rng(seed).normal(size=(n, n)))
    X = cp.Variable((n, n), symmetric=True)
    return cp.Problem(cp.Minimize(cp.sum_squares(X - G)), [X >> 0, cp.sum(X, axis=1) == 1, cp.trace(X) == 3,
                                                            X[0, 0] + 2 * X[1, 1] == 0.5]), G


def fixed_off_the_diagonal(n=10, seed=5):
    """The nearest correlation matrix with two entries off the diagonal fixed too."""
    problem, G = nearest_correlation(n, seed)
    X = problem.variables()[0]
    return cp.Problem(problem.objective, [*problem.constraints, X[0, 1] == 0.3, X[2, 5] == -0.2]), G


CASES = [(nearest_correlation, "newton"), (rows_and_trace, "newton"), (fixed_off_the_diagonal, "newton"),
         (nearest_correlation, "alm"), (max_cut, "alm"), (lambda: nearest(n=12), "alm"), (bisection, "alm")]


@pytest.mark.parametrize("name", FOREIGN)
@pytest.mark.parametrize(("make", "method"), CASES, ids=["ncm-newton", "rows-newton", "entries-newton", "ncm-alm",
                                                        "max-cut-alm", "ssc7-alm", "bisection-alm"])
def test_a_solve_on_a_device_agrees_with_numpy(on, name, make, method):
    problem, data = make()
    kept = data.copy()
    reference = cvxclust.solve(problem, method=method)
    result = cvxclust.solve(problem, method=method, device=on(name))
    assert reference.status == "optimal" and result.status == "optimal", result.status
    assert library(namespace_of(result.X)) == name
    scale = abs(reference.objective)
    assert abs(result.objective - reference.objective) <= 1e-6 * scale
    assert abs(result.dual_bound - reference.dual_bound) <= 1e-6 * scale
    assert result.relative_gap <= 1e-6 and result.max_residual <= 1e-6
    assert np.abs(to_numpy(result.X) - reference.X).max() <= 1e-5
    # the same algorithm on the device: the same eigendecompositions, up to a few steps where the
    # rounding of another eigensolver changes the path on a degenerate problem (the bisection)
    assert abs(result.extras["eigh"] - reference.extras["eigh"]) <= max(2, 0.15 * reference.extras["eigh"])
    assert (abs(data - kept)).max() == 0  # the caller's data are untouched


@pytest.mark.parametrize("name", FOREIGN)
def test_the_device_rows_are_the_host_rows(on, name):
    problem, _ = rows_and_trace(n=8)
    form = CvxpyRelaxation(problem).standard_form()
    arrays = arrays_for(on(name), None)
    rows, host = DeviceRows(form.rows, arrays, "newton"), EqualityDual(form)
    rng = np.random.default_rng(1)
    M = rng.normal(size=(8, 8))
    M = M + M.T
    y = rng.normal(size=form.m)
    applied = np.concatenate([to_numpy(v) for v in rows.apply(arrays.asarray(M))])
    assert np.allclose(applied, host.A @ M.ravel(), rtol=1e-12, atol=1e-12)
    assert np.allclose(to_numpy(rows.adjoint(arrays.asarray(y), None)), (host.A.T @ y).reshape(8, 8), atol=1e-12)
    squares = np.concatenate([to_numpy(v) for v in rows.squares(arrays.asarray(M))])
    assert np.allclose(squares, host.row_squares @ M.ravel(), atol=1e-12)
    assert np.allclose(rows.square_sums, np.asarray(host.row_squares.sum(axis=1)).ravel())


@pytest.mark.parametrize("method", ["newton", "alm"])
def test_auto_on_a_device_picks_the_host_choice(on, method):
    problem, _ = nearest_correlation(n=10) if method == "newton" else max_cut(n=10)
    result = cvxclust.solve(problem, device=on("torch"))
    assert result.method == method and "device" in result.extras["auto"]
    assert result.status == "optimal"


@pytest.mark.parametrize("method", ["newton", "alm"])
def test_float32_on_torch(on, method):
    # the rounding allowance of the bound scales with float32's unit roundoff: certified to 1e-3 here
    problem, _ = nearest_correlation(n=12) if method == "newton" else max_cut(n=12)
    reference = cvxclust.solve(problem, method=method)
    result = cvxclust.solve(problem, method=method, device=on("torch"), dtype="float32", tol=1e-3,
                            residual_tol=1e-4, max_iter=200)
    assert str(result.X.dtype) == "torch.float32"
    assert result.status == "optimal"
    assert abs(result.objective - reference.objective) <= 1e-3 * abs(reference.objective)
    minimize = isinstance(problem.objective, cp.Minimize)
    assert (result.dual_bound <= reference.objective) if minimize else (result.dual_bound >= reference.objective)


@pytest.mark.parametrize("name", FOREIGN)
@pytest.mark.parametrize("method", ["newton", "alm"])
def test_rows_off_the_diagonal_are_refused_on_a_device(on, name, method):
    n = 8
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(X - np.eye(n))),
                         [X >> 0, cp.trace(X) == 2, X[0, 1] + X[2, 3] == 0.1])
    assert cvxclust.solve(problem, method=method).status == "optimal"  # NumPy takes them
    with pytest.raises(ValueError, match=rf"method='{method}' runs on a device only where the rows are common row "
                                         r"sums.*row \d+ of the standard form has an entry off the diagonal"):
        cvxclust.solve(problem, method=method, device=on(name))


def test_tied_entries_are_refused_by_alm_on_a_device(on):
    n = 8
    X = cp.Variable((n, n), symmetric=True)
    problem = cp.Problem(cp.Minimize(cp.trace(np.eye(n) @ X)), [X >> 0, X >= 0, cp.trace(X) == 2, X[0, 1] == X[2, 3]])
    with pytest.raises(ValueError, match="method='alm' runs on a device only where.*tie entries"):
        cvxclust.solve(problem, method="alm", device=on("torch"))


@pytest.mark.parametrize("name", FOREIGN)
def test_alm_certifies_infeasibility_on_a_device(on, name):
    n = 6
    X = cp.Variable((n, n), symmetric=True)
    C = np.arange(n * n, dtype=float).reshape(n, n)
    # a 2 x 2 minor 1 - 4 < 0: no p.s.d. point, though the fixed entries alone hold
    problem = cp.Problem(cp.Minimize(cp.trace((C + C.T) @ X)), [X >> 0, cp.diag(X) == 1, X[0, 1] == 2])
    with pytest.warns(ConvergenceWarning, match="infeasible"):
        result = cvxclust.solve(problem, method="alm", device=on(name))
    assert result.status == "infeasible" and result.extras["infeasibility"]["bound"] > 0
