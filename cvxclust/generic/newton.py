r"""The semismooth Newton-CG method of Qi and Sun for the problems of :func:`cvxclust.solve` with a
squared Frobenius objective whose constraints are ``X >> 0`` and affine equalities only.

A standard form ``min c ||X||^2 + <C, X> + const`` with ``c > 0`` is ``c ||X - T||^2 - c ||T||^2
+ const``, ``T = -C / (2c)``.  Where its only constraints besides ``X >> 0`` are equalities,
rows ``A(X) = b`` with ``lo == hi`` and entries fixed by ``L == U`` (each fixed ``X_ij``,
``i <= j``, a row ``<(E_ij + E_ji) / 2, X> = L_ij``), the Lagrangian dual is, with
``W(y) = T + A^*(y) / (2c)``,

.. math::

    \theta(y) = b^\top y - c\,\|\Pi_+(W(y))\|_F^2 + \text{const}\ \le\ \text{optimum}

for *every* y (weak duality: the minimum over ``X >> 0`` of the Lagrangian is attained at
``X = Pi_+(W(y))``).  ``theta`` is concave and once differentiable, with gradient
``b - A(Pi_+(W(y)))`` and, for each y, the element ``V d = A(J(A^* d)) / (2c)`` of its generalized
Hessian, ``J(H) = Q (Omega o (Q^T H Q)) Q^T`` for the eigendecomposition ``W = Q diag(lambda) Q^T``
and ``Omega`` the first divided differences of ``max(0, .)`` at the eigenvalues (1 between two
positive ones, 0 between two others, ``lambda_i / (lambda_i - lambda_j)`` between a positive and
another).  Each Newton step solves ``(V + eps I) d = grad`` by conjugate gradients with the
diagonal preconditioner of Qi and Sun, then searches along d with Armijo's rule on ``theta``: one
full eigendecomposition per trial point, one per step where the unit step is taken, as it is
near the optimum (the method converges quadratically where the constraints are nondegenerate).
``J`` is applied on the smaller side of the spectrum.  Without ``X >> 0`` the projection is the
identity and ``J`` too.

**Certificate.**  ``theta(y)`` bounds the optimum at every iterate.  ``X = Pi_+(W(y))`` is
p.s.d. and violates the equalities by the gradient; where the only constraints are fixed,
positive diagonal entries (the nearest correlation matrix), ``D^{-1/2} X D^{-1/2}`` with
``D = Diag(X_ii / target_i)`` keeps ``X`` p.s.d. and makes it exactly feasible, and that point is
returned; otherwise X is returned with its residuals, which the core holds to ``residual_tol``.

**On any array API device** (``device=``): the same iteration on the device's arrays,
:mod:`cvxclust.generic.newton_device` (the rows held without a sparse matrix; others NumPy only).

H. Qi, D. Sun, "A Quadratically Convergent Newton Method for Computing the Nearest Correlation
Matrix", SIAM Journal on Matrix Analysis and Applications 28(2), 2006.
"""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg

from ..parameters import Interval
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param, SolverState
from .device import arrays_for, shared_device_form
from .restoration import scale_to_diagonal
from .spectral_set import centred
from .standard_form import StandardForm
from . import splitting

__all__ = ["EqualityDual", "GenericNewton", "equality_form", "equality_reason"]


@dataclass
class DualPoint:
    """``theta`` and its pieces at one multiplier ``y`` (:meth:`EqualityDual.evaluate`)."""

    y: np.ndarray
    #: ``theta(y)`` of the minimisation (a lower bound on its optimum)
    value: float
    gradient: np.ndarray
    #: ``Pi_+(W(y))``
    X: np.ndarray
    #: eigenvalues and eigenvectors of ``W(y)`` (None without the cone)
    w: np.ndarray | None = None
    Q: np.ndarray | None = None
    #: the number of positive eigenvalues (on a device, where they are the last of ``w``)
    positive: int | None = None


class EqualityDual:
    r"""The dual ``theta`` of the module docstring for a standard form of the kind (see
    :func:`equality_form`): its value, gradient, generalized Hessian and preconditioner.

    The multiplier ``y`` holds one entry per row of ``A`` then one per fixed entry ``X_ij``
    (``i <= j``, the pairs ``i``, ``j``).
    """

    def __init__(self, form: StandardForm):
        n = form.n
        self.form = form
        self.n, self.c, self.psd, self.constant = n, form.c, form.psd, form.constant
        self.T = -form.C / (2.0 * form.c) if form.c > 0 else np.zeros((n, n))
        self.A = sp.csr_matrix(form.A)
        self.m = form.m
        fixed = np.triu(np.isfinite(form.L) & (form.L == form.U))
        self.i, self.j = np.nonzero(fixed)
        self.b = np.concatenate([form.lo, form.L[self.i, self.j]])
        # <A_r, A_r> of the entry rows: 1 on the diagonal, 1/2 off it
        self.entry_weight = np.where(self.i == self.j, 1.0, 0.5)
        # the rows' entries squared, for the preconditioner of every Newton step
        self.row_squares = self.A.multiply(self.A).tocsr()
        self.eigh_count = 0
        #: project W onto the matrices with zero row sums before the cone (:meth:`deflate_row_sums`)
        self.deflate = False

    def deflate_row_sums(self) -> None:
        """Take ``X 1 = 0`` as a constraint of the cone, where the equalities imply it (a row
        ``<11^T, X> = 0`` under ``X >> 0``, as in the minimum-bisection SDP, which then has no
        strictly feasible point): ``X = Pi_+(J W J)``, ``J = I - 11^T / n``, and the generalized
        Jacobian is composed with the same congruence.  The row stays, always met."""
        self.deflate = True

    def retarget(self, T: np.ndarray, weight: float) -> None:
        """Make this the dual of ``min weight ||X - T||^2`` (plus ``constant``) over the same
        constraints: the subproblem of a proximal point or augmented Lagrangian method
        (:mod:`cvxclust.generic.alm`), whose target and weight change from one subproblem to the
        next while the rows stay."""
        self.T, self.c = T, float(weight)

    @property
    def size(self) -> int:
        """Number of multipliers."""
        return self.b.size

    def apply(self, X: np.ndarray) -> np.ndarray:
        """``A(X)`` for a symmetric X: the rows, then the fixed entries."""
        rows = self.A @ X.ravel() if self.m else np.empty(0)
        return np.concatenate([rows, X[self.i, self.j]])

    def adjoint(self, y: np.ndarray) -> np.ndarray:
        """``A^*(y)``, a symmetric matrix."""
        n, m = self.n, self.m
        M = (self.A.T @ y[:m]).reshape(n, n) if m else np.zeros((n, n))
        half = 0.5 * y[m:]
        M[self.i, self.j] += half  # the pairs are distinct, so each statement adds once per pair
        M[self.j, self.i] += half
        return M

    def start(self) -> np.ndarray:
        """The multiplier of the solution without the cone: ``A(T + A^*(y) / (2c)) = b``, by
        conjugate gradients on ``A A^*`` (exact and diagonal where only entries are fixed)."""
        rhs = 2.0 * self.c * (self.b - self.apply(self.T))
        diagonal = np.concatenate([np.asarray(self.row_squares.sum(axis=1)).ravel(), self.entry_weight])
        if not self.m:
            return rhs / diagonal
        gram = LinearOperator((self.size, self.size), matvec=lambda d: self.apply(self.adjoint(d)), dtype=float)
        y, _ = cg(gram, rhs, rtol=1e-10, maxiter=500, M=LinearOperator(gram.shape, matvec=lambda x: x / diagonal,
                                                                      dtype=float))
        return y

    def evaluate(self, y: np.ndarray) -> DualPoint:
        """``theta``, its gradient and ``Pi_+(W(y))`` at y (one eigendecomposition with the cone)."""
        W = self.adjoint(y)
        W *= 1.0 / (2.0 * self.c)
        W += self.T
        if self.deflate:
            W = centred(W)
        w = Q = None
        if self.psd:
            w, Q = np.linalg.eigh(W)
            self.eigh_count += 1
            positive = w > 0
            if positive.sum() <= self.n // 2:
                V = Q[:, positive] * np.sqrt(w[positive])
                X = V @ V.T
            else:
                V = Q[:, ~positive] * np.sqrt(-w[~positive])
                X = W + V @ V.T
        else:
            X = W
        value = float(self.b @ y) - self.c * float(np.vdot(X, X)) + self.constant
        return DualPoint(y, value, self.b - self.apply(X), X, w, Q)

    def _sides(self, point: DualPoint):
        """``(Q_S, Q, weights, complement)``: the eigenvectors of the smaller side S of the
        spectrum, all of them ordered S first, the divided differences between S and the rest,
        and whether S is the non-positive side (J is then ``H`` minus the product)."""
        w, Q = point.w, point.Q
        positive = w > 0
        complement = positive.sum() > self.n // 2
        small = ~positive if complement else positive
        order = np.r_[np.flatnonzero(small), np.flatnonzero(~small)]
        ws, wo = w[small], w[~small]
        with np.errstate(divide="ignore", invalid="ignore"):
            if complement:  # 1 - Omega between a non-positive (S) and a positive eigenvalue: -lambda_S / (l_o - l_S)
                omega = -ws[:, None] / (wo[None, :] - ws[:, None])
            else:
                omega = ws[:, None] / (ws[:, None] - wo[None, :])
        return Q[:, small], Q[:, order], np.nan_to_num(omega), complement

    def hessian(self, point: DualPoint) -> LinearOperator:
        """The element ``d -> A(J(A^* d)) / (2c)`` of the generalized Hessian of ``-theta`` at the
        point (see the module docstring), matrix-free on the smaller side of the spectrum."""
        scale = 1.0 / (2.0 * self.c)
        if not self.psd:
            return LinearOperator((self.size,) * 2, matvec=lambda d: scale * self.apply(self.adjoint(d)), dtype=float)
        QS, Q, omega, complement = self._sides(point)
        k = QS.shape[1]
        entries_only = self.m == 0
        pairs = (np.r_[self.i, self.j], np.r_[self.j, self.i])

        def product(d):
            if entries_only:
                H = sp.csr_matrix((np.r_[0.5 * d, 0.5 * d], pairs), shape=(self.n,) * 2)  # duplicates add
                G = (H @ QS).T  # Q_S^T H, from the sparse H
            else:
                H = self.adjoint(d)
                if self.deflate:
                    H = centred(H)
                G = QS.T @ H
            B = G @ Q
            U = np.empty_like(B)
            U[:, :k] = 0.5 * B[:, :k]
            U[:, k:] = omega * B[:, k:]
            V = U @ Q.T  # Y = Q_S V, J (or H - J) = Y + Y^T
            if entries_only:
                i, j = self.i, self.j
                part = np.einsum("ik,ki->i", QS[i], V[:, j]) + np.einsum("ik,ki->i", QS[j], V[:, i])
                if complement:
                    part = np.where(i == j, d, 0.5 * d) - part
                return scale * part
            Y = QS @ V
            J = Y + Y.T
            if complement:
                J = H - J
            return scale * self.apply(J)

        return LinearOperator((self.size,) * 2, matvec=product, dtype=float)

    def preconditioner(self, point: DualPoint) -> np.ndarray:
        """Qi and Sun's diagonal preconditioner: ``sum_kl (A_r)_kl^2 M_kl / (2c)`` for each row,
        ``M = (Q o Q) Omega (Q o Q)^T`` the diagonal of J in the entries' basis (exact for the
        diagonal entries)."""
        i, j, weight = self.i, self.j, self.entry_weight
        squares = self.row_squares
        if not self.psd:
            rows, entries = np.asarray(squares.sum(axis=1)).ravel(), weight
        else:
            Q2 = point.Q ** 2
            positive = point.w > 0
            P2, N2 = Q2[:, positive], Q2[:, ~positive]
            wp, wn = point.w[positive], point.w[~positive]
            omega = wp[:, None] / (wp[:, None] - wn[None, :])
            s = P2.sum(axis=1)
            K = P2 @ omega  # M_ij = s_i s_j + K_i . N2_j + K_j . N2_i
            entries = weight * (s[i] * s[j] + np.einsum("ik,ik->i", K[i], N2[j]) + np.einsum("ik,ik->i", K[j], N2[i]))
            if self.m:
                KN = K @ N2.T
                M = np.outer(s, s) + KN + KN.T
                rows = squares @ M.ravel()
            else:
                rows = np.empty(0)
        return np.concatenate([np.asarray(rows).ravel(), entries]) / (2.0 * self.c)

    def direction(self, point: DualPoint, rtol: float, maxiter: int, norm: float):
        """``(d, iterations)``: the Newton direction, ``(V + shift I) d = grad`` by conjugate
        gradients with Qi and Sun's preconditioner to the relative accuracy ``rtol``
        (``norm = ||grad||``)."""
        hessian = self.hessian(point)
        diagonal = self.preconditioner(point)
        # a small multiple of the curvature keeps the system definite where J is singular
        shift = min(1e-4, norm) * max(float(np.mean(diagonal)), 1e-300) if diagonal.size else 0.0
        system = LinearOperator(hessian.shape, matvec=lambda d: hessian.matvec(d) + shift * d, dtype=float)
        counter = [0]

        def count(_):
            counter[0] += 1

        direction, _ = cg(system, point.gradient, rtol=rtol, maxiter=maxiter, callback=count,
                          M=LinearOperator(hessian.shape, matvec=lambda x: x / (diagonal + shift), dtype=float))
        return direction, counter[0]

    @staticmethod
    def norm(v) -> float:
        """``||v||`` of a multiplier or gradient."""
        return float(np.linalg.norm(v))

    @staticmethod
    def dot(a, b) -> float:
        """``<a, b>`` of two multipliers."""
        return float(a @ b)

    def entry_part(self, y):
        """``y`` with its rows' multipliers set to 0 (the fixed entries' left)."""
        entries = np.zeros_like(y)
        entries[self.m:] = y[self.m:]
        return entries

    def centre(self) -> np.ndarray | None:
        """A point ``a 11^T + b I`` that holds the equalities (p.s.d. where the form has the cone):
        the least-norm ``(a, b)``, two unknowns; None where no such point holds them.  Read without
        an eigendecomposition, for :meth:`~cvxclust.generic.CvxpyRelaxation.objective_scale`."""
        n = self.n
        # each row at a 11^T + b I: a <A_r, 11^T> + b tr(A_r); a fixed entry: a (+ b on the diagonal)
        total = np.r_[np.asarray(self.A.sum(axis=1)).ravel(), np.ones(len(self.i))]
        trace = np.r_[np.asarray(self.A[:, np.arange(n) * (n + 1)].sum(axis=1)).ravel(), (self.i == self.j) * 1.0]
        M = np.c_[total, trace]
        (a, b) = np.linalg.lstsq(M, self.b, rcond=None)[0] if self.size else (0.0, 1.0)
        if np.abs(M @ [a, b] - self.b).max(initial=0.0) > 1e-9 * max(1.0, np.abs(self.b).max(initial=0.0)):
            return None
        if self.psd and min(b, b + n * a) < 0:
            return None
        return a * np.ones((n, n)) + b * np.eye(n)

    def restore(self, X: np.ndarray) -> np.ndarray | None:
        """``D^{-1/2} X D^{-1/2}`` exactly feasible, where the only constraints are fixed positive
        diagonal entries (:func:`~cvxclust.generic.restoration.scale_to_diagonal`); None elsewhere."""
        return scale_to_diagonal(self.form, X)


def equality_form(form: StandardForm) -> tuple[EqualityDual | None, str]:
    """The :class:`EqualityDual` of ``form``, or None and the reason the form is not of the kind
    of :class:`GenericNewton` (a squared Frobenius term, ``X >> 0`` and affine equalities only)."""
    reason = equality_reason(form)
    return (None, reason) if reason else (EqualityDual(form), "")


def equality_reason(form: StandardForm) -> str:
    """Why ``form`` is not of the kind of :class:`GenericNewton`, or ``""`` where it is."""
    if form.c <= 0:
        return "the objective has no squared Frobenius term (c = 0)"
    finite_l, finite_u = np.isfinite(form.L), np.isfinite(form.U)
    bounded = (finite_l | finite_u) & ~(finite_l & finite_u & (form.L == form.U))
    if bounded.any():
        i, j = np.unravel_index(np.argmax(bounded), bounded.shape)  # the first, without listing them all
        return (f"X[{i}, {j}] has a bound that is not an equality ({form.L[i, j]:g} <= X[{i}, {j}] <= "
                f"{form.U[i, j]:g}): only entries fixed to a value are taken")
    reason = inequality_rows(form)
    return f"{reason}: only affine equalities are taken" if reason else ""


def inequality_rows(form: StandardForm) -> str:
    """What says that ``form`` has rows that are not equalities (``lo < hi``), or ``""``."""
    inequalities = np.flatnonzero(form.lo != form.hi)
    if not inequalities.size:
        return ""
    r = inequalities[0]
    return (f"{inequalities.size} constraint rows are inequalities (row {r}: {form.lo[r]:g} <= A(X) <= "
            f"{form.hi[r]:g})")


#: the options of :func:`newton_step`, for the methods that take its steps
NEWTON_STEP_PARAMETERS = {
    "cg_tol": Param(1e-2, POSITIVE),
    "cg_max_iter": Param(200, [Interval(Integral, 1, None, closed="left")]),
}


def newton_step(dual: EqualityDual, point: DualPoint, cg_tol: float, cg_max_iter: int):
    """One semismooth Newton-CG step on ``theta`` from ``point`` (module docstring): the direction
    by preconditioned conjugate gradients to ``min(cg_tol, ||grad||)``, then Armijo's rule.
    Returns ``(candidate, cg_iterations, step, trials)``; ``candidate`` is None where the line
    search found no ascent (rounding).  ``dual`` is an :class:`EqualityDual` or its version on a
    device (:class:`~cvxclust.generic.newton_device.DeviceEqualityDual`)."""
    g = point.gradient
    norm = dual.norm(g)
    direction, iterations = dual.direction(point, min(cg_tol, norm), cg_max_iter, norm)
    slope = dual.dot(g, direction)
    t = 1.0
    for trials in range(1, 41):
        candidate = dual.evaluate(point.y + t * direction)
        # Armijo on theta (maximised); near the optimum its increase drowns in rounding, so a
        # halved gradient also passes
        if candidate.value >= point.value + 1e-4 * t * slope or dual.norm(candidate.gradient) <= 0.5 * norm:
            return candidate, iterations, t, trials
        t *= 0.5
    return None, iterations, 0.0, 40


@dataclass(kw_only=True, eq=False)
class NewtonState(SolverState):
    """The state of :class:`GenericNewton`."""

    dual: EqualityDual
    #: the current multiplier with theta, its gradient and the eigendecomposition there
    point: DualPoint
    cg_total: int = 0
    line_search_total: int = 0
    #: whether the last certified point was made exactly feasible (:meth:`EqualityDual.restore`)
    restored: bool = False
    #: whether the constraints were checked for outright contradictions (:meth:`GenericNewton.check_consistent`)
    consistent: bool = False


class GenericNewton(IterativeSolver):
    r"""Semismooth Newton-CG on the dual of a problem with a squared Frobenius objective and
    affine equalities (see :mod:`cvxclust.generic.newton`).  A ValueError names the part of a
    problem outside that kind.

    Parameters
    ----------
    relaxation : Relaxation
        The problem (its :meth:`~cvxclust.Relaxation.standard_form`).
    tol, residual_tol, max_iter, time_limit, check_every, verbose
        As for every solver (:class:`cvxclust.solvers.IterativeSolver`); an iteration is one
        Newton step, certified every ``check_every`` (default 1) steps.
    cg_tol : float
        Relative accuracy of the conjugate gradients at most (``min(cg_tol, ||grad||)``).
    cg_max_iter : int
        Conjugate-gradient iterations per Newton step at most.
    device, dtype : str, torch.device or None
        Where the iteration runs (:func:`cvxclust._array_api.device_namespace`: None or ``"cpu"``
        is NumPy, ``"cuda"`` or a ``torch.device`` PyTorch there) and in which floating type
        (``"float64"``, the default, or ``"float32"``); see
        :mod:`cvxclust.generic.newton_device`.  The bound ``theta(y)`` is exact up to the rounding
        of its evaluation, which is of the dtype's unit roundoff: float32 is looser.

    Returns
    -------
    Result
        History rows hold ``cg_iterations``, ``step`` (the step length taken) and
        ``gradient_norm``; ``extras``: ``cg_iterations``, ``line_search_trials`` and ``eigh`` (the
        eigendecompositions, one per evaluation of theta), ``restored`` (whether the point was
        made exactly feasible).
    """

    method = "newton"
    parameters = IterativeSolver.parameters | {
        "max_iter": Param(200, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
        **NEWTON_STEP_PARAMETERS,
        "device": Param(None, [object]),
        "dtype": Param(None, [None, object]),
    }

    def size(self) -> int:
        return self.relaxation.standard_form().n

    def init_state(self):
        form = self.relaxation.standard_form()
        reason = equality_reason(form)
        if reason:
            raise ValueError(f"method='newton' does not apply to this problem: {reason} (use method='generic')")
        arrays = arrays_for(self.device, self.dtype)
        if arrays.numpy:
            dual = EqualityDual(form)
        else:  # the rows, the target and the iteration on the device (moved once, here)
            from .newton_device import DeviceEqualityDual  # noqa: PLC0415 -- it builds on this module

            dual = DeviceEqualityDual(shared_device_form(self.relaxation, arrays), arrays, self.method)
        return NewtonState(dual=dual, point=dual.evaluate(dual.start()))

    def step(self, state, iteration):
        candidate, cg_iterations, t, trials = newton_step(state.dual, state.point, self.cg_tol, self.cg_max_iter)
        dual = state.dual
        norm = dual.norm(state.point.gradient)
        if candidate is None:
            self.stall("the line search found no ascent of the dual function (rounding)")
            return {"cg_iterations": cg_iterations, "step": 0.0, "gradient_norm": norm}
        if dual.norm(candidate.gradient) > norm:
            self.check_consistent(state)  # no progress to feasibility: are the constraints contradictory?
        state.point = candidate
        state.cg_total += cg_iterations
        state.line_search_total += trials
        return {"cg_iterations": cg_iterations, "step": t, "gradient_norm": dual.norm(candidate.gradient)}

    def drive(self, state) -> None:
        super().drive(state)
        if self.status in ("max_iter", "stalled"):  # not past a time limit
            self.check_consistent(state)

    def check_consistent(self, state) -> None:
        """Raise the ValueError of :func:`~cvxclust.generic.split` where the constraints
        contradict each other outright (``diag(X) == -1`` under ``X >> 0``), on which Newton's
        method would only run to its iteration limit.  Made once, where a step fails to reduce the
        gradient or the iterations end uncertified, on the host, without an eigendecomposition (its
        checks read the linear programs, not the projected centre)."""
        if not state.consistent:
            state.consistent = True
            splitting.split(self.relaxation.standard_form(), partial=False, project_centre=False)

    def certify(self, state, bound, final=False):
        dual, point = state.dual, state.point
        form = dual.form  # on a device, its parts there
        restored = dual.restore(point.X)
        X = point.X if restored is None else restored
        state.restored = restored is not None
        residuals = form.residuals(X, spectrum=False)
        if form.psd:
            residuals["psd"] = 0.0  # a p.s.d. projection, scaled congruently: the core confirms it
        value = point.value if form.sense == "minimize" else -point.value
        return Certificate(X, value, form.objective(X), residuals)

    def extras(self, state):
        return {"cg_iterations": state.cg_total, "line_search_trials": state.line_search_total,
                "eigh": state.dual.eigh_count, "restored": state.restored}
