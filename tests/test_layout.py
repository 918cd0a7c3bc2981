"""The package's layout rules, read from the source: a family never imports another family
(shared code lives in the core), and no module imports a private module of another subpackage."""

from __future__ import annotations

import ast
from pathlib import Path

import cvxclust

PACKAGE = Path(cvxclust.__file__).parent
FAMILIES = ("ssc", "cluhsic", "cluhsical", "bregman")


def imported_modules(path: Path) -> list[str]:
    """The absolute dotted names of the cvxclust modules that the file at ``path`` imports
    (``from . import x`` resolved against the file's own package)."""
    package = ["cvxclust", *path.parent.relative_to(PACKAGE).parts]
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names += [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    return [name for name in names if name.split(".")[0] == "cvxclust"]


def sources():
    return sorted(PACKAGE.rglob("*.py"))


def test_imported_modules_resolve_relative_imports():
    names = imported_modules(PACKAGE / "cluhsical" / "_estimator.py")
    assert "cvxclust.hsic" in names and "cvxclust._local_search" in names and "cvxclust.cluhsical._greedy" in names


def test_no_family_imports_another_family():
    offences = []
    for path in sources():
        parts = path.relative_to(PACKAGE).parts
        if parts[0] not in FAMILIES:
            continue
        for name in imported_modules(path):
            target = name.split(".")[1] if name.count(".") else ""
            if target in FAMILIES and target != parts[0]:
                offences.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not offences, offences


def test_no_module_imports_a_private_module_of_another_subpackage():
    offences = []
    for path in sources():
        own = path.relative_to(PACKAGE).parts[:-1]
        for name in imported_modules(path):
            parts = name.split(".")[1:]
            private = [i for i, part in enumerate(parts) if part.startswith("_")]
            # a private module inside a subpackage is private to that subpackage
            if private and private[0] >= 1 and tuple(parts[: private[0]]) != own:
                offences.append(f"{path.relative_to(PACKAGE)} imports {name}")
    assert not offences, offences
