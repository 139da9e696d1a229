"""A circuit breaker per answerer (and judge): stop calling an endpoint that is gone.

After :data:`DEFAULT_AFTER` consecutive *connection failures* (the endpoint refused the
connection, reset it, or gave no complete reply within the call's deadline: the failures
:mod:`rulegauge.core.httpcall` names) the circuit opens: the answerer's remaining calls are
not made and each becomes an ``error`` answer saying so, at once. Any other error (a
malformed reply, an HTTP 400) and every success reset the count: a slow model that
answers is never cut off. ``after = 0`` disables the breaker.

Without it a dead server turned a 57-question suite into 7 minutes of timeouts, and a dead
judge into 3 more minutes (issue 26). Thread-safe: the local asker calls from a pool.

Exact under concurrency: once a run of failures has begun, a call starts only when the
calls already in flight cannot complete it (``failures + in flight < after``); otherwise it
waits for one of them to finish. So a dead endpoint is asked exactly ``after`` times
whenever the calls in flight are at most ``after`` (``max(after, calls in flight)`` at
most), not ``after`` plus whatever was in flight when the circuit opened. A healthy
endpoint is never held back: without a failure in the run calls start freely.

Reference: M. Nygard, "Release It!" (2007), the Circuit Breaker pattern.
"""

from __future__ import annotations

import threading
from typing import Any

from rulegauge.answering.requests import AnswerRequest, AnswerResponse

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
        self._in_flight = 0
        self._cond = threading.Condition()
        self.opened = False
        self.skipped = 0

    @property
    def message(self) -> str:
        return (f"{self.label}: not asked: the circuit opened after {self.after} consecutive "
                "connection failures (the endpoint is gone)")

    def record(self, error: str | None) -> None:
        """The outcome of a call (``None``: it succeeded); ends one call in flight."""
        with self._cond:
            self._in_flight = max(0, self._in_flight - 1)
            self._run = self._run + 1 if is_connection_failure(error) else 0
            if self.after and self._run >= self.after:
                self.opened = True
            self._cond.notify_all()

    def skip(self) -> bool:
        """Whether the next call is skipped (and count it); a call not skipped is in flight
        until :meth:`record`. Waits while the calls in flight could open the circuit."""
        with self._cond:
            while (self.after and not self.opened and self._run
                   and self._run + self._in_flight >= self.after):
                self._cond.wait()
            if self.opened:
                self.skipped += 1
                return True
            self._in_flight += 1
            return False


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
        error: str | None = None
        try:
            resp: AnswerResponse = self._inner.answer(request)
            error = resp.error if resp.outcome == "error" else None
            return resp
        except Exception as exc:  # calls.call turns it into an error row; count it first
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:  # always: a call that never records would hold the waiting calls forever
            self.breaker.record(error)


def guarded_chat(chat: Any, breaker: Breaker) -> Any:
    """A judge's ``(messages, key) -> (reply, error)`` behind ``breaker``."""

    def call(msgs: Any, key: str) -> tuple[str, str | None]:
        if breaker.skip():
            return "", breaker.message
        error: str | None = "the call raised"
        try:
            reply, error = chat(msgs, key)
        finally:  # always end the call in flight (see Breaker.skip)
            breaker.record(error)
        return reply, error

    return call
