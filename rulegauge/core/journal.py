"""Append-only, durable JSON-lines journals keyed by a field tuple.

Why: calls to a model or a search service are slow (and may cost money), so every
finished call is written the moment it arrives (line written, flushed and fsynced)
and a killed run loses at most the calls in flight; a restarted run reads the
journal and makes only the calls that are missing. Used by the answer journal
(:mod:`rulegauge.answering.journal`) and the ``http`` arm (:mod:`rulegauge.arms.http_calls`).

Conventions: a later record for the same key replaces an earlier one. A last line
without its newline (the process died mid-write) is cut off when the journal is
loaded; any other unparseable line (invalid JSON or UTF-8), or a record without the
key fields, or one whose values the journal's ``check`` refuses (a latency out of bounds),
is a :class:`rulegauge.core.errors.ValidationError` naming the file and line.

Hostile input: the journal is opened with ``O_NOFOLLOW`` (a planted link is refused,
never truncated through), and a journal above ``max_bytes`` (default
:data:`rulegauge.core.limits.MAX_JOURNAL_BYTES`) is refused unread.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TextIO

from rulegauge.core.atomic import check_no_links, open_nofollow, read_bytes_nofollow
from rulegauge.core.errors import Problem, RulegaugeError, ValidationError
from rulegauge.core.jsonl import dumps_line, iter_records
from rulegauge.core.limits import MAX_JOURNAL_BYTES, check_size


def _decoded(raw: bytes, path: Path, problems: list[Problem]) -> Iterator[str]:
    for n, line in enumerate(raw.split(b"\n"), start=1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(f"{path}:{n}", f"not valid UTF-8 (byte {exc.start + 1})"))
            yield ""


class KeyedJournal:
    """One journal file; ``key_fields`` name the fields that key a record; ``what`` names
    the journal in messages ("answer journal"). Use as a context manager to append."""

    def __init__(self, path: Path, key_fields: tuple[str, ...], what: str = "journal",
                 max_bytes: int = MAX_JOURNAL_BYTES,
                 check: Callable[[dict[str, Any]], str | None] | None = None) -> None:
        self.path = Path(path)
        self.key_fields = key_fields
        self.what = what
        self.max_bytes = max_bytes
        self.check = check  # what a record's values must be (bounds where they enter), or None
        self._fh: TextIO | None = None

    def load(self) -> dict[tuple[Any, ...], dict[str, Any]]:
        """Latest record per key; repairs a torn last line."""
        if self.path.is_symlink():
            check_no_links(self.path, self.path.parent)  # raises, naming the link
        if not self.path.exists():
            return {}
        check_size(self.path, self.max_bytes, self.what)
        raw = read_bytes_nofollow(self.path)
        cut = raw.rfind(b"\n") + 1
        if cut < len(raw):
            fd = open_nofollow(self.path, os.O_RDWR)
            try:
                os.ftruncate(fd, cut)
                os.fsync(fd)
            finally:
                os.close(fd)
        out: dict[tuple[Any, ...], dict[str, Any]] = {}
        problems: list[Problem] = []
        for r in iter_records(_decoded(raw[:cut].rstrip(b"\n"), self.path, problems), self.path,
                              problems):
            if not all(f in r.record for f in self.key_fields):
                problems.append(Problem(r.where, "unreadable journal line (needs "
                                        + " and ".join(self.key_fields) + ")"))
                continue
            bad = self.check(r.record) if self.check is not None else None
            if bad:
                problems.append(Problem(r.where, bad))
                continue
            out[tuple(r.record[f] for f in self.key_fields)] = r.record
        if problems:
            raise ValidationError(problems, f"{self.what} is damaged")
        return out

    def __enter__(self) -> KeyedJournal:
        if self.path.parent.is_symlink():
            check_no_links(self.path.parent, self.path.parent.parent)  # raises, naming it
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_nofollow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as exc:
            raise RulegaugeError(f"{self.path}: cannot open the journal ({exc.strerror})") from None
        self._fh = os.fdopen(fd, "a", encoding="utf-8")
        return self

    def append(self, record: dict[str, Any]) -> None:
        """Write one record durably (flush + fsync) before returning."""
        if self._fh is None:
            raise RuntimeError("journal is not open; use it as a context manager")
        self._fh.write(dumps_line(record, sort_keys=True))
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
