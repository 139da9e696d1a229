"""The local-server foundation (rulegauge.core.localserver): threads, socket timeouts,
errors as JSON, one writer per file, the page token, and that nothing else opens a
server socket."""

from __future__ import annotations

import re
import socket
import threading
from pathlib import Path

import pytest

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.localserver import (
    BACKLOG,
    TOKEN_META,
    LocalServer,
    Reply,
    Request,
    json_reply,
    serving,
    with_token,
)
from rulegauge.core.requestbody import RequestError
from tests.helpers.common import REPO
from tests.helpers.local_servers import BUILDERS, SERVERS, load_test, raw_request, request_bytes


def _host(server: LocalServer) -> str:
    return f"127.0.0.1:{server.port}"


@pytest.mark.faults
def test_a_held_connection_delays_no_other_and_is_closed_after_the_timeout() -> None:
    """Slowloris: one client sends half a request line and waits; others are answered
    meanwhile, and the server drops the held one after its socket timeout."""
    server = LocalServer(lambda req: json_reply({"path": req.path}), timeout_s=0.5)
    with serving(server):
        held = socket.create_connection(("127.0.0.1", server.port), timeout=60)
        try:
            held.sendall(b"GET /slow HTTP/1.1\r\nHost: ")
            for i in range(5):
                reply = raw_request(server.port, request_bytes("GET", f"/p{i}", _host(server)))
                assert reply.status == 200 and reply.json() == {"path": f"/p{i}"}
            assert held.recv(1024) == b""  # closed by the server, nothing answered
        finally:
            held.close()


def test_requests_are_served_concurrently() -> None:
    """A request blocked inside the application does not hold back the next one."""
    entered, release = threading.Event(), threading.Event()

    def app(req: Request) -> Reply:
        if req.path == "/block":
            entered.set()
            assert release.wait(60)
        return json_reply({"path": req.path})

    server = LocalServer(app)
    with serving(server):
        blocked: list[int] = []
        t = threading.Thread(target=lambda: blocked.append(
            raw_request(server.port, request_bytes("GET", "/block", _host(server))).status))
        t.start()
        assert entered.wait(60)
        assert raw_request(server.port, request_bytes("GET", "/free", _host(server))).status == 200
        release.set()
        t.join(60)
        assert blocked == [200]
    assert server.request_queue_size == BACKLOG >= 128


@pytest.mark.faults
def test_an_application_failure_is_a_json_500_without_traceback() -> None:
    def app(req: Request) -> Reply:
        if req.path == "/nan":
            return json_reply({"x": float("nan")})  # a reply no browser could parse
        raise KeyError("secret detail")

    server = LocalServer(app)
    with serving(server):
        for path in ("/boom", "/nan"):
            reply = raw_request(server.port, request_bytes("GET", path, _host(server)))
            assert reply.status == 500
            error = reply.json()["error"]
            assert error.startswith("internal error (") and "secret" not in error
            assert b"Traceback" not in reply.body


def test_unknown_paths_are_404_and_request_errors_keep_their_status() -> None:
    def app(req: Request) -> Reply | None:
        if req.path == "/teapot":
            raise RequestError("short and stout", 418)
        return None

    server = LocalServer(app)
    with serving(server):
        reply = raw_request(server.port, request_bytes("GET", "/nowhere", _host(server)))
        assert reply.status == 404 and reply.json() == {"error": "no such page /nowhere"}
        reply = raw_request(server.port, request_bytes("GET", "/teapot", _host(server)))
        assert reply.status == 418 and reply.json() == {"error": "short and stout"}


@pytest.mark.faults
def test_one_writer_per_file(tmp_path: Path) -> None:
    target = tmp_path / "j.jsonl"
    first = LocalServer(lambda req: None, writes=(target,))
    try:
        with pytest.raises(RulegaugeError, match="being written by another server"):
            LocalServer(lambda req: None, writes=(target,))
    finally:
        first.server_close()
    LocalServer(lambda req: None, writes=(target,)).server_close()  # free again once closed


@pytest.mark.faults
def test_a_linked_lock_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").write_text("keep")
    (tmp_path / "j.jsonl.lock").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(RulegaugeError, match="is a symbolic link"):
        LocalServer(lambda req: None, writes=(tmp_path / "j.jsonl",))
    assert (tmp_path / "elsewhere").read_text() == "keep"


def test_port_out_of_range_and_port_taken_are_rulegauge_errors() -> None:
    with pytest.raises(RulegaugeError, match=re.escape("within 0..65535")):
        LocalServer(lambda req: None, port=70000)
    first = LocalServer(lambda req: None)
    try:
        with pytest.raises(RulegaugeError, match=re.escape(f"cannot listen on 127.0.0.1:{first.port}")):
            LocalServer(lambda req: None, port=first.port)
    finally:
        first.server_close()


def test_the_token_goes_into_the_page_head() -> None:
    html = with_token("<html><head><title>t</title></head></html>", "ab12")
    assert re.search(f'<head><meta name="{TOKEN_META}" content="ab12"><title>', html)
    a, b = LocalServer(lambda req: None), LocalServer(lambda req: None)
    try:
        assert a.token != b.token and re.fullmatch("[0-9a-f]{32}", a.token)
    finally:
        a.server_close()
        b.server_close()


SERVER_SOCKET = re.compile(r"HTTPServer|socketserver|create_server\(|\.listen\(|\.bind\(|"
                           r"start_server\(|uvicorn|aiohttp\.web|werkzeug\.serving")


def test_nothing_else_opens_a_server_socket() -> None:
    """Every server of rulegauge goes through core/localserver (one home)."""
    found = [f"{p.relative_to(REPO)}:{n}" for p in sorted((REPO / "rulegauge").rglob("*.py"))
             if p.name != "localserver.py"
             for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1)
             if SERVER_SOCKET.search(line)]
    assert not found, found


@pytest.mark.slow
@pytest.mark.parametrize("name", SERVERS)
def test_each_server_answers_every_request_under_load(name: str, tmp_path: Path) -> None:
    """2,000 requests at 64 concurrent, one slowloris client held open: 0 errors (the
    timings are benchmarks/bench_servers.py's, not asserted here)."""
    with BUILDERS[name](tmp_path) as target:
        got = load_test(target, 2000, 64)
    assert got.errors == () and len(got.latencies) == 2000
    assert got.slowloris_dropped  # and the held connection did not last forever
