"""The calls of an ``http`` arm: one request per question, made concurrently, journaled.

Every finished call, success or failure, is appended to
``<run>/arms-journal/<arm name>.jsonl`` (:class:`rulegauge.core.journal.KeyedJournal`)
the moment it is done, keyed on the request (:attr:`Prepared.key`: the SHA-256 of the
method, URL, query and body as the config writes them, question values filled and
``{env:...}`` left as written; headers are not part of it). A killed run resumed with
the same run id asks only the requests without a successful record; a run with
``replay`` set serves every request from a recorded journal and asks nothing.

A record holds the request as shown (URL without credentials or query, body with
``{env:...}`` unexpanded), the status, the reply's JSON (or an error), attempts,
wall time (``elapsed_ms``: every attempt and backoff sleep) and the search latency
(``latency_ms``: a monotonic clock around the request of the attempt that brought the
reply, null when none did; :mod:`rulegauge.metrics.latency`). Error texts are scrubbed
of every secret value the templates read.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.arms.http_reply import ReplyError, parse_body
from rulegauge.core.httpcall import (
    HttpReply,
    RetryPolicy,
    call_rng,
    call_with_retries,
    request,
    scrub,
    status_problem,
)
from rulegauge.core.journal import KeyedJournal
from rulegauge.core.redact import redact_text

JOURNAL_DIR = "arms-journal"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
Record = dict[str, Any]


@dataclass(frozen=True)
class Prepared:
    """One request ready to send, and how it is keyed and shown."""

    question_id: str
    key: str
    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes | None
    shown: Mapping[str, Any]


def request_key(shown: Mapping[str, Any]) -> str:
    """SHA-256 of the masked request (canonical JSON)."""
    text = json.dumps(shown, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def journal(path: Path, arm: str) -> KeyedJournal:
    return KeyedJournal(path, ("key",), f"arm {arm} journal")


def valid_name(arm: str) -> bool:
    """Arm names that can name a journal file: letters, digits, ``_ . -``, no leading dot."""
    return bool(_NAME.match(arm))


def journal_path(run_dir: Path, arm: str) -> Path:
    return Path(run_dir) / JOURNAL_DIR / f"{arm}.jsonl"


@dataclass(frozen=True)
class CallLimits:
    """Per call: one total deadline, a body cap, retries; calls in flight; secrets to scrub."""

    deadline_s: float
    max_body_bytes: int
    retry: RetryPolicy
    seed: int
    concurrency: int
    secrets: tuple[str, ...] = ()


def call(req: Prepared, limits: CallLimits, *, retries: bool = True,
         sleep: Callable[[float], None] = time.sleep) -> Record:
    """Make one request (retrying per ``limits`` unless ``retries`` is False); a record."""
    start = time.perf_counter()
    policy = limits.retry if retries else RetryPolicy(retries=0)

    last = [float("nan")]  # the latest attempt's request time

    def once() -> HttpReply:
        t0 = time.perf_counter()  # monotonic: a clock step cannot bend a latency
        try:
            return request(req.method, req.url, headers=req.headers, body=req.body,
                           deadline_s=limits.deadline_s, max_body_bytes=limits.max_body_bytes)
        finally:
            last[0] = (time.perf_counter() - t0) * 1000.0

    out = call_with_retries(once, policy, call_rng(limits.seed, req.key), sleep)
    rec: Record = {"key": req.key, "question_id": req.question_id, "request": dict(req.shown),
                   "status": None, "reply": None, "error": out.error, "attempts": out.attempts}
    if out.reply is not None:
        rec["status"] = out.reply.status
        ctype = out.reply.headers.get("content-type", "")
        problem = status_problem(out.reply)
        if problem is not None:
            rec["error"] = problem
        else:
            try:
                rec["reply"] = parse_body(out.reply.body, ctype)
            except ReplyError as exc:
                rec["error"] = str(exc)
    if rec["error"] is not None:
        rec["error"] = redact_text(scrub(str(rec["error"]), limits.secrets))
    rec["elapsed_ms"] = (time.perf_counter() - start) * 1000.0
    rec["latency_ms"] = last[0] if rec["error"] is None else None
    return rec


def call_latency(rec: Record) -> float:
    """The search latency of a call's record in ms (NaN: the call failed, or the record is
    from before latencies were kept)."""
    v = rec.get("latency_ms")
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else float("nan")


def ask_all(requests: Sequence[Prepared], limits: CallLimits, journal_file: KeyedJournal,
            replay: Mapping[str, Record] | None = None) -> dict[str, Record]:
    """A record per request key: from the journal when it holds a successful one, from
    ``replay`` when given (a missing request is an error record, nothing is asked),
    else asked (at most ``limits.concurrency`` in flight) and journaled as it ends."""
    have = journal_file.load()
    out: dict[str, Record] = {}
    todo: dict[str, Prepared] = {}
    for r in requests:
        old = have.get((r.key,))
        if old is not None and old.get("error") is None:
            out[r.key] = old
        elif replay is not None:
            out[r.key] = replay.get(r.key) or {
                "key": r.key, "question_id": r.question_id, "request": dict(r.shown),
                "status": None, "reply": None, "attempts": 0, "elapsed_ms": 0.0,
                "latency_ms": None, "error": "not in the replayed record"}
        else:
            todo.setdefault(r.key, r)
    if not todo:
        return out
    with journal_file as jf, ThreadPoolExecutor(max_workers=limits.concurrency) as pool:
        futures = [pool.submit(call, r, limits) for r in todo.values()]
        for fut in as_completed(futures):
            rec = fut.result()
            jf.append(rec)
            out[rec["key"]] = rec
    return out
