"""The versioned answer prompt: one template every answerer renders.

The template lives in ``rulegauge/prompts/answer-v1.txt`` (package data). It has a
``=== system ===`` and a ``=== user ===`` section and three ``string.Template``
placeholders: ``$language_name``, ``$passages`` and ``$question``. Passages are
numbered ``[1]..[n]`` with their document title, page and heading, so the ``[n]``
markers a model cites map back to (document, page, heading).

Conventions
-----------
* A reply *abstains* when, after leading whitespace and Markdown emphasis
  (``*``, ``_``, `````, ``>``, ``#``), it begins with the word ``ABSTAIN`` (any
  case) followed by a colon, a full stop, a dash or the end of the reply: the
  template asks for ``ABSTAIN: <reason>``, and small models often drop the
  reason (a bare ``ABSTAIN``). Anything else is an answer; an empty reply is
  neither and raises.
* The language code of the request picks the language name the model is told to
  answer in (:data:`LANGUAGE_NAMES`); an unknown code asks for "the language of
  the question".
* :func:`prompt_hash` covers the version, the template text and the language
  table, so any change to what a model reads changes the hash recorded in the
  run manifest.

Reference: the numbered-passages, cite-by-number and explicit-abstention layout
follows the service's answering read (see ``/work/shared/rulings``) and common
retrieval-augmented QA practice (Gao et al., "Enabling Large Language Models to
Generate Text with Citations", EMNLP 2023).
"""

from __future__ import annotations

import json
import re

from rulegauge.answering.prompt_file import PromptFile
from rulegauge.answering.requests import AnswerRequest, Passage
from rulegauge.core.errors import RulegaugeError

PROMPT_VERSION = "answer-v1"
ABSTAIN = "ABSTAIN"
"""The keyword an abstaining reply starts with (always English)."""

LANGUAGE_NAMES: dict[str, str] = {
    "en": "English", "ru": "Russian", "fa": "Persian", "de": "German", "es": "Spanish",
    "fr": "French", "it": "Italian", "pt": "Portuguese", "nl": "Dutch", "pl": "Polish",
    "uk": "Ukrainian", "cs": "Czech", "sv": "Swedish", "tr": "Turkish", "ar": "Arabic",
    "he": "Hebrew", "ja": "Japanese", "ko": "Korean", "zh": "Chinese",
}
UNKNOWN_LANGUAGE = "the language of the question"
_ABSTAIN_RE = re.compile(r"^[\s*_`>#]*ABSTAIN[\s*_`]*(?:[:.\-–—]|$)", re.IGNORECASE)
_HEADER_SEP = " · "


PROMPT = PromptFile(PROMPT_VERSION)


def template_text() -> str:
    """The raw template file (what :func:`prompt_hash` hashes)."""
    return PROMPT.text()


def prompt_hash() -> str:
    """SHA-256 (hex) of the prompt version, template text and language table."""
    return PROMPT.digest(json.dumps(LANGUAGE_NAMES, sort_keys=True, ensure_ascii=False).encode())


def describe() -> dict[str, str]:
    """Prompt provenance for the run manifest."""
    return {"version": PROMPT_VERSION, "sha256": prompt_hash()}


def language_name(code: str) -> str:
    """English name of a language code (``ru`` -> ``Russian``); regional suffixes
    (``pt-BR``) use the base code; unknown codes give :data:`UNKNOWN_LANGUAGE`."""
    base = code.strip().lower().replace("_", "-").split("-")[0]
    return LANGUAGE_NAMES.get(base, UNKNOWN_LANGUAGE)


def passage_header(p: Passage) -> str:
    """``[n] title · p.page · heading`` (title falls back to the doc id; an empty
    heading is left out)."""
    parts = [p.title or p.doc_id, f"p.{p.page}"]
    if p.heading:
        parts.append(p.heading)
    return f"[{p.n}] " + _HEADER_SEP.join(parts)


def format_passages(passages: tuple[Passage, ...]) -> str:
    """Number every passage under its header, separated by blank lines, in the
    order given. Markers must be unique positive integers."""
    problems = []
    seen: set[int] = set()
    for p in passages:
        if p.n < 1:
            problems.append(f"passage {p.chunk_id}: marker {p.n} is not positive")
        if p.n in seen:
            problems.append(f"passage {p.chunk_id}: marker [{p.n}] is used twice")
        seen.add(p.n)
    if problems:
        raise RulegaugeError("cannot render the prompt: " + "; ".join(problems))
    if not passages:
        return "(no passages were found)"
    return "\n\n".join(f"{passage_header(p)}\n{p.text.strip()}" for p in passages)


def render(request: AnswerRequest) -> list[dict[str, str]]:
    """Chat messages ``[{"role": "system", ...}, {"role": "user", ...}]`` for
    ``request``: the passages numbered ``[1]..[n]``, the question, the citation
    and abstention instructions, and the language to answer in."""
    values = {
        "language_name": language_name(request.language),
        "passages": format_passages(request.passages),
        "question": request.question.strip(),
    }
    return PROMPT.render(values)


def abstention(reason: str) -> str:
    """The reply text of an abstention: ``ABSTAIN: <reason>``."""
    return f"{ABSTAIN}: {reason.strip()}"


def parse_outcome(text: str) -> str:
    """``"abstained"`` if ``text`` is an abstention (see module docstring), else
    ``"answered"``. An empty or whitespace-only reply raises ``ValueError``: it is
    an error the caller must record, not an answer."""
    if not text or not text.strip():
        raise ValueError("empty reply: neither an answer nor an abstention")
    return "abstained" if _ABSTAIN_RE.match(text) else "answered"
