"""The package's layout rules, read from the source: a family never imports another family
(shared code lives in the core), and no module imports a private module of another subpackage."""

from __future__ import annotations

import ast
from pathlib import Path

import cvxclust

PACKAGE = Path(cvxclust.__file__).parent
FAMILIES = ("ssc", "cluhsic", "cluhsical", "bregman")


def imported_modules(path: Path, root: Path = PACKAGE) -> list[str]:
    """The absolute dotted names that the file at ``path`` (in the package whose folder is
    ``root``) imports from the package: every ``from M import a`` gives ``M`` and ``M.a`` (``a``
    may be a module), relative imports resolved against the file's own package."""
    package = ["cvxclust", *path.parent.relative_to(root).parts]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names += [module] + [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [name for name in names if name.split(".")[0] == "cvxclust"]


def family_offences(path: Path, root: Path = PACKAGE) -> list[str]:
    parts = path.relative_to(root).parts
    if parts[0] not in FAMILIES:
        return []
    return [name for name in imported_modules(path, root)
            if name.count(".") and name.split(".")[1] in FAMILIES and name.split(".")[1] != parts[0]]


def private_offences(path: Path, root: Path = PACKAGE) -> list[str]:
    """Imports of a private module (or name) inside a subpackage other than the file's own; the
    private modules at the package's top level are the core's, open to all."""
    own = path.relative_to(root).parts[:-1]
    offences = []
    for name in imported_modules(path, root):
        parts = name.split(".")[1:]
        private = [i for i, part in enumerate(parts) if part.startswith("_")]
        if private and private[0] >= 1 and tuple(parts[: private[0]]) != own:
            offences.append(name)
    return offences


def test_imports_are_resolved_in_every_form(tmp_path):
    (tmp_path / "cluhsical").mkdir()
    family = tmp_path / "cluhsical" / "_module.py"
    family.write_text("from . import _sibling\nfrom .. import kernels\nfrom ..hsic import _objectives\n"
                      "from ._greedy import search\nfrom cvxclust import cluhsic\nimport cvxclust.ssc\n"
                      "def f():\n    from ..bregman._sets import project\n")
    core = tmp_path / "kernels.py"
    core.write_text("from ._checks import check_kernel\nfrom .hsic import lowrank\n")
    names = set(imported_modules(family, tmp_path))
    assert {"cvxclust.cluhsical._sibling", "cvxclust.kernels", "cvxclust.hsic._objectives",
            "cvxclust.cluhsical._greedy.search", "cvxclust.cluhsic", "cvxclust.ssc",
            "cvxclust.bregman._sets"} <= names
    assert {"cvxclust._checks.check_kernel", "cvxclust.hsic.lowrank"} <= set(imported_modules(core, tmp_path))
    assert set(family_offences(family, tmp_path)) == {"cvxclust.cluhsic", "cvxclust.ssc", "cvxclust.bregman._sets",
                                                      "cvxclust.bregman._sets.project"}
    assert set(private_offences(family, tmp_path)) == {"cvxclust.hsic._objectives", "cvxclust.bregman._sets",
                                                       "cvxclust.bregman._sets.project"}
    assert family_offences(core, tmp_path) == [] and private_offences(core, tmp_path) == []


def test_no_family_imports_another_family():
    offences = {str(path.relative_to(PACKAGE)): family_offences(path) for path in sorted(PACKAGE.rglob("*.py"))}
    assert not {k: v for k, v in offences.items() if v}


def test_no_module_imports_a_private_module_of_another_subpackage():
    offences = {str(path.relative_to(PACKAGE)): private_offences(path) for path in sorted(PACKAGE.rglob("*.py"))}
    assert not {k: v for k, v in offences.items() if v}


def test_examples_and_benchmarks_use_the_public_api():
    repository = Path(__file__).resolve().parents[1]
    scripts = sorted((repository / "examples").glob("*.py")) + sorted((repository / "benchmarks").glob("*.py"))
    assert scripts
    offences = {script.name: [name for name in imported_modules(script, script.parent)
                              if any(part.startswith("_") for part in name.split(".")[1:])]
                for script in scripts}
    assert not {k: v for k, v in offences.items() if v}


def test_lines_within_120_characters():
    """No line of the shipped Python (package, benchmarks, examples, tests, docs) exceeds 120 characters."""
    root = Path(__file__).resolve().parents[1]
    paths = [path for folder in ("cvxclust", "benchmarks", "examples", "tests", "docs")
             for path in sorted((root / folder).rglob("*.py"))
             if not {"_build", "auto_examples"} & set(path.relative_to(root).parts)]
    assert {"cvxclust", "benchmarks", "examples", "tests"} <= {path.relative_to(root).parts[0] for path in paths}
    long = [f"{path.relative_to(root)}:{number} ({len(line)})" for path in paths
            for number, line in enumerate(path.read_text().splitlines(), 1) if len(line) > 120]
    assert not long, "\n".join(long)
