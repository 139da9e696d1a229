"""One bounded HTTP call: a single deadline over connect, headers and body, and a body cap.

Every HTTP call the harness makes (answerers, their preflight, the ``http`` search
arm) goes through :func:`fetch` on a client from :func:`bounded_client`:

* **one deadline** per call, ``timeout_s`` from the call's start, covering DNS-free
  connect, TLS, sending, the status line, the headers and the body. httpx's own
  timeouts are per phase (a server trickling a header byte a second never trips
  them); here every socket read and write of the call is given at most the time
  left (a network backend that clamps each timeout), so the call ends by its deadline;
* **a body cap**: at most ``max_bytes`` (default 16 MiB) of *decoded* body; gzip and
  deflate are inflated here, bounded (``zlib`` with ``max_length``), so an 8 MiB gzip
  inflating to 8 GiB is cut off at the cap; other encodings are refused;
* **no redirects followed**: a 3xx comes back as it is (:func:`status_problem` says
  "redirect to <URL>"), since a redirect may leave the host the user named;
* :func:`parse_json` reads a body as JSON with every failure (invalid UTF-8, invalid
  JSON, nesting too deep for the parser) a :class:`ValueError` with a short reason.

Errors: :class:`DeadlinePassed` and :class:`BodyTooLarge` (both :class:`HttpLimit`);
httpx's own errors pass through. URLs in messages are redacted
(:func:`harness.core.redact.redact_url`). Thread-safe: the deadline lives in a
:class:`contextvars.ContextVar`, so one client serves many threads.

Reference: RFC 9110 (status codes, Content-Encoding); httpcore network backends.
"""

from __future__ import annotations

import json
import time
import zlib
from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import httpcore
import httpx

from harness.core.limits import MAX_HTTP_BODY
from harness.core.redact import redact_text, redact_url

_DEADLINE: ContextVar[float | None] = ContextVar("harness_http_deadline", default=None)
ACCEPT_ENCODING = "gzip, deflate"
SNIPPET = 200


class HttpLimit(Exception):
    """A call ran past its deadline or its body cap."""


class DeadlinePassed(HttpLimit):
    """The call's single deadline passed (connect, headers or body)."""


class BodyTooLarge(HttpLimit):
    """The decoded body grew past the cap."""


def _left(timeout: float | None) -> float | None:
    deadline = _DEADLINE.get()
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    if left <= 0:
        raise httpcore.ReadTimeout("the call's total deadline passed")
    return left if timeout is None else min(timeout, left)


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.start_tls(ssl_context, server_hostname, _left(timeout)))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _Backend(httpcore.NetworkBackend):
    """httpcore's sync backend with every timeout clamped to the call's time left."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()

    def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                    local_address: str | None = None, socket_options: Any = None
                    ) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_tcp(host, port, _left(timeout), local_address,
                                               socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _Stream(self._inner.connect_unix_socket(path, _left(timeout), socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _Transport(httpx.HTTPTransport):
    """httpx's transport over the clamping backend (same pool settings as httpx's)."""

    def __init__(self) -> None:
        super().__init__()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(), max_connections=100,
            max_keepalive_connections=20, keepalive_expiry=5.0, network_backend=_Backend())


def bounded_client(timeout_s: float, headers: Mapping[str, str] | None = None) -> httpx.Client:
    """A client for :func:`fetch`: per-phase timeouts of ``timeout_s`` (the single
    deadline is set per call), no redirects followed, gzip/deflate only."""
    return httpx.Client(timeout=httpx.Timeout(timeout_s), transport=_Transport(),
                        follow_redirects=False,
                        headers={"accept-encoding": ACCEPT_ENCODING, **dict(headers or {})})


@dataclass(frozen=True)
class HttpReply:
    """A whole reply read within the deadline and the cap."""

    status: int
    headers: httpx.Headers
    body: bytes
    url: str

    def snippet(self) -> str:
        """The start of the body as text, credentials redacted (for messages)."""
        return redact_text(self.body[:SNIPPET].decode("utf-8", errors="replace"))


def _decoder(encoding: str, url: str) -> Any:
    enc = encoding.strip().lower()
    if enc in ("", "identity"):
        return None
    if enc in ("gzip", "x-gzip", "deflate"):
        return zlib.decompressobj(wbits=zlib.MAX_WBITS | 32)  # gzip or zlib header
    raise httpx.DecodingError(f"{redact_url(url)} sent Content-Encoding {encoding!r}; "
                              f"only {ACCEPT_ENCODING} are read")


def _read_body(resp: httpx.Response, deadline: float, max_bytes: int) -> bytes:
    body = bytearray()
    decoder = _decoder(resp.headers.get("content-encoding", ""), str(resp.request.url))
    for raw in resp.iter_raw():
        buf = raw
        while buf:
            if decoder is None:
                body += buf
                buf = b""
            else:
                try:
                    body += decoder.decompress(buf, max_bytes + 1 - len(body))
                except zlib.error as exc:
                    raise httpx.DecodingError(f"invalid compressed body ({exc})") from None
                buf = decoder.unconsumed_tail
            if len(body) > max_bytes:
                raise BodyTooLarge(f"body larger than {max_bytes} bytes; cut off")
        if time.monotonic() > deadline:
            raise DeadlinePassed("while reading the body")
    return bytes(body)


def fetch(client: httpx.Client, method: str, url: str, *, timeout_s: float,
          max_bytes: int = MAX_HTTP_BODY, json_body: Any = None) -> HttpReply:
    """One call, whole reply read, within ``timeout_s`` from now and ``max_bytes``."""
    deadline = time.monotonic() + timeout_s
    token = _DEADLINE.set(deadline)
    try:
        kwargs: dict[str, Any] = {} if json_body is None else {"json": json_body}
        with client.stream(method, url, **kwargs) as resp:
            body = _read_body(resp, deadline, max_bytes)
            return HttpReply(resp.status_code, resp.headers, body, url)
    except DeadlinePassed as exc:
        raise DeadlinePassed(f"total deadline of {timeout_s:g} s passed {exc} "
                             "(Timeout)") from None
    except httpx.TimeoutException as exc:
        if time.monotonic() >= deadline - 0.01:
            raise DeadlinePassed(f"total deadline of {timeout_s:g} s passed before the reply "
                                 f"was complete ({type(exc).__name__})") from None
        raise
    finally:
        _DEADLINE.reset(token)


def status_problem(reply: HttpReply) -> str | None:
    """``HTTP <code>: <body>`` for an error status, a redirect named as one; None for 2xx."""
    if 300 <= reply.status < 400:
        where = reply.headers.get("location", "")
        target = f" to {redact_url(where)}" if where else ""
        return (f"HTTP {reply.status} redirect{target}; redirects are not followed: "
                "give the final URL")
    if reply.status >= 400 or reply.status < 200:
        return f"HTTP {reply.status}: {reply.snippet()}"
    return None


def parse_json(body: bytes) -> Any:
    """``body`` as JSON; :class:`ValueError` with a short reason when it is not."""
    if not body.strip():
        raise ValueError("empty body")
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ValueError(f"not valid UTF-8 (byte {exc.start + 1})") from None
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc.msg} at character {exc.pos}") from None
