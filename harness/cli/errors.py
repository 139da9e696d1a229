"""How the CLI turns library errors into messages and exit codes (2 = bad input)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from harness.errors import HarnessError

err_console = Console(stderr=True)


@contextmanager
def bad_input_exits_2() -> Iterator[None]:
    """Print a :class:`HarnessError` (every collected problem) and exit with 2."""
    try:
        yield
    except HarnessError as exc:
        err_console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None
