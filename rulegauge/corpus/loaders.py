"""Document loaders: PDF, plain text, Markdown and JSONL files -> normalised pages.

Loaders register by format name in :data:`LOADERS`. The format is the
``DocumentSpec`` option ``format`` when given, else inferred from the file
suffix (:data:`SUFFIXES`). Every page's text goes through
:func:`rulegauge.core.text.normalise` here and nowhere else.

Formats
-------
``pdf``
    pypdf text extraction; page *i* is physical page *i* (1-based). Labels are
    the printed page labels of the PDF's ``/PageLabels`` tree (``"iv"``, ``"12"``)
    and ``None`` when the PDF has none (a viewer then shows the physical
    number). Outline bookmarks fill ``Page.outline_headings``
    (:mod:`rulegauge.corpus.outline`). Right-to-left text, stored in visual order in
    PDFs, comes back in logical order from pypdf.
``text``
    UTF-8 text, pages separated by form feeds (U+000C). Labels are ``None``.
``markdown``
    UTF-8 text, pages separated by form feeds or by lines holding only
    ``<!-- pagebreak -->`` (surrounding spaces allowed). ATX headings (``#`` ..
    ``######``) outside fenced code become plain lines (markers removed) and
    fill ``outline_headings``.
``jsonl``
    One JSON object per line: ``{"page": int, "text": str}`` plus optional
    ``"label"`` (str) and ``"heading"`` (a string, or a list of strings for a
    path) that starts on that page. Blank lines are skipped; physical pages run
    from 1 to the highest ``page`` and pages absent from the file are empty.
    Page numbers above :data:`MAX_PAGES` and strings holding lone surrogates
    (``"\ud800"``, which no UTF-8 file can store) are refused, naming the line.
``collection``
    A collection in one JSONL file (BEIR's ``corpus.jsonl``: ``_id``, ``title``,
    ``text``), one page per document, labelled by ``_id`` (:mod:`rulegauge.corpus.collection`);
    only by the option ``format: collection``.

A form feed that ends a file (or a page break followed only by whitespace)
terminates the last page instead of starting an empty one. Problems (missing
file, undecodable bytes, bad JSONL lines) raise
:class:`rulegauge.core.errors.ValidationError` naming the file and line, all at once.
PDFs encrypted with an empty user password (owner-password "protection", RC4 or
AES, decrypted with the ``cryptography`` package) are read; a PDF that needs a
password to open is refused, naming the file.

Reference: ISO 32000-1:2008 12.4.2 (page labels), 7.6 (encryption); CommonMark
0.31, 4.2 (ATX headings).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rulegauge.core.digest import file_sha256
from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import iter_records
from rulegauge.core.limits import MAX_DOCUMENT_BYTES, size_problem
from rulegauge.core.registry import Registry
from rulegauge.core.text import normalise
from rulegauge.corpus.collection import CollectionLoader
from rulegauge.corpus.formats import (
    MAX_PAGES,
    Loaded,
    Loader,
    MarkdownLoader,
    PdfLoader,
    TextLoader,
    fail,
    pages_done,
    read_text,
)
from rulegauge.corpus.outline import OutlineEntry, clean_title, page_headings
from rulegauge.corpus.records import Document, DocumentSpec, Page

LOADERS: Registry[Loader] = Registry("loader")

LOADER_OPTIONS = ("format",)
"""Document options a loader reads (gold-set keys beyond the document fields)."""


_JSONL_KEYS = ("page", "text", "label", "heading")


class JsonlLoader:
    suffixes: tuple[str, ...] = (".jsonl",)

    def _records(self, path: Path) -> dict[int, dict[str, Any]]:
        records: dict[int, dict[str, Any]] = {}
        problems: list[Problem] = []
        for rec in iter_records(read_text(path).splitlines(), path, problems):
            where, obj = rec.where, rec.record
            found = _check_record(obj)
            problems += [Problem(where, msg) for msg in found]
            if found:
                continue
            if obj["page"] in records:
                problems.append(Problem(where, f"page {obj['page']} appears twice"))
                continue
            records[obj["page"]] = obj
        if problems:
            raise ValidationError(problems, summary="cannot load document")
        return records

    def load(self, path: Path) -> Loaded:
        records = self._records(path)
        n = max(records, default=0)
        texts = tuple(normalise(records.get(p, {}).get("text", "")) for p in range(1, n + 1))
        labels = tuple(records.get(p, {}).get("label") for p in range(1, n + 1))
        entries = []
        for p in sorted(records):
            heading = records[p].get("heading")
            if heading:
                path_ = tuple(clean_title(h) for h in
                              ([heading] if isinstance(heading, str) else heading))
                entries.append(OutlineEntry(path_[-1], path_, p, len(path_) - 1))
        return Loaded(texts, labels, tuple(page_headings(entries, n)))

    def count_pages(self, path: Path) -> int:
        return max(self._records(path), default=0)

    def page_labels(self, path: Path) -> list[str | None]:
        records = self._records(path)
        return [records.get(p, {}).get("label") for p in range(1, max(records, default=0) + 1)]


def not_a_document(path: str | Path) -> str | None:
    """Why a file found while scanning a folder is not a corpus document (None when
    it looks like one): a suffix no loader reads, or a JSONL file whose first record
    is not a page record (``{"page": ..., "text": ...}``). Only the first non-blank
    line is read, so a large unrelated JSONL is skipped cheaply."""
    p = Path(path)
    if p.suffix.lower() not in SUFFIXES:
        return f"suffix {p.suffix!r} is not a document format"
    if SUFFIXES[p.suffix.lower()] != "jsonl":
        return None
    try:
        with p.open("rb") as fh:
            first = next((line for line in fh if line.strip()), b"")
        obj = json.loads(first.decode("utf-8-sig")) if first else None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return "not a JSONL file of pages (first line is not JSON)"
    if not isinstance(obj, dict) or "page" not in obj or "text" not in obj:
        return "not a JSONL file of pages (first record has no 'page' and 'text')"
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")


def _has_surrogate(value: object) -> bool:
    """A lone surrogate code point (U+D800-U+DFFF) in a string or a list of strings
    (one regex scan in C: a per-character Python loop cost seconds at 50k pages)."""
    if isinstance(value, list):
        return any(_has_surrogate(v) for v in value)
    return isinstance(value, str) and _SURROGATE.search(value) is not None


def _check_record(obj: dict[str, Any]) -> list[str]:
    """Problems of one JSONL record (empty when it is valid)."""
    out = [f"unknown key {k!r}; allowed: {', '.join(_JSONL_KEYS)}" for k in obj
           if k not in _JSONL_KEYS]
    page = obj.get("page")
    if isinstance(page, bool) or not isinstance(page, int) or page < 1:
        out.append(f"'page' must be an integer >= 1, got {page!r}")
    elif page > MAX_PAGES:
        out.append(f"'page' {page} is above the highest page number allowed ({MAX_PAGES:,})")
    for key in ("text", "label", "heading"):
        if _has_surrogate(obj.get(key)):
            out.append(f"{key!r} holds a lone surrogate escape (\\ud800-\\udfff): not text "
                       "any UTF-8 file can hold")
    if not isinstance(obj.get("text"), str):
        out.append(f"'text' must be a string, got {obj.get('text')!r}")
    if "label" in obj and not isinstance(obj["label"], str):
        out.append(f"'label' must be a string, got {obj['label']!r}")
    heading = obj.get("heading")
    ok_list = isinstance(heading, list) and all(isinstance(h, str) and h.strip() for h in heading)
    if heading is not None and not (isinstance(heading, str) or ok_list):
        out.append(f"'heading' must be a string or a list of strings, got {heading!r}")
    return out


LOADERS.add("pdf", PdfLoader())
LOADERS.add("text", TextLoader())
LOADERS.add("markdown", MarkdownLoader())
LOADERS.add("jsonl", JsonlLoader())
LOADERS.add("collection", CollectionLoader())

SUFFIXES: dict[str, str] = {s: name for name, ld in LOADERS.items() for s in ld.suffixes}
"""File suffix (lower case, with the dot) -> loader name."""


def format_of(path: str | Path, options: Mapping[str, object] | None = None) -> str:
    """Loader name for ``path``: the ``format`` option, else the suffix."""
    fmt = (options or {}).get("format")
    if fmt is not None:
        LOADERS.get(str(fmt))  # unknown format names raise, listing the choices
        return str(fmt)
    suffix = Path(path).suffix.lower()
    if suffix not in SUFFIXES:
        raise fail(str(path), f"cannot infer the format from suffix {suffix!r}; use one of "
                    f"{', '.join(sorted(SUFFIXES))} or the document option 'format' "
                    f"({', '.join(LOADERS.names())})")
    return SUFFIXES[suffix]


def _resolve(spec: DocumentSpec) -> tuple[Loader, Path]:
    path = Path(spec.path)
    loader = LOADERS.get(format_of(path, dict(spec.options)))
    if not path.is_file():
        raise fail(f"{spec.path}", f"document {spec.doc_id}: file not found")
    too_big = size_problem(path, MAX_DOCUMENT_BYTES, "document")
    if too_big:
        raise fail(f"{spec.path}", f"document {spec.doc_id}: " + too_big.split(": ", 1)[1])
    return loader, path


def load_document(spec: DocumentSpec, pages: Any = None) -> tuple[Document, list[Page]]:
    """Load ``spec`` into a :class:`Document` and its pages (physical pages 1..n).

    ``Document.title`` is ``spec.title``, else the PDF's metadata title, else the
    file stem; ``source_sha256`` is the SHA-256 of the file's bytes. ``pages``: an
    optional :class:`rulegauge.corpus.page_cache.PageCache` serving repeated loads.
    """
    loader, path = _resolve(spec)
    sha = file_sha256(path)
    parsed: list[bool] = []  # whether the loader ran: a PDF loader reports its own pages as it goes

    def parse() -> Loaded:
        parsed.append(True)
        return loader.load(path)

    loaded = (parse() if pages is None else
              pages.load(format_of(path, dict(spec.options)), path, sha, dict(spec.options), parse))
    if not (parsed and isinstance(loader, PdfLoader)):  # text formats and cached pages load at once
        pages_done(len(loaded.texts))
    doc = Document(spec.doc_id, spec.kind, spec.game, spec.edition, spec.language,
                   spec.title or loaded.title or path.stem, spec.path, sha)
    titles = loaded.page_titles or (None,) * len(loaded.texts)
    pages = [Page(spec.doc_id, i, text, label, headings, title)
             for i, (text, label, headings, title) in
             enumerate(zip(loaded.texts, loaded.labels, loaded.headings, titles, strict=True), start=1)]
    return doc, pages


def count_pages(spec: DocumentSpec) -> int:
    """Number of physical pages of ``spec`` (PDFs: without extracting text)."""
    loader, path = _resolve(spec)
    return loader.count_pages(path)


def labels_are_ids(spec: DocumentSpec) -> bool:
    """True when ``spec``'s loader labels its pages with document ids of a collection
    (``labels_are_ids`` on the loader: the ``collection`` format), not printed page labels."""
    return bool(getattr(LOADERS.get(format_of(Path(spec.path), dict(spec.options))), "labels_are_ids", False))


def page_labels(spec: DocumentSpec) -> list[str | None]:
    """Printed label of each physical page (index i = page i+1); ``None`` where absent."""
    loader, path = _resolve(spec)
    return loader.page_labels(path)
