"""One bounded HTTP call, retries with backoff, and redaction of what a call carries.

:func:`request` makes one HTTP(S) call whose whole life, connect, sending, the
status line and headers and the body, fits in ONE deadline: a watchdog shuts the
socket down when it passes, so a server that trickles its headers or body a byte
at a time is cut off on time (per-phase timeouts, as in ``httpx``, would let it
run for ever). The body is read in chunks and refused beyond ``max_body_bytes``
(a declared ``Content-Length`` beyond it is refused before reading). Redirects are
followed only within the same origin (scheme, host and port), at most
``max_redirects`` hops, inside the same deadline; a redirect elsewhere is an error.
No connection is reused: every call opens its own, so calls are thread-safe. A URL's
``user:password@`` is sent as HTTP Basic authentication (RFC 7617) unless an
``Authorization`` header is given.

:func:`call_with_retries` repeats a call on connect errors, deadlines, dropped
connections, HTTP 429 and 5xx, waiting after failed attempt ``a`` (0-based)
``min(backoff_max_s, backoff_s * 2**a) * (1 - jitter * u)`` seconds, ``u ~ U[0, 1)``
from a local generator seeded by ``(seed, call key)`` (:func:`call_rng`), raised to a
numeric ``Retry-After`` (capped at ``backoff_max_s``). Other 4xx, a too-large body and
a refused redirect are not retried. The loop is bounded by ``retries``.

Replies: :func:`status_problem` names an error status (a 3xx left as it is is "a
redirect to <URL>", never "malformed JSON"), :func:`parse_json` reads a body with
every failure (empty, invalid UTF-8, invalid JSON, nested too deeply for the parser)
a :class:`ValueError` with a short reason: never a ``RecursionError``.

Redaction: :func:`redact_url` (from :mod:`rulegauge.core.redact`, the one home of the
rule) drops user:password, query and fragment;
:func:`redact_headers` masks the values of credential-bearing headers;
:func:`scrub` removes known secret values from any text (a server may echo them).
Every reply carries the secrets its request carried (:attr:`HttpReply.secrets`:
:meth:`rulegauge.core.redact.Secrets.of_request` of its URL and headers, plus the
caller's ``secrets``), so :func:`snippet` and :func:`status_problem` remove them, and
the patterns of :func:`rulegauge.core.redact.redact_text`, before cutting.

References: RFC 9110 (section 15.4 redirects, 10.2.3 ``Retry-After``); "Exponential
Backoff And Jitter", AWS Architecture Blog (2015).
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urljoin, urlsplit, urlunsplit

import numpy as np

from rulegauge.core.errors import ConfigError
from rulegauge.core.limits import COUNTS
from rulegauge.core.redact import MASK, Secrets, is_secret_key, redact_text
from rulegauge.core.redact import redact_url as redact_url

REDACTED = MASK
REDIRECTS = (301, 302, 303, 307, 308)
_CHUNK = 65536


@dataclass(frozen=True)
class HttpReply:
    """A completed call: status, headers (names lower-cased), body, the final URL, and
    the secrets its request carried (to remove from whatever of the body is shown)."""

    status: int
    headers: Mapping[str, str]
    body: bytes
    url: str
    secrets: Secrets = field(default_factory=Secrets, repr=False)


class CallError(Exception):
    """A call that did not complete; ``retryable`` says whether another attempt may help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to retry one call (see the module docstring)."""

    retries: int = 2
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    jitter: float = 0.5

    def __post_init__(self) -> None:
        bad = []
        if self.retries < 0 or self.retries > COUNTS["retries"]:
            bad.append(f"retries={self.retries} must be between 0 and {COUNTS['retries']}")
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


def retryable_status(code: int) -> bool:
    """429 (too many requests) and every 5xx are worth another attempt."""
    return code == 429 or 500 <= code <= 599


def retry_after(headers: Mapping[str, str]) -> float | None:
    """A numeric ``Retry-After`` in seconds, else None (dates are not honoured)."""
    try:
        value = float(headers.get("retry-after", ""))
    except ValueError:
        return None
    return value if value >= 0 else None


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Header names kept; values of credential-bearing ones
    (:func:`rulegauge.core.redact.is_secret_key`) replaced by :data:`REDACTED`."""
    return {k: REDACTED if is_secret_key(k) else v for k, v in headers.items()}


def scrub(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value (4 characters or longer, also URL-encoded or
    JSON-escaped) replaced by :data:`REDACTED` (:meth:`rulegauge.core.redact.Secrets.scrub`)."""
    return Secrets(tuple(secrets)).scrub(text)


def _origin(url: str) -> tuple[str, str, int]:
    p = urlsplit(url)
    return p.scheme, (p.hostname or "").lower(), p.port or (443 if p.scheme == "https" else 80)


def _once(method: str, url: str, headers: Mapping[str, str], body: bytes | None,
          deadline: float, max_body_bytes: int, total_s: float, secrets: Secrets) -> HttpReply:
    p = urlsplit(url)
    if p.scheme not in ("http", "https") or not p.hostname:
        raise CallError(f"{redact_url(url)!r} is not an http(s) URL", retryable=False)
    left = deadline - time.monotonic()
    if left <= 0:
        raise CallError("total deadline passed", retryable=True)
    conn: http.client.HTTPConnection = (
        http.client.HTTPSConnection(p.hostname, p.port, timeout=left,
                                    context=ssl.create_default_context())
        if p.scheme == "https" else http.client.HTTPConnection(p.hostname, p.port, timeout=left))
    fired = threading.Event()
    held: list[socket.socket] = []  # the socket itself: http.client drops conn.sock early

    def cut() -> None:  # the one deadline: wakes any blocked send/recv
        fired.set()
        for sock in held:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(left, cut)
    watchdog.daemon = True
    watchdog.start()
    resp: http.client.HTTPResponse | None = None
    try:
        conn.connect()  # bounded by the socket timeout (the time left)
        held.append(conn.sock)
        if fired.is_set():
            cut()
        path = urlunsplit(("", "", p.path or "/", p.query, ""))
        sent = {"Accept-Encoding": "identity", **headers}
        if p.username is not None and not any(k.lower() == "authorization" for k in sent):
            pair = f"{unquote(p.username)}:{unquote(p.password or '')}".encode()
            sent["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")  # RFC 7617
        conn.request(method, path, body=body, headers=sent)
        resp = conn.getresponse()
        declared = resp.getheader("content-length")
        if declared and declared.isdigit() and int(declared) > max_body_bytes:
            raise CallError(f"reply body of {int(declared)} bytes is over the cap of "
                            f"{max_body_bytes} bytes", retryable=False)
        data = bytearray()
        while chunk := resp.read1(_CHUNK):
            data += chunk
            if len(data) > max_body_bytes:
                raise CallError(f"reply body over the cap of {max_body_bytes} bytes; cut off",
                                retryable=False)
        if fired.is_set():
            raise OSError("deadline")
        return HttpReply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, bytes(data),
                         url, secrets)
    except (OSError, http.client.HTTPException) as exc:
        # the socket's own timeout is the time that was left: it and the watchdog race
        if fired.is_set() or isinstance(exc, TimeoutError):
            # the deadline the caller set, never the time that was left (which depends on load)
            raise CallError(f"no complete reply within the total deadline of "
                            f"{total_s:.3g} s", retryable=True) from None
        raise CallError(f"{type(exc).__name__}: {exc or 'no detail'}", retryable=True) from None
    finally:
        watchdog.cancel()
        if resp is not None:
            resp.close()  # holds the socket once http.client has let go of it
        conn.close()


def request(method: str, url: str, *, headers: Mapping[str, str] | None = None,
            body: bytes | None = None, deadline_s: float, max_body_bytes: int,
            max_redirects: int = 3, secrets: Iterable[str] = ()) -> HttpReply:
    """One call within ``deadline_s`` in total (module docstring); raises :class:`CallError`.
    ``secrets``: values the request carries elsewhere (a key in the body), removed from
    the reply's excerpts with those of its URL and headers."""
    deadline = time.monotonic() + deadline_s
    hdrs = dict(headers or {})
    carried = Secrets.of_request(url, hdrs, secrets)
    for _hop in range(max_redirects + 1):
        reply = _once(method, url, hdrs, body, deadline, max_body_bytes, deadline_s, carried)
        location = reply.headers.get("location")
        if reply.status not in REDIRECTS or not location:
            return reply
        target = urljoin(url, location)
        if _origin(target) != _origin(url):
            raise CallError(f"redirect (HTTP {reply.status}) to another host refused: "
                            f"{redact_url(target)}", retryable=False)
        if reply.status == 303 or (reply.status in (301, 302) and method != "GET"):
            method, body = "GET", None
        url = target
    raise CallError(f"more than {max_redirects} redirects", retryable=False)


def snippet(reply: HttpReply, n: int = 200) -> str:
    """The start of a reply's body as text (``n`` characters), the request's secrets and
    every credential pattern removed *before* it is cut: a secret straddling the cut
    would otherwise survive in part (:meth:`rulegauge.core.redact.Secrets.excerpt`)."""
    return reply.secrets.excerpt(reply.body, n)


def status_problem(reply: HttpReply) -> str | None:
    """``HTTP <code>: <body>`` for a status that is not 2xx (a redirect named as one,
    with its target redacted); None for 2xx."""
    if 300 <= reply.status < 400:
        where = reply.headers.get("location", "")
        target = f" to {redact_url(urljoin(reply.url, where))}" if where else ""
        return (f"HTTP {reply.status}: a redirect{target}, not followed (only same-origin "
                "redirects are); give the final URL")
    if not 200 <= reply.status < 300:
        return f"HTTP {reply.status}: {snippet(reply)}"
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


@dataclass(frozen=True)
class Outcome:
    """What :func:`call_with_retries` ended with: a reply (any final status) or an error."""

    reply: HttpReply | None
    error: str | None
    attempts: int


def call_with_retries(call: Callable[[], HttpReply], policy: RetryPolicy,
                      rng: np.random.Generator,
                      sleep: Callable[[float], None] = time.sleep) -> Outcome:
    """Run ``call`` until it gives a non-retryable reply or the retries are used up."""
    last = "no attempt made"
    attempts = policy.retries + 1
    for attempt in range(attempts):
        wait_hint = None
        try:
            reply = call()
        except CallError as exc:
            if not exc.retryable:
                return Outcome(None, str(exc), attempt + 1)
            last = str(exc)
        else:
            if not retryable_status(reply.status):
                return Outcome(reply, None, attempt + 1)
            last = f"HTTP {reply.status}: {snippet(reply)}"
            wait_hint = retry_after(reply.headers)
        if attempt + 1 < attempts:
            sleep(policy.delay(attempt, rng, wait_hint))
    return Outcome(None, redact_text(f"gave up after {attempts} attempt(s); last: {last}"),
                   attempts)
