"""``Conditional`` (15)-(17) and the conditional-gradient engine (Algorithm 1): the scalable solver
against the cvxpy reference (Clarabel), the certified bound, the recovered M, the 2-D line search
against a brute grid, monotonicity, finite differences of the derivatives, limits and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cvxclust.bregman._conditional import Conditional, conditional_problem
from cvxclust.bregman._cg_steps import line_search
from cvxclust.bregman._omega import omega, omega_squared_gradient
from cvxclust.bregman.sets import residuals_M2, residuals_M3


def make_data(kind: str, t: int, n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    labels = np.arange(t) % d
    X = rng.uniform(0.5, 2.0, (d, n))[labels] + 0.3 * rng.standard_normal((t, n))
    if kind in ("kl", "itakura-saito"):
        X = np.abs(X) + 0.05
    if kind == "logistic":
        X = 1.0 / (1.0 + np.exp(-2.0 * (X - 1.2)))
    return X


CASES = [("euclidean", 15, 3, 3, "M2"), ("kl", 20, 3, 3, "M2"), ("logistic", 12, 2, 3, "M2"),
         ("itakura-saito", 15, 3, 3, "M2"), ("kl", 20, 3, 3, "M3"), ("logistic", 25, 3, 3, "M3")]


@pytest.mark.parametrize("kind,t,n,d,domain", CASES)
def test_conditional_gradient_matches_reference(kind, t, n, d, domain, reference):
    X = make_data(kind, t, n, d, seed=t + n)
    relax = Conditional(X, kind, d, alpha=0.5, domain=domain)
    res = relax.solve(tol=1e-7)
    ref = reference(relax)
    assert res.status in ("optimal", "stalled")
    assert abs(res.objective - ref.objective) / abs(ref.objective) <= 1e-4
    # the certified bound lies below every feasible value, so the certified gap >= the true gap
    assert res.dual_bound <= ref.objective + 1e-12 * abs(ref.objective)
    assert res.duality_gap >= res.objective - ref.objective - 1e-12 * abs(ref.objective)
    assert res.relative_gap <= 1e-6
    assert res.max_residual <= 1e-5
    assert np.linalg.norm(res.X - ref.X) / np.linalg.norm(ref.X) <= 1e-3
    # the recovered M lies in the set and attains Omega^2(T)
    M = res.extras["M"]
    viol = (residuals_M2 if domain == "M2" else residuals_M3)(M, d)
    assert max(viol.values()) <= 1e-5
    attained = np.trace(res.X.T @ np.linalg.pinv(M, rcond=1e-10) @ res.X)
    assert attained == pytest.approx(omega(res.X, d, domain=domain) ** 2, rel=1e-6)
    # (17) and the SDP (16) agree on the reference point: L(T) + alpha/2 tr(S) vs objective(T)
    prob = conditional_problem(X, kind, d, 0.5, domain=domain)
    assert {v.name() for v in prob.variables()} == {"T", "M", "S"}


def test_plain_algorithm1_monotone_and_converges():
    X = make_data("kl", 15, 3, 3, seed=3)
    relax = Conditional(X, "kl", 3, alpha=0.5)
    res = relax.solve(local_search=False, tol=1e-3, max_iter=2000)
    assert res.status == "optimal"
    surrogate = np.array([h["surrogate"] for h in res.history])
    assert np.all(np.diff(surrogate) <= 1e-12 * abs(surrogate[0]))
    objective = np.array([h["objective"] for h in res.history])
    assert np.all(objective <= surrogate + 1e-12 * abs(surrogate[0]))  # s_k >= Omega(T_k)
    fast = relax.solve(local_search=True, tol=1e-8)
    assert res.objective >= fast.objective - 1e-12
    assert res.objective - fast.dual_bound <= 1e-3 * res.objective
    obj_ls = np.array([h["objective"] for h in fast.history])
    assert np.all(np.diff(obj_ls) <= 1e-12 * abs(obj_ls[0]))


@pytest.mark.parametrize("kind", ["euclidean", "kl", "logistic"])
def test_line_search_matches_grid(kind):
    X = make_data(kind, 10, 2, 2, seed=5)
    relax = Conditional(X, kind, 2, alpha=0.7)
    rng = np.random.default_rng(0)
    T = 0.3 * rng.standard_normal(X.shape)
    S = 0.5 * rng.standard_normal(X.shape)
    s = omega(T, 2, domain="M2") * 1.2
    a, b, value = line_search(relax.loss, relax.loss_grad, T, S, s, 0.7, loss_hvp=relax.loss_hvp)
    phi = lambda a, b: relax.loss(a * T + b * S) + 0.35 * (a * s + b) ** 2  # noqa: E731
    assert value == pytest.approx(phi(a, b), rel=1e-12)
    grid = np.linspace(0.0, 3.0, 301)
    best = min(phi(ga, gb) for ga in grid for gb in grid)
    assert value <= best + 1e-12 * abs(best)
    # KKT of the bound-constrained problem: zero gradient in free coordinates
    h = 1e-6
    ga = (phi(a + h, b) - phi(max(a - h, 0), b)) / (a + h - max(a - h, 0))
    gb = (phi(a, b + h) - phi(a, max(b - h, 0))) / (b + h - max(b - h, 0))
    for x, g in ((a, ga), (b, gb)):
        assert (abs(g) <= 1e-5) if x > 1e-8 else (g >= -1e-5)
    # without Hessian-vector products (forward differences of the gradient) the same point
    a2, b2, value2 = line_search(relax.loss, relax.loss_grad, T, S, s, 0.7)
    assert value2 == pytest.approx(value, rel=1e-9)


@pytest.mark.parametrize("kind", ["euclidean", "kl", "logistic", "itakura-saito"])
def test_loss_derivatives_finite_differences(kind):
    X = make_data(kind, 8, 3, 2, seed=7)
    relax = Conditional(X, kind, 2, alpha=1.0)
    rng = np.random.default_rng(1)
    T = relax.initial_point() if kind == "itakura-saito" else 0.5 * rng.standard_normal(X.shape)
    V = rng.standard_normal(X.shape)
    V /= np.linalg.norm(V)
    if kind == "itakura-saito":
        V *= 0.05 * np.abs(T).min()
    h = 1e-5
    fd = (relax.loss(T + h * V) - relax.loss(T - h * V)) / (2 * h)
    assert np.vdot(relax.loss_grad(T), V) == pytest.approx(fd, rel=1e-6, abs=1e-9)
    fd_hvp = (relax.loss_grad(T + h * V) - relax.loss_grad(T - h * V)) / (2 * h)
    np.testing.assert_allclose(relax.loss_hvp(T, V), fd_hvp, rtol=1e-5, atol=1e-9)


@pytest.mark.parametrize("domain,d", [("M2", 2), ("M2", 3), ("M3", 3)])
def test_omega_squared_gradient_finite_differences(domain, d):
    rng = np.random.default_rng(d)
    T = rng.standard_normal((9, 4))
    V = rng.standard_normal(T.shape)
    value, grad = omega_squared_gradient(T, d, domain)
    assert value == pytest.approx(omega(T, d, domain=domain) ** 2, rel=1e-10)
    h = 1e-6
    fd = (omega(T + h * V, d, domain=domain) ** 2 - omega(T - h * V, d, domain=domain) ** 2) / (2 * h)
    assert np.vdot(grad, V) == pytest.approx(fd, rel=1e-6)


@pytest.mark.parametrize("seed", range(10))
def test_omega_squared_variational_value_of_a_nearly_low_rank_matrix(seed):
    """A nearly low-rank T with a large mean (as the joint model's iterates): HT's near-null left
    singular vectors, with singular values of order 1e-12, mix with 1 through round-off; they
    must not enter the M2 basis (with a tiny sigma they would blow tr(T' M^+ T) up far above
    Omega^2 and make the joint model's local search climb)."""
    rng = np.random.default_rng(seed)
    T = (rng.standard_normal((30, 8)) @ rng.standard_normal((8, 34)) + 1e-12 * rng.standard_normal((30, 34))
         + 5.0 * rng.standard_normal((1, 34)))
    value, _ = omega_squared_gradient(T, 6, "M2")
    assert value == pytest.approx(omega(T, 6, domain="M2") ** 2, rel=1e-9)


def test_lower_bound_is_certified_everywhere(reference):
    X = make_data("logistic", 12, 2, 3, seed=2)
    relax = Conditional(X, "logistic", 3, alpha=0.5)
    opt = reference(relax).objective
    rng = np.random.default_rng(3)
    for _ in range(5):
        T = rng.standard_normal(X.shape)
        assert relax.lower_bound(T) <= opt + 1e-9
        assert relax.objective(T) >= opt - 1e-9


def test_bad_input():
    X = make_data("kl", 10, 2, 2, seed=0)
    with pytest.raises(ValueError, match="X"):
        Conditional(-X, "kl", 2)
    with pytest.raises(ValueError, match="X"):
        Conditional(X + 1.0, "logistic", 2)
    with pytest.raises(ValueError, match="n_clusters"):
        Conditional(X, "kl", 11)
    with pytest.raises(ValueError, match="n_clusters"):
        Conditional(X, "kl", 1)
    with pytest.raises(ValueError, match="alpha"):
        Conditional(X, "kl", 2, alpha=0.0)
    with pytest.raises(ValueError, match="domain"):
        Conditional(X, "kl", 2, domain="M1")
    with pytest.raises(ValueError, match="Unknown divergence"):
        Conditional(X, "hellinger", 2)
    relax = Conditional(X, "kl", 2)
    with pytest.raises(ValueError, match="Unknown method"):
        relax.solve("newton")
    with pytest.raises(ValueError, match="X must have shape"):
        relax.objective(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="local_search"):
        relax.solve(local_search="yes")


def test_engine_without_a_relaxation_returns_a_certified_result():
    """conditional_gradient on callables: a cvxclust.Result whose X is T, with the norm bound
    of Algorithm 1 in extras, the certified bound below the relaxation's optimum, and the start
    point left unchanged."""
    from cvxclust import Result
    from cvxclust.bregman._conditional_gradient import conditional_gradient

    X = make_data("kl", 15, 3, 3, seed=4)
    relax = Conditional(X, "kl", 3, alpha=0.5)
    T0 = np.full(X.shape, 0.1)
    T0_copy = T0.copy()
    res = conditional_gradient(relax.loss, relax.loss_grad, X.shape, 3, 0.5, loss_hvp=relax.loss_hvp, T0=T0,
                               tol=1e-7)
    np.testing.assert_array_equal(T0, T0_copy)
    assert isinstance(res, Result) and res.method == "conditional-gradient" and res.status == "optimal"
    assert res.residuals == {} and res.relative_gap <= 1e-7
    assert set(res.extras) == {"norm_bound"}
    assert res.extras["norm_bound"] == pytest.approx(omega(res.X, 3, domain="M2"), rel=1e-9)
    assert res.objective == pytest.approx(relax.objective(res.X), rel=1e-12)
    solved = relax.solve(tol=1e-7)
    assert res.objective == pytest.approx(solved.objective, rel=1e-6)
    assert res.dual_bound <= solved.objective + 1e-12
    with pytest.raises(ValueError, match="T0"):
        conditional_gradient(relax.loss, relax.loss_grad, X.shape, 3, 0.5, T0=np.ones((2, 2)))
    with pytest.raises(ValueError, match="shape"):
        conditional_gradient(relax.loss, relax.loss_grad, (15, "a"), 3, 0.5)
    with pytest.raises(ValueError, match="alpha"):
        conditional_gradient(relax.loss, relax.loss_grad, X.shape, 3, 0.0)
    with pytest.raises(ValueError, match="callables"):
        conditional_gradient(None, relax.loss_grad, X.shape, 3, 0.5)
    with pytest.raises(TypeError, match="warm_start"):
        conditional_gradient(relax.loss, relax.loss_grad, X.shape, 3, 0.5, warm_start=res)


def test_results_carry_M_in_extras_and_a_warm_start_finishes_at_once():
    X = make_data("logistic", 12, 2, 3, seed=2)
    relax = Conditional(X, "logistic", 3, alpha=0.5)
    first = relax.solve(tol=1e-7)
    assert set(first.extras) == {"norm_bound", "M"}
    np.testing.assert_allclose(first.extras["M"], relax.recover_M(first.X))
    again = relax.solve(tol=1e-7, warm_start=first)
    assert again.status in ("optimal", "stalled") and again.iterations <= 2
    assert again.objective <= first.objective + 1e-9 * abs(first.objective)
    same = relax.solve(tol=1e-7, warm_start=first.X)
    assert same.objective == pytest.approx(again.objective, rel=1e-12)
    with pytest.raises(ValueError, match="warm_start"):
        relax.solve(warm_start=np.ones((3, 3)))
    with pytest.raises(ValueError, match="warm_start"):
        relax.solve(warm_start=np.full(X.shape, np.nan))
    with pytest.raises(TypeError, match="warm_start"):
        relax.solve(warm_start=[[0.0]])
    itakura = Conditional(make_data("itakura-saito", 8, 2, 2, seed=1), "itakura-saito", 2)
    with pytest.raises(ValueError, match="not finite at warm_start"):
        itakura.solve(warm_start=np.zeros((8, 2)))  # 0 is outside the domain of F*


def test_loss_methods_check_their_arguments():
    X = make_data("itakura-saito", 8, 2, 2, seed=1)
    relax = Conditional(X, "itakura-saito", 2)
    T = relax.initial_point()
    for call in (relax.loss, relax.loss_grad, relax.lower_bound, relax.recover_M):
        with pytest.raises(ValueError, match="T"):
            call(np.full(X.shape, np.nan))
        with pytest.raises(ValueError, match="T"):
            call(np.ones(3))
    assert relax.loss(np.zeros(X.shape)) == np.inf  # outside the domain of F*: the extended value
    with pytest.raises(ValueError, match="T must have"):
        relax.loss_grad(np.zeros(X.shape))  # the gradient only exists inside
    with pytest.raises(ValueError, match="V"):
        relax.loss_hvp(T, np.ones(3))
    with pytest.raises(ValueError, match="X"):
        relax.residuals(np.full(X.shape, np.inf))
