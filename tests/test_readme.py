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
