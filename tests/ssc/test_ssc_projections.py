"""The closed-form projections onto C1 against cvxpy projections solved by Clarabel:

* ``project_row_sums``: onto {F = F^T, F 1 = 1}  (C1 of the QP (6));
* ``FrobeniusPSD(K).projector(partial=...)``: onto {F >> 0, F 1 = 1}  (C1 of the SDP (7)),
  ``e e^T + (J Y J)_+``, including the partial-eigendecomposition path taken for n >= 100
  on repeated calls with nearby matrices.
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from cvxclust.ssc import FrobeniusDS, FrobeniusPSD, _relaxations
from cvxclust.ssc._relaxations import project_row_sums


def cvxpy_projection(Y: np.ndarray, *, psd: bool) -> np.ndarray:
    """argmin ||F - Y||_F^2 over symmetric F with F 1 = 1 (and F >> 0), by Clarabel."""
    n = Y.shape[0]
    F = cp.Variable((n, n), symmetric=True)
    constraints = [F @ np.ones(n) == np.ones(n)]
    if psd:
        constraints.append(F >> 0)
    problem = cp.Problem(cp.Minimize(cp.sum_squares(F - Y)), constraints)
    problem.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert problem.status == cp.OPTIMAL
    return F.value


def random_symmetric(n: int, seed: int, *, n_negative: int | None = None, gap: float = 0.1) -> np.ndarray:
    """Symmetric matrix with a prescribed number of negative eigenvalues, all |lambda| >= gap."""
    rng = np.random.default_rng(seed)
    if n_negative is None:
        A = rng.standard_normal((n, n))
        return (A + A.T) / 2
    V, _ = np.linalg.qr(rng.standard_normal((n, n)))
    w = rng.uniform(gap, 1.0, n)
    w[:n_negative] *= -1
    A = (V * w) @ V.T
    return (A + A.T) / 2


def small_symmetric_perturbation(n: int, seed: int, size: float) -> np.ndarray:
    """Symmetric E with spectral norm exactly ``size``."""
    E = random_symmetric(n, seed)
    return size * E / np.linalg.norm(E, 2)


class RecordingProjector(_relaxations.PSDProjector):
    """PSDProjector that remembers its instances, to read their call counters."""

    instances: list = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        RecordingProjector.instances.append(self)


@pytest.fixture
def recording(monkeypatch):
    RecordingProjector.instances = []
    monkeypatch.setattr(_relaxations, "PSDProjector", RecordingProjector)
    # exercise the partial path on matrices small enough for a cvxpy comparison
    monkeypatch.setattr(RecordingProjector, "min_partial_size", 100)
    return RecordingProjector.instances


def in_C1_psd(F: np.ndarray, atol: float = 1e-9):
    n = F.shape[0]
    np.testing.assert_allclose(F, F.T, atol=atol)
    np.testing.assert_allclose(F @ np.ones(n), np.ones(n), atol=atol)
    assert np.linalg.eigvalsh(F)[0] >= -atol


# -- {F = F^T, F 1 = 1} ----------------------------------------------------------------------


@pytest.mark.parametrize("n", [2, 7, 30, 100])
def test_project_row_sums_matches_cvxpy(n):
    Y = random_symmetric(n, seed=n) + 0.3
    F = project_row_sums(Y)
    np.testing.assert_allclose(F, cvxpy_projection(Y, psd=False), atol=1e-6, rtol=0)
    np.testing.assert_allclose(F.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(F, F.T, atol=1e-14)


def test_project_row_sums_is_an_orthogonal_projection():
    rng = np.random.default_rng(1)
    n = 25
    Y = random_symmetric(n, 3)
    F = project_row_sums(Y)
    np.testing.assert_allclose(project_row_sums(F), F, atol=1e-13)  # idempotent
    # Y - F is orthogonal to the subspace {S sym, S 1 = 0} of directions within the set
    for seed in range(5):
        S = project_row_sums(random_symmetric(n, 100 + seed)) - project_row_sums(np.zeros((n, n)))
        np.testing.assert_allclose(S.sum(axis=1), 0.0, atol=1e-12)
        assert abs(np.sum((Y - F) * S)) <= 1e-10 * np.linalg.norm(Y) * np.linalg.norm(S)
    # a doubly stochastic matrix is its own projection
    P = rng.permutation(n)
    D = 0.5 * np.eye(n) + 0.25 * (np.eye(n)[P] + np.eye(n)[P].T)
    np.testing.assert_allclose(project_row_sums(D), D, atol=1e-14)


def test_frobenius_ds_projector_is_project_row_sums():
    assert FrobeniusDS(np.eye(3)).projector(partial=True) is project_row_sums
    assert FrobeniusDS(np.eye(3)).projector(partial=False) is project_row_sums


# -- {F >> 0, F 1 = 1} -----------------------------------------------------------------------


@pytest.mark.parametrize("partial", [True, False])
@pytest.mark.parametrize("n", [3, 20, 45])
def test_psd_projector_matches_cvxpy_small(n, partial):
    Y = random_symmetric(n, seed=10 + n) + 1.0 / n
    project = FrobeniusPSD(np.eye(n)).projector(partial=partial)
    F = project(Y)
    in_C1_psd(F)
    np.testing.assert_allclose(F, cvxpy_projection(Y, psd=True), atol=1e-6, rtol=0)
    # idempotent on C1, and the projector does not depend on K
    np.testing.assert_allclose(project(F), F, atol=1e-10)
    other = FrobeniusPSD(np.full((n, n), 1.0 / n)).projector(partial=partial)
    np.testing.assert_allclose(other(Y), F, atol=1e-12)


def test_psd_projector_partial_path_matches_cvxpy_at_n100(recording):
    """A sequence of nearby matrices: the first call is a full eigendecomposition, the next
    ones compute only the few negative eigenpairs; each result equals the full projection
    and the last one equals Clarabel's."""
    n = 100
    relaxation = FrobeniusPSD(np.eye(n))
    project_partial = relaxation.projector(partial=True)
    project_full = relaxation.projector(partial=False)
    partial_psd, full_psd = recording
    assert partial_psd.partial and not full_psd.partial

    Y0 = random_symmetric(n, seed=5, n_negative=10) + 1.0 / n
    Ys = [Y0 + small_symmetric_perturbation(n, 50 + k, 0.02) for k in range(4)]
    for k, Y in enumerate(Ys):
        F = project_partial(Y)
        assert partial_psd.full_calls == 1 and partial_psd.partial_calls == k
        in_C1_psd(F)
        np.testing.assert_allclose(F, project_full(Y), atol=1e-10, rtol=0)
    assert full_psd.full_calls == len(Ys) and full_psd.partial_calls == 0
    np.testing.assert_allclose(F, cvxpy_projection(Ys[-1], psd=True), atol=1e-6, rtol=0)


@pytest.mark.parametrize("n_negative", [8, 112])
def test_psd_projector_partial_both_sides_of_the_spectrum(recording, n_negative):
    """Few negative eigenvalues (A_+ = A - A_-) and few positive ones (A_+ from the top)."""
    n = 120
    project = FrobeniusPSD(np.eye(n)).projector(partial=True)
    exact = FrobeniusPSD(np.eye(n)).projector(partial=False)
    counter = recording[0]
    Y = random_symmetric(n, seed=n_negative, n_negative=n_negative)
    for k in range(5):
        Yk = Y + small_symmetric_perturbation(n, k, 0.03)
        np.testing.assert_allclose(project(Yk), exact(Yk), atol=1e-10, rtol=0)
    assert counter.full_calls == 1 and counter.partial_calls == 4


def test_psd_projector_falls_back_when_the_split_moves(recording):
    """When the number of negative eigenvalues jumps past the margin the partial block does
    not reach zero; the projector must detect it and use the full decomposition."""
    n = 120
    project = FrobeniusPSD(np.eye(n)).projector(partial=True)
    exact = FrobeniusPSD(np.eye(n)).projector(partial=False)
    counter = recording[0]
    Y_few = random_symmetric(n, seed=1, n_negative=5)
    Y_more = random_symmetric(n, seed=2, n_negative=15)  # > 5 + margin 8
    for Y in (Y_few, Y_more, Y_more + small_symmetric_perturbation(n, 3, 0.01)):
        np.testing.assert_allclose(project(Y), exact(Y), atol=1e-10, rtol=0)
    assert counter.full_calls == 2 and counter.partial_calls == 1


def test_psd_projector_never_partial_below_n100(recording):
    n = 60
    project = FrobeniusPSD(np.eye(n)).projector(partial=True)
    Y = random_symmetric(n, seed=0, n_negative=3)
    for k in range(3):
        project(Y + small_symmetric_perturbation(n, k, 0.01))
    assert recording[0].partial_calls == 0 and recording[0].full_calls == 3


def test_psd_projector_keeps_points_of_C1():
    n = 110
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.standard_normal((n, n)))[0]
    e = np.full(n, 1 / np.sqrt(n))
    B = V - np.outer(e, e @ V)  # columns in e-perp
    G = B[:, :7] @ np.diag(rng.uniform(0, 1, 7)) @ B[:, :7].T
    F = np.outer(e, e) + G  # p.s.d., F e = e
    project = FrobeniusPSD(np.eye(n)).projector(partial=True)
    for _ in range(3):
        np.testing.assert_allclose(project(F), F, atol=1e-10)
