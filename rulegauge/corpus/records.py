"""Corpus records: documents, pages and chunks, and the corpus content hash.

A :class:`Corpus` is what loaders (``rulegauge.corpus.loaders``) and chunkers
(``rulegauge.corpus.chunking``) produce and every arm reads. Chunks never cross a page.

Ids
---
* ``doc_id`` comes from the gold set (``sh-rules``).
* A page is referred to as ``"{doc_id}#{page}"`` with a 1-based physical page.
* ``chunk_id`` is ``"{doc_id}#p{page:04d}.c{index:03d}"`` so that string order
  equals (document, page, position) order; it is the tie-break key of every ranking.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from functools import cached_property

from rulegauge.corpus.chunk_columns import ChunkColumns

DOC_KINDS = ("rulebook", "errata", "expansion", "faq", "community")
HEADING_SEP = " · "


PAGE_SEP = "#"


def page_key(doc_id: str, page: int) -> str:
    """Canonical page id ``doc#page`` (1-based physical page)."""
    return f"{doc_id}{PAGE_SEP}{int(page)}"


def page_keys(doc_ids: Iterable[str], pages: Iterable[int]) -> list[str]:
    """:func:`page_key` of each (document, page) pair, e.g. of two table columns."""
    return [page_key(str(d), int(p)) for d, p in zip(doc_ids, pages, strict=True)]


def split_page_key(key: str) -> tuple[str, int]:
    """``doc#page`` -> (doc, page); the page is after the *last* ``#``.

    Raises ``ValueError`` when there is no ``#`` or the page is not an integer."""
    doc, sep, page = key.rpartition(PAGE_SEP)
    if not sep or not doc or not page.isdigit():
        raise ValueError(f"not a page id (doc{PAGE_SEP}page): {key!r}")
    return doc, int(page)


def chunk_key(doc_id: str, page: int, index: int) -> str:
    """Canonical chunk id; sorts in (document, page, position) order."""
    return f"{doc_id}#p{page:04d}.c{index:03d}"


@dataclass(frozen=True)
class Document:
    """A source document (rulebook, errata, expansion, faq or community text)."""

    doc_id: str
    kind: str
    game: str
    edition: str
    language: str
    title: str
    path: str | None = None
    source_sha256: str | None = None


@dataclass(frozen=True)
class Page:
    """One page of normalised text. ``page`` is the 1-based physical page;
    ``label`` the printed page label where the source has one."""

    doc_id: str
    page: int
    text: str
    label: str | None = None
    # (top, *starts): heading path in force at the top of the page, then the paths of headings
    # starting on it (PDF outline / Markdown # / JSONL "heading"); () without any
    outline_headings: tuple[tuple[str, ...], ...] = ()
    # the page's own title when the page is a document of a collection (its record's title,
    # already at the head of ``text``); None: the page's title is its document's
    title: str | None = None

    @property
    def page_id(self) -> str:
        return page_key(self.doc_id, self.page)


@dataclass(frozen=True)
class Chunk:
    """A passage inside one page; ``char_start``/``char_end`` index ``Page.text`` and
    ``text`` is that slice. ``context`` is what the arms search before it: the title of its
    document under chunking ``title = "every"`` (:mod:`rulegauge.corpus.chunking`), else
    empty; :attr:`search_text` is what every arm indexes."""

    chunk_id: str
    doc_id: str
    page: int
    heading_path: tuple[str, ...]
    text: str
    char_start: int
    char_end: int
    page_label: str | None = None
    context: str = ""

    @property
    def page_id(self) -> str:
        return page_key(self.doc_id, self.page)

    @property
    def search_text(self) -> str:
        """The text an arm indexes: ``context``, a blank line and ``text`` (``text`` alone
        without context)."""
        return f"{self.context}\n\n{self.text}" if self.context else self.text

    @property
    def heading(self) -> str:
        return HEADING_SEP.join(self.heading_path)


@dataclass(frozen=True)
class Corpus:
    """Documents, their pages and chunks. Immutable; build with :func:`make_corpus`."""

    documents: tuple[Document, ...]
    pages: tuple[Page, ...]
    chunks: tuple[Chunk, ...]
    chunking: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    @cached_property
    def content_hash(self) -> str:
        """SHA-256 over documents' metadata, every chunk's id, span and text, and
        the chunking options: any change to what arms see changes the hash."""
        h = hashlib.sha256()
        for d in self.documents:
            h.update(json.dumps([d.doc_id, d.kind, d.game, d.edition, d.language, d.title],
                                ensure_ascii=False).encode())
        for c in self.chunks:
            h.update(json.dumps([c.chunk_id, c.char_start, c.char_end, list(c.heading_path),
                                 c.page_label], ensure_ascii=False).encode())
            h.update(c.text.encode("utf-8"))
            if c.context:  # only then: a corpus without context keeps the hash it had
                h.update(b"\0context\0" + c.context.encode("utf-8"))
        h.update(json.dumps(self.chunking, sort_keys=True, default=str).encode())
        return h.hexdigest()

    @cached_property
    def doc_by_id(self) -> dict[str, Document]:
        return {d.doc_id: d for d in self.documents}

    @cached_property
    def chunk_by_id(self) -> dict[str, Chunk]:
        return {c.chunk_id: c for c in self.chunks}

    @cached_property
    def chunk_columns(self) -> ChunkColumns:
        """Every chunk's id, document and page as arrays, in ``chunks`` order
        (:mod:`rulegauge.corpus.chunk_columns`)."""
        return ChunkColumns.of(self.chunks)

    @cached_property
    def page_count(self) -> dict[str, int]:
        """Highest physical page per document."""
        out: dict[str, int] = {}
        for p in self.pages:
            out[p.doc_id] = max(out.get(p.doc_id, 0), p.page)
        return out

    def document(self, doc_id: str) -> Document:
        return self.doc_by_id[doc_id]


def make_corpus(documents: Iterable[Document], pages: Iterable[Page], chunks: Iterable[Chunk],
                chunking: dict[str, object] | None = None) -> Corpus:
    """Build a corpus with chunks in canonical id order (documents keep their order)."""
    docs = tuple(documents)
    pgs = tuple(sorted(pages, key=lambda p: (p.doc_id, p.page)))
    chs = tuple(sorted(chunks, key=lambda c: c.chunk_id))
    ids = [c.chunk_id for c in chs]
    if len(set(ids)) != len(ids):
        raise ValueError("duplicate chunk ids in corpus")
    return Corpus(docs, pgs, chs, dict(chunking or {}))


def document_dict(d: Document) -> dict[str, object]:
    return asdict(d)


@dataclass(frozen=True)
class DocumentSpec:
    """A gold set's document entry; ``path`` is resolved to an absolute path."""

    doc_id: str
    path: str
    kind: str
    game: str
    edition: str
    language: str
    title: str = ""
    options: tuple[tuple[str, object], ...] = ()
