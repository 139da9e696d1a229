"""Rich progress bars for the slow steps (embedding, searching, fusing)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


@contextmanager
def rich_progress() -> Iterator[Callable[[str, int], object]]:
    """Yields ``stage(description, total)``: a context manager giving ``advance(n)``."""
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False) as prog:

        @contextmanager
        def stage(description: str, total: int) -> Iterator[Callable[[int], None]]:
            task = prog.add_task(description, total=total)
            def advance(n: int = 1) -> None:
                prog.advance(task, n)

            yield advance
            prog.update(task, completed=total)

        yield stage
