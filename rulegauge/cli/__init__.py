"""The ``rulegauge`` command line: a thin shell over the library.

Each command group lives in its own module exposing ``register(app)``; heavy
imports happen inside the command functions so ``rulegauge --help`` is fast.
Only the CLI configures logging.

Modules, in help order: ``core`` (run, list, validate), ``ingest``, ``goldset``,
``answer`` (answer, answerers), ``compare`` (compare, gate, baseline), ``analysis``
(bands, report, query), ``rulings``, ``interop`` (export), ``serve`` (serve-search),
``judging`` (pool, judge, judges); helpers: ``catalog``
(every registry for ``rulegauge list``), ``errors`` (messages and exit codes),
``output`` (the console factory and ``--format``), ``progress`` (progress bars or
timestamped lines), ``summary`` (the summary after ``rulegauge run``).
"""

from __future__ import annotations

import importlib
import logging

import typer

app = typer.Typer(
    name="rulegauge",
    help="Retrieval-quality evaluation and regression harness for a board-game rules QA service.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# command-group modules, in help order; each exposes register(app)
GROUPS = ("core", "ingest", "goldset", "answer", "facts", "compare", "analysis", "rulings", "interop",
          "serve", "judging", "trend")
# the extra a command needs beyond the core (rulegauge.core.extras), said once, here: a module of
# it missing is exit 2 naming this extra; a command not listed needs none (an arm, answerer or
# engine it uses declares its own)
COMMAND_EXTRAS = {"report": "report", "bands": "report", "tune": "report", "judges": "judge", "facts": "answer"}
__all__ = ["analysis", "answer", "app", "catalog", "compare", "core", "errors", "facts", "goldset",
           "goldset_generate", "ingest", "interop", "judges_llm", "judging", "main", "output", "progress", "report", "rulings", "serve",
           "summary", "trend"]


def _print_version(value: bool) -> None:
    if value:
        from rulegauge import __version__

        typer.echo(f"rulegauge {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(verbose: bool = typer.Option(False, "--verbose", "-v", help="Log progress details."),
          version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    from rulegauge.cli.progress import silence_third_party

    silence_third_party(verbose)
    # logs go to stderr (logging's default stream), results to stdout
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


for _name in GROUPS:
    try:
        _mod = importlib.import_module(f"rulegauge.cli.{_name}")
    except ModuleNotFoundError as _exc:
        if _exc.name != f"rulegauge.cli.{_name}":
            raise
        continue
    _mod.register(app)


def main() -> None:
    """The ``rulegauge`` command; a module of a missing extra is exit 2 with the ``pip install``
    that brings it (:mod:`rulegauge.core.extras`), never a traceback."""
    import sys

    try:
        app()
    except ModuleNotFoundError as exc:
        from rulegauge.cli.errors import print_error
        from rulegauge.core.extras import explain

        words = [a for a in sys.argv[1:] if not a.startswith("-")][:1]
        err = explain(exc, " ".join(["rulegauge", *words]), COMMAND_EXTRAS.get(words[0]) if words else None)
        if err is None:
            raise
        print_error(str(err))
        raise SystemExit(2) from None
