"""The former name of :mod:`cvxclust.sweeps`, kept for one release.

``cvxclust.sweep`` is the function :func:`cvxclust.sweeps.sweep`; a module of the same name
was hidden behind it (``import cvxclust.sweep as m`` gave the function).  The module is now
:mod:`cvxclust.sweeps`; ``from cvxclust.sweep import read_spec`` still works, with a
``FutureWarning`` naming the new place.  The package imports this module before it binds the
function, so that importing it later leaves ``cvxclust.sweep`` the function.
"""

from __future__ import annotations

from . import sweeps as _sweeps
from ._deprecation import warn_deprecated

__all__: list[str] = []


def __getattr__(name: str):
    if name.startswith("__") or not hasattr(_sweeps, name):
        raise AttributeError(f"module 'cvxclust.sweep' has no attribute {name!r}")
    warn_deprecated(f"the module cvxclust.sweep is renamed cvxclust.sweeps: import {name} from cvxclust.sweeps")
    return getattr(_sweeps, name)
