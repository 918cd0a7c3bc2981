"""``Discriminative`` (28)/(29): the conditional-gradient solver against the cvxpy reference
(Clarabel), the certified bound, the recovered M, the exact offsets (Sinkhorn scaling), finite
differences of the reduced loss and its derivatives, limits and bad input."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize, special

from cvxclust.bregman._discriminative import Discriminative, optimal_offsets
from cvxclust.bregman.sets import residuals_M2, residuals_M3


def make_data(t: int, n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    labels = np.arange(t) % d
    return 2.0 * rng.standard_normal((d, n))[labels] + 0.3 * rng.standard_normal((t, n))


CASES = [(12, 2, 2, 1e-2, "M2"), (15, 2, 3, 1e-3, "M2"), (20, 3, 3, 3e-3, "M2"), (15, 3, 3, 1e-3, "M3")]


@pytest.mark.parametrize("t,n,d,gamma,domain", CASES)
def test_conditional_gradient_matches_reference(t, n, d, gamma, domain, reference):
    X = make_data(t, n, d, seed=t + n)
    relax = Discriminative(X, d, alpha=gamma, domain=domain)
    res = relax.solve(tol=1e-7)
    ref = reference(relax)
    assert res.status in ("optimal", "stalled")
    assert abs(res.objective - ref.objective) / abs(ref.objective) <= 1e-4
    assert res.dual_bound <= ref.objective + 1e-9 * abs(ref.objective)
    assert res.max_residual <= 1e-5
    # the recovered M lies in the domain and attains Omega^2(V)
    check = residuals_M2 if domain == "M2" else residuals_M3
    M = res.extras["M"]
    assert max(check(M, d).values()) <= 1e-5
    V = res.X
    assert np.trace(V.T @ np.linalg.pinv(M, rcond=1e-10) @ V) * gamma / 2 == pytest.approx(
        res.objective - relax.loss(V), rel=1e-6)
    # solutions close (the optimum of (29) is unique: L is strictly convex along V's that change
    # the scores, and Omega^2 is strictly convex on the rest)
    assert np.linalg.norm(res.X - ref.X) / np.linalg.norm(ref.X) <= 1e-2
    # the offsets make P doubly stochastic (Omega' 1 = 1 of (25))
    tau = res.extras["tau"]
    P = special.softmax(X @ V.T / t + tau[None, :], axis=1)
    np.testing.assert_allclose(P.sum(axis=0), 1.0, atol=1e-10)


def test_offsets_are_the_exact_minimiser():
    rng = np.random.default_rng(0)
    A = 3.0 * rng.standard_normal((9, 9))
    tau, P, err = optimal_offsets(A)
    assert err <= 1e-11
    np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)

    def phi(x):
        return special.logsumexp(A + x[None, :], axis=1).sum() - x.sum()

    best = optimize.minimize(phi, np.zeros(9), method="BFGS", options={"gtol": 1e-10})
    assert phi(tau) <= best.fun + 1e-10
    # shift invariance: the loss does not see a constant added to tau
    assert phi(tau + 5.0) == pytest.approx(phi(tau), abs=1e-10)


def test_loss_is_partial_minimum_over_offsets():
    X = make_data(10, 2, 2, seed=1)
    relax = Discriminative(X, 2, alpha=1e-2)
    rng = np.random.default_rng(2)
    V = 5.0 * rng.standard_normal(X.shape)
    t = X.shape[0]

    def full(tau):
        Z = X @ V.T / t + tau[None, :]
        return (special.logsumexp(Z, axis=1).sum() - np.trace(Z)) / t

    value = relax.loss(V)
    assert value == pytest.approx(full(relax.offsets(V)), rel=1e-12)
    for _ in range(5):
        assert value <= full(rng.standard_normal(t)) + 1e-12


def test_loss_derivatives_finite_differences():
    X = make_data(10, 3, 2, seed=3)
    relax = Discriminative(X, 2, alpha=1e-2)
    rng = np.random.default_rng(4)
    V = 10.0 * rng.standard_normal(X.shape)
    W = rng.standard_normal(X.shape)
    h = 1e-5
    fd = (relax.loss(V + h * W) - relax.loss(V - h * W)) / (2 * h)
    assert np.vdot(relax.loss_grad(V), W) == pytest.approx(fd, rel=1e-6)
    fd_hvp = (relax.loss_grad(V + h * W) - relax.loss_grad(V - h * W)) / (2 * h)
    np.testing.assert_allclose(relax.loss_hvp(V, W), fd_hvp, rtol=1e-5, atol=1e-9 * np.abs(fd_hvp).max())
    # the full gradient matrix entry by entry
    G = relax.loss_grad(V)
    for i, j in [(0, 0), (3, 1), (9, 2)]:
        E = np.zeros_like(V)
        E[i, j] = 1.0
        fd = (relax.loss(V + h * E) - relax.loss(V - h * E)) / (2 * h)
        assert G[i, j] == pytest.approx(fd, rel=1e-5, abs=1e-10)


def test_lower_bound_is_certified_everywhere(reference):
    X = make_data(12, 2, 2, seed=5)
    relax = Discriminative(X, 2, alpha=1e-2)
    opt = reference(relax).objective
    rng = np.random.default_rng(6)
    for _ in range(5):
        V = 5.0 * rng.standard_normal(X.shape)
        assert relax.lower_bound(V) <= opt + 1e-9
        assert relax.objective(V) >= opt - 1e-9


def test_bad_input():
    X = make_data(10, 2, 2, seed=0)
    with pytest.raises(ValueError, match="X"):
        Discriminative(np.full((10, 2), np.nan), 2)
    with pytest.raises(ValueError, match="X"):
        Discriminative(np.ones(10), 2)
    with pytest.raises(ValueError, match="n_clusters"):
        Discriminative(X, 11)
    with pytest.raises(ValueError, match="n_clusters"):
        Discriminative(X, 1)
    with pytest.raises(ValueError, match="alpha"):
        Discriminative(X, 2, alpha=-1.0)
    with pytest.raises(ValueError, match="domain"):
        Discriminative(X, 2, domain="M1")
    relax = Discriminative(X, 2)
    with pytest.raises(ValueError, match="Unknown method"):
        relax.solve("newton")
    with pytest.raises(ValueError, match="X must have shape"):
        relax.objective(np.zeros((3, 3)))
    with pytest.raises(ValueError, match="V contains NaN"):
        relax.loss(np.full(X.shape, np.inf))
    with pytest.raises(ValueError, match="tol"):
        relax.solve(tol=-1.0)


def test_saturated_scores_do_not_break_the_offsets():
    """Regression: scores so large that the softmax rows saturate make the Newton Hessian of the
    offsets singular in floating point (LinAlgError: Singular matrix); Newton then takes the
    least-squares step and the solve ends with finite offsets and the achieved error."""
    for seed in range(3):
        A = 1e3 * np.random.default_rng(seed).standard_normal((10, 10))
        tau, P, error = optimal_offsets(A)
        assert np.all(np.isfinite(tau)) and np.all(np.isfinite(P)) and np.isfinite(error)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    for seed in (2, 3):
        rng = np.random.default_rng(seed)
        X, V = 1e2 * rng.standard_normal((10, 2)), 1e2 * rng.standard_normal((10, 2))
        relax = Discriminative(X, 2, alpha=1e-2)
        assert np.all(np.isfinite(relax.loss_hvp(V, rng.standard_normal(X.shape))))
        assert np.isfinite(relax.loss(V))


def test_blobs_scaled_by_a_thousand_solve():
    """Regression: two blobs scaled by 1e3 (the estimator's discriminative model) raised
    LinAlgError from the offsets of the local search's trial points."""
    from sklearn.datasets import make_blobs

    X, y = make_blobs(20, centers=[[0.0, 0.0], [5.0, 5.0]], cluster_std=0.3, random_state=2)
    res = Discriminative(1e3 * X, 2, alpha=1e-2).solve(tol=1e-4, random_state=0)
    assert res.status == "optimal" and res.relative_gap <= 1e-4
    assert res.max_residual <= 1e-6
    assert res.dual_bound <= res.objective


def test_optimal_offsets_checks_and_keeps_its_inputs():
    rng = np.random.default_rng(0)
    A, tau0 = rng.standard_normal((5, 5)), rng.standard_normal(5)
    A_copy, tau0_copy = A.copy(), tau0.copy()
    optimal_offsets(A, tau0)
    np.testing.assert_array_equal(A, A_copy)
    np.testing.assert_array_equal(tau0, tau0_copy)
    for args, name in [((np.ones((3, 4)),), "A"), ((np.full((3, 3), np.nan),), "A"),
                       ((A, np.ones(4)), "tau0"), ((A, np.full(5, np.inf)), "tau0")]:
        with pytest.raises(ValueError, match=name):
            optimal_offsets(*args)
    with pytest.raises(ValueError, match="tol"):
        optimal_offsets(A, tol=0.0)
    with pytest.raises(ValueError, match="max_iter"):
        optimal_offsets(A, max_iter=0)
