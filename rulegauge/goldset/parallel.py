"""Gold sets derived from a parallel corpus: ask in one language, expect the page of another.

For a corpus kept in parallel translations, one page per item and a
``pages.tsv`` per language (columns ``page``, ``file``, ``title``; pages
are aligned across languages by ``file``). The gold set's only document is
the ``answer`` language's; each sampled item is asked in every ``ask``
language by every mode of :data:`QUESTION_MODES`: ``title`` (a per-language
template, :data:`PARALLEL_TEMPLATES`, "How do you play {title}?") or
``first-sentence`` (:func:`first_sentence` of the item's page in the asking
language). A question text that would point at two items is skipped.

Sampling, ids and the written file follow :mod:`rulegauge.goldset.derive` (seeded
``numpy.random.default_rng``, document order kept, ``derived: true``).

Reference: known-item topics built from document structure follow Ogilvie &
Callan 2003, "Combining document representations for known-item search" (SIGIR).
"""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.registry import Registry
from rulegauge.core.text import fold
from rulegauge.corpus.loaders import count_pages, load_document
from rulegauge.corpus.records import DocumentSpec, page_key
from rulegauge.goldset.derive import Derivation, document_entry, sample_indices, slug
from rulegauge.goldset.parse import load_goldset
from rulegauge.goldset.write import DraftQuestion, write_goldset

PARALLEL_TEMPLATES: Registry[str] = Registry("parallel question language")
for _lang, _t in (("en", "How do you play {title}?"),
                  ("de", "Wie spielt man {title}?"),
                  ("fr", "Comment joue-t-on à {title} ?"),
                  ("es", "¿Cómo se juega a {title}?"),
                  ("ru", "Как играть в «{title}»?"),
                  ("fa", "«{title}» را چطور بازی می‌کنند؟")):
    PARALLEL_TEMPLATES.add(_lang, _t)


@dataclass(frozen=True)
class AlignedPage:
    """One row of a ``pages.tsv``: alignment key ``file``, physical page, title."""

    key: str
    page: int
    title: str


def read_pages_tsv(path: str | Path) -> list[AlignedPage]:
    """Read a ``page<TAB>file<TAB>title`` table (header line required); every
    problem (missing column, bad page, repeated file or page) is reported at once."""
    path = Path(path)
    problems: list[Problem] = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError([Problem(str(path), f"cannot read: {exc}")],
                              "cannot read pages table") from None
    rows = list(csv.reader(lines, delimiter="\t", quoting=csv.QUOTE_NONE))
    header = rows[0] if rows else []
    missing = [c for c in ("page", "file", "title") if c not in header]
    if missing:
        raise ValidationError([Problem(f"{path}:1", f"header lacks column(s) {', '.join(missing)}"
                                                    "; expected page, file, title")],
                              "cannot read pages table")
    col = {c: header.index(c) for c in ("page", "file", "title")}
    out: list[AlignedPage] = []
    keys: set[str] = set()
    pages: set[int] = set()
    for n, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) < len(header):
            problems.append(Problem(f"{path}:{n}", f"expected {len(header)} columns"))
            continue
        page, key, title = (row[col[c]].strip() for c in ("page", "file", "title"))
        if not page.isdigit() or int(page) < 1:
            problems.append(Problem(f"{path}:{n}", f"page must be a number >= 1, got {page!r}"))
        elif key in keys or int(page) in pages or not key or not title:
            problems.append(Problem(f"{path}:{n}", "empty or repeated file/page/title"))
        else:
            keys.add(key)
            pages.add(int(page))
            out.append(AlignedPage(key, int(page), title))
    if problems:
        raise ValidationError(problems, "cannot read pages table")
    return out


_SENTENCE_END = re.compile(r"[.!?…؟](?=\s|$)")


def first_sentence(text: str, title: str = "", max_words: int = 30) -> str | None:
    """The first sentence of a page's body: leading lines that repeat ``title`` or
    look like headings (fewer than 4 words, no sentence end) are dropped; the rest
    is read up to the first ``. ! ? … ؟`` followed by a space, and cut to
    ``max_words`` words. ``None`` for a page without such a body."""
    lines = [ln.strip() for ln in text.split("\n") if ln.strip()]
    while lines and (fold(lines[0]) == fold(title)
                     or (len(lines[0].split()) < 4 and not _SENTENCE_END.search(lines[0]))):
        lines.pop(0)
    body = " ".join(lines)
    m = _SENTENCE_END.search(body)
    words = (body[: m.end()] if m else body).split()
    return " ".join(words[:max_words]) or None


QuestionMode = Callable[[AlignedPage, str, str | None], str | None]
"""(page in the asking language, asking language, its page text) -> question or None."""

QUESTION_MODES: Registry[QuestionMode] = Registry("parallel question mode")
QUESTION_MODES.add("title", lambda p, lang, text: PARALLEL_TEMPLATES.get(lang).format(
    title=p.title))
QUESTION_MODES.add("first-sentence", lambda p, lang, text: first_sentence(text or "", p.title))
_NEEDS_TEXT = frozenset({"first-sentence"})


def _page_texts(lang: str, path: Path) -> dict[int, str]:
    _, pages = load_document(DocumentSpec(f"parallel-{lang}", str(path), "rulebook", "-", "-",
                                          lang))
    return {p.page: p.text for p in pages}


def _parallel_inputs(docs_by_language: Mapping[str, str | Path], ask: Sequence[str],
                     answer: str, pages_tsv: Mapping[str, str | Path] | None,
                     modes: Sequence[str]) -> tuple[dict[str, Path], dict[str, Path], list[str]]:
    """Check a parallel request: (documents, pages tables, languages whose text is read)."""
    for m in modes:
        QUESTION_MODES.get(m)  # unknown names raise, listing the choices
    for lang in ask if "title" in modes else ():
        PARALLEL_TEMPLATES.get(lang)
    problems = []
    if not ask or answer in ask:
        problems.append(Problem("ask", f"give languages to ask in other than the answer "
                                       f"language {answer!r}, got {list(ask)}"))
    docs = {lang: Path(p) for lang, p in docs_by_language.items()}
    need = [answer, *(ask if _NEEDS_TEXT & set(modes) else ())]
    for lang in need:
        if lang not in docs or not docs[lang].is_file():
            problems.append(Problem(f"document {lang}", f"no readable document for {lang!r}; "
                                    f"given: {', '.join(map(str, docs.values())) or '(none)'}"))
    tsv = {lang: Path(p) for lang, p in (pages_tsv or {}).items()}
    for lang in [answer, *ask]:
        if lang not in tsv and lang in docs:
            tsv[lang] = docs[lang].with_name(docs[lang].stem + ".pages.tsv")
        if lang not in tsv or not tsv[lang].is_file():
            problems.append(Problem(f"pages table {lang}", f"missing {tsv.get(lang, '(none)')}"))
    if problems:
        raise ValidationError(problems, "cannot derive gold set")
    return docs, tsv, need[1:]


@dataclass(frozen=True)
class ParallelOptions:
    """How :func:`parallel` derives a gold set: the ``answer`` language, the page tables,
    the question ``modes``, the sample (``max_items``, ``seed``) and the document's facts."""

    answer: str = "en"
    pages_tsv: Mapping[str, str | Path] | None = None
    modes: Sequence[str] = ("title",)
    max_items: int | None = None
    seed: int = 0
    doc_id: str | None = None
    game: str | None = None
    edition: str = "1"
    kind: str = "rulebook"
    name: str | None = None


def parallel(docs_by_language: Mapping[str, str | Path], ask: Sequence[str], out: str | Path,
             options: ParallelOptions | None = None, **changes: Any) -> Derivation:
    """Write a cross-language gold set over the ``answer`` document (module docstring);
    ``options`` (default :class:`ParallelOptions`), keyword ``changes`` override its fields.

    ``pages_tsv`` maps a language to its table; a language not in it uses the
    ``<stem>.pages.tsv`` beside its document. ``max_items`` bounds the sampled
    items; each is asked in every ``ask`` language and mode. ``doc_id`` and
    ``game`` default to the answer document's stem, ``name`` to the output's stem.
    """
    o = replace(options or ParallelOptions(), **changes)
    answer, pages_tsv, modes, max_items, seed = o.answer, o.pages_tsv, o.modes, o.max_items, o.seed
    doc_id, game, edition, kind, name = o.doc_id, o.game, o.edition, o.kind, o.name
    out = Path(out)
    docs, tsv, read = _parallel_inputs(docs_by_language, ask, answer, pages_tsv, modes)
    tables = {lang: {p.key: p for p in read_pages_tsv(tsv[lang])} for lang in [answer, *ask]}
    texts = {lang: _page_texts(lang, docs[lang]) for lang in read}
    n_answer = count_pages(DocumentSpec("parallel", str(docs[answer]), kind, "-", "-", answer))
    bad = [p for p in tables[answer].values() if p.page > n_answer]
    if bad:
        raise ValidationError([Problem(str(tsv[answer]), f"page {p.page} ({p.key}) is beyond "
                                       f"the document's {n_answer} pages") for p in bad],
                              "cannot derive gold set")
    skipped: Counter[str] = Counter()
    ordered = sorted(tables[answer].values(), key=lambda p: p.page)
    items = [p for p in ordered if all(p.key in tables[lang] for lang in ask)]
    skipped["item missing in an asking language"] += len(ordered) - len(items)
    chosen = [items[i] for i in sample_indices(len(items), max_items, seed)]
    doc_id = doc_id or slug(docs[answer].stem)
    questions = []
    for lang in ask:
        for m in modes:
            make = QUESTION_MODES.get(m)
            # every item's question is made, so that one shared by two items is seen
            made = {p.key: make(tables[lang][p.key], lang,
                                texts.get(lang, {}).get(tables[lang][p.key].page)) for p in items}
            counts = Counter(fold(t) for t in made.values() if t)
            for target in chosen:
                text = made[target.key]
                if not text:
                    skipped[f"{m}: no question text"] += 1
                elif counts[fold(text)] > 1:
                    skipped[f"{m}: same question for several items"] += 1
                else:
                    questions.append(DraftQuestion(
                        f"{lang}-{m}-p{target.page:03d}", text, lang,
                        ((page_key(doc_id, target.page),),), ("parallel", f"mode-{m}",
                                                           f"source-{lang}")))
    if not questions:
        raise ValidationError([Problem(str(out), f"no question could be made ({dict(skipped)})")],
                              "cannot derive gold set")
    desc = (f"Derived from parallel texts: {len(chosen)} of {len(items)} items asked in "
            f"{', '.join(ask)} ({', '.join(modes)}; seed {seed}); each expects the page of the "
            f"{answer} document.")
    header = ("Derived gold set (rulegauge goldset parallel).\n"
              "Generated from third-party text: do not commit it.")
    doc = document_entry(doc_id, docs[answer], kind, game or docs[answer].stem, edition, answer, None)
    path = write_goldset(out, name or out.stem, desc, [doc], questions, derived=True,
                         header=header)
    load_goldset(path, allow_outside=True)  # the caller named the documents
    return Derivation(path, len(questions), len(chosen) * len(ask) * len(modes),
                      tuple(sorted((k, v) for k, v in skipped.items() if v)))
