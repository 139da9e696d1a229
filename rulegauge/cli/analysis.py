"""Analysis commands: ``rulegauge bands``, ``rulegauge report`` (:mod:`rulegauge.cli.report`),
``rulegauge query``, ``rulegauge tune``."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from rulegauge.cli.errors import bad_input_exits_2
from rulegauge.cli.output import FORMAT_HELP, TABLE_FORMATS, format_console
from rulegauge.core.registry import Registry

if TYPE_CHECKING:
    import pandas as pd

    from rulegauge.analysis.bands import BandTable
    from rulegauge.analysis.tune import TuneResult

RunRef = Annotated[str, typer.Argument(help="Run directory, run id under --runs-dir, or 'latest'.")]
RunsDir = Annotated[Path, typer.Option("--runs-dir", help="Folder that holds run directories.")]
TopK = Annotated[int, typer.Option("--top-k", "-k", min=1, help="Fused ranks that count as 'top'.")]


def register(app: typer.Typer) -> None:
    from rulegauge.cli.report import report_cmd

    app.command("bands")(bands_cmd)
    app.command("report")(report_cmd)
    app.command("query")(query_cmd)
    app.command("tune")(tune_cmd)


def _fmt(x: object, digits: int = 5) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    return f"{x:.{digits}g}" if isinstance(x, float) else str(x)


def _print_band_table(t: BandTable, console: Console) -> None:
    a, band = t.anchors, t.bands[0]
    weights = ", ".join(f"{n}={_fmt(w)}" for n, w in zip(a.arms, a.weights, strict=True))
    lines = [
        (f"anchors: one arm #1 {_fmt(a.one_arm_top, 4)} · two arms #1 {_fmt(a.two_arm_top, 4)} · "
         f"ceiling {_fmt(a.ceiling, 4)} (k={_fmt(a.k)}; {weights})") if a.method == "rrf" else
        f"score axis: {a.axis} ({weights})",
        f"healthy band (p5-p95 of the best relevant hit in the top {t.top_k}, n={band.n}): "
        f"score {_fmt(band.score_lo, 4)}-{_fmt(band.score_hi, 4)} · ratio "
        f"{_fmt(band.ratio_lo, 3)}-{_fmt(band.ratio_hi, 3)}",
    ]
    if t.boost is not None:
        b = t.boost
        lines.append(f"{b.arm} alone carried {b.n_alone} of {b.n_topk} top-{t.top_k} slots "
                     f"({b.n_questions} questions), {b.n_alone_relevant} relevant")
    for s in (t.chunks, t.top_hit):
        line = f"{s.population}: AUC {_fmt(s.auc, 3)} ({s.n_pos} relevant, {s.n_neg} not)"
        if s is t.top_hit and s.reason is None:
            line += (f"; gate {'score/ceiling' if a.has_ceiling else 'fused score'} >= {_fmt(s.threshold, 4)} (Youden J "
                     f"{_fmt(s.youden_j, 3)}, TPR {_fmt(s.tpr, 3)}, FPR {_fmt(s.fpr, 3)}, "
                     f"precision {_fmt(s.precision, 3)})")
        lines.append(line + (f" - {s.reason}" if s.reason else ""))
    if t.n_no_hits:
        lines.append(f"{t.n_no_hits} of {t.n_questions} questions had no hit at all")
    console.print(f"\n[bold]{escape(t.name)}[/bold] ({escape(t.config_id)}, {t.kind}, arms "
                  f"{escape('+'.join(a.arms))})")
    for line in lines:
        console.print("  " + escape(line), highlight=False)
    table = Table()
    for col in ("voted", "rel", "n", "score p5", "p50", "p95", "ratio p5", "p50", "p95"):
        table.add_column(col, justify="right", no_wrap=True)
    for c in t.cells:
        table.add_row(str(c.arms_voted), "yes" if c.relevant else "no", str(c.score.n),
                      *(_fmt(x, 4) for x in (c.score.p05, c.score.p50, c.score.p95)),
                      *(_fmt(x, 3) for x in (c.ratio.p05, c.ratio.p50, c.ratio.p95)))
    console.print(table)


def _json_safe(obj: object) -> object:
    """NaN -> None, tuples -> lists: strict JSON (NaN is not JSON)."""
    if isinstance(obj, float):
        return None if math.isnan(obj) else obj
    if isinstance(obj, dict):
        return {k: _json_safe(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_json_safe(v) for v in obj]
    return obj


def to_dict(table: BandTable) -> dict[str, object]:
    """JSON-ready dict of a band table (derived anchors and boost shares included,
    NaN as None)."""
    d = asdict(table)
    a = table.anchors
    d["anchors"].update(one_arm_top=a.one_arm_top, two_arm_top=a.two_arm_top, ceiling=a.ceiling)
    if table.boost is not None:
        d["boost"].update(share=table.boost.share, precision=table.boost.precision)
    return _json_safe(d)  # type: ignore[return-value]


def bands_cmd(
    run: RunRef = "latest",
    top_k: TopK = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    runs_dir: RunsDir = Path("runs"),
    fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP + " json is --json.")] = "table",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Only this config id (repeatable; default: every config).")] = None,
) -> None:
    """Score bands per config and arm count: quantiles, anchors, healthy band, gate threshold.

    Example: rulegauge bands latest --top-k 5 -c rrf_k60_bm25+dense+boost
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.analysis.bands import run_band_tables
    from rulegauge.metrics.selection import check_config_ids
    from rulegauge.store.fits import Wants
    from rulegauge.store.rundir import open_run

    with bad_input_exits_2():
        TABLE_FORMATS.get(fmt)
        tables = run_band_tables(open_run(run, runs_dir, needs="fused", wants=Wants.of(configs=config)),
                                 top_k=top_k)
        if config:
            check_config_ids(config, [t.config_id for t in tables])
            tables = tuple(t for t in tables if t.config_id in set(config))
    if as_json or fmt == "json":
        typer.echo(json.dumps([to_dict(t) for t in tables], indent=2, allow_nan=False))
        return
    with format_console(fmt, markup=True) as console:
        for t in tables:
            _print_band_table(t, console)


def _rich_table(fmt: str) -> Callable[[pd.DataFrame], None]:
    def write(df: pd.DataFrame) -> None:
        from rulegauge.core.tablerows import rows  # deferred: pandas; `rulegauge --help` stays fast

        table = Table(*[str(c) for c in df.columns], caption=f"{len(df)} row(s)")
        for row in rows(df):
            table.add_row(*(_fmt(x, 6) if isinstance(x, float) else str(x) for x in row))
        with format_console(fmt) as console:  # cell values print verbatim (no markup)
            console.print(table)

    return write


# pandas is imported by the commands that need it: `rulegauge --help` and error paths stay fast
OUTPUT_FORMATS: Registry[Callable[[pd.DataFrame], None]] = Registry("output format")
OUTPUT_FORMATS.add("table", _rich_table("table"))
OUTPUT_FORMATS.add("tsv", _rich_table("tsv"))
OUTPUT_FORMATS.add("markdown", _rich_table("markdown"))
OUTPUT_FORMATS.add("csv", lambda df: typer.echo(df.to_csv(index=False), nl=False))
OUTPUT_FORMATS.add("json", lambda df: typer.echo(
    df.to_json(orient="records", date_format="iso", double_precision=15,
                         default_handler=str)))


def query_cmd(
    sql: Annotated[str, typer.Argument(help="SQL over the views runs, metrics, fused, ...")],
    runs_dir: RunsDir = Path("runs"),
    fmt: Annotated[str, typer.Option("--format", "-f", help="Output format: "
                                     f"{', '.join(OUTPUT_FORMATS.names())}.")] = "table",
    timeout_s: Annotated[float, typer.Option("--timeout", help="Statement timeout in seconds.")] = 60.0,
    memory_limit: Annotated[str, typer.Option("--memory-limit", help="DuckDB memory limit.")] = "2GB",
    max_rows: Annotated[int, typer.Option("--max-rows", help="Rows fetched at most.")] = 100_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON records (--format json).")] = False,
) -> None:
    """Run DuckDB SQL over the Parquet tables of every run (run_id is a column).

    Bounded: --timeout (60 s), --memory-limit (2GB, nothing spilled to disk) and
    --max-rows (100,000; more are cut off with a warning).

    Example: rulegauge query "select config_id, avg(value) from metrics
    where metric = 'recall@5' group by 1"
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.store.query import query

    with bad_input_exits_2():
        write = OUTPUT_FORMATS.get("json" if as_json else fmt)
        df = query(sql, runs_dir, timeout_s=timeout_s, memory_limit=memory_limit,
                   max_rows=max_rows)
    write(df)


def tune_cmd(
    run: RunRef = "latest",
    metric: Annotated[str | None, typer.Option("--metric", "-m", help="Metric to choose on (default: the "
                                               "run's ranking metric, recall@5 for the default metrics).")] = None,
    folds: Annotated[int, typer.Option("--folds", help="Number of folds (k).")] = 5,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the fold shuffle.")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    runs_dir: RunsDir = Path("runs"),
    fmt: Annotated[str, typer.Option("--format", help=FORMAT_HELP + " json is --json.")] = "table",
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Choose among these config ids only (repeatable; default: all).")] = None,
) -> None:
    """Choose a config by k-fold cross-validation over questions (stratified by language).

    Reports the held-out score of choosing on training folds, how often each config
    wins, and the gap between the in-sample best score and the held-out one.

    Example: rulegauge tune latest --metric nDCG@10 --folds 5 --seed 0
    """
    from rulegauge.analysis.tune import tune
    from rulegauge.metrics.info import metric_info
    from rulegauge.store.rundir import open_run

    with bad_input_exits_2():
        TABLE_FORMATS.get(fmt)
        info = metric_info(metric) if metric else None  # `latest -m M`: the newest run that scored M
        opened = open_run(run, runs_dir, metrics=(info.name,) if info else ())
        result = tune(opened, metric, folds, seed, only=tuple(config or ()))
    if as_json or fmt == "json":
        typer.echo(json.dumps(_json_safe(asdict(result)), indent=2, allow_nan=False))
        return
    with format_console(fmt) as console:
        _print_tune(result, console)


def _print_tune(r: TuneResult, console: Console) -> None:
    better = "higher" if r.higher_is_better else "lower"
    console.print(f"{r.metric} ({r.aggregate}, {better} is better) over {r.n_questions} "
                  f"questions, {r.n_configs} configs, {r.n_folds} folds stratified by "
                  f"language, seed {r.seed}", highlight=False)
    folds = Table("fold", "train", "test", "chosen on train", "train", "held-out",
                  title="per fold")
    for f in r.folds:
        folds.add_row(str(f.fold), str(f.n_train), str(f.n_test), f.chosen,
                      _fmt(f.train_value, 4), _fmt(f.test_value, 4))
    console.print(folds)
    wins = Table("config", "folds won", title="wins")
    for c, n in r.wins.items():
        wins.add_row(c, f"{n}/{r.n_folds}")
    console.print(wins)
    console.print(f"in-sample: {r.best_in_sample} scores {_fmt(r.in_sample, 4)} on all "
                  f"questions (chosen and scored on the same questions)", highlight=False)
    console.print(f"held-out: {_fmt(r.held_out, 4)} (each question scored by a config chosen "
                  f"without it); gap in-sample - held-out: {_fmt(r.gap, 4)}", highlight=False)
    if len(r.methods) > 1:
        vs = f"vs {r.service}" if r.service else "vs service (none in this run)"
        adj = f"p ({r.method_family.method})" if r.method_family else "p (adjusted)"
        table = Table("method", "configs", "held-out", "95% CI", vs, "95% CI", "p", adj, "significant",
                      "chosen per fold",
                      title="per fusion method: its best setting chosen on training folds, scored held-out")
        for m in r.methods:
            table.add_row(m.method, str(m.n_configs), _fmt(m.held_out, 4),
                          f"{_fmt(m.lo, 3)} to {_fmt(m.hi, 3)}", _fmt(m.diff, 3),
                          f"{_fmt(m.diff_lo, 3)} to {_fmt(m.diff_hi, 3)}", _fmt(m.p_value, 3),
                          _fmt(m.p_adjusted, 3), "yes" if m.significant else "no",
                          ", ".join(dict.fromkeys(m.chosen)))
        console.print(table)
        if r.method_family is not None:
            console.print(r.method_family.line(), highlight=False)
    if r.stability is not None:
        console.print(f"stability: {r.stability.describe()}", highlight=False)
