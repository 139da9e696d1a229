"""The reference search service: requests, bad requests, debug ranks, one arm or fused."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request

import pytest

from tests.helpers.reference_service import reference_service


def _post(url: str, body: object) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        with exc:
            return exc.code, json.loads(exc.read())


@pytest.fixture(scope="module")
def svc():
    with reference_service() as served:
        yield served


def test_fused_hits_with_debug_ranks_and_ceiling(svc):
    code, body = _post(svc.url, {"q": "How many lanterns does each player take?", "lang": "en",
                                 "k": 5, "debug": True, "question_id": "x1"})
    assert code == 200 and body["k"] == 60 and body["arms"] == ["bm25", "boost"]
    hits = body["hits"]
    assert len(hits) == 5 and svc.asked[-1] == "x1"
    for h in hits:
        ranks = h["debug"]["ranks"]
        expected = sum(1 / (60 + r) for r in ranks.values() if r is not None)
        assert h["score"] == pytest.approx(expected, rel=1e-12) and h["score"] <= 2 / 61
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)


def test_one_arm_is_that_arms_own_list_and_get_works(svc):
    q = urllib.parse.urlencode({"q": "harbour tide", "arms": "bm25", "k": 3})
    with urllib.request.urlopen(f"{svc.url}?{q}", timeout=30) as resp:
        body = json.loads(resp.read())
    assert body["arms"] == ["bm25"] and len(body["hits"]) <= 3 and "debug" not in body["hits"][0]
    with urllib.request.urlopen(f"{svc.base}/health", timeout=30) as resp:
        assert json.loads(resp.read()) == {"ok": True}


@pytest.mark.parametrize(("body", "code", "message"), [
    ({}, 400, "q (the question) is required"),
    ({"q": "x", "arms": "bm25,vector"}, 400, "unknown arm(s) ['vector']; this service has: bm25, boost"),
    ({"q": "x", "k": "many"}, 400, "k must be an integer, got 'many'"),
    ({"q": "x", "depth": 0}, 400, "depth must be within 1..10000, got 0"),
    ([1, 2], 400, "body must be a JSON object"),
])
def test_bad_requests_are_400_with_a_message(svc, body, code, message):
    got, reply = _post(svc.url, body)
    assert got == code and reply["error"] == message
