"""What an ``http`` arm's journal record keeps (rulegauge.arms.http_calls.kept)."""

from __future__ import annotations

from rulegauge.arms.http_calls import kept
from rulegauge.arms.http_reply import ReplyShape, fields_of
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
