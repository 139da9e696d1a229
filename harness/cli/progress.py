"""Progress for the slow steps (embedding, searching, fusing, ingesting), on stderr.

Standard output carries only results (tables, JSON), so ``harness run --json | jq``
works; progress bars and messages go to standard error. ``quiet`` gives a no-op
progress with the same interface. Third-party progress bars (Hugging Face
``Loading weights``, tqdm in sentence-transformers) are switched off by
:func:`silence_third_party` before any of those libraries is imported.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

# environment switches read by huggingface_hub/transformers and by tqdm at import time
QUIET_ENV = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1",
             "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


def silence_third_party() -> None:
    """Turn off third-party progress bars and chatter (environment variables, set
    only where the user has not set them)."""
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)


def stderr_console() -> Console:
    """The console for progress and messages: standard error."""
    return Console(stderr=True)


@contextmanager
def rich_progress(quiet: bool = False) -> Iterator[Callable[[str, int], object]]:
    """Yields ``stage(description, total)``: a context manager giving ``advance(n)``.
    Drawn on standard error; nothing at all when ``quiet``."""
    if quiet:
        def ignore(n: int = 1) -> None:
            return None

        @contextmanager
        def silent(description: str, total: int) -> Iterator[Callable[[int], None]]:
            yield ignore

        yield silent
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False, console=stderr_console()) as prog:

        @contextmanager
        def stage(description: str, total: int) -> Iterator[Callable[[int], None]]:
            task = prog.add_task(description, total=total)
            def advance(n: int = 1) -> None:
                prog.advance(task, n)

            yield advance
            prog.update(task, completed=total)

        yield stage
