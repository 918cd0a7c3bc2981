"""Every ssc test runs with one BLAS thread: the solvers make thousands of small (n <= 150)
eigendecompositions, which OpenBLAS slows down when it spreads them over threads that other
processes also want."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    with threadpool_limits(limits=1, user_api="blas"):
        yield
