"""A hostile chat server on 127.0.0.1 for the fault tier: it answers 200 and then
either trickles its body one byte per ``interval`` seconds or streams an endless
body as fast as it can. Loops are bounded (``max_seconds``) and stop when the
server closes or the client goes away.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def _handler(mode: str, interval: float, max_seconds: float,
             stop: threading.Event) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # keep test output clean
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", 0)))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            end = time.monotonic() + max_seconds
            chunk = b'{"message": {"content": "' if mode == "trickle" else b"x" * 65536
            try:
                self.wfile.write(chunk[:1])
                self.wfile.flush()
                while time.monotonic() < end and not stop.is_set():
                    if mode == "trickle":
                        stop.wait(interval)
                        self.wfile.write(b"a")
                    else:
                        self.wfile.write(chunk)
                    self.wfile.flush()
            except OSError:
                pass  # the client hung up: that is what the test wants

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
