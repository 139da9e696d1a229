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
not rank it), which production never shows. Bad requests (a field of the wrong type,
malformed JSON) get 400 with a JSON message; ``GET /health`` answers ``{"ok": true}``.
Served by :class:`rulegauge.core.localserver.LocalServer` (127.0.0.1, the Host
allow-list, socket timeouts, a thread per connection); searches run one at a time
behind a lock (the arms are not shared across threads: requests queue, none is reset).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from rulegauge.arms.base import ArmContext, make_arm
from rulegauge.core.localserver import App, LocalServer, Reply, Request, json_reply
from rulegauge.core.localserver import serving as local_serving
from rulegauge.core.requestbody import RequestError
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
        if isinstance(names, str):
            names = [a.strip() for a in names.split(",")]
        elif not isinstance(names, list) or not all(isinstance(a, str) for a in names):
            raise BadRequest("arms must be a list of arm names or a comma-separated text")
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
    """An integer field: a JSON integer, or decimal digits in a query string."""
    if isinstance(value, str) and value.strip().isdigit() and len(value.strip()) <= 6:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadRequest(f"{name} must be an integer, got {str(value)[:40]!r}")
    n = value
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


def make_app(service: SearchService) -> App:
    """``/health`` and ``/search`` (GET or POST) as a :mod:`rulegauge.core.localserver`
    application; searches are serialised by one lock (the arms are not thread-safe:
    concurrent requests queue, none is reset), ``/health`` never waits for it."""
    lock = threading.Lock()

    def app(req: Request) -> Reply | None:
        if req.path == "/health" and req.method == "GET":
            return json_reply({"ok": True})
        if req.path != "/search":
            return json_reply({"error": f"no such path {req.path[:200]}; try /search"}, 404)
        try:
            with lock:
                return json_reply(service.search(req.body if req.method == "POST" else req.query))
        except BadRequest as exc:
            raise RequestError(str(exc)) from None

    return app


def make_server(service: SearchService, port: int = 0) -> LocalServer:
    """A server for ``service`` bound to 127.0.0.1 (``port`` 0: any free port)."""
    return LocalServer(make_app(service), port, max_body=MAX_REQUEST_BYTES)


@contextmanager
def serving(service: SearchService, port: int = 0) -> Iterator[str]:
    """Serve ``service`` on 127.0.0.1 in a thread; yields ``http://127.0.0.1:PORT``."""
    with local_serving(make_server(service, port), "rulegauge-search") as server:
        yield server.url
