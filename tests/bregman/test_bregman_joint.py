"""``Joint`` (32)/(33): the conditional-gradient solver on the scaled stacked variable against the
cvxpy reference (Clarabel), the certified bound, the recovered M, the decoupling of the prior
part over M2, finite differences of the loss derivatives, limits and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from cvxclust.bregman._conditional import Conditional
from cvxclust.bregman._joint import Joint
from cvxclust.bregman.sets import residuals_M2, residuals_M3


def make_data(t: int, n: int, d: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    labels = np.arange(t) % d
    X = rng.uniform(0.5, 2.0, (d, n))[labels] + 0.3 * rng.standard_normal((t, n))
    return np.abs(X) + 0.05


CASES = [("euclidean", 15, 3, 3, 0.5, 0.5, "M2"), ("kl", 20, 3, 3, 0.5, 0.1, "M2"),
         ("kl", 12, 2, 2, 0.2, 0.05, "M2"), ("euclidean", 15, 2, 3, 0.5, 0.05, "M3"),
         ("kl", 15, 3, 3, 0.5, 0.05, "M3")]


@pytest.mark.parametrize("kind,t,n,d,alpha,beta,domain", CASES)
def test_conditional_gradient_matches_reference(kind, t, n, d, alpha, beta, domain, reference):
    X = make_data(t, n, d, seed=t + n)
    relax = Joint(X, kind, d, alpha=alpha, beta=beta, domain=domain)
    res = relax.solve(tol=1e-7)
    ref = reference(relax)
    assert res.status in ("optimal", "stalled")
    assert abs(res.objective - ref.objective) / abs(ref.objective) <= 1e-4
    assert res.dual_bound <= ref.objective + 1e-9 * abs(ref.objective)
    # Algorithm 1 with the local search never raises the objective
    objectives = np.array([row["objective"] for row in res.history])
    assert np.all(np.diff(objectives) <= 1e-12 * np.abs(objectives[1:]))
    assert res.max_residual <= 1e-5
    check = residuals_M2 if domain == "M2" else residuals_M3
    M = res.extras["M"]
    assert max(check(M, d).values()) <= 1e-5
    W = relax.scaled(res.X)
    assert 0.5 * np.trace(W.T @ np.linalg.pinv(M, rcond=1e-10) @ W) == pytest.approx(
        res.objective - relax.loss(res.X), rel=1e-6)
    assert np.linalg.norm(res.X - ref.X) / np.linalg.norm(ref.X) <= 1e-2
    np.testing.assert_array_equal(res.extras["u"], res.X[:, 0])
    np.testing.assert_array_equal(res.extras["T"], res.X[:, 1:])
    assert res.extras["example_prior"].sum() == pytest.approx(1.0)


def test_prior_decouples_over_M2():
    # over M2, u* is constant (Jensen: g(u/t) >= g(Ju/t), and Omega_M2 only grows with H u), with
    # value c = (1 - 1/t) / (beta t), and T* solves Conditional with alpha t (module notes of _joint)
    t, d, alpha, beta = 15, 3, 0.3, 0.2
    X = make_data(t, 3, d, seed=11)
    res = Joint(X, "kl", d, alpha=alpha, beta=beta).solve(tol=1e-9)
    c = (1 - 1 / t) / (beta * t)
    np.testing.assert_allclose(res.extras["u"], c, rtol=1e-4)
    cond = Conditional(X, "kl", d, alpha=alpha * t).solve(tol=1e-9)
    u_part = c / t + np.log(t) - c + 0.5 * beta * c * c * t
    assert res.objective == pytest.approx(u_part + cond.objective / t, rel=1e-6)
    np.testing.assert_allclose(res.extras["T"], cond.X, atol=1e-3 * np.abs(cond.X).max())
    # over M3 the prior part does couple: u* is not constant
    res3 = Joint(X, "kl", d, alpha=alpha, beta=beta, domain="M3").solve(tol=1e-8)
    u3 = res3.extras["u"]
    assert np.ptp(u3) > 1e-3 * np.abs(u3).max()


def test_cluster_prior():
    X = make_data(12, 2, 2, seed=1)
    relax = Joint(X, "euclidean", 2, alpha=0.5, beta=0.5)
    labels = np.arange(12) % 2
    with pytest.raises(TypeError, match="u"):
        relax.cluster_prior(labels)  # no hidden state: u is always given
    u = np.linspace(-1.0, 1.0, 12)
    q = relax.cluster_prior(labels, u)
    p = np.exp(u / 12) / np.exp(u / 12).sum()
    np.testing.assert_allclose(q, [p[::2].sum(), p[1::2].sum()])
    result = relax.solve()
    np.testing.assert_allclose(relax.cluster_prior(labels, result), [0.5, 0.5], atol=1e-6)
    np.testing.assert_allclose(relax.cluster_prior(labels, result.extras["u"]), [0.5, 0.5], atol=1e-6)
    with pytest.raises(ValueError, match="labels"):
        relax.cluster_prior(np.arange(12) % 3, u)
    for bad in (np.ones(11), np.full(12, np.nan), "u"):
        with pytest.raises(ValueError, match="u must be"):
            relax.cluster_prior(labels, bad)


@pytest.mark.parametrize("kind", ["euclidean", "kl", "logistic", "itakura-saito"])
def test_loss_derivatives_finite_differences(kind):
    X = make_data(8, 2, 2, seed=3)
    if kind == "logistic":
        X = 1.0 / (1.0 + np.exp(-2.0 * (X - 1.2)))
    relax = Joint(X, kind, 2, alpha=0.5, beta=0.5)
    rng = np.random.default_rng(4)
    Z = 0.5 * rng.standard_normal((8, 3))
    Z[:, 0] *= 20.0
    if kind == "itakura-saito":
        Z[:, 1:] = -np.abs(Z[:, 1:]) - 0.5
    V = rng.standard_normal(Z.shape)
    h = 1e-6
    fd = (relax.loss(Z + h * V) - relax.loss(Z - h * V)) / (2 * h)
    assert np.vdot(relax.loss_grad(Z), V) == pytest.approx(fd, rel=1e-6)
    fd_hvp = (relax.loss_grad(Z + h * V) - relax.loss_grad(Z - h * V)) / (2 * h)
    np.testing.assert_allclose(relax.loss_hvp(Z, V), fd_hvp, rtol=1e-5, atol=1e-8 * np.abs(fd_hvp).max())


def test_lower_bound_is_certified_everywhere(reference):
    X = make_data(12, 2, 2, seed=5)
    relax = Joint(X, "kl", 2, alpha=0.5, beta=0.1)
    opt = reference(relax).objective
    rng = np.random.default_rng(6)
    for _ in range(5):
        Z = rng.standard_normal((12, 3))
        assert relax.lower_bound(Z) <= opt + 1e-9
        assert relax.objective(Z) >= opt - 1e-9


def test_itakura_saito_starts_inside_the_domain():
    X = make_data(10, 2, 2, seed=8)
    relax = Joint(X, "itakura-saito", 2, alpha=0.5, beta=0.5)
    assert not np.isfinite(relax.loss(np.zeros((10, 3))))
    res = relax.solve(tol=1e-6)
    assert np.isfinite(res.objective)
    assert res.residuals["domain"] == 0.0
    assert res.dual_bound <= res.objective


def test_bad_input():
    X = make_data(10, 2, 2, seed=0)
    with pytest.raises(ValueError, match="X"):
        Joint(-X, "kl", 2)
    with pytest.raises(ValueError, match="X"):
        Joint(X + 1.0, "logistic", 2)
    with pytest.raises(ValueError, match="n_clusters"):
        Joint(X, "kl", 11)
    with pytest.raises(ValueError, match="n_clusters"):
        Joint(X, "kl", 1)
    with pytest.raises(ValueError, match="alpha"):
        Joint(X, "kl", 2, alpha=0.0)
    with pytest.raises(ValueError, match="beta"):
        Joint(X, "kl", 2, beta=-1.0)
    with pytest.raises(ValueError, match="domain"):
        Joint(X, "kl", 2, domain="M1")
    with pytest.raises(ValueError, match="Unknown divergence"):
        Joint(X, "hellinger", 2)
    relax = Joint(X, "kl", 2)
    with pytest.raises(ValueError, match="Unknown method"):
        relax.solve("newton")
    with pytest.raises(ValueError, match="X must have shape"):
        relax.objective(np.zeros((10, 2)))
    with pytest.raises(ValueError, match="local_search"):
        relax.solve(local_search="yes")


def test_warm_start_maps_through_the_scaling():
    """The solver works in W = [sqrt(beta) u, sqrt(alpha) T]; a warm start is given in [u, T]."""
    X = make_data(12, 2, 2, seed=6)
    relax = Joint(X, "kl", 2, alpha=0.3, beta=0.2, domain="M3")
    first = relax.solve(tol=1e-8)
    again = relax.solve(tol=1e-8, warm_start=first)
    assert again.iterations <= 2
    assert again.objective == pytest.approx(first.objective, rel=1e-8)
    assert set(again.extras) == {"norm_bound", "u", "T", "M", "example_prior"}
