"""The JSON-lines reader: records with line numbers, every problem collected with file:line."""

from pathlib import Path

from rulegauge.core.errors import Problem
from rulegauge.core.jsonl import iter_records, read_records


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
