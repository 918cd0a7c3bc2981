"""The vocabulary the kernel clustering estimators (CLUHSIC, CLUHSICAL) share, checked at the
start of ``fit``: ``relaxation`` (which problem) and ``method`` (which algorithm solves it) with
the old ``method=`` spellings of a relaxation, ``n_clusters`` read off the structure when it is
not given, and ``solver_options`` that may not set what the estimator sets itself.
"""

from __future__ import annotations

from collections.abc import Mapping


from ._deprecation import warn_deprecated
from .structures import as_structure, check_output_kernel, n_clusters as structure_size

__all__ = ["DEFAULT_N_CLUSTERS", "check_solver_options", "cluster_count", "relaxation_and_method"]

#: the number of clusters without ``n_clusters``, ``structure`` or ``output_kernel`` (scikit-learn's)
DEFAULT_N_CLUSTERS = 8


def relaxation_and_method(owner: str, relaxation, method: str, methods: Mapping, old: Mapping, *,
                          stacklevel: int = 4) -> tuple:
    """The checked ``(relaxation, method)`` of an estimator.

    ``methods`` maps each relaxation (None: the partition problem itself) to the methods that
    solve it; ``old`` maps an old ``method=`` spelling of a relaxation to its ``(relaxation,
    method)``, taken with a ``FutureWarning`` where ``relaxation`` is None (``stacklevel`` as
    :func:`cvxclust._deprecation.warn_deprecated`'s).

    Raises
    ------
    ValueError
        Naming ``relaxation`` and ``method`` and listing the methods of ``relaxation``.
    """
    if relaxation is None and method in old:
        relaxation, new_method = old[method]
        spelled = f"relaxation={relaxation!r}" + ("" if new_method == "auto" else f", method={new_method!r}")
        warn_deprecated(f"{owner}: method={method!r} is the old spelling of {spelled}", stacklevel=stacklevel)
        method = new_method
    valid = methods[relaxation]
    if method not in valid:
        raise ValueError(f"{owner}: method={method!r} does not solve relaxation={relaxation!r}; its methods are "
                         f"{', '.join(map(repr, valid))}")
    return relaxation, method


def cluster_count(n_clusters, structure=None, output_kernel=None) -> int:
    """The number of clusters: ``n_clusters`` as given, else that of ``structure`` or of
    ``output_kernel`` (checked: a structure, a p.s.d. c x c kernel), else
    :data:`DEFAULT_N_CLUSTERS`.

    Raises
    ------
    ValueError
        Naming ``n_clusters`` and the number of clusters of ``structure`` or ``output_kernel``
        where they disagree, or naming the one that is not a structure or an output kernel.
    """
    if structure is not None and output_kernel is not None:
        raise ValueError("give either structure or output_kernel, not both")
    if structure is not None:
        # a copy: networkx caches views in the graph on first use, and fit leaves its parameters as given
        size, source = structure_size(as_structure(structure)), "structure"
    elif output_kernel is not None:
        size, source = check_output_kernel(output_kernel, name="output_kernel").shape[0], "output_kernel"
    else:
        return DEFAULT_N_CLUSTERS if n_clusters is None else n_clusters
    if n_clusters is not None and n_clusters != size:
        raise ValueError(f"n_clusters={n_clusters} disagrees with the {size} clusters of {source}: pass "
                         f"n_clusters={size} or leave n_clusters=None")
    return size


def check_solver_options(owner: str, solver_options, reserved) -> dict:
    """A copy of ``solver_options`` (None: empty), refused with a ValueError naming a key of
    ``reserved`` it holds (what the estimator sets itself: the key is the estimator's parameter,
    or the estimator computes it)."""
    options = dict(solver_options or {})
    taken = [key for key in options if key in reserved]
    if taken:
        raise ValueError(f"{owner}: solver_options={solver_options!r} sets {taken[0]!r}, which the estimator sets "
                         f"itself; keys it refuses: {', '.join(map(repr, sorted(reserved)))}")
    return options
