"""Shared by the tests of every family."""

import os
import warnings

import pytest
from hypothesis import settings
from sklearn.utils.estimator_checks import check_estimator
from threadpoolctl import threadpool_limits

# The property tests explore the same examples on every run (a failure found while exploring is
# then reproducible, and a passing suite stays passing); HYPOTHESIS_PROFILE=explore draws new ones.
settings.register_profile("repeatable", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_configure(config):
    # Under pytest-xdist each worker is a process of its own: one BLAS thread each, so that the
    # workers share the cores instead of oversubscribing them (a test that needs more sets its own).
    if os.environ.get("PYTEST_XDIST_WORKER"):
        threadpool_limits(limits=1, user_api="blas")
        from cvxclust.generic import sparse_product

        sparse_product.PRODUCT_THREADS = 1  # the low-rank method's sparse products, likewise


@pytest.fixture
def fails_only_check_clustering():
    """``fails_only_check_clustering(estimator, message)``: asserts that of scikit-learn's
    checks only ``check_clustering`` (and its read-only-memmap variant, same name) fails on
    ``estimator``, each time with a ValueError whose text holds ``message``."""
    def check(estimator, message):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results = check_estimator(estimator, on_fail=None)
        failed = [r for r in results if r["status"] == "failed"]
        assert {r["check_name"] for r in failed} == {"check_clustering"}
        for r in failed:
            assert isinstance(r["exception"], ValueError)
            assert message in str(r["exception"])
    return check
