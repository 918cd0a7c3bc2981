"""Results that overflow float64 raise, naming the inputs to rescale, rather than return inf or NaN."""

from __future__ import annotations

import functools

import numpy as np

from ..result import Result

__all__ = ["finite_result"]


def _finite(value) -> bool:
    if isinstance(value, tuple):
        return all(_finite(part) for part in value)
    if isinstance(value, Result):
        return bool(np.isfinite(value.objective))
    return bool(np.all(np.isfinite(value)))


def finite_result(inputs: str):
    """Decorator: a result (a float, an array, a tuple of them, or a Result's objective) that is
    not finite raises ``ValueError`` naming ``inputs``; the overflow warnings are not shown."""

    def decorate(func):
        @functools.wraps(func)
        def checked(*args, **kwargs):
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                result = func(*args, **kwargs)
            if not _finite(result):
                raise ValueError(f"{func.__name__} overflows float64 for these {inputs}: rescale them")
            return result

        return checked

    return decorate
