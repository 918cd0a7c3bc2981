"""Structured image sets cut from scikit-image photographs (cvxclust._image_sets)."""

import numpy as np
import pytest
from skimage import data as skdata
from sklearn.cluster import KMeans, SpectralClustering

from cvxclust._image_sets import (
    OBJECTS,
    PIXEL_NOISE,
    POSE_OBJECTS,
    _disc,
    objects_by_pose,
    rotating_object,
)
from cvxclust.kernels import rbf
from cvxclust.metrics import accuracy, nmi

SIZE = 32


@pytest.fixture(scope="module")
def chain():
    return rotating_object("chain")


@pytest.fixture(scope="module")
def ring():
    return rotating_object("ring")


@pytest.fixture(scope="module")
def poses():
    return objects_by_pose()


def cluster_means(X, y):
    return np.array([X[y == k].mean(axis=0) for k in np.unique(y)])


def mean_distances(X, y):
    """Euclidean distances between the cluster means."""
    M = cluster_means(X, y)
    return np.linalg.norm(M[:, None, :] - M[None, :, :], axis=2)


def spectral_labels(X, n_clusters):
    K = rbf(X)  # median heuristic width
    return SpectralClustering(n_clusters, affinity="precomputed", random_state=0).fit_predict(K)


def check_images(X, n):
    assert X.shape == (n, SIZE * SIZE) and X.dtype == np.float64
    assert np.all(np.isfinite(X)) and X.min() >= 0.0 and X.max() <= 1.0
    outside = ~_disc(SIZE).ravel()
    assert np.all(X[:, outside] == 0.0), "circular mask: nothing outside the disc"
    assert X[:, ~outside].std() > 0.05, "the disc holds an image, not a constant"


# --- shapes, labels, angles -------------------------------------------------------------------


def test_chain_layout(chain):
    X, y, angles = chain
    check_images(X, 100)
    np.testing.assert_array_equal(y, np.repeat(np.arange(5), 20))
    assert np.issubdtype(y.dtype, np.integer)
    # 125 angles evenly over 1..180, the last 5 of every 25 dropped
    grid = np.linspace(1, 180, 125)
    np.testing.assert_allclose(angles, grid[np.arange(125) % 25 < 20])
    assert angles[0] == 1.0 and angles[-1] < 180
    step = np.diff(angles)
    within, between = step[np.diff(y) == 0], step[np.diff(y) != 0]
    np.testing.assert_allclose(within, 179 / 124)
    np.testing.assert_allclose(between, 6 * 179 / 124)  # gaps: 5 dropped angles between clusters


def test_ring_layout(ring):
    X, y, angles = ring
    check_images(X, 350)
    np.testing.assert_array_equal(np.bincount(y), [35] * 10)
    np.testing.assert_array_equal(y, np.repeat(np.arange(10), 35))
    grid = np.linspace(1, 360, 400)
    np.testing.assert_allclose(angles, grid[np.arange(400) % 40 < 35])
    # the wrap-around gap (last angle of cluster 9 -> 360 + first angle of cluster 0) equals the
    # gaps between neighbours: the ring has no seam
    step = 359 / 399
    wrap = 360 + angles[0] - angles[-1]
    np.testing.assert_allclose(np.diff(angles)[np.diff(y) != 0], 6 * step)
    assert abs(wrap - 6 * step) < 0.5 * step


def test_objects_by_pose_layout(poses):
    X, y, objects, angles = poses
    check_images(X, 96)
    np.testing.assert_array_equal(objects, np.repeat(np.arange(4), 24))
    np.testing.assert_array_equal(np.bincount(y), [8] * 12)
    pose_cluster = np.tile(np.repeat(np.arange(3), 8), 4)
    np.testing.assert_array_equal(y, objects * 3 + pose_cluster)  # I_4 kron chain_3, object major
    # the same 24 poses for every object: 36 angles over 1..180, 8 kept of every 12
    per_object = angles.reshape(4, 24)
    assert np.all(per_object == per_object[0])
    grid = np.linspace(1, 180, 36)
    np.testing.assert_allclose(per_object[0], grid[np.arange(36) % 12 < 8])


def test_objects_by_pose_other_shapes():
    X, y, objects, angles = objects_by_pose(n_objects=2, n_poses=12, n_pose_clusters=4, size=16)
    assert X.shape == (24, 256) and X.min() >= 0 and X.max() <= 1
    np.testing.assert_array_equal(np.bincount(y), [3] * 8)
    np.testing.assert_array_equal(y, objects * 4 + np.tile(np.repeat(np.arange(4), 3), 2))
    # 4 clusters of 3 poses with gaps of max(1, 3 // 2) = 1 pose
    grid = np.linspace(1, 180, 16)
    np.testing.assert_allclose(angles[:12], grid[np.arange(16) % 4 < 3])


def test_size_parameter():
    X = rotating_object("chain", size=16)[0]
    assert X.shape == (100, 256)


# --- determinism and noise --------------------------------------------------------------------


def test_deterministic_without_noise(chain, poses):
    X, y, angles = rotating_object("chain")
    np.testing.assert_array_equal(X, chain[0])
    np.testing.assert_array_equal(y, chain[1])
    np.testing.assert_array_equal(angles, chain[2])
    again = objects_by_pose()
    for a, b in zip(again, poses):
        np.testing.assert_array_equal(a, b)


def test_seeded_noise(chain):
    X_clean = chain[0]
    X1 = rotating_object("chain", random_state=0)[0]
    X2 = rotating_object("chain", random_state=0)[0]
    X3 = rotating_object("chain", random_state=np.random.default_rng(0))[0]
    X4 = rotating_object("chain", random_state=1)[0]
    np.testing.assert_array_equal(X1, X2)
    assert not np.array_equal(X1, X4)
    disc = _disc(SIZE).ravel()
    for Xn in (X1, X3, X4):
        assert Xn.min() >= 0 and Xn.max() <= 1
        assert np.all(Xn[:, ~disc] == 0)
        diff = (Xn - X_clean)[:, disc]
        # small Gaussian noise (clipping at 0 and 1 only shrinks it)
        assert 0.7 * PIXEL_NOISE < diff.std() < 1.05 * PIXEL_NOISE
        assert abs(diff.mean()) < 0.2 * PIXEL_NOISE
    Xp1 = objects_by_pose(random_state=3)[0]
    Xp2 = objects_by_pose(random_state=3)[0]
    np.testing.assert_array_equal(Xp1, Xp2)


# --- structure --------------------------------------------------------------------------------


def test_chain_ends_dissimilar(chain):
    X, y, _ = chain
    D = mean_distances(X, y)
    neighbours = np.diag(D, 1)
    # the distance from cluster 0 grows along the chain, and the ends are far apart: the object
    # has no half-turn symmetry that would bend the 1..180 chain into a ring
    assert np.all(np.diff(D[0]) > 0)
    assert D[0, 4] > 1.5 * neighbours.max()


def test_ring_wraps(ring):
    X, y, _ = ring
    D = mean_distances(X, y)
    neighbours = np.array([D[k, (k + 1) % 10] for k in range(10)])
    # cluster 9 is as close to cluster 0 as any two neighbours are
    assert D[9, 0] < 1.1 * np.median(neighbours)
    assert D[9, 0] < 0.6 * D[0, 5]
    # distances between cluster means depend on the distance around the ring, increasing up to
    # the opposite cluster: a ring, not a chain (and no symmetry folding it)
    offset = np.abs(np.subtract.outer(np.arange(10), np.arange(10)))
    ring_distance = np.minimum(offset, 10 - offset)
    by_ring_distance = [D[ring_distance == r] for r in range(1, 6)]
    means = np.array([d.mean() for d in by_ring_distance])
    assert np.all(np.diff(means) > 0)
    assert all(d.max() < 1.05 * d.min() for d in by_ring_distance)


def test_pose_clusters_form_a_chain_for_every_object(poses):
    X, y, objects, _ = poses
    for obj in range(4):
        rows = objects == obj
        D = mean_distances(X[rows], y[rows])
        # observed ratios D[0, 2] / max(D[0, 1], D[1, 2]): retina 1.44, coin 1.20, gland 1.29,
        # rocket 1.40 -- the ends of each half turn differ, as a chain needs
        assert D[0, 2] > 1.15 * max(D[0, 1], D[1, 2]), POSE_OBJECTS[obj]


# --- clusterability (observed: every figure below is 1.0 at the defaults) -----------------------


@pytest.mark.parametrize("kind, n_clusters", [("chain", 5), ("ring", 10)])
def test_spectral_clustering_recovers_angle_clusters(kind, n_clusters):
    X, y, _ = rotating_object(kind, random_state=0)  # with pixel noise
    labels = spectral_labels(X, n_clusters)
    assert nmi(y, labels) > 0.8  # observed 1.0
    assert accuracy(y, labels) > 0.8  # observed 1.0


def test_objects_distinguishable(poses):
    X, y, objects, _ = poses
    labels = KMeans(4, n_init=10, random_state=0).fit_predict(X)
    assert nmi(objects, labels) > 0.9  # observed 1.0
    labels = spectral_labels(X, 12)
    assert nmi(y, labels) > 0.8  # observed 1.0 (all 12 object x pose clusters)


# --- inputs -----------------------------------------------------------------------------------


def test_crops_lie_inside_their_photographs():
    for name, (loader, (row, col), radius) in OBJECTS.items():
        h, w = getattr(skdata, loader)().shape[:2]
        assert 0 <= row - radius and row + radius <= h, name
        assert 0 <= col - radius and col + radius <= w, name
    assert set(POSE_OBJECTS) <= set(OBJECTS) and len(set(POSE_OBJECTS)) == len(POSE_OBJECTS)
    assert len({OBJECTS[name][0] for name in POSE_OBJECTS}) == 4, "four different photographs"


@pytest.mark.parametrize("image", sorted(OBJECTS))
def test_every_object_renders(image):
    X = rotating_object("chain", image=image, size=16)[0]
    assert X.shape == (100, 256) and X.min() >= 0 and X.max() <= 1
    assert X.std(axis=0).max() > 0.05, "rotation changes the image"


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: rotating_object("line"), "kind"),
        (lambda: rotating_object(image="teapot"), "image"),
        (lambda: rotating_object(size=4), "size"),
        (lambda: rotating_object(size=32.0), "size"),
        (lambda: rotating_object(random_state="seed"), "random_state"),
        (lambda: objects_by_pose(n_objects=0), "n_objects"),
        (lambda: objects_by_pose(n_objects=len(POSE_OBJECTS) + 1), "n_objects"),
        (lambda: objects_by_pose(n_poses=25), "n_poses"),
        (lambda: objects_by_pose(n_poses=2, n_pose_clusters=3), "n_poses"),
        (lambda: objects_by_pose(n_pose_clusters=0), "n_pose_clusters"),
        (lambda: objects_by_pose(n_pose_clusters=30), "n_pose_clusters must be at most n_poses=24, got 30"),
        (lambda: objects_by_pose(size=1000), "size"),
        (lambda: objects_by_pose(random_state=1.5), "random_state"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_objects_by_pose_n_poses_upper_bound():
    """X holds at most 2**28 floats: n_poses = 3 * 10**9 was a MemoryError."""
    with pytest.raises(ValueError, match=r"n_poses must be at most 65536 here.*2\*\*28 floats"):
        objects_by_pose(n_poses=3 * 10**9)
    with pytest.raises(ValueError, match=r"n_poses must be at most 256 here"):
        objects_by_pose(n_poses=258, size=512)
