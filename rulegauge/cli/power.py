"""``rulegauge power``: how many questions a gold set needs to detect a drop, and the smallest
drop it can detect, under each power model (registered by :mod:`rulegauge.cli.compare`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from rulegauge.cli.analysis import RunsDir
from rulegauge.cli.errors import bad_input_exits_2
from rulegauge.cli.output import TABLE_FORMATS, format_console
from rulegauge.core.errors import RulegaugeError


def power_cmd(
    run: Annotated[str, typer.Argument(help="Run (dir, id or 'latest') whose grid gives the SD.")] = "latest",
    metric: Annotated[str, typer.Option("--metric", "-m", help="Metric of the paired differences.")] = "recall@5",
    delta: Annotated[float | None, typer.Option(
        "--delta", help="The drop to detect, in metric units (default: report the MDE only).")] = None,
    power: Annotated[float, typer.Option("--power", help="Wanted power (1 - beta).")] = 0.8,
    alpha: Annotated[float, typer.Option("--alpha", help="Two-sided level of the test.")] = 0.05,
    tests: Annotated[int, typer.Option(
        "--tests", help="Tests in the family (alpha per test = alpha / tests, Bonferroni bound of Holm).")] = 1,
    config: Annotated[str | None, typer.Option(
        "--config", "-c", help="Config whose neighbours give the SD (default: the service config).")] = None,
    sd: Annotated[float | None, typer.Option("--sd", help="A stated SD of the paired differences.")] = None,
    resamples: Annotated[int, typer.Option(
        "--resamples", help="Sign patterns of the permutation test (the gate's n_resamples).")] = 10_000,
    draws: Annotated[int, typer.Option(
        "--draws", help="Resampled comparisons for the permutation test's MDE.")] = 2000,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the resampling.")] = 0,
    runs_dir: RunsDir = Path("runs"),
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, tsv, markdown or json.")] = "table",
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout (--format json).")] = False,
) -> None:
    """How many questions a gold set needs to detect a drop (Sakai's topic-set size).

    The SD of paired differences comes from the run's own grid (the config and its
    neighbours, differing in one parameter) or --sd. The MDE is given for the gate's
    permutation test (resampling the grid's centred differences) and for the paired
    t-test, its analytic reference; questions needed are the t-test's (docs/gate.md "Power").

    Example: rulegauge power latest -m recall@5 --delta 0.05 --power 0.8
    """
    import json

    from rich.table import Table

    from rulegauge.metrics.info import metric_info
    from rulegauge.regression.gate_report import to_jsonable
    from rulegauge.regression.power import Resampling
    from rulegauge.regression.power_report import power_report
    from rulegauge.regression.service import service_config
    from rulegauge.store.fits import Wants
    from rulegauge.store.rundir import open_run

    fmt = "json" if as_json else fmt
    with bad_input_exits_2():
        TABLE_FORMATS.get(fmt)
        info = metric_info(metric)  # `latest`: the newest run that scored the metric
        opened = open_run(run, runs_dir, metrics=(info.name,) if info else (),
                          wants=Wants.of(configs=[config] if config else None))
        chosen = config or service_config(opened.table("configs"))
        if chosen is None:
            raise RulegaugeError(f"run {opened.run_id} has no service config; name one with --config")
        if resamples < 1 or draws < 1 or seed < 0:
            raise RulegaugeError(f"--resamples and --draws must be >= 1 and --seed >= 0, got "
                                 f"{resamples}, {draws}, {seed}")
        report = power_report(opened, metric, config=chosen, delta=delta, power=power,
                              alpha=alpha, tests=tests, sd=sd,
                              resampling=Resampling(resamples, seed, draws))
    if fmt == "json":
        typer.echo(json.dumps(to_jsonable(report), indent=2, allow_nan=False))
        return
    summary = Table("quantity", "value", title=f"power of the paired test: {report.metric}, "
                    f"{report.config} (Sakai 2016 topic-set size; docs/gate.md \"Power\")")
    for row in report.summary_rows():
        summary.add_row(*row)
    sizes = Table("drop (delta)", "power", "questions needed", title="questions needed to detect a drop")
    for d, p, n in report.sizes:
        sizes.add_row(f"{d:g}", f"{p:g}", "more than 10^7" if n is None else str(n))
    with format_console(fmt, markup=False) as console:
        console.print(summary)
        console.print(sizes)
