"""The ``http`` arm: a live search endpoint asked once per question (docs/arms.md).

Settings are the dataclass fields below (the grid file's ``[arms.NAME]`` keys):
``url`` or ``url_env``, ``method`` (GET puts ``body`` in the query string), ``body``,
``query``, ``headers`` (templates, :mod:`rulegauge.arms.http_template`), ``results``,
``chunk`` or ``doc`` + ``page``, ``score``, ``arm_ranks`` (where the reply keeps them,
:mod:`rulegauge.arms.http_reply`), ``concurrency``, ``timeout_s`` (one total deadline per
call), ``retries`` / ``backoff_s`` / ``backoff_max_s``, ``max_body_bytes``,
``on_unmatched`` (``keep`` | ``error`` | ``drop``: :mod:`rulegauge.arms.foreign`),
``max_error_rate`` and ``replay`` (a recorded
journal to serve every request from). Calls: :mod:`rulegauge.arms.http_calls`.

Search time: each call's latency (the request of the attempt that brought the reply, on a
monotonic clock) is the arm's search time for its question (``call_latencies``, the
``search_latency`` table); the preflight's call is the warm-up and is never recorded.

Failure rules. The preflight asks the first question once, without retries, and
requires a readable ranked list whose ids match the corpus: a dead, slow, HTML,
redirecting, oversized or mis-shaped endpoint is exit 2 before any folder exists.
During the run a call that still fails after its retries is an error row: the
question gets no hits (its empty reason says why) and the manifest counts it;
above ``max_error_rate`` the run stops with every error named. Ids that match no
chunk keep their ranks as non-relevant foreign hits (``on_unmatched = "keep"``, the
default; an id that cannot be one, empty or holding control characters, stops the run),
stop the run (``"error"``) or are left out with a warning of how many hits moved up
(``"drop"``); every one is listed in the manifest (``unmatched``). A list empty for every
question, or a run where no id of any reply matches the corpus, stops the run. Every
message names the arm's URL without credentials and the question.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit, urlunsplit

from rulegauge.arms.base import ARMS, ArmContext
from rulegauge.arms.foreign import DEFAULT_UNMATCHED, ForeignCount, bad_foreign_ids, unmatched_problem
from rulegauge.arms.http_calls import (
    CallLimits,
    Prepared,
    Record,
    ask_all,
    call,
    call_latency,
    journal,
    journal_path,
    request_key,
    valid_name,
)
from rulegauge.arms.http_reply import ReplyError, ReplyHit, ReplyShape, first_chunks, listed, match
from rulegauge.arms.http_template import PLACEHOLDERS, check_template, question_values, render, secrets
from rulegauge.arms.results import ArmResult
from rulegauge.core.errors import ConfigError, Problem, RulegaugeError, ValidationError
from rulegauge.core.httpcall import RetryPolicy, redact_headers, redact_url
from rulegauge.core.redact import MASK, is_secret_key, mask_url
from rulegauge.corpus.records import Corpus
from rulegauge.goldset.records import Question

METHODS = ("GET", "POST")


@dataclass
class HttpArm:
    """A live search endpoint as an arm (module docstring)."""

    name: ClassVar[str] = "http"
    order_rule: ClassVar[str] = "given"  # the service's list order (arms/contract)
    url: str | None = None
    url_env: str | None = None
    method: str = "POST"
    body: dict[str, Any] = field(default_factory=dict)
    query: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, Any] = field(default_factory=dict)
    results: str = "hits"
    chunk: str | None = None
    doc: str | None = None
    page: str | None = None
    score: str | None = None
    arm_ranks: str | None = None
    concurrency: int = 4
    timeout_s: float = 30.0
    retries: int = 2
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0
    max_body_bytes: int = 16 * 1024 * 1024
    on_unmatched: str = DEFAULT_UNMATCHED
    max_error_rate: float = 0.05
    replay: str | None = None
    seed: int = 0
    _corpus: Corpus | None = field(default=None, init=False, repr=False)
    _context: ArmContext | None = field(default=None, init=False, repr=False)
    stats: dict[str, Any] = field(default_factory=dict, init=False, repr=False)
    _latency: dict[str, float] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        problems = self._problems()
        if problems:
            raise ConfigError("http arm: " + "; ".join(problems))
        self.method = self.method.upper()
        self.retry = RetryPolicy(self.retries, self.backoff_s, self.backoff_max_s)

    def _problems(self) -> list[str]:
        p = []
        if (self.url is None) == (self.url_env is None):
            p.append("give exactly one of url or url_env")
        elif self.url_env is not None and not os.environ.get(self.url_env):
            p.append(f"url_env: environment variable {self.url_env} is not set")
        else:
            u = self.url if self.url is not None else os.environ.get(self.url_env or "", "")
            bad = check_template(u, "url") if self.url is not None else []  # url_env's is taken as it is
            p += bad
            # the scheme and host are checked on the URL as sent: `{env:SEARCH_BASE}/search` filled in
            sent = render(u, dict.fromkeys(PLACEHOLDERS, "x")) if self.url is not None and not bad else u
            if not bad and (urlsplit(sent).scheme not in ("http", "https") or not urlsplit(sent).hostname):
                # a filled-in URL may carry a variable's secret: the template is what is shown
                p.append(f"url {u!r} is not an http(s) URL once filled in" if sent != u
                         else f"url {redact_url(u)!r} is not an http(s) URL")
        if self.method.upper() not in METHODS:
            p.append(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        for key, tpl in (("body", self.body), ("query", self.query), ("headers", self.headers)):
            p += check_template(tpl, key)
        if (self.chunk is None) == (self.doc is None and self.page is None) or \
                (self.chunk is None and (self.doc is None or self.page is None)):
            p.append('name the hit id fields: chunk = "chunk_id", or doc = "doc_id" and page = "page"')
        unmatched = unmatched_problem(self.on_unmatched, "on_unmatched")
        if unmatched:
            p.append(unmatched.removeprefix("on_unmatched: "))
        for key, v, lo in (("concurrency", self.concurrency, 1), ("max_body_bytes", self.max_body_bytes, 1)):
            if v < lo:
                p.append(f"{key} must be >= {lo}, got {v}")
        if self.timeout_s <= 0:
            p.append(f"timeout_s must be > 0, got {self.timeout_s}")
        if not 0.0 <= self.max_error_rate <= 1.0:
            p.append(f"max_error_rate must be within [0, 1], got {self.max_error_rate}")
        if self.replay is not None and not Path(self.replay).is_file():
            p.append(f"replay: recorded journal not found: {self.replay}")
        return p

    # -- requests -------------------------------------------------------------
    @property
    def endpoint(self) -> str:
        """The URL as messages and the manifest show it (no credentials, no query; ``{env:NAME}``
        filled in, so a message names the host asked, question placeholders left as written)."""
        if self.url is None:
            return redact_url(os.environ.get(self.url_env or "", ""))
        return redact_url(render(self.url, {p: f"{{{p}}}" for p in PLACEHOLDERS}))

    @property
    def shape(self) -> ReplyShape:
        return ReplyShape(self.results, self.chunk, self.doc, self.page, self.score, self.arm_ranks)

    def limits(self) -> CallLimits:
        hidden = secrets([self.url, self.body, self.query, self.headers])
        env_url = os.environ.get(self.url_env or "", "")
        if env_url and env_url != redact_url(env_url):  # userinfo or a query: may hold a token
            hidden.append(env_url)
        password = urlsplit(self.url or env_url).password
        if password:
            hidden.append(password)
        hidden += _literal_secrets(self.body) + _literal_secrets(self.query)
        return CallLimits(self.timeout_s, self.max_body_bytes, self.retry, self.seed,
                          self.concurrency, tuple(hidden))

    def prepare_request(self, question: Question, depth: int) -> Prepared:
        values = question_values(question, depth)
        base = self.url or os.environ.get(self.url_env or "", "")
        shown_base = self.url if self.url is not None else f"{{env:{self.url_env}}}"
        fields = {**(render(self.body, values) if self.method == "GET" else {}),
                  **render(self.query, values)}
        shown_fields = {**(render(self.body, values, masked=True) if self.method == "GET" else {}),
                        **render(self.query, values, masked=True)}
        shown = {"method": self.method, "url": mask_url(render(shown_base, values, masked=True)),
                 "query": _masked(shown_fields),
                 "body": _masked(render(self.body, values, masked=True))
                 if self.method == "POST" else None}
        url = _with_query(render(base, values) if self.url is not None else base, fields)
        headers = {str(k): str(v) for k, v in render(self.headers, values).items()}
        body = None
        if self.method == "POST":
            body = json.dumps(render(self.body, values), ensure_ascii=False).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
        return Prepared(question.question_id, request_key(shown), self.method, url, headers, body, shown)

    # -- the arm interface ----------------------------------------------------
    def preflight(self, corpus: Corpus, questions: Sequence[Question],
                  context: ArmContext) -> str | None:
        if self.replay is not None:
            try:
                return None if journal(Path(self.replay), context.name).load() else \
                    f"replay: recorded journal {self.replay} holds no call"
            except RulegaugeError as exc:
                return f"replay: {exc}"
        if not questions:
            return None
        q = questions[0]
        rec = call(self.prepare_request(q, 10), self.limits(), self.shape, retries=False)
        try:
            hits = self._hits(rec, corpus)
        except ReplyError as exc:
            return f"{self.method} {self.endpoint}, question {q.question_id}: {exc}"
        unmatched = [h.reply_id for h in hits if h.chunk_id is None]
        if hits and len(unmatched) == len(hits):
            return (f"{self.endpoint}, question {q.question_id}: no id of the reply matches the "
                    f"corpus (e.g. {', '.join(map(repr, unmatched[:3]))}; the corpus has ids like "
                    f"{corpus.chunks[0].chunk_id!r})")
        if unmatched and self.on_unmatched == "error":
            return (f"{self.endpoint}, question {q.question_id}: ids matching no chunk or page: "
                    f"{', '.join(map(repr, unmatched[:10]))} (on_unmatched = \"keep\" keeps them at their "
                    "ranks as non-relevant foreign hits)")
        return None

    def _hits(self, rec: Record, corpus: Corpus) -> list[ReplyHit]:
        if rec.get("error") is not None:
            raise ReplyError(str(rec["error"]))
        return match(rec.get("hits") or [], self.shape, corpus.chunk_by_id, first_chunks(corpus))

    def hits_of(self, rec: Record) -> list[ReplyHit]:
        """The hits of one call's record, in reply order; :class:`ReplyError` if it failed."""
        return self._hits(rec, self.corpus)

    def prepare(self, corpus: Corpus, context: ArmContext) -> None:
        self._corpus, self._context = corpus, context

    @property
    def corpus(self) -> Corpus:
        if self._corpus is None:
            raise RuntimeError("http arm: prepare() must run before search()")
        return self._corpus

    def replies(self, questions: Sequence[Question], depth: int) -> dict[str, Record]:
        """Question id -> the record of its call (journaled, resumed or replayed)."""
        if self._context is None or self._context.run_dir is None:
            raise RuntimeError("http arm: prepare() with a run folder must run before search()")
        if not valid_name(self._context.name):
            raise ConfigError(f"http arm: arm name {self._context.name!r} cannot name its journal "
                              "file (letters, digits, _ . -)")
        reqs = [self.prepare_request(q, depth) for q in questions]
        replay = None
        if self.replay is not None:
            replay = {k[0]: r for k, r in journal(Path(self.replay), self._context.name).load().items()}
        path = journal_path(self._context.run_dir, self._context.name)
        recs = ask_all(reqs, self.limits(), self.shape, journal(path, self._context.name), replay)
        return {r.question_id: recs[r.key] for r in reqs}

    def search(self, questions: Sequence[Question], depth: int) -> list[ArmResult]:
        recs = self.replies(questions, depth)
        # each call's own request time (the preflight's warm-up call is not among them)
        self._latency = {q.question_id: call_latency(recs[q.question_id]) for q in questions}
        corpus = self.corpus
        out, errors, unmatched = [], [], []
        count = ForeignCount(self.on_unmatched)
        for q in questions:
            rec = recs[q.question_id]
            try:
                hits = self._hits(rec, corpus)
            except ReplyError as exc:
                errors.append(Problem(f"question {q.question_id}", str(exc)))
                out.append(ArmResult(q.question_id, self.name, (), f"call failed: {exc}"))
                continue
            unmatched += [(q.question_id, h.reply_id) for h in hits if h.chunk_id is None]
            top = listed(hits, depth, self.on_unmatched)
            count.add(top)
            out.append(ArmResult(q.question_id, self.name, top.hits,
                                 None if top.hits else "the endpoint returned no matched hit", top.foreign))
        self._check(questions, out, errors, unmatched, count)
        return out

    def call_latencies(self) -> dict[str, float]:
        """Question id -> the search latency of its call in ms, NaN when unknown (arms/base)."""
        return dict(self._latency)

    def _check(self, questions: Sequence[Question], out: list[ArmResult], errors: list[Problem],
               unmatched: list[tuple[str, str]], count: ForeignCount) -> None:
        n = len(questions)
        listed_ids = [Problem(f"question {q}", f"id {i!r} matches no chunk or page of the corpus")
                      for q, i in unmatched]
        self.stats = {"questions": n, "errors": len(errors), "error_examples": [str(p) for p in errors[:20]],
                      "unmatched_count": len(unmatched), "unmatched": [str(p) for p in listed_ids[:100]],
                      **count.manifest()}
        warning = count.warning()
        if warning:
            self.stats["warning"] = warning
        where = f"http arm {self.endpoint}"
        if n and len(errors) / n > self.max_error_rate:
            raise ValidationError(errors, f"{where}: {len(errors)} of {n} calls failed, above "
                                  f"max_error_rate {self.max_error_rate:g}; rerun with the same "
                                  "--run-id to ask only those again")
        if unmatched and self.on_unmatched == "error":
            raise ValidationError(listed_ids, f"{where}: ids matching nothing in the corpus "
                                  '(on_unmatched = "keep" keeps them at their ranks as non-relevant foreign hits)')
        if self.on_unmatched == "keep":
            bad = bad_foreign_ids((f"question {r.question_id}", i) for r in out for i in sorted(r.foreign))
            if bad:
                raise ValidationError(bad, f"{where}: reply ids that cannot be kept as foreign hits")
            if n and not errors and any(r.foreign for r in out) \
                    and all(len(r.foreign) == len(r.hits) for r in out):
                ex = ", ".join(repr(i) for _, i in unmatched[:3])
                raise ValidationError([Problem(where, f"no id of any reply matches a chunk or page of the corpus "
                                               f"(e.g. {ex}; the corpus has ids like "
                                               f"{self.corpus.chunks[0].chunk_id!r})")],
                                      f"{where}: the reply fields read no id of the corpus")
        if n and not errors and all(not r.hits for r in out):
            raise ValidationError([Problem(where, f"the ranked list was empty for all {n} questions "
                                   f"(e.g. question {questions[0].question_id})")],
                                  f"{where}: nothing found for any question")

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "endpoint": self.endpoint, "url_env": self.url_env,
                "method": self.method, "body": self.body, "query": self.query,
                "headers": redact_headers({str(k): str(v) for k, v in self.headers.items()}),
                "results": self.results, "fields": {k: v for k, v in (
                    ("chunk", self.chunk), ("doc", self.doc), ("page", self.page),
                    ("score", self.score), ("arm_ranks", self.arm_ranks)) if v is not None},
                "timeout_s": self.timeout_s, "retries": self.retries, "concurrency": self.concurrency,
                "max_body_bytes": self.max_body_bytes, "on_unmatched": self.on_unmatched,
                "max_error_rate": self.max_error_rate, "replay": self.replay, **self.stats}


def _literal_secrets(value: Any) -> list[str]:
    """String values of secret-named keys of a template (``api_key = "..."``)."""
    if isinstance(value, Mapping):
        return [x for k, v in value.items() for x in (
            [v] if is_secret_key(str(k)) and isinstance(v, str) else _literal_secrets(v))]
    if isinstance(value, list):
        return [x for v in value for x in _literal_secrets(v)]
    return []


def _masked(value: Any) -> Any:
    """A template rendering as a record shows it: values of secret-named keys masked
    (a literal ``api_key = "..."`` never reaches the journal)."""
    if isinstance(value, Mapping):
        return {k: MASK if is_secret_key(str(k)) and isinstance(v, str) else _masked(v)
                for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _with_query(url: str, fields: Mapping[str, Any]) -> str:
    """``url`` with ``fields`` added to its query string (null fields left out)."""
    items = [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in fields.items() if v is not None]
    if not items:
        return url
    p = urlsplit(url)
    query = "&".join(x for x in (p.query, urlencode(items)) if x)
    return urlunsplit((p.scheme, p.netloc, p.path, query, p.fragment))


ARMS.add("http", HttpArm)
