r"""The spectral start of the low-rank method (:mod:`cvxclust.generic.lowrank`) for the k-means
SDP of Peng and Wei: a clustering's normalised indicator factor and the row multipliers it
leaves stationary.

Where the rows hold a trace row ``tr X = k`` and the row sums of every index (``X 1 = 1``,
:attr:`~cvxclust.generic.lowrank_form.LowRankForm.shift`) with ``X >= 0``, a random
nonnegative factor may end at a local minimum of the factored problem far from the SDP's
optimum.  The start here is that of spectral clustering:

1. the ``k`` eigenvectors of the smallest eigenvalues of the cost C (the largest of the kernel
   ``K = -C``), by Lanczos on products with C (cheap where C is sparse or of low rank);
2. their rows clustered into ``k`` parts by k-means (scikit-learn's ``KMeans``), as spectral
   clustering rounds them;
3. the factor ``V = [1_{C_1} / sqrt(|C_1|), ..., 1_{C_k} / sqrt(|C_k|)]``: ``V V^T`` is the
   clustering's matrix of Peng and Wei, with ``tr X = k`` and ``X 1 = 1`` exactly and
   ``V >= 0``;
4. the row multipliers y by least squares of stationarity on the factor's support: the gradient
   ``2 (C - A^*(y)) V`` of the Lagrangian vanishes on the entries where ``V > 0`` (the first-order
   conditions of a nonnegative factor), ``min_y ||P((A^*(y) - C) V)||`` with P the restriction to
   that support, solved by LSQR (the adjoint of ``y -> A^*(y) V`` by polarisation,
   ``A(sym(G V^T)) = (A((V + G)(V + G)^T) - A((V - G)(V - G)^T)) / 4``), so that the augmented
   Lagrangian does not first pull the point away from the clustering.

A start changes only the path of the iterations: the certificate is the same.  Where the
relaxation is tight (well separated clusters) the start is its solution and the first check
certifies it.

References: J. Peng, Y. Wei, "Approximating K-means-type clustering via semidefinite programming",
SIAM Journal on Optimization 18(1), 2007; Z. Zhuang, Y. Chen, Y. Yang, R. Y. Zhang, "Statistically
optimal k-means clustering via nonnegative low-rank semidefinite programming" (NLR), ICLR 2024 (its
spectral initialisation); A. Y. Ng, M. I. Jordan, Y. Weiss, "On spectral clustering: analysis and
an algorithm", NeurIPS 2001.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.linalg import LinearOperator, eigsh, lsqr

__all__ = ["START_KINDS", "spectral_applies", "spectral_factor", "stationary_multipliers"]

#: the values of the low-rank method's ``start`` option
START_KINDS = ("auto", "random", "spectral")


def spectral_applies(kind) -> bool:
    """Whether the spectral start applies: a nonnegative factor with a trace row and the row sums
    of every index (the k-means SDP of Peng and Wei)."""
    return kind.shift is not None and kind.nonnegative and kind.diagonal is None and kind.tau >= 1


def spectral_factor(matmul, n: int, n_clusters: int, rng) -> np.ndarray:
    """The normalised indicator factor ``(n, n_clusters)`` of a spectral clustering of the cost
    (module docstring, steps 1 to 3); ``matmul`` is ``V -> C @ V``."""
    from sklearn.cluster import KMeans  # noqa: PLC0415 (scikit-learn only where this start is taken)

    n_clusters = int(min(max(n_clusters, 1), n))
    if n_clusters == 1:
        return np.full((n, 1), 1.0 / np.sqrt(n))
    operator = LinearOperator((n, n), matvec=matmul, matmat=matmul, dtype=float)
    k = min(n_clusters, n - 1)
    v0 = rng.standard_normal(n)
    if n <= 3 * k + 2:  # too small for Lanczos
        dense = matmul(np.eye(n))
        vectors = np.linalg.eigh((dense + dense.T) / 2)[1][:, :k]
    else:
        vectors = eigsh(operator, k=k, which="SA", v0=v0, tol=1e-6)[1]
    seed = int(rng.integers(2 ** 31 - 1))
    labels = KMeans(n_clusters, n_init=4, random_state=seed).fit(vectors).labels_
    labels = np.unique(labels, return_inverse=True)[1]  # the parts that k-means did not leave empty
    sizes = np.bincount(labels)
    V = np.zeros((n, sizes.size))
    V[np.arange(n), labels] = 1.0 / np.sqrt(sizes[labels])
    return V


def stationary_multipliers(rows, matmul, V: np.ndarray, *, iter_lim: int = 500) -> np.ndarray:
    """The row multipliers y of least squares ``min ||P((A^*(y) - C) V)||`` on the support P of
    the factor V (module docstring, step 4); ``rows`` a
    :class:`~cvxclust.generic.factor_rows.FactorRows`."""
    support = V > 0
    target = matmul(V)[support]
    shape = V.shape

    def forward(y):
        return rows.adjoint_matmul(np.ravel(y), V)[support]

    def adjoint(g):
        G = np.zeros(shape)
        G[support] = np.ravel(g)
        return (rows.apply(V + G) - rows.apply(V - G)) / 4.0

    operator = LinearOperator((target.size, rows.m), matvec=forward, rmatvec=adjoint, dtype=float)
    return lsqr(operator, target, atol=1e-12, btol=1e-12, iter_lim=iter_lim)[0]
