"""The eigendecomposition-bound solvers on a GPU through the array API: SSC (7), the Peng-Wei
k-means SDP and the max-cut SDP by the low-rank method, on the device and, where asked, on the
CPU with NumPy.

Usage::

    python benchmarks/bench_gpu.py [--device cuda] [--ssc-sizes 10000 20000 40000]
        [--pw-sizes 5000 10000] [--maxcut-sizes 100000 1000000] [--cpu-max-n 0] [--name gpu]

Cases, each in its own process (the harness's ``run_case``), by increasing n (Peng-Wei before
SSC at one n), the results file rewritten after each, so that a run stopped at a limit keeps what
it measured:

* **SSC (7)**, ``FrobeniusPSD(K).solve()`` (the dual Newton method), on 8 Gaussian blobs in the
  plane (``make_blobs(n, centers=8, random_state=0)``), ``K_ij = exp(-||a_i - a_j||^2 / delta^2)``
  formed on the device, ``delta`` the median pairwise distance of the first 2000 points;
* **Peng-Wei**, ``cvxclust.solve(problem, method=..., device=...)`` on
  ``problem_classes.kmeans_sdp(blobs_kernel(n, 10, random_state=0), 10)`` (the statement of
  ``bench_lowrank.py``): read on the host, solved on the device;
* **max-cut**, ``cvxclust.solve(problem, method="lowrank", device=...)`` on
  ``problem_classes.max_cut(random_graph(n, 10, random_state=0))`` (a sparse random graph of
  average degree 10, the statement of ``bench_lowrank.py``): read on the host, its sparse
  Laplacian moved once to the device as a sparse CSR tensor, the factor's descent and the
  certificate's Lanczos there; ``X`` is not formed (``form_X=False``: the factor is the point).

'in eigh' is the solve's time over one full ``eigh`` of the same order on the same device
(``torch.linalg.eigh`` on the GPU, ``numpy.linalg.eigh`` on the CPU; the best of three up to n = 5000),
timed in the same run.
Writes ``results/<name>.{md,json}``.
"""

from __future__ import annotations

import argparse
import gc
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import NamedTuple

from _harness import RESULTS, environment, fmt, markdown_table, options_record, run_case, write_results

KERNEL_SAMPLE = 2000  # points whose median pairwise distance is the kernel width
# PyTorch's allocator grows its segments rather than keeping fixed blocks: at n = 40,000 the
# eigendecomposition's workspace (about 4 n^2 numbers) needs one contiguous block, which the fixed
# blocks left by the kernel's temporaries no longer offer on a 140 GiB card (out of memory)
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")


# ----------------------------------------------------------------------------------------------
# the cases, each in its own process
# ----------------------------------------------------------------------------------------------
class Arrays(NamedTuple):
    """The array namespace of a run, its device and whether it is NumPy."""

    xp: object
    device: object
    numpy: bool

    def asarray(self, x):
        return self.xp.asarray(x, device=self.device)


def _arrays(device: str) -> Arrays:
    """NumPy on the CPU for ``"numpy"``, else PyTorch on ``device`` (``"cpu"`` too)."""
    import array_api_compat
    import numpy as np

    if device == "numpy":
        return Arrays(array_api_compat.array_namespace(np.zeros(0)), "cpu", True)
    import torch

    where = torch.device(device)
    if where.type == "cuda" and where.index is None:  # the index that tensors made there report
        where = torch.device("cuda", torch.cuda.current_device())
    return Arrays(array_api_compat.array_namespace(torch.zeros(0)), where, False)


def _synchronize(arrays) -> None:
    if not arrays.numpy and getattr(arrays.device, "type", "") == "cuda":
        import torch

        torch.cuda.synchronize(arrays.device)


def _reset_device_peak(arrays) -> None:
    if not arrays.numpy and getattr(arrays.device, "type", "") == "cuda":
        import torch

        torch.cuda.reset_peak_memory_stats(arrays.device)


def _device_peak_gb(arrays) -> float | None:
    if not arrays.numpy and getattr(arrays.device, "type", "") == "cuda":
        import torch

        return torch.cuda.max_memory_allocated(arrays.device) / 2**30
    return None


def blobs_rbf(n: int, arrays):
    """The rbf kernel of the blobs of SSC (7), formed in the namespace and on the device of ``arrays``."""
    import numpy as np
    from scipy.spatial.distance import pdist
    from sklearn.datasets import make_blobs

    points = make_blobs(n, centers=8, random_state=0)[0]
    delta = float(np.median(pdist(points[:KERNEL_SAMPLE])))
    xp = arrays.xp
    P = arrays.asarray(points)
    squares = xp.sum(P * P, axis=1)
    S = squares[:, None] + squares[None, :] - 2.0 * (P @ P.T)
    del P
    S = xp.clip(S, 0.0, None) * (1.0 - xp.eye(n, dtype=S.dtype, device=arrays.device))  # 0 on the diagonal
    K = xp.exp(-S / delta**2)
    del S
    return (K + K.T) / 2.0  # exactly symmetric


def eigh_time(n: int, arrays) -> float:
    """Seconds of one full eigendecomposition of a random symmetric n x n matrix on the device."""
    import numpy as np

    A = np.random.default_rng(0).standard_normal((n, n))
    A = arrays.asarray(A + A.T)
    arrays.xp.linalg.eigh(A[:8, :8])  # load the solver before the clock starts
    times = []
    for _ in range(3 if n <= 5000 else 1):  # the best of three where that is cheap
        _synchronize(arrays)
        start = time.perf_counter()
        arrays.xp.linalg.eigh(A)
        _synchronize(arrays)
        times.append(time.perf_counter() - start)
    return min(times)


def _figures(result, arrays, start: float) -> dict:
    _synchronize(arrays)
    X = result.X
    return {"time": result.time, "wall_solve": time.perf_counter() - start, "objective": result.objective,
            "relative_gap": result.relative_gap, "max_residual": result.max_residual, "status": result.status,
            "iterations": result.iterations, "ran": result.method,
            "eigh": result.extras.get("eigendecompositions", result.extras.get("eigh")),
            "lambda_min_eigh": result.extras.get("lambda_min_eigs"),
            "X": "None" if X is None else f"{type(X).__module__.split('.')[0]} on {getattr(X, 'device', 'cpu')}",
            "device_peak_gb": _device_peak_gb(arrays)}


def ssc_case(n: int, device: str, tol: float, time_limit: float) -> dict:
    """SSC (7) at order n on ``device`` ("numpy" for NumPy on the CPU)."""
    from cvxclust.ssc import FrobeniusPSD

    arrays = _arrays(device)
    K = blobs_rbf(n, arrays)
    _reset_device_peak(arrays)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _synchronize(arrays)
        start = time.perf_counter()
        result = FrobeniusPSD(K).solve(tol=tol, time_limit=time_limit)
        row = _figures(result, arrays, start)
    del result, K
    gc.collect()
    return row | {"eigh_time": eigh_time(n, arrays)}


def peng_wei_case(n: int, device: str, method: str, tol: float, time_limit: float) -> dict:
    """The Peng-Wei SDP at order n, read on the host and solved by ``method`` on ``device``."""
    import cvxclust
    from cvxclust import problem_classes as pc

    arrays = _arrays(device)
    problem = pc.kmeans_sdp(pc.blobs_kernel(n, 10, random_state=0), 10)
    _reset_device_peak(arrays)
    options = {} if arrays.numpy else {"device": arrays.device}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        result = cvxclust.solve(problem, method=method, tol=tol, residual_tol=tol, time_limit=time_limit, **options)
        row = _figures(result, arrays, start) | {"read_time": result.extras.get("read_time")}
    del result, problem
    gc.collect()
    return row | {"eigh_time": eigh_time(n, arrays)}


def maxcut_case(n: int, device: str, tol: float, time_limit: float) -> dict:
    """The max-cut SDP of a sparse random graph at order n by the low-rank method on ``device``."""
    import cvxclust
    from cvxclust import problem_classes as pc

    arrays = _arrays(device)
    problem = pc.max_cut(pc.random_graph(n, 10, random_state=0))
    _reset_device_peak(arrays)
    options = {} if arrays.numpy else {"device": arrays.device}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        result = cvxclust.solve(problem, method="lowrank", tol=tol, residual_tol=tol, time_limit=time_limit,
                                form_X=False, **options)
        row = _figures(result, arrays, start)
    factor = result.extras["factor"]
    return row | {"read_time": result.extras.get("read_time"), "rank": result.extras["rank"],
                  "lambda_min_eigh": result.extras["eigsh"], "lanczos_products": result.extras["lanczos_matvecs"],
                  "X": f"factor: {type(factor).__module__.split('.')[0]} on {getattr(factor, 'device', 'cpu')}"}


def accelerator(device: str) -> dict:
    """The device's name, memory and the versions that drive it."""
    import torch

    where = torch.device(device)
    record = {"torch": torch.__version__, "cuda": torch.version.cuda}
    if where.type == "cuda" and torch.cuda.is_available():
        properties = torch.cuda.get_device_properties(where)
        record |= {"name": properties.name, "memory_gb": properties.total_memory / 2**30,
                   "multiprocessors": properties.multi_processor_count}
    else:
        record["name"] = f"{where} (no CUDA device)"
    return record


# ----------------------------------------------------------------------------------------------
# the tables
# ----------------------------------------------------------------------------------------------
def markdown(rows: list[dict], device: dict) -> str:
    parts = ["### Device\n\n" + markdown_table(["", ""], [[key, value] for key, value in device.items()])]
    header = ["problem", "n", "on", "ran", "time (s)", "in eigh", "eigh (s)", "iterations", "eigh count",
              "certified gap", "max residual", "device peak (GB)", "X", "status"]
    parts.append("### Runs\n\n" + markdown_table(header, [
        [r["problem"], r["n"], r["on"], r.get("ran", "–"), fmt(r.get("time"), ".2f"), fmt(r.get("in_eigh"), ".1f"),
         fmt(r.get("eigh_time"), ".2f"), r.get("iterations", "–"),
         next((str(r[key]) for key in ("eigh", "lambda_min_eigh") if r.get(key) is not None), "–"),
         fmt(r.get("relative_gap"), ".1e"), fmt(r.get("max_residual"), ".1e"), fmt(r.get("device_peak_gb"), ".1f"),
         r.get("X", "–"), str(r["status"]).replace("|", "/")] for r in rows]))
    return "\n\n".join(parts)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default="cuda", help="the device of the GPU runs (a torch device)")
    parser.add_argument("--ssc-sizes", type=int, nargs="*", default=[10000, 20000, 40000])
    parser.add_argument("--pw-sizes", type=int, nargs="*", default=[5000, 10000])
    parser.add_argument("--maxcut-sizes", type=int, nargs="*", default=[100000, 1000000])
    parser.add_argument("--maxcut-tol", type=float, default=1e-4, help="tol and residual_tol of max-cut")
    parser.add_argument("--maxcut-time-limit", type=float, default=120.0, help="time limit (s) of a max-cut solve")
    parser.add_argument("--pw-method", default="generic", help="the method of cvxclust.solve for Peng-Wei")
    parser.add_argument("--cpu-max-n", type=int, default=0, help="also run NumPy on the CPU up to this n")
    parser.add_argument("--ssc-tol", type=float, default=1e-6)
    parser.add_argument("--pw-tol", type=float, default=1e-4, help="tol and residual_tol of Peng-Wei")
    parser.add_argument("--time-limit", type=float, default=300.0, help="time limit (s) of a solve")
    parser.add_argument("--threads", type=int, default=None, help="BLAS threads of each run (default: libraries')")
    parser.add_argument("--name", default="gpu", help="results file name (without suffix)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    env = environment(__file__, argv, args.threads)
    device = accelerator(args.device)
    # smaller orders first, so that a run stopped at a limit has measured every problem it could
    runs = sorted([("Peng-Wei", n) for n in args.pw_sizes] + [("SSC (7)", n) for n in args.ssc_sizes]
                  + [("max-cut", n) for n in args.maxcut_sizes], key=lambda run: (run[1], run[0]))
    rows = []
    description = (
        __doc__.split("\n\n", 3)[3].split("Writes")[0].strip()
        + f"\n\nSSC (7): `tol = {args.ssc_tol:g}`; Peng-Wei: method `{args.pw_method}`, `tol = residual_tol = "
        f"{args.pw_tol:g}`; time limit {args.time_limit:g} s; max-cut: method `lowrank`, `tol = residual_tol = "
        f"{args.maxcut_tol:g}`, time limit {args.maxcut_time_limit:g} s (its 'eigh count': the certificates' "
        "smallest eigenvalues by Lanczos, `extras['eigsh']`; its 'X': the factor's library and device).  "
        "'time': `Result.time`; 'device peak': "
        "`torch.cuda.max_memory_allocated` during the solve; 'eigh count': the full eigendecompositions the "
        "method reports (`extras['eigendecompositions']`; the dual Newton reports only those of its certificates' "
        "smallest eigenvalues, `extras['lambda_min_eigs']`, in that column); 'X': the library and device of "
        "`Result.X`.  The runs set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True` unless it is set.")
    for problem, n in runs:
        for on in [args.device] + (["numpy"] if n <= args.cpu_max_n else []):
            timeout = 2.0 * args.time_limit + 300.0
            if problem == "max-cut":
                row = run_case(__file__, "maxcut_case", n, on, args.maxcut_tol, args.maxcut_time_limit,
                               timeout=2.0 * args.maxcut_time_limit + 300.0, threads=args.threads,
                               row={"problem": problem, "n": n, "on": on})
            elif problem == "SSC (7)":
                row = run_case(__file__, "ssc_case", n, on, args.ssc_tol, args.time_limit, timeout=timeout,
                               threads=args.threads,
                               row={"problem": problem, "n": n, "on": on})
            else:
                row = run_case(__file__, "peng_wei_case", n, on, args.pw_method, args.pw_tol, args.time_limit,
                               timeout=timeout, threads=args.threads, row={"problem": problem, "n": n, "on": on})
            if isinstance(row.get("time"), float) and math.isfinite(row["time"]) and row.get("eigh_time"):
                row["in_eigh"] = row["time"] / row["eigh_time"]
            print(f"{problem} n={n} on {on}: {row['status']} {fmt(row.get('time'), '.2f')} s "
                  f"({fmt(row.get('in_eigh'), '.1f')} eigh)", file=sys.stderr, flush=True)
            rows.append(row)
            write_results(args.out, args.name, "The solvers on a GPU: SSC (7), the Peng-Wei SDP and max-cut",
                          description, markdown(rows, device), {"options": options_record(args), "device": device,
                                                                "rows": rows}, env)
    return 0


if __name__ == "__main__":
    sys.exit(main())
