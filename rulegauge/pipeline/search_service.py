"""A reference search service: the sample corpus behind HTTP, fused as the service fuses.

``rulegauge serve-search`` (and the tests' fixture) serves a gold set's corpus on
127.0.0.1 with rulegauge's own arms, prepared once in this process, and the
rulegauge's own fusion: reciprocal-rank fusion at ``k`` (60) over the arms asked for
(default ``bm25``, ``dense``, ``boost``), each searched to ``depth`` (100), fused order
decided exactly (:func:`rulegauge.fusion.fuse.fuse`), ties by chunk id. A request for a
single arm returns that arm's own list and scores, so an ``http`` arm against it gives
the ranks the arm gives in process.

``POST /search`` with a JSON object, or ``GET /search?...`` with the same fields:
``q`` (required), ``question_id``, ``game``, ``edition``, ``lang`` (``en``), ``k`` (hits to
return, 10), ``arms`` (a list or comma-separated names), ``depth``, ``debug``. The reply is
``{"hits": [{"chunk_id", "doc_id", "page", "score"}, ...], "k": 60, "arms": [...]}``;
with ``debug`` each hit also has ``debug.ranks`` (arm -> rank, null when the arm did
not rank it), which production never shows. Bad requests get 400 with a message;
``GET /health`` answers ``{"ok": true}``. Requests are served one at a time (the
arms are not shared across threads), each bounded by the arms' own work.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pandas as pd

from rulegauge.arms.base import ArmContext, make_arm
from rulegauge.corpus.chunking import ChunkingOptions, build_corpus
from rulegauge.corpus.records import Corpus
from rulegauge.fusion.configs import FusionConfig
from rulegauge.fusion.fuse import RankMatrix, fuse
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.records import Question

DEFAULT_ARMS = ("bm25", "dense", "boost")
MAX_REQUEST_BYTES = 1 << 20


class BadRequest(Exception):
    """A request the service cannot answer (400)."""


@dataclass
class SearchService:
    """Prepared arms over one corpus; :meth:`search` answers one request object."""

    corpus: Corpus
    arms: Mapping[str, Any]
    k: float = 60.0
    depth: int = 100

    def search(self, req: Mapping[str, Any]) -> dict[str, Any]:
        q = req.get("q")
        if not isinstance(q, str) or not q.strip():
            raise BadRequest("q (the question) is required")
        names = req.get("arms") or list(self.arms)
        names = [a.strip() for a in names.split(",")] if isinstance(names, str) else list(names)
        unknown = [a for a in names if a not in self.arms]
        if unknown or not names:
            raise BadRequest(f"unknown arm(s) {unknown}; this service has: {', '.join(self.arms)}")
        count, depth = _int(req.get("k", 10), "k"), _int(req.get("depth", self.depth), "depth")
        question = Question(str(req.get("question_id") or "q"), q, str(req.get("lang") or "en"), (),
                            game=_opt(req.get("game")), edition=_opt(req.get("edition")))
        results = {a: self.arms[a].search([question], depth)[0].hits for a in names}
        debug = req.get("debug") in (True, "1", "true", 1)
        if len(names) == 1:
            hits = [(h.chunk_id, h.score, {names[0]: h.rank}) for h in results[names[0]][:count]]
        else:
            hits = self._fused(question.question_id, results, tuple(names), depth)[:count]
        by_id = self.corpus.chunk_by_id
        out = []
        for cid, score, ranks in hits:
            hit: dict[str, Any] = {"chunk_id": cid, "doc_id": by_id[cid].doc_id,
                                   "page": by_id[cid].page, "score": score}
            if debug:
                hit["debug"] = {"ranks": {a: ranks.get(a) for a in names}}
            out.append(hit)
        return {"hits": out, "k": self.k, "arms": names}

    def _fused(self, qid: str, results: Mapping[str, Sequence[Any]], names: tuple[str, ...],
               depth: int) -> list[tuple[str, float, dict[str, int]]]:
        rows = [(qid, a, h.chunk_id, h.rank) for a in names for h in results[a]]
        frame = pd.DataFrame(rows, columns=["question_id", "arm", "chunk_id", "rank"])
        if frame.empty:
            return []
        matrix = RankMatrix.from_arm_ranks(frame, [qid], names)
        cfg = FusionConfig("service", "service", "grid", "rrf", self.k, names,
                           (1.0,) * len(names), (depth,) * len(names))
        fused = fuse(matrix, cfg)
        out = []
        for row, score in zip(fused.rows.tolist(), fused.score.tolist(), strict=True):
            ranks = {a: int(r) for a, r in zip(names, matrix.ranks[row].tolist(), strict=True) if r > 0}
            out.append((str(matrix.chunk_ids[row]), float(score), ranks))
        return out


def _int(value: Any, name: str) -> int:
    try:
        n = int(value)
    except (TypeError, ValueError):
        raise BadRequest(f"{name} must be an integer, got {value!r}") from None
    if n < 1 or n > 10_000:
        raise BadRequest(f"{name} must be within 1..10000, got {n}")
    return n


def _opt(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


def build_service(goldset: Path, arms: Sequence[str] = DEFAULT_ARMS, cache_dir: Path | None = None,
                  arm_params: Mapping[str, Mapping[str, Any]] | None = None) -> SearchService:
    """Load the gold set's corpus and prepare the arms once (the run's chunking)."""
    from rulegauge.core.cachedir import cache_root

    gs = load_goldset(goldset)
    corpus = build_corpus(gs.documents, ChunkingOptions())
    ctx = ArmContext(cache_dir=cache_dir or cache_root())
    prepared = {}
    for a in arms:
        arm = make_arm(a, dict((arm_params or {}).get(a, {})))
        arm.prepare(corpus, ctx)
        prepared[a] = arm
    return SearchService(corpus, prepared)


def _handler(service: SearchService, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # the CLI prints one line per request
            pass

        def _reply(self, code: int, obj: Any) -> None:
            body = json.dumps(obj, ensure_ascii=False).encode("utf-8")
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self, fields: Mapping[str, Any]) -> None:
            try:
                with lock:
                    self._reply(200, service.search(fields))
            except BadRequest as exc:
                self._reply(400, {"error": str(exc)})

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/health":
                self._reply(200, {"ok": True})
            elif parts.path == "/search":
                self._handle(dict(parse_qsl(parts.query)))
            else:
                self._reply(404, {"error": f"no such path {parts.path}; try /search"})

        def do_POST(self) -> None:
            if urlsplit(self.path).path != "/search":
                self._reply(404, {"error": "POST /search"})
                return
            size = int(self.headers.get("content-length") or 0)
            if size > MAX_REQUEST_BYTES:
                self._reply(413, {"error": "request too large"})
                return
            try:
                fields = json.loads(self.rfile.read(size) or b"{}")
            except json.JSONDecodeError as exc:
                self._reply(400, {"error": f"body is not JSON: {exc}"})
                return
            if not isinstance(fields, dict):
                self._reply(400, {"error": "body must be a JSON object"})
                return
            self._handle(fields)

    return Handler


def make_server(service: SearchService, port: int = 0) -> HTTPServer:
    """A server for ``service`` bound to 127.0.0.1 (``port`` 0: any free port)."""
    return HTTPServer(("127.0.0.1", port), _handler(service, threading.Lock()))


@contextmanager
def serving(service: SearchService, port: int = 0) -> Iterator[str]:
    """Serve ``service`` on 127.0.0.1 in a thread; yields ``http://127.0.0.1:PORT``."""
    server = make_server(service, port)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
