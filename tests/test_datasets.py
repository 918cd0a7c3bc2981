import numpy as np
import pytest

from cvxclust.datasets import DIGIT_SHIFTS, _shift_images, load_dataset, structure_layout, structured_blobs
from cvxclust.structures import chain, ring

SIZES = {"iris": (150, 4, 3), "wine": (178, 13, 3), "digits": (1797, 64, 10), "breast_cancer": (569, 30, 2)}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_full_dataset(name):
    n, d, c = SIZES[name]
    X, y = load_dataset(name)
    assert X.shape == (n, d) and y.shape == (n,)
    assert X.dtype == np.float64 and np.issubdtype(y.dtype, np.integer)
    assert np.all(np.diff(y) >= 0), "sorted by class"
    assert len(np.unique(y)) == c
    assert np.all(np.isfinite(X))


@pytest.mark.parametrize("name, n", [("iris", 30), ("wine", 50), ("digits", 200), ("breast_cancer", 101), ("iris", 2)])
def test_stratified_subset(name, n):
    X_all, y_all = load_dataset(name)
    X, y = load_dataset(name, n)
    assert X.shape == (n, X_all.shape[1]) and y.shape == (n,)
    assert np.all(np.diff(y) >= 0)
    counts_all = np.bincount(y_all, minlength=y_all.max() + 1)
    counts = np.bincount(y, minlength=y_all.max() + 1)
    assert counts.sum() == n
    assert np.all(np.abs(counts - counts_all * n / len(y_all)) < 1.0)
    # every row is a distinct original sample of its own class
    rows = {tuple(r): lab for r, lab in zip(X_all, y_all)}
    assert all(rows[tuple(r)] == lab for r, lab in zip(X, y))


def test_subset_deterministic_and_seeded():
    X1, y1 = load_dataset("wine", 60)
    X2, y2 = load_dataset("wine", 60)
    np.testing.assert_array_equal(X1, X2)
    np.testing.assert_array_equal(y1, y2)
    X3, y3 = load_dataset("wine", 60, random_state=1)
    np.testing.assert_array_equal(y1, y3)  # same class counts
    assert not np.array_equal(X1, X3)


def test_shift_images():
    img = np.arange(1.0, 10.0).reshape(1, 3, 3)
    np.testing.assert_array_equal(_shift_images(img, (0, 1))[0], [[0, 1, 2], [0, 4, 5], [0, 7, 8]])
    np.testing.assert_array_equal(_shift_images(img, (0, -1))[0], [[2, 3, 0], [5, 6, 0], [8, 9, 0]])
    np.testing.assert_array_equal(_shift_images(img, (1, 0))[0], [[0, 0, 0], [1, 2, 3], [4, 5, 6]])
    np.testing.assert_array_equal(_shift_images(img, (-1, 0))[0], [[4, 5, 6], [7, 8, 9], [0, 0, 0]])
    assert DIGIT_SHIFTS == ((0, 1), (0, -1), (1, 0), (-1, 0))


def _as_set(X):
    return {r.tobytes() for r in X}


def test_digits_augmentation_counts():
    from collections import Counter

    from sklearn.datasets import load_digits

    images = load_digits().images.astype(float)
    originals = images.reshape(len(images), -1)
    right = _shift_images(images, (0, 1)).reshape(len(images), -1)
    left = _shift_images(images, (0, -1)).reshape(len(images), -1)

    n = 1797 + 1797 + 50
    X, y = load_dataset("digits", n)
    assert X.shape == (n, 64) and np.all(np.diff(y) >= 0)
    orig_set, left_set = _as_set(originals), _as_set(left)
    assert sum(r.tobytes() in orig_set for r in X) >= 1797
    # all originals and all right shifts are used (rows may repeat, so compare multisets),
    # and the 50 extra rows are left shifts
    cx = Counter(r.tobytes() for r in X)
    need = Counter(r.tobytes() for r in originals) + Counter(r.tobytes() for r in right)
    assert all(cx[k] >= v for k, v in need.items())
    extra = cx - need
    assert sum(extra.values()) == 50
    assert all(k in left_set for k in extra)


def test_digits_augmentation_is_stratified():
    y_all = load_dataset("digits")[1]
    counts_all = np.bincount(y_all)
    X, y = load_dataset("digits", 2000)
    extra = np.bincount(y, minlength=10) - counts_all
    assert extra.sum() == 203 and extra.min() >= 0
    assert np.all(np.abs(extra - counts_all * 203 / 1797) < 1.0)


def test_digits_largest_augmentation():
    X, y = load_dataset("digits", 1797 * 5)
    assert X.shape == (8985, 64)
    assert np.array_equal(np.bincount(y), 5 * np.bincount(load_dataset("digits")[1]))


@pytest.mark.parametrize(
    "name, n, match",
    [
        ("mnist", None, r"Unknown dataset name 'mnist'.*valid.*breast_cancer.*digits.*iris.*wine"),
        ("iris", 1, "n_samples"),
        ("iris", 0, "n_samples"),
        ("iris", 151, "n_samples"),
        ("wine", 179, "n_samples"),
        ("digits", 1797 * 5 + 1, "n_samples"),
        ("iris", 10.0, "n_samples"),
        ("iris", True, "n_samples"),
    ],
)
def test_errors(name, n, match):
    with pytest.raises(ValueError, match=match):
        load_dataset(name, n)


@pytest.mark.parametrize("spacing", [float("nan"), float("inf"), 0, 0.0, -1.0, True, "1", None])
def test_structure_layout_spacing_must_be_positive_and_finite(spacing):
    """The rule of structured_blobs: nan/inf gave non-finite centres, 0 collapsed them, -1
    mirrored them, True was taken as 1 and "1"/None raised a TypeError not naming spacing."""
    with pytest.raises(ValueError, match="'spacing' parameter of structure_layout"):
        structure_layout(chain(3), spacing)
    with pytest.raises(ValueError, match="'spacing' parameter of structured_blobs"):
        structured_blobs(chain(3), 9, spacing=spacing)


def test_structure_layout_good_spacing_unchanged():
    np.testing.assert_allclose(structure_layout(chain(3), 2.5).ravel(), [2.5, 0.0, -2.5], atol=1e-12)
    np.testing.assert_array_equal(structure_layout(ring(5), np.float64(2.0)), structure_layout(ring(5), 2))


@pytest.mark.parametrize("structure, d", [(chain(3), 1), (ring(5), 2)])
def test_structured_blobs_n_samples_upper_bound(structure, d):
    """X holds at most 2**28 floats: n_samples = 10**12 was a MemoryError."""
    for n in (10**12, 2**28 // d + 1, 10**40):
        with pytest.raises(ValueError,
                           match=rf"n_samples must be at most {2**28 // d} here.*limited to 2\*\*28 floats"):
            structured_blobs(structure, n)


def test_datasets_is_a_public_module_of_the_package():
    import cvxclust
    from cvxclust import datasets

    assert "datasets" in cvxclust.__all__ and cvxclust.datasets is datasets  # was left out of __all__
    namespace = {}
    exec("from cvxclust import *", namespace)
    assert namespace["datasets"] is datasets and namespace["datasets"].load_dataset is load_dataset
