"""Numerical checks of the theory of CLUHSICAL (Proposition 1: cvxclust.cluhsical._krr; Proposition 2:
cvxclust.cluhsical._first_order; Section III-C: cvxclust.cluhsical._lemmas): Proposition 1,
Lemmas 3-5 / Proposition 2, the first-order approximation (20), Corollary 1, Lemmas 1-2."""

from __future__ import annotations

import itertools

import cvxpy as cp
import networkx as nx
import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from cvxclust import structures
from cvxclust.cluhsic import objective as trace_objective
from cvxclust.cluhsical import (
    FirstOrderApproximation,
    approximation_error,
    constraint_pairs,
    first_order_approximation,
    first_order_value,
    joint_kernel_matrices,
    krr_dual_value,
    krr_primal_problem,
    lemma_objective,
    lemma_partition_matrix,
    proposition2_objective,
)
from cvxclust.kernels import center, rbf


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


# ---------------------------------------------------------------------------------- helpers


def three_leaf_tree() -> nx.DiGraph:
    """root -> (a -> leaves 0, 1), root -> leaf 2: a tree with leaves at depths 2, 2, 1."""
    T = nx.DiGraph([("r", "a"), ("a", "l0"), ("a", "l1"), ("r", "l2")])
    return structures.tree(T)


def hierarchy_features(T: nx.DiGraph) -> np.ndarray:
    """Lambda of Section IV-A-2, written out: lambda_z(y) = 1 if z is y or an ancestor of y,
    root excluded (one column per non-root node)."""
    root, leaves = T.graph["root"], T.graph["clusters"]
    nodes = [z for z in T if z != root]
    Lam = np.zeros((len(leaves), len(nodes)))
    for k, leaf in enumerate(leaves):
        for col, z in enumerate(nodes):
            if z == leaf or nx.has_path(T, z, leaf):
                Lam[k, col] = 1.0
    return Lam


def psd_factor(A: np.ndarray) -> np.ndarray:
    """Some Lambda with Lambda Lambda^T = A."""
    w, V = np.linalg.eigh(A)
    return V * np.sqrt(np.clip(w, 0, None))


def explicit_pi_tilde(labels, loss) -> np.ndarray:
    """(12) entry by entry."""
    c = loss.shape[0]
    Pi = np.zeros((len(labels), c))
    for i, yi in enumerate(labels):
        for y in range(c):
            Pi[i, y] = sum(loss[yi, u] for u in range(c) if u != yi) if y == yi else -loss[yi, y]
    return Pi


def delta_vector(labels, loss) -> np.ndarray:
    samples, outputs = constraint_pairs(labels, loss.shape[0])
    return loss[np.asarray(labels)[samples], outputs]


def random_kernel(m: int, seed: int, centred: bool = True) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((m, 3))
    K = rbf(X)
    return center(K) if centred else K


def all_labelings(m: int, c: int):
    return (np.array(t) for t in itertools.product(range(c), repeat=m))


def rel(a, b) -> float:
    return abs(a - b) / max(abs(a), abs(b), 1e-300)


# Proposition 1 instances: (output kernel A / output features, loss, labels)
def prop1_case(name: str):
    if name == "zero-one":
        A = structures.output_kernel(structures.chain(3))
        return psd_factor(A), 1.0 - np.eye(3), np.array([0, 1, 2, 0, 1])
    if name == "chain":
        S = structures.chain(3)
        return psd_factor(structures.output_kernel(S)), structures.loss_matrix(S), np.array([0, 1, 2, 0, 1])
    if name == "tree":
        T = three_leaf_tree()
        return hierarchy_features(T), structures.loss_matrix(T), np.array([0, 1, 2, 2, 0])
    if name == "tree4":
        T = structures.tree([2, 2])
        return hierarchy_features(T), structures.loss_matrix(T), np.array([0, 1, 2, 3, 1])
    raise AssertionError(name)


# ---------------------------------------------------------------------------------- building blocks


def test_constraint_pairs_order():
    samples, outputs = constraint_pairs([1, 0, 2], 3)
    assert samples.tolist() == [0, 0, 1, 1, 2, 2]
    assert outputs.tolist() == [0, 2, 1, 2, 0, 1]


def test_hierarchy_features_match_output_kernel():
    for T in (three_leaf_tree(), structures.tree([2, 2]), structures.tree([3, 2])):
        Lam = hierarchy_features(T)
        np.testing.assert_array_equal(Lam @ Lam.T, structures.output_kernel(T))
    # tree loss of the 3-leaf tree: siblings 1, leaf 2 vs the deeper leaves: height 2
    np.testing.assert_array_equal(structures.loss_matrix(three_leaf_tree()), [[0, 1, 2], [1, 0, 2], [2, 2, 0]])


@pytest.mark.parametrize("name", ["zero-one", "chain", "tree", "tree4"])
def test_joint_kernel_is_gram_of_explicit_features(name):
    Lam, loss, labels = prop1_case(name)
    Phi = np.random.default_rng(1).standard_normal((labels.size, 3))
    C = 0.7
    J, S = joint_kernel_matrices(Phi @ Phi.T, Lam @ Lam.T, labels, loss, C)
    samples, outputs = constraint_pairs(labels, Lam.shape[0])
    D = np.array([np.kron(Phi[i], Lam[labels[i]] - Lam[y]) for i, y in zip(samples, outputs)])
    np.testing.assert_allclose(J, D @ D.T, rtol=0, atol=1e-12 * np.abs(J).max())
    assert np.array_equal(J, J.T)
    m = labels.size
    np.testing.assert_allclose(S, [m / (2 * C * loss[labels[i], y]) for i, y in zip(samples, outputs)], rtol=1e-15)


# ---------------------------------------------------------------------------------- Proposition 1


@pytest.mark.parametrize("C", [0.3, 2.0])
@pytest.mark.parametrize("name", ["zero-one", "chain", "tree", "tree4"])
def test_proposition1_primal_equals_dual(name, C):
    Lam, loss, labels = prop1_case(name)
    m = labels.size
    Phi = np.random.default_rng(0).standard_normal((m, 3))
    K, A = Phi @ Phi.T, Lam @ Lam.T
    problem = krr_primal_problem(Phi, Lam, labels, loss, C)
    problem.solve(solver="CLARABEL")
    assert problem.status == cp.OPTIMAL
    value = krr_dual_value(K, A, labels, loss, C)
    assert rel(problem.value, value) < 1e-6

    # the dual maximizer alpha* = (J + S)^{-1} 1 gives w* = sum alpha dphi and the optimum
    J, S = joint_kernel_matrices(K, A, labels, loss, C)
    alpha = np.linalg.solve(J + np.diag(S), np.ones(S.size))
    samples, outputs = constraint_pairs(labels, Lam.shape[0])
    D = np.array([np.kron(Phi[i], Lam[labels[i]] - Lam[y]) for i, y in zip(samples, outputs)])
    delta = loss[labels[samples], outputs]
    w = D.T @ alpha
    zeta = m * alpha / (2 * C * np.sqrt(delta))  # stationarity in zeta of the Lagrangian
    np.testing.assert_allclose(D @ w + zeta / np.sqrt(delta), 1.0, atol=1e-10)  # feasible
    primal = 0.5 * w @ w + C / m * zeta @ zeta
    assert rel(primal, 0.5 * alpha.sum()) < 1e-10
    assert rel(primal, value) < 1e-10
    scale = np.abs(w).max()
    np.testing.assert_allclose(problem.var_dict["w"].value, w, atol=1e-5 * scale)
    np.testing.assert_allclose(problem.var_dict["zeta"].value, zeta, atol=1e-5 * np.abs(zeta).max())
    np.testing.assert_allclose(problem.constraints[0].dual_value, alpha, atol=1e-5 * np.abs(alpha).max())


def test_krr_dual_value_gamma_scales_the_joint_kernel():
    Lam, loss, labels = prop1_case("tree")
    Phi = np.random.default_rng(3).standard_normal((labels.size, 2))
    K, A = Phi @ Phi.T, Lam @ Lam.T
    # gamma k is the kernel of the feature map sqrt(gamma) phi
    g = 0.37
    assert rel(krr_dual_value(K, A, labels, loss, 1.3, gamma=g), krr_dual_value(g * K, A, labels, loss, 1.3)) < 1e-12


# ---------------------------------------------------------------------------------- Lemmas 4, 5 and Proposition 2


def loss_cases():
    user = np.array([[0.0, 0.5, 3.0, 1.0], [2.0, 0.0, 0.25, 1.5], [1.0, 1.0, 0.0, 4.0], [0.3, 2.5, 1.2, 0.0]])
    return [
        ("ring5", structures.output_kernel(structures.ring(5)), structures.loss_matrix(structures.ring(5))),
        ("tree22", structures.output_kernel(structures.tree([2, 2])), structures.loss_matrix(structures.tree([2, 2]))),
        ("chain4", structures.output_kernel(structures.chain(4)), structures.loss_matrix(structures.chain(4))),
        ("user-asymmetric", structures.output_kernel(structures.chain(4)), user),
    ]


@pytest.mark.parametrize("case", loss_cases(), ids=lambda case: case[0])
def test_lemmas_4_and_5_over_random_labels(case):
    _, A, loss = case
    c = A.shape[0]
    for seed in range(5):
        rng = np.random.default_rng(seed)
        m = 9
        K = random_kernel(m, seed)
        labels = rng.integers(0, c, m)
        J, _ = joint_kernel_matrices(K, A, labels, loss, 1.0)
        d = delta_vector(labels, loss)
        Pi_t = explicit_pi_tilde(labels, loss)
        # Pi~ = Pi L with L = diag(Delta 1) - Delta (the route to CLUHSIC's solvers)
        Pi = np.eye(c)[labels]
        np.testing.assert_allclose(Pi_t, Pi @ (np.diag(loss.sum(1)) - loss), atol=1e-14)
        lhs4 = d @ J @ d
        rhs4 = trace_objective(K, A, Pi_t)
        assert rel(lhs4, rhs4) < 1e-10  # Lemma 4
        assert rel(d.sum(), 0.5 * np.abs(Pi_t).sum()) < 1e-12  # Lemma 5


@pytest.mark.parametrize("case", loss_cases(), ids=lambda case: case[0])
@pytest.mark.parametrize("C,gamma", [(0.5, 1.0), (3.0, 0.01), (20.0, 2.0)])
def test_proposition2_objective_is_minus_t2(case, C, gamma):
    _, A, loss = case
    m = 8
    K = random_kernel(m, 11)
    labels = np.random.default_rng(5).integers(0, A.shape[0], m)
    t2 = first_order_value(K, A, labels, loss, C, gamma)
    assert rel(-t2, proposition2_objective(K, A, labels, loss, C, gamma)) < 1e-10
    J, S = joint_kernel_matrices(K, A, labels, loss, C)
    fo = first_order_approximation(J, S, gamma)
    assert rel(fo.t2, t2) < 1e-12
    assert rel(fo.t1, 2 * krr_dual_value(K, A, labels, loss, C, gamma)) < 1e-12


# ---------------------------------------------------------------------------------- first-order approximation (20)


def expansion_instance(kind: str):
    m = 10
    K = random_kernel(m, 21)
    S = structures.chain(3) if kind == "chain" else three_leaf_tree()
    labels = np.arange(m) % 3
    loss = structures.loss_matrix(S) if kind != "zero-one" else 1.0 - np.eye(3)
    return K, structures.output_kernel(S), labels, loss


@pytest.mark.parametrize("kind", ["zero-one", "chain", "tree"])
def test_first_order_error_is_second_order_in_gamma_C(kind):
    K, A, labels, loss = expansion_instance(kind)
    m = labels.size
    J, _ = joint_kernel_matrices(K, A, labels, loss, 1.0)
    d = delta_vector(labels, loss)
    # leading coefficient: (t1 - t2) / t1 = eps^2 (1'DJDJD1) / (1'D1) + O(eps^3), eps = 2 gamma C / m
    kappa = (d @ J @ (d * (J @ d))) / d.sum()
    eps_start = 0.1 / np.sqrt(kappa)  # error about 1e-2 at the first step
    errors, ratios = [], []
    for k in range(4):
        eps = eps_start * 10.0**-k
        C = eps * m / 2  # gamma = 1
        err = approximation_error(K, A, labels, loss, C, 1.0)
        errors.append(err)
        ratios.append(err / eps**2)
    # err / eps^2 converges to kappa, with a first-order correction that shrinks 10x per step
    deviations = [abs(r / kappa - 1) for r in ratios]
    assert deviations[-1] < 1e-3
    assert all(b < 0.2 * a for a, b in itertools.pairwise(deviations))
    # hence the Table VI pattern: 10x smaller C gives about 100x smaller error
    steps = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((steps > 80) & (steps < 125)), steps
    assert abs(steps[-1] - 100) < 1


@pytest.mark.parametrize("kind", ["zero-one", "tree"])
def test_first_order_error_depends_on_gamma_times_C_only(kind):
    K, A, labels, loss = expansion_instance(kind)
    m = labels.size
    for C in (m, 0.1 * m, 0.01 * m):
        e1 = approximation_error(K, A, labels, loss, C, 0.1)
        e2 = approximation_error(K, A, labels, loss, 0.1 * C, 1.0)
        assert rel(e1, e2) < 1e-7


@pytest.mark.parametrize("kind", ["zero-one", "chain", "tree"])
def test_first_order_error_bound_and_series_condition(kind):
    K, A, labels, loss = expansion_instance(kind)
    J, S = joint_kernel_matrices(K, A, labels, loss, 2.0)
    u = 1 / S
    J_norm = np.linalg.eigvalsh(J)[-1]
    gamma_max = 1 / (u.max() * J_norm)
    rho1 = np.abs(np.linalg.eigvals(np.diag(u) @ J)).max()  # rho(S^{-1} J), unsymmetrized
    for factor in (1e-3, 0.5, 0.99, 2.0, 50.0):
        gamma = factor * gamma_max
        fo = first_order_approximation(J, S, gamma)
        assert isinstance(fo, FirstOrderApproximation)
        assert rel(fo.gamma_max, gamma_max) < 1e-10
        assert fo.condition_holds == (factor < 1)
        assert rel(fo.spectral_radius, gamma * rho1) < 1e-8
        assert fo.spectral_radius <= factor * (1 + 1e-10)  # rho <= gamma ||S^-1|| ||J|| (10)
        assert fo.t1 >= fo.t2  # t1 - t2 = sum (u'v)^2 mu^2 / (1 + mu) >= 0
        assert fo.relative_error <= fo.spectral_radius**2 * (1 + 1e-10) + 1e-15
        t1 = np.ones(S.size) @ np.linalg.solve(gamma * J + np.diag(S), np.ones(S.size))
        assert rel(fo.t1, t1) < 1e-10


def test_first_order_approximation_lanczos_branch():
    # m (c - 1) = 420 > 400: the top eigenvalues come from scipy's eigsh
    m = 210
    K = random_kernel(m, 2)
    S_ = structures.chain(3)
    labels = np.arange(m) % 3
    J, S = joint_kernel_matrices(K, structures.output_kernel(S_), labels, structures.loss_matrix(S_), 0.05 * m)
    fo = first_order_approximation(J, S, 0.5)
    r = np.sqrt(1 / S)
    rho = 0.5 * np.linalg.eigvalsh(r[:, None] * J * r[None, :])[-1]
    gamma_max = 1 / ((1 / S).max() * np.linalg.eigvalsh(J)[-1])
    assert rel(fo.spectral_radius, rho) < 1e-8
    assert rel(fo.gamma_max, gamma_max) < 1e-8


# ---------------------------------------------------------------------------------- Corollary 1


@pytest.mark.parametrize("structure", ["chain", "flat"])
def test_corollary1_zero_one_cluhsical_picks_cluhsic_partition(structure):
    m, c = 7, 3
    K = random_kernel(m, 4)
    A = structures.output_kernel(structures.chain(c) if structure == "chain" else structures.flat(c))
    zero_one = 1.0 - np.eye(c)
    C, gamma = 0.1 * m, 1.0
    cluhsic, cluhsical = [], []
    for labels in all_labelings(m, c):
        Pi = np.eye(c)[labels]
        Pi_t = explicit_pi_tilde(labels, zero_one)
        cl = trace_objective(K, A, Pi)
        # with K 1 = 0: Pi~ = c Pi - 1 1^T and tr(K Pi~ A Pi~') = c^2 tr(K Pi A Pi')
        assert abs(trace_objective(K, A, Pi_t) - c**2 * cl) < 1e-10 * max(1.0, abs(cl))
        cluhsic.append(cl)
        cluhsical.append(proposition2_objective(K, A, labels, zero_one, C, gamma))
    cluhsic, cluhsical = np.array(cluhsic), np.array(cluhsical)
    best_cluhsic = np.flatnonzero(cluhsic >= cluhsic.max() - 1e-9 * abs(cluhsic.max()))
    best_cluhsical = np.flatnonzero(cluhsical >= cluhsical.max() - 1e-9 * abs(cluhsical.max()))
    np.testing.assert_array_equal(best_cluhsic, best_cluhsical)
    # (11) is the increasing affine map C~ c^2 tr(K Pi A Pi') - (C / m) 2 m (c - 1)
    C_tilde = 4 * C**2 * gamma / m**2
    np.testing.assert_allclose(cluhsical, C_tilde * c**2 * cluhsic - 2 * C * (c - 1), atol=1e-10)


def test_corollary1_needs_a_centred_kernel():
    m, c = 7, 3
    K = random_kernel(m, 4, centred=False)
    A = structures.output_kernel(structures.chain(c))
    labels = np.array([0, 0, 1, 1, 2, 2, 2])
    Pi = np.eye(c)[labels]
    Pi_t = explicit_pi_tilde(labels, 1.0 - np.eye(c))
    assert rel(trace_objective(K, A, Pi_t), c**2 * trace_objective(K, A, Pi)) > 1e-3


# ---------------------------------------------------------------------------------- Lemmas 1 and 2


def balanced_labelings(m: int, c: int):
    return [lab for lab in all_labelings(m, c) if np.all(np.bincount(lab, minlength=c) == m // c)]


def l1_normalized(P: np.ndarray) -> np.ndarray:
    return P / np.abs(P).sum(axis=0)


def test_lemma_objective_matches_explicit_centres():
    rng = np.random.default_rng(7)
    m, c = 8, 3
    Phi = rng.standard_normal((m, 4))
    K = Phi @ Phi.T
    labels = np.array([0, 1, 2, 0, 1, 2, 0, 0])
    for form in ("cluhsic", "cluhsical"):
        P = lemma_partition_matrix(labels, c, form)
        value = lemma_objective(K, P)

        def explicit(mu, P=P):  # (14) with explicit features and centres mu (c x d)
            return sum(abs(P[i, k]) * np.sum((np.sign(P[i, k]) * Phi[i] - mu[k]) ** 2)
                       for i in range(m) for k in range(c))

        mu = (P.T @ Phi) / np.abs(P).sum(axis=0)[:, None]  # (16) / (18)
        assert rel(value, explicit(mu)) < 1e-12
        for _ in range(5):  # (18) minimizes (14) over the centres
            assert explicit(mu + 0.1 * rng.standard_normal(mu.shape)) > value
    np.testing.assert_array_equal(lemma_partition_matrix([0, 2], 3, "cluhsic"), [[1, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(lemma_partition_matrix([0, 2], 3, "cluhsical"), [[2, -1, -1], [-1, -1, 2]])


def test_lemmas_1_and_2_affine_relations():
    m, c = 6, 3
    K = random_kernel(m, 9, centred=False)  # the lemmas do not need a centred kernel
    trK = np.trace(K)
    zero_one = 1.0 - np.eye(c)
    a1 = m / c  # Lemma 1: A = (m / c) I
    a2 = 2 * (c - 1) * m / c  # Lemma 2, from the proof in Appendix III
    a2_stated = (2 * c - 1) * m / c  # Lemma 2 as printed in its statement
    k_means, cluhsical_obj = [], []
    for labels in balanced_labelings(m, c):
        P15 = lemma_partition_matrix(labels, c, "cluhsic")
        obj1 = trace_objective(K, a1 * np.eye(c), l1_normalized(np.eye(c)[labels]))
        assert abs(lemma_objective(K, P15) - (trK - obj1)) < 1e-10

        P17 = lemma_partition_matrix(labels, c, "cluhsical")
        Pi_t = explicit_pi_tilde(labels, zero_one)
        np.testing.assert_array_equal(P17, Pi_t)  # (17) is (12) with the zero-one loss
        np.testing.assert_allclose(np.abs(P17).sum(axis=0), a2)  # sum_j |Pi_jc| = 2 (c - 1) m / c
        obj2 = trace_objective(K, a2 * np.eye(c), l1_normalized(Pi_t))
        value = lemma_objective(K, P17)
        assert abs(value - (2 * (c - 1) * trK - obj2)) < 1e-10
        obj2_stated = trace_objective(K, a2_stated * np.eye(c), l1_normalized(Pi_t))
        assert abs(value - (2 * (c - 1) * trK - 2 * (c - 1) / (2 * c - 1) * obj2_stated)) < 1e-10
        k_means.append(value)
        cluhsical_obj.append(obj2)
    k_means, cluhsical_obj = np.array(k_means), np.array(cluhsical_obj)
    assert np.argmin(k_means) == np.argmax(cluhsical_obj)


def test_lemmas_need_equal_cluster_sizes():
    m, c = 6, 3
    K = random_kernel(m, 9, centred=False)
    labels = np.array([0, 0, 0, 0, 1, 2])
    P15 = lemma_partition_matrix(labels, c, "cluhsic")
    obj1 = trace_objective(K, m / c * np.eye(c), l1_normalized(P15))
    assert abs(lemma_objective(K, P15) - (np.trace(K) - obj1)) > 1e-3
    P17 = lemma_partition_matrix(labels, c, "cluhsical")
    obj2 = trace_objective(K, 2 * (c - 1) * m / c * np.eye(c), l1_normalized(P17))
    assert abs(lemma_objective(K, P17) - (2 * (c - 1) * np.trace(K) - obj2)) > 1e-3


# ---------------------------------------------------------------------------------- bad input


def valid():
    m = 5
    K = random_kernel(m, 0)
    A = structures.output_kernel(structures.chain(3))
    return K, A, np.array([0, 1, 2, 0, 1]), structures.loss_matrix(structures.chain(3)), 1.0


@pytest.mark.parametrize(
    "change, name",
    [
        (lambda a: {**a, "loss": 1.0 - np.eye(3) - np.diag([0, 0, 0]) + np.diag([0.5, 0, 0])}, "loss"),
        (lambda a: {**a, "loss": np.array([[0, 1, 1], [1, 0, 0], [1, 1, 0.0]])}, "loss"),
        (lambda a: {**a, "loss": np.array([[0, -1, 1], [1, 0, 1], [1, 1, 0.0]])}, "loss"),
        (lambda a: {**a, "loss": np.ones((2, 2)) - np.eye(2)}, "loss"),
        (lambda a: {**a, "labels": np.array([0, 1, 3, 0, 1])}, "labels"),
        (lambda a: {**a, "labels": np.array([0, 1, 2])}, "labels"),
        (lambda a: {**a, "labels": np.array([0, -1, 2, 0, 1])}, "labels"),
        (lambda a: {**a, "K": a["K"] + np.triu(np.ones((5, 5)), 1)}, "K"),
        (lambda a: {**a, "K": -np.eye(5)}, "K"),
        (lambda a: {**a, "K": np.eye(4)}, "labels"),
        (lambda a: {**a, "A": np.array([[1.0, 2, 0], [2, 1, 0], [0, 0, 1]])}, "A"),
        (lambda a: {**a, "A": np.ones((1, 1))}, "A"),
        (lambda a: {**a, "C": 0.0}, "C"),
        (lambda a: {**a, "C": -1.0}, "C"),
        (lambda a: {**a, "C": np.nan}, "C"),
    ],
)
def test_bad_input_names_the_argument(change, name):
    K, A, labels, loss, C = valid()
    args = change({"K": K, "A": A, "labels": labels, "loss": loss, "C": C})
    for fn in (joint_kernel_matrices, krr_dual_value, first_order_value, approximation_error):
        with pytest.raises(ValueError, match=name):
            fn(args["K"], args["A"], args["labels"], args["loss"], args["C"])


def test_bad_input_other_arguments():
    K, A, labels, loss, C = valid()
    for fn in (krr_dual_value, first_order_value, approximation_error, proposition2_objective):
        with pytest.raises(ValueError, match="gamma"):
            fn(K, A, labels, loss, C, 0.0)
    # (11) needs no S, so a zero off-diagonal loss is allowed there, but not a nonzero diagonal
    proposition2_objective(K, A, labels, np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0.0]]), C)
    with pytest.raises(ValueError, match="loss"):
        proposition2_objective(K, A, labels, np.eye(3), C)
    J, S = joint_kernel_matrices(K, A, labels, loss, C)
    with pytest.raises(ValueError, match="S"):
        first_order_approximation(J, S[:-1])
    with pytest.raises(ValueError, match="S"):
        first_order_approximation(J, -S)
    with pytest.raises(ValueError, match="J"):
        first_order_approximation(J[:, :-1], S)
    with pytest.raises(ValueError, match="gamma"):
        first_order_approximation(J, S, -1.0)
    Phi, Lam = np.ones((5, 2)), np.eye(3)
    with pytest.raises(ValueError, match="Phi"):
        krr_primal_problem(Phi[:, :, None], Lam, labels, loss, C)
    with pytest.raises(ValueError, match="Lambda"):
        krr_primal_problem(Phi, np.ones((1, 2)), labels, loss, C)
    with pytest.raises(ValueError, match="loss"):
        krr_primal_problem(Phi, Lam, labels, 1.0 - np.eye(4), C)
    with pytest.raises(ValueError, match="labels"):
        krr_primal_problem(Phi, Lam, labels[:3], loss, C)
    with pytest.raises(ValueError, match="C"):
        krr_primal_problem(Phi, Lam, labels, loss, 0)
    with pytest.raises(ValueError, match="Pi"):
        lemma_objective(K, np.ones((4, 3)))
    with pytest.raises(ValueError, match="Pi"):
        lemma_objective(K, np.full((5, 3), np.nan))
    with pytest.raises(ValueError, match="K"):
        lemma_objective(np.ones((5, 4)), np.ones((5, 3)))
    with pytest.raises(ValueError, match="form"):
        lemma_partition_matrix(labels, 3, "kmeans")
    with pytest.raises(ValueError, match="labels"):
        lemma_partition_matrix([0, 3], 3)
    with pytest.raises(ValueError, match="n_clusters"):
        constraint_pairs([0, 0], 1)
