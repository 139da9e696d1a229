"""Interop command: TREC export of a run (arms, fused configs, qrels)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.console import Console

from harness.cli.errors import bad_input_exits_2
from harness.core.errors import ConfigError


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)


def export_cmd(
    run: str = typer.Argument(..., help="Run directory, run id under --runs-dir, or 'latest'."),
    fmt: str = typer.Option("trec", "--format", help="Export format (trec)."),
    out: Path = typer.Option(None, "--out", "-o", help="Output folder (default: RUN/export-trec)."),
    level: str = typer.Option("page", "--level", help="docid granularity: page (doc#page) or chunk."),
    scores: str = typer.Option("rank", "--scores", help="rank: 1/rank (trec_eval keeps the harness order); original: arm/fused scores."),
    config: list[str] = typer.Option(None, "--config", "-c", help="Only these configs (repeatable; default: all, in config order)."),
    questions: str = typer.Option(
        "answerable", "--questions",
        help="answerable: the questions metrics average over, empty lists padded (ranx/ir-measures "
             "read it as is); retrieved: every question with a list (to re-import as an arm)."),
    runs_dir: Path = typer.Option(Path("runs"), "--runs-dir", help="Where run ids are looked up."),
) -> None:
    """Write TREC runs per fused config (<config_id>.trec) and per arm (arms/<arm>.trec),
    page qrels (qrels.txt) and one query per requirement (qrels-requirements.txt).

    Example: harness export latest --format trec --level page -o /tmp/trec
    """
    # deferred: pandas/pyarrow/numpy and friends load on use; `harness --help` stays fast
    from harness.interop.export import QUESTION_SETS, export_run
    from harness.interop.trec import LEVELS, SCORE_MODES
    from harness.store.rundir import open_run

    with bad_input_exits_2():
        if fmt != "trec":
            raise ConfigError(f"--format {fmt!r}: only trec is supported")
        if level not in LEVELS or scores not in SCORE_MODES:
            raise ConfigError(f"--level must be one of {', '.join(LEVELS)}; --scores one of {', '.join(SCORE_MODES)}")
        QUESTION_SETS.get(questions)
        r = open_run(run, runs_dir)
        result = export_run(r, out or r.path / "export-trec", level=level, scores=scores,
                            configs=list(config or []) or None, questions=questions)
    padded = [f"{name} ({n})" for name, n in result.padded if n]
    console = Console(highlight=False, soft_wrap=True)
    console.print(f"wrote {len(result.files)} files to {result.out_dir} "
                  f"({result.questions} questions per run)", markup=False)
    if padded:
        console.print("questions with no result, written as one 'harness:no-result' line: "
                      + ", ".join(padded), markup=False)
    depth = int((r.manifest.get("fused_rows") or {}).get("depth", 0) or 0)
    if depth > 0:  # the run kept only the top of each fused list (harness run --fused-depth)
        console.print(f"fused rows were stored to depth {depth}: each config's run holds at most "
                      f"{depth} chunks per question (arm runs are whole)", markup=False)
