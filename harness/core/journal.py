"""Append-only, durable JSON-lines journals keyed by a field tuple.

Why: calls to a model or a search service are slow (and may cost money), so every
finished call is written the moment it arrives (line written, flushed and fsynced)
and a killed run loses at most the calls in flight; a restarted run reads the
journal and makes only the calls that are missing.

Conventions: a later record for the same key replaces an earlier one. A last line
without its newline (the process died mid-write) is cut off when the journal is
loaded; any other unparseable line, or a record without the key fields, is a
:class:`harness.core.errors.ValidationError` naming the file and line.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TextIO

from harness.core.errors import Problem, ValidationError
from harness.core.jsonl import iter_records


class KeyedJournal:
    """One journal file; ``key_fields`` name the fields that key a record. Use as a
    context manager to append."""

    def __init__(self, path: Path, key_fields: tuple[str, ...], what: str = "journal") -> None:
        self.path = Path(path)
        self.key_fields = key_fields
        self.what = what
        self._fh: TextIO | None = None

    def load(self) -> dict[tuple[Any, ...], dict[str, Any]]:
        """Latest record per key; repairs a torn last line."""
        if not self.path.exists():
            return {}
        raw = self.path.read_bytes()
        cut = raw.rfind(b"\n") + 1
        if cut < len(raw):
            with open(self.path, "r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())
        out: dict[tuple[Any, ...], dict[str, Any]] = {}
        problems: list[Problem] = []
        for r in iter_records(raw[:cut].decode("utf-8").splitlines(), self.path, problems):
            if not all(f in r.record for f in self.key_fields):
                problems.append(Problem(r.where, f"unreadable {self.what} line (needs "
                                        + " and ".join(self.key_fields) + ")"))
                continue
            out[tuple(r.record[f] for f in self.key_fields)] = r.record
        if problems:
            raise ValidationError(problems, f"{self.what} is damaged")
        return out

    def __enter__(self) -> KeyedJournal:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        return self

    def append(self, record: dict[str, Any]) -> None:
        """Write one record durably (flush + fsync) before returning."""
        if self._fh is None:
            raise RuntimeError(f"{self.what} is not open; use it as a context manager")
        self._fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
