"""An endpoint that echoes every request back, on 127.0.0.1, for the credentials test.

Every reply, success or error, carries ``echo``: the method, the full path (query
string included), every request header and, for HTTP Basic, the decoded
``user:password``. It answers two protocols:

* a search service for the ``http`` arm (``POST /search`` with ``qid`` in the body):
  ``q1`` gets a ranked list whose second hit's doc id is the echoed ``Authorization``
  header; ``q2`` a 400 whose body puts the echo right at the 200th character (a
  secret straddling an excerpt's cut); ``q3`` a 200 that is plain text (the echo, not
  JSON); ``q4`` a hit whose score is the echoed ``Cookie`` header;
* an OpenAI-compatible chat server (``GET /v1/models`` lists ``stub``;
  ``POST /v1/chat/completions``): a prompt holding ``UNPARSEABLE`` gets a reply that is
  no grade, one holding ``FAILS`` a 401, anything else grade 2; each reply's text ends
  with the echo.
"""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _echo(handler: BaseHTTPRequestHandler) -> dict[str, Any]:
    headers = dict(handler.headers.items())
    auth = headers.get("Authorization", "")
    basic = ""
    if auth.startswith("Basic "):
        basic = base64.b64decode(auth[6:]).decode("utf-8", "replace")
    return {"method": handler.command, "path": handler.path, "headers": headers, "basic": basic}


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep test output clean
        pass

    def _send(self, status: int, body: bytes, ctype: str = "application/json") -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, obj: Any) -> None:
        self._send(status, json.dumps(obj).encode())

    def do_GET(self) -> None:
        if self.path.endswith("/v1/models"):
            self._json(200, {"data": [{"id": "stub"}], "echo": _echo(self)})
        else:
            self._json(404, {"error": "not found", "echo": _echo(self)})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        echo = _echo(self)
        if self.path.endswith("/chat/completions"):
            self._chat(body, echo)
        else:
            self._search(body, echo)

    def _search(self, body: dict[str, Any], echo: dict[str, Any]) -> None:
        qid = body.get("qid")
        auth = echo["headers"].get("Authorization", echo["basic"])
        if qid == "q2":
            text = json.dumps(echo)
            cookie = echo["headers"].get("Cookie", "")
            at = text.find(cookie.partition("=")[2]) if cookie else text.find("api_key=") + 8
            # the cookie's value (or the query key) starts 4 characters before the cut
            self._send(400, ("x" * max(0, 196 - at) + text).encode())
        elif qid == "q3":
            self._send(200, f"login page; you sent {json.dumps(echo)}".encode(), "text/plain")
        elif qid == "q4":
            cookie = echo["headers"].get("Cookie", echo["path"])
            self._json(200, {"hits": [{"doc": "rb", "page": 1, "score": cookie}], "echo": echo})
        else:
            self._json(200, {"hits": [{"doc": "rb", "page": 2, "score": 1.0},
                                      {"doc": auth or echo["path"], "page": 1, "score": 0.5}],
                             "echo": echo})

    def _chat(self, body: dict[str, Any], echo: dict[str, Any]) -> None:
        prompt = json.dumps(body.get("messages"))
        if "FAILS" in prompt:
            self._json(401, {"error": {"message": f"bad key; you sent {json.dumps(echo)}"}})
            return
        text = ("I will not grade this" if "UNPARSEABLE" in prompt else
                "OK" if "single word OK" in prompt else "2")
        self._json(200, {"choices": [{"message": {"content": f"{text} {json.dumps(echo)}"}}],
                         "usage": {"prompt_tokens": 3, "completion_tokens": 2}})


@contextmanager
def echo_endpoint() -> Iterator[str]:
    """The endpoint's base URL (``http://127.0.0.1:PORT``) while the block runs."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
