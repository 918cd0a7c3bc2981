r"""The output kernels that hand CLUHSICAL to CLUHSIC's optimizers: :math:`L A L^\top` for the
unnormalized objective (:func:`equivalent_output_kernel`), and the kernel that makes CLUHSIC's SDP
(5.23) and low-rank SDP (5.30) relax the normalized objectives on partitions of given cluster
sizes (:func:`relaxation_output_kernel`).  :math:`L` is the loss transform of (12),
:math:`\tilde\Pi = \Pi L` (:func:`~cvxclust.cluhsical.loss_transform`).

Reference: W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
"""

from __future__ import annotations

import numpy as np

from .._checks import as_float_array, check_int_range
from ..structures import check_loss_matrix, check_output_kernel
from ._overflow import finite_result
from ._partition import augmentation, check_normalization, inverse_norms, norms_of_columns

__all__ = ["equivalent_output_kernel", "relaxation_output_kernel"]


@finite_result("A and loss")
def equivalent_output_kernel(A, loss) -> np.ndarray:
    r"""The output kernel :math:`L A L^\top` with which CLUHSIC's unnormalized objective (2) is
    CLUHSICAL's unnormalized one.

    Since :math:`\tilde\Pi = \Pi L` (12) (:func:`~cvxclust.cluhsical.loss_transform`),

    .. math:: \operatorname{tr}(K\tilde\Pi A\tilde\Pi^\top)
              = \operatorname{tr}(K\Pi\,(L A L^\top)\,\Pi^\top)

    for every partition: CLUHSICAL without normalization is CLUHSIC (2) with output kernel
    :math:`A' = L A L^\top`, which is p.s.d. whenever A is (:math:`x^\top L A L^\top x =
    (L^\top x)^\top A (L^\top x)`) and symmetric even for an asymmetric loss.  Any optimizer of
    (2) (greedy, CLUHSIC's SDP/low-rank on balanced partitions, see
    :func:`relaxation_output_kernel`) therefore optimizes unnormalized CLUHSICAL.

    **Corollary 1.** With the zero-one loss ``1 - I``, :math:`L = cI - \mathbf 1\mathbf 1^\top`
    and :math:`\Pi L = c\Pi - \mathbf 1\mathbf 1^\top` (:math:`\Pi\mathbf 1 = \mathbf 1`).  For
    a centred K (:math:`K\mathbf 1 = 0`, :math:`\mathbf 1^\top K = 0`),

    .. math:: \operatorname{tr}(K\Pi L A L^\top\Pi^\top)
              = c^2\operatorname{tr}(K\Pi A\Pi^\top)
              - c\,\mathbf 1^\top K\Pi A\mathbf 1 - c\,\mathbf 1^\top A\Pi^\top K\mathbf 1
              + (\mathbf 1^\top K\mathbf 1)(\mathbf 1^\top A\mathbf 1)
              = c^2\operatorname{tr}(K\Pi A\Pi^\top),

    so both pick the same partitions; and :math:`\|\tilde\Pi\|_1 = 2m(c-1)` is constant, so the
    unnormalized (11) is :math:`\tilde C c^2` times CLUHSIC (2) minus a constant (the paper's
    proof adds :math:`\mathbf 1\mathbf 1^\top` to (23) instead; same argument).

    Parameters
    ----------
    A : array-like of shape (c, c)
        Symmetric output kernel.
    loss : array-like of shape (c, c)

    Returns
    -------
    ndarray of shape (c, c), symmetric
    """
    A = check_output_kernel(A, psd=False)
    L = augmentation(check_loss_matrix(loss, A.shape[0]))
    B = L @ A @ L.T
    return (B + B.T) / 2


@finite_result("A, loss and sizes")
def relaxation_output_kernel(A, loss, normalization=None, sizes=None, *, n_samples=None) -> np.ndarray:
    r"""The output kernel B to hand to CLUHSIC's SDP (5.23) / low-rank (5.30) solvers so that
    they relax CLUHSICAL — **exactly only on partitions with the cluster sizes** ``sizes``
    (balanced, :math:`n_k = m/c`, by default).

    CLUHSIC's relaxations (:mod:`cvxclust.hsic`) lift its *normalized* partition matrix
    :math:`P = \Pi D`, :math:`D = \operatorname{diag}(n)^{-1/2}`, so for every partition with
    sizes n their objective at the lift is :math:`\operatorname{tr}(K P B P^\top)`.  This
    function returns the B with

    .. math:: \frac{m}{c}\operatorname{tr}(K P B P^\top) = \text{CLUHSICAL objective}
              \quad\text{for every partition with cluster sizes } n,

    namely, with :math:`\bar n = m/c`, :math:`S = \operatorname{diag}(\sqrt{n/\bar n})` and
    :math:`N = \operatorname{diag}(\text{column norms})^{-1}` (:func:`~cvxclust.cluhsical.column_norms`),

    .. math:: B = S\,L N A N L^\top S .

    Derivation.  Normalized forms: :math:`\tilde\Pi = \Pi L` has column l1 norms
    :math:`\nu = |L|^\top n` (l2: :math:`\sqrt{(L\circ L)^\top n}`), which depend only on the
    sizes; so :math:`\Pi_1 = \Pi L N` with N constant on the partitions of sizes n, and
    :math:`\operatorname{tr}(K\Pi_1A\Pi_1^\top) = \operatorname{tr}(K\Pi\,L N A N L^\top\,\Pi^\top)`:
    CLUHSIC's unnormalized objective with a fixed kernel.  Substituting
    :math:`\Pi = P D^{-1}` and :math:`D^{-1} = \sqrt{\bar n}\,S` gives the identity above.
    For balanced sizes :math:`S = I`: :math:`B = L N A N L^\top`, :math:`\Pi = \sqrt{m/c}\,P`,
    hence the factor m/c.  Unnormalized: N = I, :math:`B = S L A L^\top S`
    (:func:`equivalent_output_kernel` when balanced).  "l2": the trace term of (11) likewise
    with the l2 norms, and its penalty :math:`\frac{C}{m}\|\Pi_2\|_1 = \frac{C}{m}\sum_k
    \nu_k/\|\tilde\Pi_{\cdot k}\|_2` is constant on those partitions, so the l2 objective is
    :math:`\tilde C\frac{m}{c}\operatorname{tr}(KPBP^\top)` minus a constant there.

    The feasible set of (5.23) holds the lifts of *all* partitions, whatever their sizes, but B
    gives the CLUHSICAL objective only at the lifts of partitions of sizes n.  So the SDP optimum
    times m/c is an upper bound on the best CLUHSICAL objective over partitions of sizes n (not
    over all partitions), and a rounded SDP solution of other sizes must be re-scored with
    :func:`~cvxclust.cluhsical.labels_objective`.  B is p.s.d. whenever A is.

    Parameters
    ----------
    A : array-like of shape (c, c)
        Symmetric output kernel.
    loss : array-like of shape (c, c)
    normalization : {None, "l1", "l2"}
    sizes : array-like of c positive numbers, optional
        The cluster sizes n (m = their sum); default balanced, ``m / c`` each (then
        ``n_samples`` gives m; not needed for ``normalization=None``).
    n_samples : int, optional
        m; required with the default balanced sizes for "l1" and "l2", checked against
        ``sum(sizes)`` when both are given.

    Returns
    -------
    ndarray of shape (c, c), symmetric

    Raises
    ------
    ValueError
        Naming ``A``, ``loss``, ``normalization``, ``sizes`` or ``n_samples``.
    """
    A = check_output_kernel(A, psd=False)
    c = A.shape[0]
    loss = check_loss_matrix(loss, c)
    check_normalization(normalization)
    if n_samples is not None:
        n_samples = check_int_range(n_samples, "n_samples", c)
    if sizes is None:
        if n_samples is None and normalization is not None:
            raise ValueError(f"n_samples is required for normalization={normalization!r} with the default "
                             "balanced sizes (the column norms scale with m)")
        n = np.full(c, (n_samples if n_samples is not None else c) / c)
    else:
        n = as_float_array(sizes, "sizes", "sequence of c positive numbers")
        if n.shape != (c,) or not np.all(np.isfinite(n)) or np.any(n <= 0):
            raise ValueError(f"sizes must hold {c} finite positive cluster sizes, got {sizes!r}")
        if n_samples is not None and not np.isclose(n.sum(), n_samples, rtol=1e-12, atol=0):
            raise ValueError(f"sizes must sum to n_samples={n_samples}, got {n.sum():g}")
    L = augmentation(loss)
    G = L.copy()
    if normalization is not None:
        G = G * inverse_norms(norms_of_columns(n, L, normalization))[None, :]
    G = np.sqrt(n / n.mean())[:, None] * G
    B = G @ A @ G.T
    return (B + B.T) / 2

