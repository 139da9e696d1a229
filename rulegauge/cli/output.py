"""One console factory and the ``--format`` of every command that prints a table.

:func:`make_console` is the console every command prints through: on a terminal it
uses the terminal's width; anywhere else (a CI log, ``> file``, ``| cat``) it is
:data:`PIPE_WIDTH` columns wide with soft wrapping, so a table row is never broken
across lines at 80 columns (rich's default when it cannot ask a terminal).

:func:`format_console` gives, for ``--format`` (:data:`TABLE_FORMATS`: ``table``,
``tsv``, ``markdown``, ``json``), a :class:`rich.console.Console` whose ``print``
renders rich tables as that format: ``tsv`` one tab-separated line per row (a title
as a ``# title`` line, other text as ``# text`` lines, tables apart by a blank line;
tabs and newlines inside a cell become spaces), ``markdown`` a pipe table per table
(``|`` escaped), ``json`` one document ``{"tables": [{"title", "columns", "rows"}],
"notes": [...]}`` written when the context closes (rows as lists: column names may
repeat). Commands that had their own JSON keep it for ``--format json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from rulegauge.core.registry import Registry

PIPE_WIDTH = 4000  # columns when not on a terminal: wide enough for any row we print

TABLE_FORMATS: Registry[str] = Registry("output format")
for _name, _what in (("table", "rich tables (full width when not a terminal)"),
                     ("tsv", "tab-separated rows, '# ' before titles and notes"),
                     ("markdown", "pipe tables"), ("json", "one JSON document")):
    TABLE_FORMATS.add(_name, _what)
FORMAT_HELP = "Output format: " + ", ".join(TABLE_FORMATS.names()) + "."


def is_terminal(stderr: bool = False) -> bool:
    return Console(stderr=stderr).is_terminal


def make_console(*, stderr: bool = False, markup: bool = False, highlight: bool = False) -> Console:
    """The console of every command: the terminal's width on a terminal, else
    :data:`PIPE_WIDTH` columns and soft wrapping (rows and lines never broken)."""
    if is_terminal(stderr):
        return Console(stderr=stderr, markup=markup, highlight=highlight)
    return Console(stderr=stderr, markup=markup, highlight=highlight, width=PIPE_WIDTH,
                   soft_wrap=True)


def _plain(cell: object, markup: bool = False) -> str:
    text = cell.plain if isinstance(cell, Text) else (
        Text.from_markup(cell).plain if markup and isinstance(cell, str) else str(cell))
    return " ".join(text.replace("\t", " ").splitlines())


def table_rows(table: Table, markup: bool = False) -> tuple[str, list[str], list[list[str]]]:
    """A rich table as ``(title, column headers, rows)`` of plain strings (cells read
    as rich markup when ``markup``)."""
    cols = table.columns
    cells = [[_plain(c, markup) for c in col.cells] for col in cols]
    rows = [[cells[j][i] for j in range(len(cols))] for i in range(table.row_count)]
    return (_plain(table.title or "", markup), [_plain(c.header, markup) for c in cols], rows)


class FormatConsole(Console):
    """A console printing rich tables as ``tsv``, ``markdown`` or ``json`` (module
    docstring); everything else is text (markup removed when ``markup``)."""

    def __init__(self, fmt: str, *, markup: bool = False) -> None:
        super().__init__(markup=False, highlight=False, width=PIPE_WIDTH, soft_wrap=True)
        TABLE_FORMATS.get(fmt)
        self.fmt, self.text_markup = fmt, markup
        self.tables: list[dict[str, object]] = []
        self.notes: list[str] = []
        self.printed = False

    def print(self, *objects: Any, sep: str = " ", end: str = "\n", **kwargs: Any) -> None:
        texts: list[str] = []
        for obj in objects:
            if isinstance(obj, Table):
                self._text(sep.join(texts))
                texts = []
                self._table(*table_rows(obj, self.text_markup))
            elif isinstance(obj, str):
                texts.append(Text.from_markup(obj).plain if kwargs.get("markup", self.text_markup)
                             else obj)
            else:
                texts.append(_plain(obj))
        self._text(sep.join(texts))

    def _out(self, line: str) -> None:
        self.file.write(line + "\n")  # as is: rich would expand the tabs

    def _text(self, text: str) -> None:
        lines = [s.strip() for s in text.splitlines() if s.strip()]
        if self.fmt == "json":
            self.notes += lines
        for line in lines if self.fmt != "json" else ():
            self._out(f"# {line}" if self.fmt == "tsv" else line + "\n")

    def _table(self, title: str, header: list[str], rows: list[list[str]]) -> None:
        if self.fmt == "json":
            self.tables.append({"title": title, "columns": header, "rows": rows})
            return
        if self.printed:
            self._out("")
        self.printed = True
        if self.fmt == "tsv":
            if title:
                self._out(f"# {title}")
            for row in [header, *rows]:
                self._out("\t".join(row))
            return
        esc = [[c.replace("|", "\\|") for c in row] for row in [header, *rows]]
        if title:
            self._out(f"**{title}**\n")
        self._out("| " + " | ".join(esc[0]) + " |")
        self._out("|" + "|".join("---" for _ in header) + "|")
        for row in esc[1:]:
            self._out("| " + " | ".join(row) + " |")

    def flush(self) -> None:
        """Write the JSON document (``json``); the other formats stream."""
        if self.fmt == "json":
            self._out(json.dumps({"tables": self.tables, "notes": self.notes}, indent=2,
                                 ensure_ascii=False))


@contextmanager
def format_console(fmt: str, *, markup: bool = False) -> Iterator[Console]:
    """The console for ``--format FMT`` (``table``: :func:`make_console`); an unknown
    format raises :class:`rulegauge.core.errors.ConfigError` listing the choices."""
    TABLE_FORMATS.get(fmt)
    if fmt == "table":
        yield make_console(markup=markup)
        return
    console = FormatConsole(fmt, markup=markup)
    yield console
    console.flush()
