"""The calls of an ``http`` arm: one request per question, made concurrently, journaled.

Every finished call, success or failure, is appended to
``<run>/arms-journal/<arm name>.jsonl`` (:class:`rulegauge.core.journal.KeyedJournal`)
the moment it is done, keyed on the request (:attr:`Prepared.key`: the SHA-256 of the
method, URL, query and body as the config writes them, question values filled and
``{env:...}`` left as written; headers are not part of it). A killed run resumed with
the same run id asks only the requests without a successful record; a run with
``replay`` set serves every request from a recorded journal and asks nothing.

A record holds what a replay needs and nothing more: the request as shown (URL with
``user:password`` and secret-named query values masked, body and query with ``{env:...}``
unexpanded and secret-named keys masked: :func:`rulegauge.core.redact.mask_url`), the
status, the hits read out of the reply (``hits``: each hit's id, score and per-arm ranks,
:func:`rulegauge.arms.http_reply.extract`, and ``fields``: the reply fields they were read
with), or an error, attempts, wall time (``elapsed_ms``: every attempt and backoff sleep)
and the search latency (``latency_ms``: a monotonic clock around the request of the attempt
that brought the reply, null when none did; :mod:`rulegauge.metrics.latency`), bounded where a
journal is read (:func:`record_problem`: null, or finite within 0 .. one hour; else exit 2
naming the journal file and line). The reply body itself is never stored: a service may echo
the request's credentials anywhere in it.
Ids and error texts are scrubbed of every secret the request carried
(:class:`rulegauge.core.redact.Secrets`: URL credentials, secret query values, credential
headers and cookies, every environment value the templates read), before any cut. A journal
recorded before (``reply`` bodies) is read through :func:`kept` and its bodies are never
shown.
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

from rulegauge.arms.http_reply import ReplyError, ReplyShape, extract, fields_of, parse_body
from rulegauge.core.httpcall import (
    HttpReply,
    RetryPolicy,
    call_rng,
    call_with_retries,
    request,
    status_problem,
)
from rulegauge.core.journal import KeyedJournal
from rulegauge.core.limits import latency_problem
from rulegauge.core.redact import Secrets

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


def record_problem(rec: Record) -> str | None:
    """What is wrong with a journaled record's values (checked where a journal is read: a
    resumed run's own, a replayed one): its ``latency_ms`` is null or a finite number of ms
    within :data:`rulegauge.core.limits.MAX_LATENCY_MS` (a negative or infinite figure would
    pass a latency gate or break its percentile)."""
    return latency_problem(rec.get("latency_ms"))


def journal(path: Path, arm: str) -> KeyedJournal:
    return KeyedJournal(path, ("key",), f"arm {arm} journal", check=record_problem)


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


def carried(req: Prepared, limits: CallLimits) -> Secrets:
    """Every secret ``req`` carries: its URL's, its headers', the configured ones."""
    return Secrets.of_request(req.url, req.headers, limits.secrets)


def call(req: Prepared, limits: CallLimits, shape: ReplyShape, *, retries: bool = True,
         sleep: Callable[[float], None] = time.sleep) -> Record:
    """Make one request (retrying per ``limits`` unless ``retries`` is False); a record
    (module docstring) holding the hits read with ``shape``, never the body."""
    start = time.perf_counter()
    policy = limits.retry if retries else RetryPolicy(retries=0)
    secrets = carried(req, limits)

    last = [float("nan")]  # the latest attempt's request time

    def once() -> HttpReply:
        t0 = time.perf_counter()  # monotonic: a clock step cannot bend a latency
        try:
            return request(req.method, req.url, headers=req.headers, body=req.body,
                           deadline_s=limits.deadline_s, max_body_bytes=limits.max_body_bytes,
                           secrets=limits.secrets)
        finally:
            last[0] = (time.perf_counter() - t0) * 1000.0

    out = call_with_retries(once, policy, call_rng(limits.seed, req.key), sleep)
    rec: Record = {"key": req.key, "question_id": req.question_id, "request": dict(req.shown),
                   "status": None, "fields": fields_of(shape), "hits": None, "error": out.error,
                   "attempts": out.attempts}
    if out.reply is not None:
        rec["status"] = out.reply.status
        ctype = out.reply.headers.get("content-type", "")
        problem = status_problem(out.reply)
        if problem is not None:
            rec["error"] = problem
        else:
            try:
                rec["hits"] = extract(parse_body(out.reply.body, ctype, secrets), shape, secrets)
            except ReplyError as exc:
                rec["error"] = str(exc)
    if rec["error"] is not None:
        rec["error"] = secrets.clean(str(rec["error"]))
    rec["elapsed_ms"] = (time.perf_counter() - start) * 1000.0
    rec["latency_ms"] = last[0] if rec["error"] is None else None
    return rec


def call_latency(rec: Record) -> float:
    """The search latency of a call's record in ms (NaN: the call failed, or the record is
    from before latencies were kept)."""
    v = rec.get("latency_ms")
    return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else float("nan")


def kept(rec: Record, shape: ReplyShape, secrets: Secrets) -> Record | None:
    """``rec`` as this arm reads it: as it is when its hits were read with ``shape``'s
    fields; a record of an earlier journal (its ``reply`` body) with the hits read out
    now and the body dropped; None when its hits were read with other fields."""
    if "hits" in rec:
        return rec if rec.get("error") is not None or rec.get("fields") == fields_of(shape) \
            else None
    out = {k: v for k, v in rec.items() if k != "reply"}
    out.update(fields=fields_of(shape), hits=None)
    if out.get("error") is None:
        try:
            out["hits"] = extract(rec.get("reply"), shape, secrets)
        except ReplyError as exc:
            out["error"] = secrets.clean(str(exc))
    else:
        out["error"] = secrets.clean(str(out["error"]))
    return out


def ask_all(requests: Sequence[Prepared], limits: CallLimits, shape: ReplyShape,
            journal_file: KeyedJournal, replay: Mapping[str, Record] | None = None
            ) -> dict[str, Record]:
    """A record per request key: from the journal when it holds a successful one read
    with ``shape``'s fields, from ``replay`` when given (a missing request, or one
    recorded with other fields, is an error record; nothing is asked), else asked (at
    most ``limits.concurrency`` in flight) and journaled as it ends."""
    have = journal_file.load()
    out: dict[str, Record] = {}
    todo: dict[str, Prepared] = {}
    for r in requests:
        old = have.get((r.key,))
        secrets = carried(r, limits)
        old = None if old is None else kept(old, shape, secrets)
        if old is not None and old.get("error") is None:
            out[r.key] = old
        elif replay is not None:
            given = replay.get(r.key)
            done = None if given is None else kept(given, shape, secrets)
            out[r.key] = done or {
                "key": r.key, "question_id": r.question_id, "request": dict(r.shown),
                "status": None, "fields": fields_of(shape), "hits": None, "attempts": 0,
                "elapsed_ms": 0.0, "latency_ms": None, "error": "not in the replayed record" if given is None else
                f"recorded with other reply fields ({given.get('fields')}); the arm reads "
                f"{fields_of(shape)}"}
        else:
            todo.setdefault(r.key, r)
    if not todo:
        return out
    with journal_file as jf, ThreadPoolExecutor(max_workers=limits.concurrency) as pool:
        futures = [pool.submit(call, r, limits, shape) for r in todo.values()]
        for fut in as_completed(futures):
            rec = fut.result()
            jf.append(rec)
            out[rec["key"]] = rec
    return out
