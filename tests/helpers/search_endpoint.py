"""A scripted HTTP endpoint on 127.0.0.1 for the ``http`` arm and ``core.httpcall`` tests.

Each request takes the next behaviour of the script (the last one repeats), or the
behaviour a ``reply(request)`` function returns. Behaviours: ``json(obj)``,
``status(code, retry_after=None)``, ``html()``, ``redirect(location)``,
``trickle_headers(interval)`` (the status line and headers a byte at a time),
``trickle_body(interval)``, ``endless()`` (a body without end) and ``drop()``
(connection closed without a reply). Every request is recorded (method, path,
headers, body). Loops are bounded by ``max_seconds`` and stop when the server stops.
"""

from __future__ import annotations

import contextlib
import json as jsonlib
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Behaviour:
    kind: str
    payload: Any = None
    code: int = 200
    interval: float = 0.05
    headers: tuple[tuple[str, str], ...] = ()


def json(obj: Any, code: int = 200) -> Behaviour:
    return Behaviour("json", obj, code)


def status(code: int, retry_after: float | None = None) -> Behaviour:
    extra = (("Retry-After", f"{retry_after:g}"),) if retry_after is not None else ()
    return Behaviour("json", {"error": f"status {code}"}, code, headers=extra)


def html() -> Behaviour:
    return Behaviour("html", "<html><body>Gateway login</body></html>")


def redirect(location: str, code: int = 302) -> Behaviour:
    return Behaviour("redirect", location, code)


def trickle_headers(interval: float = 0.2) -> Behaviour:
    return Behaviour("trickle_headers", interval=interval)


def trickle_body(interval: float = 0.2) -> Behaviour:
    return Behaviour("trickle_body", interval=interval)


def endless() -> Behaviour:
    return Behaviour("endless")


def drop() -> Behaviour:
    return Behaviour("drop")


@dataclass
class Endpoint:
    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)


def _handler(pick: Callable[[dict[str, Any]], Behaviour], endpoint: Endpoint,
             stop: threading.Event, max_seconds: float) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def _serve(self) -> None:
            raw = self.rfile.read(int(self.headers.get("content-length", 0) or 0))
            req = {"method": self.command, "path": self.path, "headers": dict(self.headers),
                   "body": jsonlib.loads(raw) if raw else None}
            endpoint.requests.append(req)
            b = pick(req)
            end = time.monotonic() + max_seconds
            with contextlib.suppress(OSError):  # the client hung up: what deadline tests want
                self._behave(b, end)

        def _behave(self, b: Behaviour, end: float) -> None:
            if b.kind == "drop":
                self.close_connection = True
                return
            if b.kind == "trickle_headers":
                for ch in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" * 1000:
                    if time.monotonic() > end or stop.wait(b.interval):
                        return
                    self.wfile.write(bytes([ch]))
                    self.wfile.flush()
                return
            body = (jsonlib.dumps(b.payload).encode() if b.kind == "json"
                    else str(b.payload or "").encode())
            self.send_response(b.code)
            for k, v in b.headers:
                self.send_header(k, v)
            if b.kind == "redirect":
                self.send_header("Location", b.payload)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            ctype = "text/html" if b.kind == "html" else "application/json"
            self.send_header("Content-Type", ctype)
            if b.kind in ("json", "html"):
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            self.end_headers()
            self.wfile.write(b'{"hits": [')
            while time.monotonic() < end and not stop.is_set():
                if b.kind == "trickle_body":
                    stop.wait(b.interval)
                    self.wfile.write(b" ")
                else:
                    self.wfile.write(b" " * 65536)
                self.wfile.flush()

        do_GET = do_POST = _serve

    return Handler


@contextmanager
def search_endpoint(script: list[Behaviour] | Callable[[dict[str, Any]], Behaviour],
                    max_seconds: float = 20.0) -> Iterator[Endpoint]:
    """Serve in a thread; yields the endpoint (``url`` ends in ``/search``)."""
    stop = threading.Event()
    lock = threading.Lock()
    seen = [0]

    def pick(req: dict[str, Any]) -> Behaviour:
        if callable(script):
            return script(req)
        with lock:
            i = min(seen[0], len(script) - 1)
            seen[0] += 1
        return script[i]

    endpoint = Endpoint("")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(pick, endpoint, stop, max_seconds))
    server.daemon_threads = True
    endpoint.url = f"http://127.0.0.1:{server.server_address[1]}/search"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield endpoint
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
