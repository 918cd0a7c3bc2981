"""Limits of the conditional-gradient solvers (Algorithm 1), shared by Conditional, Discriminative
and Joint: an iteration or time limit gives its status, a ConvergenceWarning and a valid bound."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from cvxclust.bregman import Conditional, Discriminative, Joint

RELAXATIONS = {
    "conditional": lambda X: Conditional(X, "kl", 3, alpha=0.5),
    "discriminative": lambda X: Discriminative(X, 3, alpha=1e-3),
    "joint": lambda X: Joint(X, "kl", 3, alpha=0.5, beta=0.1, domain="M3"),
}


@pytest.mark.parametrize("name", RELAXATIONS)
def test_limits_warn_and_report_status(name):
    rng = np.random.default_rng(4)
    X = rng.uniform(0.1, 1.0, size=(15, 3)) + 2.0 * np.repeat(np.eye(3), 5, axis=0)  # three groups, KL domain
    relax = RELAXATIONS[name](X)
    with pytest.warns(ConvergenceWarning, match="iteration limit"):
        res = relax.solve(max_iter=1, local_search=False)
    assert res.status == "max_iter"
    assert res.dual_bound <= res.objective
    with pytest.warns(ConvergenceWarning, match="time limit"):
        res = relax.solve(time_limit=1e-9)
    assert res.status == "time_limit"
