"""Cell formatting shared by the benchmark scripts (imported as a sibling: the scripts run as
``python benchmarks/<name>.py``, which puts this folder on the path)."""

from __future__ import annotations

import numpy as np


def fmt(x, spec: str) -> str:
    """``format(x, spec)``, or an en dash for a missing or non-finite value."""
    return "–" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, spec)
