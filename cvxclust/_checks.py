"""Input checks that raise ``ValueError`` naming the offending argument.

The checks of one scalar (:func:`check_positive`, :func:`check_choice`, :func:`check_int_range`,
:func:`check_n_clusters`, :func:`check_bool`, :func:`check_random_state`) are the declarative
checks of :mod:`cvxclust.parameters` worded for arguments: they raise its
:class:`~cvxclust.parameters.InvalidParameterError` (a ``ValueError`` and a ``TypeError``).
"""

from __future__ import annotations

import re
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state as _sklearn_random_state
from sklearn.utils.validation import validate_data

from ._array_api import check_square, is_foreign, library, namespace_of, to_numpy, unit_roundoff
from .parameters import Interval, Options, check_parameter


#: any integer (booleans excluded), for the checks that word "not an integer" on its own
_INTEGER = Interval(Integral, None, None)


def _literal(text) -> str:
    """``str(text)`` with its braces doubled, to stand in a message of :func:`check_parameter`."""
    return str(text).replace("{", "{{").replace("}", "}}")


def check_positive(value, name: str, *, allow_inf: bool = False) -> None:
    """Raise unless ``value`` is a real number > 0 (finite unless ``allow_inf``) that a float holds."""
    check_parameter(name, value, [Interval(Real, 0, None, closed="neither", allow_inf=allow_inf)],
                    message="{name} must be a positive number, got {value!r}")


def check_choice(value, name: str, choices) -> None:
    """Raise unless ``value`` is one of ``choices`` (:class:`~cvxclust.parameters.Options`)."""
    check_parameter(name, value, [Options(*choices)],
                    message="Unknown {name} {value!r}; valid values are " + _literal(sorted(choices)))


def as_float_array(value, name: str, what: str = "array") -> np.ndarray:
    """``value`` as a float array; strings (which numpy would parse), complex numbers (whose
    imaginary parts the cast would drop) and non-numbers raise naming ``name``."""
    try:
        kind = np.asarray(value).dtype.kind
    except (TypeError, ValueError):  # ragged nested sequences
        raise ValueError(f"{name} must be a numeric {what}") from None
    if kind == "c":
        raise ValueError(f"{name} must be real, got complex values")
    try:
        if kind in "US":
            raise TypeError
        return np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric {what}") from None


def as_finite_array(value, name: str, *, ndim: int | None = None) -> np.ndarray:
    """:func:`as_float_array`, finite and non-empty with at least one dimension (exactly
    ``ndim`` if given), or a ValueError naming ``name``.  Never modifies ``value`` (it is
    returned as is when already a float64 array)."""
    x = as_float_array(value, name)
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {x.shape}")
    if x.ndim == 0 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty array of at least one dimension, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return x


def check_square_matrix(
    K,
    name: str = "K",
    *,
    symmetric: bool = True,
    nonnegative: bool = False,
    min_size: int = 1,
    rtol: float = 1e-10,
) -> np.ndarray:
    """Return ``K`` as a float array after checking it is square, finite and (optionally)
    symmetric and entrywise nonnegative; symmetric inputs are symmetrised exactly.  An array of
    another array API library (PyTorch, CuPy, ...) is checked and returned in its own namespace
    and on its device (:func:`cvxclust._array_api.check_square`)."""
    if is_foreign(K):
        return check_square(K, name, symmetric=symmetric, nonnegative=nonnegative, min_size=min_size, rtol=rtol)
    K = as_float_array(K, name, "matrix")
    if K.ndim != 2 or K.shape[0] != K.shape[1]:
        raise ValueError(f"{name} must be a square matrix, got shape {K.shape}")
    if K.shape[0] < min_size:
        raise ValueError(f"{name} must be at least {min_size} x {min_size}, got {K.shape}")
    if not np.all(np.isfinite(K)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    if symmetric:
        scale = max(np.abs(K).max(), 1e-300)
        if np.abs(K - K.T).max() > rtol * scale:
            raise ValueError(f"{name} must be symmetric")
        K = (K + K.T) / 2
    if nonnegative and K.min() < 0:
        raise ValueError(f"{name} must have nonnegative entries (min {K.min():.3g})")
    return K


def check_n_clusters(n_clusters, n_samples: int) -> int:
    """Raise unless ``2 <= n_clusters <= n_samples``."""
    return check_int_range(n_clusters, "n_clusters", 2, n_samples,
                           message="n_clusters must be between 2 and n_samples={high}, got {value}")


def check_data_matrix(X, name: str = "X", *, min_samples: int = 2) -> np.ndarray:
    """Return ``X`` as a 2-D float array after checking it is finite with at least
    ``min_samples`` rows (samples) and one column (feature)."""
    X = as_float_array(X, name, "matrix")
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_samples, n_features), got {X.ndim}-D")
    if X.shape[0] < min_samples or X.shape[1] < 1:
        raise ValueError(f"{name} must have at least {min_samples} rows and 1 column, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} contains NaN or infinite entries")
    return X


def check_int_range(value, name: str, low: int, high: int | None = None, *, message: str | None = None) -> int:
    """Return ``value`` as an ``int`` after checking it is an integer with ``low <= value <= high``
    (``high=None``: no upper bound); ``message`` words the range error (fields ``name``, ``value``,
    ``low``, ``high``)."""
    check_parameter(name, value, [_INTEGER], message="{name} must be an integer, got {value!r}")
    if message is None:
        message = "{name} must be " + (f">= {low}" if high is None else f"between {low} and {high}") + ", got {value}"
    else:
        message = message.replace("{low}", _literal(low)).replace("{high}", _literal(high))
    return int(check_parameter(name, value, [Interval(Integral, low, high)], message=message))


#: The most floats a generated data set holds (2 GiB of float64): far more points than a
#: clusterer forming n_samples x n_samples matrices can take, and an error naming the argument
#: rather than a MemoryError for a mistyped size.
MAX_DATA_ENTRIES = 2**28


def check_data_size(count: int, name: str, entries_per_count: int) -> None:
    """Raise unless ``count * entries_per_count`` (the floats of a generated data matrix whose
    size the argument ``name`` sets) is at most :data:`MAX_DATA_ENTRIES`."""
    if count * entries_per_count > MAX_DATA_ENTRIES:
        raise ValueError(
            f"{name} must be at most {MAX_DATA_ENTRIES // entries_per_count} here, got {count}: the data would "
            f"hold {count} x {entries_per_count} floats, and a generated data set is limited to 2**28 floats "
            f"(2 GiB), far more points than a clusterer forming n_samples x n_samples matrices can take")


def check_bool(value, name: str) -> bool:
    """Return ``value`` as a ``bool`` after checking it is True or False (numpy bools too)."""
    return bool(check_parameter(name, value, ["boolean"], message="{name} must be True or False, got {value!r}"))


def check_labels(labels, n_samples: int | None = None, n_clusters: int | None = None, *,
                 name: str = "labels", allow_unknown: bool = False) -> np.ndarray:
    """Integer labels in ``0..n_clusters-1`` (and ``-1`` for unknown if ``allow_unknown``)."""
    labels = np.asarray(labels)
    if labels.ndim != 1 or not np.issubdtype(labels.dtype, np.integer):
        integral = False
        if labels.ndim == 1 and labels.size and labels.dtype.kind not in "USc":  # not strings, which parse
            try:
                values = np.asarray(labels, dtype=float)
                integral = bool(np.isfinite(values).all() and np.all(values % 1 == 0))
            except (TypeError, ValueError):
                pass
        if not integral:
            raise ValueError(f"{name} must be a 1-D array of integer cluster indices")
        labels = labels.astype(int)
    if n_samples is not None and labels.shape[0] != n_samples:
        raise ValueError(f"{name} must have {n_samples} entries, got {labels.shape[0]}")
    low = -1 if allow_unknown else 0
    if labels.size and (labels.min() < low or (n_clusters is not None and labels.max() >= n_clusters)):
        raise ValueError(f"{name} must lie in {low}..{n_clusters - 1 if n_clusters else 'n_clusters-1'}, "
                         f"got values in {labels.min()}..{labels.max()}")
    return labels


def rounding_rtol(M, rtol: float = 1e-10) -> float:
    """``rtol``, raised to ``sqrt(n) eps`` for an n x n input of a floating dtype whose
    precision ``eps`` cannot meet it: the error of the eigenvalues (and the asymmetry) of a
    matrix rounded to float32 is of that order relative to its norm, so such a kernel is not
    refused for its precision."""
    dtype = getattr(M, "dtype", None)
    if is_foreign(M):
        xp = namespace_of(M)
        if M.ndim == 0 or not xp.isdtype(dtype, "real floating"):
            return rtol
        return max(rtol, float(np.sqrt(max(M.shape[0], 1))) * unit_roundoff(xp, dtype))
    if dtype is None or not np.issubdtype(dtype, np.floating) or np.ndim(M) == 0:
        return rtol
    return max(rtol, float(np.sqrt(max(np.shape(M)[0], 1))) * float(np.finfo(dtype).eps))


def check_psd_eigenvalues(w: np.ndarray, name: str, rtol: float) -> None:
    """Raise unless the ascending eigenvalues ``w`` are >= ``-rtol * max|w|``."""
    if w[0] < -rtol * max(np.abs(w).max(), 1e-300):
        raise ValueError(f"{name} must be positive semidefinite (smallest eigenvalue {w[0]:.3g})")


def check_kernel(K, name: str = "K", *, psd: bool = False, min_size: int = 1, rtol: float = 1e-10) -> np.ndarray:
    """:func:`check_square_matrix` (symmetric, finite) and, with ``psd``, positive
    semidefinite, both to ``rtol`` raised to the precision of K's dtype (:func:`rounding_rtol`).
    Returns a new float64 array (an array of another array API library: a new one of its own)."""
    if not hasattr(K, "dtype"):
        try:
            K = np.asarray(K)
        except (TypeError, ValueError):
            raise ValueError(f"{name} must be a numeric matrix") from None
    rtol = rounding_rtol(K, rtol)
    K = check_square_matrix(K, name, min_size=min_size, rtol=rtol)
    if psd:
        w = namespace_of(K).linalg.eigvalsh(K) if is_foreign(K) else np.linalg.eigvalsh(K)
        check_psd_eigenvalues(to_numpy(w), name, rtol)
    return K


def check_random_state(random_state, name: str = "random_state") -> np.random.RandomState:
    """A ``RandomState`` from ``None`` (numpy's global one), an int seed in ``[0, 2**32)``, a
    ``RandomState`` (returned as is) or a ``Generator`` (whose bit generator it then draws
    from); anything else, booleans included, raises naming ``name``."""
    random_state = check_parameter(name, random_state, ["random_state"])
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(random_state.bit_generator)
    return _sklearn_random_state(random_state)


#: the estimators that fit an X of another array API library on its device, for the messages that
#: refuse one elsewhere
DEVICE_ESTIMATORS = ("SemidefiniteSpectralClustering (affinity 'rbf', 'polynomial' or 'precomputed', with the "
                     "methods that run on the affinity's device) and CLUHSIC (relaxation='sdp', method 'auto' or "
                     "'admm'; affinity 'rbf', 'polynomial', 'linear' or 'precomputed')")


def refuse_array_X(estimator, X, what: str = "fit") -> None:
    """Raise a TypeError naming the estimator and ``what`` (its method, or the parameter setting)
    that runs on NumPy arrays only, for an ``X`` of another array API library: never a silent
    copy to the host."""
    xp = namespace_of(X)
    raise TypeError(f"{type(estimator).__name__}: {what} runs on NumPy arrays only and X is an array of "
                    f"{library(xp)} on {getattr(X, 'device', 'its device')}; on such an array "
                    f"{DEVICE_ESTIMATORS} fit on its device, or pass X as a NumPy array "
                    "(cvxclust._array_api.to_numpy(X))")


def check_X(estimator, X, **kwargs) -> np.ndarray:
    """scikit-learn's ``validate_data(estimator, X, **kwargs)`` for an estimator's ``fit``, with
    every error naming ``X``: scikit-learn's own messages do for NaN but not for a 1-D array, too
    few samples, strings or complex numbers.  The original message is kept whole (after
    ``"X: "``), so scikit-learn's estimator checks, which search it, still find it.  An X of
    another array API library is refused (:func:`refuse_array_X`): the estimators that fit on its
    device check it themselves first."""
    if is_foreign(X):
        refuse_array_X(estimator, X)
    try:
        return validate_data(estimator, X, **kwargs)
    except (ValueError, TypeError) as error:
        if re.search(r"\bX\b", str(error)):
            raise
        try:
            renamed = type(error)(f"X: {error}")
        except Exception:  # an exception class with a constructor of its own
            renamed = ValueError(f"X: {error}")
        raise renamed from error
