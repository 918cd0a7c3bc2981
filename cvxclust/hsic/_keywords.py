r"""The keywords of the public functions of :mod:`cvxclust.hsic`, with the old spellings kept for
one release (a ``FutureWarning`` names the new one): ``normalization`` (was ``normalized``),
``random_state`` (was ``rng``) and ``n_init`` (was ``n_starts``).

``normalization`` is that of the partition matrix :math:`P = \Pi D`: ``None`` (:math:`D = I`,
the objective (2.3)) or ``"l2"`` (:math:`D = (\Pi^\top\Pi)^{-1/2}`, the objective (2.4)); the
optimizers of the HSIC problem handle these two, ``"l1"`` (:math:`D = (\Pi^\top\Pi)^{-1}`)
only :func:`cvxclust.hsic.partition_matrix` builds.
"""

from __future__ import annotations

from .._checks import check_bool
from .._deprecation import DEPRECATED, renamed_parameter
from ..parameters import Options, check_parameter

__all__ = ["NORMALIZATIONS", "check_normalization", "no_other_keywords", "normalization_of", "renamed"]

#: the normalizations the optimizers of the HSIC problem handle
NORMALIZATIONS = (None, "l2")
# every normalization of the vocabulary
_ALL = (None, "l1", "l2")


def check_normalization(normalization, owner: str, supported=NORMALIZATIONS):
    """``normalization`` if it is one of ``supported``; otherwise a ValueError naming it."""
    normalization = check_parameter("normalization", normalization, [Options(*_ALL)], owner)
    if normalization not in supported:
        raise ValueError(f"{owner}: normalization={normalization!r} is not supported; use one of "
                         f"{', '.join(map(repr, supported))} (None: the objective (2.3), 'l2': (2.4))")
    return normalization


def renamed(owner: str, old_keywords: dict, old: str, new: str, new_value, new_default, *, stacklevel: int = 5):
    """The value of keyword ``new``, or of its old spelling ``old`` taken out of ``old_keywords``
    (the caller's ``**kwargs``), with a ``FutureWarning`` (``stacklevel`` points it at the
    public function's caller); both given is a TypeError."""
    return renamed_parameter(owner, old, old_keywords.pop(old, DEPRECATED), new, new_value, new_default=new_default,
                             stacklevel=stacklevel)


def normalization_of(owner: str, normalization, old_keywords: dict, *, default="l2", supported=NORMALIZATIONS,
                     stacklevel: int = 5):
    """The checked ``normalization`` (or the old ``normalized=True/False`` taken out of
    ``old_keywords``: ``"l2"`` / ``None``)."""
    old = old_keywords.pop("normalized", DEPRECATED)
    if old is not DEPRECATED:
        old = "l2" if check_bool(old, "normalized") else None
    value = renamed_parameter(owner, "normalized", old, "normalization", normalization, new_default=default,
                              stacklevel=stacklevel)
    return check_normalization(value, owner, supported)


def no_other_keywords(owner: str, old_keywords: dict) -> None:
    """A TypeError for a keyword left in ``old_keywords`` (neither a parameter nor an old spelling)."""
    if old_keywords:
        raise TypeError(f"{owner}() got an unexpected keyword argument {next(iter(old_keywords))!r}")
