"""The array libraries the array API tests run on: NumPy always, array-api-strict where it is
installed (the test extra), PyTorch on the CPU where it is installed (not on CI)."""

import numpy as np
import pytest

from cvxclust._array_api import to_numpy

__all__ = ["FOREIGN", "as_library", "to_numpy"]

#: the libraries other than NumPy; each parameter skips where its library is missing
FOREIGN = [pytest.param("array_api_strict", id="array-api-strict"), pytest.param("torch", id="torch")]


def as_library(x, library: str, dtype: str = "float64"):
    """``x`` (a NumPy array) as an array of ``library`` on its CPU device, or a skip where it is missing."""
    module = pytest.importorskip(library)
    x = np.asarray(x, dtype=dtype)
    if library == "torch":
        return module.asarray(x)
    return module.asarray(x, dtype=getattr(module, dtype))
