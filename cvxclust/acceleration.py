r"""Acceleration of fixed-point iterations: safeguarded type-II Anderson acceleration.

Many splitting methods (ADMM, Douglas-Rachford) are fixed-point iterations ``s <- T(s)`` of a
nonexpansive map whose plain iterates converge linearly at best.  Anderson acceleration
extrapolates from the last few steps,

.. math::

    s_{k+1} = T(s_k) - (\Delta S + \Delta G)\,\gamma_k,\qquad
    \gamma_k = \operatorname*{argmin}_\gamma \|g_k - \Delta G\,\gamma\|_2,

with ``g_k = T(s_k) - s_k`` the fixed-point residual and ``Delta S``, ``Delta G`` the
differences of the last ``memory`` states and residuals (H. F. Walker, P. Ni, "Anderson
Acceleration for Fixed-Point Iterations", SIAM Journal on Numerical Analysis, 2011).  An
extrapolated step is not guaranteed to make progress, so the safeguard of SCS 3
(B. O'Donoghue, "Operator Splitting for a Homogeneous Embedding of the Linear Complementarity
Problem", SIAM Journal on Optimization, 2021) rejects a step after which the residual grows by
more than a factor ``safeguard``: the plain ``T`` of the previous state replaces it and the
memory restarts.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from ._array_api import Arrays, to_numpy
from .parameters import Interval, check_parameter

__all__ = ["AndersonAccelerator"]


class AndersonAccelerator:
    """Safeguarded type-II Anderson acceleration of a fixed-point map ``s -> T(s)`` on flat arrays.

    Call :meth:`step` once per evaluation of the map with the state ``s`` and its image
    ``T(s)``; it returns the next state.  The differences live in a ring buffer with their Gram
    matrix updated one row at a time, so a step costs O(memory * size).

    Parameters
    ----------
    memory : int
        Number of past differences used; 0 returns ``T(s)`` unchanged (the plain iteration).
    safeguard : float
        Largest accepted growth factor of the residual ``||T(s) - s||`` at an extrapolated state.
    size : int
        Length of the flat state.
    arrays : Arrays, optional
        The namespace, device and dtype of the states (:func:`cvxclust._array_api.check_arrays`)
        where they are not NumPy's: the differences are kept there, and only the small
        least-squares system of ``gamma`` comes to the host (a few numbers a step).

    Examples
    --------
    >>> import numpy as np
    >>> M = np.array([[0.9, 0.05], [0.05, 0.8]])   # a contraction, fixed point 0
    >>> accelerator, s = AndersonAccelerator(2, 2.0, 2), np.ones(2)
    >>> for _ in range(6):
    ...     s = accelerator.step(s, M @ s)
    >>> bool(np.linalg.norm(s) < 1e-10)
    True
    """

    def __init__(self, memory: int, safeguard: float, size: int, arrays: Arrays | None = None):
        owner = type(self).__name__
        self.memory = check_parameter("memory", memory, [Interval(Integral, 0, None, closed="left")], owner)
        self.safeguard = check_parameter("safeguard", safeguard, [Interval(Real, 0, None, closed="neither")],
                                            owner)
        size = check_parameter("size", size, [Interval(Integral, 1, None, closed="left")], owner)
        # the differences live where the states do; the small least-squares system on the host
        self.arrays = None if arrays is None or arrays.numpy else arrays
        if self.memory:
            if self.arrays is None:
                self.dT = np.empty((self.memory, size))  # differences of T(s) = dS + dG
                self.dG = np.empty((self.memory, size))
            else:
                xp = self.arrays.xp
                self.dT, self.dG = (xp.zeros((self.memory, size), dtype=self.arrays.dtype, device=self.arrays.device)
                                    for _ in range(2))
            self.gram = np.empty((self.memory, self.memory))
            self.products = np.empty(self.memory)  # dG @ g of the last call, slot by slot
        self.reset()

    def reset(self) -> None:
        """Forget the stored differences (for instance after the map itself has changed)."""
        self.count = 0  # differences stored
        self.slot = 0  # next slot of the ring buffer
        self.last = None  # (s, g) of the previous call
        self.fallback = None  # T(s) of the previous call, when its output was extrapolated
        self.last_norm = np.inf

    def step(self, s: np.ndarray, t: np.ndarray) -> np.ndarray:
        """The next state from the flat state ``s`` and its image ``t = T(s)`` (neither is modified)."""
        if self.memory == 0:
            return t
        device = self.arrays
        g = t - s
        norm = float(np.linalg.norm(g) if device is None else device.xp.linalg.vector_norm(g))
        if self.fallback is not None and norm > self.safeguard * self.last_norm:
            fallback = self.fallback
            self.reset()
            return fallback
        if self.last is not None:
            k, q = self.slot, min(self.count + 1, self.memory)
            # dT = dS + dG from the previous state, which the caller has replaced rather than
            # changed (t, which may become the next state, is not kept)
            if device is None:
                np.subtract(g, self.last[1], out=self.dG[k])
                np.subtract(s, self.last[0], out=self.dT[k])
                self.dT[k] += self.dG[k]
                row, product = self.dG[:q] @ self.dG[k], self.dG[k] @ g
            else:  # one transfer of q + 1 numbers to the host
                self.dG[k, ...] = g - self.last[1]
                self.dT[k, ...] = (s - self.last[0]) + self.dG[k, ...]
                figures = to_numpy(device.xp.concat([self.dG[:q, ...] @ self.dG[k, ...],
                                                     device.xp.reshape(self.dG[k, ...] @ g, (1,))]))
                row, product = figures[:q], figures[q]
            self.gram[k, :q] = row
            self.gram[:q, k] = row
            # dG_j @ g = dG_j @ g_prev + dG_j @ dG_k for the slots kept, since g = g_prev + dG_k
            self.products[:q] += row
            self.products[k] = product
            self.count, self.slot = q, (k + 1) % self.memory
        self.last, self.last_norm = (s, g), norm
        if self.count == 0:
            self.fallback = None
            return t
        q = self.count
        gram = self.gram[:q, :q].copy()
        # a Tikhonov term relative to the differences' scale keeps gamma bounded
        gram[np.diag_indices(q)] += 1e-10 * np.trace(gram) + 1e-300
        gamma = np.linalg.solve(gram, self.products[:q])
        self.fallback = t
        if device is not None:
            return t - device.asarray(gamma) @ self.dT[:q, ...]
        return t - gamma @ self.dT[:q]
