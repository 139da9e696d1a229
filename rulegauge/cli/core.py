"""Core commands: run, list, validate."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from rulegauge.cli.catalog import all_registries, broken_plugins, components, origin_summary, plugin_origins
from rulegauge.cli.errors import bad_input_exits_2
from rulegauge.cli.json_out import JSON_HELP, echo_json, json_errors
from rulegauge.cli.output import FORMAT_HELP, TABLE_FORMATS, format_console, make_console
from rulegauge.cli.progress import rich_progress
from rulegauge.core.engines import ADDRESS_HELP, EngineChoice, engine_help
from rulegauge.core.errors import ConfigError
from rulegauge.core.limits import DEFAULT_MAX_FUSED_ROWS

if TYPE_CHECKING:  # deferred: corpus records import pandas; `rulegauge --help` imports none
    from rulegauge.corpus.records import Corpus
    from rulegauge.goldset.records import GoldSet

ALLOW_OUTSIDE_HELP = ("Read documents outside the gold set's folder (its parent when the folder is "
                      "named goldsets/).")
SUMMARY_ROWS = 30  # configs the run summary prints (--summary-rows; rulegauge.cli.summary)


def register(app: typer.Typer) -> None:
    app.command("run")(run_cmd)
    app.command("list")(list_cmd)
    app.command("validate")(validate_cmd)


def run_cmd(
    goldset: Path = typer.Option(None, "--goldset", "-g", help="Gold set YAML (default: the embedded sample)."),
    config: Path = typer.Option(None, "--config", "-c", help="Fusion grid TOML (default: rulegauge/data/default-grid.toml)."),
    out: Path = typer.Option(Path("runs"), "--out", "-o", help="Folder that holds run directories."),
    run_id: str = typer.Option(None, "--run-id", help="Run id (default: timestamped). An existing id resumes that run."),
    answerer: list[str] = typer.Option([], "--answerer", "-a", help="Also answer with these answerers (e.g. extractive)."),
    param: list[str] = typer.Option([], "--param", "-p", help="Parameter NAME.KEY=VALUE for an arm or answerer, e.g. bm25.k1=1.2."),
    answer_config: list[str] = typer.Option([], "--answer-config", help="Configs to answer (default: the first grid config)."),
    cache_dir: Path = typer.Option(None, "--cache-dir", help="Model and embedding cache (default: $RULEGAUGE_CACHE or ~/.cache/rulegauge)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout (no tables, no progress)."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress and no tables: print only the run directory."),
    metric: list[str] = typer.Option([], "--metric", "-m", help="Metric to compute (repeat; default: the grid's `metrics`, else the built-in list). ranx / ir_measures names are accepted: Success@5, RR@10, ndcg@10 (docs/metrics.md)."),
    allow_outside: bool = typer.Option(False, "--allow-outside", help=ALLOW_OUTSIDE_HELP),
    source: str = typer.Option(None, "--from", help="Re-score the grid over this run's stored arm ranks (a run id, path or 'latest'); no corpus, no models."),
    fused_depth: int = typer.Option(0, "--fused-depth", min=0, help="Fused rows stored per question and config (0 = the whole list)."),
    fused_config: list[str] = typer.Option([], "--fused-config", help="Store fused rows only for these configs (ids or names; 'none' = no fused rows). Every config is scored either way."),
    max_fused_rows: int = typer.Option(DEFAULT_MAX_FUSED_ROWS, "--max-fused-rows", min=0, help="Row budget of the fused table; a run that could exceed it is refused before anything is written."),
    engine: str = typer.Option("local", "--engine", help=escape(engine_help())),
    address: str = typer.Option(None, "--address", help=ADDRESS_HELP),
    summary_rows: int = typer.Option(SUMMARY_ROWS, "--summary-rows", min=0, help="Configs in the printed summary: the single-arm ones and the best others (0 = every config; --json has all)."),
    fmt: str = typer.Option("table", "--format", help=FORMAT_HELP + " json is --json."),
    chunking: str = typer.Option(None, "--chunking", help="How pages become chunks: heading (default), page (one chunk per page: the whole documents of an imported collection), size."),
    title: str = typer.Option(None, "--title", help="Where a document's title is searched: first (default: only where its text has it, the first chunk of an imported collection's document) or every (prepended to every chunk's searched text)."),
    depth_unit: str = typer.Option("chunk", "--depth-unit", help="What an arm's depth counts: chunk (default) or page (distinct pages, an imported collection's documents, at the best chunk of each: depth 100 and R@100 mean 100 documents)."),
) -> None:
    """Run a gold set through every arm and fusion config; write runs/<run_id>/.

    Every config of the grid is scored (metrics table); fused rows are stored within
    the row budget (--fused-config, --fused-depth); --from re-scores a new grid over a
    run's stored arm ranks without the corpus or the models.
    Progress goes to stderr, the summary to stdout (--json: only JSON, e.g. for jq).

    Example: rulegauge run --goldset ../shared/goldsets/secret-hitler.yaml --answerer extractive -m recall@3 -m nDCG@20
    Example: rulegauge run --engine ray --address 10.0.0.5:6379
    Example: rulegauge run -g tidepool-gold/goldset.yaml --chunking page --depth-unit page
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.corpus.chunking import ChunkingOptions
    from rulegauge.pipeline.dispatch import run_from
    from rulegauge.pipeline.grid_tables import StorePolicy
    from rulegauge.pipeline.options import RunOptions
    from rulegauge.pipeline.stages import StageRequest, stage

    as_json = as_json or fmt == "json"
    with bad_input_exits_2():
        TABLE_FORMATS.get(fmt)  # an unknown --format fails before the run starts
        params = _parse_params(param)
        if source and (chunking or title or depth_unit != "chunk"):  # they shaped the stored ranks
            raise ConfigError("--chunking, --title and --depth-unit shape the arm ranks; a run --from "
                              "takes its source run's (leave them out)")
        stages: tuple[tuple[str, object], ...] = ()
        labels: frozenset[str] = frozenset()
        if answerer:  # the answering stage (a product, loaded by name): -p keyed by an answerer's label are its
            record, labels = stage("answering").request(StageRequest(tuple(answerer), tuple(answer_config), params))
            stages = (("answering", record),)
        opts = RunOptions(goldset=goldset, config=config, runs_dir=out, run_id=run_id,
                          stages=stages, cache_dir=cache_dir,
                          arm_overrides={k: v for k, v in params.items() if k not in labels},
                          metrics=tuple(metric) or None, allow_outside=allow_outside,
                          store=StorePolicy(tuple(fused_config) or None, fused_depth, max_fused_rows),
                          source_run=Path(source) if source else None,
                          engine=EngineChoice(engine, address),
                          chunking=ChunkingOptions(method=chunking or "heading", title=title or "first")
                          if chunking or title else None,
                          depth_unit=depth_unit)
        opts.engine.check()
        with rich_progress(quiet=quiet or as_json) as progress:
            result = run_from(opts, progress=progress)  # --from: no corpus, arm or model code loaded
    if as_json:
        from rulegauge.cli.summary import summary_json

        typer.echo(summary_json(result.path))
    elif quiet:
        typer.echo(str(result.path))
    else:
        from rulegauge.cli.summary import print_summary

        with format_console(fmt) as console:
            print_summary(result.path, console, metrics=result.metrics_table, rows=summary_rows)


def _parse_params(items: list[str]) -> dict[str, dict[str, object]]:
    out: dict[str, dict[str, object]] = {}
    for item in items:
        key, sep, value = item.partition("=")
        name, dot, field = key.partition(".")
        if not sep or not dot or not name or not field:
            raise ConfigError(f"--param {item!r}: expected NAME.KEY=VALUE, e.g. bm25.k1=1.2")
        out.setdefault(name, {})[field] = _coerce(value)
    return out


def _coerce(value: str) -> object:
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return {"true": True, "false": False}.get(value.lower(), value)


def list_cmd(as_json: bool = typer.Option(False, "--json", help=escape("Print {registry: [names]} as JSON, with "
                                                            "\"plug-in origins\" and \"broken plug-ins\".")),
             fmt: str = typer.Option("table", "--format", help=FORMAT_HELP + " json is --json.")) -> None:
    """List registered arms, fusion methods, metrics, answerers, loaders and tables, and where
    each came from: builtin, or the package==version of a plug-in (entry points rulegauge.arms,
    rulegauge.answerers, rulegauge.metrics, rulegauge.fusion). A plug-in that fails to load is listed
    by name with its error (on stderr), never a traceback. A second table shows each arm, fusion
    method, answerer, engine and embedding model or backend with its origin and the extra it needs
    (install it with pip install 'rulegauge[EXTRA]'; none: the core has it).

    Example: rulegauge list --json
    """
    registries = all_registries()
    origins = plugin_origins()
    broken = broken_plugins()
    parts = components()
    if as_json or fmt == "json":
        import json

        typer.echo(json.dumps({**{k: list(v) for k, v in registries.items()}, "plug-in origins": origins,
                               "broken plug-ins": broken,
                               "components": [{"registry": c.registry, "name": c.name, "origin": c.origin,
                                               "extra": c.extra, "install": c.install} for c in parts]},
                              indent=2))
        return
    table = Table("registry", "names", "from")
    for kind, names in registries.items():
        table.add_row(kind, ", ".join(names), origin_summary(kind, origins))
    each = Table("registry", "name", "origin", "extra", title="components: origin and the extra each needs")
    for c in parts:
        each.add_row(c.registry, c.name, c.origin, c.extra or "none (core)")
    with bad_input_exits_2(), format_console(fmt) as console:
        console.print(table)
        console.print(each)
    for line in broken:
        typer.echo(f"warning: {line}", err=True)


def validate_cmd(
    goldset: Path = typer.Argument(..., help="Gold set YAML to check."),
    allow_outside: bool = typer.Option(False, "--allow-outside", help=ALLOW_OUTSIDE_HELP),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Check a gold set and the corpus it builds; report every problem at once (exit 2 if any).

    Example: rulegauge validate goldsets/sample.yaml
    Example: rulegauge validate goldsets/sample.yaml --json
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.goldset.parse import check_corpus, load_goldset

    with json_errors(enabled=as_json), rich_progress(quiet=as_json) as stage:
        gs = load_goldset(goldset, allow_outside=allow_outside)
        with stage(f"validate: building {len(gs.documents)} documents", len(gs.documents)) as advance:  # type: ignore[attr-defined]
            corpus = _corpus(gs, advance)
        with stage(f"validate: checking {len(gs.questions)} questions", 1) as advance:  # type: ignore[attr-defined]
            check_corpus(gs, corpus)
            advance(1)
    if as_json:
        echo_json({"goldset": str(goldset), "questions": len(gs.questions), "documents": len(gs.documents),
                   "unanswerable": sum(not q.answerable for q in gs.questions), "chunks": len(corpus.chunks)})
        return
    make_console().print(Text.assemble(
        ("OK", "green"), f" {goldset}: {len(gs.questions)} questions, {len(gs.documents)} "
        f"documents, {sum(not q.answerable and q.labelled for q in gs.questions)} unanswerable, "
        + (f"{n_unl} unlabelled, " if (n_unl := sum(not q.labelled for q in gs.questions)) else "")
        + f"{len(corpus.chunks)} chunks"))


def _corpus(gs: GoldSet, advance: Callable[[int], object] | None = None) -> Corpus:
    """The corpus ``rulegauge run`` would search (what validate must check it can build)."""
    from rulegauge.corpus.chunking import ChunkingOptions, build_corpus

    return build_corpus(gs.documents, ChunkingOptions(), advance=advance)
