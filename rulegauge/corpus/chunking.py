"""Chunkers: pages -> passages with heading paths and character spans.

A chunk never crosses a page; its text is exactly ``page.text[char_start:char_end]``
(both edges stripped of whitespace) and its id is
:func:`rulegauge.corpus.records.chunk_key` with a 0-based index in page order. Empty pages
give no chunks (they stay in the corpus as pages).

Methods (:data:`CHUNKERS`, chosen by ``ChunkingOptions.method``)
-----------------------------------------------------------------
``heading`` (default)
    One chunk per heading section of a page. A section shorter than
    ``min_chars`` (a bare heading line, a running header above the first
    heading) is merged into the next section of the page, or the previous one
    when it is last; a section longer than ``max_chars`` is split like ``size``.
``page``
    One chunk per non-empty page (``max_chars`` is ignored).
``size``
    Windows of at most ``max_chars`` characters, consecutive windows sharing
    about ``overlap_chars``; pieces are balanced in length and end, by
    preference, at a paragraph break, a sentence end, a line break or a space
    (a hard cut only inside a single over-long word).

Titles (``ChunkingOptions.title``)
----------------------------------
``first`` (default)
    A title is searched where the text has it: a collection record's title opens its
    page (:mod:`rulegauge.corpus.collection`), so it is in that document's first chunk
    only; a PDF's or text file's title is in its text, if anywhere.
``every``
    Each chunk's ``context`` (what the arms search before its text,
    :attr:`rulegauge.corpus.records.Chunk.search_text`) is the title of its document: a
    collection page's own title (``Page.title``), else the gold set's document title; a
    chunk whose text already begins with that title gets none (the first chunk of a
    collection record). The chunk's ``text`` and span are unchanged, so the chunk still
    quotes its page exactly. This is the passage protocol of published runs that
    prepend the title to every passage of a document.

Heading paths
-------------
Per document, from the loader's ``Page.outline_headings`` (PDF outline,
Markdown ``#`` lines, JSONL ``"heading"``; located in the text by
:func:`rulegauge.corpus.outline.sections`) when any page has them, else detected from
the text by :mod:`rulegauge.corpus.headings` (``detect_headings``), else ``()``. Paths
carry over pages: a page without a heading inherits the last one. A chunk's
path is the path covering most of its characters (ties: the earliest).

Reference: separator-priority splitting as in LangChain's
``RecursiveCharacterTextSplitter``; docs/ingest.md for measured chunk sizes.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass

from rulegauge.core.errors import ConfigError, Problem, ValidationError
from rulegauge.core.registry import Registry
from rulegauge.corpus.boilerplate import BoilerplateOptions, BoilerplateReport, clean_pages
from rulegauge.corpus.headings import detect_headings
from rulegauge.corpus.loaders import load_document
from rulegauge.corpus.outline import Boundary, sections
from rulegauge.corpus.page_cache import PageCache
from rulegauge.corpus.records import Chunk, Corpus, Document, DocumentSpec, Page, chunk_key, make_corpus

Span = tuple[int, int]


@dataclass(frozen=True)
class ChunkingOptions:
    """How pages become chunks (recorded in ``Corpus.chunking`` and the manifest).

    ``detect`` turns heading detection on for documents without outline or
    markup headings.
    """

    method: str = "heading"
    max_chars: int = 1200
    overlap_chars: int = 150
    min_chars: int = 80
    detect: bool = True
    title: str = "first"

    def __post_init__(self) -> None:
        problems = []
        if self.title not in TITLES:
            problems.append(f"unknown title handling {self.title!r}; choose one of: {', '.join(TITLES)}")
        if self.method not in CHUNKERS:
            problems.append(f"unknown chunking method {self.method!r}; choose one of: "
                            f"{', '.join(CHUNKERS.names())}")
        if self.max_chars < 50:
            problems.append(f"max_chars must be >= 50, got {self.max_chars}")
        if not 0 <= self.overlap_chars <= self.max_chars // 2:
            problems.append(f"overlap_chars must be in [0, max_chars/2], got {self.overlap_chars}")
        if not 0 <= self.min_chars < self.max_chars:
            problems.append(f"min_chars must be in [0, max_chars), got {self.min_chars}")
        if problems:
            raise ConfigError("invalid chunking options: " + "; ".join(problems))

    def describe(self) -> dict[str, object]:
        """The options as recorded; ``title`` only when not the default (so corpora
        chunked as before keep their content hash)."""
        out = asdict(self)
        if self.title == "first":
            del out["title"]
        return out


TITLES = ("first", "every")
"""Title handling choices (module docstring, "Titles")."""


Chunker = Callable[[str, Sequence[Boundary], ChunkingOptions], list[Span]]
CHUNKERS: Registry[Chunker] = Registry("chunking method")


def _strip(text: str, s: int, e: int) -> Span:
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    return s, e


_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"[.!?…؟。][\"'”’»)\]]*\s+"),
           re.compile(r"\n"), re.compile(r"\s+"))


def _break_at(text: str, lo: int, hi: int, target: int) -> int:
    """Start of the next piece: after the best separator in ``text[lo:hi]`` closest
    to ``target`` (separator kinds tried in :data:`_BREAKS` order); ``hi`` if none."""
    for rx in _BREAKS:
        ends = [m.end() for m in rx.finditer(text, lo, hi)]
        if ends:
            return min(ends, key=lambda x: (abs(x - target), x))
    return hi


def _overlap_start(text: str, lo: int, brk: int) -> int:
    """Start of the next piece: the earliest separator end in ``text[lo:brk]``
    (kinds in :data:`_BREAKS` order), so the overlap is as long as allowed and
    starts at a paragraph, sentence, line or word; ``brk`` if there is none."""
    for rx in _BREAKS:
        m = rx.search(text, lo, brk)
        if m is not None and m.end() < brk:
            return m.end()
    return brk


def split_span(text: str, start: int, end: int, max_chars: int, overlap: int) -> list[Span]:
    """Split ``text[start:end]`` into stripped pieces of at most ``max_chars``.

    Pieces are balanced: with n = ceil((L - overlap) / (max_chars - overlap))
    pieces, each aims at (L - overlap) / n + overlap characters, ending at the
    best separator near that target. The next piece starts at most ``overlap``
    characters before the previous end (:func:`_overlap_start`).
    """
    s, e = _strip(text, start, end)
    out: list[Span] = []
    while s < e:
        if e - s <= max_chars:
            out.append((s, e))
            break
        n = math.ceil((e - s - overlap) / (max_chars - overlap))
        target = s + min(max_chars, math.ceil((e - s - overlap) / n) + overlap)
        brk = _break_at(text, s + max_chars // 2, s + max_chars, target)
        out.append(_strip(text, s, brk))
        nxt = _overlap_start(text, brk - overlap, brk) if overlap else brk
        s, e = _strip(text, max(nxt, s + 1), e)
    return [p for p in out if p[0] < p[1]]


@CHUNKERS.register("heading")
def _heading(text: str, bounds: Sequence[Boundary], opt: ChunkingOptions) -> list[Span]:
    cuts = [b.start for b in bounds if 0 < b.start < len(text)]
    edges = [0, *cuts, len(text)]
    spans = [_strip(text, a, b) for a, b in itertools.pairwise(edges)]
    spans = [sp for sp in spans if sp[0] < sp[1]]
    i = 0
    while len(spans) > 1 and i < len(spans):
        s, e = spans[i]
        if e - s >= opt.min_chars:
            i += 1
            continue
        if i + 1 < len(spans):
            spans[i : i + 2] = [(s, spans[i + 1][1])]
        else:
            spans[i - 1 : i + 1] = [(spans[i - 1][0], e)]
            i -= 1
    out: list[Span] = []
    for s, e in spans:
        out += split_span(text, s, e, opt.max_chars, opt.overlap_chars)
    return out


@CHUNKERS.register("page")
def _page(text: str, bounds: Sequence[Boundary], opt: ChunkingOptions) -> list[Span]:
    s, e = _strip(text, 0, len(text))
    return [(s, e)] if s < e else []


@CHUNKERS.register("size")
def _size(text: str, bounds: Sequence[Boundary], opt: ChunkingOptions) -> list[Span]:
    return split_span(text, 0, len(text), opt.max_chars, opt.overlap_chars)


DEFAULT_CHUNKING = ChunkingOptions()
"""Rulebook defaults: heading sections of at most 1,200 characters."""


def dominant_path(bounds: Sequence[Boundary], start: int, end: int) -> tuple[str, ...]:
    """Heading path covering most of ``[start, end)`` (ties: the earliest boundary)."""
    best: tuple[int, tuple[str, ...]] = (-1, bounds[0].path if bounds else ())
    for i, b in enumerate(bounds):
        stop = bounds[i + 1].start if i + 1 < len(bounds) else max(end, b.start)
        cover = min(end, stop) - max(start, b.start)
        if cover > best[0]:
            best = (cover, b.path)
    return best[1]


def page_boundaries(pages: Sequence[Page], *, detect: bool = True) -> tuple[str, list[list[Boundary]]]:
    """Heading source (``outline``, ``detected`` or ``none``) and each page's boundaries."""
    if any(p.outline_headings for p in pages):
        return "outline", [sections(p.text, p.outline_headings) for p in pages]
    if detect:
        found = detect_headings([p.text for p in pages])
        if any(len(b) > 1 or b[0].path for b in found):
            return "detected", found
    return "none", [[Boundary(0, ())] for _ in pages]


def chunk_pages(document: Document, pages: Sequence[Page],
                options: ChunkingOptions | None = None) -> list[Chunk]:
    """Chunk one document's pages (see the module docstring for the rules)."""
    opt = options or ChunkingOptions()
    chunker = CHUNKERS.get(opt.method)
    _, bounds = page_boundaries(pages, detect=opt.detect)
    out: list[Chunk] = []
    for page, page_bounds in zip(pages, bounds, strict=True):
        title = (page.title or document.title).strip() if opt.title == "every" else ""
        for i, (s, e) in enumerate(chunker(page.text, page_bounds, opt)):
            text = page.text[s:e]
            out.append(Chunk(chunk_key(document.doc_id, page.page, i), document.doc_id,
                             page.page, dominant_path(page_bounds, s, e), text,
                             s, e, page.label, "" if text.startswith(title) else title))
    return out


@dataclass(frozen=True)
class BuiltDocument:
    """One document loaded, optionally cleaned, and chunked."""

    document: Document
    pages: tuple[Page, ...]
    chunks: tuple[Chunk, ...]
    boilerplate: BoilerplateReport | None = None


def build_document(spec: DocumentSpec, options: ChunkingOptions | None = None,
                   boilerplate: BoilerplateOptions | None = None,
                   page_cache: PageCache | None = None) -> BuiltDocument:
    """Load ``spec`` (through ``page_cache``, a ``PageCache``, when given), apply the
    boilerplate filter when given, and chunk it."""
    document, pages = load_document(spec, page_cache)
    report = None
    if boilerplate is not None:
        pages, report = clean_pages(pages, boilerplate, spec.doc_id)
    chunks = chunk_pages(document, pages, options)
    return BuiltDocument(document, tuple(pages), tuple(chunks), report)


def corpus_settings(options: ChunkingOptions,
                    boilerplate: BoilerplateOptions | None) -> dict[str, object]:
    """What goes into ``Corpus.chunking`` (and so the content hash and manifest)."""
    return {**options.describe(),
            "boilerplate": boilerplate.describe() if boilerplate is not None else None}


def build_corpus(specs: Sequence[DocumentSpec], options: ChunkingOptions = DEFAULT_CHUNKING,
                 boilerplate: BoilerplateOptions | None = None,
                 page_cache: PageCache | None = None,
                 advance: Callable[[int], object] | None = None) -> Corpus:
    """Load and chunk every document into a :class:`Corpus` (page texts through
    ``page_cache``, a :class:`rulegauge.corpus.page_cache.PageCache`, when given);
    ``advance(1)``, when given, is called after each document (progress).

    Problems of all documents (duplicate ids, unreadable files) are raised
    together in one :class:`ValidationError`.
    """
    opt = options
    problems: list[Problem] = []
    seen: set[str] = set()
    built: list[BuiltDocument] = []
    for spec in specs:
        if spec.doc_id in seen:
            problems.append(Problem(spec.path, f"duplicate document id {spec.doc_id!r}"))
            continue
        seen.add(spec.doc_id)
        try:
            built.append(build_document(spec, opt, boilerplate, page_cache))
        except ValidationError as exc:
            problems += exc.problems
        if advance is not None:
            advance(1)
    if problems:
        raise ValidationError(problems, summary="cannot build corpus")
    return make_corpus([b.document for b in built], [p for b in built for p in b.pages],
                       [c for b in built for c in b.chunks], corpus_settings(opt, boilerplate))
