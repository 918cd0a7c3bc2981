"""Old spellings kept for one release: each use gives a ``FutureWarning`` that names the new one.

Estimators keep an old keyword in their signature with the default :data:`DEPRECATED` (so
``get_params`` and ``clone`` still see it, as scikit-learn does) and resolve it in ``fit`` with
:func:`renamed_parameter`; functions take it from ``**kwargs`` the same way; modules keep an old
attribute name with :func:`module_getattr`.
"""

from __future__ import annotations

import warnings

__all__ = ["DEPRECATED", "REMOVED_IN", "module_getattr", "renamed_parameter", "warn_deprecated"]

#: the release that removes the old spellings
REMOVED_IN = "0.3"


#: default of a keyword kept only under its old name: a string, as scikit-learn's check of
#: estimator defaults takes no other object, and one no caller passes as a value
DEPRECATED = "deprecated"


def warn_deprecated(message: str, stacklevel: int = 3) -> None:
    """A ``FutureWarning`` saying ``message`` and when the old spelling goes."""
    warnings.warn(f"{message} (the old spelling is removed in {REMOVED_IN})", FutureWarning, stacklevel=stacklevel)


def renamed_parameter(owner: str, old: str, old_value, new: str, new_value, *, new_default=None,
                      stacklevel: int = 4):
    """The value of keyword ``new`` when a caller may still spell it ``old``.

    ``old_value`` is :data:`DEPRECATED` when the caller did not pass ``old``; otherwise a
    ``FutureWarning`` names the new keyword, and passing both (``new_value`` other than
    ``new_default``) is a ``TypeError``.
    """
    if isinstance(old_value, str) and old_value == DEPRECATED:
        return new_value
    if new_value is not new_default and new_value != new_default:
        raise TypeError(f"{owner}: pass {new}= alone; {old}= is its old spelling")
    warn_deprecated(f"{owner}: {old}= is renamed {new}=", stacklevel=stacklevel)
    return old_value


def module_getattr(module: str, renamed: dict[str, tuple[str, object]]):
    """A module ``__getattr__`` that serves each old attribute name of ``renamed``
    (``old -> (new, value)``) with a ``FutureWarning``."""

    def __getattr__(name):
        if name in renamed:
            new, value = renamed[name]
            warn_deprecated(f"{module}.{name} is renamed {module}.{new}")
            return value
        raise AttributeError(f"module {module!r} has no attribute {name!r}")

    return __getattr__
