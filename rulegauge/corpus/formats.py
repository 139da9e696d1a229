"""The page formats of the document loaders: PDF, plain text and Markdown, and what every
loader returns (:class:`Loaded`, one text per physical page).

The registry, format inference and JSONL pages are in :mod:`rulegauge.corpus.loaders`
(formats and edge cases: its docstring). :data:`PAGE_DONE` is the progress hook loaders
call with the number of pages just read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from pypdf import PdfReader
from pypdf.errors import DependencyError, FileNotDecryptedError, PyPdfError

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.limits import MAX_TEXT_DOCUMENT_BYTES, MAX_TEXT_LINE, size_problem
from rulegauge.core.text import normalise
from rulegauge.corpus.outline import OutlineEntry, clean_title, page_headings, read_outline
from rulegauge.corpus.pdf_text import page_texts

Headings = tuple[tuple[str, ...], ...]

MAX_PAGES = 100_000
"""Highest page number a JSONL document may give (the longest rulebooks have a
few hundred; a typo like 1000000000 would otherwise build a billion empty pages)."""


@dataclass(frozen=True)
class Loaded:
    """What a loader returns: one text per physical page, and metadata."""

    texts: tuple[str, ...]
    labels: tuple[str | None, ...]
    headings: tuple[Headings, ...]
    title: str | None = None
    page_titles: tuple[str | None, ...] = ()
    """Each page's own title where a page is a document of a collection; () for none."""


class Loader(Protocol):
    suffixes: tuple[str, ...]

    def load(self, path: Path) -> Loaded: ...

    def count_pages(self, path: Path) -> int: ...

    def page_labels(self, path: Path) -> list[str | None]: ...


PAGE_DONE: ContextVar[Callable[[int], object] | None] = ContextVar("page_done", default=None)
"""Called with the number of pages a loader has just read (per page for PDFs, all at
once for text formats); set by :func:`rulegauge.corpus.ingest.ingest_report` to show
progress per page. None: nobody is listening."""


def pages_done(n: int = 1) -> None:
    hook = PAGE_DONE.get()
    if hook is not None:
        hook(n)


def fail(where: str, message: str) -> ValidationError:
    return ValidationError([Problem(where, message)], summary="cannot load document")


def _long_line(data: bytes) -> tuple[int, int] | None:
    """(line, length) of the first line longer than :data:`MAX_TEXT_LINE`, else None."""
    start, line = 0, 1
    while start < len(data):
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        if end - start > MAX_TEXT_LINE:
            return line, end - start
        start, line = end + 1, line + 1
    return None


def read_text(path: Path) -> str:
    """A text document's content: bounded in size (:data:`MAX_TEXT_DOCUMENT_BYTES`) and
    line length (:data:`MAX_TEXT_LINE`), UTF-8; every refusal names the file (and line)."""
    too_big = size_problem(path, MAX_TEXT_DOCUMENT_BYTES, "text document")
    if too_big:
        raise fail(str(path), too_big.split(": ", 1)[1])
    data = path.read_bytes()
    long = _long_line(data)
    if long is not None:
        raise fail(f"{path}:{long[0]}", f"a line of {long[1]:,} bytes, above the limit of "
                   f"{MAX_TEXT_LINE:,}; is this a text document?")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise fail(f"{path}:{line}", f"not valid UTF-8 (byte {exc.start})") from None


def split_pages(raw: str, breaks: re.Pattern[str]) -> list[str]:
    parts = breaks.split(raw)
    if len(parts) > 1 and not parts[-1].strip():
        parts.pop()
    return parts


class PdfLoader:
    suffixes: tuple[str, ...] = (".pdf",)

    def _reader(self, path: Path) -> Any:
        try:
            reader = PdfReader(path)
            if reader.is_encrypted and not reader.decrypt(""):
                raise fail(str(path), "the PDF is encrypted and needs a password to open; "
                            "save an unencrypted copy")
            len(reader.pages)
        except DependencyError as exc:
            raise fail(str(path), f"the PDF is encrypted and reading it needs a package that "
                        f"is not installed ({exc}); reinstall rulegauge "
                        "(pip install -e .) or save an unencrypted copy") from None
        except FileNotDecryptedError:
            raise fail(str(path), "the PDF is encrypted and needs a password to open; "
                        "save an unencrypted copy") from None
        except (PyPdfError, OSError, ValueError, KeyError, TypeError, AttributeError,
                RecursionError) as exc:
            raise fail(str(path), f"not a readable PDF: {exc}") from None
        return reader

    def load(self, path: Path) -> Loaded:
        reader = self._reader(path)
        texts, problems = [], []
        for i, text, error in page_texts(path, reader, pages_done):
            if text is None:
                problems.append(Problem(f"{path}: page {i}", error or "text extraction failed"))
            else:
                texts.append(text)
        if problems:
            raise ValidationError(problems, summary="cannot load document")
        try:
            entries = read_outline(reader)
        except Exception as exc:  # pypdf raises many types on damaged outlines
            raise fail(str(path), f"unreadable outline (bookmarks): {exc}") from None
        meta = reader.metadata
        title = clean_title(meta.title) if meta is not None and meta.title else None
        return Loaded(tuple(texts), tuple(self._labels(reader)),
                      tuple(page_headings(entries, len(texts))), title or None)

    def _labels(self, reader: Any) -> list[str | None]:
        if "/PageLabels" not in reader.trailer["/Root"]:
            return [None] * len(reader.pages)
        return [str(lab) for lab in reader.page_labels]

    def count_pages(self, path: Path) -> int:
        return len(self._reader(path).pages)

    def page_labels(self, path: Path) -> list[str | None]:
        return self._labels(self._reader(path))


class TextLoader:
    suffixes: tuple[str, ...] = (".txt",)
    _BREAK = re.compile(r"\f")

    def _pages(self, path: Path) -> list[str]:
        return split_pages(read_text(path), self._BREAK)

    def load(self, path: Path) -> Loaded:
        texts = tuple(normalise(t) for t in self._pages(path))
        return Loaded(texts, (None,) * len(texts), ((),) * len(texts))

    def count_pages(self, path: Path) -> int:
        return len(self._pages(path))

    def page_labels(self, path: Path) -> list[str | None]:
        return [None] * self.count_pages(path)


class MarkdownLoader(TextLoader):
    suffixes: tuple[str, ...] = (".md", ".markdown")
    _BREAK = re.compile(r"\f|^[ \t]*<!-- pagebreak -->[ \t]*(?:\r?\n|$)", re.MULTILINE)
    _ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
    _FENCE = re.compile(r"^ {0,3}(```|~~~)")

    def load(self, path: Path) -> Loaded:
        pages = self._pages(path)
        entries: list[OutlineEntry] = []
        stack: list[tuple[int, str]] = []
        texts: list[str] = []
        fence: str | None = None
        for number, page in enumerate(pages, start=1):
            lines = []
            for line in page.splitlines():
                f = self._FENCE.match(line)
                if f and (fence is None or f.group(1) == fence):
                    fence = f.group(1) if fence is None else None
                m = None if fence or f else self._ATX.match(line)
                if m and m.group(2) and m.group(2).strip():
                    level, title = len(m.group(1)), clean_title(m.group(2))
                    stack = [s for s in stack if s[0] < level] + [(level, title)]
                    path_ = tuple(t for _, t in stack)
                    entries.append(OutlineEntry(title, path_, number, len(path_) - 1))
                    line = title
                lines.append(line)
            texts.append(normalise("\n".join(lines)))
        return Loaded(tuple(texts), (None,) * len(texts),
                      tuple(page_headings(entries, len(texts))))
