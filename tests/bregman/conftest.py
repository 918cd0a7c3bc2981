"""Shared by the bregman tests: one BLAS thread (the solvers make many small eigendecompositions,
which OpenBLAS slows down when it spreads them over threads), and the cvxpy
reference solve that every scalable solver is checked against."""

import warnings

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture
def reference():
    """``reference(relaxation, **options)``: the relaxation's cvxpy statement solved by Clarabel.

    M1 and M2 have no strictly feasible point (``M 1 = 1`` puts an eigenvalue of M on ``M <= I``),
    so Clarabel may report ``optimal_inaccurate``; its residuals are still ~1e-10, and the tests
    compare at 1e-4 / 1e-5 anyway.
    """
    def solve(relaxation, **options):
        options.setdefault("solver", "CLARABEL")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = relaxation.solve("reference", **options)
        assert result.status in ("optimal", "optimal_inaccurate")
        return result

    return solve
