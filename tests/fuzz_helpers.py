"""Strategies and checks shared by the fuzz tests of the core (``test_fuzz_*.py``).

Every public entry point, whatever it is given, must either return a correct result or raise a
``ValueError`` / ``TypeError`` whose message names the offending argument; never another
exception type, a NaN returned silently, or a changed input.  :func:`call` runs one call under
that contract.
"""

from __future__ import annotations

import copy
import math
import numbers
import os
import warnings
from datetime import timedelta

import networkx as nx
import numpy as np
from hypothesis import HealthCheck, event, settings
from hypothesis.errors import InvalidArgument
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

#: examples per test are multiplied by this (e.g. ``FUZZ_SCALE=20 pytest tests/test_fuzz_*.py`` for a long search)
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))
# every input is small, so an example that runs for seconds hangs: the deadline catches it (it is
# generous because the machine may be shared); the cvxpy solves have none
_COMMON = dict(database=None, suppress_health_check=[HealthCheck.too_slow])
FUZZ = settings(max_examples=int(50 * SCALE), deadline=timedelta(seconds=10), **_COMMON)
FEW = settings(max_examples=int(20 * SCALE), deadline=timedelta(seconds=10), **_COMMON)
SOLVES = settings(max_examples=int(30 * SCALE), deadline=None, **_COMMON)


# -- the contract ---------------------------------------------------------------------------------


def _snapshot(value):
    if isinstance(value, np.ndarray):
        return ("array", value.copy(), value.flags.writeable)
    if isinstance(value, nx.Graph):
        return ("graph", copy.deepcopy(value))
    try:
        duplicate = copy.deepcopy(value)
        if _equal_attrs(duplicate, value):
            return ("copy", duplicate)
    except Exception:
        pass
    return ("opaque", None)  # an object that cannot be copied and compared (a seed's state is meant to change)


def _same(before, value) -> bool:
    kind = before[0]
    if kind == "array":
        return (value.flags.writeable == before[2] and value.shape == before[1].shape
                and value.dtype == before[1].dtype
                and np.array_equal(value, before[1], equal_nan=value.dtype.kind in "fc"))
    if kind == "graph":
        old = before[1]
        return type(old) is type(value) and _same_graph(old, value)
    if kind == "copy":
        return _equal_attrs(before[1], value)
    return True


def _same_graph(a: nx.Graph, b: nx.Graph) -> bool:
    """Nodes, edges and every attribute alike (graph attributes may hold graphs)."""
    return (dict(a.nodes(data=True)) == dict(b.nodes(data=True)) and _equal_attrs(dict(a.adj), dict(b.adj))
            and _equal_attrs(a.graph, b.graph))


def _equal_attrs(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.array_equal(
            a, b, equal_nan=a.dtype.kind in "fc")
    if isinstance(a, nx.Graph) or isinstance(b, nx.Graph):
        return isinstance(a, nx.Graph) and isinstance(b, nx.Graph) and _same_graph(a, b)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal_attrs(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_equal_attrs(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b)
    except Exception:
        return a is b


class Refused(Exception):
    """What :func:`call` returns (not raises) when the call raised a clean ValueError/TypeError."""

    def __init__(self, error):
        super().__init__(str(error))
        self.error = error


def call(func, *args, names, **kwargs):
    """``func(*args, **kwargs)`` under the contract of the module docstring.

    Returns the result, or a :class:`Refused` holding the error when the call raised a
    ``ValueError`` or ``TypeError`` whose message contains one of ``names`` (the arguments it may
    blame).  Any other exception propagates (the test fails); so does an input changed by the call.
    """
    inputs = list(args) + list(kwargs.values())
    before = [_snapshot(v) for v in inputs]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # ConvergenceWarning of KMeans on duplicate points, ...
            result = func(*args, **kwargs)
    except (ValueError, TypeError) as error:
        message = str(error)
        assert any(name in message for name in names), (
            f"{type(error).__name__} {message!r} names none of {names}")
        result = Refused(error)
    for value, old in zip(inputs, before):
        assert _same(old, value), f"the call changed its input {value!r}"
    try:  # --hypothesis-show-statistics shows how often each outcome was reached
        event(f"{getattr(func, '__name__', 'call')}: {'refused' if refused(result) else 'returned'}")
    except InvalidArgument:  # not inside a hypothesis test
        pass
    return result


def refused(result) -> bool:
    return isinstance(result, Refused)


def assert_refused(result, *words):
    """The call must have been refused, with every one of ``words`` in the message."""
    assert refused(result), f"expected a ValueError/TypeError, got the result {result!r}"
    message = str(result.error)
    for word in words:
        assert word in message, f"{word!r} not in {message!r}"


def assert_refused_naming_one_of(result, names):
    """The call must have been refused, naming at least one of ``names`` (several were bad)."""
    assert refused(result), f"expected a ValueError/TypeError naming one of {names}, got the result {result!r}"
    assert any(name in str(result.error) for name in names), result.error


def assert_finite(array, what="result"):
    array = np.asarray(array, dtype=float)
    assert np.all(np.isfinite(array)), f"{what} holds NaN or infinite entries: {array}"


# -- argument strategies --------------------------------------------------------------------------


@st.composite
def arguments(draw, **specs):
    """Keyword arguments of which at most one is drawn from its bad strategy: ``specs`` maps each
    name to ``(valid, bad)`` strategies (a bad strategy may also yield valid values; the tests
    decide validity themselves).  All are valid in about a third of the draws."""
    names = list(specs)
    bad = draw(st.sampled_from([None] * max(1, len(names) // 2) + names))
    return {name: draw(specs[name][1] if name == bad else specs[name][0]) for name in names}


def valid_counts(low, high):
    return st.one_of(st.integers(low, high), st.integers(low, high).map(np.int64))


def valid_flags():
    return st.one_of(st.booleans(), st.sampled_from([np.True_, np.False_]))


def valid_random_states():
    return st.one_of(st.none(), st.integers(0, 2**32 - 1), st.integers(0, 5).map(np.random.RandomState),
                     st.integers(0, 5).map(np.random.default_rng))


def is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


#: integers of every kind, and things that are not integers
def counts(low=-2, high=12, huge=True):
    """Integers in ``[low, high]`` (Python and numpy), and non-integers; ``huge`` adds 10**30
    (not for counts of work, such as restarts, where it is valid but endless)."""
    others = [True, False, np.True_, 2.0, 2.5, float("nan"), float("inf"), "2", None, [2]]
    return st.one_of(
        st.integers(low, high),
        st.integers(low, high).map(np.int64),
        st.sampled_from(others + [10**30] if huge else others),
    )


def reals():
    return st.one_of(
        st.floats(allow_nan=True, allow_infinity=True),
        st.floats(-1e6, 1e6).map(np.float32),
        st.integers(-3, 3),
        st.sampled_from([True, False, "0.1", None, [0.1], 1e-300, 1e300, 10**400, -0.0]),
    )


def is_positive(value, allow_inf=False) -> bool:
    """Whether ``value`` is a real number > 0 that a float holds (finite unless ``allow_inf``)."""
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        return False
    try:
        number = float(value)
    except OverflowError:
        return False
    return number > 0 and (allow_inf or math.isfinite(number))


def flags():
    return st.one_of(st.booleans(), st.just(np.True_), st.just(np.False_),
                     st.sampled_from(["yes", "no", "", "False", 0, 1, 1.0, None, [True]]))


def is_flag(value) -> bool:
    return isinstance(value, (bool, np.bool_))


def random_states():
    return st.one_of(
        st.none(),
        st.integers(-3, 2**32 + 3),
        st.integers(0, 50).map(np.int64),
        st.booleans(),
        st.sampled_from(["0", "seed", 1.5, 0.0, float("nan"), [0], (1, 2), object()]),
        st.integers(0, 5).map(np.random.RandomState),
        st.integers(0, 5).map(np.random.default_rng),
    )


def is_random_state(value) -> bool:
    return value is None or isinstance(value, (np.random.RandomState, np.random.Generator)) or (
        is_int(value) and 0 <= value < 2**32)


def names(valid):
    """A valid name, or something that is not: a near miss, another type, an unhashable value."""
    return st.one_of(
        st.sampled_from(sorted(valid)),
        st.sampled_from([n.upper() for n in valid] + [n + " " for n in valid]),
        st.text(max_size=6),
        st.sampled_from([None, 0, 1.5, True, ["rbf"], {"a": 1}, b"rbf"]),
    )


# -- array strategies -----------------------------------------------------------------------------

#: magnitudes the data are drawn at: every one must be handled exactly or refused cleanly
SCALES = [1.0, 1e-150, 1e150, 1e-100, 1e100, 1e-8, 1e8]


@st.composite
def finite_matrices(draw, min_rows=2, max_rows=7, min_cols=1, max_cols=3, scales=SCALES):
    """Finite float64 matrices at one of ``SCALES``, sometimes with duplicated rows."""
    n = draw(st.integers(min_rows, max_rows))
    d = draw(st.integers(min_cols, max_cols))
    X = draw(arrays(np.float64, (n, d), elements=st.floats(-10, 10, allow_subnormal=False)))
    if n >= 2 and draw(st.booleans()):
        X[draw(st.integers(0, n - 1))] = X[draw(st.integers(0, n - 1))]  # a duplicate point
    return X * draw(st.sampled_from(scales))


@st.composite
def symmetric_matrices(draw, min_n=1, max_n=6, scales=SCALES):
    n = draw(st.integers(min_n, max_n))
    A = draw(arrays(np.float64, (n, n), elements=st.floats(-10, 10, allow_subnormal=False)))
    return (A + A.T) / 2 * draw(st.sampled_from(scales))


@st.composite
def psd_matrices(draw, min_n=2, max_n=6, scales=SCALES):
    n = draw(st.integers(min_n, max_n))
    B = draw(arrays(np.float64, (n, draw(st.integers(1, n + 1))), elements=st.floats(-3, 3, allow_subnormal=False)))
    K = B @ B.T
    return (K + K.T) / 2 * draw(st.sampled_from(scales))


def bad_arrays():
    """Inputs no matrix argument accepts: wrong dimension, empty, NaN/inf, strings, complex,
    ragged lists, objects, scalars."""
    return st.one_of(
        st.sampled_from([None, "X", b"X", 3, 2.5, True, {"a": 1}, [[1, 2], [3]], [], [[]], object()]),
        arrays(np.float64, st.sampled_from([(0,), (3,), (0, 0), (0, 2), (2, 0), (2, 2, 2)]), elements=st.just(1.0)),
        st.integers(2, 5).map(lambda n: np.full((n, n), np.nan)),
        st.integers(2, 5).map(lambda n: np.where(np.eye(n) > 0, np.inf, 1.0)),
        st.integers(2, 5).map(lambda n: -np.inf * np.ones((n, n))),
        st.integers(2, 4).map(lambda n: np.eye(n).astype(str)),
        st.integers(2, 4).map(lambda n: np.eye(n) * (1 + 1j)),
        st.integers(2, 4).map(lambda n: np.array([[None] * n] * n, dtype=object)),
    )


def variants(X: np.ndarray):
    """The same matrix as a read-only array, a list of lists, float32, a non-contiguous view."""
    ro = X.copy()
    ro.setflags(write=False)
    wide = np.zeros((X.shape[0], 2 * X.shape[1]))
    wide[:, ::2] = X
    return {"read-only": ro, "list": X.tolist(), "fortran": np.asfortranarray(X), "strided": wide[:, ::2]}


def as_float32(X):
    """``X`` rounded to float32 (entries out of float32's range are clipped to it)."""
    with np.errstate(over="ignore"):
        X32 = np.clip(X, -3e38, 3e38).astype(np.float32)
    return X32


# -- small problems of the generic solver's class -------------------------------------------------

#: what a drawn problem of :func:`generic_problems` may hold besides its objective
GENERIC_PARTS = ("psd", "nonneg", "row_sums", "trace", "trace_max", "row", "contradiction")


@st.composite
def generic_problems(draw, max_n=5):
    """Specifications (plain dicts, so that ``@example`` can name edge cases) of small problems of
    :func:`cvxclust.solve`'s class, built by :func:`build_generic_problem`: an objective (``"linear"``,
    ``"frobenius"`` or ``"none"``, minimised or maximised) at one of ``scale`` (0 included, and
    1e200, past the largest magnitude the generic solver takes), any
    subset of :data:`GENERIC_PARTS` (``"contradiction"``: two parallel rows with disjoint ranges),
    and a ``warm`` start (None, a finite point, one holding NaN or inf, or one of another shape)."""
    parts = draw(st.sets(st.sampled_from(GENERIC_PARTS[:-1])))
    if draw(st.sampled_from([False, False, False, True])):  # one draw in four: most problems are feasible
        parts.add("contradiction")
    return {
        "n": draw(st.integers(2, max_n)),
        "seed": draw(st.integers(0, 2**16)),
        "scale": draw(st.sampled_from([1.0, 1.0, 1.0, 0.0, 1e-8, 1e8, 1e-100, 1e100, 1e-200, 1e200])),
        "objective": draw(st.sampled_from(["linear", "frobenius", "none"])),
        "maximize": draw(st.booleans()),
        "parts": parts,
        "warm": draw(st.sampled_from([None] * 8 + ["finite", "nan", "inf", "shape"])),
    }


def build_generic_problem(spec):
    """``(problem, warm_start)`` of a :func:`generic_problems` specification (a new problem each
    call, so that a reference solver sets no value on the one :func:`cvxclust.solve` reads)."""
    import cvxpy as cp

    from cvxclust import Result

    n, rng = spec["n"], np.random.default_rng(spec["seed"])
    B = rng.standard_normal((n, n))
    K = (B + B.T) / 2 * spec["scale"]
    X = cp.Variable((n, n), symmetric=True)
    expression = {"linear": cp.trace(K @ X), "frobenius": cp.sum_squares(X - K), "none": cp.Constant(0.0)}
    term = expression[spec["objective"]]
    if spec["objective"] == "frobenius" and spec["maximize"]:
        term = -term  # concave, as a maximised objective of the class must be
    objective = cp.Maximize(term) if spec["maximize"] else cp.Minimize(term)
    parts, constraints = spec["parts"], []
    if "psd" in parts:
        constraints.append(X >> 0)
    if "nonneg" in parts:
        constraints.append(X >= 0)
    if "row_sums" in parts:
        constraints.append(cp.sum(X, axis=1) == 1)
    if "trace" in parts:
        constraints.append(cp.trace(X) == 2)
    if "trace_max" in parts:
        constraints.append(cp.trace(X) <= 3)
    if "row" in parts:
        constraints.append(cp.sum(X[0, :]) - X[n - 1, n - 1] <= 1)
    if "contradiction" in parts:
        constraints += [X[0, 0] + X[1, 1] == 1, 2 * X[0, 0] + 2 * X[1, 1] >= 4]
    warm = None
    if spec["warm"] is not None:
        size = n + 1 if spec["warm"] == "shape" else n
        point = np.eye(size)
        if spec["warm"] in ("nan", "inf"):
            point[0, size - 1] = point[size - 1, 0] = np.nan if spec["warm"] == "nan" else np.inf
        warm = Result(X=point, objective=float("nan"), status="max_iter", method="generic", iterations=1, time=0.0)
    return cp.Problem(objective, constraints), warm
