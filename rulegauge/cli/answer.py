"""Answering commands: ``rulegauge answer RUN`` and ``rulegauge answerers RUN``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from rulegauge.cli.errors import bad_input_exits_2
from rulegauge.cli.output import format_console, make_console
from rulegauge.cli.progress import rich_progress
from rulegauge.core.engines import ADDRESS_HELP, EngineChoice, engine_help, open_engine
from rulegauge.core.errors import ConfigError

RUNS_DIR = Path("runs")
RUN_HELP = "Run directory, run id under --runs-dir, or 'latest'."


def register(app: typer.Typer) -> None:
    app.command("answer")(answer_cmd)
    app.command("answerers")(answerers_cmd)


def parse_answerer_params(items: list[str]) -> dict[str, dict[str, Any]]:
    """``LABEL.KEY=VALUE`` items -> ``{label: {key: value}}``; values are read as
    JSON when they parse (``0.2``, ``true``, ``3``), else kept as strings
    (``gemma4:26b``)."""
    out: dict[str, dict[str, Any]] = {}
    bad = []
    for item in items:
        key, sep, value = item.partition("=")
        label, dot, field = key.partition(".")
        if not sep or not dot or not label or not field:
            bad.append(item)
            continue
        try:
            out.setdefault(label, {})[field] = json.loads(value)
        except json.JSONDecodeError:
            out.setdefault(label, {})[field] = value
    if bad:
        raise ConfigError(f"--param {', '.join(map(repr, bad))}: expected LABEL.KEY=VALUE, "
                          "e.g. ollama.model=gemma4:26b")
    return out


def answer_cmd(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    answerer: Annotated[list[str] | None, typer.Option(
        "--answerer", "-a", help="Answerer NAME or LABEL=NAME (repeatable; a shortcut for a suite).")
    ] = None,
    suite: Annotated[Path | None, typer.Option(
        "--suite", "-s", help="Answerer suite TOML (docs/answerers.md).")] = None,
    judge: Annotated[str | None, typer.Option(
        help="Label of an answerer that judges the reference facts (default: the suite's).")
    ] = None,
    max_error_rate: Annotated[float | None, typer.Option(
        help="Exit 1 when an answerer's error rate is above this (default: the suite's, else 0.05).")
    ] = None,
    preflight: Annotated[bool, typer.Option(
        help="Check every endpoint (model present, a tiny request answered) before asking.")] = True,
    skip_unreachable: Annotated[bool, typer.Option(
        "--skip-unreachable", help="Leave answerers whose preflight fails out of this answering "
        "(a warning names each) instead of exit 2.")] = False,
    breaker_after: Annotated[int, typer.Option(
        "--breaker-after", min=0, max=10_000, help="Stop asking an answerer (or the judge) after this many "
        "consecutive connection failures; the rest become error rows at once (0: never).")] = 5,
    param: Annotated[list[str] | None, typer.Option(
        "--param", "-p", help="Answerer parameter LABEL.KEY=VALUE (repeatable).")] = None,
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Config id to answer (repeatable; default: as before, else the "
                               "first grid config).")] = None,
    pool: Annotated[int | None, typer.Option(help="Candidate pool size (default 80).")] = None,
    final: Annotated[int | None, typer.Option(
        help="Passages read after re-ranking (default 8).")] = None,
    reranker: Annotated[str | None, typer.Option(help="Re-ranker name (default fused).")] = None,
    floor: Annotated[list[str] | None, typer.Option(
        "--floor", help="Floors to apply, in order (repeatable; 'none' for no floor; default: "
                        "base_rulebook, errata, per_book).")] = None,
    errata_arm: Annotated[str | None, typer.Option(
        help="Arm whose carried errata survive for the errata floor (default boost; 'any' "
             "for every pooled errata chunk).")] = None,
    workers: Annotated[int | None, typer.Option(
        "--workers", "-w", help="Calls in flight per answerer (default: the suite's, else 2).")
    ] = None,
    retry_errors: Annotated[bool, typer.Option(
        help="Ask again the questions whose answer was an error.")] = False,
    runs_dir: Annotated[Path, typer.Option(help="Folder holding run directories.")] = RUNS_DIR,
    engine: Annotated[str, typer.Option("--engine", help=escape(engine_help()))] = "local",
    address: Annotated[str | None, typer.Option("--address", help=ADDRESS_HELP)] = None,
) -> None:
    """Answer the questions of an existing run; resumes where a killed run stopped.

    Every endpoint is checked first: an unreachable one exits 2 before anything is
    asked. Exits 1 when an answerer's error rate is above --max-error-rate.

    Example: rulegauge answer latest --suite docs/examples/answerers.toml
    Example: rulegauge answer latest -a extractive -a ollama -p ollama.model=gemma4:26b
    Example: rulegauge answer latest --suite docs/examples/answerers.toml --engine ray --address HEAD:6379
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.answering.plan import AnswerOptions
    from rulegauge.answering.runner import answer_run
    from rulegauge.answering.sidebyside_print import print_side_by_side
    from rulegauge.answering.specs import split_label
    from rulegauge.answering.suite import load_suite
    from rulegauge.cli.catalog import load_plugins
    from rulegauge.store.rundir import Run, open_run

    answerer = answerer or []
    load_plugins()  # every answerer registered, `production` included
    with bad_input_exits_2():
        choice = EngineChoice(engine, address)
        choice.check()
        if not answerer and suite is None:
            raise ConfigError("give answerers with --suite FILE or --answerer NAME")
        if max_error_rate is not None and not 0.0 <= max_error_rate <= 1.0:
            raise ConfigError(f"--max-error-rate must be within [0, 1], got {max_error_rate}")
        loaded = load_suite(suite) if suite is not None else None
        params = parse_answerer_params(param or [])
        unused = sorted(set(params) - {split_label(a)[0] for a in answerer})
        if unused:
            raise ConfigError(f"--param names answerer label(s) not given with --answerer: "
                              f"{', '.join(unused)}")
        r = open_run(run, runs_dir)
        options = AnswerOptions(
            answerers=tuple((a, params.get(split_label(a)[0], {})) for a in answerer),
            configs=tuple(config or ()) or None,
            read_options=_read_options(pool, final, reranker, floor or [], errata_arm),
            max_workers=workers, retry_errors=retry_errors,
            suite=loaded, preflight=preflight, skip_unreachable=skip_unreachable,
            breaker_after=breaker_after,
            max_error_rate=max_error_rate, judge=judge, engine=choice)
        with open_engine(choice), rich_progress() as progress:
            summary = answer_run(r.path, options=options, progress=progress)
    console = make_console()
    asked, reused, errors = dict(summary.asked), dict(summary.reused), dict(summary.errors)
    for label in summary.answerers:
        if label in asked:
            console.print(f"{label}: asked {asked[label]}, reused {reused[label]} from the "
                          f"journal, {errors.get(label, 0)} error(s)")
    with bad_input_exits_2():
        print_side_by_side(Run(summary.path), console)
    over = summary.over_error_rate()
    if over:
        for label in over:
            console.print(f"{label}: error rate {summary.error_rate(label):.1%} is above the "
                          f"limit {summary.max_error_rate:.1%}", markup=False, highlight=False)
        raise typer.Exit(1)


def _read_options(pool: int | None, final: int | None, reranker: str | None, floor: list[str],
                  errata_arm: str | None) -> Any:
    """The read options the flags give (None: none given, the run's earlier ones or the
    defaults of :class:`rulegauge.answering.read.ReadOptions`)."""
    from rulegauge.answering.read import ReadOptions

    if all(x is None for x in (pool, final, reranker, errata_arm)) and not floor:
        return None
    d = ReadOptions()
    return ReadOptions(pool if pool is not None else d.pool, final if final is not None else d.final,
                       reranker or d.reranker, () if floor == ["none"] else tuple(floor) or d.floors,
                       None if errata_arm == "any" else errata_arm or d.errata_arm)


def answerers_cmd(
    run: Annotated[str, typer.Argument(help=RUN_HELP)],
    config: Annotated[str | None, typer.Option(
        "--config", "-c", help="Only this config (default: every config answered).")] = None,
    baseline: Annotated[str | None, typer.Option(
        "--baseline", "-b", help="Answerer the others are compared with (default: the first).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutation resampling.")] = 0,
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, tsv, markdown or json.")] = "table",
    adjustment: Annotated[str, typer.Option(
        "--adjustment", help="Multiplicity adjustment over the family: holm or bh.")] = "holm",
    alpha: Annotated[float, typer.Option(
        "--alpha", help="Level of the significant flag (adjusted p < alpha).")] = 0.05,
    only: Annotated[list[str] | None, typer.Option(
        "--answerer", "-a", help="Compare only these answerer labels (repeatable).")] = None,
    answers: Annotated[bool, typer.Option(
        "--answers", help="Print the answers themselves (JSON records) instead of the figures.")
    ] = False,
    disagreement: Annotated[bool, typer.Option(
        help="With --answers: only the questions the answerers disagree on.")] = False,
    runs_dir: Annotated[Path, typer.Option(help="Folder holding run directories.")] = RUNS_DIR,
    as_json: Annotated[bool, typer.Option(
        "--json", help="The same as --format json.")] = False,
) -> None:
    """Side-by-side figures of a run's answerers with paired differences against the first.

    Statistics are taken over the questions every compared answerer answered without
    error; the excluded count is shown. Each difference's paired permutation p-value is
    adjusted over one family (every answerer, config and metric; Holm, or --adjustment bh),
    the rule of report, compare, tune and gate; the family line is printed under the tables.

    Example: rulegauge answerers latest --format markdown
    Example: rulegauge answerers latest --answers --disagreement
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.answering.answers_view import answers_view, to_json
    from rulegauge.answering.sidebyside_print import print_side_by_side
    from rulegauge.store.rundir import open_run

    with bad_input_exits_2():
        r = open_run(run, runs_dir, needs="answers")
        if as_json:  # the same as --format json
            fmt = "json"
        if answers:
            records = answers_view(r, config_id=config, disagreement_only=disagreement,
                                   answerers=only or None)
            make_console().print(to_json(records), markup=False, highlight=False, soft_wrap=True)
            return
        with format_console("tsv" if fmt == "tsv" else "table") as console:
            print_side_by_side(r, console, config_id=config, baseline=baseline, seed=seed,
                               fmt="table" if fmt == "tsv" else fmt, answerers=only or None,
                               adjustment=adjustment, alpha=alpha)
