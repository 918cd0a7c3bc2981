"""Array checks shared by the divergences and the set projections: real, finite, named."""

from __future__ import annotations

import numpy as np

__all__ = ["as_finite_array"]


def as_finite_array(x, name: str, *, ndim: int | None = None) -> np.ndarray:
    """``x`` as a finite float array (at least one dimension, non-empty; exactly ``ndim``
    dimensions if given), or ``ValueError`` naming it.  Complex values are refused, not cast;
    float32 and read-only inputs are converted or used as they are, never modified."""
    if np.iscomplexobj(x):
        raise ValueError(f"{name} must be real, got complex values")
    try:
        x = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a numeric array") from None
    if ndim is not None and x.ndim != ndim:
        raise ValueError(f"{name} must be a {ndim}-D array, got shape {x.shape}")
    if x.ndim == 0 or x.size == 0:
        raise ValueError(f"{name} must be a non-empty array of at least one dimension, got shape {x.shape}")
    if not np.isfinite(x).all():
        raise ValueError(f"{name} contains NaN or infinite entries")
    return x
