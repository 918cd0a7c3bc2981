"""Fuzz tests of ``cvxclust.metrics``: labels of every kind (ints, strings, integral and
non-integral floats, NaN, ``None`` among numbers, 2-D, empty, wrong lengths, read-only),
permutations that are not iterable or do not fit, losses with NaN or of the wrong size, and
structures that have no levels.  Each call either raises a ``ValueError``/``TypeError`` naming
the offending argument or returns the right score, without changing its input."""

from __future__ import annotations

import itertools
import math

import numpy as np
from scipy.optimize import linear_sum_assignment
from fuzz_helpers import FUZZ, assert_refused, bad_arrays, call, refused
from fuzz_structures import any_structures
from hypothesis import example, given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from cvxclust import metrics, structures


def readonly(a):
    a = np.array(a)
    a.setflags(write=False)
    return a


@st.composite
def label_pairs(draw):
    """``(y_true, y_pred)``: mostly valid pairs of labels (ints, strings, integral floats, lists,
    read-only arrays), and pairs with one bad side (NaN, None, 2-D, empty, wrong length)."""
    n = draw(st.integers(1, 8))

    def labels(length):
        return draw(st.one_of(
            arrays(np.int64, length, elements=st.integers(0, 3)),
            arrays(np.int64, length, elements=st.integers(-2, 5)),
            st.lists(st.sampled_from("abc"), min_size=length, max_size=length),
            arrays(np.float64, length, elements=st.integers(0, 3).map(float)),
            arrays(np.int64, length, elements=st.integers(0, 3)).map(readonly),
            arrays(np.int64, length, elements=st.integers(0, 3)).map(list),
            arrays(np.int64, length, elements=st.integers(0, 3)).map(lambda y: y.astype(object)),
        ))

    y_true, y_pred = labels(n), labels(n)
    bad = draw(st.sampled_from([None] * 4 + ["nan", "inf", "none", "2d", "empty", "length", "complex", "scalar"]))
    side = draw(st.sampled_from(["y_true", "y_pred"]))
    if bad is None:
        return y_true, y_pred, None
    broken = {
        "nan": np.array([0.0] * (n - 1) + [np.nan]),
        "inf": np.array([np.inf] + [1.0] * (n - 1)),
        "none": np.array([None] + [1] * (n - 1), dtype=object),
        "2d": np.zeros((1, n), dtype=int),
        "empty": np.array([], dtype=int),
        "length": np.zeros(n + 1, dtype=int),
        "complex": np.ones(n) * 1j,
        "scalar": 3,
    }[bad]
    if bad == "length":  # the length is wrong for the pair, not for either side
        side = "same length"
    if side == "y_true":
        return broken, y_pred, "y_true"
    return (y_true, broken, "y_pred") if side == "y_pred" else (y_true, broken, "same length")


def brute_force_accuracy(y_true, y_pred) -> float:
    """Best one-to-one relabeling (clusters left over count as errors): by enumeration where
    that is small, else by an assignment on the contingency table (enumeration grows like
    (c + k)! and would turn a large example into a timeout)."""
    classes, clusters = np.unique(y_true), np.unique(y_pred)
    if math.perm(len(classes) + len(clusters), len(clusters)) > 20_000:
        truth, pred = np.asarray(y_true).tolist(), np.asarray(y_pred).tolist()
        counts = np.zeros((len(clusters), len(classes)))
        for s, r in zip(truth, pred):
            counts[clusters.tolist().index(r), classes.tolist().index(s)] += 1
        rows, cols = linear_sum_assignment(counts, maximize=True)
        return counts[rows, cols].sum() / len(y_true)
    best = 0
    padded = list(classes) + [None] * len(clusters)
    for image in itertools.permutations(padded, len(clusters)):
        mapping = dict(zip(clusters.tolist(), image))
        pairs = zip(np.asarray(y_true).tolist(), np.asarray(y_pred).tolist())
        best = max(best, sum(mapping[r] == s for s, r in pairs))
    return best / len(y_true)


@FUZZ
@given(label_pairs())
@example((np.array([0.0, 1.0, np.nan]), np.array([0, 1, 1]), "y_true"))  # was scored 2/3
@example((np.array([0, 1, None], dtype=object), np.array([0, 1, 1]), "y_true"))  # was a bare TypeError
@example((np.array([None], dtype=object), np.array([0]), "y_true"))  # was an AttributeError
@example((np.array([0, 1], dtype=object), np.array([0, 1]), None))  # valid: was an AttributeError
def test_accuracy_error_rate_nmi_best_mapping(case):
    y_true, y_pred, bad = case
    names = ["y_true", "y_pred"]
    outs = {f.__name__: call(f, y_true, y_pred, names=names)
            for f in (metrics.accuracy, metrics.error_rate, metrics.nmi, metrics.best_mapping)}
    if bad is not None:
        for out in outs.values():
            assert_refused(out, bad)
        return
    for out in outs.values():
        assert not refused(out), out
    acc = outs["accuracy"]
    assert acc == brute_force_accuracy(y_true, y_pred)
    assert outs["error_rate"] == 1.0 - acc
    assert np.isfinite(outs["nmi"]) and -1e-12 <= outs["nmi"] <= 1 + 1e-12
    assert set(outs["best_mapping"]) == set(np.unique(y_pred).tolist())


def permutation_sets():
    return st.one_of(
        st.integers(1, 5).flatmap(lambda c: st.lists(st.permutations(range(c)).map(np.array), min_size=1, max_size=4)),
        st.lists(arrays(np.int64, st.integers(1, 5), elements=st.integers(-1, 5)), min_size=1, max_size=3),
        st.sampled_from([5, "ab", b"ab", [], [[]], [5], None, 2.5, [np.zeros((2, 2), dtype=int)]]),
        st.integers(2, 4).map(lambda c: (np.roll(np.arange(c), k) for k in range(c))),  # a generator
    )


@FUZZ
@given(label_pairs(), permutation_sets())
@example((np.array([0, 1]), np.array([0, 1]), None), 5)  # was a bare TypeError: 'int' object is not iterable
def test_accuracy_with_permutations(case, permutations):
    y_true, y_pred, bad = case
    if not isinstance(permutations, (list, np.ndarray)) and hasattr(permutations, "__next__"):
        permutations = list(permutations)  # the same perms for every call below
    out = call(metrics.accuracy, y_true, y_pred, permutations, names=["y_true", "y_pred", "permutations"])
    if bad is not None:
        return assert_refused(out)
    if permutations is None:  # every one-to-one relabeling
        return np.testing.assert_equal(out, brute_force_accuracy(y_true, y_pred))
    perms = None
    if isinstance(permutations, list) and permutations:
        try:
            perms = [np.asarray(p) for p in permutations]
        except (TypeError, ValueError):
            perms = None
    yp = np.asarray(np.asarray(y_pred).tolist())  # Python ints in an object array are ints
    if perms is None or any(p.ndim != 1 or p.size == 0 or not np.issubdtype(p.dtype, np.integer)
                            or not np.array_equal(np.sort(p), np.arange(p.size)) for p in perms):
        return assert_refused(out, "permutations")  # not all permutations of 0..len(p)-1
    if not np.issubdtype(yp.dtype, np.integer) or any(yp.min() < 0 or yp.max() >= p.size for p in perms):
        return assert_refused(out, "permutations", "y_pred")
    assert not refused(out), out
    expected = max(np.mean(p[yp] == np.asarray(y_true)) for p in perms)
    assert out == expected


def loss_arrays():
    return st.one_of(
        st.integers(1, 5).flatmap(lambda c: arrays(np.float64, (c, c), elements=st.floats(0, 4))),
        st.integers(2, 4).map(lambda c: np.where(np.eye(c) > 0, 0.0, np.nan)),
        bad_arrays(),
    )


@FUZZ
@given(label_pairs(), loss_arrays(), st.one_of(st.none(), permutation_sets()))
@example((np.array([0, 1]), np.array([0, 1]), None), np.array([[0.0, np.nan], [1.0, 0.0]]), None)  # was 0.0
@example((np.array([-1, 1]), np.array([0, 1]), None), np.array([[0.0, 1.0], [1.0, 0.0]]), None)  # was 0.0
@example((np.array([0.5, 1]), np.array([0, 1]), None), np.array([[0.0, 1.0], [1.0, 0.0]]), None)  # IndexError
@example((np.array(["a", "b"]), np.array([0, 1]), None), np.eye(2), None)  # was a UFuncTypeError
@example((np.array([0, 1]), np.array([0, 1]), None), np.array([[0.0, 1.0], [1.0, 0.0]]),
         [np.array([1.0, 0.0])])  # float classes: was an IndexError
def test_structured_loss(case, loss, permutations):
    y_true, y_pred, bad = case
    if permutations is not None and not isinstance(permutations, (list, np.ndarray)) and hasattr(
            permutations, "__next__"):
        permutations = list(permutations)
    out = call(metrics.structured_loss, y_true, y_pred, loss, permutations,
               names=["y_true", "y_pred", "loss", "permutations"])
    if bad is not None:
        return assert_refused(out)
    try:
        L = np.asarray(loss, dtype=float) if np.asarray(loss).dtype.kind not in "USc" else None
    except (TypeError, ValueError):
        L = None
    if L is None or L.ndim != 2 or L.shape[0] != L.shape[1] or L.size == 0 or not np.all(np.isfinite(L)):
        return assert_refused(out, "loss")
    yt = np.asarray(np.asarray(y_true).tolist())
    integral = yt.dtype.kind in "iu" or (yt.dtype.kind == "f" and np.all(yt % 1 == 0))
    if not integral or yt.min() < 0:
        return assert_refused(out, "y_true")
    if yt.max() >= L.shape[0]:
        return assert_refused(out, "loss", "y_true")
    if refused(out):  # only permutations that do not fit the clusters
        assert permutations is not None, out.error
        return assert_refused(out, "permutations")
    assert np.isfinite(out) and L.min() - 1e-12 <= out <= L.max() + 1e-12


def hierarchy_label_pairs():
    return st.tuples(st.integers(1, 8), st.integers(0, 2**16)).map(
        lambda t: tuple(np.random.default_rng(t[1]).integers(-1, 10, size=(2, t[0]))))


@FUZZ
@given(any_structures(), st.one_of(hierarchy_label_pairs(), label_pairs().map(lambda c: c[:2])),
       st.one_of(st.none(), permutation_sets()))
def test_hierarchy_levels_and_level_scores(pair, labels, permutations):
    S, valid = pair
    if permutations is not None and not isinstance(permutations, (list, np.ndarray)) and hasattr(
            permutations, "__next__"):
        permutations = list(permutations)
    levels = call(metrics.hierarchy_levels, S, names=["structure"])
    hierarchy = call(metrics.as_hierarchy, S, names=["structure"])
    y_true, y_pred = labels
    scores = call(metrics.level_scores, y_true, y_pred, S, permutations,
                  names=["y_true", "y_pred", "structure", "permutations", "same length"])
    if not valid:
        for out in (levels, hierarchy):
            assert_refused(out, "structure")
        return assert_refused(scores)
    if structures.as_structure(S).graph["kind"] == "graph":  # no levels
        for out in (levels, hierarchy):
            assert_refused(out, "structure")
        return assert_refused(scores)
    c = structures.n_clusters(S)
    assert levels.ndim == 2 and levels.shape[1] == c and levels.min() >= 0
    np.testing.assert_array_equal(np.unique(levels[-1]), np.arange(len(np.unique(levels[-1]))))
    assert len(hierarchy.graph["clusters"]) == c
    if refused(scores):
        return
    yt, yp = np.asarray(y_true), np.asarray(y_pred)
    assert yt.shape == yp.shape and yt.min() >= 0 and max(yt.max(), yp.max()) < c and yp.min() >= 0
    assert scores["accuracy"].shape == scores["loss"].shape == (levels.shape[0],)
    assert np.all((0 <= scores["accuracy"]) & (scores["accuracy"] <= 1))
    assert np.all(np.isfinite(scores["loss"])) and np.all(scores["loss"] >= 0)
    np.testing.assert_array_equal(np.sort(scores["permutation"]), np.arange(c))
    # one relabeling serves every level: the leaf accuracy is never above an upper level's
    assert np.all(scores["accuracy"][:-1] >= scores["accuracy"][-1] - 1e-12)
