r"""The set the generic solver projects onto by one eigendecomposition.

.. math::

    S = \{X = X^T:\ X \succeq 0\ (\text{if } \texttt{psd}),\ X\mathbf 1 = \beta\mathbf 1\ (\text{if }
    \beta \text{ given}),\ \operatorname{tr} X = t\ \text{or}\ \operatorname{tr} X \le \tau\}.

With ``e = 1/sqrt(n)`` and ``J = I - e e^T``, ``X 1 = beta 1`` means ``X = beta e e^T + J Y J``,
so the projection onto S is ``beta e e^T`` plus the projection of ``J M J`` (restricted to
``e^perp``) onto ``{Y >> 0, tr Y = t - beta}`` (or ``<= tau - beta``): its eigenvalues are shifted
by one threshold and clipped at zero, the eigenvectors kept (the projection onto the capped
simplex of the spectrum).  Without ``psd`` the set is affine and the projection a rank-two
correction.  The same decomposition gives ``min_{X in S} <G, X>`` in closed form, which the
certified bounds need.

The positive side of the spectrum is often small (the solution of a clustering relaxation has a
rank near the number of clusters): when the last projection kept few eigenvalues only the top
ones are computed (LAPACK ``syevr`` by index), with a fallback to the full decomposition when
they do not reach the threshold, so the projection is always exact.
"""

from __future__ import annotations

import numpy as np

from .._array_api import diagonal, eigh, namespace_of
from .._array_ops import frobenius as frobenius_norm  # ||M||_F without underflow or overflow
from ..linalg import PSDProjector, eigh_subset

__all__ = ["SpectralSet", "centred", "frobenius_norm"]


def centred(M: np.ndarray) -> np.ndarray:
    """``J M J`` for ``J = I - 11^T / n``: the symmetric M with its row and column sums removed."""
    if not isinstance(M, np.ndarray):  # an array of another library, on its device
        xp = namespace_of(M)
        r = xp.mean(M, axis=1)
        return M - r[:, None] - r[None, :] + xp.mean(r)
    r = M.mean(axis=1)  # M e / sqrt(n)
    return M - r[:, None] - r[None, :] + r.mean()


class SpectralSet:
    """``S`` of the module docstring.

    Parameters
    ----------
    n : int
        Order of X.
    psd : bool
        Whether ``X >> 0``.
    beta : float or None
        Common row sum, if fixed.
    trace : float or None
        Fixed trace.
    trace_max : float or None
        Upper bound on the trace (ignored when ``trace`` is given).
    partial : bool
        Compute only the needed side of the spectrum when it is small.
    """

    #: below this order a full eigendecomposition is as fast as a partial one
    min_partial_size = 300

    def __init__(self, n: int, *, psd: bool, beta=None, trace=None, trace_max=None, partial: bool = True):
        self.n, self.psd, self.beta = n, psd, beta
        self.trace = trace
        self.trace_max = None if trace is not None else trace_max
        self.partial = partial and n >= self.min_partial_size
        self._kept: int | None = None
        self._projector = PSDProjector(n, partial=partial) if psd else None
        self.eigendecompositions = 0

    @property
    def trivial(self) -> bool:
        """Whether S is the whole space of symmetric matrices."""
        return not self.psd and self.beta is None and self.trace is None and self.trace_max is None

    def _split(self, M: np.ndarray):
        """``(base, JMJ)``: the fixed part ``beta e e^T`` and the part left free by the row sums."""
        if self.beta is None:
            return None, M
        return self.beta / self.n, centred(M)

    def _rest(self, value):
        return None if value is None else value - (0.0 if self.beta is None else self.beta)

    def project(self, M: np.ndarray) -> np.ndarray:
        """The Frobenius projection of the symmetric ``M`` onto S."""
        base, MJ = self._split(M)
        trace, trace_max = self._rest(self.trace), self._rest(self.trace_max)
        if not self.psd:
            xp = namespace_of(MJ)
            P = MJ + 0.0  # a copy
            free = self.n - (self.beta is not None)  # dimension of the trace direction's span
            current = float(xp.sum(diagonal(P, xp)))
            target = trace if trace is not None else (min(current, trace_max) if trace_max is not None else None)
            if target is not None:
                P += (target - current) / free * _trace_direction(self.n, self.beta, P)
        elif trace is None and trace_max is None:
            self.eigendecompositions += 1
            P = self._projector(MJ)
        else:
            P = self._project_capped(MJ, trace, trace_max)
        return P if base is None else P + base

    def _deflated(self, MJ: np.ndarray, sign: float, thresholds: bool = True) -> np.ndarray:
        """``JMJ`` with ``e`` moved to the far end of the spectrum (``sign=-1``: bottom), beyond
        every eigenvalue (Gershgorin) and, with ``thresholds``, every threshold of the capped
        projection (which are in the units of X: without them the shift is in MJ's units alone,
        so that a tiny MJ keeps its eigenvalues' relative accuracy)."""
        if self.beta is None:
            return MJ
        xp = namespace_of(MJ)
        radius = float(xp.max(xp.sum(xp.abs(MJ), axis=1)))
        shift = radius + abs(self._rest(self.trace) or 0.0) + 1.0 if thresholds else 2.0 * radius
        return MJ + (sign * shift / self.n)

    def _project_capped(self, MJ, trace, trace_max):
        """Eigenvalues shifted by theta and clipped: ``sum max(w - theta, 0) = trace`` (or theta = 0
        when the clipped trace is below ``trace_max``)."""
        A = self._deflated(MJ, -1.0)
        n = self.n
        self.eigendecompositions += 1
        if self.partial and self._kept is not None and self._kept + max(8, self._kept // 4) < n // 4:
            m = self._kept + max(8, self._kept // 4)
            w, V = eigh_subset(A, (n - m, n - 1))
            theta = _threshold(w, trace, trace_max)
            if theta is not None and w[0] <= theta:
                return self._assemble(w, V, theta)
        w, V = eigh(A)
        if not isinstance(w, np.ndarray):  # another library: the eigenvalues stay on the device
            return self._assemble_kept(w, V, _device_threshold(w, trace, trace_max))
        return self._assemble(w, V, _threshold(w, trace, trace_max, complete=True))

    def _assemble(self, w, V, theta):
        keep = w > theta
        self._kept = int(keep.sum())
        Vk = V[:, keep] * np.sqrt(w[keep] - theta)
        return Vk @ Vk.T

    def _assemble_kept(self, w, V, theta):
        """:meth:`_assemble` for ascending eigenvalues on a device: the kept ones are the last."""
        xp = namespace_of(w)
        self._kept = kept = int(xp.sum(xp.astype(w > theta, xp.int64)))
        Vk = V[:, self.n - kept:] * xp.sqrt(w[self.n - kept:] - theta)[None, :]
        return Vk @ Vk.T

    def min_linear(self, G: np.ndarray, scale: float = 0.0) -> float:
        """``min_{X in S} <G, X>`` for a symmetric G (``-inf`` where S is unbounded along -G);
        ``scale`` is the size of the terms G was computed from, so that a part of G along the
        recession directions of S below ``1e-12`` of it is taken for rounding."""
        base, GJ = self._split(G)
        xp = namespace_of(G)
        fixed = 0.0 if base is None else base * float(xp.sum(G))
        trace, trace_max = self._rest(self.trace), self._rest(self.trace_max)
        if not self.psd:
            # a polyhedron: bounded below only when G has no part along its recession directions
            if frobenius_norm(self.unbounded_part(G)) > 1e-12 * max(frobenius_norm(G), scale):
                return -np.inf
            # the trace at its cap is a minimiser (G lowers the objective as the trace grows)
            vertex = SpectralSet(self.n, psd=False, beta=self.beta,
                                 trace=self.trace if self.trace is not None else self.trace_max)
            P = vertex.project(xp.zeros_like(G))
            return float(np.vdot(G, P)) if isinstance(G, np.ndarray) else float(xp.sum(G * P))
        deflated = self._deflated(GJ, +1.0, thresholds=False)
        if isinstance(G, np.ndarray):
            lowest = float(eigh_subset(deflated, (0, 0))[0][0])
        else:  # no eigenvalue by index off NumPy: all of them, on the device
            lowest = float(xp.linalg.eigvalsh(deflated)[0])
        self.eigendecompositions += 1
        if trace is not None:
            return fixed + trace * lowest
        if trace_max is not None:
            return fixed + trace_max * min(lowest, 0.0)
        return fixed if lowest >= 0 else -np.inf

    def unbounded_part(self, G: np.ndarray) -> np.ndarray:
        """For S without ``psd``: the part of the symmetric G along which ``<G, X>`` is unbounded
        below on S, the projection of G onto the directions of the affine hull of S (common row
        sums and trace fixed) plus, under a trace cap, the positive part along the trace
        direction; ``min_{X in S} <G - part, X>`` is finite."""
        n, capped = self.n, self.trace is None and self.trace_max is not None
        directions = SpectralSet(n, psd=False, beta=None if self.beta is None else 0.0,
                                 trace=None if self.trace is None and not capped else 0.0)
        part = directions.project(G)
        if capped:
            xp = namespace_of(G)
            d = _trace_direction(n, self.beta, G)
            part += max(float(xp.sum(G * d)) / float(xp.sum(d * d)), 0.0) * d
        return part

    def centre_family(self):
        """The constraints S puts on ``X = a 11^T + b I``, as lists of ``(coef_a, coef_b, lo, hi)``
        rows (for the interior point of :func:`cvxclust.generic.splitting.split`)."""
        n = self.n
        rows = []
        if self.psd:
            rows += [(0.0, 1.0, 0.0, np.inf), (float(n), 1.0, 0.0, np.inf)]
        if self.beta is not None:
            rows.append((float(n), 1.0, self.beta, self.beta))
        if self.trace is not None:
            rows.append((float(n), float(n), self.trace, self.trace))
        elif self.trace_max is not None:
            rows.append((float(n), float(n), -np.inf, self.trace_max))
        return rows


def _trace_direction(n: int, beta, like):
    """The direction of the trace in S's affine hull: ``I``, or ``J = I - 11^T / n`` with row sums."""
    if isinstance(like, np.ndarray):
        return np.eye(n) if beta is None else np.eye(n) - 1.0 / n
    xp = namespace_of(like)
    eye = xp.eye(n, dtype=like.dtype, device=like.device)
    return eye if beta is None else eye - 1.0 / n


def _device_threshold(w, trace, trace_max) -> float:
    """:func:`_threshold` (``complete``) of ascending eigenvalues ``w`` on a device: one number
    comes back to the host."""
    xp = namespace_of(w)
    if trace is None:
        if float(xp.sum(xp.maximum(w, 0.0))) <= trace_max:
            return 0.0
        trace = trace_max
    top = xp.flip(w)
    k = xp.arange(1, top.shape[0] + 1, dtype=w.dtype, device=w.device)
    thetas = (xp.cumulative_sum(top) - trace) / k
    valid = thetas < top
    # the largest k whose threshold lies below the k-th eigenvalue; none: a zero trace left
    index = xp.arange(top.shape[0], device=w.device)
    k_star = int(xp.max(xp.where(valid, index, xp.zeros_like(index) - 1)))
    return float(top[0]) if k_star < 0 else float(thetas[k_star])


def _threshold(w, trace, trace_max, complete: bool = False):
    """theta with ``sum max(w - theta, 0) = trace`` for ascending ``w`` (all of them when
    ``complete``, else the top of the spectrum); None when the top ones cannot decide it."""
    if trace is None:
        if np.maximum(w, 0).sum() <= trace_max:
            return 0.0
        trace = trace_max
    top = w[::-1]
    sums = np.cumsum(top) - trace
    k = np.arange(1, len(top) + 1)
    thetas = sums / k
    # the largest k whose threshold lies below the k-th eigenvalue
    valid = thetas < top
    if not valid.any():  # a zero trace left: nothing is kept
        return float(top[0]) if complete else None
    k_star = np.nonzero(valid)[0].max()
    theta = float(thetas[k_star])
    if not complete and k_star == len(top) - 1:
        return None  # every computed eigenvalue is kept: more may be
    return theta
