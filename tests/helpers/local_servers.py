"""The four local servers (judging page, review page, ``serve-search``, ``report --serve``)
built small, for the fault tier and the load benchmark, and a raw HTTP client that sends
exactly the bytes it is given (malformed requests a library would refuse to send).

Each builder is a context manager yielding a :class:`Target`: the running server, a
request that reads and one that posts (as the page or client does), and the files it
writes. Built on the sample gold set's corpus (bm25 + boost, no model) and a pool and
proposals made here.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.arms import load_builtin_arms
from rulegauge.core.localserver import TOKEN_HEADER, LocalServer, serving
from rulegauge.goldset.parse import load_goldset
from rulegauge.judging.generate import GenerateRequest, RuleGenerator, generate, load
from rulegauge.judging.poolfile import FoundBy, Pool, PoolPage, PoolQuestion, write_pool
from rulegauge.judging.proposals import read_proposals, write_proposals
from rulegauge.judging.review import ReviewSession
from rulegauge.judging.server import make_server
from rulegauge.judging.session import Session
from rulegauge.pipeline.retrieval import SAMPLE_GOLDSET
from rulegauge.pipeline.search_service import build_service
from rulegauge.pipeline.search_service import make_server as make_search_server
from tests.helpers.judging import sample_copy

SERVERS = ("judge", "review", "search", "report")


@dataclass(frozen=True)
class Target:
    name: str
    server: LocalServer
    read: tuple[str, str, dict[str, Any] | None]  # method, path, JSON body
    post: tuple[str, dict[str, Any]]  # path, JSON body (the page's or client's)
    writes: Path | None  # the judgments / decisions file, if any

    @property
    def base(self) -> str:
        return self.server.url

    def page_headers(self) -> dict[str, str]:
        """What the page's script sends with a change (origin, token, JSON)."""
        return {"Content-Type": "application/json", "Origin": self.base,
                TOKEN_HEADER: self.server.token}


def small_pool() -> Pool:
    """Three pooled pages of two questions (our own text)."""
    qs = (PoolQuestion("q1", "How far may a ferry sail in one turn?", "en",
                       (("river#1", 2, "A ferry sails two reaches per turn."),)),
          PoolQuestion("q2", "Who wins a tied flood?", "en", ()))
    found = (FoundBy("r1", "bm25", "arm", 1),)
    pages = (PoolPage("q1", "river#2", found, "Ferries sail two reaches; barges one."),
             PoolPage("q1", "river#3", found, "Floods rise each dusk."),
             PoolPage("q2", "river#4", found, "On a tied flood, the harbour master wins."))
    return Pool("river", "river.yaml", "cd" * 32, ("r1",), 3, ("c",), qs, pages)


@contextmanager
def judge_target(folder: Path) -> Iterator[Target]:
    pool = write_pool(small_pool(), folder / "pool.jsonl")
    path = folder / "pool.judgments.jsonl"
    with serving(make_server(Session(small_pool(), path, pool_path=str(pool)))) as server:
        yield Target("judge", server, ("GET", "/api/state?judge=ann", None),
                     ("/api/skip", {"judge": "ann", "question_id": "q1", "page": "river#2"}), path)


@contextmanager
def review_target(folder: Path) -> Iterator[Target]:
    gold = sample_copy(folder)
    req = GenerateRequest(load_goldset(gold).documents, ("en",), 2, ("bw-rules#3", "bw-rules#5"))
    found = read_proposals(write_proposals(generate(req, RuleGenerator(), load(req)).proposals,
                                           folder / "proposals.jsonl"))
    path = folder / "proposals.decisions.jsonl"
    with serving(make_server(ReviewSession(found, path))) as server:
        yield Target("review", server, ("GET", "/api/state?judge=ann", None),
                     ("/api/skip", {"judge": "ann",
                                    "proposal_id": found.proposals[0].proposal_id}), path)


@contextmanager
def search_target(folder: Path) -> Iterator[Target]:
    load_builtin_arms()
    service = build_service(SAMPLE_GOLDSET, ("bm25", "boost"), cache_dir=folder / "cache")
    with serving(make_search_server(service)) as server:
        yield Target("search", server, ("GET", "/health", None),
                     ("/search", {"q": "How many lanterns does each player take?", "k": 5}), None)


@contextmanager
def report_target(folder: Path) -> Iterator[Target]:
    from rulegauge.analysis.serve_report import make_report_server

    page = folder / "report.html"
    page.write_text("<!doctype html><html><head><title>r</title></head><body>Run r1</body></html>")
    with serving(make_report_server(page)) as server:
        yield Target("report", server, ("GET", "/", None), ("/", {"x": 1}), None)


BUILDERS: dict[str, Callable[[Path], AbstractContextManager[Target]]] = {
    "judge": judge_target, "review": review_target, "search": search_target,
    "report": report_target}


@dataclass(frozen=True)
class RawReply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


def raw_request(port: int, data: bytes, timeout_s: float = 30.0) -> RawReply:
    """Send ``data`` as is to 127.0.0.1:``port``, close our side, read the whole reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(data)
        sock.shutdown(socket.SHUT_WR)
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    raw = b"".join(chunks)
    head, _, body = raw.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1]) if lines and len(lines[0].split()) > 1 else 0
    headers = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in lines[1:])}
    return RawReply(status, headers, body)


def request_bytes(method: str, path: str, host: str, headers: dict[str, str] | None = None,
                  body: bytes = b"") -> bytes:
    """One HTTP/1.1 request (``Connection: close``); ``Content-Length`` only if given."""
    lines = [f"{method} {path} HTTP/1.1"] + ([f"Host: {host}"] if host else [])
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()] + ["Connection: close"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body


@dataclass(frozen=True)
class LoadResult:
    """Latencies (seconds, in completion order) of the requests that succeeded, and the
    failures (status or exception type) of those that did not."""

    latencies: tuple[float, ...]
    errors: tuple[str, ...]
    slowloris_dropped: bool  # the held connection was closed by the server meanwhile


def _one(target: Target, i: int) -> tuple[float, str | None]:
    import http.client
    import time

    method, path, body = ("POST", target.post[0], target.post[1]) if i % 2 else (*target.read[:2],
                                                                                  None)
    data = None if body is None else json.dumps(body).encode()
    headers = target.page_headers() if data is not None else {}
    start = time.perf_counter()
    try:
        conn = http.client.HTTPConnection("127.0.0.1", target.server.port, timeout=60)
        try:
            conn.request(method, path, body=data, headers=headers)
            reply = conn.getresponse()
            reply.read()
        finally:
            conn.close()
    except (OSError, http.client.HTTPException) as exc:
        return time.perf_counter() - start, type(exc).__name__
    wanted = 404 if target.name == "report" and method == "POST" else 200
    return time.perf_counter() - start, None if reply.status == wanted else str(reply.status)


def single_client(target: Target, n: int) -> list[float]:
    """Latencies of ``n`` requests, one at a time (the peer of :func:`load`)."""
    return [_one(target, i)[0] for i in range(n)]


def load_test(target: Target, n: int = 2000, concurrency: int = 64) -> LoadResult:
    """``n`` requests (reads and posts alternating) from ``concurrency`` threads, while one
    slowloris client holds a connection open with half a request sent."""
    from concurrent.futures import ThreadPoolExecutor

    held = socket.create_connection(("127.0.0.1", target.server.port), timeout=120)
    try:
        held.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        with ThreadPoolExecutor(concurrency) as pool:
            done = list(pool.map(lambda i: _one(target, i), range(n)))
        held.settimeout(max(target.server.timeout_s * 3, 30.0))
        try:
            dropped = held.recv(1024) == b""
        except OSError:
            dropped = True
    finally:
        held.close()
    return LoadResult(tuple(t for t, e in done if e is None), tuple(e for _, e in done if e),
                      dropped)
