"""The order the test files are handed to the xdist workers: longest first.

``scripts/test`` runs ``pytest -n N --dist loadfile``: each file goes whole to one worker, in
collection order. Handed out in the order pytest finds them, a file that takes minutes (a Ray
cluster's start and kill, a docs page that runs a dozen commands) can start last and leave the
other workers idle while it runs; handed out longest first (the LPT rule, Graham 1969), the
idle tail is at most the length of one short file. The cost of each file is its measured wall
time, kept in ``tests/file_costs.json`` (re-measure with ``python -m tests.helpers.file_order
JUNIT_XML`` after a ``pytest --junitxml`` run of the whole suite); a file missing from it
counts :data:`UNKNOWN_S`. Only the order of whole files changes: the tests inside a file keep
theirs, and which tests run does not depend on it.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

import pytest

COSTS = Path(__file__).resolve().parents[1] / "file_costs.json"
UNKNOWN_S = 5.0
"""A file not yet measured: about the median cost of a file."""


def file_costs(path: Path = COSTS) -> dict[str, float]:
    """``{path relative to the repository: seconds}`` (empty when the file is absent)."""
    try:
        return {str(k): float(v) for k, v in json.loads(path.read_text(encoding="utf-8")).items()}
    except FileNotFoundError:
        return {}


def longest_files_first(items: list[pytest.Item], costs: dict[str, float]) -> list[pytest.Item]:
    """``items`` grouped by file, the files by cost, longest first (ties by path), each file's
    items in their own order."""
    by_file: dict[str, list[pytest.Item]] = defaultdict(list)
    for item in items:
        by_file[item.nodeid.split("::", 1)[0]].append(item)
    order = sorted(by_file, key=lambda f: (-costs.get(f, UNKNOWN_S), f))
    return [item for f in order for item in by_file[f]]


def costs_from_junit(junit: Path) -> dict[str, float]:
    """Seconds per test file from a JUnit XML report of ``pytest --junitxml`` (setup, call and
    teardown of each test summed per file)."""
    costs: dict[str, float] = defaultdict(float)
    for case in ET.parse(junit).iter("testcase"):
        module = case.get("classname", "")
        parts = module.split(".")
        for cut in range(len(parts), 0, -1):  # a test class adds a part to the classname
            candidate = "/".join(parts[:cut]) + ".py"
            if (COSTS.parent.parent / candidate).is_file():
                costs[candidate] += float(case.get("time") or 0.0)
                break
    return {k: round(v, 1) for k, v in sorted(costs.items())}


if __name__ == "__main__":
    found = costs_from_junit(Path(sys.argv[1]))
    COSTS.write_text(json.dumps(found, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {COSTS}: {len(found)} files, {sum(found.values()):.0f} s in all")
