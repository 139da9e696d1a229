"""``rulegauge rulings import``: the folder's mapping.yaml is used when --mapping is not given,
and a warning every page shares prints once with its page count."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from rulegauge.cli.rulings import grouped_warnings
from rulegauge.core.errors import Problem
from tests.helpers.common import REPO

PAGES = REPO / "goldsets" / "sample-rulings"


def test_grouped_warnings_print_once_with_their_pages() -> None:
    ws = [Problem("a.txt", "missing: x"), Problem("b.txt", "missing: x"), Problem("a.txt", "odd: y")]
    assert grouped_warnings(ws, 2) == ["missing: x: in all 2 pages", "a.txt: odd: y"]
    assert grouped_warnings(ws[:1] + ws[2:] + [Problem("c.txt", "odd: y")], 3) == [
        "a.txt: missing: x", "odd: y: in 2 of 3 pages (a.txt, c.txt)"]


def test_import_of_a_folder_uses_its_mapping(tmp_path: Path) -> None:
    res = subprocess.run([sys.executable, "-c", "from rulegauge.cli import main; main()", "rulings",
                          "import", str(PAGES), "-g", str(REPO / "goldsets" / "sample.yaml"),
                          "--out", str(tmp_path)], capture_output=True, text=True, timeout=300,
                         env={**os.environ, "COLUMNS": "250"})
    assert res.returncode == 0, res.stderr
    assert f"using the mapping beside the pages: {PAGES / 'mapping.yaml'}" in res.stderr
    warnings = [line for line in res.stderr.splitlines() if line.startswith("warning:")]
    assert warnings and all(line.endswith("in all 4 pages") for line in warnings)
    for rid, gold in (("ruling-brackwater-hand-limit", "bw-13"), ("ruling-brackwater-app", "bw-52")):
        assert any(rid in line and gold in line for line in res.stdout.splitlines()), res.stdout
