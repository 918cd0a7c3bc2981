"""Sphinx configuration of the cvxclust documentation.

Build: ``pip install ".[docs]"`` then ``sphinx-build -W -b html docs docs/_build/html``.
The API reference (``api.rst``) and the speed and reproduction pages (``results.rst``) are
written here at every build from the package's ``__all__`` lists and ``benchmarks/results``,
so they never go stale.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(DOCS))

import cvxclust  # noqa: E402
from api_pages import write_api_page, write_results_page  # noqa: E402

project = "cvxclust"
author = "the cvxclust developers"
copyright = "the cvxclust developers"
release = version = cvxclust.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
    "myst_parser",
]

exclude_patterns = ["_build", "auto_examples/*.ipynb", "auto_examples/*.py", "auto_examples/*.zip",
                    "auto_examples/*.md5", "auto_examples/*.json"]
source_suffix = {".rst": "restructuredtext"}
myst_heading_anchors = 3
# the results files come from the benchmark scripts as they are (their tables start at level 3)
suppress_warnings = ["myst.header", "config.cache"]
default_role = "literal"  # `x` in docstrings reads as code, as in the package's docstrings

# the API reference: one page per public name, from the docstrings
autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_xref_param_type = False
numpydoc_validation_checks = set()

html_theme = "pydata_sphinx_theme"
html_title = "cvxclust"
html_static_path = ["_static"]
html_css_files = ["cvxclust.css"]
html_theme_options = {
    "navigation_depth": 2,
    "show_toc_level": 2,
    "navbar_align": "left",
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
}
html_sidebars = {"**": ["sidebar-nav-bs"], "index": []}

# the gallery: examples/ run at small sizes; each script writes its figure to --out, which the
# scraper below embeds (the scripts close their figures, so matplotlib's scraper finds none)
GALLERY_OUT = DOCS / "_build" / "gallery_figures"
FAST_ARGS = json.loads((ROOT / "examples" / "fast_args.json").read_text())  # the sizes the tests use


def gallery_argv(gallery_conf, script_vars):
    # relative to the example's directory, where sphinx-gallery runs it: the page shows no
    # absolute path of the machine that built it
    source = Path(script_vars["src_file"])
    out = os.path.relpath(GALLERY_OUT / f"{source.stem}.png", source.parent)
    return ["--out", out, *FAST_ARGS.get(source.name, [])]


class FigureFileScraper:
    """Embed the figure a gallery script wrote to its ``--out`` path."""

    def __repr__(self):  # sphinx-gallery caches configurations by repr
        return "FigureFileScraper"

    def __call__(self, block, block_vars, gallery_conf):
        from sphinx_gallery.scrapers import figure_rst
        written = GALLERY_OUT / f"{Path(block_vars['src_file']).stem}.png"
        if not written.is_file():
            return ""
        target = next(block_vars["image_path_iterator"])
        shutil.copyfile(written, target)
        written.unlink()
        return figure_rst([target], gallery_conf["src_dir"])


sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples"),
    "gallery_dirs": str(DOCS / "auto_examples"),
    "filename_pattern": r".*\.py",
    "reset_argv": gallery_argv,
    "image_scrapers": (FigureFileScraper(),),
    "download_all_examples": False,
    "remove_config_comments": True,
    "plot_gallery": "True",
    "abort_on_example_error": True,
}

os.environ.setdefault("MPLBACKEND", "Agg")
for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(name, "1")  # small examples: one BLAS thread is fastest
GALLERY_OUT.mkdir(parents=True, exist_ok=True)
shutil.rmtree(DOCS / "generated", ignore_errors=True)  # autosummary leaves the pages of removed names
write_api_page(DOCS / "api.rst")
write_results_page(DOCS / "results.rst", DOCS / "results", ROOT / "benchmarks" / "results")
