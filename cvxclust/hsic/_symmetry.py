r"""Symmetry reduction of the CLUHSIC SDP (5.23): the relabelings its output kernel admits
block-diagonalize the p.s.d. projection.

A permutation sigma of the clusters with ``A[sigma][:, sigma] = A`` maps the variable by
``Q -> (P kron I_m) Q (P kron I_m)^T`` (P its permutation matrix).  The map keeps the cost
``C = A kron K``, the constraints ``odiag(Q) = I`` and ``bdiag(Q) 1 = 1`` and both cones, so
every splitting step of the ADMM commutes with it; the ADMM starts from an invariant point, so
all its iterates are invariant under the group G the relabelings generate.  The invariant
matrices are ``Q = sum_O E_O kron Q_O`` over the orbitals O (orbits of G on the pairs of
clusters, ``E_O`` their 0/1 indicator matrices): their cluster-level part lies in the commutant
``Com(G)`` of the permutation matrices, a matrix *-algebra.  An orthogonal F of order c brings
``Com(G)`` to its block-diagonal form ``F^T B F = blockdiag_k(I_{d_k} kron M_k)`` (``M_k`` of order
``m_k``: the k-th irreducible representation of G appears ``m_k`` times, with dimension
``d_k``), so that ``(F kron I_m)^T Q (F kron I_m)`` has, for each k, ``d_k`` equal diagonal
blocks of order ``m_k m``.  The projection onto the p.s.d. cone then needs one
eigendecomposition of order ``m_k m`` per k instead of one of order ``m c``:

* ``chain(c)`` (the reversal): two blocks of orders ``m ceil(c / 2)`` and ``m floor(c / 2)``;
* ``ring(c)`` (the dihedral group): blocks of order m, those of the two-dimensional
  representations twice;
* ``flat(c)`` (all relabelings): two blocks of order m (one of them ``c - 1`` times).

F is computed numerically, after K. Murota, Y. Kanno, M. Kojima, S. Kojima, "A numerical algorithm
for block-diagonal decomposition of matrix *-algebras with application to semidefinite
programming", Japan Journal of Industrial and Applied Mathematics, 2010: the eigenvectors of a
random symmetric element of ``Com(G)`` split R^c into eigenspaces, a second random element links
them into the isotypic components, and maps the first eigenspace of a component onto the others
to align the ``d_k`` copies.  A third random element checks the result, which falls back to the
component as a single block (no equal copies) when the alignment fails, as it must for
irreducible representations that are not of real type.  See also K. Gatermann, P. A. Parrilo,
"Symmetry groups, semidefinite programs, and sums of squares", Journal of Pure and Applied
Algebra, 2004.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..linalg import PSDProjector
from ..structures import kernel_automorphisms

__all__ = ["ClusterSymmetry", "SymmetricPSDProjector"]

#: relative tolerance of the numerical decomposition (eigenvalue clusters, zero blocks, checks)
TOL = 1e-8


class ClusterSymmetry:
    """The block-diagonal form of the commutant of a group of cluster permutations.

    Parameters
    ----------
    permutations : sequence of (c,) int arrays
        Permutations of ``range(c)`` generating the group (any set: the group they generate is used).
    c : int
        Number of clusters.

    Attributes
    ----------
    blocks : list of list of (c, m_k) ndarray
        One entry per distinct block: its ``d_k`` copies, each the orthonormal columns of F
        spanning it.  Every invariant ``B`` satisfies
        ``B = sum_k sum_s G_s (G_0^T B G_0) G_s^T`` over the copies ``G_s`` of block k.
    """

    def __init__(self, permutations, c: int):
        self.c = c
        orbitals = _orbitals([np.asarray(p, dtype=int) for p in permutations], c)
        rng = np.random.default_rng(0)
        self.blocks = _decompose(orbitals, rng)
        if not _reproduces(self.blocks, _random_element(orbitals, rng, symmetric=False)):
            self.blocks = [[np.eye(c)]]

    @classmethod
    def from_kernel(cls, A: np.ndarray) -> ClusterSymmetry:
        """The symmetry of the output kernel ``A`` (its automorphisms, :func:`kernel_automorphisms`);
        none (a single block) when it has more than ``8!`` automorphisms without being ``a I + b (11^T - I)``."""
        try:
            permutations = kernel_automorphisms(A, generators=True)
        except ValueError:
            permutations = [np.arange(A.shape[0])]
        return cls(permutations, A.shape[0])

    @property
    def trivial(self) -> bool:
        """Whether there is nothing to gain: a single block of order c."""
        return len(self.blocks) == 1 and len(self.blocks[0]) == 1

    def orders(self, m: int) -> list[int]:
        """The orders ``m_k m`` of the blocks of a variable with m points per cluster, each listed
        as many times as it repeats."""
        return [copies[0].shape[1] * m for copies in self.blocks for _ in copies]


class SymmetricPSDProjector:
    """``Pi_psd(Q)`` for an mc x mc symmetric Q invariant under a :class:`ClusterSymmetry`
    (block (i, j) of Q = ``Q[i*m:(i+1)*m, j*m:(j+1)*m]``), by one projection per distinct block.

    Only the invariant part of Q is seen: for an invariant Q the result is exact; in general it
    is the projection of the block of the first copy, repeated.  With ``arrays``
    (:class:`cvxclust._array_api.Arrays`) Q is an array of that namespace on its device, where
    the congruences and projections run (the bases of the blocks are moved there once).
    """

    def __init__(self, symmetry: ClusterSymmetry, m: int, *, partial: bool = True, arrays=None):
        self.symmetry, self.m = symmetry, m
        self.projectors = [PSDProjector(copies[0].shape[1] * m, partial=partial) for copies in symmetry.blocks]
        self.xp = np if arrays is None or arrays.numpy else arrays.xp
        self.blocks = (symmetry.blocks if self.xp is np else
                       [[arrays.asarray(G) for G in copies] for copies in symmetry.blocks])

    def __call__(self, Q):
        c, m, xp = self.symmetry.c, self.m, self.xp
        out = xp.zeros_like(Q)
        for copies, project in zip(self.blocks, self.projectors):
            block = _congruence(copies[0], Q, c, m, xp)
            block = project((block + block.T) / 2)
            for G in copies:
                out += _expansion(G, block, c, m, xp)
        return out


def _congruence(G, Q, c: int, m: int, xp=np):
    """``(G kron I_m)^T Q (G kron I_m)`` for an mc x mc Q and a c x k G, by two products with G
    on the cluster indices (G kron I_m is never formed)."""
    k = G.shape[1]
    left = xp.permute_dims(xp.reshape(G.T @ xp.reshape(Q, (c, m * c * m)), (k * m, c, m)), (0, 2, 1))  # [(a, p), q, j]
    return xp.reshape(xp.permute_dims(xp.reshape(left @ G, (k * m, m, k)), (0, 2, 1)), (k * m, k * m))


def _expansion(G, B, c: int, m: int, xp=np):
    """``(G kron I_m) B (G kron I_m)^T`` for a km x km B."""
    k = G.shape[1]
    left = xp.permute_dims(xp.reshape(G @ xp.reshape(B, (k, m * k * m)), (c * m, k, m)), (0, 2, 1))  # [(i, p), q, b]
    return xp.reshape(xp.permute_dims(left @ G.T, (0, 2, 1)), (c * m, c * m))


def _orbitals(permutations: list[np.ndarray], c: int) -> list[np.ndarray]:
    """The 0/1 indicator matrices of the orbits of the group on the ordered pairs of clusters."""
    pairs = np.arange(c * c).reshape(c, c)
    rows = np.concatenate([pairs.ravel()] * len(permutations))
    cols = np.concatenate([pairs[np.ix_(p, p)].ravel() for p in permutations])
    graph = sp.coo_matrix((np.ones(rows.size), (rows, cols)), shape=(c * c, c * c))
    count, label = connected_components(graph, directed=False)
    return [(label == k).reshape(c, c).astype(float) for k in range(count)]


def _random_element(orbitals: list[np.ndarray], rng, symmetric: bool = True) -> np.ndarray:
    B = sum(rng.uniform(1.0, 2.0) * E for E in orbitals)
    return B + B.T if symmetric else B


def _decompose(orbitals: list[np.ndarray], rng) -> list[list[np.ndarray]]:
    """The blocks of :class:`ClusterSymmetry` (see the module docstring)."""
    B1 = _random_element(orbitals, rng)
    B2, B3 = (_random_element(orbitals, rng, symmetric=False) for _ in range(2))
    w, V = np.linalg.eigh(B1)
    scale = max(np.abs(w).max(), 1.0)
    cuts = np.flatnonzero(np.diff(w) > TOL * scale) + 1
    spaces = np.split(V, cuts, axis=1)  # the eigenspaces of B1
    # eigenspaces that B2 links (either way) belong to one isotypic component
    size = TOL * np.linalg.norm(B2)
    links = np.array([[np.linalg.norm(a.T @ B2 @ b) + np.linalg.norm(b.T @ B2 @ a) > size for b in spaces]
                      for a in spaces])
    count, label = connected_components(sp.csr_matrix(links), directed=False)
    blocks = []
    for k in range(count):
        members = [space for space, j in zip(spaces, label) if j == k]
        whole = [np.hstack(members)]
        copies = _align(members, B2)
        # B3 restricted to the component must be rebuilt from the copies, else keep it whole
        restricted = whole[0] @ (whole[0].T @ B3 @ whole[0]) @ whole[0].T
        blocks.append(copies if _reproduces([copies], restricted) else whole)
    return blocks


def _align(spaces: list[np.ndarray], B2: np.ndarray) -> list[np.ndarray]:
    """Candidate copies of one isotypic component from its eigenspaces (B1's eigenvalues repeat
    ``d`` times in it): the first eigenspace's basis carried to the others by B2, which maps it
    isometrically up to a scalar when the representation is of real type (checked by the caller)."""
    d = spaces[0].shape[1]
    first = spaces[0]
    bases = [first]
    for space in spaces[1:]:
        if space.shape[1] != d:
            return [np.hstack(spaces)]
        W = space @ (space.T @ (B2 @ first))
        alpha = np.linalg.norm(W) / np.sqrt(d)
        if alpha <= TOL * np.linalg.norm(B2):
            return [np.hstack(spaces)]
        bases.append(W / alpha)
    # copy s gathers column s of every basis
    return [np.column_stack([basis[:, s] for basis in bases]) for s in range(d)]


def _reproduces(blocks: list[list[np.ndarray]], B: np.ndarray) -> bool:
    """Whether ``B = sum_k sum_s G_s (G_0^T B G_0) G_s^T`` (the decomposition holds for B)."""
    rebuilt = np.zeros_like(B)
    for copies in blocks:
        core = copies[0].T @ B @ copies[0]
        for G in copies:
            rebuilt += G @ core @ G.T
    return bool(np.abs(rebuilt - B).max() <= TOL * max(np.abs(B).max(), 1.0) * B.shape[0])
