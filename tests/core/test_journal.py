"""The keyed journal: durable appends, latest record per key, torn last line repaired."""

from __future__ import annotations

import pytest

from rulegauge.core.errors import ValidationError
from rulegauge.core.journal import KeyedJournal


def test_latest_record_wins_and_torn_line_is_cut(tmp_path):
    path = tmp_path / "j" / "x.jsonl"
    with KeyedJournal(path, ("key",)) as j:
        j.append({"key": "a", "v": 1})
        j.append({"key": "b", "v": 2})
        j.append({"key": "a", "v": 3})
    with open(path, "ab") as f:
        f.write(b'{"key": "c", "v"')  # the process died mid-write
    loaded = KeyedJournal(path, ("key",)).load()
    assert loaded == {("a",): {"key": "a", "v": 3}, ("b",): {"key": "b", "v": 2}}
    assert path.read_bytes().endswith(b"}\n")


def test_damaged_lines_are_named(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"key": "a"}\nnot json\n{"other": 1}\n', encoding="utf-8")
    with pytest.raises(ValidationError) as info:
        KeyedJournal(path, ("key",), "arm live journal").load()
    text = str(info.value)
    assert text.startswith("arm live journal is damaged (2 problem(s))")
    assert f"{path}:3: unreadable journal line (needs key)" in text
