"""Lines of the text files a collection import reads (corpus, queries, topics, qrels).

Every file is read the same way, line by line in binary and decoded here, so that one
bad line is a problem naming ``file:line`` and never a traceback or a whole file refused:

* UTF-8; a byte order mark at the start of the file is dropped (on every file alike:
  editors on Windows write one on JSONL and TSV files too);
* a line that is not UTF-8 is a problem (``not UTF-8 (invalid start byte at byte 26)``);
* a line longer than :data:`rulegauge.core.limits.MAX_TEXT_LINE` is a problem and is
  skipped without being held in memory (a file with no newline is not read whole);
* lines end at ``\\n`` only (a ``\\r`` before it is the caller's to strip), so line
  numbers are what an editor shows.

A bad line yields an empty string, so the caller's line numbers hold.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from rulegauge.core.errors import Problem
from rulegauge.core.limits import MAX_TEXT_LINE

BOM = b"\xef\xbb\xbf"


def text_lines(fh: BinaryIO, path: Path | str, problems: list[Problem],
               seen: Callable[[bytes], object] | None = None) -> Iterator[str]:
    """The lines of the binary file ``fh`` (read from ``path``) as text, line 1 first
    (module docstring); ``seen`` is given every byte read (a hash, a progress bar)."""
    n = 0
    while raw := fh.readline(MAX_TEXT_LINE + 1):
        n += 1
        if seen is not None:
            seen(raw)
        if len(raw) > MAX_TEXT_LINE and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):  # skip the rest of the line, bounded reads
                raw = fh.readline(MAX_TEXT_LINE + 1)
                size += len(raw)
                if seen is not None and raw:
                    seen(raw)
            problems.append(Problem(f"{path}:{n}", f"a line of {size:,} bytes, above the limit of "
                                    f"{MAX_TEXT_LINE:,}; is this the right file?"))
            yield ""
            continue
        if n == 1 and raw.startswith(BOM):
            raw = raw[len(BOM):]
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            problems.append(Problem(f"{path}:{n}", f"not UTF-8 ({exc.reason} at byte {exc.start})"))
            yield ""


def read_lines(path: Path, problems: list[Problem]) -> Iterator[str]:
    """:func:`text_lines` of the file at ``path``, opened and closed here."""
    with path.open("rb") as fh:
        yield from text_lines(fh, path, problems)
