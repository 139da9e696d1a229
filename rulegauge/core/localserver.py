"""The one local-server foundation: every page or API rulegauge serves, on 127.0.0.1 only.

Served through it: the judging and review pages (:mod:`rulegauge.judging.server`),
``serve-search`` (:mod:`rulegauge.pipeline.search_service`) and ``report --serve``
(:mod:`rulegauge.analysis.serve_report`). Nothing else in rulegauge opens a server
socket (``tests/core/test_localserver.py`` greps for it).

What every request meets, before the application sees it:

* **Host allow-list** (DNS rebinding): the ``Host`` header must be ``127.0.0.1``,
  ``localhost`` or ``[::1]`` with the server's port; anything else (or none) is 421.
* **State-changing requests** (the routes an application names in ``changes_state``)
  need the same origin (``Origin``, else ``Referer``, must be one of the allowed hosts
  with the port) and the per-server token in ``X-Rulegauge-Token``: a random 128-bit
  hex token the page carries in ``<meta name="rulegauge-token">``
  (:func:`with_token`); a page on another site can neither read it nor send it (CSRF).
* **Bodies** (POST): ``Content-Type: application/json`` only (415), a decimal
  ``Content-Length`` of 1 to ``max_body`` bytes (400 / 413; no chunked bodies), UTF-8,
  a JSON object (:func:`rulegauge.core.requestbody.parse_json_body`: finite numbers,
  nesting bounded; fields read typed with ``text_field`` / ``number_field``).
* **Malformed requests** of any kind get a JSON ``{"error": message}`` with a 4xx
  status, never a traceback; an application error the application did not expect is
  a 500 with the exception's type only (the traceback goes to the debug log).
* **Slow clients** (slowloris): every connection has a socket timeout of
  ``timeout_s`` (:data:`TIMEOUT_S`) for each read and write; the listen backlog is
  :data:`BACKLOG` (the standard library's default is 5), and each connection is
  served on its own thread, so one held connection delays no other.
* **One writer per file**: ``writes=`` takes an exclusive ``flock`` on ``<file>.lock``
  for as long as the server lives; a second server on the same file is refused
  (:class:`~rulegauge.core.errors.RulegaugeError`, exit 2 from the CLI).

Why the standard library's ``ThreadingHTTPServer`` and not a server library: the
core install stays light (uvicorn/starlette would be new core dependencies and an
event loop for pages one person uses), these servers answer at most a few dozen
clients on one machine, and thread-per-connection with a socket timeout and a real
backlog meets the load test (``benchmarks/bench_servers.py``: 2,000 requests at 64
concurrent plus a held slowloris connection, 0 errors). An application that is not
thread-safe takes a lock around its work: requests then queue, none is reset.

References: RFC 9110 (421 Misdirected Request, 415, 413), RFC 6454 (``Origin``),
OWASP CSRF prevention (synchronizer token, origin check), flock(2).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rulegauge.core.atomic import LockHeld, lock_exclusive
from rulegauge.core.errors import RulegaugeError
from rulegauge.core.requestbody import RequestError, parse_json_body

HOST = "127.0.0.1"
ALLOWED_HOSTS = ("127.0.0.1", "localhost", "[::1]")
TOKEN_HEADER = "X-Rulegauge-Token"
TOKEN_META = "rulegauge-token"
JSON_TYPE = "application/json; charset=utf-8"
MAX_BODY = 1 << 20
MAX_QUERY_FIELDS = 64
TIMEOUT_S = 10.0
BACKLOG = 256
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Request:
    """What an application sees of one request: ``query`` keeps each field's last value;
    ``body`` is the parsed JSON object of a POST (empty for GET)."""

    method: str
    path: str
    query: Mapping[str, str]
    body: Mapping[str, Any]
    token: str


@dataclass(frozen=True)
class Reply:
    """One response: status, bytes, content type and extra headers."""

    status: int
    body: bytes
    content_type: str = JSON_TYPE
    headers: tuple[tuple[str, str], ...] = ()


def json_reply(data: Any, status: int = HTTPStatus.OK) -> Reply:
    """``data`` as JSON (never ``NaN``/``Infinity``: a reply a browser could not parse is
    a :class:`ValueError`)."""
    return Reply(int(status), json.dumps(data, ensure_ascii=False, allow_nan=False).encode("utf-8"))


def html_reply(text: str | bytes, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    body = text.encode("utf-8") if isinstance(text, str) else text
    return Reply(HTTPStatus.OK, body, "text/html; charset=utf-8", headers)


def with_token(html: str, token: str) -> str:
    """``html`` with ``<meta name="rulegauge-token" content=TOKEN>`` after ``<head>``
    (the page's script sends it back in :data:`TOKEN_HEADER`)."""
    return html.replace("<head>", f'<head><meta name="{TOKEN_META}" content="{token}">', 1)


App = Callable[[Request], Reply | None]


@dataclass
class WriterLock:
    """An exclusive ``flock`` on ``<path>.lock`` (opened without following a link)."""

    path: Path
    fd: int = field(default=-1, init=False)

    def acquire(self) -> WriterLock:
        lock = self.path.with_name(self.path.name + ".lock")
        lock.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = lock_exclusive(lock)
        except LockHeld as exc:
            raise RulegaugeError(f"{self.path} is being written by another server (pid "
                                 f"{exc.holder}, lock {lock}); stop it first or choose another "
                                 "file") from None
        self.fd = fd
        return self

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the descriptor releases the flock
            self.fd = -1


class LocalServer(ThreadingHTTPServer):
    """A hardened server on 127.0.0.1 for one application (module docstring).

    ``changes_state``: the POST paths that change state (origin and token checked);
    ``headers``: sent with every reply (a page's Content-Security-Policy); ``writes``: the
    files only this server may append to while it lives (:class:`WriterLock`)."""

    daemon_threads = True
    request_queue_size = BACKLOG
    block_on_close = False

    def __init__(self, app: App, port: int = 0, *, changes_state: frozenset[str] = frozenset(),
                 headers: tuple[tuple[str, str], ...] = (), max_body: int = MAX_BODY,
                 timeout_s: float = TIMEOUT_S, writes: tuple[Path, ...] = ()) -> None:
        if not 0 <= port <= 65535:
            raise RulegaugeError(f"--port must be within 0..65535, got {port}")
        self.app, self.changes_state, self.extra_headers = app, changes_state, headers
        self.max_body, self.timeout_s = max_body, timeout_s
        self.token = secrets.token_hex(16)
        self.locks = [WriterLock(Path(p)) for p in writes]
        held: list[WriterLock] = []
        try:
            for lock in self.locks:
                held.append(lock.acquire())
            super().__init__((HOST, port), _Handler)
        except OSError as exc:
            for lock in held:
                lock.release()
            raise RulegaugeError(f"cannot listen on {HOST}:{port}: {exc.strerror or exc}") from None
        except BaseException:
            for lock in held:
                lock.release()
            raise

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    @property
    def url(self) -> str:
        return f"http://{HOST}:{self.port}"

    def allowed_hosts(self) -> frozenset[str]:
        return frozenset(f"{h}:{self.port}" for h in ALLOWED_HOSTS) | (
            frozenset(ALLOWED_HOSTS) if self.port == 80 else frozenset())

    def server_close(self) -> None:
        super().server_close()
        for lock in self.locks:
            lock.release()

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that hung up or timed out is not an error of the server; no traceback
        log.debug("connection from %s ended with an error", client_address, exc_info=True)


class _Handler(BaseHTTPRequestHandler):
    server: LocalServer
    server_version = "rulegauge"
    error_content_type = JSON_TYPE
    default_request_version = "HTTP/1.0"  # a garbled request line still gets a status and headers

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.timeout_s)  # every read and write (slowloris)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def send_error(self, code: int, message: str | None = None, explain: str | None = None) -> None:
        # the standard library's own refusals (bad request line, headers too long, unknown
        # method) answer JSON too
        self.close_connection = True
        with suppress(OSError):
            self._send(json_reply({"error": message or HTTPStatus(code).phrase}, code))

    def _send(self, reply: Reply) -> None:
        self.send_response(reply.status)
        self.send_header("Content-Type", reply.content_type)
        self.send_header("Content-Length", str(len(reply.body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        for name, value in (*self.server.extra_headers, *reply.headers):
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(reply.body)

    def _check_host(self) -> None:
        host = (self.headers.get("Host") or "").strip().lower()
        if host not in self.server.allowed_hosts():
            raise RequestError(f"Host {host[:80] or '(none)'} is not served here; open "
                               f"{self.server.url}/", HTTPStatus.MISDIRECTED_REQUEST)

    def _check_origin(self) -> None:
        origins = {f"http://{h}" for h in self.server.allowed_hosts()}
        origin = self.headers.get("Origin")
        referer = self.headers.get("Referer")
        if origin is not None:
            ok = origin.strip().lower() in origins
        elif referer is not None:
            parts = urlsplit(referer.strip())
            ok = f"{parts.scheme}://{parts.netloc}".lower() in origins
        else:
            ok = False
        if not ok:
            raise RequestError("a change must come from this server's own page (Origin or "
                               "Referer of this server)", HTTPStatus.FORBIDDEN)
        given = self.headers.get(TOKEN_HEADER) or ""
        if not hmac.compare_digest(given.encode(), self.server.token.encode()):
            raise RequestError(f"missing or wrong {TOKEN_HEADER}: reload the page",
                               HTTPStatus.FORBIDDEN)

    def _body(self) -> dict[str, Any]:
        ctype = (self.headers.get("Content-Type") or "").split(";", 1)[0].strip().lower()
        if ctype != "application/json":
            raise RequestError(f"Content-Type must be application/json, got {ctype or '(none)'}",
                               HTTPStatus.UNSUPPORTED_MEDIA_TYPE)
        if self.headers.get("Transfer-Encoding"):
            raise RequestError("send the body with a Content-Length, not Transfer-Encoding",
                               HTTPStatus.LENGTH_REQUIRED)
        text = (self.headers.get("Content-Length") or "").strip()
        if not text.isdigit() or not text.isascii():
            raise RequestError(f"Content-Length must be a byte count, got {text[:40] or '(none)'}")
        length = int(text)
        if not 0 < length <= self.server.max_body:
            raise RequestError(f"request body must be 1 to {self.server.max_body} bytes, got "
                               f"{length}", HTTPStatus.REQUEST_ENTITY_TOO_LARGE
                               if length else HTTPStatus.BAD_REQUEST)
        raw = self.rfile.read(length)
        if len(raw) < length:
            raise RequestError(f"body ended after {len(raw)} of {length} bytes")
        return parse_json_body(raw)

    def _serve(self, method: str) -> None:
        try:
            self._check_host()
            url = urlsplit(self.path)
            try:
                fields = parse_qs(url.query, max_num_fields=MAX_QUERY_FIELDS)
            except ValueError:
                raise RequestError(f"at most {MAX_QUERY_FIELDS} query fields") from None
            body: dict[str, Any] = {}
            if method == "POST":
                if url.path in self.server.changes_state:
                    self._check_origin()
                body = self._body()
            req = Request(method, url.path, {k: v[-1] for k, v in fields.items()}, body,
                          self.server.token)
            reply = self.server.app(req)
            if reply is None:
                reply = json_reply({"error": f"no such {'action' if method == 'POST' else 'page'} "
                                             f"{url.path[:200]}"}, HTTPStatus.NOT_FOUND)
        except RequestError as exc:
            self.close_connection = True
            reply = json_reply({"error": str(exc)}, exc.status)
        except TimeoutError:
            self.close_connection = True
            return  # the client stopped sending: nothing to answer
        except Exception as exc:  # the application failed: a 500, never a traceback
            log.debug("%s %s failed", method, self.path, exc_info=True)
            reply = json_reply({"error": f"internal error ({type(exc).__name__})"},
                               HTTPStatus.INTERNAL_SERVER_ERROR)
        try:
            self._send(reply)
        except OSError:
            self.close_connection = True  # the client hung up

    def do_GET(self) -> None:
        self._serve("GET")

    def do_HEAD(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")


def free_ports(n: int) -> list[int]:
    """``n`` distinct TCP ports free on this machine now, for a program that must be told its
    ports before it starts (Ray's agents: :mod:`rulegauge.core.ray_start`): bound together on
    every interface, never listened on, then released (another program may take one before
    it is used: the caller retries)."""
    with ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("", 0))
        return [int(s.getsockname()[1]) for s in socks]


@contextmanager
def serving(server: LocalServer, name: str = "rulegauge-server") -> Iterator[LocalServer]:
    """Serve ``server`` on a daemon thread for the block; shut down and closed after."""
    thread = start_in_thread(server, name)
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def start_in_thread(server: LocalServer, name: str = "rulegauge-server") -> threading.Thread:
    """Start ``server.serve_forever`` on a daemon thread (the caller shuts it down)."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                              name=name, daemon=True)
    thread.start()
    return thread
