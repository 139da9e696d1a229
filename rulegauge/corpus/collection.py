"""Collection corpora in one JSONL file: one document per line, one page per document.

The loader format ``collection`` (a gold-set document with ``format: collection``) reads
BEIR's ``corpus.jsonl`` layout: one JSON object per line with ``_id`` (a non-empty
string, unique in the file), ``text`` (a string) and an optional ``title`` (a string);
other keys (BEIR's ``metadata``) are ignored. Record *i* (blank lines skipped) is
physical page *i*, its label is the ``_id`` and its text is the title, a blank line and
the text (the title alone, or the text alone, when the other is empty), as Anserini's
BEIR "flat" indexes contents = title + text. So a collection of any size is a few
files, not one file per document, and a page of a run is a document of the collection,
exported under its ``_id`` (:attr:`CollectionLoader.labels_are_ids`).
A page has no heading (a title is never inherited by the next document); its title is
the page's own (``Page.title``, normalised; None when empty), which chunking
``title = "every"`` prepends to each of its chunks (:mod:`rulegauge.corpus.chunking`).

Problems (invalid JSON, a missing or non-string ``_id``/``text``, a repeated ``_id``,
more than :data:`rulegauge.corpus.formats.MAX_PAGES` records) raise one
:class:`rulegauge.core.errors.ValidationError` naming the file and line, all at once.

Reference: Thakur et al., "BEIR: A Heterogeneous Benchmark for Zero-shot Evaluation of
Information Retrieval Models", NeurIPS 2021 Datasets and Benchmarks (the file layout);
Pyserini's BEIR regressions (title and text in one field).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from rulegauge.core.errors import Problem, ValidationError
from rulegauge.core.jsonl import iter_records
from rulegauge.core.text import normalise
from rulegauge.corpus.formats import MAX_PAGES, Loaded, read_text


@dataclass(frozen=True)
class CollectionDoc:
    """One document of a collection file: its id, title and text as given."""

    doc_id: str
    title: str
    text: str
    line: int

    def page_text(self) -> str:
        """Title and text as one page (module docstring), before normalisation."""
        return "\n\n".join(part for part in (self.title, self.text) if part.strip())


def check_doc(obj: Any) -> list[str]:
    """Problems of one collection record (empty when valid)."""
    if not isinstance(obj, dict):
        return ["need a JSON object with _id, text and optional title"]
    out = []
    if not isinstance(obj.get("_id"), str) or not obj["_id"].strip():
        out.append(f"'_id' must be a non-empty string, got {obj.get('_id')!r}")
    if not isinstance(obj.get("text"), str):
        out.append(f"'text' must be a string, got {obj.get('text')!r}")
    if "title" in obj and not isinstance(obj["title"], str | None):
        out.append(f"'title' must be a string, got {obj['title']!r}")
    return out


def iter_docs(lines: Iterator[str] | list[str], source: str | Path,
              problems: list[Problem]) -> Iterator[CollectionDoc]:
    """Valid documents of a collection file's lines, in file order; every bad line (and
    every repeated ``_id``) appended to ``problems`` with ``source:line``."""
    seen: dict[str, int] = {}
    for rec in iter_records(lines, source, problems):
        found = check_doc(rec.record)
        if found:
            problems += [Problem(rec.where, msg) for msg in found]
            continue
        doc_id = rec.record["_id"]
        if doc_id in seen:
            problems.append(Problem(rec.where, f"_id {doc_id!r} appears twice (first on line {seen[doc_id]})"))
            continue
        seen[doc_id] = rec.line
        yield CollectionDoc(doc_id, rec.record.get("title") or "", rec.record["text"], rec.line)


class CollectionLoader:
    """The ``collection`` loader (module docstring); chosen by ``format: collection``."""

    suffixes: tuple[str, ...] = ()
    labels_are_ids: ClassVar[bool] = True
    """Its page labels are the collection's document ids (unique in the file): a run records
    which documents these are (manifest ``corpus.collection_documents``) and an export
    writes the ids as docids (:mod:`rulegauge.interop.docids`)."""

    def _docs(self, path: Path) -> list[CollectionDoc]:
        problems: list[Problem] = []
        docs = list(iter_docs(read_text(path).splitlines(), path, problems))
        if len(docs) > MAX_PAGES:
            problems.append(Problem(str(path), f"{len(docs):,} documents: a collection file holds at most "
                                    f"{MAX_PAGES:,} (split it, as `rulegauge goldset import-beir` does)"))
        if problems:
            raise ValidationError(problems, summary="cannot load document")
        return docs

    def load(self, path: Path) -> Loaded:
        docs = self._docs(path)
        return Loaded(tuple(normalise(d.page_text()) for d in docs), tuple(d.doc_id for d in docs),
                      tuple(() for _ in docs), page_titles=tuple(normalise(d.title) or None for d in docs))

    def count_pages(self, path: Path) -> int:
        return len(self._docs(path))

    def page_labels(self, path: Path) -> list[str | None]:
        return [d.doc_id for d in self._docs(path)]
