r"""What the kernel clustering estimators (CLUHSIC, CLUHSICAL) share: the checks at the start of
``fit``, the input kernel chosen by ``affinity``, ``gamma``, ``degree`` and ``n_neighbors`` (as
scikit-learn's ``SpectralClustering``), the output structure and its number of clusters, the known
labels passed as ``y``, and the factor of an SDP solution handed to the rounding.

The kernel is centred, :math:`HKH` with :math:`H = I - \tfrac1m \mathbf 1\mathbf 1^\top`, as the
HSIC objectives assume.  Data of another library of the Python array API standard (a PyTorch tensor
on a GPU) are checked in their namespace (:func:`check_array_X`) and their kernel is computed on
their device (:mod:`cvxclust.kernels`), for the estimators whose solvers run there; the others
refuse them (:func:`cvxclust._checks.refuse_array_X`).

The rbf kernel is :math:`\exp(-\gamma\|a - b\|^2)`; ``gamma=None``
takes the median heuristic :math:`\gamma = 1/\operatorname{median}_{i<j}\|a_i - a_j\|^2`, so
that a typical pair of points has affinity :math:`e^{-1}`.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
import scipy.linalg as sla
from sklearn.base import BaseEstimator, ClusterMixin


from ._array_api import is_foreign, namespace_of, to_numpy
from ._array_kernels import check_data
from ._checks import check_labels, check_square_matrix, check_X
from .kernels import center, knn_affinity, linear, median_distance, polynomial, rbf
from .parameters import Interval, Options, check_parameters
from .structures import as_structure, flat, n_clusters as structure_size

__all__ = ["AFFINITIES", "ArrayLike", "KERNEL_PARAMETERS", "KernelClusterMixin", "RANDOM_STATE", "affinity_matrix",
           "check_array_X", "check_objective", "check_psd_kernel", "input_kernel", "known_labels", "resolve_structure",
           "top_factor"]

#: the names ``affinity`` takes
AFFINITIES = ("rbf", "polynomial", "linear", "nearest_neighbors", "precomputed")

# eigenvalues of a centred kernel above -_PSD_RTOL * max|eigenvalue| count as >= 0 (rounding)
_PSD_RTOL = 1e-10


class ArrayLike:
    """Parameter constraint: an array-like (an ndarray, a list, a tuple or anything with
    ``__array__``); its shape and entries are checked where it is used."""

    def accepts(self, value) -> bool:
        return isinstance(value, (np.ndarray, list, tuple)) or hasattr(value, "__array__")

    def __str__(self) -> str:
        return "an array-like"


#: the constraint on ``random_state`` where it seeds a ``numpy.random.RandomState``
#: (``sklearn.utils.check_random_state``): a seed, a RandomState or None
RANDOM_STATE = [Interval(Integral, 0, 2**32 - 1, closed="both"), np.random.RandomState, None]

#: the parameter table of the kernel choice (:mod:`cvxclust.parameters`)
KERNEL_PARAMETERS = {
    "affinity": [Options(*AFFINITIES)],
    "gamma": [Interval(Real, 0, None, closed="neither"), None],
    "degree": [Interval(Integral, 1, None, closed="left")],
    "n_neighbors": [Interval(Integral, 1, None, closed="left")],
}


def affinity_matrix(X: np.ndarray, affinity: str, gamma, degree: int, n_neighbors: int) -> np.ndarray:
    r"""The kernel of the validated data ``X`` (or the precomputed kernel ``X``, checked), for
    the checked parameters of :data:`KERNEL_PARAMETERS`.

    Raises
    ------
    ValueError
        Naming ``X`` (a precomputed kernel that is not square, symmetric and finite),
        ``gamma`` (``None`` where the median distance is 0) or ``n_neighbors`` (not below the
        number of samples).
    """
    if affinity == "rbf":
        if gamma is None:
            width = median_distance(X)
            if not 0 < width < np.inf:
                raise ValueError(f"gamma=None takes gamma = 1 / median_distance**2, but the median distance between "
                                 f"the rows of X is {width} (0: more than half of the pairs coincide): pass gamma")
        else:
            width = 1.0 / np.sqrt(gamma)  # exp(-||a - b||^2 / width^2) = exp(-gamma ||a - b||^2)
        K = rbf(X, width)
    elif affinity == "polynomial":
        K = polynomial(X, degree)
    elif affinity == "linear":
        K = linear(X)
    elif affinity == "nearest_neighbors":
        K = knn_affinity(X, n_neighbors)
    else:
        K = check_square_matrix(X, "X", min_size=2)
    return K


def input_kernel(X: np.ndarray, affinity: str, gamma, degree: int, n_neighbors: int) -> np.ndarray:
    r"""The centred input kernel :math:`HKH` of :func:`affinity_matrix`.

    Raises
    ------
    ValueError
        As :func:`affinity_matrix`, and naming ``X`` where the kernel overflows.
    """
    K = affinity_matrix(X, affinity, gamma, degree, n_neighbors)
    if is_foreign(K):  # on its device: center raises naming the overflow
        return center(K)
    with np.errstate(over="ignore", invalid="ignore"):
        Kc = center(K) if np.all(np.isfinite(K)) else K
    if not np.all(np.isfinite(Kc)):
        raise ValueError(f"the {affinity} kernel of X overflows float64: rescale X")
    return Kc


def check_objective(value: float) -> float:
    """``value`` if finite; an overflow raises naming ``X``."""
    if not np.isfinite(value):
        raise ValueError("the objective overflows float64 on this X: rescale X")
    return value


def check_psd_kernel(K: np.ndarray, affinity: str, relaxation, options: dict) -> None:
    """Raise naming ``X`` or ``affinity`` unless the centred kernel ``K`` is positive
    semidefinite, where ``relaxation`` needs it: the spectral relaxation (by either method), and
    the low-rank relaxation from its default start (the spectral relaxation).  The rbf,
    polynomial and linear kernels are positive semidefinite by construction."""
    spectral_start = relaxation == "lowrank" and options.get("init", "spectral") == "spectral" and (
        options.get("Y0") is None)
    if affinity not in ("precomputed", "nearest_neighbors") or not (relaxation == "spectral" or spectral_start):
        return
    w = sla.eigvalsh(K)
    if w[0] < -_PSD_RTOL * max(np.abs(w).max(), 1e-300):
        source = "the precomputed kernel X" if affinity == "precomputed" else f"affinity={affinity!r}"
        raise ValueError(f"relaxation={relaxation!r} needs a positive semidefinite kernel; {source} gives a "
                         f"centred kernel with smallest eigenvalue {w[0]:.3g}")


def resolve_structure(n_clusters: int, structure):
    """The output structure: ``structure`` (a copy, checked) whose number of clusters must be
    ``n_clusters``, or ``flat(n_clusters)`` when it is None (None for one cluster)."""
    if structure is None:
        return flat(n_clusters) if n_clusters >= 2 else None
    G = as_structure(structure)  # a copy: fit leaves the user's graph untouched
    c = structure_size(G)
    if c != n_clusters:
        raise ValueError(f"n_clusters={n_clusters} disagrees with the {c} clusters of structure: pass "
                         f"n_clusters={c}")
    return G


def top_factor(Q, rank: int) -> np.ndarray:
    r"""The factor :math:`Y = V_r \Lambda_r^{1/2}` of the top ``rank`` eigenpairs of the symmetric
    ``Q`` (negative eigenvalues count as 0): the input of the rounding of an SDP solution.  A Q of
    another array API library is decomposed on its device, and only the ``n x rank`` factor is
    copied to the host (the rounding runs on NumPy arrays)."""
    if is_foreign(Q):
        xp = namespace_of(Q)
        w, V = xp.linalg.eigh(Q)
        top = Q.shape[0] - min(rank, Q.shape[0])
        return to_numpy(xp.flip(V[:, top:] * xp.sqrt(xp.maximum(w[top:], 0.0))[None, :], axis=1))
    w, V = np.linalg.eigh(Q)
    top = np.argsort(w)[::-1][:rank]
    return V[:, top] * np.sqrt(np.maximum(w[top], 0.0))


def known_labels(y, n_samples: int, n_clusters: int):
    """The known labels of ``y`` (-1 for unknown points), or None when ``y`` is None or has no
    -1 entry (then it is ignored, as scikit-learn's clusterers ignore ``y``) or no known point.

    Raises
    ------
    ValueError
        Naming ``y``: not a 1-D integer array of ``n_samples`` entries in ``-1 .. n_clusters - 1``.
    """
    if y is None:
        return None
    try:
        unknown = np.any(np.asarray(y) == -1)
    except (TypeError, ValueError):
        unknown = False
    if not unknown:
        return None
    known = check_labels(y, n_samples, n_clusters, name="y", allow_unknown=True)
    return None if np.all(known < 0) else known


def check_array_X(estimator, X, *, min_samples: int = 2):
    """scikit-learn's ``validate_data`` for an ``X`` of another array API library, in its
    namespace and on its device: a finite 2-D array of float32 or float64 (a ValueError or
    TypeError naming ``X`` otherwise) with at least ``min_samples`` rows; sets
    ``n_features_in_``.  Returns X itself, never a copy."""
    check_data(X, "X", min_samples=min_samples)
    estimator.n_features_in_ = int(X.shape[1])
    if hasattr(estimator, "feature_names_in_"):
        del estimator.feature_names_in_
    return X


class KernelClusterMixin(ClusterMixin, BaseEstimator):
    """Base of the kernel clustering estimators: the checks at the start of ``fit`` and the
    pairwise tag of ``affinity="precomputed"``."""

    def _validated_data(self, X, *, on_device: bool = False):
        """Check the parameters (``_parameter_constraints``) and X (``validate_data``, at least
        two samples, at least as many as the estimator's ``_cluster_count()``); return X.  An X of
        another array API library is checked on its device where ``on_device`` (the estimator then
        checks that its settings run there) and refused otherwise."""
        check_parameters(self._parameter_constraints, self.get_params(deep=False), type(self).__name__)
        if is_foreign(X) and on_device:
            X = check_array_X(self, X)
        else:
            X = check_X(self, X, ensure_min_samples=2)
        n_clusters = self._cluster_count()
        if n_clusters > X.shape[0]:
            raise ValueError(f"n_clusters={n_clusters} must be at most the number of samples, {X.shape[0]}")
        return X

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.affinity == "precomputed"
        return tags
