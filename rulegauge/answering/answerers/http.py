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
* ``timeout_s`` is ONE deadline per attempt over connect, sending, status line,
  headers and body (:func:`rulegauge.core.httpcall.request`): a server that trickles
  its headers or body a byte at a time is cut off when ``timeout_s`` has passed
  since the attempt began (a timeout, retried like one).
* A body larger than :attr:`JsonPoster.max_body_bytes` (16 MiB) is cut off
  and the attempt fails (not retried: the server would send it again). Bodies are
  asked for uncompressed, so a gzip bomb is never inflated; a 10^5-deep JSON body
  is "nested too deeply" (:func:`rulegauge.core.httpcall.parse_json`); a redirect to
  another origin is reported as one, never followed.
* Error messages carry the server's body with credentials redacted: every secret the
  request carries (:meth:`HttpAnswerer.secrets`: URL credentials, the bearer key) and
  every credential pattern, removed before any cut (:class:`rulegauge.core.redact.Secrets`).
* ``latency_ms`` is the wall time of the whole :meth:`HttpAnswerer.answer` call,
  retries and waits included (``time.perf_counter``).
* Thread-safe: every call opens its own connection; no other mutable state. Bounded concurrency is the caller's job.

Reference: exponential backoff with jitter, "Exponential Backoff And Jitter",
AWS Architecture Blog (2015); ``Retry-After``: RFC 9110 section 10.2.3.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, ClassVar
from urllib.parse import urlsplit

from rulegauge.answering.prompt import parse_outcome, render
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.core.errors import ConfigError
from rulegauge.core.httpcall import (
    HttpReply,
    RetryPolicy,
    call_rng,
    call_with_retries,
    parse_json,
    redact_url,
    request,
    snippet,
    status_problem,
)
from rulegauge.core.limits import MAX_HTTP_BODY
from rulegauge.core.redact import Secrets


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


class JsonPoster:
    """POSTs JSON to one URL with one deadline per attempt and retries
    (:func:`rulegauge.core.httpcall.request`); never raises for a failed call."""

    max_body_bytes: int = MAX_HTTP_BODY

    def __init__(self, url: str, *, timeout_s: float, retry: RetryPolicy, seed: int,
                 headers: dict[str, str] | None = None) -> None:
        if timeout_s <= 0:
            raise ConfigError(f"timeout_s={timeout_s} must be > 0")
        self.url = url
        self.timeout_s = timeout_s
        self.retry = retry
        self.seed = seed
        self.headers = {"content-type": "application/json", **(headers or {})}
        self.sleep = time.sleep

    def post(self, payload: dict[str, Any], key: str) -> PostResult:
        """POST ``payload``; retry per the policy; ``key`` seeds the jitter."""
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")

        def once() -> HttpReply:
            return request("POST", self.url, headers=self.headers, body=body,
                           deadline_s=self.timeout_s, max_body_bytes=self.max_body_bytes)

        out = call_with_retries(once, self.retry, call_rng(self.seed, key), self.sleep)
        secrets = self.secrets()
        if out.reply is None:
            return PostResult(None, secrets.clean(out.error or "no reply"), out.attempts)
        problem = status_problem(out.reply)
        if problem is not None:
            return PostResult(None, secrets.clean(problem), out.attempts)
        try:
            return PostResult(parse_json(out.reply.body), None, out.attempts)
        except ValueError as exc:
            return PostResult(None, f"malformed JSON body ({exc}): {snippet(out.reply)!r}",
                              out.attempts)

    def secrets(self) -> Secrets:
        """What every call carries that is secret: URL credentials, header values other
        than the content type (a key may sit in any header a team configures)."""
        return Secrets.of_request(self.url, self.headers, [
            v for k, v in self.headers.items() if k.lower() != "content-type"])

    def close(self) -> None:
        """Nothing to release: every call opens and closes its own connection."""


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
                                  latency_ms=latency,
                                  error=self.secrets().clean(f"{self.name}: {error}"))
        text = self.secrets().scrub(reply.text)  # an echoing server never puts its key in a table
        return AnswerResponse(text=text, outcome=parse_outcome(text),
                              model_id=self.model, latency_ms=latency,
                              tokens_in=reply.tokens_in, tokens_out=reply.tokens_out)

    @property
    def call_timeout_s(self) -> float:
        """The deadline of one call (``timeout_s``); a preflight waits no longer
        (:func:`rulegauge.answering.preflight.unreachable`)."""
        return self.poster.timeout_s

    def secrets(self) -> Secrets:
        """Every secret a call to the server carries (:meth:`JsonPoster.secrets`)."""
        return self.poster.secrets()

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
