r"""Soft Bregman clustering, Banerjee et al. (2005) Algorithm 3: the soft-EM baseline of Section 6.4.

EM for the mixture ``p(x) = sum_j q_j exp(-D_F(x, mu_j)) b(x)`` (1)-(2); the base measure b(x)
does not depend on the parameters and is left out of the reported log-likelihood.

References
----------
A. Banerjee, S. Merugu, I. Dhillon and J. Ghosh, "Clustering with Bregman divergences", JMLR 6,
2005 (Algorithm 3).
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from scipy.special import logsumexp

from .._checks import check_n_clusters, check_random_state
from ..parameters import Interval, check_parameters
from ..result import Result
from ..solvers import POSITIVE, Certificate, IterativeSolver, Param
from ._hard_models import random_partition
from ._local import best_of
from .divergences import get_divergence

__all__ = ["soft_bregman_em"]


def _log_joint(X, div, prior, centres) -> np.ndarray:
    """log q_j - D_F(x_i, mu_j), shape (t, d)."""
    L = np.empty((X.shape[0], centres.shape[0]))
    with np.errstate(divide="ignore"):
        logq = np.log(prior)
    for j, mu in enumerate(centres):
        L[:, j] = logq[j] - div.divergence_rows(X, np.broadcast_to(mu, X.shape))
    return L


def _m_step(X, R):
    weight = R.sum(axis=0)
    prior = weight / X.shape[0]
    centres = np.tile(X.mean(axis=0), (R.shape[1], 1))  # a dead component keeps a placeholder
    alive = weight > 0
    centres[alive] = (R[:, alive].T @ X) / weight[alive, None]
    return prior, centres


def _responsibilities(L: np.ndarray) -> np.ndarray:
    return np.exp(L - logsumexp(L, axis=1, keepdims=True))


class _SoftEM(IterativeSolver):
    """EM steps from the M-step of given labels until the log-likelihood rises by at most
    ``tol * max(|log-likelihood|, 1)`` (status ``"converged"``) or a limit."""

    method = "soft_bregman_em"
    sense = "maximize"
    parameters = IterativeSolver.parameters | {
        "tol": Param(1e-10, POSITIVE),
        "max_iter": Param(500, [Interval(Integral, 1, None, closed="left")]),
        "check_every": Param(1, [Interval(Integral, 1, None, closed="left")]),
    }

    def __init__(self, X, div, k, labels, **params):
        super().__init__(None, **params)
        self.X, self.div, self.k, self.start = X, div, k, labels

    def _state(self, prior, centres) -> dict:
        L = _log_joint(self.X, self.div, prior, centres)
        return {"prior": prior, "centres": centres, "L": L, "ll": float(np.sum(logsumexp(L, axis=1)))}

    def init_state(self):
        return self._state(*_m_step(self.X, np.eye(self.k)[self.start]))

    def step(self, state, iteration):
        old = state["ll"]
        state.update(self._state(*_m_step(self.X, _responsibilities(state["L"]))))
        if state["ll"] - old <= self.tol * max(abs(state["ll"]), 1.0):
            self.converge()
        return {"objective": state["ll"]}

    def certify(self, state, bound, final=False):
        return Certificate(X=_responsibilities(state["L"]), objective=state["ll"], residuals={})

    def extras(self, state):
        return {"labels": np.argmax(state["L"], axis=1).astype(np.intp), "prior": state["prior"],
                "centres": state["centres"]}


_PARAMETERS = {name: p.constraints for name, p in _SoftEM.parameters.items()} | {
    "n_init": [Interval(Integral, 1, None, closed="left")],
    "random_state": ["random_state"],
}


def soft_bregman_em(X, divergence, n_clusters: int, *, n_init: int = 20, tol: float = 1e-10, max_iter: int = 500,
                    time_limit: float = np.inf, random_state=None) -> Result:
    r"""Soft Bregman clustering, Banerjee et al. (2005) Algorithm 3: EM for the mixture (1)-(2).

    .. math::

        \text{E: } \gamma_{ij} = \frac{q_j e^{-D_F(x_i, \mu_j)}}{\sum_l q_l e^{-D_F(x_i, \mu_l)}},
        \qquad \text{M: } q_j = \frac1t \sum_i \gamma_{ij},\
        \mu_j = \frac{\sum_i \gamma_{ij} x_i}{\sum_i \gamma_{ij}},

    which maximises the log-likelihood ``sum_i log sum_j q_j exp(-D_F(x_i, mu_j))`` monotonically
    (the weighted mean is the exact M-step for every Bregman divergence).  Each restart starts
    from the M-step of a :func:`~cvxclust.bregman._hard_models.random_partition`; the restart
    with the highest log-likelihood is kept (20 restarts in Section 6.4).  A run stops when the
    log-likelihood rises by at most ``tol * |log-likelihood|``.

    Parameters
    ----------
    X : array-like of shape (t, n)
        Data, in the domain of the divergence.
    divergence : str or Divergence
    n_clusters : int
        d, between 2 and t.
    n_init : int >= 1
    tol : float > 0
    max_iter : int >= 1
    time_limit : float > 0
        Per restart.
    random_state : int, RandomState instance, Generator or None

    Returns
    -------
    Result
        Of the best restart: ``X`` the responsibilities (posteriors p(y = j | x_i), shape
        (t, d)), ``objective`` the log-likelihood ``sum_i log sum_j q_j exp(-D_F(x_i, mu_j))``
        (base measure dropped; ``history`` rows give it per iteration, non-decreasing),
        ``status`` ``"converged"`` (else ``"max_iter"`` or ``"time_limit"``), ``time`` of all
        restarts.  ``extras``:

        ``labels`` : ndarray of shape (t,)
            ``argmax_j q_j exp(-D_F(x_i, mu_j))``, the paper's hard assignment for soft EM.
        ``prior`` : ndarray of shape (d,)
            q.
        ``centres`` : ndarray of shape (d, n)
            mu_j.
        ``restart_log_likelihoods`` : ndarray of shape (n_init,)
            The final log-likelihood of every restart.
    """
    options = check_parameters(_PARAMETERS, {"n_init": n_init, "tol": tol, "max_iter": max_iter,
                                                "time_limit": time_limit, "random_state": random_state},
                                  "soft_bregman_em")
    div = get_divergence(divergence)
    X = div.check_data(X)
    k = check_n_clusters(n_clusters, X.shape[0])
    rng = check_random_state(random_state)
    del options["n_init"], options["random_state"]
    runs = [_SoftEM(X, div, k, random_partition(X.shape[0], k, rng), **options).run() for _ in range(n_init)]
    return best_of(runs, "restart_log_likelihoods", maximize=True)
