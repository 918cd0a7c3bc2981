"""``cvxclust.acceleration``: safeguarded type-II Anderson acceleration, against the textbook
least-squares formula, on linear fixed-point maps, and its safeguard."""

from __future__ import annotations

import numpy as np
import pytest

from cvxclust.acceleration import AndersonAccelerator
from cvxclust.parameters import InvalidParameterError


def contraction(n: int, seed: int = 0, radius: float = 0.95):
    """An affine map s -> M s + b with spectral radius ``radius`` and its fixed point."""
    rng = np.random.default_rng(seed)
    Q = np.linalg.qr(rng.standard_normal((n, n)))[0]
    M = (Q * np.linspace(-radius, radius, n)) @ Q.T
    b = rng.standard_normal(n)
    return M, b, np.linalg.solve(np.eye(n) - M, b)


def test_memory_zero_is_the_plain_iteration():
    M, b, _ = contraction(5)
    accelerator = AndersonAccelerator(0, 2.0, 5)
    s = np.ones(5)
    for _ in range(3):
        t = M @ s + b
        assert accelerator.step(s, t) is t
        s = t


@pytest.mark.parametrize("memory", [1, 3])
def test_step_is_the_least_squares_extrapolation(memory):
    """Every step equals T(s) - (dS + dG) gamma with gamma = argmin ||g - dG gamma|| over the last
    ``memory`` differences, computed from scratch (the ring buffer wraps around here)."""
    n = 8
    M, b, _ = contraction(n, seed=1, radius=0.7)
    accelerator = AndersonAccelerator(memory, 1e9, n)  # no safeguard rejections
    states, residuals = [], []
    s = np.random.default_rng(2).standard_normal(n)
    for k in range(2 * memory + 3):
        t = M @ s + b
        s_copy, t_copy = s.copy(), t.copy()
        out = accelerator.step(s, t)
        np.testing.assert_array_equal(s, s_copy)  # the inputs are not modified
        np.testing.assert_array_equal(t, t_copy)
        states.append(s.copy())
        residuals.append(t - s)
        q = min(k, memory)
        if q == 0:
            expected = t
        else:
            dS = np.diff(np.array(states[-q - 1:]), axis=0).T
            dG = np.diff(np.array(residuals[-q - 1:]), axis=0).T
            gamma = np.linalg.lstsq(dG, residuals[-1], rcond=None)[0]
            expected = t - (dS + dG) @ gamma
        np.testing.assert_allclose(out, expected, rtol=1e-6, atol=1e-9)
        s = out


def test_accelerates_a_linear_contraction():
    """On an affine map with spectral radius 0.95 the plain iteration needs hundreds of steps
    to 1e-8; with a memory of the dimension, Anderson acceleration (equivalent to GMRES here)
    reaches the fixed point in a few more steps than the dimension."""
    n = 6
    M, b, fixed = contraction(n)

    def steps(memory):
        accelerator = AndersonAccelerator(memory, 2.0, n)
        s = np.zeros(n)
        for k in range(1, 2000):
            s = accelerator.step(s, M @ s + b)
            if np.linalg.norm(s - fixed) <= 1e-8 * np.linalg.norm(fixed):
                return k
        return np.inf

    plain, accelerated = steps(0), steps(n)
    assert plain > 200
    assert accelerated <= 2 * n + 2


def test_safeguard_rejects_a_growing_residual_and_restarts():
    """When the residual at an extrapolated state exceeds ``safeguard`` times the previous one,
    the plain image of the previous state is returned and the memory restarts."""
    n = 4
    accelerator = AndersonAccelerator(3, 2.0, n)
    rng = np.random.default_rng(0)
    s0 = rng.standard_normal(n)
    accelerator.step(s0, 0.5 * s0)
    s1 = rng.standard_normal(n)
    t1 = 0.5 * s1
    extrapolated = accelerator.step(s1, t1)
    assert accelerator.count == 1 and not np.allclose(extrapolated, t1)
    # a state whose residual is far larger than ||t1 - s1||
    s2 = 100.0 * rng.standard_normal(n)
    out = accelerator.step(s2, np.zeros(n))
    np.testing.assert_array_equal(out, t1)
    assert accelerator.count == 0 and accelerator.last is None


def test_reset_forgets_the_memory():
    n = 3
    accelerator = AndersonAccelerator(2, 2.0, n)
    s = np.ones(n)
    accelerator.step(s, 0.5 * s)
    accelerator.step(0.5 * s, 0.25 * s)
    accelerator.reset()
    t = 0.1 * s
    assert accelerator.step(s, t) is t  # no differences stored: the plain step


@pytest.mark.parametrize("kwargs, name", [
    ({"memory": -1}, "memory"), ({"memory": 2.5}, "memory"), ({"memory": True}, "memory"),
    ({"safeguard": 0.0}, "safeguard"), ({"safeguard": np.nan}, "safeguard"),
    ({"size": 0}, "size"),
])
def test_bad_parameters_name_the_parameter(kwargs, name):
    args = {"memory": 2, "safeguard": 2.0, "size": 3, **kwargs}
    with pytest.raises(InvalidParameterError, match=name):
        AndersonAccelerator(**args)
