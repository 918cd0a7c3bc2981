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
``--scheduler ADDRESS``; it gives a scheduler :data:`CONNECT_TIMEOUT` seconds to answer, so that
a wrong or unreachable address fails at once with a message rather than after Dask's default
30 s.  Each task runs with ``blas_threads`` BLAS threads (default 1): the matrices of these
solves are small enough that one thread per worker, and one worker per core, is faster than
workers that share cores between their BLAS threads.  Results come back in the order of the
tasks, whatever the backend.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator
from numbers import Integral, Real

import joblib
from threadpoolctl import threadpool_limits

from .parameters import Interval, check_parameter

__all__ = ["CONNECT_TIMEOUT", "MAX_BLAS_THREADS", "MAX_JOBS", "check_backend", "check_blas_threads", "parallel_backend",
           "run_tasks"]

#: Seconds :func:`parallel_backend` waits for a Dask scheduler to answer (Dask's own default is 30).
CONNECT_TIMEOUT = 5.0

#: The most local worker processes ``jobs`` may ask for: four per core of the computer.  More only
#: share the cores, and a mistyped count would start that many Python processes.
MAX_JOBS = 4 * (os.cpu_count() or 1)

#: The most BLAS threads of one task (``blas_threads``); BLAS libraries use at most their own
#: build's limit, and a larger count does not fit the C int they take.
MAX_BLAS_THREADS = 1024



def check_backend(jobs: int | None = None, scheduler: str | None = None) -> None:
    """Raise a ValueError or TypeError naming ``jobs`` or ``scheduler`` unless they describe a
    backend of :func:`parallel_backend`: at most one of them, ``jobs`` -1 (one worker per core)
    or an int from 1 to :data:`MAX_JOBS`,
    ``scheduler`` a non-empty string (whether a scheduler answers there is checked on
    connecting)."""
    if jobs is not None and scheduler is not None:
        raise ValueError("give either jobs or scheduler, not both")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, Integral) or jobs == 0 or jobs < -1
                             or jobs > MAX_JOBS):
        raise ValueError(f"jobs must be -1 (one worker per core) or an int from 1 to {MAX_JOBS} (four per core), "
                         f"got {jobs!r}")
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be the address of a Dask scheduler (a str such as 'tcp://host:8786'), "
                        f"got {type(scheduler).__name__} {scheduler!r}")
    if scheduler is not None and not scheduler.strip():
        raise ValueError(f"scheduler must be the address of a Dask scheduler such as 'tcp://host:8786', "
                         f"got {scheduler!r}")


def check_blas_threads(blas_threads, owner: str = "run_tasks") -> int | None:
    """``blas_threads`` if it is None or an int from 1 to :data:`MAX_BLAS_THREADS` (a numpy int
    becomes a Python one); otherwise a ValueError/TypeError naming it and ``owner``."""
    return check_parameter("blas_threads", blas_threads, [Interval(Integral, 1, MAX_BLAS_THREADS), None], owner)


def _connect(scheduler: str, timeout: float):
    """A ``dask.distributed.Client`` of the scheduler at ``scheduler``, or a ValueError (not an
    address) or ConnectionError (nothing answered within ``timeout`` seconds) that says so."""
    try:
        from dask.distributed import Client
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError('a Dask scheduler needs dask.distributed: pip install "cvxclust[dask]"') from exc
    from distributed.comm.addressing import parse_address, parse_host_port
    from distributed.comm.registry import get_backend

    try:  # read the address as Dask's connect does, before any Client exists
        scheme, location = parse_address(scheduler)
        get_backend(scheme)
        if scheme in ("tcp", "tls"):
            parse_host_port(location)
        return Client(scheduler, timeout=timeout)
    except ValueError as exc:  # no port, unknown scheme, ...
        raise ValueError(f"scheduler {scheduler!r} is not the address of a Dask scheduler ({exc}); "
                         f"expected one such as 'tcp://host:8786'") from None
    except OSError:  # nothing listens there, or the host is unknown: Dask times out
        raise ConnectionError(
            f"no Dask scheduler answered at {scheduler!r} within {timeout:g} s: start one there "
            f"(`dask scheduler`, then `dask worker ADDRESS`) or correct the address") from None


@contextlib.contextmanager
def parallel_backend(jobs: int | None = None, scheduler: str | None = None, *,
                     connect_timeout: float | None = None):
    """A context running :func:`run_tasks` on ``jobs`` local processes (joblib's loky backend),
    or on the Dask scheduler at ``scheduler`` (``dask.distributed``, an optional dependency:
    ``pip install "cvxclust[dask]"``); with neither, the caller's joblib configuration holds.
    A scheduler gets ``connect_timeout`` seconds to answer (None: :data:`CONNECT_TIMEOUT`).

    Raises
    ------
    ValueError or TypeError
        Naming ``jobs`` or ``scheduler`` (see :func:`check_backend`), or a ``scheduler`` that is
        not an address Dask reads, or a ``connect_timeout`` that is not a positive number.
    ConnectionError
        When no scheduler answers at ``scheduler`` within ``connect_timeout`` seconds.
    """
    check_backend(jobs, scheduler)
    connect_timeout = check_parameter("connect_timeout", connect_timeout,
                                         [Interval(Real, 0, None, closed="neither"), None], "parallel_backend")
    if scheduler is not None:
        timeout = CONNECT_TIMEOUT if connect_timeout is None else connect_timeout
        with _connect(scheduler, timeout), joblib.parallel_config(backend="dask"):
            yield
    elif jobs is not None:
        with joblib.parallel_config(n_jobs=jobs):
            yield
    else:
        yield


def _call(function: Callable, args: tuple, blas_threads: int | None):
    from .generic.sparse_product import limited_product_threads  # the package's own threads, held alike

    with threadpool_limits(limits=blas_threads, user_api="blas"), limited_product_threads(blas_threads):
        return function(*args)


def _check_tasks(tasks) -> list[tuple]:
    """``tasks`` as a list of argument tuples, or a TypeError naming ``tasks``."""
    if isinstance(tasks, (str, bytes)) or not isinstance(tasks, Iterable):
        raise TypeError(f"tasks must be an iterable of argument tuples, got {type(tasks).__name__} {tasks!r:.80}")
    checked = []
    for i, task in enumerate(tasks):
        if not isinstance(task, (tuple, list)):
            raise TypeError(f"tasks[{i}] must be a tuple (or list) of the arguments of one call, "
                            f"got {type(task).__name__} {task!r:.80}")
        checked.append(tuple(task))
    return checked


def run_tasks(function: Callable, tasks: Iterable[tuple], *, blas_threads: int | None = 1) -> Iterator:
    """``function(*task)`` for each task, through :class:`joblib.Parallel` under the current
    :func:`joblib.parallel_config` (in this process when none is set), each call limited to
    ``blas_threads`` BLAS threads and as many threads of the low-rank method's products
    (:func:`cvxclust.generic.sparse_product.limited_product_threads`; None: the libraries'
    defaults); yields the results in the
    order of the tasks as they become available.  ``function`` must be importable by the
    workers (a module-level function).

    Raises
    ------
    TypeError or ValueError
        At the call, before any task runs: ``function`` not callable, ``tasks`` not an iterable
        of tuples or lists (a task is the arguments of one call: ``(x,)``, not ``x``),
        ``blas_threads`` not None or an int from 1 to :data:`MAX_BLAS_THREADS`.
    """
    check_parameter("function", function, [callable], "run_tasks")
    tasks = _check_tasks(tasks)
    blas_threads = check_blas_threads(blas_threads)
    parallel = joblib.Parallel(return_as="generator")
    return parallel(joblib.delayed(_call)(function, task, blas_threads) for task in tasks)
