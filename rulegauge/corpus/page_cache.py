"""On-disk cache of loaded page texts, so a repeated run does not re-extract its PDFs.

A loader's output (:class:`rulegauge.corpus.formats.Loaded`: page texts, labels,
heading paths, title, page titles) is stored as one JSON file
``<cache>/pages/<key>.json``. The key is the SHA-256 of:

* the source file's SHA-256 (its bytes, not its path or modification time),
* the loader name and the document's loader options (sorted),
* :data:`PAGE_CACHE_VERSION` and the *loader version*: a SHA-256 of the source code of
  every module that shapes page text, :func:`loader_modules`: the loaders' module
  (:data:`LOADER_ROOT`) and every rulegauge module it imports, transitively, module-level and
  deferred alike (:mod:`rulegauge.core.import_graph`: read from the source, so a module added
  to text extraction, such as ``corpus/pdf_text`` or ``corpus/title_match``, is in the key
  without anyone listing it), and the pypdf version.

So editing the file, choosing another format or options, changing the loader code or
upgrading pypdf all miss the cache and re-extract; nothing needs to be deleted by hand. The
module set errs on the side of a miss (a helper that cannot change a page's text is in it
too): a stale page text would be a silently wrong figure, a miss is one re-extraction.

Conventions: an entry is written to a temporary file beside it and renamed into place
(POSIX ``rename(2)``), so readers see whole entries only. An entry that cannot be read
or does not have the expected shape counts as a miss and is rewritten. ``stats``
counts hits, misses and writes for the manifest.

Reference: standard memoisation keyed by content hash (as the embedding cache,
:mod:`rulegauge.embedding.cache`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rulegauge.core.atomic import write_text
from rulegauge.core.import_graph import closure, source_file
from rulegauge.corpus.formats import Loaded

PAGE_CACHE_VERSION = 2
"""Bump when the entry format changes."""

LOADER_ROOT = "rulegauge.corpus.loaders"
"""The module every loader of :data:`rulegauge.corpus.loaders.LOADERS` is registered from."""
PACKAGE = Path(__file__).resolve().parents[1]
"""rulegauge's own folder: the modules :func:`loader_modules` follows."""


@functools.lru_cache(maxsize=1)
def loader_modules() -> tuple[str, ...]:
    """Every module that shapes page text (module docstring), sorted."""
    return tuple(closure([LOADER_ROOT], PACKAGE))


def code_hash(modules: Sequence[str], source: Callable[[str], bytes]) -> str:
    """SHA-256 of each module's name and ``source(name)``, and the pypdf version."""
    h = hashlib.sha256()
    for name in modules:
        h.update(name.encode() + b"\0" + source(name) + b"\0")
    try:
        h.update(importlib.metadata.version("pypdf").encode())
    except importlib.metadata.PackageNotFoundError:
        h.update(b"no pypdf")
    return h.hexdigest()


def _source(name: str) -> bytes:
    path = source_file(name, PACKAGE)
    if path is None:
        raise FileNotFoundError(f"no source for {name} under {PACKAGE}")
    return path.read_bytes()


@functools.lru_cache(maxsize=1)
def loader_version() -> str:
    """:func:`code_hash` of :func:`loader_modules`' source files."""
    return code_hash(loader_modules(), _source)


def cache_key(source_sha256: str, fmt: str, options: Mapping[str, object]) -> str:
    """The entry name for a file's pages (see the module docstring)."""
    ident = json.dumps([PAGE_CACHE_VERSION, loader_version(), source_sha256, fmt,
                        sorted((str(k), repr(v)) for k, v in options.items())])
    return hashlib.sha256(ident.encode()).hexdigest()


@dataclass
class PageCacheStats:
    hits: int = 0
    misses: int = 0
    writes: int = 0


@dataclass
class PageCache:
    """Page texts under ``<root>/pages/``; pass it to ``build_corpus(..., pages=...)``."""

    root: Path
    stats: PageCacheStats = field(default_factory=PageCacheStats)

    @property
    def folder(self) -> Path:
        return Path(self.root) / "pages"

    def load(self, fmt: str, path: Path, source_sha256: str, options: Mapping[str, object],
             compute: Callable[[], Loaded]) -> Loaded:
        """The cached pages of ``path`` or, on a miss, ``compute()`` stored for next time."""
        entry = self.folder / f"{cache_key(source_sha256, fmt, options)}.json"
        found = _read(entry)
        if found is not None:
            self.stats.hits += 1
            return found
        self.stats.misses += 1
        loaded = compute()
        write_text(entry, json.dumps({"version": PAGE_CACHE_VERSION, "source": str(path),
                                      "texts": loaded.texts, "labels": loaded.labels,
                                      "headings": loaded.headings, "title": loaded.title,
                                      "page_titles": loaded.page_titles},
                                     ensure_ascii=False))
        self.stats.writes += 1
        return loaded

    def describe(self) -> dict[str, Any]:
        return {"folder": str(self.folder), "hits": self.stats.hits,
                "misses": self.stats.misses, "writes": self.stats.writes,
                "loader_version": loader_version()[:12]}


def _read(entry: Path) -> Loaded | None:
    """The entry's pages, or None when it is absent, unreadable or malformed."""
    try:
        obj = json.loads(entry.read_text(encoding="utf-8"))
        texts, labels, headings = obj["texts"], obj["labels"], obj["headings"]
        if obj["version"] != PAGE_CACHE_VERSION or not len(texts) == len(labels) == len(headings):
            return None
        return Loaded(tuple(str(t) for t in texts),
                      tuple(None if lab is None else str(lab) for lab in labels),
                      tuple(tuple(tuple(str(h) for h in path) for path in page)
                            for page in headings),
                      None if obj["title"] is None else str(obj["title"]),
                      tuple(None if t is None else str(t) for t in obj["page_titles"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
