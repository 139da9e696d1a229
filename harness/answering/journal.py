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

import re
from pathlib import Path

from harness.core.journal import KeyedJournal

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


class Journal(KeyedJournal):
    """One answerer's journal, keyed on (question_id, config_id); use as a context
    manager to append (:class:`harness.core.journal.KeyedJournal`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, ("question_id", "config_id"), "answer journal")

    def __enter__(self) -> Journal:
        super().__enter__()
        return self
