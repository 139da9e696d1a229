"""The ``rulegauge`` command line: a thin shell over the library.

Each command group lives in its own module exposing ``register(app)``; heavy
imports happen inside the command functions so ``rulegauge --help`` is fast.
Only the CLI configures logging.

Command groups are the entry points of ``rulegauge.commands`` (rulegauge's own in its
``pyproject.toml``; ``core`` first in ``--help``, the others by name; a team's package may add its own), each a
``register(app)`` function; docs/design.md's module map says what every module is.
"""

from __future__ import annotations

import logging

import typer

from rulegauge.cli.command_groups import register_commands
from rulegauge.cli.flags import plain_flags

plain_flags()  # `--quiet`, not `--quiet <bool>` (rulegauge.cli.flags)
app = typer.Typer(
    name="rulegauge",
    help="Retrieval-quality evaluation and regression harness for a board-game rules QA service.",
    no_args_is_help=True,
    add_completion=True,  # typer's --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
)

# the extra a command needs beyond the core (rulegauge.core.extras), said once, here: a module of
# it missing is exit 2 naming this extra; a command not listed needs none (an arm, answerer or
# engine it uses declares its own)
COMMAND_EXTRAS = {"report": "report", "bands": "report", "tune": "report", "judges": "judge", "facts": "answer"}


def _print_version(value: bool) -> None:
    if value:
        import rulegauge

        typer.echo(f"rulegauge {rulegauge.__version__}")
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


# command groups are entry points (``rulegauge.commands``, pyproject.toml): a team's package adds its own;
# `core` (run, list, validate) heads --help, the others follow in name order; a plug-in's group that fails
# to register or takes a name already taken (`run`, `goldset`) is refused whole and listed broken
register_commands(app)


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
