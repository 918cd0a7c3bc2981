"""Pages of the documentation written at build time (see ``conf.py``): the API reference from
the package's ``__all__`` lists, and the speed and reproduction pages from
``benchmarks/results``."""

from __future__ import annotations

import importlib
import shutil
import types
from pathlib import Path

#: the public modules, in the order of the reference, with a one-line summary
MODULES = [
    ("cvxclust", "Solving, validating, results"),
    ("cvxclust.generic", "The generic solver of cvxclust.solve"),
    ("cvxclust.ssc", "Semidefinite spectral clustering"),
    ("cvxclust.hsic", "The HSIC problem tr(K P A P^T) that CLUHSIC and CLUHSICAL share"),
    ("cvxclust.cluhsic", "CLUHSIC: clustering with structured outputs (re-exports cvxclust.hsic)"),
    ("cvxclust.cluhsical", "CLUHSICAL: CLUHSIC with a structured loss"),
    ("cvxclust.bregman", "Bregman-divergence clustering"),
    ("cvxclust.structures", "Output structures"),
    ("cvxclust.kernels", "Kernels"),
    ("cvxclust.metrics", "Metrics"),
    ("cvxclust.rounding", "Roundings"),
    ("cvxclust.datasets", "Data sets"),
    ("cvxclust.problem_classes", "The classical clustering and graph SDPs in plain cvxpy"),
    ("cvxclust.solvers", "The certified-solver core"),
    ("cvxclust.penalty", "The penalty schedule of the ADMMs"),
    ("cvxclust.result", "Results"),
    ("cvxclust.parameters", "Parameter checks"),
    ("cvxclust.validation", "Validation"),
    ("cvxclust.sweeps", "Sweeps"),
    ("cvxclust.sweep", "The former name of cvxclust.sweeps (no names of its own)"),
    ("cvxclust.parallel", "Fan-out on joblib and Dask"),
    ("cvxclust.catalogue", "The validation catalogue"),
    ("cvxclust.acceleration", "Acceleration"),
    ("cvxclust.dual_newton", "Dual semismooth Newton for nearest-point problems"),
    ("cvxclust.linalg", "Linear algebra"),
]


def public_names(module_name: str) -> list[str]:
    """The names of ``module_name.__all__`` that are not modules, sorted, case-insensitively."""
    module = importlib.import_module(module_name)
    names = [n for n in getattr(module, "__all__", []) if not isinstance(getattr(module, n), types.ModuleType)]
    return sorted(names, key=str.lower)


def write_api_page(path: Path) -> None:
    """The reference: each public object once, at the first module of :data:`MODULES` that
    exports it, except the estimators, listed with their family."""
    lines = ["API reference", "=============", "",
             "Every public name of the package, one page each, generated from its docstring.", ""]
    families = tuple(f"cvxclust.{f}." for f in ("ssc", "cluhsic", "cluhsical", "bregman"))
    seen = set()
    for module_name, title in MODULES:
        module = importlib.import_module(module_name)
        names = [n for n in public_names(module_name) if id(getattr(module, n)) not in seen]
        if module_name == MODULES[0][0]:
            names = [n for n in names if not getattr(getattr(module, n), "__module__", "").startswith(families)]
        seen.update(id(getattr(module, n)) for n in names)
        if not names:
            continue
        heading = f"``{module_name}``: {title}"
        lines += [heading, "-" * len(heading), "", f".. currentmodule:: {module_name}", "",
                  ".. autosummary::", "   :toctree: generated", "   :nosignatures:", ""]
        lines += [f"   {name}" for name in names] + [""]
    _write_if_changed(path, "\n".join(lines))


def write_results_page(path: Path, folder: Path, results: Path) -> None:
    """One page per results file of the benchmarks (its Markdown as written by the benchmark
    script, and its figure), under a page that lists them."""
    folder.mkdir(exist_ok=True)
    pages = []
    for md in sorted(results.glob("*.md")):
        text = md.read_text()
        if not text.startswith("# "):
            text = f"# {md.stem.replace('_', ' ').capitalize()}\n\n{text}"
        figure = md.with_suffix(".png")
        if figure.is_file():
            shutil.copyfile(figure, folder / figure.name)
            first, _, rest = text.partition("\n")
            text = f"{first}\n\n![{md.stem}]({figure.name})\n{rest}"
        # the Markdown is parsed where an rst page includes it, under a name that is no source
        # suffix of the site (sphinx-gallery would take examples/README.md for its header)
        _write_if_changed(folder / f"{md.stem}.mdinc", text)
        _write_if_changed(folder / f"{md.stem}.rst", f".. include:: {md.stem}.mdinc\n   :parser: myst_parser.sphinx_\n")
        pages.append(f"{folder.name}/{md.stem}")
    lines = ["Speed and reproductions", "=======================", "",
             "The tables and figures written by the scripts of ``benchmarks/`` (speed against "
             "cvxpy + SCS / Clarabel on the same instances, and the reproductions of the papers' "
             "tables), each with the command, revision and environment of its run. "
             "They are copied here from ``benchmarks/results`` at every build.", "",
             ".. toctree::", "   :maxdepth: 1", ""] + [f"   {p}" for p in pages] + [""]
    _write_if_changed(path, "\n".join(lines))


def _write_if_changed(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
