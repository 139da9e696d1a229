"""A circuit breaker per answerer (and judge): stop calling an endpoint that is gone.

After :data:`DEFAULT_AFTER` consecutive *connection failures* (the endpoint refused the
connection, reset it, or gave no complete reply within the call's deadline: the failures
:mod:`harness.core.httpcall` names) the circuit opens: the answerer's remaining calls are
not made and each becomes an ``error`` answer saying so, at once. Any other error (a
malformed reply, an HTTP 400) and every success reset the count: a slow model that
answers is never cut off. ``after = 0`` disables the breaker.

Without it a dead server turned a 57-question suite into 7 minutes of timeouts, and a dead
judge into 3 more minutes (issue 26). Thread-safe: the local asker calls from a pool.

Reference: M. Nygard, "Release It!" (2007), the Circuit Breaker pattern.
"""

from __future__ import annotations

import threading
from typing import Any

from harness.answering.requests import AnswerRequest, AnswerResponse

DEFAULT_AFTER = 5
"""Consecutive connection failures that open the circuit."""
MAX_AFTER = 10_000
CONNECTION_FAILURES = ("ConnectionRefusedError", "ConnectionResetError", "ConnectionAbortedError",
                       "gaierror", "no complete reply within the total deadline", "RemoteDisconnected",
                       "Connection refused", "cannot reach")
"""Markers of a connection failure in an error message (core/httpcall's wording)."""


def is_connection_failure(error: str | None) -> bool:
    """Whether ``error`` (an answer's or a judge call's error text) says the endpoint is gone."""
    return bool(error) and any(m in str(error) for m in CONNECTION_FAILURES)


class Breaker:
    """Counts consecutive connection failures; :attr:`open` once there were ``after``."""

    def __init__(self, label: str, after: int = DEFAULT_AFTER) -> None:
        if not 0 <= after <= MAX_AFTER:
            raise ValueError(f"breaker threshold must be 0..{MAX_AFTER}, got {after}")
        self.label, self.after = label, after
        self._run = 0
        self._lock = threading.Lock()
        self.opened = False
        self.skipped = 0

    @property
    def message(self) -> str:
        return (f"{self.label}: not asked: the circuit opened after {self.after} consecutive "
                "connection failures (the endpoint is gone)")

    def record(self, error: str | None) -> None:
        with self._lock:
            self._run = self._run + 1 if is_connection_failure(error) else 0
            if self.after and self._run >= self.after:
                self.opened = True

    def skip(self) -> bool:
        """Whether the next call is skipped (and count it)."""
        with self._lock:
            if self.opened:
                self.skipped += 1
            return self.opened


class BreakerAnswerer:
    """An answerer behind a :class:`Breaker`: the same interface, calls skipped once open."""

    def __init__(self, answerer: Any, breaker: Breaker) -> None:
        self._inner, self.breaker = answerer, breaker

    def __getattr__(self, name: str) -> Any:  # describe(), covers(), max_concurrency...
        return getattr(self._inner, name)

    def answer(self, request: AnswerRequest) -> AnswerResponse:
        if self.breaker.skip():
            model = str(self._inner.describe().get("model_id", ""))
            return AnswerResponse("", "error", model, 0.0, error=self.breaker.message)
        try:
            resp: AnswerResponse = self._inner.answer(request)
        except Exception as exc:  # calls.call turns it into an error row; count it first
            self.breaker.record(f"{type(exc).__name__}: {exc}")
            raise
        self.breaker.record(resp.error if resp.outcome == "error" else None)
        return resp


def guarded_chat(chat: Any, breaker: Breaker) -> Any:
    """A judge's ``(messages, key) -> (reply, error)`` behind ``breaker``."""

    def call(msgs: Any, key: str) -> tuple[str, str | None]:
        if breaker.skip():
            return "", breaker.message
        reply, error = chat(msgs, key)
        breaker.record(error)
        return reply, error

    return call
