r"""Structured image sets: objects cut out of scikit-image photographs, rotated in the plane.

The CLUHSIC experiments (Yang, Kwok & Lu, Section 6.1.1) cluster images whose clusters have an
output *structure*: the teapot data of Song et al. (a teapot on a turntable, 100 images from 1 to
180 degrees in 5 well-separated clusters of 20 along a **chain**) and COIL-100 (objects 14, 36,
48 and 74, each with 24 poses from 1 to 180 degrees in 3 well-separated pose clusters: a tree of
4 objects over chains of 3, output kernel :math:`I_4 \otimes A_{\text{chain},3}`).  The CLUHSICAL
paper (Zhong, Pan, Kwok & Tsang, Section IV-B) adds a **ring**: 400 images of a rotating object over 1 to 360
degrees, 5 removed from every 40 to leave 10 well-separated clusters of 35 (Table IV).

Those image collections do not ship offline.  *Substitution*: these generators cut objects out of
real photographs that ship with scikit-image (``skimage.data``, no network) and rotate them **in
the image plane** with :func:`skimage.transform.rotate`, instead of the out-of-plane turntable
rotation of the teapot and COIL.  The structure is the same: images close in angle are close in
pixel space, angular gaps separate the clusters, and a full turn closes the ring.

Each object goes through one fixed pipeline (:func:`_object_template`): grayscale in [0, 1];
a square crop around the object; anti-aliased downscaling to ``2 * size`` pixels; a circular mask
(outside the inscribed disc is 0), so that a rotation never brings the crop's corners into view.
Every pose is that template rotated by its angle (bilinear), averaged down 2 x 2 to
``size x size`` and masked again.  The rotation of the disc is exact up to interpolation, so the
only change from pose to pose is the angle.

Everything is generated at call time and nothing is cached on disk; the slowest step is the
decoding of the 1411 x 1411 retina photograph that :func:`objects_by_pose` starts from.

References
----------
W.-Y. Yang, J. T. Kwok, B.-L. Lu, "Spectral and Semidefinite Relaxations of the CLUHSIC
Algorithm", SIAM International Conference on Data Mining (SDM), 2010.

W. Zhong, W. Pan, J. T. Kwok, I. W. Tsang, "Incorporating the Loss Function into
Discriminative Clustering of Structured Outputs", IEEE Transactions on Neural Networks, 2010.
"""

from __future__ import annotations

import numpy as np
from skimage import data as _skdata
from skimage.color import rgb2gray
from skimage.transform import downscale_local_mean, resize, rotate

from ._checks import check_choice, check_data_size, check_int_range, check_random_state

__all__ = ["OBJECTS", "PIXEL_NOISE", "POSE_OBJECTS", "objects_by_pose", "rotating_object"]

#: Objects that can be cut out of a ``skimage.data`` photograph: name -> (loader name,
#: (row, column) of the crop centre, crop radius), in the photograph's pixels.  Each crop holds
#: an object without rotational symmetry; the tests check that the ends of a half-turn chain
#: differ for the default of :func:`rotating_object` and for every object of :data:`POSE_OBJECTS`.
OBJECTS = {
    # espresso cup on its saucer: the handle (lower left) and the spoon (right) break every
    # rotational symmetry, so a chain over 1-180 degrees has dissimilar ends and 360 closes a ring
    "coffee": ("coffee", (190, 300), 170),
    # the cat's face: two eyes above a nose, bright fur below
    "chelsea": ("chelsea", (150, 230), 145),
    # the astronaut's face inside her helmet ring and the top of her suit
    "astronaut": ("astronaut", (165, 215), 135),
    # the cameraman's head, hand and camera against the sky
    "camera": ("camera", (175, 235), 130),
    # the rocket right of centre and one launch tower on the left: off-centre so that the crop
    # is not symmetric under a half turn (the rocket alone, a vertical bar, nearly is)
    "rocket": ("rocket", (230, 250), 150),
    # the whole fundus of an eye: a bright disc, the optic disc on the left, dark vessels
    "retina": ("retina", (705, 705), 705),
    # one coin (the large one on the right of the third row) on the dark tray
    "coin": ("coins", (186, 347), 36),
    # one round gland in a tissue section stained for immunohistochemistry
    "gland": ("immunohistochemistry", (367, 316), 100),
}

#: The objects of :func:`objects_by_pose`, in order (object ``i`` is ``POSE_OBJECTS[i]``): four
#: photographs whose crops differ in what a rotation leaves unchanged (overall brightness, radial
#: profile, texture), so that, as with COIL's four objects, images of one object over half a turn
#: are closer to each other than to any other object.  Portraits such as ``chelsea``,
#: ``astronaut`` and ``camera`` do not qualify: at 32 x 32 a half turn moves their images about as
#: far as a change of photograph does (k-means with 4 clusters on the cup, cat, astronaut and
#: cameraman recovers the objects with NMI 0.59 only).
POSE_OBJECTS = ("retina", "coin", "gland", "rocket")

#: Standard deviation of the Gaussian pixel noise added inside the disc when ``random_state`` is
#: given (pixel values are in [0, 1]; the result is clipped back to [0, 1]).
PIXEL_NOISE = 0.02

# Oversampling of the rotation: rotate at 2 * size, then average 2 x 2 blocks, so that the
# bilinear interpolation does not blur the size x size result.
_OVERSAMPLE = 2


def _load_gray(loader: str) -> np.ndarray:
    """The ``skimage.data.<loader>()`` photograph as a float grayscale array in [0, 1]."""
    image = np.asarray(getattr(_skdata, loader)())
    if image.ndim == 3:
        image = rgb2gray(image[..., :3])  # drops an alpha channel; rgb2gray maps uint8 to [0, 1]
    elif image.dtype == np.uint8:
        image = image / 255.0
    return np.clip(np.asarray(image, dtype=float), 0.0, 1.0)


def _disc(size: int) -> np.ndarray:
    """Boolean mask of the pixels of a ``size x size`` grid whose centres lie in the inscribed
    disc (centre ``((size - 1) / 2, (size - 1) / 2)``, radius ``size / 2``)."""
    r = np.arange(size) - (size - 1) / 2
    return r[:, None] ** 2 + r[None, :] ** 2 <= (size / 2) ** 2


def _object_template(name: str, size: int) -> np.ndarray:
    """Grayscale, cropped, downscaled (to ``_OVERSAMPLE * size``) and disc-masked object."""
    loader, (row, col), radius = OBJECTS[name]
    image = _load_gray(loader)
    crop = image[row - radius : row + radius, col - radius : col + radius]
    side = _OVERSAMPLE * size
    template = resize(crop, (side, side), order=1, anti_aliasing=True, mode="edge")
    return np.where(_disc(side), np.clip(template, 0.0, 1.0), 0.0)


def _render(template: np.ndarray, angles: np.ndarray, size: int, rng) -> np.ndarray:
    """Rows ``vec(rotate(template, a))`` for each angle ``a`` (degrees, counter-clockwise),
    averaged down to ``size x size``, masked, with optional pixel noise; shape ``(n, size**2)``."""
    disc = _disc(size)
    X = np.empty((len(angles), size * size))
    for i, angle in enumerate(angles):
        # rotate about the centre; the template is 0 outside its disc, so cval=0 adds nothing new
        turned = rotate(template, float(angle), order=1, mode="constant", cval=0.0)
        small = downscale_local_mean(turned, (_OVERSAMPLE, _OVERSAMPLE))
        X[i] = np.where(disc, small, 0.0).ravel()
    if rng is not None:
        noise = rng.normal(0.0, PIXEL_NOISE, size=X.shape)
        X = np.where(disc.ravel(), np.clip(X + noise, 0.0, 1.0), 0.0)
    return np.clip(X, 0.0, 1.0)


def _noise_rng(random_state):
    """``None`` -> no noise; a ``np.random.Generator`` is used as is; anything else goes through
    :func:`cvxclust._checks.check_random_state` (int seed or ``RandomState``)."""
    if random_state is None or isinstance(random_state, np.random.Generator):
        return random_state
    return check_random_state(random_state)


def _clustered_angles(
    n_clusters: int, per_cluster: int, gap: int, start: float, stop: float
) -> tuple[np.ndarray, np.ndarray]:
    """Angles in well-separated runs: ``n_clusters * (per_cluster + gap)`` angles evenly spaced
    over ``[start, stop]`` (both included), of which each block of ``per_cluster + gap``
    consecutive ones keeps its first ``per_cluster``.  The dropped ``gap`` angles separate
    neighbouring clusters; on a ring the last block's gap also separates the last
    cluster from the first, across ``stop`` -> ``start`` (the same grid serves chains and rings).
    Returns ``(angles, labels)``."""
    block = per_cluster + gap
    grid = np.linspace(start, stop, n_clusters * block)
    keep = (np.arange(grid.size) % block) < per_cluster
    labels = np.repeat(np.arange(n_clusters), per_cluster)
    return grid[keep], labels


def _check_size(size) -> int:
    return check_int_range(size, "size", 8, 512)


def rotating_object(kind: str = "chain", *, image: str = "coffee", size: int = 32, random_state=None):
    r"""Images of one object rotating in the plane, in clusters along a chain or around a ring.

    Substitute for the teapot data of Yang, Kwok & Lu, Section 6.1.1 (chain of 5 clusters; the
    tridiagonal output kernel :math:`A` with 2 on the diagonal and 1 beside it, Section 2 and
    Figure 1(a), used in the objective :math:`\operatorname{tr}(K \Pi A \Pi^T)` of (2.3)) and for
    the ring subset of the teapot data in the CLUHSICAL paper (Zhong et al., Section IV-B,
    Table IV; ring output kernel of Fig. 2(b), which also links the last cluster to the first).
    The teapot photographs do not ship offline: the object is cut from a ``skimage.data``
    photograph (default: the espresso cup of ``skimage.data.coffee``, whose handle and spoon make
    it free of any rotational symmetry) and rotated in the image plane (see the module docstring
    for the pipeline).

    * ``"chain"``: 125 angles evenly spaced over 1..180 degrees (step 179/124 = 1.44 degrees);
      of every 25 consecutive angles the first 20 are kept and the last 5 dropped, leaving
      100 images in **5 clusters of 20** separated by gaps of 6 steps (8.7 degrees).  Cluster 0
      spans 1..28.4 degrees and cluster 4 spans 145.4..172.8 degrees; as the object has no
      180-degree symmetry the two ends of the chain look different.
    * ``"ring"``: 400 angles evenly spaced over 1..360 degrees (step 0.9 degrees); of every 40
      the first 35 are kept, leaving 350 images in **10 clusters of 35** -- the paper's
      "5 images are removed from every 40" (it does not say which 5; here the last 5).
      360 degrees is 0 degrees, so the gap after cluster 9 (ending at 355.5 degrees) leads back
      to cluster 0 (starting at 1 degree): a ring.

    Parameters
    ----------
    kind : {"chain", "ring"}
        Structure of the clusters.
    image : str
        Key of :data:`OBJECTS`: ``"coffee"`` (default), ``"chelsea"``, ``"astronaut"``,
        ``"camera"``, ``"rocket"``, ``"retina"``, ``"coin"`` or ``"gland"``.  The default is
        the one tested to give a chain with clearly dissimilar ends and a clean ring; the cat's
        face, for one, changes little between the two ends of a half turn.
    size : int, default 32
        Images are ``size x size`` pixels (8 to 512).
    random_state : None, int, RandomState or Generator
        ``None`` (default): no noise, the output is fully deterministic.  Otherwise Gaussian pixel
        noise of standard deviation :data:`PIXEL_NOISE` is added inside the disc (then clipped to
        [0, 1]), drawn from this seed.

    Returns
    -------
    X : ndarray of shape (n, size * size), float
        One image per row (row-major ``vec``), values in [0, 1], 0 outside the disc; rows ordered
        by angle.  ``n = 100`` (chain) or ``350`` (ring).
    y : ndarray of shape (n,), int
        Cluster index along the chain (0..4) or around the ring (0..9), nondecreasing.
    angles : ndarray of shape (n,), float
        Rotation angle of each image in degrees (counter-clockwise).

    Raises
    ------
    ValueError
        For an unknown ``kind`` or ``image``, ``size`` out of range or a bad ``random_state``.
    """
    check_choice(kind, "kind", ("chain", "ring"))
    check_choice(image, "image", OBJECTS)
    size = _check_size(size)
    rng = _noise_rng(random_state)
    if kind == "chain":
        angles, y = _clustered_angles(5, 20, 5, 1.0, 180.0)
    else:
        angles, y = _clustered_angles(10, 35, 5, 1.0, 360.0)
    X = _render(_object_template(image, size), angles, size, rng)
    return X, y.astype(np.intp), angles


def objects_by_pose(
    *, n_objects: int = 4, n_poses: int = 24, n_pose_clusters: int = 3, size: int = 32, random_state=None
):
    r"""Several objects, each in several poses grouped into pose clusters: a tree over chains.

    Substitute for the COIL-100 data of Yang, Kwok & Lu, Section 6.1.1 (objects 14, 36, 48, 74;
    24 poses each from 1 to 180 degrees in 3 well-separated clusters; output kernel
    :math:`I_4 \otimes A_{\text{chain},3}`, Fig. 2(c)).  COIL does not ship offline: object ``i``
    is cut from the photograph of :data:`POSE_OBJECTS`\ ``[i]``: the fundus of an eye
    (``skimage.data.retina``), a coin (``coins``), a gland in a stained tissue section
    (``immunohistochemistry``) and the rocket with a launch tower (``rocket``), four objects that
    differ in brightness, radial profile and texture as COIL's do; a *pose* is an in-plane rotation
    rather than COIL's turntable rotation.

    Poses: with ``p = n_poses / n_pose_clusters`` poses per cluster and gaps of ``g = max(1, p // 2)``
    poses, ``n_pose_clusters * (p + g)`` angles are spaced evenly over 1..180 degrees and each
    block of ``p + g`` keeps its first ``p``.  The default 3 x (8 + 4) = 36 angles are 5.1 degrees
    apart, close to COIL's 5-degree turntable step, and clusters of 8 poses (36 degrees) are
    separated by gaps of 5 steps (25.6 degrees).

    Parameters
    ----------
    n_objects : int, default 4
        Number of objects, 1 to ``len(POSE_OBJECTS)`` (the first ``n_objects`` are used).
    n_poses : int, default 24
        Poses per object; a multiple of ``n_pose_clusters``, and at most
        ``2**28 / (n_objects * size**2)``: ``X`` holds at most ``2**28`` floats (2 GiB).
    n_pose_clusters : int, default 3
        Pose clusters per object (at least 1, at most ``n_poses``).
    size : int, default 32
        Images are ``size x size`` pixels (8 to 512).
    random_state : None, int, RandomState or Generator
        ``None`` (default): no noise, fully deterministic.  Otherwise Gaussian pixel noise of
        standard deviation :data:`PIXEL_NOISE` inside the disc, drawn from this seed.

    Returns
    -------
    X : ndarray of shape (n_objects * n_poses, size * size), float
        One image per row, values in [0, 1]; rows ordered by object, then by angle.
    y : ndarray of shape (n_objects * n_poses,), int
        ``object * n_pose_clusters + pose_cluster``: the Kronecker order of
        :math:`I_{n_\text{objects}} \otimes A_{\text{chain}}` (object major), nondecreasing.
    objects : ndarray of shape (n_objects * n_poses,), int
        Object index of each image (into :data:`POSE_OBJECTS`).
    angles : ndarray of shape (n_objects * n_poses,), float
        Rotation angle of each image in degrees.

    Raises
    ------
    ValueError
        If an argument is out of range (``n_poses`` too large for ``X`` to hold included),
        ``n_poses`` is not a multiple of ``n_pose_clusters``, or ``random_state`` is not a
        valid seed.
    """
    n_objects = check_int_range(n_objects, "n_objects", 1, len(POSE_OBJECTS))
    n_pose_clusters = check_int_range(n_pose_clusters, "n_pose_clusters", 1)
    n_poses = check_int_range(n_poses, "n_poses", 1)
    if n_pose_clusters > n_poses:  # either may be the one the caller passed: the message names both
        raise ValueError(f"n_pose_clusters must be at most n_poses={n_poses}, got {n_pose_clusters} "
                         f"(each pose cluster holds at least one pose)")
    if n_poses % n_pose_clusters:
        raise ValueError(f"n_poses must be a multiple of n_pose_clusters={n_pose_clusters}, got {n_poses}")
    size = _check_size(size)
    check_data_size(n_poses, "n_poses", n_objects * size * size)
    rng = _noise_rng(random_state)
    per_cluster = n_poses // n_pose_clusters
    pose_angles, pose_cluster = _clustered_angles(
        n_pose_clusters, per_cluster, max(1, per_cluster // 2), 1.0, 180.0
    )
    # one noise stream for all objects, drawn in row order, so a seed fixes the whole set
    X = np.vstack(
        [_render(_object_template(name, size), pose_angles, size, rng) for name in POSE_OBJECTS[:n_objects]]
    )
    objects = np.repeat(np.arange(n_objects), n_poses).astype(np.intp)
    y = (objects * n_pose_clusters + np.tile(pose_cluster, n_objects)).astype(np.intp)
    return X, y, objects, np.tile(pose_angles, n_objects)
