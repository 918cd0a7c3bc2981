"""The warm start of the generic solver: a previous :class:`~cvxclust.Result`, checked once before
any iteration."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["WarmStart", "read_warm_start"]


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
