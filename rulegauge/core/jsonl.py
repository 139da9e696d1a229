"""One JSON-lines writer and reader: lines that round-trip; records with their line numbers.

Writing (:func:`dumps_line`, :func:`append_line`): one JSON value per line, UTF-8, with
U+2028, U+2029 and U+0085 written as ``\\u`` escapes (JSON allows them raw, but a reader
splitting on every Unicode line break, Python's ``str.splitlines``, would cut the line
there); :func:`append_line` appends one line with a single ``write`` (``O_APPEND``, not
through a link: ``O_NOFOLLOW``) and ``fsync`` before it returns. Reading
(:func:`split_lines`): lines split on ``\\n`` only (a ``\\r`` before it dropped).

JSON Lines (https://jsonlines.org): one JSON value per line, UTF-8. Blank lines
are skipped (they are common at the end of hand-written files). Each bad line
becomes a :class:`rulegauge.core.errors.Problem` located ``file:line`` and is left
out, so a caller can report every problem of a file together (house rule) and
decide itself whether to raise. By default only JSON objects are records; any
other value (a list, a number) is a problem ``expected a JSON object``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.atomic import open_nofollow
from rulegauge.core.errors import Problem, ValidationError

_BREAKS = {"\u2028": "\\u2028", "\u2029": "\\u2029", "\x85": "\\u0085"}


def dumps_line(value: Any, *, sort_keys: bool = False) -> str:
    """``value`` as one JSON line (ending in ``\\n``), Unicode line breaks escaped."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=sort_keys)
    for raw, escaped in _BREAKS.items():
        text = text.replace(raw, escaped)
    return text + "\n"


def dumps_lines(values: Iterable[Any]) -> str:
    """Every value of ``values`` as :func:`dumps_line`, joined."""
    return "".join(dumps_line(v) for v in values)


def append_line(path: Path | str, value: Any, *, sort_keys: bool = False) -> None:
    """Append ``value`` as one line: one ``write`` with ``O_APPEND`` and ``O_NOFOLLOW``,
    then ``fsync`` (a killed writer loses at most this line, never tears another)."""
    fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
    try:
        os.write(fd, dumps_line(value, sort_keys=sort_keys).encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def split_lines(text: str) -> list[str]:
    """The lines of ``text`` split on ``\\n`` only (a trailing ``\\r`` dropped), unlike
    ``str.splitlines``, which also splits on U+2028, U+2029, U+0085 and others."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


@dataclass(frozen=True)
class JsonRecord:
    """One JSON object of a JSON-lines file and where it is (``file:line``)."""

    line: int
    where: str
    record: dict[str, Any]


def iter_records(lines: Iterable[str], source: str | Path,
                 problems: list[Problem]) -> Iterator[JsonRecord]:
    """Parse ``lines`` (line 1 first) of ``source``; append each bad line to ``problems``."""
    for n, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{source}:{n}"
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            problems.append(Problem(where, f"invalid JSON: {exc.msg} (column {exc.colno})"))
            continue
        except RecursionError:  # [[[[... thousands deep
            problems.append(Problem(where, "invalid JSON: nested too deeply"))
            continue
        except ValueError as exc:  # an integer of more than 4,300 digits (int's conversion limit)
            problems.append(Problem(where, f"invalid JSON: {str(exc)[:120]}"))
            continue
        if not isinstance(obj, dict):
            problems.append(Problem(where, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        yield JsonRecord(n, where, obj)


def read_records(path: Path | str, problems: list[Problem], *,
                 text: str | None = None) -> list[JsonRecord]:
    """Every object of the JSON-lines file ``path`` (or of ``text`` read from it)."""
    body = Path(path).read_text(encoding="utf-8") if text is None else text
    return list(iter_records(split_lines(body), path, problems))


def read_file_records(path: Path | str, problems: list[Problem], what: str) -> list[JsonRecord]:
    """:func:`read_records`, with a file that cannot be read at all (missing, not UTF-8)
    raised as one ValidationError naming it (``cannot read WHAT``)."""
    try:
        return read_records(path, problems)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError([Problem(str(path), f"cannot read {what}: {exc}")],
                              f"{path}: unreadable {what}") from None
