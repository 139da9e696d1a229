"""A hostile HTTP server on 127.0.0.1 for the fault tier. Modes (GET and POST alike):

* ``trickle``: 200, then the body one byte per ``interval`` seconds;
* ``endless``: 200, then an endless body as fast as it can;
* ``headers-trickle``: the status line and headers one byte per ``interval``;
* ``gzip-bomb``: 200 with ``Content-Encoding: gzip``: 256 KiB inflating to 256 MiB;
* ``deep-json``: 200 with ``[`` x 10^5 then ``]`` x 10^5;
* ``redirect``: 302 to ``http://elsewhere.invalid/api``;
* ``echo-401``: 401 whose body echoes ``Bearer sk-...`` and an ``api_key``;
* ``not-utf8``: 200 with a Latin-1 body;
* ``huge-length``: 200 declaring ``Content-Length`` of 10 GiB;
* ``ollama``: a well-behaved Ollama (``/api/tags`` lists ``m``; ``/api/chat`` answers).

Loops are bounded (``max_seconds``) and stop when the server closes or the client goes.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

SECRET = "sk-abcdef1234567890secret"
_BOMB: list[bytes] = []


def _bomb() -> bytes:
    """A gzip body of ~256 KiB that inflates to 256 MiB of NULs (built in slices)."""
    if not _BOMB:
        z = zlib.compressobj(9, zlib.DEFLATED, 31)
        block = b"\0" * (1 << 20)
        _BOMB.append(b"".join(z.compress(block) for _ in range(256)) + z.flush())
    return _BOMB[0]


def _handler(mode: str, interval: float, max_seconds: float,
             stop: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def _reply(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            for k, v in {"content-type": "application/json", **(headers or {})}.items():
                self.send_header(k, v)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _ollama(self) -> None:
            if self.path.endswith("/api/tags"):
                self._reply(200, json.dumps({"models": [{"name": "m:latest"}]}).encode())
            else:
                self._reply(200, json.dumps({"message": {"content": "Move three spaces [1]."},
                                             "prompt_eval_count": 3, "eval_count": 4}).encode())

        def _stream(self) -> None:
            end = time.monotonic() + max_seconds
            if mode == "headers-trickle":
                for ch in b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n":
                    if stop.wait(interval) or time.monotonic() > end:
                        return
                    self.wfile.write(bytes([ch]))
                    self.wfile.flush()
                return
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            chunk = b'{"message": {"content": "' if mode == "trickle" else b"x" * 65536
            self.wfile.write(chunk[:1])
            self.wfile.flush()
            while time.monotonic() < end and not stop.is_set():
                if mode == "trickle":
                    stop.wait(interval)
                    self.wfile.write(b"a")
                else:
                    self.wfile.write(chunk)
                self.wfile.flush()

        def _serve(self) -> None:
            try:
                if mode in ("trickle", "endless", "headers-trickle"):
                    self._stream()
                elif mode == "gzip-bomb":
                    self._reply(200, _bomb(), {"content-encoding": "gzip"})
                elif mode == "deep-json":
                    self._reply(200, b"[" * 100_000 + b"]" * 100_000)
                elif mode == "redirect":
                    self._reply(302, b"", {"location": "http://elsewhere.invalid/api"})
                elif mode == "echo-401":
                    self._reply(401, json.dumps({"error": f"bad credentials: Bearer {SECRET}",
                                                 "api_key": SECRET}).encode())
                elif mode == "not-utf8":
                    self._reply(200, '{"message": {"content": "caf\u00e9"}}'.encode("latin-1"))
                elif mode == "huge-length":
                    self.send_response(200)
                    self.send_header("content-length", str(10 << 30))
                    self.end_headers()
                    self.wfile.write(b"{")
                elif mode == "ollama":
                    self._ollama()
            except OSError:
                pass  # the client hung up: that is what the test wants

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self._serve()

    return Handler


@contextmanager
def hostile_server(mode: str, interval: float = 1.0, max_seconds: float = 30.0) -> Iterator[str]:
    """Serve in a thread; yields the base URL (``http://127.0.0.1:PORT``)."""
    stop = threading.Event()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(mode, interval, max_seconds, stop))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
