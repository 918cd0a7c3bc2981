"""The warm start of the generic solver: a previous :class:`~cvxclust.Result`, checked once before
any iteration."""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .._array_api import check_arrays, library, to_numpy

__all__ = ["WarmStart", "read_warm_start", "warm_start_on_host"]


@dataclass(frozen=True)
class WarmStart:
    """What a warm start gives: the point, the penalty and the multipliers (None where absent)."""

    X: np.ndarray
    rho: float | None
    box_multiplier: np.ndarray | None
    row_multipliers: np.ndarray | None


def read_warm_start(warm, n: int, m: int) -> WarmStart:
    """The parts of the Result ``warm`` that start a solve of order ``n`` with ``m`` rows left by
    the splitting: ``X`` (symmetrised), ``rho`` (None where it has none), ``box_multiplier`` and
    ``row_multipliers`` (None where they have none or another shape: they belong to another
    problem).

    Raises
    ------
    ValueError
        Naming ``warm_start`` where its ``X`` is not of shape ``(n, n)``, or where its ``X``, its
        ``rho`` or a multiplier of the right shape holds NaN or infinite entries (the point of a
        failed solve, such as the record :func:`cvxclust.validate` keeps with
        ``errors="record"``): such a start has nothing to give, and an iteration started from it
        would fail.
    """
    X = np.asarray(warm.X, dtype=float)
    if X.shape != (n, n):
        raise ValueError(f"warm_start has X of shape {X.shape}; this problem's X is {(n, n)}")
    if not np.isfinite(X).all():
        raise ValueError(f"warm_start has X with {int(np.sum(~np.isfinite(X)))} NaN or infinite entries; a warm "
                         "start must be a finite point (solve without warm_start, or start from a successful "
                         "result)")
    extras = warm.extras or {}
    rho = extras.get("rho")
    if rho is not None and not (np.isscalar(rho) and np.isfinite(rho) and rho > 0):
        raise ValueError(f"warm_start has extras['rho'] = {rho!r}; a penalty must be a finite number > 0")
    parts = {}
    for name, shape in (("box_multiplier", (n, n)), ("row_multipliers", (m,))):
        value = extras.get(name)
        if value is None or np.shape(value) != shape:
            parts[name] = None
            continue
        value = np.asarray(value, dtype=float)
        if not np.isfinite(value).all():
            raise ValueError(f"warm_start has extras[{name!r}] with NaN or infinite entries; a warm start must "
                             "be finite")
        parts[name] = value
    return WarmStart(X=(X + X.T) / 2, rho=None if rho is None else float(rho), **parts)


def warm_start_on_host(warm, arrays):
    """The Result ``warm`` with its ``X`` and ``box_multiplier`` as NumPy arrays (copied from
    their device once, before any iteration), for a solve on the namespace and device of
    ``arrays`` (:class:`cvxclust._array_api.Arrays`).

    Raises
    ------
    TypeError
        Naming ``warm_start`` where its X is an array of another library than the solve's.
    ValueError
        Naming ``warm_start`` where its X is on another device than the solve's.
    """
    found = check_arrays(warm_start=warm.X)
    if found.numpy != arrays.numpy or not found.numpy and library(found.xp) != library(arrays.xp):
        raise TypeError(f"warm_start has an X of {library(found.xp)}, and this solve runs on {library(arrays.xp)}: "
                        "pass the Result of a solve on the same device")
    if not found.numpy and str(found.device) != str(arrays.device) and found.device != arrays.device:
        raise ValueError(f"warm_start has an X on device {found.device!r}, and this solve runs on {arrays.device!r}: "
                         "pass the Result of a solve on the same device")
    extras = dict(warm.extras or {})
    if extras.get("box_multiplier") is not None:
        extras["box_multiplier"] = to_numpy(extras["box_multiplier"])
    return replace(warm, X=to_numpy(warm.X), extras=extras)
