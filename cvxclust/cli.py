"""The ``cvxclust`` command, and the catalogue of validation instances it runs.

``cvxclust validate [PATHS...]`` loads problem files (TOML, see below) and, for each instance,
solves the cvxpy reference and every scalable method, prints the comparison table, and exits
with status 0 if every check passed, 1 if one failed and 2 for a usage error.

Catalogue format
----------------
One TOML file per instance (``problems/*.toml``)::

    name = "ssc-psd-iris-60"                 # required; names the table and the plot file
    description = "..."                      # optional
    relaxation = "ssc.FrobeniusPSD"          # required: cvxclust.<family>.<Class>

    [parameters]                             # optional: keyword arguments of Class(K, ...)
    # n_clusters = 3

    [data]                                   # required
    dataset = "iris"                         # required: a cvxclust.datasets.load_dataset name
    n_samples = 60                           # optional (default: every sample)
    standardize = false                      # optional: sklearn StandardScaler first
    random_state = 0                         # optional: seeds the stratified subset

    [kernel]                                 # required
    kind = "rbf"                             # required: a cvxclust.kernels.affinity kind
    delta = 1.0                              # kind-specific parameters (omit delta: median width)

    [validate]                               # optional
    methods = []                             # [] or missing: every registered scalable method
    reference_solver = "CLARABEL"            # or "SCS"
    tol_objective = 1e-6
    tol_residual = 1e-6
    tol_solution = 1e-3                      # optional; missing: reported, not judged

    [options.admm]                           # optional keyword options, per method
    tol = 1e-8
    [options.reference]                      # ... and for the cvxpy reference (e.g. eps)

The relaxation is built as ``Class(K, **parameters)``.  A relaxation that needs more than the
kernel matrix defines a classmethod ``from_catalogue(K, X, y, table)`` (``table``: the whole
parsed file) and is built by it instead; such a class may then also read top-level keys of its
own, which are otherwise rejected.
"""

from __future__ import annotations

import argparse
import importlib
import math
import re
import sys
import time
import tomllib
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import __version__
from ._relaxation import REFERENCE_SOLVERS, Relaxation, Result
from .validation import ValidationReport, validate

__all__ = ["Instance", "load_instance", "find_problem_files", "main"]

#: Keys a problem file may hold, per table ("" is the top level).
_TOP_KEYS = {"name", "description", "relaxation", "parameters", "data", "kernel", "validate", "options"}
_DATA_KEYS = {"dataset", "n_samples", "standardize", "random_state"}
_VALIDATE_KEYS = {"methods", "reference_solver", "tol_objective", "tol_residual", "tol_solution"}
_DEFAULT_TOLERANCES = {"tol_objective": 1e-6, "tol_residual": 1e-6, "tol_solution": None}


# --------------------------------------------------------------------------------------------
# the catalogue
# --------------------------------------------------------------------------------------------
@dataclass
class Instance:
    """One validation instance of the catalogue.

    Attributes
    ----------
    name : str
        Its name (the heading of its table, the name of its plot file).
    relaxation : Relaxation
        The relaxation built from the data.
    methods : list of str
        Scalable methods to validate (every registered one when the file lists none).
    validate_kwargs : dict
        Keyword arguments of :func:`cvxclust.validate` besides ``methods`` and ``name``:
        ``reference_solver``, ``reference_options``, ``method_options``, ``tol_objective``,
        ``tol_residual``, ``tol_solution``.
    description : str
        Free text from the file.
    path : Path or None
        The file it was loaded from.
    """

    name: str
    relaxation: Relaxation
    methods: list[str]
    validate_kwargs: dict = field(default_factory=dict)
    description: str = ""
    path: Path | None = None

    def run(self, methods: list[str] | None = None, *, reference_solver: str | None = None) -> ValidationReport:
        """Validate: the reference, then each method (``methods`` overrides :attr:`methods`)."""
        kwargs = dict(self.validate_kwargs)
        if reference_solver is not None:
            kwargs["reference_solver"] = reference_solver
        return validate(self.relaxation, self.methods if methods is None else list(methods), name=self.name, **kwargs)


def _fail(path, key: str, message: str) -> ValueError:
    return ValueError(f"{path}: key '{key}': {message}")


def _table(doc: dict, key: str, path, *, required: bool) -> dict:
    if key not in doc:
        if required:
            raise _fail(path, key, f"missing table [{key}]")
        return {}
    value = doc[key]
    if not isinstance(value, dict):
        raise _fail(path, key, f"must be a table [{key}], got {value!r}")
    return value


def _value(table: dict, key: str, where: str, path, types, *, required: bool = False, default=None):
    if key not in table:
        if required:
            raise _fail(path, where, "missing")
        return default
    value = table[key]
    # bool is an int in Python; TOML keeps them apart, so do we
    if not isinstance(value, types) or (isinstance(value, bool) and bool not in _as_tuple(types)):
        expected = " or ".join(t.__name__ for t in _as_tuple(types))
        raise _fail(path, where, f"must be of type {expected}, got {value!r}")
    return value


def _as_tuple(types) -> tuple:
    return types if isinstance(types, tuple) else (types,)


def _reject_unknown(table: dict, allowed: set[str], prefix: str, path) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        key = f"{prefix}.{unknown[0]}" if prefix else unknown[0]
        raise _fail(path, key, f"unknown key; valid keys are {sorted(allowed)}")


def resolve_relaxation(spec: str, path=None) -> type[Relaxation]:
    """The class named by ``"family.Class"`` (imported from ``cvxclust.family``)."""
    family, _, cls_name = spec.rpartition(".")
    if not family or not cls_name:
        raise _fail(path, "relaxation", f"must read 'family.Class' (e.g. 'ssc.FrobeniusPSD'), got {spec!r}")
    try:
        module = importlib.import_module(f"cvxclust.{family}")
    except ModuleNotFoundError as exc:
        if exc.name is not None and not f"cvxclust.{family}".startswith(exc.name):
            raise  # the family exists but one of its own imports failed: a real error
        raise _fail(path, "relaxation", f"unknown relaxation {spec!r}: no family cvxclust.{family}") from None
    cls = getattr(module, cls_name, None)
    if not (isinstance(cls, type) and issubclass(cls, Relaxation)):
        valid = sorted(
            name
            for name in getattr(module, "__all__", dir(module))
            if isinstance(getattr(module, name, None), type) and issubclass(getattr(module, name), Relaxation)
        )
        raise _fail(
            path, "relaxation", f"unknown relaxation {spec!r}; cvxclust.{family} defines {[f'{family}.{v}' for v in valid]}"
        )
    return cls


def load_instance(path) -> Instance:
    """Load one problem file (see the module docstring for the format).

    Raises
    ------
    ValueError
        Naming the file and the key, for invalid TOML, a missing or unknown key, an unknown
        relaxation, data set, kernel or method, or parameters the data, kernel or relaxation
        reject.
    """
    from . import datasets, kernels  # imported here: the command starts fast

    path = Path(path)
    try:
        with path.open("rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from None

    name = _value(doc, "name", "name", path, str, required=True)
    description = _value(doc, "description", "description", path, str, default="")
    spec = _value(doc, "relaxation", "relaxation", path, str, required=True)
    cls = resolve_relaxation(spec, path)
    custom = hasattr(cls, "from_catalogue")
    if not custom:
        _reject_unknown(doc, _TOP_KEYS, "", path)

    # data
    data = _table(doc, "data", path, required=True)
    _reject_unknown(data, _DATA_KEYS, "data", path)
    dataset = _value(data, "dataset", "data.dataset", path, str, required=True)
    if dataset not in datasets.DATASETS:
        raise _fail(path, "data.dataset", f"unknown dataset {dataset!r}; valid datasets are {sorted(datasets.DATASETS)}")
    n_samples = _value(data, "n_samples", "data.n_samples", path, int)
    random_state = _value(data, "random_state", "data.random_state", path, int, default=0)
    standardize = _value(data, "standardize", "data.standardize", path, bool, default=False)
    try:
        X, y = datasets.load_dataset(dataset, n_samples, random_state=random_state)
    except ValueError as exc:
        raise _fail(path, "data", str(exc)) from None
    if standardize:
        from sklearn.preprocessing import StandardScaler

        X = StandardScaler().fit_transform(X)

    # kernel
    kernel = dict(_table(doc, "kernel", path, required=True))
    kind = _value(kernel, "kind", "kernel.kind", path, str, required=True)
    if kind not in kernels.AFFINITIES:
        raise _fail(path, "kernel.kind", f"unknown kernel {kind!r}; valid kinds are {sorted(kernels.AFFINITIES)}")
    del kernel["kind"]
    try:
        K = kernels.affinity(X, kind, **kernel)
    except (ValueError, TypeError) as exc:
        raise _fail(path, "kernel", str(exc)) from None

    # the relaxation
    parameters = _table(doc, "parameters", path, required=False)
    try:
        relaxation = cls.from_catalogue(K, X, y, doc) if custom else cls(K, **parameters)
    except (ValueError, TypeError) as exc:
        raise _fail(path, "parameters" if parameters else "relaxation", f"{spec}: {exc}") from None

    # validation settings
    scalable = [m for m in relaxation.methods() if m != "reference"]
    settings = _table(doc, "validate", path, required=False)
    _reject_unknown(settings, _VALIDATE_KEYS, "validate", path)
    methods = _value(settings, "methods", "validate.methods", path, list, default=[])
    for m in methods:
        if m not in scalable:
            raise _fail(path, "validate.methods", f"unknown method {m!r} for {spec}; valid methods are {scalable}")
    reference_solver = _value(settings, "reference_solver", "validate.reference_solver", path, str, default="CLARABEL")
    if reference_solver.upper() not in REFERENCE_SOLVERS:
        raise _fail(
            path, "validate.reference_solver", f"unknown solver {reference_solver!r}; valid solvers are {list(REFERENCE_SOLVERS)}"
        )
    tolerances = {}
    for key, default in _DEFAULT_TOLERANCES.items():
        value = _value(settings, key, f"validate.{key}", path, (int, float), default=default)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise _fail(path, f"validate.{key}", f"must be a positive number, got {value!r}")
        tolerances[key] = None if value is None else float(value)

    options = _table(doc, "options", path, required=False)
    for m, opts in options.items():
        if m not in ("reference", *scalable):
            raise _fail(path, f"options.{m}", f"unknown method {m!r} for {spec}; valid methods are {['reference', *scalable]}")
        if not isinstance(opts, dict):
            raise _fail(path, f"options.{m}", f"must be a table [options.{m}], got {opts!r}")
    method_options = {m: dict(opts) for m, opts in options.items() if m != "reference"}

    return Instance(
        name=name,
        relaxation=relaxation,
        methods=list(methods) or scalable,
        validate_kwargs={
            "reference_solver": reference_solver.upper(),
            "reference_options": dict(options.get("reference", {})),
            "method_options": method_options,
            **tolerances,
        },
        description=description,
        path=path,
    )


def find_problem_files(paths) -> list[Path]:
    """Problem files named by ``paths``: files as given, folders as every ``*.toml`` inside
    (sorted); duplicates removed.  Raises ``FileNotFoundError`` for a path that does not exist
    and ``ValueError`` for a folder without problem files."""
    files, seen = [], set()
    for p in map(Path, paths):
        if p.is_dir():
            found = sorted(p.glob("*.toml"))
            if not found:
                raise ValueError(f"{p}: no problem files (*.toml) in this folder")
        elif p.is_file():
            found = [p]
        else:
            raise FileNotFoundError(f"{p}: no such file or folder")
        for f in found:
            if f.resolve() not in seen:
                seen.add(f.resolve())
                files.append(f)
    return files


# --------------------------------------------------------------------------------------------
# running
# --------------------------------------------------------------------------------------------
def _error_result(method: str, exc: BaseException, reference: Result | None, elapsed: float) -> Result:
    """Stand-in for a method that raised: fails every check, carries the error in its status."""
    shape = reference.X.shape if reference is not None else (1, 1)
    message = f"error: {type(exc).__name__}: {exc}".replace("|", "/").replace("\n", " ")
    return Result(
        X=np.full(shape, np.nan),
        objective=float("nan"),
        status=message[:120],
        method=method,
        iterations=0,
        time=elapsed,
        residuals={"error": float("inf")},
    )


class _Progress:
    """Wraps ``relaxation.solve`` for one run: a line on stderr per finished solve, and errors
    of scalable methods turned into failing results instead of aborting the instance."""

    def __init__(self, instance: Instance, log, status):
        self.instance, self.log, self.status = instance, log, status
        self.reference: Result | None = None

    def __enter__(self):
        relaxation = self.instance.relaxation
        original = relaxation.solve  # the bound method

        def solve(method="auto", **options):
            self.status(f"{self.instance.name}: {method}")
            start = time.perf_counter()
            try:
                result = original(method, **options)
            except Exception as exc:
                if method == "reference":
                    raise
                self.log(f"  {self.instance.name} | {method}: raised {type(exc).__name__}: {exc}")
                self.log("    " + "    ".join(traceback.format_exception(exc)[-3:]).rstrip())
                return _error_result(method, exc, self.reference, time.perf_counter() - start)
            if method == "reference":
                self.reference = result
            gap = "" if result.relative_gap is None else f", relative gap {result.relative_gap:.1e}"
            self.log(
                f"  {self.instance.name} | {result.method}: {result.status}, {result.iterations} iterations, "
                f"{result.time:.2f} s, objective {result.objective:.10g}{gap}, max residual {result.max_residual:.1e}"
            )
            return result

        relaxation.solve = solve  # instance attribute shadows the method
        return self

    def __exit__(self, *exc_info):
        del self.instance.relaxation.solve
        return False


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


def _is_residual(key: str, residual_names: set[str]) -> bool:
    """History figures shown as residuals: ``*residual*``, ``infeasibility`` and the names the
    relaxation's :meth:`~cvxclust.Relaxation.residuals` reports (``row_sums``, ``psd``, ...)."""
    return "residual" in key or "infeasibility" in key or key in residual_names


def plot_convergence(report: ValidationReport, path, *, tol_objective=None, tol_residual=None) -> None:
    """Convergence of each scalable method from ``Result.history``, written to ``path`` (PNG).

    Left: the certified relative duality gap (solid) and the relative objective error against
    the reference (dashed); right: the residuals the method records (``primal_residual`` solid,
    ``dual_residual`` dashed, other residual figures in other line styles); one colour per
    method, against the iteration, on log scales.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), layout="constrained")
    FigureCanvasAgg(fig)
    ax_gap, ax_res = fig.subplots(1, 2)
    f_ref = report.reference.objective
    residual_names = set(report.reference.residuals)
    styles = {"primal_residual": "-", "dual_residual": "--"}
    extra_styles = [":", "-.", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (8, 2))]

    def series(history, key, transform=lambda v: v):
        pts = [
            (row.get("iteration", i + 1), transform(row[key]))
            for i, row in enumerate(history)
            if isinstance(row.get(key), (int, float)) and math.isfinite(row[key])
        ]
        pts = [(x, v) for x, v in pts if v > 0]
        return ([x for x, _ in pts], [v for _, v in pts]) if pts else None

    plotted = [False, False]
    for i, (method, result) in enumerate(report.results.items()):
        color = f"C{i % 10}"
        history = result.history or []
        s = series(history, "relative_gap")
        if s:  # often evaluated only every few iterations: then mark the points
            marker = "." if len(s[0]) < 0.5 * len(history) else None
            ax_gap.plot(*s, "-", marker=marker, color=color, label=f"{method}: duality gap")
            plotted[0] = True
        s = series(history, "objective", lambda f: abs(f - f_ref) / max(abs(f_ref), 1e-12))
        if s:
            ax_gap.plot(*s, "--", color=color, label=f"{method}: objective error")
            plotted[0] = True
        keys = {k for row in history for k in row if _is_residual(k, residual_names)}
        for key in sorted(keys, key=lambda k: (k not in styles, k)):
            s = series(history, key)
            if s:
                style = styles.setdefault(key, extra_styles[(len(styles) - 2) % len(extra_styles)])
                ax_res.plot(*s, linestyle=style, color=color, label=f"{method}: {key.replace('_', ' ')}")
                plotted[1] = True

    for ax, tol, title, ok in (
        (ax_gap, tol_objective, "relative duality gap / objective error", plotted[0]),
        (ax_res, tol_residual, "residuals", plotted[1]),
    ):
        ax.set_title(title)
        ax.set_xlabel("iteration")
        if ok:
            ax.set_yscale("log")
            if tol is not None:
                ax.axhline(tol, color="0.5", linestyle=":", linewidth=1, label="tolerance")
            ax.legend(fontsize="small")
            ax.grid(True, which="major", alpha=0.3)
        else:
            ax.text(0.5, 0.5, "no history recorded", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(report.name)
    fig.savefig(path, dpi=110)


# --------------------------------------------------------------------------------------------
# the command
# --------------------------------------------------------------------------------------------
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cvxclust",
        description="Convex relaxations of clustering: validate scalable solvers against cvxpy references.",
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
        help="comma-separated scalable methods to run instead of each file's list (those an instance lacks are skipped)",
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
    v.add_argument("-q", "--quiet", action="store_true", help="no progress and no tables, only failures and the summary")
    v.set_defaults(handler=_validate_command)
    return parser


def _usage_error(message: str) -> int:
    print(f"cvxclust validate: error: {message}", file=sys.stderr)
    return 2


def _validate_command(args) -> int:
    started = time.perf_counter()
    try:
        files = find_problem_files(args.paths or ["problems"])
        instances = [load_instance(f) for f in files]
    except (OSError, ValueError) as exc:
        hint = "" if args.paths else " (run from the repository root, or pass problem files or folders)"
        return _usage_error(f"{exc}{hint}")
    names = [inst.name for inst in instances]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes:
        return _usage_error(f"instance names must be unique; repeated: {dupes}")

    requested = None
    if args.methods is not None:
        requested = [m.strip() for m in args.methods.split(",") if m.strip()]
        known = {m for inst in instances for m in inst.relaxation.methods() if m != "reference"}
        unknown = [m for m in requested if m not in known]
        if not requested or unknown:
            return _usage_error(
                f"--methods: unknown method(s) {unknown or [args.methods]}; the instances have {sorted(known)}"
            )

    out = None
    if args.out is not None:
        out = Path(args.out)
        try:
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            return _usage_error(f"--out: {exc}")

    if args.blas_threads < 0:
        return _usage_error(f"--blas-threads must be >= 0, got {args.blas_threads}")
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=args.blas_threads or None, user_api="blas"):
        return _run(instances, requested, out, args, started)


def _run(instances: list[Instance], requested, out: Path | None, args, started: float) -> int:
    from tqdm.auto import tqdm

    quiet = args.quiet
    bar = tqdm(instances, desc="validate", unit="instance", file=sys.stderr, disable=quiet, dynamic_ncols=True)

    def log(message: str) -> None:
        if not quiet:
            tqdm.write(message, file=sys.stderr)

    def emit(text: str) -> None:  # stdout, without tearing the bar on stderr
        tqdm.write(text, file=sys.stdout)

    tables, dicts = [], []
    n_checks = n_failed = 0
    for inst in bar:
        methods = inst.methods
        if requested is not None:
            available = inst.relaxation.methods()
            methods = [m for m in requested if m in available]
            if not methods:
                log(f"{inst.name}: skipped, none of {requested} is a method of {inst.relaxation.name}")
                continue
        bar.set_postfix_str(inst.name)
        with warnings.catch_warnings(record=True) as caught, _Progress(inst, log, bar.set_postfix_str):
            warnings.simplefilter("always")
            try:
                report = inst.run(methods, reference_solver=args.reference_solver)
            except Exception as exc:  # the reference itself failed: the instance fails as a whole
                report = None
                error = f"{type(exc).__name__}: {exc}"
        for message in dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught):
            log(f"  {inst.name} | {message}")

        if report is None:
            n_checks += 1
            n_failed += 1
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
            plot_convergence(
                report,
                out / f"{_plot_name(inst.name)}.png",
                tol_objective=inst.validate_kwargs.get("tol_objective"),
                tol_residual=inst.validate_kwargs.get("tol_residual"),
            )
    bar.close()

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
    """Run the ``cvxclust`` command with ``argv`` (default ``sys.argv[1:]``); return the exit status."""
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, usage errors
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    return args.handler(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
