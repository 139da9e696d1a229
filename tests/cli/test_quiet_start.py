"""Quiet start: ``rulegauge --help`` and ``--version`` import no pandas, numpy or pyarrow
(checked in a fresh interpreter through ``sys.modules``), and the outputs with default names
(``pool.jsonl``, ``mlruns/``, ``report.html``) are ignored by the repository's .gitignore."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.helpers.common import REPO

HEAVY = ("pandas", "numpy", "pyarrow", "matplotlib", "scipy")
PROBE = """
import sys
sys.argv = ["rulegauge", *sys.argv[1:]]
from rulegauge.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
print("loaded:", ",".join(m for m in {heavy!r} if m in sys.modules), "exit:", code, file=sys.stderr)
"""


@pytest.mark.parametrize("flag", ["--help", "--version"])
def test_help_and_version_import_no_heavy_library(flag: str) -> None:
    res = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), flag], capture_output=True,
                         text=True, timeout=120, cwd=REPO, check=False)
    assert res.stderr.strip().splitlines()[-1] == "loaded:  exit: 0", res.stderr
    assert ("Usage: rulegauge" in res.stdout) if flag == "--help" else res.stdout.startswith("rulegauge ")


def test_outputs_with_default_names_are_ignored_by_git() -> None:
    inside = subprocess.run(["git", "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True,
                            cwd=REPO, check=False, timeout=60)
    if inside.stdout.strip() != "true":
        pytest.skip(f"{REPO} is not a git checkout (.gitignore applies to checkouts only)")
    paths = ["pool.jsonl", "pool.judgments.jsonl", "report.html", "mlruns/0/meta.yaml"]
    res = subprocess.run(["git", "check-ignore", "--no-index", *paths], capture_output=True, text=True,
                         cwd=REPO, check=False, timeout=60)
    assert sorted(res.stdout.split()) == sorted(paths), res.stdout + res.stderr
    # the committed files of the same names elsewhere stay tracked
    res = subprocess.run(["git", "check-ignore", "--no-index", "docs/report.html", "runs/README.md"],
                         capture_output=True, text=True, cwd=REPO, check=False, timeout=60)
    assert res.stdout == ""
