r"""Certificates of the generic solver (:class:`~cvxclust.generic.GenericSolver`).

**The bound** (:func:`bound_at`).  Dualising the box with ``Lambda`` and the rows with ``y``
and keeping the set S of :mod:`cvxclust.generic.spectral_set` gives, for *every* multiplier
(clipped to the signs the finite bounds allow),

.. math::

    f^\star \ \ge\ \min_{X \in S}\big(f(X) - \langle\Lambda + A^*y, X\rangle\big)
              + \min_{L \le W \le U}\langle\Lambda, W\rangle
              + \min_{lo \le w \le hi}\langle y, w\rangle,

whose first term is a projection onto S (``c > 0``) or an extreme eigenvalue (``c = 0``, when S
bounds the trace; otherwise it is finite only where ``C - Lambda - A^* y`` is p.s.d. and the
solver says that no bound is available).

**Infeasible constraints** (:func:`infeasibility_test`).  Without the objective the same bound is
a lower bound on the value 0 of the feasibility problem, and it is positively homogeneous in the
multipliers, so a positive value at any multipliers proves that no X meets the constraints.
Where none does, the ADMM's multipliers diverge along such a direction (Banjac et al. 2019):
every ``INFEASIBILITY_EVERY``-th check evaluates the bound without the objective at the move of
the multipliers since the previous such check, and a positive value (after the same rounding
allowance) stops the solve with status ``"infeasible"``.

The other answers that end a solve without a gap, each with what proves it:

* **Contradicting rows** (:func:`contradicting_rows`): two rows whose coefficients are exactly
  parallel and whose bounds leave no common value (``X[0, 0] + X[1, 1] == 1`` and ``== 2``).
  The multipliers ``+-1 / a`` of the two rows cancel in ``A^* y`` and leave a positive bound:
  infeasibility is certified before any iteration.
* **A recession direction** (:func:`recession`): for a linear objective (``c = 0``), a direction
  D with ``D >> 0`` (under ``X >> 0``), ``A(D)`` inside the recession cone of ``[lo, hi]``, D
  inside that of the box, and ``<C, D> < 0``, along which a feasible point improves without
  limit.  The ADMM iterates diverge along such a direction, and their move between two tests
  converges to one (Banjac et al. 2019), as does the iterate over its norm: the test
  (:func:`unboundedness_test`) accepts the move, or the iterate, when its relative violations
  of the homogeneous constraints are below ``RECESSION_TOL`` and its relative slope is below
  minus that tolerance, and the test before passed too, in nearly the same direction.  It runs
  only where no finite bound has been found (a finite bound proves the objective bounded).  As
  for a conic solver's certificate of dual infeasibility, the direction proves the objective
  unbounded *if* some point is feasible: where the constraints also contradict each other in a
  way the infeasibility test has not yet seen, the problem is both (Clarabel too reports it
  unbounded).
* **The unconstrained minimiser** (:func:`unconstrained_optimum`): with ``c > 0`` the minimiser
  ``-C / (2c)`` of the objective alone; where it meets every constraint exactly it is the
  optimum, and its objective is its own bound (the bound of the iterates carries a rounding
  allowance of ``n eps`` times the objective's terms, which at a zero optimum is larger than
  ``tol`` times the gap floor, so that this optimum would otherwise never be certified).

Reference: G. Banjac, P. Goulart, B. Stellato, S. Boyd, "Infeasibility detection in the
alternating direction method of multipliers for convex optimization", Journal of Optimization
Theory and Applications, 2019.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import scipy.sparse as sp

from .._array_api import to_numpy
from .spectral_set import frobenius_norm
from .standard_form import StandardForm

__all__ = ["INFEASIBILITY_EVERY", "RECESSION_TOL", "bound_at", "contradicting_rows", "infeasibility_test",
           "optimum_certificate", "recession", "unboundedness_test", "unconstrained_optimum"]

#: checks between two tests of infeasibility and of unboundedness (a test costs an extreme eigenvalue)
INFEASIBILITY_EVERY = 5

#: relative violation of the homogeneous constraints, and relative slope, a recession direction must pass
RECESSION_TOL = 1e-6
#: the least cosine between the moves of two consecutive tests for a recession direction
_SAME_DIRECTION = 0.99
_TINY = 1e-300
_EPS = np.finfo(float).eps


def bound_at(state, Lam, y, objective: bool = True) -> float:
    """The bound of :mod:`cvxclust.generic.solver` at the box multiplier ``Lam`` and the row
    multipliers ``y`` (of the rows left by the splitting), for the minimisation form of the
    solver's ``state``.  Without the objective it bounds the value 0 of the feasibility problem,
    so that a positive value certifies that no X meets the constraints (it is positively
    homogeneous in the multipliers: its supremum is then infinite)."""
    form, split = state.form, state.split
    arrays = getattr(state, "arrays", None)
    xp = np if arrays is None or arrays.numpy else arrays.xp
    C, c = (form.C, form.c) if objective else (xp.zeros_like(form.C), 0.0)
    # the bound is the sum of these terms; their sizes bound its rounding error, which runaway
    # multipliers would otherwise let cross the optimal value
    terms = [form.constant if objective else 0.0]
    M = xp.zeros_like(C)
    if split.A.shape[0] and xp is not np:  # on a device: the rows as the Newton steps' dual holds them
        row_terms, M = _device_row_terms(state, y, M)
        terms.append(row_terms)
    elif split.A.shape[0]:
        lo, hi = split.lo, split.hi
        y = np.where(((y > 0) & ~np.isfinite(lo)) | ((y < 0) & ~np.isfinite(hi)), 0.0, y)
        terms.append(np.where(y > 0, y * np.where(np.isfinite(lo), lo, 0.0), 0.0)
                     + np.where(y < 0, y * np.where(np.isfinite(hi), hi, 0.0), 0.0))
        M += (split.A.T @ y).reshape(form.n, form.n)
    if Lam is not None:
        if c == 0 and not state.spectral.psd:
            # a linear objective on a polyhedral S is bounded below only when G has no part
            # along S's recession directions, which the ADMM multiplier meets only in the
            # limit: the box multiplier takes that part (any multiplier gives a valid bound)
            Lam = Lam + state.spectral.unbounded_part(C - M - Lam)
        raw = Lam
        if xp is not np:  # on a device: the box's bounds as they are held there
            Lam, box_terms = _device_box_terms(state, Lam)
            terms += box_terms
            M += Lam
            Lam = None
    if Lam is not None:
        Lam = np.where(((Lam > 0) & ~state.finite_L) | ((Lam < 0) & ~state.finite_U), 0.0, Lam)
        if split.ties is not None:  # a tied group's support term takes its multipliers' sum
            tied, group_terms = split.ties.support(raw)
            Lam = np.where(split.ties.mask(form.n), 0.0, Lam)
            terms.append(group_terms)
        terms += [np.maximum(Lam, 0.0) * state.L0, np.minimum(Lam, 0.0) * state.U0]
        if split.ties is not None:
            Lam = Lam + tied
        M += Lam
    G = C - M
    spectral, norm = state.spectral, float(np.linalg.norm(G)) if xp is np else float(xp.linalg.vector_norm(G))
    if c > 0:
        X = spectral.project(-G / (2.0 * c))
        terms += [c * X * X, G * X]
        # X is accurate to eps times the point projected, and G multiplies its error
        reach = norm / (2.0 * c)
    else:
        terms.append(spectral.min_linear(G, scale=max(frobenius_norm(C), frobenius_norm(M))))
        # an eigenvalue is accurate to eps times its matrix's norm, times the trace it scales
        reach = max(abs(spectral.trace or 0.0), abs(spectral.trace_max or 0.0), abs(spectral.beta or 0.0))
    value = sum(_sum(term, xp) for term in terms)
    size = sum(_sum(abs(term), xp) for term in terms) + norm * reach
    # the allowance holds for float64; it is scaled by the dtype's unit roundoff (looser in float32)
    return value - 8.0 * form.n * (_EPS if arrays is None else arrays.eps) * size


def _sum(term, xp) -> float:
    """The sum of a term of :func:`bound_at` (a number, a NumPy array or an array of ``xp``)."""
    return float(np.sum(term)) if xp is np or isinstance(term, (float, int, np.ndarray, np.generic)) \
        else float(xp.sum(term))


def _device_row_terms(state, y, M):
    """The rows' support terms ``y lo`` (``y > 0``) and ``y hi`` (``y < 0``) over the finite
    sides, and ``M + A^* y``, on the device, by the rows of ``state.dual``
    (:class:`~cvxclust.generic.newton_device.DeviceRows`)."""
    xp, arrays, split = state.arrays.xp, state.arrays, state.split
    lo, hi = (arrays.asarray(np.where(np.isfinite(v), v, 0.0)) for v in (split.lo, split.hi))
    has_lo, has_hi = (arrays.asarray(np.isfinite(v) * 1.0) > 0.5 for v in (split.lo, split.hi))
    y = xp.where(((y > 0) & ~has_lo) | ((y < 0) & ~has_hi), 0.0, y)
    return xp.where(y > 0, y * lo, 0.0) + xp.where(y < 0, y * hi, 0.0), state.dual.rows.adjoint(y, M)


def _device_box_terms(state, Lam):
    """``Lam`` clipped to the signs the finite bounds allow, and the box's support terms
    ``max(Lam, 0) L + min(Lam, 0) U`` over the finite bounds, on the device (a compact bound as
    its two numbers)."""
    xp, form = state.arrays.xp, state.form

    def signed(lam, low, high):  # no multiplier of a side without a finite bound
        return xp.where(((lam > 0) & (low == -np.inf)) | ((lam < 0) & (high == np.inf)), 0.0, lam)

    Lam = form.L.entries(signed, Lam, form.U)
    terms = [state.L0.entries(lambda lam, low: xp.maximum(lam, 0.0) * low, Lam),
             state.U0.entries(lambda lam, high: xp.minimum(lam, 0.0) * high, Lam)]
    return Lam, terms


def infeasibility_test(state, Lam, y) -> dict | None:
    """The feasibility bound (:func:`bound_at` without the objective) along the move of the
    multipliers ``Lam`` and ``y`` since the previous test, as ``extras["infeasibility"]`` reports
    it (None at the first test).  Where the constraints are infeasible the ADMM's multipliers
    diverge along a direction on which it is positive (Banjac et al. 2019)."""
    previous, state.last_multipliers = state.last_multipliers, (Lam, y)
    if previous is None:
        return None
    dLam = None if Lam is None or previous[0] is None else Lam - previous[0]
    dy = y - previous[1]
    return {"bound": bound_at(state, dLam, dy, objective=False), "box_multiplier": dLam, "row_multipliers": dy}


def unboundedness_test(state) -> dict | None:
    """:func:`recession` at the move of the iterate ``state.Z`` since the previous test, or else
    at the iterate itself (where the penalty shrinks, the iterates grow geometrically and their
    moves mix directions, but the iterate over its norm still tends to the direction), where the
    test before passed too, in nearly the same direction (cosine at least 0.99): the iterates of
    an unbounded problem keep their direction, those of a bounded one converge; None otherwise."""
    Z, form = state.Z, state.form
    if not isinstance(Z, np.ndarray):
        # on a device: the test runs on the host (only where no finite bound has been found, a
        # linear objective whose iterates may run off to infinity)
        Z, form = to_numpy(Z), form.host
    previous, state.last_Z = state.last_Z, Z
    found = None if previous is None else (recession(form, Z - previous) or recession(form, Z))
    candidate, state.recession_candidate = state.recession_candidate, found
    if found is None or candidate is None or np.vdot(found["direction"], candidate["direction"]) < _SAME_DIRECTION:
        return None
    return found


def contradicting_rows(form: StandardForm) -> dict | None:
    """Two rows of ``form`` with exactly parallel coefficients and disjoint ranges, as the
    certificate ``extras["infeasibility"]`` reports: ``rows`` (their indices among the rows of the
    standard form), ``row_multipliers`` (over those rows: ``+-1`` over each row's first
    coefficient, so that ``A^* y = 0``), ``box_multiplier`` None, ``bound`` (the width of the gap
    between the ranges, the value of the bound at these multipliers) and ``note`` (what they
    say); None when no two rows contradict each other that way."""
    A = sp.csr_matrix(form.A)
    groups: dict = {}
    for r in range(A.shape[0]):
        start, stop = A.indptr[r], A.indptr[r + 1]
        if start == stop:
            continue
        cols, data = A.indices[start:stop], A.data[start:stop]
        order = np.argsort(cols, kind="stable")
        cols, data = cols[order], data[order]
        pivot = float(data[0])
        key = (cols.tobytes(), np.round(data / pivot, 12).tobytes())
        groups.setdefault(key, []).append((r, pivot, data))
    for members in groups.values():
        if len(members) < 2:
            continue
        r0, p0, d0 = members[0]
        lows, highs = [], []
        for r, pivot, data in members:
            if np.abs(data / pivot - d0 / p0).max() > 4 * _EPS * np.abs(d0 / p0).max():
                continue  # parallel only to rounding: not a proof
            low, high = form.lo[r] / pivot, form.hi[r] / pivot
            if pivot < 0:
                low, high = high, low
            lows.append((low, r, pivot))
            highs.append((high, r, pivot))
        (low, i, p_i), (high, j, p_j) = max(lows), min(highs)
        if i == j or not low - high > 1e-12 * max(abs(low), abs(high), 1.0):
            continue
        y = np.zeros(form.m)
        y[i], y[j] = 1.0 / p_i, -1.0 / p_j
        return {"bound": float(low - high), "rows": (int(i), int(j)), "row_multipliers": y, "box_multiplier": None,
                "note": f"rows {i} and {j} of the standard form have parallel coefficients a; row {i} needs "
                        f"<a, X> >= {low:.6g} and row {j} needs <a, X> <= {high:.6g}"}
    return None


def recession(form: StandardForm, D: np.ndarray, tol: float = RECESSION_TOL) -> dict | None:
    """The certificate ``extras["unboundedness"]`` reports when the move ``D`` of the iterates is a
    recession direction along which the objective improves (module docstring), else None:
    ``direction`` (D over its Frobenius norm), ``slope`` (the change of the problem's own
    objective along it per unit step: negative when minimising, positive when maximising),
    ``residuals`` (its relative violations of the homogeneous constraints, as
    :meth:`~cvxclust.generic.StandardForm.residuals` computes them) and ``tol``.  Only for a linear
    objective (``c = 0``): a Frobenius term bounds the objective below."""
    size = frobenius_norm(D)
    if form.c > 0 or not np.isfinite(size) or size == 0:
        return None
    D = (D + D.T) / (2.0 * size)
    slope = float(np.vdot(form.C, D))
    if not slope < -tol * max(frobenius_norm(form.C), _TINY):
        return None
    homogeneous = replace(form, L=np.where(np.isfinite(form.L), 0.0, -np.inf),
                          U=np.where(np.isfinite(form.U), 0.0, np.inf),
                          lo=np.where(np.isfinite(form.lo), 0.0, -np.inf),
                          hi=np.where(np.isfinite(form.hi), 0.0, np.inf))
    residuals = homogeneous.residuals(D, spectrum=False)
    if max(residuals.values(), default=0.0) > tol:
        return None
    if form.psd:
        residuals.update(homogeneous.residuals(D))
        if residuals["psd"] > tol:
            return None
    return {"direction": D, "slope": slope if form.sense == "minimize" else -slope, "residuals": residuals,
            "tol": tol}


def optimum_certificate(form: StandardForm, X: np.ndarray) -> tuple[np.ndarray, float, float]:
    """``(X, bound, objective)`` at the minimiser ``X`` of :func:`unconstrained_optimum`: its own
    objective bounds the optimal value, less ``c ||X - X*||^2 <= c (eps ||X||)^2`` for the rounding
    of ``-C / (2c)`` to X (up to the rounding of the objective's evaluation, which every reported
    objective has); in the problem's sense."""
    objective = form.objective(X)
    size = float(np.linalg.norm(X)) if isinstance(X, np.ndarray) else float(form.xp.linalg.vector_norm(X))
    slack = form.c * (_EPS * size) ** 2
    return X, objective - slack if form.sense == "minimize" else objective + slack, objective


def unconstrained_optimum(form: StandardForm) -> np.ndarray | None:
    """The minimiser ``-C / (2c)`` of the objective alone where ``c > 0`` and it meets every
    constraint of ``form`` exactly (all its residuals 0), else None: then it is the optimum."""
    if form.c <= 0:
        return None
    X = -form.C / (2.0 * form.c)
    if not np.isfinite(X).all() or max(form.residuals(X, spectrum=False).values(), default=0.0) > 0:
        return None
    if form.psd and np.linalg.eigvalsh(X)[0] < 0:
        return None
    return X
