"""Progress for the slow steps (embedding, searching, fusing, ingesting), on stderr.

Standard output carries only results (tables, JSON), so ``rulegauge run --json | jq``
works; progress bars and messages go to standard error. ``quiet`` gives a no-op
progress with the same interface. When standard error is not a terminal (a CI log,
``2> file``) the bars become plain timestamped lines, ``11:02:03 arm dense: embedding
passage texts 1200/2930``: one when a stage starts, at most one every
:data:`LINE_EVERY_S` seconds per stage while it runs, and one when it ends (with its
time), so a long stage shows in the log while it runs rather than at the end. Third-party progress bars (Hugging Face
``Loading weights``, tqdm in sentence-transformers) are switched off by
:func:`silence_third_party` before any of those libraries is imported.
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

# environment switches read by huggingface_hub/transformers and by tqdm at import time
QUIET_ENV = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TQDM_DISABLE": "1",
             "TRANSFORMERS_VERBOSITY": "error", "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1"}


# packages whose Python warnings (matplotlib layout notes, tokenizer advisories) are
# not the user's business; ``--verbose`` shows them
THIRD_PARTY = ("matplotlib", "transformers", "sentence_transformers", "huggingface_hub", "torch",
               "sklearn", "tqdm", "ray", "urllib3", "mlflow", "pydantic")
LINE_EVERY_S = 5.0  # plain progress: at most one line per stage this often


def silence_third_party(verbose: bool = False) -> None:
    """Turn off third-party progress bars and chatter (environment variables, set
    only where the user has not set them) and, unless ``verbose``, the Python
    warnings raised inside :data:`THIRD_PARTY` packages."""
    for key, value in QUIET_ENV.items():
        os.environ.setdefault(key, value)
    if not verbose:
        for package in THIRD_PARTY:
            warnings.filterwarnings("ignore", module=rf"{package}(\.|$)")


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
    console = stderr_console()
    if not console.is_terminal:
        yield plain_stage(console)
        return
    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), transient=False, console=console) as prog:

        @contextmanager
        def stage(description: str, total: int) -> Iterator[Callable[[int], None]]:
            task = prog.add_task(description, total=total)
            def advance(n: int = 1) -> None:
                prog.advance(task, n)

            yield advance
            prog.update(task, completed=total)

        yield stage


def plain_stage(console: Console, clock: Callable[[], float] = time.monotonic,
                every_s: float = LINE_EVERY_S) -> Callable[[str, int], object]:
    """``stage(description, total)`` writing timestamped lines (module docstring)."""

    def line(text: str) -> None:
        console.print(f"{time.strftime('%H:%M:%S')} {text}", markup=False, highlight=False,
                      soft_wrap=True)

    @contextmanager
    def stage(description: str, total: int) -> Iterator[Callable[[int], None]]:
        start = last = clock()
        done = 0
        line(f"{description} 0/{total}")

        def advance(n: int = 1) -> None:
            nonlocal done, last
            done += n
            if done < total and clock() - last >= every_s:  # the end has its own line
                last = clock()
                line(f"{description} {done}/{total}")

        yield advance
        line(f"{description} {total}/{total} done in {clock() - start:.1f}s")

    return stage
