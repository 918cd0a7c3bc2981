"""The symmetry reduction of the CLUHSIC SDP's p.s.d. projection, against the plain projection."""

from __future__ import annotations

import numpy as np
import pytest

from cvxclust.hsic._symmetry import ClusterSymmetry, SymmetricPSDProjector
from cvxclust.linalg import project_psd
from cvxclust.structures import chain, flat, kernel_automorphisms, kron, output_kernel, ring, tree


def invariant_matrix(permutations, c: int, m: int, rng) -> np.ndarray:
    """A random symmetric mc x mc matrix invariant under the cluster permutations: the average of
    a random one over the group they generate (by closure, the groups here are small)."""
    group = {tuple(range(c))}
    while True:
        new = {tuple(np.asarray(g)[list(h)]) for h in group for g in permutations} - group
        if not new:
            break
        group |= new
    R = rng.standard_normal((c * m, c * m))
    R = R + R.T
    Q = np.zeros_like(R)
    for g in group:
        P = np.kron(np.eye(c)[list(g)], np.eye(m))
        Q += P @ R @ P.T
    return Q / len(group)


CYCLIC = {f"cyclic{c}": [np.roll(np.arange(c), 1)] for c in (3, 4, 5, 6)}
STRUCTURES = {"chain4": chain(4), "chain5": chain(5), "ring4": ring(4), "ring5": ring(5), "ring6": ring(6),
              "flat4": flat(4), "tree22": tree([2, 2]), "kron": kron(flat(3), chain(2))}
GROUPS = {**{name: kernel_automorphisms(output_kernel(S), generators=True) for name, S in STRUCTURES.items()},
          **CYCLIC}


@pytest.mark.parametrize("name", list(GROUPS))
def test_projection_by_blocks_is_the_projection(name):
    permutations = GROUPS[name]
    c, m = len(permutations[0]), 5
    rng = np.random.default_rng(0)
    symmetry = ClusterSymmetry(permutations, c)
    assert sum(symmetry.orders(m)) == c * m
    projector = SymmetricPSDProjector(symmetry, m)
    for _ in range(3):
        Q = invariant_matrix(permutations, c, m, rng)
        expected = project_psd(Q)
        np.testing.assert_allclose(projector(Q), expected, atol=1e-12 * np.abs(expected).max())


def test_block_orders_follow_the_group():
    m = 7
    # the reversal of a chain: two blocks of about half the order
    assert sorted(ClusterSymmetry.from_kernel(output_kernel(chain(4))).orders(m)) == [14, 14]
    assert sorted(ClusterSymmetry.from_kernel(output_kernel(chain(5))).orders(m)) == [14, 21]
    # all relabelings: the trivial block once, the other one c - 1 times, both of order m
    symmetry = ClusterSymmetry.from_kernel(output_kernel(flat(6)))
    assert len(symmetry.blocks) == 2 and sorted(len(copies) for copies in symmetry.blocks) == [1, 5]
    assert symmetry.orders(m) == [m] * 6
    # the dihedral group of a ring: blocks of order m, the two-dimensional ones twice
    assert ClusterSymmetry.from_kernel(output_kernel(ring(6))).orders(m) == [m] * 6
    # a rotation alone has representations of complex type: they stay whole (order 2m), exact
    assert sorted(ClusterSymmetry(CYCLIC["cyclic3"], 3).orders(m)) == [m, 2 * m]


def test_no_symmetry_is_a_single_block():
    A = np.array([[3.0, 1.0, 0.2], [1.0, 2.0, 0.5], [0.2, 0.5, 1.0]])
    symmetry = ClusterSymmetry.from_kernel(A)
    assert symmetry.trivial and symmetry.orders(4) == [12]
    assert ClusterSymmetry([np.arange(4)], 4).trivial


def test_copies_are_orthonormal_and_span_everything():
    symmetry = ClusterSymmetry.from_kernel(output_kernel(tree([2, 2])))
    F = np.hstack([G for copies in symmetry.blocks for G in copies])
    np.testing.assert_allclose(F.T @ F, np.eye(F.shape[1]), atol=1e-12)
    assert F.shape == (4, 4)
