"""Screenshots of the built documentation in headless Chromium, to look at the pages as a reader does.

    sphinx-build -W -b html docs docs/_build/html
    python docs/screenshots.py                       # docs/_build/screenshots/*.png

Opens the front page, a user-guide page and a gallery page of the built site (``file://`` URLs,
no server) in Chromium (Debian's ``chromium`` package, or ``--chromium PATH``), lets their
scripts run (MathJax typesets the formulas) and saves one full-width screenshot of each.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DOCS = Path(__file__).resolve().parent

#: name of the screenshot -> page of the built site, and the height of the window
PAGES = {
    "front": ("index.html", 1400),
    "user_guide": ("user_guide/cluhsic.html", 2400),
    "gallery": ("auto_examples/cluhsic_chain.html", 2600),
}

# no background traffic: the machine has no network, and each refused connection costs time
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
         "--virtual-time-budget=8000"]


def screenshot(chromium: str, page: Path, out: Path, width: int, height: int) -> None:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
               f"--screenshot={out}", page.as_uri()]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if not out.is_file():
        raise RuntimeError(f"chromium wrote no screenshot of {page}:\n{proc.stderr[-2000:]}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=DOCS / "_build" / "html", help="the built site")
    parser.add_argument("--out", type=Path, default=DOCS / "_build" / "screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    parser.add_argument("--width", type=int, default=1280)
    args = parser.parse_args(argv)
    if not Path(args.chromium).is_file():
        parser.error(f"no Chromium at {args.chromium}: install Debian's chromium package or pass --chromium")
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (page, height) in PAGES.items():
        path = args.build / page
        if not path.is_file():
            parser.error(f"{path} does not exist: build the site first (sphinx-build -W -b html docs docs/_build/html)")
        target = args.out / f"{name}.png"
        screenshot(args.chromium, path, target, args.width, height)
        print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
