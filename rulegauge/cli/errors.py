"""How the CLI turns library errors into messages and exit codes (2 = bad input).

Messages quote ids, paths and SQL that may hold square brackets (``[/b]``,
``give a [grid] or [[configs]]``); they are printed as plain text, never as rich
markup, so nothing is lost or crashes the printer. Only the ``error:`` prefix is
styled, through :class:`rich.text.Text`.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console
from rich.text import Text

from rulegauge.core.errors import RulegaugeError
from rulegauge.core.redact import redact_text

# soft_wrap: error lines name files and ids; never break them at the terminal width
err_console = Console(stderr=True, soft_wrap=True, markup=False, highlight=False)


def plain_console(**kwargs: object) -> Console:
    """A stdout console that prints strings as they are (no markup, no highlighting)."""
    return Console(markup=False, highlight=False, **kwargs)  # type: ignore[arg-type]


def print_error(message: str, prefix: str = "error") -> None:
    """``error: message`` on stderr, the message verbatim but for credentials
    (:func:`rulegauge.core.redact.redact_text`)."""
    err_console.print(Text.assemble((f"{prefix}:", "red"), " ", redact_text(message)))


def print_note(message: str) -> None:
    err_console.print(Text.assemble(("note:", "yellow"), " ", redact_text(message)))


def warn_deprecated(old: str, new: str) -> None:
    """``warning: OLD is deprecated ...: use NEW`` on stderr; the old spelling still works
    for one release (docs/cli.md, *Flag vocabulary*)."""
    err_console.print(Text.assemble(("warning:", "yellow"), " ", f"{old} is deprecated and will be "
                                    f"removed in the next release: use {new}"))


@contextmanager
def bad_input_exits_2() -> Iterator[None]:
    """Print a :class:`RulegaugeError` (every collected problem) and exit with 2.

    An ``OSError`` that reaches here (a full disk, a folder without write
    permission) is bad input too: printed with the file it names, exit 2.
    """
    try:
        yield
    except RulegaugeError as exc:
        print_error(str(exc))
        raise typer.Exit(2) from None
    except OSError as exc:
        why = "no space left on device" if exc.errno == errno.ENOSPC else (exc.strerror or str(exc))
        where = exc.filename if exc.filename is not None else "output"
        print_error(f"{where}: {why}")
        raise typer.Exit(2) from None
