"""One JSON-lines reader: records with their line numbers, problems collected, never raised.

JSON Lines (https://jsonlines.org): one JSON value per line, UTF-8. Blank lines
are skipped (they are common at the end of hand-written files). Each bad line
becomes a :class:`rulegauge.core.errors.Problem` located ``file:line`` and is left
out, so a caller can report every problem of a file together (house rule) and
decide itself whether to raise. By default only JSON objects are records; any
other value (a list, a number) is a problem ``expected a JSON object``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rulegauge.core.errors import Problem, ValidationError


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
        if not isinstance(obj, dict):
            problems.append(Problem(where, f"expected a JSON object, got {type(obj).__name__}"))
            continue
        yield JsonRecord(n, where, obj)


def read_records(path: Path | str, problems: list[Problem], *,
                 text: str | None = None) -> list[JsonRecord]:
    """Every object of the JSON-lines file ``path`` (or of ``text`` read from it)."""
    body = Path(path).read_text(encoding="utf-8") if text is None else text
    return list(iter_records(body.splitlines(), path, problems))


def read_file_records(path: Path | str, problems: list[Problem], what: str) -> list[JsonRecord]:
    """:func:`read_records`, with a file that cannot be read at all (missing, not UTF-8)
    raised as one ValidationError naming it (``cannot read WHAT``)."""
    try:
        return read_records(path, problems)
    except (OSError, UnicodeDecodeError) as exc:
        raise ValidationError([Problem(str(path), f"cannot read {what}: {exc}")],
                              f"{path}: unreadable {what}") from None
