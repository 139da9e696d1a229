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
:class:`harness.core.errors.ValidationError` naming the file and line.

Hostile input: the journal is opened with ``O_NOFOLLOW`` (a planted link is refused,
never truncated through), labels are checked by :func:`harness.core.names.check_name`,
and a journal above :data:`harness.core.limits.MAX_JOURNAL_BYTES` is refused unread.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from harness.core.atomic import check_no_links, open_nofollow, read_bytes_nofollow
from harness.core.errors import HarnessError, Problem, ValidationError
from harness.core.jsonl import iter_records
from harness.core.limits import MAX_JOURNAL_BYTES, check_size
from harness.core.names import check_name, name_problem

JOURNAL_DIR = "answers-journal"

Key = tuple[str, str]


def valid_label(label: str) -> bool:
    """Answerer labels name files: letters, digits, ``_ . -``, not starting with a dot."""
    return name_problem("answerer label", label) is None


def journal_path(run_path: Path, label: str) -> Path:
    """``<run>/answers-journal/<label>.jsonl``, no link on the way."""
    check_name("answerer label", label)
    return check_no_links(Path(run_path) / JOURNAL_DIR / f"{label}.jsonl", run_path)


def _decoded(raw: bytes, path: Path, problems: list[Problem]) -> Iterator[str]:
    for n, line in enumerate(raw.split(b"\n"), start=1):
        try:
            yield line.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(f"{path}:{n}", f"not valid UTF-8 (byte {exc.start + 1})"))
            yield ""


class Journal:
    """One answerer's journal; use as a context manager to append."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._fh: TextIO | None = None

    def load(self) -> dict[Key, dict[str, Any]]:
        """Latest record per (question_id, config_id); repairs a torn last line."""
        if self.path.is_symlink():
            check_no_links(self.path, self.path.parent)  # raises, naming the link
        if not self.path.exists():
            return {}
        check_size(self.path, MAX_JOURNAL_BYTES, "answers journal")
        raw = read_bytes_nofollow(self.path)
        cut = raw.rfind(b"\n") + 1
        if cut < len(raw):
            fd = open_nofollow(self.path, os.O_RDWR)
            try:
                os.ftruncate(fd, cut)
                os.fsync(fd)
            finally:
                os.close(fd)
        out: dict[Key, dict[str, Any]] = {}
        problems: list[Problem] = []
        for r in iter_records(_decoded(raw[:cut].rstrip(b"\n"), self.path, problems), self.path,
                              problems):
            if "question_id" not in r.record or "config_id" not in r.record:
                problems.append(Problem(r.where, "unreadable journal line (needs question_id "
                                                 "and config_id)"))
                continue
            out[(r.record["question_id"], r.record["config_id"])] = r.record
        if problems:
            raise ValidationError(problems, "answer journal is damaged")
        return out

    def __enter__(self) -> Journal:
        if self.path.parent.is_symlink():
            check_no_links(self.path.parent, self.path.parent.parent)  # raises, naming it
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            fd = open_nofollow(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as exc:
            raise HarnessError(f"{self.path}: cannot open the journal ({exc.strerror})") from None
        self._fh = os.fdopen(fd, "a", encoding="utf-8")
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
