"""Every teaching script in ``examples/`` runs to completion and writes its figure.

The contract for an example: ``python examples/<name>.py --out PATH`` exits with status 0 and
writes a figure to PATH.  Scripts run in a subprocess (as a user would run them) from a
temporary directory, so nothing is written into the repository.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES_DIR = Path(__file__).resolve().parents[1] / "examples"
EXAMPLES = sorted(p for p in EXAMPLES_DIR.glob("*.py") if not p.name.startswith("_"))

#: Extra arguments that keep a script fast under test (optional, per script); the documentation's
#: gallery runs the scripts with the same ones.
FAST_ARGS = json.loads((EXAMPLES_DIR / "fast_args.json").read_text())

#: One BLAS thread: the examples use small matrices, and oversubscribed threads on a busy
#: machine make small eigendecompositions many times slower.  The scripts run from a temporary
#: folder, so the checkout goes first on their path: they test this package, not an installed one.
ENV = {**os.environ, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
       "PYTHONPATH": os.pathsep.join([str(EXAMPLES_DIR.parent), *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_examples_found():
    assert EXAMPLES, f"no example scripts in {EXAMPLES_DIR}"


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs_and_writes_figure(script: Path, tmp_path: Path):
    out = tmp_path / "figures" / f"{script.stem}.png"
    cmd = [sys.executable, str(script), "--out", str(out), *FAST_ARGS.get(script.name, [])]
    proc = subprocess.run(cmd, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (
        f"{' '.join(cmd)} exited with {proc.returncode}\n--- stdout ---\n{proc.stdout[-3000:]}"
        f"\n--- stderr ---\n{proc.stderr[-5000:]}"
    )
    assert out.is_file(), f"{script.name} did not write {out}"
    assert out.stat().st_size > 0, f"{script.name} wrote an empty {out}"
