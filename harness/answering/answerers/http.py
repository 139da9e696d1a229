"""Shared HTTP client logic for chat-server answerers (Ollama, OpenAI-compatible).

:class:`JsonPoster` POSTs one JSON body with a per-call timeout and retries;
:class:`HttpAnswerer` renders the prompt, posts it and turns the reply (or the
failure) into an :class:`AnswerResponse`. A failed call never raises: it comes
back as ``outcome="error"`` with a message, so a run records an error row and
goes on.

Conventions
-----------
* Retried: connect errors, timeouts, dropped connections, HTTP 429 and 5xx.
  Not retried: other 4xx, and a 2xx body that is not the expected JSON.
* Attempt ``a`` (0-based) that failed waits
  ``min(backoff_max_s, backoff_s * 2**a) * (1 - jitter * u)`` seconds with
  ``u ~ U[0, 1)`` drawn from a local generator seeded by ``(seed, question id)``
  (so delays do not depend on thread scheduling). A numeric ``Retry-After``
  header raises the wait to that many seconds, capped at ``backoff_max_s``.
* ``timeout_s`` bounds each phase of one attempt (connect, write, each read,
  pool wait), as in ``httpx.Timeout``, and also the whole attempt: a server
  that trickles its body a byte at a time is cut off when ``timeout_s`` has
  passed since the attempt began (a timeout, retried like one).
* A body larger than :attr:`JsonPoster.max_body_bytes` (16 MiB) is cut off
  and the attempt fails (not retried: the server would send it again).
* ``latency_ms`` is the wall time of the whole :meth:`HttpAnswerer.answer` call,
  retries and waits included (``time.perf_counter``).
* Thread-safe: one ``httpx.Client`` (connection pool) shared by all threads; no
  other mutable state. Bounded concurrency is the caller's job.

Reference: exponential backoff with jitter, "Exponential Backoff And Jitter",
AWS Architecture Blog (2015); ``Retry-After``: RFC 9110 section 10.2.3.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx

from harness.answering.answerers.base import AnswerRequest, AnswerResponse
from harness.answering.prompt import parse_outcome, render
from harness.core.errors import ConfigError
from harness.core.httpcall import RetryPolicy, call_rng, redact_url, retry_after, retryable_status

_RETRY_EXC = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_SNIPPET = 200


def check_base_url(url: str, source: str) -> str:
    """Validate an http(s) base URL (a bare ``host:port`` gets ``http://``; no
    query or fragment); returns it without a trailing slash. Error messages show
    the URL without credentials."""
    u = url.strip()
    if "://" not in u:
        u = "http://" + u
    parts = urlsplit(u)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{source}: {redact_url(u)!r} is not an http(s) URL, "
                          "e.g. http://127.0.0.1:11434")
    if parts.query or parts.fragment:
        raise ConfigError(f"{source}: a base URL takes no query or fragment: {redact_url(u)!r}")
    return u.rstrip("/")


@dataclass(frozen=True)
class PostResult:
    """Outcome of :meth:`JsonPoster.post`: ``body`` on success, else ``error``."""

    body: Any
    error: str | None
    attempts: int


def _retry_after(resp: httpx.Response) -> float | None:
    return retry_after(resp.headers)


class _Deadline(Exception):
    """The attempt's total time ran out while the body was still arriving."""


class _TooLarge(Exception):
    """The body exceeded the maximum size."""


class JsonPoster:
    """POSTs JSON to one URL with timeout and retries; never raises for a failed call."""

    max_body_bytes: int = 16 * 1024 * 1024

    def __init__(self, url: str, *, timeout_s: float, retry: RetryPolicy, seed: int,
                 headers: dict[str, str] | None = None) -> None:
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s={timeout_s} must be > 0")
        self.url = url
        self.timeout_s = timeout_s
        self.retry = retry
        self.seed = seed
        self._client = httpx.Client(timeout=httpx.Timeout(timeout_s), headers=headers or {})
        self.sleep = time.sleep

    def post(self, payload: dict[str, Any], key: str) -> PostResult:
        """POST ``payload``; retry per the policy; ``key`` seeds the jitter."""
        rng = call_rng(self.seed, key)
        last = "no attempt made"
        attempts = self.retry.retries + 1
        for attempt in range(attempts):
            retry_after = None
            try:
                resp = self._bounded_post(payload)
            except _Deadline:
                last = f"total deadline of {self.timeout_s:g} s passed while reading the body"
            except _TooLarge:
                return PostResult(None, f"body larger than {self.max_body_bytes} bytes; cut off",
                                  attempt + 1)
            except _RETRY_EXC as exc:
                last = f"{type(exc).__name__}: {str(exc) or 'no detail'}"
            except httpx.HTTPError as exc:
                return PostResult(None, f"{type(exc).__name__}: {exc}", attempt + 1)
            else:
                if retryable_status(resp.status_code):
                    last = f"HTTP {resp.status_code}: {resp.text[:_SNIPPET]}"
                    retry_after = _retry_after(resp)
                elif resp.status_code >= 400:
                    return PostResult(None, f"HTTP {resp.status_code}: {resp.text[:_SNIPPET]}",
                                      attempt + 1)
                else:
                    try:
                        return PostResult(resp.json(), None, attempt + 1)
                    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
                        return PostResult(None, f"malformed JSON body ({exc}): "
                                          f"{resp.text[:_SNIPPET]!r}", attempt + 1)
            if attempt + 1 < attempts:
                self.sleep(self.retry.delay(attempt, rng, retry_after))
        return PostResult(None, f"gave up after {attempts} attempt(s); last: {last}", attempts)

    def _bounded_post(self, payload: dict[str, Any]) -> httpx.Response:
        """One POST whose body is read within ``timeout_s`` in total and at most
        ``max_body_bytes`` long (streamed, checked after every chunk)."""
        deadline = time.monotonic() + self.timeout_s
        with self._client.stream("POST", self.url, json=payload) as resp:
            body = bytearray()
            for chunk in resp.iter_bytes():  # decoded: a gzip bomb counts at full size
                body += chunk
                if len(body) > self.max_body_bytes:
                    raise _TooLarge
                if time.monotonic() > deadline:
                    raise _Deadline
            headers = {k: v for k, v in resp.headers.items() if k.lower() not in
                       ("content-encoding", "content-length", "transfer-encoding")}
            return httpx.Response(resp.status_code, headers=headers, content=bytes(body),
                                  request=resp.request)

    def close(self) -> None:
        self._client.close()


@dataclass(frozen=True)
class Reply:
    """What a server's body says: the text and token counts (None if unreported)."""

    text: str
    tokens_in: int | None
    tokens_out: int | None


class MalformedReply(Exception):
    """A 2xx body without the fields a chat reply must have."""


def count(value: Any) -> int | None:
    """A token count from a body field: non-negative int, else None."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


class HttpAnswerer:
    """Base of chat-server answerers: subclasses set the URL, the payload and how
    a body is read (:meth:`payload`, :meth:`parse`)."""

    name: ClassVar[str] = "http"

    def __init__(self, *, model: str, url: str, timeout_s: float, retries: int,
                 backoff_s: float, backoff_max_s: float, seed: int,
                 headers: dict[str, str] | None = None) -> None:
        if not model or not model.strip():
            raise ConfigError(f"{self.name}: model must be a non-empty model name")
        self.model = model
        self.seed = seed
        self.retry = RetryPolicy(retries=retries, backoff_s=backoff_s,
                                 backoff_max_s=backoff_max_s)
        self.poster = JsonPoster(url, timeout_s=timeout_s, retry=self.retry, seed=seed,
                                 headers=headers)

    def payload(self, messages: list[dict[str, str]]) -> dict[str, Any]:
        raise NotImplementedError

    def parse(self, body: Any) -> Reply:
        """Read a 2xx body; raise :class:`MalformedReply` when it is not a reply."""
        raise NotImplementedError

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        """Ask the server; failures become ``outcome="error"`` responses."""
        start = time.perf_counter()
        result = self.poster.post(self.payload(render(request)), request.question_id)
        error = result.error
        reply = None
        if error is None:
            try:
                reply = self.parse(result.body)
            except MalformedReply as exc:
                error = f"malformed reply: {exc}"
            else:
                if not reply.text.strip():
                    error = "empty reply"
        latency = (time.perf_counter() - start) * 1000.0
        if error is not None or reply is None:
            return AnswerResponse(text="", outcome="error", model_id=self.model,
                                  latency_ms=latency, error=f"{self.name}: {error}")
        return AnswerResponse(text=reply.text, outcome=parse_outcome(reply.text),
                              model_id=self.model, latency_ms=latency,
                              tokens_in=reply.tokens_in, tokens_out=reply.tokens_out)

    def describe_http(self) -> dict[str, Any]:
        """Endpoint (redacted), timeout and retry settings, for describe()."""
        return {"endpoint": redact_url(self.poster.url), "timeout_s": self.poster.timeout_s,
                "retries": self.retry.retries, "backoff_s": self.retry.backoff_s,
                "backoff_max_s": self.retry.backoff_max_s, "seed": self.seed}

    def close(self) -> None:
        self.poster.close()

    def __enter__(self) -> HttpAnswerer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
