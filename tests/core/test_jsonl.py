"""The JSON-lines writer and reader: lines that round-trip; records with line numbers,
every problem collected with file:line."""

import re
from pathlib import Path

import pytest

from rulegauge.core.errors import Problem, RulegaugeError
from rulegauge.core.jsonl import append_line, dumps_lines, iter_records, read_records, split_lines
from tests.helpers.common import REPO


def test_records_keep_their_line_and_problems_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n{bad\n[1, 2]\n{"b": 2}\n', encoding="utf-8")
    problems: list[Problem] = []
    recs = read_records(path, problems)
    assert [(r.line, r.record) for r in recs] == [(1, {"a": 1}), (5, {"b": 2})]
    assert recs[1].where == f"{path}:5"
    assert [p.where for p in problems] == [f"{path}:3", f"{path}:4"]
    assert "invalid JSON" in problems[0].message
    assert "expected a JSON object, got list" in problems[1].message


def test_iter_records_over_lines_in_memory() -> None:
    problems: list[Problem] = []
    assert [r.record for r in iter_records(['{"x": "é"}'], "mem", problems)] == [{"x": "é"}]
    assert problems == []


BREAKS = "a\u2028b\u2029c\x85d\x0be\x0cf\x1cg\r"


@pytest.mark.faults
def test_a_number_too_long_to_read_is_a_problem_of_its_line() -> None:
    problems: list[Problem] = []
    lines = ['{"grade": ' + "9" * 5000 + "}", '{"grade": 2}']
    got = list(iter_records(lines, "j.jsonl", problems))
    assert [r.line for r in got] == [2]
    assert [str(p) for p in problems] == ["j.jsonl:1: invalid JSON: a number too long to read (over 4,300 digits)"]


def test_lines_round_trip_through_every_unicode_line_break(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    records = [{"note": BREAKS, "n": i} for i in range(3)]
    path.write_text(dumps_lines(records[:2]), encoding="utf-8")
    append_line(path, records[2])
    raw = path.read_text(encoding="utf-8")
    assert "\u2028" not in raw and "\u2029" not in raw and "\x85" not in raw
    problems: list = []
    assert [r.record for r in read_records(path, problems)] == records and not problems


@pytest.mark.faults
def test_a_raw_line_separator_written_elsewhere_is_still_one_line(tmp_path: Path) -> None:
    path = tmp_path / "raw.jsonl"
    path.write_text('{"note": "x\u2028y"}\r\n{"note": "z"}\n', encoding="utf-8")
    problems: list = []
    assert [r.record["note"] for r in read_records(path, problems)] == ["x\u2028y", "z"]
    assert split_lines("a\nb") == ["a", "b"] and split_lines("") == []


@pytest.mark.faults
def test_append_line_refuses_a_link(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("keep")
    (tmp_path / "j.jsonl").symlink_to(tmp_path / "victim")
    with pytest.raises(RulegaugeError, match="symbolic link"):
        append_line(tmp_path / "j.jsonl", {"a": 1})
    assert (tmp_path / "victim").read_text() == "keep"


def test_nothing_outside_core_jsonl_writes_or_splits_json_lines() -> None:
    """One writer and one reader: ``json.dumps(...) + "\\n"`` and ``splitlines()`` of a
    JSON-lines file live only in core/jsonl (exceptions named, with why)."""
    # pdf_text: a helper process's private pipe of page texts, read back by its parent
    # with json.loads per readline (never a file a user keeps); loaders: the JSONL corpus
    # loader is h5-bm25's, to fold when it lands
    allowed = {"core/jsonl.py", "corpus/pdf_text.py", "corpus/loaders.py"}
    writes = re.compile(r'json\.dumps\(.*\) \+ "\\n"')
    found = []
    for p in sorted((REPO / "rulegauge").rglob("*.py")):
        rel = str(p.relative_to(REPO / "rulegauge"))
        text = p.read_text(encoding="utf-8")
        if rel in allowed:
            continue
        for n, line in enumerate(text.splitlines(), start=1):
            if writes.search(line) and "indent=" not in line:  # indented JSON is not JSON lines
                found.append(f"{rel}:{n}")
            if ".splitlines()" in line and "jsonl" in text and "json.loads" in text:
                found.append(f"{rel}:{n} (splitlines in a module reading JSON lines)")
    assert not found, found
