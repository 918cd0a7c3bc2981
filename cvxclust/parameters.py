"""Declarative parameter checks: one table per solver or estimator, checked once at the door.

A table maps each parameter name to the constraints its value must satisfy (any one of them), in
the manner of scikit-learn's ``_parameter_constraints``::

    parameters = {
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "method": [Options("admm", "lagrange-dual")],
        "random_state": ["random_state"],
        "callback": [callable, None],
    }
    check_parameters(parameters, {"tol": 1e-6, ...}, owner="admm")

A failure raises :class:`InvalidParameterError` (a ``ValueError`` and a ``TypeError``) whose
message names the parameter, its value and what was expected.  Booleans are never numbers here
and strings are never flags: ``True`` is not an accepted ``max_iter`` and ``"yes"`` is not an
accepted ``verbose``.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from numbers import Integral, Real

import numpy as np

from ._deprecation import module_getattr

__all__ = ["InvalidParameterError", "Interval", "Options", "check_parameter", "check_parameters"]


class InvalidParameterError(ValueError, TypeError):
    """A parameter has a value or type its table does not allow.

    Subclasses both ``ValueError`` and ``TypeError``, as scikit-learn's error of the same name,
    so callers may catch either.
    """


class Interval:
    """Real or integral numbers in an interval.

    Parameters
    ----------
    kind : {numbers.Real, numbers.Integral}
        ``Integral`` admits integers only; ``Real`` admits integers and floats.
    low, high : float or None
        Bounds; None is unbounded on that side.
    closed : {"left", "right", "both", "neither"}
        Which bounds belong to the interval.
    allow_inf : bool
        Whether ``+inf`` is admitted (for time limits); NaN never is.
    """

    def __init__(self, kind, low, high, *, closed: str = "both", allow_inf: bool = False):
        if kind not in (Real, Integral):
            raise ValueError(f"kind must be numbers.Real or numbers.Integral, got {kind!r}")
        if closed not in ("left", "right", "both", "neither"):
            raise ValueError(f"closed must be 'left', 'right', 'both' or 'neither', got {closed!r}")
        self.kind, self.low, self.high, self.closed, self.allow_inf = kind, low, high, closed, allow_inf

    def accepts(self, value) -> bool:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, self.kind):
            return False
        if self.kind is Real:  # a float must hold it (an int count need not)
            try:
                number = float(value)
            except OverflowError:
                return False
            if math.isnan(number):
                return False
            if math.isinf(number) and not (self.allow_inf and number > 0 and self.high is None):
                return False
        left = self.closed in ("left", "both")
        right = self.closed in ("right", "both")
        if self.low is not None and (value < self.low or (value == self.low and not left)):
            return False
        if self.high is not None and (value > self.high or (value == self.high and not right)):
            return False
        return True

    def __str__(self) -> str:
        kind = "an int" if self.kind is Integral else "a float"
        lo = "-inf" if self.low is None else f"{self.low:g}"
        hi = "inf" if self.high is None else f"{self.high:g}"
        lb = "[" if self.closed in ("left", "both") and self.low is not None else "("
        rb = "]" if (self.closed in ("right", "both") and self.high is not None) or (
            self.high is None and self.allow_inf) else ")"
        return f"{kind} in the range {lb}{lo}, {hi}{rb}"


class Options:
    """One of a fixed set of values (strings, usually), of the same type as the value it
    equals (``1.0`` is not the option ``1``, ``True`` not ``1``); a string of a subclass of
    ``str`` (a numpy string) is the string option it equals."""

    def __init__(self, *values):
        self.values = values

    def accepts(self, value) -> bool:
        try:
            return any(value == v and (type(value) is type(v) or isinstance(v, str) and isinstance(value, str))
                       for v in self.values)
        except (TypeError, ValueError):  # arrays compare elementwise
            return False

    def __str__(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)


def _accepts(constraint, value) -> bool:
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return isinstance(value, (bool, np.bool_))
    if constraint is callable:
        return callable(value)
    if constraint == "random_state":
        return value is None or isinstance(value, (np.random.RandomState, np.random.Generator)) or (
            isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))
            and 0 <= value < 2**32)
    if constraint == "dict":
        return isinstance(value, Mapping)
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    return constraint.accepts(value)


def _describe(constraint) -> str:
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "a bool"
    if constraint is callable:
        return "a callable"
    if constraint == "random_state":
        return "an int in [0, 2**32), a numpy RandomState or Generator, or None"
    if constraint == "dict":
        return "a dict"
    if isinstance(constraint, type):
        return f"an instance of {constraint.__name__}"
    return str(constraint)


def check_parameter(name: str, value, constraints, owner: str | None = None, *, message: str | None = None):
    """Return ``value`` (numpy scalars turned into Python ones) if any of ``constraints``
    accepts it; otherwise raise :class:`InvalidParameterError` naming ``name``.

    ``message``, where given, is the error's text as a format string with the fields ``name``,
    ``value`` and ``expected`` (what the constraints accept, in words), for the checks of
    arguments that word their errors their own way; by default the message reads
    ``"The 'name' parameter of owner must be <expected>. Got <value> instead."``.
    """
    for constraint in constraints:
        if _accepts(constraint, value):
            if isinstance(value, np.generic):
                return value.item()
            return value
    expected = [_describe(c) for c in constraints]
    expected = expected[0] if len(expected) == 1 else ", ".join(expected[:-1]) + " or " + expected[-1]
    if message is not None:
        raise InvalidParameterError(message.format(name=name, value=value, expected=expected))
    where = f" of {owner}" if owner else ""
    raise InvalidParameterError(f"The {name!r} parameter{where} must be {expected}. Got {value!r} instead.")


def check_parameters(table: Mapping, values: Mapping, owner: str | None = None) -> dict:
    """Check every entry of ``values`` against ``table``; return the checked values.

    A name missing from ``table`` raises ``TypeError`` (an unexpected keyword argument), as a
    Python function would.
    """
    checked = {}
    for name, value in values.items():
        if name not in table:
            where = f"{owner}() " if owner else ""
            raise TypeError(f"{where}got an unexpected keyword argument {name!r}; valid parameters are "
                            f"{sorted(table)}")
        checked[name] = check_parameter(name, value, table[name], owner)
    return checked


# the earlier names, kept for one release: "validate" is comparing against the reference
__getattr__ = module_getattr(__name__, {"validate_parameter": ("check_parameter", check_parameter),
                                        "validate_parameters": ("check_parameters", check_parameters)})
