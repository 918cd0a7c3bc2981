"""The fixed-diagonal path of the low-rank method (max-cut): the Riemannian descent on the
sphere's product (:mod:`cvxclust.generic.lowrank_oblique`) and the smallest eigenvalue of the
certificate aimed at a Ritz residual (:func:`cvxclust.generic.lowrank_certificate.smallest_eigenvalue`),
at orders above the one where the slack is written out, so that Lanczos runs."""

from __future__ import annotations

import warnings

import numpy as np
import scipy.sparse as sp
import pytest
from sklearn.exceptions import ConvergenceWarning

import cvxclust
from cvxclust import problem_classes as pc
from cvxclust.generic import CvxpyRelaxation
from cvxclust.generic.factor_rows import FactorRows
from cvxclust.generic.lowrank_certificate import DENSE_ORDER, SlackOperator, slack_bound, smallest_eigenvalue
from cvxclust.generic.lowrank_oblique import oblique_descent

N = 100  # above DENSE_ORDER: the slack's smallest eigenvalue comes from Lanczos


def _slack(seed, gtol=1e-1):
    """The slack ``C - Diag(w)`` of a max-cut SDP at the stationarity multipliers of a factor of
    rank 3 descended to ``gtol`` (its smallest eigenvalue negative, as at a check), and C written out."""
    form = CvxpyRelaxation(pc.max_cut(pc.random_graph(N, 6, random_state=seed))).standard_form()
    rng = np.random.default_rng(seed)
    V = oblique_descent(form.cost.matmul, rng.standard_normal((N, 3)), np.ones(N), gtol=gtol, max_iter=10_000).V
    w = np.einsum("ij,ij->i", form.cost.matmul(V), V)
    S = SlackOperator(form.cost, FactorRows(form.rows), np.zeros(form.m), w)
    return S, S @ np.eye(N), form.cost.frobenius_norm()


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_aimed_residual_is_met_and_the_bound_stays_below_the_smallest_eigenvalue(seed):
    """Lanczos aimed at a Ritz residual meets it (or a twentieth of ``|theta|`` where larger),
    cold or warm started, and ``theta - residual`` less the rounding allowance is below the true
    smallest eigenvalue."""
    assert N > DENSE_ORDER
    S, dense, cost_norm = _slack(seed)
    exact = np.linalg.eigvalsh((dense + dense.T) / 2)[0]
    assert exact < -1e-3  # a clearly indefinite slack, as where the rank must grow
    aim = 1e-6
    theta, u, residual = smallest_eigenvalue(S, random_state=seed, residual=aim)
    assert residual <= max(aim, 0.05 * abs(theta)) and theta - residual <= exact
    assert abs(theta - exact) <= residual
    np.testing.assert_allclose(residual, np.linalg.norm(dense @ u - theta * u), rtol=1e-6, atol=1e-14)
    # warm started from a nearby slack's eigenvector, as at the next check
    nearby = SlackOperator(S.cost, S.rows, S.y, S.w * (1 + 1e-3))
    theta_w, _, residual_w = smallest_eigenvalue(nearby, random_state=seed, start=u, residual=aim)
    exact_w = np.linalg.eigvalsh((nearby @ np.eye(N)))[0]
    assert residual_w <= max(aim, 0.05 * abs(theta_w)) and theta_w - residual_w <= exact_w
    found = slack_bound(S, 0.0, float(N), cost_norm, random_state=seed, residual=aim)
    assert found["lambda_min"] <= exact and found["ritz_residual"] <= max(aim, 0.05 * abs(exact) * 1.01)
    # an aim above a twentieth of |theta| is what is met
    theta, _, residual = smallest_eigenvalue(S, random_state=seed, residual=0.5 * abs(exact))
    assert residual <= 0.5 * abs(exact) and theta - residual <= exact


def test_a_psd_claim_is_confirmed_past_the_cluster_near_zero():
    """Near a stationary factor of rank above the solution's, S has a cluster of eigenvalues near
    zero (the factor's columns) and a slightly negative smallest one.  A Ritz value at or above
    zero, which would certify a p.s.d. slack, is held to the aimed residual and confirmed from a
    fresh start: ``theta - residual`` stays below the smallest eigenvalue from every start."""
    form = CvxpyRelaxation(pc.max_cut(pc.random_graph(N, 6, random_state=4))).standard_form()
    V = oblique_descent(form.cost.matmul, np.random.default_rng(0).standard_normal((N, 12)), np.ones(N),
                        gtol=2e-3, max_iter=10_000).V
    w = np.einsum("ij,ij->i", form.cost.matmul(V), V)
    S = SlackOperator(form.cost, FactorRows(form.rows), np.zeros(form.m), w)
    values = np.linalg.eigvalsh(S @ np.eye(N))
    assert values[0] < 0 and np.sum(np.abs(values) < 1e-3) >= 5  # a cluster near zero
    aim = 1e-7
    for seed in range(8):
        theta, _, residual = smallest_eigenvalue(S, random_state=seed, residual=aim)
        assert theta - residual <= values[0], seed


def test_aimed_residual_spends_fewer_products_than_a_tight_tolerance():
    """A loose aim stops Lanczos early (the bound keeps the residual), a tight ARPACK tolerance
    runs on: the aim is what bounds the products."""
    S, dense, _ = _slack(3)
    exact = np.linalg.eigvalsh((dense + dense.T) / 2)[0]
    S.products = 0
    theta, _, residual = smallest_eigenvalue(S, random_state=0, tol=1e-12)
    tight = S.products
    S.products = 0
    theta_aim, _, residual_aim = smallest_eigenvalue(S, random_state=0, residual=1e-3 * abs(exact))
    assert S.products < tight
    assert theta_aim - residual_aim <= exact and residual_aim <= 0.05 * abs(theta_aim)


def test_max_cut_by_lanczos_agrees_with_alm():
    """Max-cut above the dense order (the certificate by Lanczos aimed at its residual, the
    gradient tolerance from the last gap): certified optimal, within tol of the optimum that the
    dense method ``alm`` certifies (Clarabel takes about a minute at this order)."""
    problem = pc.max_cut(pc.random_graph(N, 6, random_state=4))
    reference = cvxclust.solve(problem, method="alm", tol=1e-9, residual_tol=1e-9)
    assert reference.status == "optimal"
    tol = 1e-6
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        result = cvxclust.solve(problem, method="lowrank", tol=tol, residual_tol=1e-9)
    assert result.status == "optimal" and result.relative_gap <= tol
    assert abs(result.objective - reference.objective) <= 2 * tol * abs(reference.objective)
    # each certificate is valid: the lowrank bound is above the (maximised) optimum, alm's below
    assert result.dual_bound >= reference.objective - 1e-9 * abs(reference.objective)
    assert reference.dual_bound >= result.objective - 1e-9 * abs(reference.objective)
    checked = [row for row in result.history if "lambda_min" in row]
    assert checked and result.extras["eigsh"] == len(checked)


def test_memory_check_counts_the_copies_of_the_descent_on_the_spheres(monkeypatch):
    """On the sphere's product no L-BFGS-B pairs are held: the factor's memory is checked for
    12 copies (the descent's iterates, gradients, products and work), not L-BFGS-B's 30."""
    from cvxclust import _memory

    problem = pc.max_cut(pc.random_graph(40, 5, random_state=3))
    copies = 8 * 40 * 8  # bytes of one factor of rank 8
    monkeypatch.setattr(_memory, "available_bytes", lambda: 20 * copies)
    result = cvxclust.solve(problem, method="lowrank", rank=8, max_rank=8, tol=1e-6)
    assert result.status == "optimal"
    monkeypatch.setattr(_memory, "available_bytes", lambda: 10 * copies)
    with pytest.raises(ValueError, match=r"method='lowrank' at rank 8 .* needs .* give a smaller rank"):
        cvxclust.solve(problem, method="lowrank", rank=8)


# -- the products and the steps in row blocks over threads (cvxclust.generic.sparse_product) ----------
def test_threaded_sparse_product_equals_the_serial_one_bitwise():
    """Row blocks over threads give C @ V bit for bit, for a factor and a vector, into a given
    output too; the blocks balance the nonzeros and cover every row once."""
    from cvxclust.generic.sparse_product import SparseProduct

    rng = np.random.default_rng(0)
    n = 4000
    C = sp.coo_matrix((rng.standard_normal(5 * n), (rng.integers(n, size=5 * n), rng.integers(n, size=5 * n))),
                      shape=(n, n))
    C = (C + C.T + sp.diags(rng.standard_normal(n))).tocsr()
    V = rng.standard_normal((n, 9))
    serial = C @ V
    for threads in (1, 2, 3, 7):
        product = SparseProduct(C, threads)
        rows = product.blocks.slices
        assert rows[0].start == 0 and rows[-1].stop == n and all(a.stop == b.start for a, b in zip(rows, rows[1:]))
        assert len(rows) == threads
        counts = [C.indptr[r.stop] - C.indptr[r.start] for r in rows]
        assert max(counts) - min(counts) <= 2 * max(np.diff(C.indptr))
        assert np.array_equal(product(V), serial)
        out = np.full_like(V, np.nan)
        assert product(V, out=out) is out and np.array_equal(out, serial)
        assert np.array_equal(product(V[:, 3]), C @ V[:, 3])


def test_slack_products_in_threads_equal_the_serial_ones():
    """The certificate's slack multiplies a sparse cost in row blocks: the same products, bit for
    bit, with one thread or three, for Lanczos's vectors and for blocks."""
    S, dense, _ = _slack(0)
    threaded = SlackOperator(S.cost, S.rows, S.y, S.w, threads=3)
    x = np.random.default_rng(0).standard_normal((N, 2))
    serial = SlackOperator(S.cost, S.rows, S.y, S.w, threads=1)
    assert np.array_equal(threaded @ x, serial @ x) and np.array_equal(threaded @ x[:, 0], serial @ x[:, 0])
    np.testing.assert_allclose(serial @ x, dense @ x, rtol=1e-13, atol=1e-12)


def test_descent_in_threads_and_chunks_reproduces_the_serial_iterates(monkeypatch):
    """The descent's arithmetic by chunks of rows over threads: the iterates do not depend on the
    threads (bit for bit, the product in row blocks too); with one chunk (the factor within
    ``CHUNK_BYTES``) they are those of the whole-array arithmetic; smaller chunks change only the
    rounding of the sums."""
    from cvxclust.generic import lowrank_oblique
    from cvxclust.generic.sparse_product import SparseProduct

    form = CvxpyRelaxation(pc.max_cut(pc.random_graph(60, 6, random_state=2))).standard_form()
    V0 = np.random.default_rng(2).standard_normal((60, 4))
    ones = np.ones(60)
    runs = {threads: oblique_descent(SparseProduct(form.cost.sparse_part, threads), V0, ones, gtol=1e-9,
                                     max_iter=2000, threads=threads) for threads in (1, 3)}
    whole = oblique_descent(form.cost.matmul, V0, ones, gtol=1e-9, max_iter=2000)
    for run in runs.values():
        assert run.iterations == whole.iterations and np.array_equal(run.V, whole.V) and run.value == whole.value
    monkeypatch.setattr(lowrank_oblique, "CHUNK_BYTES", 7 * 4 * 8)  # chunks of 7 rows
    chunked = {threads: oblique_descent(SparseProduct(form.cost.sparse_part, threads), V0, ones, gtol=0.0,
                                        max_iter=5, threads=threads) for threads in (1, 3)}
    assert np.array_equal(chunked[1].V, chunked[3].V) and chunked[1].value == chunked[3].value
    first = oblique_descent(form.cost.matmul, V0, ones, gtol=0.0, max_iter=5)
    np.testing.assert_allclose(chunked[1].V, first.V, rtol=0, atol=1e-12)
    converged = oblique_descent(form.cost.matmul, V0, ones, gtol=1e-9, max_iter=2000, threads=3)
    assert converged.grad_norm <= 1e-9 and abs(converged.value - whole.value) <= 1e-10 * abs(whole.value)


def test_threads_are_checked(monkeypatch):
    from cvxclust.generic import sparse_product

    with pytest.raises(ValueError, match=r"'threads' parameter of RowBlocks must be an int in the range .* Got 0"):
        sparse_product.RowBlocks(10, 0)
    monkeypatch.setattr(sparse_product, "PRODUCT_THREADS", 1.5)
    with pytest.raises(ValueError, match=r"'PRODUCT_THREADS' parameter of cvxclust.generic.sparse_product .* Got 1.5"):
        cvxclust.solve(pc.max_cut(pc.random_graph(20, 4, random_state=0)), method="lowrank")


def test_a_limit_holds_the_threads_in_its_context_only(monkeypatch):
    from cvxclust.generic import sparse_product

    monkeypatch.setattr(sparse_product, "PRODUCT_THREADS", 4)
    with sparse_product.limited_product_threads(1):
        assert sparse_product.product_threads() == 1
        with sparse_product.limited_product_threads(None):
            assert sparse_product.product_threads() == 4
        assert sparse_product.product_threads() == 1
    assert sparse_product.product_threads() == 4 and sparse_product.PRODUCT_THREADS == 4
    with sparse_product.limited_product_threads(8):  # a limit, never more threads
        assert sparse_product.product_threads() == 4
    with pytest.raises(ValueError, match="limit"), sparse_product.limited_product_threads(0):
        pass


@pytest.mark.parametrize("threads", [1, 2])
def test_max_cut_with_threads_agrees_with_alm(monkeypatch, threads):
    """Certified optimal with the products and steps in one thread or two, within tol of the
    optimum ``alm`` certifies (Lanczos certificate: n above the dense order)."""
    from cvxclust.generic import sparse_product

    monkeypatch.setattr(sparse_product, "PRODUCT_THREADS", threads)
    problem = pc.max_cut(pc.random_graph(70, 5, random_state=5))
    reference = cvxclust.solve(problem, method="alm", tol=1e-9, residual_tol=1e-9)
    tol = 1e-6
    result = cvxclust.solve(problem, method="lowrank", tol=tol, residual_tol=1e-9)
    assert result.status == "optimal" and result.relative_gap <= tol
    assert abs(result.objective - reference.objective) <= 2 * tol * abs(reference.objective)
    assert result.dual_bound >= reference.objective - 1e-9 * abs(reference.objective)


def test_cost_product_of_a_sparse_cost_with_other_parts_is_the_whole_cost():
    """The low-rank method's product with a cost: the threaded sparse product only where C is its
    sparse part alone; beside a low-rank part (a dense part compressed), ``ones`` or a dense part,
    the whole cost's product (the sparse part's alone would descend on another objective)."""
    from cvxclust.generic.cost import Cost
    from cvxclust.generic.sparse_product import SparseProduct, cost_product

    rng = np.random.default_rng(6)
    n = 40
    S = sp.random(n, n, density=0.1, random_state=6, format="csr")
    S = S + S.T
    U = np.linalg.qr(rng.standard_normal((n, 2)))[0]
    V = rng.standard_normal((n, 3))
    assert isinstance(cost_product(Cost(n, sparse=S), 2), SparseProduct)
    for cost in (Cost(n, sparse=S, lowrank=(U, np.array([3.0, -1.0]))), Cost(n, sparse=S, ones=0.5),
                 Cost(n, dense=np.eye(n), sparse=S)):
        np.testing.assert_array_equal(cost_product(cost, 2)(V), cost.matmul(V))
        assert np.abs(cost_product(cost, 2)(V) - S @ V).max() > 1e-3


def test_the_default_rank_of_a_fixed_diagonal_is_capped_by_the_memory_available(monkeypatch):
    """Where the descent's copies of a factor at the default rank would take more than half the
    memory available (max-cut at n = 10^6), the starting rank is what half of it holds, never below 8;
    a rank that is given is kept."""
    import cvxclust.generic.lowrank as lowrank
    from cvxclust.generic.lowrank_oblique import oblique_rank

    n = 300
    problem = pc.max_cut(pc.random_graph(n, 6, random_state=0))

    def starting_rank(**options):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return cvxclust.solve(problem, method="lowrank", max_iter=1, **options).extras["rank"]

    assert starting_rank() == oblique_rank(n) == 17
    per_column = 2 * lowrank.OBLIQUE_COPIES * 8 * n
    monkeypatch.setattr(lowrank, "available_bytes", lambda: 12 * per_column + 5)
    assert starting_rank() == 12
    monkeypatch.setattr(lowrank, "available_bytes", lambda: per_column)
    assert starting_rank() == 8
    assert starting_rank(rank=10) == 10
