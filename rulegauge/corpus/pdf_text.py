"""Page texts of a PDF, extracted by two or more processes when the document is long.

pypdf's ``extract_text`` is pure Python and takes about 50 ms a page (SRD 5.1: 403
pages, about 20 s), so a long PDF is split into contiguous spans: this process reads
the first while helper processes (``python -m rulegauge.corpus.pdf_text PATH FIRST LAST``)
read the others, each opening the file itself (a ``PdfReader`` cannot be shared). Texts
are the same as one process gives: extraction is a function of the page alone.

Helpers are plain subprocesses, not ``multiprocessing`` workers: those re-import the
caller's ``__main__`` (a user's script or notebook) in every worker.

Edge cases: fewer than :data:`PARALLEL_MIN_PAGES` pages, one core, or
``RULEGAUGE_PDF_WORKERS=1`` read everything here. A page whose extraction raises becomes
an error result naming the page (the loader collects them). A helper that fails (exit
status, unreadable output) has its span read here instead, so the outcome is always the
one a single process gives.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rulegauge.core.text import normalise

PARALLEL_MIN_PAGES = 64
"""Shorter PDFs are read in this process: a helper costs about half a second to start."""

MAX_WORKERS = 4

PageResult = tuple[int, str | None, str | None]
"""(1-based page, normalised text or None, error message or None)."""


def workers_for(n_pages: int) -> int:
    """Processes to read ``n_pages`` with, this one included (1 = no helpers)."""
    env = os.environ.get("RULEGAUGE_PDF_WORKERS", "").strip()
    cap = int(env) if env.isdigit() and int(env) > 0 else min(MAX_WORKERS, os.cpu_count() or 1)
    return 1 if n_pages < PARALLEL_MIN_PAGES else cap


def extract(page: Any, number: int) -> PageResult:
    """One page's normalised text, or the error its extraction raised."""
    try:
        return number, normalise(page.extract_text() or ""), None
    except Exception as exc:  # pypdf raises many types on damaged content streams
        return number, None, f"text extraction failed: {exc}"


def spans(n_pages: int, parts: int) -> list[tuple[int, int]]:
    """``parts`` contiguous 1-based inclusive page spans covering 1..n_pages, sizes within one."""
    size, extra = divmod(n_pages, parts)
    out, first = [], 1
    for i in range(parts):
        last = first + size + (i < extra) - 1
        out.append((first, last))
        first = last + 1
    return out


class _Helper:
    """One helper process reading a span; its output lines are drained by a thread, so a
    full pipe never blocks it."""

    def __init__(self, path: Path, first: int, last: int) -> None:
        self.span = (first, last)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "rulegauge.corpus.pdf_text", str(path), str(first), str(last)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, env=env)
        self.lines: list[bytes] = []
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            self.lines = self.proc.stdout.readlines()

    def results(self) -> list[PageResult] | None:
        """The span's pages, or None when the helper failed."""
        code = self.proc.wait()
        self.thread.join()
        first, last = self.span
        try:
            rows = [json.loads(line) for line in self.lines]
            out = [(int(r[0]), r[1], r[2]) for r in rows]
        except (ValueError, TypeError, IndexError, KeyError):
            return None
        if code != 0 or [r[0] for r in out] != list(range(first, last + 1)):
            return None
        return out


def page_texts(path: Path, reader: Any, done: Callable[[int], None]) -> list[PageResult]:
    """Every page of the PDF at ``path`` (already opened as ``reader``) in page order;
    ``done(n)`` is called as pages finish."""
    n = len(reader.pages)
    parts = spans(n, workers_for(n)) if n else []  # the first span is read here
    helpers = [_Helper(path, a, b) for a, b in parts[1:]]
    results: list[PageResult] = []
    if parts:
        for i in range(parts[0][0], parts[0][1] + 1):
            results.append(extract(reader.pages[i - 1], i))
            done(1)
    for h in helpers:
        got = h.results()
        if got is None:  # read the span here: the same texts, or the same errors
            got = [extract(reader.pages[i - 1], i) for i in range(h.span[0], h.span[1] + 1)]
        done(len(got))
        results.extend(got)
    return results


def _main(argv: list[str]) -> int:
    """Helper entry point: JSON lines ``[page, text, error]`` for pages FIRST..LAST."""
    from pypdf import PdfReader

    path, first, last = argv[0], int(argv[1]), int(argv[2])
    reader = PdfReader(path)
    if reader.is_encrypted:
        reader.decrypt("")  # the parent opened it the same way before starting helpers
    out = sys.stdout
    for i in range(first, last + 1):
        out.write(json.dumps(list(extract(reader.pages[i - 1], i)), ensure_ascii=False) + "\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
