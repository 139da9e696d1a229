"""``rulegauge trend``: each series over the runs of one gold set (or of ruling pages), with
mean +- k sigma alerts on the newest run and exit 1 when one fires (a scheduled CI job)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from rulegauge.cli.errors import bad_input_exits_2, plain_console, print_error, print_note


def register(app: typer.Typer) -> None:
    app.command("trend")(trend_cmd)


def trend_cmd(
    runs_dir: Annotated[Path, typer.Option("--runs-dir", help="Folder of runs.")] = Path("runs"),
    goldset: Annotated[str | None, typer.Option(
        "--goldset", "-g", help="Gold set name whose runs to follow (default: the newest run's).")] = None,
    rulings: Annotated[bool, typer.Option(
        "--rulings", help="Follow imported production ruling pages (rulings runs) instead.")] = False,
    metric: Annotated[list[str] | None, typer.Option(
        "--metric", "-m", help="Metric series to follow (repeatable; default: all).")] = None,
    config: Annotated[list[str] | None, typer.Option(
        "--config", "-c", help="Config id to follow (repeatable; default: all).")] = None,
    k: Annotated[float, typer.Option("-k", "--k-sigma", help="Alert beyond mean +- k standard deviations.")] = 3.0,
    min_history: Annotated[int, typer.Option(
        "--min-history", help="Earlier runs a series needs before it can alert.")] = 3,
    tolerance: Annotated[float, typer.Option(
        "--tolerance", help="Absolute change accepted without an alert (reruns are identical: default 0).")] = 0.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
) -> None:
    """Follow every series over runs; exit 1 when the newest run is outside mean +- k sigma.

    Series: metric means per config (answerable questions), rank-1 score-band shares,
    each arm's share of rank-1 chunks and of stored fused rows. docs/analysis.md.

    Example: rulegauge trend --goldset sample -m nDCG@10 -c rrf_k60_bm25+dense+boost -k 3
    """
    # deferred: pandas/pyarrow load on use; `rulegauge --help` stays fast
    from rulegauge.analysis.trend import collect_runs, trend

    kind = "rulings" if rulings else "retrieval"
    with bad_input_exits_2():
        runs = collect_runs(runs_dir, kind=kind, goldset=goldset)
        t = trend(runs, kind=kind, metrics=metric or (), configs=config or (), k=k, min_history=min_history,
                  tolerance=tolerance)
    for why in t.skipped:
        print_error(f"run skipped: {why}", prefix="warning")
    for why in t.missing:
        print_note(f"metric followed over the runs that have it; {why}")
    con = plain_console(soft_wrap=True)
    alerts = [{"series": a.series, "config_id": a.config_id, "name": a.name, "value": a.value,
               "mean": a.mean, "sigma": a.sigma, "k": a.k, "history": a.history, "direction": a.direction}
              for a in t.alerts]
    if as_json:
        con.print(json.dumps({"kind": t.kind, "goldset": t.goldset, "runs": list(t.runs), "checked": t.checked,
                              "too_short": t.too_short, "alerts": alerts,
                              "skipped": list(t.skipped), "missing": list(t.missing)}, indent=2))
    else:
        con.print(f"trend over {len(t.runs)} {kind} run(s) of {t.goldset or 'ruling pages'}: newest {t.runs[-1]}; "
                  f"{t.checked} series checked, {t.too_short} with fewer than {min_history} earlier runs")
        for a in t.alerts:
            con.print(f"ALERT {a.series}\t{a.config_id}\t{a.name}\t{a.value:.4f} ({a.direction}; mean {a.mean:.4f}, "
                      f"sigma {a.sigma:.4f}, k {a.k:g}, {a.history} earlier runs)")
        if not t.alerts:
            con.print(f"no alerts (k = {k:g})")
    if t.alerts:
        print_error(f"{len(t.alerts)} series outside mean +- {k:g} sigma", prefix="trend")
        raise typer.Exit(1)
