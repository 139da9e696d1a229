"""``rulegauge goldset generate``: questions proposed per page, each with its page and answer.

For every non-blank page of the documents (all pages, or those chosen), in document and
page order, and every question language asked for (default: the page's own), the
generator proposes at most ``per_page`` (question, answer sentence) pairs:

* :class:`RuleGenerator` (``--answerer extractive``): :mod:`rulegauge.judging.rulegen`,
  deterministic and offline; a language it has no rules for, or a question language
  other than the page's, is *unsupported* (counted, not an error);
* :class:`ChatGenerator` (any chat answerer): :mod:`rulegauge.judging.llmgen`.

A question must be in the language asked for (:func:`in_language`: dropped and counted
as ``wrong_language`` on positive evidence of another; a small model asked for German
often answers in English). Each answer sentence must occur in its page (:func:`rulegauge.judging.answer_match.locate`);
one that does not is dropped and counted (``answers_not_in_page``), and the page's own
wording is kept for one that does. The page's heading path at the answer is the
chunker's (:func:`rulegauge.corpus.chunking.build_document`). Near-duplicates are then
removed (:mod:`rulegauge.judging.dedup`) and the proposals numbered
``DOC.pPAGE.LANG.K``.

Counts (:class:`Counts`; the failures users of RAGAS's and DeepEval's generators report
most are duplicates and empty sets, so both are measured): ``pages_read`` (non-blank
pages sent to the generator), ``blank_pages`` (pages without text, not sent),
``empty_pages`` (pages read for which the generator gave a readable reply, yet no valid
proposal: a page whose only reply was unparseable or a failed call is counted there,
not here),
``unsupported`` (page x language pairs the generator cannot ask), ``calls``, ``cached``,
``failed_calls``, ``unparseable_replies``, ``wrong_language``, ``answers_not_in_page``, ``candidates``
(valid pairs before de-duplication), ``duplicates_removed`` and ``proposals``. Every
unparseable reply, dropped answer, failure and duplicate is listed in the manifest
(:attr:`Generation.manifest`): nothing is dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from fractions import Fraction
from typing import Any, Protocol

from rulegauge.answering.answerers.extractive import question_stopwords
from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.redact import redact_text
from rulegauge.core.text import Tokenizer, guess_language
from rulegauge.corpus.chunking import BuiltDocument, build_document
from rulegauge.corpus.records import DocumentSpec, split_page_key
from rulegauge.judging import dedup, llmgen, rulegen
from rulegauge.judging.answer_match import locate, page_wording
from rulegauge.judging.proposals import Proposal, ProposalPage, ProposalSet

LANGUAGE_NAMES = {"en": "English", "de": "German", "fr": "French", "es": "Spanish",
                  "ru": "Russian", "fa": "Persian", "it": "Italian", "nl": "Dutch",
                  "pt": "Portuguese", "pl": "Polish", "uk": "Ukrainian", "tr": "Turkish"}
"""The question languages ``--lang`` accepts (the LLM prompt names the language)."""


@dataclass(frozen=True)
class Outcome:
    """A generator's answer for one page and language: (question, answer, rule) pairs,
    None when the reply was unparseable; ``error`` for a failed call."""

    pairs: tuple[tuple[str, str, str], ...] | None = ()
    error: str | None = None
    unsupported: bool = False
    cached: bool = False
    reply: str = ""


class Generator(Protocol):
    def describe(self) -> dict[str, Any]: ...

    def propose(self, page_id: str, text: str, page_language: str, language: str,
                n: int) -> Outcome: ...


class RuleGenerator:
    """The rule-based generator behind ``--answerer extractive``."""

    def describe(self) -> dict[str, Any]:
        return {"kind": "rules", "id": rulegen.GENERATOR_ID, "model": rulegen.GENERATOR_ID,
                "prompt": None}

    def propose(self, page_id: str, text: str, page_language: str, language: str,
                n: int) -> Outcome:
        if not rulegen.supports(page_language, language):
            return Outcome(unsupported=True)
        return Outcome(tuple((c.question, c.answer, c.rule)
                             for c in rulegen.generate(text, language, n)))


@dataclass(frozen=True)
class ChatGenerator:
    """An LLM generator: any chat answerer, through :class:`rulegauge.judging.llmgen.LlmGenerator`."""

    llm: llmgen.LlmGenerator

    def describe(self) -> dict[str, Any]:
        return {"kind": "llm", "id": f"{self.llm.model}@{llmgen.prompt_hash()[:12]}",
                "model": self.llm.model,
                "prompt": {"version": llmgen.PROMPT_VERSION, "sha256": llmgen.prompt_hash()}}

    def propose(self, page_id: str, text: str, page_language: str, language: str,
                n: int) -> Outcome:
        r = self.llm.ask(page_id, text, language, LANGUAGE_NAMES[language], n)
        pairs = None if r.pairs is None else tuple((q, a, "llm") for q, a in r.pairs[:n])
        return Outcome(pairs, r.error, cached=r.cached, reply=r.text)


@dataclass(frozen=True)
class GenerateRequest:
    specs: tuple[DocumentSpec, ...]
    languages: tuple[str, ...] = ()
    """Question languages; empty: each page's own language."""
    per_page: int = 3
    pages: tuple[str, ...] = ()
    """``doc#page`` ids to read (empty: every page)."""
    max_pages: int | None = None
    threshold: Fraction = dedup.THRESHOLD


@dataclass
class Counts:
    documents: int = 0
    pages_read: int = 0
    blank_pages: int = 0
    empty_pages: int = 0
    unsupported: int = 0
    calls: int = 0
    cached: int = 0
    failed_calls: int = 0
    unparseable_replies: int = 0
    wrong_language: int = 0
    answers_not_in_page: int = 0
    candidates: int = 0
    duplicates_removed: int = 0
    proposals: int = 0


@dataclass
class Generation:
    proposals: ProposalSet
    counts: Counts
    manifest: dict[str, Any] = field(default_factory=dict)


SCRIPTED = ("ru", "fa")
LATIN = ("en", "de", "fr", "es")
"""Languages :func:`in_language` checks: by script (Cyrillic, Arabic), by question words."""


def in_language(question: str, language: str) -> bool:
    """False only on positive evidence that ``question`` is in another language than
    ``language``: its script is another checked language's (Cyrillic ``ru``, Arabic ``fa``:
    :func:`~rulegauge.core.text.guess_language`), or, among Latin languages, another
    language's question and function words (:func:`~rulegauge.answering.answerers.extractive.
    question_stopwords`, words both lists share left out) occur at least twice and more
    often than the asked language's. Languages outside :data:`SCRIPTED` and
    :data:`LATIN` are not checked; no evidence keeps the question."""
    if language not in SCRIPTED + LATIN:
        return True
    if language in SCRIPTED:  # a Russian question is written in Cyrillic, whatever its words
        return guess_language(question, default="und") == language
    if guess_language(question, default=language) in SCRIPTED:
        return False
    words = Tokenizer()(question)
    own = question_stopwords(language)
    mine = sum(w in own for w in words)
    for other in LATIN:
        theirs = question_stopwords(other) - own
        hits = sum(w in theirs for w in words)
        if other != language and hits >= 2 and hits > mine:
            return False
    return True


def check_languages(languages: Sequence[str]) -> None:
    bad = [x for x in languages if x not in LANGUAGE_NAMES]
    if bad:
        raise ValidationError([Problem("--lang", f"unknown language {x!r}; choose one of: "
                                       + ", ".join(sorted(LANGUAGE_NAMES))) for x in bad],
                              "bad options")


def load(req: GenerateRequest) -> list[tuple[BuiltDocument, list[int]]]:
    """Every document built (chunked), with the pages to read; every problem at once
    (unreadable documents, duplicate ids, unknown documents or pages out of range)."""
    check_languages(req.languages)
    problems: list[Problem] = []
    built: dict[str, BuiltDocument] = {}
    for spec in req.specs:
        if spec.doc_id in built:
            problems.append(Problem(spec.path, f"duplicate document id {spec.doc_id!r}"))
            continue
        try:
            b = build_document(spec)
        except ValidationError as exc:
            problems += exc.problems
            continue
        if b.document.language == "und":
            lang = guess_language("\n".join(p.text for p in b.pages[:50]))
            b = replace(b, document=replace(b.document, language=lang))
        built[spec.doc_id] = b
    chosen: dict[str, list[int]] = {}
    for item in req.pages:
        try:
            doc, page = split_page_key(item)
        except ValueError as exc:
            problems.append(Problem("--page", str(exc)))
            continue
        if doc not in built:
            problems.append(Problem("--page", f"{item}: no document {doc!r} (documents: "
                                    f"{', '.join(built) or 'none'})"))
        elif not 1 <= page <= len(built[doc].pages):
            problems.append(Problem("--page", f"{item}: page out of range ({doc} has "
                                    f"{len(built[doc].pages)} pages)"))
        elif page not in chosen.setdefault(doc, []):
            chosen[doc].append(page)
    if problems:
        raise ValidationError(problems, "cannot generate questions")
    return [(b, sorted(chosen[d]) if req.pages else [p.page for p in b.pages])
            for d, b in built.items() if not req.pages or d in chosen]


def heading_at(doc: BuiltDocument, page: int, offset: int) -> tuple[str, ...]:
    """The heading path of the chunk holding ``offset`` of ``page`` (else the last
    chunk starting before it, else the page's first chunk's; () without chunks)."""
    chunks = [c for c in doc.chunks if c.page == page]
    before = [c for c in chunks if c.char_start <= offset]
    pick = before[-1] if before else (chunks[0] if chunks else None)
    return pick.heading_path if pick is not None else ()


def _documents(docs: Sequence[BuiltDocument]) -> list[dict[str, Any]]:
    out = []
    for b in docs:
        d = b.document
        spec_path = d.path or ""
        out.append({"id": d.doc_id, "path": spec_path, "sha256": d.source_sha256 or (
            file_sha256(spec_path) if spec_path else ""), "kind": d.kind, "game": d.game,
            "edition": d.edition or "1", "language": d.language, "title": d.title})
    return out


def generate(req: GenerateRequest, generator: Generator,
             loaded: list[tuple[BuiltDocument, list[int]]],
             progress: Callable[[int], None] | None = None) -> Generation:
    """Propose questions for the pages of ``loaded`` (:func:`load`); module docstring."""
    c = Counts(documents=len(loaded))
    man: dict[str, list[dict[str, Any]]] = {k: [] for k in (
        "unparseable", "wrong_language", "answers_not_in_page", "failed", "empty_pages", "unsupported",
        "duplicates")}
    found: list[tuple[Proposal, str]] = []  # proposal without id, and its (doc, page, lang)
    pages: list[ProposalPage] = []
    budget = req.max_pages
    for doc, numbers in loaded:
        by_number = {p.page: p for p in doc.pages}
        for number in numbers:
            page = by_number[number]
            if budget is not None and c.pages_read >= budget:
                break
            if not page.text.strip():
                c.blank_pages += 1
                continue
            c.pages_read += 1
            pid = f"{doc.document.doc_id}#{number}"
            pages.append(ProposalPage(doc.document.doc_id, number, page.text))
            replied, valid = False, 0
            for lang in req.languages or (doc.document.language,):
                out = generator.propose(pid, page.text, doc.document.language, lang, req.per_page)
                if out.unsupported:
                    c.unsupported += 1
                    man["unsupported"].append({"page": pid, "language": lang,
                                               "page_language": doc.document.language})
                    continue
                c.calls += not out.cached
                c.cached += out.cached
                if out.error is not None:
                    c.failed_calls += 1
                    man["failed"].append({"page": pid, "language": lang, "error": out.error})
                    continue
                if out.pairs is None:
                    c.unparseable_replies += 1
                    man["unparseable"].append({"page": pid, "language": lang,
                                               "reply": redact_text(out.reply)[:500]})
                    # the call's own secrets are scrubbed by the cache; the generic patterns
                    # (keys, tokens) here, before the cut, so no secret is stored in part
                    continue
                replied = True
                for question, answer, rule in out.pairs:
                    if not in_language(question, lang):
                        c.wrong_language += 1
                        man["wrong_language"].append({"page": pid, "language": lang,
                                                      "question": question})
                        continue
                    m = locate(answer, page.text)
                    if m is None:
                        c.answers_not_in_page += 1
                        man["answers_not_in_page"].append({"page": pid, "language": lang,
                                                           "question": question,
                                                           "answer": answer})
                        continue
                    valid += 1
                    found.append((Proposal("", doc.document.doc_id, number,
                                           heading_at(doc, number, m.start), lang, question,
                                           page_wording(page.text, m), m.start, m.end,
                                           "exact" if m.exact else "fuzzy", rule), pid))
            if replied and not valid:
                c.empty_pages += 1
                man["empty_pages"].append({"page": pid})
            if progress is not None:
                progress(1)
    c.candidates = len(found)
    kept, dups = dedup.near_duplicates([(p.question, p.language) for p, _ in found],
                                       req.threshold)
    numbered: list[Proposal] = []
    per: dict[tuple[str, int, str], int] = {}
    ids: dict[int, str] = {}
    for i in kept:
        p = found[i][0]
        k = per[(p.doc_id, p.page, p.language)] = per.get((p.doc_id, p.page, p.language), 0) + 1
        ids[i] = f"{p.doc_id}.p{p.page}.{p.language}.{k}"
        numbered.append(replace(p, proposal_id=ids[i]))
    man["duplicates"] = [{"question": found[d.dropped][0].question, "page": found[d.dropped][1],
                          "repeats": ids[d.kept], "jaccard": str(d.jaccard)} for d in dups]
    c.duplicates_removed, c.proposals = len(dups), len(numbered)
    header = {"generator": {**generator.describe(), "per_page": req.per_page},
              "languages": list(req.languages) or sorted({d.document.language
                                                          for d, _ in loaded}),
              "language_mode": "asked" if req.languages else "page",
              "documents": _documents([d for d, _ in loaded]),
              "dedup": {"rule": dedup.rule_text(req.threshold), "threshold": str(req.threshold)},
              "counts": asdict(c)}
    return Generation(ProposalSet(header, tuple(pages), tuple(numbered)), c,
                      {**header, "lists": man})
