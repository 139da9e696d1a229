"""Interop command: export a run as TREC files (arms, fused configs, qrels) or to MLflow."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape

from rulegauge.cli.json_out import JSON_HELP, echo_json, json_errors
from rulegauge.cli.output import make_console
from rulegauge.cli.outputs import check_output
from rulegauge.core import extras
from rulegauge.core.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)


def export_cmd(
    run: str = typer.Argument(..., help="Run directory, run id under --runs-dir, or 'latest'."),
    fmt: str = typer.Option("trec", "--format", help=escape("Export format: trec, or mlflow (one MLflow run per config; the [mlflow] extra).")),
    out: Path = typer.Option(None, "--out", "-o", help="Output folder (default: RUN/export-trec)."),
    level: str = typer.Option("page", "--level", help="docid granularity: page (doc#page) or chunk."),
    scores: str = typer.Option("rank", "--scores", help="rank: 1/rank (trec_eval keeps rulegauge order); original: arm/fused scores."),
    config: list[str] = typer.Option(None, "--config", "-c", help="Only these configs (repeatable; default: all, in config order)."),
    questions: str = typer.Option(
        "answerable", "--questions",
        help="answerable: the questions metrics average over, empty lists padded (ranx/ir-measures "
             "read it as is); retrieved: every question with a list (to re-import as an arm)."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where run ids are looked up."),
    tracking_uri: str = typer.Option(None, "--tracking-uri", help="mlflow: the MLflow store (default: the folder ./mlruns, offline)."),
    experiment: str = typer.Option("rulegauge", "--experiment", help="mlflow: experiment name."),
    report: Path = typer.Option(None, "--report", help="mlflow: HTML report to attach (default: RUN/report.html if present)."),
    replace: bool = typer.Option(False, "--replace", help="mlflow: delete the run's earlier MLflow runs and log it again."),
    as_json: bool = typer.Option(False, "--json", help=JSON_HELP),
) -> None:
    """Write TREC runs per fused config (<config_id>.trec) and per arm (arms/<arm>.trec),
    page qrels (qrels.txt) and one query per requirement (qrels-requirements.txt).

    --format mlflow logs each config as an MLflow run (params: method, k, arms, weights,
    depths; metrics: means over answerable questions; tags: run id, gold set, commit;
    artifacts: the manifest and the report), into ./mlruns unless --tracking-uri
    (docs/interop.md); then `mlflow ui --backend-store-uri mlruns`.

    Example: rulegauge export latest --format trec --level page -o /tmp/trec
    Example: rulegauge export latest --format mlflow --report report.html
    Example: rulegauge export latest --format trec -o /tmp/trec --json
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `rulegauge --help` stays fast
    from rulegauge.interop.export import QUESTION_SETS, export_run
    from rulegauge.interop.trec import LEVELS, SCORE_MODES
    from rulegauge.store.rundir import open_run

    if fmt == "mlflow":
        _to_mlflow(run, runs_dir, tracking_uri, experiment, report, replace, as_json=as_json)
        return
    with json_errors(enabled=as_json):
        if fmt != "trec":
            raise ConfigError(f"--format {fmt!r}: choose trec or mlflow")
        if level not in LEVELS or scores not in SCORE_MODES:
            raise ConfigError(f"--level must be one of {', '.join(LEVELS)}; --scores one of {', '.join(SCORE_MODES)}")
        QUESTION_SETS.get(questions)
        r = open_run(run, runs_dir)
        if out is not None:
            check_output(out, (), runs=(r,))
        result = export_run(r, out or r.path / "export-trec", level=level, scores=scores,
                            configs=list(config or []) or None, questions=questions)
    padded = [f"{name} ({n})" for name, n in result.padded if n]
    depth = int((r.manifest.get("fused_rows") or {}).get("depth", 0) or 0)
    if as_json:
        echo_json({"run_id": r.run_id, "format": "trec", "out": str(result.out_dir),
                   "files": [str(f) for f in result.files], "questions": result.questions,
                   "padded": {name: n for name, n in result.padded if n}, "fused_depth": depth})
        return
    console = make_console()
    console.print(f"wrote {len(result.files)} files to {result.out_dir} "
                  f"({result.questions} questions per run)", markup=False)
    if padded:
        console.print("questions with no result, written as one 'rulegauge:no-result' line: "
                      + ", ".join(padded), markup=False)
    if depth > 0:  # the run kept only the top of each fused list (rulegauge run --fused-depth)
        console.print(f"fused rows were stored to depth {depth}: each config's run holds at most "
                      f"{depth} chunks per question (arm runs are whole)", markup=False)


def _to_mlflow(run: str, runs_dir: Path, uri: str | None, experiment: str, report: Path | None,
               replace: bool, *, as_json: bool = False) -> None:
    # deferred: mlflow loads inside log_run, only for this format
    from rulegauge.interop.tracking import default_uri, log_run
    from rulegauge.store.rundir import open_run

    with json_errors(enabled=as_json):
        extras.require("mlflow", "export --format mlflow")
        r = open_run(run, runs_dir)
        logged = log_run(r, uri or default_uri(), experiment=experiment, report=report,
                         replace=replace)
    for note in logged.notes:
        typer.echo(f"note: {note}", err=True)
    if as_json:
        echo_json({"run_id": r.run_id, "format": "mlflow", "tracking_uri": logged.tracking_uri,
                   "experiment": experiment, "experiment_id": logged.experiment_id,
                   "runs": dict(logged.runs), "replaced": logged.replaced, "resumed": logged.resumed})
        return
    console = make_console()
    console.print(f"logged {len(logged.runs)} configs of run {r.run_id} to MLflow experiment "
                  f"{experiment!r} (id {logged.experiment_id}) at {logged.tracking_uri}"
                  + (f", replacing {logged.replaced} earlier MLflow runs" if logged.replaced else "")
                  + (f", {logged.resumed} of them kept from the incomplete earlier export" if logged.resumed else ""))
    for config_id, mlflow_id in logged.runs:
        typer.echo(f"{config_id}\t{mlflow_id}")
