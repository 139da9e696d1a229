"""What an ``http`` arm's journal record keeps (rulegauge.arms.http_calls.kept)."""

from __future__ import annotations

import pytest

from rulegauge.arms.http_calls import journal, kept
from rulegauge.arms.http_reply import ReplyShape, fields_of
from rulegauge.core.errors import ValidationError
from rulegauge.core.limits import MAX_LATENCY_MS, latency_problem
from rulegauge.core.redact import MASK, Secrets

SHAPE = ReplyShape("hits", "chunk_id", None, None, "score", None)


def test_a_record_of_an_earlier_journal_keeps_its_hits_and_drops_the_body() -> None:
    old = {"key": "k", "question_id": "q1", "error": None, "status": 200,
           "reply": {"hits": [{"chunk_id": "a#p1.c0", "score": 2.0},
                              {"chunk_id": "Bearer tok-98765", "score": 1.0}],
                     "echo": {"authorization": "Bearer tok-98765"}}}
    rec = kept(old, SHAPE, Secrets(("tok-98765",)))
    assert rec is not None and "reply" not in rec and rec["fields"] == fields_of(SHAPE)
    assert rec["hits"] == [{"id": "a#p1.c0", "score": 2.0, "ranks": {}},
                           {"id": f"Bearer {MASK}", "score": 1.0, "ranks": {}}]


def test_hits_read_with_other_fields_are_not_reused() -> None:
    rec = {"key": "k", "error": None, "fields": {"results": "data"}, "hits": []}
    assert kept(rec, SHAPE, Secrets()) is None
    assert kept({**rec, "fields": fields_of(SHAPE)}, SHAPE, Secrets()) is not None


def test_a_journal_record_latency_is_bounded_where_it_is_read(tmp_path) -> None:
    """43.12: a replayed or resumed record's ``latency_ms`` is null or finite within 0..one hour;
    any other value is exit 2 naming the journal file and line (never stored, never a traceback)."""
    assert latency_problem(None) is None and latency_problem(0) is None and latency_problem(12.5) is None
    assert latency_problem(MAX_LATENCY_MS) is None and latency_problem(MAX_LATENCY_MS + 1) is not None
    assert "got -5000" in (latency_problem(-5000) or "") and "got inf" in (latency_problem(float("inf")) or "")
    assert "got nan" in (latency_problem(float("nan")) or "") and "got True" in (latency_problem(True) or "")
    assert "an integer of 320 digits" in (latency_problem(int("9" * 320)) or "")
    assert "about 5000 digits" in (latency_problem(10**4999) or "")  # str() of it would raise
    path = tmp_path / "live.jsonl"
    path.write_text('{"key": "a", "latency_ms": 12.0}\n{"key": "b", "latency_ms": -5000}\n'
                    '{"key": "c", "latency_ms": Infinity}\n{"key": "d", "latency_ms": null}\n'
                    '{"key": "e", "latency_ms": ' + "1" * 5000 + "}\n")
    with pytest.raises(ValidationError) as info:
        journal(path, "live").load()
    text = str(info.value)
    assert text.startswith("arm live journal is damaged (3 problem(s)):")
    assert f"{path}:2: latency_ms must be a finite number within 0..3,600,000 ms, got -5000" in text
    assert f"{path}:3: latency_ms must be a finite number within 0..3,600,000 ms, got inf" in text
    assert f"{path}:5: invalid JSON: a number too long to read (over 4,300 digits)" in text
    path.write_text('{"key": "a", "latency_ms": 12.0}\n{"key": "d", "latency_ms": null}\n')
    assert set(journal(path, "live").load()) == {("a",), ("d",)}
