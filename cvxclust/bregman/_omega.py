r"""The spectral norm Omega of Theorem 3 and its dual norm Omega_*.

For a ``t x n`` matrix T and ``d = n_clusters`` the paper defines, in (17),

.. math::

    \Omega^2(T) = \min_{M \in \mathcal{M}_3,\ \mathrm{Im}(T) \subseteq \mathrm{Im}(M)}
                  \mathrm{tr}(T^\top M^\dagger T),
    \qquad
    \mathcal{M}_3 = \{M : 0 \preceq M \preceq I,\ \mathrm{tr}(M) \le d - 1\}   \quad (12).

By von Neumann's trace inequality the minimiser shares the left singular vectors of T, so
:math:`\Omega^2(T) = f(s)` with ``s`` the singular values of T and f the eigenvalue problem
(18), solved in closed form by Algorithm 2 (one SVD).  Omega is a norm (Theorem 3) with

.. math::

    \|T\|_F \le \Omega(T) \le \|T\|_*, \qquad
    \Omega_*(R) = \max_{\Omega(T) \le 1} \langle R, T\rangle
                = \Big(\sum_{i=1}^{d-1} r_i^2\Big)^{1/2}   \quad (22)\text{-}(23),

``r`` the singular values of R in decreasing order (for ``d = 2``: nuclear norm and spectral
norm).  A subgradient of Omega_* at R, the oracle of the conditional gradient method of
Algorithm 1, is built from the top ``d - 1`` singular triplets of R.

Footnote 1 of the paper states that the same holds when M ranges over
:math:`\mathcal{M}_2 = \{0 \preceq M \preceq I,\ \mathrm{tr}(M) \le d,\ M\mathbf{1} = \mathbf{1}\}`
(the set the experiments of Section 6 use).
Every function here takes ``domain="M2"`` for that variant.  By Lemma 1,
:math:`M = P + J` with :math:`J = \mathbf{1}\mathbf{1}^\top/t`, :math:`P \in \mathcal{M}_3`,
:math:`P\mathbf{1} = 0`, and since P and J act on orthogonal subspaces,
:math:`M^\dagger = P^\dagger + J`; with :math:`H = I - J`,

.. math::

    \Omega_{\mathcal{M}_2}^2(T) = \Omega^2(HT) + \|JT\|_F^2, \qquad
    \Omega_{\mathcal{M}_2,*}^2(R) = \Omega_*^2(HR) + \|JR\|_F^2

(the optimal P for HT has its range in Im(HT), orthogonal to the ones vector, so the extra
constraint ``P 1 = 0`` costs nothing; the dual of an l2-sum of norms on orthogonal subspaces
is the l2-sum of the duals).  The tests check these identities against the SDPs.

The cvxpy statements (:mod:`cvxclust.bregman._problem`: :func:`omega_squared_problem`,
:func:`omega_dual_problem`, :func:`omega_dual_squared_problem`) are the matrix-fractional SDP
(Schur complement)

.. math::

    \Omega^2(T) = \min_{M \in \mathcal{M}_3, S}\ \mathrm{tr}(S)
    \ \text{ s.t. }\ \begin{pmatrix} M & T \\ T^\top & S \end{pmatrix} \succeq 0,

whose block constraint encodes both :math:`S \succeq T^\top M^\dagger T` and
:math:`\mathrm{Im}(T) \subseteq \mathrm{Im}(M)`, and two statements of the dual norm: its
definition :math:`\max \langle R, T\rangle` over the same lifted unit ball, and the conjugate
form :math:`\Omega_*^2(R) = \max_{M \in \mathcal{M}_3} \mathrm{tr}(R^\top M R)` (the conjugate of
:math:`\tfrac12\Omega^2` is :math:`\tfrac12\Omega_*^2`, and
:math:`\sup_T \langle R, T\rangle - \tfrac12 \mathrm{tr}(T^\top M^\dagger T) = \tfrac12 \mathrm{tr}(R^\top M R)`).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse.linalg as spla

from .._checks import check_choice, check_data_matrix, check_int_range, check_n_clusters, check_random_state
from ..parameters import check_parameter

__all__ = [
    "omega",
    "omega_dual",
    "omega_dual_subgradient",
    "omega_eigenvalues",
    "omega_optimal_M",
    "omega_squared_gradient",
    "omega_squared_value",
    "variational_basis",
]

_DOMAINS = ("M3", "M2")
_SVD_SOLVERS = ("auto", "full", "arpack")

#: "auto" uses ARPACK for the top d-1 singular triplets only when R is this large (min side)
#: and d - 1 is at most this fraction of it; below that a thin LAPACK SVD is as fast.
_ARPACK_MIN_SIZE = 300
_ARPACK_MAX_FRACTION = 0.1


# -- input checks -------------------------------------------------------------------------------


def _check_matrix(A, name: str, n_clusters, domain: str) -> tuple[np.ndarray, int]:
    A = check_data_matrix(A, name, min_samples=1)
    d = check_n_clusters(n_clusters, A.shape[0])
    check_choice(domain, "domain", _DOMAINS)
    return A, d


def _check_singular_values(s) -> np.ndarray:
    try:
        s = np.asarray(s, dtype=float)
    except (TypeError, ValueError):
        raise ValueError("s must be a 1-D array of singular values") from None
    if s.ndim != 1 or s.size == 0:
        raise ValueError(f"s must be a non-empty 1-D array of singular values, got shape {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ValueError("s contains NaN or infinite entries")
    if s.min() < 0:
        raise ValueError(f"s must be nonnegative (singular values), got min {s.min():.3g}")
    return s


def _scale(A: np.ndarray) -> float:
    """A power of two near ``max |A|`` (exact to divide by), or 0 for ``A = 0``."""
    top = float(np.abs(A).max(initial=0.0))
    return 0.0 if top == 0.0 else float(2.0 ** np.round(np.log2(top)))


def _split_mean(A: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(H A, J A)`` with ``J = 1 1^T / t`` (the row mean repeated) and ``H = I - J``."""
    JA = np.broadcast_to(A.mean(axis=0), A.shape)
    return A - JA, JA


# -- Algorithm 2 --------------------------------------------------------------------------------


def _algorithm2(s_sorted: np.ndarray, d: int) -> tuple[int, float, float]:
    """Break index k of Algorithm 2, the tail sum ``sum_{i>k} s_i`` and ``f(s)``, for ``s``
    sorted in decreasing order (1-based paper indices, 0-based here: ``s_{k+1} = s[k]``)."""
    # pad with zeros: when d - 1 exceeds the number of singular values the loop may run past them
    s = np.concatenate([s_sorted, np.zeros(max(0, d - 1 - s_sorted.size))])
    tail = np.cumsum(s[::-1])[::-1]  # tail[k] = sum_{i >= k} s[i], computed as tail[k+1] + s[k]
    ks = np.arange(d - 1)
    # tail[d-2] >= s[d-2] holds exactly in floating point (a sum of nonnegatives), so some k breaks
    k = int(np.argmax(tail[ks] >= (d - 1 - ks) * s[ks]))
    value = float(np.sum(s[:k] ** 2) + tail[k] ** 2 / (d - 1 - k))
    return k, float(tail[k]), value


def omega_squared_value(s, d: int) -> float:
    r"""Omega^2 from singular values: :math:`f(s)` of (18), by Algorithm 2.

    .. math::

        f(s) = \min_{\sigma} \sum_i \frac{s_i^2}{\sigma_i}
        \quad\text{s.t.}\quad \sigma_i \in [0, 1],\ \sum_i \sigma_i \le d - 1
        \;=\; \sum_{i \le k} s_i^2 + \frac{1}{d-1-k}\Big(\sum_{i > k} s_i\Big)^2,

    with ``s`` in decreasing order and k the smallest index in ``0..d-2`` with
    :math:`\sum_{i>k} s_i \ge (d-1-k)\, s_{k+1}` (Algorithm 2; ``0/0 = 0``).  O(len(s)) after
    sorting.

    Parameters
    ----------
    s : array_like of shape (m,)
        Nonnegative values (the singular values of T, in any order; zeros may be omitted).
    d : int
        Number of clusters, ``d >= 2``.

    Returns
    -------
    float
        :math:`f(s) = \Omega^2(T)`.  ``d = 2`` gives :math:`(\sum_i s_i)^2`; ``d - 1 >= m``
        gives :math:`\sum_i s_i^2`.
    """
    s = _check_singular_values(s)
    d = check_int_range(d, "d", 2)
    return _algorithm2(np.sort(s)[::-1], d)[2]


def omega_eigenvalues(s, d: int) -> np.ndarray:
    r"""The minimising :math:`\sigma` of (18): the eigenvalues of the optimal M in
    :math:`\mathcal{M}_3`, in the order of ``s``.

    With k from Algorithm 2, :math:`\sigma_i = 1` for the k largest ``s_i`` and
    :math:`\sigma_i = (d-1-k)\, s_i / \sum_{j>k} s_j` for the others (0 when that tail sum is 0,
    so :math:`\sigma_i = 0` exactly where :math:`s_i = 0` outside the top k: the minimal-rank
    choice, since any :math:`\sigma_i` is optimal there).

    Parameters
    ----------
    s : array_like of shape (m,)
        Nonnegative singular values, any order.
    d : int
        Number of clusters, ``d >= 2``.

    Returns
    -------
    ndarray of shape (m,)
        Values in ``[0, 1]`` summing to at most ``d - 1``, with
        ``sum(s**2 / sigma) == omega_squared_value(s, d)`` over ``sigma > 0``.
    """
    s = _check_singular_values(s)
    d = check_int_range(d, "d", 2)
    order = np.argsort(-s, kind="stable")
    s_sorted = s[order]
    k, tail, _ = _algorithm2(s_sorted, d)
    sigma_sorted = np.zeros_like(s_sorted)
    sigma_sorted[:k] = 1.0
    if tail > 0:
        sigma_sorted[k:] = np.minimum((d - 1 - k) * s_sorted[k:] / tail, 1.0)
    sigma = np.empty_like(sigma_sorted)
    sigma[order] = sigma_sorted
    return sigma


# -- Omega --------------------------------------------------------------------------------------


def omega(T, n_clusters: int, *, domain: str = "M3") -> float:
    r"""The norm :math:`\Omega(T)` of (17) / Theorem 3, by one SVD and Algorithm 2.

    .. math::

        \Omega(T) = \Big(\min_{M \in \mathcal{M}_3,\ \mathrm{Im}(T) \subseteq \mathrm{Im}(M)}
        \mathrm{tr}(T^\top M^\dagger T)\Big)^{1/2} = \sqrt{f(s(T))}

    (``domain="M2"``: :math:`\sqrt{\Omega^2(HT) + \|JT\|_F^2}`, see the module notes).

    Parameters
    ----------
    T : array_like of shape (t, n)
        Finite matrix; its t rows index the data points.
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"
        The set M ranges over: (12), or :math:`\mathcal{M}_2` (footnote 1).

    Returns
    -------
    float
        :math:`\Omega(T) \ge 0`.

    See Also
    --------
    omega_optimal_M : the M attaining the minimum.
    omega_squared_problem : the same value as a cvxpy SDP.
    """
    T, d = _check_matrix(T, "T", n_clusters, domain)
    scale = _scale(T)  # Omega is positively homogeneous: squares of tiny entries would underflow
    if scale == 0.0:
        return 0.0
    T = T / scale
    if domain == "M2":
        HT, JT = _split_mean(T)
        return scale * float(np.sqrt(omega(HT, d) ** 2 + np.sum(JT**2)))
    s = np.linalg.svd(T, compute_uv=False)
    return scale * float(np.sqrt(_algorithm2(s, d)[2]))


def omega_optimal_M(T, n_clusters: int, *, domain: str = "M3") -> np.ndarray:
    r"""The matrix M attaining :math:`\Omega^2(T)`: ``M = U diag(sigma) U^T``.

    U holds the left singular vectors of T and ``sigma`` the eigenvalues of
    :func:`omega_eigenvalues`; this is how Algorithm 1 recovers M from its optimal T
    (Section 3.2.1: "the optimal M can then be recovered by evaluating Omega at the optimal T").
    ``domain="M2"``: ``M = P + 1 1^T / t`` with P the M3-optimal matrix for ``H T``.

    Parameters
    ----------
    T : array_like of shape (t, n)
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"

    Returns
    -------
    ndarray of shape (t, t)
        Symmetric M in the chosen set with :math:`\mathrm{Im}(T) \subseteq \mathrm{Im}(M)` and
        ``tr(T^T pinv(M) T) == omega(T, d, domain=domain)**2``.  Singular values of T below
        ``max(t, n) * eps * s_max`` count as zero, so M has minimal rank.
    """
    T, d = _check_matrix(T, "T", n_clusters, domain)
    if domain == "M2":
        HT, _ = _split_mean(T)
        return omega_optimal_M(HT, d) + np.full((T.shape[0], T.shape[0]), 1.0 / T.shape[0])
    U, s, _ = np.linalg.svd(T, full_matrices=False)
    # singular values at round-off level (numpy's matrix_rank tolerance) are zeros of s: giving
    # them trace would put mass on arbitrary directions (for M2, possibly on the ones vector)
    s = np.where(s > s.max(initial=0.0) * max(T.shape) * np.finfo(float).eps, s, 0.0)
    sigma = omega_eigenvalues(s, d)
    M = (U * sigma) @ U.T
    return (M + M.T) / 2


# -- the dual norm ------------------------------------------------------------------------------


def _top_singular_triplets(R: np.ndarray, k: int, svd_solver: str, random_state):
    """``(U_k, r_k, Vt_k)``: the k largest singular triplets of R, decreasing (k <= min(R.shape))."""
    check_choice(svd_solver, "svd_solver", _SVD_SOLVERS)
    small = min(R.shape)
    if svd_solver == "auto":
        svd_solver = ("arpack" if small >= _ARPACK_MIN_SIZE and k <= _ARPACK_MAX_FRACTION * small
                      else "full")
    if svd_solver == "arpack" and k < small:
        v0 = check_random_state(random_state).uniform(-1.0, 1.0, small)
        try:
            U, r, Vt = spla.svds(R, k=k, v0=v0, tol=0, solver="arpack")
        except spla.ArpackNoConvergence:
            pass  # fall back to the exact dense SVD below
        else:
            order = np.argsort(-r)
            return U[:, order], r[order], Vt[order]
    U, r, Vt = np.linalg.svd(R, full_matrices=False)
    return U[:, :k], r[:k], Vt[:k]


def omega_dual(R, n_clusters: int, *, domain: str = "M3", svd_solver: str = "auto",
               random_state=None) -> float:
    r"""The dual norm :math:`\Omega_*(R) = \max_{\Omega(T) \le 1} \langle R, T\rangle`.

    By (22)-(23), with :math:`r_1 \ge r_2 \ge \dots` the singular values of R,

    .. math::

        \Omega_*(R) = \|(r_1, \dots, r_{d-1})\|_2
                    = \Big(\max_{M \in \mathcal{M}_3} \mathrm{tr}(R^\top M R)\Big)^{1/2}

    (``domain="M2"``: :math:`\sqrt{\Omega_*^2(HR) + \|JR\|_F^2}`).  Only the top ``d - 1``
    singular values are needed: O(t n d) with ARPACK.

    Parameters
    ----------
    R : array_like of shape (t, n)
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"
    svd_solver : {"auto", "full", "arpack"}, default="auto"
        "full": thin LAPACK SVD; "arpack": :func:`scipy.sparse.linalg.svds` for the top ``d - 1``
        triplets (falls back to "full" when ``d - 1 >= min(t, n)`` or ARPACK does not converge);
        "auto": "arpack" only when ``min(t, n) >= 300`` and ``d - 1 <= min(t, n) / 10``.
    random_state : int, RandomState, Generator or None
        Seeds the ARPACK starting vector (the result does not depend on it beyond round-off).

    Returns
    -------
    float
    """
    return omega_dual_subgradient(R, n_clusters, domain=domain, svd_solver=svd_solver,
                                  random_state=random_state, return_value=True)[1]


def omega_dual_subgradient(R, n_clusters: int, *, domain: str = "M3", svd_solver: str = "auto",
                           random_state=None, return_value: bool = False):
    r"""A subgradient G of :math:`\Omega_*` at R: the maximiser of :math:`\langle R, T\rangle`
    over the unit ball of Omega (Theorem 3, step 3).

    With the top ``d - 1`` singular triplets :math:`R \approx U_{d-1}\,\mathrm{diag}(r)\,V_{d-1}^\top`,

    .. math::

        G = \frac{U_{d-1}\,\mathrm{diag}(r_1, \dots, r_{d-1})\,V_{d-1}^\top}
                 {\|(r_1, \dots, r_{d-1})\|_2},

    i.e. :math:`s_i = r_i / \|r_{1:d-1}\|` and :math:`\sigma_i = 1` for :math:`i \le d-1`, the
    equality case of (23).  Then :math:`\langle G, R\rangle = \Omega_*(R)` and
    :math:`\Omega(G) = 1`, so :math:`G \in \partial\Omega_*(R)`; it is the gradient wherever
    :math:`r_{d-1} > r_d` (or ``d - 1 >= min(t, n)``) and R is nonzero.  At ``R = 0`` the zero
    matrix is returned (a valid subgradient: 0 lies in the unit ball of Omega).
    ``domain="M2"``: :math:`G = (\Omega_*(HR)\, G_H + JR) / \Omega_{\mathcal{M}_2,*}(R)` with
    :math:`G_H` the M3 subgradient at HR.

    Use in Algorithm 1 (line 3): the linear minimisation oracle over the Omega unit ball is
    :math:`\arg\min_{\Omega(S) \le 1} \langle \nabla L(T_k), S\rangle = -G` with
    ``G = omega_dual_subgradient(grad, d)``; the paper writes :math:`S_k \in
    \partial\Omega_*(\nabla L(T_k))` "up to scaling", the scaling being negative.  Since
    :math:`\Omega(-G) = 1`, the norm bound updates as :math:`s_{k+1} = a s_k + b`.

    Parameters
    ----------
    R : array_like of shape (t, n)
    n_clusters : int
        d, with ``2 <= d <= t``.
    domain : {"M3", "M2"}, default="M3"
    svd_solver : {"auto", "full", "arpack"}, default="auto"
        See :func:`omega_dual`.
    random_state : int, RandomState, Generator or None
        Seeds the ARPACK starting vector.
    return_value : bool, default=False
        Also return :math:`\Omega_*(R)` (from the same SVD).

    Returns
    -------
    G : ndarray of shape (t, n)
        The subgradient, of rank at most ``d - 1`` (``d`` for "M2").
    value : float
        :math:`\Omega_*(R)`, only when ``return_value`` is True.
    """
    R, d = _check_matrix(R, "R", n_clusters, domain)
    check_parameter("random_state", random_state, ["random_state"], "omega_dual_subgradient")
    # G(cR) = G(R) and Omega_*(cR) = c Omega_*(R) for c > 0: scale first, as squares of tiny
    # entries (~1e-160) underflow to subnormals and lose their precision
    scale = _scale(R)
    if scale == 0.0:
        return (np.zeros_like(R), 0.0) if return_value else np.zeros_like(R)
    if scale != 1.0:
        G, value = omega_dual_subgradient(R / scale, d, domain=domain, svd_solver=svd_solver,
                                          random_state=random_state, return_value=True)
        return (G, scale * value) if return_value else G
    if domain == "M2":
        HR, JR = _split_mean(R)
        GH, value_H = omega_dual_subgradient(HR, d, svd_solver=svd_solver, random_state=random_state,
                                             return_value=True)
        value = float(np.sqrt(value_H**2 + np.sum(JR**2)))
        G = (value_H * GH + JR) / value if value > 0 else np.zeros_like(R)
        return (G, value) if return_value else G
    k = min(d - 1, min(R.shape))
    U, r, Vt = _top_singular_triplets(R, k, svd_solver, random_state)
    value = float(np.linalg.norm(r))
    G = (U * (r / value)) @ Vt if value > 0 else np.zeros_like(R)
    return (G, value) if return_value else G


# -- the variational form ----------------------------------------------------------------------


def variational_basis(T: np.ndarray, d: int, domain: str = "M2") -> tuple[np.ndarray, np.ndarray]:
    r"""``(U, sigma)`` with :math:`M^\star = U\,\mathrm{diag}(\sigma)\,U^\top` the matrix attaining
    :math:`\Omega^2(T)` (as :func:`~cvxclust.bregman._omega.omega_optimal_M`), restricted to
    :math:`\sigma > 0`: U has orthonormal columns spanning Im(M*) and
    :math:`\mathrm{tr}(T^\top M^{\star\dagger} T) = \sum_i \|U_{:i}^\top T\|^2/\sigma_i = \Omega^2(T)`.

    For ``domain="M2"`` the column :math:`\mathbf{1}/\sqrt t` (eigenvalue 1 of :math:`M = P + J`)
    is appended to the M3 basis of :math:`HT`.
    """
    T, d = _check_matrix(T, "T", d, domain)
    t = T.shape[0]
    A = T - T.mean(axis=0) if domain == "M2" else T
    U, sv, _ = np.linalg.svd(A, full_matrices=False)
    sv = np.where(sv > sv.max(initial=0.0) * max(T.shape) * np.finfo(float).eps, sv, 0.0)
    if domain == "M2":
        # HT's singular vectors for nonzero singular values are orthogonal to 1; near-null ones
        # (singular values of round-off size that passed the threshold) mix with 1, and with a
        # tiny sigma they blow tr(T' M^+ T) up through the 1'T part
        sv = np.where(np.abs(U.sum(axis=0)) <= 1e-8 * np.sqrt(t), sv, 0.0)
    sigma = omega_eigenvalues(sv, d)
    keep = sigma > 0
    U, sigma = U[:, keep], sigma[keep]
    if domain == "M2":
        U = np.column_stack([U, np.full(t, 1.0 / np.sqrt(t))])
        sigma = np.append(sigma, 1.0)
    return U, sigma


def omega_squared_gradient(T: np.ndarray, d: int, domain: str = "M2") -> tuple[float, np.ndarray]:
    r"""``(Omega^2(T), 2 M^+ T)`` with ``M = U diag(sigma) U^T`` from :func:`variational_basis`.

    :math:`\Omega^2` is the spectral function :math:`f(s(T))` of (18); f is differentiable at every
    s > 0 with :math:`\partial f/\partial s_i = 2 s_i/\sigma_i` (envelope theorem: the minimising
    :math:`\sigma` of (18) is unique there), so by Lewis' theorem on spectral functions
    :math:`\nabla\Omega^2(T) = 2U\mathrm{diag}(s/\sigma)V^\top = 2M^{\star\dagger}T` wherever T has
    no zero singular value (for M2: HT, with the JT part contributing 2JT). Elsewhere it is a
    subgradient: the value of the variational bound :math:`\mathrm{tr}(T^\top M^\dagger T)`
    at fixed :math:`M = M^\star` has this gradient and touches :math:`\Omega^2` at T.
    """
    U, sigma = variational_basis(T, d, domain)
    C = U.T @ T
    value = float(np.sum(C * C / sigma[:, None]))
    return value, 2.0 * U @ (C / sigma[:, None])
