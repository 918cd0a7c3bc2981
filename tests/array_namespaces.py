"""The array libraries the array API tests run on: NumPy always, array-api-strict where it is
installed (the test extra), PyTorch on the CPU where it is installed (not on CI)."""

import numpy as np
import pytest

from cvxclust._array_api import to_numpy

__all__ = ["DEVICE1", "FOREIGN", "as_library", "on_device1", "to_numpy"]

#: the libraries other than NumPy; each parameter skips where its library is missing
FOREIGN = [pytest.param("array_api_strict", id="array-api-strict"), pytest.param("torch", id="torch")]


def as_library(x, library: str, dtype: str = "float64"):
    """``x`` (a NumPy array) as an array of ``library`` on its CPU device, or a skip where it is missing."""
    module = pytest.importorskip(library)
    x = np.asarray(x, dtype=dtype)
    if library == "torch":
        return module.asarray(x)
    return module.asarray(x, dtype=getattr(module, dtype))


#: array-api-strict's second fake device, from which ``numpy.asarray`` cannot read: a solve run
#: there fails wherever an array goes to the host by an implicit conversion
DEVICE1 = "device1"


def on_device1(x, dtype: str = "float64"):
    """``x`` (a NumPy array) as an array-api-strict array on :data:`DEVICE1`, or a skip where
    array-api-strict is missing."""
    strict = pytest.importorskip("array_api_strict")
    return strict.asarray(np.asarray(x, dtype=dtype), device=strict.Device(DEVICE1))
