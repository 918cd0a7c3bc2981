"""The front page works: its test command is the one CI runs, and its Python examples run."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"
TEXT = README.read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", TEXT, re.S)


def test_the_test_command_is_stated():
    assert '```\npip install ".[test]" && python -m pytest\n```' in TEXT
    ci = (README.parent / ".ci" / "run").read_text(encoding="utf-8")
    assert '\npip install ".[test]" && python -m pytest\n' in ci  # verbatim, as CI runs it


def test_the_install_command_runs_the_main_job():
    """The first command a reader meets installs the package and validates the shipped catalogue
    (that it passes is checked by running it, too slow for the suite; each file loads in
    tests/test_catalogue.py)."""
    first = re.search(r"```\n(.*?)\n```", TEXT, re.S).group(1)
    assert first == "pip install . && cvxclust validate problems/"
    assert (README.parent / "problems").is_dir()


def test_the_front_page_is_short():
    assert len(TEXT.splitlines()) <= 200


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_python_examples_run(capsys):
    """The blocks run in order in one namespace, as a reader pasting them would."""
    assert len(BLOCKS) >= 3
    namespace: dict = {"__name__": "readme"}
    for block in BLOCKS:
        exec(compile(block, str(README), "exec"), namespace)
    out = capsys.readouterr().out
    assert out.count("| pass |") >= 2  # the validation reports of the quickstart and of the prototype
    assert "optimal" in out
