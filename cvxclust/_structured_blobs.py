"""Gaussian blobs laid out along a cluster structure (see :func:`structured_blobs`)."""

from __future__ import annotations

from numbers import Integral, Real

import networkx as nx
import numpy as np

from ._checks import check_data_size, check_random_state
from .parameters import Interval, check_parameter, check_parameters
from .structures import as_structure

__all__ = ["structure_layout", "structured_blobs"]

#: The distance between neighbouring centres: a positive, finite float.
_SPACING = [Interval(Real, 0, None, closed="neither")]


def structure_layout(structure, spacing: float = 1.0) -> np.ndarray:
    r"""Cluster centres whose distances follow the structure's graph distances.

    The shortest-path distances ``D`` between the clusters of ``structure`` (on the undirected
    graph, through the inner nodes of a tree; clusters in different components are one step
    farther apart than the farthest connected pair) are embedded by classical multidimensional
    scaling: the centred Gram matrix :math:`B = -\tfrac12 H D^{\circ 2} H` (``H = I - 11^T/c``)
    is factored, :math:`B_+ = V \Lambda_+ V^\top`, and the centres are the rows of
    :math:`V\Lambda_+^{1/2}`, scaled so that the closest clusters of the structure are
    ``spacing`` times their graph distance apart.  Path and tree distances embed exactly
    (neighbours on a chain are ``spacing`` apart, on a line); a ring's embed up to the
    negative part of B (a regular polygon with sides ``spacing``).

    Parameters
    ----------
    structure : networkx graph
        A structure of :mod:`cvxclust.structures`.
    spacing : float, default=1.0
        Distance between the centres of the closest clusters, per step of graph distance;
        positive and finite.

    Returns
    -------
    ndarray of shape (c, d)
        One centre per cluster, in the order of ``structure.graph["clusters"]``; ``d`` is the
        number of positive eigenvalues of B.
    """
    spacing = check_parameter("spacing", spacing, _SPACING, "structure_layout")
    G = as_structure(structure)
    clusters = G.graph["clusters"]
    lengths = dict(nx.all_pairs_shortest_path_length(G.to_undirected(as_view=True)))
    c = len(clusters)
    D = np.full((c, c), np.inf)
    for i, u in enumerate(clusters):
        for j, v in enumerate(clusters):
            D[i, j] = lengths[u].get(v, np.inf)
    finite = np.isfinite(D)
    D[~finite] = D[finite].max() + 1.0
    H = np.eye(c) - 1.0 / c
    w, V = np.linalg.eigh(-0.5 * H @ (D**2) @ H)
    keep = w > 1e-9 * max(w.max(), 1e-300)
    centres = V[:, keep] * np.sqrt(w[keep])
    # the closest pairs of the structure keep their graph distance (MDS shrinks a ring's sides)
    closest = D == D[~np.eye(c, dtype=bool)].min()
    np.fill_diagonal(closest, False)
    embedded = np.linalg.norm(centres[:, None] - centres[None], axis=2)
    return centres * (spacing * D[closest].mean() / embedded[closest].mean())


def structured_blobs(structure, n_samples: int = 500, *, spacing: float = 4.0, cluster_std: float = 1.0,
                     random_state=None) -> tuple[np.ndarray, np.ndarray]:
    """Isotropic Gaussian blobs centred on the :func:`structure_layout` of a structure.

    Cluster ``k`` (the k-th of ``structure.graph["clusters"]``) is a Gaussian of standard
    deviation ``cluster_std`` in every coordinate around its centre; neighbouring clusters of the
    structure are ``spacing`` apart.  Points go to the clusters in turn (sizes differ by at most
    one) and come sorted by label.  With ``spacing / cluster_std`` large the structure and the
    partition are plain to see: the data on which a structured clusterer must find both.

    Parameters
    ----------
    structure : networkx graph
        A structure of :mod:`cvxclust.structures` (``chain``, ``ring``, ``tree``, ``kron``, ...).
    n_samples : int, default=500
        Number of points, at least the number of clusters and at most ``2**28 / d``: ``X``
        holds at most ``2**28`` floats (2 GiB).
    spacing : float, default=4.0
        Distance between the centres of neighbouring clusters.
    cluster_std : float, default=1.0
        Standard deviation of each blob, per coordinate.
    random_state : int, RandomState or None

    Returns
    -------
    X : ndarray of shape (n_samples, d)
    y : ndarray of shape (n_samples,)
        Labels: positions in ``structure.graph["clusters"]``, nondecreasing.

    Raises
    ------
    ValueError
        Naming the argument: a ``structure`` that is not one, ``n_samples`` below the number of
        clusters or too large for ``X`` to hold (see above), ``spacing`` not positive and
        finite, ``cluster_std`` negative, or a bad ``random_state``.
    """
    G = as_structure(structure)
    c = len(G.graph["clusters"])
    check_parameters({"n_samples": [Interval(Integral, c, None, closed="left")],
                         "spacing": _SPACING,
                         "cluster_std": [Interval(Real, 0, None, closed="left")]},
                        {"n_samples": n_samples, "spacing": spacing, "cluster_std": cluster_std}, "structured_blobs")
    rng = check_random_state(random_state)
    centres = structure_layout(G, spacing)
    check_data_size(n_samples, "n_samples", centres.shape[1])
    y = np.sort(np.arange(n_samples) % c)
    X = centres[y] + cluster_std * rng.standard_normal((n_samples, centres.shape[1]))
    return X, y
