"""The ``cvxclust`` command: ``cvxclust validate`` runs the catalogue of validation instances,
``cvxclust sweep`` the cells of a sweep file (:func:`cvxclust.sweeps.read_spec`).

``cvxclust validate [PATHS...]`` loads problem files (TOML) and, for each instance,
solves the cvxpy reference and every scalable method, prints the comparison table, and exits
with status 0 if every check passed, 1 if one failed and 2 for a usage error.

Every usage error (a bad option value, an unreadable or wrong problem or sweep file, a
``--scheduler`` that is no address or where no Dask scheduler answers within
:data:`cvxclust.parallel.CONNECT_TIMEOUT` seconds) is one line on stderr, in argparse's manner,
``cvxclust sweep: error: --scheduler: ...``, naming the option or the file and its key, and exit
status 2.

The problem-file format is documented in :mod:`cvxclust.catalogue`.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import math
import os
import re
import sys
import time
from pathlib import Path

from . import __version__
from ._deprecation import DEPRECATED, renamed_parameter
from ._relaxation import REFERENCE_SOLVERS
from .catalogue import Instance, find_problem_files, load_instance, run_instance
from .parallel import MAX_BLAS_THREADS, check_backend, parallel_backend, run_tasks
from .validation import ValidationReport

__all__ = ["Instance", "load_instance", "find_problem_files", "main"]


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------
def _strict_json(obj):
    """``obj`` with NaN and infinities replaced by None, so that the file is standard JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: _strict_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_strict_json(v) for v in obj]
    return obj


def _plot_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("._") or "instance"


def plot_convergence(report: ValidationReport, path, *, objective_tol=None, residual_tol=None, tol_objective=None,
                     tol_residual=None) -> None:
    """The convergence plot of ``report`` (:meth:`~cvxclust.validation.ValidationReport.plot`),
    written to ``path`` (PNG).

    ``objective_tol`` and ``residual_tol`` draw other tolerances than the report's own; their
    old spellings ``tol_objective`` and ``tol_residual`` still work, with a ``FutureWarning``
    (None: not given).
    """
    tolerances = {}
    for old, old_value, new, new_value in (("tol_objective", tol_objective, "objective_tol", objective_tol),
                                           ("tol_residual", tol_residual, "residual_tol", residual_tol)):
        value = renamed_parameter("plot_convergence", old, DEPRECATED if old_value is None else old_value, new,
                                  new_value)
        if value is not None:
            tolerances[new] = value
    dataclasses.replace(report, **tolerances).plot(path=path)


# --------------------------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------------------------
def _one_line(message) -> str:
    return " ".join(str(message).split())


def _usage_error(prog: str, message) -> int:
    """Print the usage error ``message`` as one line on stderr and return the exit status 2."""
    print(f"{prog}: error: {_one_line(message)}", file=sys.stderr)
    return 2


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line on stderr (argparse prints the usage too)."""

    def error(self, message):
        _usage_error(self.prog, f"{message} (see {self.prog} --help)")
        self.exit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cvxclust",
        description="Convex relaxations of clustering: validate scalable solvers against cvxpy references, "
        "and sweep estimators over data sets and parameters.",
    )
    parser.add_argument("--version", action="version", version=f"cvxclust {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    v = commands.add_parser(
        "validate",
        help="run catalogue instances: each scalable method against the cvxpy reference",
        description=(
            "Solve each problem file's reference (cvxpy) and its scalable methods, print the comparison "
            "tables, and exit with 0 if every check passed, 1 if any failed, 2 on a usage error."
        ),
    )
    v.add_argument(
        "paths", nargs="*", metavar="PATH", help="problem files (TOML) or folders of them (default: problems/)"
    )
    v.add_argument("--out", metavar="DIR", help="write DIR/report.md, DIR/report.json and DIR/<name>.png")
    v.add_argument(
        "--methods",
        metavar="A,B",
        help="comma-separated scalable methods to run instead of each file's list "
        "(those an instance lacks are skipped)",
    )
    v.add_argument(
        "--reference-solver",
        type=str.upper,
        choices=REFERENCE_SOLVERS,
        help="override the files' reference solver",
    )
    v.add_argument(
        "--blas-threads",
        type=int,
        default=1,
        metavar="N",
        help="BLAS threads while solving (default 1, fastest for catalogue-sized matrices and immune to "
        "oversubscription on a busy machine; 0 keeps the library default)",
    )
    v.add_argument(
        "--jobs",
        type=int,
        metavar="N",
        help="validate N instances at a time in worker processes (joblib; -1: one per core); the "
        "results are those of the serial run",
    )
    v.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run the instances on the Dask distributed scheduler at ADDRESS (e.g. tcp://host:8786; "
        'needs pip install "cvxclust[dask]")',
    )
    v.add_argument(
        "-q", "--quiet", action="store_true", help="no progress and no tables, only failures and the summary"
    )
    v.set_defaults(handler=_validate_command, prog=v.prog)

    s = commands.add_parser(
        "sweep",
        help="fit estimators x data sets x parameter grids of a sweep file into one table",
        description=(
            "Fit every estimator of SPEC (a TOML sweep file, see cvxclust.sweeps.read_spec) on every data "
            "set at every point of its grid, score it against the labels, and write one row per cell to "
            "OUT (.csv or .parquet). Cells already in OUT are not computed again. Exit 0, or 1 if a cell "
            "failed (its row holds the error), 2 on a usage error."
        ),
    )
    s.add_argument("spec", metavar="SPEC", help="the sweep file (TOML)")
    s.add_argument("--out", metavar="FILE", required=True, help="the table (.csv or .parquet), also the resume point")
    s.add_argument("--jobs", type=int, metavar="N", help="fit N cells at a time in worker processes (-1: one per core)")
    s.add_argument("--scheduler", metavar="ADDRESS",
                   help="fit the cells on the Dask distributed scheduler at ADDRESS (e.g. tcp://host:8786)")
    s.add_argument("--blas-threads", type=int, default=1, metavar="N",
                   help="BLAS threads of each fit (default 1; 0 keeps the library default)")
    s.add_argument("-q", "--quiet", action="store_true", help="no progress and no table, only failures")
    s.set_defaults(handler=_sweep_command, prog=s.prog)
    return parser


def _validate_command(args) -> int:
    started = time.perf_counter()
    problem = _check_fanout(args)
    if problem:
        return _usage_error(args.prog, problem)
    try:
        files = find_problem_files(args.paths or ["problems"])
        instances = [load_instance(f) for f in files]
    except (OSError, ValueError) as exc:
        hint = "" if args.paths else " (run from the repository root, or pass problem files or folders)"
        return _usage_error(args.prog, f"{exc}{hint}")
    names = [inst.name for inst in instances]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        return _usage_error(args.prog, f"instance names must be unique; repeated: {dupes}")

    requested = None
    if args.methods is not None:
        requested = [m.strip() for m in args.methods.split(",") if m.strip()]
        known = {m for inst in instances for m in inst.relaxation.methods() if m != "reference"}
        unknown = [m for m in requested if m not in known]
        if not requested or unknown:
            return _usage_error(
                args.prog,
                f"--methods: unknown method(s) {unknown or [args.methods]}; the instances have {sorted(known)}")

    out = None
    if args.out is not None:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
            return _usage_error(args.prog, f"--out: cannot make the folder {args.out!r}: {exc}")
        if not os.access(out, os.W_OK):
            return _usage_error(args.prog, f"--out: the folder {args.out!r} is read-only")

    with contextlib.ExitStack() as backend:
        problem = _enter_backend(args, backend)
        if problem:
            return _usage_error(args.prog, problem)
        return _run(instances, requested, out, args, started)


def _check_fanout(args) -> str | None:
    """The usage error of ``--jobs``/``--scheduler``/``--blas-threads``, or None."""
    if not 0 <= args.blas_threads <= MAX_BLAS_THREADS:
        return (f"--blas-threads: must be 0 (the library's default) or from 1 to {MAX_BLAS_THREADS}, "
                f"got {args.blas_threads}")
    if args.jobs is not None and args.scheduler is not None:
        return "--jobs, --scheduler: give one or the other, not both"
    for option, jobs, scheduler in (("--jobs", args.jobs, None), ("--scheduler", None, args.scheduler)):
        try:
            check_backend(jobs, scheduler)
        except (TypeError, ValueError) as exc:
            return f"{option}: {exc}"
    return None


def _enter_backend(args, stack: contextlib.ExitStack) -> str | None:
    """Enter the backend of ``--jobs``/``--scheduler`` on ``stack``; the usage error, or None.

    A scheduler gets :data:`cvxclust.parallel.CONNECT_TIMEOUT` seconds to answer."""
    try:
        stack.enter_context(parallel_backend(args.jobs, args.scheduler))
    except (ImportError, OSError, TypeError, ValueError) as exc:  # OSError: nothing answers there
        return f"--scheduler: {exc}"
    return None


def _sweep_command(args) -> int:
    from .sweeps import read_spec, sweep

    problem = _check_fanout(args)
    if problem:
        return _usage_error(args.prog, problem)
    if Path(args.out).suffix not in (".csv", ".parquet"):
        return _usage_error(args.prog, f"--out: must be a .csv or .parquet file, got {args.out!r}")
    try:
        estimators, datasets, grids = read_spec(args.spec)
    except (ImportError, TypeError, ValueError) as exc:  # the message names the file and the key
        return _usage_error(args.prog, exc)
    with contextlib.ExitStack() as backend:
        problem = _enter_backend(args, backend)
        if problem:
            return _usage_error(args.prog, problem)
        try:
            table = sweep(estimators, datasets, grids, out=args.out, blas_threads=args.blas_threads or None,
                          progress=not args.quiet)
        except (TypeError, ValueError) as exc:  # what sweep checks beyond read_spec: the table at --out
            message = str(exc)
            return _usage_error(args.prog, f"--out: {message}" if message.startswith("out ") else message)
    failed = table[table["error"] != ""]
    for _, row in failed.iterrows():
        print(f"{row['estimator']} | {row['dataset']} | {row['params']}: {row['error']}", file=sys.stderr)
    if not args.quiet:
        print(table.drop(columns=["params"]).to_string(index=False))
    print(f"{len(table)} cells, {len(failed)} failed; table written to {args.out}")
    return 1 if len(failed) else 0


def _run(instances: list[Instance], requested, out: Path | None, args, started: float) -> int:
    from tqdm.auto import tqdm

    quiet = args.quiet

    def log(message: str) -> None:
        if not quiet:
            tqdm.write(message, file=sys.stderr)

    def emit(text: str) -> None:  # stdout, without tearing the bar on stderr
        tqdm.write(text, file=sys.stdout)

    tables, dicts = [], []
    n_checks = n_failed = 0
    tasks = [(inst, requested, args.reference_solver) for inst in instances]
    with tqdm(total=len(instances), desc="validate", unit="instance", file=sys.stderr, disable=quiet,
              dynamic_ncols=True) as bar:
        outcomes = run_tasks(run_instance, tasks, blas_threads=args.blas_threads or None)
        for inst, outcome in zip(instances, outcomes):
            bar.update()
            bar.set_postfix_str(inst.name)
            if outcome["skipped"]:
                log(f"{inst.name}: skipped, {outcome['skipped']}")
                continue
            for line in outcome["log"]:
                log(f"  {inst.name} | {line.strip()}")
            report = outcome["report"]
            if report is None:
                n_checks += 1
                n_failed += 1
                error = outcome["error"]
                text = f"### {inst.name}\n\nERROR: the reference could not be solved: {error}"
                tables.append(text)
                dicts.append({"name": inst.name, "passed": False, "error": error})
                if quiet:
                    print(f"{inst.name}: ERROR {error}", file=sys.stderr)
                else:
                    emit(text + "\n")
                continue

            text = report.to_markdown()
            if inst.description:
                text = text.replace("\n", f"\n\n{inst.description}\n", 1)
            tables.append(text)
            dicts.append(report.to_dict())
            n_checks += len(report.comparisons)
            failed = [c for c in report.comparisons if not c.passed]
            n_failed += len(failed)
            if not quiet:
                emit(text + "\n")
            else:
                for c in failed:
                    print(f"{inst.name} | {c.method}: FAIL: {'; '.join(c.failures)}", file=sys.stderr)
            if out is not None:
                plot_convergence(report, out / f"{_plot_name(inst.name)}.png")

    elapsed = time.perf_counter() - started
    summary = f"{len(dicts)} instances, {n_failed} checks failed"
    detail = f"{summary} (of {n_checks} checks, {elapsed:.1f} s)"
    if out is not None:
        import json

        (out / "report.md").write_text(
            "# cvxclust validate\n\n" + "\n\n".join(tables) + f"\n\n{detail}\n", encoding="utf-8"
        )
        (out / "report.json").write_text(json.dumps(_strict_json(dicts), indent=2) + "\n", encoding="utf-8")
    print(detail)
    return 1 if n_failed else 0


def main(argv: list[str] | None = None) -> int:
    """Run the ``cvxclust`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status:
    0 success, 1 a failed check or cell, 2 a usage error (one line on stderr)."""
    if argv is not None and (not isinstance(argv, (list, tuple)) or not all(isinstance(a, str) for a in argv)):
        raise TypeError(f"argv must be a list of str (the command's arguments) or None, got {argv!r:.80}")
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        return _usage_error(parser.prog, "choose a command: validate or sweep (see cvxclust --help)")
    return args.handler(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
