"""The catalogue of validation instances: one TOML file per instance in ``problems/``.

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

    [kernel]                                 # required (see below)
    kind = "rbf"                             # required: a cvxclust.kernels.affinity kind
    delta = 1.0                              # kind-specific parameters (omit delta: median width)

    [validate]                               # optional
    methods = []                             # [] or missing: every registered scalable method
    reference_solver = "CLARABEL"            # or "SCS"; by size when missing
    objective_tol = 1e-6                     # relative objective gap to the reference
    residual_tol = 1e-6                      # worst relative residual
    solution_tol = 1e-3                      # optional; missing: reported, not judged

    [options.admm]                           # optional keyword options, per method
    tol = 1e-8
    [options.reference]                      # ... and for the cvxpy reference (e.g. eps)

The relaxation is built as ``Class(K, **parameters)``.  A relaxation that needs more than the
kernel matrix defines a classmethod ``from_catalogue(K, X, y, table)`` (``table``: the whole
parsed file) and is built by it instead; such a class may then also read top-level keys of its
own, and a file for it may omit ``[kernel]`` (K is then None; e.g.
:class:`~cvxclust.bregman.ConditionalJC`, which works on the data themselves).  A top-level key
that neither the format nor the class reads is rejected.

Options are checked when the file is loaded: the options every scalable solver shares
(``tol``, ``residual_tol``, ``max_iter``, ``time_limit``, ``check_every``, ``verbose``) against
the table of :class:`cvxclust.solvers.IterativeSolver`, the reference's ``eps`` (positive) and
``verbose`` (boolean); its ``solver`` is set by ``validate.reference_solver`` only.  Every error
is a ``ValueError`` naming the file and the key.  The old spellings of the tolerances
(``tol_objective``, ``tol_residual``, ``tol_solution``) are still read, with a ``FutureWarning``.
"""

from __future__ import annotations

import importlib
import math
import tomllib
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from ._deprecation import warn_deprecated
from ._relaxation import REFERENCE_SOLVERS, Relaxation, Result
from .parameters import check_parameter
from .solvers import POSITIVE, IterativeSolver
from .validation import ValidationReport, validate

__all__ = ["Instance", "load_instance", "find_problem_files", "resolve_relaxation", "run_instance"]


#: Keys a problem file may hold, per table ("" is the top level).
_TOP_KEYS = {"name", "description", "relaxation", "parameters", "data", "kernel", "validate", "options"}
_DATA_KEYS = {"dataset", "n_samples", "standardize", "random_state"}
_DEFAULT_TOLERANCES = {"objective_tol": 1e-6, "residual_tol": 1e-6, "solution_tol": None}
#: old spellings of the tolerance keys, read for one release with a FutureWarning
_RENAMED_TOLERANCES = {"tol_objective": "objective_tol", "tol_residual": "residual_tol", "tol_solution": "solution_tol"}
_VALIDATE_KEYS = {"methods", "reference_solver", *_DEFAULT_TOLERANCES, *_RENAMED_TOLERANCES}
#: Constraints on the options of the cvxpy reference that a file may set (others go to the solver).
_REFERENCE_OPTIONS = {"eps": POSITIVE, "verbose": ["boolean"]}


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
        ``reference_solver``, ``reference_options``, ``method_options``, ``objective_tol``,
        ``residual_tol``, ``solution_tol``.
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

    def run(self, methods: list[str] | None = None, *, reference_solver: str | None = None,
            errors: str = "raise", callback=None) -> ValidationReport:
        """Validate: the reference, then each method (``methods`` overrides :attr:`methods`;
        ``errors`` and ``callback`` as for :func:`cvxclust.validate`)."""
        kwargs = dict(self.validate_kwargs)
        if reference_solver is not None:
            kwargs["reference_solver"] = reference_solver
        return validate(self.relaxation, self.methods if methods is None else list(methods), name=self.name,
                        errors=errors, callback=callback, **kwargs)


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
    # bool is an int in Python; TOML keeps them apart, and so does the catalogue
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


class _ReadTracker(dict):
    """The parsed file handed to ``from_catalogue``: remembers which top-level keys were read."""

    def __init__(self, doc: dict):
        super().__init__(doc)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)

    def _all(self):
        self.read.update(super().keys())  # a class that walks the table may read any key

    def __iter__(self):
        self._all()
        return super().__iter__()

    def keys(self):
        self._all()
        return super().keys()

    def items(self):
        self._all()
        return super().items()

    def values(self):
        self._all()
        return super().values()


def _check_options(path, method: str, options: dict) -> None:
    """Reject option values that the method would refuse, naming ``options.<method>.<key>``."""
    if method == "reference":
        if "solver" in options:
            raise _fail(path, "options.reference.solver", "set the reference solver with validate.reference_solver")
        table = _REFERENCE_OPTIONS
    else:
        table = {name: param.constraints for name, param in IterativeSolver.parameters.items()}
    for key, value in options.items():
        if key in table:
            try:
                check_parameter(key, value, table[key], method)
            except ValueError as exc:
                raise _fail(path, f"options.{method}.{key}", str(exc)) from None


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
            path,
            "relaxation",
            f"unknown relaxation {spec!r}; cvxclust.{family} defines {[f'{family}.{v}' for v in valid]}",
        )
    return cls


def load_instance(path) -> Instance:
    """Load one problem file (see the module docstring for the format).

    Raises
    ------
    ValueError
        Naming the file and the key, for invalid TOML, a missing or unknown key, an unknown
        relaxation, data set, kernel or method, parameters the data, kernel or relaxation
        reject, or option values a method would refuse.
    """
    from . import datasets, kernels  # imported here: the command starts fast

    path = Path(path)
    try:
        with path.open("rb") as f:
            doc = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: invalid TOML: not UTF-8 text ({exc.reason} at byte {exc.start})") from None

    name = _value(doc, "name", "name", path, str, required=True)
    if not name.strip():
        raise _fail(path, "name", "must not be empty (it names the table and the plot file)")
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
        raise _fail(
            path, "data.dataset", f"unknown dataset {dataset!r}; valid datasets are {sorted(datasets.DATASETS)}"
        )
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

    # kernel (a relaxation that builds itself from the data may do without one: K is then None)
    K = None
    if not custom or "kernel" in doc:
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
    tracked = _ReadTracker(doc)
    try:
        relaxation = cls.from_catalogue(K, X, y, tracked) if custom else cls(K, **parameters)
    except (ValueError, TypeError) as exc:
        raise _fail(path, "parameters" if parameters else "relaxation", f"{spec}: {exc}") from None
    if custom:
        # the keys of the format, and those the class read: anything else is a misspelling
        _reject_unknown(doc, _TOP_KEYS | tracked.read, "", path)

    # validation settings
    scalable = relaxation.scalable_methods()
    settings = _table(doc, "validate", path, required=False)
    _reject_unknown(settings, _VALIDATE_KEYS, "validate", path)
    methods = _value(settings, "methods", "validate.methods", path, list, default=[])
    for m in methods:
        if m not in scalable:
            raise _fail(path, "validate.methods", f"unknown method {m!r} for {spec}; valid methods are {scalable}")
    reference_solver = _value(settings, "reference_solver", "validate.reference_solver", path, str, default=None)
    if reference_solver is not None and reference_solver.upper() not in REFERENCE_SOLVERS:
        raise _fail(
            path,
            "validate.reference_solver",
            f"unknown solver {reference_solver!r}; valid solvers are {list(REFERENCE_SOLVERS)}",
        )
    tolerances = _tolerances(settings, path)

    options = _table(doc, "options", path, required=False)
    for m, opts in options.items():
        if m not in ("reference", *scalable):
            raise _fail(
                path, f"options.{m}", f"unknown method {m!r} for {spec}; valid methods are {['reference', *scalable]}"
            )
        if not isinstance(opts, dict):
            raise _fail(path, f"options.{m}", f"must be a table [options.{m}], got {opts!r}")
        _check_options(path, m, opts)
    method_options = {m: dict(opts) for m, opts in options.items() if m != "reference"}

    return Instance(
        name=name,
        relaxation=relaxation,
        methods=list(methods) or scalable,
        validate_kwargs={
            "reference_solver": None if reference_solver is None else reference_solver.upper(),
            "reference_options": dict(options.get("reference", {})),
            "method_options": method_options,
            **tolerances,
        },
        description=description,
        path=path,
    )


def _tolerances(settings: dict, path) -> dict:
    """The tolerances of the ``[validate]`` table, by their names; an old spelling is read with
    a ``FutureWarning``, and both spellings of one key are refused."""
    settings, spelt = dict(settings), {key: key for key in _DEFAULT_TOLERANCES}
    for old, new in _RENAMED_TOLERANCES.items():
        if old in settings:
            if new in settings:
                raise _fail(path, f"validate.{old}", f"the old spelling of validate.{new}, which the file also sets; "
                            f"keep validate.{new} alone")
            warn_deprecated(f"{path}: key 'validate.{old}' is renamed 'validate.{new}'", stacklevel=4)
            settings[new], spelt[new] = settings.pop(old), old
    tolerances = {}
    for key, default in _DEFAULT_TOLERANCES.items():
        where = f"validate.{spelt[key]}"
        value = _value(settings, key, where, path, (int, float), default=default)
        if value is not None and not (math.isfinite(value) and value > 0):
            raise _fail(path, where, f"must be a positive number, got {value!r}")
        tolerances[key] = None if value is None else float(value)
    return tolerances


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
# running an instance (in this process or in a worker of cvxclust.parallel.run_tasks)
# --------------------------------------------------------------------------------------------
def run_instance(instance, methods: list[str] | None = None, reference_solver: str | None = None) -> dict:
    """Validate ``instance`` (an :class:`Instance`, or the path of a problem file to load): the
    unit of work of ``cvxclust validate``, one per worker when it fans out
    (:mod:`cvxclust.parallel`).

    ``methods`` (the scalable methods to run instead of the file's list; those the relaxation
    lacks are dropped) and ``reference_solver`` override the file.  Returns a dict: ``name``;
    ``report`` (the :class:`~cvxclust.validation.ValidationReport`, or None); ``error`` (why the
    instance failed as a whole: its reference could not be solved) or ``skipped`` (none of
    ``methods`` applies), else None; ``log``, the lines to show: one per finished solve, and the
    warnings raised.  A scalable method that raises fails its checks instead of the instance.
    """
    if not isinstance(instance, Instance):
        instance = load_instance(instance)
    outcome = {"name": instance.name, "report": None, "error": None, "skipped": None, "log": []}
    chosen = instance.methods
    if methods is not None:
        available = instance.relaxation.methods()
        chosen = [m for m in methods if m in available]
        if not chosen:
            outcome["skipped"] = f"none of {list(methods)} is a method of {instance.relaxation.name}"
            return outcome

    def log(method: str, result: Result) -> None:
        """A line per finished solve; a method that raised also logs the end of its traceback."""
        if "traceback" in result.extras:
            outcome["log"].append(f"{method}: raised {result.status[len('error: '):]}")
            outcome["log"].append("    " + result.extras["traceback"].replace("\n", "\n    ").rstrip())
            return
        gap = "" if result.relative_gap is None else f", relative gap {result.relative_gap:.1e}"
        outcome["log"].append(
            f"{result.method}: {result.status}, {result.iterations} iterations, {result.time:.2f} s, "
            f"objective {result.objective:.10g}{gap}, max residual {result.max_residual:.1e}")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome["report"] = instance.run(chosen, reference_solver=reference_solver, errors="record", callback=log)
        except Exception as exc:  # the reference itself failed: the instance fails as a whole
            outcome["error"] = f"{type(exc).__name__}: {exc}"
    outcome["log"] += [f"{w.category.__name__}: {w.message}" for w in caught]
    outcome["log"] = list(dict.fromkeys(outcome["log"]))
    return outcome
