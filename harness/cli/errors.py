"""How the CLI turns library errors into messages and exit codes (2 = bad input)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import typer
from rich.console import Console

from harness.core.errors import HarnessError

# soft_wrap: error lines name files and ids; never break them at the terminal width
err_console = Console(stderr=True, soft_wrap=True)


@contextmanager
def bad_input_exits_2() -> Iterator[None]:
    """Print a :class:`HarnessError` (every collected problem) and exit with 2."""
    try:
        yield
    except HarnessError as exc:
        err_console.print(f"[red]error:[/red] {exc}", markup=True, highlight=False)
        raise typer.Exit(2) from None
