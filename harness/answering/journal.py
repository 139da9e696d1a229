"""Append-only answer journal: one JSON line per answered (question, config).

Why: asking a model is slow and costs money, so every finished answer is written
to ``<run>/answers-journal/<answerer label>.jsonl`` the moment it arrives (line
written, flushed and fsynced) and a killed run loses at most the calls in
flight. A restarted run reads the journal and asks only what is missing; the
Parquet tables are consolidated from the journals at the end.

Conventions: a later record for the same key (question_id, config_id) replaces
an earlier one (``--retry-errors`` appends the new attempt). A last line without
its newline (the process died mid-write) is cut off when the journal is opened;
any other unparseable line is a :class:`harness.core.errors.ValidationError` naming
the file and line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, TextIO

from harness.core.errors import Problem, ValidationError
from harness.core.jsonl import iter_records

JOURNAL_DIR = "answers-journal"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

Key = tuple[str, str]


def valid_label(label: str) -> bool:
    """Answerer labels name files: letters, digits, ``_ . -``, not starting with a dot."""
    return bool(_LABEL.match(label))


def journal_path(run_path: Path, label: str) -> Path:
    if not valid_label(label):
        raise ValueError(f"answerer label {label!r} is not a valid file name part")
    return Path(run_path) / JOURNAL_DIR / f"{label}.jsonl"


class Journal:
    """One answerer's journal; use as a context manager to append."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fh: TextIO | None = None

    def load(self) -> dict[Key, dict[str, Any]]:
        """Latest record per (question_id, config_id); repairs a torn last line."""
        if not self.path.exists():
            return {}
        raw = self.path.read_bytes()
        cut = raw.rfind(b"\n") + 1
        if cut < len(raw):
            with open(self.path, "r+b") as f:
                f.truncate(cut)
                f.flush()
                os.fsync(f.fileno())
        out: dict[Key, dict[str, Any]] = {}
        problems: list[Problem] = []
        for r in iter_records(raw[:cut].decode("utf-8").splitlines(), self.path, problems):
            if "question_id" not in r.record or "config_id" not in r.record:
                problems.append(Problem(r.where, "unreadable journal line (needs question_id "
                                                 "and config_id)"))
                continue
            out[(r.record["question_id"], r.record["config_id"])] = r.record
        if problems:
            raise ValidationError(problems, "answer journal is damaged")
        return out

    def __enter__(self) -> Journal:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "a", encoding="utf-8")
        return self

    def append(self, record: dict[str, Any]) -> None:
        """Write one record durably (flush + fsync) before returning."""
        if self._fh is None:
            raise RuntimeError("journal is not open; use it as a context manager")
        self._fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        self._fh.flush()
        os.fsync(self._fh.fileno())

    def __exit__(self, *exc: object) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None
