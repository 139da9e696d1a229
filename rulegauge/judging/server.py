"""``rulegauge judge POOL|PROPOSALS``: the judging (or review) page and its JSON API, on 127.0.0.1 only.

Judging mode, routes (one :class:`~rulegauge.judging.session.Session`):

* ``GET /`` the page (:mod:`rulegauge.judging.page`); ``?judge=ID`` names the judge
* ``GET /api/state?judge=ID`` the judge's next item, progress, the view (blind with its
  seed, or unblinded: :mod:`rulegauge.judging.blind`) and the agreement so far; an item
  carries its finders (configs, arms, ranks) only in the unblinded view
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

A refused request answers 400 with ``{"error": message}`` (a field of the wrong type
too). Every response carries a ``Content-Security-Policy`` that allows nothing but this
server (``default-src 'self'``; the page's inline script and style), so the page can
load nothing from elsewhere. Served by :class:`rulegauge.core.localserver.LocalServer`:
127.0.0.1 only, the Host allow-list, the POSTs (``/api/judge``, ``/api/skip``,
``/api/decide``) only from this server's page (Origin and the page's token) as JSON,
and one server per judgments (decisions) file (a second is refused).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from rulegauge.core.localserver import (
    App,
    LocalServer,
    Reply,
    Request,
    html_reply,
    json_reply,
    start_in_thread,
    with_token,
)
from rulegauge.core.requestbody import RequestError, number_field, text_field
from rulegauge.judging import page, review_page
from rulegauge.judging.highlight import highlight, question_terms
from rulegauge.judging.review import ReviewSession
from rulegauge.judging.session import JudgingError, Session

CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self'; connect-src 'self'; form-action 'self'")
MAX_BODY = 1 << 16


def item_payload(session: Session, index: int) -> dict[str, Any]:
    """What the page shows of item ``index``: question, marked text, gold pages, and, only
    in the unblinded view, its finders (blind: no config, arm or rank in the payload)."""
    p = session.items[index]
    q = session.questions[p.question_id]
    terms = question_terms(q.question, q.language)
    out = {"index": index, "question_id": p.question_id, "question": q.question,
           "language": q.language, "page": p.page,
           "html": highlight(p.text, terms, q.language),
           # the page being judged is never shown as gold (an --include-judged pool holds them)
           "gold": [{"page": g, "grade": grade, "html": highlight(text, terms, q.language)}
                    for g, grade, text in q.gold if g != p.page]}
    if not session.view.blind:
        many = len(session.pool.runs) > 1
        out["found_by"] = [f"{f.source} ({f.kind} #{f.rank}{', run ' + f.run if many else ''})"
                           for f in p.found_by]
    return out


def state(session: Session, judge: str) -> dict[str, Any]:
    index = session.next_item(judge)
    return {"judge": judge, "progress": asdict(session.progress(judge)),
            "item": None if index is None else item_payload(session, index),
            "view": {"name": session.view.name, "seed": session.view.order_seed},
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

    def get(self, path: str, query: Mapping[str, str]) -> Any:
        if path == "/api/state":
            return state(self.session, query.get("judge", ""))
        if path == "/api/agreement":
            return self.session.agreement()
        return None

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        if path not in ("/api/judge", "/api/skip"):
            return None
        judge = text_field(body, "judge")
        qid, pid = text_field(body, "question_id"), text_field(body, "page")
        if path == "/api/judge":
            self.session.record(judge, qid, pid, body.get("grade"),
                                note=text_field(body, "note", ""),
                                seconds=number_field(body, "seconds"))
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

    def get(self, path: str, query: Mapping[str, str]) -> Any:
        if path == "/api/state":
            return review_state(self.session, query.get("judge", ""))
        return None

    def post(self, path: str, body: Mapping[str, Any]) -> Any:
        if path not in ("/api/decide", "/api/skip"):
            return None
        who, pid = text_field(body, "judge"), text_field(body, "proposal_id")
        if path == "/api/decide":
            self.session.decide(who, pid, text_field(body, "decision"),
                                question=text_field(body, "question", ""),
                                answer=text_field(body, "answer", ""),
                                seconds=number_field(body, "seconds"))
        elif path == "/api/skip":
            self.session.skip(who, pid)
        else:
            return None
        return review_state(self.session, who)


CHANGES = frozenset({"/api/judge", "/api/skip", "/api/decide"})


def make_app(session: Session | ReviewSession) -> App:
    """The routes of either mode as a :mod:`rulegauge.core.localserver` application."""
    api: JudgeApi | ReviewApi = (ReviewApi(session) if isinstance(session, ReviewSession)
                                 else JudgeApi(session))

    def app(req: Request) -> Reply | None:
        try:
            if req.method == "GET" and req.path == "/":
                return html_reply(with_token(api.render(), req.token))
            data = api.get(req.path, req.query) if req.method == "GET" else api.post(req.path,
                                                                                     req.body)
        except JudgingError as exc:
            raise RequestError(str(exc)) from None
        return None if data is None else json_reply(data)

    return app


def make_server(session: Session | ReviewSession, port: int = 0) -> LocalServer:
    """A server bound to 127.0.0.1 (``port`` 0: any free port; ``server_address`` says),
    the only writer of the session's judgments (or decisions) file while it lives."""
    return LocalServer(make_app(session), port, changes_state=CHANGES,
                       headers=(("Content-Security-Policy", CSP),), max_body=MAX_BODY,
                       writes=(session.path,))


def serve_in_thread(session: Session | ReviewSession,
                    port: int = 0) -> tuple[LocalServer, threading.Thread]:
    """Start :func:`make_server` in a daemon thread (tests; the CLI serves in the foreground)."""
    server = make_server(session, port)
    return server, start_in_thread(server, "rulegauge-judge")
