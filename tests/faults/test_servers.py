"""The fault tier's server rows (``-m faults``): hostile requests against each of the four
local servers (judging page, review page, ``serve-search``, ``report --serve``), all served
by :mod:`rulegauge.core.localserver`.

Each row sends one request as raw bytes and asserts its status and a JSON error naming the
fault (never a traceback); then the server must still answer, and nothing may have been
written to the judgments (decisions) file. Rows of issue 33, item 1 (DNS rebinding, CSRF,
malformed bodies, non-finite numbers, deep nesting, bad Content-Length), plus one writer
per judgments file from the command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from rulegauge.core.localserver import TOKEN_HEADER
from rulegauge.judging.poolfile import write_pool
from tests.helpers.common import REPO
from tests.helpers.local_servers import (
    BUILDERS,
    SERVERS,
    Target,
    raw_request,
    request_bytes,
    small_pool,
)

pytestmark = pytest.mark.faults


@dataclass(frozen=True)
class Row:
    id: str
    make: Callable[[Target], bytes]
    status: int
    fragment: str
    servers: tuple[str, ...] = SERVERS


def _host(t: Target) -> str:
    return f"127.0.0.1:{t.server.port}"


def _post(body: bytes, ctype: str = "application/json", length: str | None = None,
          extra: dict[str, str] | None = None, page: bool = True,
          path: str | None = None) -> Callable[[Target], bytes]:
    """A POST to ``path`` (default: the target's post path), as its page sends it (origin
    and token) unless ``page`` is false; ``length`` replaces the true Content-Length."""
    def make(t: Target) -> bytes:
        headers = {**(t.page_headers() if page else {}), "Content-Type": ctype,
                   "Content-Length": str(len(body)) if length is None else length,
                   **(extra or {})}
        return request_bytes("POST", path or t.post[0], _host(t), headers, body)
    return make


def _get_host(host: Callable[[Target], str]) -> Callable[[Target], bytes]:
    return lambda t: request_bytes(t.read[0], t.read[1], host(t))


PAGES = ("judge", "review")  # the servers whose POSTs change state

ROWS = (
    Row("rebinding-foreign-host", _get_host(lambda t: f"evil.example:{t.server.port}"), 421,
        "is not served here"),
    Row("rebinding-wrong-port", _get_host(lambda t: "127.0.0.1:1"), 421, "is not served here"),
    Row("rebinding-no-host", _get_host(lambda t: ""), 421, "(none) is not served here"),
    Row("rebinding-localhost-suffix", _get_host(lambda t: f"localhost.evil.example:{t.server.port}"),
        421, "is not served here"),
    Row("request-line-garbage", lambda t: b"GARBAGE\r\n\r\n", 400, "Bad request"),
    Row("method-unknown", lambda t: request_bytes("DELETE", "/", _host(t)), 501,
        "Unsupported method"),
    Row("length-not-a-number", _post(b"{}", length="zz"), 400, "Content-Length must be a byte count"),
    Row("length-negative", _post(b"{}", length="-1"), 400, "Content-Length must be a byte count"),
    Row("length-missing", lambda t: request_bytes("POST", t.post[0], _host(t),
                                                  {**t.page_headers()}), 400,
        "Content-Length must be a byte count"),
    Row("length-zero", _post(b"", length="0"), 400, "request body must be 1 to"),
    Row("length-beyond-cap", _post(b"{}", length=str(1 << 30)), 413, "request body must be 1 to"),
    Row("length-longer-than-body", _post(b'{"a": 1}', length="9"), 400, "body ended after 8 of 9"),
    Row("chunked-body", _post(b"{}", extra={"Transfer-Encoding": "chunked"}), 411,
        "not Transfer-Encoding"),
    Row("body-text-plain", _post(b'{"a": 1}', ctype="text/plain"), 415,
        "Content-Type must be application/json"),
    Row("body-form", _post(b"a=1", ctype="application/x-www-form-urlencoded"), 415,
        "Content-Type must be application/json"),
    Row("body-not-json", _post(b"{judge: ann}"), 400, "body is not JSON"),
    Row("body-not-utf8", _post(b'{"judge": "caf\xe9"}'), 400, "body is not UTF-8"),
    Row("body-a-list", _post(b"[1, 2]"), 400, "body must be a JSON object"),
    Row("number-1e400", _post(b'{"k": 1e400, "seconds": 1e400}'), 400, "out of range"),
    Row("number-1e999", _post(b'{"seconds": 1e999}'), 400, "out of range"),
    Row("number-minus-1e400", _post(b'{"seconds": -1e400}'), 400, "out of range"),
    Row("number-nan", _post(b'{"seconds": NaN}'), 400, "NaN is not a JSON number"),
    Row("number-infinity", _post(b'{"seconds": Infinity}'), 400, "Infinity is not a JSON number"),
    Row("number-5000-digits", _post(b'{"k": ' + b"9" * 5000 + b"}"), 400, "not usable JSON"),
    Row("nesting-30000-deep", _post(b"[" * 30_000 + b"]" * 30_000), 400, "nested more than"),
    Row("nesting-40-deep", _post(b'{"a": ' + b"[" * 40 + b"]" * 40 + b"}"), 400,
        "nested more than 32 deep"),
    Row("query-fields-flood", lambda t: request_bytes(
        "GET", t.read[1].split("?")[0] + "?" + "&".join(f"f{i}=1" for i in range(500)), _host(t)),
        400, "at most 64 query fields"),
    # CSRF: a page on another site posting to the judging or review page
    Row("csrf-text-plain-no-origin", _post(b'{"judge": "mallory"}', ctype="text/plain", page=False),
        403, "from this server's own page", PAGES),
    Row("csrf-foreign-origin", _post(b'{"judge": "mallory"}', extra={"Origin": "https://evil.example"}),
        403, "from this server's own page", PAGES),
    Row("csrf-null-origin", _post(b'{"judge": "mallory"}', extra={"Origin": "null"}), 403,
        "from this server's own page", PAGES),
    Row("csrf-foreign-referer", _post(b'{"judge": "mallory"}', page=False, extra={
        "Referer": "https://evil.example/x", TOKEN_HEADER: "0"}), 403, "from this server's own page",
        PAGES),
    Row("csrf-no-token", _post(b'{"judge": "mallory"}', extra={TOKEN_HEADER: ""}), 403,
        "missing or wrong X-Rulegauge-Token", PAGES),
    Row("csrf-wrong-token", _post(b'{"judge": "mallory"}', extra={TOKEN_HEADER: "ab" * 16}), 403,
        "missing or wrong X-Rulegauge-Token", PAGES),
    # fields of the wrong type reach the application and are refused there
    Row("type-judge-number", _post(b'{"judge": 5, "question_id": "q1", "page": "river#2"}'), 400,
        "field 'judge' must be text, got a number", ("judge",)),
    Row("type-grade-seconds-text", _post(json.dumps({"judge": "ann", "question_id": "q1",
                                                     "page": "river#2", "grade": 2,
                                                     "seconds": "5"}).encode(),
                                          path="/api/judge"), 400,
        "field 'seconds' must be a number", ("judge",)),
    Row("type-proposal-id-list", _post(b'{"judge": "ann", "proposal_id": ["x"]}'), 400,
        "field 'proposal_id' must be text, got a list", ("review",)),
    Row("type-arms-number", _post(b'{"q": "lanterns", "arms": 5}'), 400,
        "arms must be a list of arm names", ("search",)),
    Row("type-k-float", _post(b'{"q": "lanterns", "k": 2.5}'), 400, "k must be an integer",
        ("search",)),
    Row("type-k-true", _post(b'{"q": "lanterns", "k": true}'), 400, "k must be an integer",
        ("search",)),
)

CASES = [(s, r) for r in ROWS for s in r.servers]


@pytest.fixture(scope="module", params=SERVERS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    with BUILDERS[request.param](tmp_path_factory.mktemp(request.param)) as t:
        yield t


@pytest.mark.parametrize(("target", "row"), CASES, indirect=["target"],
                         ids=[f"{s}-{r.id}" for s, r in CASES])
def test_hostile_request(target: Target, row: Row) -> None:
    before = target.writes.read_bytes() if target.writes and target.writes.exists() else b""
    reply = raw_request(target.server.port, row.make(target))
    assert reply.status == row.status, reply
    assert reply.headers["content-type"].startswith("application/json"), reply
    assert b"Traceback" not in reply.body
    assert row.fragment in reply.json()["error"], reply.json()
    after = target.writes.read_bytes() if target.writes and target.writes.exists() else b""
    assert after == before  # nothing stored
    ok = raw_request(target.server.port, request_bytes(target.read[0], target.read[1],
                                                         _host(target)))
    assert ok.status == 200, ok  # and the server still answers


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"])
def test_every_allowed_host_is_served(target: Target, host: str) -> None:
    reply = raw_request(target.server.port, request_bytes(
        target.read[0], target.read[1], f"{host}:{target.server.port}"))
    assert reply.status == 200, reply


def test_the_page_itself_can_post(target: Target) -> None:
    """The row's contrast: the page's own origin and token (or its Referer) go through."""
    path, body = target.post
    for extra in ({}, {"Origin": None, "Referer": target.base + "/?judge=ann"}):
        headers = {**target.page_headers(), **extra}
        data = json.dumps(body).encode()
        headers = {k: v for k, v in {**headers, "Content-Length": str(len(data))}.items()
                   if v is not None}
        reply = raw_request(target.server.port, request_bytes("POST", path, _host(target),
                                                              headers, data))
        assert reply.status == (404 if target.name == "report" else 200), reply


def test_a_second_judge_server_on_one_file_is_refused(tmp_path: Path) -> None:
    pool = write_pool(small_pool(), tmp_path / "pool.jsonl")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    argv = [sys.executable, "-c", "from rulegauge.cli import main; main()", "judge", str(pool),
            "--port", "0"]
    with subprocess.Popen(argv, env=env, stderr=subprocess.PIPE, text=True) as first:
        try:
            assert first.stderr is not None
            line = first.stderr.readline()  # printed once it serves (and holds the lock)
            assert "judging 3 pooled pages" in line, line
            second = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
            out = second.stdout + second.stderr
            assert second.returncode == 2, out
            assert "being written by another server" in out and "Traceback" not in out, out
        finally:
            first.terminate()
            first.wait(timeout=60)
