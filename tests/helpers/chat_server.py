"""A real local chat server for tests: Ollama ``/api/chat`` and OpenAI
``/v1/chat/completions`` on 127.0.0.1 (port 0), with scripted behaviours.

Each request takes the next behaviour from the script (when the script runs
out, :func:`ok` with the default text); every request is recorded (path,
headers, JSON body) for assertions. Usage::

    with chat_server([status(500), ok("Yes [1].")]) as server:
        url = server.base_url
        ...
        assert len(server.requests) == 2

Behaviours: :func:`ok` (a well-formed reply in the protocol of the path),
:func:`delay` (sleep, then reply), :func:`status` (an HTTP error, optionally
with ``Retry-After``), :func:`malformed` (200 with a body that is not JSON),
:func:`wrong_shape` (200 with JSON that is not a chat reply) and :func:`drop`
(close the connection without a response). ``GET /api/tags`` and ``GET /v1/models``
list the ``models`` given (for the preflight). Traffic never leaves the loopback
interface; sleeping handlers wake when the server closes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

DEFAULT_TEXT = "The President draws three Policy tiles [1]."


@dataclass(frozen=True)
class Behaviour:
    kind: str
    text: str = DEFAULT_TEXT
    seconds: float = 0.0
    code: int = 200
    retry_after: str | None = None
    tokens: tuple[int, int] | None = (120, 12)
    body: bytes = b""


def ok(text: str = DEFAULT_TEXT, tokens: tuple[int, int] | None = (120, 12)) -> Behaviour:
    """A well-formed reply; ``tokens=None`` leaves the counts out."""
    return Behaviour("ok", text=text, tokens=tokens)


def delay(seconds: float, text: str = DEFAULT_TEXT) -> Behaviour:
    """Sleep ``seconds`` (longer than the client's timeout), then reply."""
    return Behaviour("ok", text=text, seconds=seconds)


def status(code: int, retry_after: str | None = None) -> Behaviour:
    """An HTTP error ``code`` with a small JSON error body."""
    return Behaviour("status", code=code, retry_after=retry_after)


def malformed(body: bytes = b'{"message": {"content": "trunc') -> Behaviour:
    """200 with a body that is not valid JSON."""
    return Behaviour("raw", body=body)


def wrong_shape() -> Behaviour:
    """200 with valid JSON that is not a chat reply."""
    return Behaviour("raw", body=b'{"unexpected": [1, 2, 3]}')


def drop() -> Behaviour:
    """Close the connection without sending a response."""
    return Behaviour("drop")


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: Any


@dataclass
class ChatServer:
    """State shared with the handler threads."""

    script: list[Behaviour]
    default: Behaviour = field(default_factory=ok)
    requests: list[Recorded] = field(default_factory=list)
    base_url: str = ""
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    models: tuple[str, ...] = ("stub",)  # listed by GET /api/tags and /v1/models (preflight)

    def next_behaviour(self, rec: Recorded) -> Behaviour:
        with self.lock:
            self.requests.append(rec)
            return self.script.pop(0) if self.script else self.default


def _ollama_body(b: Behaviour, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model, "created_at": "2026-01-01T00:00:00Z",
                            "message": {"role": "assistant", "content": b.text},
                            "done": True, "done_reason": "stop"}
    if b.tokens is not None:
        body["prompt_eval_count"], body["eval_count"] = b.tokens
    return body


def _openai_body(b: Behaviour, model: str) -> dict[str, Any]:
    body: dict[str, Any] = {"id": "chatcmpl-test", "object": "chat.completion", "model": model,
                            "choices": [{"index": 0, "finish_reason": "stop",
                                         "message": {"role": "assistant", "content": b.text}}]}
    if b.tokens is not None:
        body["usage"] = {"prompt_tokens": b.tokens[0], "completion_tokens": b.tokens[1],
                         "total_tokens": sum(b.tokens)}
    return body


_ROUTES = {"/api/chat": _ollama_body, "/v1/chat/completions": _openai_body}


def _handler(state: ChatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, code: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(payload)

        def do_GET(self) -> None:
            with state.lock:
                state.requests.append(Recorded(self.path, dict(self.headers.items()), None))
            if self.path == "/api/tags":
                self._send(200, json.dumps({"models": [{"name": m, "model": m}
                                                       for m in state.models]}).encode())
            elif self.path == "/v1/models":
                self._send(200, json.dumps({"object": "list", "data": [
                    {"id": m, "object": "model"} for m in state.models]}).encode())
            else:
                self._send(404, b'{"error": "no such route"}')

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                body = json.loads(raw)
            except json.JSONDecodeError:
                body = None
            b = state.next_behaviour(Recorded(self.path, dict(self.headers.items()), body))
            if b.seconds and state.stop.wait(b.seconds):
                return
            route = _ROUTES.get(self.path)
            if route is None:
                self._send(404, b'{"error": "no such route"}')
            elif b.kind == "drop":
                self.close_connection = True
                self.connection.close()
            elif b.kind == "status":
                extra = {"Retry-After": b.retry_after} if b.retry_after is not None else {}
                self._send(b.code, json.dumps({"error": f"scripted {b.code}"}).encode(), extra)
            elif b.kind == "raw":
                self._send(200, b.body)
            else:
                model = body.get("model", "") if isinstance(body, dict) else ""
                self._send(200, json.dumps(route(b, model)).encode())

    return Handler


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        # clients that time out close their socket; writing to it then fails by design
        return


@contextmanager
def chat_server(script: Sequence[Behaviour] = (), models: Sequence[str] = ("stub",)
                ) -> Iterator[ChatServer]:
    """Run a scripted chat server on 127.0.0.1:<free port> for the ``with`` block;
    ``models`` are the names its model lists (``GET /api/tags``, ``/v1/models``) show."""
    state = ChatServer(list(script), models=tuple(models))
    server = _Server(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
