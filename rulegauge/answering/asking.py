"""Ask phase of answering: every (question, config) an answerer's journal lacks, asked on
the run's engine and journaled as each answer arrives.

A journaled answer is reused only while its prompt hash and request hash (the question
and the passages read) are unchanged; ``retry_errors`` re-asks answers whose outcome was
``error``. An answerer with ``covers(request)`` (``production``) is asked only what it
covers. Calls in flight per answerer: its spec's ``concurrency``, else the run's
``max_workers``, lowered by the answerer's ``max_concurrency`` attribute. An exception
raised by an answerer is recorded as an ``error`` answer (:mod:`rulegauge.answering.calls`);
KeyboardInterrupt stops the run, and the journal keeps what was answered.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from functools import partial
from typing import Any

from rulegauge.answering.answerers import ANSWERERS
from rulegauge.answering.breaker import Breaker, BreakerAnswerer
from rulegauge.answering.fanout import ASKERS
from rulegauge.answering.frames import ReadSet
from rulegauge.answering.journal import Journal, journal_path
from rulegauge.answering.plan import AnswerPlan
from rulegauge.answering.requests import AnswerRequest, AnswerResponse
from rulegauge.answering.specs import AnswererSpec, close
from rulegauge.core.redact import redact_text

Progress = Callable[[str, int], Any]


def request_hash(request: AnswerRequest) -> str:
    """SHA-256 of what the answerer is shown: question, language and passages."""
    blob = json.dumps([request.question, request.language,
                       [[p.n, p.chunk_id, p.title, p.heading, p.text] for p in request.passages]],
                      ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def is_current(rec: Mapping[str, Any] | None, request: AnswerRequest, prompt: str) -> bool:
    """A journaled answer still answers ``request`` under the current prompt."""
    return (rec is not None and rec["prompt_hash"] == prompt
            and rec["request_hash"] == request_hash(request))


def answer_record(spec: AnswererSpec, request: AnswerRequest, config_id: str,
                  resp: AnswerResponse, prompt: str) -> dict[str, Any]:
    """The journal line of one answer (error text redacted)."""
    own = None if resp.read is None else [[p.n, p.chunk_id, p.doc_id, p.page, p.heading]
                                          for p in resp.read]
    return {"question_id": request.question_id, "config_id": config_id, "answerer": spec.label,
            "answerer_name": spec.name, "model_id": resp.model_id, "prompt_hash": prompt,
            "request_hash": request_hash(request), "text": resp.text, "outcome": resp.outcome,
            "latency_ms": resp.latency_ms, "tokens_in": resp.tokens_in,
            "tokens_out": resp.tokens_out,
            "error": None if resp.error is None else redact_text(resp.error), "own_read": own}


def jobs_for(answerer: Any, reads: ReadSet, have: Mapping[Any, Any], plan: AnswerPlan
             ) -> tuple[list[tuple[str, AnswerRequest]], int]:
    """((config id, request) pairs to ask, pairs the answerer covers)."""
    covers = getattr(answerer, "covers", None)
    jobs, covered = [], 0
    for key, request in reads.requests.items():
        if callable(covers) and not covers(request):
            continue
        covered += 1
        rec = have.get(key)
        if not is_current(rec, request, plan.prompt) or (
                plan.retry_errors and rec is not None and rec["outcome"] == "error"):
            jobs.append((key[1], request))
    return jobs, covered


def ask_all(plan: AnswerPlan, instances: Mapping[str, Any], reads: ReadSet, engine: str,
            progress: Progress | None) -> tuple[dict[str, int], dict[str, int]]:
    """Ask every answerer of the plan on ``engine``; returns (asked, reused) per label.
    Every answerer but the judge is closed when its calls are done."""
    ask = ASKERS.get(engine)
    asked, reused = {}, {}
    for s in plan.specs:
        journal = Journal(journal_path(plan.run.path, s.label))
        answerer = instances[s.label]
        if engine == "local":  # a Ray actor builds its own answerer (make): no breaker there
            answerer = BreakerAnswerer(answerer, Breaker(s.label, plan.breaker_after))
        jobs, covered = jobs_for(answerer, reads, journal.load(), plan)
        asked[s.label], reused[s.label] = len(jobs), covered - len(jobs)
        limit = s.concurrency or plan.max_workers
        workers = min(limit, int(getattr(answerer, "max_concurrency", None) or limit))
        bar_ctx = progress(f"answering with {s.label}", len(jobs)) if progress and jobs \
            else nullcontext()
        with journal, bar_ctx as bar:
            def done(config_id: str, request: AnswerRequest, resp: AnswerResponse,
                     spec: AnswererSpec = s, j: Journal = journal, b: Any = bar) -> None:
                j.append(answer_record(spec, request, config_id, resp, plan.prompt))
                if b is not None:
                    b(1)

            try:
                ask(answerer, partial(ANSWERERS.get(s.name), **dict(s.params)), jobs,
                    workers, done)
            finally:
                if s.label != plan.judge:
                    close(instances[s.label])
    return asked, reused
