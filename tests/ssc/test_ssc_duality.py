"""Hand-written gradients against central finite differences, and weak duality.

* ``relaxation.dual_value(Q)`` = g(Q) = 1/2||W - Pi_C1(W)||^2 - <K, Q> - 1/2||Q||^2, W = K + Q,
  has gradient -Pi_C1(K + Q) in the interior Q > 0;
* the LD-SSC oracle theta(Q, u) = 1/2||P_-||^2 - 2 1^T u, P = -(Q + u1^T + 1u^T + K), of (15)
  has gradients (18) d/du = -2 - 2 P_- 1 and (19) d/dQ = -P_-;
* every Q >= 0 (and every u) certifies a lower bound on the optimum.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import minimize
from ssc_helpers import kernel, reference

from cvxclust.ssc import FrobeniusDS, FrobeniusPSD
from cvxclust.ssc._lagrange_dual import _DualOracle

RELAXATIONS = (FrobeniusPSD, FrobeniusDS)
INSTANCES = [("iris", 20, 1.0), ("wine", 24, 0.5), ("digits", 30, 1.0)]


def sym(A):
    return (A + A.T) / 2


def interior_Q(n, rng, low=0.05, high=0.5):
    """Entrywise positive symmetric Q: an interior point of Q >= 0."""
    return sym(rng.uniform(low, high, (n, n)))


def unit_direction(n, rng):
    D = sym(rng.standard_normal((n, n)))
    return D / np.linalg.norm(D)


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda i: f"{i[0]}{i[1]}")
@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_dual_value_gradient_is_minus_projection(cls, instance):
    K = kernel(*instance)
    n = K.shape[0]
    relaxation = cls(K)
    project = relaxation.projector(partial=False)
    rng = np.random.default_rng(0)
    h = 1e-5
    for trial in range(4):
        Q = interior_Q(n, rng)
        grad = -project(K + Q)
        for _ in range(3):
            D = unit_direction(n, rng)
            fd = (relaxation.dual_value(Q + h * D) - relaxation.dual_value(Q - h * D)) / (2 * h)
            analytic = float(np.sum(grad * D))
            assert fd == pytest.approx(analytic, rel=1e-5, abs=1e-6 * max(1.0, np.linalg.norm(grad)))


def test_dual_value_of_ds_is_quadratic():
    """For (6) Pi_C1 is affine, so g is quadratic, with second derivative -<D, Pi_0 D> along D
    (Pi_0 the linear part of Pi_C1): second differences are exact even for a large step."""
    K = kernel("iris", 20, 1.0)
    n = K.shape[0]
    relaxation = FrobeniusDS(K)
    rng = np.random.default_rng(1)
    Q = interior_Q(n, rng, 1.0, 2.0)
    D = unit_direction(n, rng) * 0.5  # stays in the interior
    g = relaxation.dual_value
    second = g(Q + D) - 2 * g(Q) + g(Q - D)
    # d^2/dt^2 g(Q + tD) = -<D, Pi_0(D)> with Pi_0 the projection onto {S sym, S 1 = 0}
    Pi0_D = relaxation.projector()(D) - relaxation.projector()(np.zeros((n, n)))
    assert second == pytest.approx(-np.sum(D * Pi0_D), rel=1e-6)


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda i: f"{i[0]}{i[1]}")
def test_ld_oracle_gradients_18_19(instance):
    K = kernel(*instance)
    n = K.shape[0]
    oracle = _DualOracle(K, partial_eig=False)
    rng = np.random.default_rng(2)
    h = 1e-6
    for _ in range(4):
        Q = sym(rng.uniform(0, 0.3, (n, n)))
        u = rng.uniform(-0.5, 0.0, n)  # mixes signs in P so that P_- is nontrivial
        theta, gQ, gu = oracle(Q, u)
        assert gQ.shape == (n, n) and gu.shape == (n,)
        P = -(Q + u[:, None] + u[None, :] + K)
        w, V = np.linalg.eigh(P)
        P_minus = (V * np.minimum(w, 0)) @ V.T
        assert 0 < np.sum(w < 0) < n
        # the formulas themselves, computed independently
        assert theta == pytest.approx(0.5 * np.sum(P_minus**2) - 2 * u.sum(), rel=1e-12)
        np.testing.assert_allclose(gQ, -P_minus, atol=1e-10)
        np.testing.assert_allclose(gu, -2 - 2 * P_minus.sum(axis=1), atol=1e-10)
        # ... and against central differences, along Q, along u, and jointly
        for _ in range(3):
            D, d = unit_direction(n, rng), rng.standard_normal(n)
            d /= np.linalg.norm(d)
            for DQ, du in ((D, 0 * d), (0 * D, d), (D, d)):
                plus = oracle(Q + h * DQ, u + h * du)[0]
                minus = oracle(Q - h * DQ, u - h * du)[0]
                fd = (plus - minus) / (2 * h)
                analytic = float(np.sum(gQ * DQ) + gu @ du)
                assert fd == pytest.approx(analytic, rel=1e-5, abs=1e-6)
        # single coordinates of u: (18) entry by entry
        for i in rng.choice(n, 3, replace=False):
            e = np.zeros(n)
            e[i] = 1.0
            fd = (oracle(Q, u + h * e)[0] - oracle(Q, u - h * e)[0]) / (2 * h)
            assert fd == pytest.approx(gu[i], rel=1e-5, abs=1e-6)


def test_ld_oracle_gradient_of_asymmetric_Q_is_symmetric_part():
    """theta depends on Q through (Q + Q^T)/2 only, so an asymmetric direction has the
    derivative of its symmetric part (L-BFGS-B moves Q freely in R^{n x n})."""
    K = kernel("iris", 20, 0.5)
    n = K.shape[0]
    oracle = _DualOracle(K, partial_eig=False)
    rng = np.random.default_rng(3)
    Q, u = rng.uniform(0, 0.3, (n, n)), rng.uniform(-0.5, 0, n)
    _, gQ, _ = oracle(Q, u)
    D = rng.standard_normal((n, n))
    h = 1e-6
    fd = (oracle(Q + h * D, u)[0] - oracle(Q - h * D, u)[0]) / (2 * h)
    assert fd == pytest.approx(float(np.sum(gQ * D)), rel=1e-5)


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda i: f"{i[0]}{i[1]}")
def test_ld_oracle_primal_and_bound(instance):
    """(10): F = -P_- is p.s.d.; 1/2||K||^2 - theta(Q, u) is a lower bound for every Q >= 0, u;
    maximising it over u recovers g(Q) of dual_value (the same dual, u eliminated)."""
    K = kernel(*instance)
    n = K.shape[0]
    ref = reference("FrobeniusPSD", *instance)
    relaxation = FrobeniusPSD(K)
    oracle = _DualOracle(K, partial_eig=False)
    rng = np.random.default_rng(4)
    for scale in (0.0, 0.1, 1.0):
        Q = sym(rng.uniform(0, scale, (n, n)))
        u = rng.standard_normal(n)
        theta, *_ = oracle(Q, u)
        assert np.linalg.eigvalsh(oracle.primal())[0] >= -1e-10
        assert oracle.dual_bound(theta) <= ref.objective + 1e-9 * abs(ref.objective)
        best = minimize(lambda v: oracle(Q, v)[::2], u, jac=True, method="L-BFGS-B",
                        options={"maxiter": 5000, "ftol": 1e-15, "gtol": 1e-10})
        sup_over_u = oracle.dual_bound(best.fun)
        g = relaxation.dual_value(Q)
        assert sup_over_u <= g + 1e-7 * abs(g)  # g eliminates u exactly
        assert sup_over_u == pytest.approx(g, rel=1e-6)


@pytest.mark.parametrize("instance", INSTANCES, ids=lambda i: f"{i[0]}{i[1]}")
@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_weak_duality(cls, instance):
    """g(Q) <= f(F) for every Q (clipped to Q >= 0) and every feasible F, e.g. F = 11^T/n,
    the identity, and the reference optimum."""
    K = kernel(*instance)
    n = K.shape[0]
    relaxation = cls(K)
    ref = reference(cls.name, *instance)
    feasible = [np.full((n, n), 1.0 / n), np.eye(n), 0.5 * np.eye(n) + 0.5 / n]
    for F in feasible:
        assert max(relaxation.residuals(F).values()) <= 1e-12
    rng = np.random.default_rng(5)
    for Q in [np.zeros((n, n)), interior_Q(n, rng), sym(rng.standard_normal((n, n))), 10 * interior_Q(n, rng)]:
        g = relaxation.dual_value(Q)
        for F in feasible:
            assert g <= relaxation.objective(F) + 1e-12 * abs(relaxation.objective(F))
        assert g <= ref.objective + 1e-9 * abs(ref.objective)
    # the optimal multiplier closes the gap (strong duality) ...
    assert ref.dual_bound == pytest.approx(ref.objective, rel=1e-6)
    # ... and a scaled multiplier does not
    problem = relaxation.problem()
    problem.solve(solver="CLARABEL")
    Q_star = np.asarray(problem.constraints[0].dual_value)
    assert relaxation.dual_value(Q_star) == pytest.approx(ref.objective, rel=1e-6)
    assert relaxation.dual_value(2 * Q_star + 0.1) < ref.objective - 1e-6 * abs(ref.objective)


def test_dual_value_clips_negative_and_asymmetric_Q():
    K = kernel("iris", 20, 1.0)
    n = K.shape[0]
    rng = np.random.default_rng(6)
    Q = rng.standard_normal((n, n))
    for cls in RELAXATIONS:
        relaxation = cls(K)
        assert relaxation.dual_value(Q) == pytest.approx(relaxation.dual_value(np.maximum(sym(Q), 0)), rel=1e-14)


@pytest.mark.parametrize("cls", RELAXATIONS, ids=lambda c: c.name)
def test_dual_bound_from_reference(cls):
    instance = ("wine", 24, 0.5)
    relaxation = cls(kernel(*instance))
    problem = relaxation.problem()
    assert relaxation.dual_bound_from_reference(problem) is None  # not solved yet
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-9, tol_gap_rel=1e-9, tol_feas=1e-9)
    bound = relaxation.dual_bound_from_reference(problem)
    objective = relaxation.objective(relaxation.primary_variable(problem).value)
    assert bound <= objective + 1e-9 * abs(objective)
    assert abs(objective - bound) <= 1e-6 * abs(objective)
    # problem() states the paper's (6)/(7): 1/2||F - K||^2, F >= 0 first
    assert problem.value == pytest.approx(objective, rel=1e-9)
    assert len(problem.constraints) == (3 if cls.psd else 2)
