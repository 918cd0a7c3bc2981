"""Real data sets bundled with scikit-learn (no network), with deterministic stratified subsets,
image sets with a known cluster structure, and Gaussian blobs laid out along a structure.

``load_dataset(name, n_samples)`` returns ``(X, y)`` sorted by class label, so that affinity
matrices of the result show the clusters as diagonal blocks.
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn import datasets as _skdatasets

from ._checks import check_choice, check_random_state
from ._image_sets import objects_by_pose, rotating_object
from ._structured_blobs import structure_layout, structured_blobs

__all__ = ["load_dataset", "DATASETS", "DIGIT_SHIFTS", "rotating_object", "objects_by_pose", "structure_layout",
           "structured_blobs"]

#: Names accepted by :func:`load_dataset`, with the scikit-learn loader of each.
DATASETS = {
    "iris": _skdatasets.load_iris,
    "wine": _skdatasets.load_wine,
    "digits": _skdatasets.load_digits,
    "breast_cancer": _skdatasets.load_breast_cancer,
}

#: The one-pixel shifts (rows, columns) that augment ``digits``, in the order they are used:
#: right, left, down, up.
DIGIT_SHIFTS = ((0, 1), (0, -1), (1, 0), (-1, 0))


def _shift_images(images: np.ndarray, shift: tuple[int, int]) -> np.ndarray:
    """Translate a stack of images by ``shift = (rows, columns)`` pixels, filling with 0
    (the background of ``digits``)."""
    out = np.zeros_like(images)
    h, w = images.shape[1:]
    dr, dc = shift
    out[:, max(dr, 0) : h + min(dr, 0), max(dc, 0) : w + min(dc, 0)] = images[
        :, max(-dr, 0) : h + min(-dr, 0), max(-dc, 0) : w + min(-dc, 0)
    ]
    return out


def _stratified_indices(y: np.ndarray, n: int, rng: np.random.RandomState) -> np.ndarray:
    """``n`` indices of ``y`` drawn without replacement, each class getting its proportional
    share (largest remainders break the rounding, ties at random)."""
    classes, counts = np.unique(y, return_counts=True)
    quota = counts * n / counts.sum()
    take = np.floor(quota).astype(int)
    remainder = quota - take
    order = np.lexsort((rng.permutation(len(classes)), -remainder))
    take[order[: n - take.sum()]] += 1
    chosen = [rng.choice(np.flatnonzero(y == c), size=t, replace=False) for c, t in zip(classes, take)]
    return np.concatenate(chosen)


def load_dataset(name: str, n_samples: int | None = None, *, random_state=0) -> tuple[np.ndarray, np.ndarray]:
    """Load a real data set bundled with scikit-learn, optionally a stratified subset.

    Parameters
    ----------
    name : {"iris", "wine", "digits", "breast_cancer"}
        The ``sklearn.datasets.load_<name>`` data set (150, 178, 1797 and 569 samples).
    n_samples : int, optional
        ``None`` (default): every sample.  Otherwise a subset of this size (at least 2) in which
        each class keeps its proportion of the full set up to rounding (largest remainders); the
        samples within each class are drawn at random with ``random_state``.

        ``"digits"`` may be *augmented* beyond its 1797 samples, up to ``5 * 1797 = 8985``:
        after all the original 8x8 images come copies of every image shifted by one pixel, to the
        right, then to the left, then down, then up (vacated pixels are 0, the background); the
        last, partially used block of copies is itself a stratified subset.  For example
        ``n_samples=2000`` gives all 1797 originals and 203 right-shifted copies.
    random_state : int, RandomState instance or None
        Seeds the subset; the default 0 makes repeated calls return the same data.

    Returns
    -------
    X : ndarray of shape (n_samples, n_features), float
        Features, rows sorted by class label (stably: originals before shifted copies, and in
        their original order within a block).
    y : ndarray of shape (n_samples,), int
        Class labels, nondecreasing.

    Raises
    ------
    ValueError
        For an unknown ``name``, ``n_samples`` below 2 or above what the data set provides, or a
        ``random_state`` that is not a seed (a bool is not).
    """
    check_choice(name, "dataset name", DATASETS)
    bunch = DATASETS[name]()
    X = np.asarray(bunch.data, dtype=float)
    y = np.asarray(bunch.target, dtype=np.intp)
    n_total = X.shape[0]
    n_max = n_total * (1 + len(DIGIT_SHIFTS)) if name == "digits" else n_total
    if n_samples is None:
        n_samples = n_total
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral):
        raise ValueError(f"n_samples must be an integer or None, got {n_samples!r}")
    if not 2 <= n_samples <= n_max:
        raise ValueError(f"n_samples must be between 2 and {n_max} for {name!r}, got {n_samples}")
    rng = check_random_state(random_state)

    blocks_X, blocks_y = [], []
    remaining = int(n_samples)
    images = np.asarray(bunch.images, dtype=float) if name == "digits" else None
    for shift in (None, *DIGIT_SHIFTS):
        if remaining == 0:
            break
        Xb = X if shift is None else _shift_images(images, shift).reshape(n_total, -1)
        if remaining < n_total:
            idx = np.sort(_stratified_indices(y, remaining, rng))
            Xb, yb = Xb[idx], y[idx]
        else:
            yb = y
        blocks_X.append(Xb)
        blocks_y.append(yb)
        remaining -= len(yb)

    X, y = np.concatenate(blocks_X), np.concatenate(blocks_y)
    order = np.argsort(y, kind="stable")
    return X[order], y[order]
