"""Answerer HTTP calls are bounded in time and size whatever the server does
(rulegauge.answering.answerers.http: total deadline per attempt, maximum body)."""

from __future__ import annotations

import time

import pytest

from rulegauge.answering.answerers.ollama import OllamaAnswerer
from rulegauge.answering.answerers.openai import OpenAIAnswerer
from rulegauge.answering.requests import AnswerRequest, Passage
from tests.helpers.hostile_server import hostile_server

REQUEST = AnswerRequest("q1", "How far does a boat move?", "en",
                        (Passage(1, "rb#p0002.c000", "rb", 2, "Turn", "Move three spaces."),))
CLIENTS = {"ollama": OllamaAnswerer, "openai": OpenAIAnswerer}


@pytest.mark.parametrize("name", list(CLIENTS))
def test_trickling_server_hits_the_total_deadline(name: str) -> None:
    with hostile_server("trickle", interval=0.2, max_seconds=20) as url:
        client = CLIENTS[name](model="m", base_url=url, timeout_s=1.0, retries=1,
                               backoff_s=0.01, backoff_max_s=0.01)
        start = time.monotonic()
        response = client.answer(REQUEST)
        took = time.monotonic() - start
        client.close()
    # each read returns within 0.2 s, so only a total deadline stops it: 2 attempts of 1 s
    # (the server would trickle for 20 s; the margin is for a loaded machine)
    assert took < 10, took
    assert response.outcome == "error"
    assert "within the total deadline of 1 s" in (response.error or "")
    assert "gave up after 2 attempt(s)" in (response.error or "")


@pytest.mark.parametrize("name", list(CLIENTS))
def test_endless_body_is_cut_at_the_maximum_size(name: str) -> None:
    with hostile_server("endless", max_seconds=20) as url:
        client = CLIENTS[name](model="m", base_url=url, timeout_s=10.0, retries=2,
                               backoff_s=0.01, backoff_max_s=0.01)
        client.poster.max_body_bytes = 1 << 20
        start = time.monotonic()
        response = client.answer(REQUEST)
        took = time.monotonic() - start
        client.close()
    assert took < 10, took
    assert response.outcome == "error"
    assert f"over the cap of {1 << 20} bytes; cut off" in (response.error or "")
