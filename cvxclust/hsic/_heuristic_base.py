"""What the heuristics of the HSIC problem share (see :mod:`cvxclust.hsic._heuristics`): the input
checks, the k-means rounding, the :class:`~cvxclust.Result` for labels and the base of their
iterations on the core loop."""

from __future__ import annotations

import dataclasses
from numbers import Integral

import numpy as np
from sklearn.cluster import KMeans

from .._array_api import is_foreign, library, namespace_of
from .._checks import check_kernel, check_labels
from .._trace import partition_matrix, trace_objective
from ..parameters import Interval, check_parameters
from ..result import Result
from ..solvers import IterativeSolver, Param
from ..structures import check_output_kernel

__all__ = ["HeuristicSolver", "check_kernels", "check_known", "kmeans_rows", "labels_result", "refuse_foreign"]


def refuse_foreign(method: str, **named) -> None:
    """Raise a TypeError naming ``method`` and the argument where one of ``named`` is an array of
    an array API library other than NumPy (a PyTorch tensor, ...): the method runs on NumPy only."""
    for name, x in named.items():
        if is_foreign(x):
            raise TypeError(f"{method} runs on NumPy arrays only (SciPy and scikit-learn do its work) and {name} is "
                            f"an array of {library(namespace_of(x))}: pass NumPy arrays; of the HSIC methods, the "
                            "SDP (5.23)'s ADMM runs on any array API device (CLUHSICSDP(K, A).solve('admm'))")


def check_kernels(K, A, *, psd: bool = False, method: str = "this method") -> tuple[np.ndarray, np.ndarray]:
    """K (symmetric, finite, ``m >= 2``; p.s.d. if ``psd``) and the output kernel A (c x c,
    ``2 <= c <= m``; p.s.d. if ``psd``) as new float NumPy arrays, or a ValueError naming them
    (a TypeError naming ``method`` for arrays of another array API library: :func:`refuse_foreign`)."""
    refuse_foreign(method, K=K, A=A)
    K = check_kernel(K, "K", psd=psd, min_size=2)
    A = check_output_kernel(A, psd=psd)
    m, c = K.shape[0], A.shape[0]
    if not 2 <= c <= m:
        raise ValueError(f"A must be c x c with 2 <= c <= m = {m} clusters, got shape {A.shape}")
    return K, A


def check_known(known, m: int, c: int) -> np.ndarray:
    """Known labels (``-1`` unknown) as a new int array; all ``-1`` when None."""
    if known is None:
        return np.full(m, -1)
    return check_labels(known, m, c, name="known", allow_unknown=True).copy()


def kmeans_rows(U: np.ndarray, c: int, n_init: int, rng) -> np.ndarray:
    """k-means on the rows of the relaxed P: the rounding of the spectral relaxation of
    k-means (4.15).  Distances between rows are invariant to ``P -> P V^T``."""
    return KMeans(n_clusters=c, n_init=n_init, random_state=rng).fit(U).labels_.astype(int)


def labels_result(result: Result, K: np.ndarray, A: np.ndarray, labels: np.ndarray, normalized: bool, *,
                  P: np.ndarray | None = None, relaxed_objective: float | None = None, time: float | None = None,
                  method: str | None = None) -> Result:
    """``result`` (the run of a method) reported for ``labels``: X their partition matrix,
    ``objective`` its f, and the extras of the module docstring."""
    X = partition_matrix(labels, A.shape[0], normalized=normalized)
    changes = {"X": X, "objective": trace_objective(K, A, X),
               "extras": {"labels": labels, "P": X if P is None else P, "relaxed_objective": relaxed_objective}}
    if time is not None:
        changes["time"] = time
    if method is not None:
        changes["method"] = method
    return dataclasses.replace(result, **changes)


class HeuristicSolver(IterativeSolver):
    """Base of the heuristics' iterations on :class:`cvxclust.solvers.IterativeSolver`: no
    relaxation object, no bound, a maximization; ``tol`` is the tolerance of the method's own
    stopping rule (met: :meth:`converge`), and every iteration is checked (its certificate is
    the current iterate with its objective, no residuals)."""

    sense = "maximize"
    parameters = IterativeSolver.parameters | {
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
    }

    def size(self) -> int:
        return int(self.K.shape[0])

    @classmethod
    def check(cls, params: dict) -> dict:
        """Check ``params`` against the table at the door, before any work."""
        return check_parameters({k: p.constraints for k, p in cls.parameters.items()}, params, cls.method)
