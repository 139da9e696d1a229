"""One bounded HTTP call: one total deadline, a body cap, same-origin redirects, retries."""

from __future__ import annotations

import json
import time

import pytest

from rulegauge.core.httpcall import (
    REDACTED,
    CallError,
    RetryPolicy,
    call_rng,
    call_with_retries,
    redact_headers,
    redact_url,
    request,
    scrub,
)
from tests.helpers import search_endpoint as se


def test_json_reply_and_request_recorded():
    with se.search_endpoint([se.json({"hits": []})]) as ep:
        reply = request("POST", ep.url, headers={"Content-Type": "application/json"},
                        body=b'{"q": "x"}', deadline_s=5, max_body_bytes=1000)
    assert reply.status == 200 and json.loads(reply.body) == {"hits": []}
    assert ep.requests[0]["body"] == {"q": "x"} and ep.requests[0]["method"] == "POST"


@pytest.mark.parametrize("behaviour", [se.trickle_headers(0.05), se.trickle_body(0.05)])
def test_one_deadline_covers_headers_and_body(behaviour):
    with se.search_endpoint([behaviour]) as ep:
        start = time.monotonic()
        with pytest.raises(CallError, match=r"total deadline of 0\.5 s") as info:
            request("GET", ep.url, deadline_s=0.5, max_body_bytes=10**6)
        took = time.monotonic() - start
    assert info.value.retryable
    assert took < 3.0  # per-read timeouts would let a trickle run for the whole script


def test_body_cap_cuts_an_endless_reply():
    with se.search_endpoint([se.endless()]) as ep, \
            pytest.raises(CallError, match="over the cap of 100000 bytes") as info:
        request("GET", ep.url, deadline_s=10, max_body_bytes=100_000)
    assert not info.value.retryable


def test_declared_length_over_the_cap_is_refused_before_reading():
    with se.search_endpoint([se.json({"x": "y" * 5000})]) as ep, \
            pytest.raises(CallError, match=r"reply body of \d+ bytes is over the cap of 100 bytes"):
        request("GET", ep.url, deadline_s=5, max_body_bytes=100)


def test_redirects_same_origin_followed_other_host_refused():
    with se.search_endpoint(lambda r: se.json({"at": r["path"]}) if r["path"] == "/v2"
                            else se.redirect("/v2", 307)) as ep:
        reply = request("POST", ep.url, body=b"{}", deadline_s=5, max_body_bytes=1000)
        assert json.loads(reply.body) == {"at": "/v2"} and reply.url.endswith("/v2")
        assert [r["method"] for r in ep.requests] == ["POST", "POST"]
    with se.search_endpoint([se.redirect("http://user:pw@example.invalid/x?token=abc")]) as ep, \
            pytest.raises(CallError) as info:
        request("GET", ep.url, deadline_s=5, max_body_bytes=1000)
    assert str(info.value) == ("redirect (HTTP 302) to another host refused: "
                               "http://example.invalid/x")
    assert not info.value.retryable


def test_connection_refused_is_retryable():
    with se.search_endpoint([se.json({})]) as ep:
        url = ep.url
    with pytest.raises(CallError, match="ConnectionRefusedError") as info:
        request("GET", url, deadline_s=2, max_body_bytes=100)
    assert info.value.retryable


def test_retries_on_429_and_5xx_with_backoff_then_success():
    waits: list[float] = []
    policy = RetryPolicy(retries=3, backoff_s=0.1, backoff_max_s=1.0)
    with se.search_endpoint([se.status(503), se.status(429, retry_after=0.5), se.json({"ok": 1})]) as ep:
        out = call_with_retries(lambda: request("GET", ep.url, deadline_s=5, max_body_bytes=1000),
                                policy, call_rng(0, "q1"), sleep=waits.append)
    assert out.reply is not None and out.reply.status == 200 and out.attempts == 3
    assert len(waits) == 2 and 0.05 <= waits[0] <= 0.1 and waits[1] == 0.5


def test_retries_bounded_and_4xx_not_retried():
    waits: list[float] = []
    policy = RetryPolicy(retries=2, backoff_s=0.0)
    with se.search_endpoint([se.status(500)]) as ep:
        out = call_with_retries(lambda: request("GET", ep.url, deadline_s=5, max_body_bytes=1000),
                                policy, call_rng(0, "q"), sleep=waits.append)
        assert out.reply is None and out.attempts == 3 and len(ep.requests) == 3
        assert out.error is not None and out.error.startswith("gave up after 3 attempt(s); last: HTTP 500")
    with se.search_endpoint([se.status(404)]) as ep:
        out = call_with_retries(lambda: request("GET", ep.url, deadline_s=5, max_body_bytes=1000),
                                policy, call_rng(0, "q"), sleep=waits.append)
        assert out.reply is not None and out.reply.status == 404 and len(ep.requests) == 1


def test_redaction():
    assert redact_url("https://u:p@h.example:8443/s?token=t#f") == "https://h.example:8443/s"
    assert redact_headers({"Authorization": "Bearer x", "X-Api-Key": "k", "Accept": "a"}) == {
        "Authorization": REDACTED, "X-Api-Key": REDACTED, "Accept": "a"}
    assert scrub("echo: Bearer s3cret-token!", ["s3cret-token", "ab"]) == f"echo: Bearer {REDACTED}!"


def test_userinfo_is_sent_as_basic_auth():
    with se.search_endpoint([se.json({})]) as ep:
        request("GET", ep.url.replace("http://", "http://ann:p%40ss@"), deadline_s=5, max_body_bytes=100)
    assert ep.requests[0]["headers"]["Authorization"] == "Basic YW5uOnBAc3M="  # ann:p@ss


@pytest.mark.faults
@pytest.mark.parametrize(("before", "secret", "after"), [
    ("http://bob:", "hunter2-" + "Qx9" * 30, "@db.example/x"),  # URL password cut before "@"
    ("Authorization: Bearer ", "Zq7w", "Zq7w" * 30),  # fewer than 6 characters left at the cut
    ("key sk-", "Zq7wZq", "7w" * 40),  # sk- key: fewer than 8 characters left at the cut
])
def test_a_secret_straddling_the_snippet_cut_is_never_printed_in_part(before: str, secret: str,
                                                                       after: str) -> None:
    from rulegauge.core.httpcall import HttpReply, snippet

    pad = 200 - len(before) - len(secret)  # the cut falls right after `secret`
    body = ("x" * pad + before + secret + after).encode()
    text = snippet(HttpReply(500, {}, body, "http://127.0.0.1/"), 200)
    assert len(text) <= 200 and secret[:4] not in text, text
