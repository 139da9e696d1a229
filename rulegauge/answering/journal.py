"""Append-only answer journal: one JSON line per answered (question, config).

Why: asking a model is slow and costs money, so every finished answer is written
to ``<run>/answers-journal/<answerer label>.jsonl`` the moment it arrives (line
written, flushed and fsynced) and a killed run loses at most the calls in
flight. A restarted run reads the journal and asks only what is missing; the
Parquet tables are consolidated from the journals at the end.

Conventions: a later record for the same key (question_id, config_id) replaces
an earlier one (``--retry-errors`` appends the new attempt). A last line without
its newline (the process died mid-write) is cut off when the journal is opened;
any other unparseable line (invalid JSON or UTF-8) is a
:class:`rulegauge.core.errors.ValidationError` naming the file and line.

Hostile input: the journal is opened with ``O_NOFOLLOW`` (a planted link is refused,
never truncated through), labels are checked by :func:`rulegauge.core.names.check_name`,
and a journal above :data:`rulegauge.core.limits.MAX_JOURNAL_BYTES` is refused unread
(:class:`rulegauge.core.journal.KeyedJournal`, shared with the ``http`` arm).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rulegauge.core.atomic import check_no_links
from rulegauge.core.journal import KeyedJournal
from rulegauge.core.names import check_name, name_problem

JOURNAL_DIR = "answers-journal"

Key = tuple[str, str]


def valid_label(label: str) -> bool:
    """Answerer labels name files: letters, digits, ``_ . -``, not starting with a dot."""
    return name_problem("answerer label", label) is None


def journal_path(run_path: Path, label: str) -> Path:
    """``<run>/answers-journal/<label>.jsonl``, no link on the way."""
    check_name("answerer label", label)
    return check_no_links(Path(run_path) / JOURNAL_DIR / f"{label}.jsonl", run_path)


class Journal(KeyedJournal):
    """One answerer's journal, keyed on (question_id, config_id); use as a context
    manager to append (:class:`rulegauge.core.journal.KeyedJournal`)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path, ("question_id", "config_id"), "answer journal")

    def load(self) -> dict[Key, dict[str, Any]]:
        """Latest record per (question_id, config_id); repairs a torn last line."""
        return {(str(k[0]), str(k[1])): r for k, r in super().load().items()}

    def __enter__(self) -> Journal:
        super().__enter__()
        return self
