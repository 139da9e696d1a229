"""``rulegauge judge POOL|PROPOSALS``: the judging (or review) page and its JSON API, on 127.0.0.1 only.

Judging mode, routes (``http.server.ThreadingHTTPServer``, one :class:`~rulegauge.judging.session.Session`):

* ``GET /`` the page (:mod:`rulegauge.judging.page`); ``?judge=ID`` names the judge
* ``GET /api/state?judge=ID`` the judge's next item, progress and the agreement so far
* ``POST /api/judge`` ``{judge, question_id, page, grade, note, seconds}`` -> the next state
* ``POST /api/skip`` ``{judge, question_id, page}`` -> the next state
* ``GET /api/agreement`` agreement between the judges (Cohen's and Fleiss' kappa)

Proposal mode (one :class:`~rulegauge.judging.review.ReviewSession`, generated questions):

* ``GET /`` the review page (:mod:`rulegauge.judging.review_page`); ``?judge=ID``
* ``GET /api/state?judge=ID`` the reviewer's next proposal (its page text, the answer's
  offsets) and progress
* ``POST /api/decide`` ``{judge, proposal_id, decision, question, answer, seconds}``
  (decision ``accept``, ``edit`` or ``reject``) -> the next state
* ``POST /api/skip`` ``{judge, proposal_id}`` -> the next state

A refused request answers 400 with ``{"error": message}``. Every response carries a
``Content-Security-Policy`` that allows nothing but this server (``default-src
'self'``; the page's inline script and style), so the page can load nothing from
elsewhere. The server binds to 127.0.0.1 only.
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import asdict
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from rulegauge.judging import page, review_page
from rulegauge.judging.highlight import highlight, question_terms
from rulegauge.judging.review import ReviewSession
from rulegauge.judging.session import JudgingError, Session

HOST = "127.0.0.1"
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self'; connect-src 'self'; form-action 'self'")
MAX_BODY = 1 << 16
log = logging.getLogger(__name__)


def item_payload(session: Session, index: int) -> dict[str, Any]:
    """What the page shows of item ``index``: question, marked text, gold pages, finders."""
    p = session.items[index]
    q = session.questions[p.question_id]
    terms = question_terms(q.question, q.language)
    return {"index": index, "question_id": p.question_id, "question": q.question,
            "language": q.language, "page": p.page,
            "html": highlight(p.text, terms, q.language),
            "found_by": [f"{f.source} ({f.kind} #{f.rank}{', run ' + f.run if len(session.pool.runs) > 1 else ''})"
                         for f in p.found_by],
            # the page being judged is never shown as gold (an --include-judged pool holds them)
            "gold": [{"page": g, "grade": grade, "html": highlight(text, terms, q.language)}
                     for g, grade, text in q.gold if g != p.page]}


def state(session: Session, judge: str) -> dict[str, Any]:
    index = session.next_item(judge)
    return {"judge": judge, "progress": asdict(session.progress(judge)),
            "item": None if index is None else item_payload(session, index),
            "agreement": session.agreement()}


def review_state(session: ReviewSession, reviewer: str) -> dict[str, Any]:
    index = session.next_item(reviewer)
    item = None
    if index is not None:
        p = session.items[index]
        item = {"index": index, "proposal_id": p.proposal_id, "page": p.page_key,
                "heading": list(p.heading), "language": p.language, "question": p.question,
                "answer": p.answer, "rule": p.rule, "match": p.match,
                "text": session.proposals.page(p).text, "start": p.start, "end": p.end}
    return {"judge": reviewer, "progress": session.progress(reviewer), "item": item}


class JudgeApi:
    """Judging mode's routes over a :class:`Session`."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def render(self) -> str:
        return page.render()

    def get(self, path: str, query: dict[str, str]) -> Any:
        if path == "/api/state":
            return state(self.session, query.get("judge", ""))
        if path == "/api/agreement":
            return self.session.agreement()
        return None

    def post(self, path: str, body: dict[str, Any]) -> Any:
        judge = str(body.get("judge", ""))
        qid, pid = str(body.get("question_id", "")), str(body.get("page", ""))
        if path == "/api/judge":
            seconds = body.get("seconds")
            self.session.record(judge, qid, pid, body.get("grade"),
                                note=str(body.get("note") or ""),
                                seconds=float(seconds) if isinstance(seconds, int | float)
                                else None)
        elif path == "/api/skip":
            self.session.skip(judge, qid, pid)
        else:
            return None
        return state(self.session, judge)


class ReviewApi:
    """Proposal mode's routes over a :class:`ReviewSession`."""

    def __init__(self, session: ReviewSession) -> None:
        self.session = session

    def render(self) -> str:
        return review_page.render()

    def get(self, path: str, query: dict[str, str]) -> Any:
        if path == "/api/state":
            return review_state(self.session, query.get("judge", ""))
        return None

    def post(self, path: str, body: dict[str, Any]) -> Any:
        who, pid = str(body.get("judge", "")), str(body.get("proposal_id", ""))
        if path == "/api/decide":
            seconds = body.get("seconds")
            self.session.decide(who, pid, str(body.get("decision", "")),
                                question=str(body.get("question") or ""),
                                answer=str(body.get("answer") or ""),
                                seconds=float(seconds) if isinstance(seconds, int | float)
                                else None)
        elif path == "/api/skip":
            self.session.skip(who, pid)
        else:
            return None
        return review_state(self.session, who)


def make_handler(session: Session | ReviewSession) -> type[BaseHTTPRequestHandler]:
    api: JudgeApi | ReviewApi = (ReviewApi(session) if isinstance(session, ReviewSession)
                                 else JudgeApi(session))

    class Handler(BaseHTTPRequestHandler):
        server_version = "rulegauge-judge"

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s " + format, self.address_string(), *args)

        def _send(self, status: int, body: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Content-Security-Policy", CSP)
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, data: Any, status: int = HTTPStatus.OK) -> None:
            self._send(status, json.dumps(data, ensure_ascii=False).encode("utf-8"),
                       "application/json; charset=utf-8")

        def do_GET(self) -> None:
            url = urlsplit(self.path)
            query = {k: v[-1] for k, v in parse_qs(url.query).items()}
            try:
                if url.path == "/":
                    self._send(HTTPStatus.OK, api.render().encode("utf-8"),
                               "text/html; charset=utf-8")
                elif (data := api.get(url.path, query)) is not None:
                    self._json(data)
                else:
                    self._json({"error": f"no such page {url.path}"}, HTTPStatus.NOT_FOUND)
            except JudgingError as exc:
                self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)

        def do_POST(self) -> None:
            url = urlsplit(self.path)
            try:
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= MAX_BODY:
                    raise JudgingError(f"request body must be 1 to {MAX_BODY} bytes")
                body = json.loads(self.rfile.read(length))
                if not isinstance(body, dict):
                    raise JudgingError("request body must be a JSON object")
                data = api.post(url.path, body)
                if data is None:
                    self._json({"error": f"no such action {url.path}"}, HTTPStatus.NOT_FOUND)
                    return
                self._json(data)
            except (JudgingError, ValueError) as exc:
                self._json({"error": str(exc)}, HTTPStatus.BAD_REQUEST)

    return Handler


def make_server(session: Session | ReviewSession, port: int = 0) -> ThreadingHTTPServer:
    """A server bound to 127.0.0.1 (``port`` 0: any free port; ``server_address`` says)."""
    server = ThreadingHTTPServer((HOST, port), make_handler(session))
    server.daemon_threads = True
    return server


def serve_in_thread(session: Session | ReviewSession, port: int = 0) -> tuple[ThreadingHTTPServer,
                                                             threading.Thread]:
    """Start :func:`make_server` in a daemon thread (tests; the CLI serves in the foreground)."""
    server = make_server(session, port)
    thread = threading.Thread(target=server.serve_forever, name="rulegauge-judge", daemon=True)
    thread.start()
    return server, thread
