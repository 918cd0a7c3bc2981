r"""How far from optimal a CLUHSIC partition can be: the SDP (5.23)'s certified upper bound.

Every normalized partition matrix P lifts to a feasible point of the SDP (5.23) with the same
objective, so any certified upper bound ``u`` on the SDP's optimum bounds (2.4) too, and

.. math:: f(P) \le f^\star \le u, \qquad \text{gap} = \frac{u - f(P)}{|u|}

bounds the partition's relative distance to the best partition.  The SDP has order ``m c``, so
the bound is affordable on small problems only.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._array_api import is_foreign
from .._checks import check_labels
from .._trace import partition_matrix, trace_objective
from ._heuristic_base import check_kernels
from ._sdp import CLUHSICSDP

__all__ = ["PartitionCertificate", "certify_partition"]


@dataclasses.dataclass(frozen=True)
class PartitionCertificate:
    """The certificate of a partition (see the module docstring).

    Attributes
    ----------
    available : bool
        Whether a bound was computed; if not, ``reason`` says why and the numbers are None.
    objective : float
        (2.4) of the partition.
    upper_bound : float or None
        Certified upper bound on (2.4) over all partitions (the SDP's dual bound).
    gap : float or None
        ``(upper_bound - objective) / |upper_bound|``: the partition is within this relative
        distance of the best partition.
    relaxation_status : str or None
        Status of the SDP's solve (the bound is valid whatever it is; a tighter solve gives a
        smaller gap).
    reason : str
        Why no bound is available (empty when one is).
    """

    available: bool
    objective: float
    upper_bound: float | None = None
    gap: float | None = None
    relaxation_status: str | None = None
    reason: str = ""


def certify_partition(K: np.ndarray, A: np.ndarray, labels: np.ndarray, *, known=None,
                      **solver_options) -> PartitionCertificate:
    """Solve the SDP (5.23) (its ``"admm"`` solver with ``solver_options``; default ``tol=1e-3``)
    and compare its certified upper bound with the partition's objective (2.4).  A K of another
    array API library (a PyTorch tensor on a GPU) is solved on its device (A and the labels are
    NumPy arrays or arrays of K's library).

    Raises
    ------
    ValueError or TypeError
        Naming ``K``, ``A``, ``labels``, ``known`` or a solver option.
    """
    relaxation = CLUHSICSDP(K, A, known=known) if is_foreign(K) else None
    if relaxation is None:
        K, A = check_kernels(K, A, method="certify_partition")
    else:  # K on its device, A on the host
        K, A = relaxation.K, relaxation.A
        if A.shape[0] < 2:
            raise ValueError(f"A must be c x c with 2 <= c clusters, got shape {A.shape}")
    labels = check_labels(labels, K.shape[0], A.shape[0], name="labels")
    P = partition_matrix(labels, A.shape[0], normalized=True)
    if relaxation is None:
        value = trace_objective(K, A, P)
        relaxation = CLUHSICSDP(K, A, known=known)
    else:  # tr(K P A P^T) on K's device
        P = relaxation.arrays.asarray(P)
        value = float(relaxation.arrays.xp.sum((K @ P) * (P @ relaxation.arrays.asarray(A))))
    options = {"tol": 1e-3, **solver_options}
    result = relaxation.solve("admm", **options)
    bound = result.dual_bound
    if bound is None or not np.isfinite(bound):
        return PartitionCertificate(False, value, relaxation_status=result.status,
                                    reason="the SDP's solver returned no finite bound")
    bound = max(bound, value)  # the partition is feasible: a bound below it is rounding
    return PartitionCertificate(True, value, bound, (bound - value) / max(abs(bound), 1e-300), result.status)
