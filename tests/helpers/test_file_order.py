"""The order of test files handed to the workers (tests/helpers/file_order.py)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.helpers.file_order import COSTS, UNKNOWN_S, costs_from_junit, file_costs, longest_files_first


def _items(*nodeids: str) -> list[Any]:
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_files_go_longest_first_and_keep_their_tests_in_order() -> None:
    items = _items("tests/a.py::t1", "tests/b.py::t1", "tests/a.py::t2", "tests/c.py::t1", "tests/b.py::t2")
    got = [i.nodeid for i in longest_files_first(items, {"tests/b.py": 9.0, "tests/a.py": 1.0})]  # type: ignore[arg-type]
    # b (9 s), then c (unmeasured: UNKNOWN_S, 5 s), then a (1 s); inside b and a the original order
    assert UNKNOWN_S == 5.0
    assert got == ["tests/b.py::t1", "tests/b.py::t2", "tests/c.py::t1", "tests/a.py::t1", "tests/a.py::t2"]


def test_costs_sum_setup_call_and_teardown_per_file_from_junit(tmp_path: Path) -> None:
    junit = tmp_path / "j.xml"
    junit.write_text(
        '<testsuites><testsuite>'
        '<testcase classname="tests.helpers.test_file_order" name="a" time="1.25"/>'
        '<testcase classname="tests.helpers.test_file_order" name="b" time="0.5"/>'
        '<testcase classname="tests.core.test_plugins" name="c" time="2"/>'
        '<testcase classname="tests.nowhere.test_gone" name="d" time="9"/>'
        '</testsuite></testsuites>', encoding="utf-8")
    assert costs_from_junit(junit) == {"tests/core/test_plugins.py": 2.0, "tests/helpers/test_file_order.py": 1.8}


def test_the_committed_costs_name_existing_test_files() -> None:
    costs = file_costs()
    root = COSTS.parent.parent
    assert len(costs) > 100 and all(v >= 0 for v in costs.values())
    gone = [f for f in costs if not (root / f).is_file()]
    assert len(gone) <= len(costs) // 10, f"re-measure tests/file_costs.json (CONTRIBUTING.md): {gone}"
