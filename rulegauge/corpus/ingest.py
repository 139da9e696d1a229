"""Ingestion report: what loading and chunking made of each document, and warnings.

For every document: pages, empty pages, characters, where its headings come
from (``outline``: PDF bookmarks or Markdown/JSONL markup; ``detected``:
:mod:`rulegauge.corpus.headings`; ``none``), how many headings there are and, for a PDF
outline, how many bookmark titles were found in their page's text; chunk count and size
statistics; what the boilerplate filter removed; and warnings.

Page warnings: :mod:`rulegauge.corpus.page_checks` (:data:`PAGE_CHECKS`, thresholds in
:class:`IngestThresholds`).

Document warnings (page ``None``): ``no_headings`` (a multi-page document with
none), ``no_chunks``.

Size statistics use the lower median and nearest-rank 90th percentile
(``ceil(0.9 n)``-th smallest), so every value is an actual chunk length.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.text import guess_language
from rulegauge.corpus.boilerplate import BoilerplateOptions, BoilerplateReport
from rulegauge.corpus.chunking import (
    DEFAULT_CHUNKING,
    BuiltDocument,
    ChunkingOptions,
    build_document,
    corpus_settings,
    page_boundaries,
)
from rulegauge.corpus.headings import find_headings
from rulegauge.corpus.loaders import format_of
from rulegauge.corpus.outline import locate
from rulegauge.corpus.page_cache import PageCache
from rulegauge.corpus.page_checks import PAGE_CHECKS, IngestThresholds
from rulegauge.corpus.records import DocumentSpec


@dataclass(frozen=True)
class IngestWarning:
    doc_id: str
    page: int | None
    code: str
    message: str


@dataclass(frozen=True)
class SizeStats:
    """Lengths in characters: n, min, lower median, nearest-rank p90, max, mean.
    All zero when n is 0."""

    n: int
    min: int
    median: int
    p90: int
    max: int
    mean: float

    @staticmethod
    def of(values: Sequence[int]) -> SizeStats:
        v = sorted(values)
        if not v:
            return SizeStats(0, 0, 0, 0, 0, 0.0)
        return SizeStats(len(v), v[0], v[(len(v) - 1) // 2], v[math.ceil(0.9 * len(v)) - 1],
                         v[-1], sum(v) / len(v))


@dataclass(frozen=True)
class DocumentReport:
    doc_id: str
    path: str
    format: str
    title: str
    kind: str
    language: str
    pages: int
    empty_pages: int
    chars: int
    heading_source: str
    headings: int
    headings_located: int | None
    heading_paths: int
    chunks: int
    chunk_chars: SizeStats
    page_chars: SizeStats
    warnings: tuple[IngestWarning, ...]
    boilerplate: BoilerplateReport | None


@dataclass(frozen=True)
class IngestReport:
    documents: tuple[DocumentReport, ...]
    settings: dict[str, object]

    def to_dict(self) -> dict[str, object]:
        return {"settings": self.settings, "documents": [asdict(d) for d in self.documents]}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=2)


_SLUG = re.compile(r"[^0-9A-Za-z._-]+")


def spec_from_path(path: str | Path, language: str | None = None,
                   doc_id: str | None = None) -> DocumentSpec:
    """A ``rulebook`` spec for a bare file: id and game from the file stem;
    language ``und`` (guessed after loading) unless given."""
    p = Path(path)
    format_of(p)  # unsupported suffixes raise here, listing the choices
    slug = _SLUG.sub("-", p.stem).strip("-") or "doc"
    return DocumentSpec(doc_id or slug, str(p.resolve()), "rulebook", p.stem, "", language or "und")


def _specs(sources: Sequence[DocumentSpec | str | Path],
           language: str | None) -> list[DocumentSpec]:
    out: list[DocumentSpec] = []
    used: set[str] = set()
    for src in sources:
        spec = src if isinstance(src, DocumentSpec) else spec_from_path(src, language)
        base, n = spec.doc_id, 1
        while spec.doc_id in used:
            n += 1
            spec = replace(spec, doc_id=f"{base}-{n}")
        used.add(spec.doc_id)
        out.append(spec)
    return out


def document_report(spec: DocumentSpec, built: BuiltDocument, options: ChunkingOptions,
                    thresholds: IngestThresholds) -> DocumentReport:
    """The report of one built document (see the module docstring)."""
    pages, doc = built.pages, built.document
    source, _ = page_boundaries(pages, detect=options.detect)
    fmt = format_of(spec.path, dict(spec.options))
    located: int | None = None
    headings = 0
    if source == "outline":
        headings = sum(max(0, len(p.outline_headings) - 1) for p in pages)
        if fmt == "pdf":
            located = sum(h is not None for p in pages
                          for h in locate(p.text, [x[-1] for x in p.outline_headings[1:] if x]))
    elif source == "detected":
        headings = sum(len(find_headings(p.text)) for p in pages)
    shares = dict(built.boilerplate.page_share) if built.boilerplate else {}
    warnings = [IngestWarning(doc.doc_id, p.page, code, msg)
                for p in pages for code, check in PAGE_CHECKS.items()
                if (msg := check(p, thresholds, shares.get(p.page, 0.0))) is not None]
    if source == "none" and len(pages) > 1:
        warnings.append(IngestWarning(doc.doc_id, None, "no_headings",
                                      "no outline, markup or detectable headings"))
    if not built.chunks:
        warnings.append(IngestWarning(doc.doc_id, None, "no_chunks", "the document gave no chunks"))
    return DocumentReport(
        doc.doc_id, spec.path, fmt, doc.title, doc.kind,
        doc.language, len(pages), sum(not p.text.strip() for p in pages),
        sum(len(p.text) for p in pages), source, headings, located,
        len({c.heading_path for c in built.chunks}), len(built.chunks),
        SizeStats.of([len(c.text) for c in built.chunks]),
        SizeStats.of([len(p.text) for p in pages]), tuple(warnings), built.boilerplate)


def _build_with_progress(spec: DocumentSpec, options: ChunkingOptions,
                         boilerplate: BoilerplateOptions | None,
                         progress: Callable[[str, int], Any] | None, label: str,
                         page_cache: PageCache | None = None) -> Any:
    if progress is None:
        return build_document(spec, options, boilerplate, page_cache)
    from rulegauge.corpus.formats import PAGE_DONE
    from rulegauge.corpus.loaders import count_pages

    with progress(label, count_pages(spec)) as advance:
        token = PAGE_DONE.set(advance)
        try:
            return build_document(spec, options, boilerplate, page_cache)
        finally:
            PAGE_DONE.reset(token)


def ingest_report(sources: Sequence[DocumentSpec | str | Path],
                  options: ChunkingOptions = DEFAULT_CHUNKING,
                  boilerplate: BoilerplateOptions | None = None,
                  language: str | None = None,
                  thresholds: IngestThresholds | None = None,
                  progress: Callable[[str, int], Any] | None = None,
                  page_cache: PageCache | None = None) -> IngestReport:
    """Load, clean (when ``boilerplate`` is given) and chunk every source; report.

    ``progress(description, total)``, when given, is a context manager factory (as
    ``rulegauge.cli.progress.rich_progress`` yields) opened once per document with its
    page count and advanced per page read (:data:`rulegauge.corpus.formats.PAGE_DONE`).

    Sources are gold-set document specs or bare paths (:func:`spec_from_path`;
    a bare path's language is ``language`` or guessed from its text with
    :func:`rulegauge.core.text.guess_language`). Problems of all documents are raised
    together in one :class:`ValidationError`. ``page_cache``, when given, serves and stores the
    page texts (:class:`rulegauge.corpus.page_cache.PageCache`: the same texts, a load instead
    of a parse on a hit).
    """
    th = thresholds or IngestThresholds()
    reports: list[DocumentReport] = []
    problems: list[Problem] = []
    specs = list(_specs(sources, language))
    for i, spec in enumerate(specs, start=1):
        try:
            built = _build_with_progress(spec, options, boilerplate, progress,
                                         f"[{i}/{len(specs)}] {spec.doc_id}", page_cache)
        except ValidationError as exc:
            problems += exc.problems
            continue
        if built.document.language == "und":
            guessed = guess_language("\n".join(p.text for p in built.pages[:50]))
            built = replace(built, document=replace(built.document, language=guessed))
        reports.append(document_report(spec, built, options, th))
    if problems:
        raise ValidationError(problems, summary="cannot ingest")
    return IngestReport(tuple(reports), {**corpus_settings(options, boilerplate),
                                         "thresholds": asdict(th)})


def render(report: IngestReport, console: Console | None = None) -> None:
    """Print ``report`` as rich tables (documents, warnings, boilerplate removed)."""
    con = console or Console()
    docs = Table(title="documents")
    for col in ("doc", "format", "lang", "pages", "empty", "chars", "headings", "chunks",
                "chunk chars min/med/p90/max", "warnings"):
        docs.add_column(col, no_wrap=col == "doc",
                        justify="left" if col in ("doc", "format", "lang", "headings") else "right")
    for d in report.documents:
        found = f"{d.headings} {d.heading_source}" + (
            f" ({d.headings_located} located)" if d.headings_located is not None else "")
        s = d.chunk_chars
        docs.add_row(d.doc_id, d.format, d.language, str(d.pages), str(d.empty_pages),
                     str(d.chars), found, str(d.chunks), f"{s.min}/{s.median}/{s.p90}/{s.max}",
                     str(len(d.warnings)))
    con.print(docs)
    warn = Table(title="warnings")
    for col in ("doc", "page", "code", "detail"):
        warn.add_column(col)
    for d in report.documents:
        for w in d.warnings:
            warn.add_row(w.doc_id, "" if w.page is None else str(w.page), w.code, w.message)
    if warn.row_count:
        con.print(warn)
    removed = Table(title="boilerplate removed")
    for col in ("doc", "rule", "lines", "examples"):
        removed.add_column(col)
    for d in report.documents:
        if d.boilerplate is None:
            continue
        for reason, count in d.boilerplate.by_reason:
            ex = [t for r, t in d.boilerplate.examples if r == reason]
            removed.add_row(d.doc_id, reason, str(count), " | ".join(x[:60] for x in ex))
    if removed.row_count:
        con.print(removed)
