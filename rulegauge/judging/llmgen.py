"""The LLM question generator: a chat answerer proposes question/answer-sentence pairs.

For one page and one question language, the model is sent the versioned prompt
``rulegauge/prompts/questions-v1.txt`` (the page, cut at :data:`MAX_PAGE_CHARS`
characters; the language's name; the number of questions wanted) at temperature 0
with a fixed seed, and must reply with a JSON list of ``{"question", "answer"}``
objects. :func:`parse_reply` reads it: Markdown code fences and text around the
first ``[...]`` (or a ``{"questions": [...]}`` object) are tolerated; ``answer``
may also be called ``answer_sentence`` or ``sentence``. A reply with no such list,
or whose items are not objects with two non-empty strings, is *unparseable*: the
caller counts it (never silently dropped, never taken as "no question"). An empty
list ``[]`` is a valid reply: the page states no askable rule.

Replies are cached (:class:`rulegauge.judging.llm.ReplyCache`, JSON lines appended
as they come) on model, prompt hash, SHA-256 of the page text, language, number
wanted and seed: a rerun asks nothing twice. A failed call is not cached.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rulegauge.answering.prompt_file import PromptFile
from rulegauge.judging.llm import ReplyCache

PROMPT_VERSION = "questions-v1"
PROMPT = PromptFile(PROMPT_VERSION)
MAX_PAGE_CHARS = 3000
_FENCE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)
_ANSWER_KEYS = ("answer", "answer_sentence", "sentence")
Chat = Callable[[list[dict[str, str]], str, int], tuple[str, str | None]]
"""``(messages, key, seed) -> (reply, error)`` (:func:`rulegauge.judging.endpoint.seeded_chat`)."""


def prompt_hash() -> str:
    """SHA-256 of the prompt version and template."""
    return PROMPT.digest()


def messages(page: str, language_name: str, n: int) -> list[dict[str, str]]:
    """The prompt for one page (cut at :data:`MAX_PAGE_CHARS`), language and count."""
    return PROMPT.render({"page": page[:MAX_PAGE_CHARS], "language_name": language_name,
                          "n": str(n)})


def _first_json(reply: str) -> Any:
    """The first JSON list (or object) in ``reply``; raises ValueError when none parses."""
    fenced = _FENCE.search(reply)
    text = fenced.group(1) if fenced else reply
    decoder = json.JSONDecoder()
    for i, ch in enumerate(text):
        if ch in "[{":
            try:
                return decoder.raw_decode(text[i:])[0]
            except (json.JSONDecodeError, RecursionError):
                continue
    raise ValueError("no JSON list in the reply")


def parse_reply(reply: str) -> list[tuple[str, str]] | None:
    """(question, answer sentence) pairs of a reply, or None when it is unparseable."""
    try:
        data = _first_json(reply or "")
    except ValueError:
        return None
    if isinstance(data, dict):
        data = data.get("questions")
    if not isinstance(data, list):
        return None
    out: list[tuple[str, str]] = []
    for item in data:
        if not isinstance(item, dict):
            return None
        q = item.get("question")
        a = next((item[k] for k in _ANSWER_KEYS if isinstance(item.get(k), str)), None)
        if not isinstance(q, str) or not q.strip() or a is None or not a.strip():
            return None
        out.append((" ".join(q.split()), " ".join(a.split())))
    return out


def cache_key(model: str, page_text: str, language: str, n: int, seed: int) -> str:
    page_sha = hashlib.sha256(page_text.encode("utf-8")).hexdigest()
    return hashlib.sha256(json.dumps([model, prompt_hash(), page_sha, language, n, seed],
                                     ensure_ascii=False).encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Reply:
    """One page's reply: its pairs (None: unparseable), the raw text, the error of a
    failed call, and whether it came from the cache."""

    pairs: list[tuple[str, str]] | None
    text: str
    error: str | None
    cached: bool


@dataclass(frozen=True)
class LlmGenerator:
    chat: Chat
    model: str
    cache: ReplyCache
    seed: int = 0

    def ask(self, page_id: str, text: str, language: str, language_name: str, n: int) -> Reply:
        key = cache_key(self.model, text, language, n, self.seed)
        reply = self.cache.get(key)
        cached = reply is not None
        if reply is None:
            reply, error = self.chat(messages(text, language_name, n),
                                     f"questions|{page_id}|{language}", self.seed)
            if error is not None:
                return Reply(None, "", error, False)
            reply = self.cache.put(key, reply)  # scrubbed of the calls' secrets
        return Reply(parse_reply(reply), reply, None, cached)
