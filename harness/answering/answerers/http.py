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
* ``timeout_s`` is one deadline per attempt over connect, headers and body
  (:func:`harness.core.http.fetch`): a server that trickles its status line,
  headers or body a byte at a time is cut off when ``timeout_s`` has passed since
  the attempt began (a timeout, retried like one).
* A decoded body larger than :attr:`JsonPoster.max_body_bytes` (16 MiB; a gzip
  bomb is inflated only that far) is cut off and the attempt fails (not retried:
  the server would send it again). A 3xx is reported as a redirect, never followed.
* Error messages carry the server's body with credentials redacted
  (:func:`harness.core.redact.redact_text`).
* ``latency_ms`` is the wall time of the whole :meth:`HttpAnswerer.answer` call,
  retries and waits included (``time.perf_counter``).
* Thread-safe: one ``httpx.Client`` (connection pool) shared by all threads; no
  other mutable state. Bounded concurrency is the caller's job.

Reference: exponential backoff with jitter, "Exponential Backoff And Jitter",
AWS Architecture Blog (2015); ``Retry-After``: RFC 9110 section 10.2.3.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

import httpx
import numpy as np

from harness.answering.answerers.base import AnswerRequest, AnswerResponse
from harness.answering.prompt import parse_outcome, render
from harness.core.errors import ConfigError
from harness.core.http import (
    BodyTooLarge,
    DeadlinePassed,
    HttpReply,
    bounded_client,
    fetch,
    parse_json,
    status_problem,
)
from harness.core.limits import MAX_HTTP_BODY
from harness.core.redact import redact_url as redact_url

_RETRY_EXC = (httpx.TimeoutException, httpx.NetworkError, httpx.RemoteProtocolError)
_SNIPPET = 200


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry one call (see module docstring)."""

    retries: int = 2
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        bad = []
        if self.retries < 0:
            bad.append(f"retries={self.retries} must be >= 0")
        if self.backoff_s < 0 or self.backoff_max_s < 0:
            bad.append("backoff_s and backoff_max_s must be >= 0")
        if not 0.0 <= self.jitter <= 1.0:
            bad.append(f"jitter={self.jitter} must be within [0, 1]")
        if bad:
            raise ConfigError("retry policy: " + "; ".join(bad))

    def delay(self, attempt: int, rng: np.random.Generator,
              retry_after: float | None = None) -> float:
        """Seconds to wait after failed attempt ``attempt`` (0-based)."""
        cap = min(self.backoff_max_s, self.backoff_s * 2.0 ** attempt)
        wait = cap * (1.0 - self.jitter * float(rng.random()))
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.backoff_max_s))
        return wait


def call_rng(seed: int, key: str) -> np.random.Generator:
    """Local generator for one call's jitter, from ``seed`` and a call key."""
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return np.random.default_rng([seed, int.from_bytes(digest[:8], "little")])


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


def retryable_status(code: int) -> bool:
    """429 (too many requests) and every 5xx are worth another attempt."""
    return code == 429 or 500 <= code <= 599


def _retry_after(resp: HttpReply) -> float | None:
    try:
        value = float(resp.headers.get("retry-after", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


class JsonPoster:
    """POSTs JSON to one URL with timeout and retries; never raises for a failed call."""

    max_body_bytes: int = MAX_HTTP_BODY

    def __init__(self, url: str, *, timeout_s: float, retry: RetryPolicy, seed: int,
                 headers: dict[str, str] | None = None) -> None:
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s={timeout_s} must be > 0")
        self.url = url
        self.timeout_s = timeout_s
        self.retry = retry
        self.seed = seed
        self._client = bounded_client(timeout_s, headers)
        self.sleep = time.sleep

    def post(self, payload: dict[str, Any], key: str) -> PostResult:
        """POST ``payload``; retry per the policy; ``key`` seeds the jitter."""
        rng = call_rng(self.seed, key)
        last = "no attempt made"
        attempts = self.retry.retries + 1
        for attempt in range(attempts):
            retry_after = None
            try:
                resp = fetch(self._client, "POST", self.url, timeout_s=self.timeout_s,
                             max_bytes=self.max_body_bytes, json_body=payload)
            except DeadlinePassed as exc:
                last = f"{exc}; the deadline covers connect, headers and body"
            except BodyTooLarge:
                return PostResult(None, f"body larger than {self.max_body_bytes} bytes; cut off",
                                  attempt + 1)
            except _RETRY_EXC as exc:
                last = f"{type(exc).__name__}: {str(exc) or 'no detail'}"
            except httpx.HTTPError as exc:
                return PostResult(None, f"{type(exc).__name__}: {exc}", attempt + 1)
            else:
                problem = status_problem(resp)
                if retryable_status(resp.status):
                    last = problem or f"HTTP {resp.status}"
                    retry_after = _retry_after(resp)
                elif problem is not None:
                    return PostResult(None, problem, attempt + 1)
                else:
                    try:
                        return PostResult(parse_json(resp.body), None, attempt + 1)
                    except ValueError as exc:
                        return PostResult(None, f"malformed JSON body ({exc}): "
                                          f"{resp.snippet()!r}", attempt + 1)
            if attempt + 1 < attempts:
                self.sleep(self.retry.delay(attempt, rng, retry_after))
        return PostResult(None, f"gave up after {attempts} attempt(s); last: {last}", attempts)

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
