"""``rulegauge ingest``: load and chunk documents and report what came out."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from rulegauge.cli.errors import bad_input_exits_2, print_error
from rulegauge.cli.output import FORMAT_HELP, TABLE_FORMATS, format_console
from rulegauge.core.errors import ConfigError, RulegaugeError

if TYPE_CHECKING:
    from rulegauge.corpus.records import DocumentSpec

_GOLDSET_SUFFIXES = (".yaml", ".yml")


def register(app: typer.Typer) -> None:
    app.command("ingest")(ingest_cmd)


def gather_sources(paths: list[Path], allow_outside: bool = False) -> list[DocumentSpec | Path]:
    """Documents named on a command line: files, folders of them (files no loader reads
    skipped with a warning), and gold-set YAML files (their documents). Missing paths
    and folders without documents raise (exit 2)."""
    from rulegauge.corpus.loaders import SUFFIXES, not_a_document
    from rulegauge.goldset.parse import load_goldset

    sources: list[DocumentSpec | Path] = []
    missing = [str(p) for p in paths if not p.exists()]
    if missing:
        raise RulegaugeError(f"no such file or folder: {', '.join(missing)}")
    for p in paths:
        if p.is_dir():
            found = sorted(f for f in p.rglob("*")
                           if f.is_file() and f.suffix.lower() in SUFFIXES)
            # a folder may hold other files (notes, exports): skip them, saying so
            for f in found:
                if (why := not_a_document(f)) is not None:
                    print_error(f"{f}: skipped, {why}", prefix="warning")
            found = [f for f in found if not_a_document(f) is None]
            if not found:
                raise RulegaugeError(f"{p}: no documents with suffixes {', '.join(SUFFIXES)}")
            sources += found
        elif p.suffix.lower() in _GOLDSET_SUFFIXES:
            sources += load_goldset(p, check_pages=False, allow_outside=allow_outside).documents
        else:
            sources.append(p)
    return sources


def ingest_cmd(
    paths: Annotated[list[Path], typer.Argument(
        help="Documents (.pdf .txt .md .jsonl), folders of them, or gold-set YAML files.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    chunking: Annotated[str, typer.Option(
        "--chunking", help="Chunking method: heading, page or size.")] = "heading",
    max_chars: Annotated[int, typer.Option(
        "--max-chars", help="Largest chunk, in characters.")] = 1200,
    boilerplate: Annotated[bool, typer.Option(
        "--boilerplate", help="Remove running headers, page numbers and web noise.")] = False,
    language: Annotated[str | None, typer.Option(
        "--language", help="Language code of bare files (default: guessed from the text).")] = None,
    allow_outside: Annotated[bool, typer.Option(
        "--allow-outside", help="Gold sets may name documents outside their folder.")] = False,
    quiet: Annotated[bool, typer.Option(
        "--quiet", "-q", help="No progress on stderr.")] = False,
    fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP + " json is --json.")] = "table",
) -> None:
    """Report pages, headings, chunks and warnings for each document.

    Progress per document and page goes to stderr; the report to stdout.

    Example: rulegauge ingest ../shared/corpora/secret-hitler/Secret_Hitler_Rules.pdf --boilerplate
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.corpus.boilerplate import BoilerplateOptions
    from rulegauge.corpus.chunking import ChunkingOptions
    from rulegauge.corpus.ingest import ingest_report, render

    with bad_input_exits_2():
        TABLE_FORMATS.get(fmt)
        sources = gather_sources(paths, allow_outside)
        try:
            options = ChunkingOptions(method=chunking, max_chars=max_chars,
                                      overlap_chars=min(150, max_chars // 4),
                                      min_chars=min(80, max_chars // 4))
        except ConfigError as exc:
            raise ConfigError(f"--chunking/--max-chars: {exc}") from None
        from rulegauge.cli.progress import rich_progress

        with rich_progress(quiet=quiet) as progress:
            report = ingest_report(sources, options,
                                   BoilerplateOptions() if boilerplate else None, language,
                                   progress=progress)
    if as_json or fmt == "json":
        typer.echo(report.to_json())
    else:
        with format_console(fmt) as console:
            render(report, console)
