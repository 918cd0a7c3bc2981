"""The relabelings of the clusters that a structure admits: the automorphisms of its kernel."""

from __future__ import annotations

import itertools
import math

import networkx as nx
import numpy as np
from networkx.algorithms.isomorphism import GraphMatcher

from .._checks import check_bool, check_int_range
from ._kernels import check_output_kernel, output_kernel

# flat(c) admits all c! relabelings; 8! = 40320 is the most the default enumerates.
_DEFAULT_MAX_PERMUTATIONS = math.factorial(8)


#: when two kernel entries count as equal, in the search and in the fully symmetric test alike
REL_TOL, ABS_TOL = 1e-9, 1e-12


def _close(x: float, y: float) -> bool:
    return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def admissible_permutations(structure, *, max_permutations: int = _DEFAULT_MAX_PERMUTATIONS) -> list[np.ndarray]:
    r"""The relabelings of the clusters that keep the structure: the automorphisms of ``A``.

    A permutation ``perm`` (``perm[k]`` = new label of cluster ``k``) is admissible when
    ``A[perm[i], perm[j]] == A[i, j]`` for all ``i, j``: relabeling a partition matrix by it,
    :math:`\Pi \to \Pi Q`, leaves the CLUHSIC objective :math:`\operatorname{tr}(K\Pi A\Pi^\top)`
    (2.3)/(2.4) unchanged.  Section 5.3: for a chain only the identity and the reversal are
    admissible, so solutions (a) and (b) are equally right and (d) is wrong.  They are found as
    the automorphisms of the weighted complete graph on the clusters (node attribute
    ``A[k, k]``, edge attribute ``A[i, j]``) by networkx's VF2 ``GraphMatcher``; the graph
    searched keeps only the nonzero entries as edges, which has the same automorphisms (an
    isomorphism maps non-edges, i.e. zero entries, to non-edges) and is much faster for sparse
    kernels.  A kernel ``a I + b (11^T - I)`` (flat, complete graph, one-level tree) admits every
    relabeling; its ``c!`` permutations are listed directly, without a search.  Counts: chain 2, ring
    ``2c``, ``tree([2, 2])`` 8, ``kron(flat(4), chain(3))`` :math:`4!\,2^4 = 384`, flat ``c!``.

    They are the symmetries of the *kernel*, which is what CLUHSIC sees: where the kernel has
    more symmetry than the drawn structure, so does this list (``ring(3)``'s kernel is that of
    a complete graph: 6 relabelings; ``kron(chain(2), chain(2))``'s may also swap the two
    factors, which the product's two-level loss of :func:`loss_matrix` does not respect).

    Parameters
    ----------
    structure : structure
        Anything :func:`as_structure` accepts.
    max_permutations : int, keyword-only
        Raise rather than enumerate more than this many (default ``8! = 40320``; ``flat(9)``
        would need 362880).  Only a kernel that admits every relabeling is refused before the
        search; any other is refused when the search passes the limit, so the refusal costs
        ``max_permutations`` steps of the search.

    Returns
    -------
    list of ndarray of shape (c,), dtype int
        Sorted lexicographically, so the identity comes first.  Pass them as
        ``cvxclust.metrics.accuracy(y_true, y_pred, permutations=...)``.

    Raises
    ------
    ValueError
        Naming ``structure`` when there are more than ``max_permutations``; use unrestricted
        Hungarian matching (``permutations=None``) then.
    """
    max_permutations = check_int_range(max_permutations, "max_permutations", 1)
    return _automorphisms(output_kernel(structure, check_psd=False), max_permutations, False, "structure")


def kernel_automorphisms(A, *, max_permutations: int = _DEFAULT_MAX_PERMUTATIONS,
                         generators: bool = False) -> list[np.ndarray]:
    r"""The permutations ``perm`` of the clusters with ``A[perm][:, perm] == A`` (to a relative
    1e-9), for a symmetric output kernel ``A`` given as a matrix; see :func:`admissible_permutations`,
    which returns them for a structure.

    Parameters
    ----------
    A : (c, c) array_like
        Symmetric finite output kernel.
    max_permutations : int, keyword-only
        Raise rather than enumerate more than this many (default ``8! = 40320``).
    generators : bool, keyword-only
        Return only a set that *generates* the group: for a kernel ``a I + b (11^T - I)``, which
        admits all ``c!`` relabelings, the swap of clusters 0 and 1 and the cycle
        ``k -> k + 1 mod c`` (whatever ``c``, without the limit); every automorphism otherwise.

    Returns
    -------
    list of ndarray of shape (c,), dtype int
        Sorted lexicographically (the identity first when every automorphism is listed).

    Raises
    ------
    ValueError
        Naming ``A`` unless it is a finite real symmetric square matrix; naming
        ``max_permutations`` when there are more automorphisms than that.
    """
    max_permutations = check_int_range(max_permutations, "max_permutations", 1)
    generators = check_bool(generators, "generators")
    return _automorphisms(check_output_kernel(A, psd=False), max_permutations, generators, "A")


def _automorphisms(A: np.ndarray, max_permutations: int, generators: bool, name: str) -> list[np.ndarray]:
    """The automorphisms (or generators) of the checked kernel A; errors name ``name``."""
    c = A.shape[0]
    off = A[~np.eye(c, dtype=bool)]
    fully_symmetric = (np.allclose(np.diag(A), A[0, 0], rtol=REL_TOL, atol=ABS_TOL)
                       and (c < 2 or np.allclose(off, off[0], rtol=REL_TOL, atol=ABS_TOL)))
    if fully_symmetric and generators:
        swap, cycle = np.arange(c), np.roll(np.arange(c), -1)
        swap[:2] = swap[1::-1]
        return [np.array(p, dtype=int) for p in sorted({tuple(swap), tuple(cycle)})]
    if fully_symmetric and math.factorial(c) > max_permutations:
        # every relabeling keeps A = a I + b (11^T - I) (flat, complete graph, one-level tree)
        raise ValueError(
            f"{name} admits all {c}! = {math.factorial(c)} relabelings of its {c} clusters "
            f"(more than max_permutations={max_permutations}); use unrestricted Hungarian "
            "matching instead (cvxclust.metrics.accuracy(..., permutations=None))"
        )
    if fully_symmetric:
        return [np.array(p, dtype=int) for p in itertools.permutations(range(c))]  # lexicographic
    G = nx.Graph()
    G.add_nodes_from((k, {"a": float(A[k, k])}) for k in range(c))
    # zero entries are the complete graph's missing edges
    rows, cols = np.nonzero(np.abs(np.triu(A, 1)) > 1e-12 * np.abs(A).max())
    G.add_edges_from((i, j, {"a": float(A[i, j])}) for i, j in zip(rows.tolist(), cols.tolist()))

    def match(x, y):  # node and edge attributes alike
        return _close(x["a"], y["a"])

    perms = []
    for iso in GraphMatcher(G, G, node_match=match, edge_match=match).isomorphisms_iter():
        if len(perms) == max_permutations:
            raise ValueError(
                f"{name} admits more than max_permutations={max_permutations} relabelings; "
                "use unrestricted Hungarian matching instead (cvxclust.metrics.accuracy(..., "
                "permutations=None)) or raise max_permutations"
            )
        perms.append(tuple(iso[k] for k in range(c)))
    return [np.array(p, dtype=int) for p in sorted(perms)]
