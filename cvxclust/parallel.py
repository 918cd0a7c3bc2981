"""Fan-out of independent solves through joblib, on local cores or on a Dask cluster.

Many solves of a user's work are independent: the instances of the validation catalogue, the
cells of a sweep (:func:`cvxclust.sweep`).  They run through :class:`joblib.Parallel`, the
scikit-learn convention, so the caller's :func:`joblib.parallel_config` decides where:

.. code-block:: python

    import joblib
    from dask.distributed import Client

    client = Client("tcp://scheduler:8786")          # or Client() for a local cluster
    with joblib.parallel_config(backend="dask"):
        table = cvxclust.sweep(...)                   # the cells run on the cluster

:func:`parallel_backend` builds that configuration from the command line's ``--jobs N`` and
``--scheduler ADDRESS``.  Each task runs with ``blas_threads`` BLAS threads (default 1): the
matrices of these solves are small enough that one thread per worker, and one worker per
core, is faster than workers that share cores between their BLAS threads.  Results come back
in the order of the tasks, whatever the backend.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator

import joblib
from threadpoolctl import threadpool_limits

__all__ = ["check_backend", "parallel_backend", "run_tasks"]


def check_backend(jobs: int | None = None, scheduler: str | None = None) -> None:
    """Raise a ValueError naming ``jobs`` or ``scheduler`` unless they describe a backend of
    :func:`parallel_backend`: at most one of them, ``jobs`` a positive int or -1."""
    if jobs is not None and scheduler is not None:
        raise ValueError("give either jobs or scheduler, not both")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs == 0 or jobs < -1):
        raise ValueError(f"jobs must be a positive int or -1 (every core), got {jobs!r}")


@contextlib.contextmanager
def parallel_backend(jobs: int | None = None, scheduler: str | None = None):
    """A context running :func:`run_tasks` on ``jobs`` local processes (joblib's loky backend),
    or on the Dask scheduler at ``scheduler`` (``dask.distributed``, an optional dependency:
    ``pip install "cvxclust[dask]"``); with neither, the caller's joblib configuration holds."""
    check_backend(jobs, scheduler)
    if scheduler is not None:
        try:
            from dask.distributed import Client
        except ImportError as exc:  # pragma: no cover - depends on the installation
            raise ImportError('a Dask scheduler needs dask.distributed: pip install "cvxclust[dask]"') from exc
        with Client(scheduler), joblib.parallel_config(backend="dask"):
            yield
    elif jobs is not None:
        with joblib.parallel_config(n_jobs=jobs):
            yield
    else:
        yield


def _call(function: Callable, args: tuple, blas_threads: int | None):
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        return function(*args)


def run_tasks(function: Callable, tasks: Iterable[tuple], *, blas_threads: int | None = 1) -> Iterator:
    """``function(*task)`` for each task, through :class:`joblib.Parallel` under the current
    :func:`joblib.parallel_config` (in this process when none is set), each call limited to
    ``blas_threads`` BLAS threads (None: the library's default); yields the results in the
    order of the tasks as they become available.  ``function`` must be importable by the
    workers (a module-level function)."""
    parallel = joblib.Parallel(return_as="generator")
    yield from parallel(joblib.delayed(_call)(function, tuple(task), blas_threads) for task in tasks)
