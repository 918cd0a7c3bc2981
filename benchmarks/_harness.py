"""The machinery every benchmark and reproduction script shares.

The scripts run as ``python benchmarks/<name>.py`` (which puts this folder on ``sys.path``) and
import this module as ``_harness``.  It provides:

* :func:`run_case`: run one case -- a module-level function of the calling script -- in a fresh
  Python process, with a timeout and an optional BLAS thread limit, and return the function's
  JSON row together with the process's wall time and peak resident memory (its own, see
  :func:`peak_rss_kb`);
* :func:`eigh_seconds`: the time of one full ``numpy.linalg.eigh`` of an ``n x n`` symmetric
  matrix, run like a case, so that solve times can also be read in eigendecompositions of the
  same size measured in the same run;
* :func:`environment`: the record written once per results file -- package versions, Python,
  CPU model, BLAS libraries and their threads, the git revision and the command line, with
  paths relative to the repository;
* :func:`write_results`: ``<name>.json`` (the environment and the rows), ``<name>.md`` (the
  tables, then the environment) and, when a plotting function is given, ``<name>.png``;
* :func:`fmt`, :func:`markdown_table`: table cells and tables; :func:`plot_times`: times against n
  (runs stopped by a limit hollow, :func:`finished`);
* :func:`update_readme`: copy the tables that ``benchmarks/README.md`` quotes out of the results
  files (``python benchmarks/_harness.py --update-readme``), so that no figure in it is copied
  by hand; :func:`readme_drift` lists the quotes that no longer match their files.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.util
import json
import math
import os
import platform
import re
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPOSITORY = HERE.parent
RESULTS = HERE / "results"
README = HERE / "README.md"

# the package of this checkout, whatever else is installed: the revision recorded is its own
if str(REPOSITORY) not in sys.path:
    sys.path.insert(0, str(REPOSITORY))

#: The packages whose versions every results file records (import name, distribution name).
PACKAGES = (("cvxclust", "cvxclust"), ("numpy", "numpy"), ("scipy", "scipy"), ("cvxpy", "cvxpy"),
            ("scs", "scs"), ("clarabel", "clarabel"), ("sklearn", "scikit-learn"),
            ("array_api_compat", "array-api-compat"), ("torch", "torch"))
#: Packages whose version is read from their metadata unless loaded: importing them costs seconds.
HEAVY = ("torch",)
#: Environment variables that fix the thread count of the BLAS and OpenMP pools of a worker.
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


# ----------------------------------------------------------------------------------------------
# the environment record
# ----------------------------------------------------------------------------------------------
def relative(path: str | os.PathLike) -> str:
    """``path`` relative to the repository; a path outside it is reduced to its last component."""
    path = Path(path).resolve()
    try:
        return path.relative_to(REPOSITORY).as_posix()
    except ValueError:
        return path.name


def command_line(script: str | os.PathLike, argv: list[str] | None = None) -> str:
    """``python benchmarks/<name>.py <argv>`` (default: this process's arguments), paths made relative."""
    words = ["python", relative(script)]
    for word in sys.argv[1:] if argv is None else argv:
        words.append(relative(word) if os.path.isabs(word) else word)
    return " ".join(words)


def _version(module: str, distribution: str) -> str | None:
    if module not in HEAVY or module in sys.modules:
        try:
            return getattr(importlib.import_module(module), "__version__")
        except (ImportError, AttributeError):
            pass
    try:
        from importlib.metadata import PackageNotFoundError, version

        return version(distribution)
    except PackageNotFoundError:
        return None


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=REPOSITORY, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def _package_origin() -> str:
    """Whether the imported cvxclust is this checkout's (the recorded revision is then its own)."""
    import cvxclust

    try:
        Path(cvxclust.__file__).resolve().relative_to(REPOSITORY)
    except ValueError:
        return "installed elsewhere: the revision below is not the package's"
    return "this checkout"


def _revision() -> str | None:
    given = os.environ.get("BENCHMARK_REVISION")
    if given:  # a copy of the tree, whose git folder (if any) is not that of the revision it was copied at
        return f"{given} (copied tree)"
    head = _git("rev-parse", "--short=12", "HEAD")
    if head is None:
        return None
    # changes to the package or the scripts (not to the results) make the revision approximate
    changed = _git("status", "--porcelain", "--", "cvxclust", "benchmarks/*.py")
    return head + (" with local changes" if changed else "")


def blas_pools() -> list[dict]:
    """The BLAS/OpenMP pools loaded in this process (threadpoolctl): library, version, threads."""
    import numpy  # noqa: F401  (loads the BLAS of numpy and scipy, so that they are listed)
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info

    return [{"library": p.get("internal_api"), "version": p.get("version"), "threads": p.get("num_threads"),
             "file": Path(p.get("filepath") or "").name} for p in threadpool_info()]


def environment(script: str | os.PathLike, argv: list[str] | None = None, worker_threads: int | None = None) -> dict:
    """What a results file records once: versions, Python, CPU, BLAS, revision, command, date.

    ``script`` and ``argv`` give the command line (``argv`` None: this process's arguments);
    ``worker_threads`` is the BLAS thread limit the script sets for its runs (None: the
    libraries' defaults).
    """
    return {
        "command": command_line(script, argv),
        "revision": _revision(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "python": platform.python_version(),
        "packages": {module: _version(module, dist) for module, dist in PACKAGES},
        "cvxclust_origin": _package_origin(),
        "cpu": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "blas": blas_pools(),
        "worker_blas_threads": worker_threads,
    }


def environment_markdown(env: dict) -> str:
    packages = ", ".join(f"{k} {v}" for k, v in env["packages"].items() if v is not None)
    blas = "; ".join(f"{p['library']} {p['version'] or ''} ({p['file']}): {p['threads']} thread(s)"
                     for p in env["blas"]) or "–"
    threads = env.get("worker_blas_threads")
    rows = [
        ("command", f"`{env['command']}`"),
        ("revision", env["revision"] or "–"),
        ("date", env["date"]),
        ("Python", env["python"]),
        ("packages", packages),
        ("cvxclust imported from", env["cvxclust_origin"]),
        ("CPU", f"{env['cpu']}, {env['logical_cpus']} logical CPUs"),
        ("BLAS", blas),
        ("BLAS threads of the runs", "library default" if threads is None else str(threads)),
    ]
    return markdown_table(["", ""], rows)


# ----------------------------------------------------------------------------------------------
# tables
# ----------------------------------------------------------------------------------------------
def fmt(x, spec: str) -> str:
    """``format(x, spec)``, or an en dash for a missing or non-finite value."""
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "–"
    return format(x, spec)


#: the statuses of a run that ended by its own test (any other: a limit, a stall, an error)
FINISHED = ("optimal", "converged", "solved", "infeasible", "unbounded")


def finished(row: dict) -> bool:
    """Whether a run ended by its own stopping test (no ``status``: a timing without one)."""
    status = str(row.get("status", "optimal")).lower()
    return any(status.startswith(word) for word in FINISHED)


def plot_times(ax, rows: list[dict], methods, title: str) -> None:
    """Wall time against n on log-log axes, one line per method (rows with a finite ``time``); a
    run stopped by a limit (not :func:`finished`) is drawn hollow, as the time it was given."""
    stopped = False
    for name in methods:
        points = sorted((r["n"], r["time"], finished(r)) for r in rows
                        if r["method"] == name and math.isfinite(r.get("time", math.nan)))
        if not points:
            continue
        n, t, done = zip(*points)
        line, = ax.loglog(n, t, "-", label=name)
        ax.loglog([a for a, d in zip(n, done) if d], [b for b, d in zip(t, done) if d], "o", color=line.get_color())
        ax.loglog([a for a, d in zip(n, done) if not d], [b for b, d in zip(t, done) if not d], "o",
                  markerfacecolor="none", color=line.get_color())
        stopped |= not all(done)
    if stopped:
        ax.plot([], [], "o", markerfacecolor="none", color="grey", label="stopped by a limit")
    ax.set_xlabel("n")
    ax.set_ylabel("wall time (s)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()


def markdown_table(header: list[str], rows: list) -> str:
    """A Markdown table; each row a sequence of cells (converted with ``str``)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ----------------------------------------------------------------------------------------------
# running a case in its own process
# ----------------------------------------------------------------------------------------------
def peak_rss_kb(pid: int | str = "self") -> float | None:
    """Peak resident memory (kB) of process ``pid``: ``VmHWM`` of ``/proc/<pid>/status``.

    That is the high-water mark of the process's own address space.  ``ru_maxrss`` is not: after
    ``fork``/``exec`` it also holds the peak of the process that started it (Linux keeps it across
    ``exec``), so a case started from a large process would report that process's memory.  None
    where ``/proc`` is missing.
    """
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return float(line.split()[1])
    except OSError:
        pass
    return None


def run_case(script: str | os.PathLike, function: str, *args, timeout: float, threads: int | None = None,
             row: dict | None = None) -> dict:
    """Run ``function(*args)`` of ``script`` in a fresh Python process.

    Parameters
    ----------
    script : path
        The calling script (``__file__``); ``function`` is one of its module-level functions,
        taking JSON-serializable arguments and returning a JSON-serializable dict.
    timeout : float
        Seconds after which the process is killed.
    threads : int, optional
        BLAS/OpenMP thread limit of the process (the environment variables of
        :data:`THREAD_VARIABLES`); None keeps the libraries' defaults.
    row : dict, optional
        Fields identifying the case, put in front of the result (and in the row returned when
        the case fails).

    Returns
    -------
    dict
        ``row``, then the function's dict, then ``wall`` (seconds of the process),
        ``peak_rss_mb`` (its peak resident memory, :func:`peak_rss_kb`) and ``base_rss_mb`` (the
        memory before the function was called, after the script's imports).  A case killed at the timeout has
        ``status = "killed after <timeout> s"``; a case that raised has ``status = "failed:
        <last line of its error>"``.
    """
    row = dict(row or {})
    env = dict(os.environ)
    if threads is not None:
        env |= {name: str(threads) for name in THREAD_VARIABLES}
    payload = json.dumps([str(Path(script).resolve()), function, list(args)])
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", payload]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    killed = threading.Event()
    peak_at_kill: list[float | None] = []

    def kill():
        peak_at_kill.append(peak_rss_kb(proc.pid))
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    # read both pipes to the end (a full pipe would block the child), then reap the child with
    # wait4, which returns its own resource usage
    out_lines: list[str] = []
    reader = threading.Thread(target=lambda: out_lines.extend(proc.stdout))
    reader.start()
    err = proc.stderr.read()
    reader.join()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    timer.cancel()
    wall = time.perf_counter() - start
    peak = usage.ru_maxrss  # kB on Linux; an upper bound (see peak_rss_kb), for a case that died
    if killed.is_set():
        peak = peak_at_kill[0] if peak_at_kill and peak_at_kill[0] is not None else peak
        return row | {"status": f"killed after {timeout:g} s", "time": math.nan, "wall": wall,
                      "peak_rss_mb": peak / 1024}
    if proc.returncode != 0 or not out_lines:
        tail = " ".join(err.strip().splitlines()[-1:])[:120]
        return row | {"status": f"failed: {tail}", "time": math.nan, "wall": wall, "peak_rss_mb": peak / 1024}
    result = json.loads(out_lines[-1])
    base, peak = result.pop("_base_rss_kb"), result.pop("_peak_rss_kb") or peak
    return row | result | {"wall": wall, "peak_rss_mb": peak / 1024, "base_rss_mb": base / 1024}


def _worker(payload: str) -> None:
    """The child side of :func:`run_case`: import the script, call the function, print JSON."""
    script, function, args = json.loads(payload)
    sys.path.insert(0, str(Path(script).parent))
    spec = importlib.util.spec_from_file_location(Path(script).stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    base = peak_rss_kb() or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = getattr(module, function)(*args)
    print(json.dumps(result | {"_base_rss_kb": base, "_peak_rss_kb": peak_rss_kb()}, default=_json_default))


def eigh_case(n: int) -> dict:
    """Seconds of one full ``numpy.linalg.eigh`` of a random symmetric ``n x n`` matrix."""
    import numpy as np

    A = np.random.default_rng(0).standard_normal((n, n))
    A = A + A.T
    np.linalg.eigh(A[:8, :8])  # load LAPACK before the clock starts
    start = time.perf_counter()
    np.linalg.eigh(A)
    return {"n": n, "time": time.perf_counter() - start}


def eigh_seconds(n: int, threads: int | None = None, timeout: float = 600.0) -> float:
    """:func:`eigh_case` run in its own process with the BLAS thread limit of the benchmark."""
    return run_case(__file__, "eigh_case", n, timeout=timeout, threads=threads)["time"]


def limit_blas(threads: int | None):
    """A context limiting the BLAS pools of this process to ``threads`` (None: no limit)."""
    from contextlib import nullcontext

    from threadpoolctl import threadpool_limits

    return nullcontext() if threads is None else threadpool_limits(limits=threads, user_api="blas")


def extra(result, key: str):
    """A solver-specific output of ``result``: ``result.extras[key]`` (a result type without
    ``extras`` carries it as an attribute)."""
    extras = getattr(result, "extras", None) or {}
    return extras[key] if key in extras else getattr(result, key)


# ----------------------------------------------------------------------------------------------
# results files
# ----------------------------------------------------------------------------------------------
def _json_default(obj):
    import numpy as np

    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return relative(obj)
    raise TypeError(f"not JSON serializable: {type(obj).__name__}")


def _finite(obj):
    """NaN and infinities as None, so that the JSON is standard."""
    if isinstance(obj, dict):
        return {k: _finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite(v) for v in obj]
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    return obj


def options_record(args: argparse.Namespace) -> dict:
    """The parsed options of a script, JSON-ready (paths relative to the repository)."""
    return {k: relative(v) if isinstance(v, Path) else v for k, v in vars(args).items()}


def write_results(out: Path, name: str, title: str, description: str, body: str, data: dict, env: dict,
                  plot=None) -> Path:
    """Write ``out/<name>.md`` and ``out/<name>.json`` (and ``out/<name>.png`` with ``plot``).

    Parameters
    ----------
    out : Path
        Results folder (created if missing).
    title, description, body : str
        The Markdown file is ``# title``, the description, the body (the tables), then the
        environment.
    data : dict
        What the JSON file holds besides ``environment``.
    env : dict
        :func:`environment`, computed once when the script starts.
    plot : callable, optional
        ``plot(path)`` draws the figure into ``path``.

    Returns
    -------
    Path
        The Markdown file.
    """
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    text = f"# {title}\n\n{description.strip()}\n\n{body.strip()}\n\n## Environment\n\n{environment_markdown(env)}\n"
    md = out / f"{name}.md"
    md.write_text(text)
    payload = {"environment": env} | data
    serial = json.loads(json.dumps(payload, default=_json_default))  # numpy scalars -> Python first
    (out / f"{name}.json").write_text(json.dumps(_finite(serial), indent=1) + "\n")
    if plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        plot(out / f"{name}.png")
    return md


# ----------------------------------------------------------------------------------------------
# the tables quoted in benchmarks/README.md
# ----------------------------------------------------------------------------------------------
#: ``<!-- quote results/<file>.md tables 1,3 -->`` ... ``<!-- end quote -->``: the listed tables
#: (1 = the first block of ``|`` lines) of a results file, with the headings just above them.
QUOTE = re.compile(r"(<!-- quote (\S+) tables? ([\d,]+) -->\n)(.*?)(<!-- end quote -->)", re.S)


def tables(text: str) -> list[str]:
    """The Markdown tables of ``text``, each with the ``###`` heading directly above it, if any."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].startswith("|"):
            j = i
            while j < len(lines) and lines[j].startswith("|"):
                j += 1
            k = i - 1
            while k >= 0 and not lines[k].strip():
                k -= 1
            heading = lines[k] + "\n\n" if k >= 0 and lines[k].startswith("###") else ""
            blocks.append(heading + "\n".join(lines[i:j]))
            i = j
        else:
            i += 1
    return blocks


#: what a quote of a results file that no run has written yet shows
NOT_RUN = "*Not run yet: `{source}` is written by its script; then `python benchmarks/_harness.py --update-readme`.*\n"


def _quoted(match: re.Match, base: Path) -> str:
    source = base / match.group(2)
    if not source.exists():
        return NOT_RUN.format(source=match.group(2))
    found = tables(source.read_text())
    wanted = [int(k) for k in match.group(3).split(",")]
    missing = [k for k in wanted if not 1 <= k <= len(found)]
    if missing:
        raise ValueError(f"{relative(source)} has {len(found)} tables, table(s) {missing} asked for")
    return "\n\n".join(found[k - 1] for k in wanted) + f"\n\n<sub>Source: `{match.group(2)}`.</sub>\n"


def update_readme(path: Path = README) -> bool:
    """Refill every quote of ``path`` from its results file; True if the file changed."""
    text = path.read_text()
    new = QUOTE.sub(lambda m: m.group(1) + _quoted(m, path.parent) + m.group(5), text)
    if new != text:
        path.write_text(new)
    return new != text


def readme_drift(path: Path = README) -> list[str]:
    """The results files whose quoted tables in ``path`` differ from the files themselves."""
    return [m.group(2) for m in QUOTE.finditer(path.read_text())
            if m.group(4) != _quoted(m, path.parent)]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--update-readme", action="store_true", help="refill the tables quoted in README.md")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.worker)
        return 0
    if args.update_readme:
        print(f"{relative(README)}: {'updated' if update_readme() else 'already up to date'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
