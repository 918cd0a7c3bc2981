"""Inputs at the door of every public function of ``cvxclust.cluhsical`` and of the estimators
``CLUHSIC`` and ``CLUHSICAL``: bad arrays, labels, numbers and names end in a ValueError or
TypeError naming the argument, never another exception or a non-finite result; read-only,
float32 and list inputs give the float64 result; inputs are never modified."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from sklearn.exceptions import ConvergenceWarning

from cvxclust import CLUHSIC, CLUHSICAL, Result, cluhsical
from cvxclust.kernels import center, rbf
from cvxclust.structures import chain, loss_matrix, output_kernel

RNG = np.random.default_rng(0)
X = np.concatenate([RNG.normal(5.0 * k, 0.5, size=(2, 2)) for k in range(3)])
K = center(rbf(X))
A = output_kernel(chain(3))
LOSS = loss_matrix(chain(3))
LABELS = np.repeat(np.arange(3), 2)
J, S = cluhsical.joint_kernel_matrices(K, A, LABELS, LOSS, 1.0)
PI = cluhsical.partition_matrix(LABELS, LOSS, "l1")
THEORY = {"K": K, "A": A, "labels": LABELS, "loss": LOSS, "C": 1.0, "gamma": 0.5}

# function -> (valid keyword arguments, kind of each argument checked)
#   kinds: "kernel" (symmetric matrix), "psd" (symmetric p.s.d. matrix), "loss", "matrix" (any
#   finite 2-D array), "labels" (with m known), "labels?" (m not known), "sizes", "positive",
#   "positive?" (None allowed), "count" (int >= 1), "count?" (None allowed), "name", "name?"
FUNCTIONS = {
    "kernel_distances": ({"K": K}, {"K": "kernel"}),
    "hierarchical_kernel_kmeans": ({"K": K, "structure": chain(3), "n_init": 2, "random_state": 0},
                                   {"K": "kernel", "n_init": "count", "random_state": "seed"}),
    "hierarchical_agglomerative": ({"K": K, "structure": chain(3), "linkage": "average"},
                                   {"K": "kernel", "linkage": "name"}),
    "greedy": ({"K": K, "A": A, "loss": LOSS, "normalization": "l2", "C": 2.0, "gamma": 0.5, "init": None,
                "known": np.full(6, -1), "max_iter": 20, "n_init": 2, "tol": 1e-12, "time_limit": 60.0,
                "random_state": 0},
               {"K": "kernel", "A": "kernel", "loss": "loss", "normalization": "name?", "C": "positive?",
                "gamma": "positive", "known": "known", "max_iter": "count", "n_init": "count", "tol": "positive",
                "time_limit": "positive", "random_state": "seed"}),
    "column_norms": ({"sizes": np.array([2.0, 2.0, 2.0]), "loss": LOSS, "normalization": "l2"},
                     {"sizes": "sizes", "loss": "loss", "normalization": "name"}),
    "equivalent_output_kernel": ({"A": A, "loss": LOSS}, {"A": "kernel", "loss": "loss"}),
    "l2_objective": ({"K": K, "A": A, "labels": LABELS, "loss": LOSS, "C": 2.0, "gamma": 0.5},
                     {"K": "kernel", "A": "kernel", "labels": "labels", "loss": "loss", "C": "positive?",
                      "gamma": "positive"}),
    "labels_objective": ({"K": K, "A": A, "labels": LABELS, "loss": LOSS, "normalization": "l1", "C": 2.0,
                          "gamma": 0.5},
                         {"K": "kernel", "A": "kernel", "labels": "labels", "loss": "loss", "normalization": "name?",
                          "C": "positive?", "gamma": "positive"}),
    "loss_transform": ({"loss": LOSS}, {"loss": "loss"}),
    "objective": ({"K": K, "A": A, "Pi": PI}, {"K": "kernel", "A": "kernel", "Pi": "matrix"}),
    "partition_matrix": ({"labels": LABELS, "loss": LOSS, "normalization": "l2", "n_clusters": 3},
                         {"labels": "labels?", "loss": "loss", "normalization": "name?", "n_clusters": "count?"}),
    "relaxation_output_kernel": ({"A": A, "loss": LOSS, "normalization": "l1", "sizes": None, "n_samples": 6},
                                 {"A": "kernel", "loss": "loss", "normalization": "name?", "n_samples": "count?"}),
    "krr_primal_problem": ({"Phi": X, "Lambda": np.eye(3), "labels": LABELS, "loss": LOSS, "C": 1.0},
                           {"Phi": "matrix", "Lambda": "matrix", "labels": "labels", "loss": "loss",
                            "C": "positive"}),
    "joint_kernel_matrices": ({k: v for k, v in THEORY.items() if k != "gamma"},
                              {"K": "psd", "A": "psd", "labels": "labels", "loss": "loss", "C": "positive"}),
    **{name: (THEORY, {"K": "psd", "A": "psd", "labels": "labels", "loss": "loss", "C": "positive",
                       "gamma": "positive"})
       for name in ("krr_dual_value", "first_order_value", "approximation_error", "proposition2_objective")},
    "first_order_approximation": ({"J": J, "S": S, "gamma": 0.5}, {"J": "psd", "S": "sizes", "gamma": "positive"}),
    "constraint_pairs": ({"labels": LABELS, "n_clusters": 3}, {"labels": "labels?", "n_clusters": "count"}),
    "lemma_objective": ({"K": K, "Pi": PI}, {"K": "kernel", "Pi": "matrix"}),
    "lemma_partition_matrix": ({"labels": LABELS, "n_clusters": 3, "form": "cluhsical"},
                               {"labels": "labels?", "n_clusters": "count", "form": "name"}),
}

BAD_ARRAYS = {  # for every array kind
    "NaN": lambda a: np.where(np.ones_like(a, dtype=bool), np.nan, a),
    "inf": lambda a: np.full(np.shape(a), np.inf),
    "empty": lambda a: np.empty((0,) * np.ndim(a)),
    "3-D": lambda a: np.asarray(a)[None, None] if np.ndim(a) == 1 else np.asarray(a)[None],
    "text": lambda a: np.full(np.shape(a), "a"),
    "None": lambda a: None,
    "objects": lambda a: np.full(np.shape(a), None, dtype=object),
    "scalar": lambda a: 1.0,
}
BAD_MATRICES = {
    "1-D": lambda a: np.ravel(a),
    "one row less": lambda a: np.asarray(a)[:-1],
}
BAD_BY_KIND = {
    "kernel": {"not symmetric": lambda a: a + np.triu(np.ones_like(a), 1)},
    "psd": {"not symmetric": lambda a: a + np.triu(np.ones_like(a), 1),
            "indefinite": lambda a: a - 10 * np.eye(len(a))},
    "loss": {"nonzero diagonal": lambda a: a + np.eye(len(a)), "negative": lambda a: -a - np.eye(len(a))[::-1]},
    "matrix": {},
    "labels": {"one short": lambda a: a[:-1], "2-D": lambda a: a[None], "fractional": lambda a: a + 0.5,
               "negative": lambda a: a - 1, "too large": lambda a: a + 3, "NaN": lambda a: a + np.nan,
               "None": lambda a: None, "objects": lambda a: np.full(len(a), None, dtype=object),
               "empty": lambda a: a[:0], "scalar": lambda a: 1},
    "labels?": {"2-D": lambda a: a[None], "fractional": lambda a: a + 0.5, "negative": lambda a: a - 1,
                "too large": lambda a: a + 3, "NaN": lambda a: a + np.nan, "None": lambda a: None,
                "objects": lambda a: np.full(len(a), None, dtype=object), "scalar": lambda a: 1},
    "known": {"one short": lambda a: a[:-1], "2-D": lambda a: a[None], "fractional": lambda a: a + 0.5,
              "below -1": lambda a: a - 1, "too large": lambda a: a + 4, "objects": lambda a: np.full(len(a), None)},
    "sizes": {"negative": lambda a: -a, "one short": lambda a: a[:-1], "NaN": lambda a: a * np.nan,
              "inf": lambda a: a * np.inf, "text": lambda a: np.full(np.shape(a), "a"), "None": lambda a: None,
              "objects": lambda a: np.full(np.shape(a), None, dtype=object),
              # complex sizes were cast to real with a ComplexWarning; 3-D sizes were accepted
              "complex": lambda a: a * (1 + 1j), "3-D": lambda a: np.asarray(a)[None, None]},
}
BAD_NUMBERS = {
    "positive": [-1.0, 0.0, np.nan, "1", True, None, [1.0], np.ones(2)],
    "positive?": [-1.0, 0.0, np.nan, np.inf, "1", True, [1.0]],
    "count": [0, -2, 2.0, True, "3", None, [2]],
    "count?": [0, -2, 2.0, True, "3", [2]],
    "seed": [-1, 1.5, True, "0", [0], 2**40],
    "name": ["nope", None, 3, ["l1"], True],
    "name?": ["nope", 3, ["l1"], True, ""],
}


def call(name, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return getattr(cluhsical, name)(**kwargs)


def finite(result) -> bool:
    if isinstance(result, tuple):
        return all(finite(part) for part in result)
    if isinstance(result, Result):
        return bool(np.isfinite(result.objective))
    if isinstance(result, cluhsical.FirstOrderApproximation):
        return bool(np.isfinite([result.t1, result.t2, result.relative_error]).all())
    if isinstance(result, (float, np.ndarray)):
        return bool(np.all(np.isfinite(result)))
    return True


def same(a, b, rtol: float = 0.0) -> bool:
    """Equal results (to ``rtol``)."""
    if isinstance(a, tuple):
        return all(same(x, y, rtol) for x, y in zip(a, b))
    if isinstance(a, Result):
        return same(a.objective, b.objective, rtol) and np.array_equal(a.extras["labels"], b.extras["labels"])
    if isinstance(a, cluhsical.FirstOrderApproximation):
        return same((a.t1, a.t2, a.relative_error), (b.t1, b.t2, b.relative_error), rtol)
    if isinstance(a, (float, np.ndarray)):
        return np.allclose(a, b, rtol=rtol, atol=rtol * np.max(np.abs(a), initial=0.0))
    return True  # a cvxpy problem


def bad_cases():
    for name, (valid, kinds) in FUNCTIONS.items():
        for arg, kind in kinds.items():
            if kind in BAD_NUMBERS:
                for value in BAD_NUMBERS[kind]:
                    yield pytest.param(name, arg, value, id=f"{name}-{arg}={value!r}")
                continue
            bad = dict(BAD_BY_KIND[kind])
            if kind not in ("labels", "labels?", "known", "sizes"):
                bad |= BAD_ARRAYS | BAD_MATRICES
            for what, change in bad.items():
                yield pytest.param(name, arg, change(valid[arg]), id=f"{name}-{arg}-{what}")


def test_every_public_function_is_covered():
    public = {name for name in cluhsical.__all__ if callable(getattr(cluhsical, name))
              and not isinstance(getattr(cluhsical, name), type)}
    assert public == set(FUNCTIONS)


@pytest.mark.parametrize("name, arg, value", list(bad_cases()))
def test_bad_input_raises_naming_the_argument(name, arg, value):
    valid, kinds = FUNCTIONS[name]
    with pytest.raises((ValueError, TypeError)) as error:
        call(name, **{**valid, arg: value})
    message = str(error.value)
    # a shape that disagrees with another argument may name that one instead
    others = [a for a in kinds if a != arg] if np.shape(value) != np.shape(valid[arg]) else []
    assert any(name_ in message for name_ in [arg, *others]), message


@pytest.mark.parametrize("sizes", [np.array([2.0, 2.0, 2.0]) * (1 + 1j), np.ones((1, 1, 3)), np.ones((1, 3)),
                                   [2.0, 2.0], np.array([2.0, np.nan, 2.0]), "abc", [[2.0], [2.0, 2.0]]])
def test_relaxation_output_kernel_refuses_bad_sizes_naming_them(sizes):
    """Complex sizes were cast to real with a ComplexWarning."""
    with pytest.raises(ValueError, match="^sizes"):
        call("relaxation_output_kernel", A=A, loss=LOSS, normalization="l1", sizes=sizes)


@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_read_only_float32_and_list_inputs_and_no_mutation(name):
    valid, kinds = FUNCTIONS[name]
    expected = call(name, **valid)
    assert finite(expected)
    arrays = {arg: value for arg, value in valid.items() if isinstance(value, np.ndarray)}
    copies = {arg: value.copy() for arg, value in arrays.items()}
    frozen = {}
    for arg, value in arrays.items():
        frozen[arg] = value.copy()
        frozen[arg].flags.writeable = False
    assert same(call(name, **{**valid, **frozen}), expected)
    assert same(call(name, **{**valid, **{arg: value.tolist() for arg, value in arrays.items()}}), expected)
    for arg, value in arrays.items():
        np.testing.assert_array_equal(value, copies[arg])  # untouched
    single = {arg: value.astype(np.float32) for arg, value in arrays.items() if value.dtype.kind == "f"}
    if single:  # computed in double precision from the rounded entries
        assert same(call(name, **{**valid, **single}), expected, rtol=1e-4)


@pytest.mark.parametrize("name, arg", [(n, a) for n, (_, kinds) in FUNCTIONS.items() for a, k in kinds.items()
                                       if k in ("kernel", "psd", "loss", "matrix")])
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_arbitrary_arrays_end_in_a_named_error_or_a_finite_result(name, arg, data):
    valid, _ = FUNCTIONS[name]
    shape = data.draw(st.sampled_from([np.shape(valid[arg]), (6, 6), (3, 3), (6, 3), (1, 1), (0, 3), (6,)]))
    values = st.floats(allow_nan=True, allow_infinity=True, width=64) | st.sampled_from([0.0, 1e-300, 1e300, -1e300])
    array = data.draw(hnp.arrays(np.float64, shape, elements=values))
    before = array.copy()
    try:
        result = call(name, **{**valid, arg: array})
    except (ValueError, TypeError):
        pass
    else:
        assert finite(result), result
    np.testing.assert_array_equal(array, before)


@settings(max_examples=40, deadline=None)
@given(labels=hnp.arrays(np.int64, st.integers(0, 8), elements=st.integers(-3, 5)),
       n_clusters=st.integers(-1, 6) | st.floats(allow_nan=True) | st.booleans() | st.none())
def test_arbitrary_labels_and_cluster_counts(labels, n_clusters):
    for name, kwargs in [("constraint_pairs", {"labels": labels, "n_clusters": n_clusters}),
                         ("lemma_partition_matrix", {"labels": labels, "n_clusters": n_clusters}),
                         ("partition_matrix", {"labels": labels, "loss": LOSS, "n_clusters": n_clusters})]:
        try:
            result = call(name, **kwargs)
        except (ValueError, TypeError) as error:
            assert "labels" in str(error) or "n_clusters" in str(error)
        else:
            c = 3 if name == "partition_matrix" else n_clusters
            assert 0 <= labels.min(initial=0) and labels.max(initial=0) < c
            assert n_clusters == c or (name == "partition_matrix" and n_clusters is None)
            assert finite(result)


DATA = hnp.arrays(np.float64, st.tuples(st.integers(0, 10), st.integers(0, 3)),
                  elements=st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from([0.0, 1e-300, 1e300]))
COUNTS = st.integers(-1, 12) | st.floats(allow_nan=True) | st.booleans() | st.text(max_size=2) | st.none()
AFFINITIES = st.sampled_from(["rbf", "polynomial", "linear", "nearest_neighbors", "precomputed"])


@pytest.mark.parametrize("estimator, options", [
    (CLUHSIC, st.sampled_from([{"method": "greedy"}, {"relaxation": "spectral"}, {"method": "nmf"}])),
    (CLUHSICAL, st.fixed_dictionaries({"normalization": st.sampled_from(["l1", "l2", None]), "n_init": st.just(1)})),
], ids=["CLUHSIC", "CLUHSICAL"])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_estimators_on_arbitrary_data_end_in_a_named_error_or_a_finite_fit(estimator, options, data):
    X, n_clusters = data.draw(DATA), data.draw(COUNTS)
    est = estimator(n_clusters, affinity=data.draw(AFFINITIES), n_neighbors=2, random_state=0, **data.draw(options))
    before = X.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            est.fit(X)
    except (ValueError, TypeError) as error:
        assert any(name in str(error) for name in ("X", "n_clusters", "n_neighbors", "gamma", "affinity", "sample",
                                                    "feature", "numeric", "2D array")), error
    else:
        assert est.labels_.shape == (X.shape[0],) and np.isfinite(est.objective_)
        assert 0 <= est.labels_.min() and est.labels_.max() < (8 if n_clusters is None else n_clusters)
    np.testing.assert_array_equal(X, before)
