"""Reading an http reply: dotted paths, hit ids, scores, disclosed ranks, first occurrence."""

from __future__ import annotations

import pytest

from rulegauge.arms.http_reply import ReplyError, ReplyShape, dig, listed, parse_body, read_hits
from rulegauge.arms.results import Hit

CHUNKS = {"a#p0001.c000": 1, "a#p0002.c000": 1, "a#p0002.c001": 1}
PAGES = {"a#1": "a#p0001.c000", "a#2": "a#p0002.c000"}


def test_dig_paths_and_messages():
    reply = {"data": {"results": [{"x": 1}, {"x": 2}]}}
    assert dig(reply, "data.results.1.x", "p") == 2
    with pytest.raises(ReplyError, match=r"results path 'data.hits' not found: data has no 'hits' \(it has: results\)"):
        dig(reply, "data.hits", "results path")


def test_chunk_and_page_ids_scores_ranks_and_duplicates():
    shape = ReplyShape("hits", None, "doc", "page", "s", "dbg.r")
    reply = {"hits": [{"doc": "a", "page": 2, "s": 0.5, "dbg": {"r": {"bm25": 3, "dense": None}}},
                      {"doc": "a", "page": 2, "s": 0.4, "dbg": {"r": {}}},
                      {"doc": "zz", "page": "1", "s": 0.3, "dbg": {"r": {}}},
                      {"doc": "a", "page": 1, "s": 0.2, "dbg": {"r": {"bm25": 1}}}]}
    hits = read_hits(reply, shape, CHUNKS, PAGES)
    assert [h.chunk_id for h in hits] == ["a#p0002.c000", "a#p0002.c000", None, "a#p0001.c000"]
    assert hits[0].arm_ranks == {"bm25": 3, "dense": None} and hits[2].reply_id == "zz#1"
    # the list order is the ranking; a repeated chunk is left out; an unmatched id keeps its rank
    # under its reply id (keep), or is left out and the hits below it move up (drop)
    kept = listed(hits, 10, "keep")
    assert kept.hits == (Hit("a#p0002.c000", 1, 0.5), Hit("zz#1", 2, 0.3), Hit("a#p0001.c000", 3, 0.2))
    assert kept.foreign == {"zz#1"} and (kept.dropped, kept.moved) == (0, 0)
    dropped = listed(hits, 10, "drop")
    assert dropped.hits == (Hit("a#p0002.c000", 1, 0.5), Hit("a#p0001.c000", 2, 0.2))
    assert dropped.foreign == frozenset() and (dropped.dropped, dropped.moved) == (1, 1)
    assert listed(hits, 1, "keep").hits == (Hit("a#p0002.c000", 1, 0.5),)
    assert listed(hits, 2, "keep").hits[-1] == Hit("zz#1", 2, 0.3)
    no_score = read_hits({"hits": [{"c": "zz#p0009.c000"}, {"c": "a#p0002.c001"}]},
                         ReplyShape("hits", "c", None, None, None, None), CHUNKS, PAGES)
    assert listed(no_score, 5, "keep").hits == (Hit("zz#p0009.c000", 1, 1.0), Hit("a#p0002.c001", 2, 1 / 2))
    assert listed(no_score, 5, "drop").hits == (Hit("a#p0002.c001", 1, 1.0),)


@pytest.mark.parametrize(("reply", "message"), [
    ({"hits": {"a": 1}}, "is dict, not a list"),
    ({"hits": ["x"]}, r"hits\[0\] is str, not an object"),
    ({"hits": [{"doc": "a", "page": "two", "s": 1}]}, "page must be a page number, got 'two'"),
    ({"hits": [{"doc": "a", "page": 1, "s": "high"}]}, "score must be a finite number, got 'high'"),
    ({"hits": [{"doc": "a", "page": 1, "s": 1, "dbg": {"r": {"bm25": 0}}}]}, "a rank must be a positive integer"),
])
def test_malformed_hits_are_errors(reply, message):
    with pytest.raises(ReplyError, match=message):
        read_hits(reply, ReplyShape("hits", None, "doc", "page", "s", "dbg.r"), CHUNKS, PAGES)


def test_parse_body_quotes_what_is_not_json():
    assert parse_body(b'{"hits": []}', "application/json") == {"hits": []}
    with pytest.raises(ReplyError, match=r"reply is not JSON \(text/html; .*\): '<html>"):
        parse_body(b"<html>", "text/html; charset=utf-8")
