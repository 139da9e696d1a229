"""An LLM relevance judge: a chat answerer grades each pooled page 0-3 (after UMBRELA).

For every page of a pool file (:mod:`rulegauge.judging.poolfile`) the judge (any chat
answerer: ``ollama``, ``openai``, ``llama-cpp``; :func:`rulegauge.answering.judge.chat_function`)
is asked ``samples`` times with the versioned prompt ``rulegauge/prompts/relevance-v1.txt``
(question and page text; a page longer than :data:`MAX_PAGE_CHARS` characters is cut
there and counted), at temperature 0, sample ``i`` with seed ``seed + i``. The grade of a
reply is its first digit 0-3 after Markdown emphasis (or after ``grade:`` / ``score:`` /
``O:``); anything else is *unparseable* and counted as such, never as grade 0. The
majority grade of the parsed samples is kept (a tie: the lowest tied grade, the
conservative choice); a pair none of whose samples parsed gets no judgment. The
*disagreement rate* is the share of pairs with two or more parsed samples whose samples
are not unanimous.

Verdicts are cached (JSON lines, appended as they come) on model, prompt hash, SHA-256
of the page text, question and seed: rerunning a judging asks nothing twice. A failed
call is not cached. The cache keeps what a replay needs, the parsed grade, never the
reply: only an unparseable reply keeps an excerpt (:data:`EXCERPT_CHARS`), and that
excerpt, like the summary's, is cleaned of every secret the judge's calls carry and
of every credential pattern before it is cut (:class:`rulegauge.core.redact.Secrets`: a
server may echo the API key). A cache written before (``reply`` lines) is read by
parsing its replies.

Judgments are the judgments-file format (:mod:`rulegauge.goldset.judgments`) with
``judge_kind`` ``llm`` and ``judge_id`` ``MODEL@PROMPTHASH12``; each note holds the
sample grades. Reference: Upadhyay et al., "UMBRELA: UMbrela is the (Open-Source
Reproduction of the) Bing RELevance Assessor" (2024), after Thomas et al. (SIGIR 2024).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from rulegauge.answering.prompt_file import PromptFile
from rulegauge.core.jsonl import append_line, split_lines
from rulegauge.core.redact import Secrets
from rulegauge.goldset.judgments import Judgment
from rulegauge.goldset.records import PageJudgment
from rulegauge.judging.poolfile import Pool

PROMPT_VERSION = "relevance-v1"
EXCERPT_CHARS = 200
"""Characters of an unparseable reply kept (cleaned first) in the cache and the summary."""
MAX_PAGE_CHARS = 3000
"""Page text beyond this many characters is cut (a 2048-token context holds the prompt)."""
_GRADE = re.compile(r"^[\s*_`>#\"']*(?:(?:final\s+)?(?:grade|score|o)\s*[:=]?\s*[*_]*\s*)?"
                    r"([0-3])(?!\d|[.,]\d)", re.IGNORECASE)
Chat = Callable[[list[dict[str, str]], str, int], tuple[str, str | None]]
"""``(messages, key, seed) -> (reply, error)``."""


PROMPT = PromptFile(PROMPT_VERSION)


def template_text() -> str:
    return PROMPT.text()


def prompt_hash() -> str:
    """SHA-256 of the prompt version and template."""
    return PROMPT.digest()


def judge_id(model: str) -> str:
    """``MODEL@PROMPTHASH12`` (whitespace in the model name becomes ``_``)."""
    name = re.sub(r"\s+", "_", model.strip()) or "model"
    return f"{name}@{prompt_hash()[:12]}"


def messages(question: str, page: str) -> list[dict[str, str]]:
    """The prompt for one question and one page (page cut at :data:`MAX_PAGE_CHARS`)."""
    return PROMPT.render({"question": question, "page": page[:MAX_PAGE_CHARS]})


def parse_grade(reply: str) -> int | None:
    """The grade 0-3 a reply gives, None when it gives none (module docstring)."""
    m = _GRADE.match(reply or "")
    return int(m.group(1)) if m else None


def majority(grades: Sequence[int]) -> int:
    """The most common grade; a tie goes to the lowest tied grade. ``grades`` non-empty."""
    counts = Counter(grades)
    top = max(counts.values())
    return min(g for g, n in counts.items() if n == top)


def cache_key(model: str, question: str, page_text: str, seed: int) -> str:
    page_sha = hashlib.sha256(page_text.encode("utf-8")).hexdigest()
    return hashlib.sha256(json.dumps([model, prompt_hash(), page_sha, question, seed],
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Verdict:
    """What one reply said: its grade (None: unparseable) and, only when unparseable,
    a cleaned excerpt of it."""

    grade: int | None
    excerpt: str = ""


def verdict_of(reply: str, secrets: Secrets) -> Verdict:
    """The :class:`Verdict` of a reply; the excerpt cleaned before the cut."""
    grade = parse_grade(reply)
    return Verdict(grade, "" if grade is not None else secrets.excerpt(reply, EXCERPT_CHARS))


class ReplyCache:
    """Replies by :func:`cache_key`, kept in a JSON-lines file appended one line per reply:
    the question generator's (:mod:`rulegauge.judging.llmgen`), whose replies are its
    product (proposed questions); stored with ``secrets`` scrubbed."""

    def __init__(self, path: Path | None, secrets: Secrets | None = None) -> None:
        self.path = path
        self.secrets = secrets or Secrets()
        self.replies: dict[str, str] = {}
        if path is not None and path.exists():
            for line in split_lines(path.read_text(encoding="utf-8")):
                try:
                    rec = json.loads(line)
                    self.replies[str(rec["key"])] = str(rec["reply"])
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line from a killed run: asked again

    def get(self, key: str) -> str | None:
        return self.replies.get(key)

    def put(self, key: str, reply: str) -> str:
        """Cache ``reply`` scrubbed of the secrets; return what was cached."""
        reply = self.replies[key] = self.secrets.scrub(reply)
        if self.path is not None:
            append_line(self.path, {"key": key, "reply": reply})  # fsynced, never through a link
        return reply


class VerdictCache:
    """Verdicts by :func:`cache_key`, kept in a JSON-lines file appended one line per reply
    (module docstring: grades, never replies). ``secrets``: what the judge's calls carry."""

    def __init__(self, path: Path | None, secrets: Secrets | None = None) -> None:
        self.path = path
        self.secrets = secrets or Secrets()
        self.verdicts: dict[str, Verdict] = {}
        if path is not None and path.exists():
            for line in split_lines(path.read_text(encoding="utf-8")):
                try:
                    rec = json.loads(line)
                    key = str(rec["key"])
                    if "reply" in rec:  # a cache of an earlier rulegauge: parsed now
                        self.verdicts[key] = verdict_of(str(rec["reply"]), self.secrets)
                        continue
                    grade = rec["grade"]
                    if grade is not None and (not isinstance(grade, int) or not 0 <= grade <= 3):
                        continue  # not a verdict this judge gives: asked again
                    self.verdicts[key] = Verdict(grade, self.secrets.clean(str(rec.get("excerpt", ""))))
                except (ValueError, KeyError, TypeError):
                    continue  # a torn last line from a killed run: asked again

    def get(self, key: str) -> Verdict | None:
        return self.verdicts.get(key)

    def put(self, key: str, reply: str) -> Verdict:
        """Cache the verdict of ``reply`` (never the reply) and return it."""
        v = self.verdicts[key] = verdict_of(reply, self.secrets)
        if self.path is not None:
            row: dict[str, Any] = {"key": key, "grade": v.grade}
            if v.grade is None:
                row["excerpt"] = v.excerpt
            append_line(self.path, row)  # fsynced, never through a link
        return v


@dataclass
class JudgingSummary:
    """What an LLM judging did; written beside the judgments (``.summary.json``)."""

    judge_id: str
    model: str
    prompt: dict[str, str]
    samples: int
    seed: int
    pairs: int = 0
    judged: int = 0
    unparseable_pairs: int = 0
    failed_pairs: int = 0
    unparseable_samples: int = 0
    failed_samples: int = 0
    multi_sample_pairs: int = 0
    disagreeing_pairs: int = 0
    calls: int = 0
    cached: int = 0
    truncated_pages: int = 0
    unparseable: list[dict[str, Any]] = field(default_factory=list)

    @property
    def disagreement_rate(self) -> float | None:
        """Non-unanimous pairs / pairs with >= 2 parsed samples; None without such pairs."""
        m = self.multi_sample_pairs
        return self.disagreeing_pairs / m if m else None

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items()}
        d["disagreement_rate"] = self.disagreement_rate
        return d


@dataclass(frozen=True)
class JudgeRequest:
    pool: Pool
    chat: Chat
    model: str
    samples: int = 1
    seed: int = 0


def _ask(req: JudgeRequest, cache: VerdictCache, question: str, page: Any,
         s: JudgingSummary) -> list[int | None]:
    """The grade of every sample of one page (None: unparseable or failed)."""
    out: list[int | None] = []
    for i in range(req.samples):
        seed = req.seed + i
        key = cache_key(req.model, question, page.text, seed)
        got = cache.get(key)
        if got is None:
            reply, error = req.chat(messages(question, page.text),
                                    f"relevance|{page.question_id}|{page.page}|{i}", seed)
            s.calls += 1
            if error is not None:
                s.failed_samples += 1
                out.append(None)
                continue
            got = cache.put(key, reply)
        else:
            s.cached += 1
        if got.grade is None:
            s.unparseable_samples += 1
            s.unparseable.append({"question_id": page.question_id, "page": page.page,
                                  "sample": i, "reply": got.excerpt})
        out.append(got.grade)
    return out


def judge_pool(req: JudgeRequest, cache: VerdictCache,
               progress: Callable[[int], None] | None = None
               ) -> tuple[list[Judgment], JudgingSummary]:
    """Judge every page of ``req.pool`` (module docstring); pool order is kept."""
    jid = judge_id(req.model)
    s = JudgingSummary(jid, req.model, {"version": PROMPT_VERSION, "sha256": prompt_hash()},
                       req.samples, req.seed)
    questions = {q.question_id: q for q in req.pool.questions}
    out: list[Judgment] = []
    for page in req.pool.pages:
        s.pairs += 1
        s.truncated_pages += len(page.text) > MAX_PAGE_CHARS
        before_failed = s.failed_samples
        grades = _ask(req, cache, questions[page.question_id].question, page, s)
        parsed = [g for g in grades if g is not None]
        if progress is not None:
            progress(1)
        if not parsed:
            if s.failed_samples - before_failed == len(grades):
                s.failed_pairs += 1
            else:
                s.unparseable_pairs += 1
            continue
        if len(parsed) >= 2:
            s.multi_sample_pairs += 1
            s.disagreeing_pairs += len(set(parsed)) > 1
        doc, _, number = page.page.rpartition("#")
        note = "llm samples " + " ".join("?" if g is None else str(g) for g in grades)
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(Judgment(page.question_id, PageJudgment(doc, int(number), majority(parsed),
                                                           "llm", jid, now, note),
                            goldset_sha256=req.pool.goldset_sha256))
        s.judged += 1
    return out, s
