"""The cost operator of the standard form against the dense matrix it stands for."""

import numpy as np
import pytest
import scipy.sparse as sp

from cvxclust.generic.cost import Cost


def _parts(n, seed):
    rng = np.random.default_rng(seed)
    D = rng.normal(size=(n, n))
    S = sp.random(n, n, density=0.1, random_state=seed)
    return D + D.T, (S + S.T).tocsr(), float(rng.normal())


@pytest.mark.parametrize("which", [("dense",), ("sparse",), ("ones",), ("dense", "sparse", "ones"), ("sparse", "ones"),
                                   ("lowrank",), ("dense", "sparse", "ones", "lowrank"), ("sparse", "ones", "lowrank")])
def test_operations_match_the_dense_matrix(which):
    n = 23
    D, S, w = _parts(n, 3)
    U, s = np.linalg.qr(np.random.default_rng(2).normal(size=(n, 3)))[0], np.array([2.0, -1.0, 0.5])
    cost = Cost(n, dense=D if "dense" in which else None, sparse=S if "sparse" in which else None,
                ones=w if "ones" in which else 0.0, lowrank=(U, s) if "lowrank" in which else None)
    C = (D if "dense" in which else 0) + (S.toarray() if "sparse" in which else 0) + (w if "ones" in which else 0)
    C = np.broadcast_to(C + ((U * s) @ U.T if "lowrank" in which else 0), (n, n))
    V = np.random.default_rng(4).normal(size=(n, 3))
    np.testing.assert_allclose(cost.matmul(V), C @ V, atol=1e-12)
    np.testing.assert_allclose(cost @ V[:, 0], C @ V[:, 0], atol=1e-12)
    np.testing.assert_allclose(cost.diagonal(), np.diagonal(C), atol=1e-12)
    np.testing.assert_allclose(cost.dense(), C, atol=1e-12)
    assert cost.frobenius_norm() == pytest.approx(np.linalg.norm(C), rel=1e-12)
    assert cost.inner_factor(V) == pytest.approx(np.trace(V.T @ C @ V), rel=1e-12)
    assert cost.inner(V @ V.T) == pytest.approx(np.vdot(C, V @ V.T), rel=1e-12)
    assert cost.is_dense == (which == ("dense",)) and cost.error == 0.0


def test_dense_cost_is_held_not_copied():
    D = _parts(5, 0)[0]
    cost = Cost(5, dense=D)
    assert cost.dense() is D and cost.nbytes == D.nbytes
