"""The documentation's generated pages: every public name in the API reference, every results
file on the results page, and the build command where the README and CI say."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import types
from pathlib import Path

import cvxclust

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs"))
import api_pages  # noqa: E402

BUILD = "sphinx-build -W -b html docs docs/_build/html"


def test_every_public_module_is_in_the_reference():
    public = {f"cvxclust.{m.name}" for m in pkgutil.iter_modules(cvxclust.__path__) if not m.name.startswith("_")}
    listed = {name for name, _ in api_pages.MODULES}
    assert public - {"cvxclust.cli"} <= listed, f"modules missing from the API reference: {public - listed}"


def test_every_public_name_has_a_page(tmp_path):
    page = tmp_path / "api.rst"
    api_pages.write_api_page(page)
    documented = set()
    current = None
    for line in page.read_text().splitlines():
        if line.startswith(".. currentmodule:: "):
            current = importlib.import_module(line.split()[-1])
        elif line.startswith("   ") and ":" not in line and line.strip():
            documented.add(id(getattr(current, line.strip())))
    for module_name, _ in api_pages.MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            obj = getattr(module, name)
            if not isinstance(obj, types.ModuleType):
                assert id(obj) in documented, f"{module_name}.{name} has no page"


def test_results_pages_follow_the_results_folder(tmp_path):
    results = ROOT / "benchmarks" / "results"
    api_pages.write_results_page(tmp_path / "results.rst", tmp_path / "results", results)
    index = (tmp_path / "results.rst").read_text()
    for md in results.glob("*.md"):
        assert f"results/{md.stem}" in index
        assert (tmp_path / "results" / f"{md.stem}.mdinc").read_text().startswith("# ")


def test_readme_and_ci_build_the_docs():
    assert f'pip install ".[docs]" && {BUILD}' in (ROOT / "README.md").read_text()
    assert f'pip install ".[docs]" && {BUILD}' in (ROOT / ".ci" / "run").read_text()
