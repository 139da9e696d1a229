"""Fault-tier rows of issue 43 item 25: one run with a malformed manifest in the runs folder
breaks no command that reads the others. ``report`` of a healthy run (its trend chart scans the
folder), ``trend`` and a ``latest`` (``bands latest``) each leave the damaged run out with a
warning naming it and exit 0; the healthy run stays complete, the damaged one as it was.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import fault_runs as fr
from tests.helpers.fault_case import Case
from tests.helpers.fault_cases_issue25 import R

DAMAGED = '{"run_id": "broken", "status": "complete", "tables": []}\n'
LEFT_OUT = "run broken left out: "


def healthy_and_damaged(root: Path) -> None:
    """A complete tiny run ``a1`` and, beside it, run ``broken`` whose manifest's ``tables`` is a list."""
    fr.real_run(root, "a1")
    (root / "runs" / "broken").mkdir()
    (root / "runs" / "broken" / "manifest.json").write_text(DAMAGED, encoding="utf-8")


def after(*files: str) -> fr.Build:
    def check(root: Path) -> None:
        fr.after_complete("a1")(root)
        assert (root / "runs" / "broken" / "manifest.json").read_text(encoding="utf-8") == DAMAGED
        for name in files:
            assert (root / name).is_file(), name
    return check


H_WHEEL: tuple[Case, ...] = (
    Case("w43-25-report-beside-a-damaged-run", healthy_and_damaged,
         ("rulegauge", "report", "a1", "-o", "{root}/report.html", "--runs-dir", R), 0, LEFT_OUT,
         after=after("report.html")),
    Case("w43-25-trend-beside-a-damaged-run", healthy_and_damaged,
         ("rulegauge", "trend", "--runs-dir", R), 0, LEFT_OUT, after=after()),
    Case("w43-25-latest-beside-a-damaged-run", healthy_and_damaged,
         ("rulegauge", "bands", "latest", "--runs-dir", R), 0, LEFT_OUT, after=after()),
)
