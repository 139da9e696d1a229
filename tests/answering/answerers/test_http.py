"""Ollama and OpenAI-compatible answerers against a real local chat server
(tests/chat_server.py on 127.0.0.1): success, retries, timeouts, 500s, 429s,
malformed bodies, dropped connections and concurrency."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from rulegauge.answering.answerers import ANSWERERS, load_builtin_answerers, make_answerer
from rulegauge.answering.answerers.http import HttpAnswerer, check_base_url
from rulegauge.answering.answerers.ollama import OllamaAnswerer
from rulegauge.answering.answerers.openai import OpenAIAnswerer
from rulegauge.answering.prompt import render
from rulegauge.answering.requests import AnswerRequest, Passage
from rulegauge.core.errors import ConfigError, RegistryError
from rulegauge.core.httpcall import RetryPolicy, call_rng, redact_url
from tests.helpers.chat_server import (
    ChatServer,
    chat_server,
    delay,
    drop,
    malformed,
    ok,
    status,
    wrong_shape,
)

FAST = {"retries": 2, "backoff_s": 0.001, "backoff_max_s": 0.01, "timeout_s": 2.0}

REQUEST = AnswerRequest(
    "sh-11", "How many Policy tiles does the President draw?", "en",
    (Passage(1, "sh#p0004.c000", "sh", 4, "Legislative Session",
             "The President draws the top three tiles.", title="Rules"),))


def _ollama(server: ChatServer, **kw: object) -> OllamaAnswerer:
    return OllamaAnswerer(model="gemma4:26b", base_url=server.base_url, **{**FAST, **kw})


def _openai(server: ChatServer, **kw: object) -> OpenAIAnswerer:
    return OpenAIAnswerer(model="qwen", base_url=server.base_url, **{**FAST, **kw})


CLIENTS: dict[str, Callable[..., HttpAnswerer]] = {"ollama": _ollama, "openai": _openai}
both = pytest.mark.parametrize("make", list(CLIENTS.values()), ids=list(CLIENTS))


def test_ollama_request_and_reply() -> None:
    with chat_server([ok("Three tiles [1].", tokens=(321, 7))]) as server, \
            _ollama(server, num_ctx=4096, think=True) as a:
        r = a.answer(REQUEST)
    assert (r.outcome, r.text, r.tokens_in, r.tokens_out, r.error) == \
        ("answered", "Three tiles [1].", 321, 7, None)
    assert r.model_id == "gemma4:26b" and r.latency_ms > 0
    (req,) = server.requests
    assert req.path == "/api/chat"
    assert req.body["model"] == "gemma4:26b" and req.body["stream"] is False
    assert req.body["think"] is True and req.body["options"]["num_ctx"] == 4096
    assert req.body["messages"] == render(REQUEST)


def test_openai_request_reply_and_api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-123")
    with chat_server([ok("ABSTAIN: not in the passages", tokens=(50, 6))]) as server, \
            _openai(server, max_tokens=64) as a:
        r = a.answer(REQUEST)
        described = a.describe()
    assert (r.outcome, r.tokens_in, r.tokens_out) == ("abstained", 50, 6)
    (req,) = server.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == "Bearer sk-secret-123"
    assert req.body["max_tokens"] == 64 and req.body["messages"] == render(REQUEST)
    assert "sk-secret-123" not in repr(described) and described["api_key_set"] is True


@both
def test_missing_token_counts_are_none(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([ok(tokens=None)]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "answered" and r.tokens_in is None and r.tokens_out is None


@both
def test_500_then_ok_retries(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([status(500), status(503), ok()]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "answered" and len(server.requests) == 3


@both
def test_persistent_500_is_an_error_row(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([status(500)] * 3) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "error" and r.text == ""
    assert "3 attempt(s)" in r.error and "HTTP 500" in r.error
    assert len(server.requests) == FAST["retries"] + 1


@both
def test_429_is_retried_and_honours_retry_after(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([status(429, retry_after="0.2"), ok()]) as server, make(server) as a:
        sleeps: list[float] = []
        a.poster.sleep = sleeps.append
        r = a.answer(REQUEST)
    assert r.outcome == "answered" and len(server.requests) == 2
    # Retry-After (0.2 s) is above the computed backoff but capped at backoff_max_s
    assert sleeps == [FAST["backoff_max_s"]]


@both
def test_timeout_then_ok(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([delay(10.0), ok("late but fine [1]")]) as server, \
            make(server, timeout_s=1.0, retries=1) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "answered" and r.text == "late but fine [1]"
    assert len(server.requests) == 2


@both
def test_timeout_without_retries_is_an_error_row(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([delay(10.0)]) as server, make(server, timeout_s=1.0, retries=0) as a:
        start = time.perf_counter()
        r = a.answer(REQUEST)
        elapsed_ms = (time.perf_counter() - start) * 1000.0
    assert r.outcome == "error" and "total deadline" in r.error
    assert 1000 <= r.latency_ms <= elapsed_ms


@both
def test_malformed_body_is_an_error_not_an_exception(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([malformed()]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "error" and "malformed JSON" in r.error
    assert len(server.requests) == 1  # a bad body is not retried


@both
def test_wrong_shape_is_an_error(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([wrong_shape()]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "error" and "malformed reply" in r.error


@both
def test_empty_reply_is_an_error(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([ok("   ")]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "error" and "empty reply" in r.error


@both
def test_dropped_connection_is_retried(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([drop(), ok()]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "answered" and len(server.requests) == 2


@both
def test_client_error_is_not_retried(make: Callable[..., HttpAnswerer]) -> None:
    with chat_server([status(404)]) as server, make(server) as a:
        r = a.answer(REQUEST)
    assert r.outcome == "error" and "HTTP 404" in r.error and len(server.requests) == 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_refused_is_retried_then_an_error_row() -> None:
    a = OllamaAnswerer(model="m", base_url=f"http://127.0.0.1:{_closed_port()}", **FAST)
    sleeps: list[float] = []
    a.poster.sleep = sleeps.append
    r = a.answer(REQUEST)
    a.close()
    assert r.outcome == "error" and "Connection refused" in r.error and len(sleeps) == 2


@both
def test_concurrent_calls_share_one_client(make: Callable[..., HttpAnswerer]) -> None:
    reqs = [AnswerRequest(f"q{i}", "Why?", "en", REQUEST.passages) for i in range(8)]
    with chat_server([delay(0.1) for _ in range(8)]) as server, make(server) as a, \
            ThreadPoolExecutor(max_workers=4) as pool:
        out = list(pool.map(a.answer, reqs))
    assert [r.outcome for r in out] == ["answered"] * 8 and len(server.requests) == 8


def test_base_urls_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "10.1.2.3:11434")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://gpu.local:8000/v1/")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OllamaAnswerer().poster.url == "http://10.1.2.3:11434/api/chat"
    o = OpenAIAnswerer(model="m")
    assert o.poster.url == "http://gpu.local:8000/v1/chat/completions"
    assert o.describe()["api_key_set"] is False
    monkeypatch.delenv("OLLAMA_HOST")
    assert OllamaAnswerer().poster.url == "http://127.0.0.1:11434/api/chat"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        OpenAIAnswerer(model="m")


def test_bad_settings_raise() -> None:
    with pytest.raises(ConfigError, match="not an http"):
        OllamaAnswerer(base_url="ftp://host")
    with pytest.raises(ConfigError, match="timeout_s"):
        OllamaAnswerer(timeout_s=0)
    with pytest.raises(ConfigError, match="retries=-1"):
        OllamaAnswerer(retries=-1)
    with pytest.raises(ConfigError, match="model"):
        OllamaAnswerer(model=" ")


def test_describe_redacts_credentials() -> None:
    a = OllamaAnswerer(base_url="http://user:pw@host:11434/")
    d = a.describe()
    assert d["endpoint"] == "http://host:11434/api/chat"
    assert d["model_id"] == "gemma4:26b" and d["think"] is False and d["num_ctx"] == 32768
    assert redact_url("https://a:b@x.org/v1?k=1#f") == "https://x.org/v1"
    assert check_base_url("localhost:8080/", "t") == "http://localhost:8080"
    with pytest.raises(ConfigError, match="no query") as exc:
        check_base_url("http://u:secret@h:1/?k=1", "t")
    assert "secret" not in str(exc.value)


def test_backoff_is_exponential_bounded_and_seeded() -> None:
    p = RetryPolicy(retries=5, backoff_s=0.5, backoff_max_s=3.0, jitter=0.5)
    d1 = [p.delay(a, call_rng(7, "q1")) for a in range(5)]
    d2 = [p.delay(a, call_rng(7, "q1")) for a in range(5)]
    assert d1 == d2
    for a, d in enumerate(d1):
        cap = min(3.0, 0.5 * 2**a)
        assert cap * (1 - 0.5) <= d <= cap
    rng = call_rng(7, "q1")
    u = np.random.default_rng([7, int.from_bytes(
        __import__("hashlib").sha256(b"q1").digest()[:8], "little")]).random()
    assert p.delay(0, rng) == 0.5 * (1 - 0.5 * u)
    assert RetryPolicy(jitter=0.0).delay(1, call_rng(0, "x"), retry_after=100.0) == 8.0
    assert call_rng(7, "q1").random() != call_rng(7, "q2").random()


def test_registry_and_factory() -> None:
    load_builtin_answerers()
    assert {"extractive", "ollama", "openai", "replay", "llama-cpp"} <= set(ANSWERERS.names())
    a = make_answerer("ollama", model="m", base_url="http://127.0.0.1:1")
    assert isinstance(a, OllamaAnswerer)
    with pytest.raises(RegistryError, match=r"choose one of: .*extractive"):
        make_answerer("gpt")
    with pytest.raises(ConfigError, match=r"unknown parameter.*nm_ctx.*accepts: model"):
        make_answerer("ollama", nm_ctx=4)
    with pytest.raises(ConfigError, match=r"missing required parameter.*model"):
        make_answerer("openai", base_url="http://127.0.0.1:1")
